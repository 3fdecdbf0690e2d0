"""The life cycle every background job shares: one daemon thread and one stop flag.

:class:`ThreadedJob` owns both: its ``__init__`` makes the stop flag and the (not yet
started) thread that runs the subclass's ``_run``; :class:`TrainingWorker`,
:class:`~app_shared.watchdog.WatchedJob` and its sweep and tuning jobs call it through
``super().__init__`` and inherit the controls.
"""
from __future__ import annotations

import threading

from dropedge_core.method.graph import Graph
from dropedge_core.training import RunResult, TrainConfig, train

__all__ = ["ThreadedJob", "TrainingWorker"]


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


class TrainingWorker(ThreadedJob):
    """Runs :func:`train` in a background daemon thread and buffers its events.

    The app polls it from a fragment::

        worker = TrainingWorker(TrainConfig(dataset="cora", num_layers=8))
        events = worker.events_since(seen); seen += len(events)
        ...; worker.stop()

    Attributes / API:
        events_since(i): the events from index ``i`` on (a copy; thread-safe).
        events: all events so far (a copy).
        stop(): ask the run to stop before its next epoch (reason ``"stopped"``).
        done: ``True`` once the thread has finished (normally or with an error).
        result: the :class:`RunResult` (``None`` until done, or after an error).
        error: a one-line message if :func:`train` raised (``None`` otherwise); an
            ``{"type": "error", "message": ...}`` event is appended in that case.
        exception: the exception itself.
        join(timeout): wait for the thread.
    """

    def __init__(self, config: TrainConfig, graph: Graph | None = None, start: bool = True):
        super().__init__("dropedge-train")
        self.config = config
        self.graph = graph
        self._events: list[dict] = []
        self._lock = threading.Lock()
        self.result: RunResult | None = None
        self.error: str | None = None
        self.exception: BaseException | None = None
        if start:
            self.start()

    def _push(self, event: dict) -> None:
        with self._lock:
            self._events.append(event)

    def _run(self) -> None:
        try:
            self.result = train(self.config, self.graph, on_event=self._push, stop_event=self._stop)
        except Exception as exc:  # reported to the poller, never lost in a thread
            self.exception = exc
            self.error = f"{type(exc).__name__}: {exc}".splitlines()[0]
            self._push({"type": "error", "message": self.error})

    def events_since(self, index: int = 0) -> list[dict]:
        with self._lock:
            return list(self._events[index:])

    @property
    def events(self) -> list[dict]:
        return self.events_since(0)
