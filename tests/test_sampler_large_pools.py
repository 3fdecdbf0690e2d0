"""The large-pool selection of the CPU sampler (pools of ``SELECT_SAMPLE_ABOVE`` keys or
more: DropEdge++ on a big graph) against exact selection and against the brute-force
marginals of successive sampling."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from dropedge_core.method import samplers

from .conftest import random_graph
from .test_samplers import WEIGHTS, nested_marginals


def exact_smallest(keys: np.ndarray, k: int) -> np.ndarray:
    keep = np.zeros(keys.size, dtype=bool)
    keep[np.argsort(keys, kind="stable")[:k]] = True
    return keep


@pytest.mark.parametrize("k", [1, 7, 1000, 125_000, 249_999, 250_000, 0])
def test_smallest_on_a_large_pool_is_the_exact_k_smallest(k):
    n = 250_000
    assert n >= samplers.SELECT_SAMPLE_ABOVE  # the bracketed path, not heap selection
    keys = np.random.default_rng(k).standard_exponential(n).astype(np.float32)
    keep = samplers._smallest(keys, k)
    assert keep.dtype == bool and int(keep.sum()) == k
    np.testing.assert_array_equal(keep, exact_smallest(keys, k))


def test_smallest_with_ties_across_the_kth_place_keeps_k():
    n = 300_000
    rng = np.random.default_rng(1)
    keys = rng.integers(0, 50, n).astype(np.float32)  # many equal keys at every rank
    for k in (10, 150_000, 299_990):
        keep = samplers._smallest(keys, k)
        assert int(keep.sum()) == k
        kth = np.sort(keys)[k - 1]
        assert keys[keep].max() <= kth and np.all(keep[keys < kth])  # all below the k-th value kept


@pytest.fixture
def large_pool_path(monkeypatch):
    """The large-pool branch on small pools: thresholds lowered, logic unchanged."""
    monkeypatch.setattr(samplers, "SELECT_SAMPLE_ABOVE", 400)
    monkeypatch.setattr(samplers, "SELECT_SAMPLE", 128)


def test_large_pool_path_gives_the_same_masks_as_the_small_one(large_pool_path, monkeypatch):
    """Same seed, same masks: the large path draws the same exponential stream layer by
    layer and selects the same k smallest keys."""
    g = random_graph(400, 2000, seed=2)
    sampler = samplers.make("dropedge++", p_min=0.2, p_max=0.9)
    large = sampler.sample(g, 6, generator=torch.Generator().manual_seed(3))
    monkeypatch.setattr(samplers, "SELECT_SAMPLE_ABOVE", 10**9)
    small = sampler.sample(g, 6, generator=torch.Generator().manual_seed(3))
    assert g.num_edges >= 1500 and torch.equal(large, small)


def test_large_pool_path_matches_brute_force_marginals(monkeypatch):
    monkeypatch.setattr(samplers, "SELECT_SAMPLE_ABOVE", 3)
    monkeypatch.setattr(samplers, "SELECT_SAMPLE", 2)
    counts, draws = [1, 2, 4], 4000
    g = torch.Generator().manual_seed(9)
    freq = sum((samplers._last_layers_numpy(WEIGHTS, [2, 1, 0], counts, 3, g).unsqueeze(0)
                <= torch.arange(3).unsqueeze(1)).double() for _ in range(draws)) / draws
    ref = torch.tensor(nested_marginals(WEIGHTS.tolist(), counts), dtype=torch.float64)
    assert (freq - ref).abs().max() < 0.03, (freq, ref)
