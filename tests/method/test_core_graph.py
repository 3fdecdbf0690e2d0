"""method/graph.py: the Graph's derived views (both directions, widened masks, a copy on a
device, its one-line description), the edge cleaner and the row normalisation, against
brute force and numpy (``python tools/mutation.py graph``)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from dropedge_core.method.graph import Graph, GraphError, l1_normalize_rows, simple_undirected_edges


def small_graph() -> Graph:
    x = torch.tensor([[1.0, 0.0], [0.5, 0.5], [0.0, 1.0], [0.0, 0.0]])
    edges = torch.tensor([[0, 0, 1], [1, 2, 3]])
    train = torch.tensor([True, False, False, False])
    val = torch.tensor([False, True, False, False])
    test = torch.tensor([False, False, True, True])
    return Graph("tiny", x, torch.tensor([0, 1, 1, -1]), edges, train, val, test, 2, info={"from": "hand"})


def test_sizes_and_both_directions():
    g = small_graph()
    assert (g.num_nodes, g.num_edges, g.num_features) == (4, 3, 2)
    assert g.edge_index.tolist() == [[0, 0, 1, 1, 2, 3], [1, 2, 3, 0, 0, 1]]
    assert g.edge_index is g.edge_index  # built once, then memoised


def test_directed_mask_widens_undirected_masks_only():
    g = small_graph()
    masks = torch.tensor([[True, False, True], [False, False, True]])
    assert g.directed_mask(masks).tolist() == [[True, False, True, True, False, True],
                                               [False, False, True, False, False, True]]
    directed = torch.ones(2, 6, dtype=torch.bool)
    assert g.directed_mask(directed) is directed
    with pytest.raises(GraphError) as err:
        g.directed_mask(torch.ones(2, 5, dtype=torch.bool))
    assert str(err.value) == "mask width 5 matches neither M=3 nor 2M=6"


def test_to_copies_every_field_but_the_memo():
    g = small_graph()
    _ = g.edge_index
    c = g.to("cpu")
    assert c is not g and c.cache == {}
    for name in ("x", "y", "undirected_edges", "train_mask", "val_mask", "test_mask"):
        assert torch.equal(getattr(c, name), getattr(g, name)), name
    assert (c.name, c.num_classes, c.info) == ("tiny", 2, {"from": "hand"})
    c.info["from"] = "changed"
    assert g.info["from"] == "hand"  # the copy's info is its own
    meta = g.to("meta")
    assert all(t.device.type == "meta" for t in (meta.x, meta.y, meta.undirected_edges, meta.train_mask,
                                                  meta.val_mask, meta.test_mask))


def test_repr_names_the_sizes_and_the_split():
    assert repr(small_graph()) == "Graph(tiny: N=4, M=3, C=2, classes=2, train/val/test=1/1/2)"


def test_simple_undirected_edges_matches_brute_force():
    gen = torch.Generator().manual_seed(0)
    n = 7
    raw = torch.randint(n, (2, 40), generator=gen)
    want = sorted({(min(a, b), max(a, b)) for a, b in raw.t().tolist() if a != b})
    got = simple_undirected_edges(raw, n)
    assert got.dtype == torch.long
    assert [tuple(p) for p in got.t().tolist()] == want
    # every pair of a complete graph, given in both directions and with loops
    both = torch.tensor(list(itertools.permutations(range(4), 2)) + [(2, 2)]).t()
    pairs = [list(p) for p in itertools.combinations(range(4), 2)]
    assert simple_undirected_edges(both, 4).t().tolist() == pairs


def test_l1_normalize_rows_matches_numpy_and_keeps_zero_rows():
    x = np.array([[1.0, -3.0, 0.0], [0.0, 0.0, 0.0], [2, 2, 4]])
    got = l1_normalize_rows(torch.tensor(x, dtype=torch.float64))
    assert got.dtype == torch.float32
    want = np.array([[0.25, -0.75, 0.0], [0.0, 0.0, 0.0], [0.25, 0.25, 0.5]])
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
    assert l1_normalize_rows(torch.tensor([[1e-30, 0.0]])).tolist() == [[1.0, 0.0]]


def test_directed_mask_of_one_row_and_of_a_stack():
    g = small_graph()
    assert g.directed_mask(torch.tensor([True, False, True])).tolist() == [True, False, True] * 2
    stack = torch.zeros(2, 2, 3, dtype=torch.bool)
    stack[1, 0, 2] = True
    widened = g.directed_mask(stack)
    assert widened.shape == (2, 2, 6) and widened[1, 0].tolist() == [False, False, True, False, False, True]
    with pytest.raises(GraphError, match="mask width 4 matches neither M=3 nor 2M=6"):
        g.directed_mask(torch.ones(4, dtype=torch.bool))


def test_csr_tensor_has_the_size_given():
    from dropedge_core.method.graph import csr_tensor

    m = csr_tensor(torch.tensor([0, 1, 1, 1]), torch.tensor([0]), torch.tensor([2.0]), (3, 5))
    assert m.shape == (3, 5)
    assert m.to_dense().tolist() == [[2.0, 0, 0, 0, 0], [0] * 5, [0] * 5]
