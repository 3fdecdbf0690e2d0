"""One run of a job as its watchers see it: its config, the events its worker process
streamed back so far and how it ended (:class:`RunRecord`), its label, and runs as tables.

The server's reader thread (:class:`~dropedge_explorer.jobs.queue.JobQueue`) appends the
events; pages read them. An append and a status change are single assignments, so a
reader sees a consistent prefix without a lock."""
from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from dropedge_explorer import memory
from dropedge_explorer._lazy import lazy_import
from dropedge_explorer.figures import BACKBONE_LABELS, sampler_label
from dropedge_explorer.training import TrainConfig


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
    """One training run of a job: its config, the events received so far and, once over,
    how it ended.

    ``status`` is ``"queued"``, ``"running"``, one of the trainer's end reasons
    (``finished``, ``early_stop``, ``stopped``, ``nan``) or ``"error"``; ``message``
    the trainer's end message (or the error), with the job's note (a limit, who stopped
    it, a store that refused it).

    Args:
        number (int): its number among its page's runs (``#3``).
        config (TrainConfig): its settings.
        label (str): :func:`run_label`.
    """

    number: int
    config: TrainConfig
    label: str
    events: list[dict] = field(default_factory=list)
    status: str = "queued"
    note: str | None = None
    #: The run's key in the results store once it was stored (``studies.sweep.should_store``).
    stored_key: str | None = None
    #: When it started (``time.monotonic()``; ``None`` while queued): the first epoch's wait.
    started_at: float | None = None

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
            running = f"epoch {self.epochs_done} of {self.config.epochs}{pace}"
            if self.status == "running" and not self.epochs_done:
                running = self._first_epoch()
            text = {"queued": "waiting for its turn", "running": running}.get(self.status, "")
        return f"{text}; {self.note}" if self.note else text

    def _first_epoch(self) -> str:
        """What a run does before its first epoch is reported: on a deep model or a big
        graph this is the longest wait of the run (loading, sampling every layer, the
        first forward and backward pass), and a bar standing at 0 said nothing."""
        since = "" if self.started_at is None else f" · {time.monotonic() - self.started_at:.0f} s so far"
        return (f"first epoch of {self.config.epochs} ({self.config.num_layers} layers): loading the data, "
                f"sampling every layer and the first pass, the slowest epoch of a deep model{since}")

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


def runs_frame(runs: Sequence[RunRecord]):
    """The runs as a table, one row each (accuracies as fractions).

    Args:
        runs (Sequence[RunRecord]): the runs.

    Returns:
        pandas.DataFrame: one row per run, columns :data:`SESSION_RUN_COLUMNS`.
    """
    return lazy_import("pandas").DataFrame([r.row() for r in runs], columns=list(SESSION_RUN_COLUMNS))


def history_frame(runs: Sequence[RunRecord]):
    """Every epoch of the runs, one row each: the run, its sampler and seed, then the
    epoch's numbers as the trainer reported them (losses, accuracies as fractions).

    Args:
        runs (Sequence[RunRecord]): the runs.
    """
    rows = [{"run": r.label, "sampler": r.sampler, "seed": r.config.seed}
            | {k: v for k, v in e.items() if k != "type" and not isinstance(v, (list, dict))}
            for r in runs for e in r.history]
    return lazy_import("pandas").DataFrame(rows)


__all__ = ["SESSION_RUN_COLUMNS", "RunRecord", "history_frame", "run_label", "runs_frame"]
