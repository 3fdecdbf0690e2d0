"""The training engine: one trainer for every backbone × sampler.

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
  epoch (sampling, step, evaluation) without diagnostics; on CUDA also
  ``"memory_in_use"`` and ``"memory_peak"`` (bytes, :func:`device_memory`).
* every ``diag_every`` epochs and at the last epoch: ``{"type": "diagnostics",
  "epoch": e, "layer_distances": [...], "average_distance": x | None, "dirichlet": [...],
  "mad": [...], "subspace_distance": [...], "men": x, "edge_numbers": [...],
  "diag_time": s}`` — per hidden layer of the evaluation forward pass (see
  :mod:`dropedge_core.models` for which outputs), MEN and edge numbers of that epoch's
  sample (estimated from sampled sources, with ``"men_stderr"``, above
  :data:`~dropedge_core.metrics.EXACT_ALLOWED_MAX_NODES` nodes).
* ``{"type": "end", "reason": "finished" | "early_stop" | "stopped" | "nan",
  "message": str, "best_epoch": e | None, "best_val_acc", "test_acc", "epochs_run",
  "total_time"}``.

Settings: :mod:`dropedge_explorer.training.config`; model selection: :mod:`.selection`.
"""
from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from dropedge_core import datasets, metrics, samplers
from dropedge_core.graph import Graph, to_csr
from dropedge_core.normalization import AdjacencyBuilder

from dropedge_explorer.training._fingerprint import TrainingPrint
from dropedge_explorer.training._seeding import build_model, make_sampler, seed_streams
from dropedge_explorer.training._selection import make_selection
from dropedge_explorer.training.checks import check_trainable
from dropedge_explorer.training.config import (
    UPLOAD_DATASET,
    ConfigError,
    RunResult,
    TrainConfig,
    device_name,
    resolve_device,
)

__all__ = [
    "MAD_NODES", "prepare_features", "device_memory",
    "diagnostics", "train",
]

SPARSE_FEATURES_BELOW = 0.3  # feature density under which X is kept as a sparse matrix
MAD_NODES = metrics.MAD_NODES  # the diagnostics' MAD subset (its home: metrics, read by the memory estimate)

def prepare_features(x: torch.Tensor) -> torch.Tensor:
    """``x`` as a sparse CSR matrix when it is sparse enough (bag-of-words features),
    else unchanged: ``X W`` of Cora is ~20x faster that way.

    Args:
        x (Tensor): ``(N, C)`` dense features.

    Returns:
        Tensor: ``(N, C)``, sparse CSR when under :data:`SPARSE_FEATURES_BELOW` non-zero,
        else ``x`` itself.

    Example:
        >>> prepare_features(torch.eye(4)).layout  # 25% non-zero
        torch.sparse_csr
    """
    if x.numel() and float((x != 0).float().mean()) < SPARSE_FEATURES_BELOW:
        return to_csr(x)
    return x


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def device_memory(device: torch.device) -> dict:
    """``{"memory_in_use": bytes, "memory_peak": bytes}`` of a CUDA device: what torch's
    tensors hold now and the most they held since the run started
    (``torch.cuda.memory_allocated`` / ``max_memory_allocated``; runs in parallel threads on
    one device share the figures); ``{}`` on the CPU.

    Args:
        device (torch.device): the run's device.

    Returns:
        dict: the two figures in bytes, or ``{}``.
    """
    if device.type != "cuda":
        return {}
    return {"memory_in_use": torch.cuda.memory_allocated(device),
            "memory_peak": torch.cuda.max_memory_allocated(device)}


def _finite_or_none(value: float) -> float | None:
    return value if math.isfinite(value) else None


def diagnostics(graph: Graph, hidden: list[torch.Tensor], masks: torch.Tensor,
                generator: torch.Generator | None = None, mad_nodes: int = MAD_NODES,
                seed: int = 0) -> dict:
    """Over-smoothing diagnostics of one evaluation pass and one sample of masks.

    Args:
        graph (Graph): the graph (on the device of ``hidden``).
        hidden (list[Tensor]): same-width hidden outputs ``(N, F)`` of the full-graph
            forward pass.
        masks (Tensor): the epoch's ``(L, M)`` sample (MEN, edge numbers).
        generator (torch.Generator, optional): random source of MEN's sampled sources on
            big graphs (kept apart from training's, so diagnostics never change a run).
            (default: :obj:`None`)
        mad_nodes (int, optional): MAD is an ``S x S`` computation; above this many nodes
            it uses a random subset, the same one for every layer and call, so that MAD
            curves over layers and epochs compare like with like. (default: :data:`MAD_NODES`)
        seed (int, optional): the seed of that subset. (default: :obj:`0`)

    Returns:
        dict: ``layer_distances`` (``len(hidden) - 1``), ``average_distance`` (``None`` if
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
    est = metrics.men_measure(graph, masks, generator=generator)
    if est.sources < graph.num_nodes:
        out.update(men=est.value, men_stderr=est.stderr, edge_numbers=list(est.edge_numbers))
    else:
        out.update(men=est.value, edge_numbers=[int(round(c)) for c in est.edge_numbers])
    return out


def _accuracy(log_probs: torch.Tensor, y: torch.Tensor, mask: torch.Tensor) -> float:
    count = int(mask.sum())
    return int((log_probs[mask].argmax(1) == y[mask]).sum()) / count if count else float("nan")


class _RunEnd(Exception):
    """A step ends the run early (a NaN loss): ``args`` are the end's reason and message."""


@dataclass
class _Run:
    """Everything an epoch needs, placed on the device once (:func:`_prepare`)."""
    config: TrainConfig
    device: torch.device
    graph: Graph
    sampler: samplers.EdgeSampler
    builder: AdjacencyBuilder
    full_adjs: list[torch.Tensor]  # the whole graph at every layer (evaluation, NoDrop)
    x: torch.Tensor
    model: torch.nn.Module
    optimizer: torch.optim.Optimizer
    sample_gen: torch.Generator  # edge samples
    diag_gen: torch.Generator  # diagnostics' own (never changes a run)
    prints: TrainingPrint  # the run's fingerprint, made as it trains
    history: list[dict] = field(default_factory=list)
    diagnostics: list[dict] = field(default_factory=list)


def _prepare_graph(config: TrainConfig, graph: Graph | None
                   ) -> tuple[torch.device, Graph, samplers.EdgeSampler, AdjacencyBuilder]:
    """Load and check the graph, then build what every seed of ``config`` shares: ``(device,
    graph on the device, sampler with its kernel weights, adjacency builder)``."""
    device = resolve_device(config.device)
    if graph is None:
        if config.dataset == UPLOAD_DATASET:
            raise ConfigError(f"dataset {UPLOAD_DATASET!r} needs the uploaded graph (pass graph=...)")
        graph = datasets.load(config.dataset, config.split)
    check_trainable(config, graph)
    g = graph if graph.x.device == device else graph.to(device)
    sampler = make_sampler(config, g)
    builder = AdjacencyBuilder(g, config.normalization)
    if not bool(g.train_mask.any()):
        raise ConfigError(f"{g.name} has no training nodes in split {config.split!r}")
    return device, g, sampler, builder


def _prepare(config: TrainConfig, graph: Graph | None) -> _Run:
    """Load and check the graph, then build the sampler, adjacencies, model and optimiser."""
    device, g, sampler, builder = _prepare_graph(config, graph)
    model = build_model(config, g, device)
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    sample_gen, diag_gen = seed_streams(config, device)
    return _Run(config=config, device=device, graph=g, sampler=sampler, builder=builder,
                full_adjs=[builder.full()] * config.num_layers, x=prepare_features(g.x), model=model,
                optimizer=optimizer, sample_gen=sample_gen, diag_gen=diag_gen, prints=TrainingPrint(model))


def _nll(log_probs: torch.Tensor, y: torch.Tensor, mask: torch.Tensor) -> float:
    return float(F.nll_loss(log_probs[mask], y[mask])) if bool(mask.any()) else float("nan")


def _train_step(run: _Run, epoch: int) -> tuple[torch.Tensor, torch.Tensor, float, float]:
    """Sample and step: ``(masks, training pass's log-probs (pre-step), loss, sample time)``."""
    t0 = time.perf_counter()
    g, config = run.graph, run.config
    masks = run.sampler.sample(g, config.num_layers, generator=run.sample_gen)
    adjs = run.full_adjs if run.sampler.relation == "all" else run.builder(masks)  # nodrop: same graph
    _sync(run.device)
    sample_time = time.perf_counter() - t0
    run.model.train()
    run.optimizer.zero_grad(set_to_none=True)
    out = run.model(run.x, adjs)
    loss = F.nll_loss(out[g.train_mask], g.y[g.train_mask])
    if not bool(torch.isfinite(loss.detach())):
        raise _RunEnd("nan", f"training loss became {float(loss.detach())} at epoch {epoch} (learning rate "
                             f"{config.lr} too high?); stopped, curves up to epoch {epoch - 1} kept")
    loss.backward()
    run.optimizer.step()
    return masks, out.detach(), float(loss.detach()), sample_time


def _evaluate(run: _Run, epoch: int, hidden: bool) -> tuple[torch.Tensor, list | None, float]:
    """The full-graph evaluation pass: ``(log-probs, hidden outputs or None, val loss)``."""
    g = run.graph
    run.model.eval()
    with torch.no_grad():
        ev = run.model(run.x, run.full_adjs, return_hidden=hidden)
        ev, outputs = ev if hidden else (ev, None)
        val_loss = _nll(ev, g.y, g.val_mask)
    if bool(g.val_mask.any()) and not math.isfinite(val_loss):
        raise _RunEnd("nan", f"validation loss became {val_loss} at epoch {epoch} (learning rate "
                             f"{run.config.lr} too high?); stopped, curves up to epoch {epoch - 1} kept")
    return ev, outputs, val_loss


def _run_diagnostics(run: _Run, epoch: int, masks: torch.Tensor, hidden: list[torch.Tensor],
                     emit: Callable[[dict], None]) -> None:
    """Diagnostics of ``hidden`` and the epoch's ``masks``, recorded and emitted."""
    t0 = time.perf_counter()
    event = {"type": "diagnostics", "epoch": epoch,
             **diagnostics(run.graph, hidden, masks, generator=run.diag_gen, seed=run.config.seed)}
    event["diag_time"] = time.perf_counter() - t0
    run.diagnostics.append(event)
    emit(event)


def _epoch(run: _Run, epoch: int, best, emit: Callable[[dict], None]) -> bool:
    """One epoch: step, evaluate, record, select; ``True`` when early stopping says stop."""
    config, g = run.config, run.graph
    t0 = time.perf_counter()
    masks, out, loss, sample_time = _train_step(run, epoch)
    train_acc = _accuracy(out, g.y, g.train_mask)
    diag_now = config.diag_every > 0 and (epoch % config.diag_every == 0 or epoch == config.epochs)
    ev, hidden, val_loss = _evaluate(run, epoch, diag_now)
    val_acc, test_acc = _accuracy(ev, g.y, g.val_mask), _accuracy(ev, g.y, g.test_mask)
    _sync(run.device)
    event = {"type": "epoch", "epoch": epoch, "train_loss": loss, "val_loss": val_loss,
             "train_acc": train_acc, "val_acc": val_acc, "test_acc": test_acc,
             "epoch_time": time.perf_counter() - t0, "sample_time": sample_time, **device_memory(run.device)}
    run.prints.epoch(masks)  # an epoch counts (history, fingerprint) once it completed
    run.history.append(event)
    emit(event)
    train_val = _nll(out, g.y, g.val_mask) if best.uses_train_val_loss else math.nan
    early = best.update(epoch, val_acc, val_loss, test_acc, train_val) and epoch < config.epochs
    if diag_now:
        _run_diagnostics(run, epoch, masks, hidden, emit)
    elif early and config.diag_every > 0:  # the last epoch always gets diagnostics
        with torch.no_grad():
            _, hidden = run.model(run.x, run.full_adjs, return_hidden=True)
        _run_diagnostics(run, epoch, masks, hidden, emit)
    return early


def _run_epochs(run: _Run, best, emit: Callable[[dict], None],
                stop_event: threading.Event | None) -> tuple[str, str]:
    """The epoch loop; returns the end's ``(reason, message)``."""
    config = run.config
    for epoch in range(1, config.epochs + 1):
        if stop_event is not None and stop_event.is_set():
            return "stopped", f"stopped by request before epoch {epoch}"
        try:
            if _epoch(run, epoch, best, emit):
                return "early_stop", (f"early stop at epoch {epoch}: no better validation accuracy or "
                                      f"loss for {config.patience} epochs")
        except _RunEnd as end:
            return end.args
    return "finished", f"finished {len(run.history)} epochs"


def train(config: TrainConfig, graph: Graph | None = None,
          on_event: Callable[[dict], None] | None = None,
          stop_event: threading.Event | None = None) -> RunResult:
    """Train one model; return its :class:`RunResult` and stream events to ``on_event``.

    Everything is placed on the device once (:func:`_prepare`); an epoch only samples,
    normalises, steps and evaluates (:func:`_epoch`). ``config.seed`` fixes the weights, the
    dropout masks and the edge samples. Model selection: :func:`.selection.make_selection`.

    Args:
        config (TrainConfig): the run's settings.
        graph (Graph, optional): a loaded graph (required for ``dataset="upload"``).
            (default: :obj:`None`: ``datasets.load(config.dataset, config.split)``)
        on_event (Callable[[dict], None], optional): called with every event dict (see
            the module docstring), in order. (default: :obj:`None`)
        stop_event (threading.Event, optional): when set, the run stops before the next
            epoch (reason ``"stopped"``). (default: :obj:`None`)

    Returns:
        RunResult: the end, the chosen epoch's accuracies, the curves and the model.

    Raises:
        ConfigError: an upload given no graph, or a graph without labels, a second
            class or training nodes.
        MemoryLimitError: the run's estimate is above the device's memory limit
            (:func:`~dropedge_explorer.training.checks.check_memory`).

    Example:
        >>> events = []
        >>> config = TrainConfig(dataset="karate", num_layers=2, epochs=5, device="cpu")
        >>> result = train(config, on_event=events.append)
        >>> result.reason, result.epochs_run, [e["type"] for e in events][:2], events[-1]["type"]
        ('finished', 5, ['start', 'epoch'], 'end')
    """
    emit = on_event or (lambda event: None)  # config: validated on construction (frozen)
    t_start = time.perf_counter()
    run = _prepare(config, graph)
    device, g = run.device, run.graph
    if device.type == "cuda":  # the epochs' "memory_peak" counts from here
        torch.cuda.reset_peak_memory_stats(device)
    emit({"type": "start", "config": config.to_dict(), "device": str(device),
          "device_name": device_name(device),
          "num_nodes": g.num_nodes, "num_edges": g.num_edges})
    reason, message = _run_epochs(run, best := make_selection(config), emit, stop_event)
    total_time = time.perf_counter() - t_start
    result = RunResult(config=config, reason=reason, message=message, best_epoch=best.epoch,
                       best_val_acc=best.val_acc if best.epoch is not None else None,
                       test_acc=best.test_acc, epochs_run=len(run.history), total_time=total_time,
                       device=str(device), history=run.history, diagnostics=run.diagnostics,
                       model=run.model, fingerprint=run.prints.finish(run.model, lambda: run.sampler.sample(
                           g, config.num_layers, generator=run.sample_gen)))
    emit({"type": "end", "reason": reason, "message": message, "best_epoch": result.best_epoch,
          "best_val_acc": result.best_val_acc, "test_acc": result.test_acc,
          "epochs_run": result.epochs_run, "total_time": total_time})
    return result
