"""Per-graph keep counts for a batch of graphs.

A PyG mini-batch is one big graph of disjoint parts (``batch[i]``: the graph of node
``i``). Sampled as one graph, a layer keeps ``floor(rate * M)`` of all ``M`` edges, so one
small graph may lose all its edges while another loses none. With ``batch``, every graph
``g`` keeps ``floor(rate * M_g)`` of its own ``M_g`` at every layer. The graphs' undirected
edges are contiguous slices of the batch's sorted edge list (a graph's node ids are
contiguous), found with one ``searchsorted``. How the masks are drawn:

* **uniform samplers** (NoDrop, DropEdge, LI, LID, LDD): the whole batch in one pass, no
  loop over graphs. Per-graph counts come from the graphs' sizes in one
  :meth:`~dropedge_core.samplers.EdgeSampler.counts_of`; one row of uniform keys (LI:
  one per layer) orders every graph's edges at random, a stable sort by graph id
  (:func:`_ranks_in_graphs`) gives each edge its rank within its graph, and a layer keeps
  the ranks below its graph's count. The law is each sampler's on each graph alone
  (exactly ``floor(rate * M_g)`` kept, every edge of a graph equally likely, LID/LDD
  nested, LI's layers independent, DropEdge's shared), but **not the stream** of
  drawing the graphs one after the other: a seed gives other masks than the per-graph
  loop this path replaced. Training (:meth:`~dropedge_core.samplers.EdgeSampler.sample`
  on a ``Graph``) never comes here, so no training run's stream changed.
* **kernel samplers** (FD, DropEdge++): each graph drawn by the sampler on its own graph,
  one graph after the other with the same generator (so they equal sampling each graph
  alone, in batch order): a loop over graphs, each drawing all its layers at once.
"""
from __future__ import annotations

import torch
from torch import Tensor

from dropedge_core import samplers
from dropedge_core.graph import Graph
from dropedge_core.samplers import draw_device

__all__ = ["check_batch", "sample_per_graph"]

#: The fewest random bits per key of the one-sort path of :func:`_ranks_in_graphs` (the
#: graph id takes the rest of 62): 48, up to 2**14 graphs in a batch; more graphs take
#: two sorts. The uniform samplers' float64 keys have 53.
RANDOM_BITS = 48


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


def _ranks_in_graphs(graph_of: Tensor, sizes: Tensor, rows: int, generator: torch.Generator | None,
                     device: torch.device) -> Tensor:
    """``(rows, n)``: in every row, each item's rank within its graph in a uniformly random
    order of that graph's items (``0..sizes[g] - 1``), the rows independent.

    Args:
        graph_of (LongTensor): :obj:`(n,)`, the graph of every item.
        sizes (LongTensor): :obj:`(B,)`, the items of every graph (``bincount(graph_of)``).
        rows (int): how many independent orders.
        generator (torch.Generator, optional): The random source.
        device (torch.device): where the keys are drawn (the generator's).
    """
    n = graph_of.numel()
    random_bits = 62 - max(1, (sizes.numel() - 1).bit_length())
    if random_bits >= RANDOM_BITS:
        # one sort of integer keys ``graph << bits | random``: graph-major, random within a
        # graph (keys equal only where the random bits are: rarer than with float64 keys)
        keys = torch.randint(0, 2**random_bits, (rows, n), generator=generator, device=device)
        order = torch.argsort(keys.bitwise_or_(graph_of << random_bits), dim=1)
    else:  # too many graphs for the bits: a random order, then grouped by graph (stable)
        keys = torch.rand((rows, n), generator=generator, device=device, dtype=torch.float64)
        order = torch.argsort(keys, dim=1)
        order = order.gather(1, torch.sort(graph_of[order], dim=1, stable=True).indices)
    first = torch.cumsum(sizes, 0) - sizes  # where each graph's items start in that order
    position = torch.arange(n, device=device).expand(rows, n)
    ranks = torch.empty_like(order)
    return ranks.scatter_(1, order, position - first[graph_of[order]])


def _uniform_per_graph(graph: Graph, ptr: Tensor, sampler: samplers.EdgeSampler, num_layers: int,
                       generator: torch.Generator | None) -> Tensor:
    """:func:`sample_per_graph` of a uniform sampler, the whole batch in one pass (the law
    and the stream: the module docstring)."""
    lo = graph.undirected_edges[0].contiguous()
    device = draw_device(generator, lo)
    edges = torch.searchsorted(lo, ptr.to(lo.device)).diff().to(device)  # M_g: (B,)
    graph_of = torch.repeat_interleave(torch.arange(edges.numel(), device=device), edges)
    sizes = edges
    if sampler.directed:  # the batch's 2M columns: all edges, then all reverses
        graph_of, sizes = torch.cat([graph_of, graph_of]), 2 * edges
    n = graph_of.numel()
    if sampler.relation == "all" or n == 0:
        return torch.ones(num_layers, n, dtype=torch.bool, device=device)
    counts = sampler.counts_of(sizes, num_layers).to(device)  # (B, L)
    rows = num_layers if sampler.relation == "independent" else 1  # nested: prefixes of one order
    ranks = _ranks_in_graphs(graph_of, sizes, rows, generator, device)
    if sampler.relation == "shared":  # one count per graph: one row, seen by every layer
        return (ranks < counts[graph_of, :1].t()).expand(num_layers, n)
    return ranks < counts[graph_of].t()


def sample_per_graph(graph: Graph, ptr: Tensor, sampler: samplers.EdgeSampler, num_layers: int,
                     generator: torch.Generator | None = None, cache: dict | None = None) -> Tensor:
    """``(L, M)`` (``(L, 2M)`` if directed) masks of ``graph``, every part of ``ptr`` keeping
    its own share of its own edges: a uniform sampler's in one pass over the batch, a kernel
    sampler's drawn part by part (the module docstring).

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
    if sampler.weighting == "uniform":
        return _uniform_per_graph(graph, ptr, sampler, num_layers, generator)
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
