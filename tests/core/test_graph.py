"""method/graph.py: the Graph's derived views (both directions, widened masks, a copy on a
device, its one-line description), the edge cleaner and the row normalisation, against
brute force and numpy (``python tools/mutation.py graph``)."""
from __future__ import annotations

import copy
import itertools
import pickle
import threading

import numpy as np
import pytest
import torch
from dropedge_core import _pattern as pattern
from dropedge_core import metrics, samplers
from dropedge_core.graph import Graph, GraphError, l1_normalize_rows, simple_undirected_edges


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
    assert c is not g and len(c._derived) == 0 < len(g._derived)
    for name in ("x", "y", "undirected_edges", "train_mask", "val_mask", "test_mask"):
        assert torch.equal(getattr(c, name), getattr(g, name)), name
    assert (c.name, c.num_classes, c.info) == ("tiny", 2, {"from": "hand"})
    c.info["from"] = "changed"
    assert g.info["from"] == "hand"  # the copy's info is its own
    meta = g.to("meta")
    assert all(t.device.type == "meta" for t in (meta.x, meta.y, meta.undirected_edges, meta.train_mask,
                                                  meta.val_mask, meta.test_mask))


def test_a_pickled_or_copied_graph_starts_with_an_empty_memo():
    g = small_graph()
    _ = g.edge_index
    for c in (pickle.loads(pickle.dumps(g)), copy.deepcopy(g)):
        assert len(c._derived) == 0 and torch.equal(c.undirected_edges, g.undirected_edges)
        assert c.edge_index.tolist() == g.edge_index.tolist()  # rebuilt on first use


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
    from dropedge_core.graph import csr_tensor

    m = csr_tensor(torch.tensor([0, 1, 1, 1]), torch.tensor([0]), torch.tensor([2.0]), (3, 5))
    assert m.shape == (3, 5)
    assert m.to_dense().tolist() == [[2.0, 0, 0, 0, 0], [0] * 5, [0] * 5]


def _at_once(count: int, work) -> list:
    """``work()`` in ``count`` threads released together by a barrier; their results."""
    barrier, out = threading.Barrier(count), [None] * count

    def run(i: int) -> None:
        barrier.wait()
        out[i] = work()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def test_a_derived_value_raced_by_threads_is_published_once():
    g = small_graph()
    built = []
    inside = threading.Barrier(8, timeout=60)  # a builder under a lock would break it: an error

    def slow(graph: Graph) -> list:
        inside.wait()  # every thread is inside the builder before any publishes
        built.append(object())
        return [graph.num_edges, built[-1]]

    got = _at_once(8, lambda: g.derived(slow))
    assert len(built) == 8  # the race did happen (the builder is not under a lock) ...
    assert all(v is got[0] for v in got)  # ... and every thread got the one published first
    assert g.derived(slow) is got[0]


def test_a_derived_value_is_built_once_per_builder_and_arguments():
    g = small_graph()  # 3 edges
    calls = []

    def times(graph: Graph, k: int) -> int:
        calls.append(k)
        return graph.num_edges * k

    got = [g.derived(times, 2), g.derived(times, 2), g.derived(times, 5), g.derived(times, 2)]
    assert got == [6, 6, 15, 6]
    assert calls == [2, 5]  # the second and fourth reads come from the memo, without a rebuild
    assert len(g._derived) == 2


def test_threads_reading_a_fresh_graph_at_once_agree_with_numpy():
    """A fresh graph read by 8 threads at once (entries, columns, weights, components):
    every thread sees each value whole, the same object, equal to numpy's."""
    rng = np.random.default_rng(0)
    n = 40
    pairs = np.unique(np.sort(rng.integers(0, n, size=(120, 2)), axis=1), axis=0)
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    x = torch.rand(n, 5, generator=torch.Generator().manual_seed(0))
    none = torch.zeros(n, dtype=torch.bool)
    g = Graph("rand", x, torch.zeros(n, dtype=torch.long), torch.from_numpy(pairs.T.copy()),
              none, none, none, 1)
    fd = samplers.make("fd")
    got = _at_once(8, lambda: (pattern.entries(g), pattern.entry_columns(g, g.num_edges),
                               fd.weights(g), metrics.component_labels(g), g.edge_index))
    for values in got:
        assert all(a is b for a, b in zip(values, got[0]))
    entries, columns, weights, components, _ = got[0]
    # numpy: the entries are both directions and the self-loops, in (row, column) order
    rows = np.concatenate([pairs[:, 0], pairs[:, 1], np.arange(n)])
    cols = np.concatenate([pairs[:, 1], pairs[:, 0], np.arange(n)])
    order = np.lexsort((cols, rows))
    assert entries.index.tolist() == [rows[order].tolist(), cols[order].tolist()]
    m = len(pairs)
    assert columns.tolist() == np.where(order >= 2 * m, m, order % m).tolist()
    assert entries.loops.tolist() == np.nonzero(order >= 2 * m)[0].tolist()
    xn = x.numpy()
    dots = (xn[pairs[:, 0]] * xn[pairs[:, 1]]).sum(1)
    np.testing.assert_allclose(weights.numpy(), np.maximum(dots, 0) + 1e-10, rtol=1e-5)
    root = list(range(n))  # union-find over the edges

    def find(i: int) -> int:
        while root[i] != i:
            i = root[i]
        return i

    for a, b in pairs:
        root[find(a)] = find(b)
    same = [[find(a) == find(b) for b in range(n)] for a in range(n)]
    assert (components[:, None] == components[None, :]).tolist() == same
