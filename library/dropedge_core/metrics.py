"""Mean-Edge-Number (MEN) and over-smoothing diagnostics.

* **Edge number** of layer ``l``: ``|Π_{i=0..l} (A^(i) + I)|``, the non-zeros of the
  accumulated product of the kept adjacencies (paper Definition 1 and its edge-number
  figure; self-loops stand for the identity a GCN layer adds).
* **MEN** ``= (1/L) Σ_l |Π_{i=0..l} (A^(i) + I)|`` (paper Definition 1).
* **Layer distance** ``D^(l) = ||H^(l+1) - H^(l)||_F`` and its average over
  ``l = 1 .. L-3`` (the paper's "Distance", Fig. "MEN analysis").
* Beyond the paper: Dirichlet energy, MAD (mean average cosine distance, Chen et al.
  2020) and the distance to the over-smoothing subspace ``M`` of Oono & Suzuki (2020).

Edge numbers are computed as layered reachability: the rows of the accumulated product
for a set of source nodes, ``R_l = R_{l-1} (A^(l) + I)``, as a dense ``(S, N)`` 0/1
matrix times a sparse one. With every node a source this is exact; with a random sample
of sources (:func:`men_estimate`) it is an unbiased estimate with a standard error.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from importlib import import_module

import numpy as np
import torch

from dropedge_core.graph import Graph, to_csr

__all__ = [
    "DEFAULT_SOURCES", "EXACT_ALLOWED_MAX_NODES", "COUNT_ROWS", "MAD_NODES", "edge_numbers", "men",
    "MenEstimate",
    "men_estimate", "men_measure", "layer_distances", "average_distance", "dirichlet_energy", "mad",
    "subspace_distance",
]

#: The largest graph (nodes) on which exact MEN / edge numbers are computed at all: exact
#: mode holds an ``(N, N)`` float matrix; above it only :func:`men_estimate` runs.
EXACT_ALLOWED_MAX_NODES = 20_000

#: MAD's node subset in the training diagnostics: 2000 nodes cost 0.44 s per diagnostics
#: at 16 layers, 1000 0.09 s.
MAD_NODES = 1000


def _layer_operators(graph: Graph, masks: torch.Tensor) -> list[torch.Tensor]:
    """Sparse ``(A^(l) + I)^T`` per layer, 0/1 float CSR (transposed for ``op @ R^T``)."""
    directed = graph.directed_mask(masks.to(graph.undirected_edges.device))
    n = graph.num_nodes
    ei = graph.edge_index
    loops = torch.arange(n, device=ei.device)
    ops = []
    for row in directed:  # a loop over layers
        kept = ei[:, row]
        # transpose: column j of R A is sum_i R[:, i] A[i, j], so A^T acts on R^T
        idx = torch.stack([torch.cat([kept[1], loops]), torch.cat([kept[0], loops])])
        val = torch.ones(idx.size(1), device=ei.device)
        ops.append(to_csr(torch.sparse_coo_tensor(idx, val, (n, n)).coalesce()))
    return ops


def _reach_counts(graph: Graph, masks: torch.Tensor, sources: torch.Tensor) -> torch.Tensor:
    """``(L, S)``: for each layer ``l`` and source ``s``, the non-zeros of row ``s`` of
    ``Π_{i=0..l} (A^(i) + I)``."""
    if graph.undirected_edges.device.type == "cpu":
        return _reach_counts_scipy(graph, masks, sources)
    n = graph.num_nodes
    reach_t = torch.zeros(n, sources.numel(), device=graph.undirected_edges.device)
    reach_t[sources, torch.arange(sources.numel(), device=reach_t.device)] = 1.0
    counts = []
    for op in _layer_operators(graph, masks):
        # clamp back to 0/1 after each step: only which entries are non-zero matters
        reach_t = (torch.sparse.mm(op, reach_t) > 0).float()
        counts.append(reach_t.sum(0))
    return torch.stack(counts)


def _reach_counts_scipy(graph: Graph, masks: torch.Tensor, sources: torch.Tensor) -> torch.Tensor:
    """CPU path of :func:`_reach_counts`, same result, on bit-packed reachability.

    Row ``t`` of ``R^T`` is a bitset over the sources (64 per word): the update
    ``R^T_new[t] = OR_{j -> t kept, or j = t} R^T[j]`` is one gather of the rows of every
    kept entry, sorted by target, and one ``bitwise_or.reduceat`` over the targets'
    segments. On Cora that is ~1 ms a layer for all 2708 sources, where a float
    sparse-dense product costs ~30 ms.
    """
    directed = graph.directed_mask(masks.cpu()).numpy()
    ei = graph.edge_index.cpu().numpy()
    n, s = graph.num_nodes, sources.numel()
    words = (s + 63) // 64
    src = sources.cpu().numpy()
    reach_t = np.zeros((n, words), dtype=np.uint64)
    col = np.arange(s)
    np.bitwise_or.at(reach_t, (src, col // 64), np.left_shift(np.uint64(1), (col % 64).astype(np.uint64)))
    loops = np.arange(n)
    counts = np.empty((directed.shape[0], s), dtype=np.float64)
    for layer, row in enumerate(directed):  # a loop over layers
        kept = ei[:, row]
        target = np.concatenate([loops, kept[1]])
        origin = np.concatenate([loops, kept[0]])
        order = np.argsort(target, kind="stable")
        starts = np.searchsorted(target[order], loops)  # every node has its self-loop entry
        reach_t = np.bitwise_or.reduceat(reach_t[origin[order]], starts, axis=0)
        counts[layer] = _column_bit_counts(reach_t, s)
    return torch.from_numpy(counts)


#: Source nodes of one sample's MEN estimate unless told otherwise (:func:`men_estimate`,
#: :func:`men_measure`: the trainer's diagnostics, ``men --estimate``).
DEFAULT_SOURCES = 512
#: rows of the reach table unpacked at once: unpacking all of it is one byte per
#: (node, source), 5 GB for 10M nodes and DEFAULT_SOURCES sources, 8x the packed table
COUNT_ROWS = 1 << 16


def _column_bit_counts(packed, num_bits: int):
    """``(num_bits,)`` int64: how many rows of ``packed`` (``(N, W)`` uint64, bit ``j``
    of a row = column ``j``) have each bit set, unpacked :data:`COUNT_ROWS` rows at a time."""
    total = np.zeros(num_bits, dtype=np.int64)
    for start in range(0, packed.shape[0], COUNT_ROWS):  # a loop over blocks of 65536 rows
        block = packed[start:start + COUNT_ROWS]
        bits = np.unpackbits(block.view(np.uint8), axis=1, bitorder="little")[:, :num_bits]
        total += bits.sum(0, dtype=np.int64)
    return total


def edge_numbers(graph: Graph, masks: torch.Tensor) -> list[int]:
    """Exact ``|Π_{i=0..l} (A^(i) + I)|`` for ``l = 0 .. L-1`` (a list of ``L`` ints).

    Args:
        graph (Graph): the graph the masks index (at most :data:`EXACT_ALLOWED_MAX_NODES`
            nodes).
        masks (Tensor): ``(L, M)`` (or ``(L, 2M)``) bool, row 0 the input layer.

    Returns:
        list[int]: ``L`` non-zero counts, non-decreasing.

    Raises:
        ValueError: the graph is too large for the exact count (use :func:`men_estimate`).

    Example:
        >>> from dropedge_core.graph import Graph
        >>> no = torch.zeros(3, dtype=torch.bool)
        >>> path = Graph("path", torch.eye(3), torch.zeros(3).long(), torch.tensor([[0, 1], [1, 2]]),
        ...              no, no, no, 1)  # 0 - 1 - 2
        >>> kept = torch.ones(2, 2, dtype=torch.bool)  # L = 2 layers, both edges kept
        >>> edge_numbers(path, kept)  # A + I has 7 entries, (A + I)^2 all 9
        [7, 9]
    """
    if graph.num_nodes > EXACT_ALLOWED_MAX_NODES:
        raise ValueError(f"exact edge numbers need an (N, N) matrix; N={graph.num_nodes} > "
                         f"{EXACT_ALLOWED_MAX_NODES}: use men_estimate")
    sources = torch.arange(graph.num_nodes, device=graph.undirected_edges.device)
    return [int(c) for c in _reach_counts(graph, masks, sources).sum(1).round().long()]


def men(graph: Graph, masks: torch.Tensor) -> float:
    """Exact MEN ``= (1/L) Σ_l |Π_{i=0..l} (A^(i) + I)|`` of one sample of masks (paper §3).

    Args:
        graph (Graph): the graph the masks index.
        masks (Tensor): ``(L, M)`` (or ``(L, 2M)``) bool, row 0 the input layer.

    Returns:
        float: the mean of :func:`edge_numbers`.

    Example:
        >>> from dropedge_core.graph import Graph
        >>> no = torch.zeros(3, dtype=torch.bool)
        >>> path = Graph("path", torch.eye(3), torch.zeros(3).long(), torch.tensor([[0, 1], [1, 2]]),
        ...              no, no, no, 1)  # 0 - 1 - 2
        >>> kept = torch.ones(2, 2, dtype=torch.bool)  # L = 2 layers, both edges kept
        >>> men(path, kept)  # (7 + 9) / 2
        8.0
        >>> men(path, torch.tensor([[True, False], [True, True]]))  # (5 + 8) / 2
        6.5
    """
    counts = edge_numbers(graph, masks)
    return float(sum(counts)) / len(counts)


@dataclass(frozen=True)
class MenEstimate:
    """MEN estimated from sampled source nodes: ``value ± stderr`` (``sources`` used).

    Args:
        value (float): the MEN estimate (exact when ``stderr`` is 0).
        stderr (float): its standard error.
        sources (int): how many source nodes it used (``N`` when exact).
        edge_numbers (tuple[float, ...]): the ``L`` per-layer edge numbers it averages.
    """

    value: float
    stderr: float
    sources: int
    edge_numbers: tuple[float, ...]


def men_estimate(graph: Graph, masks: torch.Tensor, num_sources: int = DEFAULT_SOURCES,
                 generator: torch.Generator | None = None) -> MenEstimate:
    """MEN estimated from ``num_sources`` source nodes drawn without replacement.

    Each source's contribution ``m_s = (1/L) Σ_l |row s of Π_{i<=l}|`` is computed
    exactly; MEN ``≈ N · mean(m_s)`` with standard error ``N · std(m_s) / sqrt(S)``
    times the finite-population correction ``sqrt((N - S) / (N - 1))`` (zero when every
    node is a source, where the estimate is exact). Cost ``O(L · nnz(A) · S)``.

    Args:
        graph (Graph): the graph the masks index.
        masks (Tensor): ``(L, M)`` (or ``(L, 2M)``) bool, row 0 the input layer.
        num_sources (int, optional): :math:`S`, the sources drawn (at most ``N``).
            (default: :data:`DEFAULT_SOURCES`)
        generator (torch.Generator, optional): the random source of the sources.
            (default: :obj:`None`)

    Returns:
        MenEstimate: the estimate, its standard error, ``S`` and the per-layer numbers.
    """
    n = graph.num_nodes
    s = min(int(num_sources), n)
    # drawn where the generator lives (a CUDA generator draws only on CUDA), then moved
    gen_device = generator.device if generator is not None else "cpu"
    sources = torch.randperm(n, generator=generator, device=gen_device)[:s].to(graph.undirected_edges.device)
    counts = _reach_counts(graph, masks, sources).double()  # (L, S)
    per_source = counts.mean(0)
    value = n * float(per_source.mean())
    fpc = math.sqrt((n - s) / (n - 1)) if n > 1 else 0.0
    std = float(per_source.std()) if s > 1 else 0.0
    return MenEstimate(value, n * std / math.sqrt(s) * fpc, s,
                       tuple(float(v) for v in n * counts.mean(1)))


def men_measure(graph: Graph, masks: torch.Tensor, num_sources: int | None = None,
                generator: torch.Generator | None = None, exact_up_to: int = EXACT_ALLOWED_MAX_NODES,
                default_sources: int = DEFAULT_SOURCES) -> MenEstimate:
    """MEN of one sample by the package's one rule: exact or estimated.

    The trainer, the MEN studies and the command line all measure MEN through here.

    Args:
        graph (Graph): the graph the masks index.
        masks (Tensor): ``(L, M)`` (or ``(L, 2M)``) bool, row 0 the input layer.
        num_sources (int, optional): ``0`` = exact; ``S > 0`` = estimated from ``S`` sampled
            sources (exact when ``S >= N``); ``None`` = exact up to ``exact_up_to`` nodes, else
            estimated from ``default_sources``. (default: :obj:`None`)
        generator (torch.Generator, optional): the random source of the sources.
            (default: :obj:`None`)
        exact_up_to (int, optional): the largest ``N`` measured exactly when
            ``num_sources`` is ``None``. (default: :data:`EXACT_ALLOWED_MAX_NODES`)
        default_sources (int, optional): ``S`` above that size. (default: :data:`DEFAULT_SOURCES`)

    Returns:
        MenEstimate: exact results have ``stderr = 0`` and ``sources = N``.

    Example:
        >>> from dropedge_core.graph import Graph
        >>> no = torch.zeros(3, dtype=torch.bool)
        >>> path = Graph("path", torch.eye(3), torch.zeros(3).long(), torch.tensor([[0, 1], [1, 2]]),
        ...              no, no, no, 1)  # 0 - 1 - 2
        >>> kept = torch.ones(2, 2, dtype=torch.bool)  # L = 2 layers, both edges kept
        >>> men_measure(path, kept)
        MenEstimate(value=8.0, stderr=0.0, sources=3, edge_numbers=(7.0, 9.0))
    """
    n = graph.num_nodes
    if num_sources is None:
        num_sources = 0 if n <= exact_up_to else default_sources
    if num_sources == 0 or num_sources >= n:
        counts = edge_numbers(graph, masks)
        return MenEstimate(float(sum(counts)) / len(counts), 0.0, n, tuple(float(c) for c in counts))
    return men_estimate(graph, masks, num_sources, generator=generator)


def layer_distances(hidden: list[torch.Tensor]) -> torch.Tensor:
    """``D^(l) = ||H^(l+1) - H^(l)||_F`` for consecutive entries of ``hidden``.

    Args:
        hidden (list[Tensor]): ``[H^(1), ..., H^(L-1)]``, same-width hidden outputs
            ``(N, F)``.

    Returns:
        Tensor: ``(len(hidden) - 1,)``, entry ``i`` the distance ``D^(i+1)``.

    Example:
        >>> layer_distances([torch.zeros(2, 2), torch.ones(2, 2), torch.ones(2, 2)])
        tensor([2., 0.])
    """
    if len(hidden) < 2:
        return torch.zeros(0)
    stacked = torch.stack([h.detach().float() for h in hidden])
    return (stacked[1:] - stacked[:-1]).flatten(1).norm(dim=1)


def average_distance(hidden: list[torch.Tensor]) -> float:
    """The paper's "Distance": ``(1/(L-3)) Σ_{l=1..L-3} D^(l)`` for an ``L``-layer GCN.

    For ``L < 4`` (fewer than two distances in that range) the mean of all available
    distances is returned; ``nan`` when there are none.

    Args:
        hidden (list[Tensor]): ``[H^(1), ..., H^(L-1)]``, same-width hidden outputs
            ``(N, F)``.

    Returns:
        float: the mean distance.
    """
    d = layer_distances(hidden)
    num_layers = len(hidden) + 1
    chosen = d[: num_layers - 3] if num_layers >= 4 else d
    return float(chosen.mean()) if chosen.numel() else float("nan")


def dirichlet_energy(h: torch.Tensor, edge_index: torch.Tensor) -> float:
    """Dirichlet energy ``(1/N) Σ_{(i,j)} ||h_i/√(1+d_i) − h_j/√(1+d_j)||²``.

    Zero exactly when ``h`` lies in the over-smoothing subspace of the augmented
    normalised adjacency (for a connected graph).

    Args:
        h (Tensor): ``(N, F)`` node representations.
        edge_index (Tensor): ``(2, M)`` long, each undirected edge once
            (``graph.undirected_edges``); ``d`` are the degrees it gives.

    Returns:
        float: the energy.

    Example:
        >>> e = dirichlet_energy(torch.tensor([[1.0], [0.0]]), torch.tensor([[0], [1]]))
        >>> round(e, 6)  # (1/√2)² / N, N = 2
        0.25
    """
    h = h.detach().float()
    n = h.size(0)
    u, v = edge_index
    deg = torch.bincount(torch.cat([u, v]), minlength=n).float() + 1.0
    scaled = h * deg.rsqrt().unsqueeze(1)
    return float((scaled[u] - scaled[v]).pow(2).sum() / n)


def mad(h: torch.Tensor, max_nodes: int = 2000, generator: torch.Generator | None = None) -> float:
    """Mean average cosine distance (MAD, Chen et al. 2020) over all node pairs.

    Per node, the mean of its non-zero cosine distances to the other nodes; then the
    mean over nodes that have any. Near 0 means over-smoothed.

    Args:
        h (Tensor): ``(N, F)`` node representations.
        max_nodes (int, optional): above this many nodes a random subset of that size is
            used (the full matrix is ``N x N``). (default: :obj:`2000`)
        generator (torch.Generator, optional): the random source of that subset.
            (default: :obj:`None`)

    Returns:
        float: MAD in ``[0, 2]``; 0 when no pair has a non-zero distance.

    Example:
        >>> mad(torch.tensor([[1.0, 0.0], [0.0, 1.0], [2.0, 0.0]]))  # distances 1, 0 and 1
        1.0
    """
    # float64: in float32 a node's distance to itself (or to a parallel row) rounds to
    # ~6e-8, above the 1e-8 "non-zero" cut, and would be counted as a distance
    h = h.detach().double()
    if h.size(0) > max_nodes:
        gen_device = generator.device if generator is not None else "cpu"
        h = h[torch.randperm(h.size(0), generator=generator, device=gen_device)[:max_nodes].to(h.device)]
    unit = h / h.norm(dim=1, keepdim=True).clamp_min(1e-12)
    dist = (1.0 - unit @ unit.T).clamp_min(0.0)
    nonzero = dist > 1e-8
    per_node_count = nonzero.sum(1)
    per_node = (dist * nonzero).sum(1) / per_node_count.clamp_min(1)
    has = per_node_count > 0
    return float(per_node[has].mean()) if has.any() else 0.0


def component_labels(graph: Graph) -> torch.Tensor:
    """Connected-component id of every node, ``(N,)`` long (scipy's csgraph), memoised.

    Args:
        graph (Graph): the graph.

    Returns:
        Tensor: ``(N,)`` long, ids ``0 .. C - 1``.
    """
    return graph.derived(_components)


def _components(graph: Graph) -> torch.Tensor:
    u, v = graph.undirected_edges.cpu().numpy()
    n = graph.num_nodes
    mat = import_module("scipy.sparse").coo_matrix((np.ones(u.size), (u, v)), shape=(n, n))
    _, labels = import_module("scipy.sparse.csgraph").connected_components(mat, directed=False)
    return torch.from_numpy(labels).long()


def subspace_distance(h: torch.Tensor, graph: Graph, relative: bool = True) -> float:
    """Distance of ``h`` ``(N, F)`` to the over-smoothing subspace ``M`` (Oono & Suzuki).

    ``M`` is spanned by ``e_m = D~^{1/2} u_m``, one per connected component ``m``
    (``u_m`` its indicator, ``D~`` the degrees of ``A + I``). The ``e_m`` have disjoint
    supports, so they are orthogonal and the projection is one scatter per component
    id.

    Args:
        h (Tensor): ``(N, F)`` node representations.
        graph (Graph): the graph whose components span ``M``.
        relative (bool, optional): divide by ``||h||_F``. (default: :obj:`True`)

    Returns:
        float: ``||h − P_M h||_F`` (relative: over ``||h||_F``, 0 for ``h = 0``).
    """
    h = h.detach().float()
    comp = component_labels(graph).to(h.device)
    n = h.size(0)
    u, v = graph.undirected_edges.to(h.device)
    deg = torch.bincount(torch.cat([u, v]), minlength=n).float() + 1.0
    e = deg.sqrt()
    num_comp = int(comp.max()) + 1
    norm2 = torch.zeros(num_comp, device=h.device).scatter_add_(0, comp, deg)
    coef = torch.zeros(num_comp, h.size(1), device=h.device).index_add_(0, comp, e.unsqueeze(1) * h)
    proj = e.unsqueeze(1) * (coef / norm2.unsqueeze(1))[comp]
    dist = float((h - proj).norm())
    if relative:
        total = float(h.norm())
        return dist / total if total > 0 else 0.0
    return dist
