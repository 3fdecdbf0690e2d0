"""Background jobs for an interactive front end: training runs and tuning studies that
run in threads, are polled, and stop by themselves when nobody polls them any more.

The app's pages start a job on a button, then a Streamlit fragment with ``run_every``
polls it twice a second. A browser tab that is closed (or a page that is left) stops
polling, but a thread keeps running until it is told to stop — for hours on a deep
model, holding a CPU core that other users share. A :class:`Watchdog` closes that gap:
every poll stamps a heartbeat, and a small daemon thread calls the job's ``stop()``
once no heartbeat came for ``idle_timeout`` seconds, or once the job has run for
``max_seconds``. Nothing here imports Streamlit; the per-session objects
(:class:`TrainingSession`, :class:`TuningJob`) live in the session's state, never in
module globals, so two browser sessions never see each other's runs.

Example:
    >>> from dropedge_core.training import TrainConfig
    >>> session = TrainingSession(idle_timeout=60)
    >>> _ = session.submit([TrainConfig(dataset="karate", epochs=5)])  # doctest: +SKIP
    >>> while session.active:                                           # doctest: +SKIP
    ...     session.poll(); time.sleep(0.5)
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import pandas as pd
import torch

from app_shared.background import ThreadedJob, TrainingWorker
from dropedge_core import env, memory, paths
from dropedge_core.figures import BACKBONE_LABELS, sampler_label
from dropedge_core.store import ResultStore
from dropedge_core.studies.sweep import SweepOutcome, run_claimed
from dropedge_core.training import TrainConfig
from dropedge_core.training.config import UPLOAD_DATASET

#: Seconds without a poll after which a job is stopped (``$DROPEDGE_IDLE_TIMEOUT``).
#: Two minutes: a hidden browser tab still polls (Chrome throttles a background tab's
#: timers to about once a minute), a closed one does not.
#: A bad value falls back to the default here (an import must not fail); the app checks
#: every variable at start and refuses to run with one message (:mod:`dropedge_core.env`).
DEFAULT_IDLE_TIMEOUT = env.settings_or_defaults().idle_timeout
#: Longest wall time of one job, polled or not (``$DROPEDGE_MAX_JOB_SECONDS``).
DEFAULT_MAX_SECONDS = env.settings_or_defaults().max_job_seconds
#: End reasons of a Live training run that is put into the results store.
STORED_REASONS: tuple[str, ...] = ("finished", "early_stop")


def _results_store():
    """The results store (``$DROPEDGE_RESULTS``), opened once per path."""
    path = paths.results_store()
    if path not in _STORES:
        _STORES[path] = ResultStore(path)
    return _STORES[path]


_STORES: dict = {}
#: Samplers of the "compare samplers" queue: no dropping, DropEdge, DropEdge++.
COMPARE_SAMPLERS: tuple[str, ...] = ("nodrop", "dropedge", "dropedge++")


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

    Example:
        >>> class Job:
        ...     stopped = False
        ...     def stop(self): self.stopped = True
        >>> job = Job(); dog = Watchdog(job, idle_timeout=0.05)
        >>> time.sleep(0.3); job.stopped, dog.fired
        (True, 'idle')
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
        if self.idle_timeout is not None and self.idle_seconds > self.idle_timeout:
            self.fired = "idle"
        elif self.max_seconds is not None and self.elapsed > self.max_seconds:
            self.fired = "max_seconds"
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
        if self.fired == "idle":
            return (f"stopped by the watchdog: nobody polled the run for {self.idle_timeout:g} s "
                    "(the browser tab was closed or the page left)")
        if self.fired == "max_seconds":
            return f"stopped by the watchdog: the run reached its wall-time limit of {self.max_seconds:g} s"
        return None


class WatchedWorker:
    """A worker (anything with ``stop()``, e.g. a
    :class:`~app_shared.background.TrainingWorker`) plus a :class:`Watchdog` on it.

    :meth:`heartbeat` is the poller's stamp; every other attribute (``events_since``,
    ``done``, ``result``, ``error``, ...) is the worker's.
    """

    def __init__(self, worker, idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT,
                 max_seconds: float | None = DEFAULT_MAX_SECONDS, **watchdog_kwargs):
        self.worker = worker
        self.watchdog = Watchdog(worker, idle_timeout=idle_timeout, max_seconds=max_seconds,
                                 **watchdog_kwargs)

    def heartbeat(self) -> None:
        self.watchdog.heartbeat()

    def stop(self) -> None:
        self.worker.stop()

    def __getattr__(self, name):
        return getattr(self.worker, name)


# --------------------------------------------------------------------------------------
# Training runs of one browser session


def run_label(config: TrainConfig, number: int) -> str:
    """``"#3 DropEdge++ · GCN L=4 · seed 0"``: what a run is, for legends and tables."""
    backbone = BACKBONE_LABELS.get(config.backbone, config.backbone)
    return (f"#{number} {sampler_label(config.sampler)} · {backbone} L={config.num_layers} · "
            f"seed {config.seed}")


#: Columns of :func:`runs_frame`.
SESSION_RUN_COLUMNS: tuple[str, ...] = (
    "run", "dataset", "sampler", "backbone", "layers", "p_min", "p_max", "seed", "status", "epochs",
    "best_epoch", "best_val_acc", "test_acc", "time_s", "epoch_s", "device", "message")


@dataclass
class RunRecord:
    """One training run of a session: its config, the events received so far and,
    once over, how it ended.

    ``status`` is ``"queued"``, ``"running"``, one of the trainer's end reasons
    (``finished``, ``early_stop``, ``stopped``, ``nan``) or ``"error"``; ``message``
    the trainer's end message (or the error), with the watchdog's note when it
    stopped the run.
    """

    number: int
    config: TrainConfig
    label: str
    events: list[dict] = field(default_factory=list)
    status: str = "queued"
    note: str | None = None
    #: The run's key in the results store once it was stored (finished or early stop).
    stored_key: str | None = None

    @property
    def sampler(self) -> str:
        return self.config.sampler

    @property
    def device(self) -> str | None:
        start = next((e for e in self.events if e["type"] == "start"), None)
        return start["device"] if start else None

    @property
    def device_name(self) -> str | None:
        """``"cpu"``, or on CUDA the device and the GPU's name (``"cuda:0 · NVIDIA H200"``)."""
        start = next((e for e in self.events if e["type"] == "start"), None)
        if start is None:
            return None
        name = start.get("device_name")
        return start["device"] if not name or name == "CPU" else f"{start['device']} · {name}"

    @property
    def epoch_time(self) -> float | None:
        """Median seconds per epoch so far (the trainer's ``epoch_time``: sample, normalise,
        step, evaluate; diagnostics not included)."""
        times = sorted(e["epoch_time"] for e in self.events
                       if e["type"] == "epoch" and e.get("epoch_time") is not None)
        return times[len(times) // 2] if times else None

    @property
    def device_memory(self) -> tuple[int, int] | None:
        """``(in use, peak)`` bytes of the run's GPU at its last epoch (the trainer's
        ``memory_in_use`` / ``memory_peak``); ``None`` on the CPU or before the first epoch."""
        last = next((e for e in reversed(self.events) if e["type"] == "epoch"), None)
        if last is None or "memory_peak" not in last:
            return None
        return int(last["memory_in_use"]), int(last["memory_peak"])

    def device_memory_text(self) -> str:
        """``"GPU memory 1.2 GiB in use, peak 3.4 GiB"``, or ``""`` (see :attr:`device_memory`)."""
        figures = self.device_memory
        if figures is None:
            return ""
        return f"GPU memory {memory.human(figures[0])} in use, peak {memory.human(figures[1])}"

    @property
    def end(self) -> dict | None:
        return next((e for e in reversed(self.events) if e["type"] == "end"), None)

    @property
    def error(self) -> str | None:
        err = next((e for e in reversed(self.events) if e["type"] == "error"), None)
        return err["message"] if err else None

    @property
    def history(self) -> list[dict]:
        return [e for e in self.events if e["type"] == "epoch"]

    @property
    def diagnostics(self) -> list[dict]:
        return [e for e in self.events if e["type"] == "diagnostics"]

    @property
    def epochs_done(self) -> int:
        return sum(e["type"] == "epoch" for e in self.events)

    @property
    def over(self) -> bool:
        return self.status not in ("queued", "running")

    @property
    def message(self) -> str:
        if self.error:
            text = self.error
        elif self.end:
            text = self.end["message"]
        else:
            pace = f" · {self.epoch_time:.3f} s/epoch" if self.epoch_time is not None else ""
            text = {"queued": "waiting for the run before it",
                    "running": f"epoch {self.epochs_done} of {self.config.epochs}{pace}"}.get(self.status, "")
        return f"{text}; {self.note}" if self.note else text

    def row(self) -> dict:
        """One row of :func:`runs_frame`."""
        end = self.end or {}
        return {"run": self.label, "dataset": self.config.dataset, "sampler": self.sampler,
                "backbone": self.config.backbone, "layers": self.config.num_layers,
                "p_min": self.config.p_min, "p_max": self.config.p_max, "seed": self.config.seed,
                "status": self.status, "epochs": self.epochs_done, "best_epoch": end.get("best_epoch"),
                "best_val_acc": end.get("best_val_acc"), "test_acc": end.get("test_acc"),
                "time_s": end.get("total_time"), "epoch_s": self.epoch_time, "device": self.device_name,
                "message": self.message}


def runs_frame(runs: Sequence[RunRecord]) -> pd.DataFrame:
    """The runs as a table, one row each (accuracies as fractions)."""
    return pd.DataFrame([r.row() for r in runs], columns=list(SESSION_RUN_COLUMNS))


@dataclass
class PollResult:
    """What changed in one :meth:`TrainingSession.poll`: runs that started or ended
    (a page reruns in full on a change, so its buttons and run lists follow)."""

    started: list[RunRecord] = field(default_factory=list)
    ended: list[RunRecord] = field(default_factory=list)
    new_events: int = 0

    @property
    def changed(self) -> bool:
        return bool(self.started or self.ended)


class TrainingSession:
    """The training runs of one browser session: a queue worked off one run at a time
    in a background thread, every run's events, and a watchdog on the running one.

    Runs start in order: :meth:`submit` queues configs (e.g. the three samplers of
    :data:`COMPARE_SAMPLERS`), and :meth:`poll` — called by the page's fragment —
    collects the running run's new events and, when it is over, starts the next one.
    So a queue only moves while somebody polls, and the watchdog stops the running run
    (and drops the queue) when nobody has for ``idle_timeout`` seconds: a closed tab
    leaves no thread behind.

    Args:
        idle_timeout, max_seconds: the watchdog's limits (see :class:`Watchdog`).
        max_runs: finished runs kept (the oldest are dropped first).
        worker_factory: ``(config, graph) -> worker``; default starts a
            :class:`~app_shared.background.TrainingWorker` (tests pass fakes).
        store: ``() -> ResultStore`` where a run that ends with a result (finished or
            early stop; not stopped, NaN or an error; not an uploaded graph) is put, so
            the Depth study finds it without training it again; default the results
            store of :func:`dropedge_core.paths.results_store`; ``None``: nothing stored.
    """

    def __init__(self, idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT,
                 max_seconds: float | None = DEFAULT_MAX_SECONDS, max_runs: int = 12,
                 worker_factory: Callable | None = None, store: Callable | None = _results_store):
        self.idle_timeout = idle_timeout
        self.store = store
        self.max_seconds = max_seconds
        self.max_runs = max_runs
        self.worker_factory = worker_factory or (lambda config, graph: TrainingWorker(config, graph))
        self.runs: list[RunRecord] = []
        self._pending: list[tuple[RunRecord, object]] = []
        self._current: RunRecord | None = None
        self._worker: WatchedWorker | None = None
        self._seen = 0
        self._count = 0
        self._lock = threading.RLock()
        self._figures: dict[str, tuple[object, object]] = {}

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

    @property
    def watchdog(self) -> Watchdog | None:
        return self._worker.watchdog if self._worker is not None else None

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
            for config in configs:
                self._count += 1
                record = RunRecord(self._count, config, run_label(config, self._count))
                self._pending.append((record, graph))
                self.runs.append(record)
                records.append(record)
            if self._current is None:
                self._start_next()
            return records

    def poll(self) -> PollResult:
        """Heartbeat, collect the running run's new events, start the next run when it
        is over. Cheap: call it as often as the page redraws."""
        with self._lock:
            out = PollResult()
            if self._current is None and self._pending:  # a run was queued while idle
                out.started.append(self._start_next())
            while self._current is not None:
                self._worker.heartbeat()
                new = self._worker.events_since(self._seen)
                self._seen += len(new)
                self._current.events.extend(new)
                out.new_events += len(new)
                if not self._worker.done:
                    break
                record = self._finish()
                out.ended.append(record)
                if record.note and self._pending:  # the watchdog fired: nobody is watching
                    for dropped, _ in self._pending:
                        dropped.status, dropped.note = "stopped", "dropped from the queue by the watchdog"
                        out.ended.append(dropped)
                    self._pending.clear()
                if self._pending:
                    out.started.append(self._start_next())
            return out

    def stop(self) -> None:
        """Stop the running run (it ends with reason ``stopped`` at its next epoch) and
        drop the queued ones."""
        with self._lock:
            for record, _ in self._pending:
                record.status, record.note = "stopped", "dropped from the queue (Stop)"
            self._pending.clear()
            if self._worker is not None:
                self._worker.stop()

    def clear(self) -> None:
        """Forget every run that is over (the running and queued ones stay)."""
        with self._lock:
            self.runs = [r for r in self.runs if not r.over]

    def wait(self, timeout: float = 60.0, interval: float = 0.05) -> bool:
        """Poll until no run is active or ``timeout`` seconds passed (tests, scripts);
        ``True`` when idle."""
        deadline = time.monotonic() + timeout
        while True:
            self.poll()
            if not self.active:
                return True
            if time.monotonic() > deadline:
                return False
            time.sleep(interval)

    # -- internals --------------------------------------------------------------------
    def _start_next(self) -> RunRecord:
        record, graph = self._pending.pop(0)
        record.status = "running"
        self._current, self._seen = record, 0
        try:
            worker = self.worker_factory(record.config, graph)
        except Exception as exc:  # reported on the run, never lost
            record.events.append({"type": "error", "message": f"{type(exc).__name__}: {exc}".splitlines()[0]})
            record.status = "error"
            self._current, self._worker = None, None
            return record
        self._worker = WatchedWorker(worker, self.idle_timeout, self.max_seconds)
        return record

    def _finish(self) -> RunRecord:
        record, dog = self._current, self._worker.watchdog
        dog.cancel()
        end = record.end
        record.status = end["reason"] if end else "error"
        if record.status == "error" and not record.error:
            record.events.append({"type": "error", "message": "the run ended without an end event"})
        record.note = dog.message
        self._store(record, getattr(self._worker, "result", None))
        self._current, self._worker = None, None
        over = [r for r in self.runs if r.over]
        for old in over[: max(0, len(over) - self.max_runs)]:
            self.runs.remove(old)
        return record


    def _store(self, record: RunRecord, result) -> None:
        """Put a run that ended with a result into the results store; a store that fails
        is a note on the run, never an exception in the poll."""
        if (self.store is None or result is None or record.status not in STORED_REASONS
                or record.config.dataset == UPLOAD_DATASET):
            return
        try:
            record.stored_key = self.store().put(result)
        except Exception as exc:  # an unwritable file, a server that refuses: the run itself is fine
            line = f"not stored in the results store: {type(exc).__name__}: {exc}".splitlines()[0]
            record.note = f"{record.note}; {line}" if record.note else line


def device_label(name: str = "auto") -> str:
    """Where training runs, in words: ``"CPU (no CUDA GPU found)"`` or
    ``"CUDA · NVIDIA H100 ..."``."""
    from dropedge_core.training import resolve_device

    device = resolve_device(name)
    if device.type == "cuda":
        return f"CUDA · {torch.cuda.get_device_name(device)}"
    return "CPU" + ("" if torch.cuda.is_available() else " (no CUDA GPU found)")


# --------------------------------------------------------------------------------------
# Sweeps into the results store


class WatchedJob(ThreadedJob):
    """A background job under a :class:`Watchdog`: started once, polled through
    :meth:`heartbeat`; the body's exception becomes :attr:`error` (one line) and the end
    time :attr:`ended_at`. Subclasses set ``idle_timeout``/``max_seconds`` and implement
    :meth:`_body`."""

    idle_timeout: float | None
    max_seconds: float | None
    watchdog: Watchdog | None = None
    error: str | None = None
    exception: BaseException | None = None
    ended_at: float | None = None

    def start(self):
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


class SweepJob(WatchedJob):
    """Train configs one after another in one background thread and put every finished
    run into a :class:`~dropedge_core.store.ResultStore` (the Depth study page's "Run
    missing"; the same as ``python -m dropedge_core sweep`` but stoppable and watched).

    Runs are never redone: each is claimed in the store before it is trained
    (:class:`dropedge_core.claims.ClaimedRuns`), so a run stored meanwhile (another
    session, a CLI sweep) is skipped, and a run that another worker is training now is
    left to it — the job waits for it (or for its lease to run out, when that worker
    died). A run cut short by :meth:`stop` (or the watchdog) is not stored — a partial
    run would pass for a finished one — and its claim is released. A run that fails (an
    exception) is reported in :attr:`failures` and the sweep goes on; a store that cannot
    be written ends it (:attr:`error`).

    Args:
        configs: the runs, in the order to train them.
        store: where finished runs go.
        graph: the loaded graph of the configs' dataset and split (passed to every run;
            required for an uploaded graph); ``None``: each run loads its own.
        idle_timeout, max_seconds: the watchdog's limits (see :class:`Watchdog`).
        train_fn: ``(config, graph, on_event, stop_event) -> RunResult`` (tests pass fakes;
            default :func:`dropedge_core.training.trainer.train`).
        lease: seconds a claim lives without renewal (renewed while a run trains).

    Progress, for a poller: :attr:`stored`, :attr:`skipped`, :attr:`failures`,
    :attr:`waiting` (runs other workers hold), :attr:`current` (the config training now),
    :attr:`epoch` (its last finished epoch), :attr:`progress` (0..1, epochs of the running
    run counted) and :attr:`status` (words).
    """

    def __init__(self, configs: Sequence[TrainConfig], store, graph=None,
                 idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT,
                 max_seconds: float | None = DEFAULT_MAX_SECONDS, train_fn: Callable | None = None,
                 start: bool = True, lease: float | None = None):
        from dropedge_core.claims import DEFAULT_LEASE, ClaimedRuns
        from dropedge_core.training import train

        self.configs = list(configs)  # frozen, validated configs
        self.store = store
        self.graph = graph
        self.train_fn = train_fn or (lambda config, graph, on_event, stop_event: train(
            config, graph, on_event=on_event, stop_event=stop_event))
        self.idle_timeout, self.max_seconds = idle_timeout, max_seconds
        self._stop = threading.Event()
        self._runs = ClaimedRuns(store, self.configs, lease=lease or DEFAULT_LEASE, stop_event=self._stop)
        self.outcome = SweepOutcome()  # filled by the sweep loop while it runs
        self.epoch = 0
        self.error: str | None = None
        self.started_at = time.time()
        self.ended_at: float | None = None
        self._thread = threading.Thread(target=self._run, name="dropedge-sweep", daemon=True)
        self.watchdog: Watchdog | None = None
        if start:
            self.start()

    @property
    def total(self) -> int:
        """Distinct runs asked for."""
        return self._runs.total

    @property
    def skipped(self) -> int:
        """Runs found in the store (stored meanwhile by another session or worker)."""
        return self._runs.skipped

    @property
    def waiting(self) -> int:
        """Runs left that other workers are training (0 while this job trains one)."""
        return self._runs.waiting if self.current is None else 0

    @property
    def over(self) -> int:
        """Configs dealt with: stored, skipped or failed."""
        return self.stored + self.skipped + len(self.failures)

    @property
    def stored(self) -> int:
        """Runs trained and stored by this job."""
        return len(self.outcome.stored_keys)

    @property
    def stored_keys(self) -> list[str]:
        return self.outcome.stored_keys

    @property
    def lost(self) -> int:
        """Runs whose claim another worker took over (it stores them)."""
        return self.outcome.lost

    @property
    def failures(self) -> list[tuple[TrainConfig, str]]:
        return self.outcome.failures

    @property
    def current(self) -> TrainConfig | None:
        """The config training now."""
        return self.outcome.current

    def _on_event(self, event: dict) -> None:
        if event["type"] == "start":
            self.epoch = 0
        elif event["type"] == "epoch":
            self.epoch = event["epoch"]

    def _body(self) -> None:
        # a failing run is recorded and the sweep goes on; a failing store ends it (error)
        run_claimed(self._runs, self.store, self.graph, train_fn=self.train_fn, on_event=self._on_event,
                    stop_event=self._stop, keep_going=True, outcome=self.outcome)

    @property
    def progress(self) -> float:
        """Fraction of the sweep done, the running run's epochs included."""
        if not self.total:
            return 1.0
        current = self.current
        part = min(self.epoch / current.epochs, 1.0) if current is not None and current.epochs else 0.0
        return min((self.over + part) / self.total, 1.0)

    @property
    def status(self) -> str:
        """One line: the running run and the counts while running, how it ended once done."""
        counts = f"{self.stored} of {self.total} runs trained and stored"
        if self.skipped:
            counts += f", {self.skipped} found in the store meanwhile"
        if self.failures:
            counts += f", {len(self.failures)} failed ({self.failures[-1][1]})"
        if not self.done:
            current = self.current
            if self.stopping:
                return f"stopping after the running epoch · {counts}"
            if current is None and self.waiting:
                return (f"waiting for {self.waiting} run(s) that other workers are training "
                        f"(or for their lease to run out) · {counts}")
            if current is None:
                return f"starting · {counts}"
            backbone = BACKBONE_LABELS.get(current.backbone, current.backbone)
            return (f"run {self.over + 1} of {self.total}: {sampler_label(current.sampler)} · "
                    f"{backbone} L={current.num_layers} · seed {current.seed}, epoch {self.epoch} "
                    f"of {current.epochs} · {counts}")
        if self.error:
            return f"failed: {self.error} · {counts}"
        took = f" in {self.ended_at - self.started_at:.1f} s" if self.ended_at else ""
        note = self.watchdog.message if self.watchdog is not None and self.watchdog.fired else None
        if note:
            return f"{counts}; {note}"
        if self.stopping:
            return f"stopped · {counts}{took}"
        return f"finished · {counts}{took}"


# --------------------------------------------------------------------------------------
# Tuning studies


class TuningJob(WatchedJob):
    """:func:`dropedge_core.studies.tuning.tune` in a background thread, stoppable, watched.

    Args:
        base, n_trials, study_name, storage, search, seed, space, graph: as for
            :func:`~dropedge_core.studies.tuning.tune` (``include_base=True``: the base
            config's own ``p_min``/``p_max`` is the first trial of a new study).
        idle_timeout, max_seconds: the watchdog's limits.

    :meth:`stop` ends the study after the running trial, which is itself cut short at
    its next epoch. ``finished`` counts this job's trials so far; ``error`` is a
    one-line message if the study failed (bad storage, ...). :attr:`study` is a handle
    on the study for reading (opened in the caller's thread, so a bad storage URL
    raises at once).
    """

    def __init__(self, base: TrainConfig, n_trials: int, study_name: str,
                 storage: str | None = None, search: str = "tpe", seed: int | None = None,
                 space=None, graph=None, idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT,
                 max_seconds: float | None = DEFAULT_MAX_SECONDS, start: bool = True):
        import optuna

        from dropedge_core.studies import tuning

        optuna.logging.set_verbosity(optuna.logging.WARNING)  # no INFO line per trial in the app's log
        self._tuning = tuning
        self.base, self.n_trials, self.study_name = base, n_trials, study_name
        self.storage = tuning.resolve_storage(storage)
        self.search, self.seed, self.space, self.graph = search, seed, space, graph
        if not isinstance(n_trials, int) or n_trials < 1:
            raise tuning.TuningError(f"trials must be a positive integer (got {n_trials!r})")
        if space is not None and not isinstance(space, tuning.SearchSpace):
            raise tuning.TuningError(f"space must be a SearchSpace (got {type(space).__name__})")
        self.study = tuning.open_study(study_name, self.storage, search, seed)
        tuning.check_study(self.study, space or tuning.SearchSpace())  # someone else's: refused now
        self.trials_before = len(self.study.get_trials(deepcopy=False))
        self.finished = 0
        self.error: str | None = None
        self.exception: BaseException | None = None
        self.started_at = time.time()
        self.ended_at: float | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="dropedge-tune", daemon=True)
        self.idle_timeout, self.max_seconds = idle_timeout, max_seconds
        self.watchdog: Watchdog | None = None
        if start:
            self.start()

    def _on_trial(self, study, trial) -> None:
        self.finished += 1

    def _body(self) -> None:
        self._tuning.tune(self.base, self.n_trials, self.study_name, self.storage,
                          search=self.search, seed=self.seed, space=self.space, graph=self.graph,
                          stop_event=self._stop, callbacks=[self._on_trial], include_base=True)

    @property
    def status(self) -> str:
        """One line: progress while running, how it ended once done."""
        if not self.done:
            verb = "stopping after the running trial" if self.stopping else "running"
            return f"{verb}: {self.finished} of {self.n_trials} trials done"
        if self.error:
            return f"failed: {self.error}"
        note = self.watchdog.message if self.watchdog is not None and self.watchdog.fired else None
        took = f" in {self.ended_at - self.started_at:.1f} s" if self.ended_at else ""
        if note:
            return f"{self.finished} of {self.n_trials} trials done; {note}"
        if self.stopping:
            return f"stopped after {self.finished} of {self.n_trials} trials{took}"
        return f"finished {self.finished} trials{took}"

    def frame(self) -> pd.DataFrame:
        """The study's trials (all workers', earlier runs' too): :func:`tuning.trials_frame`."""
        return self._tuning.trials_frame(self.study)

    def best(self) -> dict | None:
        return self._tuning.best_summary(self.study)


def load_study(study_name: str, storage: str | None = None):
    """The study ``study_name`` in ``storage`` for reading, or ``None`` when there is
    no such study. Nothing is created: a new or empty SQLite file is not touched, and a
    storage that is not an Optuna one (another program's database, the results store, a
    server that refuses) raises :class:`dropedge_core.studies.tuning.TuningError` (one line)."""
    import optuna
    from sqlalchemy.exc import SQLAlchemyError

    from dropedge_core import databases
    from dropedge_core.studies import tuning

    url = tuning.check_storage(storage, create_folder=False)
    file = databases.sqlite_path(url)
    if file is not None and str(file) != ":memory:" and (not file.exists() or file.stat().st_size == 0):
        return None  # no storage yet: reading must not create one
    try:
        return optuna.load_study(study_name=study_name, storage=url)
    except KeyError:
        return None
    except SQLAlchemyError as exc:
        raise tuning.TuningError(f"cannot read the Optuna storage {databases.display(url)!r}: "
                                 f"{databases.error_line(exc)}") from None


def train_request(best: dict, base: TrainConfig, study_name: str) -> dict:
    """The Live training page's pre-fill for a tuned point: the base config's fields
    with the point's ``p_min``/``p_max`` (and lr/dropout/weight decay when tuned), plus
    ``source`` in words (no ``diag_every``: the study ran without diagnostics, the page
    keeps its own)."""
    request = {k: v for k, v in base.to_dict().items() if k not in ("device", "diag_every")}
    for key in ("p_min", "p_max", "lr", "dropout", "weight_decay"):
        if best.get(key) is not None:
            request[key] = float(best[key])
    request["p_max"] = max(request["p_max"], request["p_min"])
    request["source"] = f"study {study_name!r}, trial #{best['trial']}"
    return request


__all__ = ["COMPARE_SAMPLERS", "DEFAULT_IDLE_TIMEOUT", "DEFAULT_MAX_SECONDS", "PollResult",
           "RunRecord", "SweepJob", "TrainingSession", "TuningJob", "WatchedWorker", "Watchdog",
           "device_label", "load_study", "run_label", "runs_frame", "train_request"]
