"""Depth-study results: one row per training run, from the results store and from the
CSVs bundled with the app under ``assets/results/``.

**The run CSV format** — what :func:`export_runs` writes and :func:`bundled_results`
reads; one row per training run, columns in this order (:data:`RUN_COLUMNS`):

=============  ==========================================================================
``dataset``    our dataset key (``cora``, ``citeseer``, ``karate``, ...)
``split``      the split the run used (``semi``, ``full``, ``per-class``)
``backbone``   ``gcn``, ``resgcn``, ``jknet`` or ``appnp_star``
``sampler``    ``nodrop``, ``dropedge``, ``dropedge++`` (or another sampler name)
``layers``     depth L (the config's ``num_layers``)
``seed``       the run's seed
``test_acc``   test accuracy at the best-validation epoch, a fraction in [0, 1] (empty
               when the run produced none, e.g. a NaN loss at epoch 1)
``best_val_acc``  the best validation accuracy, a fraction
``epochs_run`` epochs actually trained (early stopping ends a run before its ``epochs``)
``settings``   the recipe that filled the run's settings and what the run changed of it
               (:func:`dropedge_core.training.recipes.settings_label`: ``depth``, ``quick``,
               ``quick+batch_norm=True``, ``paper``, ...); files written before recipes
               existed may lack the column (read as empty)
``key``        :func:`dropedge_core.store.run_key` of the run's full config (64 hex
               digits): the identity of the run — a page asks for configs, and a run
               of the CSV counts for a config exactly when the keys are equal
=============  ==========================================================================

The descriptive columns are for people and for grouping; only ``key`` says under which
settings (hidden width, learning rate, epochs, keep rates, ...) a run was made; ``settings``
says it in words.

Example:
    >>> from dropedge_core import results
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
from collections.abc import Iterable, Sequence
from pathlib import Path

import pandas as pd

from dropedge_core import paths
from dropedge_core.data import presets
from dropedge_core.databases import display, is_url
from dropedge_core.method.models import ALIASES, BACKBONES, check_backbone
from dropedge_core.method.samplers import NAMES as SAMPLER_NAMES
from dropedge_core.store import ResultStore, run_key
from dropedge_core.training import TrainConfig

#: Where the bundled run CSVs live (every ``*.csv`` below it is read).
BUNDLED_DIR = paths.BUNDLED_RESULTS_DIR
#: Columns of the run CSV format, in order.
RUN_COLUMNS: tuple[str, ...] = ("dataset", "split", "backbone", "sampler", "layers", "seed",
                                "test_acc", "best_val_acc", "epochs_run", "settings", "key")
#: What one cell of the depth study is: the runs of a cell differ only in their seed.
GROUP_COLUMNS: tuple[str, ...] = ("dataset", "split", "backbone", "sampler", "layers")
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
_INT_COLUMNS = ("layers", "seed", "epochs_run")
_FLOAT_COLUMNS = ("test_acc", "best_val_acc")
_STR_COLUMNS = ("dataset", "split", "backbone", "sampler", "settings", "key")


class ResultsError(ValueError):
    """A run CSV that cannot be read (missing columns, bad values); the message names
    the file."""


def store_path() -> Path | str:
    """The results store the app uses (:func:`dropedge_core.paths.results_store`)."""
    return paths.results_store()


def empty_runs() -> pd.DataFrame:
    """A run table with no rows (the columns of :data:`RUN_COLUMNS`, typed)."""
    return _typed(pd.DataFrame({c: [] for c in RUN_COLUMNS}))


def _typed(df: pd.DataFrame) -> pd.DataFrame:
    """The run columns in order with their types: ints for layers/seed/epochs, floats for
    accuracies (NaN when empty), lower-case strings for the names."""
    out = pd.DataFrame(index=df.index)
    for c in _STR_COLUMNS:
        out[c] = (df[c] if c in df else pd.Series("", index=df.index)).fillna("").astype(str).str.strip()
        if c not in ("key", "settings"):
            out[c] = out[c].str.lower()
    out["backbone"] = out["backbone"].replace(ALIASES)  # files from before appnp_star say "appnp*"
    for c in _FLOAT_COLUMNS:
        out[c] = pd.to_numeric(df[c], errors="raise").astype(float)
    for c in _INT_COLUMNS:
        out[c] = pd.to_numeric(df[c], errors="raise").astype("int64")
    return out[list(RUN_COLUMNS)].reset_index(drop=True)


def read_runs(path: str | Path) -> pd.DataFrame:
    """One run CSV (the format above) as a typed table.

    Raises:
        ResultsError: a required column is missing or a value is not a number where one
            is needed (the message names the file and the columns).
    """
    path = Path(path)
    try:
        df = pd.read_csv(path, dtype={"key": str, "dataset": str, "split": str, "backbone": str,
                                      "sampler": str, "settings": str})
    except (OSError, pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise ResultsError(f"cannot read run CSV {path}: {exc}".splitlines()[0]) from None
    except pd.errors.EmptyDataError:
        return empty_runs()
    missing = [c for c in RUN_COLUMNS if c not in df.columns and c != "settings"]
    if missing:
        raise ResultsError(f"run CSV {path} lacks column(s) {', '.join(missing)}; "
                           f"expected {', '.join(RUN_COLUMNS)}")
    for c in ("dataset", "split", "backbone", "sampler", "layers", "seed", "key", "epochs_run"):
        if df[c].isna().any():
            raise ResultsError(f"run CSV {path} has empty {c!r} cells (row "
                               f"{int(df[c].isna().to_numpy().argmax()) + 2})")
    try:
        return _typed(df)
    except (ValueError, TypeError) as exc:
        raise ResultsError(f"run CSV {path} has a bad value: {exc}".splitlines()[0]) from None


def bundled_files(directory: str | Path | None = None) -> list[Path]:
    """The run CSVs under ``directory`` (default :data:`BUNDLED_DIR`), sorted."""
    root = Path(directory) if directory is not None else BUNDLED_DIR
    return sorted(p for p in root.rglob("*.csv") if p.is_file()) if root.is_dir() else []


def bundled_signature(directory: str | Path | None = None) -> tuple:
    """What changes when a bundled CSV is added, removed or rewritten (a cache key)."""
    return tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in bundled_files(directory))


def bundled_results(directory: str | Path | None = None) -> pd.DataFrame:
    """Every run of the CSVs under ``directory`` (default ``assets/results/``), in the
    run CSV format; a run (key) in several files counts once. No folder or no files:
    an empty table.

    Raises:
        ResultsError: a file that does not follow the format.
    """
    frames = [read_runs(p) for p in bundled_files(directory)]
    frames = [f for f in frames if len(f)]
    if not frames:
        return empty_runs()
    return pd.concat(frames, ignore_index=True).drop_duplicates("key").reset_index(drop=True)


def store_runs(store: ResultStore) -> pd.DataFrame:
    """The store's runs in the run CSV format (``num_layers`` becomes ``layers``)."""
    df = store.to_frame()
    if df.empty:
        return empty_runs()
    fields = [f for f in TrainConfig.__dataclass_fields__ if f in df]
    df["settings"] = [TrainConfig.from_dict({f: _plain(row[f]) for f in fields}).settings
                      for _, row in df[fields].iterrows()]
    return _typed(df.rename(columns={"num_layers": "layers"}))


def _plain(value):
    """A pandas cell as the Python value a TrainConfig field takes (NaN -> None)."""
    if value is None or (isinstance(value, float) and value != value):
        return None
    return value.item() if hasattr(value, "item") else value


def export_runs(store: ResultStore, path: str | Path, keys: Iterable[str] | None = None) -> Path:
    """Write the store's runs (only those with a key in ``keys`` when given) as a run
    CSV — e.g. into ``assets/results/`` to bundle a sweep with the app. Rows are sorted
    by dataset, split, backbone, sampler (NoDrop first), depth and seed. Returns the path."""
    path = Path(path).expanduser()
    if path.suffix.lower() != ".csv":
        raise ResultsError(f"run exports are CSV files; got {str(path)!r}")
    df = store_runs(store)
    if keys is not None:
        df = df[df["key"].isin(set(keys))]
    df = df.sort_values([*GROUP_COLUMNS, "seed"], key=_display_order, kind="stable")
    path.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(path, index=False)
    return path


def cached_runs(store_df: pd.DataFrame | None = None,
                bundled_df: pd.DataFrame | None = None) -> pd.DataFrame:
    """The runs available without training, with a ``source`` column (``"store"`` or
    ``"bundled"``); a run in both counts once, from the store."""
    parts = []
    for df, source in ((store_df, "store"), (bundled_df, "bundled")):
        if df is not None and len(df):
            parts.append(df[list(RUN_COLUMNS)].assign(source=source))
    if not parts:
        return empty_runs().assign(source=pd.Series(dtype=str))
    return pd.concat(parts, ignore_index=True).drop_duplicates("key").reset_index(drop=True)


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


def run_row(config: TrainConfig) -> dict:
    """The descriptive columns of a config in the run CSV format (no metrics)."""
    return {"dataset": config.dataset, "split": config.split, "backbone": config.backbone,
            "sampler": config.sampler, "layers": config.num_layers, "seed": config.seed,
            "settings": config.settings, "key": run_key(config)}


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
# Aggregation


def paper_rows(paper: pd.DataFrame, dataset: str, split: str, backbones: Sequence[str] | None = None,
               samplers: Sequence[str] | None = None, layers: Sequence[int] | None = None) -> pd.DataFrame:
    """The rows of :func:`dropedge_core.data.reference.paper_accuracy_by_depth` for one dataset
    and split (the paper's ``setting``), optionally only some backbones, samplers and
    depths; with a ``backbone_key`` column in our spelling (``"APPNP*"`` → ``"appnp_star"``)."""
    rows = paper[(paper["dataset_key"] == dataset) & (paper["setting"] == split)]
    rows = rows.assign(backbone_key=rows["backbone"].map(check_backbone))
    if backbones is not None:
        rows = rows[rows["backbone_key"].isin({check_backbone(b) for b in backbones})]
    if samplers is not None:
        rows = rows[rows["sampler"].isin(set(samplers))]
    if layers is not None:
        rows = rows[rows["layers"].isin({int(v) for v in layers})]
    return rows.reset_index(drop=True)


def depth_table(runs: pd.DataFrame, paper: pd.DataFrame | None = None) -> pd.DataFrame:
    """Test accuracy per cell ``(dataset, split, backbone, sampler, layers)``: mean, std
    and number of runs, over the seeds.

    Args:
        runs: one row per run in the run CSV format; an optional ``source`` column
            (:func:`requested_runs`) where ``"missing"`` rows are requested runs not
            made yet.
        paper: :func:`dropedge_core.data.reference.paper_accuracy_by_depth` (percent); its
            number for each cell is added as ``paper_test_acc`` (a fraction, NaN where
            the paper has none).

    Returns:
        One row per cell, sorted: the group columns, ``test_acc_mean``, ``test_acc_std``
        (sample std, NaN below 2 runs), ``best_val_acc_mean``, ``n`` (runs with a test
        accuracy), ``missing`` (requested runs not made), ``n_store``/``n_bundled`` (where
        the ``n`` runs came from; with ``source`` only), ``status`` — ``"measured"``
        (nothing missing), ``"partial"`` or ``"missing"`` (no run) — and, with ``paper``,
        ``paper_test_acc`` and ``diff_vs_paper`` (mean − paper, a fraction).

    Example:
        >>> df = pd.DataFrame({"dataset": "cora", "split": "semi", "backbone": "gcn",
        ...     "sampler": "nodrop", "layers": 2, "seed": [0, 1], "test_acc": [0.8, 0.82],
        ...     "best_val_acc": 0.79, "epochs_run": 200, "key": ["a", "b"]})
        >>> row = depth_table(df).iloc[0]
        >>> round(float(row.test_acc_mean), 3), int(row.n), row.status
        (0.81, 2, 'measured')
    """
    df = runs.copy()
    if "source" not in df:
        df["source"] = "store"
    done = df["source"] != "missing"
    df["_measured"] = done & df["test_acc"].notna()
    df["_missing"] = ~done
    df["_store"] = df["_measured"] & (df["source"] == "store")
    df["_bundled"] = df["_measured"] & (df["source"] == "bundled")
    df["test_acc"] = df["test_acc"].where(done).astype(float)
    df["best_val_acc"] = df["best_val_acc"].where(done).astype(float)
    keys = list(GROUP_COLUMNS)
    columns = [*keys, "test_acc_mean", "test_acc_std", "best_val_acc_mean", "n", "missing",
               "n_store", "n_bundled", "status"]
    if df.empty:
        table = pd.DataFrame({c: [] for c in columns})
    else:
        grouped = df.groupby(keys, sort=True)
        table = grouped.agg(test_acc_mean=("test_acc", "mean"), test_acc_std=("test_acc", "std"),
                            best_val_acc_mean=("best_val_acc", "mean"), n=("_measured", "sum"),
                            missing=("_missing", "sum"), n_store=("_store", "sum"),
                            n_bundled=("_bundled", "sum")).reset_index()
        table["status"] = "partial"
        table.loc[table["missing"] == 0, "status"] = "measured"
        table.loc[table["n"] == 0, "status"] = "missing"
    for c in ("n", "missing", "n_store", "n_bundled", "layers"):
        table[c] = table[c].astype("int64")
    for c in ("test_acc_mean", "test_acc_std", "best_val_acc_mean"):
        table[c] = table[c].astype(float)
    table = table[columns]
    if paper is not None:
        ref = pd.DataFrame({"dataset": paper["dataset_key"], "split": paper["setting"],
                            "backbone": paper["backbone"].map(check_backbone),
                            "sampler": paper["sampler"], "layers": paper["layers"].astype("int64"),
                            "paper_test_acc": paper["test_accuracy"].astype(float) / 100.0})
        ref = ref.drop_duplicates(keys)
        table = table.merge(ref, on=keys, how="left")
        table["diff_vs_paper"] = table["test_acc_mean"] - table["paper_test_acc"]
    return table.sort_values(keys, key=_display_order, kind="stable").reset_index(drop=True)


#: Measured and paper differ "by more than a few points" (a fraction: 5 points).
PAPER_GAP = 0.05
#: Where the gaps between measured and paper numbers are explained.
REPRODUCTION_DOC = paths.reproduction_doc()


def paper_gaps(table: pd.DataFrame, threshold: float = PAPER_GAP) -> pd.DataFrame:
    """The cells of :func:`depth_table` (with ``paper``) whose measured mean differs from
    the paper's number by more than ``threshold`` (a fraction), largest gap first."""
    if "diff_vs_paper" not in table or table.empty:
        return table.iloc[0:0]
    gaps = table[table["diff_vs_paper"].abs() > threshold]
    return gaps.reindex(gaps["diff_vs_paper"].abs().sort_values(ascending=False).index)


def reproduction_notes(path: str | Path | None = None,
                       sections: Sequence[str] = ("1.", "3.", "4.")) -> str:
    """The sections of ``docs/REPRODUCTION.md`` that explain measured-vs-paper gaps (the
    ``## 2.``, ``## 3.`` ... headings), as Markdown; a one-line note when it is missing."""
    path = Path(path) if path is not None else REPRODUCTION_DOC
    if path is None:
        return "(docs/REPRODUCTION.md is in the repository, not in an installed package.)"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return f"({path} is missing.)"
    parts = text.split("\n## ")
    chosen = ["## " + p.strip() for p in parts[1:] if p.lstrip().startswith(tuple(sections))]
    return "\n\n".join(chosen) or text


def _display_order(column: pd.Series) -> pd.Series:
    """Backbones in :data:`~dropedge_core.method.models.BACKBONES` order and samplers in
    :data:`~dropedge_core.method.samplers.NAMES` order (NoDrop, DropEdge, ..., DropEdge++);
    other columns as they are."""
    order = {"backbone": BACKBONES, "sampler": SAMPLER_NAMES}.get(column.name)
    if order is None:
        return column
    rank = {name: i for i, name in enumerate(order)}
    return column.map(lambda v: rank.get(v, len(rank)))


__all__ = ["BUNDLED_DIR", "DEPTHS", "GROUP_COLUMNS", "KEEP_GRID", "MODES", "RUN_COLUMNS", "ResultsError",
           "STUDY_FIXED", "STUDY_SAMPLERS", "bundled_files", "bundled_results", "bundled_signature",
           "PAPER_GAP", "cached_runs", "cached_settings", "depth_configs", "depth_table", "describe_settings",
           "empty_runs", "export_runs", "nearest_settings", "other_runs", "paper_gaps", "reproduction_notes",
           "paper_rows", "read_runs", "requested_runs", "run_row", "store_path", "store_runs",
           "study_settings", "sweep_commands"]
