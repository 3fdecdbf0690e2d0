"""What a tuning study searches, and which study it is.

:class:`SearchSpace` is the space a trial draws from (the paper's ``(p_min, p_max')``, DropEdge's
one ``p`` or nothing, plus optional lr, dropout, weight decay and hidden width);
:func:`check_study` refuses to add trials to a study that is not ours or searches another
space; :func:`check_basis` refuses to mix trials of other settings (another depth, dataset,
epochs, hidden width, any training setting the search does not set, the recipe or the
data) into one study; :func:`default_study_name` names a
study so that two unrelated users of one storage do not share it by accident.
"""
from __future__ import annotations

import getpass
import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

import optuna
import torch
from dropedge_core.samplers import p_max_from_prime, p_max_prime

from dropedge_explorer.training import TrainConfig

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
    :data:`OPTIONAL_PARAMS`): lr, dropout and weight decay in :data:`FLOAT_RANGES`, hidden
    width one of :data:`HIDDEN_CHOICES` (in words: :meth:`extra_help`)."""

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

    @staticmethod
    def extra_help() -> str:
        """The optional settings' ranges in words, written from :data:`FLOAT_RANGES` and
        :data:`HIDDEN_CHOICES` (a page's help quotes the space, never a copy of it).

        Example::

            >>> print(SearchSpace.extra_help().replace("), ", "),\\n"))
            lr in [0.0001, 0.05] (log),
            dropout in [0, 0.8], weight decay in [1e-06, 0.01] (log),
            hidden one of 64, 128
        """
        floats = [f"{name.replace('_', ' ')} in [{low:g}, {high:g}]" + (" (log)" if log else "")
                  for name, (low, high, log) in FLOAT_RANGES.items()]
        return ", ".join([*floats, f"hidden one of {', '.join(map(str, HIDDEN_CHOICES))}"])

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
    wanted = space.describe()
    trials = study.get_trials(deepcopy=False)
    # the mark is read after the trials: a worker marks a new study before its first trial,
    # so a trial seen here comes with its mark (read the other way round, a second worker
    # starting beside the first could see no mark, then the first one's trial: refused)
    attrs = study.user_attrs
    if SPACE_ATTR not in attrs:
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


#: The study attribute recording what every trial's result depends on besides the values
#: searched (:func:`study_basis`), and the settings it holds.
BASIS_ATTR = "dropedge_basis"
#: The settings a trial's result does not depend on (the results store's run key leaves them
#: out too): every other training field is part of a study's basis.
NOT_MEASURED = ("diag_every", "device")


def searched_fields(space: SearchSpace) -> tuple[str, ...]:
    """The :class:`TrainConfig` fields a trial of ``space`` sets (its keep rates, then the
    ``extra`` settings): they differ from trial to trial, so they are not the basis."""
    keep = {"range": ("p_min", "p_max"), "single": ("p",), "none": ()}[space.keep]
    return (*keep, *space.extra)


def data_digest(graph) -> str:
    """A SHA-256 (16 hex digits) of what a trial trains and is judged on: the graph's
    edges, features, labels and split masks (two uploads, or two data folders, under one
    dataset name differ here)."""
    digest = hashlib.sha256()
    for name in ("undirected_edges", "x", "y", "train_mask", "val_mask", "test_mask"):
        t = getattr(graph, name)
        t = (t.to_dense() if t.layout != torch.strided else t).detach().cpu().contiguous()
        digest.update(f"{name}{tuple(t.shape)}{t.dtype}".encode())
        digest.update(t.view(torch.uint8).numpy() if t.dtype == torch.bool else t.numpy())
    return digest.hexdigest()[:16]


def study_basis(base: TrainConfig, graph=None, space: SearchSpace | None = None) -> dict:
    """What a study's trials depend on besides the values searched: every field of ``base``
    but :data:`NOT_MEASURED` and the fields ``space`` searches (:func:`searched_fields`), so
    epochs, hidden width, the recipe and every training setting; with ``graph``, the data
    (:func:`data_digest`; an upload adds its size in words)."""
    skip = {*NOT_MEASURED, *searched_fields(space or SearchSpace())}
    basis = {name: value for name, value in base.to_dict().items() if name not in skip}
    if graph is not None:
        if str(base.dataset).strip().lower() == "upload":
            basis["graph"] = f"{graph.num_nodes} nodes, {graph.num_edges} edges"
        basis["data"] = data_digest(graph)
    return basis


def check_basis(study: optuna.Study, base: TrainConfig, graph=None, space: SearchSpace | None = None) -> None:
    """Refuse to add trials of ``base`` to a study whose trials were run on other settings
    (two ``tune`` runs at different depths, epochs or hidden widths under one ``--study``
    name mixed their trials, and its best trial then answered for neither). A study without
    the record (new, or made before it was kept) gets ``base``'s; a record of an earlier
    version, which kept fewer settings, is compared on those and completed with ``base``'s.

    Raises:
        TuningError: one line naming the study, the settings that differ and their values.
    """
    wanted = study_basis(base, graph, space)
    have = study.user_attrs.get(BASIS_ATTR)
    if not isinstance(have, dict):
        study.set_user_attr(BASIS_ATTR, wanted)
        return
    differ = [name for name in wanted if name in have and have[name] != wanted[name]]
    if differ:
        shown = ", ".join(f"{name} {have[name]!r}, not {wanted[name]!r}" for name in differ)
        raise TuningError(f"study {study.study_name!r} holds trials of other settings ({shown}): its "
                          "trials would mix; give the same settings, or another --study name")
    if set(wanted) - set(have):
        study.set_user_attr(BASIS_ATTR, {**have, **wanted})


def default_study_name(base: TrainConfig, space: SearchSpace | None = None, search: str = "tpe",
                       graph=None) -> str:
    """A study name that two unrelated users of one storage do not share by accident.

    ``dropedge-<user>-<dataset>-<backbone>-L<layers>-<sampler>-<hash>``: the hash covers
    every training setting, the search space and the search, so workers started with
    the same settings by the same user join one study, and anything else gets its own.
    An uploaded graph adds its edges and labels to the hash.
    """
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



