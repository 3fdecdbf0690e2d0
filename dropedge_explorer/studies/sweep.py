"""The sweep: the one loop that trains runs and keeps them in the results store.

A run reaches the store by one function with one rule, whoever started it:
:func:`store_result` stores what :func:`should_store` admits — every run that ended on
its own (finished, early stop, a NaN loss: :data:`STORED_REASONS`) and none cut short
(``stopped``: a partial run would pass for a finished one) nor any on an uploaded graph
(the store keys a run on its dataset's name, which an uploaded graph does not have). A NaN
run is stored as measured (no accuracy): the Depth study then shows it and does not offer
to train it again. ``python -m dropedge_core train --store``, ``sweep`` and ``search``, the
app's "Run missing" (Depth study) and Live training (Tuning's "Train this" included) all
go through it — :func:`train_and_store`, :func:`train_seeds_and_store`,
:func:`run_claimed`, or :func:`store_result` itself — so a run trained anywhere is found
everywhere (the store keys a run on its config, :func:`dropedge_explorer.store.run_key`).

:func:`run_claimed` walks a grid with claims (:class:`~dropedge_explorer.sweep_workers.ClaimedRuns`):
workers started on one store split the grid, and a run stored by anyone is not trained
again. With ``batch_seeds`` it walks the grid cell by cell (:func:`cell_of`: every setting
but the seed) and trains the seeds of a cell it could claim as one batch
(:func:`~dropedge_explorer.training.seed_batch.train_seeds`), with the same guarantees: each
seed keeps its own claim, a seed whose claim another worker took over stops alone and is
not stored here, and each seed is stored as its single run would be.

A finished run whose store write fails for a reason that may pass (the store raises
:class:`~dropedge_explorer.store.StoreUnavailable`: a lock, a server restarting) is written
again after a pause.
"""
from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd
from dropedge_core.graph import Graph

from dropedge_explorer.store import ResultStore, StoreError, StoreUnavailable
from dropedge_explorer.studies.cells import cell_summary
from dropedge_explorer.sweep_workers import ClaimedRuns
from dropedge_explorer.training import UPLOAD_DATASET, RunResult, TrainConfig, train
from dropedge_explorer.training.seed_batch import train_seeds

#: ``(config, graph, on_event, stop_event) -> RunResult``: how a run is trained (tests pass fakes).
TrainFn = Callable[[TrainConfig, Graph | None, Callable | None, object], RunResult]


def default_train(config: TrainConfig, graph: Graph | None, on_event: Callable | None,
                  stop_event) -> RunResult:
    return train(config, graph=graph, on_event=on_event, stop_event=stop_event)


class AnyEvent:
    """A stop flag that is set when any of its events is (the user's Stop, a lost claim)."""

    def __init__(self, *events: threading.Event | None):
        self.events = [e for e in events if e is not None]

    def is_set(self) -> bool:
        return any(event.is_set() for event in self.events)


#: End reasons (:data:`~dropedge_explorer.training.config.END_REASONS`) of a run that is
#: stored: it ended on its own. Not ``stopped``: cut short, it is no result.
STORED_REASONS: tuple[str, ...] = ("finished", "early_stop", "nan")

#: Seconds before each retry of a store write that failed for a reason that may pass (a
#: lock held elsewhere, a server restarting): doubling, about a minute in all.
STORE_RETRY_DELAYS: tuple[float, ...] = (1.0, 2.0, 4.0, 8.0, 16.0, 30.0)


def should_store(result: RunResult) -> bool:
    """Whether a run that ended goes into the results store: it ended on its own
    (:data:`STORED_REASONS`, a NaN loss included) and on a named dataset (not
    :data:`~dropedge_explorer.training.config.UPLOAD_DATASET`: an uploaded graph has no name
    the store could find it by again, and the store is shared).

    Args:
        result (RunResult): the run that ended.
    """
    return result.reason in STORED_REASONS and result.config.dataset != UPLOAD_DATASET


def store_result(store: ResultStore, result: RunResult,
                 delays: Sequence[float] = STORE_RETRY_DELAYS,
                 on_retry: Callable[[int, StoreError], None] | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> str | None:
    """Put ``result`` into ``store`` if :func:`should_store` admits it; return its key
    (``None``: not stored). A write that raises
    :class:`~dropedge_explorer.store.StoreUnavailable` (a lock, a server down for a while) is
    tried again after each of ``delays``: a finished run is not thrown away for that.
    ``on_retry(attempt, error)`` is called before each pause; ``delays=()`` tries once.

    Args:
        store (ResultStore): the results store.
        result (RunResult): the run that ended.
        delays (Sequence[float], optional): the pauses, in seconds, before each retry.
            (default: :obj:`STORE_RETRY_DELAYS`, 1 s doubling to 30 s)
        on_retry (Callable[[int, StoreError], None], optional): called with the attempt and
            the error before each pause. (default: :obj:`None`)
        sleep (Callable[[float], None], optional): how to pause (a test passes a fake).
            (default: :obj:`time.sleep`)

    Raises:
        StoreError: an error that will not pass (another program's table, a damaged
            file), or the last one once ``delays`` are used up.
    """
    if not should_store(result):
        return None
    for attempt in range(len(delays) + 1):
        try:
            return store.put(result)
        except StoreUnavailable as exc:
            if attempt == len(delays):
                raise
            if on_retry is not None:
                on_retry(attempt, exc)
            sleep(delays[attempt])
    raise AssertionError("unreachable")


def train_and_store(config: TrainConfig, store: ResultStore | None, graph: Graph | None = None,
                    on_event: Callable | None = None, stop_event=None,
                    train_fn: TrainFn = default_train) -> RunResult:
    """Train one run and put it into ``store`` as :func:`store_result` does (nothing when
    ``store`` is ``None``).

    Args:
        config (TrainConfig): the run's settings.
        store (ResultStore, optional): the results store (``None``: nothing stored).
        graph (Graph, optional): the loaded graph (loaded from ``config`` when ``None``).
            (default: :obj:`None`)
        on_event (Callable, optional): the trainer's event callback. (default: :obj:`None`)
        stop_event (threading.Event, optional): ends the training at its next epoch when set.
            (default: :obj:`None`)
        train_fn (TrainFn, optional): how the run is trained (the trainer by default).
            (default: :obj:`default_train`)
    """
    result = train_fn(config, graph, on_event, stop_event)
    if store is not None:
        store_result(store, result)  # one transaction per run: a kill loses at most the run in flight
    return result


#: ``(configs, graph, on_event, stop_event, seed_stops) -> [RunResult]``: how a batch of
#: seeds is trained (``seed_stops``: one stop flag per config, or ``None``).
SeedsTrainFn = Callable[..., list[RunResult]]


def default_train_seeds(configs: list[TrainConfig], graph: Graph | None, on_event: Callable | None,
                        stop_event, seed_stops: Sequence | None = None) -> list[RunResult]:
    return train_seeds(configs, graph=graph, on_event=on_event, stop_event=stop_event, seed_stops=seed_stops)


def train_seeds_and_store(configs: list[TrainConfig], store: ResultStore | None, graph: Graph | None = None,
                          on_event: Callable | None = None, stop_event=None,
                          train_fn: SeedsTrainFn = default_train_seeds) -> list[RunResult]:
    """Train the seeds of one cell together (:func:`~dropedge_explorer.training.seed_batch.train_seeds`)
    and put each run into ``store`` as :func:`train_and_store` puts a single run (one row
    per seed, :func:`store_result`).

    Args:
        configs (list[TrainConfig]): the seeds of one cell (same settings but the seed).
        store (ResultStore, optional): the results store (``None``: nothing stored).
        graph (Graph, optional): the loaded graph. (default: :obj:`None`)
        on_event (Callable, optional): the trainer's event callback. (default: :obj:`None`)
        stop_event (threading.Event, optional): ends the training at its next epoch when set.
            (default: :obj:`None`)
        train_fn (SeedsTrainFn, optional): how the batch is trained.
            (default: :obj:`default_train_seeds`)
    """
    results = train_fn(configs, graph, on_event, stop_event)
    if store is not None:
        for result in results:
            store_result(store, result)
    return results


def cell_of(config: TrainConfig) -> str:
    """What a run shares with the other seeds of its cell: every setting but the seed (the
    runs :func:`~dropedge_explorer.training.seed_batch.train_seeds` trains in one batch).

    Args:
        config (TrainConfig): the run's settings.
    """
    values = config.to_dict()
    values.pop("seed")
    return json.dumps(values, sort_keys=True)


@dataclass
class SweepOutcome:
    """What :func:`run_claimed` did, filled while it runs (another thread may read it).

    Args:
        stored_keys (list[str], optional): the keys of the runs stored.
            (default: :obj:`[]`)
        results (list[RunResult], optional): the runs trained. (default: :obj:`[]`)
        failures (list[tuple[TrainConfig, str]], optional): the runs that raised, with the
            error in one line (with ``keep_going``). (default: :obj:`[]`)
        lost (int, optional): runs whose claim another worker took over (it stores
            them). (default: :obj:`0`)
        current (TrainConfig, optional): the run training now. (default: :obj:`None`)
        batch (list[TrainConfig], optional): every config training now (seeds together).
            (default: :obj:`[]`)
    """

    stored_keys: list[str] = field(default_factory=list)
    results: list[RunResult] = field(default_factory=list)
    failures: list[tuple[TrainConfig, str]] = field(default_factory=list)
    lost: int = 0  # runs whose claim another worker took over (it stores them)
    current: TrainConfig | None = None
    batch: list[TrainConfig] = field(default_factory=list)  # every config training now (seeds together)


def _train_claims(claims: list, graph: Graph | None, train_fn: TrainFn, train_seeds_fn: SeedsTrainFn | None,
                  on_event: Callable | None, stop_event) -> list[RunResult]:
    """Train the claimed runs: one run alone, or a cell's seeds as one batch, each seed
    stopped on its own when its claim is lost (and all of them by ``stop_event``)."""
    if train_seeds_fn is None:
        claim = claims[0]
        return [train_fn(claim.config, graph, on_event, AnyEvent(stop_event, claim.lost))]
    return train_seeds_fn([c.config for c in claims], graph, on_event, stop_event, [c.lost for c in claims])


def run_claimed(runs: ClaimedRuns, store: ResultStore,
                graphs: Mapping[tuple[str, str], Graph] | Graph | None = None, *,
                train_fn: TrainFn = default_train, on_event: Callable | None = None,
                stop_event: threading.Event | None = None, keep_going: bool = False,
                outcome: SweepOutcome | None = None,
                on_run: Callable[[SweepOutcome], None] | None = None,
                batch_seeds: bool = False,
                train_seeds_fn: SeedsTrainFn = default_train_seeds) -> SweepOutcome:
    """Train and store every run of ``runs`` this worker claims.

    Args:
        runs (ClaimedRuns): the claimed grid (its ``stop_event`` should be ``stop_event``).
        store (ResultStore): where finished runs go.
        graphs (Mapping[tuple[str, str], Graph] or Graph, optional): one graph for every run,
            or a map ``(dataset, split) -> graph``, or ``None`` (each run loads its own).
            (default: :obj:`None`)
        train_fn (TrainFn, optional): how a run is trained. (default: :obj:`default_train`)
        on_event (Callable, optional): the trainer's events of every run.
            (default: :obj:`None`)
        stop_event (threading.Event, optional): stops the running run and the loop.
            (default: :obj:`None`)
        keep_going (bool, optional): a run that raises is recorded in ``failures`` and the
            loop goes on (the app); otherwise the exception propagates (the command line).
            (default: :obj:`False`)
        outcome (SweepOutcome, optional): filled in place (another thread reads ``current``
            and the counts; a new one when ``None``). (default: :obj:`None`)
        on_run (Callable[[SweepOutcome], None], optional): called after each run (stored,
            lost or failed); after each batch with ``batch_seeds``. (default: :obj:`None`)
        batch_seeds (bool, optional): the grid walked cell by cell (:func:`cell_of`): every
            seed of a cell this worker can claim is claimed at once and trained in one batch
            by ``train_seeds_fn``; a seed whose claim is lost stops alone and is left to the
            worker that took it over; each seed that ended on its own is stored as its single
            run would be. (Settings a batch cannot train, the ``authors`` recipe, raise
            :class:`~dropedge_explorer.training.config.ConfigError`.) (default: :obj:`False`)
        train_seeds_fn (SeedsTrainFn, optional): how a batch of seeds is trained.
            (default: :obj:`default_train_seeds`)
    """
    out = outcome if outcome is not None else SweepOutcome()
    claimed = runs.batches(cell_of if batch_seeds else None)
    try:
        for claims in claimed:
            config = claims[0].config
            graph = graphs.get((config.dataset, config.split)) if isinstance(graphs, Mapping) else graphs
            out.current, out.batch = config, [c.config for c in claims]
            try:
                results = _train_claims(claims, graph, train_fn, train_seeds_fn if batch_seeds else None,
                                        on_event, stop_event)
            except Exception as exc:
                if not keep_going:
                    raise
                for claim in claims:
                    out.failures.append((claim.config, f"{type(exc).__name__}: {exc}".splitlines()[0]))
                    runs.failed_run(claim)
                continue
            finally:
                out.current, out.batch = None, []
            interrupted = False
            for claim, result in zip(claims, results, strict=True):
                if result.reason == "stopped":  # cut short: not a result
                    if stop_event is not None and stop_event.is_set():
                        interrupted = True
                    else:
                        out.lost += 1  # the claim was taken over: the other worker stores the run
                    continue
                key = store_result(store, result)
                if key is not None:
                    out.stored_keys.append(key)
                    runs.stored(claim)
                else:  # not for the store (an uploaded graph's): released, not trained again here
                    runs.failed_run(claim)
                out.results.append(result)
            if interrupted:
                break
            if on_run is not None:
                on_run(out)
    finally:
        claimed.close()  # releases the claim of a run cut short or failed
        out.current, out.batch = None, []
    return out


#: One cell of a sweep: what its runs share apart from the seed.
CELL_COLUMNS = ("dataset", "split", "backbone", "num_layers", "sampler")


def summarize_runs(runs: pd.DataFrame, keys: Iterable[str] | None = None) -> pd.DataFrame:
    """A sweep's cells from the results store's rows (only ``keys`` when given): the
    :data:`CELL_COLUMNS`, ``runs`` (finite accuracies), ``test_acc_mean``, ``test_acc_std``
    (0 for one run) — :func:`dropedge_explorer.studies.cells.cell_summary` on store rows.

    Args:
        runs (pandas.DataFrame): the results store's rows (:meth:`ResultStore.to_frame`).
        keys (Iterable[str], optional): only the runs of these keys (all when ``None``).
            (default: :obj:`None`)
    """
    if keys is not None:
        runs = runs[runs["key"].isin(set(keys))]
    return cell_summary(runs, by=CELL_COLUMNS, one_run_std=0.0).rename(columns={"n": "runs"})


__all__ = ["cell_of", "STORE_RETRY_DELAYS", "SweepOutcome",
           "run_claimed", "should_store", "store_result", "summarize_runs",
           "train_and_store", "train_seeds_and_store"]
