"""A run's fingerprint: what makes it reproducible, computed without training.

A run is fixed by its config, its seed's edge samples and its seed's initial weights. The
config is its key (:func:`dropedge_core.store.run_key`); the other two are the streams a
code change can alter while the config stays the same (the nested draws' rewrite made
DropEdge++ seeds draw other masks from the same law). :func:`fingerprint` hashes both, as
the trainer makes them (its own preparation, ``trainer._prepare``):

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

from dropedge_core.method.graph import Graph
from dropedge_core.training.config import TrainConfig
from dropedge_core.training.trainer import _prepare  # the trainer's own preparation: same streams

__all__ = ["FINGERPRINT_EPOCHS", "Fingerprint", "fingerprint", "masks_digest", "init_digest"]

#: Epochs whose masks the fingerprint hashes: a stream that differs anywhere differs in the
#: first draw in practice; three catch a change that only shows once the generator advanced.
FINGERPRINT_EPOCHS = 3
_DIGITS = 16


@dataclass(frozen=True)
class Fingerprint:
    """The two stream hashes of one run (16 hex digits each)."""
    masks: str
    init: str


def masks_digest(masks: list[torch.Tensor]) -> str:
    """SHA-256 (16 hex digits) of a sequence of bool mask tensors, in order, shapes included."""
    h = hashlib.sha256()
    for m in masks:
        h.update(repr(tuple(m.shape)).encode())
        h.update(m.detach().to("cpu", torch.bool).contiguous().numpy().tobytes())
    return h.hexdigest()[:_DIGITS]


def init_digest(model: torch.nn.Module) -> str:
    """SHA-256 (16 hex digits) of a model's state (every parameter and buffer by name, dtype,
    shape and bytes)."""
    h = hashlib.sha256()
    for name, value in model.state_dict().items():
        t = value.detach().to("cpu").contiguous()
        h.update(f"{name}:{t.dtype}:{tuple(t.shape)}".encode())
        h.update(t.numpy().tobytes() if t.numel() else b"")
    return h.hexdigest()[:_DIGITS]


def fingerprint(config: TrainConfig, graph: Graph | None = None,
                epochs: int = FINGERPRINT_EPOCHS) -> Fingerprint:
    """The fingerprint of the run ``config`` describes, made the way :func:`train` makes
    the run (same preparation, same generators), without a training step.

    Args:
        config: the run's settings (seed included).
        graph: the loaded graph; default ``datasets.load(config.dataset, config.split)``.
        epochs: how many epochs' masks to hash.

    The masks of epoch ``e`` depend only on the sampling generator (seeded by the run's seed)
    and the ``e - 1`` draws before it, never on training, so drawing them back to back gives
    the masks the run trains on.
    """
    run = _prepare(config, graph)
    init = init_digest(run.model)
    masks = [run.sampler.sample(run.graph, config.num_layers, generator=run.sample_gen)
             for _ in range(epochs)]
    return Fingerprint(masks=masks_digest(masks), init=init)
