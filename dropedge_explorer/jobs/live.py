"""The Live training runs of one page: its jobs in the server's queue, and what changed.

Nothing trains here and no thread is started here: :meth:`TrainingSession.submit` hands the
configs to the server's one :class:`~dropedge_explorer.jobs.queue.JobQueue`
(:func:`server_queue`), which runs each job in a worker process, stores its runs and
streams their events into the :class:`~dropedge_explorer.jobs.records.RunRecord` objects
this session lists. The page reads them; closing the tab stops nothing.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch

from dropedge_explorer import env, paths
from dropedge_explorer.jobs.queue import Job, JobQueue
from dropedge_explorer.jobs.records import RunRecord
from dropedge_explorer.training import TrainConfig, device_name, resolve_device

#: Samplers of the "compare samplers" job: no dropping, DropEdge, DropEdge++.
COMPARE_SAMPLERS: tuple[str, ...] = ("nodrop", "dropedge", "dropedge++")
#: The server's job queue (made on first use; tests swap it).
QUEUE: JobQueue | None = None


def server_queue() -> JobQueue:
    """The server's one job queue: ``DROPEDGE_MAX_WORKERS`` jobs at once, each run limited to
    ``DROPEDGE_MAX_JOB_SECONDS``, results into ``$DROPEDGE_RESULTS``. Raises
    :class:`~dropedge_explorer.env.EnvError` (one line) on a bad setting."""
    global QUEUE
    if QUEUE is None:
        settings = env.settings()
        QUEUE = JobQueue(settings.max_workers, store=paths.results_store,
                         max_seconds=settings.max_job_seconds)
    return QUEUE


@dataclass
class Changes:
    """Runs that started or ended since a reader's last :meth:`TrainingSession.changes` (a page
    reruns in full on a change, so its buttons follow), and the ``cursor`` to pass next."""

    started: list[RunRecord] = field(default_factory=list)
    ended: list[RunRecord] = field(default_factory=list)
    cursor: dict = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        return bool(self.started or self.ended)


class TrainingSession:
    """The runs one Live training page started: its jobs (a Start: one config; "Compare
    samplers": three), in the order submitted.

    Args:
        queue: ``() -> JobQueue`` (default :func:`server_queue`, read when a job is submitted).
    """

    def __init__(self, queue: Callable[[], JobQueue] | None = None):
        self._queue = queue or server_queue
        self.jobs: list[Job] = []
        self.runs: list[RunRecord] = []
        self._count = 0
        self._own_cursor: dict = {}
        self._figures: dict[str, tuple[object, object]] = {}

    @property
    def queue(self) -> JobQueue:
        return self._queue()

    @property
    def current(self) -> RunRecord | None:
        """The running run (``None``: none)."""
        return next((r for r in self.runs if r.status == "running"), None)

    @property
    def queued(self) -> list[RunRecord]:
        return [r for r in self.runs if r.status == "queued"]

    @property
    def active(self) -> bool:
        """A job of this page waits or runs."""
        return any(not job.over for job in self.jobs)

    def place(self) -> int | None:
        """The place in the server's line of this page's first waiting job (``None``: none waits)."""
        waiting = next((j for j in self.jobs if j.status == "queued"), None)
        return None if waiting is None else self.queue.place(waiting)

    def figure(self, name: str, version, build: Callable[[], object]):
        """The figure ``name`` from ``build()``, rebuilt only when ``version`` (e.g. the
        runs' event counts) changed: the page redraws every second while a run trains and its four
        figures cost ~0.1 s of CPU (Cora, 40 epochs)."""
        cached = self._figures.get(name)
        if cached is None or cached[0] != version:
            cached = self._figures[name] = (version, build())
        return cached[1]

    def submit(self, configs: Sequence[TrainConfig], graph=None, owner: str = "") -> Job:
        """Queue one job of ``configs`` (validated) for ``owner`` (the page's registry id)."""
        job = self.queue.submit("train", list(configs), owner=owner, graph=graph,
                                first_number=self._count + 1)
        self._count += len(configs)
        self.jobs.append(job)
        self.runs.extend(job.runs)
        return job

    def changes(self, cursor: dict | None = None) -> Changes:
        """The runs that started or ended since ``cursor`` (a reader's last
        :attr:`Changes.cursor`; ``None``: the session's own, for a single reader)."""
        before = self._own_cursor if cursor is None else cursor
        now = {id(r): r.status for r in self.runs}
        out = Changes(cursor=now)
        for run in self.runs:
            was = before.get(id(run), "queued")
            if run.status != "queued" and was == "queued":
                out.started.append(run)
            if run.over and was in ("queued", "running"):
                out.ended.append(run)
        if cursor is None:
            self._own_cursor = now
        return out

    def stop(self, reason: str = "stopped (Stop)") -> None:
        """Stop this page's running job at its next epoch and take its waiting ones out of line."""
        for job in self.jobs:
            if not job.over:
                self.queue.cancel(job, reason)

    def clear(self) -> None:
        """Forget every run that is over (the running and waiting ones stay)."""
        self.runs = [r for r in self.runs if not r.over]
        self.jobs = [j for j in self.jobs if not j.over]

    def wait(self, timeout: float = 60.0) -> bool:
        """Block until no job of this page is active or ``timeout`` seconds passed (tests,
        scripts); ``True`` when idle."""
        deadline = time.monotonic() + timeout
        for job in list(self.jobs):
            self.queue.wait(job, max(0.0, deadline - time.monotonic()))
        return not self.active


def device_label(name: str = "auto") -> str:
    """Where training runs, in words: ``"CPU (no CUDA GPU found)"`` or
    ``"CUDA · NVIDIA H100 ..."`` (the name the trainer reports, :func:`device_name`)."""
    device = resolve_device(name)
    if device.type == "cuda":
        return f"CUDA · {device_name(device)}"
    return "CPU" + ("" if torch.cuda.is_available() else " (no CUDA GPU found)")


__all__ = ["COMPARE_SAMPLERS", "Changes", "QUEUE", "TrainingSession", "device_label", "server_queue"]
