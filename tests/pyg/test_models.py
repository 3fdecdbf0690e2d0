"""PyG's own models with DropEdge++ through :class:`LayerWiseEdges` (issue 36 (e), item 5):
``convs[i]`` receives exactly layer ``i``'s edges (the reference: a second, same-seeded
``LayerDropEdge``, recorded by a hook of our own), the whole graph in eval mode, and the
models train."""
from __future__ import annotations

import importlib.util
import re

import pytest
import torch
import torch.nn.functional as F
from dropedge_core.pyg import LayerDropEdge, LayerWiseEdges, to_pyg
from torch import nn
from torch_geometric.nn import GCN2Conv
from torch_geometric.nn.models import GAT, GCN, GraphSAGE

from tests.helpers import REPO

L = 3
MODELS = {"gcn": GCN, "sage": GraphSAGE, "gat": GAT}


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


class GCNII(nn.Module):
    """A GCN2Conv stack written the usual way: the conv takes (x, x_0, edge_index)."""

    def __init__(self, c_in: int, hidden: int, c_out: int, num_layers: int):
        super().__init__()
        self.lin_in, self.lin_out = nn.Linear(c_in, hidden), nn.Linear(hidden, c_out)
        self.convs = nn.ModuleList(GCN2Conv(hidden, alpha=0.1, theta=0.5, layer=i + 1)
                                   for i in range(num_layers))

    def forward(self, x, edge_index, edge_weight=None):
        x = x_0 = self.lin_in(x).relu()
        for conv in self.convs:
            x = conv(x, x_0, edge_index, edge_weight).relu()
        return self.lin_out(x)


def build(kind: str, jk, data, classes: int) -> nn.Module:
    torch.manual_seed(0)
    if kind == "gcn2":
        return GCNII(data.num_features, 16, classes, L)
    return MODELS[kind](data.num_features, 16, num_layers=L, out_channels=classes, jk=jk)


def record(convs) -> list:
    """What every conv is called with (after the wrapper's swap: hooks run in order)."""
    seen = []

    def hook(conv, args, kwargs):
        values = (*args, *kwargs.values())
        edges = [a for a in values if isinstance(a, torch.Tensor) and a.dtype == torch.long]
        weights = kwargs.get("edge_weight", args[3] if len(args) > 3 else None)
        seen.append((edges[0], weights))

    for conv in convs:
        conv.register_forward_pre_hook(hook, with_kwargs=True)
    return seen


@pytest.mark.parametrize("kind, jk", [("gcn", None), ("gcn", "cat"), ("gcn", "max"), ("sage", None),
                                      ("sage", "cat"), ("gat", None), ("gat", "cat"), ("gcn2", None)])
def test_each_conv_gets_its_layers_edges_and_eval_the_whole_graph(csbm, kind, jk):
    data = to_pyg(csbm)
    model = build(kind, jk, data, csbm.num_classes)
    wrapped = LayerWiseEdges(model, LayerDropEdge(L, "dropedge++", generator=gen()))
    seen = record(model.convs)
    out = wrapped(data.x, data.edge_index)
    expected = LayerDropEdge(L, "dropedge++", generator=gen())(data.edge_index, x=data.x)
    assert len(seen) == L
    for i, ((edges, _), kept) in enumerate(zip(seen, expected)):
        assert torch.equal(edges, kept), f"convs[{i}]"
    assert [e.size(1) for e, _ in seen] != [data.edge_index.size(1)] * L  # a real sample
    out.sum().backward()
    assert all(p.grad is not None for p in model.parameters() if p.requires_grad)
    seen.clear()
    wrapped.eval()(data.x, data.edge_index)
    assert all(edges is data.edge_index for edges, _ in seen)
    seen.clear()
    model(data.x, data.edge_index)  # the model on its own is untouched
    assert all(edges is data.edge_index for edges, _ in seen)


@pytest.mark.parametrize("kind", ["gcn", "gcn2"])
def test_edge_weights_reach_each_conv_with_its_edges(csbm, kind):
    data = to_pyg(csbm)
    weight = torch.rand(data.edge_index.size(1), generator=gen(4))
    model = build(kind, None, data, csbm.num_classes)
    wrapped = LayerWiseEdges(model, LayerDropEdge(L, "lid", generator=gen()))
    seen = record(model.convs)
    wrapped(data.x, data.edge_index, edge_weight=weight)
    expected = LayerDropEdge(L, "lid", generator=gen())(data.edge_index, edge_weight=weight)
    for (edges, w), (kept, kept_w) in zip(seen, expected):
        assert torch.equal(edges, kept) and torch.equal(w, kept_w)


def test_gcn_with_jk_trains_through_the_wrapper(csbm):
    data = to_pyg(csbm)
    model = LayerWiseEdges(GCN(data.num_features, 32, num_layers=4, out_channels=csbm.num_classes, jk="cat"),
                           LayerDropEdge(4, "dropedge++", generator=gen()))
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    losses = []
    for _ in range(30):
        model.train()
        opt.zero_grad()
        loss = F.cross_entropy(model(data.x, data.edge_index)[data.train_mask], data.y[data.train_mask])
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    with torch.no_grad():
        acc = (model.eval()(data.x, data.edge_index).argmax(1) == data.y)[data.test_mask].float().mean()
    assert losses[-1] < 0.5 * losses[0] and float(acc) > 1.5 / csbm.num_classes


def test_mistakes_are_named():
    model = GCN(4, 8, num_layers=3, out_channels=2)
    with pytest.raises(ValueError, match=r"the model has 3 layers but drop.num_layers=2"):
        LayerWiseEdges(model, LayerDropEdge(2, "li"))
    with pytest.raises(ValueError, match="without normalization="):
        LayerWiseEdges(model, LayerDropEdge(3, "li", normalization="AN"))

    class Copies(nn.Module):  # calls its layer with a copy: nothing to swap, said so
        def __init__(self):
            super().__init__()
            self.convs = nn.ModuleList([GCN(4, 2, num_layers=1)])

        def forward(self, x, edge_index):
            return self.convs[0](x, edge_index.clone())

    ring = torch.tensor([[0, 1, 1, 2, 2, 3, 3, 0], [1, 0, 2, 1, 3, 2, 0, 3]])
    with pytest.raises(ValueError, match=r"convs\[0\] \(GCN\) was not called with the edge_index"):
        LayerWiseEdges(Copies(), LayerDropEdge(1, "li"))(torch.rand(4, 4), ring)


def test_the_models_example_trains_gcn_jk_on_cora(cora, capsys):
    spec = importlib.util.spec_from_file_location("pyg_models", REPO / "examples" / "pyg_models.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    assert example.main(["--epochs", "3", "--seeds", "0"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"GCN\(jk='cat'\), 8 layers, DropEdge\+\+ .* seed 0: test \d+\.\d%", out), out
