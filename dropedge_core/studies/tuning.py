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
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import optuna
import pandas as pd
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from dropedge_core import databases, locations, paths
from dropedge_core.method.samplers import p_max_from_prime, p_max_prime
from dropedge_core.studies.stopping import SignalStop
from dropedge_core.training import ConfigError, TrainConfig, train

OPTIONAL_PARAMS = ("lr", "dropout", "weight_decay", "hidden")
#: How a sampler's keep rates are searched: ``range`` = the paper's ``(p_min, p_max')``,
#: ``single`` = DropEdge's one rate ``p``, ``none`` = NoDrop (nothing to search).
KEEP_SPACES = ("range", "single", "none")
HIDDEN_CHOICES = (64, 128)
#: The float settings a trial may draw: ``name -> (low, high, log scale)``.
FLOAT_RANGES: dict[str, tuple[float, float, bool]] = {
    "lr": (1e-4, 5e-2, True), "dropout": (0.0, 0.8, False), "weight_decay": (1e-6, 1e-2, True)}


class TuningError(ValueError):
    """Bad tuning arguments (sampler name, storage URL, parameter names)."""


@dataclass(frozen=True)
class SearchSpace:
    """What a trial draws: the keep rates as ``keep`` says (:data:`KEEP_SPACES`; ``p_min``
    and ``p_max'`` by default), and the settings listed in ``extra`` (subset of
    :data:`OPTIONAL_PARAMS`): lr log-uniform in [1e-4, 5e-2], dropout in [0, 0.8],
    weight decay log-uniform in [1e-6, 1e-2], hidden width one of :data:`HIDDEN_CHOICES`."""

    p_min: tuple[float, float] = (0.05, 1.0)
    p_max_prime: tuple[float, float] = (0.0, 1.0)
    extra: tuple[str, ...] = ()
    keep: str = "range"

    def __post_init__(self) -> None:
        unknown = set(self.extra) - set(OPTIONAL_PARAMS)
        if unknown:
            raise TuningError(f"unknown tuning parameter(s) {sorted(unknown)}; valid: "
                              f"{', '.join(OPTIONAL_PARAMS)}")
        if self.keep not in KEEP_SPACES:
            raise TuningError(f"unknown keep space {self.keep!r}; valid: {', '.join(KEEP_SPACES)}")
        for name, (low, high) in (("p_min", self.p_min), ("p_max_prime", self.p_max_prime)):
            if not 0.0 <= low <= high <= 1.0:
                raise TuningError(f"{name} range must satisfy 0 <= low <= high <= 1 (got {low}, {high})")

    @classmethod
    def for_sampler(cls, sampler: str, extra: Sequence[str] = ()) -> SearchSpace:
        """The space a sampler's keep rates live in: NoDrop has none, DropEdge one
        (``p``), every other sampler the paper's ``(p_min, p_max')``."""
        keep = {"nodrop": "none", "dropedge": "single"}.get(str(sampler).strip().lower(), "range")
        return cls(extra=tuple(extra), keep=keep)

    def describe(self) -> dict:
        """The space as stored on a study (``user_attrs["dropedge_space"]``), JSON-able."""
        out = {"p_min": list(self.p_min), "p_max_prime": list(self.p_max_prime),
               "extra": sorted(self.extra)}
        if self.keep != "range":  # studies made before keep spaces existed stay comparable
            out["keep"] = self.keep
        return out

    def point(self, config: TrainConfig) -> dict:
        """``config``'s own values as this space's trial parameters (to enqueue it),
        each clamped into the space's range."""
        def clamp(v: float, low: float, high: float) -> float:
            return min(max(float(v), low), high)

        out: dict = {}
        if self.keep == "range":
            prime = p_max_prime(config.p_min, config.p_max)
            out = {"p_min": clamp(config.p_min, *self.p_min), "p_max_prime": clamp(prime, *self.p_max_prime)}
        elif self.keep == "single":
            p = config.p if config.p is not None else (config.p_min + config.p_max) / 2  # DropEdge's own rule
            out = {"p": clamp(p, *self.p_min)}
        for name in self.extra:
            if name == "hidden":
                out[name] = min(HIDDEN_CHOICES, key=lambda h: abs(h - config.hidden))
            else:
                out[name] = clamp(getattr(config, name), *FLOAT_RANGES[name][:2])
        return out

    def suggest(self, trial: optuna.Trial) -> dict:
        """Draw one point; returns :class:`TrainConfig` field values."""
        values: dict = {}
        if self.keep == "range":
            p_min = trial.suggest_float("p_min", *self.p_min)
            prime = trial.suggest_float("p_max_prime", *self.p_max_prime)
            values = {"p_min": p_min, "p_max": min(1.0, p_max_from_prime(p_min, prime))}
        elif self.keep == "single":
            values = {"p": trial.suggest_float("p", *self.p_min)}
        for name, (low, high, log) in FLOAT_RANGES.items():  # in OPTIONAL_PARAMS order
            if name in self.extra:
                values[name] = trial.suggest_float(name, low, high, log=log)
        if "hidden" in self.extra:
            values["hidden"] = trial.suggest_categorical("hidden", HIDDEN_CHOICES)
        return values


def make_sampler(name: str = "tpe", seed: int | None = None) -> optuna.samplers.BaseSampler:
    """``"tpe"`` (default) or ``"random"`` (the paper's random search)."""
    key = str(name).strip().lower()
    if key == "tpe":
        return optuna.samplers.TPESampler(seed=seed)
    if key == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    raise TuningError(f"unknown search {name!r}; valid: tpe, random")


def storage_url(storage: str | None) -> str:
    """The storage as a URL, without looking at it (:func:`dropedge_core.locations.parse`): a
    file path means SQLite at that path (``~`` expanded); ``postgresql://`` means psycopg 3."""
    try:
        return locations.parse(storage or paths.tuning_storage(), "Optuna storage").sqlalchemy_url
    except locations.LocationError as exc:
        raise TuningError(str(exc)) from None


def optuna_revisions() -> tuple[str, set[str]]:
    """The storage schema revision this Optuna writes, and every revision it knows (the
    alembic scripts Optuna ships: ``optuna storage upgrade`` moves a known one to the head)."""
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", str(Path(optuna.storages.__file__).parent / "_rdb" / "alembic"))
    script = ScriptDirectory.from_config(config)
    return script.get_current_head(), {r.revision for r in script.walk_revisions()}


def _refuse(contents: databases.Contents) -> None:
    """One line unless the storage is new, empty, or an Optuna storage of this Optuna's
    schema, and writable (:func:`dropedge_core.databases.inspect` looked without writing)."""
    where = f"Optuna storage {contents.where}"
    if contents.kind == "results":
        raise TuningError(f"{where} is the DropEdge results store, not an Optuna storage; give the study "
                          "its own file or database; nothing was written")
    if contents.kind == "foreign":
        raise TuningError(f"{where} is {contents.describe()}, not an Optuna storage; give a new file or "
                          "an empty database; nothing was written")
    if contents.kind == "optuna" and contents.optuna_revision is not None:  # None: being created
        head, known = optuna_revisions()
        made = f"{where} was made by Optuna {contents.optuna_version} (schema {contents.optuna_revision})"
        if contents.optuna_revision not in known:
            raise TuningError(f"{made}, newer than this Optuna {optuna.__version__} reads (schema {head}); "
                              "upgrade Optuna or give another storage; nothing was written")
        if contents.optuna_revision != head:
            raise TuningError(f"{made}, older than this Optuna {optuna.__version__} writes (schema {head}); "
                              "upgrade it with `optuna storage upgrade --storage URL`; nothing was written")
    if not contents.writable:
        if contents.kind == "new":
            raise TuningError(f"cannot create the {where}: its folder is not a writable folder")
        raise TuningError(f"{where} is read-only (trials are written to it); give a writable file; "
                          "nothing was written")


def check_storage(storage: str | None, create_folder: bool = True) -> str:
    """Check an Optuna storage before Optuna touches it; return its URL.

    The location is inspected without writing (:func:`dropedge_core.databases.inspect`): it
    must be new, empty or an Optuna storage of this Optuna's schema, and writable (not a
    directory, a device, a read-only file, another program's database, a view, random bytes
    or text, the results store, a storage of an older or newer Optuna; a server URL must
    name a known scheme whose driver is installed and a server that answers). Anything else
    is one :class:`TuningError` line, and nothing is written. With ``create_folder``, makes
    the folder of a new SQLite file once the check passed.
    """
    url = storage_url(storage)
    try:
        contents = databases.inspect(url, "Optuna storage")
    except databases.DatabaseError as exc:
        raise TuningError(str(exc)) from None
    _refuse(contents)
    file = contents.location.file
    if file is not None and create_folder and str(file) != ":memory:":
        file.parent.mkdir(parents=True, exist_ok=True)
    return url


def resolve_storage(storage: str | None) -> str:
    """:func:`check_storage` (kept under its old name)."""
    return check_storage(storage)


def open_study(study_name: str, storage: str | None = None, search: str = "tpe",
               seed: int | None = None, pruner: bool = True) -> optuna.Study:
    """Create the study, or join it when another worker already created it.

    The storage is checked first (:func:`check_storage`). Workers starting at the same
    moment race to create the storage's tables or the study; the loser gets an integrity
    error, "already exists" or "locked", and tries again (the tables then exist). Any
    other database error is one :class:`TuningError` line at once.
    """
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    url = check_storage(storage)
    where = repr(databases.display(url))
    cannot = f"cannot open the Optuna storage {where}"
    sampler = make_sampler(search, seed)
    for attempt in range(6):
        try:
            rdb = optuna.storages.RDBStorage(
                url, engine_kwargs={"connect_args": {"timeout": 60}} if url.startswith("sqlite") else {})
            return optuna.create_study(
                study_name=study_name, storage=rdb, direction="maximize", sampler=sampler,
                pruner=optuna.pruners.MedianPruner(n_startup_trials=3, n_warmup_steps=20) if pruner
                else optuna.pruners.NopPruner(),
                load_if_exists=True)
        except (IntegrityError, optuna.exceptions.DuplicatedStudyError) as exc:
            error = exc  # another worker created it a moment ago
        except SQLAlchemyError as exc:
            # two workers creating Optuna's tables at once: the loser sees "already exists"
            # (a table, or on PostgreSQL an enum type: ProgrammingError) or "locked" (SQLite)
            if not re.search(r"already exists|locked", str(exc)):
                raise TuningError(f"{cannot}: {databases.error_line(exc)}") from None
            error = exc
        time.sleep(0.2 * (attempt + 1))
    raise TuningError(f"{cannot}: {databases.error_line(error)}")


SPACE_ATTR = "dropedge_space"


def check_study(study: optuna.Study, space: SearchSpace) -> None:
    """Refuse to add trials to a study that is not ours or searches another space.

    A study of the same name in a shared storage may belong to someone else: another
    direction (our trials would then *minimise* validation accuracy), other parameters
    (``KeyError: 'p_min'`` on reading its best trial), or our own study with another
    search space. A new study is marked with :meth:`SearchSpace.describe`.

    Raises:
        TuningError: one line naming the study and what differs.
    """
    name = study.study_name
    directions = [d.name.lower() for d in study.directions]
    if directions != ["maximize"]:
        raise TuningError(f"study {name!r} exists with direction {', '.join(directions)}; this program "
                          f"maximises validation accuracy: pick another --study name")
    attrs = study.user_attrs
    wanted = space.describe()
    if SPACE_ATTR not in attrs:
        trials = study.get_trials(deepcopy=False)
        foreign = sorted({p for t in trials for p in t.params}
                         - {"p_min", "p_max_prime", "p", *OPTIONAL_PARAMS})
        if trials:
            what = f"parameters {', '.join(foreign)}" if foreign else f"{len(trials)} trials"
            raise TuningError(f"study {name!r} was not made by this program (it has {what} and no "
                              f"search-space mark): pick another --study name")
        study.set_user_attr(SPACE_ATTR, wanted)
    elif attrs[SPACE_ATTR] != wanted:
        raise TuningError(f"study {name!r} searches {attrs[SPACE_ATTR]}, not {wanted}: give the same "
                          f"--tune parameters, or another --study name")


def default_study_name(base: TrainConfig, space: SearchSpace | None = None, search: str = "tpe",
                       graph=None) -> str:
    """A study name that two unrelated users of one storage do not share by accident.

    ``dropedge-<user>-<dataset>-<backbone>-L<layers>-<sampler>-<hash>``: the hash covers
    every training setting, the search space and the search, so workers started with
    the same settings by the same user join one study, and anything else gets its own.
    An uploaded graph adds its edges and labels to the hash.
    """
    import getpass
    import hashlib
    import json
    import re

    try:
        user = getpass.getuser()
    except Exception:  # no passwd entry (a container)
        user = "user"
    user = re.sub(r"[^A-Za-z0-9_.-]", "_", user)[:32] or "user"
    digest = hashlib.sha256(json.dumps([base.to_dict(), (space or SearchSpace()).describe(), search],
                                       sort_keys=True, default=str).encode())
    if graph is not None and base.dataset == "upload":
        digest.update(graph.undirected_edges.cpu().numpy().tobytes())
        digest.update(graph.y.cpu().numpy().tobytes())
    return (f"dropedge-{user}-{base.dataset}-{base.backbone}-L{base.num_layers}-"
            f"{base.sampler}-{digest.hexdigest()[:10]}")


def objective(base: TrainConfig, space: SearchSpace, graph=None,
              stop_event: threading.Event | None = None) -> Callable[[optuna.Trial], float]:
    """The Optuna objective: train ``base`` with the trial's values, return the best
    validation accuracy; report every epoch's validation accuracy for pruning."""

    def run(trial: optuna.Trial) -> float:
        values = space.suggest(trial)
        config = base.replace(**values)
        if space.keep == "range":
            trial.set_user_attr("p_max", config.p_max)
        trial.set_user_attr("values", values)  # the config fields this trial set
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

        result = train(config, graph=graph, on_event=on_event, stop_event=halt)
        trial.set_user_attr("test_acc", result.test_acc)
        trial.set_user_attr("best_epoch", result.best_epoch)
        trial.set_user_attr("reason", result.reason)
        if isinstance(stop_event, SignalStop):
            stop_event.check()  # a signal: Interrupted is no Exception, Optuna leaves the trial RUNNING
        if pruned["flag"]:
            raise optuna.TrialPruned()
        if result.best_val_acc is None or (stop_event is not None and stop_event.is_set()):
            raise optuna.TrialPruned()  # nothing to report: stopped or diverged at once
        return result.best_val_acc

    return run


def tune(base: TrainConfig, n_trials: int, study_name: str, storage: str | None = None,
         search: str = "tpe", seed: int | None = None, space: SearchSpace | None = None,
         graph=None, stop_event: threading.Event | None = None, pruner: bool = True,
         callbacks: list | None = None, include_base: bool = False) -> optuna.Study:
    """Run ``n_trials`` trials of this worker on the shared study; return the study.

    ``stop_event`` stops after the current trial (the running one is cut short).
    ``include_base`` queues ``base``'s own values (:meth:`SearchSpace.point`) as the
    first trial of a new study, so the search starts from the current setting and its
    best is never worse.
    """
    if not isinstance(n_trials, int) or n_trials < 1:
        raise TuningError(f"trials must be a positive integer (got {n_trials!r})")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    space = space or SearchSpace()
    study = open_study(study_name, storage, search, seed, pruner)
    check_study(study, space)
    if include_base and not study.get_trials(deepcopy=False):
        study.enqueue_trial(space.point(base), skip_if_exists=True)
    cbs = list(callbacks or [])
    if stop_event is not None:
        cbs.append(lambda study, trial: study.stop() if stop_event.is_set() else None)
    study.optimize(objective(base, space, graph, stop_event),
                   n_trials=n_trials, callbacks=cbs, catch=(ConfigError,))
    return study


def trials_frame(study: optuna.Study) -> pd.DataFrame:
    """One row per trial: number, state, val_acc, test_acc, p_min, p_max, p_max', ...."""
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
        val_acc: the best trial's validation accuracy (a fraction).
        num_val: validation nodes (the ``n`` of the accuracy).
        num_classes: classes; chance is ``1 / num_classes``.
        trial_values: every finished trial's validation accuracy (for the top trials).
        top: how many of the best trials to compare the best with.

    Returns:
        ``se``: the binomial standard error ``sqrt(p (1 - p) / n)`` of the best accuracy;
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
    se = math.sqrt(max(p * (1.0 - p), 0.0) / int(num_val))
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
    """The best finished trial: its values, validation and test accuracy (``None`` if none)."""
    done = [t for t in study.get_trials(deepcopy=False) if t.state == optuna.trial.TrialState.COMPLETE]
    if not done:
        return None
    best = study.best_trial
    return {"trial": best.number, "val_acc": best.value, "test_acc": best.user_attrs.get("test_acc"),
            "p_min": best.params.get("p_min"), "p_max": best.user_attrs.get("p_max"),
            "p_max_prime": best.params.get("p_max_prime"), "p": best.params.get("p"),
            **{k: v for k, v in best.params.items() if k in OPTIONAL_PARAMS},
            "finished_trials": len(done)}
