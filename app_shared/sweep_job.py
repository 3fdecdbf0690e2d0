"""A sweep of training runs into the results store, in a watched background thread (the
Depth study page's "Run missing")."""
from __future__ import annotations

from collections.abc import Callable, Sequence

from app_shared.watchdog import DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_SECONDS, WatchedJob
from dropedge_explorer.figures import BACKBONE_LABELS, sampler_label
from dropedge_explorer.studies.sweep import SweepOutcome, run_claimed
from dropedge_explorer.training import TrainConfig


class SweepJob(WatchedJob):
    """Train configs one after another in one background thread and put every finished
    run into a :class:`~dropedge_explorer.store.ResultStore` (the Depth study page's "Run
    missing"; the same as ``python -m dropedge_core sweep`` but stoppable and watched).

    Runs are never redone: each is claimed in the store before it is trained
    (:class:`dropedge_explorer.sweep_workers.ClaimedRuns`), so a run stored meanwhile (another
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
            default :func:`dropedge_explorer.training.trainer.train`).
        lease: seconds a claim lives without renewal (renewed while a run trains).
        batch_seeds: train the free seeds of a cell together
            (:func:`~dropedge_explorer.studies.sweep.run_claimed`'s ``batch_seeds``).

    Progress, for a poller: :attr:`stored`, :attr:`skipped`, :attr:`failures`,
    :attr:`waiting` (runs other workers hold), :attr:`current` (the config training now),
    :attr:`epoch` (its last finished epoch), :attr:`progress` (0..1, epochs of the running
    run counted) and :attr:`status` (words).
    """

    def __init__(self, configs: Sequence[TrainConfig], store, graph=None,
                 idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT,
                 max_seconds: float | None = DEFAULT_MAX_SECONDS, train_fn: Callable | None = None,
                 start: bool = True, lease: float | None = None, batch_seeds: bool = False):
        from dropedge_explorer.sweep_workers import DEFAULT_LEASE, ClaimedRuns
        from dropedge_explorer.training import train

        super().__init__("dropedge-sweep", idle_timeout, max_seconds)
        self.configs = list(configs)  # frozen, validated configs
        self.store = store
        self.graph = graph
        self.batch_seeds = batch_seeds
        self.train_fn = train_fn or (lambda config, graph, on_event, stop_event: train(
            config, graph, on_event=on_event, stop_event=stop_event))
        self._runs = ClaimedRuns(store, self.configs, lease=lease or DEFAULT_LEASE, stop_event=self._stop)
        self.outcome = SweepOutcome()  # filled by the sweep loop while it runs
        self.epoch = 0
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
                    stop_event=self._stop, keep_going=True, outcome=self.outcome,
                    batch_seeds=self.batch_seeds)

    @property
    def progress(self) -> float:
        """Fraction of the sweep done, the running run's epochs included."""
        if not self.total:
            return 1.0
        current = self.current
        part = min(self.epoch / current.epochs, 1.0) if current is not None and current.epochs else 0.0
        part *= max(len(self.outcome.batch), 1)  # seeds in one batch advance together
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
            seeds = [c.seed for c in self.outcome.batch] or [current.seed]
            which = (f"run {self.over + 1} of {self.total}" if len(seeds) == 1 else
                     f"runs {self.over + 1}–{self.over + len(seeds)} of {self.total} in one batch")
            return (f"{which}: {sampler_label(current.sampler)} · {backbone} L={current.num_layers} · "
                    f"seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))}, epoch {self.epoch} "
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


__all__ = ["SweepJob"]
