"""The depth study: which runs a request asks for (backbone × depth × sampler × seed under
one of the page's settings), which of them are cached, the nearest cached settings when
none is, and the whole view the Depth study page draws (:func:`depth_view`).

The run CSV format and the bundled runs are in :mod:`dropedge_core.studies.runs`, the
per-cell summary and the paper's numbers in :mod:`dropedge_core.studies.cells`; their
names are re-exported here.

Example:
    >>> from dropedge_core.studies import depth as results
    >>> configs = results.depth_configs("karate", None, ["gcn"], [2, 4],
    ...                                 ["nodrop", "dropedge++"], seeds=2, epochs=50)
    >>> len(configs), configs[0].diag_every, configs[0].recipe
    (8, 0, 'depth')
    >>> runs = results.requested_runs(configs, results.empty_runs())
    >>> runs["source"].unique().tolist()
    ['missing']
"""
from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from dropedge_core.data import presets
from dropedge_core.databases import display, is_url
from dropedge_core.method.models import BACKBONES, check_backbone
from dropedge_core.store import run_key
from dropedge_core.studies import ordering
from dropedge_core.studies.cells import (
    PAPER_GAP,
    REPRODUCTION_DOC,
    cell_summary,
    depth_table,
    paper_gaps,
    paper_rows,
    reproduction_notes,
)
from dropedge_core.studies.runs import (
    BUNDLED_DIR,
    GROUP_COLUMNS,
    RUN_COLUMNS,
    ResultsError,
    bundled_files,
    bundled_results,
    bundled_signature,
    cached_runs,
    empty_runs,
    export_runs,
    read_runs,
    run_row,
    store_runs,
)
from dropedge_core.training import TrainConfig, recipes

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
    """The :class:`~dropedge_core.training.config.TrainConfig` fields of one backbone's runs in a
    depth study (depth, sampler, seed and epochs aside) and the recipe they come from.

    Args:
        mode: one of :data:`MODES`. ``"depth recipe"``: the depth recipe
            (:mod:`dropedge_core.training.recipes`), whose settings change with the depth;
            ``"quick"``: the shallow settings at every depth; ``"quick + batch norm"``: the
            same with batch normalisation after every hidden layer; ``"paper preset"``: the
            paper's best hyperparameters for ``(dataset, split, backbone)`` (their keep
            rates too) at every depth, or the depth recipe where the paper has no preset.
        p_min, p_max: keep rates (not used by the paper's presets).

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
        dataset, split: the data (``split=None``: the dataset's default).
        backbones, layers, samplers: the grid.
        seeds: a count ``n`` (seeds ``0 .. n-1``) or the seeds themselves.
        epochs: epochs per run; ``None`` (default): the recipe's (with its early stopping).
        mode, p_min, p_max: the settings (:func:`study_settings`).
        kernel, directed: the FD kernel of the weighted samplers (FD, DropEdge++) and
            per-direction sampling; the defaults (``"linear"``, undirected) give the
            keys of runs made before these were offered.

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
    backbones that share a recipe."""
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
        cached: runs in the run CSV format (:func:`cached_runs`; ``source`` optional).
        dataset, split: which runs.
        kernel, directed: tried before the defaults.
        prefer: the keep rates tried first (the page's).

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
        rows = list(group.itertuples(index=False))
        left = {r.key for r in rows}
        settings_found, misses = 0, 0
        for row in rows:
            if row.key not in left:
                continue
            if settings_found >= _MAX_SETTINGS or misses >= _MAX_UNMATCHED:
                break
            hit = _find_setting(row, candidates)
            if hit is None:
                misses += 1
                left.discard(row.key)
                continue
            settings_found += 1
            explained = {r.key for r in rows if r.key in left and _study_key(r, hit) == r.key}
            found.setdefault(hit, set()).update(explained)
            left -= explained
    out = []
    for (mode, a, b, epochs, kern, dire), keys in found.items():
        runs = here[here["key"].isin(keys)]
        sources = (runs["source"].value_counts().to_dict() if "source" in runs
                   else {"store": len(runs)})
        out.append({"mode": mode, "p_min": a, "p_max": b, "epochs": epochs, "kernel": kern,
                    "directed": dire, "keys": sorted(keys), "runs": len(runs),
                    "backbones": sorted(set(runs["backbone"]), key=BACKBONES.index),
                    "samplers": sorted(set(runs["sampler"])), "layers": sorted(set(runs["layers"])),
                    "seeds": sorted(set(runs["seed"])), "sources": sources})
    return sorted(out, key=lambda s: -s["runs"])


def nearest_settings(options: Sequence[dict], backbones: Sequence[str], mode: str, p_min: float,
                     p_max: float, epochs: int | None = None, kernel: str = "linear",
                     directed: bool = False) -> dict | None:
    """Of :func:`cached_settings`, the one nearest to the page's request: one with runs of
    the requested backbones if any has; then the same mode, the nearest keep rates
    (sum of the two differences; a paper preset counts as far), the same epochs, kernel
    and direction; then the most runs. ``None`` when there is none."""
    if not options:
        return None
    wanted = {check_backbone(b) for b in backbones}

    def distance(s: dict) -> tuple:
        keep = 2.0 if s["p_min"] is None else abs(s["p_min"] - p_min) + abs(s["p_max"] - p_max)
        return (not wanted & set(s["backbones"]), s["mode"] != mode, round(keep, 6),
                s["epochs"] != epochs, (s["kernel"], s["directed"]) != (kernel, directed), -s["runs"])

    return min(options, key=distance)


def describe_settings(s: dict) -> str:
    """One :func:`cached_settings` entry in words: ``quick, keep rates 0.30 → 0.80``."""
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

    ``cached`` is :func:`cached_runs` (a table without ``source`` counts as ``"store"``).
    """
    wanted = pd.DataFrame([run_row(c) for c in configs],
                          columns=["dataset", "split", "backbone", "sampler", "layers", "seed", "settings",
                                   "key"])
    have = cached if "source" in cached else cached.assign(source="store")
    have = have.drop_duplicates("key")[["key", "test_acc", "best_val_acc", "epochs_run", "source"]]
    out = wanted.merge(have, on="key", how="left")
    out["source"] = out["source"].fillna("missing")
    out["epochs_run"] = out["epochs_run"].astype("Int64")
    return out[[*RUN_COLUMNS, "source"]]


def other_runs(cached: pd.DataFrame, requested: pd.DataFrame, dataset: str, split: str) -> int:
    """How many cached runs of ``dataset``/``split`` are not among ``requested`` (made
    with other settings, seeds or depths)."""
    if cached.empty:
        return 0
    here = cached[(cached["dataset"] == dataset) & (cached["split"] == split)]
    return int((~here["key"].isin(set(requested["key"]))).sum())



# --------------------------------------------------------------------------------------
# The whole view


@dataclass
class DepthView:
    """What the Depth study page draws for one request (:func:`depth_view`).

    Attributes:
        configs: the requested runs; ``missing`` those not cached (to train).
        runs: :func:`requested_runs` (one row per config, ``source`` store/bundled/missing).
        counts: ``{"store": n, "bundled": n}``, requested runs found in each.
        measured: the runs drawn: requested ones with a test accuracy, or, when there is
            none, the runs of the nearest cached settings (``fallback``).
        paper: the paper's rows drawn beside them (:func:`paper_rows`).
        table: :func:`depth_table` of ``measured`` (of ``runs`` without a fallback).
        backbones: the backbones drawn (the fallback's own when none of the picked has runs).
        fallback: the :func:`nearest_settings` entry shown instead, or ``None``;
            ``narrowed``: its runs were narrowed to the picked backbones/samplers/depths.
        note: the fallback's settings in words (``None`` without one).
        others: cached runs of the dataset/split with other settings (:func:`other_runs`).
        recipes: ``{backbone: what its runs use, in words}``; ``preset_missing``: the
            paper preset was asked for and some backbone has none here (the depth recipe).
        verdicts: ``[(backbone, sentence)]``: does DropEdge++ lead, for what is drawn;
            ``lead_tests``: the Holm-corrected paired tests behind it
            (:func:`dropedge_core.studies.ordering.lead_tests`, one family per backbone).
        gaps: :func:`paper_gaps` of ``table``.
    """
    configs: list[TrainConfig]
    missing: list[TrainConfig]
    runs: pd.DataFrame
    counts: dict
    measured: pd.DataFrame
    paper: pd.DataFrame
    table: pd.DataFrame
    backbones: list[str]
    fallback: dict | None = None
    narrowed: bool = True
    note: str | None = None
    others: int = 0
    recipes: dict = field(default_factory=dict)
    preset_missing: bool = False
    verdicts: list = field(default_factory=list)
    lead_tests: pd.DataFrame | None = None
    gaps: pd.DataFrame | None = None


def recipe_line(dataset: str, split: str | None, backbone: str, fields: dict, recipe: str,
                depths: Sequence[int]) -> str:
    """What one backbone's runs use, in words, at the shallowest and deepest depth asked for."""
    parts = []
    for L in sorted({min(depths), max(depths)}):
        c = TrainConfig(dataset=dataset, split=split, backbone=backbone, num_layers=L, **fields)
        parts.append(f"L = {L}: {recipes.describe(c.to_dict())}, keep rates {c.p_min:.2f} → {c.p_max:.2f}")
    head = (f"the paper preset (tuned for L = {presets.paper_preset(dataset, split, backbone)['num_layers']})"
            if recipe == "paper" else f"the {recipe} recipe")
    return f"{head} — " + "; ".join(parts)


def depth_view(dataset: str, split: str, backbones: Sequence[str], depths: Sequence[int],
               samplers: Sequence[str], seeds: int, epochs: int | None, mode: str, p_min: float,
               p_max: float, kernel: str, directed: bool, cached: pd.DataFrame, paper: pd.DataFrame,
               settings_lookup: Callable[..., list[dict]] | None = None) -> DepthView:
    """The Depth study for one request: the requested runs against the cached ones
    (:func:`cached_runs`), the per-cell table beside the paper's numbers, and — when
    nothing requested is measured yet — the nearest cached settings instead, so that the
    page never shows an empty chart while runs of the dataset/split exist.

    Args:
        dataset ... directed: the request (:func:`depth_configs`).
        cached: :func:`cached_runs`; paper: the paper's accuracy-by-depth table.
        settings_lookup: :func:`cached_settings` or a cached wrapper with its signature.
    """
    lookup = settings_lookup or cached_settings
    configs = depth_configs(dataset, split, backbones, depths, samplers, seeds, epochs, mode=mode,
                            p_min=p_min, p_max=p_max, kernel=kernel, directed=directed)
    runs = requested_runs(configs, cached)
    counts = runs["source"].value_counts()
    view = DepthView(
        configs=configs, runs=runs, counts={k: int(counts.get(k, 0)) for k in ("store", "bundled")},
        missing=[c for c, s in zip(configs, runs["source"]) if s == "missing"],
        measured=runs[(runs["source"] != "missing") & runs["test_acc"].notna()],
        paper=paper_rows(paper, dataset, split, backbones, samplers, depths), table=None,
        backbones=list(backbones), others=other_runs(cached, runs, dataset, split))
    view.table = depth_table(runs, view.paper)
    for b in backbones:
        fields, recipe = study_settings(dataset, split, b, mode, p_min, p_max)
        view.recipes[b] = recipe_line(dataset, split, b, fields, recipe, depths)
        view.preset_missing |= mode == "paper preset" and recipe != "paper"
    if view.measured.empty:
        view.fallback = nearest_settings(lookup(cached, dataset, split, kernel, directed, (p_min, p_max)),
                                         backbones, mode, p_min, p_max, epochs, kernel, directed)
    if view.fallback is not None:
        alt = cached[cached["key"].isin(set(view.fallback["keys"]))]
        narrowed = alt[alt["backbone"].isin(backbones) & alt["sampler"].isin(samplers)
                       & alt["layers"].isin(depths)]
        view.narrowed = bool(len(narrowed))
        view.measured = narrowed if view.narrowed else alt
        if not view.narrowed:
            view.backbones = list(view.fallback["backbones"])
            view.paper = paper_rows(paper, dataset, split, view.backbones, samplers,
                                    sorted(set(depths) | set(view.fallback["layers"])))
        view.table = depth_table(view.measured, view.paper)
        view.note = f"nearest cached settings: {describe_settings(view.fallback)}"
    view.verdicts = [(b, v) for b in view.backbones
                     if (v := ordering.leader_sentence(view.measured[view.measured["backbone"] == b]))]
    tests = [ordering.lead_tests(view.measured[view.measured["backbone"] == b]) for b in view.backbones]
    view.lead_tests = pd.concat([t for t in tests if len(t)]) if any(len(t) for t in tests) else None
    view.gaps = paper_gaps(view.table)
    return view


__all__ = ["BUNDLED_DIR", "DEPTHS", "DepthView", "GROUP_COLUMNS", "KEEP_GRID", "MODES", "PAPER_GAP",
           "REPRODUCTION_DOC", "RUN_COLUMNS", "ResultsError", "STUDY_FIXED", "STUDY_SAMPLERS",
           "bundled_files", "bundled_results", "bundled_signature", "cached_runs", "cached_settings",
           "cell_summary", "depth_configs", "depth_table", "depth_view", "describe_settings", "empty_runs",
           "export_runs", "nearest_settings", "other_runs", "paper_gaps", "paper_rows", "read_runs",
           "recipe_line", "reproduction_notes", "requested_runs", "run_row", "store_runs",
           "study_settings", "sweep_commands"]
