"""What a run's seed fixes, made the same way for a single run, a batch of seeds and a
fingerprint: its sampler (kernel weights on the run's device), the generator its edge samples
draw from, its diagnostics' generator and its model's initial weights.
"""
from __future__ import annotations

import threading

import torch
from dropedge_core import make_authors_model, samplers
from dropedge_core.graph import Graph
from dropedge_core.models import make_model

from dropedge_explorer.training.config import TrainConfig

# Model initialisation draws from torch's global RNG; the lock keeps concurrent runs
# (TrainingWorker threads) from interleaving their draws, so a seed fixes the weights.
_INIT_LOCK = threading.Lock()


def make_sampler(config: TrainConfig, g: Graph) -> samplers.EdgeSampler:
    """The run's sampler, its kernel weights computed (and memoised) on ``g``'s device once.

    Args:
        config (TrainConfig): the run's settings.
        g (Graph): the graph, on the run's device.

    Returns:
        EdgeSampler: the sampler.
    """
    sampler = samplers.make(config.sampler, p_min=config.p_min, p_max=config.p_max, p=config.p,
                            kernel=config.kernel, directed=config.directed)
    sampler.weights(g)
    return sampler


def sample_generator(config: TrainConfig, device: torch.device) -> torch.Generator:
    """The generator the run's edge samples draw from (its seed's mask stream).

    Args:
        config (TrainConfig): the run's settings.
        device (torch.device): where the run draws.

    Returns:
        torch.Generator: seeded, on ``device``.
    """
    return torch.Generator(device=device).manual_seed(config.seed)


def build_model(config: TrainConfig, g: Graph, device: torch.device) -> torch.nn.Module:
    """The backbone, its weights drawn from ``config.seed`` (the authors' models for the
    ``authors`` recipe).

    Args:
        config (TrainConfig): the run's settings.
        g (Graph): the graph (its feature width and classes).
        device (torch.device): where the model lives.

    Returns:
        torch.nn.Module: the backbone on ``device``.
    """
    build = make_authors_model if config.recipe == "authors" else make_model
    with _INIT_LOCK:
        torch.manual_seed(config.seed)
        return build(config.backbone, g.num_features, g.num_classes, config.num_layers,
                     hidden=config.hidden, dropout=config.dropout, self_loop=config.self_loop,
                     batch_norm=config.batch_norm, alpha=config.alpha,
                     generator=torch.Generator(device=device).manual_seed(config.seed + 1)).to(device)


def seed_streams(config: TrainConfig, device: torch.device) -> tuple[torch.Generator, torch.Generator]:
    """A run's ``(edge samples', diagnostics')`` generators, seeded from ``config.seed`` (the
    weights' and dropout's come from :func:`build_model`); batched seeds take theirs here too.

    Args:
        config (TrainConfig): the run's settings.
        device (torch.device): where the run draws.

    Returns:
        tuple[torch.Generator, torch.Generator]: the edge samples' and the diagnostics'.
    """
    return sample_generator(config, device), torch.Generator().manual_seed(config.seed + 2)
