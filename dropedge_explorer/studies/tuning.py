"""Tuning ``p_min`` / ``p_max`` (and optionally lr, dropout, weight decay) with Optuna.

The paper picks its sampling rates by random search over ``p_min`` and ``p_max'``
(appendix, "Hyper-parameters"); here an Optuna study does it, TPE by default, random
search as an option, maximising **validation** accuracy; the test accuracy of each
trial (at its best validation epoch) is kept as a user attribute and reported for the
best trial only.

The search is over the paper's parametrisation ``(p_min, p_max')`` with
``p_max = p_min + p_max' (1 - p_min)``, so every point satisfies ``p_min <= p_max``;
``p_max`` is stored on each trial as a user attribute.

Pruning: the trainer's per-epoch events feed ``trial.report(val_acc, epoch)``; when
the pruner says so, the run is stopped through the trainer's stop flag and the trial
is marked pruned.

Storage: an Optuna storage URL (``sqlite:///results/tuning.sqlite`` by default), checked
before Optuna touches it (:func:`check_storage`: a new, empty or Optuna database only).
Several worker processes started with the same storage and study name share one study:
each asks the storage for its next trial, so ``N`` workers with ``--trials 4`` finish
``4 N`` trials. A PostgreSQL or MySQL URL (``postgresql://user:pw@host/db``) lets
workers on many machines share one study.
"""
from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence

import numpy as np
import optuna
import pandas as pd
from optuna.trial import TrialState

from dropedge_explorer import sweep_workers
from dropedge_explorer.studies import _trial_budget as trial_budget
from dropedge_explorer.studies._stopping import Interrupted, SignalStop
from dropedge_explorer.studies._tuning_space import (
    BASIS_ATTR,
    FLOAT_RANGES,
    HIDDEN_CHOICES,
    KEEP_SPACES,
    OPTIONAL_PARAMS,
    SPACE_ATTR,
    SearchSpace,
    TuningError,
    check_basis,
    check_study,
    default_study_name,
    make_sampler,
)
from dropedge_explorer.studies._tuning_storage import (
    OPTUNA_MARKERS,
    check_storage,
    engine_options,
    open_study,
    resolve_storage,
    storage_url,
)
from dropedge_explorer.studies.tuning_noise import accuracy_se
from dropedge_explorer.training import ConfigError, RunResult, TrainConfig, train

#: Trials one worker may be asked for at once (``tune --trials``, ``search --trials``, the
#: Tuning page): a typo of 10^12 would run for ever.
MAX_TRIALS = 100_000


def check_job(n_trials: int, space: SearchSpace | None = None) -> SearchSpace:
    """A tuning job's own arguments, checked before any storage is opened: ``n_trials`` an
    integer in ``1..MAX_TRIALS``, ``space`` a :class:`SearchSpace` (``None``: the default
    space, returned).

    Args:
        n_trials (int): the trials asked for.
        space (SearchSpace, optional): the search space (``None``: the default one).
            (default: :obj:`None`)

    Raises:
        TuningError: naming the value and what is allowed.
    """
    if not isinstance(n_trials, int) or isinstance(n_trials, bool) or not 1 <= n_trials <= MAX_TRIALS:
        raise TuningError(f"trials must be an integer in 1..{MAX_TRIALS} (got {n_trials!r})")
    if space is not None and not isinstance(space, SearchSpace):
        raise TuningError(f"space must be a SearchSpace (got {type(space).__name__})")
    return space or SearchSpace()


def _train_trial(trial: optuna.Trial, config: TrainConfig, graph,
                 stop_event: threading.Event | None) -> tuple[RunResult, bool]:
    """Train one trial's config, reporting every epoch's validation accuracy; return the
    result and whether the pruner stopped it. An error is kept on the trial (such a
    failure counts toward a budget) and raised."""
    halt = threading.Event()
    pruned = {"flag": False}

    def on_event(event: dict) -> None:
        if event["type"] != "epoch":
            return
        trial.report(event["val_acc"], event["epoch"])
        if trial.should_prune():
            pruned["flag"] = True
            halt.set()
        if stop_event is not None and stop_event.is_set():
            halt.set()

    try:
        result = train(config, graph=graph, on_event=on_event, stop_event=halt)
    except Exception as exc:
        trial.set_user_attr(trial_budget.ERROR_ATTR, f"{type(exc).__name__}: {exc}".splitlines()[0][:200])
        raise
    return result, pruned["flag"]


def objective(base: TrainConfig, space: SearchSpace, graph=None,
              stop_event: threading.Event | None = None, budget: int | None = None,
              current: dict | None = None) -> Callable[[optuna.Trial], float]:
    """The Optuna objective: train ``base`` with the trial's values, return the best
    validation accuracy; report every epoch's validation accuracy for pruning.

    ``budget``: the study's trial budget across workers (:func:`trial_budget.admits`); a
    trial with no place left raises :class:`~dropedge_explorer.studies._trial_budget.VoidTrial`
    before training. ``current`` (a dict) gets the running trial under ``"trial"``, for
    the caller to void it when a signal cuts it short.

    Args:
        base (TrainConfig): the settings every trial starts from.
        space (SearchSpace): what the trials set.
        graph (Graph, optional): the loaded graph (loaded from ``base`` when ``None``).
            (default: :obj:`None`)
        stop_event (threading.Event, optional): cuts the running trial short when set.
            (default: :obj:`None`)
        budget (int, optional): the study's trial budget across workers
            (:func:`trial_budget.admits`); a trial with no place left raises
            :class:`~dropedge_explorer.studies._trial_budget.VoidTrial` before training.
            (default: :obj:`None`)
        current (dict, optional): gets the running trial under ``"trial"``, for the caller to
            void it when a signal cuts it short. (default: :obj:`None`)
    """
    worker = sweep_workers.worker_id()
    holder = current if current is not None else {}

    def run(trial: optuna.Trial) -> float:
        holder["trial"] = trial
        trial.set_user_attr(trial_budget.WORKER_ATTR, worker)
        if budget is not None and not trial_budget.admits(trial, budget, worker):
            raise trial_budget.VoidTrial("over budget")
        try:
            values = space.suggest(trial)
            config = base.replace(**values)
        except ConfigError as exc:
            trial.set_user_attr(trial_budget.ERROR_ATTR, str(exc).splitlines()[0][:200])
            raise
        if space.keep == "range":
            trial.set_user_attr("p_max", config.p_max)
        trial.set_user_attr("values", values)  # the config fields this trial set
        result, pruned = _train_trial(trial, config, graph, stop_event)
        trial.set_user_attr("test_acc", result.test_acc)
        trial.set_user_attr("best_epoch", result.best_epoch)
        trial.set_user_attr("reason", result.reason)
        if isinstance(stop_event, SignalStop):
            stop_event.check()  # a signal: Interrupted is no Exception; the caller voids the trial
        if pruned:
            raise optuna.TrialPruned()
        if result.best_val_acc is None or (stop_event is not None and stop_event.is_set()):
            raise optuna.TrialPruned()  # nothing to report: stopped or diverged at once
        return result.best_val_acc

    return run


#: How many times a worker that lost the race for a budget's last place tries again.
MAX_RACES = 20


def _optimize(study: optuna.Study, run: Callable, current: dict, n_trials: int, callbacks: list,
              budget: int | None, stop_event: threading.Event | None) -> None:
    """``study.optimize``, voiding the trial a signal cut short (then re-raising
    ``Interrupted``) or the budget refused (then trying again while places are left)."""
    for attempt in range(MAX_RACES):
        if budget is not None and trial_budget.taken(study.get_trials(deepcopy=False)) >= budget:
            return
        try:
            study.optimize(run, n_trials=n_trials, callbacks=callbacks, catch=(ConfigError,))
            return
        except trial_budget.VoidTrial as exc:
            trial_budget.void(study, current.pop("trial", None), exc.reason)
        except Interrupted as exc:
            trial_budget.void(study, current.pop("trial", None), str(exc))
            raise
        trial_budget.retry_pause(attempt, stop_event)


def tune(base: TrainConfig, n_trials: int, study_name: str, storage: str | None = None,
         search: str = "tpe", seed: int | None = None, space: SearchSpace | None = None,
         graph=None, stop_event: threading.Event | None = None, pruner: bool = True,
         callbacks: list | None = None, include_base: bool = False,
         budget: int | None = None) -> optuna.Study:
    """Run ``n_trials`` trials of this worker on the shared study; return the study.

    ``stop_event`` stops after the current trial (the running one is cut short; a signal's
    :class:`~dropedge_explorer.studies._stopping.SignalStop` voids it: it does not count).
    ``include_base`` queues ``base``'s own values (:meth:`SearchSpace.point`) as the
    first trial of a new study, so the search starts from the current setting and its
    best is never worse. ``budget`` caps the study's counted trials across every worker
    (:mod:`~dropedge_explorer.studies._trial_budget`), finished and running.

    Args:
        base (TrainConfig): the settings every trial starts from.
        n_trials (int): the trials of this worker.
        study_name (str): the shared study's name.
        storage (str, optional): an SQLAlchemy URL or a file path (``None``: the default
            tuning storage). (default: :obj:`None`)
        search (str, optional): ``"tpe"`` or ``"random"`` (the paper's random search).
            (default: :obj:`"tpe"`)
        seed (int, optional): the Optuna sampler's seed. (default: :obj:`None`)
        space (SearchSpace, optional): what the trials set (``None``: the default space).
            (default: :obj:`None`)
        graph (Graph, optional): the loaded graph. (default: :obj:`None`)
        stop_event (threading.Event, optional): stops after the current trial (the running
            one is cut short; a signal's :class:`~dropedge_explorer.studies._stopping.SignalStop`
            voids it: it does not count). (default: :obj:`None`)
        pruner (bool, optional): prune trials by the median rule. (default: :obj:`True`)
        callbacks (list, optional): Optuna callbacks, called after each trial.
            (default: :obj:`None`)
        include_base (bool, optional): queue ``base``'s own values
            (:meth:`SearchSpace.point`) as the first trial of a new study, so the search starts
            from the current setting and its best is never worse. (default: :obj:`False`)
        budget (int, optional): caps the study's counted trials across every worker
            (:mod:`~dropedge_explorer.studies._trial_budget`), finished and running.
            (default: :obj:`None`)
    """
    space = check_job(n_trials, space)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = open_study(study_name, storage, search, seed, pruner)
    check_study(study, space)
    check_basis(study, base, graph, space)  # a study of other settings (depth, epochs, ...) is not joined
    trials = study.get_trials(deepcopy=False)
    if include_base and not any(trial_budget.counts(t) or t.state == TrialState.WAITING for t in trials):
        # also after the first trial was voided (a signal cut it): the search starts from base
        study.enqueue_trial(space.point(base))
    cbs = list(callbacks or [])
    if stop_event is not None:
        cbs.append(lambda study, trial: study.stop() if stop_event.is_set() else None)
    if budget is not None:
        cbs.append(lambda study, trial: study.stop()
                   if trial_budget.taken(study.get_trials(deepcopy=False)) >= budget else None)
    current: dict = {}
    _optimize(study, objective(base, space, graph, stop_event, budget, current), current, n_trials, cbs,
              budget, stop_event)
    return study


def trials_frame(study: optuna.Study) -> pd.DataFrame:
    """One row per trial: number, state, val_acc, test_acc, p_min, p_max, p_max', ....

    Args:
        study (optuna.Study): the study read.
    """
    rows = []
    for t in study.get_trials(deepcopy=False):
        row = {"trial": t.number, "state": t.state.name,
               "val_acc": t.value if t.value is not None else math.nan,
               "test_acc": t.user_attrs.get("test_acc"),
               "p_min": t.params.get("p_min"), "p_max": t.user_attrs.get("p_max"),
               "p_max_prime": t.params.get("p_max_prime"), "p": t.params.get("p"),
               "best_epoch": t.user_attrs.get("best_epoch")}
        row.update({k: v for k, v in t.params.items() if k in OPTIONAL_PARAMS})
        rows.append(row)
    return pd.DataFrame(rows)


#: A validation set smaller than this makes one node worth 2 points of accuracy or more.
TINY_VALIDATION = 50


def best_uncertainty(val_acc: float, num_val: int, num_classes: int,
                     trial_values: Sequence[float] = (), top: int = 5) -> dict:
    """How much a study's best validation accuracy can be trusted.

    Args:
        val_acc (float): the best trial's validation accuracy (a fraction).
        num_val (int): validation nodes (the ``n`` of the accuracy).
        num_classes (int): classes; chance is ``1 / num_classes``.
        trial_values (Sequence[float], optional): every finished trial's validation accuracy
            (for the top trials). (default: :obj:`()`)
        top (int, optional): how many of the best trials to compare the best with.
            (default: :obj:`5`)

    Returns:
        ``se``: the standard error of the best accuracy,
        :func:`~dropedge_explorer.studies.tuning_noise.accuracy_se` (the one-sigma Wilson
        half-width: about ``sqrt(p (1 - p) / n)``, never 0, so 100 % on 8 nodes is ± 5.6 points);
        ``chance``; ``near_chance``: the best is within two standard errors (or 5 points)
        of chance; ``tiny``: fewer than :data:`TINY_VALIDATION` validation nodes (one
        node is ``1 / n``); ``ties``: how many of the other top trials lie within two
        standard errors of the best (they are not distinguishable from it); ``top_std``:
        the standard deviation of the top ``top`` trials (NaN below 2).

    Example:
        >>> u = best_uncertainty(0.254, 500, 7)
        >>> round(u["se"], 3), round(u["chance"], 3), u["near_chance"], u["tiny"]
        (0.019, 0.143, False, False)
        >>> best_uncertainty(0.375, 8, 4)["near_chance"]
        True
    """
    if not isinstance(num_val, int | np.integer) or num_val < 1:
        raise TuningError(f"num_val must be a positive integer (got {num_val!r})")
    if not isinstance(num_classes, int | np.integer) or num_classes < 1:
        raise TuningError(f"num_classes must be a positive integer (got {num_classes!r})")
    p = float(val_acc)
    se = accuracy_se(p, int(num_val))
    chance = 1.0 / int(num_classes)
    best_first = sorted((float(v) for v in trial_values if v is not None and not math.isnan(v)),
                        reverse=True)[:top]
    others = best_first[1:] if best_first and math.isclose(best_first[0], p) else best_first
    return {"se": se, "chance": chance, "near_chance": p - chance <= max(2 * se, 0.05),
            "tiny": int(num_val) < TINY_VALIDATION,
            "ties": sum(1 for v in others if p - v <= 2 * se),
            "top_std": float(np.std(best_first, ddof=1)) if len(best_first) >= 2 else math.nan,
            "num_val": int(num_val)}


def best_summary(study: optuna.Study) -> dict | None:
    """The best finished trial: its values, validation and test accuracy (``None`` if none).

    Args:
        study (optuna.Study): the study read.
    """
    done = [t for t in study.get_trials(deepcopy=False) if t.state == optuna.trial.TrialState.COMPLETE]
    if not done:
        return None
    best = study.best_trial
    return {"trial": best.number, "val_acc": best.value, "test_acc": best.user_attrs.get("test_acc"),
            "p_min": best.params.get("p_min"), "p_max": best.user_attrs.get("p_max"),
            "p_max_prime": best.params.get("p_max_prime"), "p": best.params.get("p"),
            **{k: v for k, v in best.params.items() if k in OPTIONAL_PARAMS},
            "finished_trials": len(done)}


# the names callers use, re-exported from the modules the tuning study was split into
__all__ = ["BASIS_ATTR", "FLOAT_RANGES", "HIDDEN_CHOICES", "KEEP_SPACES", "MAX_TRIALS", "OPTIONAL_PARAMS",
           "OPTUNA_MARKERS", "SPACE_ATTR", "SearchSpace", "TuningError", "best_summary",
           "best_uncertainty", "check_basis", "check_job", "check_storage", "check_study",
           "default_study_name", "engine_options", "make_sampler", "objective", "open_study",
           "resolve_storage", "storage_url", "trials_frame", "tune"]
