"""Runs as tables: the run CSV format, the runs bundled with the app under
``dropedge_explorer/assets/results/``, the results store's runs in that format, and their export
(the run CSV format, or every column as CSV or parquet).

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
               (:func:`dropedge_explorer.training.recipes.settings_label`: ``depth``, ``quick``,
               ``quick+batch_norm=True``, ``paper``, ...); files written before recipes
               existed may lack the column (read as empty)
``key``        :func:`dropedge_explorer.store.run_key` of the run's full config (64 hex
               digits): the identity of the run — a page asks for configs, and a run
               of the CSV counts for a config exactly when the keys are equal
``stream``     the sampler stream version the run drew its masks from
               (:data:`dropedge_core.STREAMS`; it enters the key when above
               1); files without the column are version 1
``masks_fp``   the run's fingerprint (:mod:`dropedge_explorer.training._fingerprint`): a hash of
``init_fp``    the masks its seed draws in its first epochs and of its initial weights, as
               the code that made it drew them; empty in files written before fingerprints
``run_masks_fp``  a hash of every epoch's masks (all ``epochs_run`` of them)
``dropout_fp`` the dropout stream's state and the weights after the last epoch, as the
``final_fp``   trainer recorded them; empty for a run trained before the store kept its
               fingerprint (schema 4): its ``run_masks_fp`` was then computed by sampling
               when it was bundled or exported
=============  ==========================================================================

The fingerprint columns carry what the store holds, as the run was trained; a cell the store
has empty is computed at export. Bundling refuses a run whose stored ``masks_fp``,
``init_fp`` or ``run_masks_fp`` is not what the code computes
(:func:`dropedge_explorer.studies.fingerprints.checked`).

Only rows of today's stream of their sampler count in a table or a verdict
(:func:`dropedge_explorer.studies.fingerprints.current`); ``tests/studies/test_bundled_fingerprints.py``
recomputes every bundled fingerprint and names the runs a code change altered.

The descriptive columns are for people and for grouping; only ``key`` says under which
settings (hidden width, learning rate, epochs, keep rates, ...) a run was made; ``settings``
says it in words.

"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
from dropedge_core import stream_version
from dropedge_core.models import ALIASES, BACKBONES
from dropedge_core.samplers import NAMES as SAMPLER_NAMES

from dropedge_explorer import _sqlite_locks as sqlite_locks
from dropedge_explorer import paths
from dropedge_explorer._lazy import lazy_import
from dropedge_explorer.store import ResultStore, run_key
from dropedge_explorer.training import UPLOAD_DATASET, TrainConfig

#: Where the bundled run CSVs live (every ``*.csv`` below it is read).
BUNDLED_DIR = paths.BUNDLED_RESULTS_DIR
#: Columns of the run CSV format, in order.
RUN_COLUMNS: tuple[str, ...] = ("dataset", "split", "backbone", "sampler", "layers", "seed",
                                "test_acc", "best_val_acc", "epochs_run", "settings", "key",
                                "stream", "masks_fp", "init_fp", "run_masks_fp", "dropout_fp", "final_fp")
#: The fingerprint columns (:data:`dropedge_explorer.training._fingerprint.RUN_PRINT_FIELDS`).
PRINT_COLUMNS: tuple[str, ...] = ("masks_fp", "init_fp", "run_masks_fp", "dropout_fp", "final_fp")
#: Columns a run CSV may lack (files written before them): read as empty, or stream 1.
OPTIONAL_COLUMNS: tuple[str, ...] = ("settings", "stream", *PRINT_COLUMNS)
#: What one cell of the depth study is: the runs of a cell differ only in their seed.
GROUP_COLUMNS: tuple[str, ...] = ("dataset", "split", "backbone", "sampler", "layers")
_INT_COLUMNS = ("layers", "seed", "epochs_run", "stream")
_FLOAT_COLUMNS = ("test_acc", "best_val_acc")
_STR_COLUMNS = ("dataset", "split", "backbone", "sampler", "settings", "key", *PRINT_COLUMNS)


class ResultsError(ValueError):
    """A run CSV that cannot be read (missing columns, bad values); the message names
    the file."""


def empty_runs() -> pd.DataFrame:
    """A run table with no rows (the columns of :data:`RUN_COLUMNS`, typed)."""
    return _typed(pd.DataFrame({c: [] for c in RUN_COLUMNS}))


def _typed(df: pd.DataFrame) -> pd.DataFrame:
    """The run columns in order with their types: ints for layers/seed/epochs, floats for
    accuracies (NaN when empty), lower-case strings for the names."""
    out = pd.DataFrame(index=df.index)
    for c in _STR_COLUMNS:
        out[c] = (df[c] if c in df else pd.Series("", index=df.index)).fillna("").astype(str).str.strip()
        if c not in ("key", "settings", *PRINT_COLUMNS):
            out[c] = out[c].str.lower()
    out["backbone"] = out["backbone"].replace(ALIASES)  # files from before appnp_star say "appnp*"
    for c in _FLOAT_COLUMNS:
        out[c] = pd.to_numeric(df[c], errors="raise").astype(float)
    stream = df["stream"] if "stream" in df else pd.Series(1, index=df.index)
    out["stream"] = pd.to_numeric(stream, errors="raise").fillna(1)
    for c in _INT_COLUMNS:
        out[c] = pd.to_numeric(out[c] if c == "stream" else df[c], errors="raise").astype("int64")
    return out[list(RUN_COLUMNS)].reset_index(drop=True)


def read_runs(path: str | Path) -> pd.DataFrame:
    """One run CSV (the format above) as a typed table.

    Args:
        path (str or Path): the run CSV.

    Raises:
        ResultsError: a required column is missing or a value is not a number where one
            is needed (the message names the file and the columns).
    """
    path = Path(path)
    try:
        df = pd.read_csv(path, dtype={"key": str, "dataset": str, "split": str, "backbone": str,
                                      "sampler": str, "settings": str, **{c: str for c in PRINT_COLUMNS}})
    except (OSError, pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise ResultsError(f"cannot read run CSV {path}: {exc}".splitlines()[0]) from None
    except pd.errors.EmptyDataError:
        return empty_runs()
    missing = [c for c in RUN_COLUMNS if c not in df.columns and c not in OPTIONAL_COLUMNS]
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
    """The run CSVs under ``directory`` (default :data:`BUNDLED_DIR`), sorted.

    Args:
        directory (str or Path, optional): the folder searched (``None``:
            :data:`BUNDLED_DIR`). (default: :obj:`None`)
    """
    root = Path(directory) if directory is not None else BUNDLED_DIR
    return sorted(p for p in root.rglob("*.csv") if p.is_file()) if root.is_dir() else []


def bundled_signature(directory: str | Path | None = None) -> tuple:
    """What changes when a bundled CSV is added, removed or rewritten (a cache key).

    Args:
        directory (str or Path, optional): the folder of the CSVs (``None``:
            :data:`BUNDLED_DIR`). (default: :obj:`None`)
    """
    return tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in bundled_files(directory))


def _stream_of(df: pd.DataFrame) -> pd.Series:
    stream = df["stream"] if "stream" in df else pd.Series(1, index=df.index)
    return stream.fillna(1).astype("int64")


def current(df: pd.DataFrame) -> pd.DataFrame:
    """The rows drawn from today's stream of their sampler
    (:func:`dropedge_core.stream_version`): the only ones a table or a
    verdict may use.

    Args:
        df (pandas.DataFrame): runs in the run CSV format (a missing ``stream`` column counts
            as stream 1).
    """
    return df[_stream_of(df) == df["sampler"].map(stream_version)]


def older(df: pd.DataFrame) -> pd.DataFrame:
    """The rows of an older stream than today's: bundled for comparison, never pooled with
    :func:`current` rows.

    Args:
        df (pandas.DataFrame): runs in the run CSV format.
    """
    return df[_stream_of(df) != df["sampler"].map(stream_version)]


def bundled_results(directory: str | Path | None = None, *, include_older: bool = False) -> pd.DataFrame:
    """Every run of the CSVs under ``directory`` (default ``dropedge_explorer/assets/results/``), in the
    run CSV format; a run (key) in several files counts once. No folder or no files:
    an empty table.

    Args:
        directory (str or Path, optional): where the CSVs are (``None``:
            :data:`BUNDLED_DIR`). (default: :obj:`None`)
        include_older (bool, optional): also the runs of an older sampler stream
            (:func:`older`); by default only :func:`current` runs, so that no table or
            verdict pools the two. (default: :obj:`False`)

    Raises:
        ResultsError: a file that does not follow the format.
    """
    frames = [read_runs(p) for p in bundled_files(directory)]
    frames = [f for f in frames if len(f)]
    if not frames:
        return empty_runs()
    every = pd.concat(frames, ignore_index=True).drop_duplicates("key").reset_index(drop=True)
    return every if include_older else current(every).reset_index(drop=True)


def store_runs(store: ResultStore) -> pd.DataFrame:
    """The store's runs in the run CSV format (``num_layers`` becomes ``layers``).

    Args:
        store (ResultStore): the results store read.
    """
    df = store.to_frame()
    if df.empty:
        return empty_runs()
    fields = [f for f in TrainConfig.__dataclass_fields__ if f in df]
    df["settings"] = [TrainConfig.from_dict({f: _plain(row[f]) for f in fields}).settings
                      for _, row in df[fields].iterrows()]
    df["stream"] = df["stream"].fillna(1) if "stream" in df else 1
    return _typed(df.rename(columns={"num_layers": "layers"}))


def _plain(value):
    """A pandas cell as the Python value a TrainConfig field takes (NaN -> None)."""
    if value is None or (isinstance(value, float) and value != value):
        return None
    return value.item() if hasattr(value, "item") else value


def export_runs(store: ResultStore, path: str | Path, keys: Iterable[str] | None = None) -> Path:
    """Write the store's runs (only those with a key in ``keys`` when given) as a run
    CSV — e.g. into ``dropedge_explorer/assets/results/`` to bundle a sweep with the app. Rows are sorted
    by dataset, split, backbone, sampler (NoDrop first), depth and seed; each row of today's
    stream gets its fingerprint, computed now (a run of an older stream keeps it empty: this
    code does not draw that stream). Returns the path.

    Args:
        store (ResultStore): the results store read.
        path (str or Path): the CSV written.
        keys (Iterable[str], optional): only the runs of these keys (all when ``None``).
            (default: :obj:`None`)
    """
    path = Path(path).expanduser()
    if path.suffix.lower() != ".csv":
        raise ResultsError(f"run exports are CSV files; got {str(path)!r}")
    df = store_runs(store)
    if keys is not None:
        df = df[df["key"].isin(set(keys))]
    df = df.sort_values([*GROUP_COLUMNS, "seed"], key=display_order, kind="stable")
    df = with_fingerprints(df)
    with _room_for(path), paths.replaced(path) as part:  # a reader never sees half a file
        df.to_csv(part, index=False)
    return path


@contextmanager
def _room_for(path: Path) -> Iterator[None]:
    """Make ``path``'s folder; a write in the block that finds no room (a full disk, a
    file-size limit: :data:`~dropedge_explorer._sqlite_locks.NO_ROOM`) is one
    :class:`ResultsError` line naming the export and why (the partial file is removed by
    :func:`~dropedge_explorer.paths.replaced`; an earlier file of that name is kept)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        yield
    except OSError as exc:
        if exc.errno not in sqlite_locks.NO_ROOM:
            raise
        why = sqlite_locks.space_problem(path) or exc.strerror
        raise ResultsError(f"cannot write the export {str(path)!r}: {why}; free space or raise the limit; "
                           "an earlier file of that name is unchanged") from None


def with_fingerprints(df: pd.DataFrame, refuse: bool = False) -> pd.DataFrame:
    """``df`` (run CSV rows) with ``masks_fp``, ``init_fp`` and ``run_masks_fp`` for every row
    of today's stream (not an uploaded graph's): the stored value where the row has one,
    computed now (by sampling and building, no training) where it is empty
    (:func:`dropedge_explorer.studies.fingerprints.checked`).

    Args:
        df (pandas.DataFrame): run CSV rows.
        refuse (bool, optional): raise
            :class:`~dropedge_explorer.studies.fingerprints.FingerprintMismatch` when a stored
            digest is not what the code computes (bundling); else keep the stored one
            (an export). (default: :obj:`False`)
    """
    fingerprints = lazy_import("dropedge_explorer.studies.fingerprints")  # it imports this module

    for name in PRINT_COLUMNS:
        df[name] = df[name].fillna("").astype(str) if name in df else ""
    now = fingerprints.current(df[df["dataset"] != UPLOAD_DATASET])
    if not refuse:  # an export computes only what is missing
        now = now[(now[list(fingerprints.COMPUTABLE)] == "").any(axis=1)]
    if len(now):
        done = fingerprints.checked(now, refuse=refuse)
        for name in fingerprints.COMPUTABLE:
            df.loc[done.index, name] = done[name]
    return df


def export_table(store: ResultStore, path: str | Path) -> Path:
    """Write every column of the store's runs (:meth:`ResultStore.to_frame`: config, metrics)
    to ``.csv`` or ``.parquet``, by the suffix; return the path. For the run CSV format (the
    columns a page reads) use :func:`export_runs`.

    Args:
        store (ResultStore): the results store read.
        path (str or Path): the file written, ``.csv`` or ``.parquet``.

    Raises:
        ResultsError: another suffix, or parquet without pyarrow (one line).
    """
    path = Path(path).expanduser()
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".parquet"):
        raise ResultsError(f"unknown export format {path.suffix!r} of {str(path)!r}; valid: .csv, .parquet")
    df = store.to_frame()
    try:
        with _room_for(path), paths.replaced(path) as part:
            if suffix == ".csv":
                df.to_csv(part, index=False)
            else:
                df.to_parquet(part, index=False)
    except ImportError:
        raise ResultsError("parquet export needs pyarrow (pip install pyarrow); use .csv") from None
    return path


def cached_runs(store_df: pd.DataFrame | None = None,
                bundled_df: pd.DataFrame | None = None) -> pd.DataFrame:
    """The runs available without training, with a ``source`` column (``"store"`` or
    ``"bundled"``); a run in both counts once, from the store.

    Args:
        store_df (pandas.DataFrame, optional): the store's runs (:func:`store_runs`; none when
            ``None``). (default: :obj:`None`)
        bundled_df (pandas.DataFrame, optional): the bundled runs (:func:`bundled_results`;
            none when ``None``). (default: :obj:`None`)
    """
    parts = []
    for df, source in ((store_df, "store"), (bundled_df, "bundled")):
        if df is not None and len(df):
            parts.append(df[list(RUN_COLUMNS)].assign(source=source))
    if not parts:
        return empty_runs().assign(source=pd.Series(dtype=str))
    return pd.concat(parts, ignore_index=True).drop_duplicates("key").reset_index(drop=True)


def run_row(config: TrainConfig) -> dict:
    """The descriptive columns of a config in the run CSV format (no metrics).

    Args:
        config (TrainConfig): the run's settings.
    """
    return {"dataset": config.dataset, "split": config.split, "backbone": config.backbone,
            "sampler": config.sampler, "layers": config.num_layers, "seed": config.seed,
            "settings": config.settings, "key": run_key(config),
            "stream": stream_version(config.sampler), **{c: "" for c in PRINT_COLUMNS}}

def display_order(column: pd.Series) -> pd.Series:
    """Backbones in :data:`~dropedge_core.models.BACKBONES` order and samplers in
    :data:`~dropedge_core.samplers.NAMES` order (NoDrop, DropEdge, ..., DropEdge++);
    other columns as they are.

    Args:
        column (pandas.Series): a column of a run table (``backbone``, ``sampler`` or another);
            meant as the ``key`` of :meth:`pandas.DataFrame.sort_values`.

    Example:
        >>> df = pd.DataFrame({"sampler": ["dropedge++", "nodrop", "dropedge"]})
        >>> df.sort_values("sampler", key=display_order)["sampler"].tolist()
        ['nodrop', 'dropedge', 'dropedge++']
    """
    order = {"backbone": BACKBONES, "sampler": SAMPLER_NAMES}.get(column.name)
    if order is None:
        return column
    rank = {name: i for i, name in enumerate(order)}
    return column.map(lambda v: rank.get(v, len(rank)))


__all__ = ["BUNDLED_DIR", "GROUP_COLUMNS", "PRINT_COLUMNS", "RUN_COLUMNS",
           "ResultsError", "bundled_files", "bundled_results",
           "bundled_signature", "cached_runs", "current", "older", "display_order", "empty_runs",
           "export_runs", "export_table", "with_fingerprints",
           "read_runs", "run_row", "store_runs"]
