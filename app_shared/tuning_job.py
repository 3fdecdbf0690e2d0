"""A tuning study (:func:`dropedge_explorer.studies.tuning.tune`) in a watched background
thread (the Tuning page)."""
from __future__ import annotations

import pandas as pd

from app_shared.watchdog import DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_SECONDS, WatchedJob
from dropedge_explorer.training import TrainConfig


class TuningJob(WatchedJob):
    """:func:`dropedge_explorer.studies.tuning.tune` in a background thread, stoppable, watched.

    Args:
        base, n_trials, study_name, storage, search, seed, space, graph: as for
            :func:`~dropedge_explorer.studies.tuning.tune` (``include_base=True``: the base
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

        from dropedge_explorer.studies import tuning

        super().__init__("dropedge-tune", idle_timeout, max_seconds)
        optuna.logging.set_verbosity(optuna.logging.WARNING)  # no INFO line per trial in the app's log
        self._tuning = tuning
        self.base, self.n_trials, self.study_name = base, n_trials, study_name
        self.storage = tuning.resolve_storage(storage)
        self.search, self.seed, self.space, self.graph = search, seed, space, graph
        checked = tuning.check_job(n_trials, space)  # tune()'s own checks, raised here at once
        self.study = tuning.open_study(study_name, self.storage, search, seed)
        tuning.check_study(self.study, checked)  # someone else's: refused now
        tuning.check_basis(self.study, base, graph, checked)  # ours, of other settings: refused now
        self.trials_before = len(self.study.get_trials(deepcopy=False))
        self.finished = 0
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


__all__ = ["TuningJob"]
