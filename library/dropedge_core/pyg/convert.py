"""A :class:`~torch_geometric.data.Data` to the project's :class:`Graph`, and back.

The ``Graph`` is the method layer's own container (``dropedge_core`` is torch
only, docs/ARCHITECTURE.md), so the conversions live here, beside PyG: ``from_pyg(data)``
and ``to_pyg(graph)`` (also reachable as ``Graph``-free functions of
:mod:`dropedge_core.pyg`).
"""
from __future__ import annotations

import torch
from torch import Tensor
from torch_geometric.data import Data

from dropedge_core.graph import Graph, simple_undirected_edges
from dropedge_core.pyg.checks import check_edge_index, check_homogeneous
from dropedge_core.pyg.edges import normalized_features

__all__ = ["SPLITS", "from_pyg", "to_pyg"]

SPLITS = ("train_mask", "val_mask", "test_mask")


def from_pyg(data: Data, name: str = "pyg") -> Graph:
    r"""The project's :class:`Graph` of a PyG :class:`~torch_geometric.data.Data`.

    The graph is made simple and undirected as every ``Graph`` is (self-loops and
    duplicates dropped, one-way edges made two-way), the features row-L1-normalised
    (what the samplers' kernels assume; Planetoid with :obj:`NormalizeFeatures` is
    already so). Missing parts get neutral values: no :obj:`x` → :obj:`(N, 0)`
    features, no :obj:`y` → every node unlabelled (:obj:`-1`), no split mask → empty.

    Args:
        data (Data): The graph, with :obj:`edge_index` and optionally :obj:`x`,
            :obj:`y` (one class per node) and :obj:`train_mask`/:obj:`val_mask`/
            :obj:`test_mask` (one bool per node).
        name (str, optional): The graph's name. (default: :obj:`"pyg"`)

    Raises:
        ValueError: a malformed :obj:`edge_index`, :obj:`x`, :obj:`y` or mask, named; a
            :class:`~torch_geometric.data.HeteroData`.

    Example:
        >>> from torch_geometric.datasets import KarateClub
        >>> from_pyg(KarateClub()[0], name="karate").num_edges  # 156 columns, 78 edges
        78
    """
    check_homogeneous(data)
    x = data.x
    num_nodes = check_edge_index(data.edge_index, data.num_nodes, x)
    device = data.edge_index.device
    if x is None:
        x = torch.zeros(num_nodes, 0, device=device)
    y = data.y if data.y is not None else torch.full((num_nodes,), -1, device=device)
    if not isinstance(y, Tensor) or y.shape != (num_nodes,) or y.is_floating_point():
        shape = tuple(y.shape) if isinstance(y, Tensor) else type(y).__name__
        raise ValueError(f"data.y must hold one integer class per node, shape ({num_nodes},) (got {shape})")
    masks = {}
    for split in SPLITS:
        mask = getattr(data, split, None)
        if mask is None:
            mask = torch.zeros(num_nodes, dtype=torch.bool, device=device)
        if not isinstance(mask, Tensor) or mask.shape != (num_nodes,) or mask.dtype != torch.bool:
            shape = tuple(mask.shape) if isinstance(mask, Tensor) else type(mask).__name__
            raise ValueError(f"data.{split} must be a bool tensor of shape ({num_nodes},) (got {shape}); "
                             "several splits: pass data with one of them")
        masks[split] = mask
    labelled = y[y >= 0]
    return Graph(name=name, x=normalized_features(x),
                 y=y.long(), undirected_edges=simple_undirected_edges(data.edge_index, num_nodes),
                 num_classes=int(labelled.max()) + 1 if labelled.numel() else 0,
                 info={"source": "torch_geometric.data.Data"}, **masks)


def to_pyg(graph: Graph) -> Data:
    r"""A PyG :class:`~torch_geometric.data.Data` of a :class:`Graph`: :obj:`x`,
    :obj:`y`, the split masks and :obj:`edge_index` with both directions of every edge
    (column :obj:`j + M` is column :obj:`j` reversed, as :attr:`Graph.edge_index`).

    Args:
        graph (Graph): The project's graph.

    Returns:
        Data: The same graph; :obj:`edge_index` has shape :obj:`(2, 2M)`.

    Example:
        >>> from dropedge_core import datasets
        >>> to_pyg(datasets.load("karate"))
        Data(x=[34, 34], edge_index=[2, 156], y=[34], train_mask=[34], val_mask=[34], test_mask=[34])
    """
    return Data(x=graph.x, edge_index=graph.edge_index, y=graph.y, train_mask=graph.train_mask,
                val_mask=graph.val_mask, test_mask=graph.test_mask)
