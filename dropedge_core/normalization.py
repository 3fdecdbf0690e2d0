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

from .graph import Graph

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
        included. All layers are normalised in one vectorised pass (stacked as one
        block-diagonal graph), then split.
    """
    method = check_method(method)
    kept, weight = layer_weights(graph, masks, method)
    # nonzero() of the row-major (L, 2M + N) mask lists each layer's kept edges, then its
    # self-loops, layer after layer: gather once, split into per-layer views.
    layer, entry = kept.nonzero(as_tuple=True)
    index, values = entry_index(graph)[:, entry], weight[layer, entry]
    sizes = kept.sum(1).tolist()
    return list(zip(index.split(sizes, dim=1), values.split(sizes)))


def entry_index(graph: Graph) -> torch.Tensor:
    """``(2, 2M + N)``: the entries every layer's adjacency draws from — the ``2M``
    directed edges of ``graph.edge_index``, then the ``N`` self-loops."""
    if "entry_index" not in graph.cache:
        loops = torch.arange(graph.num_nodes, device=graph.edge_index.device)
        graph.cache["entry_index"] = torch.cat([graph.edge_index, loops.expand(2, -1)], dim=1)
    return graph.cache["entry_index"]


def layer_weights(graph: Graph, masks: torch.Tensor, method: str = "AN",
                  ) -> tuple[torch.Tensor, torch.Tensor]:
    """Normalised weights of every layer over the fixed entries of :func:`entry_index`.

    Returns ``(kept, weight)``, both ``(L, 2M + N)``: ``kept`` marks the entries present
    at each layer (kept directions and all self-loops), ``weight`` their normalised
    values, exactly zero where ``kept`` is False. One vectorised pass for all layers:
    the degrees of all layers are one ``index_add`` of the ``(L, 2M)`` kept directions.
    Consumers with a fixed sparsity pattern (the trainer's CSR matrices) use this
    directly; :func:`adjacencies` compacts it per layer.
    """
    method = check_method(method)
    directed = graph.directed_mask(masks.to(graph.undirected_edges.device))
    num_layers, n = directed.size(0), graph.num_nodes
    ei = graph.edge_index
    kept = torch.cat([directed, torch.ones(num_layers, n, dtype=torch.bool, device=directed.device)], dim=1)
    deg = torch.zeros(num_layers, n, device=directed.device).index_add_(1, ei[0], directed.float())
    weight = _weights(deg, ei[0], ei[1], method, dim=1)
    return kept, weight * kept


def _weights(deg: torch.Tensor, row: torch.Tensor, col: torch.Tensor, method: str,
             dim: int = 0) -> torch.Tensor:
    """Entry weights ``[edges..., self-loops of every node]`` from the degrees ``deg`` of
    the kept adjacency; ``deg`` may carry leading layer dimensions (then ``dim=1``)."""
    augmented = method in ("AN", "ANS", "ARW")
    d = deg + 1.0 if augmented else deg
    if method == "ARW":
        d_inv = d.reciprocal()
        w_edge, w_loop = d_inv.index_select(dim, row), d_inv
    else:
        # isolated node under NA/FOG: degree 0 -> inverse sqrt 0, so a zero row, not inf
        d_isqrt = torch.where(d > 0, d.rsqrt(), torch.zeros_like(d))
        w_edge = d_isqrt.index_select(dim, row) * d_isqrt.index_select(dim, col)
        w_loop = d_isqrt * d_isqrt if augmented else torch.zeros_like(d)
    if method in ("FOG", "ANS"):
        w_loop = w_loop + 1.0
    return torch.cat([w_edge, w_loop], dim=dim)


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
