"""The depth study: which runs a request asks for (backbone × depth × sampler × seed under
one of the page's settings), which of them are cached, the nearest cached settings when
none is; the whole view the Depth study page draws is :mod:`dropedge_explorer.studies.depth_view`.

The run CSV format and the bundled runs are in :mod:`dropedge_explorer.studies.run_tables`, the
per-cell summary and the paper's numbers in :mod:`dropedge_explorer.studies.cells`.

Example:
    >>> from dropedge_explorer.studies import depth
    >>> from dropedge_explorer.studies.run_tables import empty_runs
    >>> configs = depth.depth_configs("karate", None, ["gcn"], [2, 4],
    ...                               ["nodrop", "dropedge++"], seeds=2, epochs=50)
    >>> len(configs), configs[0].diag_every, configs[0].recipe
    (8, 0, 'depth')
    >>> runs = depth.requested_runs(configs, empty_runs())
    >>> runs["source"].unique().tolist()
    ['missing']
"""
from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
from dropedge_core.models import BACKBONES, check_backbone

from dropedge_explorer.data import presets
from dropedge_explorer.databases import display, is_url
from dropedge_explorer.store import run_key
from dropedge_explorer.studies.run_tables import PRINT_COLUMNS, RUN_COLUMNS, ResultsError, run_row
from dropedge_explorer.training import TrainConfig

#: Depths the page offers (the paper's).
DEPTHS: tuple[int, ...] = (2, 4, 8, 16, 32, 64)
#: The samplers the paper compares by depth.
STUDY_SAMPLERS: tuple[str, ...] = ("nodrop", "dropedge", "dropedge++")
#: The settings a depth study offers (:func:`study_settings`): the depth recipe (the
#: default; settings that train at every depth), the quick recipe with and without batch
#: normalisation, and the paper's presets.
MODES: tuple[str, ...] = ("depth recipe", "quick", "quick + batch norm", "paper preset")
#: Fixed for every depth-study run: accuracy only, no diagnostics (they cost ~10 epochs
#: each on Cora, and ``diag_every`` is part of the run key).
STUDY_FIXED: dict = {"diag_every": 0}


# --------------------------------------------------------------------------------------
# The requested grid


def study_settings(dataset: str, split: str | None, backbone: str, mode: str = "depth recipe",
                   p_min: float = 0.3, p_max: float = 0.8) -> tuple[dict, str]:
    """The :class:`~dropedge_explorer.training.config.TrainConfig` fields of one backbone's runs in a
    depth study (depth, sampler, seed and epochs aside) and the recipe they come from.

    Args:
        dataset (str): the dataset.
        split (str, optional): the split (``None``: the dataset's default).
        backbone (str): the backbone.
        mode (str, optional): one of :data:`MODES`. ``"depth recipe"``: the depth recipe
            (:mod:`dropedge_explorer.training.recipes`), whose settings change with the depth;
            ``"quick"``: the shallow settings at every depth; ``"quick + batch norm"``: the
            same with batch normalisation after every hidden layer; ``"paper preset"``: the
            paper's best hyperparameters for ``(dataset, split, backbone)`` (their keep
            rates too) at every depth, or the depth recipe where the paper has no preset.
            (default: :obj:`"depth recipe"`)
        p_min (float, optional): the keep rate :math:`p_{min}` (not used by the paper's
            presets). (default: :obj:`0.3`)
        p_max (float, optional): the keep rate :math:`p_{max}` (not used by the paper's
            presets). (default: :obj:`0.8`)

    Returns:
        ``(fields, recipe)``: the fields to give every run, and the recipe's name.
    """
    if mode not in MODES:
        raise ResultsError(f"unknown depth-study settings {mode!r}; valid: {', '.join(MODES)}")
    if mode == "paper preset":
        try:
            presets.paper_preset(dataset, split, backbone)
        except presets.PresetError:
            mode = "depth recipe"
        else:
            return {"recipe": "paper"}, "paper"
    recipe = "depth" if mode == "depth recipe" else "quick"
    fields = {"recipe": recipe, "p_min": float(p_min), "p_max": float(p_max)}
    if mode == "quick + batch norm":
        fields["batch_norm"] = True
    return fields, recipe


def _sampling(kernel: str = "linear", directed: bool = False) -> dict:
    """The sampler settings of a study beyond the keep rates, only where they are not the
    defaults (a default is the same key either way; written out it would only clutter)."""
    out = {}
    if str(kernel).strip().lower() != "linear":
        out["kernel"] = str(kernel).strip().lower()
    if directed:
        out["directed"] = True
    return out


def depth_configs(dataset: str, split: str | None, backbones: Sequence[str], layers: Sequence[int],
                  samplers: Sequence[str] = STUDY_SAMPLERS, seeds: int | Sequence[int] = 3,
                  epochs: int | None = None, mode: str = "depth recipe", p_min: float = 0.3,
                  p_max: float = 0.8, kernel: str = "linear",
                  directed: bool = False) -> list[TrainConfig]:
    """The runs of a depth study: backbone × depth × sampler × seed, validated.

    Args:
        dataset (str): the dataset.
        split (str, optional): the split (``None``: the dataset's default).
        backbones (Sequence[str]): the backbones of the grid.
        layers (Sequence[int]): the depths of the grid.
        samplers (Sequence[str], optional): the samplers of the grid.
            (default: :obj:`STUDY_SAMPLERS`)
        seeds (int or Sequence[int], optional): a count ``n`` (seeds ``0 .. n-1``) or the
            seeds themselves. (default: :obj:`3`)
        epochs (int, optional): epochs per run; ``None``: the recipe's (with its early
            stopping). (default: :obj:`None`)
        mode (str, optional): the settings (:func:`study_settings`).
            (default: :obj:`"depth recipe"`)
        p_min (float, optional): the keep rate :math:`p_{min}`. (default: :obj:`0.3`)
        p_max (float, optional): the keep rate :math:`p_{max}`. (default: :obj:`0.8`)
        kernel (str, optional): the FD kernel of the weighted samplers (FD, DropEdge++); the
            default gives the keys of runs made before it was offered.
            (default: :obj:`"linear"`)
        directed (bool, optional): sample each direction of an edge on its own.
            (default: :obj:`False`)

    The order is the order to train them in: seed by seed, so that every cell gets a
    first value before any gets its second; within a seed by backbone, the shallow
    (cheap) depths first, and the samplers side by side. ``diag_every`` is 0
    (:data:`STUDY_FIXED`). The same grid from ``python -m dropedge_core sweep`` makes
    the same run keys (:func:`sweep_commands`).
    """
    seed_list = list(range(int(seeds))) if isinstance(seeds, int) else [int(s) for s in seeds]
    split = TrainConfig(dataset=dataset, split=split).split
    base = {b: study_settings(dataset, split, b, mode, p_min, p_max)[0] for b in backbones}
    extra = ({} if epochs is None else {"epochs": int(epochs)}) | _sampling(kernel, directed)
    return [TrainConfig.from_dict({"dataset": dataset, "split": split, "backbone": b, **base[b],
                                   **extra, **STUDY_FIXED, "num_layers": int(L),
                                   "sampler": s, "seed": seed})
            for seed in seed_list for b in backbones for L in sorted(layers) for s in samplers]


def sweep_commands(dataset: str, split: str | None, backbones: Sequence[str], layers: Sequence[int],
                   samplers: Sequence[str] = STUDY_SAMPLERS, seeds: int | Sequence[int] = 3,
                   epochs: int | None = None, mode: str = "depth recipe", p_min: float = 0.3,
                   p_max: float = 0.8, store: str | Path | None = None, kernel: str = "linear",
                   directed: bool = False) -> list[str]:
    """``python -m dropedge_core sweep ...`` command lines that train the runs of
    :func:`depth_configs` with the same arguments (the same keys): one line per group of
    backbones that share a recipe.

    Args:
        dataset (str): the dataset.
        split (str, optional): the split (``None``: the dataset's default).
        backbones (Sequence[str]): the backbones of the grid.
        layers (Sequence[int]): the depths of the grid.
        samplers (Sequence[str], optional): the samplers of the grid.
            (default: :obj:`STUDY_SAMPLERS`)
        seeds (int or Sequence[int], optional): a count or the seeds. (default: :obj:`3`)
        epochs (int, optional): epochs per run (``None``: the recipe's).
            (default: :obj:`None`)
        mode (str, optional): the settings (:func:`study_settings`).
            (default: :obj:`"depth recipe"`)
        p_min (float, optional): the keep rate :math:`p_{min}`. (default: :obj:`0.3`)
        p_max (float, optional): the keep rate :math:`p_{max}`. (default: :obj:`0.8`)
        store (str or Path, optional): the results store the lines name (``--store``;
            ``None``: the default store). (default: :obj:`None`)
        kernel (str, optional): the FD kernel. (default: :obj:`"linear"`)
        directed (bool, optional): per-direction sampling. (default: :obj:`False`)
    """
    seed_list = list(range(int(seeds))) if isinstance(seeds, int) else [int(s) for s in seeds]
    split = TrainConfig(dataset=dataset, split=split).split
    groups: dict[str, tuple[dict, list[str]]] = {}
    for b in backbones:
        fields, recipe = study_settings(dataset, split, b, mode, p_min, p_max)
        groups.setdefault(recipe, (fields, []))[1].append(b)
    lines = []
    for recipe, (fields, members) in groups.items():
        args = ["python", "-m", "dropedge_core", "sweep", "--datasets", dataset, "--split", split,
                "--backbones", *members, "--samplers", *samplers,
                "--layers", *map(str, sorted(layers)), "--seeds", *map(str, seed_list),
                "--recipe", recipe, "--diag-every", str(STUDY_FIXED["diag_every"])]
        if epochs is not None:
            args += ["--epochs", str(int(epochs))]
        if recipe != "paper":
            args += ["--p-min", repr(float(p_min)), "--p-max", repr(float(p_max))]
        if fields.get("batch_norm"):
            args.append("--batch-norm")
        sampling = _sampling(kernel, directed)
        if "kernel" in sampling:
            args += ["--kernel", sampling["kernel"]]
        if sampling.get("directed"):
            args.append("--directed")
        if store is not None:
            args += ["--store", display(store) if is_url(store) else str(store)]  # no password shown
        lines.append(shlex.join(args))
    return lines


#: The keep rates the app's slider offers (steps of 0.05): where the keep rates of cached
#: runs are looked for (:func:`cached_settings`).
KEEP_GRID: tuple[float, ...] = tuple(round(0.05 * i, 2) for i in range(21))
#: At most this many settings are told apart per (backbone, settings label) group, and at
#: most this many runs that match no setting the page can ask for are tried per group.
_MAX_SETTINGS, _MAX_UNMATCHED = 8, 3


def _label_modes(label: str) -> tuple[list[str], set[int]]:
    """The page's settings modes a run's ``settings`` label can come from, and the epochs
    it names (``"quick+batch_norm=True"`` -> ``["quick + batch norm"]``; an empty label,
    from a file older than recipes: every mode)."""
    head, *changes = str(label).split("+") if label else ("", )
    changed = dict(c.split("=", 1) for c in changes if "=" in c)
    epochs = {int(float(changed.pop("epochs")))} if "epochs" in changed else set()
    if not head:
        return list(MODES), epochs
    if head == "quick" and changed == {"batch_norm": "True"}:
        return ["quick + batch norm"], epochs
    if changed:  # a hyperparameter the page never changes: not a page's setting
        return [], epochs
    return {"depth": ["depth recipe"], "quick": ["quick"], "paper": ["paper preset"]}.get(head, []), epochs


def _study_key(row, setting: tuple) -> str | None:
    """The run key a depth study with ``setting`` = ``(mode, p_min, p_max, epochs, kernel,
    directed)`` gives the run of ``row`` (its dataset, split, backbone, depth, sampler and
    seed), or ``None`` where such a config is not valid. A paper preset's keep rates are
    its own (``p_min``/``p_max`` ``None``)."""
    mode, p_min, p_max, epochs, kernel, directed = setting
    try:
        return run_key(depth_configs(row.dataset, row.split, [row.backbone], [int(row.layers)],
                                     [row.sampler], [int(row.seed)], epochs, mode,
                                     0.3 if p_min is None else p_min, 0.8 if p_max is None else p_max,
                                     kernel, directed)[0])
    except (ValueError, KeyError):
        return None


def _find_setting(row, candidates) -> tuple | None:
    """The first of ``candidates`` (settings tuples, see :func:`_study_key`) that gives
    ``row`` its key."""
    return next((c for c in candidates if _study_key(row, c) == row.key), None)


def cached_settings(cached: pd.DataFrame, dataset: str, split: str, kernel: str = "linear",
                    directed: bool = False, prefer: tuple[float, float] = (0.3, 0.8)) -> list[dict]:
    """The depth-study settings under which the cached runs of ``dataset``/``split`` were
    made — what the page would have to ask for to show them.

    A run's CSV row names its recipe (``settings``) but not its keep rates, kernel or
    epochs; only its ``key`` does. So for a run not yet explained, the settings the page
    can ask for — the modes its label allows, the keep rates of :data:`KEEP_GRID`
    (``prefer`` first, then by distance to it), its label's epochs or the recipe's, the
    given ``kernel``/``directed`` or the defaults — are tried until one gives its key;
    every run of the group that the found settings explain is then counted for them.

    Args:
        cached (pandas.DataFrame): runs in the run CSV format
            (:func:`~.run_tables.cached_runs`; ``source`` optional).
        dataset (str): the dataset of the runs explained.
        split (str): the split of the runs explained.
        kernel (str, optional): the kernel tried before the default.
            (default: :obj:`"linear"`)
        directed (bool, optional): the direction tried before the default.
            (default: :obj:`False`)
        prefer (tuple[float, float], optional): the keep rates ``(p_min, p_max)`` tried first
            (the page's). (default: :obj:`(0.3, 0.8)`)

    Returns:
        One dict per settings found, most runs first: ``mode``, ``p_min``, ``p_max`` (the
        page's values; a paper preset's own rates are not asked for, ``None``), ``epochs``
        (``None``: the recipe's), ``kernel``, ``directed``, ``keys`` (the runs' keys),
        ``runs``, ``backbones``, ``samplers``, ``layers``, ``seeds`` (sorted lists) and
        ``sources`` (``{source: runs}``).
    """
    here = cached[(cached["dataset"] == dataset) & (cached["split"] == split)]
    if here.empty:
        return []
    pairs = sorted(((a, b) for a in KEEP_GRID for b in KEEP_GRID if a <= b),
                   key=lambda ab: (abs(ab[0] - prefer[0]) + abs(ab[1] - prefer[1]), ab))
    samplings = list(dict.fromkeys([(str(kernel).lower(), bool(directed)), ("linear", False)]))
    found: dict[tuple, set[str]] = {}
    for (_, label), group in here.groupby(["backbone", "settings"], sort=False):
        modes, label_epochs = _label_modes(label)
        candidates = [(mode, a, b, epochs, kern, dire) for mode in modes
                      for epochs in [None, *sorted(label_epochs)] for kern, dire in samplings
                      for a, b in ([(None, None)] if mode == "paper preset" else pairs)]
        for hit, keys in _explain_group(list(group.itertuples(index=False)), candidates).items():
            found.setdefault(hit, set()).update(keys)
    out = [_settings_entry(here[here["key"].isin(keys)], hit, keys) for hit, keys in found.items()]
    return sorted(out, key=lambda s: -s["runs"])


def _explain_group(rows: list, candidates: list[tuple]) -> dict[tuple, set[str]]:
    """``{settings: keys}`` for one (backbone, label) group of runs: the first settings
    that give a run not yet explained its key, with every run of the group they explain
    (at most :data:`_MAX_SETTINGS` settings; stops after :data:`_MAX_UNMATCHED` misses)."""
    found: dict[tuple, set[str]] = {}
    left = {r.key for r in rows}
    misses = 0
    for row in rows:
        if row.key not in left:
            continue
        if len(found) >= _MAX_SETTINGS or misses >= _MAX_UNMATCHED:
            break
        hit = _find_setting(row, candidates)
        if hit is None:
            misses += 1
            left.discard(row.key)
            continue
        explained = {r.key for r in rows if r.key in left and _study_key(r, hit) == r.key}
        found.setdefault(hit, set()).update(explained)
        left -= explained
    return found


def _settings_entry(runs: pd.DataFrame, setting: tuple, keys: set[str]) -> dict:
    """One :func:`cached_settings` entry: the settings and what their runs cover."""
    mode, a, b, epochs, kern, dire = setting
    sources = runs["source"].value_counts().to_dict() if "source" in runs else {"store": len(runs)}
    return {"mode": mode, "p_min": a, "p_max": b, "epochs": epochs, "kernel": kern,
            "directed": dire, "keys": sorted(keys), "runs": len(runs),
            "backbones": sorted(set(runs["backbone"]), key=BACKBONES.index),
            "samplers": sorted(set(runs["sampler"])), "layers": sorted(set(runs["layers"])),
            "seeds": sorted(set(runs["seed"])), "sources": sources}


def nearest_settings(options: Sequence[dict], backbones: Sequence[str], mode: str, p_min: float,
                     p_max: float, epochs: int | None = None, kernel: str = "linear",
                     directed: bool = False) -> dict | None:
    """Of :func:`cached_settings`, the one nearest to the page's request: one with runs of
    the requested backbones if any has; then the same mode, the nearest keep rates
    (sum of the two differences; a paper preset counts as far), the same epochs, kernel
    and direction; then the most runs. ``None`` when there is none.

    Args:
        options (Sequence[dict]): :func:`cached_settings` entries.
        backbones (Sequence[str]): the backbones the page asks for.
        mode (str): the mode asked for.
        p_min (float): the keep rate :math:`p_{min}` asked for.
        p_max (float): the keep rate :math:`p_{max}` asked for.
        epochs (int, optional): the epochs asked for (``None``: the recipe's).
            (default: :obj:`None`)
        kernel (str, optional): the kernel asked for. (default: :obj:`"linear"`)
        directed (bool, optional): the direction asked for. (default: :obj:`False`)
    """
    if not options:
        return None
    wanted = {check_backbone(b) for b in backbones}

    def distance(s: dict) -> tuple:
        keep = 2.0 if s["p_min"] is None else abs(s["p_min"] - p_min) + abs(s["p_max"] - p_max)
        return (not wanted & set(s["backbones"]), s["mode"] != mode, round(keep, 6),
                s["epochs"] != epochs, (s["kernel"], s["directed"]) != (kernel, directed), -s["runs"])

    return min(options, key=distance)


def describe_settings(s: dict) -> str:
    """One :func:`cached_settings` entry in words: ``quick, keep rates 0.30 → 0.80``.

    Args:
        s (dict): one :func:`cached_settings` entry (``mode``, ``p_min``, ``p_max``,
            ``epochs``, ``kernel``, ``directed`` read).

    Example:
        >>> describe_settings({"mode": "quick", "p_min": 0.3, "p_max": 0.8, "epochs": 100,
        ...                    "kernel": "linear", "directed": True})
        'quick, keep rates 0.30 → 0.80, 100 epochs, directed'
    """
    parts = [s["mode"]]
    if s["p_min"] is not None:
        parts.append(f"keep rates {s['p_min']:.2f} → {s['p_max']:.2f}")
    if s["epochs"] is not None:
        parts.append(f"{s['epochs']} epochs")
    if s["kernel"] != "linear":
        parts.append(f"{s['kernel']} kernel")
    if s["directed"]:
        parts.append("directed")
    return ", ".join(parts)


def requested_runs(configs: Sequence[TrainConfig], cached: pd.DataFrame) -> pd.DataFrame:
    """One row per requested config: the run CSV columns plus ``source`` — ``"store"``
    or ``"bundled"`` (the metrics come from there) or ``"missing"`` (NaN metrics).

    ``cached`` is :func:`~.runs.cached_runs` (a table without ``source`` counts as ``"store"``).

    Args:
        configs (Sequence[TrainConfig]): the requested runs (:func:`depth_configs`).
        cached (pandas.DataFrame): :func:`~.run_tables.cached_runs` (a table without
            ``source`` counts as ``"store"``).
    """
    wanted = pd.DataFrame([run_row(c) for c in configs],
                          columns=["dataset", "split", "backbone", "sampler", "layers", "seed", "settings",
                                   "key", "stream"])
    have = cached if "source" in cached else cached.assign(source="store")
    have = have.drop_duplicates("key")[["key", "test_acc", "best_val_acc", "epochs_run", "source",
                                        *(c for c in PRINT_COLUMNS if c in have)]]
    out = wanted.merge(have, on="key", how="left")
    out["source"] = out["source"].fillna("missing")
    out["epochs_run"] = out["epochs_run"].astype("Int64")
    for name in PRINT_COLUMNS:
        out[name] = out[name].fillna("") if name in out else ""
    return out[[*RUN_COLUMNS, "source"]]


#: The "Seeds" box's range, and its default where no requested cell has a cached run.
MOST_SEEDS = 20
FEWEST_DEFAULT_SEEDS = 3


def default_seeds(dataset: str, split: str | None, backbones: Sequence[str], layers: Sequence[int],
                  samplers: Sequence[str], cached: pd.DataFrame, mode: str = "depth recipe",
                  p_min: float = 0.3, p_max: float = 0.8, kernel: str = "linear",
                  directed: bool = False) -> int:
    """The seed count the Depth study opens on: enough seeds (``0 .. n-1``) that every cached
    run of every requested cell is in the view — so the page's verdicts are those of
    docs/REPRODUCTION.md, which uses every bundled seed — and at least
    :data:`FEWEST_DEFAULT_SEEDS` (at most :data:`MOST_SEEDS`, the box's limit).

    A run counts when its key is a requested config's (so only runs of today's sampler
    stream, the mode, keep rates, kernel and direction asked for); a cell with fewer cached
    seeds than another shows as partly measured.

    Args:
        dataset (str): the dataset.
        split (str, optional): the split.
        backbones (Sequence[str]): the backbones requested.
        layers (Sequence[int]): the depths requested.
        samplers (Sequence[str]): the samplers requested.
        cached (pandas.DataFrame): :func:`~.run_tables.cached_runs`.
        mode (str, optional): the settings asked for. (default: :obj:`"depth recipe"`)
        p_min (float, optional): the keep rate :math:`p_{min}`. (default: :obj:`0.3`)
        p_max (float, optional): the keep rate :math:`p_{max}`. (default: :obj:`0.8`)
        kernel (str, optional): the FD kernel. (default: :obj:`"linear"`)
        directed (bool, optional): per-direction sampling. (default: :obj:`False`)
    """
    configs = depth_configs(dataset, split, backbones, layers, samplers, MOST_SEEDS, None, mode=mode,
                            p_min=p_min, p_max=p_max, kernel=kernel, directed=directed)
    found = requested_runs(configs, cached)
    found = found[(found["source"] != "missing") & found["test_acc"].notna()]
    return max(FEWEST_DEFAULT_SEEDS, int(found["seed"].max()) + 1 if len(found) else 0)


def other_runs(cached: pd.DataFrame, requested: pd.DataFrame, dataset: str, split: str) -> int:
    """How many cached runs of ``dataset``/``split`` are not among ``requested`` (made
    with other settings, seeds or depths).

    Args:
        cached (pandas.DataFrame): :func:`~.run_tables.cached_runs`.
        requested (pandas.DataFrame): :func:`requested_runs` (its ``key`` column is read).
        dataset (str): the dataset.
        split (str): the split.
    """
    if cached.empty:
        return 0
    here = cached[(cached["dataset"] == dataset) & (cached["split"] == split)]
    return int((~here["key"].isin(set(requested["key"]))).sum())


__all__ = ["DEPTHS", "FEWEST_DEFAULT_SEEDS", "MODES", "MOST_SEEDS",
           "STUDY_SAMPLERS", "cached_settings", "default_seeds", "depth_configs", "describe_settings",
           "nearest_settings", "other_runs", "requested_runs", "study_settings", "sweep_commands"]
