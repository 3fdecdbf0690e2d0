"""A run's fingerprint: what makes it reproducible, computed without training.

A run is fixed by its config, its seed's edge samples and its seed's initial weights. The
config is its key (:func:`dropedge_explorer.store.run_key`); the other two are the streams a
code change can alter while the config stays the same (the nested draws' rewrite made
DropEdge++ seeds draw other masks from the same law). :func:`fingerprint` hashes both, as
the trainer makes them (from its own sampler, generator and model builder):

* ``masks`` — SHA-256 of the ``(L, M)`` masks the sampler draws in the first
  :data:`FINGERPRINT_EPOCHS` epochs from the run's sampling generator;
* ``init`` — SHA-256 of the model's parameters and buffers right after initialisation.

Both are cut to 16 hex digits (64 bits: a collision between two streams of one run is not a
concern). Bundled runs carry theirs (``masks_fp``, ``init_fp``); a test recomputes them at
the code that ships and names every run whose streams changed.

**At training time** the trainer records more (:class:`TrainingPrint`, one per seed; the
store keeps it with the run, :data:`RUN_PRINT_FIELDS`): the two above, as the run drew them,
and

* ``run_masks_fp`` — :func:`run_masks_digest` of *every* epoch's masks, all ``epochs_run``
  of them (computable later by sampling alone: :func:`run_masks_fingerprints`);
* ``dropout_fp`` — SHA-256 of the dropout generator's state after the last epoch (its seed
  and how many numbers the run's dropout drew);
* ``final_fp`` — :func:`init_digest` of the weights after the last epoch. Unlike the others
  it depends on float rounding (batched seeds, another BLAS or device give other last bits),
  so it records what was trained; it is not recomputed by a check.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
import torch
from dropedge_core import datasets
from dropedge_core.graph import Graph

from dropedge_explorer.training._seeding import build_model, make_sampler, sample_generator
from dropedge_explorer.training.config import TrainConfig, resolve_device

#: Epochs whose masks the fingerprint hashes: a stream that differs anywhere differs in the
#: first draw in practice; three catch a change that only shows once the generator advanced.
FINGERPRINT_EPOCHS = 3
_DIGITS = 16


@dataclass(frozen=True)
class Fingerprint:
    """The two stream hashes of one run (16 hex digits each).

    Args:
        masks (str): :func:`masks_fingerprint`.
        init (str): :func:`init_fingerprint`.
    """
    masks: str
    init: str


def _update_masks(h, m: torch.Tensor) -> None:
    h.update(repr(tuple(m.shape)).encode())
    h.update(m.detach().to("cpu", torch.bool).contiguous().numpy().tobytes())


def _update_packed(h, m: torch.Tensor) -> None:
    """One epoch into a run's digest: its shape, then its masks one bit an entry (row-major,
    :func:`numpy.packbits`): an eighth of the bytes :func:`masks_digest` hashes, which matters
    at every epoch of a deep run on a large graph."""
    h.update(repr(tuple(m.shape)).encode())
    h.update(np.packbits(m.detach().to("cpu", torch.bool).contiguous().numpy(), axis=None).tobytes())


def run_masks_digest(masks: list[torch.Tensor]) -> str:
    """SHA-256 (16 hex digits) of every epoch's masks, in order: each epoch's shape, then its
    entries packed one bit each (:func:`numpy.packbits`, row-major, the last byte padded with
    zeros): a run's ``run_masks_fp``.

    Args:
        masks (list[Tensor]): bool mask tensors, ``(L, M)`` per epoch.

    Returns:
        str: 16 hex digits.
    """
    h = hashlib.sha256()
    for m in masks:
        _update_packed(h, m)
    return h.hexdigest()[:_DIGITS]


def masks_digest(masks: list[torch.Tensor]) -> str:
    """SHA-256 (16 hex digits) of a sequence of bool mask tensors, in order, shapes included.

    Args:
        masks (list[Tensor]): bool mask tensors, e.g. ``(L, M)`` per epoch.

    Returns:
        str: 16 hex digits.
    """
    h = hashlib.sha256()
    for m in masks:
        _update_masks(h, m)
    return h.hexdigest()[:_DIGITS]


def generator_digest(generator: torch.Generator | None) -> str:
    """SHA-256 (16 hex digits) of a generator's state: its seed and how far it has drawn
    (``""`` for ``None``: a model without a generator of its own).

    Args:
        generator (torch.Generator, optional): the generator.

    Returns:
        str: 16 hex digits, or ``""``.
    """
    if generator is None:
        return ""
    state = generator.get_state()
    return hashlib.sha256(state.contiguous().numpy().tobytes()).hexdigest()[:_DIGITS]


def init_digest(model: torch.nn.Module) -> str:
    """SHA-256 (16 hex digits) of a model's state (every parameter and buffer by name, dtype,
    shape and bytes).

    Args:
        model (torch.nn.Module): the model.

    Returns:
        str: 16 hex digits.
    """
    h = hashlib.sha256()
    for name, value in model.state_dict().items():
        t = value.detach().to("cpu").contiguous()
        h.update(f"{name}:{t.dtype}:{tuple(t.shape)}".encode())
        h.update(t.numpy().tobytes() if t.numel() else b"")
    return h.hexdigest()[:_DIGITS]


def masks_fingerprint(config: TrainConfig, graph: Graph,
                      epochs: int = FINGERPRINT_EPOCHS) -> str:
    """:func:`masks_digest` of the masks the run draws in its first ``epochs`` epochs, from
    the trainer's own sampler and generator (:func:`~.seeding.make_sampler`,
    :func:`~.seeding.sample_generator`). An epoch's masks depend only on that generator and
    the draws before it, never on training, so drawing them back to back gives the masks the
    run trains on.

    Args:
        config (TrainConfig): the run's settings.
        graph (Graph): the loaded graph.
        epochs (int, optional): how many epochs' masks to hash. (default: :data:`FINGERPRINT_EPOCHS`)

    Returns:
        str: 16 hex digits.
    """
    device = resolve_device(config.device)
    g = graph if graph.x.device == device else graph.to(device)
    sampler = make_sampler(config, g)
    generator = sample_generator(config, device)
    return masks_digest([sampler.sample(g, config.num_layers, generator=generator) for _ in range(epochs)])


def run_masks_fingerprints(config: TrainConfig, graph: Graph, epochs: list[int]) -> dict[int, str]:
    """:func:`run_masks_digest` of the masks of the run's first ``e`` epochs, for each ``e`` in
    ``epochs``, from one pass of sampling (no training): a run's ``run_masks_fp`` is the
    value at its ``epochs_run``.

    Args:
        config (TrainConfig): the run's settings (its ``epochs`` is not read).
        graph (Graph): the loaded graph.
        epochs (list[int]): epoch counts (each ``>= 0``).

    Returns:
        dict[int, str]: ``{e: 16 hex digits}``.
    """
    wanted = sorted({int(e) for e in epochs})
    if wanted and wanted[0] < 0:
        raise ValueError(f"epochs: counts of epochs are >= 0, got {wanted[0]}")
    device = resolve_device(config.device)
    g = graph if graph.x.device == device else graph.to(device)
    sampler = make_sampler(config, g)
    generator = sample_generator(config, device)
    h, out, done = hashlib.sha256(), {}, 0
    for e in wanted:
        while done < e:
            _update_packed(h, sampler.sample(g, config.num_layers, generator=generator))
            done += 1
        out[e] = h.hexdigest()[:_DIGITS]
    return out


def init_fingerprint(config: TrainConfig, graph: Graph) -> str:
    """:func:`init_digest` of the run's model right after the trainer builds it
    (:func:`~.seeding.build_model`: its seed's weights).

    Args:
        config (TrainConfig): the run's settings.
        graph (Graph): the loaded graph.

    Returns:
        str: 16 hex digits.
    """
    device = resolve_device(config.device)
    return init_digest(build_model(config, graph, device))


def fingerprint(config: TrainConfig, graph: Graph | None = None,
                epochs: int = FINGERPRINT_EPOCHS) -> Fingerprint:
    """The fingerprint of the run ``config`` describes, made from the trainer's own pieces
    (same sampler, generators and model builder), without a training step.

    Args:
        config (TrainConfig): the run's settings (seed included).
        graph (Graph, optional): the loaded graph.
            (default: :obj:`None`: ``datasets.load(config.dataset, config.split)``)
        epochs (int, optional): how many epochs' masks to hash.
            (default: :data:`FINGERPRINT_EPOCHS`)

    Returns:
        Fingerprint: the masks' and the initial weights' hashes.
    """
    if graph is None:
        graph = datasets.load(config.dataset, config.split)
    return Fingerprint(masks=masks_fingerprint(config, graph, epochs), init=init_fingerprint(config, graph))


#: The config fields each half of a fingerprint depends on (with the graph): rows that agree
#: on them share the half, so a table of runs computes each distinct half once.
MASKS_FIELDS: tuple[str, ...] = ("dataset", "split", "sampler", "p_min", "p_max", "p", "kernel", "directed",
                                 "num_layers", "seed")
INIT_FIELDS: tuple[str, ...] = ("dataset", "split", "recipe", "backbone", "num_layers", "hidden", "dropout",
                                "self_loop", "batch_norm", "alpha", "seed")


class FingerprintCache:
    """:func:`fingerprint` for many configs, each distinct half (:data:`MASKS_FIELDS`,
    :data:`INIT_FIELDS`) computed once (NoDrop, DropEdge and DropEdge++ runs of one seed
    share their initial weights).

    Args:
        graph_of (Callable[[TrainConfig], Graph], optional): the graph of a config.
            (default: :obj:`None`: ``datasets.load(config.dataset, config.split)``)
    """

    def __init__(self, graph_of=None):
        self.graph_of = graph_of or (lambda config: datasets.load(config.dataset, config.split))
        self.masks: dict[tuple, str] = {}
        self.inits: dict[tuple, str] = {}

    def __call__(self, config: TrainConfig) -> Fingerprint:
        values = config.to_dict()
        # "authors" builds the authors' models; every other recipe the paper's
        values["recipe"] = "authors" if config.recipe == "authors" else ""
        mkey = tuple(values[f] for f in MASKS_FIELDS)
        ikey = tuple(values[f] for f in INIT_FIELDS)
        if mkey not in self.masks:
            self.masks[mkey] = masks_fingerprint(config, self.graph_of(config))
        if ikey not in self.inits:
            self.inits[ikey] = init_fingerprint(config, self.graph_of(config))
        return Fingerprint(masks=self.masks[mkey], init=self.inits[ikey])


#: The fingerprint a run carries from its training (:class:`TrainingPrint`), as store columns.
RUN_PRINT_FIELDS: tuple[str, ...] = ("masks_fp", "init_fp", "run_masks_fp", "dropout_fp", "final_fp")


class TrainingPrint:
    """A run's fingerprint made while it trains: :meth:`epoch` hashes each epoch's masks as
    they are drawn (no copy kept), :meth:`finish` adds the last weights and the dropout
    stream's state.

    Args:
        model (torch.nn.Module): the run's model right after it was built (its initial
            weights are hashed here).

    Example:
        >>> import torch
        >>> p = TrainingPrint(torch.nn.Linear(2, 1))
        >>> p.epoch(torch.ones(2, 3, dtype=torch.bool))
        >>> sorted(p.finish(torch.nn.Linear(2, 1)))
        ['dropout_fp', 'final_fp', 'init_fp', 'masks_fp', 'run_masks_fp']
    """

    def __init__(self, model: torch.nn.Module):
        self.init = init_digest(model)
        self.hash = hashlib.sha256()  # run_masks_fp: every epoch, packed
        self.head = hashlib.sha256()  # masks_fp: the first FINGERPRINT_EPOCHS epochs, as masks_digest
        self.epochs = 0

    def epoch(self, masks: torch.Tensor) -> None:
        """Hash one epoch's ``(L, M)`` masks (in the order the run drew them)."""
        _update_packed(self.hash, masks)
        if self.epochs < FINGERPRINT_EPOCHS:
            _update_masks(self.head, masks)
        self.epochs += 1

    def finish(self, model: torch.nn.Module, more_masks=None) -> dict[str, str]:
        """The run's fingerprint (:data:`RUN_PRINT_FIELDS`), from its weights after the last epoch.

        Args:
            model (torch.nn.Module): the model after its last epoch (its ``generator``, when
                it has one, is the dropout stream).
            more_masks (Callable[[], Tensor], optional): draws the next epoch's masks from the
                run's sampling generator; used only when the run ended before
                :data:`FINGERPRINT_EPOCHS` epochs, so that ``masks_fp`` is the same
                :func:`masks_fingerprint` a bundled row is checked against.
                (default: :obj:`None`: ``masks_fp`` of the epochs run)
        """
        run_masks = self.hash.hexdigest()[:_DIGITS]
        h, drawn = self.head.copy(), self.epochs
        while more_masks is not None and drawn < FINGERPRINT_EPOCHS:
            _update_masks(h, more_masks())
            drawn += 1
        first = h.hexdigest()[:_DIGITS]
        return {"masks_fp": first, "init_fp": self.init, "run_masks_fp": run_masks,
                "dropout_fp": generator_digest(getattr(model, "generator", None)),
                "final_fp": init_digest(model)}
