"""Per-graph keep counts for a batch of graphs (issue 36 (f)): with ``batch``, every graph
keeps its own share of its own edges, counted here by hand per graph. Every sampler's
masks come from one pass over the batch (issue 46); the uniform samplers' are checked here
against each graph's law by brute force, the kernel samplers' in
tests/core/test_segment_draws.py."""
from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest
import torch
from dropedge_core import _segment_draws
from dropedge_core.pyg import LayerDropEdge, LayerWiseEdges, layer_dropout_edge
from dropedge_core.pyg.batch import check_batch
from scipy.stats import chisquare
from torch_geometric.data import Batch, Data
from torch_geometric.nn.models import GCN

L = 4


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


def small_graphs(count: int = 6, seed: int = 0) -> list[Data]:
    """Graphs of 3..12 nodes, both directions of each edge, one with no edges at all."""
    rng = np.random.default_rng(seed)
    graphs = []
    for g in range(count):
        n = int(rng.integers(3, 13))
        pairs = rng.integers(0, n, size=(2, 0 if g == 2 else 3 * n))
        pairs = pairs[:, pairs[0] != pairs[1]]
        ei = torch.from_numpy(np.concatenate([pairs, pairs[::-1]], axis=1).copy())
        graphs.append(Data(x=torch.rand(n, 5, generator=gen(g)), edge_index=ei, num_nodes=n))
    return graphs


def distinct(edge_index: torch.Tensor, directed: bool) -> set:
    u, v = edge_index.tolist() if edge_index.numel() else ([], [])
    return {(a, b) if directed else (min(a, b), max(a, b)) for a, b in zip(u, v) if a != b}


def per_graph_counts(graphs: list[Data], rates: list[float], directed: bool = False) -> list[list[int]]:
    """floor(rate * M_g), M_g the graph's distinct edges (directions when directed), by hand."""
    return [[math.floor(len(distinct(d.edge_index, directed)) * r + 1e-9) for r in rates] for d in graphs]


@pytest.mark.parametrize("sampler, directed", [("lid", False), ("dropedge++", False), ("li", True),
                                               ("ldd", False), ("dropedge", False), ("fd", True),
                                               ("li", False), ("lid", True), ("nodrop", False)])
@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_each_graph_keeps_its_own_share(sampler, directed, compiled):
    """The whole batch in one pass (another stream than each graph alone), eager and under
    ``torch.compile`` (the slots' path), every graph's counts by hand; the kernel samplers'
    law per graph is tests/core/test_segment_draws.py's."""
    graphs = small_graphs()
    batch = Batch.from_data_list(graphs)
    kw = ({"p": 0.5} if sampler in ("dropedge", "fd") else {} if sampler == "nodrop"
          else {"keep_min": 0.2, "keep_max": 0.8})
    def draw(edge_index, x, graph_of):  # compiled: the slots' path (dynamo, the eager backend)
        return torch.stack([m for _, m in layer_dropout_edge(
            edge_index, L, x=x, sampler=sampler, directed=directed, batch=graph_of, **kw)])

    call = torch.compile(draw, backend="eager") if compiled else draw
    masks = call(batch.edge_index, batch.x, batch.batch)
    rates = ([1.0] * L if sampler == "nodrop" else [0.5] * L if sampler in ("dropedge", "fd")
             else [0.2 + 0.6 * l / (L - 1) for l in range(L)])
    counts = per_graph_counts(graphs, rates[::-1] if sampler == "ldd" else rates, directed)
    edge_graph = batch.batch[batch.edge_index[0]]
    for gid, expected in enumerate(counts):
        mine = batch.edge_index[:, edge_graph == gid]
        kept = [len(distinct(mine[:, row], directed)) for row in masks[:, edge_graph == gid]]
        assert kept == expected, gid
    if sampler in ("lid", "dropedge++"):
        assert bool((masks[:-1] <= masks[1:]).all())  # nested, the input layer sparsest
    if sampler == "ldd":
        assert bool((masks[:-1] >= masks[1:]).all())
    if sampler in ("dropedge", "fd", "nodrop"):
        assert bool((masks == masks[:1]).all())  # one sample for every layer


#: Two tiny graphs, both directions of each edge: a 4-cycle (4 edges) and a triangle (3).
CYCLE = torch.tensor([[0, 1, 1, 2, 2, 3, 3, 0], [1, 0, 2, 1, 3, 2, 0, 3]])
TRIANGLE = torch.tensor([[0, 1, 1, 2, 2, 0], [1, 0, 2, 1, 0, 2]])


def _law(relation: str, m: int, counts: list[int]) -> dict[tuple, float]:
    """Brute force: the probability of every tuple of kept sets (one per layer) of ``m``
    items, each layer keeping ``counts[l]`` uniformly, the layers related as ``relation``."""
    def subsets(pool, k):
        return [frozenset(c) for c in itertools.combinations(sorted(pool), k)]

    if relation == "shared":
        return {(s,) * len(counts): 1 / math.comb(m, counts[0]) for s in subsets(range(m), counts[0])}
    if relation == "independent":
        law = {(): 1.0}
        for k in counts:
            law = {t + (s,): p / math.comb(m, k) for t, p in law.items() for s in subsets(range(m), k)}
        return law
    order = range(len(counts) - 1, -1, -1) if relation == "increasing" else range(len(counts))
    law = {(): 1.0}  # tuples in drawing order, each set drawn from the one before
    for k in (counts[l] for l in order):
        law = {t + (s,): p / math.comb(len(t[-1]) if t else m, k) for t, p in law.items()
               for s in subsets(t[-1] if t else range(m), k)}
    return {(t[::-1] if relation == "increasing" else t): p for t, p in law.items()}


@pytest.mark.parametrize("sampler, directed, two_sorts", [
    ("li", False, False), ("lid", False, False), ("ldd", False, False), ("dropedge", False, False),
    ("dropedge", True, False), ("li", False, True), ("lid", False, True)])
def test_the_one_pass_draws_each_graphs_law(sampler, directed, two_sorts, monkeypatch):
    """The uniform samplers' one-pass batch path against the law by brute force: over 3000
    draws of each graph (300 copies of a 4-cycle and a triangle per call), the tuple of
    kept sets (one per layer) of every graph follows the sampler's law on that graph alone
    (chi-square), so the counts are exact, every edge set equally likely, the layers
    independent (LI), nested (LID, LDD) or shared (DropEdge). ``two_sorts``: the sorted
    ranks' path instead of the padded ``topk`` (a batch whose layout would be too large; forced
    here)."""
    if two_sorts:
        monkeypatch.setattr(_segment_draws, "PAD_AT_MOST", 0)
    copies, calls, layers = 300, 10, 3
    graphs = [Data(edge_index=e, num_nodes=int(e.max()) + 1) for e in (CYCLE, TRIANGLE)] * copies
    batch = Batch.from_data_list(graphs)
    kw = {"p": 0.5} if sampler == "dropedge" else {"keep_min": 0.25, "keep_max": 0.75}
    relation = {"li": "independent", "lid": "increasing", "ldd": "decreasing", "dropedge": "shared"}[sampler]
    g = gen(7)
    seen = {"cycle": Counter(), "triangle": Counter()}
    for _ in range(calls):
        masks = torch.stack([m for _, m in layer_dropout_edge(batch.edge_index, layers, sampler=sampler,
                                                              directed=directed, batch=batch.batch,
                                                              generator=g, **kw)])
        per_copy = masks.view(layers, copies, CYCLE.size(1) + TRIANGLE.size(1))
        for name, cols in (("cycle", slice(0, 8)), ("triangle", slice(8, 14))):
            edges = (CYCLE if name == "cycle" else TRIANGLE)
            # an item: a column when directed, else an undirected edge (its two columns)
            item = [j if directed else j // 2 for j in range(edges.size(1))]
            for c in range(copies):
                rows = per_copy[:, c, cols]
                seen[name][tuple(frozenset(item[j] for j in row.nonzero().flatten().tolist())
                                 for row in rows)] += 1
    for name, edges in (("cycle", CYCLE), ("triangle", TRIANGLE)):
        m = edges.size(1) if directed else edges.size(1) // 2
        rates = ([0.5] * layers if sampler == "dropedge"
                 else [0.25 + 0.5 * l / (layers - 1) for l in range(layers)])
        counts = [math.floor(m * r + 1e-9) for r in (rates[::-1] if sampler == "ldd" else rates)]
        law = _law(relation, m, counts)
        assert set(seen[name]) <= set(law), (name, set(seen[name]) - set(law))  # only lawful tuples
        keys = sorted(law, key=repr)
        observed = [seen[name].get(t, 0) for t in keys]
        expected = [law[t] * copies * calls for t in keys]
        assert sum(observed) == copies * calls
        if len(keys) > 1:
            assert chisquare(observed, expected).pvalue > 1e-3, (name, observed, expected)


def test_the_module_and_the_wrapper_pass_batch_through():
    graphs = small_graphs(seed=1)
    batch = Batch.from_data_list(graphs)
    drop = LayerDropEdge(L, "dropedge++", generator=gen())
    masks = drop.masks(batch.edge_index, x=batch.x, batch=batch.batch)
    expected = torch.stack([m for _, m in layer_dropout_edge(batch.edge_index, L, x=batch.x,
                                                             batch=batch.batch, generator=gen())])
    assert torch.equal(masks, expected)
    model = GCN(5, 8, num_layers=L, out_channels=2)
    wrapped = LayerWiseEdges(model, LayerDropEdge(L, "dropedge++", generator=gen()))
    seen = []
    for conv in model.convs:  # after the wrapper's hooks: sees the swapped edges
        conv.register_forward_pre_hook(lambda c, a, k: seen.append(a[1]), with_kwargs=True)
    wrapped(batch.x, batch.edge_index, batch=batch.batch)
    assert all(torch.equal(e, batch.edge_index[:, m]) for e, m in zip(seen, expected))


@pytest.mark.parametrize("sampler", ["dropedge++", "li"])
def test_the_module_reuses_a_batch_only_while_it_is_equal(sampler):
    """The module keeps a batch's validation and per-graph layout while an equal batch
    vector comes in: a changed one (in place too) is validated again and counted anew —
    every call's counts checked by hand against the batch it was given."""
    graphs = small_graphs(seed=2)
    batch = Batch.from_data_list(graphs)
    drop = LayerDropEdge(L, sampler, keep_min=0.2, keep_max=0.8, generator=gen())
    rates = [0.2 + 0.6 * l / (L - 1) for l in range(L)]
    edge_graph = batch.batch[batch.edge_index[0]]

    def kept_per_graph(masks, graph_of, count):
        return [[len(distinct(batch.edge_index[:, (graph_of == g) & row], False)) for row in masks]
                for g in range(count)]

    for _ in range(2):  # the second call reuses the cached layout
        masks = drop.masks(batch.edge_index, x=batch.x, batch=batch.batch)
        assert kept_per_graph(masks, edge_graph, len(graphs)) == per_graph_counts(graphs, rates)
    merged = batch.batch.clone()
    merged.zero_()  # in place: one graph of everything, the whole batch's counts
    masks = drop.masks(batch.edge_index, x=batch.x, batch=merged)
    whole = len(distinct(batch.edge_index, False))
    assert kept_per_graph(masks, torch.zeros_like(edge_graph), 1) == [
        [int(whole * r + 1e-9) for r in rates]]
    crossing = batch.batch.clone()
    first = int((crossing == 1).nonzero()[0])  # the first node of graph 1 moved into graph 0
    crossing[first] = 0
    assert bool((crossing[batch.edge_index[0]] != crossing[batch.edge_index[1]]).any())  # the node has edges
    with pytest.raises(ValueError, match="joins nodes of two graphs"):
        drop.masks(batch.edge_index, x=batch.x, batch=crossing)


def test_the_kept_counts_follow_the_rates_and_depth_of_each_call():
    """The per-graph counts are kept beside a batch's layout while the batch is equal: a
    sampler whose rates change between calls (a researcher sweeping p_min on one module), or
    another depth, gets its own counts, by hand per graph."""
    graphs = small_graphs(seed=3)
    batch = Batch.from_data_list(graphs)
    drop = LayerDropEdge(L, "dropedge++", keep_min=0.2, keep_max=0.8, generator=gen())
    edge_graph = batch.batch[batch.edge_index[0]]

    def kept_per_graph(masks):
        return [[len(distinct(batch.edge_index[:, (edge_graph == g) & row], False)) for row in masks]
                for g in range(len(graphs))]

    for keep_min, depth in ((0.2, L), (0.5, L), (0.5, L), (0.2, L), (0.2, 2)):
        drop.sampler.p_min, drop.num_layers = keep_min, depth
        rates = [keep_min + (0.8 - keep_min) * l / (depth - 1) for l in range(depth)]
        masks = drop.masks(batch.edge_index, x=batch.x, batch=batch.batch)
        assert kept_per_graph(masks) == per_graph_counts(graphs, rates), (keep_min, depth)


def test_the_wrapper_finds_batch_by_position_as_basic_gnn_takes_it():
    """``BasicGNN.forward(x, edge_index, edge_weight, edge_attr, batch)``: a ``batch`` handed by
    position is the same batch as by keyword (it was ignored: the whole batch's counts)."""
    graphs = small_graphs(seed=1)
    batch = Batch.from_data_list(graphs)
    expected = torch.stack([m for _, m in layer_dropout_edge(batch.edge_index, L, x=batch.x,
                                                             batch=batch.batch, generator=gen())])
    model = GCN(5, 8, num_layers=L, out_channels=2)
    wrapped = LayerWiseEdges(model, LayerDropEdge(L, "dropedge++", generator=gen()))
    seen = []
    for conv in model.convs:
        conv.register_forward_pre_hook(lambda c, a, k: seen.append(a[1]), with_kwargs=True)
    wrapped(batch.x, batch.edge_index, None, None, batch.batch)
    assert all(torch.equal(e, batch.edge_index[:, m]) for e, m in zip(seen, expected))


def test_whole_batch_counts_differ_from_per_graph_counts():
    """Why the option exists: over the whole batch a graph's count follows no rate."""
    graphs = small_graphs(seed=2)
    batch = Batch.from_data_list(graphs)
    masks = torch.stack([m for _, m in layer_dropout_edge(batch.edge_index, L, sampler="lid", keep_min=0.2,
                                                          keep_max=0.8, generator=gen(3))])
    edge_graph = batch.batch[batch.edge_index[0]]
    counts = per_graph_counts(graphs, [0.2 + 0.6 * l / (L - 1) for l in range(L)])
    got = [[len(distinct(batch.edge_index[:, edge_graph == g][:, row], False))
            for row in masks[:, edge_graph == g]] for g in range(len(graphs))]
    assert got != counts


@pytest.mark.parametrize("batch, message", [
    (torch.tensor([0, 1, 0, 1]), "sorted non-negative graph ids"),
    (torch.tensor([0, 0, 1]), r"shape \(4,\) \(got \(3,\)\)"),
    (torch.tensor([0.0, 0, 1, 1]), r"one integer graph id per node"),
    (torch.tensor([0, 0, 0, 1]), r"column 2 joins nodes of two graphs of the batch \(2 and 3\)"),
])
def test_a_bad_batch_is_named(batch, message):
    ei = torch.tensor([[0, 1, 2, 3, 2, 3], [1, 0, 3, 2, 3, 2]])
    with pytest.raises(ValueError, match=message):
        check_batch(batch, 4, ei)
    with pytest.raises(ValueError, match=message):
        LayerDropEdge(2, "li")(ei, batch=batch)
    with pytest.raises(ValueError, match=message):  # the same errors in eval mode
        LayerDropEdge(2, "li").eval()(ei, batch=batch)
