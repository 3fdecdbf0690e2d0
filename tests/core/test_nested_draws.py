"""method/_nested_draws.py: the host walk of the nested weighted draws — its selection of
the largest keys above a floor (:func:`_largest`), the lazily compacted pool
(:func:`_Pool`), and the walk's masks whichever floor served. Expected sets come from
``np.argsort`` or a plain Python set model, marginals from brute force; never from the
function under test. (The walks' marginals on both devices' paths: test_samplers.py.)"""
from __future__ import annotations

import numpy as np
import pytest
import torch
from dropedge_core import _nested_draws as nested_draws
from dropedge_core import samplers

from tests.helpers import random_graph
from tests.helpers.references import WEIGHTS, nested_marginals


def largest_by_sorting(keys: np.ndarray, drop: int) -> set[int]:
    return set(np.argsort(keys, kind="stable")[keys.size - drop:].tolist())


# ------------------------------------------------------------------ _largest: the selection
@pytest.mark.parametrize("drop", [1, 7, 1000, 125_000, 249_999, 250_000])
@pytest.mark.parametrize("floor", ["none", "exact", "too high", "too low"])
def test_largest_is_the_exact_drop_largest_whatever_the_floor(drop, floor):
    """250k distinct keys (the pool size where a sample may bracket): the positions are the
    ``drop`` largest by sorting and the cut is the smallest of them, with no floor, the
    cut itself, a floor above it (too few keys: not used) and a floor far below it."""
    n = 250_000
    assert n >= nested_draws.SELECT_SAMPLE_ABOVE
    keys = np.random.default_rng(drop).permutation(n).astype(np.float32) + 1.0  # 1..n, distinct
    cut = float(n - drop + 1)
    given = {"none": 0.0, "exact": cut, "too high": cut + 0.5, "too low": 0.5}[floor]
    positions, found_cut = nested_draws._largest(keys, drop, given)
    assert positions.size == drop and set(positions.tolist()) == largest_by_sorting(keys, drop)
    assert found_cut == cut


@pytest.mark.parametrize("drop", [1, 3, 50, 99, 100])
def test_largest_on_a_small_pool_with_a_floor_too_high_falls_back_to_all_keys(drop):
    """Under SELECT_SAMPLE_ABOVE no sample is drawn: a floor above the cut means all keys."""
    keys = np.random.default_rng(drop).standard_exponential(100).astype(np.float32)
    positions, cut = nested_draws._largest(keys, drop, float(keys.max()) + 1.0)
    assert set(positions.tolist()) == largest_by_sorting(keys, drop)
    assert cut == np.sort(keys)[100 - drop]


def test_largest_never_takes_a_dead_position_while_live_ones_remain():
    """Dead positions carry key -1 (:class:`_Pool`): dropping every live key (k = 0) with no
    floor ranks all keys and must still take the live ones only."""
    keys = np.array([0.5, -1.0, 0.0, -1.0, 2.0], dtype=np.float32)  # a live key may be 0
    positions, cut = nested_draws._largest(keys, 3, 0.0)
    assert set(positions.tolist()) == {0, 2, 4} and cut == 0.0


def test_largest_with_ties_at_the_cut_drops_exactly_drop_and_all_above():
    keys = np.random.default_rng(1).integers(0, 50, 300_000).astype(np.float32)  # ties at every rank
    for drop in (10, 150_000, 299_990):
        for floor in (0.0, 1.0, 49.0):
            positions, cut = nested_draws._largest(keys, drop, floor)
            assert positions.size == np.unique(positions).size == drop
            value = np.sort(keys)[keys.size - drop]  # the drop-th largest
            assert cut == value and keys[positions].min() == value
            assert np.all(np.isin(np.flatnonzero(keys > value), positions))  # every larger key dropped


def test_sample_floor_brackets_the_cut_on_iid_keys():
    """The sample's floor is below the drop-th largest key (so it is used) and leaves a few
    thousand keys to rank, not the pool (a floor of 0 would be 'no floor')."""
    keys = np.random.default_rng(5).standard_exponential(1_000_000).astype(np.float32)
    for drop in (10, 10_000, 500_000, 999_000):
        floor = nested_draws._sample_floor(keys, drop)
        above = int(np.count_nonzero(keys >= floor))
        assert drop <= above <= drop + 60_000, (drop, floor, above)
    assert nested_draws._sample_floor(keys, 1_000_000) == 0.0  # drop all: no bracket below rank 0


def test_at_least_returns_the_keys_at_or_above_the_floor_only_when_there_are_enough():
    keys = np.array([0.2, 0.5, 0.9, 0.5, 0.1], dtype=np.float32)
    np.testing.assert_array_equal(nested_draws._at_least(keys, 3, 0.5), [1, 2, 3])  # ties at the floor count
    np.testing.assert_array_equal(nested_draws._at_least(keys, 1, 0.5), [1, 2, 3])
    assert nested_draws._at_least(keys, 4, 0.5) is None  # 3 keys >= 0.5: too few for 4
    np.testing.assert_array_equal(nested_draws._at_least(keys, 1, 0.15), [0, 1, 2, 3])
    assert nested_draws._at_least(keys, 1, 0.0) is None  # 0 is no floor
    assert nested_draws._at_least(keys, 1, -1.0) is None


@pytest.fixture
def ranked(monkeypatch):
    """The sizes of the arrays ``_largest`` ranks (its ``np.argpartition`` calls)."""
    sizes = []
    partition = np.argpartition

    def spy(values, kth):
        sizes.append(values.size)
        return partition(values, kth)

    monkeypatch.setattr(nested_draws.np, "argpartition", spy)
    return sizes


def test_largest_ranks_only_the_keys_above_the_floor_that_served(ranked, monkeypatch):
    """Which keys are ranked: above the given floor when it holds (also on a large pool,
    where the sample is not drawn then), above the sample's floor when it does not and the
    pool is large (SELECT_SAMPLE_ABOVE itself counts as large), else all keys."""
    keys = np.random.default_rng(0).permutation(1000).astype(np.float32) + 1.0  # 1..1000
    nested_draws._largest(keys, 10, 950.0)  # small pool, a floor that holds: 51 keys >= 950
    nested_draws._largest(keys, 10, 999.0)  # small pool, too high: all 1000
    monkeypatch.setattr(nested_draws, "SELECT_SAMPLE_ABOVE", 1000)
    monkeypatch.setattr(nested_draws, "SELECT_SAMPLE", 100)
    nested_draws._largest(keys, 10, 950.0)  # large pool, the floor holds: still 51
    nested_draws._largest(keys, 10, 999.0)  # large pool, too high: the sample's floor
    # sample: keys[::10], 100 keys; q = 0.99, rank = int(99 - 6 * sqrt(0.99) - 8) = 85, so the
    # floor is the 86th smallest of the sampled keys
    floor = np.sort(keys[::10])[85]
    assert ranked == [51, 1000, 51, int(np.count_nonzero(keys >= floor))] and ranked[-1] < 1000


def test_sample_floor_by_hand():
    """Sorted keys 0..n-1, so the strided sample is known: n = 819,200 and SELECT_SAMPLE
    8192 give a stride of 100, the sample 0, 100, ..., 819,100 (s = 8192). Dropping half
    (q = 0.5): rank = int(4096 - 6 * sqrt(8192 * 0.25) - 8) = int(3816.47) = 3816, the
    floor 381,600. On 100 keys (stride 1) dropping 62 (q = 0.38): rank = int(38 - 6 *
    sqrt(23.56) - 8) = int(0.88) = 0, the smallest key; dropping 66 (q = 0.34): rank =
    int(34 - 6 * sqrt(22.44) - 8) = int(-2.42) = -2, no floor."""
    assert nested_draws._sample_floor(np.arange(819_200, dtype=np.float32), 409_600) == 381_600.0
    small = np.arange(100, dtype=np.float32) + 5.0
    assert nested_draws._sample_floor(small, 62) == 5.0
    assert nested_draws._sample_floor(small, 66) == 0.0


# ------------------------------------------------------------------ _Pool: lazy compaction
def test_pool_against_a_set_model_through_compactions():
    """Drop items in rounds until one is left; after each round the ids alive equal a plain
    set's, dead positions' keys are -1, live keys are E / w of their own item (checked
    with the item's inverse weight), and the arrays shrink when an eighth is dead."""
    n = 64
    inverse = (np.arange(n, dtype=np.float32) + 1.0) / 10
    pool = nested_draws._Pool(inverse.copy())
    alive = set(range(n))
    rng = np.random.default_rng(0)
    sizes = []
    while len(alive) > 1:
        exponentials = rng.standard_exponential(pool.size).astype(np.float32)
        keys = pool.keys(exponentials, out=np.empty(pool.size, dtype=np.float32))
        live_positions = np.flatnonzero(keys >= 0)
        assert live_positions.size == pool.live == len(alive)
        ids = pool.ids[live_positions]
        assert set(ids.tolist()) == alive
        np.testing.assert_allclose(keys[live_positions], exponentials[live_positions] * inverse[ids])
        take = rng.choice(live_positions, size=max(1, len(alive) // 5), replace=False)
        dropped = pool.drop(take)
        assert set(dropped.tolist()) <= alive and len(set(dropped.tolist())) == take.size
        alive -= set(dropped.tolist())
        assert set(pool.alive().tolist()) == alive
        assert pool.size - pool.live <= nested_draws.COMPACT_ABOVE * pool.size  # dead: at most an eighth
        sizes.append(pool.size)
    assert pool.size < n and sizes == sorted(sizes, reverse=True)  # compacted, never grown


def test_pool_compacts_only_past_an_eighth_dead():
    """64 items: 8 dead (an eighth) keep the arrays; the 9th compacts them to the 55 live."""
    pool = nested_draws._Pool(np.ones(64, dtype=np.float32))
    assert pool.ids.dtype == np.int32  # half the memory of int64 ids
    pool.drop(np.arange(7))
    pool.drop(np.array([7]))
    assert (pool.size, pool.live, pool.num_dead) == (64, 56, 8)
    pool.drop(np.array([8]))
    assert (pool.size, pool.live, pool.num_dead) == (55, 55, 0)
    np.testing.assert_array_equal(pool.ids[:55], np.arange(9, 64))


# ------------------------------------------------------------------ the walk
def test_floor_changes_the_time_not_the_masks(monkeypatch):
    """Same seed, same masks whether each layer ranks keys above the previous cut (the
    default), above a sample's floor, or all keys (CUT_SLACK 0: no floor)."""
    g = random_graph(400, 2000, seed=2)
    sampler = samplers.make("dropedge++", p_min=0.2, p_max=0.9)
    default = sampler.sample(g, 12, generator=torch.Generator().manual_seed(3))
    monkeypatch.setattr(nested_draws, "CUT_SLACK", 0.0)
    everything = sampler.sample(g, 12, generator=torch.Generator().manual_seed(3))
    monkeypatch.setattr(nested_draws, "SELECT_SAMPLE_ABOVE", 400)
    monkeypatch.setattr(nested_draws, "SELECT_SAMPLE", 128)
    sampled = sampler.sample(g, 12, generator=torch.Generator().manual_seed(3))
    assert g.num_edges >= 1500 and torch.equal(default, everything) and torch.equal(default, sampled)
    counts = samplers.keep_counts(g.num_edges, 12, 0.2, 0.9)
    assert default.sum(1).tolist() == counts.tolist()


@pytest.mark.parametrize("slack, sample_above", [(nested_draws.CUT_SLACK, 10**9), (0.0, 3), (0.999, 10**9)])
def test_walk_matches_brute_force_marginals_with_each_floor(monkeypatch, slack, sample_above):
    """Algorithm 1's marginals (brute force over every subset sequence) with the cut floor,
    the sample's floor on tiny pools, and a floor so high that most layers fall back."""
    monkeypatch.setattr(nested_draws, "CUT_SLACK", slack)
    monkeypatch.setattr(nested_draws, "SELECT_SAMPLE_ABOVE", sample_above)
    monkeypatch.setattr(nested_draws, "SELECT_SAMPLE", 2)
    counts, draws = [1, 2, 4], 4000
    g = torch.Generator().manual_seed(9)
    freq = sum((nested_draws._last_layers_numpy(WEIGHTS, [2, 1, 0], counts, 3, g).unsqueeze(0)
                <= torch.arange(3).unsqueeze(1)).double() for _ in range(draws)) / draws
    ref = torch.tensor(nested_marginals(WEIGHTS.tolist(), counts), dtype=torch.float64)
    assert (freq - ref).abs().max() < 0.03, (freq, ref)


def test_walk_drops_everything_when_a_layer_keeps_nothing():
    """A layer keeping 0 items: every item's last layer is the one before (or never)."""
    last = nested_draws._last_layers_numpy(WEIGHTS, [2, 1, 0], [0, 2, 4], 3, torch.Generator().manual_seed(1))
    values = sorted(last.tolist())
    assert values == [1, 1, 2, 2, 3]  # 2 items reach layer 1, 2 more only layer 2, 1 never drawn


def test_walk_returns_int16_last_layers_at_64_layers():
    """The (E,) last layers are int16 (a quarter of int64's memory on a large graph)."""
    counts = samplers.keep_counts(5, 64, 0.2, 1.0).tolist()
    last = nested_draws._last_layers_numpy(WEIGHTS, list(range(63, -1, -1)), counts, 64, torch.Generator())
    assert last.dtype == torch.int16


@pytest.mark.parametrize("host_below", [10**9, 0], ids=["host", "device"])
def test_accelerator_walks_draw_from_the_generator_they_are_given(monkeypatch, host_below):
    """last_layers on a non-numpy device (NUMPY_DRAW_DEVICES emptied): the same seed gives
    the same draw and other seeds other draws, on the host walk and on the device walk."""
    monkeypatch.setattr(nested_draws, "NUMPY_DRAW_DEVICES", set())
    monkeypatch.setattr(nested_draws, "HOST_DRAW_BELOW", host_below)
    weights = torch.rand(400, generator=torch.Generator().manual_seed(0)) + 0.1
    counts = samplers.keep_counts(400, 6, 0.3, 0.8).tolist()

    def draw(seed):
        return nested_draws.last_layers(weights, list(range(5, -1, -1)), counts, 6,
                                        torch.Generator().manual_seed(seed))

    assert torch.equal(draw(4), draw(4))
    assert not torch.equal(draw(4), draw(5))
