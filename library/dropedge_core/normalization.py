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

from dropedge_core import _pattern as pattern
from dropedge_core._sparse_products import with_transpose
from dropedge_core.graph import Graph, GraphError, csr_tensor, to_csr


class AdjacencyBuilder:
    """Per-layer normalised adjacencies as sparse CSR matrices, fast enough for every epoch.

    The entries every layer draws from (:func:`pattern.entry_index`: the ``2M``
    directions and ``N`` self-loops, already in CSR order) give one fixed CSR pattern;
    every call takes the weights of all layers from :func:`normalization.layer_values`
    (one vectorised pass, dropped edges exactly zero) as that pattern's values. Products
    are the same as with ``normalization.to_sparse(*normalization.adjacencies(...)[l], N)``,
    with no per-layer compaction, permutation, sort or coalesce. Every matrix carries the
    pattern's transpose index (:func:`pattern.entry_transpose`), so the models'
    products (:func:`~dropedge_core._sparse_products.spmm`) differentiate without
    the sort ``torch.sparse.mm``'s backward does per layer.

    The values of one call live in one buffer that the **next call reuses** (no fresh
    1.4 GB allocation per epoch on a 1M-node graph, whose page faults cost as much as
    computing it): use a call's matrices before calling again, as the trainer does (one
    call per epoch). :meth:`full` returns matrices of their own.

    Args:
        graph (Graph): the graph whose masks the calls take.
        method (str, optional): one of :data:`METHODS`.
            (default: :obj:`"AN"`)

    Example:
        >>> from dropedge_core._synthetic import karate
        >>> from dropedge_core import samplers
        >>> g = karate()
        >>> masks = samplers.make("dropedge++").sample(g, 3, torch.Generator().manual_seed(0))
        >>> adjs = AdjacencyBuilder(g)(masks)
        >>> len(adjs), adjs[0].shape, adjs[0].layout
        (3, torch.Size([34, 34]), torch.sparse_csr)
    """

    def __init__(self, graph: Graph, method: str = "AN"):
        self.graph = graph
        self.method = check_method(method)
        rows, self.col = pattern.entry_index(graph)
        counts = torch.bincount(rows, minlength=graph.num_nodes)
        self.crow = torch.cat([counts.new_zeros(1), counts.cumsum(0)])
        self.transpose = pattern.entry_transpose(graph)  # the products' backward
        self.workspace: dict = {}  # the value table and output buffer, reused by every call

    def _csr(self, values: torch.Tensor) -> torch.Tensor:
        n = self.graph.num_nodes
        return with_transpose(csr_tensor(self.crow, self.col, values, (n, n)), self.transpose)

    def __call__(self, masks: torch.Tensor) -> list[torch.Tensor]:
        """``masks`` ``(L, M)`` (or ``(L, 2M)``) bool → ``L`` sparse CSR ``(N, N)``, valid
        until the next call."""
        shape = (masks.size(0), self.col.numel())
        out = self.workspace.get("out")
        if out is None or out.shape != shape:
            out = self.workspace["out"] = torch.empty(shape, device=self.col.device)
        values = layer_values(self.graph, masks, self.method, out=out,
                                            workspace=self.workspace)
        # one batched CSR over the shared pattern, split into its layers: a fixed number of
        # operations whatever L (a construction per layer was two more per layer)
        n, num_layers = self.graph.num_nodes, masks.size(0)
        batch = csr_tensor(self.crow.expand(num_layers, -1), self.col.expand(num_layers, -1), values,
                           (num_layers, n, n))
        return [with_transpose(adj, self.transpose) for adj in batch.unbind(0)]

    def full(self) -> torch.Tensor:
        """The normalised adjacency of the whole graph (evaluation), in a buffer of its own."""
        ones = torch.ones(1, self.graph.num_edges, dtype=torch.bool, device=self.col.device)
        return self._csr(layer_values(self.graph, ones, self.method)[0])

__all__ = [
    "METHODS", "NormalizationError", "check_method", "adjacencies",
    "layer_values", "full_adjacency", "to_dense", "to_sparse", "propagate", "AdjacencyBuilder",
]

METHODS = ("NA", "FOG", "AN", "ANS", "ARW")


class NormalizationError(ValueError):
    """Unknown normalisation name."""


def check_method(method: str) -> str:
    """The canonical name of a normalisation (upper case), or :class:`NormalizationError`.

    Args:
        method (str): one of :data:`METHODS`, in any case.

    Returns:
        str: the name as :data:`METHODS` spells it.

    Raises:
        NormalizationError: an unknown name; the message lists the valid ones.

    Example:
        >>> check_method(" an ")
        'AN'
    """
    key = str(method).strip().upper()
    if key not in METHODS:
        raise NormalizationError(f"unknown normalization {method!r}; valid: {', '.join(METHODS)}")
    return key


def adjacencies(graph: Graph, masks: torch.Tensor, method: str = "AN",
                ) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Normalised adjacency of every layer, from a sampler's masks.

    Args:
        graph (Graph): the graph the masks index.
        masks (Tensor): ``(L, M)`` bool (undirected) or ``(L, 2M)`` bool (``directed=True``
            samplers, columns of ``graph.edge_index``).
        method (str, optional): one of :data:`METHODS`. (default: :obj:`"AN"`)

    Returns:
        list[tuple[Tensor, Tensor]]: ``L`` pairs ``(edge_index (2, E_l + N),
        edge_weight (E_l + N,))``, self-loops included, entries sorted by (row, column).

    The fast path, and the one way to script it: all layers' weights in one pass of
    :func:`layer_values` (the trainer's own), then each layer's entries picked out of
    that ``(L, 2M + N)`` table with one flat ``nonzero`` and ``index_select``. For
    training, :class:`~dropedge_core.normalization.AdjacencyBuilder` skips even the
    compaction: one fixed CSR pattern whose values are :func:`layer_values`' rows.

    Example:
        >>> from dropedge_core import datasets, samplers
        >>> g = datasets.load("karate")  # N = 34, M = 78
        >>> masks = samplers.make("dropedge++").sample(g, 4, torch.Generator().manual_seed(0))
        >>> [ei.size(1) for ei, _ in adjacencies(g, masks)]  # 2 * kept + N per layer
        [80, 106, 132, 158]
    """
    values = layer_values(graph, masks, method)
    kept = _kept_entries(graph, masks, values, method)
    flat = kept.view(-1).nonzero().squeeze(1)  # layer after layer, each in CSR order
    entry = flat % values.size(1)
    rows, cols = pattern.entry_index(graph)
    index = torch.stack([rows.index_select(0, entry), cols.index_select(0, entry)])
    weight = values.view(-1).index_select(0, flat)
    # entries per layer: its kept directions (2 per undirected column) and N self-loops
    per_column = 2 if masks.size(1) == graph.num_edges else 1
    sizes = (masks.sum(1) * per_column + graph.num_nodes).tolist()
    return list(zip(index.split(sizes, dim=1), weight.split(sizes)))


def _kept_entries(graph: Graph, masks: torch.Tensor, weight: torch.Tensor, method: str) -> torch.Tensor:
    """``(L, 2M + N)`` bool: the entries of each layer — its kept directions and every
    self-loop. A kept direction weighs > 0 (its end points have degree >= 1), except
    under NA/FOG with directed masks, when its target has no kept direction of its own:
    then the flags come from the masks."""
    num_layers, width = masks.shape
    if method in ("AN", "ANS", "ARW") or width == graph.num_edges:
        kept = weight != 0
        kept[:, pattern.entry_loops(graph)] = True
        return kept
    padded = torch.ones(num_layers, width + 1, dtype=torch.uint8, device=masks.device)
    padded[:, :width] = masks
    return padded.index_select(1, pattern.entry_columns(graph, width)).bool()


# Rows per chunk on the CPU: a chunk's (C, L) temporaries stay in the CPU's caches;
# whole-array temporaries of a 1M-node graph (22.6M entries x 16 layers, 1.4 GB each)
# would stream through memory several times and page-fault on every allocation.
CPU_CHUNK = 1 << 14
# A workspace keeps the value table of layer_values up to this size (see there).
KEEP_TABLE_BYTES = 256 << 20


def layer_values(graph: Graph, masks: torch.Tensor, method: str = "AN", *,
                 out: torch.Tensor | None = None, workspace: dict | None = None) -> torch.Tensor:
    """``(L, 2M + N)``: the normalised weight of every entry of :func:`entry_index` at
    every layer, zero for dropped edges — the values of ``L`` CSR matrices with one fixed
    pattern (:class:`AdjacencyBuilder`).

    All layers at once, a fixed number of whole-array passes whatever ``L``:

    1. the degrees of all layers, ``(N, L)``: ``index_add`` of the masks' columns at the
       end points they stand for (both for an undirected column);
    2. a value per mask column and layer, ``kept * s[a] * t[b]`` with ``s``, ``t`` the
       method's degree scalings of its end points (one row per column when the value is
       the same both ways — every method but ARW — else one per direction), plus one
       row per self-loop;
    3. the output: each entry's row of that table (one gather), transposed into
       ``(L, 2M + N)``.

    On the CPU the passes run over chunks of :data:`CPU_CHUNK` rows with reused buffers
    (a loop over chunks, not edges): on a 1M-node graph that is several times faster
    than whole-array temporaries. On an accelerator each pass is one call.

    Reusing ``out`` and ``workspace`` saves the page faults of fresh allocations
    (~0.2 s per GB on the CPU, as much as the arithmetic on a 1M-node graph; see
    :class:`~dropedge_core.normalization.AdjacencyBuilder`).

    Args:
        graph (Graph): the graph the masks index.
        masks (Tensor): ``(L, M)`` or ``(L, 2M)`` bool, as :func:`adjacencies` takes.
        method (str, optional): one of :data:`METHODS`. (default: :obj:`"AN"`)
        out (Tensor, optional): ``(L, 2M + N)`` float that receives the result.
            (default: :obj:`None`)
        workspace (dict, optional): a dict the caller keeps; it holds the value table
            between calls while that is under :data:`KEEP_TABLE_BYTES`.
            (default: :obj:`None`)

    Returns:
        Tensor: ``(L, 2M + N)`` float, row ``l`` the values of layer ``l``.
    """
    method = check_method(method)
    device = graph.undirected_edges.device  # (graph.edge_index would build 2M x 2 indices)
    num_layers, width = masks.shape
    m, n = graph.num_edges, graph.num_nodes
    if width not in (m, 2 * m):
        raise GraphError(f"mask width {width} matches neither M={m} nor 2M={2 * m}")
    directional = method == "ARW"  # ARW's value differs between the two directions
    src, dst = graph.edge_index if directional else _column_ends(graph, width)
    num = src.numel()  # rows of the value table before the self-loops: M or 2M
    # kept between calls only while small: on a 1M-node graph the table (0.76 GB) would
    # sit beside the sampler's arrays at the next epoch's peak; its page faults cost less
    keep_table = workspace if (num + n) * num_layers * 4 <= KEEP_TABLE_BYTES else None
    table = _buffer(keep_table, "table", (num + n, num_layers), device)
    left, right = _degree_scalings(graph, masks, table, method)
    _fill_values(table, left, right, src, dst, width, method)
    rows = _table_rows(graph, width, directional)
    if out is None:
        out = torch.empty(num_layers, rows.numel(), device=device)
    elif out.shape != (num_layers, rows.numel()) or out.dtype != torch.float32 or not out.is_contiguous():
        raise ValueError(f"out must be a contiguous float32 tensor of shape {(num_layers, rows.numel())}")
    return _gather_entries(table, rows, out)


def _degree_scalings(graph: Graph, masks: torch.Tensor, table: torch.Tensor, method: str,
                     ) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Pass 1 of :func:`layer_values`: the kept flags into ``table`` (as 0/1 floats), then
    the degrees of all layers as one sparse product with the incidence matrix (a kept
    undirected column adds to both end points' degrees, a direction to its source's),
    turned into the method's ``(N, L)`` scalings of a row's and a column's end point
    (``right`` is ``None`` for ARW, which scales rows only)."""
    width = masks.size(1)
    step = _step(table.device, width)
    for s in range(0, width, step):  # a loop over chunks of mask columns
        e = min(s + step, width)
        table[s:e].copy_(masks[:, s:e].t())
    deg = torch.sparse.mm(_incidence(graph, width), table[:width]).add_(1.0)  # + the self-loops
    if method in ("NA", "FOG"):
        deg -= 1.0
    if method == "ARW":
        return deg.reciprocal_(), None
    if method in ("AN", "ANS"):  # every degree is >= 1 (the self-loop)
        scaled = deg.rsqrt_()
        return scaled, scaled
    # isolated node under NA/FOG: degree 0 -> inverse sqrt 0, a zero row, not inf
    scaled = torch.where(deg > 0, deg.rsqrt(), torch.zeros_like(deg))
    return scaled, scaled


def _fill_values(table: torch.Tensor, left: torch.Tensor, right: torch.Tensor | None, src: torch.Tensor,
                 dst: torch.Tensor, width: int, method: str) -> None:
    """Pass 2 of :func:`layer_values`: row ``r`` of ``table`` becomes ``kept * left[src[r]]
    * right[dst[r]]``; an undirected mask under ARW has two rows per column (the second
    half first, while the first half still holds the flags); then the self-loops' rows."""
    num, num_layers, device = src.numel(), table.size(1), table.device
    if num != width:
        table[width:num].copy_(table[:width])
    step = _step(device, width)
    scale = torch.empty(_step(device, num), num_layers, device=device)
    for s in range(0, num, step):  # a loop over chunks of rows
        e = min(s + step, num)
        val, sc = table[s:e], scale[:e - s]
        torch.index_select(left, 0, src[s:e], out=sc)
        val.mul_(sc)
        if right is not None:
            torch.index_select(right, 0, dst[s:e], out=sc)
            val.mul_(sc)
    loops = table[num:]
    if method == "ARW":
        loops.copy_(left)
    elif method in ("AN", "ANS"):
        torch.mul(left, right, out=loops)
        if method == "ANS":  # ... plus I
            loops += 1.0
    else:  # D^-1/2 A D^-1/2 has no diagonal; FOG adds I
        loops.fill_(1.0 if method == "FOG" else 0.0)


def _gather_entries(table: torch.Tensor, rows: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """Pass 3 of :func:`layer_values`: every entry's row of ``table``, transposed into the
    ``(L, entries)`` output."""
    step = _step(table.device, rows.numel())
    buf = torch.empty(step, table.size(1), device=table.device)
    for s in range(0, rows.numel(), step):  # a loop over chunks of entries
        e = min(s + step, rows.numel())
        torch.index_select(table, 0, rows[s:e], out=buf[:e - s])
        out[:, s:e].copy_(buf[:e - s].t())
    return out


def _incidence(graph: Graph, width: int) -> torch.Tensor:
    """``(N, width)`` sparse CSR 0/1: node ``i``'s row holds the mask columns whose kept
    edge adds to its degree — the entries of row ``i`` of :func:`entry_index` without the
    self-loop, each row's columns sorted (torch's CSR invariants)."""
    return graph.derived(_build_incidence, width)


def _build_incidence(graph: Graph, width: int) -> torch.Tensor:
    found = pattern.entries(graph)
    direction, rows, n = found.direction, found.index[0], graph.num_nodes
    counts = torch.bincount(rows, minlength=n) - 1  # one self-loop per row
    crow = torch.zeros(n + 1, dtype=torch.long, device=rows.device)
    torch.cumsum(counts, 0, out=crow[1:])
    edge = direction >= 0
    col = direction[edge]
    if width == graph.num_edges:
        col = col % width
    # a row's entries are sorted by the other end node, not by mask column; torch's CSR
    # invariants (and backends that rely on them) want sorted columns. The products only
    # sum 0/1 flags into degrees, so the order changes no bit of the result.
    col = col[torch.argsort(rows[edge] * width + col)]
    if width < 2**31 and col.numel() < 2**31:  # 32-bit indices: half the memory
        crow, col = crow.int(), col.int()
    return csr_tensor(crow, col, torch.ones(col.numel(), device=rows.device), (n, width))


def _buffer(workspace: dict | None, name: str, shape: tuple[int, int], device: torch.device) -> torch.Tensor:
    """A float32 buffer of ``shape``, kept in ``workspace`` for the next call (if given)."""
    buf = workspace.get(name) if workspace is not None else None
    if buf is None or buf.shape != shape or buf.device != device:
        buf = torch.empty(shape, device=device)
        if workspace is not None:
            workspace[name] = buf
    return buf


def _step(device: torch.device, size: int) -> int:
    return max(1, size if device.type != "cpu" else min(CPU_CHUNK, size))


def _column_ends(graph: Graph, width: int) -> tuple[torch.Tensor, ...]:
    """The end points a mask column stands for: ``(u, v)`` of an undirected edge, or the
    ``(source, target)`` of a direction."""
    return tuple(graph.undirected_edges) if width == graph.num_edges else tuple(graph.edge_index)


def _table_rows(graph: Graph, width: int, directional: bool) -> torch.Tensor:
    """``(2M + N,)`` long: for each entry of :func:`entry_index`, its row of
    :func:`_value_table` (its mask column or direction; ``R + node`` for a self-loop)."""
    return graph.derived(_build_table_rows, width if not directional else 2 * graph.num_edges)


def _build_table_rows(graph: Graph, num: int) -> torch.Tensor:
    found = pattern.entries(graph)
    direction, node = found.direction, found.index[0]
    # max(M, 1): a graph without edges (empty, or self-loops only) has only self-loop
    # entries (direction < 0), whose column is never read; M = 0 must not divide
    column = direction % max(graph.num_edges, 1) if num == graph.num_edges else direction
    rows = torch.where(direction < 0, num + node, column)
    # 32-bit when it fits: index_select takes it, and it halves this table
    return rows.int() if num + graph.num_nodes < 2**31 else rows


def full_adjacency(graph: Graph, method: str = "AN") -> tuple[torch.Tensor, torch.Tensor]:
    """The normalised adjacency of the whole graph (evaluation uses the full graph).

    Args:
        graph (Graph): the graph.
        method (str, optional): one of :data:`METHODS`. (default: :obj:`"AN"`)

    Returns:
        tuple[Tensor, Tensor]: ``edge_index (2, 2M + N)`` and ``edge_weight (2M + N,)``,
        self-loops included.

    Example:
        >>> from dropedge_core._synthetic import karate
        >>> edge_index, edge_weight = full_adjacency(karate())  # N = 34, M = 78
        >>> edge_index.shape, edge_weight.shape
        (torch.Size([2, 190]), torch.Size([190]))
    """
    ones = torch.ones(1, graph.num_edges, dtype=torch.bool, device=graph.undirected_edges.device)
    return adjacencies(graph, ones, method)[0]


def to_dense(edge_index: torch.Tensor, edge_weight: torch.Tensor, num_nodes: int) -> torch.Tensor:
    """Dense ``(N, N)`` matrix of an ``(edge_index, edge_weight)`` pair (tests, small graphs).

    Args:
        edge_index (Tensor): ``(2, E)`` long, rows then columns.
        edge_weight (Tensor): ``(E,)``, each entry's value (repeated entries are summed).
        num_nodes (int): :math:`N`.

    Returns:
        Tensor: ``(N, N)`` of ``edge_weight``'s dtype.

    Example:
        >>> to_dense(torch.tensor([[0, 1], [1, 1]]), torch.tensor([0.5, 2.0]), 2)
        tensor([[0.0000, 0.5000],
                [0.0000, 2.0000]])
    """
    out = torch.zeros(num_nodes, num_nodes, dtype=edge_weight.dtype, device=edge_weight.device)
    out.index_put_((edge_index[0], edge_index[1]), edge_weight, accumulate=True)
    return out


def to_sparse(edge_index: torch.Tensor, edge_weight: torch.Tensor, num_nodes: int) -> torch.Tensor:
    """A torch sparse CSR ``(N, N)`` matrix for fast ``A @ H`` products.

    Args:
        edge_index (Tensor): ``(2, E)`` long, rows then columns.
        edge_weight (Tensor): ``(E,)``, each entry's value (repeated entries are summed).
        num_nodes (int): :math:`N`.

    Returns:
        Tensor: sparse CSR ``(N, N)``.
    """
    coo = torch.sparse_coo_tensor(edge_index, edge_weight, (num_nodes, num_nodes))
    return to_csr(coo.coalesce())


def propagate(adj: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
    """``adj @ h`` for a sparse ``adj`` from :func:`to_sparse`.

    Args:
        adj (Tensor): sparse ``(N, N)``.
        h (Tensor): dense ``(N, C)``.

    Returns:
        Tensor: dense ``(N, C)``.

    Example:
        >>> adj = to_sparse(torch.tensor([[0, 1], [1, 0]]), torch.tensor([1.0, 1.0]), 2)
        >>> propagate(adj, torch.tensor([[1.0], [2.0]]))
        tensor([[2.],
                [1.]])
    """
    return torch.sparse.mm(adj, h)
