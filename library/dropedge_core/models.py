"""Backbones of DropEdge++ (paper §5.2 "Backbones" and the appendix table "The
propagation models").

Every backbone aggregates over ``L`` adjacencies, one per layer, so that each layer
sees its own sampled graph (the L-GCN of the paper, Eq. (3)):

==============  ==========================================================================
``gcn``         ``H^(l+1) = σ(Â^(l) H^(l) W^(l))``; the first layer maps features → hidden,
                ``L - 2`` layers hidden → hidden, the last hidden → classes (no activation),
                then log-softmax.
``resgcn``      as ``gcn``, plus ``H^(l)`` added to the output of every hidden → hidden
                layer: ``H^(l+1) = σ(Â^(l) H^(l) W^(l)) + H^(l)``.
``jknet``       ``L`` layers as ``gcn`` (features → hidden, then hidden → hidden); the
                output is a linear layer over the concatenation ``H^(1) || ... || H^(L)``.
``appnp_star``  ``Z^(0) = ReLU(X W_in)``, ``Z^(l+1) = ReLU((1 - α) Â^(l) Z^(l) + α Z^(0))``
                for ``L`` steps, then a linear layer to the classes.
==============  ==========================================================================

Options for all: ``hidden`` width, ``dropout`` (on the input of every weight layer;
sparse features are dropped on their non-zeros), ``self_loop`` — the paper's
self-feature modelling "Loop", Eq. (14): ``σ(Â H W + H W_self)``, used by the graph
convolutions of ``gcn``/``resgcn``/``jknet`` (``appnp_star`` has no per-layer weight, so it
ignores it, as the paper does) — ``batch_norm`` (on every hidden-width output, before
the activation), ``bias`` and ``alpha`` (``appnp_star``).

**Where the authors' code differs from the paper, we follow the paper.** The authors'
implementation (1) gives ResGCN one long skip connection (the input of the middle
block added to its output) instead of a residual per hidden layer; (2) applies a
graph convolution (an extra aggregation) after JKNet's concatenation instead of a
linear layer; (3) samples the two directions of every edge separately. Here ResGCN adds
``H^(l)`` after every hidden → hidden layer, JKNet ends in a linear layer, and sampling
is undirected unless ``directed=True`` is asked for (see :mod:`dropedge_core.samplers`). The
authors' versions are in :mod:`dropedge_core._authors_models` (the ``authors`` recipe).

Adjacencies are torch sparse matrices (CSR, e.g. ``normalization.to_sparse`` of
``normalization.adjacencies(...)``, or :class:`~dropedge_core.normalization.AdjacencyBuilder`)
and products are :func:`~dropedge_core._sparse_products.spmm` (``torch.sparse.mm``, with a
backward that needs no sort when the matrix carries its transpose index, as the builder's
do); no dense ``N x N`` matrix is ever built.

Every ``forward(x, adjs, return_hidden=False)`` returns ``(N, classes)`` log-probabilities,
and with ``return_hidden=True`` also the list of hidden-width outputs used by the
over-smoothing diagnostics: ``[H^(1), ..., H^(L-1)]`` for ``gcn``/``resgcn``,
``[H^(1), ..., H^(L)]`` for ``jknet`` and ``[Z^(1), ..., Z^(L)]`` for ``appnp_star`` (all
the same width, so consecutive ones can be compared).
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from dropedge_core._sparse_products import spmm
from dropedge_core.graph import csr_tensor

__all__ = [
    "BACKBONES", "ALIASES", "ModelError", "check_backbone", "matmul", "feature_dropout", "GraphConv",
    "FullBatchNorm", "GCN", "JKNet", "APPNPStar", "make_model",
]

BACKBONES: tuple[str, ...] = ("gcn", "resgcn", "jknet", "appnp_star")
#: Other spellings accepted on input (lower-cased first): the paper's ``APPNP*``, ``appnp``.
ALIASES: dict[str, str] = {"appnp*": "appnp_star", "appnp": "appnp_star", "res-gcn": "resgcn",
                           "jk-net": "jknet"}


class ModelError(ValueError):
    """Unknown backbone name or bad model option; the message names the value."""


def check_backbone(name: str) -> str:
    """Normalise a backbone name (``'APPNP*'`` → ``'appnp_star'``, alias ``'appnp'``).

    Args:
        name (str): a backbone name or alias, in any case.

    Returns:
        str: one of :data:`BACKBONES`.

    Raises:
        ModelError: an unknown name; the message lists the valid ones.

    Example:
        >>> check_backbone("APPNP*")
        'appnp_star'
    """
    key = str(name).strip().lower()
    key = ALIASES.get(key, key)
    if key not in BACKBONES:
        raise ModelError(f"unknown backbone {name!r}; valid: {', '.join(BACKBONES)} "
                         f"('appnp*' and 'appnp' are accepted for 'appnp_star')")
    return key


def matmul(h: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """``h @ weight`` for a dense or sparse (CSR/COO) ``h``.

    Args:
        h (Tensor): ``(N, C)``, dense or sparse.
        weight (Tensor): ``(C, F)`` dense.

    Returns:
        Tensor: ``(N, F)`` dense.
    """
    return torch.sparse.mm(h, weight) if h.layout != torch.strided else h @ weight


def feature_dropout(x: torch.Tensor, p: float, training: bool,
                    generator: torch.Generator | None = None) -> torch.Tensor:
    """Inverted dropout that also works on sparse features (it drops their non-zeros).

    Args:
        x (Tensor): ``(N, C)`` features, dense or sparse (CSR/COO).
        p (float): the drop rate in ``[0, 1)``.
        training (bool): drop only when ``True`` (else ``x`` is returned as it is).
        generator (torch.Generator, optional): the masks' random source (runs in parallel
            threads stay reproducible); ``None`` = torch's global RNG (``F.dropout``).
            (default: :obj:`None`)

    Returns:
        Tensor: ``x``'s shape and layout, kept values scaled by ``1 / (1 - p)``.

    Example:
        >>> feature_dropout(torch.ones(2, 2), 0.5, training=False)
        tensor([[1., 1.],
                [1., 1.]])
        >>> out = feature_dropout(torch.ones(1000), 0.5, True, torch.Generator().manual_seed(0))
        >>> sorted(set(out.tolist()))
        [0.0, 2.0]
    """
    if not training or p == 0.0:
        return x
    sparse = x.layout != torch.strided
    if x.layout == torch.sparse_coo:
        x = x.coalesce()
    values = x.values() if sparse else x
    if generator is None:
        values = F.dropout(values, p, True)
    else:
        # drawn on the generator's device (the trainer makes it on the model's)
        keep = (torch.rand(values.shape, generator=generator, device=generator.device) >= p).to(values.device)
        values = values * keep / (1.0 - p)
    if x.layout == torch.sparse_csr:
        return csr_tensor(x.crow_indices(), x.col_indices(), values, x.shape)
    if x.layout == torch.sparse_coo:
        return torch.sparse_coo_tensor(x.indices(), values, x.shape, is_coalesced=True)
    return values


class GraphConv(nn.Module):
    """One graph convolution ``Â H W (+ H W_self) (+ b)`` (Eq. (1); Loop: Eq. (14)).

    ``H W`` is formed first, then aggregated over ``Â``: the product is then never wider
    than ``out_dim``. Weights are Glorot-uniform, the bias zero (as Kipf & Welling).

    Args:
        in_dim (int): width of ``H``.
        out_dim (int): width of the output.
        bias (bool, optional): add a learnable bias. (default: :obj:`True`)
        self_loop (bool, optional): add the self-feature term ``H W_self`` (the paper's
            "Loop"). (default: :obj:`False`)
    """

    def __init__(self, in_dim: int, out_dim: int, bias: bool = True, self_loop: bool = False):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(in_dim, out_dim))
        self.weight_self = nn.Parameter(torch.empty(in_dim, out_dim)) if self_loop else None
        self.bias = nn.Parameter(torch.empty(out_dim)) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.xavier_uniform_(self.weight)
        if self.weight_self is not None:
            nn.init.xavier_uniform_(self.weight_self)
        if self.bias is not None:
            nn.init.zeros_(self.bias)

    def forward(self, h: torch.Tensor, adj: torch.Tensor) -> torch.Tensor:
        """``h``: ``(N, in_dim)`` dense or sparse; ``adj``: sparse ``(N, N)`` → ``(N, out_dim)``."""
        out = spmm(adj, matmul(h, self.weight))
        if self.weight_self is not None:
            out = out + matmul(h, self.weight_self)
        if self.bias is not None:
            out = out + self.bias
        return out


def _check_adjs(adjs: list[torch.Tensor], num_layers: int) -> None:
    if len(adjs) != num_layers:
        raise ModelError(f"the model has {num_layers} layers but got {len(adjs)} adjacencies")


class FullBatchNorm(nn.BatchNorm1d):
    """Batch normalisation whose running statistics start from the first batch.

    ``nn.BatchNorm1d`` starts its running variance at 1 and moves it by 10% per training
    step. Full-batch training takes one step per epoch, and hidden features of row-
    normalised inputs have variances near 1e-3: after 30 epochs the running variance was
    still 0.042 against a true ~0.0007, so evaluation (which uses the running statistics)
    divided by a 8x too large deviation and APPNP* with batch norm sat at chance (CSBM, 50
    epochs: 40% vs 98% without). The first training step now sets the running statistics
    to that batch's; later steps average as usual (momentum 0.1).
    """

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.training and self.track_running_stats and int(self.num_batches_tracked) == 0:
            momentum, self.momentum = self.momentum, 1.0
            try:
                return super().forward(x)
            finally:
                self.momentum = momentum
        return super().forward(x)


class _Backbone(nn.Module):
    """Shared options and validation of every backbone."""

    name = ""

    def __init__(self, in_dim: int, num_classes: int, num_layers: int, hidden: int = 128,
                 dropout: float = 0.5, self_loop: bool = False, batch_norm: bool = False,
                 bias: bool = True):
        super().__init__()
        for pname, value in (("in_dim", in_dim), ("num_classes", num_classes),
                             ("num_layers", num_layers), ("hidden", hidden)):
            if not isinstance(value, int) or value < 1:
                raise ModelError(f"{pname} must be a positive integer (got {value!r})")
        if not 0.0 <= dropout < 1.0:
            raise ModelError(f"dropout must be in [0, 1) (got {dropout!r})")
        self.in_dim, self.num_classes, self.num_layers = in_dim, num_classes, num_layers
        self.hidden, self.dropout = hidden, float(dropout)
        self.self_loop, self.batch_norm, self.bias = self_loop, batch_norm, bias
        # Dropout's random source; None = torch's global RNG (make_model's ``generator``).
        self.generator: torch.Generator | None = None

    @property
    def num_hidden_outputs(self) -> int:
        """How many hidden outputs ``forward(..., return_hidden=True)`` returns: ``L``
        (``jknet``, ``appnp_star``: every layer's output is hidden-width); ``gcn``/``resgcn``
        override it with ``L - 1`` (their last layer maps to the classes)."""
        return self.num_layers

    def _drop(self, h: torch.Tensor) -> torch.Tensor:
        return feature_dropout(h, self.dropout, self.training, self.generator)

    def _norms(self, count: int) -> nn.ModuleList:
        return nn.ModuleList(FullBatchNorm(self.hidden) for _ in range(count if self.batch_norm else 0))

    def extra_repr(self) -> str:
        return (f"L={self.num_layers}, hidden={self.hidden}, dropout={self.dropout}, "
                f"self_loop={self.self_loop}, batch_norm={self.batch_norm}")


class GCN(_Backbone):
    """``gcn``: ``H^(l+1) = σ(Â^(l) H^(l) W^(l))`` (paper Eq. (1), (3)); ``resgcn`` when
    ``residual=True``: ``H^(l+1) = σ(Â^(l) H^(l) W^(l)) + H^(l)`` on hidden → hidden layers.

    ``L = 1`` is a single layer features → classes. ``forward(x, adjs, return_hidden=False)``
    takes ``x`` ``(N, C)`` and ``L`` sparse ``(N, N)`` adjacencies (row 0 the input layer's)
    and returns log-probabilities ``(N, num_classes)`` (and ``[H^(1), ..., H^(L-1)]`` when
    ``return_hidden``).

    Args:
        in_dim (int): input feature width ``C``.
        num_classes (int): number of classes.
        num_layers (int): ``L``, the number of layers that aggregate over an adjacency.
        hidden (int, optional): hidden width. (default: :obj:`128`)
        dropout (float, optional): dropout rate on the input of every weight layer, in
            ``[0, 1)``. (default: :obj:`0.5`)
        self_loop (bool, optional): the paper's self-feature modelling ("Loop").
            (default: :obj:`False`)
        batch_norm (bool, optional): batch normalisation on hidden-width outputs.
            (default: :obj:`False`)
        bias (bool, optional): learnable biases. (default: :obj:`True`)
        residual (bool, optional): the ``resgcn`` skip connections. (default: :obj:`False`)

    Example:
        >>> from dropedge_core.normalization import full_adjacency, to_sparse
        >>> from dropedge_core._synthetic import karate
        >>> g = karate()
        >>> adj = to_sparse(*full_adjacency(g), g.num_nodes)
        >>> model = GCN(g.num_features, g.num_classes, num_layers=3, hidden=16).eval()
        >>> out, hidden = model(g.x, [adj] * 3, return_hidden=True)
        >>> out.shape, [h.shape for h in hidden]
        (torch.Size([34, 4]), [torch.Size([34, 16]), torch.Size([34, 16])])
    """

    name = "gcn"

    def __init__(self, in_dim: int, num_classes: int, num_layers: int, hidden: int = 128,
                 dropout: float = 0.5, self_loop: bool = False, batch_norm: bool = False,
                 bias: bool = True, residual: bool = False):
        super().__init__(in_dim, num_classes, num_layers, hidden, dropout, self_loop,
                         batch_norm, bias)
        self.residual = residual
        if residual:
            self.name = "resgcn"
        dims = [in_dim] + [hidden] * (num_layers - 1) + [num_classes]
        self.convs = nn.ModuleList(GraphConv(a, b, bias, self_loop) for a, b in zip(dims[:-1], dims[1:]))
        self.norms = self._norms(num_layers - 1)

    @property
    def num_hidden_outputs(self) -> int:
        return self.num_layers - 1

    def forward(self, x: torch.Tensor, adjs: list[torch.Tensor], return_hidden: bool = False):
        """``x`` ``(N, F)``, ``adjs`` ``L`` sparse ``(N, N)`` → log-probs ``(N, classes)``
        (and ``[H^(1), ..., H^(L-1)]`` when ``return_hidden``)."""
        _check_adjs(adjs, self.num_layers)
        hidden: list[torch.Tensor] = []
        h = x
        last = self.num_layers - 1
        for i, (conv, adj) in enumerate(zip(self.convs, adjs)):
            z = conv(self._drop(h), adj)
            if i < last:
                if self.batch_norm:
                    z = self.norms[i](z)
                z = F.relu(z)
                if self.residual and i > 0:  # hidden -> hidden layers only (widths match)
                    z = z + h
                hidden.append(z)
            h = z
        out = F.log_softmax(h, dim=1)
        return (out, hidden) if return_hidden else out


class JKNet(_Backbone):
    """``jknet``: ``L`` graph convolutions ``H^(l+1) = σ(Â^(l) H^(l) W^(l))`` (features →
    hidden, then hidden → hidden); output ``log_softmax((H^(1) || ... || H^(L)) W_out)``
    (paper appendix; Xu et al. 2018 with concatenation).

    ``forward(x, adjs, return_hidden=False)`` returns log-probabilities
    ``(N, num_classes)`` (and ``[H^(1), ..., H^(L)]`` when ``return_hidden``).

    Args:
        in_dim (int): input feature width ``C``.
        num_classes (int): number of classes.
        num_layers (int): ``L``, the number of layers that aggregate over an adjacency.
        hidden (int, optional): hidden width. (default: :obj:`128`)
        dropout (float, optional): dropout rate on the input of every weight layer, in
            ``[0, 1)``. (default: :obj:`0.5`)
        self_loop (bool, optional): the paper's self-feature modelling ("Loop").
            (default: :obj:`False`)
        batch_norm (bool, optional): batch normalisation on hidden-width outputs.
            (default: :obj:`False`)
        bias (bool, optional): learnable biases. (default: :obj:`True`)

    Example:
        >>> from dropedge_core.normalization import full_adjacency, to_sparse
        >>> from dropedge_core._synthetic import karate
        >>> g = karate()
        >>> adj = to_sparse(*full_adjacency(g), g.num_nodes)
        >>> JKNet(g.num_features, g.num_classes, num_layers=2, hidden=8).eval()(g.x, [adj] * 2).shape
        torch.Size([34, 4])
    """

    name = "jknet"

    def __init__(self, in_dim: int, num_classes: int, num_layers: int, hidden: int = 128,
                 dropout: float = 0.5, self_loop: bool = False, batch_norm: bool = False,
                 bias: bool = True):
        super().__init__(in_dim, num_classes, num_layers, hidden, dropout, self_loop,
                         batch_norm, bias)
        dims = [in_dim] + [hidden] * num_layers
        self.convs = nn.ModuleList(GraphConv(a, b, bias, self_loop) for a, b in zip(dims[:-1], dims[1:]))
        self.norms = self._norms(num_layers)
        self.out = nn.Linear(hidden * num_layers, num_classes, bias=bias)

    def forward(self, x: torch.Tensor, adjs: list[torch.Tensor], return_hidden: bool = False):
        """Log-probs ``(N, classes)`` (and ``[H^(1), ..., H^(L)]`` when ``return_hidden``)."""
        _check_adjs(adjs, self.num_layers)
        hidden: list[torch.Tensor] = []
        h = x
        for i, (conv, adj) in enumerate(zip(self.convs, adjs)):
            z = conv(self._drop(h), adj)
            if self.batch_norm:
                z = self.norms[i](z)
            h = F.relu(z)
            hidden.append(h)
        cat = torch.cat(hidden, dim=1)
        out = F.log_softmax(self.out(self._drop(cat)), dim=1)
        return (out, hidden) if return_hidden else out


class APPNPStar(_Backbone):
    """``appnp_star``: APPNP with a non-linear propagation (paper appendix):
    ``Z^(0) = ReLU(X W_in)``, ``Z^(l+1) = ReLU((1 - α) Â^(l) Z^(l) + α Z^(0))`` for
    ``l = 0 .. L-1``, output ``log_softmax(Z^(L) W_out)``.

    ``forward(x, adjs, return_hidden=False)`` returns log-probabilities
    ``(N, num_classes)`` (and ``[Z^(1), ..., Z^(L)]`` when ``return_hidden``).

    Args:
        in_dim (int): input feature width ``C``.
        num_classes (int): number of classes.
        num_layers (int): ``L``, the number of layers that aggregate over an adjacency.
        hidden (int, optional): hidden width. (default: :obj:`128`)
        dropout (float, optional): dropout rate on the input of every weight layer, in
            ``[0, 1)``. (default: :obj:`0.5`)
        self_loop (bool, optional): accepted for a common signature and ignored (no
            per-layer weight to add a self term to). (default: :obj:`False`)
        batch_norm (bool, optional): batch normalisation on hidden-width outputs.
            (default: :obj:`False`)
        bias (bool, optional): learnable biases. (default: :obj:`True`)
        alpha (float, optional): the teleport coefficient ``α`` in ``[0, 1]``.
            (default: :obj:`0.1`)

    Example:
        >>> from dropedge_core.normalization import full_adjacency, to_sparse
        >>> from dropedge_core._synthetic import karate
        >>> g = karate()
        >>> adj = to_sparse(*full_adjacency(g), g.num_nodes)
        >>> APPNPStar(g.num_features, g.num_classes, num_layers=4, hidden=8).eval()(g.x, [adj] * 4).shape
        torch.Size([34, 4])
    """

    name = "appnp_star"

    def __init__(self, in_dim: int, num_classes: int, num_layers: int, hidden: int = 128,
                 dropout: float = 0.5, self_loop: bool = False, batch_norm: bool = False,
                 bias: bool = True, alpha: float = 0.1):
        super().__init__(in_dim, num_classes, num_layers, hidden, dropout, self_loop,
                         batch_norm, bias)
        if not isinstance(alpha, (int, float)) or math.isnan(alpha) or not 0.0 <= alpha <= 1.0:
            raise ModelError(f"alpha must be in [0, 1] (got {alpha!r})")
        self.alpha = float(alpha)
        self.inp = nn.Parameter(torch.empty(in_dim, hidden))
        self.inp_bias = nn.Parameter(torch.zeros(hidden)) if bias else None
        nn.init.xavier_uniform_(self.inp)
        self.norms = self._norms(num_layers)
        self.out = nn.Linear(hidden, num_classes, bias=bias)

    def forward(self, x: torch.Tensor, adjs: list[torch.Tensor], return_hidden: bool = False):
        """Log-probs ``(N, classes)`` (and ``[Z^(1), ..., Z^(L)]`` when ``return_hidden``)."""
        _check_adjs(adjs, self.num_layers)
        z0 = matmul(self._input_dropout(x), self.inp)
        if self.inp_bias is not None:
            z0 = z0 + self.inp_bias
        z0 = F.relu(z0)
        hidden: list[torch.Tensor] = []
        z = z0
        for i, adj in enumerate(adjs):
            z = (1.0 - self.alpha) * spmm(adj, self._step_dropout(z)) + self.alpha * z0
            if self.batch_norm:
                z = self.norms[i](z)
            z = F.relu(z)
            hidden.append(z)
        out = F.log_softmax(self.out(self._drop(z)), dim=1)
        return (out, hidden) if return_hidden else out

    def _input_dropout(self, x: torch.Tensor) -> torch.Tensor:
        """Dropout of the features before ``W_in`` (the authors' variant overrides both
        dropout places)."""
        return self._drop(x)

    def _step_dropout(self, z: torch.Tensor) -> torch.Tensor:
        """Dropout before each propagation step: none here."""
        return z

    def extra_repr(self) -> str:
        return super().extra_repr() + f", alpha={self.alpha}"


def make_model(name: str, in_dim: int, num_classes: int, num_layers: int, hidden: int = 128,
               dropout: float = 0.5, self_loop: bool = False, batch_norm: bool = False,
               bias: bool = True, alpha: float = 0.1, generator: torch.Generator | None = None) -> nn.Module:
    """Build a backbone by name: ``gcn``, ``resgcn``, ``jknet``, ``appnp_star`` (alias ``appnp``).

    Args:
        name (str): backbone name (case-insensitive).
        in_dim (int): input feature width ``C``.
        num_classes (int): number of classes.
        num_layers (int): ``L``, the number of layers that aggregate over an adjacency.
        hidden (int, optional): hidden width. (default: :obj:`128`)
        dropout (float, optional): dropout rate on the input of every weight layer, in
            ``[0, 1)``. (default: :obj:`0.5`)
        self_loop (bool, optional): the paper's self-feature modelling ("Loop").
            (default: :obj:`False`)
        batch_norm (bool, optional): batch normalisation on hidden-width outputs.
            (default: :obj:`False`)
        bias (bool, optional): learnable biases. (default: :obj:`True`)
        alpha (float, optional): teleport coefficient of ``appnp_star`` (ignored by the
            others). (default: :obj:`0.1`)
        generator (torch.Generator, optional): dropout's random source (on the model's
            device); ``None`` = torch's global RNG. The trainer passes a seeded one, so that
            runs in concurrent threads do not share one RNG stream. (default: :obj:`None`)

    Returns:
        torch.nn.Module: the backbone (a :class:`GCN`, :class:`JKNet` or :class:`APPNPStar`).

    Raises:
        ModelError: an unknown name or a bad option.

    Example:
        >>> model = make_model("resgcn", 1433, 7, num_layers=4)
        >>> model.name, model.num_layers, model.num_hidden_outputs
        ('resgcn', 4, 3)
    """
    model = _build(check_backbone(name), in_dim, num_classes, num_layers, hidden, dropout, self_loop,
                   batch_norm, bias, alpha)
    model.generator = generator
    return model


def _build(key: str, in_dim: int, num_classes: int, num_layers: int, hidden: int, dropout: float,
           self_loop: bool, batch_norm: bool, bias: bool, alpha: float) -> nn.Module:
    common = dict(hidden=hidden, dropout=dropout, self_loop=self_loop, batch_norm=batch_norm,
                  bias=bias)
    if key == "gcn":
        return GCN(in_dim, num_classes, num_layers, **common)
    if key == "resgcn":
        return GCN(in_dim, num_classes, num_layers, residual=True, **common)
    if key == "jknet":
        return JKNet(in_dim, num_classes, num_layers, **common)
    return APPNPStar(in_dim, num_classes, num_layers, alpha=alpha, **common)
