"""What a picture of sampled layers shows: the drawn nodes and edges as tables, each
layer's kept edges, and the kernel weights binned for colouring.

:func:`edge_drawing` computes everything once per (graph, masks, drawn part) so that
:func:`dropedge_explorer.figures.layer_edges` (one layer) and
:func:`~dropedge_explorer.figures.layer_edges_animation` (every layer) only select and draw.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from dropedge_core.graph import Graph

from dropedge_explorer.studies.graph_layout import GraphLayout
from dropedge_explorer.studies.sampling import undirected_masks

__all__ = ["EdgeDrawing", "edge_drawing"]


@dataclass(frozen=True)
class EdgeDrawing:
    """The tables of a drawing of ``L`` sampled layers (``n`` nodes, ``E`` edges drawn),
    made by :func:`edge_drawing`.

    Args:
        nodes (pandas.DataFrame): one row per drawn node: ``node`` (id), ``x, y``
            (position), ``label`` (class, ``-1`` unlabelled), ``degree`` (in the drawn part).
        edges (pandas.DataFrame): one row per drawn undirected edge (both ends drawn):
            ``u, v`` (node ids), ``x0, y0, x1, y1`` (end positions), ``intra`` (same class
            at both ends), ``weight`` (kernel weight, ``nan`` unweighted) and ``bin`` (its
            weight bin).
        kept (numpy.ndarray): ``(L, E)`` bool: edge ``e`` kept at layer ``l``.
        kept_degree (numpy.ndarray): ``(L, n)`` long: each drawn node's kept edges at each
            layer.
        bin_labels (tuple[str, ...]): one legend label per weight bin (``("kept",)``
            unweighted).
        weighted (bool): whether kernel weights were given (the hover shows them).
    """

    nodes: pd.DataFrame
    edges: pd.DataFrame
    kept: np.ndarray
    kept_degree: np.ndarray
    bin_labels: tuple[str, ...]
    weighted: bool

    @property
    def num_layers(self) -> int:
        return int(self.kept.shape[0])


def _fmt_weight(w: float) -> str:
    """Kernel weights for legends: the 1e-10 floor reads as 0."""
    return "0" if w < 1e-6 else f"{w:.2g}"


def weight_bins(weights: np.ndarray, n_bins: int) -> tuple[np.ndarray, tuple[str, ...]]:
    """Kernel weights in ``n_bins`` quantile bins: ``(bin of each weight, bin labels)``.

    Bin ``b`` holds the weights in ``(inner[b-1], inner[b]]`` of the inner quantiles,
    rounded to 6 significant digits (float noise must not split a tie into two bins);
    ties at a quantile (e.g. the many 1e-10 "zero similarity" edges) stay in the lower
    bin. Equal weights (e.g. karate's one-hot features) make one bin.

    Example:
        >>> weight_bins(np.array([1.0, 2.0, 3.0, 4.0]), 2)
        (array([0, 0, 1, 1]), ('kept, weight 1–2.5', 'kept, weight 2.5–4'))
    """
    inner = np.zeros(0)
    if weights.size and not np.isclose(weights.min(), weights.max(), rtol=1e-6, atol=0.0):
        q = np.quantile(weights, np.linspace(0, 1, n_bins + 1)[1:-1])
        inner = np.unique([float(f"{v:.6g}") for v in q])
    if inner.size == 0:
        return np.zeros(weights.shape[0], dtype=np.int64), ("kept (all kernel weights equal)",)
    lo = np.concatenate([[weights.min()], inner])
    hi = np.concatenate([inner, [weights.max()]])
    labels = tuple(f"kept, weight {_fmt_weight(a)}–{_fmt_weight(b)}" for a, b in zip(lo, hi))
    return np.searchsorted(inner, weights, side="left"), labels


def _drawn_part(graph: Graph, positions, nodes) -> tuple[np.ndarray, np.ndarray]:
    """``(ids, pos)`` of the drawn nodes, checked against each other."""
    if isinstance(positions, GraphLayout):
        nodes = positions.nodes if nodes is None else nodes
        positions = positions.positions
    pos = np.asarray(positions, dtype=np.float64)
    ids = np.arange(graph.num_nodes) if nodes is None else np.asarray(nodes, dtype=np.int64)
    if pos.shape != (ids.shape[0], 2):
        raise ValueError(f"positions must be (n, 2) for the n={ids.shape[0]} drawn nodes "
                         f"(got {pos.shape})")
    return ids, pos


def _edge_weights(graph: Graph, weights, edge_ids: np.ndarray) -> np.ndarray | None:
    if weights is None:
        return None
    w = torch.as_tensor(weights).cpu().double().numpy()
    if w.shape[0] == 2 * graph.num_edges:  # directed weights: the mean of both ways
        w = (w[: graph.num_edges] + w[graph.num_edges:]) / 2
    return w[edge_ids]


def edge_drawing(graph: Graph, masks: torch.Tensor, positions: np.ndarray | GraphLayout,
                 weights: torch.Tensor | None = None, nodes: np.ndarray | torch.Tensor | None = None,
                 n_bins: int = 4) -> EdgeDrawing:
    """The drawing of a sampler's layers at fixed node positions.

    Args:
        graph (Graph): the graph the masks index.
        masks (torch.Tensor): ``(L, M)`` bool masks of a sampler (``(L, 2M)`` directed masks
            count an edge as kept when either direction is).
        positions (numpy.ndarray or GraphLayout): ``(n, 2)`` positions of the drawn nodes,
            or a :class:`~.graph_layout.GraphLayout` (which also gives ``nodes``).
        weights (torch.Tensor, optional): ``(M,)`` or ``(2M,)`` kernel weights (FD /
            DropEdge++), binned into ``n_bins`` quantile bins. (default: :obj:`None`)
        nodes (numpy.ndarray or torch.Tensor, optional): ``(n,)`` ids of the drawn nodes
            (``None``: all ``N``). Only edges with both ends drawn are drawn.
            (default: :obj:`None`)
        n_bins (int, optional): the number of weight bins. (default: :obj:`4`)
    """
    ids, pos = _drawn_part(graph, positions, nodes)
    masks = undirected_masks(graph, masks.cpu())
    if masks.dim() != 2 or masks.size(1) != graph.num_edges:
        raise ValueError(f"masks must be (L, M) with M={graph.num_edges} (got {tuple(masks.shape)})")
    local = np.full(graph.num_nodes, -1, dtype=np.int64)
    local[ids] = np.arange(ids.shape[0])
    u, v = graph.undirected_edges.cpu().numpy()
    edge_ids = np.nonzero((local[u] >= 0) & (local[v] >= 0))[0]
    lu, lv = local[u[edge_ids]], local[v[edge_ids]]
    kept = masks[:, torch.from_numpy(edge_ids)].numpy()  # (L, E)
    y = graph.y.cpu().numpy()
    w = _edge_weights(graph, weights, edge_ids)
    bins, labels = (np.zeros(edge_ids.shape[0], dtype=np.int64), ("kept",)) if w is None \
        else weight_bins(w, n_bins)
    edges = pd.DataFrame({"u": u[edge_ids], "v": v[edge_ids], "x0": pos[lu, 0], "y0": pos[lu, 1],
                          "x1": pos[lv, 0], "y1": pos[lv, 1], "intra": y[u[edge_ids]] == y[v[edge_ids]],
                          "weight": np.full(edge_ids.shape[0], np.nan) if w is None else w, "bin": bins})
    n = ids.shape[0]
    ends = np.concatenate([lu, lv])
    nodes_df = pd.DataFrame({"node": ids, "x": pos[:, 0], "y": pos[:, 1], "label": y[ids],
                             "degree": np.bincount(ends, minlength=n)})
    # per layer, the kept edges' ends counted at once: offset each layer's node ids by l * n
    layer_of = np.nonzero(np.concatenate([kept, kept], axis=1))
    kept_degree = np.bincount(layer_of[0] * n + ends[layer_of[1]],
                              minlength=kept.shape[0] * n).reshape(kept.shape[0], n)
    return EdgeDrawing(nodes_df, edges, kept, kept_degree, labels, w is not None)
