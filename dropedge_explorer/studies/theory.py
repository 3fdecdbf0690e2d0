"""The paper's theorems, measured (paper §3 Theorem 1 "Over-smoothing", §4.1 MEN and Theorem 3).

* **λ of Theorem 1.** For ``Â = D~^-1/2 (A + I) D~^-1/2`` (the AN normalisation) the
  largest eigenvalue is 1 with multiplicity ``M`` = the number of connected components,
  eigenvectors ``e_m = D~^1/2 u_m``; ``λ`` is the largest *magnitude* among the other
  eigenvalues (:func:`second_eigenvalue`). The theorem: ``d_M(H^(l)) ≤ s_l λ d_M(H^(l-1))``,
  so without weights (``s_l = 1``) the distance to the over-smoothing subspace falls at
  least as fast as ``λ^l``. Dropping edges splits the graph into more components and
  raises ``λ`` toward 1: slower collapse.
* **The geometric bound** (:func:`subspace_decay`): ``d_M(Â^l X) / d_M(X)`` measured
  beside ``λ^l``, for the full graph (where the theorem holds) and for each sampler's
  per-layer adjacencies (where it does not apply directly: the subspace changes from
  layer to layer, as the paper says in §4.1).
* **MEN and its upper bound** (:func:`men_bounds`): ``MEN* = (1/L) Σ_l Π_{i<=l} |A^(i)|``
  (Theorem 3, ``|·|`` the non-zero count of ``A^(i) + I``) bounds MEN from above because
  ``|AB| <= |A| |B|``; the theorem says the expected ``MEN*`` of LID is at most LI's.
"""
from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd
import torch
from dropedge_core import metrics, normalization
from dropedge_core.graph import Graph

from dropedge_explorer._lazy import lazy_import
from dropedge_explorer.data.reference import FULL_GRAPH
from dropedge_explorer.studies.teaching import propagated_features

__all__ = [
    "FULL", "lambda_by_layer", "subspace_decay",
    "men_bound_table",
]

#: Up to this many nodes λ is computed densely (exact); above it, by ARPACK (eigsh).
DENSE_MAX_NODES = 200
#: The full graph's rows in the tables below (spelt as
#: :data:`~dropedge_explorer.data.reference.FULL_GRAPH`).
FULL = FULL_GRAPH


def _components(num_nodes: int, edges: np.ndarray) -> np.ndarray:
    mat = lazy_import("scipy.sparse").coo_matrix((np.ones(edges.shape[1]), (edges[0], edges[1])),
                                                 shape=(num_nodes, num_nodes))
    return lazy_import("scipy.sparse.csgraph").connected_components(mat, directed=False)[1]


def second_eigenvalue(graph: Graph, mask: torch.Tensor | None = None) -> float:
    """``λ`` of Theorem 1 for the AN-normalised graph of the kept edges ``mask`` ``(M,)``
    (``None``: every edge): the largest ``|eigenvalue|`` once the eigenvalue 1 of every
    connected component is removed.

    The top eigenspace is known in closed form (``e_m = D~^1/2 u_m``, one per component
    of the kept graph, isolated nodes included), so it is deflated exactly —
    ``B = Â − Σ_m e_m e_mᵀ / ||e_m||²`` — and ``λ = max |eig(B)|``: a dense
    ``eigvalsh`` up to :data:`DENSE_MAX_NODES` nodes, else ARPACK's largest-magnitude
    eigenvalue of ``B`` as a matrix-free operator. A graph whose every node is alone
    (no kept edge) has ``λ = 0``.
    """
    csr_matrix = lazy_import("scipy.sparse").csr_matrix
    linalg = lazy_import("scipy.sparse.linalg")
    n = graph.num_nodes
    if mask is None:
        mask = torch.ones(graph.num_edges, dtype=torch.bool)
    mask = mask.reshape(1, -1).cpu()
    g = graph if graph.x.device.type == "cpu" else graph.to("cpu")
    (ei, ew), = normalization.adjacencies(g, mask, "AN")
    a_hat = csr_matrix((ew.double().numpy(), (ei[0].numpy(), ei[1].numpy())), shape=(n, n))
    kept = g.undirected_edges[:, mask[0]].numpy()
    comp = _components(n, kept)
    deg = np.bincount(kept.ravel(), minlength=n).astype(float) + 1.0
    num_comp = int(comp.max()) + 1 if n else 0
    if num_comp >= n:
        return 0.0
    # P (components x nodes) holds e_m on its rows: the projector on the top
    # eigenspace is P^T diag(1/||e_m||^2) P
    proj = csr_matrix((np.sqrt(deg), (comp, np.arange(n))), shape=(num_comp, n))
    inv_norm2 = 1.0 / np.bincount(comp, weights=deg, minlength=num_comp)

    def deflate(v: np.ndarray) -> np.ndarray:
        v = np.ravel(v)
        return a_hat @ v - proj.T @ (inv_norm2 * (proj @ v))

    if n <= DENSE_MAX_NODES:
        dense = (a_hat - proj.T @ csr_matrix(inv_norm2[:, None] * proj.toarray())).toarray()
        return float(np.abs(np.linalg.eigvalsh((dense + dense.T) / 2)).max())
    op = linalg.LinearOperator((n, n), matvec=deflate, dtype=float)
    v0 = np.random.default_rng(0).standard_normal(n)
    val = linalg.eigsh(op, k=1, which="LM", v0=v0, tol=1e-6, ncv=24, return_eigenvectors=False)
    return float(abs(val[0]))


def lambda_by_layer(graph: Graph, masks_by: Mapping[str, torch.Tensor],
                    num_layers: int | None = None) -> pd.DataFrame:
    """``λ`` of every sampled layer of every sampler, and of the full graph (its rows for
    ``num_layers`` layers; default: as many as the deepest sampler).

    Args:
        graph (Graph): the graph.
        masks_by (Mapping[str, torch.Tensor]): ``{sampler: (L, M) masks}``.
        num_layers (int, optional): the full graph's rows (``None``: as many as the deepest
            sampler). (default: :obj:`None`)

    Returns:
        ``sampler, layer, lam, edges_kept`` — one row per ``(sampler, layer)`` plus the
        rows of :data:`FULL` (the same ``λ`` at every layer).
    """
    full = second_eigenvalue(graph)
    rows = []
    for name, masks in masks_by.items():
        for layer in range(masks.size(0)):  # one eigenproblem per layer
            rows.append({"sampler": name, "layer": layer,
                         "lam": second_eigenvalue(graph, masks[layer]),
                         "edges_kept": int(masks[layer].sum())})
    if num_layers is None:
        num_layers = max((m.size(0) for m in masks_by.values()), default=1)
    rows += [{"sampler": FULL, "layer": layer, "lam": full, "edges_kept": graph.num_edges}
             for layer in range(num_layers)]
    return pd.DataFrame(rows, columns=["sampler", "layer", "lam", "edges_kept"])


def subspace_decay(graph: Graph, masks_by: Mapping[str, torch.Tensor], lam: float | None = None,
                   max_features: int = 64, seed: int = 0) -> pd.DataFrame:
    """Distance to the over-smoothing subspace under linear propagation, with Theorem 1's bound.

    ``H_0 = X`` (features wider than ``max_features`` times a seeded Gaussian matrix, as
    in :func:`dropedge_explorer.studies.sampling.smoothing_curves`), ``H_{l+1} = Â^(l) H_l`` with
    each sampler's AN-normalised kept adjacency; ``M`` is the full graph's subspace.
    Theorem 1 with ``W = I`` (``s_l = 1``) says that for the full graph
    ``d_M(H_l) <= λ^l d_M(H_0)``; ``lam`` defaults to :func:`second_eigenvalue` of the graph.

    Args:
        graph (Graph): the graph.
        masks_by (Mapping[str, torch.Tensor]): ``{sampler: (L, M) masks}``.
        lam (float, optional): the ``λ`` of the bound (``None``: the full graph's
            second eigenvalue). (default: :obj:`None`)
        max_features (int, optional): the widest features propagated before the random
            projection. (default: :obj:`64`)
        seed (int, optional): the seed of the projection. (default: :obj:`0`)

    Returns:
        ``sampler, step, ratio, bound`` — ``ratio = d_M(H_step) / d_M(H_0)``, ``bound =
        λ^step`` (the same column for every sampler; it is a theorem about the full
        graph only).
    """
    lam = second_eigenvalue(graph) if lam is None else float(lam)
    x = propagated_features(graph, max_features, seed)  # the bound holds column by column: for X R too
    g = graph if graph.x.device.type == "cpu" else graph.to("cpu")
    d0 = metrics.subspace_distance(x, g, relative=False)
    n = g.num_nodes
    rows = []
    for name, masks in masks_by.items():
        h = x
        ratios = [1.0 if d0 > 0 else 0.0]
        for ei, ew in normalization.adjacencies(g, masks.cpu(), "AN"):  # a loop over layers
            h = normalization.propagate(normalization.to_sparse(ei, ew, n), h)
            ratios.append(metrics.subspace_distance(h, g, relative=False) / d0 if d0 > 0 else 0.0)
        rows.append(pd.DataFrame({"sampler": name, "step": range(len(ratios)), "ratio": ratios,
                                  "bound": [lam ** s for s in range(len(ratios))]}))
    return pd.concat(rows, ignore_index=True)


def men_bounds(graph: Graph, masks: torch.Tensor) -> dict:
    """Measured MEN beside the paper's upper bound ``MEN*`` (Theorem 3).

    ``|A^(i)|`` counts the non-zero entries of ``A^(i) + I`` (``2 k_i + N``), as MEN
    does, so ``|Π_{i<=l}(A^(i) + I)| <= Π_{i<=l} |A^(i)|`` layer by layer. The bound
    grows like ``(2M + N)^l`` and overflows floats at depth: it is kept as ``log10``.

    Returns:
        ``{"men", "log10_men_star", "edge_numbers": [L], "log10_bound": [L]}``.
    """
    counts = metrics.edge_numbers(graph, masks)
    sizes = 2.0 * masks.sum(1).double().cpu() + graph.num_nodes
    log_bound = torch.cumsum(torch.log10(sizes), 0)
    # log10 of the mean of 10^b, computed stably
    top = float(log_bound.max())
    log_star = top + math.log10(float(torch.pow(10.0, log_bound - top).sum()) / len(counts))
    return {"men": float(sum(counts)) / len(counts), "log10_men_star": log_star,
            "edge_numbers": [int(c) for c in counts], "log10_bound": log_bound.tolist()}


def men_bound_table(graph: Graph, masks_by: Mapping[str, torch.Tensor]) -> pd.DataFrame:
    """:func:`men_bounds` per sampler, one row per ``(sampler, layer)``:
    ``sampler, layer, edge_number, log10_bound, men, log10_men_star``.

    Args:
        graph (Graph): the graph.
        masks_by (Mapping[str, torch.Tensor]): ``{sampler: (L, M) masks}``.
    """
    frames = []
    for name, masks in masks_by.items():
        b = men_bounds(graph, masks)
        frames.append(pd.DataFrame({"sampler": name, "layer": range(len(b["edge_numbers"])),
                                    "edge_number": b["edge_numbers"], "log10_bound": b["log10_bound"],
                                    "men": b["men"], "log10_men_star": b["log10_men_star"]}))
    return pd.concat(frames, ignore_index=True)
