"""method/normalization.py: the paths ``python tools/mutation.py normalization`` found
unguarded — a graph whose edges are not in the documented order (entries by sort),
the entry columns of both mask widths, ``full_adjacency`` with another
method, and the dense/sparse converters. References are dense numpy formulas or
hand-worked entries, never the function under test."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from dropedge_core import _pattern as pattern
from dropedge_core import normalization
from dropedge_core.graph import Graph, GraphError

from tests.helpers import random_graph
from tests.helpers.references import dense_reference


def dense(edges: np.ndarray, n: int, keep: np.ndarray | None = None) -> torch.Tensor:
    """The 0/1 symmetric adjacency of the kept undirected edges, by numpy."""
    a = np.zeros((n, n))
    e = edges if keep is None else edges[:, keep]
    a[e[0], e[1]] = 1.0
    a[e[1], e[0]] = 1.0
    return torch.from_numpy(a).float()


def graph_of(edges: list[list[int]], n: int = 5) -> Graph:
    x = torch.eye(n)
    none = torch.zeros(n, dtype=torch.bool)
    return Graph("hand", x, torch.zeros(n, dtype=torch.long), torch.tensor(edges), none, none, none, 2)


def unsorted_graph() -> Graph:
    """Five nodes, edges given out of the documented (u, v)-sorted order."""
    return graph_of([[2, 0, 1, 0, 3], [4, 3, 2, 1, 4]])


# edge lists out of the documented order (each fools a different wrong order check), and a
# sorted one whose last nodes have no edge
EDGE_LISTS = [[[2, 0, 1, 0, 3], [4, 3, 2, 1, 4]], [[0, 0, 1], [2, 1, 3]], [[1, 0], [2, 3]],
              [[0, 1, 0], [1, 3, 2]], [[0, 1], [1, 2]]]


@pytest.mark.parametrize("edges", EDGE_LISTS)
@pytest.mark.parametrize("method", normalization.METHODS)
def test_edges_in_any_order_give_the_dense_formula(method, edges):
    g = graph_of(edges)
    keep = np.ones(g.num_edges, dtype=bool)
    keep[0] = g.num_edges < 3  # drop one edge where there are enough
    masks = torch.from_numpy(keep).unsqueeze(0)
    (ei, w), = normalization.adjacencies(g, masks, method)
    got = normalization.to_dense(ei, w, 5)
    torch.testing.assert_close(got, dense_reference(dense(g.undirected_edges.numpy(), 5, keep), method))
    # entries in CSR order: sorted by (row, column)
    key = (ei[0] * 5 + ei[1]).tolist()
    assert key == sorted(key)
    loops = pattern.entry_loops(g)
    rows, cols = pattern.entry_index(g)
    assert rows[loops].tolist() == list(range(5)) and cols[loops].tolist() == list(range(5))


def directed_dense(g: Graph, mask: torch.Tensor) -> torch.Tensor:
    """A directed mask over edge_index: row i holds i's kept directions i -> j."""
    a = torch.zeros(g.num_nodes, g.num_nodes)
    s, t = g.edge_index[:, mask]
    a[s, t] = 1.0
    return a


@pytest.mark.parametrize("method", normalization.METHODS)
def test_values_over_several_chunks_both_widths_on_one_graph(monkeypatch, method):
    """CPU_CHUNK rows per pass: a tiny chunk makes every pass loop over many chunks, with a
    partial last one; both mask widths on the same graph (separate cached incidences)."""
    monkeypatch.setattr(normalization, "CPU_CHUNK", 7)
    g = random_graph(15, 40, seed=8)
    gen = torch.Generator().manual_seed(2)
    rows, cols = pattern.entry_index(g)
    und = torch.rand(3, g.num_edges, generator=gen) < 0.6
    values = normalization.layer_values(g, und, method)
    for layer in range(3):
        want = dense_reference(dense(g.undirected_edges.numpy(), 15, und[layer].numpy()), method)
        torch.testing.assert_close(values[layer], want[rows, cols])
    dirs = torch.rand(2, 2 * g.num_edges, generator=gen) < 0.6
    values = normalization.layer_values(g, dirs, method)
    for layer in range(2):
        want = dense_reference(directed_dense(g, dirs[layer]), method)
        torch.testing.assert_close(values[layer], want[rows, cols])


def test_a_reused_workspace_and_out_give_fresh_values():
    g = random_graph(12, 25, seed=9)
    rows, cols = pattern.entry_index(g)
    gen = torch.Generator().manual_seed(4)
    workspace: dict = {}
    for num_layers in (3, 3, 2):  # the same shapes twice, then another depth
        masks = torch.rand(num_layers, g.num_edges, generator=gen) < 0.5
        out = torch.empty(num_layers, rows.numel())
        got = normalization.layer_values(g, masks, "AN", out=out, workspace=workspace)
        assert got is out
        for layer in range(num_layers):
            want = dense_reference(dense(g.undirected_edges.numpy(), 12, masks[layer].numpy()), "AN")
            torch.testing.assert_close(got[layer], want[rows, cols])


def test_layer_values_refuses_a_wrong_width_or_out():
    g = random_graph(12, 25, seed=9)
    m, e = g.num_edges, pattern.entry_index(g).size(1)
    with pytest.raises(GraphError) as err:
        normalization.layer_values(g, torch.ones(1, m + 1, dtype=torch.bool))
    assert str(err.value) == f"mask width {m + 1} matches neither M={m} nor 2M={2 * m}"
    ones = torch.ones(2, m, dtype=torch.bool)
    for out in (torch.empty(2, e, dtype=torch.float64), torch.empty(3, e), torch.empty(e, 2).t()):
        with pytest.raises(ValueError) as err:
            normalization.layer_values(g, ones, out=out)
        assert str(err.value) == f"out must be a contiguous float32 tensor of shape (2, {e})"


def test_entry_columns_of_both_widths():
    g = random_graph(10, 14, seed=5)
    m = g.num_edges
    rows, cols = pattern.entry_index(g)
    edge_id = {}
    for j, (a, b) in enumerate(g.undirected_edges.t().tolist()):
        edge_id[(a, b)], edge_id[(b, a)] = j, j + m  # edge_index: column j is u->v, j + M is v->u
    undirected = pattern.entry_columns(g, m)
    directed = pattern.entry_columns(g, 2 * m)  # the same graph's cache holds both
    for r, c, cu, cd in zip(rows.tolist(), cols.tolist(), undirected.tolist(), directed.tolist()):
        if r == c:
            assert (cu, cd) == (m, 2 * m)  # a self-loop: the always-kept extra column
        else:
            assert cd == edge_id[(r, c)] and cu == edge_id[(r, c)] % m
    assert undirected.dtype == torch.long
    with pytest.raises(GraphError) as err:
        pattern.entry_columns(g, m + 1)
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


def test_the_default_method_is_the_gcn_renormalisation():
    g = random_graph(9, 12, seed=7)
    rows, cols = pattern.entry_index(g)
    a = dense(g.undirected_edges.numpy(), 9)
    masks = torch.ones(1, g.num_edges, dtype=torch.bool)
    torch.testing.assert_close(normalization.layer_values(g, masks)[0], dense_reference(a, "AN")[rows, cols])
    (ei, w), = normalization.adjacencies(g, masks)
    torch.testing.assert_close(normalization.to_dense(ei, w, 9), dense_reference(a, "AN"))
    ei, w = normalization.full_adjacency(g)
    torch.testing.assert_close(normalization.to_dense(ei, w, 9), dense_reference(a, "AN"))


def test_entries_of_a_star_are_in_csr_order():
    """Sixty edges (i, 60) share their end v = 60: their directions 60 -> i must come out
    in the order of i (a sort by v must keep the u order of equal keys: a stable sort)."""
    n = 61
    g = graph_of([list(range(60)), [60] * 60], n)
    rows, cols = pattern.entry_index(g)
    key = (rows * n + cols).tolist()
    assert key == sorted(key) and len(set(key)) == 2 * 60 + n
    (ei, w), = normalization.adjacencies(g, torch.ones(1, 60, dtype=torch.bool), "ARW")
    torch.testing.assert_close(normalization.to_dense(ei, w, n),
                               dense_reference(dense(g.undirected_edges.numpy(), n), "ARW"))


def test_index_tables_are_32_bit_when_they_fit():
    """The value table's rows and the incidence's indices are int32 below 2**31 (half the
    memory of int64 on a large graph); 40 nodes and 60 edges are past 62, where a bound
    written 2 * 31 would switch to int64."""
    g = random_graph(40, 60, seed=1)
    assert g.num_edges + g.num_nodes > 62
    for width in (g.num_edges, 2 * g.num_edges):
        assert normalization._table_rows(g, width, False).dtype == torch.int32
        incidence = normalization._incidence(g, width)
        assert incidence.crow_indices().dtype == incidence.col_indices().dtype == torch.int32
