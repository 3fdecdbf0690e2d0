"""DropEdge++ for PyTorch Geometric users.

The project's samplers, where a PyG model works: on an ``edge_index`` (and ``x``), with
PyG's conventions (``training=``, ``num_nodes``, ``generator``, ``force_undirected``,
validation first). Rates say their unit: ``p`` is PyG's **drop** probability (DropEdge,
FD: ``p=0.2`` keeps 80% of the edges, as ``dropout_edge(p=0.2)``); the layer-wise keep
rates of LI/LID/LDD/DropEdge++ are ``keep_min``/``keep_max`` (the paper's ``p_min``/
``p_max``, refused under those names here); a rate the sampler would ignore is refused.

* :func:`layer_dropout_edge` — :func:`torch_geometric.utils.dropout_edge` made
  layer-wise: one kept ``edge_index`` and mask per layer, from any of the seven samplers;
* :class:`LayerDropEdge` — the same as a :class:`torch.nn.Module` (samples in training
  mode, the whole graph in eval mode; what depends only on the graph is cached); with
  ``normalization="AN"`` (or NA/FOG/ANS/ARW) every layer's normalised sparse adjacency
  instead, for layers with ``normalize=False`` (the trainer's speed);
* :class:`SampleLayerEdges` — a :class:`~torch_geometric.transforms.BaseTransform`;
* :class:`LayerWiseEdges` — PyG's own models (``GCN``, ``GraphSAGE``, ``GAT``, with
  ``jk``; a ``GCN2Conv`` stack) with DropEdge++, their ``forward`` unchanged;
* :func:`normalize` — NA, FOG, AN (PyG's ``gcn_norm``), ANS, ARW for one layer, with
  edge weights;
* :func:`from_pyg`, :func:`to_pyg` — ``Data`` to the project's ``Graph`` and back.

Those names are importable from here; their modules, public too (the API reference
documents each): :mod:`.edges` (the layer-wise samples), :mod:`.layers` (the module and the
transform), :mod:`.models` (:class:`LayerWiseEdges`), :mod:`.norm` (:func:`normalize`),
:mod:`.batch` (mini-batches of graphs), :mod:`.checks` (inputs checked before work),
:mod:`.convert` (``Data`` and ``Graph``).

For the same generator state the masks (in eager mode, without ``batch``) are identical to those of
``samplers.make(...).sample(graph, L, generator)`` on the same graph as a
:class:`~dropedge_core.graph.Graph`: this package draws with :mod:`dropedge_core.samplers`
and builds adjacencies with :class:`~dropedge_core.normalization.AdjacencyBuilder`. The
``Graph`` conversions are the functions :func:`from_pyg` and :func:`to_pyg` (``Graph``
itself needs torch only). Under ``torch.compile`` a call is traced whole (the graph breaks
only where ``dropout_edge``'s do: at the kept columns' selection): it validates nothing that
would read a tensor back, and draws from the edges' slots (the internal ``_slots``: one sort,
fixed shapes) with the samplers' law but another stream; with ``batch`` the graphs of a
mini-batch are drawn in one pass (:mod:`.batch`).

Example:
    >>> import torch
    >>> from dropedge_core.pyg import layer_dropout_edge
    >>> edge_index = torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]])
    >>> layers = layer_dropout_edge(edge_index, num_layers=2, sampler="li", keep_min=0.5, keep_max=1.0)
    >>> [int(mask.sum()) for _, mask in layers]  # 1 of 2 edges (both directions), then 2 of 2
    [2, 4]
"""
from dropedge_core.pyg.checks import check_edge_index
from dropedge_core.pyg.convert import from_pyg, to_pyg
from dropedge_core.pyg.edges import EdgeIndexer, layer_dropout_edge, make_sampler
from dropedge_core.pyg.layers import LayerDropEdge, SampleLayerEdges
from dropedge_core.pyg.models import LayerWiseEdges
from dropedge_core.pyg.norm import normalize

__all__ = ["EdgeIndexer", "LayerDropEdge", "LayerWiseEdges", "SampleLayerEdges", "check_edge_index",
           "from_pyg", "layer_dropout_edge", "make_sampler", "normalize", "to_pyg"]
