"""Each normalisation against its dense formula (paper appendix table)."""
from __future__ import annotations

import pytest
import torch
from dropedge_core import normalization, samplers
from dropedge_core.normalization import NormalizationError, adjacencies, to_dense

from tests.helpers import random_graph
from tests.helpers.references import dense_reference


@pytest.mark.parametrize("method", normalization.METHODS)
def test_matches_dense_formula(method):
    g = random_graph(20, 35, seed=1)  # sparse enough to leave isolated nodes after dropping
    masks = samplers.make("lid", p_min=0.1, p_max=0.9).sample(g, 4, torch.Generator().manual_seed(0))
    for layer, (ei, w) in enumerate(adjacencies(g, masks, method)):
        kept = g.undirected_edges[:, masks[layer]]
        a = torch.zeros(g.num_nodes, g.num_nodes)
        a[kept[0], kept[1]] = 1.0
        a[kept[1], kept[0]] = 1.0
        got = to_dense(ei, w, g.num_nodes)
        assert torch.isfinite(got).all()
        torch.testing.assert_close(got, dense_reference(a, method))
        assert ei.size(1) == 2 * int(masks[layer].sum()) + g.num_nodes  # self-loops included


@pytest.mark.parametrize("method", normalization.METHODS)
def test_directed_masks_match_dense_formula(method):
    """Masks over the 2M directions (``directed=True``): row degrees of the kept directions."""
    g = random_graph(20, 35, seed=2)
    masks = samplers.make("dropedge++", p_min=0.1, p_max=0.9, directed=True).sample(
        g, 3, torch.Generator().manual_seed(1))
    for layer, (ei, w) in enumerate(adjacencies(g, masks, method)):
        kept = g.edge_index[:, masks[layer]]
        a = torch.zeros(g.num_nodes, g.num_nodes)
        a[kept[0], kept[1]] = 1.0
        torch.testing.assert_close(to_dense(ei, w, g.num_nodes), dense_reference(a, method))
        assert ei.size(1) == int(masks[layer].sum()) + g.num_nodes


def test_layer_values_fill_a_given_buffer_and_builder_reuses_it():
    from dropedge_core.normalization import AdjacencyBuilder

    g = random_graph(30, 60, seed=4)
    masks = samplers.make("lid").sample(g, 3, torch.Generator().manual_seed(2))
    out = torch.full((3, 2 * g.num_edges + g.num_nodes), 7.0)
    got = normalization.layer_values(g, masks, "AN", out=out, workspace={})
    assert got is out and torch.equal(out, normalization.layer_values(g, masks, "AN"))
    with pytest.raises(ValueError, match="out must be"):
        normalization.layer_values(g, masks, "AN", out=torch.empty(2, 5))
    builder = AdjacencyBuilder(g, "AN")
    first = [a.to_dense() for a in builder(masks)]
    builder(masks.flip(0))  # the next call reuses the buffer
    assert all(torch.equal(a.to_dense(), f) for a, f in zip(builder(masks), first))


def test_isolated_nodes_give_zero_rows_not_nan():
    g = random_graph(10, 12)
    none = torch.zeros(1, g.num_edges, dtype=torch.bool)
    for method in normalization.METHODS:
        (ei, w), = adjacencies(g, none, method)
        got = to_dense(ei, w, g.num_nodes)
        assert torch.isfinite(got).all()
        expected = {"NA": 0.0, "FOG": 1.0, "AN": 1.0, "ANS": 2.0, "ARW": 1.0}[method]
        torch.testing.assert_close(got, torch.eye(g.num_nodes) * expected)


def test_sparse_propagation_matches_dense():
    g = random_graph(15, 30)
    ei, w = normalization.full_adjacency(g, "AN")
    h = torch.randn(g.num_nodes, 4)
    adj = normalization.to_sparse(ei, w, g.num_nodes)
    torch.testing.assert_close(normalization.propagate(adj, h), to_dense(ei, w, g.num_nodes) @ h)


def test_unknown_method():
    with pytest.raises(NormalizationError, match="valid: NA, FOG, AN, ANS, ARW"):
        normalization.check_method("sym")
