"""A training run's settings (:class:`TrainConfig`: one validation, on construction),
its outcome (:class:`RunResult`) and the bounds every front end shares.

Every setting left ``None`` is filled from the named recipe (:mod:`dropedge_explorer.training.recipes`).
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import torch
from dropedge_core import datasets, normalization, samplers
from dropedge_core.echo import bounded
from dropedge_core.limits import MAX_LAYERS
from dropedge_core.models import ModelError, check_backbone

from dropedge_explorer.training import recipes
from dropedge_explorer.training.recipes import DEFAULT_RECIPE

__all__ = [
    "MAX_HIDDEN", "MAX_LR", "MAX_WEIGHT_DECAY", "MAX_EPOCHS", "MAX_SEED", "END_REASONS",
    "UPLOAD_DATASET", "UPLOAD_SPLITS", "ConfigError", "TrainConfig", "resolve_device", "device_name",
    "RunResult",
]

# Bounds of the numeric settings, the same for the CLI, the app and the API:
# beyond them Adam overflows (lr ~3e37), a weight matrix cannot be allocated (hidden),
# or the results store (SQLite int64) and the app's seed picker cannot hold the value.
MAX_HIDDEN = 4096
MAX_LR = 10.0
MAX_WEIGHT_DECAY = 10.0
MAX_EPOCHS = 100_000
MAX_SEED = 2**31 - 1
END_REASONS = ("finished", "early_stop", "stopped", "nan")
#: ``TrainConfig.dataset`` of a user's own graph (:mod:`dropedge_explorer.data.csv_graph`): no name
#: can load it, so :func:`train` needs it passed as ``graph``; its split is per class.
UPLOAD_DATASET = "upload"
UPLOAD_SPLITS: tuple[str, ...] = ("per-class",)


class ConfigError(ValueError):
    """A training setting is out of range or unknown; the message names the value."""


#: Fields are set once, while the config is validated on construction (the class is frozen).
_set = object.__setattr__


@dataclass(frozen=True)
class TrainConfig:
    """Everything that determines a training run (the results store keys on it).

    Rates are **keep** rates. Every setting left ``None`` is filled on construction from
    the named ``recipe`` (:mod:`dropedge_explorer.training.recipes`); the filled values are the
    config (and its key), so ``replace(num_layers=...)`` keeps the other values — build a
    new config to get the recipe's values at another depth. Names are normalised on
    construction (``"APPNP*"`` → ``"appnp_star"``, ``"an"`` → ``"AN"``) and every field is
    validated. The config is frozen: validated once, here, it cannot change afterwards
    (``replace`` makes a new one).

    Args:
        dataset (str, optional): a name of :data:`~dropedge_core.datasets.SOURCES`, or
            ``"upload"`` for a user's graph, which :func:`train` must be given as ``graph``.
            (default: :obj:`"cora"`)
        split (str, optional): one of the dataset's splits (``"per-class"`` for an upload).
            (default: :obj:`None`: the dataset's first split)
        backbone (str, optional): one of :data:`~dropedge_core.models.BACKBONES` or an
            alias. (default: :obj:`"gcn"`)
        recipe (str, optional): one of :data:`~dropedge_explorer.training.recipes.RECIPES`.
            (default: :obj:`"depth"`: settings that train at the run's depth)
        num_layers (int, optional): the depth ``L`` in ``1..MAX_LAYERS``.
            (default: :obj:`None`: the recipe's)
        sampler (str, optional): one of :data:`~dropedge_core.samplers.NAMES`.
            (default: :obj:`"dropedge++"`)
        p_min (float, optional): keep rate of the sparsest layer. (default: :obj:`None`)
        p_max (float, optional): keep rate of the densest layer, ``>= p_min``.
            (default: :obj:`None`)
        p (float, optional): DropEdge's and FD's one keep rate.
            (default: :obj:`None`: ``(p_min + p_max) / 2``)
        kernel (str, optional): the FD/DropEdge++ kernel
            (:data:`~dropedge_core.samplers.KERNELS`). (default: :obj:`"linear"`)
        directed (bool, optional): sample the two directions of an edge separately.
            (default: :obj:`None`)
        normalization (str, optional): one of
            :data:`~dropedge_core.normalization.METHODS`. (default: :obj:`None`)
        hidden (int, optional): hidden width, ``1..MAX_HIDDEN``. (default: :obj:`None`)
        dropout (float, optional): feature dropout in ``[0, 1)``. (default: :obj:`None`)
        lr (float, optional): Adam's learning rate in ``(0, MAX_LR]``. (default: :obj:`None`)
        weight_decay (float, optional): in ``[0, MAX_WEIGHT_DECAY]``. (default: :obj:`None`)
        epochs (int, optional): the epoch budget, ``1..MAX_EPOCHS``. (default: :obj:`None`)
        patience (int, optional): epochs without a new best validation accuracy or loss
            before an early stop; ``0`` disables early stopping. (default: :obj:`None`)
        self_loop (bool, optional): the paper's "Loop". (default: :obj:`None`)
        batch_norm (bool, optional): batch normalisation. (default: :obj:`None`)
        alpha (float, optional): APPNP*'s teleport coefficient in ``[0, 1]``.
            (default: :obj:`None`)
        seed (int, optional): fixes the weights, the dropout masks and the edge samples,
            ``0..MAX_SEED``. (default: :obj:`0`)
        diag_every (int, optional): epochs between diagnostics events; ``0`` disables them.
            (default: :obj:`10`)
        device (str, optional): ``"auto"``, ``"cpu"``, ``"cuda"`` or ``"cuda:<index>"``.
            (default: :obj:`"auto"`)

    Raises:
        ConfigError: a bad value; the message names it and what is allowed.

    Example:
        >>> config = TrainConfig(dataset="karate", num_layers=4)
        >>> config.split, config.p_min, config.p_max, config.hidden, config.normalization
        ('per-class', 0.3, 0.8, 128, 'AN')
        >>> config.replace(num_layers=8).hidden  # the other values are kept
        128
    """

    dataset: str = "cora"
    split: str | None = None
    backbone: str = "gcn"
    recipe: str = DEFAULT_RECIPE
    num_layers: int | None = None
    sampler: str = "dropedge++"
    p_min: float | None = None
    p_max: float | None = None
    p: float | None = None
    kernel: str = "linear"
    directed: bool | None = None
    normalization: str | None = None
    hidden: int | None = None
    dropout: float | None = None
    lr: float | None = None
    weight_decay: float | None = None
    epochs: int | None = None
    patience: int | None = None
    self_loop: bool | None = None
    batch_norm: bool | None = None
    alpha: float | None = None
    seed: int = 0
    diag_every: int = 10
    device: str = "auto"

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> TrainConfig:
        """Check and normalise every field (on construction); raise :class:`ConfigError`."""
        if str(self.dataset).strip().lower() == UPLOAD_DATASET:
            _set(self, "dataset", UPLOAD_DATASET)
            splits = UPLOAD_SPLITS
        else:
            try:
                _set(self, "dataset", datasets.check_name(self.dataset))
            except datasets.DatasetError as exc:
                raise ConfigError(str(exc)) from None
            splits = datasets.SOURCES[self.dataset].splits
        _set(self, "split", splits[0] if self.split is None else str(self.split).strip().lower())
        if self.split not in splits:
            raise ConfigError(f"unknown split {self.split!r} for {self.dataset}; valid: {', '.join(splits)}")
        try:
            _set(self, "backbone", check_backbone(self.backbone))
        except ModelError as exc:
            raise ConfigError(str(exc)) from None
        self._fill_from_recipe()
        _set(self, "sampler", str(self.sampler).strip().lower())
        if self.sampler not in samplers.NAMES:
            raise ConfigError(f"unknown sampler {self.sampler!r}; valid: {', '.join(samplers.NAMES)}")
        _set(self, "kernel", str(self.kernel).strip().lower())
        if self.kernel not in samplers.KERNELS:
            raise ConfigError(f"unknown kernel {self.kernel!r}; valid: {', '.join(samplers.KERNELS)}")
        try:
            _set(self, "normalization", normalization.check_method(self.normalization))
        except normalization.NormalizationError as exc:
            raise ConfigError(str(exc)) from None
        _check_int("num_layers", self.num_layers, 1, MAX_LAYERS)
        for name in ("p_min", "p_max"):
            _check_float(name, getattr(self, name), 0.0, 1.0)
        if self.p_min > self.p_max:
            raise ConfigError(f"p_min must be <= p_max (got p_min={self.p_min}, p_max={self.p_max})")
        if self.p is not None:
            _check_float("p", self.p, 0.0, 1.0)
        _check_int("hidden", self.hidden, 1, MAX_HIDDEN)
        _check_float("dropout", self.dropout, 0.0, 1.0, high_open=True)
        _check_float("lr", self.lr, 0.0, MAX_LR, low_open=True)
        _check_float("weight_decay", self.weight_decay, 0.0, MAX_WEIGHT_DECAY)
        _check_int("epochs", self.epochs, 1, MAX_EPOCHS)
        _check_int("patience", self.patience, 0, MAX_EPOCHS)
        _check_float("alpha", self.alpha, 0.0, 1.0)
        _check_int("seed", self.seed, 0, MAX_SEED)
        _check_int("diag_every", self.diag_every, 0, MAX_EPOCHS)
        for name in ("directed", "self_loop", "batch_norm"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f"{name} must be true or false (got {getattr(self, name)!r})")
        _set(self, "device", str(self.device).strip().lower())
        if not (self.device in ("auto", "cpu") or self.device.startswith("cuda")):
            raise ConfigError(f"unknown device {bounded(self.device)}; valid: auto, cpu, cuda, cuda:<index>")
        for name in ("p_min", "p_max", "p", "dropout", "lr", "weight_decay", "alpha"):
            value = getattr(self, name)
            if value is not None:
                _set(self, name, float(value))
        return self

    def _fill_from_recipe(self) -> None:
        try:
            _set(self, "recipe", recipes.check_recipe(self.recipe))
        except recipes.RecipeError as exc:
            raise ConfigError(str(exc)) from None
        missing = [f for f in (*recipes.RECIPE_FIELDS, "num_layers") if getattr(self, f) is None]
        if not missing:
            return
        if self.recipe in ("paper", "authors") and self.dataset == UPLOAD_DATASET:
            raise ConfigError(f"recipe {self.recipe!r} has no values for your own graph (the paper's presets "
                              "are per dataset); use recipe depth or quick, or give every setting")
        if self.num_layers is not None:
            _check_int("num_layers", self.num_layers, 1, MAX_LAYERS)
        try:
            given = recipes.recipe_fields(self.recipe, self.dataset, self.split, self.backbone,
                                          self.num_layers)
        except recipes.RecipeError as exc:
            raise ConfigError(str(exc)) from None
        for name in missing:
            _set(self, name, given[name])

    @property
    def settings(self) -> str:
        """The recipe and what the run changed of it (:func:`recipes.settings_label`)."""
        return recipes.settings_label(self)

    def to_dict(self) -> dict:
        """The fields as a plain JSON-able dict."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict) -> TrainConfig:
        """Build from a dict; unknown keys raise :class:`ConfigError` naming them."""
        unknown = set(values) - {f.name for f in dataclasses.fields(cls)}
        if unknown:
            raise ConfigError(f"unknown config field(s) {sorted(unknown)}; valid: "
                              f"{', '.join(f.name for f in dataclasses.fields(cls))}")
        return cls(**values)

    def replace(self, **changes) -> TrainConfig:
        """A validated copy with ``changes`` applied."""
        return TrainConfig.from_dict({**self.to_dict(), **changes})


def _check_int(name: str, value, low: int, high: int | None = None) -> None:
    ok = isinstance(value, int) and not isinstance(value, bool) and value >= low
    if ok and high is not None:
        ok = value <= high
    if not ok:
        allowed = f"an integer in {low}..{high}" if high is not None else f"an integer >= {low}"
        raise ConfigError(f"{name} must be {allowed} (got {bounded(value, quote=isinstance(value, str))})")


def _check_float(name: str, value, low: float, high: float, low_open: bool = False,
                 high_open: bool = False) -> None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if ok:
        try:
            ok = not math.isnan(value)
        except OverflowError:  # an int beyond float's range: outside every bound here
            ok = False
    if ok:
        ok = (value > low if low_open else value >= low) and (value < high if high_open else value <= high)
    if not ok:
        lo, hi = "(" if low_open else "[", ")" if high_open else "]"
        rng = f"> {low:g}" if high == math.inf and low_open else (
            f">= {low:g}" if high == math.inf else f"in {lo}{low:g}, {high:g}{hi}")
        raise ConfigError(f"{name} must be {rng} (got {bounded(value, quote=isinstance(value, str))})")


def resolve_device(name: str = "auto") -> torch.device:
    """The device a config's ``device`` names: ``"auto"`` → CUDA when available (the
    paper's setting), else CPU.

    Args:
        name (str, optional): ``"auto"``, ``"cpu"``, ``"cuda"`` or ``"cuda:<index>"``.
            (default: :obj:`"auto"`)

    Returns:
        torch.device: the device.

    Raises:
        ConfigError: CUDA asked for where there is none, or an unknown name.

    Example:
        >>> resolve_device("cpu")
        device(type='cpu')
    """
    name = str(name).strip().lower()
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError(f"device {bounded(name)} asked for but CUDA is not available; use auto or cpu")
    try:
        return torch.device(name)
    except RuntimeError:
        raise ConfigError(f"unknown device {bounded(name)}; valid: auto, cpu, cuda, cuda:<index>") from None


def device_name(device: torch.device) -> str:
    """The name the trainer reports for ``device`` (its start event's ``device_name``):
    the GPU's name on CUDA (``torch.cuda.get_device_name``), else ``"CPU"``.

    Args:
        device (torch.device): the run's device.

    Returns:
        str: the name.
    """
    return torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"


@dataclass
class RunResult:
    """The outcome of one :func:`train` call.

    Args:
        config (TrainConfig): the run's settings.
        reason (str): why it ended, one of :data:`END_REASONS`.
        message (str): the end in words.
        best_epoch (int, optional): the epoch model selection chose (``None`` when no epoch
            finished, e.g. a NaN loss at epoch 1).
        best_val_acc (float, optional): the validation accuracy at ``best_epoch``.
        test_acc (float, optional): the test accuracy at ``best_epoch``.
        epochs_run (int): how many epochs ran.
        total_time (float): the run's wall-clock seconds.
        device (str): where it ran.
        history (list[dict], optional): the epoch events. (default: :obj:`[]`)
        diagnostics (list[dict], optional): the diagnostics events. (default: :obj:`[]`)
        model (torch.nn.Module, optional): the trained model (its state after the last
            epoch run), for views that look inside it; not part of :meth:`summary`.
            (default: :obj:`None`)
        fingerprint (dict, optional): the run's fingerprint recorded as it trained
            (:data:`~dropedge_explorer.training._fingerprint.RUN_PRINT_FIELDS` → 16 hex digits;
            ``{}`` for a result made otherwise); the store keeps it with the run.
            (default: :obj:`{}`)
    """

    config: TrainConfig
    reason: str
    message: str
    best_epoch: int | None
    best_val_acc: float | None
    test_acc: float | None
    epochs_run: int
    total_time: float
    device: str
    history: list[dict] = field(default_factory=list)
    diagnostics: list[dict] = field(default_factory=list)
    #: The trained model (its state after the last epoch run), for views that look
    #: inside it (e.g. :mod:`dropedge_explorer.studies.teaching`); not part of ``to_dict``.
    model: torch.nn.Module | None = field(default=None, repr=False, compare=False)
    fingerprint: dict = field(default_factory=dict)

    @property
    def mean_epoch_time(self) -> float | None:
        times = [e["epoch_time"] for e in self.history]
        return sum(times) / len(times) if times else None

    @property
    def mean_sample_time(self) -> float | None:
        times = [e["sample_time"] for e in self.history]
        return sum(times) / len(times) if times else None

    def summary(self) -> dict:
        """Config, final metrics and the fingerprint recorded as it trained (no curves),
        JSON-able."""
        return {"config": self.config.to_dict(), "reason": self.reason, "message": self.message,
                "best_epoch": self.best_epoch, "best_val_acc": self.best_val_acc,
                "test_acc": self.test_acc, "epochs_run": self.epochs_run,
                "total_time": self.total_time, "device": self.device,
                "mean_epoch_time": self.mean_epoch_time, "mean_sample_time": self.mean_sample_time,
                "fingerprint": dict(self.fingerprint)}

    def to_dict(self) -> dict:
        """Everything, curves included, JSON-able."""
        return {**self.summary(), "history": self.history, "diagnostics": self.diagnostics}
