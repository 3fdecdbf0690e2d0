"""``A @ H`` for the per-layer adjacencies, with a backward that needs no sort.

``torch.sparse.mm(A, H)`` with a CSR ``A`` differentiates to ``A^T @ G``, which torch
forms by converting ``A^T`` (a CSC view) back to CSR — a sort of all entries, in every
layer's backward of every epoch (Cora: ~7 ms of a layer's ~10 ms forward + backward on
the CPU; 64 layers, ~0.45 s an epoch). The trainer's adjacencies all share one CSR
pattern that is symmetric (each edge's two directions and every self-loop are entries,
a dropped one with value 0), so ``A^T`` has the same pattern and its values are ``A``'s
permuted by a fixed index, the position of entry ``(j, i)`` for each entry ``(i, j)``
(:func:`~dropedge_core._pattern.entry_transpose`). :func:`with_transpose`
attaches that index to a matrix, and :func:`spmm` then differentiates with one gather of
the values and one product: the same products in the same order, so the same gradients.
"""
from __future__ import annotations

import torch

from dropedge_core.graph import csr_tensor

#: The attribute holding a matrix's transpose index (see :func:`with_transpose`).
TRANSPOSE_ATTRIBUTE = "transpose_entries"


def with_transpose(adj: torch.Tensor, entries: torch.Tensor) -> torch.Tensor:
    """Mark the sparse CSR ``adj`` (its pattern symmetric) with ``entries``: ``(nnz,)``
    indices such that ``adj.values()[entries]`` are the values of ``adj^T`` in ``adj``'s own
    pattern. Returns ``adj``.

    Args:
        adj (Tensor): sparse CSR ``(N, N)``, its pattern symmetric.
        entries (Tensor): ``(nnz,)`` long, the transpose's gather index.
    """
    setattr(adj, TRANSPOSE_ATTRIBUTE, entries)
    return adj


class _Product(torch.autograd.Function):
    """``adj @ h``, differentiated in ``h`` only, through the transpose in ``adj``'s pattern."""

    @staticmethod
    def forward(ctx, adj: torch.Tensor, entries: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        ctx.adj, ctx.entries = adj, entries
        return torch.sparse.mm(adj, h)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        adj = ctx.adj
        transposed = csr_tensor(adj.crow_indices(), adj.col_indices(),
                                adj.values().index_select(0, ctx.entries), tuple(adj.shape))
        return None, None, torch.sparse.mm(transposed, grad)


def spmm(adj: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
    """``adj @ h`` for a sparse ``adj`` and a dense ``h``, as ``torch.sparse.mm``.

    When ``adj`` carries a transpose index (:func:`with_transpose`) and only ``h`` needs a
    gradient, the backward uses it; otherwise (a plain sparse matrix, a differentiated
    ``adj``, no gradient wanted) this is ``torch.sparse.mm``.

    Args:
        adj (Tensor): sparse ``(N, N)``.
        h (Tensor): dense ``(N, C)``.

    Returns:
        Tensor: dense ``(N, C)``.
    """
    entries = getattr(adj, TRANSPOSE_ATTRIBUTE, None)
    if entries is None or adj.requires_grad or not (torch.is_grad_enabled() and h.requires_grad):
        return torch.sparse.mm(adj, h)
    return _Product.apply(adj, entries, h)
