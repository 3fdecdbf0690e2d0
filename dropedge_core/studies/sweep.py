"""The sweep: the one loop that trains runs and keeps them in the results store.

Every run that finishes is stored — ``python -m dropedge_core train --store``, ``sweep``
and ``search``, the app's "Run missing" (Depth study) and Live training all go through
:func:`train_and_store` or :func:`run_claimed` — so a run trained anywhere is found
everywhere (the store keys a run on its config, :func:`dropedge_core.store.run_key`).

:func:`run_claimed` walks a grid with claims (:class:`~dropedge_core.claims.ClaimedRuns`):
workers started on one store split the grid, and a run stored by anyone is not trained
again. A run cut short (``reason == "stopped"``) is never stored: a partial run would
pass for a finished one. A finished run whose store write fails for a reason that may pass
(a lock, a server restarting) is written again after a pause (:func:`store_run`).
"""
from __future__ import annotations

import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd
import sqlalchemy as sa

from dropedge_core.claims import ClaimedRuns
from dropedge_core.method.graph import Graph
from dropedge_core.store import ResultStore, StoreBusy, StoreError
from dropedge_core.studies.cells import cell_summary
from dropedge_core.training import RunResult, TrainConfig, train
from dropedge_core.training.seed_batch import train_seeds

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


#: Seconds before each retry of a store write that failed for a reason that may pass (a
#: lock held elsewhere, a server restarting): doubling, about a minute in all.
STORE_RETRY_DELAYS: tuple[float, ...] = (1.0, 2.0, 4.0, 8.0, 16.0, 30.0)


_SQLITE_PASSING = re.compile(r"locked|busy|readonly|unable to open|disk i/o", re.IGNORECASE)


def may_pass(exc: StoreError) -> bool:
    """Whether a store error may pass: a SQLite file locked, busy, read-only or not
    openable for now; a server's "operational" errors (connection refused or lost). The
    store raises its one-line :class:`StoreError` ``from None``; the driver's error stays
    on ``__context__``. A :class:`~dropedge_core.store.StoreBusy` (the file stayed locked
    for the store's whole wait, announced) may pass too: a finished run is worth waiting
    for again."""
    if isinstance(exc, StoreBusy):
        return True
    cause = exc.__context__
    orig = getattr(cause, "orig", cause)
    if isinstance(orig, sqlite3.OperationalError):  # also "no such table": that one stays
        return bool(_SQLITE_PASSING.search(str(orig)))
    return isinstance(cause, sa.exc.OperationalError)


def store_run(store: ResultStore, result: RunResult,
              delays: Sequence[float] = STORE_RETRY_DELAYS,
              on_retry: Callable[[int, StoreError], None] | None = None,
              sleep: Callable[[float], None] = time.sleep) -> str:
    """``store.put(result)``, tried again after each of ``delays`` while the error may
    pass (a finished run is not thrown away for a store that is locked or down for a
    while); return the run's key. ``on_retry(attempt, error)`` is called before each
    pause.

    Raises:
        StoreError: an error that will not pass (another program's table, a damaged
            file), or the last one once ``delays`` are used up.
    """
    for attempt in range(len(delays) + 1):
        try:
            return store.put(result)
        except StoreError as exc:
            if attempt == len(delays) or not may_pass(exc):
                raise
            if on_retry is not None:
                on_retry(attempt, exc)
            sleep(delays[attempt])
    raise AssertionError("unreachable")


def train_and_store(config: TrainConfig, store: ResultStore | None, graph: Graph | None = None,
                    on_event: Callable | None = None, stop_event=None,
                    train_fn: TrainFn = default_train) -> RunResult:
    """Train one run and put it into ``store`` (unless it was stopped, or ``store`` is ``None``)."""
    result = train_fn(config, graph, on_event, stop_event)
    if store is not None and result.reason != "stopped":
        store_run(store, result)  # one transaction per run: a kill loses at most the run in flight
    return result


#: ``(configs, graph, on_event, stop_event) -> [RunResult]``: how a batch of seeds is trained.
SeedsTrainFn = Callable[[list[TrainConfig], Graph | None, Callable | None, object], list[RunResult]]


def default_train_seeds(configs: list[TrainConfig], graph: Graph | None, on_event: Callable | None,
                        stop_event) -> list[RunResult]:
    return train_seeds(configs, graph=graph, on_event=on_event, stop_event=stop_event)


def train_seeds_and_store(configs: list[TrainConfig], store: ResultStore | None, graph: Graph | None = None,
                          on_event: Callable | None = None, stop_event=None,
                          train_fn: SeedsTrainFn = default_train_seeds) -> list[RunResult]:
    """Train the seeds of one cell together (:func:`~dropedge_core.training.seed_batch.train_seeds`)
    and put each finished run into ``store`` as :func:`train_and_store` puts a single run
    (one row per seed, :func:`store_run`; a stopped run is not stored)."""
    results = train_fn(configs, graph, on_event, stop_event)
    if store is not None:
        for result in results:
            if result.reason != "stopped":
                store_run(store, result)
    return results


@dataclass
class SweepOutcome:
    """What :func:`run_claimed` did, filled while it runs (another thread may read it)."""

    stored_keys: list[str] = field(default_factory=list)
    results: list[RunResult] = field(default_factory=list)
    failures: list[tuple[TrainConfig, str]] = field(default_factory=list)
    lost: int = 0  # runs whose claim another worker took over (it stores them)
    current: TrainConfig | None = None


def run_claimed(runs: ClaimedRuns, store: ResultStore,
                graphs: Mapping[tuple[str, str], Graph] | Graph | None = None, *,
                train_fn: TrainFn = default_train, on_event: Callable | None = None,
                stop_event: threading.Event | None = None, keep_going: bool = False,
                outcome: SweepOutcome | None = None,
                on_run: Callable[[SweepOutcome], None] | None = None) -> SweepOutcome:
    """Train and store every run of ``runs`` this worker claims.

    Args:
        runs: the claimed grid (its ``stop_event`` should be ``stop_event``).
        store: where finished runs go.
        graphs: one graph for every run, or a map ``(dataset, split) -> graph``, or
            ``None`` (each run loads its own).
        train_fn: how a run is trained.
        on_event: the trainer's events of every run.
        stop_event: stops the running run and the loop.
        keep_going: a run that raises is recorded in ``failures`` and the loop goes on
            (the app); otherwise the exception propagates (the command line).
        outcome: filled in place (another thread reads ``current`` and the counts).
        on_run: called after each run (stored, lost or failed).
    """
    out = outcome if outcome is not None else SweepOutcome()
    claimed = iter(runs)
    try:
        for claim in claimed:
            config = claim.config
            graph = graphs.get((config.dataset, config.split)) if isinstance(graphs, Mapping) else graphs
            out.current = config
            try:
                result = train_fn(config, graph, on_event, AnyEvent(stop_event, claim.lost))
            except Exception as exc:
                if not keep_going:
                    raise
                out.failures.append((config, f"{type(exc).__name__}: {exc}".splitlines()[0]))
                runs.failed_run(claim)
                continue
            finally:
                out.current = None
            if result.reason == "stopped":  # cut short: not a result
                if stop_event is not None and stop_event.is_set():
                    break
                out.lost += 1  # the claim was taken over: the other worker stores the run
            else:
                out.stored_keys.append(store_run(store, result))
                runs.stored(claim)
                out.results.append(result)
            if on_run is not None:
                on_run(out)
    finally:
        claimed.close()  # releases the claim of a run cut short or failed
        out.current = None
    return out


#: One cell of a sweep: what its runs share apart from the seed.
CELL_COLUMNS = ("dataset", "split", "backbone", "num_layers", "sampler")


def summarize_runs(runs: pd.DataFrame, keys: Iterable[str] | None = None) -> pd.DataFrame:
    """A sweep's cells from the results store's rows (only ``keys`` when given): the
    :data:`CELL_COLUMNS`, ``runs`` (finite accuracies), ``test_acc_mean``, ``test_acc_std``
    (0 for one run) — :func:`dropedge_core.studies.cells.cell_summary` on store rows."""
    if keys is not None:
        runs = runs[runs["key"].isin(set(keys))]
    return cell_summary(runs, by=CELL_COLUMNS, one_run_std=0.0).rename(columns={"n": "runs"})


__all__ = ["AnyEvent", "CELL_COLUMNS", "SweepOutcome", "default_train", "run_claimed", "summarize_runs",
           "store_run", "train_and_store", "may_pass"]
