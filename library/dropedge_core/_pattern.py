"""The shared sparsity pattern of every layer's adjacency: the entries of ``A + I`` in CSR
order, built once per graph (:meth:`Graph.derived`).

Every layer's matrix is a set of values over these ``2M + N`` entries (a dropped edge
has value 0), so one pattern, one column index and one transpose index serve all
layers: :mod:`~dropedge_core.normalization` fills the values,
:mod:`~dropedge_core._sparse_products` multiplies with them.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from dropedge_core.graph import Graph, GraphError


@dataclass(frozen=True)
class Entries:
    """The entries every layer's adjacency draws from, built once per graph.

    Args:
        index (Tensor): ``(2, 2M + N)`` long — the ``2M`` directed edges of
            ``graph.edge_index`` and the ``N`` self-loops, sorted by (row, column), i.e. in
            CSR order.
        direction (Tensor): ``(2M + N,)`` int: each entry's column of ``edge_index``,
            ``-1`` for a self-loop (int32 when it fits: memory).
        loops (Tensor): ``(N,)`` long: the positions of the self-loops among ``index``.
    """

    index: torch.Tensor
    direction: torch.Tensor
    loops: torch.Tensor


def entries(graph: Graph) -> Entries:
    """The graph's :class:`Entries`, built on first use and published whole (one object,
    so no reader sees the index without its directions).

    Args:
        graph (Graph): the graph.
    """
    return graph.derived(_build_entries)


def entry_index(graph: Graph) -> torch.Tensor:
    """``(2, 2M + N)``: the entries every layer's adjacency draws from — the ``2M``
    directed edges of ``graph.edge_index`` and the ``N`` self-loops — sorted by (row,
    column), i.e. in CSR order, so that a layer's weights over these entries are the
    values of a CSR matrix with a fixed pattern.

    Args:
        graph (Graph): the graph.
    """
    return entries(graph).index


def entry_columns(graph: Graph, width: int) -> torch.Tensor:
    """``(2M + N,)`` long: for each entry of :func:`entry_index`, its column in a mask of
    ``width`` columns (``M``: undirected edge id; ``2M``: direction, i.e. column of
    ``edge_index``), and ``width`` for a self-loop (a column that is always kept).

    Args:
        graph (Graph): the graph.
        width (int): the masks' width, ``M`` or ``2M``.
    """
    m = graph.num_edges
    if width not in (m, 2 * m):
        raise GraphError(f"mask width {width} matches neither M={m} nor 2M={2 * m}")
    return graph.derived(_entry_columns, width)


def _entry_columns(graph: Graph, width: int) -> torch.Tensor:
    direction = entries(graph).direction  # -1 for self-loops
    column = direction % graph.num_edges if width == graph.num_edges else direction
    return torch.where(direction < 0, torch.full_like(direction, width), column).long()


def entry_transpose(graph: Graph) -> torch.Tensor:
    """``(2M + N,)``: for each entry ``(i, j)`` of :func:`entry_index`, the position of entry
    ``(j, i)`` (a self-loop: its own). The pattern holds both directions of every edge, so
    a layer's ``A^T`` has ``A``'s pattern with its values gathered by this index
    (:mod:`~dropedge_core._sparse_products`). Direction ``d`` reverses ``d ± M``.

    Args:
        graph (Graph): the graph.
    """
    return graph.derived(_entry_transpose)


def _entry_transpose(graph: Graph) -> torch.Tensor:
    direction, m = entries(graph).direction.long(), graph.num_edges
    position = torch.arange(direction.numel(), device=direction.device)
    edge = (direction >= 0).nonzero().squeeze(1)
    where = torch.empty(2 * m, dtype=torch.long, device=direction.device)  # position of a direction
    where.index_copy_(0, direction.index_select(0, edge), edge)
    reverse = (direction.index_select(0, edge) + m).remainder_(2 * m)
    position.index_copy_(0, edge, where.index_select(0, reverse))
    return position.int() if position.numel() < 2**31 else position


def _build_entries(graph: Graph) -> Entries:
    """The entries in CSR order without sorting them. Row ``i`` of ``A + I`` lists, by
    column: the directions ``i -> u`` of its edges ``(u, i)``, ``u < i`` (ordered by
    ``u``), its self-loop, then the directions ``i -> v`` of its edges ``(i, v)``,
    ``v > i`` — the latter already consecutive and ordered in ``undirected_edges``
    (sorted by ``(u, v)``). So only the edges need a stable sort by ``v`` (half the
    entries, 32-bit keys: ~4x faster than sorting all ``(row, col)`` keys); every
    position then follows from the row offsets."""
    n, m = graph.num_nodes, graph.num_edges
    u, v = graph.undirected_edges
    device = u.device
    key = u * n + v
    if m > 1 and not bool((key[1:] > key[:-1]).all()):  # not the documented sorted order
        return _build_entries_by_sort(graph)
    fwd = torch.bincount(u, minlength=n)  # entries right of the diagonal, per row
    bwd = torch.bincount(v, minlength=n)  # ... and left of it
    crow = torch.zeros(n + 1, dtype=torch.long, device=device)
    torch.cumsum(fwd + bwd + 1, 0, out=crow[1:])
    fwd_start = torch.cumsum(fwd, 0) - fwd  # first edge of each u in undirected_edges
    edge = torch.arange(m, device=device)
    loop_pos = crow[:-1] + bwd
    # index_select / index_copy_: several times faster on the CPU than [] indexing
    pos_fwd = (loop_pos - fwd_start + 1).index_select(0, u).add_(edge)
    by_v = torch.sort(v.int() if n < 2**31 else v, stable=True).indices  # edges by (v, u)
    bwd_start = torch.cumsum(bwd, 0) - bwd
    v_by_v = v.index_select(0, by_v)
    pos_bwd = torch.empty(m, dtype=torch.long, device=device).index_copy_(
        0, by_v, (crow[:-1] - bwd_start).index_select(0, v_by_v).add_(edge))
    index = torch.empty(2, 2 * m + n, dtype=torch.long, device=device)
    direction = torch.empty(2 * m + n, dtype=torch.long, device=device)
    loops = torch.arange(n, device=device)
    for pos, rows, cols, ids in ((pos_fwd, u, v, edge), (pos_bwd, v, u, edge + m),
                                 (loop_pos, loops, loops, torch.full_like(loops, -1))):
        index[0].index_copy_(0, pos, rows)
        index[1].index_copy_(0, pos, cols)
        direction.index_copy_(0, pos, ids)
    return Entries(index, direction.int() if 2 * m < 2**31 else direction, loop_pos)  # int32: memory


def _build_entries_by_sort(graph: Graph) -> Entries:
    n = graph.num_nodes
    loops = torch.arange(n, device=graph.edge_index.device)
    index = torch.cat([graph.edge_index, loops.expand(2, -1)], dim=1)
    direction = torch.cat([torch.arange(graph.edge_index.size(1), device=loops.device),
                           torch.full_like(loops, -1)])
    order = torch.argsort(index[0] * n + index[1])
    return Entries(index[:, order], direction[order], (direction[order] < 0).nonzero().flatten())


def entry_loops(graph: Graph) -> torch.Tensor:
    """``(N,)`` long: the positions of the self-loops among :func:`entry_index`.

    Args:
        graph (Graph): the graph.
    """
    return entries(graph).loops
