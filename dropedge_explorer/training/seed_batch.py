"""Seeds in one batch: the seeds of one cell trained together, each as its own
single run would be.

:func:`train_seeds` takes configs that differ only in their seed and returns one
:class:`~dropedge_explorer.training.config.RunResult` per seed, as :func:`~.trainer.train` would:

* **the same draws** — each seed's initial weights and dropout stream come from
  :func:`.seeding.build_model`, its edge-sample and diagnostics streams from
  :func:`.seeding.seed_streams` (the functions a single run calls), and every seed draws
  from them in the single run's order and shapes: same masks, same weights, same dropout;
* **the same computation, batched** — the seeds' weights stacked on a leading dimension
  (:class:`dropedge_core.SeedStack`), their adjacencies one
  block-diagonal CSR per layer over the shared pattern (:class:`SeedAdjacencies`), one
  Adam over the stack (element-wise, so each seed steps as alone), the loss a sum of the
  seeds' losses (each seed's gradient from its own loss only);
* **selection per seed** — each seed has its own :func:`.selection.make_selection`; a seed
  that stops early (or hits a NaN) ends there with its selected epoch, its weights are
  copied into its own model (``RunResult.model``) and it leaves the batch: its later
  epochs are never run for it.

Equal up to float rounding: batched products sum in another order, so logits agree to
~1e-6 and a depth-recipe run usually selects the same epoch with the same accuracy
(``tests/training/test_seed_batch.py`` checks this against single runs). Not always: where
two epochs' validation scores nearly tie, the rounding can decide early stopping. Measured on
CiteSeer (full split, GCN, depth recipe, one thread; 2, 4 and 8 layers; NoDrop, DropEdge and
DropEdge++; 10 seeds each): at least 18 of the 90 runs trained batched ended otherwise than the
same seed trained alone (another selected epoch's accuracy, or another stopping epoch: GCN-8 DropEdge++
seed 3 stopped after 130 epochs batched, 153 alone). A bundled row made by a batched run may
therefore not re-train alone to its numbers; the re-train sample of
``tests/studies/test_bundled_fingerprints.py``, which trains alone, then names it.
One known amplifier: with batch norm, a graph convolution's bias before it has an exactly zero
gradient, so its computed gradient is rounding noise that Adam normalises into full steps;
JKNet with batch norm then drifts from its single run by ~1e-3 in the validation loss
within a few epochs (karate), and may select a neighbouring epoch.

Times: a seed's ``epoch_time`` / ``sample_time`` are the batch epoch's divided by the
seeds then in the batch, its ``total_time`` the batch's wall time up to its end divided by
the seeds the batch started with (so they add up to the wall time, not to a single run's).
Events reach ``on_event`` with the seed added (``"seed": s``); the history holds them
without it, as a single run's.

The ``authors`` recipe is refused (:class:`~.config.ConfigError`): its models
(``dropedge_core.make_authors_model``) are other modules with their own dropout
places and its checkpoint rule reads the training pass's validation loss.
"""
from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from dropedge_core import SeedStack, block_diagonal, normalization, samplers, with_transpose
from dropedge_core.graph import Graph, csr_tensor

from dropedge_explorer.training import _seeding as seeding
from dropedge_explorer.training import trainer
from dropedge_explorer.training._fingerprint import TrainingPrint
from dropedge_explorer.training._selection import make_selection
from dropedge_explorer.training.checks import seeds_per_batch
from dropedge_explorer.training.config import ConfigError, RunResult, TrainConfig, device_name

__all__ = ["check_batchable", "train_seeds"]


class SeedAdjacencies:
    """The per-layer adjacencies of ``S`` seeds as ``L`` block-diagonal CSR ``(S N, S N)``
    matrices over the builder's shared pattern (block ``s``: seed ``s``'s layer).

    Values come from :func:`normalization.layer_values` over the ``S L`` mask rows at once,
    so block ``s`` of layer ``l`` holds exactly what
    :class:`~dropedge_core.normalization.AdjacencyBuilder` gives seed ``s``'s layer ``l``;
    each matrix carries the block-diagonal transpose index (``spmm``'s sort-free backward).
    """

    def __init__(self, builder: trainer.AdjacencyBuilder, seeds: int):
        n, entries = builder.graph.num_nodes, builder.col.numel()
        self.builder, self.seeds, self.entries = builder, seeds, entries
        self.crow, self.col = block_diagonal(builder.crow, builder.col, seeds, n)
        shift = torch.arange(seeds, device=builder.col.device).unsqueeze(1) * entries
        self.transpose = (builder.transpose.unsqueeze(0) + shift).flatten()
        self.size = (seeds * n, seeds * n)
        self.workspace: dict = {}

    def _matrices(self, values: torch.Tensor) -> list[torch.Tensor]:
        """``values`` ``(L, S E)`` → ``L`` block-diagonal CSR matrices."""
        layers = values.size(0)
        batch = csr_tensor(self.crow.expand(layers, -1), self.col.expand(layers, -1), values,
                           (layers, *self.size))
        return [with_transpose(adj, self.transpose) for adj in batch.unbind(0)]

    def __call__(self, masks: torch.Tensor) -> list[torch.Tensor]:
        """``masks`` ``(S, L, M)`` (or ``(S, L, 2M)``) bool → ``L`` CSR ``(S N, S N)``."""
        s, layers, width = masks.shape
        values = normalization.layer_values(self.builder.graph, masks.reshape(s * layers, width),
                                            self.builder.method, workspace=self.workspace)
        # (S L, E) → (L, S E): layer l's blocks one after the other
        return self._matrices(values.view(s, layers, self.entries).transpose(0, 1).reshape(layers, -1))

    def full(self, num_layers: int) -> list[torch.Tensor]:
        """The whole graph's normalised adjacency in every block, at every layer (evaluation)."""
        values = self.builder.full().values().repeat(self.seeds)
        adj = with_transpose(csr_tensor(self.crow, self.col, values, self.size), self.transpose)
        return [adj] * num_layers


def check_batchable(configs: list[TrainConfig]) -> None:
    """Refuse what one batch cannot train: no configs, configs that differ in more than
    their seed, the ``authors`` recipe.

    Args:
        configs (list[TrainConfig]): the configs meant for one batch.

    Raises:
        ConfigError: naming what differs or why.
    """
    if not configs:
        raise ConfigError("no seeds to train in a batch")
    first = {k: v for k, v in configs[0].to_dict().items() if k != "seed"}
    for config in configs[1:]:
        other = {k: v for k, v in config.to_dict().items() if k != "seed"}
        if other != first:
            diff = sorted(k for k in first if first[k] != other[k])
            raise ConfigError(f"seeds in one batch must share every setting but the seed (differ: {diff})")
    if configs[0].recipe == "authors":
        raise ConfigError("the authors recipe cannot train seeds in one batch: its models "
                          "(method.authors_models) and checkpoint rule are not batched; train its "
                          "seeds one at a time (without --batch-seeds)")


@dataclass
class _Seed:
    """One seed of the batch: its config, streams, model (for the result) and records."""
    config: TrainConfig
    model: torch.nn.Module
    sample_gen: torch.Generator
    diag_gen: torch.Generator
    best: object
    prints: TrainingPrint  # its fingerprint, made as it trains (as its single run's)
    stop: object = None  # this seed's own stop flag (``is_set()``), or None
    history: list[dict] = field(default_factory=list)
    diagnostics: list[dict] = field(default_factory=list)
    result: RunResult | None = None


@dataclass
class _Batch:
    """What an epoch of the batch needs; ``seeds`` are the ones still training, in stack order."""
    device: torch.device
    graph: Graph
    sampler: samplers.EdgeSampler
    builder: trainer.AdjacencyBuilder
    x: torch.Tensor
    seeds: list[_Seed]
    stack: SeedStack
    optimizer: torch.optim.Optimizer
    adjacencies: SeedAdjacencies
    full_adjs: list[torch.Tensor]
    emit: Callable[[int, dict], None]
    t_start: float
    started: int


def _new_seed(config: TrainConfig, graph: Graph, device: torch.device, stop=None) -> _Seed:
    """A seed's model and streams, drawn exactly as its single run draws them."""
    model = seeding.build_model(config, graph, device)
    sample_gen, diag_gen = seeding.seed_streams(config, device)
    return _Seed(config, model, sample_gen, diag_gen, make_selection(config), TrainingPrint(model), stop=stop)


def _optimizer(stack: SeedStack, config: TrainConfig) -> torch.optim.Optimizer:
    return torch.optim.Adam(stack.parameters(), lr=config.lr, weight_decay=config.weight_decay)


def _keep(batch: _Batch, keep: list[int]) -> None:
    """Only the seeds at stack positions ``keep`` go on: the stack, Adam's moments and the
    adjacencies shrink to them (a finished seed's epochs are not computed any more)."""
    state = batch.optimizer.state_dict()
    index = torch.tensor(keep, device=batch.device)
    for moments in state["state"].values():
        for name in ("exp_avg", "exp_avg_sq"):
            moments[name] = moments[name].index_select(0, index)
    batch.stack.keep(index)
    batch.optimizer = _optimizer(batch.stack, batch.seeds[0].config)
    batch.optimizer.load_state_dict(state)
    batch.seeds = [batch.seeds[i] for i in keep]
    batch.adjacencies = SeedAdjacencies(batch.builder, len(keep))
    batch.full_adjs = batch.adjacencies.full(batch.seeds[0].config.num_layers)


def _end(batch: _Batch, position: int, reason: str, message: str, training: bool = False) -> None:
    """Seed ``position`` ends: its weights go into its own model and its result is made."""
    seed = batch.seeds[position]
    seed.model.load_state_dict(batch.stack.state_of(position))
    seed.model.train(training)
    best, total = seed.best, (time.perf_counter() - batch.t_start) / batch.started
    prints = seed.prints.finish(seed.model, lambda: batch.sampler.sample(batch.graph, seed.config.num_layers,
                                                                         generator=seed.sample_gen))
    seed.result = RunResult(config=seed.config, reason=reason, message=message, best_epoch=best.epoch,
                            best_val_acc=best.val_acc if best.epoch is not None else None,
                            test_acc=best.test_acc, epochs_run=len(seed.history), total_time=total,
                            device=str(batch.device), history=seed.history, diagnostics=seed.diagnostics,
                            model=seed.model, fingerprint=prints)
    batch.emit(seed.config.seed, {"type": "end", "reason": reason, "message": message,
                                  "best_epoch": best.epoch, "best_val_acc": seed.result.best_val_acc,
                                  "test_acc": best.test_acc, "epochs_run": seed.result.epochs_run,
                                  "total_time": total})


def _nan_message(kind: str, value: float, epoch: int, config: TrainConfig) -> str:
    """A single run's message for a NaN loss (:func:`.trainer._train_step`, ``_evaluate``)."""
    return (f"{kind} loss became {value} at epoch {epoch} (learning rate {config.lr} too high?); "
            f"stopped, curves up to epoch {epoch - 1} kept")


def _step(batch: _Batch, epoch: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, float]:
    """Every seed samples from its own stream and steps: ``(masks (S, L, M), training
    log-probs (S, N, C), losses (S,), sample time)``; a seed whose loss is not finite ends
    (``"nan"``) before the step, as its single run."""
    t0 = time.perf_counter()
    g, config = batch.graph, batch.seeds[0].config
    masks = torch.stack([batch.sampler.sample(g, config.num_layers, generator=seed.sample_gen)
                         for seed in batch.seeds])  # each seed's own stream: a loop of S draws
    adjs = batch.full_adjs if batch.sampler.relation == "all" else batch.adjacencies(masks)
    trainer._sync(batch.device)
    sample_time = time.perf_counter() - t0
    batch.stack.train()
    batch.optimizer.zero_grad(set_to_none=True)
    out = batch.stack(batch.x, adjs)
    s, train = out.size(0), g.train_mask
    losses = F.nll_loss(out[:, train].reshape(-1, out.size(-1)), g.y[train].repeat(s),
                        reduction="none").view(s, -1).mean(1)
    finite = torch.isfinite(losses.detach())
    for position in torch.nonzero(~finite).flatten().tolist():
        value = float(losses.detach()[position])
        _end(batch, position, "nan", _nan_message("training", value, epoch, config), training=True)
    losses[finite].sum().backward()  # each seed's slice: the gradient of its own loss
    batch.optimizer.step()
    return masks, out.detach(), losses.detach(), sample_time


def _diagnose(batch: _Batch, position: int, epoch: int, masks: torch.Tensor,
              hidden: list[torch.Tensor]) -> None:
    """A single run's diagnostics event for seed ``position`` (:func:`.trainer.diagnostics`)."""
    seed, t0 = batch.seeds[position], time.perf_counter()
    event = {"type": "diagnostics", "epoch": epoch,
             **trainer.diagnostics(batch.graph, [h[position] for h in hidden], masks[position],
                                   generator=seed.diag_gen, seed=seed.config.seed)}
    event["diag_time"] = time.perf_counter() - t0
    seed.diagnostics.append(event)
    batch.emit(seed.config.seed, event)


def _epoch(batch: _Batch, epoch: int) -> list[tuple[int, str, str]]:
    """One epoch of every seed still training; returns the ``(position, reason, message)``
    of the seeds that end after it (early stop, NaN validation loss)."""
    config, g = batch.seeds[0].config, batch.graph
    t0 = time.perf_counter()
    masks, out, losses, sample_time = _step(batch, epoch)
    diag_now = config.diag_every > 0 and (epoch % config.diag_every == 0 or epoch == config.epochs)
    batch.stack.eval()
    with torch.no_grad():
        ev, hidden = batch.stack(batch.x, batch.full_adjs, return_hidden=True)
    trainer._sync(batch.device)
    share = len(batch.seeds)
    ends, epoch_time = [], (time.perf_counter() - t0) / share
    for position, seed in enumerate(batch.seeds):
        if seed.result is not None:  # ended by a NaN training loss
            continue
        val_loss = trainer._nll(ev[position], g.y, g.val_mask)
        if bool(g.val_mask.any()) and not math.isfinite(val_loss):
            ends.append((position, "nan", _nan_message("validation", val_loss, epoch, config)))
            continue
        val_acc, test_acc = (trainer._accuracy(ev[position], g.y, mask) for mask in (g.val_mask, g.test_mask))
        event = {"type": "epoch", "epoch": epoch, "train_loss": float(losses[position]), "val_loss": val_loss,
                 "train_acc": trainer._accuracy(out[position], g.y, g.train_mask), "val_acc": val_acc,
                 "test_acc": test_acc, "epoch_time": epoch_time, "sample_time": sample_time / share,
                 **trainer.device_memory(batch.device)}
        seed.prints.epoch(masks[position])
        seed.history.append(event)
        batch.emit(seed.config.seed, event)
        early = seed.best.update(epoch, val_acc, val_loss, test_acc) and epoch < config.epochs
        if diag_now or (early and config.diag_every > 0):  # the last epoch always gets diagnostics
            _diagnose(batch, position, epoch, masks, hidden)
        if early:
            ends.append((position, "early_stop", f"early stop at epoch {epoch}: no better validation "
                                                 f"accuracy or loss for {config.patience} epochs"))
    return ends


def _start(configs: list[TrainConfig], shared: tuple, emit: Callable[[int, dict], None],
           stops: list | None = None) -> _Batch:
    """The batch's seeds (weights and streams as their single runs, ``stops`` their own stop
    flags), stack, Adam and adjacencies."""
    device, g, sampler, builder = shared
    stops = stops if stops is not None else [None] * len(configs)
    seeds = [_new_seed(config, g, device, stop) for config, stop in zip(configs, stops, strict=True)]
    stack = SeedStack([seed.model for seed in seeds]).to(device)
    adjacencies = SeedAdjacencies(builder, len(seeds))
    batch = _Batch(device=device, graph=g, sampler=sampler, builder=builder, x=trainer.prepare_features(g.x),
                   seeds=seeds, stack=stack, optimizer=_optimizer(stack, configs[0]),
                   adjacencies=adjacencies, full_adjs=adjacencies.full(configs[0].num_layers), emit=emit,
                   t_start=time.perf_counter(), started=len(seeds))
    for config in configs:
        emit(config.seed, {"type": "start", "config": config.to_dict(), "device": str(device),
                           "device_name": device_name(device), "num_nodes": g.num_nodes,
                           "num_edges": g.num_edges})
    return batch


def _stopped(batch: _Batch, stop_event, epoch: int) -> None:
    """End, as ``"stopped"``, every seed when ``stop_event`` is set, else the seeds whose own
    flag is: cut short before ``epoch``, as a single run stopped by request."""
    every = stop_event is not None and stop_event.is_set()
    for position, seed in enumerate(batch.seeds):
        if every or (seed.stop is not None and seed.stop.is_set()):
            _end(batch, position, "stopped", f"stopped by request before epoch {epoch}")


def _shrink(batch: _Batch) -> bool:
    """Drop the seeds that ended from the batch; ``False`` when none is left."""
    keep = [i for i, seed in enumerate(batch.seeds) if seed.result is None]
    if keep and len(keep) < len(batch.seeds):
        _keep(batch, keep)
    return bool(keep)


def _train_batch(configs: list[TrainConfig], shared: tuple, emit: Callable[[int, dict], None],
                 stop_event: threading.Event | None, stops: list) -> list[RunResult]:
    """Train one batch of seeds to the end of each; results in ``configs``' order."""
    batch = _start(configs, shared, emit, stops)
    everyone = list(batch.seeds)
    if batch.device.type == "cuda":  # the epochs' "memory_peak" counts from here
        torch.cuda.reset_peak_memory_stats(batch.device)
    epochs = configs[0].epochs
    for epoch in range(1, epochs + 1):
        _stopped(batch, stop_event, epoch)
        if not _shrink(batch):
            break
        for position, reason, message in _epoch(batch, epoch):
            _end(batch, position, reason, message)
        if not _shrink(batch):
            break
    for position, seed in enumerate(batch.seeds):
        if seed.result is None:
            _end(batch, position, "finished", f"finished {len(seed.history)} epochs")
    return [seed.result for seed in everyone]


def train_seeds(configs: list[TrainConfig], graph: Graph | None = None,
                on_event: Callable[[dict], None] | None = None,
                stop_event: threading.Event | None = None,
                seed_stops: Sequence | None = None) -> list[RunResult]:
    """Train the seeds of one cell together; one :class:`RunResult` per config, in order.

    Args:
        configs (list[TrainConfig]): alike but for their seeds (:func:`check_batchable`).
        graph (Graph, optional): a loaded graph, as :func:`~.trainer.train`'s (loaded from
            the configs when ``None``). (default: :obj:`None`)
        on_event (Callable[[dict], None], optional): gets every seed's events (``"seed"``
            added), as a single run emits them. (default: :obj:`None`)
        stop_event (threading.Event, optional): when set, every seed still training stops
            before the next epoch. (default: :obj:`None`)
        seed_stops (Sequence, optional): one flag (``is_set()``) or ``None`` per config: when
            config ``i``'s is set, that seed alone stops before the next epoch
            (``"stopped"``) and leaves the batch; the others go on (a sweep's seed whose claim
            another worker took over). (default: :obj:`None`)

    The seeds go in batches as large as memory holds: a seed's estimate
    (:func:`~.checks.check_memory`, which refuses a seed that alone would not fit) times the
    batch's seeds under the device's limit (:func:`~.checks.seeds_per_batch`).

    Raises:
        ConfigError: configs that cannot share a batch; what a single run refuses.
        MemoryLimitError: one seed alone above the limit.
    """
    check_batchable(configs)
    stops = list(seed_stops) if seed_stops is not None else [None] * len(configs)
    if len(stops) != len(configs):
        raise ConfigError(f"seed_stops: one flag per config ({len(configs)}), got {len(stops)}")
    shared = trainer._prepare_graph(configs[0], graph)
    size = seeds_per_batch(configs[0], shared[1], len(configs))
    emit = (lambda seed, event: on_event({**event, "seed": seed})) if on_event else (lambda seed, event: None)
    results: list[RunResult] = []
    for first in range(0, len(configs), size):
        results += _train_batch(configs[first:first + size], shared, emit, stop_event,
                                stops[first:first + size])
    return results
