"""dropedge_core.pyg with PyG's own layers: the same masks as the Graph path, gradients,
eval mode, hostile edge_index, the normalisations against dense formulas, the transform,
the conversions, the README snippet and the docstrings' examples."""
from __future__ import annotations

import doctest
import math
import re

import pytest
import torch
from dropedge_core import datasets, normalization, samplers
from dropedge_core.pyg import (
    LayerDropEdge,
    SampleLayerEdges,
    from_pyg,
    layer_dropout_edge,
    normalize,
    to_pyg,
)
from torch_geometric.data import Data
from torch_geometric.nn import GATConv, GCNConv, SAGEConv

from tests.helpers import REPO
from tests.pyg.references import dense_formula

L = 5


def gen(seed=0, device="cpu"):
    return torch.Generator(device=device).manual_seed(seed)


@pytest.fixture(scope="module")
def csbm():
    return datasets.load("csbm")  # built in; its features carry class signal (kernel weights differ)


def graph_path(g, name, num_layers=L, seed=0, directed=False):
    """The Graph path's (L, 2M) masks over g.edge_index."""
    sampler = samplers.make(name, p_min=0.2, p_max=0.9, directed=directed)
    return g.directed_mask(sampler.sample(g, num_layers, gen(seed)))


def pyg_rates(name):
    """graph_path's rates in the PyG front end's terms: keep_min/keep_max (kept), p (dropped)."""
    relation = samplers.NAMED[name][0]
    if relation == "all":
        return {}
    return {"p": 1 - 0.55} if relation == "shared" else {"keep_min": 0.2, "keep_max": 0.9}


def pairs(edge_index):
    return set(map(tuple, edge_index.t().tolist()))


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("name", samplers.NAMES)
def test_masks_are_the_graph_paths_for_the_same_seed(csbm, name, directed):
    data = to_pyg(csbm)
    expected = graph_path(csbm, name, directed=directed)
    layers = layer_dropout_edge(data.edge_index, L, x=data.x, sampler=name, **pyg_rates(name),
                                directed=directed, generator=gen())
    assert torch.equal(torch.stack([m for _, m in layers]), expected)
    for (kept, _), row in zip(layers, expected):
        assert torch.equal(kept, csbm.edge_index[:, row])
    drop = LayerDropEdge(L, name, **pyg_rates(name), directed=directed, generator=gen())
    assert torch.equal(drop.masks(data.edge_index, x=data.x), expected)


def test_shuffled_columns_keep_the_same_edges(csbm):
    """The mapping does not rely on the Graph's column order: a permuted edge_index keeps
    the same (source, target) pairs at every layer."""
    data = to_pyg(csbm)
    expected = graph_path(csbm, "dropedge++")
    perm = torch.randperm(data.edge_index.size(1), generator=gen(5))
    shuffled = data.edge_index[:, perm]
    layers = layer_dropout_edge(shuffled, L, x=data.x, keep_min=0.2, keep_max=0.9, generator=gen())
    for (kept, _), row in zip(layers, expected):
        assert pairs(kept) == pairs(csbm.edge_index[:, row])


def test_keep_counts_and_nesting_follow_the_paper(csbm):
    data = to_pyg(csbm)
    m = csbm.num_edges
    masks = torch.stack([mk for _, mk in layer_dropout_edge(data.edge_index, L, x=data.x, keep_min=0.2,
                                                            keep_max=0.9, generator=gen(2))])
    expected = [2 * math.floor(m * (0.2 + 0.7 * l / (L - 1)) + 1e-9) for l in range(L)]
    assert masks.sum(1).tolist() == expected
    assert bool((masks[:-1] <= masks[1:]).all())  # DropEdge++ nests: bottom layer sparsest


def _stack(kind, dims):
    make = {"gcn": lambda a, b: GCNConv(a, b, cached=False), "sage": SAGEConv,
            "gat": lambda a, b: GATConv(a, b, heads=1)}[kind]
    return torch.nn.ModuleList(make(a, b) for a, b in zip(dims[:-1], dims[1:]))


@pytest.mark.parametrize("kind", ["gcn", "sage", "gat"])
def test_gradients_flow_into_pyg_layers_and_learned_features(csbm, kind):
    """Learned node embeddings feed both the layers and the kernel: the module must not
    break autograd (it reads the features detached) and every parameter gets a gradient."""
    data = to_pyg(csbm)
    torch.manual_seed(0)
    emb = torch.nn.Parameter(data.x.clone())
    convs = _stack(kind, [emb.size(1), 16, 16, csbm.num_classes])
    drop = LayerDropEdge(3, "dropedge++", generator=gen())
    h = emb
    for i, (conv, ei) in enumerate(zip(convs, drop(data.edge_index, x=emb))):
        h = conv(h, ei)
        h = h.relu() if i < 2 else h
    loss = torch.nn.functional.cross_entropy(h[csbm.train_mask], csbm.y[csbm.train_mask])
    loss.backward()
    for p in [emb, *convs.parameters()]:
        assert p.grad is not None and torch.isfinite(p.grad).all() and p.grad.abs().sum() > 0


def test_eval_mode_is_the_identity_and_draws_nothing(csbm):
    data = to_pyg(csbm)
    g = gen(3)
    drop = LayerDropEdge(L, "dropedge++", generator=g).eval()
    before = g.get_state()
    out = drop(data.edge_index, x=data.x)
    assert len(out) == L and all(ei is data.edge_index for ei in out)
    assert torch.equal(g.get_state(), before)
    drop.train()
    assert drop(data.edge_index, x=data.x)[0].size(1) < data.edge_index.size(1)


@pytest.mark.parametrize("name", ["dropedge", "fd", "nodrop", "li"])
def test_one_edge_set_for_every_layer_is_selected_once(csbm, name):
    """DropEdge, FD and NoDrop keep one edge set for every layer: every layer is handed the
    one tensor (as in eval mode), the columns the mask keeps; LI's layers stay their own."""
    data = to_pyg(csbm)
    weights = torch.rand(data.edge_index.size(1), generator=gen(5))
    masks = LayerDropEdge(L, name, generator=gen(4)).masks(data.edge_index, x=data.x)
    out = LayerDropEdge(L, name, generator=gen(4))(data.edge_index, x=data.x, edge_weight=weights)
    functional = layer_dropout_edge(data.edge_index, L, x=data.x, sampler=name, generator=gen(4),
                                    edge_attr=weights)
    kept = [(data.edge_index[:, m], weights[m]) for m in masks]  # column by column, by hand
    for layer in range(L):
        assert torch.equal(out[layer][0], kept[layer][0]) and torch.equal(out[layer][1], kept[layer][1])
        assert torch.equal(functional[layer][0], kept[layer][0])
        assert torch.equal(functional[layer][2], masks[layer])
    shared = name != "li"
    assert all((out[layer][0] is out[0][0]) == shared for layer in range(1, L))
    assert all((functional[layer][0] is functional[0][0]) == shared for layer in range(1, L))


def test_training_false_is_a_no_op_after_validation():
    ei = torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]])
    layers = layer_dropout_edge(ei, 3, sampler="li", training=False)
    assert all(kept is ei and bool(mask.all()) for kept, mask in layers)
    with pytest.raises(ValueError, match="keep_min must be <= keep_max"):
        layer_dropout_edge(ei, 3, sampler="li", keep_min=0.9, keep_max=0.1, training=False)
    with pytest.raises(ValueError, match="node id 2 but num_nodes=2"):
        layer_dropout_edge(ei, 3, sampler="li", num_nodes=2, training=False)


# --- hostile edge_index ----------------------------------------------------------------

RING = torch.tensor([[0, 1, 1, 2, 2, 3, 3, 0], [1, 0, 2, 1, 3, 2, 0, 3]])


def test_self_loops_are_kept_at_every_layer_and_not_counted():
    with_loops = torch.cat([RING, torch.tensor([[2, 0], [2, 0]])], dim=1)
    plain = torch.stack([m for _, m in layer_dropout_edge(RING, 4, sampler="li", generator=gen(1))])
    looped = torch.stack([m for _, m in layer_dropout_edge(with_loops, 4, sampler="li", generator=gen(1))])
    assert bool(looped[:, -2:].all())  # the two self-loops, at every layer
    assert torch.equal(looped[:, :-2], plain)  # the same draw for the real edges


def test_duplicates_are_one_edge_kept_or_dropped_together():
    dup = torch.cat([RING, RING[:, [0, 3]], RING[:, [0]].flip(0)], dim=1)  # 0-1 twice more, 2-1 again
    for _ in range(5):
        masks = torch.stack([m for _, m in layer_dropout_edge(dup, 3, sampler="li", keep_min=0.25,
                                                              keep_max=0.75)])
        assert torch.equal(masks[:, 8], masks[:, 0]) and torch.equal(masks[:, 10], masks[:, 0])
        assert torch.equal(masks[:, 9], masks[:, 3])
        assert masks[:, :8].sum(1).tolist() == [2, 4, 6]  # counts over the 4 distinct edges


def test_one_direction_only_keeps_the_given_direction_at_the_keep_rate():
    one_way = RING[:, ::2]  # (0,1), (1,2), (2,3), (3,0): 4 edges, one column each
    layers = layer_dropout_edge(one_way, 3, sampler="lid", keep_min=0.25, keep_max=0.75, generator=gen())
    assert [int(m.sum()) for _, m in layers] == [1, 2, 3]
    assert all(pairs(kept) <= pairs(one_way) for kept, _ in layers)


@pytest.mark.parametrize("bad, num_nodes, message", [
    (torch.tensor([[0, 1], [1, 5]]), 5, r"node id 5 but num_nodes=5; ids must be in \[0, 5\)"),
    (torch.tensor([[0, -1], [1, 2]]), None, r"negative node id \(-1\)"),
    (torch.tensor([[0.0, 1.0], [1.0, 0.0]]), None, r"integer node ids \(got dtype torch.float32\)"),
    (torch.tensor([[True], [False]]), None, r"integer node ids \(got dtype torch.bool\)"),
    (torch.tensor([[0, 1], [1, 2], [2, 0]]), None, r"shape \(2, E\) \(got \(3, 2\)\)"),
    (torch.tensor([0, 1, 2]), None, r"shape \(2, E\) \(got \(3,\)\)"),
    ([[0, 1], [1, 0]], None, r"torch.Tensor of shape \(2, E\) \(got list\)"),
    (torch.tensor([[0, 1], [1, 0]]), -1, r"num_nodes must be a non-negative integer \(got -1\)"),
])
def test_a_malformed_edge_index_is_named_before_anything_is_drawn(bad, num_nodes, message):
    g = gen()
    before = g.get_state()
    with pytest.raises(ValueError, match=message):
        layer_dropout_edge(bad, 2, sampler="li", num_nodes=num_nodes, generator=g)
    with pytest.raises(ValueError, match=message):
        LayerDropEdge(2, "li", generator=g)(bad, num_nodes=num_nodes)
    assert torch.equal(g.get_state(), before)


def test_features_and_sampler_mistakes_are_named():
    with pytest.raises(ValueError, match="'dropedge\\+\\+' weighs edges by a kernel .* pass x"):
        layer_dropout_edge(RING, 2)
    with pytest.raises(ValueError, match="x has 3 rows but num_nodes=4"):
        layer_dropout_edge(RING, 2, x=torch.rand(3, 2), num_nodes=4)
    with pytest.raises(ValueError, match="x must hold floating point features"):
        layer_dropout_edge(RING, 2, x=torch.ones(4, 2, dtype=torch.long))
    with pytest.raises(ValueError, match=r"unknown sampler 'dropedge\+'; valid: nodrop"):
        LayerDropEdge(2, "dropedge+")
    with pytest.raises(ValueError, match="num_layers must be an integer in 1..256 \\(got 0\\)"):
        layer_dropout_edge(RING, 0, sampler="li")


def test_isolated_nodes_and_an_empty_graph_go_through_a_gcn():
    x = torch.rand(10, 3)  # nodes 4..9 have no edge
    drop = LayerDropEdge(2, "dropedge++", generator=gen())
    conv = GCNConv(3, 2, cached=False)
    for edge_index in (RING, torch.empty(2, 0, dtype=torch.long)):
        layers = drop(edge_index, x=x)
        assert len(layers) == 2 and all(ei.shape[0] == 2 and ei.dtype == torch.long for ei in layers)
        assert conv(x, layers[0]).shape == (10, 2)
    assert [ei.size(1) for ei in drop(torch.empty(2, 0, dtype=torch.long), x=x)] == [0, 0]


def test_the_module_caches_what_depends_on_the_graph_only(csbm, monkeypatch):
    calls = []
    real = samplers.kernel_weights
    monkeypatch.setattr(samplers, "kernel_weights", lambda *a, **k: calls.append(1) or real(*a, **k))
    data = to_pyg(csbm)
    ei = data.edge_index.clone()
    drop = LayerDropEdge(L, "dropedge++", generator=gen())
    for _ in range(3):
        drop(ei, x=data.x)
    assert len(calls) == 1
    ei[:, :2] = ei[:, :2].flip(0)  # changed in place: the cache must see it
    drop(ei, x=data.x)
    assert len(calls) == 2


# --- normalisations ----------------------------------------------------------------------

@pytest.mark.parametrize("method", normalization.METHODS)
def test_normalize_matches_thedense_formula(method):
    torch.manual_seed(0)
    n = 9
    a = (torch.rand(n, n) < 0.35).double().triu(1)
    a = a + a.t()
    a[8, :] = a[:, 8] = 0  # an isolated node: NA/FOG must give it zeros, never inf/NaN
    edge_index = a.nonzero().t()
    ei, w = normalize(torch.cat([edge_index, torch.tensor([[3], [3]])], dim=1), n, method)  # + a raw loop
    dense = torch.zeros(n, n, dtype=torch.float64)
    dense.index_put_((ei[1], ei[0]), w.double(), accumulate=True)  # PyG: row = target
    assert torch.isfinite(w).all()
    assert torch.allclose(dense, dense_formula(a, method), atol=1e-6)


def test_gcn_norm_of_each_layer_equals_the_projects_an(csbm):
    data = to_pyg(csbm)
    masks = samplers.make("dropedge++").sample(csbm, 3, gen())
    ours = normalization.adjacencies(csbm, masks, "AN")
    for (kept, _), (ei, w) in zip(layer_dropout_edge(data.edge_index, 3, x=data.x, generator=gen()), ours):
        pei, pw = normalize(kept, csbm.num_nodes, "AN")
        n = csbm.num_nodes
        assert torch.allclose(normalization.to_dense(pei, pw, n), normalization.to_dense(ei, w, n), atol=1e-6)


# --- transform, conversions --------------------------------------------------------------

def test_the_transform_stores_one_mask_row_per_edge_and_leaves_the_input_alone(csbm):
    data = to_pyg(csbm)
    out = SampleLayerEdges(L, "dropedge++", keep_min=0.2, keep_max=0.9, generator=gen())(data)
    assert "edge_layer_mask" not in data and out.edge_layer_mask.shape == (data.num_edges, L)
    assert torch.equal(out.edge_layer_mask.t(), graph_path(csbm, "dropedge++"))
    assert out.is_edge_attr("edge_layer_mask")  # follows edge_index through PyG's utilities


def test_from_pyg_makes_a_simple_graph_and_to_pyg_goes_back(csbm):
    edge_index = torch.tensor([[0, 1, 1, 2, 3, 3, 4], [1, 0, 0, 3, 3, 2, 0]])
    raw = Data(x=torch.rand(5, 3) * 4, edge_index=edge_index, y=torch.tensor([0, 1, 1, 0, 2]))
    g = from_pyg(raw)
    assert g.undirected_edges.t().tolist() == [[0, 1], [0, 4], [2, 3]]  # loops, duplicates dropped
    assert torch.allclose(g.x.sum(1), torch.ones(5)) and g.num_classes == 3
    assert not g.train_mask.any() and g.y.tolist() == [0, 1, 1, 0, 2]
    back = from_pyg(to_pyg(csbm))
    for name in ("x", "y", "undirected_edges", "train_mask", "val_mask", "test_mask"):
        assert torch.equal(getattr(back, name), getattr(csbm, name)), name
    with pytest.raises(ValueError, match=r"data.y must hold one integer class per node, shape \(5,\)"):
        from_pyg(Data(x=raw.x, edge_index=raw.edge_index, y=torch.zeros(5, 2)))
    with pytest.raises(ValueError, match=r"data.train_mask must be a bool tensor of shape \(5,\)"):
        from_pyg(Data(x=raw.x, edge_index=raw.edge_index, train_mask=torch.zeros(5, 3, dtype=torch.bool)))


# --- docs --------------------------------------------------------------------------------

def test_the_readme_snippet_runs_and_is_short():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("## Use DropEdge++ in your PyG model", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert len(code.strip().splitlines()) < 15
    scope: dict = {}
    exec(compile(code, "README.md", "exec"), scope)
    assert torch.isfinite(scope["loss"])
    assert all(p.grad is not None for p in scope["convs"].parameters())  # the snippet backpropagated


def test_the_docstring_examples_hold():
    import dropedge_core.pyg as pkg
    from dropedge_core.pyg import convert, edges, layers, norm

    for module in (pkg, convert, edges, layers, norm):
        result = doctest.testmod(module, extraglobs={"torch": torch}, optionflags=doctest.ELLIPSIS)
        assert result.failed == 0 and result.attempted > 0, module.__name__


# --- CUDA ----------------------------------------------------------------------------------

@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(),
                    reason="needs a CUDA GPU: torch.cuda.is_available() is False")
@pytest.mark.parametrize("name", ["dropedge++", "lid", "dropedge"])
def test_on_cuda_the_masks_are_the_graph_paths_and_a_gcn_trains(csbm, name):
    g = csbm.to("cuda")
    data = to_pyg(g)
    expected = g.directed_mask(samplers.make(name).sample(g, L, gen(0, "cuda")))
    drop = LayerDropEdge(L, name, generator=gen(0, "cuda")).cuda()
    assert torch.equal(drop.masks(data.edge_index, x=data.x), expected) and expected.is_cuda
    conv = GCNConv(data.num_features, 4, cached=False).cuda()
    out = conv(data.x, drop(data.edge_index, x=data.x)[0])
    out.sum().backward()
    assert out.is_cuda and torch.isfinite(conv.lin.weight.grad).all()
    with pytest.raises(ValueError, match="generator is on cpu"):
        LayerDropEdge(L, name, generator=gen(0))(data.edge_index, x=data.x)
    moved = LayerDropEdge(L, name, generator=gen(0)).to("cuda")  # .to() moves the generator too
    assert moved.generator.device.type == "cuda" and moved.masks(data.edge_index, x=data.x).is_cuda
    again = LayerDropEdge(L, name, generator=gen(0)).to("cuda")  # seeded from the old one: repeatable
    assert torch.equal(again.masks(data.edge_index, x=data.x), LayerDropEdge(
        L, name, generator=gen(0)).to("cuda").masks(data.edge_index, x=data.x))


def test_cora_at_16_layers_gives_the_graph_paths_masks_epoch_after_epoch(cora):
    """The example's setting: one module, three draws, against the Graph path's three."""
    data = to_pyg(cora)
    sampler = samplers.make("dropedge++")
    drop, g = LayerDropEdge(16, "dropedge++", generator=gen(7)), gen(7)
    for _ in range(3):
        expected = cora.directed_mask(sampler.sample(cora, 16, g))
        assert torch.equal(drop.masks(data.edge_index, x=data.x), expected)


@pytest.mark.parametrize("method", normalization.METHODS)
def test_normalised_adjacencies_give_gcnconv_the_same_output_as_normalize(csbm, method):
    """``normalization=`` hands GCNConv(normalize=False) sparse adjacencies; each layer's
    product equals the one over that layer's kept edges weighted by :func:`normalize`."""
    data = to_pyg(csbm)
    torch.manual_seed(0)
    conv = GCNConv(data.num_features, 4, normalize=False)
    drop = LayerDropEdge(3, "dropedge++", generator=gen(), normalization=method)
    kept = layer_dropout_edge(data.edge_index, 3, x=data.x, generator=gen())
    for adj, (ei, _) in zip(drop(data.edge_index, x=data.x), kept):
        expected = conv(data.x, *normalize(ei, csbm.num_nodes, method))
        assert torch.allclose(conv(data.x, adj), expected, atol=1e-5)
    full = drop.eval()(data.edge_index, x=data.x)
    whole = conv(data.x, *normalize(data.edge_index, csbm.num_nodes, method))
    assert len(full) == 3 and torch.allclose(conv(data.x, full[2]), whole, atol=1e-5)


def test_the_example_prints_both_accuracies_and_the_mask_check(cora, capsys):
    import importlib.util

    spec = importlib.util.spec_from_file_location("pyg_deep_gcn", REPO / "examples" / "pyg_deep_gcn.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    assert example.main(["--seeds", "0", "--epochs", "2", "--layers", "4"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"seed 0: PyG gcn \d+\.\d% .* project trainer GCN \d+\.\d% .* "
                     r"masks identical to the Graph path's: True", out), out
    assert "PyG gcn: mean" in out and "project trainer GCN: mean" in out
    assert example.main(["--conv", "sage", "--adjacency"]) == 2  # a flag mistake is named, exit 2


def test_the_transform_is_registered_under_its_functional_name():
    """``SampleLayerEdges`` claims the functional name ``sample_layer_edges``: a data pipe of
    ``Data`` objects has it, and it draws what the transform draws."""
    from dropedge_core.pyg import SampleLayerEdges
    from torch.utils.data.datapipes.iter import IterableWrapper
    from torch_geometric.data import Data

    data = Data(x=torch.rand(6, 3, generator=torch.Generator().manual_seed(1)),
                edge_index=torch.tensor([[0, 1, 1, 2, 3, 4], [1, 0, 2, 1, 4, 3]]))
    pipe = IterableWrapper([data])
    piped = pipe.sample_layer_edges(num_layers=3, generator=torch.Generator().manual_seed(0))
    direct = SampleLayerEdges(num_layers=3, generator=torch.Generator().manual_seed(0))(data)
    assert torch.equal(next(iter(piped)).edge_layer_mask, direct.edge_layer_mask)
