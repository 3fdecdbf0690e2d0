"""The fixed-shape draws (dropedge_core._segment_draws, issue 46) against brute force: ranks
by hand, and every relation's law per segment, padding interleaved, from many segments drawn
in one call (each segment one independent draw)."""
from __future__ import annotations

from collections import Counter

import pytest
import torch
from dropedge_core import _segment_draws
from dropedge_core._segment_draws import segment_masks, segment_ranks
from scipy.stats import chisquare

from tests.helpers.references import WEIGHTS, nested_marginals, successive_subset_probs

ITEMS = WEIGHTS.numel()  # 5 items a segment, weights 1, 2, 3, 4, 10


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


def test_segment_ranks_by_hand():
    keys = torch.tensor([[0.5, 0.1, 0.9, 0.7, 0.2, 0.3],
                         [0.0, 0.4, 0.1, 0.2, 0.9, 0.8]])
    segment = torch.tensor([1, 0, 1, 0, 1, 0])
    # segment 0 holds slots 1, 3, 5; segment 1 slots 0, 2, 4; ranks ascending within each
    expected = torch.tensor([[1, 0, 2, 2, 0, 1],
                             [0, 1, 1, 0, 2, 2]])
    assert torch.equal(segment_ranks(keys, segment, 2), expected)
    assert torch.equal(segment_ranks(keys), keys.argsort(dim=1).argsort(dim=1))


def _segments(copies: int, pad_every: int = 2) -> tuple[torch.Tensor, ...]:
    """``copies`` segments of the 5 weighted items, a padding slot after every ``pad_every``
    items (weight 1000: it would win every draw it took part in), the segments interleaved
    slot by slot (not contiguous). Returns valid, segment, weights, item (-1: padding)."""
    item = []
    for i in range(ITEMS):
        item.append(i)
        if i % pad_every == pad_every - 1:
            item.append(-1)
    item = torch.tensor(item)
    per = item.numel()
    valid = (item >= 0).repeat(copies)
    segment = torch.arange(copies).repeat_interleave(per)
    perm = torch.randperm(valid.numel(), generator=gen(123))
    weights = torch.where(item >= 0, WEIGHTS[item.clamp_min(0)], torch.tensor(1000.0, dtype=torch.float64))
    return valid[perm], segment[perm], weights.repeat(copies)[perm].float(), item.repeat(copies)[perm]


def _kept_sets(masks: torch.Tensor, segment: torch.Tensor, item: torch.Tensor, copies: int) -> list[tuple]:
    """Per segment, the tuple (one per layer) of the item sets kept."""
    sets = [[set() for _ in range(masks.size(0))] for _ in range(copies)]
    rows, cols = masks.nonzero(as_tuple=True)
    for layer, s, i in zip(rows.tolist(), segment[cols].tolist(), item[cols].tolist()):
        sets[s][layer].add(i)
    return [tuple(frozenset(x) for x in per) for per in sets]


@pytest.mark.parametrize("padded", [True, False], ids=["topk", "sorted"])
@pytest.mark.parametrize("increasing", [True, False])
def test_nested_weighted_marginals_per_segment_match_brute_force(increasing, padded, monkeypatch):
    """DropEdge++ (Algorithm 1: each layer redrawn from the one before) per segment: the
    inclusion frequencies of 6000 segments drawn in one call match the brute-force marginals;
    no padding slot is ever kept, and every layer keeps exactly its count. Both selections:
    the padded ``topk`` (eager) and the sorted ranks (traced, or a layout too large)."""
    if not padded:
        monkeypatch.setattr(_segment_draws, "PAD_AT_MOST", 0)
    copies, counts = 6000, [1, 2, 4]
    valid, segment, weights, item = _segments(copies)
    layer_counts = torch.tensor(counts if increasing else counts[::-1]).expand(copies, 3)
    masks = segment_masks("increasing" if increasing else "decreasing", layer_counts, valid, segment,
                          weights, gen(5))
    assert not bool(masks[:, ~valid].any())
    per_segment = torch.zeros(3, copies, dtype=torch.long).index_add_(1, segment, masks.long())
    assert torch.equal(per_segment, layer_counts.t())
    ref = torch.tensor(nested_marginals(WEIGHTS.tolist(), counts), dtype=torch.float64)
    if not increasing:
        ref = ref.flip(0)
    freq = torch.zeros(3, ITEMS, dtype=torch.float64)
    rows, cols = masks.nonzero(as_tuple=True)
    freq.index_put_((rows, item[cols]), torch.ones(rows.numel(), dtype=torch.float64), accumulate=True)
    freq /= copies
    assert (freq - ref).abs().max() < 0.025, (freq, ref)
    nested = masks[:-1] <= masks[1:] if increasing else masks[:-1] >= masks[1:]
    assert bool(nested.all())


@pytest.mark.parametrize("padded", [True, False], ids=["topk", "sorted"])
@pytest.mark.parametrize("relation", ["shared", "independent"])
def test_weighted_one_sample_and_independent_layers_are_successive_sampling(relation, padded, monkeypatch):
    """FD's one sample and kernel-weighted LI's layers: each a successive sample of its
    count (chi-square against the subsets' brute-force probabilities), LI's layers of
    other counts independent (the pair of layers' joint law is the product)."""
    if not padded:
        monkeypatch.setattr(_segment_draws, "PAD_AT_MOST", 0)
    copies = 8000
    valid, segment, weights, item = _segments(copies)
    counts = torch.tensor([2, 2] if relation == "shared" else [2, 3]).expand(copies, 2)
    masks = segment_masks(relation, counts, valid, segment, weights, gen(11))
    seen = Counter(_kept_sets(masks, segment, item, copies))
    law = {}
    p0 = successive_subset_probs(WEIGHTS.tolist(), int(counts[0, 0]), tuple(range(ITEMS)))
    if relation == "shared":
        law = {(s, s): p for s, p in p0.items()}
    else:
        p1 = successive_subset_probs(WEIGHTS.tolist(), int(counts[0, 1]), tuple(range(ITEMS)))
        law = {(a, b): pa * pb for a, pa in p0.items() for b, pb in p1.items()}
    assert set(seen) <= set(law)
    keys = sorted(law, key=repr)
    observed = [seen.get(k, 0) for k in keys]
    expected = [law[k] * copies for k in keys]
    assert chisquare(observed, expected).pvalue > 1e-3


@pytest.mark.parametrize("padded", [True, False], ids=["topk", "sorted"])
@pytest.mark.parametrize("relation", ["increasing", "decreasing", "independent", "shared"])
def test_uniform_draws_are_uniform_subsets_per_segment(relation, padded, monkeypatch):
    """Uniform keys, both selections (the padded ``topk``; the sorted ranks, forced here):
    every segment's top layer (LID; bottom for LDD) is a uniform subset
    of its count (chi-square over the 10 two-item subsets), padding never kept, the layers
    nested or shared as the relation says."""
    if not padded:
        monkeypatch.setattr(_segment_draws, "PAD_AT_MOST", 0)
    copies = 5000
    valid, segment, weights, item = _segments(copies)
    counts = {"increasing": [2, 4], "decreasing": [4, 2], "independent": [2, 3], "shared": [2, 2]}[relation]
    layer_counts = torch.tensor(counts).expand(copies, 2)
    masks = segment_masks(relation, layer_counts, valid, segment, None, gen(3))
    assert not bool(masks[:, ~valid].any())
    per_segment = torch.zeros(2, copies, dtype=torch.long).index_add_(1, segment, masks.long())
    assert torch.equal(per_segment, layer_counts.t())
    if relation == "increasing":
        assert bool((masks[0] <= masks[1]).all())
    if relation == "decreasing":
        assert bool((masks[0] >= masks[1]).all())
    if relation == "shared":
        assert torch.equal(masks[0], masks[1])
    two = 0 if counts[0] == 2 else 1  # the layer that keeps 2 of 5
    seen = Counter(sets[two] for sets in _kept_sets(masks, segment, item, copies))
    assert len(seen) == 10
    assert chisquare(list(seen.values())).pvalue > 1e-3


def test_all_keeps_every_item_and_no_padding():
    valid, segment, _, _ = _segments(3)
    masks = segment_masks("all", torch.tensor([[5, 5]] * 3), valid, segment)
    assert torch.equal(masks, valid.expand(2, -1))


def test_one_segment_without_segment_ids_keeps_the_counts():
    valid = torch.tensor([True, False, True, True, False, True])
    masks = segment_masks("increasing", torch.tensor([[1, 3]]), valid, None, torch.rand(6) + 0.1, gen(1))
    assert masks.sum(1).tolist() == [1, 3] and not bool(masks[:, ~valid].any())
    assert bool((masks[0] <= masks[1]).all())


RELATIONS = ["shared", "independent", "increasing", "decreasing"]


def _uneven(seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Segments of 3, 5, 8 and 13 slots, interleaved, each with two padding slots: valid,
    segment, weights."""
    sizes = [3, 5, 8, 13]
    segment = torch.cat([torch.full((n + 2,), g) for g, n in enumerate(sizes)])
    valid = torch.cat([torch.tensor([True] * n + [False, False]) for n in sizes])
    perm = torch.randperm(segment.numel(), generator=gen(seed))
    weights = torch.rand(segment.numel(), generator=gen(seed + 1)) + 0.05
    return valid[perm], segment[perm], weights


@pytest.mark.parametrize("padded", [True, False], ids=["topk", "sorted"])
@pytest.mark.parametrize("weighted", [False, True], ids=["uniform", "kernel"])
@pytest.mark.parametrize("relation", RELATIONS)
def test_segments_of_other_sizes_keep_their_own_counts(relation, weighted, padded, monkeypatch):
    """Four segments of 3..13 items, each its own counts per layer (written by hand, monotone
    as the relation draws): exactly those kept, nested or shared as the relation says."""
    if not padded:
        monkeypatch.setattr(_segment_draws, "PAD_AT_MOST", 0)
    valid, segment, weights = _uneven()
    counts = {"shared": [[2, 2, 2], [1, 1, 1], [5, 5, 5], [13, 13, 13]],
              "independent": [[3, 0, 1], [2, 5, 4], [7, 1, 8], [6, 13, 9]],
              "increasing": [[0, 1, 3], [1, 3, 4], [2, 5, 8], [4, 9, 12]],
              "decreasing": [[3, 2, 0], [5, 3, 1], [8, 6, 2], [12, 7, 5]]}[relation]
    counts = torch.tensor(counts)
    for seed in range(5):
        masks = segment_masks(relation, counts, valid, segment, weights if weighted else None, gen(seed))
        assert not bool(masks[:, ~valid].any())
        kept = torch.zeros(3, 4, dtype=torch.long).index_add_(1, segment, masks.long())
        assert torch.equal(kept, counts.t()), (seed, kept)
        if relation == "increasing":
            assert bool((masks[:-1] <= masks[1:]).all())
        if relation == "decreasing":
            assert bool((masks[:-1] >= masks[1:]).all())
        if relation == "shared":
            assert bool((masks == masks[:1]).all())


@pytest.mark.parametrize("padded", [True, False], ids=["topk", "sorted"])
@pytest.mark.parametrize("relation", RELATIONS)
def test_counts_of_zero_keep_nothing(relation, padded, monkeypatch):
    if not padded:
        monkeypatch.setattr(_segment_draws, "PAD_AT_MOST", 0)
    valid, segment, weights = _uneven()
    for w in (None, weights):
        masks = segment_masks(relation, torch.zeros(4, 3, dtype=torch.long), valid, segment, w, gen())
        assert masks.shape == (3, valid.numel()) and not bool(masks.any())


def test_no_slots_give_empty_masks():
    empty = torch.zeros(0, dtype=torch.bool)
    for relation in RELATIONS:
        masks = segment_masks(relation, torch.zeros(1, 3, dtype=torch.long), empty, None,
                              torch.zeros(0), gen())
        assert masks.shape == (3, 0)


@pytest.mark.parametrize("relation", RELATIONS)
def test_a_seed_gives_the_same_masks_and_the_generator_is_the_only_source(relation):
    """The same generator state, the same masks; torch's global random state plays no part
    when a generator is given, and is the source when none is."""
    valid, segment, weights = _uneven()
    counts = torch.tensor([[1, 2, 3], [2, 3, 4], [3, 4, 6], [5, 7, 10]])
    if relation == "decreasing":
        counts = counts.flip(1)
    if relation == "shared":
        counts = counts[:, :1].expand(4, 3)
    for w in (None, weights):
        torch.manual_seed(1)
        first = segment_masks(relation, counts, valid, segment, w, gen(3))
        torch.manual_seed(2)
        assert torch.equal(segment_masks(relation, counts, valid, segment, w, gen(3)), first)
        draws = {segment_masks(relation, counts, valid, segment, w, gen(s)).numpy().tobytes()
                 for s in range(8)}
        assert len(draws) > 1  # the seed matters
        torch.manual_seed(5)
        unseeded = segment_masks(relation, counts, valid, segment, w)
        torch.manual_seed(5)
        assert torch.equal(segment_masks(relation, counts, valid, segment, w), unseeded)


def test_keys_are_float64_so_that_ties_are_negligible():
    """2**16 uniform keys hold no tie in float64; float32's 24 bits would tie about 128 pairs,
    and a tie is broken by position, not at random."""
    keys = _segment_draws._uniforms(1, torch.ones(2**16, dtype=torch.bool), gen(0))
    assert keys.dtype == torch.float64 and keys.unique().numel() == 2**16
    unseeded = _segment_draws._uniforms(1, torch.ones(2**16, dtype=torch.bool), None)
    assert unseeded.dtype == torch.float64 and unseeded.unique().numel() == 2**16


def _numpy_walk(keys, segment, valid, drops):
    """The nested walk by hand: at every step, in every segment, drop the ``drops[g, j]``
    largest keys among the valid slots no step before dropped (numpy, one slot at a time)."""
    import numpy as np
    keys, segment, valid, drops = keys.numpy(), segment.numpy(), valid.numpy(), drops.numpy()
    when = np.full(keys.shape[1], keys.shape[0])
    for j in range(keys.shape[0]):
        for g in range(drops.shape[0]):
            pool = [s for s in range(keys.shape[1]) if segment[s] == g and valid[s] and when[s] > j]
            for s in sorted(pool, key=lambda s: -keys[j, s])[:drops[g, j]]:
                when[s] = j
    return torch.from_numpy(when)


@pytest.mark.parametrize("seed, fractions", [
    (0, (0.9, 0.6, 0.5, 0.5, 0.1)), (1, (0.9, 0.6, 0.5, 0.5, 0.1)), (2, (0.9, 0.6, 0.5, 0.5, 0.1)),
    (3, (0.5,)),  # one step
    (4, (0.89, 0.78, 0.67)),  # at most one slot a step from every segment: k = 1
])
def test_nested_walk_drops_what_a_walk_by_hand_drops(seed, fractions, monkeypatch):
    """:func:`_segment_draws.nested_walk` (eager DropEdge++'s walk in the dense layout) gives
    every slot the step a numpy walk over the same keys drops it at: segments of 0 to 9 slots
    interleaved, padding among them, drops of 0 at some steps, a step where nothing drops;
    one step; drops of at most one."""
    g = gen(seed)
    sizes = torch.tensor([0, 9, 1, 4, 7, 3])
    segment = torch.repeat_interleave(torch.arange(sizes.numel()), sizes)
    segment = segment[torch.randperm(segment.numel(), generator=g)]  # interleaved
    valid = torch.rand(segment.numel(), generator=g) > 0.2
    if len(fractions) == 3:
        valid[:] = True
    pools = torch.zeros(sizes.numel(), dtype=torch.long).scatter_add_(0, segment, valid.long())
    steps = len(fractions)
    kept = (pools.unsqueeze(1) * torch.tensor(fractions)).floor().long()  # non-increasing
    drops = torch.cat([pools.unsqueeze(1), kept[:, :-1]], dim=1) - kept
    keys = torch.rand(steps, segment.numel(), generator=g, dtype=torch.float64)
    keys = keys.masked_fill(~valid, float("-inf"))
    layout = _segment_draws.padded_layout(segment, sizes.numel(), segment.numel(), 1, drops)
    when = _segment_draws.nested_walk(lambda a, b: keys[a:b], drops, layout)
    ref = _numpy_walk(keys, segment, valid, drops)
    assert torch.equal(when[valid], ref[valid])
    # in blocks of one step's cells (or fewer), then of two: the keys asked for block by
    # block, each block as large as the cells allow
    for per_block, cells in ((1, 1), (2, 2 * layout.segments * layout.width)):
        monkeypatch.setattr(_segment_draws, "WALK_CELLS", cells)
        asked = []
        when = _segment_draws.nested_walk(lambda a, b, asked=asked: asked.append((a, b)) or keys[a:b],
                                          drops, layout)
        assert torch.equal(when[valid], ref[valid])
        assert asked == [(a, min(a + per_block, steps)) for a in range(0, steps, per_block)]
    assert bool((ref[valid] < steps).any())  # something is dropped
    if len(fractions) == 5:
        assert int((drops == 0).all(0).sum()) >= 1  # the step without drops is there
    if len(fractions) == 3:
        assert int(drops.max()) == 1


@pytest.mark.parametrize("relation", ["increasing", "decreasing"])
def test_both_selections_of_the_kernel_walk_draw_the_same_masks(relation, monkeypatch):
    """In eager mode the nested kernel walk draws the same keys whichever selection serves
    (the dense walk, or the sorted ranks where a layout would be too large) and keeps the
    same sets: one seed, the same masks."""
    copies = 50
    valid, segment, weights, _ = _segments(copies)
    counts = torch.tensor([1, 2, 4] if relation == "increasing" else [4, 2, 1]).expand(copies, 3)
    dense = segment_masks(relation, counts, valid, segment, weights, gen(7))
    monkeypatch.setattr(_segment_draws, "PAD_AT_MOST", 0)
    ranked = segment_masks(relation, counts, valid, segment, weights, gen(7))
    assert torch.equal(dense, ranked)


@pytest.mark.parametrize("cells", [1, 1000])  # blocks of one step, of three (40 rows of 8 cells)
def test_the_kernel_walk_in_blocks_of_steps_draws_the_same_masks(cells, monkeypatch):
    """The eager kernel walk lays its steps out in blocks of at most ``WALK_CELLS`` cells
    (bounded memory at any depth): blocks of one step, or of a few, draw the same keys from
    the generator and keep the same sets as one block of every step."""
    copies = 40
    valid, segment, weights, _ = _segments(copies)
    counts = torch.tensor([1, 1, 2, 3, 4, 4, 5]).expand(copies, 7)
    whole = segment_masks("increasing", counts, valid, segment, weights, gen(11))
    monkeypatch.setattr(_segment_draws, "WALK_CELLS", cells)
    blocked = segment_masks("increasing", counts, valid, segment, weights, gen(11))
    assert torch.equal(whole, blocked)
    per_segment = torch.zeros(7, copies, dtype=torch.long).index_add_(1, segment, blocked.long())
    assert torch.equal(per_segment, counts.t())
