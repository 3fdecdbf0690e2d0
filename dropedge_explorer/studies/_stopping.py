"""Stopping a study on SIGINT / SIGTERM without losing or miscounting a trial.

Ctrl-C raised ``KeyboardInterrupt`` wherever the program happened to be: Optuna caught it
in the objective, marked the trial FAIL (so it counted toward a cell's budget), logged a
17-35 line traceback, and re-raised. Here the signal only sets a flag
(:class:`SignalStop`, a ``threading.Event``); the running training ends at its next epoch
(``train(stop_event=...)``), and the objective then raises :class:`Interrupted`, a
``BaseException`` that Optuna does not catch; the tuning loop ends the trial as FAIL
marked void (:mod:`~dropedge_explorer.studies._trial_budget`), which no budget counts, and the
cell gets its whole budget when the command is run again. The CLI turns
:class:`Interrupted` into one line and exit ``128 + signal`` (130 for SIGINT, 143 for
SIGTERM). A second signal stops at once.
"""
from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class Interrupted(BaseException):
    """A study was stopped by a signal; ``exit_code`` is ``128 + signum``."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = int(signum)

    @property
    def exit_code(self) -> int:
        return 128 + self.signum

    def __str__(self) -> str:
        return f"interrupted by {signal.Signals(self.signum).name}"


class SignalStop(threading.Event):
    """A stop flag that remembers which signal set it (``signum``; ``None`` if none did)."""

    signum: int | None = None

    def check(self) -> None:
        """Raise :class:`Interrupted` if a signal has set the flag."""
        if self.signum is not None:
            raise Interrupted(self.signum)


@contextmanager
def stop_on_signals(signums: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM)) -> Iterator[SignalStop]:
    """While inside, ``signums`` set the yielded :class:`SignalStop` instead of
    interrupting; a second signal raises :class:`Interrupted` at once. The previous
    handlers come back on exit. Main thread only (Python's rule for signal handlers)."""
    stop = SignalStop()

    def handler(signum, frame) -> None:
        if stop.is_set():
            raise Interrupted(signum)
        stop.signum = signum
        stop.set()

    previous = {s: signal.signal(s, handler) for s in signums}
    try:
        yield stop
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


