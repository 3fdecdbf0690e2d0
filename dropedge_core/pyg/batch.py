"""Per-graph keep counts for a batch of graphs.

A PyG mini-batch is one big graph of disjoint parts (``batch[i]``: the graph of node
``i``). Sampled as one graph, a layer keeps ``floor(rate * M)`` of all ``M`` edges, so one
small graph may lose all its edges while another loses none. With ``batch``, every graph
``g`` keeps ``floor(rate * M_g)`` of its own ``M_g`` at every layer: its masks are drawn
by the sampler on its own graph, one graph after the other with the same generator (so
they equal sampling each graph alone, in batch order). The graphs' undirected edges are
contiguous slices of the batch's sorted edge list (a graph's node ids are contiguous),
found with one ``searchsorted``; the only loop is the one over graphs, each drawing all
its layers at once.
"""
from __future__ import annotations

import torch
from torch import Tensor

from dropedge_core.method import samplers
from dropedge_core.method.graph import Graph

__all__ = ["check_batch", "sample_per_graph"]


def check_batch(batch: Tensor, num_nodes: int, edge_index: Tensor) -> Tensor:
    r"""Validate PyG's ``batch`` vector; return ``ptr`` (graph ``g``'s nodes are
    ``ptr[g]:ptr[g + 1]``), shape :obj:`(B + 1,)`.

    Args:
        batch (LongTensor): The graph id of every node, shape :obj:`(N,)`, sorted.
        num_nodes (int): The number of nodes :obj:`N`.
        edge_index (LongTensor): The edge indices, shape :obj:`(2, E)`.

    Raises:
        ValueError: not one sorted non-negative graph id per node, or an edge between
            two graphs.

    Example:
        >>> check_batch(torch.tensor([0, 0, 1, 1, 1]), 5, torch.tensor([[0, 2], [1, 4]]))
        tensor([0, 2, 5])
    """
    if (not isinstance(batch, Tensor) or batch.shape != (num_nodes,) or batch.is_floating_point()
            or batch.dtype == torch.bool):
        shape = tuple(batch.shape) if isinstance(batch, Tensor) else type(batch).__name__
        raise ValueError(f"batch must hold one integer graph id per node, shape ({num_nodes},) (got {shape})")
    if num_nodes and (int(batch.min()) < 0 or bool((batch[1:] < batch[:-1]).any())):
        raise ValueError("batch must be sorted non-negative graph ids (PyG's Batch.batch)")
    if edge_index.numel():
        crossing = batch[edge_index[0]] != batch[edge_index[1]]
        if bool(crossing.any()):
            col = int(crossing.nonzero()[0])
            raise ValueError(f"edge_index column {col} joins nodes of two graphs of the batch "
                             f"({int(edge_index[0, col])} and {int(edge_index[1, col])})")
    counts = torch.bincount(batch, minlength=1) if num_nodes else torch.zeros(1, dtype=torch.long)
    return torch.cat([counts.new_zeros(1), counts.cumsum(0)])


def _parts(graph: Graph, ptr: Tensor) -> list[Graph]:
    """The batch's graphs, each with its own nodes renumbered from 0."""
    lo = graph.undirected_edges[0].contiguous()
    starts = torch.searchsorted(lo, ptr).tolist()  # sorted by lo * N + hi: lo is sorted
    nodes = ptr.tolist()
    parts = []
    for g in range(len(nodes) - 1):
        a, b = nodes[g], nodes[g + 1]
        never = torch.zeros(b - a, dtype=torch.bool, device=lo.device)
        parts.append(Graph(name=f"graph {g}", x=graph.x[a:b], y=graph.y[a:b],
                           undirected_edges=graph.undirected_edges[:, starts[g]:starts[g + 1]] - a,
                           train_mask=never, val_mask=never, test_mask=never, num_classes=0))
    return parts


def sample_per_graph(graph: Graph, ptr: Tensor, sampler: samplers.EdgeSampler, num_layers: int,
                     generator: torch.Generator | None = None, cache: dict | None = None) -> Tensor:
    """``(L, M)`` (``(L, 2M)`` if directed) masks of ``graph``, every part of ``ptr`` drawn
    on its own, so each keeps its own share of its own edges.

    Args:
        graph (Graph): the batch as one graph.
        ptr (LongTensor): :obj:`(B + 1,)`, graph ``g``'s nodes are ``ptr[g]:ptr[g + 1]``
            (:func:`check_batch`).
        sampler (EdgeSampler): the sampler every part is drawn with.
        num_layers (int): The number of layers :obj:`L`.
        generator (torch.Generator, optional): The random source. (default: :obj:`None`)
        cache (dict, optional): a dict kept by the caller beside ``graph``; the parts (and
            their memoised kernel weights) are reused while ``ptr`` is equal.
            (default: :obj:`None`)

    Returns:
        BoolTensor: ``(L, M)`` or ``(L, 2M)``, over ``graph``'s edge columns.
    """
    cached = cache.get("parts") if cache is not None else None
    if cached is not None and torch.equal(cached[0], ptr):
        parts = cached[1]
    else:
        parts = _parts(graph, ptr)
        if cache is not None:
            cache["parts"] = (ptr.clone(), parts)
    masks = [sampler.sample(part, num_layers, generator=generator) for part in parts]
    if not sampler.directed:
        return torch.cat(masks, dim=1)
    # a part's 2M_g columns are its edges then their reverses; the batch's are all the
    # parts' edges, then all the reverses
    halves = [m.tensor_split(2, dim=1) for m in masks]
    return torch.cat([h[0] for h in halves] + [h[1] for h in halves], dim=1)
