"""Properties of every sampler: exact keep counts, nesting,
shared rows, symmetry, seed determinism, and weighted inclusion frequencies against a
brute-force reference of successive sampling."""
from __future__ import annotations

import math
from collections import Counter

import pytest
import torch
from dropedge_core import _nested_draws as nested_draws
from dropedge_core import _segment_draws as segment_draws
from dropedge_core import normalization, samplers
from dropedge_core.samplers import (
    EdgeSampler,
    SamplerError,
    independent_masks,
    keep_counts,
    kernel_weights,
    nested_masks,
    successive_sample,
)
from scipy.stats import chisquare

from tests.helpers import random_graph
from tests.helpers.references import WEIGHTS, nested_marginals, successive_subset_probs

P_MIN, P_MAX = 0.2, 0.9


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


def test_keep_counts_formula():
    m, num_layers = 5278, 8
    counts = keep_counts(m, num_layers, 0.05, 1.0)
    expected = [math.floor(m * (0.05 + 0.95 * l / 7)) for l in range(num_layers)]
    assert counts.tolist() == expected
    assert keep_counts(100, 1, 0.2, 0.7).tolist() == [70]
    assert keep_counts(10, 4, 0.3, 0.3).tolist() == [3, 3, 3, 3]  # 10 * 0.3 is 3, not 2.999...


@pytest.mark.parametrize("name", samplers.NAMES)
@pytest.mark.parametrize("num_layers", [1, 2, 5])
def test_exact_counts_and_shape(name, num_layers):
    g = random_graph(30, 60)
    s = samplers.make(name, p_min=P_MIN, p_max=P_MAX)
    masks = s.sample(g, num_layers, gen())
    assert masks.shape == (num_layers, g.num_edges) and masks.dtype == torch.bool
    m = g.num_edges
    k = keep_counts(m, num_layers, P_MIN, P_MAX)
    expected = {
        "nodrop": [m] * num_layers,
        "dropedge": [math.floor(m * (P_MIN + P_MAX) / 2)] * num_layers,
        "fd": [math.floor(m * (P_MIN + P_MAX) / 2)] * num_layers,
        "li": k.tolist(),
        "lid": k.tolist(),
        "dropedge++": k.tolist(),
        "ldd": k.flip(0).tolist(),
    }[name]
    assert masks.sum(1).tolist() == expected


@pytest.mark.parametrize("name", ["lid", "dropedge++"])
def test_lid_nesting(name):
    g = random_graph(40, 120)
    masks = samplers.make(name, p_min=0.1, p_max=0.9).sample(g, 7, gen(3))
    for lower, upper in zip(masks[:-1], masks[1:]):
        assert not (lower & ~upper).any(), "mask[l] must be a subset of mask[l+1]"


def test_ldd_nesting_and_bottom_densest():
    g = random_graph(40, 120)
    masks = samplers.make("ldd", p_min=0.1, p_max=0.9).sample(g, 7, gen(3))
    for lower, upper in zip(masks[:-1], masks[1:]):
        assert not (upper & ~lower).any(), "mask[l] must contain mask[l+1]"
    assert masks[0].sum() > masks[-1].sum()


@pytest.mark.parametrize("name", ["dropedge", "fd", "nodrop"])
def test_shared_rows_identical(name):
    g = random_graph(30, 60)
    masks = samplers.make(name, p_min=P_MIN, p_max=P_MAX).sample(g, 6, gen(1))
    assert (masks == masks[0]).all()


def test_dropedge_p_overrides_midpoint():
    g = random_graph(30, 60)
    masks = samplers.make("dropedge", p=0.25).sample(g, 3, gen())
    assert masks.sum(1).tolist() == [math.floor(g.num_edges * 0.25)] * 3


@pytest.mark.parametrize("name", samplers.NAMES)
def test_seed_determinism(name):
    g = random_graph(30, 60)
    s = samplers.make(name, p_min=P_MIN, p_max=P_MAX)
    a, b = s.sample(g, 5, gen(7)), s.sample(g, 5, gen(7))
    assert torch.equal(a, b)
    if name != "nodrop":
        c = s.sample(g, 5, gen(8))
        assert not torch.equal(a, c)


@pytest.mark.parametrize("name", samplers.NAMES)
def test_undirected_masks_give_symmetric_adjacency(name):
    g = random_graph(25, 50)
    masks = samplers.make(name, p_min=P_MIN, p_max=P_MAX).sample(g, 3, gen(2))
    for ei, w in normalization.adjacencies(g, masks, "NA"):
        a = normalization.to_dense(ei, w, g.num_nodes)
        assert torch.allclose(a, a.T)


def test_directed_sampling_samples_directions_separately():
    g = random_graph(30, 80)
    s = samplers.make("dropedge++", p_min=0.3, p_max=0.6, directed=True)
    masks = s.sample(g, 4, gen(5))
    m = g.num_edges
    assert masks.shape == (4, 2 * m)
    assert masks.sum(1).tolist() == keep_counts(2 * m, 4, 0.3, 0.6).tolist()
    # some edge keeps one direction only, so some layer's adjacency is not symmetric
    assert (masks[:, :m] != masks[:, m:]).any()
    dense = [normalization.to_dense(ei, torch.ones_like(w), g.num_nodes)
             for ei, w in normalization.adjacencies(g, masks, "AN")]
    assert any(not torch.equal(a, a.T) for a in dense)


def test_two_axis_design_other_points():
    g = random_graph(30, 60)
    li_kernel = samplers.make("li", weighting="kernel")
    assert (li_kernel.relation, li_kernel.weighting) == ("independent", "kernel")
    masks = li_kernel.sample(g, 4, gen())
    assert masks.sum(1).tolist() == li_kernel.layer_counts(g, 4).tolist()
    assert EdgeSampler("decreasing", "kernel").sample(g, 3, gen()).shape == (3, g.num_edges)


def test_p_max_prime_roundtrip():
    assert samplers.p_max_prime(0.2, 0.6) == pytest.approx(0.5)
    assert samplers.p_max_from_prime(0.2, 0.5) == pytest.approx(0.6)
    assert samplers.p_max_prime(1.0, 1.0) == 0.0
    for p_min, prime in [(0.05, 1.0), (0.8, 0.2), (0.0, 0.0), (0.5, 0.3)]:
        p_max = samplers.p_max_from_prime(p_min, prime)
        assert samplers.p_max_prime(p_min, p_max) == pytest.approx(prime)


@pytest.mark.parametrize("kwargs, fragment", [
    (dict(p_min=-0.1, p_max=0.5), "p_min"),
    (dict(p_min=0.2, p_max=1.5), "p_max"),
    (dict(p_min=0.8, p_max=0.5), "p_min must be <= p_max"),
    (dict(kernel="cosine"), "unknown kernel 'cosine'"),
    (dict(wobble=1), "unknown sampler parameter"),
])
def test_bad_parameters_raise_one_line(kwargs, fragment):
    with pytest.raises(SamplerError, match=fragment) as info:
        samplers.make("dropedge++", **kwargs)
    assert "\n" not in str(info.value)


def test_unknown_sampler_lists_valid():
    with pytest.raises(SamplerError, match="valid: nodrop, dropedge"):
        samplers.make("dropnode")


def test_kernel_weights_match_formulas():
    x = torch.tensor([[1.0, 0.0], [0.5, 0.5], [-1.0, 0.0]])
    edges = torch.tensor([[0, 0, 1], [1, 2, 2]])
    dot = torch.tensor([0.5, -1.0, -0.5])
    floor = samplers.KERNEL_FLOOR
    torch.testing.assert_close(kernel_weights(x, edges, "linear"), dot.clamp(min=0) + floor)
    torch.testing.assert_close(kernel_weights(x, edges, "poly"), dot**2 + floor)
    torch.testing.assert_close(kernel_weights(x, edges, "reverse"), (1 - dot) + floor)
    sq = torch.tensor([0.5, 4.0, 2.5])
    torch.testing.assert_close(kernel_weights(x, edges, "rbf"), torch.exp(-6.0 * sq) + floor)
    assert (kernel_weights(x, edges, "linear") > 0).all()  # zero similarity stays drawable


# ---- weighted inclusion frequencies vs brute force ----------------------------------







def test_successive_sample_subset_distribution_chi_square():
    draws, k = 20000, 2
    counts = torch.full((draws,), k)
    masks = independent_masks(WEIGHTS, counts, gen(11))  # one pass for all draws
    observed = Counter(frozenset(torch.nonzero(row).flatten().tolist()) for row in masks)
    ref = successive_subset_probs(WEIGHTS.tolist(), k, tuple(range(5)))
    keys = sorted(ref, key=sorted)
    obs = [observed.get(s, 0) for s in keys]
    exp = [ref[s] * draws for s in keys]
    assert sum(obs) == draws
    assert chisquare(obs, exp).pvalue > 1e-3


def test_successive_sample_single_call_matches_reference():
    ref = successive_subset_probs(WEIGHTS.tolist(), 3, tuple(range(5)))
    marg = [sum(p for s, p in ref.items() if i in s) for i in range(5)]
    g = gen(4)
    freq = torch.stack([successive_sample(WEIGHTS, 3, g) for _ in range(4000)]).double().mean(0)
    assert torch.allclose(freq, torch.tensor(marg, dtype=torch.float64), atol=0.03)


def test_nested_weighted_marginals_match_brute_force():
    counts = torch.tensor([1, 2, 4])
    ref = torch.tensor(nested_marginals(WEIGHTS.tolist(), counts.tolist()), dtype=torch.float64)
    g = gen(5)
    draws = 6000
    freq = sum(nested_masks(WEIGHTS, counts, g).double() for _ in range(draws)) / draws
    assert (freq - ref).abs().max() < 0.025, (freq, ref)


@pytest.mark.parametrize("draw", [nested_draws._last_layers_numpy, nested_draws._last_layers_host,
                                  nested_draws._last_layers_torch],
                         ids=["cpu-numpy", "accelerator-host", "accelerator-torch"])
def test_nested_draw_paths_match_brute_force(draw):
    """The three walks behind nested_masks — numpy on the CPU, numpy selection on the host
    for an accelerator's small pools, torch on an accelerator's large ones (all run here
    on the CPU) — give Algorithm 1's marginals, in both drawing directions."""
    counts, draws = [1, 2, 4], 4000
    g = gen(9)
    down = sum((draw(WEIGHTS, [2, 1, 0], counts, 3, g).unsqueeze(0) <= torch.arange(3).unsqueeze(1)).double()
               for _ in range(draws)) / draws
    ref = torch.tensor(nested_marginals(WEIGHTS.tolist(), counts), dtype=torch.float64)
    assert (down - ref).abs().max() < 0.03, (down, ref)
    up_counts = counts[::-1]  # LDD: layer 0 draws 4 from all, layer 2 keeps 1
    layers = torch.arange(3).unsqueeze(1)
    up = sum((layers <= draw(WEIGHTS, [0, 1, 2], up_counts, -1, g).unsqueeze(0)).double()
             for _ in range(draws)) / draws
    assert (up - ref.flip(0)).abs().max() < 0.03, (up, ref.flip(0))


def test_nested_redraw_is_not_prefix_of_one_ordering():
    """The reference itself: redrawing from the layer above (Algorithm 1) gives other
    marginals than prefixes of one weighted ordering; we implement the former."""
    counts = [1, 2, 4]
    nested = nested_marginals(WEIGHTS.tolist(), counts)
    prefix = [sum(p for s, p in successive_subset_probs(WEIGHTS.tolist(), 1, tuple(range(5))).items()
                  if i in s) for i in range(5)]
    assert max(abs(a - b) for a, b in zip(nested[0], prefix)) > 0.01


def test_kernel_sampler_uses_kernel_weights(csbm):
    s = samplers.make("fd", p=0.5)
    torch.testing.assert_close(s.weights(csbm), kernel_weights(csbm.x, csbm.undirected_edges, "linear"))
    # heavier edges are kept more often: compare inclusion of the top and bottom weight deciles
    w = s.weights(csbm)
    freq = torch.stack([s.sample(csbm, 1, gen(i))[0] for i in range(200)]).float().mean(0)
    order = torch.argsort(w)
    tenth = w.numel() // 10
    assert freq[order[-tenth:]].mean() > freq[order[:tenth]].mean() + 0.05


def intra_share(graph, mask):
    u, v = graph.undirected_edges[:, mask]
    return float((graph.y[u] == graph.y[v]).float().mean())


def test_fd_keeps_more_intra_class_edges_than_dropedge_on_cora(cora):
    """FD's point (paper §3.2): similar features -> likely same class -> kept more."""
    fd, de = samplers.make("fd", p=0.5), samplers.make("dropedge", p=0.5)
    fd_share = sum(intra_share(cora, fd.sample(cora, 1, gen(i))[0]) for i in range(10)) / 10
    de_share = sum(intra_share(cora, de.sample(cora, 1, gen(i))[0]) for i in range(10)) / 10
    all_share = intra_share(cora, torch.ones(cora.num_edges, dtype=torch.bool))
    assert de_share == pytest.approx(all_share, abs=0.01)
    assert fd_share > de_share + 0.01, (fd_share, de_share)


# ---- the CPU's selection by cut (issue 46): the ranks' masks, bit for bit -------------


def _top_by_numpy(keys: torch.Tensor, counts: list[int]) -> torch.Tensor:
    """Row l: its counts[l] largest keys, by a full numpy sort (the reference)."""
    import numpy as np

    out = np.zeros(tuple(keys.shape), dtype=bool)
    for row, k in enumerate(counts):
        out[row, np.argsort(-keys[row].numpy(), kind="stable")[:k]] = True
    return torch.from_numpy(out)


@pytest.mark.parametrize("padded", [True, False], ids=["topk", "argsort"])
@pytest.mark.parametrize("weighted", [False, True])
def test_independent_masks_keep_each_rows_largest_keys(weighted, padded, monkeypatch):
    """The masks are the rows' largest keys: the same keys (one generator state) ranked by
    numpy, for counts 0..E, by either selection (the padded topk; the argsort of every row,
    which torch.compile takes, forced here)."""
    if not padded:
        monkeypatch.setattr(segment_draws, "PAD_AT_MOST", 0)
    cases = [(n, [n // 3, n // 2, n - 1]) for n in (2, 7, 50, 333)]  # cuts inside every row
    cases += [(1, [0, 1]), (50, [0, 50, 25])]  # rows that keep nothing, or everything
    for seed, (n, counts) in enumerate(cases):
        counts = torch.tensor(counts)
        weights = torch.rand(n, generator=gen(seed)) + 0.01 if weighted else None
        keys = samplers._gumbel_keys((counts.numel(), n), weights, gen(100 + seed), torch.device("cpu"))
        masks = independent_masks(weights, counts, gen(100 + seed), num_items=n)
        assert torch.equal(masks, _top_by_numpy(keys, counts.tolist())), (n, counts)


def test_keep_counts_of_many_graphs_are_each_graphs_counts():
    """A tensor of edge counts (a batch's graphs) gives, row by row, floor(M_b * rate_l)
    computed here by hand, the same as one int at a time."""
    sizes = [0, 1, 3, 10, 77, 100, 1000]
    for p_min in (0.3, 0.57):  # 0.57 * 100 = 56.99999999999999: the 1e-9 makes it 57
        rates = [p_min + (0.8 - p_min) * l / 4 for l in range(5)]
        got = keep_counts(torch.tensor(sizes), 5, p_min, 0.8)
        assert got.tolist() == [[math.floor(m * r + 1e-9) for r in rates] for m in sizes]
    for name in ("nodrop", "dropedge", "li", "ldd"):
        s = samplers.make(name)
        assert all(torch.equal(row, s.counts_of(m, 5)) for row, m in zip(s.counts_of(torch.tensor(sizes), 5),
                                                                           sizes)), name
