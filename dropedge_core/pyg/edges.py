"""Layer-wise edge dropout over a PyG ``edge_index`` (the functional form).

:func:`layer_dropout_edge` is :func:`torch_geometric.utils.dropout_edge` made layer-wise
and structure-aware: it returns one kept ``edge_index`` (and its mask over the input's
columns) per layer, drawn by one of the project's samplers
(:func:`dropedge_core.method.samplers.make`). Nothing is sampled here: the input is
mapped onto a :class:`~dropedge_core.method.graph.Graph` (:class:`EdgeIndexer`), the
sampler draws its ``(L, M)`` masks on that graph, and the masks are read back onto the
input's columns. So for the same generator state the masks are those of the ``Graph``
path, bit for bit.

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
  ``(2, E)``: :class:`ValueError` naming the value, before anything is drawn.
"""
from __future__ import annotations

import torch
from torch import Tensor

from dropedge_core.method import samplers
from dropedge_core.method.graph import Graph, l1_normalize_rows

__all__ = [
    "KERNEL_SAMPLERS", "normalized_features", "check_edge_index", "make_sampler", "EdgeIndexer",
    "layer_dropout_edge",
]

#: The samplers that weigh edges by a kernel of their end points' features (need ``x``).
KERNEL_SAMPLERS = tuple(name for name, (_, w) in samplers.NAMED.items() if w == "kernel")


def normalized_features(x: Tensor) -> Tensor:
    """``x`` (detached, dense, float) with rows L1-normalised as the ``Graph`` path's are.

    Rows already normalised (norm within 1e-6 of 1) and zero rows are taken as they are:
    dividing again would change their last bits, and with them the kernel weights and
    possibly a draw (``to_pyg(graph).x`` must give the ``Graph`` path's masks)."""
    x = (x.to_dense() if x.layout != torch.strided else x).detach().float()
    norm = x.abs().sum(dim=1, keepdim=True)
    done = ((norm - 1.0).abs() <= 1e-6) | (norm == 0)
    return x if bool(done.all()) else torch.where(done, x, l1_normalize_rows(x))


def check_edge_index(edge_index: Tensor, num_nodes: int | None = None,
                     x: Tensor | None = None) -> int:
    r"""Validate ``edge_index`` (and ``num_nodes``, ``x``); return the number of nodes.

    Args:
        edge_index (LongTensor): The edge indices, shape :obj:`(2, E)`, any integer dtype.
        num_nodes (int, optional): The number of nodes. (default: :obj:`x.size(0)` when
            :obj:`x` is given, else :obj:`max_id + 1`)
        x (Tensor, optional): Node features, shape :obj:`(N, C)`. (default: :obj:`None`)

    Raises:
        ValueError: the first defect found, naming the value and what is allowed.

    Example:
        >>> check_edge_index(torch.tensor([[0, 1], [1, 2]]))
        3
        >>> check_edge_index(torch.tensor([[0, 1], [1, 5]]), num_nodes=3)
        Traceback (most recent call last):
        ...
        ValueError: edge_index holds node id 5 but num_nodes=3; ids must be in [0, 3)
    """
    if not isinstance(edge_index, Tensor):
        raise ValueError("edge_index must be a torch.Tensor of shape (2, E) "
                         f"(got {type(edge_index).__name__})")
    if edge_index.dim() != 2 or edge_index.size(0) != 2:
        raise ValueError(f"edge_index must have shape (2, E) (got {tuple(edge_index.shape)})")
    if edge_index.dtype == torch.bool or edge_index.is_floating_point() or edge_index.is_complex():
        raise ValueError(f"edge_index must hold integer node ids (got dtype {edge_index.dtype}); "
                         "use edge_index.long()")
    if x is not None:
        if not isinstance(x, Tensor) or x.dim() != 2:
            shape = tuple(x.shape) if isinstance(x, Tensor) else type(x).__name__
            raise ValueError(f"x must be a (num_nodes, num_features) tensor (got {shape})")
        if not x.is_floating_point():
            raise ValueError(f"x must hold floating point features (got dtype {x.dtype})")
    if num_nodes is not None and (isinstance(num_nodes, bool) or not isinstance(num_nodes, int)
                                  or num_nodes < 0):
        raise ValueError(f"num_nodes must be a non-negative integer (got {num_nodes!r})")
    if num_nodes is None:
        num_nodes = int(x.size(0)) if x is not None else (
            int(edge_index.max()) + 1 if edge_index.numel() else 0)
    if x is not None and x.size(0) != num_nodes:
        raise ValueError(f"x has {x.size(0)} rows but num_nodes={num_nodes}; one row per node is needed")
    if edge_index.numel():
        low, high = int(edge_index.min()), int(edge_index.max())
        if low < 0:
            raise ValueError(f"edge_index holds a negative node id ({low}); ids must be in [0, {num_nodes})")
        if high >= num_nodes:
            raise ValueError(f"edge_index holds node id {high} but num_nodes={num_nodes}; "
                             f"ids must be in [0, {num_nodes})")
    return num_nodes


def make_sampler(sampler: str | samplers.EdgeSampler = "dropedge++", **params) -> samplers.EdgeSampler:
    """A sampler by name (:data:`dropedge_core.method.samplers.NAMES`) with ``params``
    (``p_min``, ``p_max``, ``p``, ``kernel``, ``gamma``, ``directed``), or an
    :class:`~dropedge_core.method.samplers.EdgeSampler` as it is (its own settings win;
    ``params`` are then ignored). Bad names and rates raise
    :class:`~dropedge_core.method.samplers.SamplerError`, a :class:`ValueError` naming them."""
    if isinstance(sampler, samplers.EdgeSampler):
        return sampler
    return samplers.make(sampler, **params)


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
            the same. (default: :obj:`None`)
    """

    def __init__(self, edge_index: Tensor, num_nodes: int, x: Tensor | None = None):
        device = edge_index.device
        src, dst = edge_index.long()
        loop = src == dst
        lo, hi = torch.minimum(src, dst), torch.maximum(src, dst)
        key = lo * max(num_nodes, 1) + hi
        # the same sorted unique keys as graph.simple_undirected_edges: the same edge order
        unique, inverse = torch.unique(key[~loop], return_inverse=True)
        undirected = torch.stack([unique // max(num_nodes, 1), unique % max(num_nodes, 1)])
        m = unique.numel()
        if x is None:
            feats = torch.zeros(num_nodes, 0, device=device)
        else:
            feats = normalized_features(x)
        self.graph = Graph(name="edge_index", x=feats, y=torch.full((num_nodes,), -1, device=device),
                           undirected_edges=undirected,
                           train_mask=torch.zeros(num_nodes, dtype=torch.bool, device=device),
                           val_mask=torch.zeros(num_nodes, dtype=torch.bool, device=device),
                           test_mask=torch.zeros(num_nodes, dtype=torch.bool, device=device),
                           num_classes=0)
        self.has_features = x is not None
        undirected_column = torch.full_like(src, m)  # column m: the always-kept pad
        undirected_column[~loop] = inverse
        # graph.edge_index's column j is (u_j, v_j) with u < v; column j + M the reverse
        directed_column = torch.where(src > dst, undirected_column + m, undirected_column)
        directed_column[loop] = 2 * m
        self.columns = {m: undirected_column, 2 * m: directed_column}

    def masks(self, graph_masks: Tensor) -> Tensor:
        """``(L, M)`` or ``(L, 2M)`` masks of :attr:`graph` → ``(L, E)`` masks over the input."""
        num_layers, width = graph_masks.shape
        padded = torch.ones(num_layers, width + 1, dtype=torch.bool, device=graph_masks.device)
        padded[:, :width] = graph_masks
        return padded[:, self.columns[width]]

    def sample(self, sampler: samplers.EdgeSampler, num_layers: int,
               generator: torch.Generator | None = None) -> Tensor:
        """``(L, E)`` bool: the input's columns kept at each layer (row 0: the input layer)."""
        if sampler.weighting == "kernel" and not self.has_features:
            raise ValueError(f"sampler {sampler.name!r} weighs edges by a kernel of the node features: "
                             "pass x (the node features)")
        return self.masks(sampler.sample(self.graph, num_layers, generator=generator))


def layer_dropout_edge(edge_index: Tensor, num_layers: int, x: Tensor | None = None,
                       sampler: str | samplers.EdgeSampler = "dropedge++", p_min: float = 0.3,
                       p_max: float = 0.8, p: float | None = None, kernel: str = "linear",
                       directed: bool = False, num_nodes: int | None = None,
                       generator: torch.Generator | None = None, training: bool = True,
                       ) -> list[tuple[Tensor, Tensor]]:
    r"""Drops edges layer by layer with one of DropEdge++'s samplers.

    Returns one pair per layer (layer :obj:`0` is the input layer): (1) the retained
    :obj:`edge_index` of that layer, (2) its mask over the columns of the input
    :obj:`edge_index`. Rates are **keep** rates: layer :obj:`l` keeps
    :obj:`floor(M * (p_min + (p_max - p_min) * l / (L - 1)))` of the :obj:`M` undirected
    edges (LI, LID, LDD, DropEdge++), or :obj:`floor(M * p)` at every layer (DropEdge, FD).
    See :mod:`dropedge_core.pyg.edges` for self-loops, duplicates and one-way edges.

    Args:
        edge_index (LongTensor): The edge indices.
        num_layers (int): The number of layers :obj:`L`.
        x (Tensor, optional): Node features; needed by :obj:`"fd"` and
            :obj:`"dropedge++"` (kernel weights). (default: :obj:`None`)
        sampler (str or EdgeSampler, optional): :obj:`"nodrop"`, :obj:`"dropedge"`,
            :obj:`"li"`, :obj:`"lid"`, :obj:`"ldd"`, :obj:`"fd"` or :obj:`"dropedge++"`,
            or any :class:`~dropedge_core.method.samplers.EdgeSampler`.
            (default: :obj:`"dropedge++"`)
        p_min (float, optional): Keep rate of the sparsest layer. (default: :obj:`0.3`)
        p_max (float, optional): Keep rate of the densest layer. (default: :obj:`0.8`)
        p (float, optional): Keep rate of :obj:`"dropedge"`/:obj:`"fd"`.
            (default: :obj:`(p_min + p_max) / 2`)
        kernel (str, optional): :obj:`"linear"`, :obj:`"poly"`, :obj:`"rbf"` or
            :obj:`"reverse"`. (default: :obj:`"linear"`)
        directed (bool, optional): If set to :obj:`True`, samples the two directions of
            an edge separately. (default: :obj:`False`: both kept or dropped together)
        num_nodes (int, optional): The number of nodes. (default: :obj:`None`)
        generator (torch.Generator, optional): The random source, on the device of
            :obj:`edge_index`. (default: :obj:`None`: torch's global one)
        training (bool, optional): If set to :obj:`False`, this operation is a no-op
            (after validation). (default: :obj:`True`)

    :rtype: list of (:class:`LongTensor`, :class:`BoolTensor`)

    Example:
        >>> edge_index = torch.tensor([[0, 1, 1, 2, 2, 3, 3, 0],
        ...                            [1, 0, 2, 1, 3, 2, 0, 3]])
        >>> layers = layer_dropout_edge(edge_index, num_layers=3, sampler="lid",
        ...                             p_min=0.25, p_max=0.75,
        ...                             generator=torch.Generator().manual_seed(0))
        >>> [int(mask.sum()) // 2 for _, mask in layers]  # undirected edges kept
        [1, 2, 3]
        >>> bool((layers[0][1] <= layers[1][1]).all())  # LID: nested, bottom sparsest
        True
    """
    s = make_sampler(sampler, p_min=p_min, p_max=p_max, p=p, kernel=kernel, directed=directed)
    samplers.check_layers(num_layers)
    num_nodes = check_edge_index(edge_index, num_nodes, x)
    if s.weighting == "kernel" and x is None:
        raise ValueError(f"sampler {s.name!r} weighs edges by a kernel of the node features: pass x")
    if not training:
        keep = torch.ones(edge_index.size(1), dtype=torch.bool, device=edge_index.device)
        return [(edge_index, keep)] * num_layers
    masks = EdgeIndexer(edge_index, num_nodes, x if s.weighting == "kernel" else None).sample(
        s, num_layers, generator)
    return [(edge_index[:, row], row) for row in masks]
