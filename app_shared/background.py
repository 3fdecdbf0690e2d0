"""The life cycle of the app's threaded jobs (sweeps, tuning studies): one daemon thread
and one stop flag.

:class:`ThreadedJob` owns both: its ``__init__`` makes the stop flag and the (not yet
started) thread that runs the subclass's ``_run``; :class:`~app_shared.watchdog.WatchedJob`
and its sweep and tuning jobs call it through ``super().__init__`` and inherit the
controls. Live training does not run here: it runs in worker processes
(:mod:`dropedge_explorer.jobs`).
"""
from __future__ import annotations

import threading

__all__ = ["ThreadedJob"]


class ThreadedJob:
    """A job run by one daemon thread, with stop / done / running / join.

    Args:
        name: the thread's name (seen in a debugger's or ``py-spy``'s thread list).

    Subclasses implement ``_run`` (the thread's body: it should end soon after
    :attr:`stopping` turns true) and call ``super().__init__(name)`` before
    :meth:`start`.
    """

    def __init__(self, name: str = "dropedge-job"):
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def _run(self) -> None:
        raise NotImplementedError

    def start(self):
        """Start the thread (once; a started or finished job is left alone)."""
        if self._thread.ident is None:
            self._thread.start()
        return self

    def stop(self) -> None:
        """Ask the job to stop; it ends at its next check of the flag."""
        self._stop.set()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    @property
    def stopped(self) -> bool:
        """Stopped before its end: by :meth:`stop` (the user's Stop) or by its watchdog
        (``self.watchdog``, where the job has one: nobody polled, or its time ran out)."""
        dog = getattr(self, "watchdog", None)
        return self.stopping or bool(dog is not None and dog.fired)

    @property
    def done(self) -> bool:
        """Started and finished."""
        return self._thread.ident is not None and not self._thread.is_alive()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def join(self, timeout: float | None = None) -> bool:
        """Wait up to ``timeout`` seconds; ``True`` when the job is done."""
        if self._thread.ident is not None:
            self._thread.join(timeout)
        return self.done
