"""method/normalization.py: the paths ``python tools/mutation.py normalization`` found
unguarded — a graph whose edges are not in the documented order (entries by sort),
``layer_weights``, the entry columns of both mask widths, ``full_adjacency`` with another
method, and the dense/sparse converters. References are dense numpy formulas or
hand-worked entries, never the function under test."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from dropedge_core.method import normalization
from dropedge_core.method.graph import Graph, GraphError

from .conftest import random_graph
from .test_normalization import dense_reference


def dense(edges: np.ndarray, n: int, keep: np.ndarray | None = None) -> torch.Tensor:
    """The 0/1 symmetric adjacency of the kept undirected edges, by numpy."""
    a = np.zeros((n, n))
    e = edges if keep is None else edges[:, keep]
    a[e[0], e[1]] = 1.0
    a[e[1], e[0]] = 1.0
    return torch.from_numpy(a).float()


def unsorted_graph() -> Graph:
    """Five nodes, edges given out of the documented (u, v)-sorted order."""
    edges = torch.tensor([[2, 0, 1, 0, 3], [4, 3, 2, 1, 4]])
    x = torch.eye(5)
    none = torch.zeros(5, dtype=torch.bool)
    return Graph("unsorted", x, torch.zeros(5, dtype=torch.long), edges, none, none, none, 2)


@pytest.mark.parametrize("method", normalization.METHODS)
def test_unsorted_edges_give_the_dense_formula(method):
    g = unsorted_graph()
    keep = np.array([True, False, True, True, True])
    masks = torch.from_numpy(keep).unsqueeze(0)
    (ei, w), = normalization.adjacencies(g, masks, method)
    got = normalization.to_dense(ei, w, 5)
    torch.testing.assert_close(got, dense_reference(dense(g.undirected_edges.numpy(), 5, keep), method))
    # entries in CSR order: sorted by (row, column)
    key = (ei[0] * 5 + ei[1]).tolist()
    assert key == sorted(key)
    loops = normalization.entry_loops(g)
    rows, cols = normalization.entry_index(g)
    assert rows[loops].tolist() == list(range(5)) and cols[loops].tolist() == list(range(5))


def test_layer_weights_flags_and_values():
    g = random_graph(12, 20, seed=2)
    gen = torch.Generator().manual_seed(1)
    masks = torch.rand(3, g.num_edges, generator=gen) < 0.5
    rows, cols = normalization.entry_index(g)
    kept, weight = normalization.layer_weights(g, masks, "an")  # the name in any case
    assert kept.shape == weight.shape == (3, rows.numel())
    for layer in range(3):
        a = dense(g.undirected_edges.numpy(), 12, masks[layer].numpy())
        present = (a + torch.eye(12)) > 0
        assert kept[layer].tolist() == present[rows, cols].tolist()
        torch.testing.assert_close(weight[layer], dense_reference(a, "AN")[rows, cols])


def test_entry_columns_of_both_widths():
    g = random_graph(10, 14, seed=5)
    m = g.num_edges
    rows, cols = normalization.entry_index(g)
    edge_id = {}
    for j, (a, b) in enumerate(g.undirected_edges.t().tolist()):
        edge_id[(a, b)], edge_id[(b, a)] = j, j + m  # edge_index: column j is u->v, j + M is v->u
    undirected = normalization.entry_columns(g, m)
    directed = normalization.entry_columns(g, 2 * m)  # the same graph's cache holds both
    for r, c, cu, cd in zip(rows.tolist(), cols.tolist(), undirected.tolist(), directed.tolist()):
        if r == c:
            assert (cu, cd) == (m, 2 * m)  # a self-loop: the always-kept extra column
        else:
            assert cd == edge_id[(r, c)] and cu == edge_id[(r, c)] % m
    assert undirected.dtype == torch.long
    with pytest.raises(GraphError) as err:
        normalization.entry_columns(g, m + 1)
    assert str(err.value) == f"mask width {m + 1} matches neither M={m} nor 2M={2 * m}"


def test_full_adjacency_uses_the_method_given():
    g = random_graph(9, 12, seed=6)
    a = dense(g.undirected_edges.numpy(), 9)
    for method in ("NA", "ARW"):
        ei, w = normalization.full_adjacency(g, method)
        torch.testing.assert_close(normalization.to_dense(ei, w, 9), dense_reference(a, method))


def test_to_dense_sums_duplicates_and_keeps_dtype():
    ei = torch.tensor([[0, 0, 1], [1, 1, 0]])
    w = torch.tensor([1.0, 2.0, 0.5], dtype=torch.float64)
    out = normalization.to_dense(ei, w, 3)
    assert out.dtype == torch.float64 and out.shape == (3, 3)
    assert out.tolist() == [[0.0, 3.0, 0.0], [0.5, 0.0, 0.0], [0.0, 0.0, 0.0]]


def test_to_sparse_has_the_size_asked_for():
    ei = torch.tensor([[0, 1], [1, 0]])
    sp = normalization.to_sparse(ei, torch.tensor([2.0, 3.0]), 4)  # nodes 2, 3 isolated
    assert sp.shape == (4, 4)
    assert sp.to_dense().tolist() == [[0, 2, 0, 0], [3, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]
