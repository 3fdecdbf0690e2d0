"""An ``edge_index`` drawn from in fixed-shape tensor operations: the path ``torch.compile`` traces.

:class:`~dropedge_core.pyg.edges.EdgeIndexer` maps an ``edge_index`` onto the simple
undirected graph with ``torch.unique``, whose output size (the number of distinct edges)
depends on the data: ``torch.compile`` breaks its graph there, and again at every Python
number read from a tensor. Here the same mapping is a sort: the columns sorted by their
undirected key ``min(u, v) * N + max(u, v)`` are the *slots*; the first slot of every run of
equal keys that is no self-loop is an item (an undirected edge), the others are padding
that :func:`~dropedge_core._segment_draws.segment_masks` never keeps or counts. Every input
column reads its run's first slot (a self-loop is always kept), so duplicates are kept or
dropped together and one-way edges are items, as on the ``Graph`` path; with
``directed=True`` the items are the two directions of every distinct edge (``2M``, as
:meth:`~dropedge_core.samplers.EdgeSampler.num_items` counts them), the reverse direction a
second half of slots.

The law is the samplers' (each graph of a batch on its own); the stream is not (the module
docstring of :mod:`dropedge_core._segment_draws`): under ``torch.compile`` a seed draws
other masks than in eager mode, as torch's own random operators do under the inductor.
Nothing is read back to Python to validate: the eager checks' ``ValueError`` become
device-side assertions (:func:`torch._assert_async`: node ids in range, finite features, no
edge between two graphs of a batch), a ``RuntimeError`` naming the fault.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from dropedge_core import samplers
from dropedge_core._segment_draws import segment_masks
from dropedge_core.graph import l1_normalize_rows


@dataclass
class EdgeSlots:
    """The slots of an ``edge_index`` of ``E`` columns (:func:`edge_slots`).

    Attributes:
        lo (LongTensor): ``(E,)`` the smaller end point of every slot (columns in key order).
        hi (LongTensor): ``(E,)`` the larger end point.
        valid (BoolTensor): ``(S,)`` the slots that are items (``S = E``; ``2E`` directed:
            the second half the reverse directions).
        column (LongTensor): ``(E,)`` the slot every input column reads.
        loop (BoolTensor): ``(E,)`` the input columns that are self-loops.
    """

    lo: Tensor
    hi: Tensor
    valid: Tensor
    column: Tensor
    loop: Tensor


def edge_slots(edge_index: Tensor, num_nodes: int | Tensor, directed: bool = False) -> EdgeSlots:
    """The slots of ``edge_index``: one sort, O(E log E), every output ``E`` (or ``2E``) long.

    Args:
        edge_index (LongTensor): ``(2, E)`` edge indices (not validated here).
        num_nodes (int or Tensor): more than the largest node id (a 0-d tensor will do).
        directed (bool, optional): the two directions of an edge are two items.
            (default: :obj:`False`)

    Returns:
        EdgeSlots: the slots; :attr:`EdgeSlots.valid` holds ``M`` (``2M``) items, ``M`` the
        distinct undirected non-loop edges.

    Example:
        >>> slots = edge_slots(torch.tensor([[0, 1, 1, 2, 2], [1, 0, 2, 1, 2]]), 3)
        >>> int(slots.valid.sum()), slots.column.tolist(), slots.loop.tolist()
        (2, [0, 0, 2, 2, 4], [False, False, False, False, True])
    """
    src, dst = edge_index.long()
    lo, hi = torch.minimum(src, dst), torch.maximum(src, dst)
    sorted_key, perm = torch.sort(lo * num_nodes + hi)
    num_columns = sorted_key.numel()
    first = torch.ones(num_columns, dtype=torch.bool, device=src.device)
    first[1:] = sorted_key[1:] != sorted_key[:-1]
    lo, hi = lo[perm], hi[perm]
    valid = first & (lo != hi)
    position = torch.arange(num_columns, device=src.device)
    run_start = torch.cummax(torch.where(first, position, 0), 0).values  # each run's first slot
    column = torch.empty_like(perm).scatter_(0, perm, run_start)
    if directed:  # (u, v) with u < v reads the first half, its reverse the second
        column = column + num_columns * (src > dst)
        valid = torch.cat([valid, valid])
    return EdgeSlots(lo=lo, hi=hi, valid=valid, column=column, loop=src == dst)


def _assert_edges(edge_index: Tensor, num_nodes: int | Tensor, batch: Tensor | None) -> None:
    """What eager mode's checks refuse with a ``ValueError``, asserted on the device instead
    (no graph break, no sync: a ``RuntimeError`` where the run next syncs): node ids in
    ``[0, num_nodes)``, and with ``batch`` no edge between two graphs."""
    torch._assert_async(((edge_index >= 0) & (edge_index < num_nodes)).all(),
                        "edge_index holds a node id outside [0, num_nodes)")
    if batch is not None:
        torch._assert_async((batch[edge_index[0]] == batch[edge_index[1]]).all(),
                            "edge_index joins nodes of two graphs of the batch")


def traced_features(x: Tensor) -> Tensor:
    """``x`` row-L1-normalised exactly as :func:`~dropedge_core.pyg.edges.normalized_features`
    does (rows already normalised and zero rows as they are), with no test read back to
    Python: the ``where`` picks what its test would have. NaN or inf is refused by a
    device-side assertion (a ``RuntimeError`` where the run syncs; rows whose sum overflows
    are refused with them)."""
    x = (x.to_dense() if x.layout != torch.strided else x).detach().float()
    norm = x.abs().sum(dim=1, keepdim=True)
    torch._assert_async(torch.isfinite(norm).all(),
                        "x holds NaN or inf: the kernel samplers need finite features")
    done = ((norm - 1.0).abs() <= 1e-6) | (norm == 0)
    return torch.where(done, x, l1_normalize_rows(x))


def slot_masks(edge_index: Tensor, num_nodes: int | None, sampler: samplers.EdgeSampler, num_layers: int,
               x: Tensor | None = None, generator: torch.Generator | None = None,
               batch: Tensor | None = None) -> Tensor:
    """``(L, E)`` bool: the columns of ``edge_index`` kept at every layer, drawn from its
    slots in fixed-shape tensor operations (the module docstring); self-loops always kept.

    Args:
        edge_index (LongTensor): ``(2, E)`` edge indices (validated by the caller).
        num_nodes (int, optional): more than the largest node id (:obj:`None`: the rows of
            ``x``, else of ``batch``, else the largest id plus one, as a tensor: no sync).
        sampler (EdgeSampler): the sampler (its relation, weighting, rates, kernel).
        num_layers (int): the depth :math:`L`.
        x (Tensor, optional): ``(N, C)`` node features (the kernel weighting).
            (default: :obj:`None`)
        generator (torch.Generator, optional): the random source. (default: :obj:`None`)
        batch (LongTensor, optional): ``(N,)`` PyG's graph id of every node: each graph keeps
            its own share of its own edges. (default: :obj:`None`)

    Returns:
        BoolTensor: ``(L, E)``.
    """
    if num_nodes is None:
        num_nodes = (x.size(0) if x is not None else batch.size(0) if batch is not None
                     else edge_index.max() + 1 if edge_index.numel() else 0)
    _assert_edges(edge_index, num_nodes, batch)
    slots = edge_slots(edge_index, num_nodes, sampler.directed)
    halves = 2 if sampler.directed else 1
    weights = None
    if sampler.weighting == "kernel":
        w = samplers.kernel_weights(traced_features(x), torch.stack([slots.lo, slots.hi]),
                                    sampler.kernel, sampler.gamma)
        weights = w.repeat(halves)
    if batch is None:
        segment, num_segments = None, 1
    else:  # graph ids are below N (PyG's batch): N segments bound them without a sync
        segment, num_segments = batch[slots.lo].repeat(halves), batch.size(0)
    sizes = torch.zeros(num_segments, dtype=torch.long, device=slots.valid.device)
    sizes.scatter_add_(0, torch.zeros_like(slots.valid, dtype=torch.long) if segment is None else segment,
                       slots.valid.long())
    counts = sampler.counts_of(sizes, num_layers).to(slots.valid.device)
    kept = segment_masks(sampler.relation, counts, slots.valid, segment, weights, generator)
    return torch.gather(kept, 1, slots.column.expand(num_layers, -1)) | slots.loop
