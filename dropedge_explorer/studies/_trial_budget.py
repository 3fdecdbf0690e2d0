"""A study's trial budget, counted across the workers that share it.

Workers on one Optuna storage each ask the storage for their next trial; ``n_trials`` per
worker would give ``N`` workers ``N`` budgets. Here a budget is the study's: a trial
**counts** when it finished (COMPLETE, PRUNED, or FAIL with an error of its own) or is
running in a live worker; it does **not** count when it was voided (cut by a signal, or
it lost the race for the budget's last place: :data:`VOID_ATTR`), or when it failed
without an error of ours (a worker killed mid-trial, failed by Optuna once its trial
has been silent for the storage's grace period; a trial an older version left).

The gate (:func:`admits`) runs in the objective before any training: a trial marks
itself as running (:data:`WORKER_ATTR`), then counts every *other* counted trial it can
see and goes ahead only while that is below the budget. Every trial is marked before it
counts, so of any two trials the one that counts last sees the other: the budget is never
exceeded, on SQLite or a server. Two trials that count at the same instant may both step
back; each worker then retries after a random pause (:func:`retry_pause`).
"""
from __future__ import annotations

import random
import threading
import warnings
from collections.abc import Sequence

import optuna
from optuna.trial import FrozenTrial, TrialState

#: User attribute: why a trial does not count (``"interrupted by SIGINT"``, ``"over budget"``).
VOID_ATTR = "void"
#: User attribute: the first line of the error a trial failed with (such a failure counts:
#: training the same point again fails again).
ERROR_ATTR = "error"
#: User attribute: set when a trial starts in a worker; a RUNNING trial counts only with it.
WORKER_ATTR = "worker"


class VoidTrial(BaseException):
    """Raised in the objective for a trial that must not count (not an ``Exception``:
    Optuna does not catch it, the caller voids the trial with :func:`void`)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def counts(trial: FrozenTrial) -> bool:
    """Whether ``trial`` takes a place of its study's budget (see the module's docstring)."""
    attrs = trial.user_attrs
    if attrs.get(VOID_ATTR):
        return False
    if trial.state in (TrialState.COMPLETE, TrialState.PRUNED):
        return True
    if trial.state == TrialState.FAIL:
        return ERROR_ATTR in attrs
    return trial.state == TrialState.RUNNING and WORKER_ATTR in attrs


def finished(trials: Sequence[FrozenTrial]) -> int:
    """Counted trials that are over (what a cell's budget asks for)."""
    return sum(counts(t) for t in trials if t.state != TrialState.RUNNING)


def taken(trials: Sequence[FrozenTrial], but: int | None = None) -> int:
    """Counted trials, finished or running, except trial number ``but``."""
    return sum(counts(t) for t in trials if t.number != but)


def admits(trial: optuna.Trial, budget: int, worker: str) -> bool:
    """Mark ``trial`` as this worker's running trial, then whether the other counted
    trials leave it a place in ``budget``."""
    trial.set_user_attr(WORKER_ATTR, worker)
    return taken(trial.study.get_trials(deepcopy=False), but=trial.number) < budget


def void(study: optuna.Study, trial: optuna.Trial | None, reason: str) -> None:
    """Mark a trial cut short as not counting and end it as FAIL (a no-op for ``None``
    or a trial that is already over)."""
    if trial is None:
        return
    running = study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
    if all(t.number != trial.number for t in running):
        return
    trial.set_user_attr(VOID_ATTR, reason)
    study.tell(trial, state=TrialState.FAIL, skip_if_finished=True)


def fail_stale(study: optuna.Study) -> None:
    """Fail the running trials whose worker stopped beating (killed): they stop counting."""
    with warnings.catch_warnings():  # Optuna marks this API experimental
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        optuna.storages.fail_stale_trials(study)  # a no-op without a grace period (in-memory)


def wait_for_others(study: optuna.Study, stop_event: threading.Event | None = None,
                    every: float = 2.0) -> None:
    """Wait until no trial of the study is running in a live worker (others' trials
    finish, or their workers go silent), so that the best trial is final. Returns
    early when ``stop_event`` is set."""
    stop_event = stop_event or threading.Event()
    while not stop_event.is_set():
        fail_stale(study)
        trials = study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
        if not any(counts(t) for t in trials):
            return
        stop_event.wait(every)


def retry_pause(attempt: int, stop_event: threading.Event | None = None) -> None:
    """A random pause before trying again for a place in the budget (so two workers that
    stepped back together do not collide again)."""
    delay = random.uniform(0.05, 0.5) * (attempt + 1)
    (stop_event or threading.Event()).wait(delay)


