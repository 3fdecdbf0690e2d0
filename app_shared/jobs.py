"""Background jobs for an interactive front end, one import away: training runs, sweeps
and tuning studies that run in threads, are polled by the pages, and are stopped by a
watchdog or kept in the server-wide :mod:`app_shared.registry`.

Each idea has its own module; this one gathers their names for the pages:

* :mod:`app_shared.background`: the thread and stop flag every job owns; the training worker.
* :mod:`app_shared.watchdog`: the limits (nobody polls, the wall time ran out) and
  :class:`Watchdog`, which applies them to a sweep or tuning job (:class:`WatchedJob`).
* :mod:`app_shared.run_records`: one Live training run as the page sees it.
* :mod:`app_shared.training_session`: a queue of Live training runs, stored when they end
  (two threads per run: the worker and the session's driver, which applies the limits).
* :mod:`app_shared.sweep_job`, :mod:`app_shared.tuning_job`: a sweep into the results
  store and a tuning study.
* :mod:`app_shared.registry`: jobs that outlive the browser tab, found again by id.

Reading a study back and turning its best point into a training request is not app
plumbing: :mod:`dropedge_core.studies.tuned` (re-exported here for the pages).

Example:
    >>> from dropedge_core.training import TrainConfig
    >>> session = TrainingSession(idle_timeout=60, store=None)
    >>> record, = session.submit([TrainConfig(dataset="karate", epochs=5, diag_every=0)])
    >>> session.wait(60), record.status, record.epochs_done
    (True, 'finished', 5)
"""
from __future__ import annotations

from app_shared.run_records import SESSION_RUN_COLUMNS, RunRecord, run_label, runs_frame
from app_shared.sweep_job import SweepJob
from app_shared.training_session import (
    COMPARE_SAMPLERS,
    PollResult,
    TrainingSession,
    device_label,
)
from app_shared.tuning_job import TuningJob
from app_shared.watchdog import (
    DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MAX_SECONDS,
    Watchdog,
    WatchedJob,
)
from dropedge_core.studies.tuned import load_study, train_request

__all__ = ["COMPARE_SAMPLERS", "DEFAULT_IDLE_TIMEOUT", "DEFAULT_MAX_SECONDS", "SESSION_RUN_COLUMNS",
           "PollResult", "RunRecord", "SweepJob", "TrainingSession", "TuningJob",
           "WatchedJob", "Watchdog", "device_label", "load_study", "run_label",
           "runs_frame", "train_request"]
