"""method/samplers.py: the paths and messages that ``python tools/mutation.py samplers`` found
unguarded — validation messages and bounds, float64 keep counts, the candidates of
successive sampling, weighted LDD (decreasing, kernel), LI with kernel weights, the kernel
cache, chunked kernel weights and device checks (devices are descriptors: no GPU needed).
Expected numbers come from numpy, brute force or the paper's formula, never from the
function under test."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from dropedge_core import _nested_draws as nested_draws
from dropedge_core import samplers
from dropedge_core.graph import Graph
from dropedge_core.samplers import EdgeSampler, SamplerError

from tests.helpers import random_graph
from tests.helpers.references import WEIGHTS, nested_marginals, successive_subset_probs


def gen(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


# ----------------------------------------------------------------------------- validation
def test_check_layers_bounds_and_message():
    samplers.check_layers(256)  # the top of the range is allowed
    for bad in (0, 257, 2.0):
        with pytest.raises(SamplerError) as err:
            samplers.check_layers(bad)
        assert str(err.value) == f"num_layers must be an integer in 1..256 (got {bad!r})"


@pytest.mark.parametrize("p_min, p_max, name, bad", [(1.5, 1.5, "p_min", 1.5), (0.1, -0.2, "p_max", -0.2)])
def test_check_rates_names_the_bad_rate(p_min, p_max, name, bad):
    with pytest.raises(SamplerError) as err:
        samplers.check_rates(p_min, p_max)
    assert str(err.value) == f"{name} must be a keep rate in [0, 1] (got {bad!r})"


def test_p_max_from_prime_refuses_above_one():
    assert samplers.p_max_from_prime(0.2, 1.0) == pytest.approx(1.0)
    with pytest.raises(SamplerError) as err:
        samplers.p_max_from_prime(0.2, 1.5)
    assert str(err.value) == "p_max' must be in [0, 1] (got 1.5)"


def test_messages_list_what_is_allowed():
    with pytest.raises(SamplerError) as err:
        samplers.kernel_weights(torch.ones(2, 2), torch.tensor([[0], [1]]), "cosine")
    assert str(err.value) == "unknown kernel 'cosine'; valid: linear, poly, rbf, reverse"
    with pytest.raises(SamplerError) as err:
        EdgeSampler(relation="sideways")
    assert str(err.value) == ("unknown layer relation 'sideways'; valid: all, shared, independent, "
                              "increasing, decreasing")
    with pytest.raises(SamplerError) as err:
        EdgeSampler(weighting="heavy")
    assert str(err.value) == "unknown weighting 'heavy'; valid: uniform, kernel"
    with pytest.raises(SamplerError) as err:
        EdgeSampler(kernel="cosine")
    assert str(err.value) == "unknown kernel 'cosine'; valid: linear, poly, rbf, reverse"
    with pytest.raises(SamplerError) as err:
        samplers.make("lid", rate=0.5)
    assert str(err.value) == ("unknown sampler parameter(s) ['rate']; valid: relation, weighting, p_min, "
                              "p_max, p, kernel, gamma, directed")


def test_names_of_design_points():
    assert EdgeSampler("increasing", "kernel").name == "dropedge++"
    assert EdgeSampler("shared", "uniform").name == "dropedge"
    assert EdgeSampler("independent", "kernel").name == "independent/kernel"
    assert EdgeSampler("independent", "kernel", name="mine").name == "mine"
    assert samplers.make("li", weighting="kernel").name == "independent/kernel"
    assert samplers.make(" LID ").name == "lid"


# ----------------------------------------------------------------------------- keep_counts
def test_keep_counts_is_exact_beyond_float32_and_may_keep_nothing():
    m = 2**24 + 1  # not a float32: a float32 rate table would give 2**24
    assert samplers.keep_counts(m, 1, 1.0, 1.0).tolist() == [m]
    assert samplers.keep_counts(m, 2, 0.0, 1.0).tolist() == [0, m]
    assert samplers.keep_counts(10, 3, 0.0, 1.0).tolist() == [0, 5, 10]  # floor(10 * 0.5); p_min 0 keeps 0


def test_keep_counts_allows_a_million_layers_and_no_more():
    counts = samplers.keep_counts(10, 300, 0.0, 1.0)  # beyond a model's 256: the schedule allows it
    assert counts[0] == 0 and counts[-1] == 10 and counts.numel() == 300
    assert samplers.keep_counts(10, 10**6, 0.0, 1.0).numel() == 10**6
    with pytest.raises(SamplerError, match=r"1\.\.1000000"):
        samplers.keep_counts(10, 10**6 + 1, 0.0, 1.0)


def test_nodrop_layer_counts_are_every_edge():
    g = random_graph(12, 20)
    assert samplers.make("nodrop").layer_counts(g, 3).tolist() == [g.num_edges] * 3


# ----------------------------------------------------------------------------- kernel weights
def test_kernel_weights_over_several_chunks_match_numpy():
    # 4096 features: the CPU budget of 2**17 values gives chunks of 32 edges, so 50 edges
    # take two chunks, the second a partial one
    rng = np.random.default_rng(0)
    x = rng.random((20, 4096)).astype(np.float32)
    u = rng.integers(0, 20, 50)
    v = rng.integers(0, 20, 50)
    edges = torch.tensor(np.stack([u, v]))
    dots = (x[u].astype(np.float64) * x[v]).sum(1)
    got = samplers.kernel_weights(torch.from_numpy(x), edges)  # the default kernel: linear
    assert got.dtype == torch.float32
    np.testing.assert_allclose(got.numpy(), dots + 1e-10, rtol=1e-5)
    sq = ((x[u].astype(np.float64) - x[v]) ** 2).sum(1)
    got = samplers.kernel_weights(torch.from_numpy(x) / 64, edges, "rbf", gamma=0.5)
    np.testing.assert_allclose(got.numpy(), np.exp(-0.5 * sq / 64**2) + 1e-10, rtol=1e-4)


def test_sampler_weights_use_its_gamma_and_kernel_each_cached_apart():
    g = random_graph(10, 15, seed=3)
    x = g.x.double().numpy()
    u, v = g.undirected_edges.numpy()
    rbf = EdgeSampler(kernel="rbf", gamma=1.0).weights(g)
    np.testing.assert_allclose(rbf.numpy(), np.exp(-((x[u] - x[v]) ** 2).sum(1)) + 1e-10, rtol=1e-5)
    linear = EdgeSampler(kernel="linear").weights(g)  # the same graph: not the rbf's cache entry
    np.testing.assert_allclose(linear.numpy(), (x[u] * x[v]).sum(1) + 1e-10, rtol=1e-5)
    assert EdgeSampler(weighting="uniform").weights(g) is None


# ----------------------------------------------------------------------------- successive_sample
def test_successive_sample_draws_only_candidates_in_proportion_to_weight():
    w = torch.tensor([1.0, 2.0, 3.0, 4.0])
    cand = torch.tensor([True, False, True, True])
    g = gen(1)
    draws = torch.stack([samplers.successive_sample(w, 1, g, candidates=cand) for _ in range(4000)])
    assert (draws.sum(1) == 1).all()
    freq = draws.double().mean(0).numpy()
    np.testing.assert_allclose(freq, [1 / 8, 0.0, 3 / 8, 4 / 8], atol=0.03)  # w / (1 + 3 + 4)
    # every candidate: exactly the candidates (k equal to their number is allowed)
    assert torch.equal(samplers.successive_sample(w, 3, g, candidates=cand), cand)
    with pytest.raises(SamplerError) as err:
        samplers.successive_sample(w, 4, g, candidates=cand)
    assert str(err.value) == "cannot keep 4 of 3 candidate edges"


def test_successive_sample_uniform_over_candidates_without_weights():
    cand = torch.tensor([False, True, True, False, True])
    g = gen(2)
    draws = torch.stack([samplers.successive_sample(None, 2, g, candidates=cand) for _ in range(3000)])
    assert (draws[:, ~cand] == 0).all() and (draws.sum(1) == 2).all()
    np.testing.assert_allclose(draws[:, cand].double().mean(0).numpy(), [2 / 3] * 3, atol=0.03)


def test_successive_sample_of_one_keeps_one():
    mask = samplers.successive_sample(None, 1, gen(0), num_items=6)
    assert mask.dtype == torch.bool and int(mask.sum()) == 1


# ----------------------------------------------------------------------------- nested, weighted LDD
def test_weighted_ldd_nests_downwards_with_exact_counts():
    g = random_graph(30, 60, seed=4)
    s = EdgeSampler("decreasing", "kernel", p_min=0.2, p_max=0.8)
    masks = s.sample(g, 4, generator=gen(3))
    expected = samplers.keep_counts(g.num_edges, 4, 0.2, 0.8).flip(0)  # bottom layer densest
    assert masks.sum(1).tolist() == expected.tolist()
    for lower, upper in zip(masks[:-1], masks[1:]):
        assert bool((upper & ~lower).sum() == 0)  # mask[l] ⊇ mask[l + 1]


def test_weighted_nested_decreasing_marginals_match_brute_force():
    """LDD with weights: layer 0 draws 4 of 5 from all, each layer above redraws from the
    one below (Algorithm 1 upside down); brute force over every subset sequence."""
    counts = torch.tensor([4, 2, 1])
    ref = torch.tensor(nested_marginals(WEIGHTS.tolist(), counts.flip(0).tolist()), dtype=torch.float64)
    g = gen(6)
    draws = 5000
    freq = sum(samplers.nested_masks(WEIGHTS, counts, g, increasing=False).double()
               for _ in range(draws)) / draws
    assert (freq - ref.flip(0)).abs().max() < 0.025, (freq, ref.flip(0))


@pytest.mark.parametrize("increasing", [True, False])
def test_weighted_nested_draws_of_fewer_than_half_match_brute_force(increasing):
    """A layer keeping fewer than half of its pool (2 of 5) takes the "k smallest keys"
    branch of the CPU loop (the other tests keep more than half: the "drop the largest")."""
    counts = [1, 2]
    ref = torch.tensor(nested_marginals(WEIGHTS.tolist(), counts), dtype=torch.float64)
    order = torch.tensor(counts if increasing else counts[::-1])
    g = gen(8)
    draws = 5000
    freq = sum(samplers.nested_masks(WEIGHTS, order, g, increasing=increasing).double()
               for _ in range(draws)) / draws
    want = ref if increasing else ref.flip(0)
    assert (freq - want).abs().max() < 0.025, (freq, want)


def _one_heavy_edge_graph() -> Graph:
    """A star 0-1, 0-2, 0-3 whose features make edge 0-1 weigh 1 under the linear kernel
    and the others 1e-10 (orthogonal features): a weighted draw of one edge keeps 0-1."""
    x = torch.tensor([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
    edges = torch.tensor([[0, 0, 0], [1, 2, 3]])
    none = torch.zeros(4, dtype=torch.bool)
    return Graph("star", x, torch.zeros(4, dtype=torch.long), edges, none, none, none, 1)


@pytest.mark.parametrize("relation", ["independent", "increasing", "decreasing", "shared"])
def test_kernel_samplers_follow_the_weights(relation):
    g = _one_heavy_edge_graph()
    # keep rate 1/3 of 3 edges: one edge, in every layer (shared: p = 1/3)
    s = EdgeSampler(relation, "kernel", p_min=1 / 3, p_max=1 / 3, p=1 / 3)
    for seed in range(20):
        masks = s.sample(g, 3, generator=gen(seed))
        assert masks.tolist() == [[True, False, False]] * 3, (seed, masks)


# ----------------------------------------------------------------------------- devices
def test_same_device_compares_type_and_index_when_both_have_one():
    same = samplers._same_device
    cuda0, cuda1, cuda = torch.device("cuda", 0), torch.device("cuda", 1), torch.device("cuda")
    assert not same(torch.device("cpu"), cuda)
    assert not same(cuda0, cuda1)
    assert same(cuda1, cuda1)
    assert same(cuda, cuda1) and same(cuda1, cuda)


def test_draw_device_is_the_generators_else_the_first_tensors_else_cpu():
    meta = torch.empty(3, device="meta")
    assert samplers.draw_device(None) == torch.device("cpu")
    assert samplers.draw_device(None, None, meta) == torch.device("meta")
    assert samplers.draw_device(gen(0), torch.ones(3)) == torch.device("cpu")
    with pytest.raises(SamplerError) as err:
        samplers.draw_device(gen(0), torch.ones(3), meta)
    assert str(err.value) == ("the random generator is on cpu but the edges/weights are on meta: "
                              "create it there, torch.Generator(device='meta')")


def test_sample_refuses_a_generator_on_another_device_than_the_graph():
    n = 4
    meta = Graph("meta", torch.empty(n, 2, device="meta"), torch.empty(n, dtype=torch.long, device="meta"),
                 torch.empty(2, 3, dtype=torch.long, device="meta"), *(torch.empty(n, dtype=torch.bool,
                                                                                  device="meta"),) * 3, 2)
    with pytest.raises(SamplerError, match="generator is on cpu but the edges/weights are on meta"):
        samplers.make("dropedge").sample(meta, 2, generator=gen(0))


def test_torch_draw_path_is_reproducible_from_its_generator():
    """The accelerator loop (run here on the CPU) draws from the generator it is given."""
    counts = [1, 2, 4]
    a = nested_draws._last_layers_torch(WEIGHTS, [2, 1, 0], counts, 3, gen(7))
    b = nested_draws._last_layers_torch(WEIGHTS, [2, 1, 0], counts, 3, gen(7))
    assert torch.equal(a, b)
    assert a.tolist().count(3) == 1 and a.tolist().count(0) == 1  # 1 never drawn, 1 in every layer


def test_brute_force_reference_is_a_distribution():
    """The helper the marginal tests lean on: probabilities of the k-subsets sum to 1."""
    probs = successive_subset_probs(WEIGHTS.tolist(), 2, tuple(range(5)))
    assert math.isclose(sum(probs.values()), 1.0) and len(probs) == 10


@pytest.mark.parametrize("increasing", [True, False])
def test_layer_masks_from_the_walk_agree_on_both_devices_paths(monkeypatch, increasing):
    """The masks' compare runs in numpy after the CPU walk and in torch after an
    accelerator's (NUMPY_DRAW_DEVICES emptied; the host walk draws the same ``last`` from
    the same seed): the same masks, each layer holding its count, nested."""
    counts = torch.tensor([4, 3, 1]) if not increasing else torch.tensor([1, 3, 4])
    cpu = samplers.nested_masks(WEIGHTS, counts, gen(3), increasing=increasing)
    monkeypatch.setattr(nested_draws, "NUMPY_DRAW_DEVICES", set())
    monkeypatch.setattr(nested_draws, "HOST_DRAW_BELOW", 10**9)
    accelerator = samplers.nested_masks(WEIGHTS, counts, gen(3), increasing=increasing)
    assert torch.equal(cpu, accelerator) and cpu.dtype == torch.bool
    assert cpu.sum(1).tolist() == counts.tolist()
    inner, outer = (cpu[:-1], cpu[1:]) if increasing else (cpu[1:], cpu[:-1])
    assert bool((inner <= outer).all())  # mask[l] ⊆ mask[l+1] (increasing), ⊇ (decreasing)


@pytest.mark.parametrize("name", ["dropedge", "fd"])
@pytest.mark.parametrize("p", [1.5, -0.1, float("nan")])
def test_a_bad_single_rate_is_named_p(name, p):
    """DropEdge's and FD's one rate is ``p`` in the message, word for word (not p_min)."""
    with pytest.raises(SamplerError) as err:
        samplers.make(name, p=p)
    assert str(err.value) == f"p must be a keep rate in [0, 1] (got {p!r})"
