"""The training engine: one trainer for every backbone × sampler (SPEC §1 "Training").

Full-batch node classification with Adam (+ weight decay). Every epoch draws a fresh
sample of per-layer edge masks, normalises each layer's adjacency and takes one
gradient step; evaluation runs on the full graph (every layer gets the whole, normalised
adjacency) in eval mode. The reported test accuracy is the one at the epoch with the
best validation accuracy (ties: the lower validation loss).

The trainer talks through **events**, plain JSON-able dicts handed to ``on_event`` (the
CLI, the tests and the app consume the same ones); accuracies are fractions in
``[0, 1]``, times in seconds, epochs counted from 1:

* ``{"type": "start", "config": {...}, "device": "cpu", "device_name": "CPU", "num_nodes": N,
  "num_edges": M}`` (``device_name``: the GPU's name on CUDA, ``torch.cuda.get_device_name``)
* ``{"type": "epoch", "epoch": e, "train_loss", "val_loss", "train_acc", "val_acc",
  "test_acc", "epoch_time", "sample_time"}`` — ``train_*`` from the epoch's training
  forward pass (sampled graph, dropout on), ``val_*``/``test_acc`` from the full-graph
  evaluation; ``sample_time`` is sampling + normalisation, ``epoch_time`` the whole
  epoch (sampling, step, evaluation) without diagnostics.
* every ``diag_every`` epochs and at the last epoch: ``{"type": "diagnostics",
  "epoch": e, "layer_distances": [...], "average_distance": x | None, "dirichlet": [...],
  "mad": [...], "subspace_distance": [...], "men": x, "edge_numbers": [...],
  "diag_time": s}`` — per hidden layer of the evaluation forward pass (see
  :mod:`dropedge_core.models` for which outputs), MEN and edge numbers of that epoch's
  sample (estimated from sampled sources, with ``"men_stderr"``, above
  :data:`~dropedge_core.metrics.EXACT_MAX_NODES` nodes).
* ``{"type": "end", "reason": "finished" | "early_stop" | "stopped" | "nan",
  "message": str, "best_epoch": e | None, "best_val_acc", "test_acc", "epochs_run",
  "total_time"}``.

:class:`TrainingWorker` runs :func:`train` in a background thread and buffers its events
for a poller (the app's fragment); if :func:`train` raises, the worker appends
``{"type": "error", "message": str}`` instead of an end event.
"""
from __future__ import annotations

import dataclasses
import math
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

from . import datasets, memory, metrics, normalization, recipes, samplers
from .background import ThreadedJob
from .graph import Graph
from .models import BACKBONES, ModelError, check_backbone, make_model
from .recipes import DEFAULT_RECIPE

MAX_LAYERS = 256
# Bounds of the numeric settings, the same for the CLI, the app and the API (issue 15):
# beyond them Adam overflows (lr ~3e37), a weight matrix cannot be allocated (hidden),
# or the results store (SQLite int64) and the app's seed picker cannot hold the value.
MAX_HIDDEN = 4096
MAX_LR = 10.0
MAX_WEIGHT_DECAY = 10.0
MAX_EPOCHS = 100_000
MAX_SEED = 2**31 - 1
END_REASONS = ("finished", "early_stop", "stopped", "nan")
SPARSE_FEATURES_BELOW = 0.3  # feature density under which X is kept as a sparse matrix
MAD_NODES = 1000  # MAD's node subset: 2000 nodes cost 0.44 s per diagnostics at 16 layers, 1000 0.09 s
#: ``TrainConfig.dataset`` of a user's own graph (:mod:`dropedge_core.upload`): no name
#: can load it, so :func:`train` needs it passed as ``graph``; its split is per class.
UPLOAD_DATASET = "upload"
UPLOAD_SPLITS: tuple[str, ...] = ("per-class",)

# torch flags sparse CSR as beta on every construction; the trainer builds L per epoch
warnings.filterwarnings("ignore", message=r".*Sparse CSR tensor support is in beta.*")
warnings.filterwarnings("ignore", message=r".*Sparse invariant checks are implicitly disabled.*")

# Model initialisation draws from torch's global RNG; the lock keeps concurrent runs
# (TrainingWorker threads) from interleaving their draws, so a seed fixes the weights.
_INIT_LOCK = threading.Lock()


class ConfigError(ValueError):
    """A training setting is out of range or unknown; the message names the value."""


@dataclass
class TrainConfig:
    """Everything that determines a training run (the results store keys on it).

    Rates are **keep** rates. ``split=None`` takes the dataset's default split.
    Every setting left ``None`` (depth, keep rates, normalisation, width, dropout, lr,
    weight decay, epochs, patience, Loop, batch norm, α) is filled on construction from
    the named ``recipe`` (:mod:`dropedge_core.recipes`: ``"depth"`` by default, settings
    that train at the run's depth); the filled values are the config (and its key), so
    ``replace(num_layers=...)`` keeps the other values — build a new config to get the
    recipe's values at another depth.
    ``dataset="upload"`` is a user's uploaded graph (split ``"per-class"``), which
    :func:`train` must be given as ``graph``.
    ``patience`` counts epochs without a new best validation accuracy or loss (``0``
    disables early stopping); ``diag_every = 0`` disables diagnostics. Names are
    normalised on construction (``"APPNP*"`` → ``"appnp*"``, ``"an"`` → ``"AN"``) and
    every field is validated: a bad value raises :class:`ConfigError`.
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
    directed: bool = False
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
        """Check and normalise every field in place; raise :class:`ConfigError`."""
        if str(self.dataset).strip().lower() == UPLOAD_DATASET:
            self.dataset, splits = UPLOAD_DATASET, UPLOAD_SPLITS
        else:
            try:
                self.dataset = datasets.check_name(self.dataset)
            except datasets.DatasetError as exc:
                raise ConfigError(str(exc)) from None
            splits = datasets.SOURCES[self.dataset].splits
        self.split = splits[0] if self.split is None else str(self.split).strip().lower()
        if self.split not in splits:
            raise ConfigError(f"unknown split {self.split!r} for {self.dataset}; valid: {', '.join(splits)}")
        try:
            self.backbone = check_backbone(self.backbone)
        except ModelError as exc:
            raise ConfigError(str(exc)) from None
        self._fill_from_recipe()
        self.sampler = str(self.sampler).strip().lower()
        if self.sampler not in samplers.NAMES:
            raise ConfigError(f"unknown sampler {self.sampler!r}; valid: {', '.join(samplers.NAMES)}")
        self.kernel = str(self.kernel).strip().lower()
        if self.kernel not in samplers.KERNELS:
            raise ConfigError(f"unknown kernel {self.kernel!r}; valid: {', '.join(samplers.KERNELS)}")
        try:
            self.normalization = normalization.check_method(self.normalization)
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
        self.device = str(self.device).strip().lower()
        if not (self.device in ("auto", "cpu") or self.device.startswith("cuda")):
            raise ConfigError(f"unknown device {self.device!r}; valid: auto, cpu, cuda, cuda:<index>")
        for name in ("p_min", "p_max", "p", "dropout", "lr", "weight_decay", "alpha"):
            value = getattr(self, name)
            if value is not None:
                setattr(self, name, float(value))
        return self

    def _fill_from_recipe(self) -> None:
        try:
            self.recipe = recipes.check_recipe(self.recipe)
        except recipes.RecipeError as exc:
            raise ConfigError(str(exc)) from None
        missing = [f for f in (*recipes.RECIPE_FIELDS, "num_layers") if getattr(self, f) is None]
        if not missing:
            return
        if self.recipe == "paper" and self.dataset == UPLOAD_DATASET:
            raise ConfigError("recipe 'paper' has no values for your own graph (the paper's presets "
                              "are per dataset); use recipe depth or quick, or give every setting")
        if self.num_layers is not None:
            _check_int("num_layers", self.num_layers, 1, MAX_LAYERS)
        try:
            given = recipes.recipe_fields(self.recipe, self.dataset, self.split, self.backbone,
                                          self.num_layers)
        except recipes.RecipeError as exc:
            raise ConfigError(str(exc)) from None
        for name in missing:
            setattr(self, name, given[name])

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
        raise ConfigError(f"{name} must be {allowed} (got {value!r})")


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
        raise ConfigError(f"{name} must be {rng} (got {value!r})")


def resolve_device(name: str = "auto") -> torch.device:
    """``"auto"`` → CUDA when available (the paper's setting), else CPU."""
    name = str(name).strip().lower()
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError(f"device {name!r} asked for but CUDA is not available; use auto or cpu")
    try:
        return torch.device(name)
    except RuntimeError:
        raise ConfigError(f"unknown device {name!r}; valid: auto, cpu, cuda, cuda:<index>") from None


class AdjacencyBuilder:
    """Per-layer normalised adjacencies as sparse CSR matrices, fast enough for every epoch.

    The entries every layer draws from (:func:`normalization.entry_index`: the ``2M``
    directions and ``N`` self-loops, already in CSR order) give one fixed CSR pattern;
    every call takes the weights of all layers from :func:`normalization.layer_values`
    (one vectorised pass, dropped edges exactly zero) as that pattern's values. Products
    are the same as with ``normalization.to_sparse(*normalization.adjacencies(...)[l], N)``,
    with no per-layer compaction, permutation, sort or coalesce.

    The values of one call live in one buffer that the **next call reuses** (no fresh
    1.4 GB allocation per epoch on a 1M-node graph, whose page faults cost as much as
    computing it): use a call's matrices before calling again, as the trainer does (one
    call per epoch). :meth:`full` returns matrices of their own.
    """

    def __init__(self, graph: Graph, method: str = "AN"):
        self.graph = graph
        self.method = normalization.check_method(method)
        rows, self.col = normalization.entry_index(graph)
        counts = torch.bincount(rows, minlength=graph.num_nodes)
        self.crow = torch.cat([counts.new_zeros(1), counts.cumsum(0)])
        self.workspace: dict = {}  # the value table and output buffer, reused by every call

    def _csr(self, values: torch.Tensor) -> torch.Tensor:
        n = self.graph.num_nodes
        return torch.sparse_csr_tensor(self.crow, self.col, values, (n, n))

    def __call__(self, masks: torch.Tensor) -> list[torch.Tensor]:
        """``masks`` ``(L, M)`` (or ``(L, 2M)``) bool → ``L`` sparse CSR ``(N, N)``, valid
        until the next call."""
        shape = (masks.size(0), self.col.numel())
        out = self.workspace.get("out")
        if out is None or out.shape != shape:
            out = self.workspace["out"] = torch.empty(shape, device=self.col.device)
        values = normalization.layer_values(self.graph, masks, self.method, out=out,
                                            workspace=self.workspace)
        return [self._csr(v) for v in values]

    def full(self) -> torch.Tensor:
        """The normalised adjacency of the whole graph (evaluation), in a buffer of its own."""
        ones = torch.ones(1, self.graph.num_edges, dtype=torch.bool, device=self.col.device)
        return self._csr(normalization.layer_values(self.graph, ones, self.method)[0])


def prepare_features(x: torch.Tensor) -> torch.Tensor:
    """``x`` as a sparse CSR matrix when it is sparse enough (bag-of-words features),
    else unchanged: ``X W`` of Cora is ~20x faster that way."""
    if x.numel() and float((x != 0).float().mean()) < SPARSE_FEATURES_BELOW:
        return x.to_sparse_csr()
    return x


@dataclass
class RunResult:
    """The outcome of one :func:`train` call.

    ``history`` holds the epoch events, ``diagnostics`` the diagnostics events, ``end``
    the end event; ``test_acc`` is taken at ``best_epoch`` (``None`` when no epoch
    finished, e.g. a NaN loss at epoch 1).
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
    #: inside it (e.g. :mod:`dropedge_core.teaching`); not part of ``to_dict``.
    model: torch.nn.Module | None = field(default=None, repr=False, compare=False)

    @property
    def mean_epoch_time(self) -> float | None:
        times = [e["epoch_time"] for e in self.history]
        return sum(times) / len(times) if times else None

    @property
    def mean_sample_time(self) -> float | None:
        times = [e["sample_time"] for e in self.history]
        return sum(times) / len(times) if times else None

    def summary(self) -> dict:
        """Config and final metrics (no curves), JSON-able."""
        return {"config": self.config.to_dict(), "reason": self.reason, "message": self.message,
                "best_epoch": self.best_epoch, "best_val_acc": self.best_val_acc,
                "test_acc": self.test_acc, "epochs_run": self.epochs_run,
                "total_time": self.total_time, "device": self.device,
                "mean_epoch_time": self.mean_epoch_time, "mean_sample_time": self.mean_sample_time}

    def to_dict(self) -> dict:
        """Everything, curves included, JSON-able."""
        return {**self.summary(), "history": self.history, "diagnostics": self.diagnostics}


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _finite_or_none(value: float) -> float | None:
    return value if math.isfinite(value) else None


def diagnostics(graph: Graph, hidden: list[torch.Tensor], masks: torch.Tensor,
                generator: torch.Generator | None = None, mad_nodes: int = MAD_NODES,
                seed: int = 0) -> dict:
    """Over-smoothing diagnostics of one evaluation pass and one sample of masks.

    Args:
        graph: the graph (on the device of ``hidden``).
        hidden: same-width hidden outputs of the full-graph forward pass.
        masks: the epoch's ``(L, M)`` sample (MEN, edge numbers).
        generator: random source of MEN's sampled sources on big graphs (kept apart
            from training's, so diagnostics never change a run).
        mad_nodes: MAD is an ``S x S`` computation; above this many nodes it uses a
            random subset, the same one (drawn from ``seed``) for every layer and call,
            so that MAD curves over layers and epochs compare like with like.

    Returns:
        ``layer_distances`` (``len(hidden) - 1``), ``average_distance`` (``None`` if
        undefined), ``dirichlet``/``mad``/``subspace_distance`` (one per hidden output),
        ``men``, ``edge_numbers`` (``L``) and, when estimated, ``men_stderr``.
    """
    out = {
        "layer_distances": [float(d) for d in metrics.layer_distances(hidden)],
        "average_distance": _finite_or_none(metrics.average_distance(hidden)),
        "dirichlet": [metrics.dirichlet_energy(h, graph.undirected_edges) for h in hidden],
        "mad": [metrics.mad(h, max_nodes=mad_nodes, generator=torch.Generator().manual_seed(seed))
                for h in hidden],
        "subspace_distance": [metrics.subspace_distance(h, graph) for h in hidden],
    }
    if graph.num_nodes > metrics.EXACT_MAX_NODES:
        est = metrics.men_estimate(graph, masks, generator=generator)
        out.update(men=est.value, men_stderr=est.stderr, edge_numbers=list(est.edge_numbers))
    else:
        counts = metrics.edge_numbers(graph, masks)
        out.update(men=float(sum(counts)) / len(counts), edge_numbers=counts)
    return out


def _accuracy(log_probs: torch.Tensor, y: torch.Tensor, mask: torch.Tensor) -> float:
    if not bool(mask.any()):
        return float("nan")
    correct = int((log_probs[mask].argmax(1) == y[mask]).sum())
    return correct / int(mask.sum())


def check_memory(config: TrainConfig, graph: Graph) -> int:
    """The estimated bytes of training ``config`` on ``graph``
    (:func:`dropedge_core.memory.training_bytes`); raises
    :class:`~dropedge_core.memory.MemoryLimitError` above ``$DROPEDGE_MAX_MEMORY_GB``."""
    return memory.check(
        memory.training_bytes(graph.num_nodes, graph.num_edges, graph.num_features,
                              graph.num_classes, config.num_layers, config.hidden),
        f"training {config.backbone} L={config.num_layers} hidden={config.hidden} on {graph.name} "
        f"(N={graph.num_nodes}, M={graph.num_edges}, {graph.num_features} features)",
        "use fewer layers, a smaller hidden width or a smaller graph")


def check_trainable(config: TrainConfig, graph: Graph) -> None:
    """Refuse, before anything is allocated, a graph training cannot use (no labels, one
    class: every prediction right, 100% says nothing) or a run above the memory limit.

    Raises:
        ConfigError: no labels, one class.
        MemoryLimitError: :func:`check_memory`.
    """
    if graph.num_classes == 0:
        raise ConfigError(f"{graph.name} has no labels: training needs labelled nodes (a labels file)")
    if graph.num_classes == 1:
        raise ConfigError(f"{graph.name} has one class only: every prediction would be right "
                          "(100% accuracy says nothing); training needs at least 2 classes")
    check_memory(config, graph)


def train(config: TrainConfig, graph: Graph | None = None,
          on_event: Callable[[dict], None] | None = None,
          stop_event: threading.Event | None = None) -> RunResult:
    """Train one model; return its :class:`RunResult` and stream events to ``on_event``.

    Args:
        config: the run's settings (validated again here).
        graph: a loaded graph; default ``datasets.load(config.dataset, config.split)``
            (required for ``dataset="upload"``).
        on_event: called with every event dict (see the module docstring), in order.
        stop_event: when set, the run stops before the next epoch (reason ``"stopped"``).

    Everything is placed on the device once before the epoch loop (graph, features,
    kernel weights, the full adjacency); an epoch only samples, normalises, steps and
    evaluates. ``config.seed`` fixes the weights, the dropout masks and the edge samples.
    """
    config.validate()
    emit = on_event or (lambda event: None)
    t_start = time.perf_counter()
    device = resolve_device(config.device)
    if graph is None:
        if config.dataset == UPLOAD_DATASET:
            raise ConfigError(f"dataset {UPLOAD_DATASET!r} needs the uploaded graph (pass graph=...)")
        graph = datasets.load(config.dataset, config.split)
    check_trainable(config, graph)
    g = graph if graph.x.device == device else graph.to(device)
    num_layers = config.num_layers
    sampler = samplers.make(config.sampler, p_min=config.p_min, p_max=config.p_max, p=config.p,
                            kernel=config.kernel, directed=config.directed)
    sampler.weights(g)  # kernel weights computed (and memoised) on the device, once
    builder = AdjacencyBuilder(g, config.normalization)
    full_adjs = [builder.full()] * num_layers
    x = prepare_features(g.x)
    y = g.y
    train_mask, val_mask, test_mask = g.train_mask, g.val_mask, g.test_mask
    if not bool(train_mask.any()):
        raise ConfigError(f"{g.name} has no training nodes in split {config.split!r}")

    with _INIT_LOCK:
        torch.manual_seed(config.seed)
        model = make_model(config.backbone, g.num_features, g.num_classes, num_layers,
                           hidden=config.hidden, dropout=config.dropout,
                           self_loop=config.self_loop, batch_norm=config.batch_norm,
                           alpha=config.alpha).to(device)
    model.generator = torch.Generator(device=device).manual_seed(config.seed + 1)
    sample_gen = torch.Generator(device=device).manual_seed(config.seed)
    diag_gen = torch.Generator().manual_seed(config.seed + 2)
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    static_masks = sampler.relation == "all"  # nodrop: the same graph every epoch

    emit({"type": "start", "config": config.to_dict(), "device": str(device),
          "device_name": torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU",
          "num_nodes": g.num_nodes, "num_edges": g.num_edges})
    history: list[dict] = []
    diags: list[dict] = []
    best = {"epoch": None, "val_acc": -1.0, "val_loss": math.inf, "test_acc": None}
    best_loss_seen, since_improved = math.inf, 0
    reason, message = "finished", ""

    def run_diagnostics(epoch: int, masks: torch.Tensor, hidden: list[torch.Tensor]) -> None:
        t0 = time.perf_counter()
        event = {"type": "diagnostics", "epoch": epoch,
                 **diagnostics(g, hidden, masks, generator=diag_gen, seed=config.seed)}
        event["diag_time"] = time.perf_counter() - t0
        diags.append(event)
        emit(event)

    for epoch in range(1, config.epochs + 1):
        if stop_event is not None and stop_event.is_set():
            reason, message = "stopped", f"stopped by request before epoch {epoch}"
            break
        t0 = time.perf_counter()
        masks = sampler.sample(g, num_layers, generator=sample_gen)
        adjs = full_adjs if static_masks else builder(masks)
        _sync(device)
        sample_time = time.perf_counter() - t0

        model.train()
        optimizer.zero_grad(set_to_none=True)
        out = model(x, adjs)
        loss = F.nll_loss(out[train_mask], y[train_mask])
        if not bool(torch.isfinite(loss.detach())):
            reason = "nan"
            message = (f"training loss became {float(loss.detach())} at epoch {epoch} (learning rate "
                       f"{config.lr} too high?); stopped, curves up to epoch {epoch - 1} kept")
            break
        loss.backward()
        optimizer.step()
        train_acc = _accuracy(out.detach(), y, train_mask)

        diag_now = config.diag_every > 0 and (epoch % config.diag_every == 0 or epoch == config.epochs)
        model.eval()
        with torch.no_grad():
            ev = model(x, full_adjs, return_hidden=diag_now)
            ev, hidden = ev if diag_now else (ev, None)
            val_loss = float(F.nll_loss(ev[val_mask], y[val_mask])) if bool(val_mask.any()) else float("nan")
        if bool(val_mask.any()) and not math.isfinite(val_loss):
            reason = "nan"
            message = (f"validation loss became {val_loss} at epoch {epoch} (learning rate "
                       f"{config.lr} too high?); stopped, curves up to epoch {epoch - 1} kept")
            break
        val_acc, test_acc = _accuracy(ev, y, val_mask), _accuracy(ev, y, test_mask)
        _sync(device)
        event = {"type": "epoch", "epoch": epoch, "train_loss": float(loss.detach()), "val_loss": val_loss,
                 "train_acc": train_acc, "val_acc": val_acc, "test_acc": test_acc,
                 "epoch_time": time.perf_counter() - t0, "sample_time": sample_time}
        history.append(event)
        emit(event)

        # model selection: best validation accuracy, ties broken by the lower loss
        if val_acc > best["val_acc"] or (val_acc == best["val_acc"] and val_loss < best["val_loss"]):
            best.update(epoch=epoch, val_acc=val_acc, val_loss=val_loss, test_acc=test_acc)
            since_improved = 0
        elif val_loss < best_loss_seen:
            since_improved = 0  # early stopping waits while either the accuracy or the loss improves
        else:
            since_improved += 1
        best_loss_seen = min(best_loss_seen, val_loss)
        early = config.patience > 0 and since_improved >= config.patience and epoch < config.epochs

        if diag_now:
            run_diagnostics(epoch, masks, hidden)
        elif early and config.diag_every > 0:  # the last epoch always gets diagnostics
            with torch.no_grad():
                _, hidden = model(x, full_adjs, return_hidden=True)
            run_diagnostics(epoch, masks, hidden)
        if early:
            reason = "early_stop"
            message = (f"early stop at epoch {epoch}: no better validation accuracy or loss "
                       f"for {config.patience} epochs")
            break

    epochs_run = len(history)
    if reason == "finished":
        message = f"finished {epochs_run} epochs"
    total_time = time.perf_counter() - t_start
    result = RunResult(config=config, reason=reason, message=message, best_epoch=best["epoch"],
                       best_val_acc=best["val_acc"] if best["epoch"] is not None else None,
                       test_acc=best["test_acc"], epochs_run=epochs_run, total_time=total_time,
                       device=str(device), history=history, diagnostics=diags, model=model)
    emit({"type": "end", "reason": reason, "message": message, "best_epoch": result.best_epoch,
          "best_val_acc": result.best_val_acc, "test_acc": result.test_acc,
          "epochs_run": epochs_run, "total_time": total_time})
    return result


class TrainingWorker(ThreadedJob):
    """Runs :func:`train` in a background daemon thread and buffers its events.

    The app polls it from a fragment::

        worker = TrainingWorker(TrainConfig(dataset="cora", num_layers=8))
        events = worker.events_since(seen); seen += len(events)
        ...; worker.stop()

    Attributes / API:
        events_since(i): the events from index ``i`` on (a copy; thread-safe).
        events: all events so far (a copy).
        stop(): ask the run to stop before its next epoch (reason ``"stopped"``).
        done: ``True`` once the thread has finished (normally or with an error).
        result: the :class:`RunResult` (``None`` until done, or after an error).
        error: a one-line message if :func:`train` raised (``None`` otherwise); an
            ``{"type": "error", "message": ...}`` event is appended in that case.
        exception: the exception itself.
        join(timeout): wait for the thread.
    """

    def __init__(self, config: TrainConfig, graph: Graph | None = None, start: bool = True):
        self.config = config
        self.graph = graph
        self._events: list[dict] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="dropedge-train", daemon=True)
        self.result: RunResult | None = None
        self.error: str | None = None
        self.exception: BaseException | None = None
        if start:
            self.start()

    def start(self) -> TrainingWorker:
        if not self._thread.is_alive() and not self.done:
            self._thread.start()
        return self

    def _push(self, event: dict) -> None:
        with self._lock:
            self._events.append(event)

    def _run(self) -> None:
        try:
            self.result = train(self.config, self.graph, on_event=self._push, stop_event=self._stop)
        except Exception as exc:  # reported to the poller, never lost in a thread
            self.exception = exc
            self.error = f"{type(exc).__name__}: {exc}".splitlines()[0]
            self._push({"type": "error", "message": self.error})

    def events_since(self, index: int = 0) -> list[dict]:
        with self._lock:
            return list(self._events[index:])

    @property
    def events(self) -> list[dict]:
        return self.events_since(0)



__all__ = ["AdjacencyBuilder", "BACKBONES", "ConfigError", "END_REASONS", "MAX_EPOCHS", "MAX_HIDDEN",
           "MAX_LR", "MAX_SEED", "MAX_WEIGHT_DECAY", "RunResult", "TrainConfig", "TrainingWorker",
           "UPLOAD_DATASET", "UPLOAD_SPLITS", "check_memory", "check_trainable", "diagnostics",
           "prepare_features", "resolve_device", "train"]
