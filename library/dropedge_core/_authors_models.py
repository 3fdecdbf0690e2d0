"""The backbones as the authors' code builds them (hanjq17/DropEdgePlus, ``src/models.py``
and ``src/layers.py``): the model side of the ``authors`` training recipe.

Where they differ from :mod:`dropedge_core.models` (the paper's description):

==============  ==========================================================================
``gcn``         ``GCNModel`` with ``MultiLayerGCNBlock``: an input convolution, ``L - 2``
                hidden convolutions, an output convolution (``L`` in all, the scripts'
                ``--nbaseblocklayer`` + 2).
``resgcn``      ``ResGCNBlock``: as ``gcn``, with **one** long skip — the block's input
                (the input convolution's output) added to the last hidden convolution's
                output (``aggrmethod="add"``), not one residual per layer.
``jknet``       ``DenseGCNBlock``: the block returns the concatenation
                ``H^(L-1) || H^(1) || ... || H^(L-2)`` and the output layer is a **graph
                convolution** over it (an extra aggregation), not a linear layer.
``appnp_star``  ``New_APPNP``: ``Z^(0) = ReLU(X W_in + b)`` (features not dropped), then
                ``L`` steps of dropout followed by ``Z = ReLU((1 - α) Â Z + α Z^(0))``,
                dropout, a linear output layer.
==============  ==========================================================================

Dropout (``GraphBaseBlock.forward``, ``GCNModel.forward``): never on the input features;
after the input convolution and after every hidden convolution, so the output
convolution sees a dropped input and nothing follows it. Initialisation
(``GraphConvolutionBS.reset_parameters``): weight, self-feature weight and bias all
``U(-1/sqrt(out), 1/sqrt(out))``; APPNP*'s two ``nn.Linear`` layers keep torch's default.
Batch norm, when on, is ``nn.BatchNorm1d`` after the bias, before the activation.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from dropedge_core.models import (
    APPNPStar,
    ModelError,
    _Backbone,
    _check_adjs,
    check_backbone,
    matmul,
)


class AuthorsConv(nn.Module):
    """``GraphConvolutionBS``: ``Â H W (+ H W_self) (+ b)``, then batch norm, then ``σ``.

    Every parameter ``U(-1/sqrt(out_dim), 1/sqrt(out_dim))`` (the authors' ``reset_parameters``).

    Args:
        in_dim (int): width of ``H``.
        out_dim (int): width of the output.
        bias (bool, optional): add a learnable bias. (default: :obj:`True`)
        self_loop (bool, optional): add the self-feature term ``H W_self``.
            (default: :obj:`False`)
        batch_norm (bool, optional): batch normalisation before ``σ``. (default: :obj:`False`)
        activation (bool, optional): apply ``σ`` (ReLU). (default: :obj:`True`)
    """

    def __init__(self, in_dim: int, out_dim: int, bias: bool = True, self_loop: bool = False,
                 batch_norm: bool = False, activation: bool = True):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(in_dim, out_dim))
        self.weight_self = nn.Parameter(torch.empty(in_dim, out_dim)) if self_loop else None
        self.bias = nn.Parameter(torch.empty(out_dim)) if bias else None
        self.norm = nn.BatchNorm1d(out_dim) if batch_norm else None
        self.activation = activation
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1.0 / math.sqrt(self.weight.size(1))
        for param in (self.weight, self.weight_self, self.bias):
            if param is not None:
                nn.init.uniform_(param, -bound, bound)

    def forward(self, h: torch.Tensor, adj: torch.Tensor) -> torch.Tensor:
        out = torch.sparse.mm(adj, matmul(h, self.weight))
        if self.weight_self is not None:
            out = out + matmul(h, self.weight_self)
        if self.bias is not None:
            out = out + self.bias
        if self.norm is not None:
            out = self.norm(out)
        return F.relu(out) if self.activation else out


class AuthorsGCN(_Backbone):
    """``GCNModel`` of the authors: ``block`` is ``"gcn"`` (``mutigcn``), ``"resgcn"`` or
    ``"jknet"`` (``densegcn``); ``L >= 2`` graph convolutions.

    Args:
        in_dim (int): input feature width ``C``.
        num_classes (int): number of classes.
        num_layers (int): ``L``, the number of graph convolutions.
        hidden (int, optional): hidden width. (default: :obj:`128`)
        dropout (float, optional): dropout rate in ``[0, 1)``. (default: :obj:`0.5`)
        self_loop (bool, optional): the paper's self-feature modelling ("Loop").
            (default: :obj:`False`)
        batch_norm (bool, optional): batch normalisation on hidden-width outputs.
            (default: :obj:`False`)
        bias (bool, optional): learnable biases. (default: :obj:`True`)
        block (str, optional): ``"gcn"``, ``"resgcn"`` or ``"jknet"``. (default: :obj:`"gcn"`)
    """

    def __init__(self, in_dim: int, num_classes: int, num_layers: int, hidden: int = 128,
                 dropout: float = 0.5, self_loop: bool = False, batch_norm: bool = False,
                 bias: bool = True, block: str = "gcn"):
        super().__init__(in_dim, num_classes, num_layers, hidden, dropout, self_loop, batch_norm, bias)
        if num_layers < 2 or (block == "jknet" and num_layers < 3):
            raise ModelError(f"the authors' {block} needs at least {3 if block == 'jknet' else 2} "
                             f"layers (got {num_layers})")
        self.name = self.block = block
        conv = dict(bias=bias, self_loop=self_loop, batch_norm=batch_norm)
        self.inp = AuthorsConv(in_dim, hidden, **conv)
        self.convs = nn.ModuleList(AuthorsConv(hidden, hidden, **conv) for _ in range(num_layers - 2))
        out_in = hidden * (num_layers - 1) if block == "jknet" else hidden
        self.out = AuthorsConv(out_in, num_classes, **conv, activation=False)

    @property
    def num_hidden_outputs(self) -> int:
        return self.num_layers - 1

    def forward(self, x: torch.Tensor, adjs: list[torch.Tensor], return_hidden: bool = False):
        """Log-probs ``(N, classes)`` (and the ``L - 1`` hidden convolutions' outputs)."""
        _check_adjs(adjs, self.num_layers)
        h = block_in = self._drop(self.inp(x, adjs[0]))
        hidden, dense = [h], []
        for conv, adj in zip(self.convs, adjs[1:-1]):
            dense.append(h)  # the block's inputs so far (GraphBaseBlock's ``denseout``)
            h = self._drop(conv(h, adj))
            hidden.append(h)
        if self.block == "resgcn":
            h = h + block_in
        elif self.block == "jknet":
            h = torch.cat([h, *dense], dim=1)
        out = F.log_softmax(self.out(h, adjs[-1]), dim=1)
        return (out, hidden) if return_hidden else out


class AuthorsAPPNP(APPNPStar):
    """``New_APPNP`` of the authors: dropout before every propagation step, none on the
    features; torch's default (``nn.Linear``) initialisation of both weight layers.

    Args:
        in_dim (int): input feature width ``C``.
        num_classes (int): number of classes.
        num_layers (int): ``L``, the number of graph convolutions.
        hidden (int, optional): hidden width. (default: :obj:`128`)
        dropout (float, optional): dropout rate in ``[0, 1)``. (default: :obj:`0.5`)
        self_loop (bool, optional): accepted for a common signature and ignored.
            (default: :obj:`False`)
        batch_norm (bool, optional): batch normalisation on hidden-width outputs.
            (default: :obj:`False`)
        bias (bool, optional): learnable biases. (default: :obj:`True`)
        alpha (float, optional): the teleport coefficient ``α`` in ``[0, 1]``.
            (default: :obj:`0.1`)
    """

    def __init__(self, in_dim: int, num_classes: int, num_layers: int, hidden: int = 128,
                 dropout: float = 0.5, self_loop: bool = False, batch_norm: bool = False,
                 bias: bool = True, alpha: float = 0.1):
        super().__init__(in_dim, num_classes, num_layers, hidden, dropout, self_loop, batch_norm,
                         bias, alpha)
        lin = nn.Linear(in_dim, hidden, bias=bias)  # torch's default init, as the authors'
        with torch.no_grad():
            self.inp.copy_(lin.weight.t())
            if self.inp_bias is not None:
                self.inp_bias.copy_(lin.bias)

    def _input_dropout(self, x: torch.Tensor) -> torch.Tensor:
        """None on the features: their APPNP drops out before each propagation instead."""
        return x

    def _step_dropout(self, z: torch.Tensor) -> torch.Tensor:
        """Dropout before each propagation step (their ``GraphBaseBlock`` for APPNP)."""
        return self._drop(z)


def make_authors_model(name: str, in_dim: int, num_classes: int, num_layers: int, hidden: int = 128,
                       dropout: float = 0.5, self_loop: bool = False, batch_norm: bool = False,
                       bias: bool = True, alpha: float = 0.1,
                       generator: torch.Generator | None = None) -> nn.Module:
    """The authors' version of backbone ``name`` (arguments as
    :func:`dropedge_core.models.make_model`).

    Args:
        name (str): backbone name (case-insensitive), as :func:`~dropedge_core.models.make_model`.
        in_dim (int): input feature width ``C``.
        num_classes (int): number of classes.
        num_layers (int): ``L``, the number of graph convolutions.
        hidden (int, optional): hidden width. (default: :obj:`128`)
        dropout (float, optional): dropout rate in ``[0, 1)``. (default: :obj:`0.5`)
        self_loop (bool, optional): the paper's self-feature modelling ("Loop").
            (default: :obj:`False`)
        batch_norm (bool, optional): batch normalisation on hidden-width outputs.
            (default: :obj:`False`)
        bias (bool, optional): learnable biases. (default: :obj:`True`)
        alpha (float, optional): teleport coefficient of ``appnp_star``. (default: :obj:`0.1`)
        generator (torch.Generator, optional): dropout's random source. (default: :obj:`None`)

    Returns:
        torch.nn.Module: the authors' model.

    Example:
        >>> make_authors_model("jknet", 1433, 7, num_layers=8, hidden=16).out.weight.shape
        torch.Size([112, 7])
    """
    key = check_backbone(name)
    if key == "appnp_star":
        model = AuthorsAPPNP(in_dim, num_classes, num_layers, hidden, dropout, self_loop, batch_norm,
                             bias, alpha)
    else:
        model = AuthorsGCN(in_dim, num_classes, num_layers, hidden, dropout, self_loop, batch_norm,
                           bias, block=key)
    model.generator = generator
    return model
