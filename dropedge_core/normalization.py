"""Per-layer adjacency normalisations (paper appendix, "The applied normalization methods").

``D`` are the degrees of the kept adjacency ``A``, ``D~`` those of ``A + I``:

======  =====================================  ===========================================
name    formula                                 note
======  =====================================  ===========================================
NA      D^-1/2 A D^-1/2                         isolated node: zero row (never inf/NaN)
FOG     I + D^-1/2 A D^-1/2                     first-order GCN
AN      D~^-1/2 (A + I) D~^-1/2                 GCN renormalisation (default)
ANS     I + D~^-1/2 (A + I) D~^-1/2             AN with an extra self-loop
ARW     D~^-1 (A + I)                           augmented random walk (row-stochastic)
======  =====================================  ===========================================

:func:`adjacencies` turns the ``(L, M)`` masks of a sampler into ``L`` PyG-style
``(edge_index, edge_weight)`` pairs; every node's self-loop entry is included (with
weight 0 for NA), so all methods return the same sparsity pattern for a layer. Entry
``(i, j)`` of ``edge_index`` is read as row ``i``, column ``j`` of the matrix, i.e.
``out[i] = sum_j w_ij h[j]`` — :func:`propagate` does exactly that.
"""
from __future__ import annotations

import torch

from .graph import Graph, GraphError

METHODS = ("NA", "FOG", "AN", "ANS", "ARW")


class NormalizationError(ValueError):
    """Unknown normalisation name."""


def check_method(method: str) -> str:
    key = str(method).strip().upper()
    if key not in METHODS:
        raise NormalizationError(f"unknown normalization {method!r}; valid: {', '.join(METHODS)}")
    return key


def adjacencies(graph: Graph, masks: torch.Tensor, method: str = "AN",
                ) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Normalised adjacency of every layer, from a sampler's masks.

    Args:
        graph: the graph the masks index.
        masks: ``(L, M)`` bool (undirected) or ``(L, 2M)`` bool (``directed=True``
            samplers, columns of ``graph.edge_index``).
        method: one of :data:`METHODS` (default ``"AN"``).

    Returns:
        ``L`` pairs ``(edge_index (2, E_l + N), edge_weight (E_l + N,))``, self-loops
        included, entries sorted by (row, column). All layers are normalised in one
        vectorised pass (:func:`layer_weights`), then split.
    """
    kept, weight = layer_weights(graph, masks, method)
    # nonzero() of the row-major (L, 2M + N) mask lists each layer's entries layer after
    # layer: gather once, split into per-layer views.
    layer, entry = kept.nonzero(as_tuple=True)
    index, values = entry_index(graph)[:, entry], weight[layer, entry]
    sizes = kept.sum(1).tolist()
    return list(zip(index.split(sizes, dim=1), values.split(sizes)))


def entry_index(graph: Graph) -> torch.Tensor:
    """``(2, 2M + N)``: the entries every layer's adjacency draws from — the ``2M``
    directed edges of ``graph.edge_index`` and the ``N`` self-loops — sorted by (row,
    column), i.e. in CSR order, so that a layer's weights over these entries are the
    values of a CSR matrix with a fixed pattern."""
    if "entry_index" not in graph.cache:
        _build_entries(graph)
    return graph.cache["entry_index"]


def entry_columns(graph: Graph, width: int) -> torch.Tensor:
    """``(2M + N,)`` long: for each entry of :func:`entry_index`, its column in a mask of
    ``width`` columns (``M``: undirected edge id; ``2M``: direction, i.e. column of
    ``edge_index``), and ``width`` for a self-loop (a column that is always kept)."""
    m = graph.num_edges
    if width not in (m, 2 * m):
        raise GraphError(f"mask width {width} matches neither M={m} nor 2M={2 * m}")
    key = ("entry_columns", width)
    if key not in graph.cache:
        entry_index(graph)  # builds the entries once
        direction = graph.cache["entry_direction"]  # -1 for self-loops
        column = direction % m if width == m else direction
        graph.cache[key] = torch.where(direction < 0, torch.full_like(direction, width), column)
    return graph.cache[key]


def _build_entries(graph: Graph) -> None:
    n = graph.num_nodes
    loops = torch.arange(n, device=graph.edge_index.device)
    index = torch.cat([graph.edge_index, loops.expand(2, -1)], dim=1)
    direction = torch.cat([torch.arange(graph.edge_index.size(1), device=loops.device),
                           torch.full_like(loops, -1)])
    order = torch.argsort(index[0] * n + index[1])
    graph.cache["entry_index"] = index[:, order]
    graph.cache["entry_direction"] = direction[order]
    graph.cache["entry_loops"] = (direction[order] < 0).nonzero().flatten()


def layer_weights(graph: Graph, masks: torch.Tensor, method: str = "AN",
                  ) -> tuple[torch.Tensor, torch.Tensor]:
    """Normalised weights of every layer over the fixed entries of :func:`entry_index`.

    Returns ``(kept, weight)``, both ``(L, 2M + N)`` in CSR order: ``kept`` (bool) marks
    the entries present at each layer (kept directions and all self-loops), ``weight``
    (:func:`layer_values`) their normalised values, exactly zero where ``kept`` is False.
    :func:`adjacencies` compacts these per layer.
    """
    kept, weight = _layer_weights(graph, masks, method)
    return kept.bool(), weight


def layer_values(graph: Graph, masks: torch.Tensor, method: str = "AN") -> torch.Tensor:
    """``(L, 2M + N)``: the normalised weight of every entry of :func:`entry_index` at
    every layer, zero for dropped edges — the values of ``L`` CSR matrices with one fixed
    pattern (the trainer's :class:`~dropedge_core.training.AdjacencyBuilder`).

    One vectorised pass for all layers, a handful of whole-array operations whatever
    ``L``: the masks gathered into entry order, the degrees of all layers as one
    ``index_add``, two gathers of the degree scalings, one transpose.
    """
    return _layer_weights(graph, masks, method)[1]


def _layer_weights(graph: Graph, masks: torch.Tensor, method: str) -> tuple[torch.Tensor, torch.Tensor]:
    """``(kept, weight)`` with ``kept`` as 0/1 floats (see :func:`layer_weights`)."""
    method = check_method(method)
    device = graph.edge_index.device
    num_layers, width = masks.shape
    columns = entry_columns(graph, width)
    rows, cols = entry_index(graph)
    # Computed in the transposed (entries, L) layout, where gathers and index_add move
    # contiguous rows of L values (several times faster than along dim 1 of (L, entries)),
    # with one transpose at the end. Floats, not bool: the masks become the weights.
    padded = torch.empty(width + 1, num_layers, device=device)
    padded[:width] = masks.t()
    padded[width] = 1.0  # the self-loops' row
    kept = padded.index_select(0, columns)
    # degrees of A + I (every kept entry of a row, its self-loop included)
    deg = torch.zeros(graph.num_nodes, num_layers, device=device).index_add_(0, rows, kept)
    augmented = method in ("AN", "ANS", "ARW")
    if not augmented:
        deg -= 1.0
    if method == "ARW":
        weight = deg.reciprocal_().index_select(0, rows).mul_(kept)
    else:
        if augmented:  # every degree is >= 1 (the self-loop)
            d_isqrt = deg.rsqrt_()
        else:  # isolated node under NA/FOG: degree 0 -> inverse sqrt 0, a zero row, not inf
            d_isqrt = torch.where(deg > 0, deg.rsqrt(), torch.zeros_like(deg))
        weight = d_isqrt.index_select(0, rows).mul_(d_isqrt.index_select(0, cols)).mul_(kept)
        if method in ("NA", "FOG"):  # D^-1/2 A D^-1/2 has no diagonal
            weight[entry_loops(graph)] = 0.0
        if method in ("FOG", "ANS"):  # ... plus I
            weight[entry_loops(graph)] += 1.0
    return kept.t(), weight.t().contiguous()


def entry_loops(graph: Graph) -> torch.Tensor:
    """``(N,)`` long: the positions of the self-loops among :func:`entry_index`."""
    entry_index(graph)  # builds the entries once
    return graph.cache["entry_loops"]


def full_adjacency(graph: Graph, method: str = "AN") -> tuple[torch.Tensor, torch.Tensor]:
    """The normalised adjacency of the whole graph (evaluation uses the full graph)."""
    ones = torch.ones(1, graph.num_edges, dtype=torch.bool, device=graph.undirected_edges.device)
    return adjacencies(graph, ones, method)[0]


def to_dense(edge_index: torch.Tensor, edge_weight: torch.Tensor, num_nodes: int) -> torch.Tensor:
    """Dense ``(N, N)`` matrix of an ``(edge_index, edge_weight)`` pair (tests, small graphs)."""
    out = torch.zeros(num_nodes, num_nodes, dtype=edge_weight.dtype, device=edge_weight.device)
    out.index_put_((edge_index[0], edge_index[1]), edge_weight, accumulate=True)
    return out


def to_sparse(edge_index: torch.Tensor, edge_weight: torch.Tensor, num_nodes: int) -> torch.Tensor:
    """A torch sparse CSR ``(N, N)`` matrix for fast ``A @ H`` products."""
    coo = torch.sparse_coo_tensor(edge_index, edge_weight, (num_nodes, num_nodes))
    return coo.coalesce().to_sparse_csr()


def propagate(adj: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
    """``adj @ h`` for a sparse ``adj`` from :func:`to_sparse`."""
    return torch.sparse.mm(adj, h)
