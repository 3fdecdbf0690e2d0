"""The life cycle every background job shares: one daemon thread and one stop flag.

:class:`~dropedge_core.training.TrainingWorker`, :class:`~dropedge_core.jobs.SweepJob`
and :class:`~dropedge_core.jobs.TuningJob` set ``self._thread`` and ``self._stop`` in
their constructors and inherit the controls from :class:`ThreadedJob`.
"""
from __future__ import annotations

import threading


class ThreadedJob:
    """Stop / done / running / join over ``self._thread`` and ``self._stop``."""

    _thread: threading.Thread
    _stop: threading.Event

    def stop(self) -> None:
        """Ask the job to stop; it ends at its next check of the flag."""
        self._stop.set()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

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
