"""The checks a run passes before anything is allocated: labels that can be learnt, and
the estimated memory of training on the device it would run on."""
from __future__ import annotations

from dropedge_core import samplers
from dropedge_core.graph import Graph

from dropedge_explorer import memory
from dropedge_explorer.training.config import ConfigError, TrainConfig, resolve_device

__all__ = ["check_memory", "check_trainable", "keep_share", "seeds_per_batch"]


def keep_share(config: TrainConfig, graph: Graph) -> float:
    """The largest share of ``graph``'s edges one layer of ``config``'s sample keeps (the
    sampler's densest layer over the mask's width; 1 for NoDrop and an edgeless graph).

    Args:
        config (TrainConfig): the run's sampler, keep rates and depth.
        graph (Graph): the graph it samples.

    Returns:
        float: a share in ``[0, 1]``.
    """
    sampler = samplers.make(config.sampler, p_min=config.p_min, p_max=config.p_max, p=config.p,
                            kernel=config.kernel, directed=config.directed)
    width = sampler.num_items(graph)
    return float(sampler.layer_counts(graph, config.num_layers).max()) / width if width else 1.0


def _estimate(config: TrainConfig, graph: Graph, seeds: int = 1) -> int:
    return memory.training_bytes(graph.num_nodes, graph.num_edges, graph.num_features, graph.num_classes,
                                 config.num_layers, config.hidden, backbone=config.backbone,
                                 dropout=config.dropout, self_loop=config.self_loop,
                                 batch_norm=config.batch_norm, diagnostics=config.diag_every > 0,
                                 device_type=resolve_device(config.device).type, seeds=seeds,
                                 keep=keep_share(config, graph))


def check_memory(config: TrainConfig, graph: Graph) -> int:
    """The estimated bytes of training ``config`` on ``graph`` on the device it would run on.

    The estimate is :func:`dropedge_explorer.memory.training_bytes`; the limit
    :func:`dropedge_explorer.memory.device_limit` (``$DROPEDGE_MAX_MEMORY_GB`` on the CPU, the
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
        _estimate(config, graph),
        f"training {config.backbone} L={config.num_layers} hidden={config.hidden} on {graph.name} "
        f"(N={graph.num_nodes}, M={graph.num_edges}, {graph.num_features} features)",
        "use fewer layers, a smaller hidden width or a smaller graph", device=device)


def seeds_per_batch(config: TrainConfig, graph: Graph, seeds: int) -> int:
    """How many of ``seeds`` seeds of ``config`` one batch may train together
    (:mod:`dropedge_explorer.training.seed_batch`).

    The most seeds whose estimate (:func:`dropedge_explorer.memory.training_bytes` with
    ``seeds``: the graph held once, the diagnostics' temporaries for one seed at a time)
    stays under the device's limit (:func:`dropedge_explorer.memory.device_limit`).

    Args:
        config (TrainConfig): the runs' settings (the seed aside).
        graph (Graph): the graph they train on.
        seeds (int): how many seeds are asked for.

    Returns:
        int: ``1 .. seeds``.

    Raises:
        MemoryLimitError: one seed alone is above the limit (:func:`check_memory`).
    """
    check_memory(config, graph)
    limit, _ = memory.device_limit(resolve_device(config.device))
    size = 1
    while size < seeds and _estimate(config, graph, size + 1) <= limit:  # a loop over batch sizes
        size += 1
    return size


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
