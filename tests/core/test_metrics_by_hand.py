"""metrics.py against independent numbers: edge numbers by hand (path, star) and from dense
boolean products, the MEN estimate's formula in numpy, diagnostics against numpy formulas."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from dropedge_core import metrics
from dropedge_core.graph import Graph

from tests.helpers import random_graph


def make_graph(n: int, edges: list[tuple[int, int]]) -> Graph:
    """A graph on ``n`` nodes whose undirected edges are ``edges`` (u < v, sorted)."""
    ue = torch.tensor(edges, dtype=torch.long).reshape(-1, 2).T
    none = torch.zeros(n, dtype=torch.bool)
    return Graph("hand", torch.ones(n, 1), torch.zeros(n, dtype=torch.long), ue,
                 none.clone(), none.clone(), none.clone(), 1)


def dense_products(graph: Graph, masks: torch.Tensor) -> list[np.ndarray]:
    """Boolean ``Π_{i<=l} (A^(i) + I)`` for every layer, from numpy dense matrices."""
    n = graph.num_nodes
    u, v = graph.undirected_edges.numpy()
    m = u.size
    masks = masks.numpy()
    prod = np.eye(n, dtype=bool)
    out = []
    for row in masks:
        a = np.eye(n, dtype=bool)
        fwd, bwd = (row[:m], row[m:]) if row.size == 2 * m else (row, row)
        a[u[fwd], v[fwd]] = True
        a[v[bwd], u[bwd]] = True
        prod = (prod.astype(np.int64) @ a.astype(np.int64)) > 0
        out.append(prod)
    return out


PATH = [(0, 1), (1, 2), (2, 3)]  # 0 - 1 - 2 - 3
STAR = [(0, 1), (0, 2), (0, 3), (0, 4)]  # centre 0, leaves 1..4


def test_edge_numbers_of_a_path_by_hand():
    g = make_graph(4, PATH)
    every = torch.ones(3, 3, dtype=torch.bool)
    # A+I: 4 loops + 6 directed edges; (A+I)^2 adds the 4 pairs at distance 2; ^3 is full
    assert metrics.edge_numbers(g, every) == [10, 14, 16]
    assert metrics.men(g, every) == pytest.approx(40 / 3)
    # layer 0 keeps only 1-2, layer 1 only 2-3: 4+2 = 6, then 1 reaches {1,2,3}, 2 too, 3 -> {2,3}
    masks = torch.tensor([[False, True, False], [False, False, True]])
    # rows of the product: 0:{0}, 1:{1,2,3}, 2:{1,2,3}, 3:{2,3} -> 1+3+3+2 = 9
    assert metrics.edge_numbers(g, masks) == [6, 9]
    assert metrics.men(g, masks) == pytest.approx(7.5)


def test_edge_numbers_of_a_star_by_hand():
    g = make_graph(5, STAR)
    every = torch.ones(2, 4, dtype=torch.bool)
    assert metrics.edge_numbers(g, every) == [5 + 8, 25]
    none = torch.zeros(3, 4, dtype=torch.bool)
    assert metrics.edge_numbers(g, none) == [5, 5, 5]
    one = torch.tensor([[True, False, False, False], [False, False, False, True]])
    # layer 0: 0-1 -> 7; layer 1 adds 0-4: row 0 {0,1,4}, 1 {0,1,4}, 4 {4,0}, 2 {2}, 3 {3} -> 10
    assert metrics.edge_numbers(g, one) == [7, 10]


def test_edge_numbers_of_directed_masks_by_hand():
    g = make_graph(4, PATH)
    # only 0->1 (column 0) and 2->1 (column 3 + 1 = 4: the reverse of 1-2)
    masks = torch.zeros(1, 6, dtype=torch.bool)
    masks[0, 0] = True
    masks[0, 4] = True
    assert metrics.edge_numbers(g, masks) == [6]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_edge_numbers_match_boolean_products_with_many_words(seed):
    """150 nodes: three 64-bit words of sources per row."""
    g = random_graph(150, 180, seed=seed)
    gen = torch.Generator().manual_seed(seed)
    masks = torch.rand(4, g.num_edges, generator=gen) < 0.6
    ref = [int(p.sum()) for p in dense_products(g, masks)]
    assert metrics.edge_numbers(g, masks) == ref
    directed = torch.rand(3, 2 * g.num_edges, generator=gen) < 0.5
    assert metrics.edge_numbers(g, directed) == [int(p.sum()) for p in dense_products(g, directed)]


def test_reach_counts_of_chosen_sources_are_rows_of_the_product():
    g = random_graph(140, 200, seed=4)
    masks = torch.rand(3, g.num_edges, generator=torch.Generator().manual_seed(4)) < 0.7
    prods = dense_products(g, masks)
    sources = torch.tensor([139, 0, 70, 5, 64, 63, 128, 1] + list(range(10, 70)))
    counts = metrics._reach_counts(g, masks, sources)
    ref = np.stack([p[sources.numpy()].sum(1) for p in prods])
    assert counts.shape == (3, sources.numel())
    np.testing.assert_array_equal(counts.numpy(), ref)


class _DeviceName(str):
    """A device string whose ``.type`` is not ``"cpu"``: sends :func:`metrics._reach_counts`
    down its torch (accelerator) path while every tensor stays on the CPU."""

    type = "accelerator"


class _OffCpuGraph:
    def __init__(self, graph: Graph):
        self._g = graph
        self.num_nodes = graph.num_nodes
        self.edge_index = graph.edge_index
        self.directed_mask = graph.directed_mask

        class _Edges:
            device = _DeviceName("cpu")
        self.undirected_edges = _Edges()


def test_torch_reach_path_matches_boolean_products():
    g = random_graph(40, 70, seed=5)
    masks = torch.rand(4, g.num_edges, generator=torch.Generator().manual_seed(5)) < 0.6
    prods = dense_products(g, masks)
    sources = torch.tensor([3, 0, 39, 17])
    counts = metrics._reach_counts(_OffCpuGraph(g), masks, sources)
    ref = np.stack([p[sources.numpy()].sum(1) for p in prods])
    np.testing.assert_array_equal(counts.numpy(), ref)


def test_layer_operators_are_transposed_adjacency_plus_identity():
    g = make_graph(4, PATH)
    masks = torch.tensor([[True, False, True], [False, True, False]])
    ops = metrics._layer_operators(g, masks)
    assert len(ops) == 2
    a0 = np.eye(4)
    a0[0, 1] = a0[1, 0] = a0[2, 3] = a0[3, 2] = 1
    np.testing.assert_array_equal(ops[0].to_dense().numpy(), a0.T)
    # directed: only 1->2 kept; the operator is its transpose (entry [2, 1])
    d = torch.zeros(1, 6, dtype=torch.bool)
    d[0, 1] = True
    op = metrics._layer_operators(g, d)[0].to_dense().numpy()
    ref = np.eye(4)
    ref[2, 1] = 1
    np.testing.assert_array_equal(op, ref)


def test_column_bit_counts_against_numpy(monkeypatch):
    rng = np.random.default_rng(0)
    packed = rng.integers(0, 2**63, size=(23, 3), dtype=np.int64).astype(np.uint64)
    packed[:, 2] |= np.uint64(1) << np.uint64(63)  # the top bit too
    bits = np.array([[(int(w) >> b) & 1 for w in row for b in range(64)] for row in packed])
    for num_bits in (192, 150, 64, 1):
        np.testing.assert_array_equal(metrics._column_bit_counts(packed, num_bits), bits.sum(0)[:num_bits])
    monkeypatch.setattr(metrics, "COUNT_ROWS", 5)  # 4 full blocks, one of 3 rows
    got = metrics._column_bit_counts(packed, 130)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, bits.sum(0)[:130])


def test_exact_edge_numbers_refuse_graphs_above_the_limit(monkeypatch):
    monkeypatch.setattr(metrics, "EXACT_ALLOWED_MAX_NODES", 4)
    assert metrics.edge_numbers(make_graph(4, PATH), torch.ones(1, 3, dtype=torch.bool)) == [10]
    with pytest.raises(ValueError, match=r"N=5 > 4: use men_estimate"):
        metrics.edge_numbers(make_graph(5, STAR), torch.ones(1, 4, dtype=torch.bool))


def _sampled_sources(n: int, s: int, seed: int) -> np.ndarray:
    return torch.randperm(n, generator=torch.Generator().manual_seed(seed))[:s].numpy()


def test_men_estimate_matches_its_formula_in_numpy():
    g = random_graph(90, 130, seed=6)
    masks = torch.rand(4, g.num_edges, generator=torch.Generator().manual_seed(6)) < 0.5
    prods = dense_products(g, masks)
    n, s = 90, 20
    est = metrics.men_estimate(g, masks, num_sources=s, generator=torch.Generator().manual_seed(7))
    src = _sampled_sources(n, s, 7)
    rows = np.stack([p[src].sum(1) for p in prods]).astype(float)  # (L, S)
    per_source = rows.mean(0)
    assert est.sources == s
    assert est.value == pytest.approx(n * per_source.mean())
    se = n * per_source.std(ddof=1) / math.sqrt(s) * math.sqrt((n - s) / (n - 1))
    assert est.stderr == pytest.approx(se)
    assert est.edge_numbers == pytest.approx(tuple(n * rows.mean(1)))
    assert isinstance(est.edge_numbers, tuple) and len(est.edge_numbers) == 4
    # num_sources is cast with int(); more sources than nodes -> every node, exact, stderr 0
    exact = [int(p.sum()) for p in prods]
    full = metrics.men_estimate(g, masks, num_sources=500.0)
    assert full.sources == n and full.stderr == 0.0
    assert full.value == pytest.approx(sum(exact) / 4)
    assert full.edge_numbers == pytest.approx(tuple(float(c) for c in exact))


def test_men_estimate_of_one_source_and_of_one_node():
    g = make_graph(4, PATH)
    every = torch.ones(3, 3, dtype=torch.bool)
    one = metrics.men_estimate(g, every, num_sources=1, generator=torch.Generator().manual_seed(0))
    src = int(_sampled_sources(4, 1, 0)[0])
    per_row = {0: [2, 3, 4], 1: [3, 4, 4], 2: [3, 4, 4], 3: [2, 3, 4]}[src]
    assert one.sources == 1 and one.stderr == 0.0
    assert one.value == pytest.approx(4 * sum(per_row) / 3)
    single = make_graph(1, [])
    est = metrics.men_estimate(single, torch.zeros(2, 0, dtype=torch.bool), num_sources=3)
    assert est.value == 1.0 and est.stderr == 0.0 and est.sources == 1


def test_men_estimate_default_is_512_sources_drawn_on_the_cpu():
    g = random_graph(600, 700, seed=8)
    masks = torch.ones(2, g.num_edges, dtype=torch.bool)
    est = metrics.men_estimate(g, masks)  # no generator: drawn from torch's global one on the CPU
    assert est.sources == 512 and est.stderr > 0


def test_men_measure_rule():
    g = random_graph(60, 90, seed=9)
    masks = torch.rand(3, g.num_edges, generator=torch.Generator().manual_seed(9)) < 0.5
    exact = [int(p.sum()) for p in dense_products(g, masks)]
    for kwargs in ({}, {"num_sources": 0}, {"num_sources": 60}, {"num_sources": 99},
                   {"num_sources": None, "exact_up_to": 60}):
        r = metrics.men_measure(g, masks, **kwargs)
        assert r == metrics.MenEstimate(sum(exact) / 3, 0.0, 60, tuple(float(c) for c in exact)), kwargs
        assert all(isinstance(c, float) for c in r.edge_numbers)
    est = metrics.men_measure(g, masks, num_sources=59, generator=torch.Generator().manual_seed(1))
    assert est.sources == 59 and est.stderr > 0
    ref = metrics.men_estimate(g, masks, 59, generator=torch.Generator().manual_seed(1))
    assert est == ref
    above = metrics.men_measure(g, masks, exact_up_to=59, default_sources=25,
                                generator=torch.Generator().manual_seed(2))
    assert above.sources == 25 and above.stderr > 0
    src = _sampled_sources(60, 25, 2)
    rows = np.stack([p[src].sum(1) for p in dense_products(g, masks)]).astype(float)
    assert above.value == pytest.approx(60 * rows.mean())


def test_men_measure_defaults_above_twenty_thousand_nodes():
    n = 20_001
    edges = torch.stack([torch.arange(n - 1), torch.arange(1, n)])  # a path
    none = torch.zeros(n, dtype=torch.bool)
    g = Graph("path", torch.ones(n, 1), torch.zeros(n, dtype=torch.long), edges,
              none, none, none, 1)
    masks = torch.rand(2, n - 1, generator=torch.Generator().manual_seed(0)) < 0.5  # uneven rows
    r = metrics.men_measure(g, masks, generator=torch.Generator().manual_seed(0))
    assert r.sources == 512 and r.stderr > 0


def test_layer_distances_against_numpy():
    gen = torch.Generator().manual_seed(0)
    hidden = [torch.randn(5, 3, generator=gen, dtype=torch.float64) for _ in range(4)]
    arr = np.stack([h.numpy() for h in hidden])
    ref = np.sqrt(((arr[1:] - arr[:-1]) ** 2).sum(axis=(1, 2)))
    d = metrics.layer_distances(hidden)
    assert d.dtype == torch.float32 and d.shape == (3,)
    np.testing.assert_allclose(d.numpy(), ref, rtol=1e-5)
    assert metrics.layer_distances(hidden[:1]).shape == (0,)
    assert metrics.layer_distances([]).shape == (0,)
    two = metrics.layer_distances(hidden[:2])
    np.testing.assert_allclose(two.numpy(), ref[:1], rtol=1e-5)
    # L = 5 (four hidden outputs): D^(1), D^(2) only
    assert metrics.average_distance(hidden) == pytest.approx(ref[:2].mean(), rel=1e-5)
    # L = 4: one distance in range -> D^(1)
    assert metrics.average_distance(hidden[:3]) == pytest.approx(ref[0], rel=1e-5)
    # L = 3: fewer than two in range -> the mean of all available (just D^(1))
    assert metrics.average_distance(hidden[:2]) == pytest.approx(ref[0], rel=1e-5)
    assert math.isnan(metrics.average_distance(hidden[:1]))
    assert math.isnan(metrics.average_distance([]))


def test_average_distance_for_three_layers_uses_all():
    # L = 3 has distances only through the fallback; L = 4 keeps d[:1] of two
    steps = [torch.zeros(1, 1), torch.full((1, 1), 2.0), torch.full((1, 1), 7.0)]
    assert metrics.average_distance(steps) == pytest.approx(2.0)  # L = 4: D^(1)
    assert metrics.average_distance(steps[:2]) == pytest.approx(2.0)


def test_dirichlet_energy_against_numpy_with_isolated_nodes():
    edges = [(0, 1), (0, 2), (1, 2), (2, 3)]  # nodes 4, 5 isolated
    ue = np.array(edges).T
    h = np.random.default_rng(1).normal(size=(6, 2))
    deg = np.bincount(ue.ravel(), minlength=6) + 1.0
    s = h / np.sqrt(deg)[:, None]
    ref = ((s[ue[0]] - s[ue[1]]) ** 2).sum() / 6
    got = metrics.dirichlet_energy(torch.tensor(h), torch.tensor(ue))
    assert got == pytest.approx(ref, rel=1e-5)
    assert isinstance(got, float)


def numpy_mad(h: np.ndarray) -> float:
    norm = np.linalg.norm(h, axis=1, keepdims=True)
    unit = h / np.maximum(norm, 1e-12)
    dist = np.maximum(1.0 - unit @ unit.T, 0.0)
    nz = dist > 1e-8
    cnt = nz.sum(1)
    per = (dist * nz).sum(1) / np.maximum(cnt, 1)
    return float(per[cnt > 0].mean()) if (cnt > 0).any() else 0.0


def test_mad_against_numpy():
    rng = np.random.default_rng(2)
    h = rng.normal(size=(12, 4))
    h[3] = h[0] * 2.5  # same direction: distance 0, left out of the means
    h[5] = 0.0  # zero row: unit vector 0, distance 1 to all
    h[7] = -h[1]  # opposite: distance 2
    got = metrics.mad(torch.tensor(h))
    assert got == pytest.approx(numpy_mad(h), rel=1e-5)
    # a small hand case: rows e1, e1, e2 -> row 0: {1}, row 1: {1}, row 2: {1, 1}: mean 1
    assert metrics.mad(torch.tensor([[1.0, 0.0], [2.0, 0.0], [0.0, 3.0]])) == pytest.approx(1.0)
    # rows e1, -e1, e2 -> row 0: (2 + 1)/2, row 1: (2 + 1)/2, row 2: (1 + 1)/2
    opposite = torch.tensor([[1.0, 0.0], [-1.0, 0.0], [0.0, 3.0]])
    assert metrics.mad(opposite) == pytest.approx((1.5 + 1.5 + 1) / 3)
    assert metrics.mad(torch.ones(3, 2)) == 0.0


def test_mad_subsamples_above_max_nodes():
    h = torch.randn(30, 3, generator=torch.Generator().manual_seed(3))
    idx = torch.randperm(30, generator=torch.Generator().manual_seed(4))[:10]
    got = metrics.mad(h, max_nodes=10, generator=torch.Generator().manual_seed(4))
    assert got == pytest.approx(numpy_mad(h[idx].numpy().astype(float)), rel=1e-5)
    assert metrics.mad(h, max_nodes=30) == pytest.approx(numpy_mad(h.numpy().astype(float)), rel=1e-5)
    torch.manual_seed(0)
    ref_idx = torch.randperm(30)[:12]
    torch.manual_seed(0)
    ref = numpy_mad(h[ref_idx].numpy().astype(float))
    assert metrics.mad(h, max_nodes=12) == pytest.approx(ref, rel=1e-5)


def test_mad_default_subset_is_2000_nodes():
    h = torch.randn(2001, 3, generator=torch.Generator().manual_seed(5))
    idx = torch.randperm(2001, generator=torch.Generator().manual_seed(6))[:2000]
    got = metrics.mad(h, generator=torch.Generator().manual_seed(6))
    assert got == pytest.approx(numpy_mad(h[idx].numpy().astype(np.float64)), rel=1e-4)
    assert got != pytest.approx(numpy_mad(h.numpy().astype(np.float64)), rel=1e-7, abs=0)


def brute_components(n: int, edges: list[tuple[int, int]]) -> list[int]:
    label = list(range(n))
    changed = True
    while changed:
        changed = False
        for u, v in edges:
            m = min(label[u], label[v])
            if label[u] != m or label[v] != m:
                label[u] = label[v] = m
                changed = True
    return label


def same_partition(a, b) -> bool:
    return all((a[i] == a[j]) == (b[i] == b[j]) for i in range(len(a)) for j in range(len(a)))


def test_component_labels_and_cache():
    edges = [(0, 1), (1, 2), (4, 5), (6, 8)]
    g = make_graph(9, edges)
    labels = metrics.component_labels(g)
    assert labels.dtype == torch.long and labels.shape == (9,)
    assert same_partition(labels.tolist(), brute_components(9, edges))
    assert len(set(labels.tolist())) == 5
    assert metrics.component_labels(g) is labels  # the memo is read back, not recomputed


def numpy_subspace(h: np.ndarray, n: int, edges, relative: bool) -> float:
    ue = np.array(edges).T.reshape(2, -1)
    deg = np.bincount(ue.ravel(), minlength=n) + 1.0
    comp = brute_components(n, edges)
    proj = np.zeros_like(h)
    for c in set(comp):
        e = np.where(np.array(comp) == c, np.sqrt(deg), 0.0)
        proj += np.outer(e, e @ h) / (e @ e)
    dist = np.linalg.norm(h - proj)
    if relative:
        total = np.linalg.norm(h)
        return dist / total if total > 0 else 0.0
    return dist


def test_subspace_distance_against_numpy_projection():
    edges = [(0, 1), (0, 2), (1, 2), (2, 3), (5, 6)]  # components {0..3}, {4}, {5, 6}, {7}
    g = make_graph(8, edges)
    h = np.random.default_rng(3).normal(size=(8, 3))
    for relative in (True, False):
        got = metrics.subspace_distance(torch.tensor(h), g, relative=relative)
        assert got == pytest.approx(numpy_subspace(h, 8, edges, relative), rel=1e-5)
    assert metrics.subspace_distance(torch.tensor(h), g) == pytest.approx(numpy_subspace(h, 8, edges, True),
                                                                         rel=1e-5)
    assert metrics.subspace_distance(torch.zeros(8, 3), g) == 0.0
    assert metrics.subspace_distance(torch.zeros(8, 3), g, relative=False) == 0.0
    # in the subspace: sqrt(deg) on one component times any vector
    deg = np.bincount(np.array(edges).ravel(), minlength=8) + 1.0
    inside = np.outer(np.sqrt(deg) * (np.arange(8) < 4), [1.0, -2.0])
    assert metrics.subspace_distance(torch.tensor(inside), g, relative=False) == pytest.approx(0.0, abs=1e-5)


@pytest.mark.parametrize("num_sources", [65, 129, 64, 128])
def test_reach_counts_at_word_boundaries(num_sources):
    """65 and 129 sources need one bit of a last word; 64 and 128 fill their words exactly."""
    g = random_graph(140, 220, seed=num_sources)
    masks = torch.rand(2, g.num_edges, generator=torch.Generator().manual_seed(1)) < 0.7
    sources = torch.randperm(140, generator=torch.Generator().manual_seed(num_sources))[:num_sources]
    ref = np.stack([p[sources.numpy()].sum(1) for p in dense_products(g, masks)])
    np.testing.assert_array_equal(metrics._reach_counts(g, masks, sources).numpy(), ref)


def test_men_estimate_of_two_sources_has_a_standard_error():
    g = make_graph(5, STAR)
    every = torch.ones(1, 4, dtype=torch.bool)  # row counts: centre 5, each leaf 2
    for seed in range(20):
        src = _sampled_sources(5, 2, seed)
        if 0 in src:
            break
    est = metrics.men_estimate(g, every, num_sources=2, generator=torch.Generator().manual_seed(seed))
    per_source = np.array([5.0 if s == 0 else 2.0 for s in src])
    assert est.value == pytest.approx(5 * per_source.mean())
    assert est.stderr == pytest.approx(5 * per_source.std(ddof=1) / math.sqrt(2) * math.sqrt(3 / 4))


def test_cpu_graphs_take_the_bit_packed_path(monkeypatch):
    """On the CPU the bit-packed numpy path runs (30x faster than the torch product on Cora)."""
    calls = []
    monkeypatch.setattr(metrics, "_reach_counts_scipy", lambda *a: calls.append(a) or torch.zeros(1, 1))
    g = make_graph(4, PATH)
    masks = torch.ones(1, 3, dtype=torch.bool)
    sources = torch.arange(4)
    metrics._reach_counts(g, masks, sources)
    assert len(calls) == 1 and calls[0][0] is g and calls[0][1] is masks and calls[0][2] is sources


def test_exact_men_measure_draws_no_random_numbers():
    g = random_graph(30, 50, seed=10)
    masks = torch.ones(2, g.num_edges, dtype=torch.bool)
    gen = torch.Generator().manual_seed(3)
    metrics.men_measure(g, masks, num_sources=30, generator=gen)
    fresh = torch.Generator().manual_seed(3)
    assert torch.equal(torch.rand(3, generator=gen), torch.rand(3, generator=fresh))


def test_men_measure_exact_up_to_is_inclusive_and_wins_over_default_sources():
    g = random_graph(60, 90, seed=11)
    masks = torch.rand(2, g.num_edges, generator=torch.Generator().manual_seed(11)) < 0.5
    exact = [int(p.sum()) for p in dense_products(g, masks)]
    for kwargs in ({"default_sources": 10}, {"exact_up_to": 60, "default_sources": 10}):
        r = metrics.men_measure(g, masks, **kwargs)
        assert (r.sources, r.stderr, r.value) == (60, 0.0, pytest.approx(sum(exact) / 2)), kwargs


def test_mad_leaves_out_near_zero_distances_per_node():
    """a at angle 0, b at +t, c at -t: a-b and a-c are below the 1e-8 cut, b-c (2t) above,
    so a has no distance at all (left out of the mean) and b, c have one each."""
    t = 1e-4  # 1 - cos t = 5e-9 < 1e-8 < 1 - cos 2t = 2e-8
    h = np.array([[1.0, 0.0], [math.cos(t), math.sin(t)], [math.cos(t), -math.sin(t)]])
    ref = numpy_mad(h)
    assert ref == pytest.approx(1 - math.cos(2 * t), rel=1e-3)  # mean over b and c only
    assert metrics.mad(torch.tensor(h)) == pytest.approx(ref, rel=1e-4, abs=0)


def test_subspace_distance_relative_to_a_small_norm():
    edges = [(0, 1), (2, 3)]
    g = make_graph(5, edges)
    h = np.random.default_rng(4).normal(size=(5, 2))
    h *= 0.01 / np.linalg.norm(h)  # ||h|| < 1
    got = metrics.subspace_distance(torch.tensor(h), g)
    assert got == pytest.approx(numpy_subspace(h, 5, edges, True), rel=1e-4)
    assert got > 0.1
