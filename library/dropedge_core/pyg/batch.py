"""Per-graph keep counts for a batch of graphs.

A PyG mini-batch is one big graph of disjoint parts (``batch[i]``: the graph of node
``i``). Sampled as one graph, a layer keeps ``floor(rate * M)`` of all ``M`` edges, so one
small graph may lose all its edges while another loses none. With ``batch``, every graph
``g`` keeps ``floor(rate * M_g)`` of its own ``M_g`` at every layer. The graphs' undirected
edges are contiguous slices of the batch's sorted edge list (a graph's node ids are
contiguous), found with one ``searchsorted``.

The masks are drawn for the whole batch in one pass, no loop over graphs, by
:func:`~dropedge_core._segment_draws.segment_masks` with the graphs as segments: per-graph
counts from the graphs' sizes in one :meth:`~dropedge_core.samplers.EdgeSampler.counts_of`,
keys for every edge (uniform, or ``E / w`` from the kernel weights of the whole batch), each
edge ranked within its graph, a layer keeping the ranks below its graph's count (DropEdge++:
each layer redrawn from the one before, Algorithm 1). The law is each sampler's on each
graph alone (exactly ``floor(rate * M_g)`` kept, uniform or successive sampling, LID/LDD and
DropEdge++ nested, LI's layers independent, DropEdge's and FD's shared), but **not the
stream** of drawing the graphs one after the other: a seed gives other masks than sampling
each graph alone. Training (:meth:`~dropedge_core.samplers.EdgeSampler.sample` on a
``Graph``) never comes here, so no training run's stream changed.
"""
from __future__ import annotations

import torch
from torch import Tensor

from dropedge_core import samplers
from dropedge_core._segment_draws import segment_masks
from dropedge_core.graph import Graph
from dropedge_core.samplers import draw_device

__all__ = ["check_batch", "sample_per_graph"]


def check_batch(batch: Tensor, num_nodes: int, edge_index: Tensor) -> Tensor:
    r"""Validate PyG's ``batch`` vector; return ``ptr`` (graph ``g``'s nodes are
    ``ptr[g]:ptr[g + 1]``), shape :obj:`(B + 1,)`.

    Args:
        batch (LongTensor): The graph id of every node, shape :obj:`(N,)`, sorted.
        num_nodes (int): The number of nodes :obj:`N`.
        edge_index (LongTensor): The edge indices, shape :obj:`(2, E)`.

    Raises:
        ValueError: not one sorted non-negative graph id per node, a graph id of
            :obj:`N` or more (checked before anything of that size is allocated), or an
            edge between two graphs.

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
    # before the bincount below, which allocates one count per id up to the largest: N
    # nodes hold at most N graphs that have a node, so a larger id is not a batch
    if num_nodes and int(batch.max()) >= num_nodes:
        raise ValueError(f"batch holds graph id {int(batch.max())} but there are {num_nodes} nodes; "
                         f"graph ids must be in [0, {num_nodes}) (PyG's Batch.batch numbers its graphs "
                         "from 0)")
    if edge_index.numel():
        crossing = batch[edge_index[0]] != batch[edge_index[1]]
        if bool(crossing.any()):
            col = int(crossing.nonzero()[0])
            raise ValueError(f"edge_index column {col} joins nodes of two graphs of the batch "
                             f"({int(edge_index[0, col])} and {int(edge_index[1, col])})")
    counts = torch.bincount(batch, minlength=1) if num_nodes else torch.zeros(1, dtype=torch.long)
    return torch.cat([counts.new_zeros(1), counts.cumsum(0)])


def _edges_per_graph(graph: Graph, ptr: Tensor, directed: bool,
                     device: torch.device) -> tuple[Tensor, Tensor]:
    """The graph of every mask column ``(n,)`` and every graph's columns ``(B,)``
    (``2 M_g`` directed: the batch's ``2M`` columns are all edges, then all reverses)."""
    lo = graph.undirected_edges[0].contiguous()
    edges = torch.searchsorted(lo, ptr.to(lo.device)).diff().to(device)  # M_g: (B,)
    graph_of = torch.repeat_interleave(torch.arange(edges.numel(), device=device), edges)
    if directed:
        return torch.cat([graph_of, graph_of]), 2 * edges
    return graph_of, edges


def sample_per_graph(graph: Graph, ptr: Tensor, sampler: samplers.EdgeSampler, num_layers: int,
                     generator: torch.Generator | None = None, cache: dict | None = None) -> Tensor:
    """``(L, M)`` (``(L, 2M)`` if directed) masks of ``graph``, every part of ``ptr`` keeping
    its own share of its own edges, the whole batch in one pass (the module docstring).

    Args:
        graph (Graph): the batch as one graph (its kernel weights memoised on it).
        ptr (LongTensor): :obj:`(B + 1,)`, graph ``g``'s nodes are ``ptr[g]:ptr[g + 1]``
            (:func:`check_batch`).
        sampler (EdgeSampler): the sampler every part is drawn with.
        num_layers (int): The number of layers :obj:`L`.
        generator (torch.Generator, optional): The random source. (default: :obj:`None`)
        cache (dict, optional): a dict kept by the caller beside ``graph``: the graph of
            every column and the selections' layouts are reused while ``ptr`` is equal.
            (default: :obj:`None`)

    Returns:
        BoolTensor: ``(L, M)`` or ``(L, 2M)``, over ``graph``'s edge columns.
    """
    device = draw_device(generator, graph.undirected_edges)
    key = ("parts", sampler.directed, device)
    held = cache.get(key) if cache is not None else None
    if held is None or not torch.equal(held[0], ptr):
        graph_of, sizes = _edges_per_graph(graph, ptr, sampler.directed, device)
        held = (ptr.clone(), graph_of, sizes, {})
        if cache is not None:
            cache[key] = held
    _, graph_of, sizes, layouts = held
    # (B, L), kept beside the layouts while ptr is equal: what counts_of reads of the sampler
    rule = ("counts", sampler.relation, sampler.p_min, sampler.p_max, sampler.p, num_layers)
    counts = layouts.get(rule)
    if counts is None:
        counts = layouts[rule] = sampler.counts_of(sizes, num_layers).to(device)
    valid = torch.ones(graph_of.numel(), dtype=torch.bool, device=device)
    return segment_masks(sampler.relation, counts, valid, graph_of, sampler.weights(graph), generator,
                         layouts=layouts)
