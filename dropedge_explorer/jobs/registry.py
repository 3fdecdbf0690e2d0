"""Jobs that outlive the browser tab: a server-wide registry, each job under an id that a
page puts into its URL.

A Live training session, a sweep or a tuning study keeps running when its page is
reloaded or its tab closed (each is a job of the server's queue, run in a worker process;
its wall-time limit still holds). The page registers its job here and writes the id into
the URL (``?run=<id>``); a reloaded page — a new browser session, with empty state — reads
the id and finds the job again, and a page may list every job of a kind still in progress.

Memory stays bounded: a finished job is kept ``keep_finished`` seconds after it was seen
finished and at most ``max_finished`` of them (the oldest go first). Nothing is refused
here for being one job too many: every job waits its turn in the fair queue of
:mod:`dropedge_explorer.jobs`, which bounds the workers.

Ids are no secret (the Live training page lists every run with its id) and grant reading
only. Control — Stop, Clear, queueing more runs — belongs to whoever holds the job's
owner token: :data:`TOKEN_BYTES` random bytes from :mod:`secrets`, made at registration,
handed to the registering browser session only (:meth:`JobRegistry.owner_token`) and
checked in constant time (:meth:`JobRegistry.is_owner`).

Nothing here imports Streamlit; the registry is a module global on purpose
(:data:`REGISTRY`), the one object that every session of the server process shares.

Example:
    >>> registry = JobRegistry(max_finished=1)
    >>> class Job:
    ...     active = True
    >>> job = Job(); job_id = registry.register(job, "training")
    >>> registry.get(job_id) is job, registry.register(job, "training") == job_id
    (True, True)
"""
from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

#: A finished job is kept this long after it was first seen finished (seconds).
KEEP_FINISHED_S = 3600.0
#: Finished jobs kept at most (the oldest go first).
MAX_FINISHED = 16
#: Random bytes of an owner token: 128 bits, beyond guessing over a network.
TOKEN_BYTES = 16


def is_active(job) -> bool:
    """Whether ``job`` still runs: its ``active`` (a training session: a run running or
    queued), else its ``running`` (a threaded job)."""
    for name in ("active", "running"):
        value = getattr(job, name, None)
        if value is not None:
            return bool(value() if callable(value) else value)
    return False


@dataclass
class Entry:
    """One registered job: its id, kind (``"training"``, ``"sweep"``, ``"tuning"``), when
    it was registered, when it was first seen finished (``None`` while it runs) and the
    token that controls it (kept out of its ``repr``: lists of entries get printed)."""

    job_id: str
    kind: str
    job: object
    registered_at: float
    finished_at: float | None = None
    owner_token: str = field(default_factory=lambda: secrets.token_urlsafe(TOKEN_BYTES), repr=False)

    @property
    def active(self) -> bool:
        return is_active(self.job)


class JobRegistry:
    """Jobs by id, shared by every browser session of the server (thread-safe).

    Args:
        keep_finished: seconds a finished job stays findable.
        max_finished: finished jobs kept at most.
        clock: a monotonic clock in seconds (tests pass a fake one).
    """

    def __init__(self, keep_finished: float = KEEP_FINISHED_S, max_finished: int = MAX_FINISHED,
                 clock: Callable[[], float] = time.monotonic):
        self.keep_finished, self.max_finished = keep_finished, max_finished
        self._clock = clock
        self._entries: dict[str, Entry] = {}
        self._lock = threading.Lock()

    def register(self, job, kind: str) -> str:
        """The id of ``job``, registering it under a new one the first time."""
        with self._lock:
            self._prune()
            mine = next((e for e in self._entries.values() if e.job is job), None)
            if mine is not None:
                return mine.job_id
            job_id = secrets.token_hex(4)
            self._entries[job_id] = Entry(job_id, kind, job, self._clock())
            return job_id

    def get(self, job_id: str | None, kind: str | None = None):
        """The job under ``job_id`` (of ``kind`` when given), or ``None`` (never was, or
        expired)."""
        with self._lock:
            self._prune()
            entry = self._entries.get(str(job_id))
            return entry.job if entry is not None and kind in (None, entry.kind) else None

    def id_of(self, job) -> str | None:
        """The id ``job`` is registered under (``None``: not registered)."""
        with self._lock:
            return next((e.job_id for e in self._entries.values() if e.job is job), None)

    def owner_token(self, job_id: str) -> str | None:
        """The owner token of ``job_id`` (``None``: not registered); call it only for the
        session that registered the job (:func:`app_shared.job_links.register`)."""
        with self._lock:
            entry = self._entries.get(str(job_id))
            return entry.owner_token if entry is not None else None

    def is_owner(self, job_id: str | None, token: str | None) -> bool:
        """Whether ``token`` is the owner token of ``job_id`` (compared in constant time)."""
        if not job_id or not token:
            return False
        with self._lock:
            entry = self._entries.get(str(job_id))
        return entry is not None and secrets.compare_digest(entry.owner_token.encode(),
                                                            str(token).encode())

    def entries(self, kind: str | None = None) -> list[Entry]:
        """The registered jobs (of ``kind``), oldest first."""
        with self._lock:
            self._prune()
            return [e for e in self._entries.values() if kind in (None, e.kind)]

    def _prune(self) -> None:
        """Note which jobs finished (a finished job run again counts as running), then
        drop those finished too long ago and the oldest beyond ``max_finished``."""
        now = self._clock()
        for entry in self._entries.values():
            if entry.active:
                entry.finished_at = None
            elif entry.finished_at is None:
                entry.finished_at = now
        finished = sorted((e for e in self._entries.values() if e.finished_at is not None),
                          key=lambda e: e.finished_at)
        expired = [e for e in finished if now - e.finished_at > self.keep_finished]
        kept = [e for e in finished if e not in expired]
        for entry in expired + kept[: max(0, len(kept) - self.max_finished)]:
            del self._entries[entry.job_id]

    def __len__(self) -> int:
        with self._lock:
            self._prune()
            return len(self._entries)


#: The server's registry: one per process, shared by every browser session.
REGISTRY = JobRegistry()

__all__ = ["Entry", "JobRegistry", "KEEP_FINISHED_S", "MAX_FINISHED", "REGISTRY", "TOKEN_BYTES",
           "is_active"]
