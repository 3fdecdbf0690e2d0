"""The server's jobs: a fair queue that trains each job in its own worker process.

A :class:`Job` is a kind — ``"train"`` (its configs trained one after another: a Live
run, "Compare samplers"), ``"sweep"`` (the claimed runs of a grid: the Depth study's "Run
missing") or ``"tune"`` (an Optuna study from one base config: the Tuning page) — a list of
configs, and an owner (whoever submitted it; the app passes the id of a browser session's
runs).
:meth:`JobQueue.submit` never refuses a job for being one too many: at most
``max_running`` jobs run at once and the rest wait in line, picked **round-robin across
owners** — the owner served least recently goes next (owners not served yet first, in the
order they queued), so one owner's ten jobs do not hold the others back.
:meth:`JobQueue.place` tells a waiting job its place in that order; :meth:`JobQueue.cancel`
takes a waiting job out of the line or stops a running one at its next epoch.

Where a job runs, and why so: :meth:`JobQueue._launch` is the one place that starts
workers — a ``multiprocessing`` process of the ``spawn`` context per job, running
:func:`dropedge_explorer.jobs._worker.run_job` at a lower priority, which runs the same
function the command line does (``train --store``'s
:func:`~dropedge_explorer.studies.sweep.train_and_store`, ``sweep``'s
:func:`~dropedge_explorer.studies.sweep.run_claimed`, ``tune``'s
:func:`~dropedge_explorer.studies.tuning.tune`) and stores its own results. The server
spends no CPU on training, a crash of a run cannot take the server down, and the memory of
a job is given back to the system when its process ends (a process per job, not a pool:
a warm pool would hold torch and a graph per idle worker).

How progress comes back, and why so: all workers put their events (the trainer's
``start``, ``epoch``, ``diagnostics``, ``end``, the run's ``stored`` / ``note``, and a
sweep's or study's ``progress`` snapshots) on
one ``multiprocessing`` queue, read by **one** thread of the server (:meth:`_pump`), which
appends them to the job's :class:`~dropedge_explorer.jobs.records.RunRecord` objects and
starts the next jobs as places free. Rows in the store were the other choice: the curves
and diagnostics of a run are not results (a stopped run is never stored) and every page
reading a shared SQLite file over and over is the lock contention the store's retries exist for.
The thread lives while a job is queued or running and ends when the queue is empty; no
thread is started per job.

Example:
    >>> from dropedge_explorer.training import TrainConfig
    >>> jobs = JobQueue(max_running=1, store=None)
    >>> job = jobs.submit("train", [TrainConfig(dataset="karate", epochs=3, diag_every=0)], owner="me")
    >>> jobs.wait(job, 300), job.runs[0].status, job.runs[0].epochs_done
    (True, 'finished', 3)
"""
from __future__ import annotations

import itertools
import multiprocessing
import multiprocessing.spawn
import queue as queue_module
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from dropedge_explorer.jobs import _worker
from dropedge_explorer.jobs.records import RunRecord, run_label
from dropedge_explorer.training import TrainConfig

#: The kinds of job a queue runs.
KINDS: tuple[str, ...] = ("train", "sweep", "tune")
#: Niceness a worker adds to its own: the server's pages stay responsive while jobs train.
WORKER_NICE = 10
#: Seconds a dead worker's last messages are waited for before its job is called failed.
DEATH_GRACE_S = 2.0

# A spawned child first imports its parent's main module (``sys.modules["__main__"]``, the
# stdlib's "safe importing of main module"). Inside ``streamlit run`` that module is the page
# script running when the job is started — so every worker ran that page from the top in
# bare mode (seconds of imports and Streamlit warnings per job, the page's own side effects)
# before its job. A worker needs none of it: its target is imported by name. So for the
# queue's own launches (a flag of the launching thread) the main module is left out of the
# child's preparation data; every other use of ``multiprocessing`` is unchanged.
_launching = threading.local()
_preparation_data = multiprocessing.spawn.get_preparation_data


def _without_main(name: str) -> dict:
    data = _preparation_data(name)
    if getattr(_launching, "clean", False):
        for key in ("main_path", "init_main_from_path", "init_main_from_name"):
            data.pop(key, None)
    return data


multiprocessing.spawn.get_preparation_data = _without_main


@dataclass(eq=False)
class Job:
    """One queued, running or finished job.

    Args:
        job_id (str): 8 hex characters.
        kind (str): one of :data:`KINDS`.
        owner (str): who submitted it (round-robin is across owners).
        runs (list[RunRecord]): one per config, in order.
        graph (Graph, optional): the graph the configs train on (``None``: loaded by name).
        options (dict): the kind's settings (a sweep's ``batch_seeds`` / ``lease``; a study's
            ``n_trials``, ``study_name``, ``storage``, ``search``, ``seed``, ``space``).

    A sweep's or study's worker reports :attr:`progress`, its latest snapshot (a sweep:
    ``total``, ``skipped``, ``waiting``, ``stored_keys``, ``failures``, ``lost``,
    ``current``, ``batch``, ``epoch``, ``batch_sizes``; a study: ``finished``), and :attr:`error`, a
    one-line message when the whole job failed (a store or storage that cannot be used).
    """

    job_id: str
    kind: str
    owner: str
    runs: list[RunRecord]
    graph: object = None
    options: dict = field(default_factory=dict)
    status: str = "queued"  # "queued", "running", "done" or "cancelled"
    pid: int | None = None
    sequence: int = 0
    progress: dict = field(default_factory=dict)
    error: str | None = None
    note: str | None = None
    started_at: float | None = None  # time.time(): when its worker started
    ended_at: float | None = None
    _stop: object = field(default=None, repr=False)
    _process: object = field(default=None, repr=False)
    _dead_since: float | None = field(default=None, repr=False)
    _done_seen: bool = field(default=False, repr=False)

    @property
    def configs(self) -> list[TrainConfig]:
        return [r.config for r in self.runs]

    @property
    def over(self) -> bool:
        return self.status in ("done", "cancelled")

    @property
    def stopping(self) -> bool:
        """Its owner (or the queue's closing) asked it to stop."""
        return self.status == "cancelled" or (self._stop is not None and self._stop.is_set())


class JobQueue:
    """At most ``max_running`` jobs in worker processes; the rest wait, round-robin by owner.

    Args:
        max_running (int): jobs running at once (``DROPEDGE_MAX_WORKERS`` in the app:
            :attr:`dropedge_explorer.env.Settings.max_workers`).
        store (str or Callable, optional): the results store's location, or a function
            returning it when a job starts (``None``: nothing stored).
        max_seconds (float, optional): the wall-time limit of each run of a ``"train"`` job,
            of the whole of a sweep or study. (default: :obj:`None`)
        nice (int, optional): niceness added in the workers. (default: :data:`WORKER_NICE`)
    """

    def __init__(self, max_running: int, store: str | Callable[[], str] | None = None,
                 max_seconds: float | None = None, nice: int = WORKER_NICE):
        if not isinstance(max_running, int) or isinstance(max_running, bool) or max_running < 1:
            raise ValueError(f"max_running must be an integer >= 1 (got {max_running!r})")
        self.max_running, self.store, self.max_seconds, self.nice = max_running, store, max_seconds, nice
        self._context = multiprocessing.get_context("spawn")
        self._events = None  # the workers' message queue, made with the first worker
        self._jobs: dict[str, Job] = {}
        self._waiting: list[Job] = []
        self._served: dict[str, int] = {}  # owner -> the tick of its last start
        self._ticks = itertools.count(1)
        self._sequence = itertools.count(1)
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self._pump_thread: threading.Thread | None = None

    # -- the line -----------------------------------------------------------------------
    def submit(self, kind: str, configs: Sequence[TrainConfig], owner: str, graph=None,
               first_number: int = 1, options: dict | None = None) -> Job:
        """Queue a job (it starts at once when a place is free); never refused for waiting.

        Args:
            kind (str): one of :data:`KINDS`.
            configs (Sequence[TrainConfig]): its runs, trained in order (at least one).
            owner (str): who submits it.
            graph (Graph, optional): the graph to train on. (default: :obj:`None`: by name)
            first_number (int, optional): the first run's number in its label. (default: 1)
            options (dict, optional): the kind's settings (:class:`Job`). (default: :obj:`None`)
        """
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)} (got {kind!r})")
        if not configs:
            raise ValueError("a job needs at least one config")
        runs = [RunRecord(first_number + i, c, run_label(c, first_number + i)) for i, c in enumerate(configs)]
        with self._lock:
            job = Job(secrets.token_hex(4), kind, str(owner), runs, graph, dict(options or {}),
                      sequence=next(self._sequence))
            self._jobs[job.job_id] = job
            self._waiting.append(job)
            self._start_free()
            if self._pump_thread is None:
                self._pump_thread = threading.Thread(target=self._pump, name="dropedge-jobs", daemon=True)
                self._pump_thread.start()
            return job

    def order(self) -> list[Job]:
        """The waiting jobs in the order they will start (as places free)."""
        with self._lock:
            served, waiting, out = dict(self._served), list(self._waiting), []
            tick = max(served.values(), default=0)
            while waiting:
                job = _pick(waiting, served)
                waiting.remove(job)
                tick += 1
                served[job.owner] = tick
                out.append(job)
            return out

    def place(self, job: Job) -> int | None:
        """``job``'s place in line (1: next to start), ``None`` when it is not waiting."""
        order = self.order()
        return order.index(job) + 1 if job in order else None

    def running(self) -> list[Job]:
        with self._lock:
            return [j for j in self._jobs.values() if j.status == "running"]

    def cancel(self, job: Job, reason: str = "cancelled") -> None:
        """Take a waiting job out of the line, or stop a running one at its next epoch (its
        runs not started are not trained); ``reason`` goes on its runs' notes."""
        with self._lock:
            if job.status == "queued":
                self._waiting.remove(job)
                self._jobs.pop(job.job_id, None)
                job.status, job.graph, job.note, job.ended_at = "cancelled", None, reason, time.time()
                for run in job.runs:
                    run.status, run.note = "stopped", f"taken out of the line: {reason}"
                self._changed.notify_all()
            elif job.status == "running":
                job.note = job.note or reason
                for run in job.runs:
                    if not run.over and run.note is None:
                        run.note = reason
                job._stop.set()

    def wait(self, job: Job, timeout: float = 60.0) -> bool:
        """Block until ``job`` is over or ``timeout`` seconds passed; ``True`` when over."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while not job.over and time.monotonic() < deadline:
                self._changed.wait(min(1.0, deadline - time.monotonic()))
            return job.over

    # -- workers ------------------------------------------------------------------------
    def _start_free(self) -> None:
        """Start waiting jobs while places are free (under the lock)."""
        while self._waiting and len(self.running()) < self.max_running:
            job = _pick(self._waiting, self._served)
            self._waiting.remove(job)
            self._served[job.owner] = next(self._ticks)
            self._launch(job)

    def _launch(self, job: Job) -> None:
        """The one place that starts a worker: a spawned process running ``_worker.run_job``."""
        if self._events is None:
            self._events = self._context.Queue()
        store = self.store() if callable(self.store) else self.store
        job._stop = self._context.Event()
        job._process = self._context.Process(
            target=_worker.run_job, name=f"dropedge-job-{job.job_id}", daemon=True,
            args=(job.job_id, job.kind, job.configs, job.graph, None if store is None else str(store),
                  job.options, self.max_seconds, self.nice, self._events, job._stop))
        job.status, job.started_at = "running", time.time()
        _launching.clean = True
        try:
            job._process.start()
        finally:
            _launching.clean = False
        job.pid = job._process.pid
        self._changed.notify_all()

    def _pump(self) -> None:
        """The one reader thread: events into runs, dead workers noticed, next jobs started;
        it ends when nothing is queued or running (the next :meth:`submit` starts another)."""
        while True:
            try:
                message = self._events.get(timeout=0.2) if self._events is not None else None
            except (queue_module.Empty, OSError, EOFError):
                message = None
            with self._lock:
                if message is not None:
                    self._deliver(*message)
                self._reap()
                self._start_free()
                if not self._waiting and not self.running():
                    self._pump_thread = None
                    return

    def _deliver(self, job_id: str, index: int | None, event: dict) -> None:
        job = self._jobs.get(job_id)
        if job is None:
            return
        if index is None:  # the job's own: a snapshot, its failure, its note, its end
            if event["type"] == "progress":
                job.progress = event
            elif event["type"] == "error":
                job.error = event["message"]
            elif event["type"] == "note":
                job.note = f"{job.note}; {event['message']}" if job.note else event["message"]
            else:  # job_done: over once its process has exited (:meth:`_reap`)
                job._done_seen = True
            return
        run = job.runs[index]
        kind = event["type"]
        if kind == "run_started":
            run.status, run.started_at = "running", time.monotonic()
        elif kind == "stored":
            run.stored_key = event["key"]
        elif kind == "note":
            run.note = f"{run.note}; {event['message']}" if run.note else event["message"]
        else:
            run.events.append(event)
            if kind in ("end", "error"):
                run.status = event["reason"] if kind == "end" else "error"

    def _reap(self) -> None:
        """A job is over once its worker process has exited and been reaped (its place is
        free then, and its CPU time counts as this process's children's). A worker that
        died without its last message (killed, out of memory) ends its job with an error
        once its messages had time to arrive."""
        now = time.monotonic()
        for job in self.running():
            if job._process.is_alive():
                continue
            job._process.join()  # exited: returns at once
            if job._done_seen:
                self._finish(job, None)
                continue
            job._dead_since = job._dead_since or now
            if now - job._dead_since >= DEATH_GRACE_S:
                self._finish(job, f"the worker process ended with exit code {job._process.exitcode}")

    def _finish(self, job: Job, error: str | None) -> None:
        for run in job.runs:
            if run.status == "running":
                run.events.append({"type": "error", "message": error or "the run ended without an end event"})
                run.status = "error"
            elif run.status == "queued":
                run.status = "stopped"
                run.note = run.note or "not started: the job was stopped"
        if error and job.kind != "train":
            job.error = job.error or error
        job.status, job.graph, job.ended_at = "done", None, time.time()  # a job over holds no graph
        self._jobs.pop(job.job_id, None)  # the server keeps no finished job (its watchers hold it)
        self._changed.notify_all()

    def close(self) -> None:
        """Cancel every waiting job and stop the running ones (scripts, tests)."""
        with self._lock:
            for job in list(self._waiting) + self.running():
                self.cancel(job, "the queue was closed")


def _pick(waiting: list[Job], served: dict[str, int]) -> Job:
    """The next job to start: the first waiting job of the owner served least recently
    (never served: first, by when it queued)."""
    first: dict[str, Job] = {}
    for job in waiting:
        first.setdefault(job.owner, job)
    owner = min(first, key=lambda o: (served.get(o, 0), first[o].sequence))
    return first[owner]


__all__ = ["DEATH_GRACE_S", "KINDS", "WORKER_NICE", "Job", "JobQueue"]
