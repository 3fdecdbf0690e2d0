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
    weight = layer_values(graph, masks, method)
    return _kept_entries(graph, masks, weight), weight


def _kept_entries(graph: Graph, masks: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """``(L, 2M + N)`` bool: the entries of each layer. A kept edge always has a positive
    weight (both end points have degree >= 1), so only the self-loops, whose NA weight
    is 0, need marking."""
    kept = weight != 0
    kept[:, entry_loops(graph)] = True
    return kept


# Entries per chunk on the CPU: a chunk's (C, L) temporaries stay in the CPU's caches;
# whole-array temporaries of a 1M-node graph (22.6M entries x 16 layers, 1.4 GB each)
# would stream through memory several times and page-fault on every allocation.
CPU_CHUNK = 1 << 14


def layer_values(graph: Graph, masks: torch.Tensor, method: str = "AN") -> torch.Tensor:
    """``(L, 2M + N)``: the normalised weight of every entry of :func:`entry_index` at
    every layer, zero for dropped edges — the values of ``L`` CSR matrices with one fixed
    pattern (the trainer's :class:`~dropedge_core.training.AdjacencyBuilder`).

    All layers at once, a fixed number of whole-array operations whatever ``L``:

    1. the masks transposed once into a ``(width + 1, L)`` table (one row per mask
       column, plus an always-kept row for the self-loops), so that an entry's ``L``
       flags are one contiguous row;
    2. the degrees of all layers, ``(N, L)``, as ``index_add`` of that table's rows at
       both end points of every mask column (no per-entry pass);
    3. per entry, ``kept * s[row] * t[col]`` with ``s``, ``t`` the degree scalings of
       the method, written straight into the ``(L, 2M + N)`` output.

    On the CPU, step 3 runs over chunks of :data:`CPU_CHUNK` entries with reused buffers
    (a loop over chunks, not edges): on a 1M-node graph that is ~10x faster than
    whole-array temporaries, which stream 1.4 GB each. On an accelerator it is one pass.
    """
    method = check_method(method)
    device = graph.edge_index.device
    num_layers, width = masks.shape
    columns = entry_columns(graph, width)
    rows, cols = entry_index(graph)
    table = torch.ones(width + 1, num_layers, dtype=torch.bool, device=device)
    table[:width] = masks.t()
    deg = _degrees(graph, table, width)  # (N, L) degrees of A + I
    augmented = method in ("AN", "ANS", "ARW")
    if not augmented:
        deg -= 1.0
    if method == "ARW":
        left, right = deg.reciprocal_(), None
    elif augmented:  # every degree is >= 1 (the self-loop)
        left = right = deg.rsqrt_()
    else:  # isolated node under NA/FOG: degree 0 -> inverse sqrt 0, a zero row, not inf
        left = right = torch.where(deg > 0, deg.rsqrt(), torch.zeros_like(deg))
    out = torch.empty(num_layers, columns.numel(), device=device)
    _scaled_entries(table, columns, rows, cols, left, right, out)
    if method in ("NA", "FOG"):  # D^-1/2 A D^-1/2 has no diagonal
        out[:, entry_loops(graph)] = 0.0
    if method in ("FOG", "ANS"):  # ... plus I
        out[:, entry_loops(graph)] += 1.0
    return out


def _degrees(graph: Graph, table: torch.Tensor, width: int) -> torch.Tensor:
    """``(N, L)`` float: the degrees of ``A + I`` at every layer, from the mask table
    (:func:`layer_values`): each kept mask column adds 1 at the row of each direction it
    stands for (both end points for an undirected column, the source row for a direction)."""
    num_layers = table.size(1)
    deg = torch.ones(graph.num_nodes, num_layers, device=table.device)  # the self-loops
    if width == graph.num_edges:
        ends = tuple(graph.undirected_edges)
    else:
        ends = (graph.edge_index[0],)
    step = width if table.device.type != "cpu" else CPU_CHUNK * 4
    buf = torch.empty(min(step, width), num_layers, device=table.device)
    for s in range(0, width, step):  # a loop over chunks of mask columns
        e = min(s + step, width)
        flags = buf[:e - s]
        flags.copy_(table[s:e])
        for end in ends:
            deg.index_add_(0, end[s:e], flags)
    return deg


def _scaled_entries(table: torch.Tensor, columns: torch.Tensor, rows: torch.Tensor, cols: torch.Tensor,
                    left: torch.Tensor, right: torch.Tensor | None, out: torch.Tensor) -> None:
    """``out[:, e] = table[columns[e]] * left[rows[e]] * right[cols[e]]`` (``right``
    omitted when ``None``), computed over chunks of entries in ``(C, L)`` buffers."""
    num_entries, num_layers = columns.numel(), table.size(1)
    step = num_entries if table.device.type != "cpu" else CPU_CHUNK
    size = max(1, min(step, num_entries))
    flag_buf = torch.empty(size, num_layers, dtype=torch.bool, device=table.device)
    val_buf = torch.empty(size, num_layers, device=table.device)
    scale_buf = torch.empty(size, num_layers, device=table.device)
    for s in range(0, num_entries, step):  # a loop over chunks of entries
        e = min(s + step, num_entries)
        flags, val, scale = flag_buf[:e - s], val_buf[:e - s], scale_buf[:e - s]
        torch.index_select(table, 0, columns[s:e], out=flags)
        val.copy_(flags)  # 0/1 floats: a float x bool product takes a slow mixed-type path
        torch.index_select(left, 0, rows[s:e], out=scale)
        val.mul_(scale)
        if right is not None:
            torch.index_select(right, 0, cols[s:e], out=scale)
            val.mul_(scale)
        out[:, s:e].copy_(val.t())


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
