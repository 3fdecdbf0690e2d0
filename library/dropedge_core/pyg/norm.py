"""The paper's five normalisations over a PyG ``edge_index`` (one layer's kept edges).

PyG's convention: column ``(j, i)`` of ``edge_index`` is a message from source ``j`` to
target ``i``, ``out[i] = sum_j w_ji h[j]``; the degree of a node is the number of edges
into it (as :func:`torch_geometric.nn.conv.gcn_conv.gcn_norm` counts it). On a symmetric
``edge_index`` this is the matrix of :mod:`dropedge_core.normalization`.

``AN`` is :func:`~torch_geometric.nn.conv.gcn_conv.gcn_norm` itself (what ``GCNConv``
computes when ``normalize=True``); ``NA``, ``FOG``, ``ANS`` and ``ARW`` have no PyG
equivalent and are computed here, vectorised. Input self-loops are dropped before the
formula (the paper's ``A`` has none; ``gcn_norm`` likewise replaces them by ``I``);
duplicate columns count as parallel edges, as in ``gcn_norm``.
"""
from __future__ import annotations

import torch
from torch import Tensor
from torch_geometric.nn.conv.gcn_conv import gcn_norm
from torch_geometric.utils import remove_self_loops

from dropedge_core.normalization import check_method
from dropedge_core.pyg.checks import check_edge_index, check_edge_values

__all__ = ["normalize"]


def normalize(edge_index: Tensor, num_nodes: int | None = None, method: str = "AN",
              edge_weight: Tensor | None = None) -> tuple[Tensor, Tensor]:
    r"""Normalised weights of one layer's graph, for a layer with :obj:`normalize=False`
    (e.g. :obj:`GCNConv(..., normalize=False)(x, edge_index, edge_weight)`).

    ``D`` are the degrees of ``A``, ``D~`` those of ``A + I``:
    :obj:`"NA"` ``D^-1/2 A D^-1/2`` (no self-loops; an isolated node gets nothing, never
    inf/NaN), :obj:`"FOG"` ``I + D^-1/2 A D^-1/2``, :obj:`"AN"` ``D~^-1/2 (A + I) D~^-1/2``
    (PyG's :obj:`gcn_norm`), :obj:`"ANS"` ``I + D~^-1/2 (A + I) D~^-1/2``, :obj:`"ARW"`
    ``D~^-1 (A + I)`` (each target's incoming weights sum to 1). With
    :obj:`edge_weight`, ``A`` holds the weights and a degree is the sum of a target's
    incoming weights (``gcn_norm``'s weighted degree); the added ``I`` weighs 1. For
    :obj:`"AN"` this is :obj:`gcn_norm(edge_index, edge_weight, add_self_loops=True)`
    exactly, so an input self-loop keeps its weight there; the other four drop input
    self-loops first.

    Args:
        edge_index (LongTensor): The edge indices (one layer's kept edges).
        num_nodes (int, optional): The number of nodes. (default: :obj:`max_id + 1`)
        method (str, optional): :obj:`"NA"`, :obj:`"FOG"`, :obj:`"AN"`, :obj:`"ANS"` or
            :obj:`"ARW"`. (default: :obj:`"AN"`)
        edge_weight (Tensor, optional): One finite, non-negative weight per column
            :obj:`(E,)`. (default: :obj:`None`: every edge weighs 1)

    :rtype: (:class:`LongTensor`, :class:`Tensor`): the edges (self-loops appended
        except for :obj:`"NA"`) and their weights.

    Example:
        >>> edge_index = torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]])
        >>> ei, w = normalize(edge_index, method="ARW")
        >>> ei
        tensor([[0, 1, 1, 2, 0, 1, 2],
                [1, 0, 2, 1, 0, 1, 2]])
        >>> w  # 1 / (in-degree + 1) of each target
        tensor([0.3333, 0.5000, 0.5000, 0.3333, 0.5000, 0.3333, 0.5000])
        >>> normalize(edge_index, method="ARW", edge_weight=torch.tensor([3., 1., 1., 1.]))[1]  # 0->1: 3/5
        tensor([0.6000, 0.5000, 0.5000, 0.2000, 0.5000, 0.2000, 0.5000])
    """
    method = check_method(method)
    num_nodes = check_edge_index(edge_index, num_nodes)
    check_edge_values("edge_weight", edge_weight, edge_index.size(1))
    if edge_weight is not None and bool((edge_weight < 0).any()):
        raise ValueError(f"edge_weight holds a negative weight ({float(edge_weight.min())}); "
                         "the normalisations take a root or inverse of weighted degrees")
    edge_index = edge_index.long()
    if method == "AN":
        return gcn_norm(edge_index, edge_weight, num_nodes, add_self_loops=True)
    edge_index, edge_weight = remove_self_loops(edge_index, edge_weight)
    src, dst = edge_index
    device = edge_index.device
    a = torch.ones(dst.numel(), device=device) if edge_weight is None else edge_weight.float()
    deg = torch.zeros(num_nodes, device=device).index_add_(0, dst, a)
    loops = torch.arange(num_nodes, device=device)
    if method in ("NA", "FOG"):  # degree 0 -> inverse root 0: a zero row, never inf
        inv = torch.where(deg > 0, deg.clamp(min=torch.finfo(deg.dtype).tiny).rsqrt(), torch.zeros_like(deg))
        weight = inv[src] * a * inv[dst]
        if method == "NA":
            return edge_index, weight
        loop_weight = torch.ones(num_nodes, device=device)
    elif method == "ANS":
        inv = (deg + 1).rsqrt()
        weight, loop_weight = inv[src] * a * inv[dst], inv * inv + 1
    else:  # ARW: row i of D~^-1 (A + I) is target i's incoming edges over its degree
        inv = (deg + 1).reciprocal()
        weight, loop_weight = a * inv[dst], inv
    return torch.cat([edge_index, loops.expand(2, -1)], dim=1), torch.cat([weight, loop_weight])
