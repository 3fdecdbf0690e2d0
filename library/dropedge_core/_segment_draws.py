"""Every sampler's draw as fixed-shape tensor operations, over items grouped in segments.

:func:`segment_masks` is the sampler core that ``torch.compile`` traces whole and that draws
a PyG mini-batch in one pass: no Python number read from a tensor, no numpy, no tensor whose
size depends on the data, the keep counts a tensor. Its items are *slots*: a slot is either
valid (an item to draw from) or padding (a duplicate column, a self-loop), never kept and
never counted. Every slot belongs to a segment (a graph of a batch; one segment without
one), and layer ``l`` keeps ``counts[segment, l]`` of its segment's valid slots.

A selection keeps each segment's ``count`` smallest keys (padding's keys are ``+inf``, so it
comes last), in one of two ways, with the same result:

* **eager**: one batched ``topk`` over a padded layout (:func:`smallest`: every segment a row,
  led by ``k - count`` cells of ``-inf``, so one ``k``, the largest count read once, takes
  every row's own count) — several times faster than sorting on the CPU;
* **traced** by ``torch.compile`` (where ``topk``'s Python ``k`` would be a sync), and where
  the padded layout would be too large (:data:`PAD_AT_MOST`): a rank, the keys sorted within
  each segment (:func:`segment_ranks`, one sort, two with segments) and a slot kept where its
  rank is below its segment's count; the counts never leave the device.

**Law.** Each segment's masks follow the sampler's law on that segment alone, as
:mod:`dropedge_core.samplers` draws it: uniform or weighted successive sampling (the
``counts`` smallest keys ``U`` or ``E / w``, Efraimidis-Spirakis), one sample for every
layer (shared), one per layer (independent), nested by prefixes of one order (uniform
LID/LDD) or by redrawing each layer from the one before (kernel: Algorithm 1, a loop over
the layers, each step one batched selection).

**Stream.** Not :mod:`~dropedge_core.samplers`': keys are drawn for every slot, padding
included, so one seed gives other masks. This path serves where the samplers' stream cannot
be had (under ``torch.compile``, where the number of items is not known while tracing) or
was never promised (the graphs of a PyG batch, which the samplers draw one at a time).
"""
from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor


def segment_ranks(keys: Tensor, segment: Tensor | None = None, num_segments: int = 1) -> Tensor:
    """``(R, S)``: the rank of every key within its segment in its row, ascending (``0``: the
    smallest), ties in sort order.

    Args:
        keys (Tensor): ``(R, S)`` keys, one row per independent ordering.
        segment (LongTensor, optional): ``(S,)`` the segment of every slot, in
            ``0..num_segments - 1``. (default: :obj:`None`: one segment)
        num_segments (int, optional): an upper bound of the segment ids (a larger one only
            costs a longer count vector). (default: :obj:`1`)

    Returns:
        LongTensor: ``(R, S)``, each segment's ranks ``0..size - 1`` in every row.

    Example:
        >>> segment_ranks(torch.tensor([[0.3, 0.1, 0.9, 0.2]]), torch.tensor([0, 0, 1, 1]), 2)
        tensor([[1, 0, 1, 0]])
    """
    order = torch.argsort(keys, dim=-1)
    if segment is not None:  # group by segment, keeping the key order within each (stable)
        order = order.gather(-1, torch.sort(segment[order], dim=-1, stable=True).indices)
    return _ranks_in_order(order, segment, num_segments)


def _ranks_in_order(order: Tensor, segment: Tensor | None, num_segments: int) -> Tensor:
    """``(R, S)`` ranks within segments from ``order``, each row the slots grouped by
    segment (ascending ids) and ranked within each."""
    position = torch.arange(order.size(-1), device=order.device).expand_as(order)
    if segment is None:
        return torch.empty_like(order).scatter_(-1, order, position)
    sizes = torch.zeros(num_segments, dtype=torch.long, device=order.device)
    sizes.scatter_add_(0, segment, torch.ones_like(segment))
    start = sizes.cumsum(0) - sizes  # where each segment begins in that order
    return torch.empty_like(order).scatter_(-1, order, position - start[segment[order]])


def _uniforms(rows: int, valid: Tensor, generator: torch.Generator | None) -> Tensor:
    """``(rows, S)`` float64 uniforms in ``[0, 1)``, drawn where the generator lives.

    ``torch.compile`` cannot put a :class:`torch.Generator` in its graph: every draw from
    one is a graph break, so under compilation with a generator all of a call's rows are
    drawn at once (one break), the caller slicing them."""
    shape = (rows, valid.numel())
    if generator is None:  # no generator= at all: rand's generator overload takes no symbolic sizes
        return torch.rand(shape, device=valid.device, dtype=torch.float64)
    return torch.rand(shape, generator=generator, device=generator.device, dtype=torch.float64)


def _keys(uniforms: Tensor, valid: Tensor, weights: Tensor | None, pad: float = float("inf")) -> Tensor:
    """Keys from ``uniforms`` (``(R, S)``), smallest first: ``U`` (uniform) or ``E / w``
    (weighted, ``E = -log(1 - U) ~ Exp(1)``, finite); ``pad`` at the padding (``+inf``: never
    among the smallest; :func:`nested_walk` selects the largest and pads with ``-inf``)."""
    keys = uniforms if weights is None else torch.log1p(-uniforms).neg_().div_(weights.to(torch.float64))
    return keys.masked_fill(~valid, pad)


#: The padded layout of :func:`smallest` is used while it holds at most this many times the
#: keys' cells (a batch of one large graph among small ones would pad every small one to
#: it); above, and at 0, the ranks are sorted for (:func:`segment_ranks`).
PAD_AT_MOST = 4


class _Padded:
    """The dense layout of :func:`smallest` (eager mode): ``rows * G`` rows of ``width =
    k + largest segment`` cells, row ``(r, g)`` segment ``g``'s keys of key row ``r`` after
    ``k`` lead cells; ``flat`` is every slot's cell in a key row's ``G * width`` cells (slot
    order within each segment). Built once a call and reused by every layer's selection."""

    def __init__(self, segment: Tensor | None, num_segments: int, num_slots: int, rows: int, k: int,
                 device: torch.device):
        if segment is None:
            row, place, largest = torch.zeros(num_slots, dtype=torch.long, device=device), \
                torch.arange(num_slots, device=device), num_slots
        else:
            sizes = torch.zeros(num_segments, dtype=torch.long, device=device)
            sizes.scatter_add_(0, segment, torch.ones_like(segment))
            order = torch.sort(segment, stable=True).indices
            start = sizes.cumsum(0) - sizes
            row, place = segment, torch.empty_like(segment)
            place[order] = torch.arange(num_slots, device=device) - start[segment[order]]
            largest = int(sizes.max()) if num_slots else 0
        self.rows, self.segments, self.k, self.width = rows, num_segments, k, k + largest
        self.flat = row * self.width + k + place
        self.lead = torch.arange(k, device=device)

    @property
    def cells(self) -> int:
        return self.rows * self.segments * self.width


def smallest(keys: Tensor, counts: Tensor, padded: _Padded, ranked: bool = False) -> Tensor:
    """``(R, S)`` bool: in every row, the ``counts[r, g]`` smallest keys of each segment ``g``
    (exact; ties in ``topk``'s order); ``ranked``: ``(R, S)`` long instead, each of those
    slots' rank within its segment and ``S`` elsewhere.

    One batched ``topk`` with ``k`` (:class:`_Padded`, at least every count) over the dense
    layout: row ``(r, g)`` begins with ``k - counts[r, g]`` cells of ``-inf`` (always among
    the ``k`` smallest) before the segment's keys (``+inf`` after them), so one ``k`` takes
    each segment's own count. ``topk`` is several times faster than the sort behind
    :func:`segment_ranks` on the CPU (Cora, L = 16: 2.4 vs 6.7 ms)."""
    rows, num_slots = keys.shape
    k, width = padded.k, padded.width
    if k == 0:
        if ranked:
            return torch.full_like(keys, num_slots, dtype=torch.long)
        return torch.zeros_like(keys, dtype=torch.bool)
    lead = k - counts.reshape(-1, 1)  # (R * G, 1): the -inf cells of each dense row
    dense = torch.full((rows * padded.segments, width), float("inf"), dtype=keys.dtype, device=keys.device)
    dense[:, :k].masked_fill_(padded.lead < lead, float("-inf"))
    dense.view(rows, -1).index_copy_(1, padded.flat, keys)
    picked = torch.topk(dense, k, dim=1, largest=False, sorted=ranked).indices
    if ranked:  # sorted: a row's j-th pick is its segment's (j - lead)-th smallest key
        out = torch.full_like(dense, num_slots, dtype=torch.long).scatter_(1, picked, padded.lead - lead)
    else:
        out = torch.zeros_like(dense, dtype=torch.bool).scatter_(1, picked, True)
    return out.view(rows, -1).index_select(1, padded.flat)


#: The most cells of :func:`nested_walk`'s dense layout held at once: its steps are drawn and
#: laid out in blocks of at most this many (32 MB of float64 keys), so its memory is that of
#: its ``(L, S)`` output whatever the depth and the batch.
WALK_CELLS = 1 << 22


def nested_walk(draw: Callable[[int, int], Tensor], drops: Tensor, padded: _Padded) -> Tensor:
    """``(S,)`` long: the step at which a nested walk drops every slot (``J``: never), step
    ``j`` dropping in every segment ``g`` the ``drops[g, j]`` largest of its keys among the
    slots no step before dropped — Algorithm 1's draws in drawing order, each step's set
    the smallest of the step before's (the complement within that pool).

    The walk stays in :func:`smallest`'s dense layout (built for ``k`` at least every
    drop): a block of steps is drawn and laid out in one pass, and a step masks the
    dropped cells to ``-inf``, takes one ``topk`` of the largest and marks them — no
    layout, no gather back to the slots a step. Dropping selects over the few each step
    loses, not the many it keeps: ``k`` (a row's lead cells, ``+inf``: always taken, so
    one ``k`` takes each segment's own drop) is the largest drop, not the largest count,
    and each step selects from its own largest drop's lead cells and the slots only.

    Args:
        draw (callable): ``draw(a, b)`` gives the ``(b - a, S)`` keys of steps ``a..b - 1``,
            ``-inf`` where a slot is never drawn (padding); called for consecutive blocks
            (of at most :data:`WALK_CELLS` cells), so a generator's stream is the same as
            one call for every step.
        drops (LongTensor): ``(G, J)`` what each segment drops at each step: its pool
            (valid slots not yet dropped) less what it keeps there.
        padded (_Padded): the layout of one key row, its ``k`` at least every drop.

    Returns:
        LongTensor: ``(S,)``, the dropping step of every slot (``J`` if none; also at
        padding, which the caller masks out).
    """
    steps, flat = drops.size(1), padded.flat
    k, width, num_segments = padded.k, padded.width, padded.segments
    if k == 0 or steps == 0:  # nothing dropped
        return torch.full((flat.numel(),), steps, dtype=torch.long, device=flat.device)
    # each step's own k, its largest drop (one read of all of them), its rows' lead cells
    # right-aligned before the slots: a step selects from its last k_j + largest cells
    tops = drops.max(dim=0).values.tolist()
    lead = (drops.new_tensor(tops).unsqueeze(1) - drops.t()).unsqueeze(-1)  # (J, G, 1)
    gone = torch.zeros((num_segments, width), dtype=torch.bool, device=flat.device)
    when = torch.full((num_segments, width), steps, dtype=torch.long, device=flat.device)
    block = max(1, WALK_CELLS // (num_segments * width))
    for start in range(0, steps, block):  # a loop over blocks of steps: bounded memory
        end = min(start + block, steps)
        keys = draw(start, end)
        dense = torch.full((end - start, num_segments, width), float("-inf"), dtype=keys.dtype,
                           device=keys.device)
        dense[:, :, :k].masked_fill_(padded.lead >= k - lead[start:end], float("inf"))
        dense.view(end - start, -1).index_copy_(1, flat, keys)
        for j in range(start, end):  # a loop over the steps: each pool is the step before's
            top = tops[j]
            if not top:
                continue
            row = dense[j - start]
            row[:, k:].masked_fill_(gone[:, k:], float("-inf"))  # dropped before: never again
            picked = torch.topk(row[:, k - top:], top, dim=1, sorted=False).indices
            gone[:, k - top:].scatter_(1, picked, True)
            when[:, k - top:].scatter_(1, picked, j)
    return when.view(-1).index_select(0, flat)


def padded_layout(segment: Tensor | None, num_segments: int, num_slots: int, rows: int,
                  counts: Tensor, layouts: dict | None = None) -> _Padded | None:
    """The dense layout of :func:`smallest` for ``rows`` key rows of ``num_slots`` keys and
    ``k`` the largest of ``counts`` (on their device), or :obj:`None` where the ranks are
    sorted for instead: under ``torch.compile`` (``topk`` takes a Python ``k``: a sync), or
    where the layout would exceed :data:`PAD_AT_MOST` times the keys.

    Args:
        segment (LongTensor, optional): ``(S,)`` the segment of every slot (:obj:`None`: one).
        num_segments (int): ``G``, more than every segment id.
        num_slots (int): ``S``.
        rows (int): ``R``, the key rows selected from at once.
        counts (LongTensor): the counts the layout must take (any shape; their largest is ``k``).
        layouts (dict, optional): layouts made before for the same ``segment``, by ``(rows,
            k)``; a new one is added. (default: :obj:`None`: made anew)
    """
    if torch.compiler.is_compiling() or PAD_AT_MOST <= 0:
        return None
    k = int(counts.max()) if counts.numel() else 0
    padded = None if layouts is None else layouts.get((rows, k))
    if padded is None:
        padded = _Padded(segment, num_segments, num_slots, rows, k, counts.device)
        if layouts is not None:
            layouts[(rows, k)] = padded
    return padded if padded.cells <= PAD_AT_MOST * max(4096, rows * num_slots) else None


def segment_masks(relation: str, counts: Tensor, valid: Tensor, segment: Tensor | None = None,
                  weights: Tensor | None = None, generator: torch.Generator | None = None,
                  layouts: dict | None = None) -> Tensor:
    """``(L, S)`` bool: the slots every layer keeps (row 0: the input layer).

    Args:
        relation (str): one of :data:`~dropedge_core.samplers.RELATIONS`.
        counts (LongTensor): ``(G, L)`` the valid slots each segment keeps at each layer
            (:meth:`~dropedge_core.samplers.EdgeSampler.counts_of` of the segments' sizes),
            each at most its segment's valid slots and monotone as the relation draws.
        valid (BoolTensor): ``(S,)`` the slots that are items.
        segment (LongTensor, optional): ``(S,)`` the segment of every slot, in ``0..G - 1``.
            (default: :obj:`None`: one segment, ``G = 1``)
        weights (Tensor, optional): ``(S,)`` positive weights (the kernel weighting), or
            :obj:`None` for uniform. (default: :obj:`None`)
        generator (torch.Generator, optional): the random source. (default: :obj:`None`)
        layouts (dict, optional): the caller's store of the selections' layouts for this
            ``segment`` and ``valid`` (a batch drawn again: :func:`padded_layout`).
            (default: :obj:`None`)

    Returns:
        BoolTensor: ``(L, S)``; never True at padding.

    Example:
        >>> masks = segment_masks("increasing", torch.tensor([[1, 2], [1, 1]]),
        ...                       torch.tensor([True, True, True, False, True]),
        ...                       torch.tensor([0, 0, 0, 1, 1]), generator=torch.Generator().manual_seed(0))
        >>> masks.sum(1).tolist(), bool((masks[0] <= masks[1]).all()), masks[:, 3].tolist()
        ([2, 3], True, [False, False])
    """
    num_layers, num_segments = counts.size(-1), counts.size(0)
    if relation == "all":
        return valid.unsqueeze(0).expand(num_layers, valid.numel())
    # (L, S): the count of every slot's segment at every layer
    per_slot = counts[segment].t() if segment is not None else counts[0].unsqueeze(1)
    if relation in ("shared", "independent") or weights is None:  # one batched selection
        rows = num_layers if relation == "independent" else 1  # uniform nesting: prefixes of one order
        keys = _keys(_uniforms(rows, valid, generator), valid, weights)
        if relation == "shared":
            layout = padded_layout(segment, num_segments, valid.numel(), 1, counts[:, :1], layouts)
            kept = (smallest(keys, counts[:, :1].t(), layout) if layout is not None
                    else segment_ranks(keys, segment, num_segments) < per_slot[:1])
            return (kept & valid).expand(num_layers, valid.numel())
        if relation == "independent":
            layout = padded_layout(segment, num_segments, valid.numel(), num_layers, counts, layouts)
            kept = (smallest(keys, counts.t(), layout) if layout is not None
                    else segment_ranks(keys, segment, num_segments) < per_slot)
            return kept & valid
        largest = counts.max(dim=1, keepdim=True).values  # (G, 1): the densest layer's count
        layout = padded_layout(segment, num_segments, valid.numel(), 1, largest, layouts)
        ranks = (smallest(keys, largest.t(), layout, ranked=True) if layout is not None
                 else segment_ranks(keys, segment, num_segments))
        return (ranks < per_slot) & valid
    # Algorithm 1: each layer redraws from the layer before, with fresh keys (a loop over
    # the layers: each pool depends on the one before)
    steps = range(num_layers - 1, -1, -1) if relation == "increasing" else range(num_layers)
    if not torch.compiler.is_compiling():  # eager: the walk in a dense layout, every key at once
        kept = counts.flip(1) if relation == "increasing" else counts  # (G, J): in drawing order
        pools = (valid.sum().reshape(1) if segment is None else torch.zeros(
            num_segments, dtype=torch.long, device=valid.device).scatter_add_(0, segment, valid.long()))
        drops = torch.cat([pools.unsqueeze(1), kept[:, :-1]], dim=1) - kept  # (G, J): each step's loss
        layout = padded_layout(segment, num_segments, valid.numel(), 1, drops, layouts)
        if layout is not None:
            def draw(start: int, end: int) -> Tensor:  # the keys of steps start..end - 1
                return _keys(_uniforms(end - start, valid, generator), valid, weights, float("-inf"))

            when = nested_walk(draw, drops, layout)
            at = torch.arange(num_layers, device=valid.device).unsqueeze(1)
            masks = (when > at) & valid  # (J, S): step j keeps what no step up to j dropped
            return masks.flip(0) if relation == "increasing" else masks
    at_once = generator is not None and torch.compiler.is_compiling()  # one break, not L
    drawn = _uniforms(num_layers, valid, generator) if at_once else None
    pool, masks = valid, [valid] * num_layers
    for layer in steps:
        uniforms = drawn[layer:layer + 1] if at_once else _uniforms(1, valid, generator)
        keys = _keys(uniforms, pool, weights)
        pool = (segment_ranks(keys, segment, num_segments)[0] < per_slot[layer]) & pool
        masks[layer] = pool
    return torch.stack(masks)
