"""Watched background work: a :class:`Watchdog` stops a job that nobody polls any more
or that ran too long.

The app's pages start a job on a button, then a Streamlit fragment with ``run_every``
polls it. A page that is left stops polling, but a thread keeps running until it is told
to stop. A :class:`Watchdog` closes that gap where a job should not outlive its page:
every poll stamps a heartbeat, and a small daemon thread calls the job's ``stop()`` once
no heartbeat came for ``idle_timeout`` seconds, or once the job has run for
``max_seconds``. Sweeps and tuning studies, meant to outlive the browser tab
(:mod:`app_shared.registry`), run with ``idle_timeout=None`` and keep the wall-time limit.
The rule itself is :func:`limit_passed`, applied from a watchdog thread. (Live training is
not watched here: its jobs run in worker processes, which apply their wall-time limit
themselves, :mod:`dropedge_explorer.jobs`.) Nothing here imports Streamlit.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable

from app_shared.background import ThreadedJob
from dropedge_explorer import env

#: Seconds without a poll after which a job is stopped (``$DROPEDGE_IDLE_TIMEOUT``).
#: Two minutes: a hidden browser tab still polls (Chrome throttles a background tab's
#: timers to about once a minute), a closed one does not.
#: A bad value falls back to the default here (an import must not fail); the app checks
#: every variable at start and refuses to run with one message (:mod:`dropedge_explorer.env`).
DEFAULT_IDLE_TIMEOUT = env.settings_or_defaults().idle_timeout
#: Longest wall time of one job, polled or not (``$DROPEDGE_MAX_JOB_SECONDS``).
DEFAULT_MAX_SECONDS = env.settings_or_defaults().max_job_seconds


def limit_passed(idle_seconds: float, elapsed: float, idle_timeout: float | None,
                 max_seconds: float | None) -> str | None:
    """Which limit a job has passed: ``"idle"`` (no poll for more than ``idle_timeout``
    seconds), ``"max_seconds"`` (running for more than ``max_seconds``) or ``None``; a
    limit of ``None`` never passes. The one rule of :class:`Watchdog`.

    Example:
        >>> limit_passed(11, 20, idle_timeout=10, max_seconds=60)
        'idle'
        >>> limit_passed(1, 61, idle_timeout=10, max_seconds=60), limit_passed(99, 99, None, None)
        ('max_seconds', None)
    """
    if idle_timeout is not None and idle_seconds > idle_timeout:
        return "idle"
    if max_seconds is not None and elapsed > max_seconds:
        return "max_seconds"
    return None


def limit_message(fired: str | None, idle_timeout: float | None, max_seconds: float | None) -> str | None:
    """The note of a job stopped by :func:`limit_passed`'s verdict ``fired`` (``None``: none)."""
    if fired == "idle":
        return (f"stopped by the watchdog: nobody polled the run for {idle_timeout:g} s "
                "(the browser tab was closed or the page left)")
    if fired == "max_seconds":
        return f"stopped by the watchdog: the run reached its wall-time limit of {max_seconds:g} s"
    return None


def _is_done(job) -> bool:
    done = getattr(job, "done", False)
    return bool(done() if callable(done) else done)


class Watchdog:
    """Calls ``target.stop()`` when :meth:`heartbeat` was not called for
    ``idle_timeout`` seconds, or ``max_seconds`` after it started.

    Args:
        target: any object with a ``stop()`` method; when it has a ``done`` attribute
            (or method) that turns true, the watchdog retires without stopping it.
        idle_timeout: seconds without a heartbeat before ``stop()`` (``None``: never).
        max_seconds: seconds of wall time before ``stop()`` (``None``: no limit).
        check_every: how often the watchdog thread looks (default: a quarter of the
            shorter limit, at most 1 s).
        clock: a monotonic clock in seconds (tests pass a fake one).

    After it fired, :attr:`fired` says why (``"idle"`` or ``"max_seconds"``) and
    :attr:`message` says it in words. :meth:`cancel` retires it without stopping the
    target. The watchdog's thread is a daemon and ends when it fires, is cancelled or
    sees the target done.

    Example (a fake clock and one look by hand; the thread makes the same look every
    :attr:`check_every` seconds):
        >>> class Job:
        ...     stopped = False
        ...     def stop(self): self.stopped = True
        >>> now = [0.0]
        >>> job = Job(); dog = Watchdog(job, idle_timeout=10, clock=lambda: now[0], start=False)
        >>> now[0] = 11.0; dog.check(), job.stopped
        ('idle', True)
    """

    def __init__(self, target, idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT,
                 max_seconds: float | None = None, check_every: float | None = None,
                 clock: Callable[[], float] = time.monotonic, start: bool = True):
        if not callable(getattr(target, "stop", None)):
            raise TypeError(f"the watched object needs a stop() method (got {type(target).__name__})")
        for name, value in (("idle_timeout", idle_timeout), ("max_seconds", max_seconds)):
            if value is not None and not value > 0:
                raise ValueError(f"{name} must be > 0 seconds or None (got {value!r})")
        self.target = target
        self.idle_timeout = idle_timeout
        self.max_seconds = max_seconds
        limits = [v for v in (idle_timeout, max_seconds) if v is not None]
        self.check_every = check_every or min([1.0] + [v / 4 for v in limits])
        self._clock = clock
        self.started_at = clock()
        self._last_beat = self.started_at
        self._cancel = threading.Event()
        self.fired: str | None = None
        self._thread = threading.Thread(target=self._watch, name="dropedge-watchdog", daemon=True)
        if start:
            self._thread.start()

    def heartbeat(self) -> None:
        """Someone is still watching: reset the idle clock."""
        self._last_beat = self._clock()

    @property
    def idle_seconds(self) -> float:
        """Seconds since the last heartbeat."""
        return self._clock() - self._last_beat

    @property
    def elapsed(self) -> float:
        return self._clock() - self.started_at

    def check(self) -> str | None:
        """One look: stop the target if a limit is passed; return why (or ``None``).
        The watchdog thread calls this every :attr:`check_every` seconds."""
        if self.fired or self._cancel.is_set() or _is_done(self.target):
            return self.fired
        self.fired = limit_passed(self.idle_seconds, self.elapsed, self.idle_timeout, self.max_seconds)
        if self.fired:
            self.target.stop()
        return self.fired

    def _watch(self) -> None:
        while not self._cancel.wait(self.check_every):
            if self.check() or _is_done(self.target):
                return

    def cancel(self) -> None:
        """Retire without stopping the target."""
        self._cancel.set()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    @property
    def message(self) -> str | None:
        return limit_message(self.fired, self.idle_timeout, self.max_seconds)


class WatchedJob(ThreadedJob):
    """A background job under a :class:`Watchdog`: started once, polled through
    :meth:`heartbeat`; the body's exception becomes :attr:`error` (one line) and the end
    time :attr:`ended_at`. Subclasses implement :meth:`_body`.

    Args:
        name: the thread's name.
        idle_timeout, max_seconds: the watchdog's limits (see :class:`Watchdog`;
            ``idle_timeout=None``: the job outlives its page).
    """

    def __init__(self, name: str, idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT,
                 max_seconds: float | None = DEFAULT_MAX_SECONDS):
        super().__init__(name)
        self.idle_timeout, self.max_seconds = idle_timeout, max_seconds
        self.watchdog: Watchdog | None = None
        self.error: str | None = None
        self.exception: BaseException | None = None
        self.started_at = time.time()
        self.ended_at: float | None = None

    def start(self):
        """Start the thread and its watchdog (once)."""
        if self._thread.ident is None:
            self._thread.start()
            self.watchdog = Watchdog(self, idle_timeout=self.idle_timeout, max_seconds=self.max_seconds)
        return self

    def heartbeat(self) -> None:
        """The page polled: the watchdog's idle clock restarts."""
        if self.watchdog is not None:
            self.watchdog.heartbeat()

    def _body(self) -> None:
        raise NotImplementedError

    def _run(self) -> None:
        try:
            self._body()
        except Exception as exc:  # reported to the poller, never lost in a thread
            self.exception = exc
            self.error = f"{type(exc).__name__}: {exc}".splitlines()[0]
        finally:
            self.ended_at = time.time()



__all__ = ["DEFAULT_IDLE_TIMEOUT", "DEFAULT_MAX_SECONDS", "WatchedJob", "Watchdog", "limit_message",
           "limit_passed"]
