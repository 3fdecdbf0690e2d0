"""The Live training runs of one page: a queue trained one run at a time, each run's
events, and the results store for those that end.

A run has two threads, no more: the worker that trains it
(:class:`~app_shared.background.TrainingWorker`) and the session's driver, which collects
the events, applies the limits (:func:`~app_shared.watchdog.limit_passed`: nobody polled,
or the wall time ran out), stores a run that ended and starts the next one.

Example:
    >>> from dropedge_core.training import TrainConfig
    >>> session = TrainingSession(idle_timeout=60, store=None)
    >>> record, = session.submit([TrainConfig(dataset="karate", epochs=5, diag_every=0)])
    >>> session.wait(60), record.status, record.epochs_done
    (True, 'finished', 5)
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch

from app_shared.background import TrainingWorker
from app_shared.run_records import RunRecord, run_label
from app_shared.watchdog import DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_SECONDS, limit_message, limit_passed
from dropedge_core import paths
from dropedge_core.store import ResultStore, StoreUnavailable
from dropedge_core.studies import sweep
from dropedge_core.training import TrainConfig, device_name, resolve_device


def _results_store():
    """The results store (``$DROPEDGE_RESULTS``), opened once per path."""
    path = paths.results_store()
    if path not in _STORES:
        _STORES[path] = ResultStore(path)
    return _STORES[path]


_STORES: dict = {}
#: Samplers of the "compare samplers" queue: no dropping, DropEdge, DropEdge++.
COMPARE_SAMPLERS: tuple[str, ...] = ("nodrop", "dropedge", "dropedge++")


@dataclass
class PollResult:
    """What changed since a poller's last :meth:`TrainingSession.poll`: runs that started
    or ended (a page reruns in full on a change, so its buttons and run lists follow), and
    the ``cursor`` to pass to the next poll."""

    started: list[RunRecord] = field(default_factory=list)
    ended: list[RunRecord] = field(default_factory=list)
    new_events: int = 0
    cursor: int = 0

    @property
    def changed(self) -> bool:
        return bool(self.started or self.ended)


class TrainingSession:
    """The training runs of one Live training page: a queue worked off one run at a time,
    every run's events, and the limits on the running one.

    Runs start in order: :meth:`submit` queues configs (e.g. the three samplers of
    :data:`COMPARE_SAMPLERS`). Collecting the running run's events, applying its limits,
    storing it when it ends and starting the next one is :meth:`advance`, called by the
    session's driver thread while a run is active (so the runs outlive the browser tab)
    and by every :meth:`poll`. The driver ends when the queue is empty; the next
    :meth:`submit` starts another.

    The limits are checked on each advance, by the driver itself (no watchdog thread):

    * ``idle_timeout``: no :meth:`poll` for that many seconds stops the running run and
      drops the queue (nobody watches any more). The app passes ``None``: its runs are
      trained to their end and stored with nobody watching, and a reloaded page finds
      them in :mod:`app_shared.registry`.
    * ``max_seconds``: the running run's wall time, polled or not.

    Several pages may watch one session: each passes its own cursor to :meth:`poll`.

    Args:
        idle_timeout, max_seconds: the limits (seconds; ``None``: none), see above and
            :func:`~app_shared.watchdog.limit_passed`.
        max_runs: finished runs kept (the oldest are dropped first).
        worker_factory: ``(config, graph) -> worker``; default starts a
            :class:`~app_shared.background.TrainingWorker` (tests pass fakes).
        store: ``() -> ResultStore`` where a run that ends is put by the one storing rule
            (:func:`dropedge_core.studies.sweep.store_result`: finished, early stop or NaN;
            not stopped, an error or an uploaded graph), so the Depth study finds it
            without training it again; default the results store of
            :func:`dropedge_core.paths.results_store`; ``None``: nothing stored.
        drive_every: the driver's interval in seconds.
        clock: a monotonic clock in seconds for the limits (tests pass a fake one).
    """

    #: Changes kept for pollers that lag behind (a page polls about once a second).
    MAX_CHANGES = 64

    def __init__(self, idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT,
                 max_seconds: float | None = DEFAULT_MAX_SECONDS, max_runs: int = 12,
                 worker_factory: Callable | None = None, store: Callable | None = _results_store,
                 drive_every: float = 0.25, clock: Callable[[], float] = time.monotonic):
        for name, value in (("idle_timeout", idle_timeout), ("max_seconds", max_seconds)):
            if value is not None and not value > 0:
                raise ValueError(f"{name} must be > 0 seconds or None (got {value!r})")
        self.idle_timeout = idle_timeout
        self.store = store
        self.store_delays = sweep.STORE_RETRY_DELAYS  # a busy store: the background retries
        self.max_seconds = max_seconds
        self.max_runs = max_runs
        self.worker_factory = worker_factory or (lambda config, graph: TrainingWorker(config, graph))
        self.drive_every = drive_every
        self._clock = clock
        self.runs: list[RunRecord] = []
        self._pending: list[tuple[RunRecord, object]] = []
        self._current: RunRecord | None = None
        self._worker = None
        self._driver: threading.Thread | None = None
        self._idle = threading.Event()  # set while no run is active: wait() blocks on it
        self._idle.set()
        self._last_poll = clock()
        self._run_started = 0.0  # the running run's start on self._clock
        self._limit: str | None = None  # the limit that stopped the running run
        self._seen = 0
        self._count = 0
        self._lock = threading.RLock()
        self._figures: dict[str, tuple[object, object]] = {}
        self._changes: list[tuple[str, RunRecord]] = []  # ("started" | "ended", run), in order
        self._changes_dropped = 0  # changes before self._changes[0]
        self._own_cursor = 0
        self._stop_note: str | None = None  # why the running run was told to stop (stored on it)

    # -- state ------------------------------------------------------------------------
    @property
    def current(self) -> RunRecord | None:
        """The running run (``None`` when idle)."""
        return self._current

    @property
    def queued(self) -> list[RunRecord]:
        return [record for record, _ in self._pending]

    @property
    def active(self) -> bool:
        """A run is running or waiting."""
        return self._current is not None or bool(self._pending)

    def figure(self, name: str, version, build: Callable[[], object]):
        """The figure ``name`` from ``build()``, rebuilt only when ``version`` (e.g. the
        runs' event counts) changed. The page polls every ``POLL_S`` seconds; building
        its four figures costs ~0.1 s of CPU in Python (measured on Cora, 40 epochs),
        taken from the training thread on a 2-core machine, so unchanged ones are reused."""
        cached = self._figures.get(name)
        if cached is None or cached[0] != version:
            cached = self._figures[name] = (version, build())
        return cached[1]

    # -- actions ----------------------------------------------------------------------
    def submit(self, configs: Sequence[TrainConfig], graph=None) -> list[RunRecord]:
        """Queue runs (validated configs); the first starts at once when idle."""
        with self._lock:
            records = []
            self._last_poll = self._clock()  # whoever submits is watching
            for config in configs:
                self._count += 1
                record = RunRecord(self._count, config, run_label(config, self._count))
                self._pending.append((record, graph))
                self.runs.append(record)
                records.append(record)
            if self._current is None and self._pending:
                self._start_next()
            if self.active:
                self._idle.clear()
                if self._driver is None:
                    self._driver = threading.Thread(target=self._drive, name="dropedge-live", daemon=True)
                    self._driver.start()
            return records

    def poll(self, cursor: int | None = None) -> PollResult:
        """Note that somebody watches, :meth:`advance`, and return the runs that started or
        ended since ``cursor`` (a poller's last :attr:`PollResult.cursor`; ``None``: the
        session's own cursor, for a single poller). Cheap: call it as often as the page
        redraws."""
        with self._lock:
            self._last_poll = self._clock()
            new_events = self.advance()
            own = cursor is None
            start = self._own_cursor if own else cursor
            out = PollResult(new_events=new_events, cursor=self._changes_dropped + len(self._changes))
            for kind, record in self._changes[max(0, start - self._changes_dropped):]:
                (out.started if kind == "started" else out.ended).append(record)
            if own:
                self._own_cursor = out.cursor
            return out

    def advance(self) -> int:
        """Apply the limits to the running run, collect its new events; when it is over,
        store it and start the next one. Returns the number of new events."""
        with self._lock:
            new_events = 0
            if self._current is None and self._pending:  # a run was queued while idle
                self._start_next()
            self._check_limits()
            while self._current is not None:
                # done is read before the events: a worker that ends in between has pushed its
                # end event before it was done, so the run is never finished without it
                done = self._worker.done
                new = self._worker.events_since(self._seen)
                self._seen += len(new)
                self._current.events.extend(new)
                new_events += len(new)
                if not done:
                    break
                record = self._finish()
                if record.watchdog_stopped and self._pending:  # nobody is watching (not a store note)
                    for dropped, _ in self._pending:
                        dropped.status, dropped.note = "stopped", "dropped from the queue by the watchdog"
                        self._changed("ended", dropped)
                    self._pending.clear()
                if self._pending:
                    self._start_next()
            if not self.active:
                self._idle.set()
            return new_events

    def _check_limits(self) -> None:
        """Stop the running run once it passed a limit (once: it ends at its next epoch)."""
        if self._current is None or self._limit is not None:
            return
        now = self._clock()
        self._limit = limit_passed(now - self._last_poll, now - self._run_started,
                                   self.idle_timeout, self.max_seconds)
        if self._limit is not None:
            self._worker.stop()

    def _changed(self, kind: str, record: RunRecord) -> None:
        self._changes.append((kind, record))
        extra = len(self._changes) - self.MAX_CHANGES
        if extra > 0:
            del self._changes[:extra]
            self._changes_dropped += extra

    def _drive(self) -> None:
        """The driver thread: advance until no run is active (then it ends; the next
        :meth:`submit` starts another)."""
        while True:
            with self._lock:
                self.advance()
                if not self.active:
                    self._driver = None
                    return
            self._idle.wait(self.drive_every)  # a pause that a run ending elsewhere cuts short

    def stop(self, reason: str = "stopped (Stop)") -> None:
        """Stop the running run (it ends with reason ``stopped`` at its next epoch, and
        ``reason`` as its note: who stopped it) and drop the queued ones."""
        with self._lock:
            for record, _ in self._pending:
                record.status, record.note = "stopped", f"dropped from the queue: {reason}"
                self._changed("ended", record)
            self._pending.clear()
            if self._worker is not None:
                self._stop_note = reason
                self._worker.stop()

    def clear(self) -> None:
        """Forget every run that is over (the running and queued ones stay)."""
        with self._lock:
            self.runs = [r for r in self.runs if not r.over]

    def wait(self, timeout: float = 60.0) -> bool:
        """Block until no run is active (the driver says so) or ``timeout`` seconds passed
        (tests, scripts); ``True`` when idle."""
        deadline = time.monotonic() + timeout
        while not self._idle.wait(max(0.0, min(1.0, deadline - time.monotonic()))):
            self.poll()  # the waiter watches: the idle limit does not stop its runs
            if time.monotonic() >= deadline:
                break
        self.poll()
        return not self.active

    # -- internals --------------------------------------------------------------------
    def _start_next(self) -> RunRecord:
        record, graph = self._pending.pop(0)
        record.status, record.started_at = "running", time.monotonic()
        self._current, self._seen, self._limit = record, 0, None
        self._run_started = self._clock()
        self._changed("started", record)
        try:
            self._worker = self.worker_factory(record.config, graph)
        except Exception as exc:  # reported on the run, never lost
            record.events.append({"type": "error", "message": f"{type(exc).__name__}: {exc}".splitlines()[0]})
            record.status = "error"
            self._current, self._worker = None, None
            self._changed("ended", record)
        return record

    def _finish(self) -> RunRecord:
        record = self._current
        end = record.end
        record.status = end["reason"] if end else "error"
        if record.status == "error" and not record.error:
            record.events.append({"type": "error", "message": "the run ended without an end event"})
        limit_note = limit_message(self._limit, self.idle_timeout, self.max_seconds)
        record.note = limit_note or (self._stop_note if record.status == "stopped" else None)
        self._stop_note = None
        record.watchdog_stopped = limit_note is not None
        self._store(record, getattr(self._worker, "result", None))
        self._current, self._worker = None, None
        self._changed("ended", record)
        over = [r for r in self.runs if r.over]
        for old in over[: max(0, len(over) - self.max_runs)]:
            self.runs.remove(old)
        return record


    def _store(self, record: RunRecord, result) -> None:
        """Put a run that ended with a result into the results store by the one rule
        (:func:`dropedge_core.studies.sweep.store_result`), tried once here: a store that
        fails is a note on the run, never an exception in the poll."""
        if self.store is None or result is None or not sweep.should_store(result):
            return
        try:
            record.stored_key = sweep.store_result(self.store(), result, delays=())
        except StoreUnavailable:
            # locked or down for a while: written again off the lock, so polls never wait on it
            record.note = _joined(record.note, BUSY_NOTE)
            threading.Thread(target=self._store_later, args=(record, result), daemon=True,
                             name="dropedge-store-retry").start()
        except Exception as exc:  # another program's table, a damaged file, a refusing server
            _note(record, exc)

    def _store_later(self, record: RunRecord, result) -> None:
        """:func:`dropedge_core.studies.sweep.store_result`'s retries for a run whose first
        write met a busy store; the run's note says how it ended."""
        try:
            record.stored_key = sweep.store_result(self.store(), result, delays=self.store_delays)
            record.note = record.note.replace(BUSY_NOTE, "stored once the results store was free")
        except Exception as exc:
            record.note = record.note.replace(BUSY_NOTE, "").strip("; ")
            _note(record, exc)


#: A run's note while its store write is retried in the background.
BUSY_NOTE = "the results store is busy: writing the run again in the background"


def _joined(note: str, line: str) -> str:
    return f"{note}; {line}" if note else line


def _note(record: RunRecord, exc: Exception) -> None:
    record.note = _joined(record.note, f"not stored in the results store: {type(exc).__name__}: {exc}"
                          .splitlines()[0])


def device_label(name: str = "auto") -> str:
    """Where training runs, in words: ``"CPU (no CUDA GPU found)"`` or
    ``"CUDA · NVIDIA H100 ..."`` (the name the trainer reports, :func:`device_name`)."""
    device = resolve_device(name)
    if device.type == "cuda":
        return f"CUDA · {device_name(device)}"
    return "CPU" + ("" if torch.cuda.is_available() else " (no CUDA GPU found)")


__all__ = ["COMPARE_SAMPLERS", "PollResult", "TrainingSession", "device_label"]
