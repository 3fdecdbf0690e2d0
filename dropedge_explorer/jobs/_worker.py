"""The body of a job's worker process: train each config through the command line's
``train --store`` path and send every event back to the server.

It runs in a fresh interpreter (``multiprocessing``'s ``spawn``: no state of the server's
threads or locks is inherited), at a lower priority than the server (``os.nice``), with
the torch thread count of ``DROPEDGE_TORCH_THREADS``. Each run goes through
:func:`dropedge_explorer.studies.sweep.train_and_store` — the function ``train --store``
calls, its store retries included — so the worker stores its own results. Messages are
``(job_id, run_index, event)``; ``run_index`` is ``None`` for the job's last message
``{"type": "job_done"}``.
"""
from __future__ import annotations

import os
import time

import torch

from dropedge_explorer import env
from dropedge_explorer.store import ResultStore, run_key
from dropedge_explorer.studies import sweep


class _Deadline:
    """A stop flag for one run: the job's stop event, or ``max_seconds`` of wall time passed
    (the trainer asks ``is_set()`` before each epoch)."""

    def __init__(self, stop, max_seconds: float | None):
        self.stop, self.fired = stop, False
        self.deadline = None if max_seconds is None else time.monotonic() + max_seconds

    def is_set(self) -> bool:
        if self.stop.is_set():
            return True
        if self.deadline is not None and time.monotonic() >= self.deadline:
            self.fired = True
        return self.fired


def _one_line(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}".splitlines()[0]


def run_job(job_id: str, configs: list, graph, store_location: str | None, max_seconds: float | None,
            nice: int, events, stop) -> None:
    """Train ``configs`` one after another and put every event on ``events``; a run that
    ends on its own is stored at ``store_location`` by the command line's rule.

    Args:
        job_id (str): the job's id, on every message.
        configs (list[TrainConfig]): the runs, in order.
        graph (Graph, optional): the graph the page loaded (``None``: loaded from the config).
        store_location (str, optional): the results store (``None``: nothing stored).
        max_seconds (float, optional): each run's wall-time limit.
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
    try:
        store = ResultStore(store_location) if store_location else None
        store_note = None
    except Exception as exc:  # a foreign or damaged store: the runs train, none is stored
        store, store_note = None, f"not stored in the results store: {_one_line(exc)}"
    for index, config in enumerate(configs):
        if stop.is_set():
            break
        _run(job_id, index, config, graph, store, store_note, max_seconds, events, stop)
    events.put((job_id, None, {"type": "job_done"}))


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
