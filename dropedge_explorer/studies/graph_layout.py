"""Where to draw a graph's nodes: fixed 2-D positions for the edge-sampler pictures.

Small graphs are drawn whole; big ones (Cora, ...) as the ``k``-hop neighbourhood of a
chosen node, found with :func:`torch_geometric.utils.k_hop_subgraph` and capped at
``max_nodes`` (nearer hops first). A :class:`GraphLayout` carries the drawn node ids,
their ``(n, 2)`` positions and the ids of the undirected edges inside the drawn node
set, so a sampler's ``(L, M)`` masks can be sliced to what is drawn:
``masks[:, layout.edge_ids]``. Positions are computed once per graph and neighbourhood
(networkx, fixed seed) and stay fixed while layers and samples change.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from dropedge_core.graph import Graph

from dropedge_explorer._lazy import lazy_import

__all__ = [
    "WHOLE_GRAPH_MAX_NODES", "GraphLayout",
    "default_center", "graph_layout",
]

#: Graphs with at most this many nodes are drawn whole by :func:`graph_layout`.
WHOLE_GRAPH_MAX_NODES = 300  # beyond, a whole drawing is a hairball: draw a neighbourhood
#: Kamada–Kawai (nicer, O(n^2) memory, O(n^3) time) up to this many nodes; spring beyond.
KAMADA_KAWAI_MAX_NODES = 80


@dataclass(frozen=True)
class GraphLayout:
    """Fixed drawing positions of (part of) a graph, made by :func:`graph_layout`.

    Args:
        nodes (numpy.ndarray): ``(n,)`` int64 node ids drawn (row ``i`` of ``positions``
            is node ``nodes[i]``).
        positions (numpy.ndarray): ``(n, 2)`` float64, scaled into ``[-1, 1]^2``.
        edge_ids (numpy.ndarray): ``(E,)`` int64 ids of the undirected edges (columns of
            ``graph.undirected_edges``) with both ends drawn, ascending.
        hops (numpy.ndarray, optional): ``(n,)`` hop distance from ``center`` (``None`` for
            a whole graph). (default: :obj:`None`)
        center (int, optional): the centre node of a neighbourhood, or ``None``.
            (default: :obj:`None`)
        truncated (bool, optional): whether the neighbourhood was cut at ``max_nodes``.
            (default: :obj:`False`)
    """

    nodes: np.ndarray
    positions: np.ndarray
    edge_ids: np.ndarray
    hops: np.ndarray | None = None
    center: int | None = None
    truncated: bool = False

    @property
    def num_nodes(self) -> int:
        return int(self.nodes.shape[0])


def induced_edges(graph: Graph, nodes: torch.Tensor | np.ndarray) -> torch.Tensor:
    """Ids of the undirected edges with both ends in ``nodes``, ``(E,)`` long, ascending.

    Example:
        >>> from dropedge_core import datasets
        >>> g = datasets.load("karate")
        >>> induced_edges(g, torch.tensor([0, 1, 2]))  # the triangle 0-1-2
        tensor([ 0,  1, 16])
    """
    inside = torch.zeros(graph.num_nodes, dtype=torch.bool)
    inside[torch.as_tensor(nodes, dtype=torch.long)] = True
    u, v = graph.undirected_edges.cpu()
    return torch.nonzero(inside[u] & inside[v]).flatten()


def hop_distances(graph: Graph, center: int, k: int) -> torch.Tensor:
    """``(N,)`` long: hop distance of every node from ``center``, ``k + 1`` for nodes
    farther than ``k`` hops (one :func:`~torch_geometric.utils.k_hop_subgraph` per hop)."""
    k_hop_subgraph = lazy_import("torch_geometric.utils").k_hop_subgraph
    n = graph.num_nodes
    if not 0 <= int(center) < n:
        raise ValueError(f"center must be a node id in [0, {n - 1}] (got {center})")
    if k < 0:
        raise ValueError(f"k must be >= 0 (got {k})")
    ei = graph.edge_index.cpu()
    hops = torch.full((n,), k + 1, dtype=torch.long)
    hops[int(center)] = 0
    for h in range(1, k + 1):  # a loop over hops, not over nodes
        reached = torch.zeros(n, dtype=torch.bool)
        reached[k_hop_subgraph(int(center), h, ei, num_nodes=n)[0]] = True
        hops[reached & (hops > h)] = h
    return hops


def k_hop_nodes(graph: Graph, center: int, k: int = 2, max_nodes: int = 300,
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The ``k``-hop neighbourhood of ``center``, at most ``max_nodes`` nodes.

    Nodes are taken nearest hop first; inside the hop where the cap is reached, those
    of highest degree first (then lowest id), so the drawn part stays connected to the
    centre and shows the busiest neighbours.

    Args:
        graph: the graph.
        center: the centre node id.
        k: number of hops (``k >= 0``).
        max_nodes: cap on the number of nodes (``>= 1``).

    Returns:
        ``(nodes, hops, edge_ids)``: ``(n,)`` node ids ordered by (hop, -degree, id)
        with ``nodes[0] == center``; ``(n,)`` their hop distances; ``(E,)`` ids of the
        undirected edges inside the node set.

    Example:
        >>> from dropedge_core import datasets
        >>> nodes, hops, edge_ids = k_hop_nodes(datasets.load("karate"), 9, k=1)
        >>> nodes, hops  # 33 (degree 17) before 2 (degree 10)
        (tensor([ 9, 33,  2]), tensor([0, 1, 1]))
    """
    if max_nodes < 1:
        raise ValueError(f"max_nodes must be >= 1 (got {max_nodes})")
    hops = hop_distances(graph, center, k)
    inside = torch.nonzero(hops <= k).flatten()
    deg = torch.bincount(graph.undirected_edges.cpu().flatten(), minlength=graph.num_nodes)
    # order by hop, then degree (descending), then id: lexsort's last key is primary
    order = np.lexsort((inside.numpy(), -deg[inside].numpy(), hops[inside].numpy()))
    nodes = inside[torch.from_numpy(order)][:max_nodes]
    return nodes, hops[nodes], induced_edges(graph, nodes)


def default_center(graph: Graph, k: int = 2, max_nodes: int = 300) -> int:
    """A node whose ``k``-hop neighbourhood is as large as possible without passing
    ``max_nodes`` (ties: highest degree, then lowest id) — a busy but readable picture.

    Ball sizes are the non-zeros per row of ``(A + I)^k`` (scipy sparse products), for
    ``k <= 2``; larger ``k`` use ``k = 2`` sizes.

    Args:
        graph (Graph): the graph.
        k (int, optional): the number of hops :math:`k`. (default: :obj:`2`)
        max_nodes (int, optional): the largest neighbourhood allowed. (default: :obj:`300`)
    """
    sparse = lazy_import("scipy.sparse")
    n = graph.num_nodes
    u, v = graph.undirected_edges.cpu().numpy()
    adj = sparse.csr_matrix((np.ones(2 * u.size, dtype=np.float32),
                      (np.concatenate([u, v]), np.concatenate([v, u]))), shape=(n, n))
    step = (adj + sparse.identity(n, dtype=np.float32, format="csr")).tocsr()
    reach = step
    for _ in range(min(max(k, 1), 2) - 1):
        reach = reach @ step
    sizes = np.diff(reach.indptr)
    deg = np.diff(adj.indptr)
    ok = sizes <= max_nodes
    score = np.where(ok, sizes, -1).astype(np.int64) * (n + 1) + deg
    if not ok.any():  # every ball is too big: the smallest one
        score = -sizes
    return int(np.argmax(score))


def node_positions(graph: Graph, nodes: torch.Tensor | np.ndarray | None = None, seed: int = 0,
                   method: str = "auto") -> np.ndarray:
    """``(n, 2)`` positions of ``nodes`` (default: all), from the subgraph they induce.

    ``method``: ``"kamada_kawai"``, ``"spring"`` (Fruchterman–Reingold, fixed ``seed``)
    or ``"auto"`` (Kamada–Kawai for a connected graph of at most
    :data:`KAMADA_KAWAI_MAX_NODES` nodes, else spring). Positions are centred and
    scaled into ``[-1, 1]^2``.
    """
    nx = lazy_import("networkx")
    ids = np.arange(graph.num_nodes) if nodes is None else np.asarray(nodes, dtype=np.int64)
    n = ids.shape[0]
    if n == 0:
        return np.zeros((0, 2))
    local = np.full(graph.num_nodes, -1, dtype=np.int64)
    local[ids] = np.arange(n)
    u, v = graph.undirected_edges.cpu().numpy()
    keep = (local[u] >= 0) & (local[v] >= 0)
    g = nx.Graph()
    g.add_nodes_from(range(n))
    g.add_edges_from(zip(local[u[keep]].tolist(), local[v[keep]].tolist()))
    if method == "auto":
        method = ("kamada_kawai" if n <= KAMADA_KAWAI_MAX_NODES and nx.is_connected(g)
                  else "spring")
    if method == "kamada_kawai":
        pos = nx.kamada_kawai_layout(g)
    elif method == "spring":
        # k a little above 1/sqrt(n) spreads hubs' neighbours; seed fixes the picture
        # method="force": the dense Fruchterman-Reingold, ~3x faster than the "auto"
        # choice ("energy") above 500 nodes
        pos = nx.spring_layout(g, seed=seed, k=1.5 / np.sqrt(max(n, 1)), iterations=60,
                               method="force")
    else:
        raise ValueError(f"unknown layout method {method!r}; valid: auto, kamada_kawai, spring")
    xy = np.array([pos[i] for i in range(n)], dtype=np.float64)
    xy -= xy.mean(0)
    scale = np.abs(xy).max()
    return xy / scale if scale > 0 else xy


def graph_layout(graph: Graph, center: int | None = None, k: int = 2, max_nodes: int = 300,
                 seed: int = 0, whole_max_nodes: int = WHOLE_GRAPH_MAX_NODES) -> GraphLayout:
    """The drawing of ``graph``: whole when it has at most ``whole_max_nodes`` nodes and
    no ``center`` is given; else the ``k``-hop neighbourhood of ``center`` (default
    :func:`default_center`) capped at ``max_nodes``.

    Args:
        graph (Graph): the graph to draw.
        center (int, optional): the centre node of the neighbourhood drawn (``None``:
            :func:`default_center` when the graph is too large to draw whole).
            (default: :obj:`None`)
        k (int, optional): the neighbourhood's hops. (default: :obj:`2`)
        max_nodes (int, optional): the most nodes of a neighbourhood. (default: :obj:`300`)
        seed (int, optional): the seed of the layout's random start. (default: :obj:`0`)
        whole_max_nodes (int, optional): the most nodes of a graph drawn whole.
            (default: :obj:`WHOLE_GRAPH_MAX_NODES`)
    """
    if center is None and graph.num_nodes <= whole_max_nodes:
        nodes = torch.arange(graph.num_nodes)
        return GraphLayout(nodes.numpy(), node_positions(graph, None, seed),
                           induced_edges(graph, nodes).numpy())
    if center is None:
        center = default_center(graph, k, max_nodes)
    nodes, hops, edge_ids = k_hop_nodes(graph, center, k, max_nodes)
    truncated = nodes.numel() >= max_nodes and int((hop_distances(graph, center, k) <= k).sum()) > max_nodes
    return GraphLayout(nodes.numpy(), node_positions(graph, nodes, seed), edge_ids.numpy(),
                       hops.numpy(), int(center), truncated=truncated)
