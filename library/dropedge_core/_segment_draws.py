"""Every sampler's draw as fixed-shape tensor operations, over items grouped in segments.

:func:`segment_masks` is the sampler core that ``torch.compile`` traces whole and that draws
a PyG mini-batch in one pass: no Python number read from a tensor, no numpy, no tensor whose
size depends on the data, the keep counts a tensor. Its items are *slots*: a slot is either
valid (an item to draw from) or padding (a duplicate column, a self-loop), never kept and
never counted. Every slot belongs to a segment (a graph of a batch; one segment without
one), and layer ``l`` keeps ``counts[segment, l]`` of its segment's valid slots.

A selection is a rank, not a ``topk``: keys sorted within each segment (padding's keys are
``+inf``, so it ranks last), a slot kept where its rank is below its segment's count. That
is one sort per set of keys (two with segments), whatever the counts, and the counts never
leave the device.

**Law.** Each segment's masks follow the sampler's law on that segment alone, as
:mod:`dropedge_core.samplers` draws it: uniform or weighted successive sampling (the
``counts`` smallest keys ``U`` or ``E / w``, Efraimidis-Spirakis), one sample for every
layer (shared), one per layer (independent), nested by prefixes of one order (uniform
LID/LDD) or by redrawing each layer from the one before (kernel: Algorithm 1, a loop over
the layers, each step one batched rank).

**Stream.** Not :mod:`~dropedge_core.samplers`': keys are drawn for every slot, padding
included, so one seed gives other masks. This path serves where the samplers' stream cannot
be had (under ``torch.compile``, where the number of items is not known while tracing) or
was never promised (the graphs of a PyG batch, which the samplers draw one at a time).
"""
from __future__ import annotations

import torch
from torch import Tensor

#: The fewest random bits per key of the one-sort path of the uniform draws
#: (:func:`_uniform_ranks`; the segment id and the padding's bit take the rest of 62): 48,
#: up to 2**13 segments; more take float64 keys and two sorts.
RANDOM_BITS = 48


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


def _uniform_ranks(rows: int, valid: Tensor, segment: Tensor | None, num_segments: int,
                   generator: torch.Generator | None) -> Tensor | None:
    """:func:`segment_ranks` of fresh uniform keys in one integer sort, or :obj:`None` where
    that does not apply (traced by ``torch.compile``, or too many segments for the bits).

    The sort key is ``segment << (bits + 1) | random``, ``bits`` random bits (at least
    :data:`RANDOM_BITS`) and the padding's ``2**bits`` above every drawn value: graph-major,
    random within a graph, so one sort of integers does what the float keys' two sorts do
    (keys equal only where their random bits are, rarer than float64 ties). Measured ~2x
    faster than two sorts on a batch of 64 small graphs."""
    if torch.compiler.is_compiling():
        return None
    bits = 62 - max(1, (num_segments - 1).bit_length()) - 1
    if bits < RANDOM_BITS:
        return None
    device = generator.device if generator is not None else valid.device
    keys = torch.randint(0, 2**bits, (rows, valid.numel()), generator=generator, device=device)
    keys.masked_fill_(~valid, 2**bits)
    if segment is not None:
        keys.bitwise_or_(segment << (bits + 1))
    return _ranks_in_order(torch.argsort(keys, dim=-1), segment, num_segments)


def _uniforms(rows: int, valid: Tensor, generator: torch.Generator | None) -> Tensor:
    """``(rows, S)`` float64 uniforms in ``[0, 1)``, drawn where the generator lives.

    ``torch.compile`` cannot put a :class:`torch.Generator` in its graph: every draw from
    one is a graph break, so under compilation with a generator all of a call's rows are
    drawn at once (one break), the caller slicing them."""
    shape = (rows, valid.numel())
    if generator is None:  # no generator= at all: rand's generator overload takes no symbolic sizes
        return torch.rand(shape, device=valid.device, dtype=torch.float64)
    return torch.rand(shape, generator=generator, device=generator.device, dtype=torch.float64)


def _keys(uniforms: Tensor, valid: Tensor, weights: Tensor | None) -> Tensor:
    """Keys from ``uniforms`` (``(R, S)``), smallest first: ``U`` (uniform) or ``E / w``
    (weighted, ``E = -log(1 - U) ~ Exp(1)``, finite); ``+inf`` at the padding."""
    keys = uniforms if weights is None else torch.log1p(-uniforms).neg_().div_(weights.to(torch.float64))
    return keys.masked_fill(~valid, float("inf"))


def segment_masks(relation: str, counts: Tensor, valid: Tensor, segment: Tensor | None = None,
                  weights: Tensor | None = None, generator: torch.Generator | None = None) -> Tensor:
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
    # (L, S): the count of every slot's segment at every layer
    per_slot = counts[segment].t() if segment is not None else counts[0].unsqueeze(1)
    if relation == "all":
        return valid.unsqueeze(0).expand(num_layers, valid.numel())
    if relation in ("shared", "independent") or weights is None:  # one batched rank
        rows = num_layers if relation == "independent" else 1  # uniform nesting: prefixes of one order
        ranks = _uniform_ranks(rows, valid, segment, num_segments, generator) if weights is None else None
        if ranks is None:
            keys = _keys(_uniforms(rows, valid, generator), valid, weights)
            ranks = segment_ranks(keys, segment, num_segments)
        if relation == "shared":
            return ((ranks < per_slot[:1]) & valid).expand(num_layers, valid.numel())
        return (ranks < per_slot) & valid
    # Algorithm 1: each layer redraws from the layer before, with fresh keys (a loop over
    # the layers: each pool depends on the one before)
    steps = range(num_layers - 1, -1, -1) if relation == "increasing" else range(num_layers)
    at_once = generator is not None and torch.compiler.is_compiling()  # one break, not L
    drawn = _uniforms(num_layers, valid, generator) if at_once else None
    pool, masks = valid, [valid] * num_layers
    for layer in steps:
        uniforms = drawn[layer:layer + 1] if at_once else _uniforms(1, valid, generator)
        ranks = segment_ranks(_keys(uniforms, pool, weights), segment, num_segments)[0]
        pool = (ranks < per_slot[layer]) & pool
        masks[layer] = pool
    return torch.stack(masks)
