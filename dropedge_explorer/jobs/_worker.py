"""The body of a job's worker process: the command line's own function for the job's kind
— ``train --store`` per config, ``sweep``'s claimed runs, ``tune``'s study — with every
event sent back to the server.

It runs in a fresh interpreter (``multiprocessing``'s ``spawn``: no state of the server's
threads or locks is inherited), at a lower priority than the server (``os.nice``), with
the torch thread count of ``DROPEDGE_TORCH_THREADS``. A ``"train"`` job's runs go through
:func:`dropedge_explorer.studies.sweep.train_and_store` — the function ``train --store``
calls, its store retries included —, a ``"sweep"`` through
:func:`~dropedge_explorer.studies.sweep.run_claimed` (``sweep``'s: each run claimed in
the store first, so none is trained twice by any worker), a ``"tune"`` through
:func:`~dropedge_explorer.studies.tuning.tune`; the worker stores its own results.
Messages are ``(job_id, run_index, event)``; ``run_index`` is ``None`` for the job's own
messages: a sweep's or study's ``{"type": "progress", ...}`` snapshots (sent by one
thread of the worker, :class:`_Reporter`, when they change), a job-wide ``error`` or
``note``, and the last one, ``{"type": "job_done"}``.
"""
from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

import torch

from dropedge_explorer import env
from dropedge_explorer._lazy import lazy_import
from dropedge_explorer.store import ResultStore, run_key
from dropedge_explorer.studies import sweep
from dropedge_explorer.sweep_workers import DEFAULT_LEASE, ClaimedRuns

#: Seconds between a sweep's or study's progress snapshots (sent only when they changed).
REPORT_S = 0.25


class _Deadline:
    """A stop flag for one run (or a whole sweep or study): the job's stop event, or
    ``max_seconds`` of wall time passed (the trainer asks ``is_set()`` before each epoch;
    a sweep waiting for other workers' runs waits on it)."""

    def __init__(self, stop, max_seconds: float | None):
        self.stop, self.fired, self.max_seconds = stop, False, max_seconds
        self.deadline = None if max_seconds is None else time.monotonic() + max_seconds

    def is_set(self) -> bool:
        if self.stop.is_set():
            return True
        if self.deadline is not None and time.monotonic() >= self.deadline:
            self.fired = True
        return self.fired

    def wait(self, timeout: float) -> bool:
        if self.deadline is not None:
            timeout = max(0.0, min(timeout, self.deadline - time.monotonic()))
        self.stop.wait(timeout)
        return self.is_set()

    def note(self, what: str) -> str | None:
        """The note of a limit that fired (``None``: it did not)."""
        return (f"stopped: the wall-time limit of {self.max_seconds:g} s per {what} "
                "(DROPEDGE_MAX_JOB_SECONDS)") if self.fired else None


class _Reporter:
    """One thread of the worker sending ``snapshot()`` as the job's ``progress`` every
    :data:`REPORT_S` seconds when it changed, and once more at :meth:`close` (the loops it
    watches — a sweep waiting for other workers' claims, a study between trials — send
    no events of their own)."""

    def __init__(self, send: Callable[[dict], None], snapshot: Callable[[], dict]):
        self.send, self.snapshot, self.last = send, snapshot, None
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="dropedge-progress", daemon=True)
        self.thread.start()

    def _report(self) -> None:
        now = self.snapshot()
        if now != self.last:
            self.last = now
            self.send({"type": "progress", **now})

    def _loop(self) -> None:
        while not self.done.wait(REPORT_S):
            self._report()

    def close(self) -> None:
        self.done.set()
        self.thread.join()
        self._report()


def _one_line(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}".splitlines()[0]


def run_job(job_id: str, kind: str, configs: list, graph, store_location: str | None, options: dict,
            max_seconds: float | None, nice: int, events, stop) -> None:
    """Run the job and put every event on ``events``; runs that end on their own are
    stored at ``store_location`` by the command line's rule.

    Args:
        job_id (str): the job's id, on every message.
        kind (str): ``"train"``, ``"sweep"`` or ``"tune"``.
        configs (list[TrainConfig]): the runs, in order (a study: its base config).
        graph (Graph, optional): the graph the page loaded (``None``: loaded from the config).
        store_location (str, optional): the results store (``None``: nothing stored).
        options (dict): the kind's settings (:class:`~dropedge_explorer.jobs.queue.Job`).
        max_seconds (float, optional): the wall-time limit of each run of a ``"train"`` job,
            of the whole of a sweep or study.
        nice (int): added to the process's niceness (the server stays responsive).
        events (multiprocessing.Queue): where the messages go.
        stop (multiprocessing.Event): set by the server: the running run ends at its next
            epoch, the rest are not started.
    """
    try:
        os.nice(nice)
    except OSError:  # a platform or container that refuses: the job still runs
        pass
    torch.set_num_threads(env.settings_or_defaults().torch_threads)
    send = lambda event: events.put((job_id, None, event))  # noqa: E731 (the job's own messages)
    try:
        if kind == "train":
            _train_job(job_id, configs, graph, store_location, max_seconds, events, stop)
        else:
            flag = _Deadline(stop, max_seconds)
            body = _sweep_job if kind == "sweep" else _tune_job
            body(configs, graph, store_location, options, flag, send)
            if flag.fired:
                send({"type": "note", "message": flag.note("job")})
    except Exception as exc:  # a store or storage that cannot be used, a failing study
        send({"type": "error", "message": _one_line(exc)})
    send({"type": "job_done"})


def _train_job(job_id: str, configs: list, graph, store_location: str | None, max_seconds: float | None,
               events, stop) -> None:
    """``train --store`` per config, one after another."""
    try:
        store = ResultStore(store_location) if store_location else None
        store_note = None
    except Exception as exc:  # a foreign or damaged store: the runs train, none is stored
        store, store_note = None, f"not stored in the results store: {_one_line(exc)}"
    for index, config in enumerate(configs):
        if stop.is_set():
            break
        _run(job_id, index, config, graph, store, store_note, max_seconds, events, stop)


def _sweep_job(configs: list, graph, store_location: str | None, options: dict, flag: _Deadline,
               send: Callable[[dict], None]) -> None:
    """``sweep``'s loop: each run claimed in the store before it is trained, a failing run
    recorded and the sweep goes on, a run cut short not stored (its claim released)."""
    if not store_location:
        raise ValueError("a sweep needs a results store (DROPEDGE_RESULTS)")
    store = ResultStore(store_location)
    runs = ClaimedRuns(store, configs, lease=options.get("lease") or DEFAULT_LEASE, stop_event=flag)
    outcome, epoch, sizes = sweep.SweepOutcome(), [0], []

    def train_seeds(batch: list, *args, **kwargs) -> list:  # the sizes of the batches trained
        sizes.append(len(batch))
        return sweep.default_train_seeds(batch, *args, **kwargs)

    def on_event(event: dict) -> None:
        if event["type"] in ("start", "epoch"):
            epoch[0] = event.get("epoch", 0)

    def snapshot() -> dict:
        current = outcome.current
        return {"total": runs.total, "skipped": runs.skipped, "waiting": runs.waiting,
                "stored_keys": list(outcome.stored_keys), "failures": list(outcome.failures),
                "lost": outcome.lost, "current": current, "batch": [c.seed for c in outcome.batch],
                "epoch": epoch[0] if current is not None else 0, "batch_sizes": list(sizes)}

    reporter = _Reporter(send, snapshot)
    try:
        sweep.run_claimed(runs, store, graph, on_event=on_event, stop_event=flag, keep_going=True,
                          outcome=outcome, batch_seeds=bool(options.get("batch_seeds")),
                          train_seeds_fn=train_seeds)
    finally:
        reporter.close()


def _tune_job(configs: list, graph, store_location: str | None, options: dict, flag: _Deadline,
              send: Callable[[dict], None]) -> None:
    """``tune``'s study from the base config ``configs[0]``; its trials go to its storage."""
    tuning = lazy_import("dropedge_explorer.studies.tuning")
    finished = [0]
    reporter = _Reporter(send, lambda: {"finished": finished[0]})
    try:
        tuning.tune(configs[0], options["n_trials"], options["study_name"], options["storage"],
                    search=options.get("search", "tpe"), seed=options.get("seed"), space=options.get("space"),
                    graph=graph, stop_event=flag, include_base=True,
                    callbacks=[lambda study, trial: finished.__setitem__(0, finished[0] + 1)])
    finally:
        reporter.close()


def _run(job_id: str, index: int, config, graph, store, store_note: str | None,
         max_seconds: float | None, events, stop) -> None:
    """One run: train and store it, its events (and notes) sent as they come."""
    def send(event: dict) -> None:
        events.put((job_id, index, event))

    send({"type": "run_started"})
    flag = _Deadline(stop, max_seconds)
    ended = []
    try:
        result = sweep.train_and_store(config, store, graph,
                                       on_event=lambda e: (ended.append(e["type"] == "end"), send(e)),
                                       stop_event=flag)
        if store is not None and sweep.should_store(result):
            send({"type": "stored", "key": run_key(config)})
    except Exception as exc:  # after the end event: the store refused; before it: the run failed
        if any(ended):
            send({"type": "note", "message": f"not stored in the results store: {_one_line(exc)}"})
        else:
            send({"type": "error", "message": _one_line(exc)})
    if store_note:
        send({"type": "note", "message": store_note})
    if flag.fired:
        send({"type": "note", "message": f"stopped: the wall-time limit of {max_seconds:g} s per run "
                                          "(DROPEDGE_MAX_JOB_SECONDS)"})
