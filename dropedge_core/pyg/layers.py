"""Layer-wise edge dropout as a :class:`torch.nn.Module` and as a PyG transform.

:class:`LayerDropEdge` sits in front of a stack of message-passing layers: in training
mode it hands every layer its own kept ``edge_index``, in eval mode the whole graph.
What depends only on the graph (the mapping onto the project's ``Graph``, the kernel
weights) is computed once and reused while the same ``edge_index`` (and ``x``) come in.
:class:`SampleLayerEdges` is the same sampling for data pipelines.
"""
from __future__ import annotations

import torch
from torch import Tensor, nn
from torch_geometric.transforms import BaseTransform

from dropedge_core.method import samplers
from dropedge_core.method.normalization import check_method
from dropedge_core.pyg.edges import EdgeIndexer, check_edge_index, make_sampler
from dropedge_core.training.trainer import AdjacencyBuilder

__all__ = ["LayerDropEdge", "SampleLayerEdges"]


def _identity(t: Tensor | None) -> tuple | None:
    # data_ptr + shape + device + _version (bumped by every in-place change): a new or
    # modified tensor gets a new key, the same one hits the cache
    return None if t is None else (t.data_ptr(), tuple(t.shape), str(t.device), t._version)


class _Cached:
    """One :class:`EdgeIndexer` (and its adjacency builder and full adjacency), rebuilt
    only when the inputs change."""

    def __init__(self) -> None:
        self.key: tuple | None = None
        self.indexer: EdgeIndexer | None = None
        self.builder: AdjacencyBuilder | None = None
        self.full: Tensor | None = None

    def get(self, edge_index: Tensor, num_nodes: int, x: Tensor | None) -> EdgeIndexer:
        key = (_identity(edge_index), num_nodes, _identity(x))
        if key != self.key:
            self.indexer, self.key = EdgeIndexer(edge_index, num_nodes, x), key
            self.builder = self.full = None
        return self.indexer


class LayerDropEdge(nn.Module):
    r"""Layer-wise edge dropout with DropEdge++'s samplers, for stacks of PyG layers.

    In training mode every call draws a fresh sample and returns :obj:`num_layers`
    :obj:`edge_index` tensors, one per layer (index :obj:`0`: the input layer); in eval
    mode it returns the input :obj:`edge_index` for every layer and draws nothing.
    The arguments are those of :func:`~dropedge_core.pyg.edges.layer_dropout_edge`.

    With :obj:`normalization` set, it returns instead every layer's normalised
    adjacency as a sparse CSR :obj:`(N, N)` tensor :obj:`adj_t` (row = target), for
    layers that take one with :obj:`normalize=False`, e.g. :obj:`GCNConv(...,
    normalize=False)(x, adj_t)`: PyG then multiplies sparse matrices as the project's
    trainer does (:class:`~dropedge_core.training.trainer.AdjacencyBuilder`, all layers
    in one pass; the eval-mode adjacency is computed once), instead of normalising and
    scattering per layer. These adjacencies are of the simple undirected graph of
    :obj:`edge_index` (duplicates merged, one-way edges made two-way, self-loops
    replaced by the normalisation's ``I``), and valid until the next call.

    Args:
        num_layers (int): The number of layers :obj:`L`.
        sampler (str or EdgeSampler, optional): The sampler. (default: :obj:`"dropedge++"`)
        p_min (float, optional): Keep rate of the sparsest layer. (default: :obj:`0.3`)
        p_max (float, optional): Keep rate of the densest layer. (default: :obj:`0.8`)
        p (float, optional): Keep rate of :obj:`"dropedge"`/:obj:`"fd"`.
            (default: :obj:`(p_min + p_max) / 2`)
        kernel (str, optional): The kernel of :obj:`"fd"`/:obj:`"dropedge++"`.
            (default: :obj:`"linear"`)
        directed (bool, optional): Sample the two directions of an edge separately.
            (default: :obj:`False`)
        generator (torch.Generator, optional): The random source (on the graph's
            device). (default: :obj:`None`: torch's global one)
        normalization (str, optional): :obj:`"NA"`, :obj:`"FOG"`, :obj:`"AN"`,
            :obj:`"ANS"` or :obj:`"ARW"`: return normalised sparse adjacencies (above).
            (default: :obj:`None`: kept :obj:`edge_index` tensors)

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
        >>> drop.eval()(edge_index, x=x)[0] is edge_index  # eval: the whole graph
        True
    """

    def __init__(self, num_layers: int, sampler: str | samplers.EdgeSampler = "dropedge++",
                 p_min: float = 0.3, p_max: float = 0.8, p: float | None = None,
                 kernel: str = "linear", directed: bool = False,
                 generator: torch.Generator | None = None, normalization: str | None = None):
        super().__init__()
        self.normalization = None if normalization is None else check_method(normalization)
        samplers.check_layers(num_layers)
        self.sampler = make_sampler(sampler, p_min=p_min, p_max=p_max, p=p, kernel=kernel,
                                    directed=directed)
        self.num_layers = num_layers
        self.generator = generator
        self._cache = _Cached()

    def masks(self, edge_index: Tensor, x: Tensor | None = None,
              num_nodes: int | None = None) -> Tensor:
        """A fresh ``(L, E)`` bool sample over the columns of ``edge_index`` (any mode)."""
        num_nodes = check_edge_index(edge_index, num_nodes, x)
        if self.sampler.weighting == "kernel" and x is None:
            raise ValueError(f"sampler {self.sampler.name!r} weighs edges by a kernel of the node "
                             "features: pass x")
        feats = x if self.sampler.weighting == "kernel" else None
        return self._cache.get(edge_index, num_nodes, feats).sample(self.sampler, self.num_layers,
                                                                    self.generator)

    def forward(self, edge_index: Tensor, x: Tensor | None = None, num_nodes: int | None = None,
                ) -> list[Tensor]:
        """The kept ``edge_index`` of every layer (training), or ``edge_index`` ``L`` times (eval).

        Args:
            edge_index (LongTensor): The edge indices :obj:`(2, E)`.
            x (Tensor, optional): Node features (kernel samplers). (default: :obj:`None`)
            num_nodes (int, optional): The number of nodes. (default: :obj:`None`)
        """
        if self.normalization is not None:
            return self._adjacencies(edge_index, x, num_nodes)
        if not self.training:
            check_edge_index(edge_index, num_nodes, x)  # the same errors in both modes
            return [edge_index] * self.num_layers
        return [edge_index[:, row] for row in self.masks(edge_index, x, num_nodes)]

    def _adjacencies(self, edge_index: Tensor, x: Tensor | None, num_nodes: int | None) -> list[Tensor]:
        num_nodes = check_edge_index(edge_index, num_nodes, x)
        feats = x if self.sampler.weighting == "kernel" else None
        if feats is None and self.sampler.weighting == "kernel":
            raise ValueError(f"sampler {self.sampler.name!r} weighs edges by a kernel of the node "
                             "features: pass x")
        cache = self._cache
        graph = cache.get(edge_index, num_nodes, feats).graph
        if cache.builder is None:
            cache.builder = AdjacencyBuilder(graph, self.normalization)
        if not self.training:
            if cache.full is None:
                cache.full = cache.builder.full()
            return [cache.full] * self.num_layers
        return cache.builder(self.sampler.sample(graph, self.num_layers, self.generator))

    def extra_repr(self) -> str:
        s = self.sampler
        rates = f"p={s.p}" if s.relation == "shared" else f"p_min={s.p_min}, p_max={s.p_max}"
        kernel = f", kernel={s.kernel!r}" if s.weighting == "kernel" else ""
        norm = f", normalization={self.normalization!r}" if self.normalization else ""
        return (f"num_layers={self.num_layers}, sampler={s.name!r}, {rates}{kernel}, "
                f"directed={s.directed}{norm}")


class SampleLayerEdges(BaseTransform):
    r"""Draws a layer-wise sample of the edges of a :class:`~torch_geometric.data.Data`
    (functional name: :obj:`sample_layer_edges`).

    Stores :obj:`data.edge_layer_mask`, a bool tensor of shape :obj:`(E, L)`: column
    :obj:`l` marks the columns of :obj:`data.edge_index` kept at layer :obj:`l`, so
    :obj:`data.edge_index[:, data.edge_layer_mask[:, l]]` is layer :obj:`l`'s graph.
    Being one row per edge, the mask follows :obj:`edge_index` through PyG's subgraph
    and batching utilities. As a dataset's :obj:`transform` it draws a fresh sample at
    every access (every epoch); :obj:`data.x` feeds the kernel samplers. The arguments
    are those of :class:`LayerDropEdge`.

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
                 p_min: float = 0.3, p_max: float = 0.8, p: float | None = None,
                 kernel: str = "linear", directed: bool = False,
                 generator: torch.Generator | None = None):
        self.drop = LayerDropEdge(num_layers, sampler, p_min, p_max, p, kernel, directed, generator)

    def forward(self, data):
        x = data.x if self.drop.sampler.weighting == "kernel" else None
        data.edge_layer_mask = self.drop.masks(data.edge_index, x, data.num_nodes).t().contiguous()
        return data

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.drop.extra_repr()})"
