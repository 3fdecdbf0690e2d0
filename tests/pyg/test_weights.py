"""Edge weights and attributes ride along per layer (issue 36 (e)), and the normalisations
take them (PyG's weighted ``gcn_norm``), checked against dense formulas."""
from __future__ import annotations

import pytest
import torch
from dropedge_core import normalization
from dropedge_core.pyg import LayerDropEdge, layer_dropout_edge, normalize, to_pyg
from torch_geometric.nn import GCNConv

from tests.pyg.references import dense_formula

L = 4


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


def labelled(num_edges: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Weights and attributes that name their column: weight c + 1, attribute (c, -c)."""
    cols = torch.arange(num_edges)
    return cols.float() + 1, torch.stack([cols, -cols], dim=1).float()


def test_each_layer_gets_the_weights_and_attributes_of_its_kept_columns(csbm):
    data = to_pyg(csbm)
    weight, attr = labelled(data.edge_index.size(1))
    drop = LayerDropEdge(L, "dropedge++", generator=gen())
    layers = drop(data.edge_index, x=data.x, edge_weight=weight, edge_attr=attr)
    masks = LayerDropEdge(L, "dropedge++", generator=gen()).masks(data.edge_index, x=data.x)
    for (ei, w, a), mask in zip(layers, masks):
        cols = w.long() - 1  # the columns the weights say they came from
        assert torch.equal(ei, data.edge_index[:, cols]) and torch.equal(a[:, 0].long(), cols)
        assert torch.equal(cols, mask.nonzero().flatten())
    only_weight = LayerDropEdge(L, "li", generator=gen())(data.edge_index, edge_weight=weight)
    assert all(len(layer) == 2 and torch.equal(layer[0], data.edge_index[:, layer[1].long() - 1])
               for layer in only_weight)
    full = drop.eval()(data.edge_index, x=data.x, edge_attr=attr)
    assert all(ei is data.edge_index and a is attr for ei, a in full)


def test_the_functional_form_returns_triples_with_edge_attr(csbm):
    data = to_pyg(csbm)
    weight, _ = labelled(data.edge_index.size(1))
    layers = layer_dropout_edge(data.edge_index, L, sampler="lid", edge_attr=weight, generator=gen())
    for ei, w, mask in layers:
        assert torch.equal(w, weight[mask]) and torch.equal(ei, data.edge_index[:, w.long() - 1])


def _weighted_graph(n: int = 9, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """A directed graph with distinct positive weights per column, an isolated node, and its
    dense weighted A (row = target, PyG's reading)."""
    g = gen(seed)
    present = (torch.rand(n, n, generator=g) < 0.35).double()
    a = present * (torch.rand(n, n, generator=g, dtype=torch.float64) + 0.1)
    a.fill_diagonal_(0)
    a[8, :] = a[:, 8] = 0
    target, source = a.nonzero().t()
    return torch.stack([source, target]), a[target, source].float(), a


@pytest.mark.parametrize("method", normalization.METHODS)
def test_weighted_normalize_matches_thedense_formula(method):
    n = 9
    edge_index, weight, a = _weighted_graph(n)
    ei, w = normalize(edge_index, n, method, edge_weight=weight)
    dense = torch.zeros(n, n, dtype=torch.float64).index_put_((ei[1], ei[0]), w.double(), accumulate=True)
    assert torch.isfinite(w).all()
    assert torch.allclose(dense, dense_formula(a, method), atol=1e-5)


def test_weighted_an_is_gcnconvs_own_normalisation():
    edge_index, weight, _ = _weighted_graph()
    torch.manual_seed(0)
    conv = GCNConv(3, 2)
    x = torch.rand(9, 3)
    expected = conv(x, edge_index, weight)  # normalize=True: gcn_norm with the weights
    conv.normalize = False
    assert torch.allclose(conv(x, *normalize(edge_index, 9, "AN", edge_weight=weight)), expected, atol=1e-6)


@pytest.mark.parametrize("method", ["AN", "ARW"])
def test_normalization_with_edge_weights_gives_each_layers_weighted_adjacency(method):
    n = 9
    edge_index, weight, _ = _weighted_graph(n, seed=3)
    drop = LayerDropEdge(L, "lid", generator=gen(), normalization=method)
    masks = LayerDropEdge(L, "lid", generator=gen()).masks(edge_index, num_nodes=n)
    for adj, mask in zip(drop(edge_index, num_nodes=n, edge_weight=weight), masks):
        kept = torch.zeros(n, n, dtype=torch.float64)
        kept[edge_index[1, mask], edge_index[0, mask]] = weight[mask].double()
        assert torch.allclose(adj.to_dense().double(), dense_formula(kept, method), atol=1e-5)
    full = drop.eval()(edge_index, num_nodes=n, edge_weight=weight)
    whole = torch.zeros(n, n, dtype=torch.float64).index_put_((edge_index[1], edge_index[0]), weight.double())
    assert torch.allclose(full[0].to_dense().double(), dense_formula(whole, method), atol=1e-5)
    with pytest.raises(ValueError, match="normalization= returns adjacencies, which carry edge weights only"):
        drop(edge_index, num_nodes=n, edge_attr=torch.ones(edge_index.size(1), 2))
