"""The PyG front end on the inputs issue 48 found mishandled: graphs with no edge (empty,
or self-loops only) in every mode, a ``batch`` of huge graph ids, edge weights of a dtype
no normalisation can take, a model that is not a module, a bool layer count. Expected
adjacencies are written out by hand from the formulas (``normalization``'s table): on a
graph without edges ``A = 0``, ``D = 0``, ``D~ = I``."""
from __future__ import annotations

import pytest
import torch
from dropedge_core import samplers
from dropedge_core.pyg import LayerDropEdge, LayerWiseEdges, layer_dropout_edge, normalize
from torch import nn

N = 4
X = torch.rand(N, 3, generator=torch.Generator().manual_seed(0))
EMPTY = torch.zeros(2, 0, dtype=torch.long)
LOOPS = torch.tensor([[0, 1, 2, 3], [0, 1, 2, 3]])
BATCH = torch.tensor([0, 0, 1, 1])

#: each normalisation of an edgeless graph, by hand: NA D^-1/2 A D^-1/2 = 0 (an isolated
#: node gets nothing), FOG I + 0, AN D~^-1/2 (0 + I) D~^-1/2 = I, ANS I + I, ARW D~^-1 I = I
BY_HAND = {"NA": 0.0, "FOG": 1.0, "AN": 1.0, "ANS": 2.0, "ARW": 1.0}


def _dense(adjacency: torch.Tensor) -> torch.Tensor:
    return adjacency.to_dense() if adjacency.layout != torch.strided else adjacency


@pytest.mark.parametrize("graph", ["empty", "self-loops only"])
@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("method", sorted(BY_HAND))
@pytest.mark.parametrize("sampler", samplers.NAMES)
def test_a_graph_without_edges_gives_every_normalisation_its_identity_part(sampler, method, directed,
                                                                           graph):
    """Was: ``RuntimeError: ZeroDivisionError`` (the normalisation's table of M = 0 columns)."""
    edge_index = EMPTY if graph == "empty" else LOOPS
    expected = BY_HAND[method] * torch.eye(N)
    drop = LayerDropEdge(3, sampler, directed=directed, normalization=method,
                         generator=torch.Generator().manual_seed(1))
    for kwargs in ({}, {"batch": BATCH}, {"edge_weight": torch.ones(edge_index.size(1))}):
        for mode in (drop.train(), drop.eval()):
            layers = mode(edge_index, x=X, num_nodes=N, **kwargs)
            assert len(layers) == 3
            for adjacency in layers:
                assert torch.equal(_dense(adjacency), expected), (kwargs, mode.training)


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("sampler", samplers.NAMES)
def test_a_graph_without_edges_keeps_its_self_loops_at_every_layer(sampler, directed):
    for edge_index in (EMPTY, LOOPS):
        for batch in (None, BATCH):
            layers = layer_dropout_edge(edge_index, 3, x=X, sampler=sampler, directed=directed,
                                        num_nodes=N, batch=batch)
            assert [torch.equal(ei, edge_index) and bool(mask.all()) for ei, mask in layers] == [True] * 3
            drop = LayerDropEdge(3, sampler, directed=directed)
            assert all(torch.equal(ei, edge_index) for ei in drop(edge_index, x=X, num_nodes=N, batch=batch))


@pytest.mark.parametrize("graph_id", [10**7, 10**9, 2**62])
def test_batch_ids_are_checked_against_the_node_count_before_allocating(graph_id):
    """Was: ``torch.bincount`` of ids up to 10**9 (8 GB for 4 nodes), or an overflow at 2**62."""
    batch = torch.tensor([0, 0, graph_id, graph_id])
    edge_index = torch.tensor([[0, 1, 2, 3], [1, 0, 3, 2]])
    message = f"batch holds graph id {graph_id} but there are 4 nodes; graph ids must be in [0, 4)"
    with pytest.raises(ValueError) as info:
        layer_dropout_edge(edge_index, 2, sampler="li", batch=batch)
    assert str(info.value).startswith(message)
    with pytest.raises(ValueError, match="batch holds graph id"):
        LayerDropEdge(2, "li")(edge_index, batch=batch)
    with pytest.raises(ValueError, match="batch holds graph id"):
        LayerDropEdge(2, "li").eval()(edge_index, batch=batch)


def test_a_batch_with_an_empty_graph_inside_still_works():
    """Ids below N with a gap (an empty graph between two) are PyG's own batches: kept."""
    edge_index = torch.tensor([[0, 1, 2, 3], [1, 0, 3, 2]])
    layers = layer_dropout_edge(edge_index, 2, sampler="nodrop", batch=torch.tensor([0, 0, 2, 2]))
    assert all(torch.equal(ei, edge_index) for ei, _ in layers)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8, torch.bool, torch.complex64])
def test_edge_weights_of_a_dtype_no_normalisation_takes_are_one_value_error(dtype):
    """Was: ``RuntimeError: result type Float can't be cast ...`` or ``NotImplementedError``."""
    edge_index = torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]])
    weight = torch.ones(4).to(dtype)
    message = f"edge_weight must hold floating point weights (got dtype {dtype}); use edge_weight.float()"
    calls = [lambda: normalize(edge_index, 3, "AN", weight),
             lambda: normalize(edge_index, 3, "ARW", weight),
             lambda: LayerDropEdge(2, "li", normalization="AN")(edge_index, edge_weight=weight),
             lambda: LayerDropEdge(2, "li")(edge_index, edge_weight=weight),
             lambda: LayerDropEdge(2, "li").eval()(edge_index, edge_weight=weight)]
    for call in calls:
        with pytest.raises(ValueError) as info:
            call()
        assert str(info.value) == message


def test_edge_attributes_of_any_dtype_still_ride_along():
    """``edge_attr`` are features (an int edge type is common): only weights are refused."""
    edge_index = torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]])
    attr = torch.arange(4)
    layers = layer_dropout_edge(edge_index, 2, sampler="nodrop", edge_attr=attr)
    assert all(torch.equal(a, attr) for _, a, _ in layers)


class _NoConvs(nn.Module):
    def forward(self, x, edge_index):
        return x


@pytest.mark.parametrize("model, convs, message", [
    ("gcn", None, "model must be a torch.nn.Module (got str 'gcn'); e.g. torch_geometric.nn.models.GCN(...)"),
    (None, None, "model must be a torch.nn.Module (got NoneType None); "
                 "e.g. torch_geometric.nn.models.GCN(...)"),
    (_NoConvs(), None, "model (_NoConvs) has no .convs; pass convs=, the layers that take edges in the "
                       "order they run"),
    (_NoConvs(), ["conv"], "convs[0] must be a torch.nn.Module (got str 'conv')"),
])
def test_a_model_that_is_not_a_module_is_one_type_error(model, convs, message):
    """Was: ``AttributeError: 'str' object has no attribute 'convs'``."""
    with pytest.raises(TypeError) as info:
        LayerWiseEdges(model, LayerDropEdge(1, "li"), convs=convs)
    assert str(info.value) == message


def test_a_long_model_value_is_echoed_bounded():
    with pytest.raises(TypeError) as info:
        LayerWiseEdges("x" * 10_000, LayerDropEdge(1, "li"))
    assert len(str(info.value)) < 200 and "(10002 characters)" in str(info.value)  # the repr's


@pytest.mark.parametrize("value", [True, False])
def test_a_bool_layer_count_is_refused(value):
    """Was: ``layer_dropout_edge(ei, True)`` returned one layer (True == 1)."""
    edge_index = torch.tensor([[0, 1], [1, 0]])
    message = f"num_layers must be an integer in 1..{samplers.MAX_LAYERS} (got {value})"
    for call in (lambda: layer_dropout_edge(edge_index, value, sampler="li"),
                 lambda: LayerDropEdge(value, "li"),
                 lambda: samplers.check_layers(value)):
        with pytest.raises(ValueError) as info:
            call()
        assert str(info.value) == message
