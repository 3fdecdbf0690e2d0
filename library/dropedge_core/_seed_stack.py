"""Several seeds of one backbone trained as one model: every weight stacked on a leading
seed dimension ``S``.

:class:`SeedStack` is built from ``S`` models of :mod:`dropedge_core.models` (one per
seed, each drawn from its own seed), so its initial weights are theirs; each seed keeps
its own dropout generator (its model's), drawn in the single model's order and shapes, so
its dropout masks are the single run's too. Its forward pass is the single model's, seed by
seed, in three batched forms:

* dense products: ``(S, N, a) @ (S, a, b)`` (``torch.bmm``); the shared input features
  times every seed's weight as one product ``X @ [W_1 | ... | W_S]``;
* graph products: one block-diagonal CSR ``(S N, S N)`` per layer whose block ``s`` is
  seed ``s``'s adjacency (:func:`block_diagonal`), times the stacked ``(S N, d)``;
* batch norm over ``S d`` channels (each seed's ``d`` channels normalised over its ``N``
  rows, as :class:`~dropedge_core.models.FullBatchNorm`).

Hidden activations are ``(S, N, d)``; log-probabilities ``(S, N, classes)``.
:meth:`SeedStack.state_of` gives seed ``s``'s weights as its single model's ``state_dict``.
The authors' models (:mod:`.authors_models`) are not stacked.
"""
from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from dropedge_core._sparse_products import spmm
from dropedge_core.graph import csr_tensor
from dropedge_core.models import GCN, APPNPStar, JKNet, ModelError


def block_diagonal(crow: torch.Tensor, col: torch.Tensor, blocks: int,
                   block_cols: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The CSR index of ``blocks`` copies of one ``(R, C)`` CSR pattern on a block diagonal.

    Args:
        crow (Tensor): ``(R + 1,)`` row offsets of the pattern.
        col (Tensor): ``(nnz,)`` its column indices.
        blocks (int): ``S``, the number of copies.
        block_cols (int): ``C``, the pattern's width (block ``s`` takes columns
            ``s C .. s C + C - 1``).

    Returns:
        tuple[Tensor, Tensor]: ``(crow, col)`` of the ``(S R, S C)`` matrix, ``(S R + 1,)``
        and ``(S nnz,)``; its values are the ``S`` blocks' values one after the other
        (``(S, nnz)`` flattened).

    Example:
        >>> block_diagonal(torch.tensor([0, 1, 2]), torch.tensor([1, 0]), 2, 2)
        (tensor([0, 1, 2, 3, 4]), tensor([1, 0, 3, 2]))
    """
    nnz = col.numel()
    shift = torch.arange(blocks, device=col.device).unsqueeze(1)
    rows = (crow[:-1].unsqueeze(0) + shift * nnz).flatten()
    crow_out = torch.cat([rows, rows.new_full((1,), blocks * nnz)])
    return crow_out, (col.unsqueeze(0) + shift * block_cols).flatten()


def _key(name: str) -> str:
    return name.replace(".", "__")  # ParameterDict keys may not hold dots


class SeedStack(nn.Module):
    """``S`` models of one backbone (``gcn``, ``resgcn``, ``jknet``, ``appnp_star``) as one.

    Args:
        models (Sequence[torch.nn.Module]): the seeds' models, alike but for their weights
            (same class, widths, options); each one's ``generator`` is its dropout stream.

    Every parameter and batch-norm buffer ``name`` of the models becomes one tensor
    ``(S, *shape)`` (:meth:`weight`); gradients of a sum of the seeds' losses reach each
    seed's slice from its own loss only, so an element-wise optimiser (Adam) over the
    stack steps every seed as its own optimiser would.
    """

    def __init__(self, models: Sequence[nn.Module]):
        super().__init__()
        first = models[0]
        if not isinstance(first, (GCN, JKNet, APPNPStar)) or any(type(m) is not type(first) for m in models):
            raise ModelError(f"SeedStack stacks models of one backbone of method.models "
                             f"(got {sorted({type(m).__name__ for m in models})})")
        self.kind, self.num_layers, self.seeds = first.name, first.num_layers, len(models)
        self.dropout, self.batch_norm = first.dropout, first.batch_norm
        self.residual, self.alpha = getattr(first, "residual", False), getattr(first, "alpha", 0.0)
        self.generators = [m.generator for m in models]
        self.weights = nn.ParameterDict({
            _key(name): nn.Parameter(torch.stack([dict(m.named_parameters())[name].detach() for m in models]))
            for name, _ in first.named_parameters()})
        for name, _ in first.named_buffers():  # batch norm's running statistics
            self.register_buffer(_key(name), torch.stack([dict(m.named_buffers())[name] for m in models]))
        self.names = [name for name, _ in first.state_dict().items()]

    def weight(self, name: str) -> torch.Tensor | None:
        """The stacked parameter or buffer ``name`` (its single model's name), ``(S, ...)``."""
        key = _key(name)
        return self.weights[key] if key in self.weights else getattr(self, key, None)

    def state_of(self, seed: int) -> dict[str, torch.Tensor]:
        """Seed ``seed``'s weights and buffers as its single model's ``state_dict`` (copies)."""
        return {name: self.weight(name)[seed].detach().clone() for name in self.names}

    def keep(self, index: torch.Tensor) -> None:
        """Only the seeds at positions ``index`` (``(S',)`` long) stay: every stacked tensor
        and the dropout streams shrink to them. The parameters are new tensors: build the
        optimiser again (its moments indexed the same way)."""
        for key, value in list(self.weights.items()):
            self.weights[key] = nn.Parameter(value.detach().index_select(0, index))
        for key, value in list(self.named_buffers()):
            setattr(self, key, value.index_select(0, index))
        self.generators = [self.generators[i] for i in index.tolist()]
        self.seeds = len(self.generators)

    # the inputs of a weight: the shared features (a 2-D dense or CSR matrix, the same for
    # every seed), per-seed dropped features as one block-diagonal CSR, or a stack (S, N, a)
    def _drop(self, h: torch.Tensor, shared: bool) -> tuple[torch.Tensor, bool]:
        """Each seed's inverted dropout of ``h`` from its own generator, in the single model's
        shapes (:func:`~dropedge_core.models.feature_dropout`): returns the dropped
        input and whether it is still shared."""
        if not self.training or self.dropout == 0.0:
            return h, shared
        p, sparse = self.dropout, shared and h.layout != torch.strided
        values = h.values() if sparse else h
        shape = values.shape if shared else values.shape[1:]
        keep = torch.stack([torch.rand(shape, generator=g, device=g.device) >= p
                            for g in self.generators]).to(values.device)
        dropped = (values.unsqueeze(0) if shared else values) * keep / (1.0 - p)
        if not sparse:
            return dropped, False
        crow, col = block_diagonal(h.crow_indices(), h.col_indices(), self.seeds, h.size(1))
        size = (self.seeds * h.size(0), self.seeds * h.size(1))
        return csr_tensor(crow, col, dropped.flatten(), size), False

    def _times(self, h: torch.Tensor, shared: bool, w: torch.Tensor) -> torch.Tensor:
        """``h @ w_s`` for every seed: ``w`` ``(S, a, b)`` → ``(S, N, b)``."""
        s, a, b = w.shape
        if shared and h.layout != torch.strided:  # X @ [W_1 | ... | W_S]: one sparse product
            wide = torch.sparse.mm(h, w.permute(1, 0, 2).reshape(a, s * b))
            return wide.view(-1, s, b).transpose(0, 1)
        if shared:
            return torch.matmul(h, w)
        if h.layout != torch.strided:  # block-diagonal dropped features
            return torch.sparse.mm(h, w.reshape(s * a, b)).view(s, -1, b)
        return torch.bmm(h, w)

    def _aggregate(self, adj: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        """``Â_s h_s`` for every seed: ``adj`` block-diagonal ``(S N, S N)``, ``h`` ``(S, N, d)``."""
        s, n, d = h.shape
        return spmm(adj, h.reshape(s * n, d)).view(s, n, d)

    def _conv(self, i: int, h: torch.Tensor, shared: bool, adj: torch.Tensor) -> torch.Tensor:
        """Graph convolution ``i`` (:class:`~dropedge_core.models.GraphConv`), every seed."""
        out = self._aggregate(adj, self._times(h, shared, self.weight(f"convs.{i}.weight")))
        if (w_self := self.weight(f"convs.{i}.weight_self")) is not None:
            out = out + self._times(h, shared, w_self)
        if (bias := self.weight(f"convs.{i}.bias")) is not None:
            out = out + bias.unsqueeze(1)
        return out

    def _norm(self, i: int, z: torch.Tensor) -> torch.Tensor:
        """Batch norm ``i`` of every seed (``FullBatchNorm``: the first training step sets
        the running statistics): ``(S, N, d)`` as ``N`` rows of ``S d`` channels."""
        s, n, d = z.shape
        tracked = self.weight(f"norms.{i}.num_batches_tracked")
        first = self.training and int(tracked[0]) == 0
        if self.training:
            tracked.add_(1)
        mean, var, weight, bias = (self.weight(f"norms.{i}.{name}").view(-1)
                                   for name in ("running_mean", "running_var", "weight", "bias"))
        flat = F.batch_norm(z.transpose(0, 1).reshape(n, s * d), mean, var, weight, bias, self.training,
                            1.0 if first else 0.1, 1e-5)
        return flat.view(n, s, d).transpose(0, 1)

    def _linear(self, name: str, h: torch.Tensor) -> torch.Tensor:
        """``nn.Linear`` ``name`` of every seed: ``h`` ``(S, N, a)`` → ``(S, N, b)``."""
        out = torch.bmm(h, self.weight(f"{name}.weight").transpose(1, 2))
        bias = self.weight(f"{name}.bias")
        return out if bias is None else out + bias.unsqueeze(1)

    def forward(self, x: torch.Tensor, adjs: list[torch.Tensor], return_hidden: bool = False):
        """``x`` ``(N, F)`` (dense or CSR, every seed's input), ``adjs`` ``L`` block-diagonal
        ``(S N, S N)`` → log-probs ``(S, N, classes)`` (and the hidden outputs, each
        ``(S, N, d)``, as the single backbone's ``return_hidden``)."""
        if len(adjs) != self.num_layers:
            raise ModelError(f"the model has {self.num_layers} layers but got {len(adjs)} adjacencies")
        forward = {"gcn": self._gcn, "resgcn": self._gcn, "jknet": self._jknet,
                   "appnp_star": self._appnp}[self.kind]
        out, hidden = forward(x, adjs)
        out = F.log_softmax(out, dim=-1)
        return (out, hidden) if return_hidden else out

    def _gcn(self, x: torch.Tensor, adjs: list[torch.Tensor]) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """:class:`~dropedge_core.models.GCN`'s layers (``resgcn``: with residuals)."""
        hidden: list[torch.Tensor] = []
        h, shared, last = x, True, self.num_layers - 1
        for i, adj in enumerate(adjs):
            z = self._conv(i, *self._drop(h, shared), adj)
            if i < last:
                if self.batch_norm:
                    z = self._norm(i, z)
                z = F.relu(z)
                if self.residual and i > 0:
                    z = z + h
                hidden.append(z)
            h, shared = z, False
        return h, hidden

    def _jknet(self, x: torch.Tensor, adjs: list[torch.Tensor]) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """:class:`~dropedge_core.models.JKNet`'s layers and its linear output."""
        hidden: list[torch.Tensor] = []
        h, shared = x, True
        for i, adj in enumerate(adjs):
            z = self._conv(i, *self._drop(h, shared), adj)
            if self.batch_norm:
                z = self._norm(i, z)
            h, shared = F.relu(z), False
            hidden.append(h)
        cat, _ = self._drop(torch.cat(hidden, dim=-1), False)
        return self._linear("out", cat), hidden

    def _appnp(self, x: torch.Tensor, adjs: list[torch.Tensor]) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """:class:`~dropedge_core.models.APPNPStar`'s propagation (no step dropout)."""
        z0 = self._times(*self._drop(x, True), self.weight("inp"))
        if (bias := self.weight("inp_bias")) is not None:
            z0 = z0 + bias.unsqueeze(1)
        z0 = F.relu(z0)
        hidden: list[torch.Tensor] = []
        z = z0
        for i, adj in enumerate(adjs):
            z = (1.0 - self.alpha) * self._aggregate(adj, z) + self.alpha * z0
            if self.batch_norm:
                z = self._norm(i, z)
            z = F.relu(z)
            hidden.append(z)
        dropped, _ = self._drop(z, False)
        return self._linear("out", dropped), hidden
