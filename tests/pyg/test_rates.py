"""PyG's conventions at the PyG boundary (issue 36 (d)): ``p`` is PyG's drop probability,
the layer-wise keep rates are named ``keep_min``/``keep_max``, a rate the sampler would
ignore is refused, ``force_undirected`` is PyG's ``not directed``."""
from __future__ import annotations

import math

import pytest
import torch
from dropedge_core import samplers
from dropedge_core.pyg import LayerDropEdge, SampleLayerEdges, layer_dropout_edge, to_pyg
from torch_geometric.utils import dropout_edge


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


@pytest.mark.parametrize("p", [0.0, 0.2, 0.5, 0.9, 1.0])
@pytest.mark.parametrize("sampler", ["dropedge", "fd"])
def test_p_drops_what_pyg_dropout_edge_drops(csbm, sampler, p):
    """``p=0.2`` keeps floor(0.8 M) edges at every layer; PyG's ``dropout_edge(p=0.2)``
    keeps each edge with probability 0.8: its mean over draws is the same fraction."""
    data = to_pyg(csbm)
    m = csbm.num_edges
    layers = layer_dropout_edge(data.edge_index, 3, x=data.x, sampler=sampler, p=p, generator=gen())
    expected = math.floor(m * (1 - p) + 1e-9)  # the floor of the kept fraction, counted by hand
    assert [int(mask.sum()) // 2 for _, mask in layers] == [expected] * 3
    torch.manual_seed(0)  # dropout_edge draws from torch's global generator
    pyg = sum(dropout_edge(data.edge_index, p=p, force_undirected=True)[0].size(1) // 2
              for _ in range(200)) / (200 * m)
    assert abs(pyg - expected / m) < 0.01 + 1 / m


def test_the_module_and_the_transform_read_p_the_same_way(csbm):
    data = to_pyg(csbm)
    kept = LayerDropEdge(2, "dropedge", p=0.2, generator=gen()).masks(data.edge_index).sum(1)
    mask = SampleLayerEdges(2, "dropedge", p=0.2, generator=gen())(data.clone()).edge_layer_mask
    assert kept.tolist() == mask.sum(0).tolist() == [2 * math.floor(csbm.num_edges * 0.8 + 1e-9)] * 2


@pytest.mark.parametrize("sampler", ["li", "lid", "ldd", "dropedge++"])
def test_keep_min_and_keep_max_are_fractions_kept(csbm, sampler):
    data = to_pyg(csbm)
    m = csbm.num_edges
    layers = layer_dropout_edge(data.edge_index, 3, x=data.x, sampler=sampler, keep_min=0.2, keep_max=0.6,
                                generator=gen())
    counts = [int(mask.sum()) // 2 for _, mask in layers]
    by_hand = [math.floor(m * r + 1e-9) for r in (0.2, 0.4, 0.6)]
    assert counts == (by_hand[::-1] if sampler == "ldd" else by_hand)


@pytest.mark.parametrize("sampler, kwargs, message", [
    ("dropedge++", {"p": 0.2}, r"p=0.2 \(PyG's drop probability\) would be ignored by 'dropedge\+\+'"),
    ("li", {"p": 0.2}, r"would be ignored by 'li'.*pass keep_min/keep_max"),
    ("dropedge", {"keep_min": 0.2}, r"keep_min/keep_max would be ignored by 'dropedge'.*pass p"),
    ("fd", {"keep_max": 0.9}, r"keep_min/keep_max would be ignored by 'fd'"),
    ("nodrop", {"p": 0.5}, r"p would be ignored by 'nodrop', which keeps every edge"),
    ("dropedge++", {"p_min": 0.2}, r"p_min: in dropedge_core.pyg the layer-wise keep rates are keep_min"),
    ("dropedge", {"p_max": 0.9}, r"p_max: .*keep_min/keep_max"),
    (samplers.make("lid"), {"keep_min": 0.1}, r"keep_min would be ignored: the EdgeSampler 'lid'"),
    ("dropedge", {"p": 1.5}, r"p is a drop probability and must be in \[0, 1\] \(got 1.5\)"),
    ("li", {"keep_max": 1.2}, r"keep_max is a fraction of edges kept and must be in \[0, 1\]"),
    ("li", {"directed": True, "force_undirected": True}, r"directed=True contradicts force_undirected=True"),
])
def test_a_rate_that_would_be_ignored_or_misread_is_refused(sampler, kwargs, message):
    ring = torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]])
    with pytest.raises(ValueError, match=message):
        layer_dropout_edge(ring, 2, x=torch.rand(3, 2), sampler=sampler, **kwargs)
    with pytest.raises(ValueError, match=message):
        LayerDropEdge(2, sampler, **kwargs)


def test_an_unknown_keyword_is_a_type_error():
    with pytest.raises(TypeError, match=r"unexpected keyword argument\(s\) \['q'\]"):
        LayerDropEdge(2, "li", q=0.5)


@pytest.mark.parametrize("sampler", ["li", "dropedge"])
def test_force_undirected_is_pygs_not_directed(csbm, sampler):
    data = to_pyg(csbm)
    for force, directed in ((False, True), (True, False)):
        a = LayerDropEdge(3, sampler, force_undirected=force, generator=gen()).masks(data.edge_index)
        b = LayerDropEdge(3, sampler, directed=directed, generator=gen()).masks(data.edge_index)
        assert torch.equal(a, b)
    undirected = LayerDropEdge(3, sampler, force_undirected=True, generator=gen()).masks(data.edge_index)
    m = csbm.num_edges  # Graph.edge_index: column j + M is column j reversed
    assert torch.equal(undirected[:, :m], undirected[:, m:])


def test_the_repr_gives_each_rate_its_unit():
    assert "keep_min=0.3, keep_max=0.8" in repr(LayerDropEdge(4, "lid"))
    assert "p=0.2 (drop)" in repr(LayerDropEdge(4, "dropedge", p=0.2))
