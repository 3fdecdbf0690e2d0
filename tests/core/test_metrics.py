"""MEN against brute-force dense products and the paper's MEN table; diagnostics."""
from __future__ import annotations

import csv
import math

import pytest
import torch
from dropedge_core import metrics, samplers

from dropedge_explorer import paths
from tests.helpers import random_graph

REFERENCE = paths.REFERENCE_DIR / "paper_men.csv"


def dense_edge_numbers(graph, masks) -> list[int]:
    n = graph.num_nodes
    prod = torch.eye(n, dtype=torch.float64)
    out = []
    directed = graph.directed_mask(masks)
    for row in directed:
        a = torch.eye(n, dtype=torch.float64)
        kept = graph.edge_index[:, row]
        a[kept[0], kept[1]] = 1.0
        prod = (prod @ a).clamp(max=1.0)  # clamp keeps values small; non-zeros unchanged
        out.append(int((prod > 0).sum()))
    return out


@pytest.mark.parametrize("name", ["nodrop", "dropedge", "li", "lid", "ldd", "dropedge++"])
@pytest.mark.parametrize("seed", [0, 1])
def test_edge_numbers_match_dense_products(name, seed):
    g = random_graph(30, 45, seed=seed)
    masks = samplers.make(name, p_min=0.2, p_max=0.9).sample(g, 5, torch.Generator().manual_seed(seed))
    ref = dense_edge_numbers(g, masks)
    assert metrics.edge_numbers(g, masks) == ref
    assert metrics.men(g, masks) == pytest.approx(sum(ref) / len(ref))


def test_edge_numbers_directed_masks():
    g = random_graph(25, 40)
    masks = samplers.make("li", p_min=0.3, p_max=0.7, directed=True).sample(g, 4, torch.Generator())
    assert metrics.edge_numbers(g, masks) == dense_edge_numbers(g, masks)


def test_bit_counts_in_blocks_match_dense_products(monkeypatch):
    """The reach table's bits are counted a block of rows at a time (not unpacked whole:
    5 GB for 10M nodes x 512 sources); blocks of 7 rows over 30 nodes (4 full, 1 partial)
    give the dense products' numbers."""
    monkeypatch.setattr(metrics, "COUNT_ROWS", 7)
    g = random_graph(30, 45, seed=3)
    masks = samplers.make("li", p_min=0.2, p_max=0.9).sample(g, 5, torch.Generator().manual_seed(3))
    assert metrics.edge_numbers(g, masks) == dense_edge_numbers(g, masks)


def test_men_estimate_within_three_standard_errors():
    g = random_graph(400, 900, seed=3)
    masks = samplers.make("lid", p_min=0.2, p_max=1.0).sample(g, 6, torch.Generator().manual_seed(0))
    exact = metrics.men(g, masks)
    est = metrics.men_estimate(g, masks, num_sources=80, generator=torch.Generator().manual_seed(1))
    assert est.sources == 80 and est.stderr > 0
    assert abs(est.value - exact) < 3 * est.stderr
    full = metrics.men_estimate(g, masks, num_sources=10_000)
    assert full.value == pytest.approx(exact) and full.stderr == 0.0


def paper_rows():
    with open(REFERENCE) as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("dataset", ["cora", "citeseer"])
def test_men_reproduces_paper_table(dataset, request):
    """p_min = 0.05, p_max = 1.0, DropEdge at 0.525; every cell within 10% (mean of runs)."""
    graph = request.getfixturevalue(dataset)
    rows = [r for r in paper_rows() if r["dataset"].lower() == dataset]
    assert len(rows) == 12
    runs = 6
    for r in rows:
        layers = int(r["layers"])
        s = samplers.make(r["sampler"], p_min=0.05, p_max=1.0)
        assert r["sampler"] != "dropedge" or s.p == pytest.approx(0.525)
        values = [metrics.men(graph, s.sample(graph, layers, torch.Generator().manual_seed(k)))
                  for k in range(runs)]
        mean = sum(values) / runs
        assert abs(mean / float(r["men"]) - 1) < 0.10, (dataset, r, mean)


def test_lid_has_lowest_men_on_cora(cora):
    values = {}
    for name in ["dropedge", "li", "lid", "ldd"]:
        s = samplers.make(name, p_min=0.05, p_max=1.0)
        values[name] = sum(metrics.men(cora, s.sample(cora, 8, torch.Generator().manual_seed(k)))
                           for k in range(3)) / 3
    assert min(values, key=values.get) == "lid"
    assert max(values, key=values.get) == "ldd"


def test_layer_distances_and_average():
    hidden = [torch.full((3, 2), float(i)) for i in range(6)]  # H^(1..6): L = 7
    d = metrics.layer_distances(hidden)
    torch.testing.assert_close(d, torch.full((5,), math.sqrt(6.0)))
    assert metrics.average_distance(hidden) == pytest.approx(math.sqrt(6.0))
    steps = [torch.zeros(2, 2), torch.ones(2, 2), 3 * torch.ones(2, 2), 6 * torch.ones(2, 2)]
    # L = 5: average over D^(1), D^(2) only (l = 1 .. L-3)
    assert metrics.average_distance(steps) == pytest.approx((2 + 4) / 2)


def test_dirichlet_energy_zero_in_subspace_and_positive_otherwise():
    g = random_graph(20, 40)
    deg = torch.bincount(g.undirected_edges.flatten(), minlength=g.num_nodes).float() + 1
    comp = metrics.component_labels(g)
    smooth = (deg.sqrt() * (comp == comp[0]).float()).unsqueeze(1).repeat(1, 3)
    assert metrics.dirichlet_energy(smooth, g.undirected_edges) == pytest.approx(0.0, abs=1e-10)
    assert metrics.subspace_distance(smooth, g) == pytest.approx(0.0, abs=1e-6)
    rough = torch.randn(g.num_nodes, 3, generator=torch.Generator().manual_seed(0))
    assert metrics.dirichlet_energy(rough, g.undirected_edges) > 0.1
    assert 0.1 < metrics.subspace_distance(rough, g) <= 1.0


def test_dirichlet_energy_matches_dense_formula():
    g = random_graph(12, 20)
    h = torch.randn(g.num_nodes, 3, generator=torch.Generator().manual_seed(2))
    deg = torch.bincount(g.undirected_edges.flatten(), minlength=g.num_nodes).float() + 1
    ref = sum(float(((h[u] / deg[u].sqrt() - h[v] / deg[v].sqrt()) ** 2).sum())
              for u, v in g.undirected_edges.T.tolist()) / g.num_nodes
    assert metrics.dirichlet_energy(h, g.undirected_edges) == pytest.approx(ref, rel=1e-5)


def test_mad():
    same = torch.ones(10, 4)
    assert metrics.mad(same) == 0.0
    h = torch.eye(4)  # orthogonal rows: cosine distance 1 between all pairs
    assert metrics.mad(h) == pytest.approx(1.0)
