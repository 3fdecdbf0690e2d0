"""PyG's own models with DropEdge++, their ``forward`` unchanged.

:class:`torch_geometric.nn.models.GCN` (and ``GraphSAGE``, ``GAT``, ``GIN``, ``PNA``,
``EdgeCNN``, with or without ``jk``) calls every layer with the one ``edge_index`` it was
given. :class:`LayerWiseEdges` wraps such a model: it draws every layer's edges with a
:class:`~dropedge_core.pyg.layers.LayerDropEdge`, then runs the model, and a forward
pre-hook on ``convs[i]`` swaps, among that layer's arguments, the model's full
``edge_index`` (and ``edge_weight``, ``edge_attr``) for layer ``i``'s. The arguments are
found by identity, wherever they sit (``GCN2Conv(x, x_0, edge_index)`` too), so any
model whose layers are called with the tensors it received works, written by PyG or by
the user.
"""
from __future__ import annotations

import inspect
from functools import partial

from torch import Tensor, nn

from dropedge_core.pyg.layers import LayerDropEdge

__all__ = ["LayerWiseEdges"]


class LayerWiseEdges(nn.Module):
    r"""A PyG model whose layer :obj:`i` sees layer :obj:`i`'s DropEdge++ edges.

    In training mode a call draws one sample of :obj:`drop.num_layers` edge sets
    (:class:`~dropedge_core.pyg.layers.LayerDropEdge`, on the call's :obj:`x` for the
    kernel samplers) and runs :obj:`model(x, edge_index, ...)`; :obj:`convs[i]` gets
    layer :obj:`i`'s kept :obj:`edge_index` and the kept rows of :obj:`edge_weight` and
    :obj:`edge_attr` (layer :obj:`0`: the input layer). In eval mode the model runs on
    the whole graph, untouched. Calling :obj:`model` itself, outside the wrapper, is
    untouched too.

    Args:
        model (torch.nn.Module): The model, called as :obj:`model(x, edge_index, *args,
            **kwargs)` unchanged; its :obj:`edge_weight`, :obj:`edge_attr` and :obj:`batch`
            are read by position or keyword.
        drop (LayerDropEdge): The sampler; its :obj:`num_layers` must equal
            :obj:`len(convs)`. Without :obj:`normalization` (the layers normalise).
        convs (iterable of torch.nn.Module, optional): The layers that take edges, in the
            order they run. (default: :obj:`model.convs`, as PyG's models name them)

    Raises:
        TypeError: a model or a layer that is not a :class:`torch.nn.Module`, or a model
            without :obj:`convs` when none are passed.
        ValueError: a layer count that differs from :obj:`drop.num_layers`; at a call, a
            layer not called with the :obj:`edge_index` given to the model.

    Example:
        >>> import torch
        >>> from torch_geometric.nn.models import GCN
        >>> from dropedge_core.pyg import LayerDropEdge
        >>> edge_index = torch.tensor([[0, 1, 1, 2, 2, 3], [1, 0, 2, 1, 3, 2]])
        >>> gcn = GCN(8, 16, num_layers=3, out_channels=2, jk="cat")
        >>> model = LayerWiseEdges(gcn, LayerDropEdge(3, "dropedge++", keep_min=0.3, keep_max=0.8))
        >>> model(torch.rand(4, 8), edge_index).shape
        torch.Size([4, 2])
    """

    def __init__(self, model: nn.Module, drop: LayerDropEdge, convs=None):
        super().__init__()
        convs = _convs(model, convs)
        if not isinstance(drop, LayerDropEdge) or drop.normalization is not None:
            raise ValueError("drop must be a LayerDropEdge without normalization= (the model's layers "
                             "normalise their own edges)")
        if len(convs) != drop.num_layers:
            raise ValueError(f"the model has {len(convs)} layers but drop.num_layers={drop.num_layers}; "
                             "one edge set per layer is needed")
        self.model, self.drop = model, drop
        self._full: tuple | None = None  # the call's (edge_index, edge_weight, edge_attr)
        self._layers: list | None = None  # every layer's (edge_index, edge_weight, edge_attr)
        self._handles = [conv.register_forward_pre_hook(partial(self._swap, i), with_kwargs=True)
                         for i, conv in enumerate(convs)]

    def forward(self, x: Tensor, edge_index: Tensor, *args, **kwargs):
        """Runs :obj:`model(x, edge_index, *args, **kwargs)`, layer :obj:`i` on its edges.
        :obj:`edge_weight`, :obj:`edge_attr` and :obj:`batch` are found by the model's own
        signature, by position or by keyword (:obj:`BasicGNN.forward(x, edge_index,
        edge_weight, edge_attr, batch)` takes all three by position)."""
        given = self._arguments(x, edge_index, args, kwargs)
        edge_weight, edge_attr = given.get("edge_weight"), given.get("edge_attr")
        extra = {k: v for k, v in (("edge_weight", edge_weight), ("edge_attr", edge_attr)) if v is not None}
        if self.training:  # a mini-batch's graphs keep their own shares (PyG's batch=)
            layers = self.drop(edge_index, x=x, batch=given.get("batch"), **extra)
            self._full = (edge_index, edge_weight, edge_attr)
            self._layers = [_triple(layer, edge_weight, edge_attr) for layer in layers]
        try:
            return self.model(x, edge_index, *args, **kwargs)
        finally:  # a later direct call of the model sees its own arguments
            self._full = self._layers = None

    def _arguments(self, x: Tensor, edge_index: Tensor, args: tuple, kwargs: dict) -> dict:
        """The call's arguments by the names of the model's ``forward`` (a model whose
        signature does not take them: the keywords as given)."""
        try:
            bound = inspect.signature(self.model.forward).bind_partial(x, edge_index, *args, **kwargs)
        except TypeError:
            return dict(kwargs)
        named = dict(bound.arguments)
        for name, param in inspect.signature(self.model.forward).parameters.items():
            if param.kind is param.VAR_KEYWORD:  # a model's **kwargs: their names are the keywords'
                named.update(named.pop(name, {}))
        return named

    def _swap(self, i: int, conv: nn.Module, args: tuple, kwargs: dict):
        if self._layers is None:
            return None
        full, layer = self._full, self._layers[i]

        def swap(value):
            # identity, not equality: only the tensors handed to the model are replaced
            for whole, kept in zip(full, layer):
                if whole is not None and value is whole:
                    return kept
            return value

        if not any(v is full[0] for v in (*args, *kwargs.values())):
            raise ValueError(f"convs[{i}] ({type(conv).__name__}) was not called with the edge_index "
                             "given to the model, so its layer's edges cannot be swapped in")
        return tuple(swap(v) for v in args), {k: swap(v) for k, v in kwargs.items()}


def _cut(value: object, limit: int = 80) -> str:
    """``repr(value)`` of at most ``limit`` characters, with its length when cut (a refused
    value is echoed on one bounded line)."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def _convs(model: object, convs) -> list[nn.Module]:
    """The layers to hook, each checked to be a module (one :class:`TypeError` naming the
    value, before any hook is registered)."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module (got {type(model).__name__} {_cut(model)}); "
                        "e.g. torch_geometric.nn.models.GCN(...)")
    if convs is None:
        if not hasattr(model, "convs"):
            raise TypeError(f"model ({type(model).__name__}) has no .convs; pass convs=, the layers that "
                            "take edges in the order they run")
        convs = model.convs
    convs = list(convs)
    for i, conv in enumerate(convs):
        if not isinstance(conv, nn.Module):
            raise TypeError(f"convs[{i}] must be a torch.nn.Module (got {type(conv).__name__} "
                            f"{_cut(conv)})")
    return convs


def _triple(layer, edge_weight: Tensor | None, edge_attr: Tensor | None) -> tuple:
    """LayerDropEdge's per-layer output as (edge_index, edge_weight, edge_attr)."""
    if isinstance(layer, Tensor):
        return layer, None, None
    rest = list(layer[1:])
    return (layer[0], rest.pop(0) if edge_weight is not None else None,
            rest.pop(0) if edge_attr is not None else None)
