"""The checks a run passes before anything is allocated: labels that can be learnt, and
the estimated memory of training on the device it would run on."""
from __future__ import annotations

from dropedge_core import memory
from dropedge_core.method.graph import Graph
from dropedge_core.training.config import ConfigError, TrainConfig, resolve_device

__all__ = ["check_memory", "check_trainable", "seeds_per_batch"]


def check_memory(config: TrainConfig, graph: Graph) -> int:
    """The estimated bytes of training ``config`` on ``graph`` on the device it would run on.

    The estimate is :func:`dropedge_core.memory.training_bytes`; the limit
    :func:`dropedge_core.memory.device_limit` (``$DROPEDGE_MAX_MEMORY_GB`` on the CPU, the
    free memory of a CUDA device).

    Args:
        config (TrainConfig): the run's settings.
        graph (Graph): the graph it would train on.

    Returns:
        int: the estimate in bytes.

    Raises:
        MemoryLimitError: the estimate is above the device's limit.
    """
    device = resolve_device(config.device)
    return memory.check(
        memory.training_bytes(graph.num_nodes, graph.num_edges, graph.num_features,
                              graph.num_classes, config.num_layers, config.hidden,
                              backbone=config.backbone, dropout=config.dropout, self_loop=config.self_loop,
                              batch_norm=config.batch_norm, diagnostics=config.diag_every > 0,
                              device_type=device.type),
        f"training {config.backbone} L={config.num_layers} hidden={config.hidden} on {graph.name} "
        f"(N={graph.num_nodes}, M={graph.num_edges}, {graph.num_features} features)",
        "use fewer layers, a smaller hidden width or a smaller graph", device=device)


def seeds_per_batch(config: TrainConfig, graph: Graph, seeds: int) -> int:
    """How many of ``seeds`` seeds of ``config`` one batch may train together
    (:mod:`dropedge_core.training.seed_batch`).

    The seed's estimate (:func:`check_memory`, which refuses a seed that alone is above
    the limit) times the batch's seeds stays under the device's limit
    (:func:`dropedge_core.memory.device_limit`). Conservative: the graph and its
    structures, counted in every seed's estimate, are held once.

    Args:
        config (TrainConfig): the runs' settings (the seed aside).
        graph (Graph): the graph they train on.
        seeds (int): how many seeds are asked for.

    Returns:
        int: ``1 .. seeds``.

    Raises:
        MemoryLimitError: one seed alone is above the limit.
    """
    per_seed = check_memory(config, graph)
    limit, _ = memory.device_limit(resolve_device(config.device))
    return max(1, min(seeds, limit // max(per_seed, 1)))


def check_trainable(config: TrainConfig, graph: Graph) -> None:
    """Refuse, before anything is allocated, a graph training cannot use (no labels, one
    class: every prediction right, 100% says nothing) or a run above the memory limit.

    Args:
        config (TrainConfig): the run's settings.
        graph (Graph): the graph it would train on.

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
