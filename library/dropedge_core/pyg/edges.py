"""Layer-wise edge dropout over a PyG ``edge_index`` (the functional form).

:func:`layer_dropout_edge` is :func:`torch_geometric.utils.dropout_edge` made layer-wise
and structure-aware: it returns one kept ``edge_index`` (and its mask over the input's
columns) per layer, drawn by one of the project's samplers
(:func:`dropedge_core.samplers.make`). Nothing is sampled here: the input is
mapped onto a :class:`~dropedge_core.graph.Graph` (:class:`EdgeIndexer`), the
sampler draws its ``(L, M)`` masks on that graph, and the masks are read back onto the
input's columns. So for the same generator state the masks are identical to those
drawn on the :class:`~dropedge_core.graph.Graph` itself.

How an arbitrary ``edge_index`` is read (the hostile cases):

* **self-loops** are not edges of the graph (the paper's ``A`` has none; the
  normalisation adds ``I``): they are never sampled, not counted in ``M`` and kept at
  every layer;
* **duplicates** (the same pair twice, in either direction) are one undirected edge: all
  their columns are kept or dropped together;
* **one direction only**: the pair is one undirected edge; when it is kept, the one
  column there is kept (nothing is added). With ``directed=True`` the sampler draws
  among the ``2M`` directions of the graph, present in the input or not, so such a graph
  keeps fewer columns than the keep rate says;
* **isolated nodes** need ``num_nodes`` (or ``x``) to be counted; they change nothing;
* **empty** ``edge_index`` (``(2, 0)``): every layer is empty;
* ids out of ``[0, num_nodes)``, negative ids, a float or bool dtype, a shape other than
  ``(2, E)``, ids or a ``num_nodes`` whose graph would not fit in memory, NaN/inf
  features for a kernel sampler: :class:`ValueError` naming the value, before anything
  is drawn or allocated (:mod:`dropedge_core.pyg.checks`).

Unlike PyG's ``dropout_edge(force_undirected=True)``, which returns both directions of
every kept edge (adding the missing one), a kept edge here keeps exactly the input's
columns of it: the output is always a subset of the input's columns.
"""
from __future__ import annotations

import copy

import torch
from torch import Tensor

from dropedge_core import samplers
from dropedge_core.graph import Graph, l1_normalize_rows
from dropedge_core.pyg._slots import slot_masks
from dropedge_core.pyg.batch import check_batch, sample_per_graph
from dropedge_core.pyg.checks import check_edge_index, check_edge_values, check_features, check_generator

__all__ = [
    "DEFAULT_KEEP_MIN", "DEFAULT_KEEP_MAX", "KERNEL_SAMPLERS", "ONE_SAMPLE", "normalized_features",
    "make_sampler",
    "EdgeIndexer", "layer_dropout_edge",
]

#: The default keep rates of the sparsest and densest layer (the paper's p_min, p_max).
DEFAULT_KEEP_MIN = 0.3
DEFAULT_KEEP_MAX = 0.8

#: The samplers that weigh edges by a kernel of their end points' features (need ``x``).
KERNEL_SAMPLERS = tuple(name for name, (_, w) in samplers.NAMED.items() if w == "kernel")

#: The layer relations that keep one edge set for every layer (NoDrop, DropEdge, FD): the
#: layers are handed one selected tensor, as in eval mode, not ``L`` equal copies.
ONE_SAMPLE = ("all", "shared")


def normalized_features(x: Tensor) -> Tensor:
    """``x`` (detached, dense, float) with rows L1-normalised as the ``Graph`` path's are.

    Rows already normalised (norm within 1e-6 of 1) and zero rows are taken as they are:
    dividing again would change their last bits, and with them the kernel weights and
    possibly a draw (``to_pyg(graph).x`` must give the ``Graph`` path's masks).

    Args:
        x (Tensor): Node features, shape :obj:`(N, C)`, dense or sparse.

    Returns:
        Tensor: :obj:`(N, C)` dense float32.
    """
    return _normalized(x, None)


def _normalized(x: Tensor, nonnegative: bool | None, row_sums: Tensor | None = None) -> Tensor:
    """:func:`normalized_features`; ``nonnegative``: whether ``x`` has no negative entry
    (``None``: not known yet); ``row_sums``: ``x.sum(dim=1)`` of this float ``x`` if already
    computed (the norms of non-negative rows: the same sum, not taken twice)."""
    x = (x.to_dense() if x.layout != torch.strided else x).detach().float()
    # non-negative features (bag-of-words: Cora, CiteSeer) are their own abs, bit for bit
    # (a -0.0 aside, which changes no sum but an all-zero row's, and that one stays as
    # it is): a min() saves the (N, C) copy abs() makes at every fresh graph
    if nonnegative is None:
        nonnegative = x.numel() == 0 or bool(x.min() >= 0)
    if nonnegative and row_sums is not None:
        norm = row_sums.unsqueeze(1)
    else:
        norm = (x if nonnegative else x.abs()).sum(dim=1, keepdim=True)
    done = ((norm - 1.0).abs() <= 1e-6) | (norm == 0)
    return x if bool(done.all()) else torch.where(done, x, l1_normalize_rows(x))


def _checked_features(x: Tensor) -> Tensor:
    """:func:`~dropedge_core.pyg.checks.check_features` then :func:`normalized_features`
    of ``x``, their two cheap tests (finite row sums, no negative entry) read back in one
    host sync: a graph break less under ``torch.compile``."""
    dense = x.to_dense() if x.layout != torch.strided else x
    finite, nonnegative, sums = False, None, None
    if dense.is_floating_point() and dense.numel():
        sums = dense.sum(dim=1)
        finite, nonnegative = torch.stack([torch.isfinite(sums).all(), dense.min() >= 0]).tolist()
    if not finite:
        check_features(x)  # names the rows that hold NaN/inf, or passes sums that overflowed
    # a float32 x's row sums are its L1 norms when no entry is negative
    return _normalized(dense, nonnegative, sums if dense.dtype == torch.float32 else None)


def _refuse_unknown(unknown: dict) -> None:
    # p_min/p_max are the core's (the paper's) keep rates; a PyG user reads a ``p`` as a
    # drop probability, so at this boundary they are spelled keep_min/keep_max
    paper = sorted(set(unknown) & {"p_min", "p_max"})
    if paper:
        raise ValueError(f"{'/'.join(paper)}: in dropedge_core.pyg the layer-wise keep rates are "
                         "keep_min/keep_max (the fraction of edges KEPT, the paper's p_min/p_max); "
                         "p is PyG's drop probability (dropedge, fd)")
    if unknown:
        raise TypeError(f"unexpected keyword argument(s) {sorted(unknown)}")


def _resolve_directed(directed: bool | None, force_undirected: bool | None) -> bool:
    if force_undirected is None:
        return bool(directed)
    if directed is not None and bool(directed) == bool(force_undirected):
        raise ValueError(f"directed={directed} contradicts force_undirected={force_undirected}; "
                         "pass one of them")
    return not force_undirected


def make_sampler(sampler: str | samplers.EdgeSampler = "dropedge++", keep_min: float | None = None,
                 keep_max: float | None = None, p: float | None = None, kernel: str = "linear",
                 directed: bool | None = None, force_undirected: bool | None = None,
                 ) -> samplers.EdgeSampler:
    r"""The core sampler for PyG-style rates, refusing a rate the sampler would ignore.

    Args:
        sampler (str or EdgeSampler): A name of :data:`dropedge_core.samplers.NAMES`,
            or a core :class:`~dropedge_core.samplers.EdgeSampler` taken as it is
            (its own keep rates; no rate may be passed beside it).
        keep_min (float, optional): Fraction of the edges **kept** at the sparsest layer
            (the paper's :obj:`p_min`) of :obj:`"li"`, :obj:`"lid"`, :obj:`"ldd"`,
            :obj:`"dropedge++"`. (default: :obj:`0.3`)
        keep_max (float, optional): Fraction **kept** at the densest layer (the paper's
            :obj:`p_max`). (default: :obj:`0.8`)
        p (float, optional): PyG's **drop** probability of :obj:`"dropedge"`/:obj:`"fd"`
            (as in :func:`torch_geometric.utils.dropout_edge`: :obj:`p=0.2` keeps 80% of the
            edges, at every layer). (default: :obj:`1 - (keep_min + keep_max) / 2 = 0.45`)
        kernel (str): :obj:`"linear"`, :obj:`"poly"`, :obj:`"rbf"` or :obj:`"reverse"`.
        directed (bool, optional): Sample the two directions of an edge separately.
        force_undirected (bool, optional): PyG's name for :obj:`not directed`.

    Raises:
        ValueError: a rate out of :obj:`[0, 1]`, or one the sampler would ignore.

    Example:
        >>> make_sampler("dropedge", p=0.2).p  # kept: 1 - 0.2
        0.8
        >>> make_sampler("dropedge++", p=0.2)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: p=0.2 (PyG's drop probability) would be ignored by 'dropedge++', ...
    """
    given = {name: v for name, v in (("keep_min", keep_min), ("keep_max", keep_max), ("p", p))
             if v is not None}
    directed = _resolve_directed(directed, force_undirected)
    if isinstance(sampler, samplers.EdgeSampler):
        if given:
            raise ValueError(f"{', '.join(given)} would be ignored: the EdgeSampler {sampler.name!r} "
                             "passed carries its own keep rates")
        return sampler
    s = samplers.make(sampler, directed=directed, kernel=kernel)
    if s.relation == "all" and given:
        raise ValueError(f"{', '.join(given)} would be ignored by {s.name!r}, which keeps every edge")
    if s.relation == "shared":
        if keep_min is not None or keep_max is not None:
            raise ValueError(f"keep_min/keep_max would be ignored by {s.name!r}, which drops every layer's "
                             "edges at one rate: pass p (PyG's drop probability)")
        if p is not None and (isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0):
            raise ValueError(f"p is a drop probability and must be in [0, 1] (got {p!r})")
        keep = 1.0 - p if p is not None else (DEFAULT_KEEP_MIN + DEFAULT_KEEP_MAX) / 2
        return samplers.make(sampler, directed=directed, kernel=kernel, p=keep)
    if p is not None:
        raise ValueError(f"p={p} (PyG's drop probability) would be ignored by {s.name!r}, which keeps "
                         "keep_min..keep_max of the edges layer by layer; pass keep_min/keep_max "
                         "(fractions kept)")
    keep_min = DEFAULT_KEEP_MIN if keep_min is None else keep_min
    keep_max = DEFAULT_KEEP_MAX if keep_max is None else keep_max
    for name, value in (("keep_min", keep_min), ("keep_max", keep_max)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
            raise ValueError(f"{name} is a fraction of edges kept and must be in [0, 1] (got {value!r})")
    if keep_min > keep_max:
        raise ValueError(f"keep_min must be <= keep_max (got keep_min={keep_min}, keep_max={keep_max}): "
                         "the sparsest layer keeps the fewest edges")
    return samplers.make(sampler, directed=directed, kernel=kernel, p_min=keep_min, p_max=keep_max)


class EdgeIndexer:
    """An ``edge_index`` mapped onto the project's :class:`Graph`, once.

    Holds what depends only on the graph: the simple undirected graph of the input
    (``graph``; it memoises the kernel weights the samplers compute) and, for
    every input column, the mask column it reads (``columns``; a self-loop reads a
    column that is always True). Vectorised: one ``torch.unique`` over the edges.

    Args:
        edge_index (LongTensor): validated edge indices :obj:`(2, E)`.
        num_nodes (int): the number of nodes.
        x (Tensor, optional): node features; row-L1-normalised here as the ``Graph``
            path normalises them (:func:`normalized_features`), so the kernel weights are
            the same; NaN/inf refused (:func:`~dropedge_core.pyg.checks.check_features`).
            (default: :obj:`None`)
    """

    def __init__(self, edge_index: Tensor, num_nodes: int, x: Tensor | None = None):
        feats = None if x is None else _checked_features(x)  # before the work below
        src, dst = edge_index.long()
        loop = src == dst
        lo, hi = torch.minimum(src, dst), torch.maximum(src, dst)
        key = lo * max(num_nodes, 1) + hi
        # the same sorted unique keys as graph.simple_undirected_edges: the same edge order
        unique, inverse = torch.unique(key[~loop], return_inverse=True)
        self.undirected = torch.stack([unique // max(num_nodes, 1), unique % max(num_nodes, 1)])
        self.num_nodes = num_nodes
        m = unique.numel()
        self._set_features(feats)
        undirected_column = torch.full_like(src, m)  # column m: the always-kept pad
        undirected_column[~loop] = inverse
        # graph.edge_index's column j is (u_j, v_j) with u < v; column j + M the reverse
        directed_column = torch.where(src > dst, undirected_column + m, undirected_column)
        directed_column[loop] = 2 * m
        self.columns = {m: undirected_column, 2 * m: directed_column}
        self.batch_cache: dict = {}  # a batch's per-graph layout (pyg.batch), for this mapping

    def _set_features(self, normalized: Tensor | None) -> None:
        n, device = self.num_nodes, self.undirected.device
        feats = torch.zeros(n, 0, device=device) if normalized is None else normalized
        never = torch.zeros(n, dtype=torch.bool, device=device)
        # a fresh Graph: its memo (kernel weights) belongs to these features only
        self.graph = Graph(name="edge_index", x=feats, y=torch.full((n,), -1, device=device),
                           undirected_edges=self.undirected, train_mask=never, val_mask=never,
                           test_mask=never, num_classes=0)
        self.has_features = normalized is not None

    def with_features(self, x: Tensor | None) -> EdgeIndexer:
        """The same mapping over new features ``x`` (no new ``torch.unique``)."""
        normalized = None if x is None else _checked_features(x)
        other = copy.copy(self)
        other._set_features(normalized)
        return other

    def masks(self, graph_masks: Tensor) -> Tensor:
        """``(L, M)`` or ``(L, 2M)`` masks of :attr:`graph` → ``(L, E)`` masks over the input."""
        num_layers, width = graph_masks.shape
        padded = torch.ones(num_layers, width + 1, dtype=torch.bool, device=graph_masks.device)
        padded[:, :width] = graph_masks
        # gather, not padded[:, columns]: the same values, ~3x cheaper on the CPU (Cora, L = 16)
        return torch.gather(padded, 1, self.columns[width].expand(num_layers, -1))

    def graph_masks(self, sampler: samplers.EdgeSampler, num_layers: int,
                    generator: torch.Generator | None = None, ptr: Tensor | None = None) -> Tensor:
        """``(L, M)`` (``(L, 2M)`` if directed) masks of :attr:`graph`; with ``ptr`` (a
        batch's node ranges, :func:`~dropedge_core.pyg.batch.check_batch`) each graph of
        the batch keeps its own share of its own edges."""
        if sampler.weighting == "kernel" and not self.has_features:
            raise ValueError(f"sampler {sampler.name!r} weighs edges by a kernel of the node features: "
                             "pass x (the node features)")
        if ptr is None:
            return sampler.sample(self.graph, num_layers, generator=generator)
        return sample_per_graph(self.graph, ptr, sampler, num_layers, generator, self.batch_cache)

    def sample(self, sampler: samplers.EdgeSampler, num_layers: int,
               generator: torch.Generator | None = None, ptr: Tensor | None = None) -> Tensor:
        """``(L, E)`` bool: the input's columns kept at each layer (row 0: the input layer)."""
        return self.masks(self.graph_masks(sampler, num_layers, generator, ptr))


def layer_dropout_edge(edge_index: Tensor, num_layers: int, x: Tensor | None = None,
                       sampler: str | samplers.EdgeSampler = "dropedge++", keep_min: float | None = None,
                       keep_max: float | None = None, p: float | None = None, kernel: str = "linear",
                       directed: bool | None = None, force_undirected: bool | None = None,
                       num_nodes: int | None = None, generator: torch.Generator | None = None,
                       training: bool = True, edge_attr: Tensor | None = None,
                       batch: Tensor | None = None, **unknown,
                       ) -> list[tuple[Tensor, ...]]:
    r"""Drops edges layer by layer with one of DropEdge++'s samplers.

    Returns one pair per layer (layer :obj:`0` is the input layer): (1) the retained
    :obj:`edge_index` of that layer, (2) its mask over the columns of the input
    :obj:`edge_index`; with :obj:`edge_attr`, a triple: the kept :obj:`edge_index`, the
    kept rows of :obj:`edge_attr`, the mask. Layer :obj:`l` of :obj:`"li"`, :obj:`"lid"`,
    :obj:`"dropedge++"` **keeps**
    :obj:`floor(M * (keep_min + (keep_max - keep_min) * l / (L - 1)))` of the :obj:`M`
    undirected edges (sparsest at the input layer); :obj:`"ldd"` the same counts from the
    top down, :obj:`floor(M * (keep_max - (keep_max - keep_min) * l / (L - 1)))` (densest at
    the input layer, each layer a subset of the one below); :obj:`"dropedge"` and :obj:`"fd"`
    **drop** a fraction :obj:`p` at every layer, PyG's meaning (they keep
    :obj:`floor(M * (1 - p))`), one edge set for every layer: those layers (and
    :obj:`"nodrop"`'s) are one and the same tuple. A rate the sampler
    would ignore is refused (:func:`make_sampler`).
    See :mod:`dropedge_core.pyg.edges` for self-loops, duplicates and one-way edges.

    .. note::
        Each call maps :obj:`edge_index` onto its undirected edges and computes the kernel
        weights anew. In a training loop over one graph, use the module
        :class:`~dropedge_core.pyg.LayerDropEdge` instead: it keeps both while the graph
        and the features stay the same, and draws the same masks.

    Args:
        edge_index (LongTensor): The edge indices.
        num_layers (int): The number of layers :obj:`L`.
        x (Tensor, optional): Node features; needed by :obj:`"fd"` and
            :obj:`"dropedge++"` (kernel weights); NaN/inf refused. (default: :obj:`None`)
        sampler (str or EdgeSampler, optional): :obj:`"nodrop"`, :obj:`"dropedge"`,
            :obj:`"li"`, :obj:`"lid"`, :obj:`"ldd"`, :obj:`"fd"` or :obj:`"dropedge++"`,
            or any :class:`~dropedge_core.samplers.EdgeSampler`.
            (default: :obj:`"dropedge++"`)
        keep_min (float, optional): Fraction of edges kept at the sparsest layer.
            (default: :obj:`0.3`)
        keep_max (float, optional): Fraction of edges kept at the densest layer.
            (default: :obj:`0.8`)
        p (float, optional): Drop probability of :obj:`"dropedge"`/:obj:`"fd"`.
            (default: :obj:`0.45`)
        kernel (str, optional): :obj:`"linear"`, :obj:`"poly"`, :obj:`"rbf"` or
            :obj:`"reverse"`. (default: :obj:`"linear"`)
        directed (bool, optional): If set to :obj:`True`, samples the two directions of
            an edge separately. (default: :obj:`False`: both kept or dropped together)
        force_undirected (bool, optional): PyG's name for :obj:`not directed`.
            (default: :obj:`True`, unlike :func:`~torch_geometric.utils.dropout_edge`:
            the paper samples undirected edges)
        num_nodes (int, optional): The number of nodes. (default: :obj:`None`)
        generator (torch.Generator, optional): The random source, on the device of
            :obj:`edge_index`. (default: :obj:`None`: torch's global one)
        training (bool, optional): If set to :obj:`False`, this operation is a no-op
            (after validation). (default: :obj:`True`)
        edge_attr (Tensor, optional): Edge weights :obj:`(E,)` or features
            :obj:`(E, D)`, returned per layer beside the kept edges. (default: :obj:`None`)
        batch (LongTensor, optional): PyG's graph id of every node :obj:`(N,)`: each graph
            of the batch keeps its own share of its own edges (:mod:`~dropedge_core.pyg.batch`).
            (default: :obj:`None`: the rates apply to all edges together)
        **unknown (optional): Refused: :obj:`p_min`/:obj:`p_max` with a
            :class:`ValueError` that names :obj:`keep_min`/:obj:`keep_max` (the paper's
            keep rates, spelled so here), any other name with a :class:`TypeError`.

    :rtype: list of (:class:`LongTensor`, :class:`BoolTensor`), or of
        (:class:`LongTensor`, :class:`Tensor`, :class:`BoolTensor`) with :obj:`edge_attr`

    Example:
        >>> edge_index = torch.tensor([[0, 1, 1, 2, 2, 3, 3, 0],
        ...                            [1, 0, 2, 1, 3, 2, 0, 3]])
        >>> layers = layer_dropout_edge(edge_index, num_layers=3, sampler="lid",
        ...                             keep_min=0.25, keep_max=0.75,
        ...                             generator=torch.Generator().manual_seed(0))
        >>> [int(mask.sum()) // 2 for _, mask in layers]  # undirected edges kept
        [1, 2, 3]
        >>> bool((layers[0][1] <= layers[1][1]).all())  # LID: nested, bottom sparsest
        True
        >>> layers = layer_dropout_edge(edge_index, 2, sampler="dropedge", p=0.25)  # PyG's p: drop
        >>> [int(mask.sum()) // 2 for _, mask in layers]  # 4 edges, 1 - 0.25 kept
        [3, 3]
    """
    _refuse_unknown(unknown)
    s = make_sampler(sampler, keep_min=keep_min, keep_max=keep_max, p=p, kernel=kernel, directed=directed,
                     force_undirected=force_undirected)
    samplers.check_layers(num_layers)
    if torch.compiler.is_compiling():  # traced: validated in eager mode only, drawn from slots
        return _traced(edge_index, num_layers, x, s, num_nodes, generator, training, edge_attr, batch)
    num_nodes = check_edge_index(edge_index, num_nodes, x)
    check_edge_values("edge_attr", edge_attr, edge_index.size(1))
    check_generator(generator, edge_index.device)
    ptr = None if batch is None else check_batch(batch, num_nodes, edge_index)
    if s.weighting == "kernel" and x is None:
        raise ValueError(f"sampler {s.name!r} weighs edges by a kernel of the node features: pass x")
    if not training:
        masks = torch.ones(num_layers, edge_index.size(1), dtype=torch.bool, device=edge_index.device)
    else:
        masks = EdgeIndexer(edge_index, num_nodes, x if s.weighting == "kernel" else None).sample(
            s, num_layers, generator, ptr)
    if not training:
        return [(edge_index, row) if edge_attr is None else (edge_index, edge_attr, row) for row in masks]
    rows = masks[:1] if s.relation in ONE_SAMPLE else masks  # one edge set: selected once
    out = [(edge_index[:, row], row) if edge_attr is None else (edge_index[:, row], edge_attr[row], row)
           for row in rows]
    return out * (num_layers // len(rows))


def _traced(edge_index: Tensor, num_layers: int, x: Tensor | None, sampler: samplers.EdgeSampler,
            num_nodes: int | None, generator: torch.Generator | None, training: bool,
            edge_attr: Tensor | None, batch: Tensor | None) -> list[tuple[Tensor, ...]]:
    """:func:`layer_dropout_edge` under ``torch.compile``: the masks from the edges' slots
    (:func:`~dropedge_core.pyg._slots.slot_masks`, fixed shapes, no host sync), no validation
    that reads a tensor back."""
    if sampler.weighting == "kernel" and x is None:
        raise ValueError(f"sampler {sampler.name!r} weighs edges by a kernel of the node features: pass x")
    if not training:
        row = torch.ones(edge_index.size(1), dtype=torch.bool, device=edge_index.device)
        return [(edge_index, row) if edge_attr is None else (edge_index, edge_attr, row)] * num_layers
    masks = slot_masks(edge_index, num_nodes, sampler, num_layers, x, generator, batch)
    rows = masks[:1] if sampler.relation in ONE_SAMPLE else masks  # one edge set: selected once
    out = [(edge_index[:, row], row) if edge_attr is None else (edge_index[:, row], edge_attr[row], row)
           for row in rows]
    return out * (num_layers // len(rows))
