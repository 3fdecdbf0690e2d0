"""One of the paper's depth tables, regenerated: its cells, the runs it still lacks, those
runs trained (the seeds of a cell in one batch) and stored, the bundled file brought up to
date, and the table's verdicts — what ``python -m dropedge_core reproduce`` does.

A table (:data:`TABLES`) is one of the paper's accuracy-by-depth tables of one dataset and
split, for GCN or for the three other backbones, as the bundled run files split them
(``dropedge_explorer/assets/results/depth_<gcn|backbones>_<split>_<dataset>.csv``). Its runs are
the Depth study's under the depth recipe (:func:`dropedge_explorer.studies.depth.depth_configs`:
keep rates 0.3 / 0.8, no diagnostics), so a run made here, by a sweep or by the app's "Run
missing" has one key. A run counts as present when the bundled file holds it (today's
stream) or the store does; the rest are trained cell by cell and stored as each cell ends,
so an interrupted reproduction resumes where it stopped.

Example:
    >>> from dropedge_explorer.studies import reproduce
    >>> table = reproduce.TABLES["gcn-semi-cora"]
    >>> table.file, table.backbones
    ('depth_gcn_semi_cora.csv', ('gcn',))
    >>> configs = reproduce.table_configs(table, seeds=2, layers=[2])
    >>> [(c.num_layers, c.sampler, c.seed) for c in configs][:3]
    [(2, 'nodrop', 0), (2, 'dropedge', 0), (2, 'dropedge++', 0)]
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from dropedge_core.echo import bounded
from dropedge_core.graph import Graph

from dropedge_explorer import paths
from dropedge_explorer.data import reference
from dropedge_explorer.store import ResultStore, run_key
from dropedge_explorer.studies import depth, ordering
from dropedge_explorer.studies.cells import paper_rows
from dropedge_explorer.studies.run_tables import (
    GROUP_COLUMNS,
    PRINT_COLUMNS,
    ResultsError,
    current,
    display_order,
    empty_runs,
    read_runs,
    store_runs,
    with_fingerprints,
)
from dropedge_explorer.training import RunResult, TrainConfig, train

#: The other backbones, beside GCN (the paper's tables give all four; the bundled files
#: keep GCN apart).
OTHER_BACKBONES: tuple[str, ...] = ("resgcn", "jknet", "appnp_star")


@dataclass(frozen=True)
class PaperTable:
    """One of the paper's accuracy-by-depth tables, as a bundled run file holds it.

    Attributes:
        dataset, split: the data (``cora``/``citeseer``, ``semi``/``full``).
        backbones: ``("gcn",)`` or :data:`OTHER_BACKBONES`.
    """

    dataset: str
    split: str
    backbones: tuple[str, ...]

    @property
    def kind(self) -> str:
        return "gcn" if self.backbones == ("gcn",) else "backbones"

    @property
    def name(self) -> str:
        """The name ``reproduce --table`` takes, e.g. ``gcn-semi-cora``."""
        return f"{self.kind}-{self.split}-{self.dataset}"

    @property
    def file(self) -> str:
        """The bundled run file's name, e.g. ``depth_gcn_semi_cora.csv``."""
        return f"depth_{self.kind}_{self.split}_{self.dataset}.csv"


#: Every table ``reproduce`` regenerates, by name.
TABLES: dict[str, PaperTable] = {t.name: t for t in (
    PaperTable(dataset, split, backbones)
    for backbones in (("gcn",), OTHER_BACKBONES)
    for dataset in ("cora", "citeseer") for split in ("semi", "full"))}


def check_table(name: str) -> PaperTable:
    """The table called ``name``.

    Args:
        name (str): the table's name, one of :data:`TABLES`.

    Raises:
        ResultsError: an unknown name (the message lists the valid ones).
    """
    table = TABLES.get(str(name).strip().lower())
    if table is None:
        raise ResultsError(f"unknown table {bounded(name)}; valid: {', '.join(TABLES)}")
    return table


def table_layers(table: PaperTable) -> list[int]:
    """The depths the paper reports for ``table`` (2 to 64)."""
    rows = paper_rows(reference.paper_accuracy_by_depth(), table.dataset, table.split, table.backbones)
    return sorted(int(v) for v in rows["layers"].unique())


def table_configs(table: PaperTable, seeds: int | Sequence[int] = 10,
                  layers: Sequence[int] | None = None, device: str = "auto") -> list[TrainConfig]:
    """Every run of ``table``: backbone × depth × sampler (NoDrop, DropEdge, DropEdge++) ×
    seed under the depth recipe, in the Depth study's order (seed by seed, shallow first).

    Args:
        table (PaperTable): the table (:func:`check_table`).
        seeds (int or Sequence[int], optional): a count ``n`` (seeds ``0 .. n-1``) or the
            seeds. (default: :obj:`10`)
        layers (Sequence[int], optional): only these of the paper's depths (all when
            ``None``). (default: :obj:`None`)
        device (str, optional): where the runs train (not part of a run's key).
            (default: :obj:`"auto"`)

    Raises:
        ResultsError: a depth the paper's table does not have.
    """
    every = table_layers(table)
    chosen = every if layers is None else sorted({int(v) for v in layers})
    foreign = [v for v in chosen if v not in every]
    if foreign:
        raise ResultsError(f"--layers {' '.join(map(str, foreign))}: not a depth of the paper's table "
                           f"{table.name}; valid: {' '.join(map(str, every))}")
    configs = depth.depth_configs(table.dataset, table.split, table.backbones, chosen, seeds=seeds)
    return [dataclasses.replace(c, device=device) for c in configs] if device != "auto" else configs


def bundled_path(table: PaperTable, directory: str | Path | None = None) -> Path:
    """Where ``table``'s bundled run file is (default ``dropedge_explorer/assets/results/``).

    Raises:
        ResultsError: ``directory`` given but not an existing folder.
    """
    if directory is not None and not _is_dir(Path(directory)):
        raise ResultsError(f"--bundle-dir {bounded(str(directory))} is not an existing folder; give the "
                           "folder that holds the bundled run files")
    return Path(directory if directory is not None else paths.BUNDLED_RESULTS_DIR) / table.file


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:  # a name the system refuses (too long): no folder
        return False


def bundled_runs(table: PaperTable, directory: str | Path | None = None) -> pd.DataFrame:
    """Every row of ``table``'s bundled file, of every stream (empty when there is no file).

    Args:
        table (PaperTable): the table.
        directory (str or Path, optional): the folder of the bundled files (``None``: the
            package's ``assets/results``). (default: :obj:`None`)
    """
    path = bundled_path(table, directory)
    return read_runs(path) if path.is_file() else empty_runs()


def _cell_of(config: TrainConfig) -> str:
    """The key of a config with seed 0: the same for every seed of one cell."""
    return run_key(dataclasses.replace(config, seed=0))


def missing_cells(configs: Sequence[TrainConfig], present: Iterable[str]) -> list[list[TrainConfig]]:
    """The configs whose key is not in ``present``, the seeds of one cell together, cells in
    the order of their first config (shallow depths first).

    Args:
        configs (Sequence[TrainConfig]): the runs wanted (:func:`table_configs`).
        present (Iterable[str]): the keys of the runs that need no training
            (:func:`present_keys`).
    """
    have = set(present)
    cells: dict[str, list[TrainConfig]] = {}
    for c in sorted(configs, key=lambda c: (c.num_layers, c.backbone)):
        if run_key(c) not in have:
            cells.setdefault(_cell_of(c), []).append(c)
    return [sorted(group, key=lambda c: c.seed) for group in cells.values()]


def present_keys(table: PaperTable, store: ResultStore | None,
                 directory: str | Path | None = None) -> set[str]:
    """The keys of runs that need no training: today's-stream rows of the bundled file and
    every run of ``store``.

    Args:
        table (PaperTable): the table.
        store (ResultStore, optional): the results store (``None``: the bundled file only).
        directory (str or Path, optional): the folder of the bundled files.
            (default: :obj:`None`)
    """
    keys = set(current(bundled_runs(table, directory))["key"])
    return keys | (store.keys() if store is not None else set())


def expected_epochs(config: TrainConfig, runs: pd.DataFrame) -> float:
    """Epochs a run of ``config``'s cell is expected to take: the mean ``epochs_run`` of the
    cell's runs in ``runs`` (early stopping makes it shorter than the budget), else the
    config's ``epochs``."""
    same = runs[(runs["backbone"] == config.backbone) & (runs["layers"] == config.num_layers)
                & (runs["sampler"] == config.sampler)]["epochs_run"].dropna()
    return float(same.mean()) if len(same) else float(config.epochs)


def estimate_seconds(cells: Sequence[Sequence[TrainConfig]], runs: pd.DataFrame,
                     epoch_seconds: Callable[[TrainConfig], float]) -> pd.DataFrame:
    """One row per missing cell: backbone, layers, sampler, seeds to train, expected epochs
    per run (:func:`expected_epochs`), seconds per epoch (``epoch_seconds`` of the cell's
    first config) and the cell's estimated seconds (seeds × epochs × seconds per epoch).

    Args:
        cells (Sequence[Sequence[TrainConfig]]): the missing cells (:func:`missing_cells`).
        runs (pandas.DataFrame): runs whose ``epochs_run`` give each cell's expected epochs.
        epoch_seconds (Callable[[TrainConfig], float]): seconds per epoch of a config, e.g.
            :func:`measure_epoch`.
    """
    rows = []
    for cell in cells:
        c = cell[0]
        epochs, per_epoch = expected_epochs(c, runs), float(epoch_seconds(c))
        rows.append({"backbone": c.backbone, "layers": c.num_layers, "sampler": c.sampler,
                     "seeds": len(cell), "epochs": epochs, "epoch_s": per_epoch,
                     "seconds": len(cell) * epochs * per_epoch})
    return pd.DataFrame(rows, columns=["backbone", "layers", "sampler", "seeds", "epochs", "epoch_s",
                                       "seconds"])


#: Seconds per epoch and per layer of one run on an H200-class GPU, for estimates where no
#: GPU is at hand: a Cora GCN-32 single run measured there at 0.03 s per epoch (14-20 s a
#: run, the card nearly idle), divided by its 32 layers. Small graphs are bound by kernel
#: launches, which grow with the layers, not with the graph; batching a cell's seeds
#: divides the time further. Not measured on this project's CPU machine.
GPU_EPOCH_SECONDS_PER_LAYER = 0.03 / 32


def gpu_epoch_seconds(config: TrainConfig) -> float:
    """Estimated seconds per epoch of ``config`` as a single run on an H200-class GPU:
    :data:`GPU_EPOCH_SECONDS_PER_LAYER` times its layers.

    Args:
        config (TrainConfig): the run.

    Example:
        >>> from dropedge_explorer.training import TrainConfig
        >>> round(gpu_epoch_seconds(TrainConfig(dataset="cora", num_layers=64)), 4)
        0.06
    """
    return GPU_EPOCH_SECONDS_PER_LAYER * int(config.num_layers)


def remaining_gpu_plan(table: PaperTable, seeds: int = 10,
                       directory: str | Path | None = None) -> pd.DataFrame:
    """What ``table`` lacks to ``seeds`` seeds per cell beside its bundled runs of today's
    stream, and its estimated GPU time: :func:`estimate_seconds` of the missing cells with
    :func:`gpu_epoch_seconds` (single runs; epochs per run the bundled runs' mean, else
    the recipe's budget).

    Args:
        table (PaperTable): the table.
        seeds (int, optional): the seeds every cell should have. (default: :obj:`10`)
        directory (str or Path, optional): the folder of the bundled files.
            (default: :obj:`None`)
    """
    runs = bundled_runs(table, directory)  # read once: the present keys and the epochs per cell
    cells = missing_cells(table_configs(table, seeds), set(current(runs)["key"]))
    return estimate_seconds(cells, runs, gpu_epoch_seconds)


def measure_epoch(config: TrainConfig, graph: Graph, epochs: int = 3,
                  train_fn: Callable[..., RunResult] | None = None) -> float:
    """Seconds per epoch of ``config`` on its device: a run of ``epochs`` epochs (not stored),
    its mean epoch time.

    Args:
        config (TrainConfig): the settings timed.
        graph (Graph): the loaded graph.
        epochs (int, optional): the epochs of the timing run. (default: :obj:`3`)
        train_fn (Callable[..., RunResult], optional): the trainer
            (:func:`dropedge_explorer.training.trainer.train` when ``None``). (default: :obj:`None`)
    """
    short = dataclasses.replace(config, epochs=int(epochs), patience=0)
    result = (train_fn or train)(short, graph=graph)
    return float(result.mean_epoch_time or result.total_time / max(result.epochs_run, 1))


def bundle(table: PaperTable, store: ResultStore, directory: str | Path | None = None) -> tuple[Path, int]:
    """Add to ``table``'s bundled file every run of ``store`` that belongs to the table (a key
    of :func:`table_configs` at any of the store's seeds) and is not in the file yet, with its
    fingerprint; rows already there stay as they are (older-stream rows included). Written
    whole, by rename. Returns the path and the number of rows added.

    Args:
        table (PaperTable): the table.
        store (ResultStore): the results store read.
        directory (str or Path, optional): the folder of the bundled files.
            (default: :obj:`None`)
    """
    path = bundled_path(table, directory)
    old = bundled_runs(table, directory)
    new = store_runs(store)
    new = new[(new["dataset"] == table.dataset) & (new["split"] == table.split)
              & new["backbone"].isin(table.backbones) & ~new["key"].isin(set(old["key"]))]
    seeds = sorted({int(s) for s in new["seed"]})
    wanted = {run_key(c) for c in table_configs(table, seeds)} if seeds else set()
    new = new[new["key"].isin(wanted)]
    if not len(new):
        return path, 0
    new = with_fingerprints(new.copy(), refuse=True)  # a run another code made is refused
    columns = list(old.columns) if len(old.columns) else list(new.columns)
    columns += [c for c in PRINT_COLUMNS if c not in columns]  # a file from before gets them
    both = pd.concat([old, new.reindex(columns=columns)], ignore_index=True)
    both = both.sort_values([*GROUP_COLUMNS, "seed"], key=display_order, kind="stable")
    try:
        with paths.replaced(path) as part:
            both.to_csv(part, index=False)
    except OSError as exc:  # a read-only folder, a full disk: one line, the file left as it was
        raise ResultsError(f"cannot write the bundled file {str(path)!r}: {exc.strerror or exc}; the "
                           "runs stay in the store: run the command again to bundle them") from None
    return path, len(new)


def verdicts(table: PaperTable, directory: str | Path | None = None) -> pd.DataFrame:
    """The paired claims of ``table``'s bundled runs of today's stream, per backbone
    (:func:`dropedge_explorer.studies.ordering.compare_samplers`, Holm-corrected per claim over
    the table's depths), with a ``backbone`` column.

    Args:
        table (PaperTable): the table.
        directory (str or Path, optional): the folder of the bundled files.
            (default: :obj:`None`)
    """
    runs = current(bundled_runs(table, directory))
    parts = [ordering.compare_samplers(runs[runs["backbone"] == b]).assign(backbone=b)
             for b in table.backbones if (runs["backbone"] == b).any()]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


__all__ = ["GPU_EPOCH_SECONDS_PER_LAYER", "TABLES", "bundle", "bundled_runs",
           "check_table", "estimate_seconds", "gpu_epoch_seconds", "measure_epoch", "missing_cells",
           "present_keys", "remaining_gpu_plan", "table_configs", "verdicts"]
