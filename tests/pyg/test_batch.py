"""Per-graph keep counts for a batch of graphs (issue 36 (f)): with ``batch``, every graph
keeps its own share of its own edges, counted here with numpy per graph, and its masks
are those of sampling it alone (the graphs one after the other, one generator)."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch_geometric.data import Batch, Data
from torch_geometric.nn.models import GCN

from dropedge_core.pyg import LayerDropEdge, LayerWiseEdges, layer_dropout_edge
from dropedge_core.pyg.batch import check_batch

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
                                               ("ldd", False), ("dropedge", False)])
def test_each_graph_keeps_its_own_share_and_is_drawn_as_if_alone(sampler, directed):
    graphs = small_graphs()
    batch = Batch.from_data_list(graphs)
    kw = {"p": 0.5} if sampler == "dropedge" else {"keep_min": 0.2, "keep_max": 0.8}
    masks = torch.stack([m for _, m in layer_dropout_edge(
        batch.edge_index, L, x=batch.x, sampler=sampler, directed=directed, batch=batch.batch,
        generator=gen(), **kw)])
    g = gen()
    alone = torch.cat([torch.stack([m for _, m in layer_dropout_edge(
        d.edge_index, L, x=d.x, sampler=sampler, directed=directed, num_nodes=d.num_nodes,
        generator=g, **kw)]) for d in graphs], dim=1)  # Batch keeps the graphs' column order
    assert torch.equal(masks, alone)
    rates = [0.5] * L if sampler == "dropedge" else [0.2 + 0.6 * l / (L - 1) for l in range(L)]
    counts = per_graph_counts(graphs, rates[::-1] if sampler == "ldd" else rates, directed)
    edge_graph = batch.batch[batch.edge_index[0]]
    for gid, expected in enumerate(counts):
        mine = batch.edge_index[:, edge_graph == gid]
        kept = [len(distinct(mine[:, row], directed)) for row in masks[:, edge_graph == gid]]
        assert kept == expected, gid


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
