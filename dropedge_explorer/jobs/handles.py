"""A page's handle on a sweep or a tuning study in the job queue: what to submit, and how
far it got, in words.

:class:`SweepJob` ("Run missing" of the Depth study) and :class:`TuningJob` (the Tuning
page) train nothing themselves: :meth:`start` submits one job of kind ``"sweep"`` or
``"tune"`` to a :class:`~dropedge_explorer.jobs.queue.JobQueue`, whose worker process runs
the command line's own loop (``sweep``'s claimed runs, ``tune``'s study) and streams back
progress snapshots (:attr:`~dropedge_explorer.jobs.queue.Job.progress`); the handle reads
them. Like a Live run, a job waits its turn in the fair queue (:meth:`place`), outlives
its browser tab, and ends at its owner's :meth:`stop` or at its wall-time limit.

Example:
    >>> from dropedge_explorer.jobs.queue import JobQueue
    >>> from dropedge_explorer.training import TrainConfig
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> jobs = JobQueue(max_running=1, store=str(folder / "r.sqlite"))
    >>> sweep = SweepJob([TrainConfig(dataset="karate", epochs=3, diag_every=0)], jobs).start()
    >>> sweep.join(300), sweep.status.split(" in ")[0]
    (True, 'finished · 1 of 1 runs trained and stored')
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

from dropedge_explorer._lazy import lazy_import
from dropedge_explorer.figures import BACKBONE_LABELS, sampler_label
from dropedge_explorer.jobs.queue import Job, JobQueue
from dropedge_explorer.training import TrainConfig

QueueLike = JobQueue | Callable[[], JobQueue]
#: The reason an owner's Stop gives the queue (not a note of the job's own: a limit, a close).
STOP_REASON = "stopped (Stop)"


class _QueuedJob:
    """What a sweep and a study share: one job of the queue, submitted by :meth:`start`.

    Args:
        kind (str): the job's kind.
        configs (Sequence[TrainConfig]): its configs.
        queue (JobQueue or Callable): the queue, or a function returning it.
        graph (Graph, optional): the loaded graph (required for an uploaded one).
        owner (str): who submits it (round-robin is across owners).
        options (dict): the kind's settings.
    """

    noun = "job"

    def __init__(self, kind: str, configs: Sequence[TrainConfig], queue: QueueLike, graph, owner: str,
                 options: dict):
        self.kind, self.configs, self.graph, self.owner = kind, list(configs), graph, owner
        self.options = options
        self._queue = queue
        self.job: Job | None = None

    @property
    def queue(self) -> JobQueue:
        return self._queue() if callable(self._queue) else self._queue

    def start(self, owner: str | None = None):
        """Submit the job (once) for ``owner`` (default: the one given at construction);
        it starts when a place in the queue frees."""
        if self.job is None:
            self.owner = self.owner if owner is None else str(owner)
            self.job = self.queue.submit(self.kind, self.configs, owner=self.owner, graph=self.graph,
                                         options=self.options)
            self.graph = None  # the queue holds it until the job is over
        return self

    def stop(self) -> None:
        """Leave the line, or stop at the running run's (trial's) next epoch."""
        if self.job is not None and not self.job.over:
            self.queue.cancel(self.job, STOP_REASON)

    def join(self, timeout: float = 60.0) -> bool:
        """Wait up to ``timeout`` seconds; ``True`` when the job is over."""
        return self.job is not None and self.queue.wait(self.job, timeout)

    def place(self) -> int | None:
        """Its place in the server's line (``None``: not waiting)."""
        return None if self.job is None else self.queue.place(self.job)

    @property
    def progress_of(self) -> dict:
        return self.job.progress if self.job is not None else {}

    @property
    def done(self) -> bool:
        """Submitted and over."""
        return self.job is not None and self.job.over

    @property
    def running(self) -> bool:
        """Submitted and not over (waiting in line counts)."""
        return self.job is not None and not self.job.over

    active = running

    @property
    def queued(self) -> bool:
        """Submitted and waiting for a place (its page may look less often)."""
        return self.job is not None and self.job.status == "queued"

    def refresh_every(self, busy_s: float) -> float | None:
        """How often its page looks: every ``busy_s`` seconds while it runs, three times less
        often while it waits in line, never once it is over (``None``)."""
        return None if not self.running else 3 * busy_s if self.queued else busy_s

    @property
    def stopping(self) -> bool:
        return self.job is not None and self.job.stopping

    @property
    def stopped(self) -> bool:
        """Stopped before its end: by :meth:`stop` or by its wall-time limit."""
        return self.stopping or bool(self.note)

    @property
    def error(self) -> str | None:
        return None if self.job is None else self.job.error

    @property
    def note(self) -> str | None:
        """The queue's note: who stopped it, a limit that fired."""
        return None if self.job is None or self.job.note == STOP_REASON else self.job.note

    @property
    def started_at(self) -> float | None:
        return None if self.job is None else self.job.started_at

    @property
    def ended_at(self) -> float | None:
        return None if self.job is None else self.job.ended_at

    def _took(self) -> str:
        return f" in {self.ended_at - self.started_at:.1f} s" if self.ended_at and self.started_at else ""

    def _waiting(self) -> str | None:
        """``"waiting in line (place 3) · ..."`` while it waits, else ``None``."""
        if self.job is None or self.job.status != "queued":
            return None
        place = self.place()
        return f"waiting for its turn: place {place} in the server's line" if place else \
            "waiting for its turn"


class SweepJob(_QueuedJob):
    """Train ``configs`` into the queue's results store, each run claimed first (never
    redone: a run stored meanwhile by another session or a CLI sweep is skipped, one
    another worker trains is waited for); a run cut short is not stored; a run that fails
    is reported in :attr:`failures` and the sweep goes on.

    Args:
        configs (Sequence[TrainConfig]): the runs, in the order to train them.
        queue (JobQueue or Callable): the server's queue (its store is where runs go).
        graph (Graph, optional): the loaded graph of the configs' dataset and split.
        owner (str, optional): who submits it. (default: :obj:`""`)
        lease (float, optional): seconds a claim lives without renewal.
        batch_seeds (bool, optional): train the free seeds of a cell together.

    Progress: :attr:`stored`, :attr:`skipped`, :attr:`failures`, :attr:`waiting`,
    :attr:`current`, :attr:`epoch`, :attr:`batch_sizes`, :attr:`progress` (0..1) and
    :attr:`status` (words).
    """

    noun = "sweep"

    def __init__(self, configs: Sequence[TrainConfig], queue: QueueLike, graph=None, owner: str = "",
                 lease: float | None = None, batch_seeds: bool = False):
        super().__init__("sweep", configs, queue, graph, owner, {"lease": lease, "batch_seeds": batch_seeds})

    @property
    def total(self) -> int:
        """Distinct runs asked for."""
        return self.progress_of.get("total", len(set(self.configs)))

    @property
    def skipped(self) -> int:
        return self.progress_of.get("skipped", 0)

    @property
    def waiting(self) -> int:
        """Runs left that other workers are training (0 while this job trains one)."""
        return self.progress_of.get("waiting", 0) if self.current is None else 0

    @property
    def stored_keys(self) -> list[str]:
        return self.progress_of.get("stored_keys", [])

    @property
    def stored(self) -> int:
        return len(self.stored_keys)

    @property
    def failures(self) -> list[tuple[TrainConfig, str]]:
        return self.progress_of.get("failures", [])

    @property
    def lost(self) -> int:
        return self.progress_of.get("lost", 0)

    @property
    def current(self) -> TrainConfig | None:
        return self.progress_of.get("current")

    @property
    def epoch(self) -> int:
        return self.progress_of.get("epoch", 0)

    @property
    def batch_sizes(self) -> list[int]:
        """The seeds of each batch trained together so far (``batch_seeds``; else ``[]``)."""
        return self.progress_of.get("batch_sizes", [])

    @property
    def over(self) -> int:
        """Configs dealt with: stored, skipped or failed."""
        return self.stored + self.skipped + len(self.failures)

    @property
    def progress(self) -> float:
        """Fraction of the sweep done, the running run's epochs included."""
        if not self.total:
            return 1.0
        current = self.current
        part = min(self.epoch / current.epochs, 1.0) if current is not None and current.epochs else 0.0
        part *= max(len(self.progress_of.get("batch", [])), 1)  # seeds in one batch advance together
        return min((self.over + part) / self.total, 1.0)

    def _counts(self) -> str:
        counts = f"{self.stored} of {self.total} runs trained and stored"
        if self.skipped:
            counts += f", {self.skipped} found in the store meanwhile"
        if self.failures:
            counts += f", {len(self.failures)} failed ({self.failures[-1][1]})"
        return counts

    def _running(self, counts: str) -> str:
        current = self.current
        if self.stopping:
            return f"stopping after the running epoch · {counts}"
        if current is None and self.waiting:
            return (f"waiting for {self.waiting} run(s) that other workers are training "
                    f"(or for their lease to run out) · {counts}")
        if current is None:
            return f"starting · {counts}"
        backbone = BACKBONE_LABELS.get(current.backbone, current.backbone)
        seeds = self.progress_of.get("batch") or [current.seed]
        which = (f"run {self.over + 1} of {self.total}" if len(seeds) == 1 else
                 f"runs {self.over + 1}–{self.over + len(seeds)} of {self.total} in one batch")
        return (f"{which}: {sampler_label(current.sampler)} · {backbone} L={current.num_layers} · "
                f"seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))}, epoch {self.epoch} "
                f"of {current.epochs} · {counts}")

    @property
    def status(self) -> str:
        """One line: its place in line, the running run and the counts, or how it ended."""
        counts = self._counts()
        if (waiting := self._waiting()) is not None:
            return f"{waiting} · {counts}"
        if not self.done:
            return self._running(counts)
        if self.error:
            return f"failed: {self.error} · {counts}"
        if self.note:
            return f"{counts}; {self.note}"
        if self.stopping:
            return f"stopped · {counts}{self._took()}"
        return f"finished · {counts}{self._took()}"


class TuningJob(_QueuedJob):
    """An Optuna study (:func:`dropedge_explorer.studies.tuning.tune`, ``include_base``:
    the base config's own keep rates are the first trial of a new study) in the queue.

    The checks ``tune`` makes run here first, in the caller's process, so a bad trial
    count, search space or storage, someone else's study or a study of other settings is
    refused at once; :attr:`study` is a handle on the study for reading.

    Args:
        base, n_trials, study_name, storage, search, seed, space, graph: as for
            :func:`~dropedge_explorer.studies.tuning.tune`.
        queue (JobQueue or Callable): the server's queue.
        owner (str, optional): who submits it. (default: :obj:`""`)

    :meth:`stop` ends the study after the running trial, itself cut short at its next
    epoch. :attr:`finished` counts this job's trials so far.
    """

    noun = "study"

    def __init__(self, base: TrainConfig, n_trials: int, study_name: str, storage: str | None = None,
                 search: str = "tpe", seed: int | None = None, space=None, graph=None,
                 queue: QueueLike | None = None, owner: str = ""):
        tuning = lazy_import("dropedge_explorer.studies.tuning")
        if queue is None:
            raise ValueError("a tuning job needs the server's job queue")
        storage = tuning.resolve_storage(storage)
        checked = tuning.check_job(n_trials, space)  # tune()'s own checks, raised here at once
        self.study = tuning.open_study(study_name, storage, search, seed)
        tuning.check_study(self.study, checked)  # someone else's: refused now
        tuning.check_basis(self.study, base, graph, checked)  # ours, of other settings: refused now
        super().__init__("tune", [base], queue, graph, owner,
                         {"n_trials": n_trials, "study_name": study_name, "storage": storage,
                          "search": search, "seed": seed, "space": space})
        self._tuning = tuning
        self.base, self.n_trials, self.study_name, self.storage = base, n_trials, study_name, storage

    @property
    def finished(self) -> int:
        return self.progress_of.get("finished", 0)

    @property
    def status(self) -> str:
        """One line: its place in line, progress while running, how it ended once done."""
        if (waiting := self._waiting()) is not None:
            return f"{waiting} · 0 of {self.n_trials} trials done"
        if not self.done:
            verb = "stopping after the running trial" if self.stopping else "running"
            return f"{verb}: {self.finished} of {self.n_trials} trials done"
        if self.error:
            return f"failed: {self.error}"
        if self.note:
            return f"{self.finished} of {self.n_trials} trials done; {self.note}"
        if self.stopping:
            return f"stopped after {self.finished} of {self.n_trials} trials{self._took()}"
        return f"finished {self.finished} trials{self._took()}"

    def frame(self):
        """The study's trials (all workers', earlier runs' too): ``tuning.trials_frame``."""
        return self._tuning.trials_frame(self.study)

    def best(self) -> dict | None:
        return self._tuning.best_summary(self.study)


__all__ = ["SweepJob", "TuningJob"]
