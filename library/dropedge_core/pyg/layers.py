"""Layer-wise edge dropout as a :class:`torch.nn.Module` and as a PyG transform.

:class:`LayerDropEdge` sits in front of a stack of message-passing layers: in training
mode it hands every layer its own kept ``edge_index``, in eval mode the whole graph.
What depends only on the graph (the mapping onto the project's ``Graph``, the kernel
weights) is computed once and reused while the same ``edge_index`` (and ``x``) come in.
:class:`SampleLayerEdges` is the same sampling for data pipelines.
"""
from __future__ import annotations

import weakref

import torch
from torch import Tensor, nn
from torch_geometric.data.datapipes import functional_transform
from torch_geometric.transforms import BaseTransform

from dropedge_core import samplers
from dropedge_core.normalization import AdjacencyBuilder, check_method
from dropedge_core.pyg._slots import slot_masks
from dropedge_core.pyg.batch import check_batch
from dropedge_core.pyg.checks import check_edge_index, check_edge_values, check_generator, check_homogeneous
from dropedge_core.pyg.edges import ONE_SAMPLE, EdgeIndexer, _refuse_unknown, make_sampler
from dropedge_core.pyg.norm import normalize

__all__ = ["LayerDropEdge", "SampleLayerEdges"]


def _version(t: Tensor) -> int:
    return t._version  # bumped by every in-place change, also through a view


class _Cached:
    """One :class:`EdgeIndexer` (and its adjacency builder and full adjacency), rebuilt
    only when the inputs change.

    A cached mapping is reused only for an ``edge_index`` whose content equals the one
    it was built from (a stored copy, compared with :func:`torch.equal`, O(E)): never
    for a tensor that merely sits at the same address (a freed graph's memory is handed
    to the next graph of the same shape), and also for a fresh tensor with the same
    edges (a ``.to(device)`` or re-collated batch every step hits). Features, O(NC) to
    compare, are held by identity instead: a weak reference to the same tensor object at
    the same version counter (so in-place updates of learned embeddings are seen; a
    write that bypasses the counter, through ``.data`` or a NumPy view, is not).
    """

    def __init__(self) -> None:
        self.edges: Tensor | None = None
        self.num_nodes: int | None = None
        self.feats: tuple | None = None  # (weakref or None, version)
        self.indexer: EdgeIndexer | None = None
        self.builder: AdjacencyBuilder | None = None
        self.full: Tensor | None = None
        self.batch: tuple | None = None  # (a copy of the batch vector, its ptr) for these edges

    def _same_edges(self, edge_index: Tensor, num_nodes: int) -> bool:
        e = self.edges
        return (e is not None and num_nodes == self.num_nodes and e.shape == edge_index.shape
                and e.dtype == edge_index.dtype and e.device == edge_index.device
                and torch.equal(e, edge_index))

    def _same_features(self, x: Tensor | None) -> bool:
        if self.feats is None:
            return False
        ref, version = self.feats
        return (ref is None and x is None) or (ref is not None and x is not None and ref() is x
                                                and version == _version(x))

    def ptr(self, batch: Tensor, edge_index: Tensor) -> Tensor:
        """:func:`~dropedge_core.pyg.batch.check_batch` of ``batch`` over the cached edges
        (call after :meth:`get`), validated again only when its content changed: an equal
        vector (one O(N) compare) over equal edges passes as it passed before."""
        held = self.batch
        if (held is not None and isinstance(batch, Tensor) and held[0].shape == batch.shape
                and held[0].dtype == batch.dtype and held[0].device == batch.device
                and torch.equal(held[0], batch)):
            return held[1]
        self.batch = None
        ptr = check_batch(batch, self.indexer.num_nodes, edge_index)
        self.batch = (batch.clone(), ptr)
        return ptr

    def get(self, edge_index: Tensor, num_nodes: int, x: Tensor | None) -> EdgeIndexer:
        if not self._same_edges(edge_index, num_nodes):
            self.edges = self.feats = self.batch = None  # a failed build below leaves nothing half-cached
            self.indexer = EdgeIndexer(edge_index, num_nodes, x)
            self.edges, self.num_nodes = edge_index.clone(), num_nodes
        elif not self._same_features(x):
            self.feats = None
            self.indexer = self.indexer.with_features(x)
        else:
            return self.indexer
        self.feats = (None if x is None else weakref.ref(x), None if x is None else _version(x))
        self.builder = self.full = None
        return self.indexer


class LayerDropEdge(nn.Module):
    r"""Layer-wise edge dropout with DropEdge++'s samplers, for stacks of PyG layers.

    In training mode every call draws a fresh sample and returns :obj:`num_layers`
    :obj:`edge_index` tensors, one per layer (index :obj:`0`: the input layer); in eval
    mode it returns the input :obj:`edge_index` for every layer and draws nothing. A
    sampler that keeps one edge set for every layer (NoDrop, DropEdge, FD) hands every
    layer the same kept tensor, as eval mode does.
    Given :obj:`edge_weight` and/or :obj:`edge_attr`, every layer is a tuple instead:
    its :obj:`edge_index` and the kept rows of each (in that order), as
    :func:`torch_geometric.utils.to_undirected` returns them. The rates are those of
    :func:`~dropedge_core.pyg.edges.layer_dropout_edge`: :obj:`keep_min`/:obj:`keep_max`
    are fractions **kept**, :obj:`p` PyG's **drop** probability.

    With :obj:`normalization` set, it returns instead every layer's normalised
    adjacency as a sparse CSR :obj:`(N, N)` tensor :obj:`adj_t` (row = target), for
    layers that take one with :obj:`normalize=False`, e.g. :obj:`GCNConv(...,
    normalize=False)(x, adj_t)`: PyG then multiplies sparse matrices as the project's
    trainer does (:class:`~dropedge_core.normalization.AdjacencyBuilder`, all layers
    in one pass; the eval-mode adjacency is computed once), instead of normalising and
    scattering per layer. These adjacencies are of the simple undirected graph of
    :obj:`edge_index` (duplicates merged, one-way edges made two-way, self-loops
    replaced by the normalisation's ``I``), and valid until the next call. With
    :obj:`edge_weight`, each layer's is :func:`~dropedge_core.pyg.norm.normalize` of its
    kept columns and their weights, as given (PyG's reading: no merging).

    What depends only on the graph is cached and reused while an equal
    :obj:`edge_index` (equal content, compared cheaply before the full check) and the same
    :obj:`x` (by identity and version) come in: the graph mapping, the kernel weights and the
    adjacency pattern. The
    generator moves with the module (:meth:`torch.nn.Module.to`): a generator on another
    device is replaced by one there, seeded from the old one's next draw.

    Args:
        num_layers (int): The number of layers :obj:`L`.
        sampler (str or EdgeSampler, optional): The sampler. (default: :obj:`"dropedge++"`)
        keep_min (float, optional): Fraction of edges kept at the sparsest layer.
            (default: :obj:`0.3`)
        keep_max (float, optional): Fraction of edges kept at the densest layer.
            (default: :obj:`0.8`)
        p (float, optional): Drop probability of :obj:`"dropedge"`/:obj:`"fd"` (PyG's).
            (default: :obj:`0.45`)
        kernel (str, optional): The kernel of :obj:`"fd"`/:obj:`"dropedge++"`.
            (default: :obj:`"linear"`)
        directed (bool, optional): Sample the two directions of an edge separately.
            (default: :obj:`False`)
        force_undirected (bool, optional): PyG's name for :obj:`not directed`.
            (default: :obj:`True`)
        generator (torch.Generator, optional): The random source (on the graph's
            device). (default: :obj:`None`: torch's global one)
        normalization (str, optional): :obj:`"NA"`, :obj:`"FOG"`, :obj:`"AN"`,
            :obj:`"ANS"` or :obj:`"ARW"`: return normalised sparse adjacencies (above).
            (default: :obj:`None`: kept :obj:`edge_index` tensors)
        **unknown (optional): Refused: :obj:`p_min`/:obj:`p_max` with a
            :class:`ValueError` that names :obj:`keep_min`/:obj:`keep_max` (the paper's
            keep rates, spelled so here), any other name with a :class:`TypeError`.

    Example:
        >>> from torch_geometric.nn import GCNConv
        >>> edge_index = torch.tensor([[0, 1, 1, 2, 2, 3], [1, 0, 2, 1, 3, 2]])
        >>> x = torch.rand(4, 8)
        >>> drop = LayerDropEdge(num_layers=2, sampler="dropedge++",
        ...                      generator=torch.Generator().manual_seed(0))
        >>> convs = [GCNConv(8, 8), GCNConv(8, 2)]
        >>> h = x
        >>> for conv, layer_edges in zip(convs, drop(edge_index, x=x)):
        ...     h = conv(h, layer_edges)
        >>> h.shape
        torch.Size([4, 2])
        >>> ei, w = drop(edge_index, x=x, edge_weight=torch.rand(6))[0]  # weights ride along
        >>> ei.size(1) == w.size(0)
        True
        >>> drop.eval()(edge_index, x=x)[0] is edge_index  # eval: the whole graph
        True
    """

    def __init__(self, num_layers: int, sampler: str | samplers.EdgeSampler = "dropedge++",
                 keep_min: float | None = None, keep_max: float | None = None, p: float | None = None,
                 kernel: str = "linear", directed: bool | None = None,
                 force_undirected: bool | None = None, generator: torch.Generator | None = None,
                 normalization: str | None = None, **unknown):
        super().__init__()
        _refuse_unknown(unknown)
        self.normalization = None if normalization is None else check_method(normalization)
        samplers.check_layers(num_layers)
        self.sampler = make_sampler(sampler, keep_min=keep_min, keep_max=keep_max, p=p, kernel=kernel,
                                    directed=directed, force_undirected=force_undirected)
        check_generator(generator)
        self.num_layers = num_layers
        self.generator = generator
        self._cache = _Cached()

    def _apply(self, fn, recurse: bool = True):
        # .to(device)/.cuda() move tensors through fn; the generator is no tensor, so it is
        # moved here: a generator's state cannot cross devices, so the new one is seeded
        # from the old one's next draw (deterministic for a seeded generator)
        super()._apply(fn, recurse)
        g = self.generator
        if g is not None:
            device = fn(torch.empty(0, device=g.device)).device
            if device != g.device:
                seed = int(torch.randint(0, 2**62, (1,), generator=g, device=g.device))
                self.generator = torch.Generator(device=device).manual_seed(seed)
        return self

    def _indexer(self, edge_index: Tensor, x: Tensor | None, num_nodes: int | None) -> EdgeIndexer:
        num_nodes = check_edge_index(edge_index, num_nodes, x)
        check_generator(self.generator, edge_index.device)
        if self.sampler.weighting == "kernel" and x is None:
            raise ValueError(f"sampler {self.sampler.name!r} weighs edges by a kernel of the node "
                             "features: pass x")
        feats = x if self.sampler.weighting == "kernel" else None
        return self._cache.get(edge_index, num_nodes, feats)

    def masks(self, edge_index: Tensor, x: Tensor | None = None, num_nodes: int | None = None,
              batch: Tensor | None = None) -> Tensor:
        """A fresh ``(L, E)`` bool sample over the columns of ``edge_index`` (any mode);
        with ``batch`` (PyG's graph id per node), each graph keeps its own share. Under
        ``torch.compile``, drawn from the edges' slots (:mod:`~dropedge_core.pyg._slots`):
        checked by device-side assertions, nothing cached, the samplers' law but another
        stream."""
        if torch.compiler.is_compiling():
            if self.sampler.weighting == "kernel" and x is None:
                raise ValueError(f"sampler {self.sampler.name!r} weighs edges by a kernel of the node "
                                 "features: pass x")
            return slot_masks(edge_index, num_nodes, self.sampler, self.num_layers, x, self.generator, batch)
        indexer = self._indexer(edge_index, x, num_nodes)
        ptr = None if batch is None else self._cache.ptr(batch, edge_index)
        return indexer.sample(self.sampler, self.num_layers, self.generator, ptr)

    def forward(self, edge_index: Tensor, x: Tensor | None = None, num_nodes: int | None = None,
                edge_weight: Tensor | None = None, edge_attr: Tensor | None = None,
                batch: Tensor | None = None) -> list:
        """The kept ``edge_index`` of every layer (training), or ``edge_index`` ``L`` times (eval).

        Args:
            edge_index (LongTensor): The edge indices :obj:`(2, E)`.
            x (Tensor, optional): Node features (kernel samplers). (default: :obj:`None`)
            num_nodes (int, optional): The number of nodes. (default: :obj:`None`)
            edge_weight (Tensor, optional): One weight per column :obj:`(E,)`; each layer
                gets its kept ones. (default: :obj:`None`)
            edge_attr (Tensor, optional): Edge features :obj:`(E, D)`; each layer gets its
                kept rows. (default: :obj:`None`)
            batch (LongTensor, optional): PyG's graph id of every node :obj:`(N,)`: each
                graph of a mini-batch keeps its own share of its own edges (per-graph keep
                counts, :mod:`dropedge_core.pyg.batch`). (default: :obj:`None`)

        :rtype: list of :class:`LongTensor`; with :obj:`edge_weight`/:obj:`edge_attr`,
            list of tuples :obj:`(edge_index, edge_weight, edge_attr)` holding the given
            ones; with :obj:`normalization`, list of sparse CSR :obj:`(N, N)` tensors.
        """
        traced = torch.compiler.is_compiling()  # validated in eager mode only: no host syncs
        if not traced:
            check_edge_values("edge_weight", edge_weight, _columns(edge_index))
            check_edge_values("edge_attr", edge_attr, _columns(edge_index))
        if self.normalization is not None:
            if edge_attr is not None:
                raise ValueError("normalization= returns adjacencies, which carry edge weights only: "
                                 "pass edge_weight, or normalization=None to get edge_attr per layer")
            return self._adjacencies(edge_index, x, num_nodes, edge_weight, batch)
        extra = [t for t in (edge_weight, edge_attr) if t is not None]
        if not self.training and traced:
            return [(edge_index, *extra) if extra else edge_index] * self.num_layers
        if not self.training:
            n = check_edge_index(edge_index, num_nodes, x)  # the same errors in both modes
            check_generator(self.generator, edge_index.device)
            if batch is not None:
                check_batch(batch, n, edge_index)
            return [(edge_index, *extra) if extra else edge_index] * self.num_layers
        masks = self.masks(edge_index, x, num_nodes, batch)
        rows = masks[:1] if self.sampler.relation in ONE_SAMPLE else masks  # one edge set: selected once
        out = [(edge_index[:, row], *(t[row] for t in extra)) if extra else edge_index[:, row]
               for row in rows]
        return out * (len(masks) // len(rows))

    def _adjacencies(self, edge_index: Tensor, x: Tensor | None, num_nodes: int | None,
                     edge_weight: Tensor | None, batch: Tensor | None) -> list[Tensor]:
        indexer = self._indexer(edge_index, x, num_nodes)
        ptr = None if batch is None else self._cache.ptr(batch, edge_index)
        if edge_weight is not None:
            rows = (indexer.sample(self.sampler, self.num_layers, self.generator, ptr) if self.training
                    else [None] * self.num_layers)
            n = indexer.num_nodes
            return [_csr(*normalize(edge_index if row is None else edge_index[:, row], n,
                                    self.normalization, edge_weight if row is None else edge_weight[row]),
                         n) for row in rows]
        cache = self._cache
        if cache.builder is None:
            cache.builder = AdjacencyBuilder(indexer.graph, self.normalization)
        if not self.training:
            if cache.full is None:
                cache.full = cache.builder.full()
            return [cache.full] * self.num_layers
        return cache.builder(indexer.graph_masks(self.sampler, self.num_layers, self.generator, ptr))

    def extra_repr(self) -> str:
        s = self.sampler
        rates = (f"p={1 - s.p:g} (drop)" if s.relation == "shared"
                 else f"keep_min={s.p_min}, keep_max={s.p_max}")
        kernel = f", kernel={s.kernel!r}" if s.weighting == "kernel" else ""
        norm = f", normalization={self.normalization!r}" if self.normalization else ""
        return (f"num_layers={self.num_layers}, sampler={s.name!r}, {rates}{kernel}, "
                f"directed={s.directed}{norm}")


def _columns(edge_index: Tensor) -> int:
    return int(edge_index.size(1)) if isinstance(edge_index, Tensor) and edge_index.dim() == 2 else 0


def _csr(edge_index: Tensor, weight: Tensor, num_nodes: int) -> Tensor:
    """PyG's ``adj_t`` (row = target) of weighted edges, duplicates summed."""
    adj = torch.sparse_coo_tensor(edge_index.flip(0), weight, (num_nodes, num_nodes))
    return adj.coalesce().to_sparse_csr()


@functional_transform("sample_layer_edges")
class SampleLayerEdges(BaseTransform):
    r"""Draws a layer-wise sample of the edges of a :class:`~torch_geometric.data.Data`
    (functional name: :obj:`sample_layer_edges`).

    Stores :obj:`data.edge_layer_mask`, a bool tensor of shape :obj:`(E, L)`: column
    :obj:`l` marks the columns of :obj:`data.edge_index` kept at layer :obj:`l`, so
    :obj:`data.edge_index[:, data.edge_layer_mask[:, l]]` is layer :obj:`l`'s graph.
    Being one row per edge, the mask follows :obj:`edge_index` through PyG's subgraph
    and batching utilities. As a dataset's :obj:`transform` it draws a fresh sample at
    every access (every epoch); :obj:`data.x` feeds the kernel samplers. A
    :class:`~torch_geometric.data.HeteroData` is refused (:class:`ValueError`).

    Args:
        num_layers (int): The number of layers :obj:`L`.
        sampler (str or EdgeSampler, optional): The sampler. (default: :obj:`"dropedge++"`)
        keep_min (float, optional): Fraction of edges kept at the sparsest layer.
            (default: :obj:`0.3`)
        keep_max (float, optional): Fraction of edges kept at the densest layer.
            (default: :obj:`0.8`)
        p (float, optional): Drop probability of :obj:`"dropedge"`/:obj:`"fd"` (PyG's).
            (default: :obj:`0.45`)
        kernel (str, optional): The kernel of :obj:`"fd"`/:obj:`"dropedge++"`.
            (default: :obj:`"linear"`)
        directed (bool, optional): Sample the two directions of an edge separately.
            (default: :obj:`False`)
        force_undirected (bool, optional): PyG's name for :obj:`not directed`.
            (default: :obj:`True`)
        generator (torch.Generator, optional): The random source (on the graph's
            device). (default: :obj:`None`: torch's global one)
        **unknown (optional): Refused: :obj:`p_min`/:obj:`p_max` with a
            :class:`ValueError` that names :obj:`keep_min`/:obj:`keep_max` (the paper's
            keep rates, spelled so here), any other name with a :class:`TypeError`.

    Example:
        >>> from torch_geometric.data import Data
        >>> data = Data(x=torch.rand(4, 3), edge_index=torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]]))
        >>> out = SampleLayerEdges(num_layers=3, generator=torch.Generator().manual_seed(0))(data)
        >>> out.edge_layer_mask.shape
        torch.Size([4, 3])
        >>> "edge_layer_mask" in data  # the input is not changed
        False
    """

    def __init__(self, num_layers: int, sampler: str | samplers.EdgeSampler = "dropedge++",
                 keep_min: float | None = None, keep_max: float | None = None, p: float | None = None,
                 kernel: str = "linear", directed: bool | None = None,
                 force_undirected: bool | None = None, generator: torch.Generator | None = None,
                 **unknown):
        self.drop = LayerDropEdge(num_layers, sampler, keep_min=keep_min, keep_max=keep_max, p=p,
                                  kernel=kernel, directed=directed, force_undirected=force_undirected,
                                  generator=generator, **unknown)

    def forward(self, data):
        check_homogeneous(data)
        x = data.x if self.drop.sampler.weighting == "kernel" else None
        data.edge_layer_mask = self.drop.masks(data.edge_index, x, data.num_nodes).t().contiguous()
        return data

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.drop.extra_repr()})"
