"""A run's fingerprint: what makes it reproducible, computed without training.

A run is fixed by its config, its seed's edge samples and its seed's initial weights. The
config is its key (:func:`dropedge_core.store.run_key`); the other two are the streams a
code change can alter while the config stays the same (the nested draws' rewrite made
DropEdge++ seeds draw other masks from the same law). :func:`fingerprint` hashes both, as
the trainer makes them (from its own sampler, generator and model builder):

* ``masks`` — SHA-256 of the ``(L, M)`` masks the sampler draws in the first
  :data:`FINGERPRINT_EPOCHS` epochs from the run's sampling generator;
* ``init`` — SHA-256 of the model's parameters and buffers right after initialisation.

Both are cut to 16 hex digits (64 bits: a collision between two streams of one run is not a
concern). Bundled runs carry theirs (``masks_fp``, ``init_fp``); a test recomputes them at
the code that ships and names every run whose streams changed.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

import torch

from dropedge_core.data import datasets
from dropedge_core.method.graph import Graph
from dropedge_core.training._seeding import build_model, make_sampler, sample_generator
from dropedge_core.training.config import TrainConfig, resolve_device

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


def masks_digest(masks: list[torch.Tensor]) -> str:
    """SHA-256 (16 hex digits) of a sequence of bool mask tensors, in order, shapes included.

    Args:
        masks (list[Tensor]): bool mask tensors, e.g. ``(L, M)`` per epoch.

    Returns:
        str: 16 hex digits.
    """
    h = hashlib.sha256()
    for m in masks:
        h.update(repr(tuple(m.shape)).encode())
        h.update(m.detach().to("cpu", torch.bool).contiguous().numpy().tobytes())
    return h.hexdigest()[:_DIGITS]


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
