"""The per-cell search: the paper's "random search" of every (depth, sampler) cell.

The paper's deep GCN settings came from a search per cell ("we perform a random search
... for each depth"), and its DropEdge++ > DropEdge > NoDrop ordering compares cells that
were each tuned. One shared recipe is not that test. Here each cell
``(dataset, split, backbone, L, sampler)`` gets its own Optuna study over lr, dropout,
weight decay, hidden width and the sampler's own keep rates (:meth:`SearchSpace.for_sampler`:
none for NoDrop, ``p`` for DropEdge, ``(p_min, p_max')`` otherwise), on **validation**
accuracy only, with the same trial budget for every sampler (pruned trials count). The
first trial of every study is the depth recipe's own point, so a cell's best is never
below the recipe on validation. Then the best point is trained on several seeds and stored
in the results store like any run (its ``settings`` name what the search changed); with
``batch_seeds`` those seeds train as one batch, while the trials stay single runs.

A search survives being stopped: the studies live in an Optuna storage, and
:func:`search_cell` only runs the trials a study still lacks. Several workers may search
one cell at once (the same command on one storage and store): the budget is the cell's,
not each worker's, and the best point's seeds are claimed, so none is trained twice.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import optuna
import pandas as pd

from dropedge_explorer import paths
from dropedge_explorer.store import ResultStore
from dropedge_explorer.studies import _trial_budget as trial_budget
from dropedge_explorer.studies import ordering, tuning
from dropedge_explorer.studies import run_tables as runs
from dropedge_explorer.studies._stopping import SignalStop
from dropedge_explorer.studies.sweep import run_claimed
from dropedge_explorer.sweep_workers import DEFAULT_LEASE, ClaimedRuns
from dropedge_explorer.training import TrainConfig

__all__ = [
    "cell_base", "study_name", "trials_done", "search_cell", "best_config",
    "run_best", "SEARCH_DIR", "bundled_summary", "bundled_best_runs", "bundled_view",
]

#: What the per-cell search tunes besides the keep rates.
CELL_PARAMS: tuple[str, ...] = ("lr", "dropout", "weight_decay", "hidden")


def cell_base(dataset: str, split: str | None, backbone: str, num_layers: int, sampler: str,
              recipe: str = "depth") -> TrainConfig:
    """The cell's starting point: the recipe's settings at this depth, seed 0, no diagnostics.

    Args:
        dataset (str): the dataset name, e.g. ``"cora"``.
        split (str, optional): the split (``"semi"`` or ``"full"``; ``None`` for the
            dataset's own).
        backbone (str): the backbone, e.g. ``"gcn"``.
        num_layers (int): the depth :math:`L`.
        sampler (str): the edge sampler, e.g. ``"dropedge++"``.
        recipe (str, optional): the training recipe whose settings the cell starts from.
            (default: :obj:`"depth"`)

    Example:
        >>> base = cell_base("cora", "semi", "gcn", 4, "dropedge++")
        >>> base.num_layers, base.seed, base.diag_every
        (4, 0, 0)
    """
    return TrainConfig(dataset=dataset, split=split, backbone=backbone, num_layers=num_layers,
                       sampler=sampler, recipe=recipe, seed=0, diag_every=0)


def cell_space(base: TrainConfig) -> tuning.SearchSpace:
    return tuning.SearchSpace.for_sampler(base.sampler, CELL_PARAMS)


def study_name(base: TrainConfig) -> str:
    """The Optuna study name of a cell, ``cell-<dataset>-<split>-<backbone>-L<L>-<sampler>-<recipe>``:
    one study per cell, shared by every worker that searches it.

    Args:
        base (TrainConfig): the cell's starting point (:func:`cell_base`).

    Example:
        >>> study_name(cell_base("cora", "semi", "gcn", 4, "dropedge++"))
        'cell-cora-semi-gcn-L4-dropedge++-depth'
    """
    return (f"cell-{base.dataset}-{base.split}-{base.backbone}-L{base.num_layers}-"
            f"{base.sampler}-{base.recipe}")


def trials_done(study: optuna.Study) -> int:
    """The cell's finished trials that count toward its budget
    (:func:`~dropedge_explorer.studies._trial_budget.finished`).

    Args:
        study (optuna.Study): the cell's study (:func:`search_cell`).
    """
    return trial_budget.finished(study.get_trials(deepcopy=False))


def search_cell(base: TrainConfig, trials: int, storage: str, graph=None,
                callbacks: Sequence[Callable] = (), stop_event: SignalStop | None = None) -> optuna.Study:
    """Bring the cell's study to ``trials`` counted trials (TPE, median pruning) and
    return it once no other worker's trial of it is running (so its best is final); a
    study that has them already is returned untouched.

    The budget is the cell's, across every worker on the storage: finished trials and
    trials running elsewhere count (:mod:`~dropedge_explorer.studies._trial_budget`), so two
    workers together never exceed it. ``stop_event``
    (:func:`~dropedge_explorer.studies._stopping.stop_on_signals`): a signal voids the running
    trial (it does not count) and raises ``Interrupted``.

    Args:
        base (TrainConfig): the cell's starting point (:func:`cell_base`); the search
            tunes the keep rates, ``lr``, ``dropout``, ``weight_decay`` and ``hidden`` on it.
        trials (int): the cell's budget of counted trials.
        storage (str): the Optuna storage URL, shared by every worker of the search.
        graph (Graph, optional): the loaded graph, when the caller holds it already
            (loaded from ``base`` otherwise). (default: :obj:`None`)
        callbacks (Sequence[Callable], optional): Optuna callbacks, called after each trial.
            (default: :obj:`()`)
        stop_event (SignalStop, optional): the stop flag set by a signal; ``None`` to run to
            the budget. (default: :obj:`None`)
    """
    space = cell_space(base)
    study = tuning.open_study(study_name(base), storage, "tpe", seed=None)
    tuning.check_study(study, space)
    if trial_budget.taken(study.get_trials(deepcopy=False)) < trials:
        study = tuning.tune(base, trials, study_name(base), storage=storage, search="tpe",
                            space=space, graph=graph, callbacks=list(callbacks), include_base=True,
                            stop_event=stop_event, budget=trials)
    trial_budget.wait_for_others(study, stop_event)
    if stop_event is not None:
        stop_event.check()  # a signal between trials: the study stopped early
    return study


def best_config(study: optuna.Study, base: TrainConfig) -> TrainConfig | None:
    """The best finished trial's settings on ``base`` (``None`` before any).

    Args:
        study (optuna.Study): the cell's study (:func:`search_cell`).
        base (TrainConfig): the cell's starting point the trial's parameters are set on.
    """
    if tuning.best_summary(study) is None:
        return None
    return base.replace(**study.best_trial.user_attrs["values"])


def run_best(config: TrainConfig, seeds: Sequence[int], store: ResultStore, graph=None,
             on_run: Callable[[TrainConfig, dict], None] | None = None,
             stop_event: SignalStop | None = None, lease: float = DEFAULT_LEASE,
             trained: list[str] | None = None, batch_seeds: bool = False) -> list[dict]:
    """Train ``config`` on every seed not yet in ``store``, store each run as it finishes;
    return the stored rows of all ``seeds``.

    Each run is claimed first, like a sweep's (:class:`~dropedge_explorer.sweep_workers.ClaimedRuns`):
    two workers that found the same best point split its seeds and wait for each other's,
    and no run is trained twice. A signal (``stop_event``) ends the running training at
    its next epoch, stores nothing of it, releases its claim and raises ``Interrupted``.
    ``trained`` (a list) gets the keys of the runs trained here. ``batch_seeds``: the seeds
    this worker could claim are trained as one batch
    (:func:`~dropedge_explorer.studies.sweep.run_claimed`'s ``batch_seeds``), each stored as its
    single run would be.

    Args:
        config (TrainConfig): the settings to train (usually :func:`best_config`'s).
        seeds (Sequence[int]): the seeds to train and return.
        store (ResultStore): the results store the runs are claimed in and stored to.
        graph (Graph, optional): the loaded graph, when the caller holds it already.
            (default: :obj:`None`)
        on_run (Callable[[TrainConfig, dict], None], optional): called with each run's
            settings and stored row as it finishes. (default: :obj:`None`)
        stop_event (SignalStop, optional): the stop flag set by a signal.
            (default: :obj:`None`)
        lease (float, optional): the claim's lease in seconds, renewed while a run trains.
            (default: :obj:`DEFAULT_LEASE`)
        trained (list[str], optional): a list that gets the keys of the runs trained here.
            (default: :obj:`None`)
        batch_seeds (bool, optional): train the seeds this worker claims as one batch.
            (default: :obj:`False`)
    """
    configs = [config.replace(seed=int(seed)) for seed in seeds]
    runs = ClaimedRuns(store, configs, lease=lease, stop_event=stop_event)
    outcome = run_claimed(runs, store, graph, stop_event=stop_event, batch_seeds=batch_seeds)
    if trained is not None:
        trained.extend(outcome.stored_keys)
    if stop_event is not None:
        stop_event.check()  # a run cut short is no result: it is trained again on resume
    rows = []
    for c in configs:
        row = store.get(c)  # stored here or by the worker that held its claim
        rows.append(row)
        if on_run is not None:
            on_run(c, row)
    return rows


#: The bundled search: one summary CSV per searched table (``cell_search_*.csv``: a row per
#: cell with its budget, best point and the best's test accuracy over seeds) and the best
#: points' runs in the run CSV format (``cell_best_*.csv``).
SEARCH_DIR = paths.ASSETS / "search"


def bundled_summary(directory: str | None = None) -> pd.DataFrame:
    """Every bundled search summary (``cell_search_*.csv``), one row per cell searched with
    today's stream of its sampler (:func:`~dropedge_explorer.studies.run_tables.current`: a search drawn
    from an older stream is left out, as its runs are).

    Args:
        directory (str, optional): the folder holding the summaries (``None`` for the bundled
            ``assets/search``). (default: :obj:`None`)
    """
    folder = Path(directory) if directory else SEARCH_DIR
    files = sorted(folder.glob("cell_search_*.csv"))
    if not files:
        return pd.DataFrame()
    return runs.current(pd.concat([pd.read_csv(f) for f in files], ignore_index=True)).reset_index(drop=True)


def bundled_best_runs(directory: str | None = None) -> pd.DataFrame:
    """Every bundled best-point run (``cell_best_*.csv``) of today's sampler streams
    (:func:`~dropedge_explorer.studies.run_tables.current`), in the run CSV format.

    Args:
        directory (str, optional): the folder holding the runs (``None`` for the bundled
            ``assets/search``). (default: :obj:`None`)
    """
    folder = Path(directory) if directory else SEARCH_DIR
    files = sorted(folder.glob("cell_best_*.csv"))
    if not files:
        return runs.empty_runs()
    every = pd.concat([runs.read_runs(f) for f in files], ignore_index=True)
    return runs.current(every).reset_index(drop=True)


def bundled_view(dataset: str = "cora", split: str = "semi", backbone: str = "gcn") -> dict:
    """The bundled search of one table, for a page: ``summary`` (a row per searched cell),
    ``runs`` (its best points' runs), ``claims`` (the paired test of the ordering claim per
    depth with its 95% interval and Holm-corrected p,
    :func:`dropedge_explorer.studies.ordering.compare_samplers`) and ``sentence`` (where
    DropEdge++ leads, and what the corrected tests show). Empty tables when nothing of that
    table was searched.

    Args:
        dataset (str, optional): the dataset. (default: :obj:`"cora"`)
        split (str, optional): the split. (default: :obj:`"semi"`)
        backbone (str, optional): the backbone. (default: :obj:`"gcn"`)
    """
    summary, best = bundled_summary(), bundled_best_runs()
    if len(summary):
        summary = summary[(summary["dataset"] == dataset) & (summary["split"] == split)
                          & (summary["backbone"] == backbone)].sort_values(["num_layers", "sampler"])
    best = best[(best["dataset"] == dataset) & (best["split"] == split) & (best["backbone"] == backbone)]
    return {"summary": summary, "runs": best,
            "claims": ordering.compare_samplers(best) if len(best) else pd.DataFrame(),
            "sentence": ordering.leader_sentence(best) if len(best) else None}
