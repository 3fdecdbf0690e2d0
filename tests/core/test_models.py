"""Backbones: names, shapes, the propagation rules of the paper's
appendix table, per-layer adjacencies, and depth up to 64 layers."""
from __future__ import annotations

import pytest
import torch
from dropedge_core import normalization, samplers
from dropedge_core.models import BACKBONES, ModelError, check_backbone, make_model
from dropedge_core.normalization import AdjacencyBuilder

from dropedge_explorer.training import prepare_features


def full_adjs(graph, num_layers, method="AN"):
    return [AdjacencyBuilder(graph, method).full()] * num_layers


def test_names_and_aliases():
    assert check_backbone("APPNP*") == "appnp_star"
    assert check_backbone("appnp*") == "appnp_star"
    assert check_backbone("appnp") == "appnp_star"
    assert check_backbone("appnp_star") == "appnp_star"
    assert check_backbone(" ResGCN ") == "resgcn"
    with pytest.raises(ModelError) as err:
        make_model("gat", 4, 2, 2)
    msg = str(err.value)
    assert "'gat'" in msg and all(name in msg for name in BACKBONES)


@pytest.mark.parametrize("name", BACKBONES)
@pytest.mark.parametrize("num_layers", [1, 2, 5])
def test_shapes_and_hidden_outputs(karate, name, num_layers):
    torch.manual_seed(0)
    model = make_model(name, karate.num_features, karate.num_classes, num_layers, hidden=8).eval()
    out, hidden = model(karate.x, full_adjs(karate, num_layers), return_hidden=True)
    assert out.shape == (karate.num_nodes, karate.num_classes)
    assert torch.allclose(out.exp().sum(1), torch.ones(karate.num_nodes), atol=1e-5)  # log-softmax
    expected = {"gcn": num_layers - 1, "resgcn": num_layers - 1, "jknet": num_layers,
                "appnp_star": num_layers}[name]
    assert len(hidden) == expected and model.num_hidden_outputs == expected
    assert all(h.shape == (karate.num_nodes, 8) for h in hidden)
    assert torch.equal(model(karate.x, full_adjs(karate, num_layers)), out)


def test_wrong_number_of_adjacencies(karate):
    model = make_model("gcn", karate.num_features, karate.num_classes, 3)
    with pytest.raises(ModelError, match="3 layers but got 2"):
        model(karate.x, full_adjs(karate, 2))


def test_resgcn_adds_the_previous_layer(karate):
    """H^(l+1) = ReLU(Â H^(l) W) + H^(l): the difference is non-negative, and zero-weight
    layers pass H^(l) through unchanged."""
    torch.manual_seed(0)
    model = make_model("resgcn", karate.num_features, karate.num_classes, 5, hidden=8, bias=False).eval()
    _, hidden = model(karate.x, full_adjs(karate, 5), return_hidden=True)
    for a, b in zip(hidden[:-1], hidden[1:]):
        assert (b - a).min() >= -1e-6
    with torch.no_grad():
        for conv in model.convs[1:-1]:
            conv.weight.zero_()
    _, hidden = model(karate.x, full_adjs(karate, 5), return_hidden=True)
    assert all(torch.allclose(h, hidden[0]) for h in hidden)


def test_gcn_layer_formula(karate):
    """A 2-layer gcn is log_softmax(Â ReLU(Â X W0 + b0) W1 + b1) with layer l using adjs[l]."""
    torch.manual_seed(0)
    model = make_model("gcn", karate.num_features, karate.num_classes, 2, hidden=8).eval()
    masks = samplers.make("li", p_min=0.3, p_max=0.9).sample(karate, 2, torch.Generator().manual_seed(0))
    pairs = normalization.adjacencies(karate, masks, "AN")
    dense = [normalization.to_dense(ei, w, karate.num_nodes) for ei, w in pairs]
    sparse = [normalization.to_sparse(ei, w, karate.num_nodes) for ei, w in pairs]
    c0, c1 = model.convs
    h = torch.relu(dense[0] @ karate.x @ c0.weight + c0.bias)
    expected = torch.log_softmax(dense[1] @ h @ c1.weight + c1.bias, dim=1)
    assert torch.allclose(model(karate.x, sparse), expected, atol=1e-5)
    # the two layers really see different graphs
    assert not torch.allclose(model(karate.x, sparse[::-1]), expected, atol=1e-5)


def test_appnp_star_formula(karate):
    """Z0 = ReLU(X W + b); Z^(l+1) = ReLU((1-α) Â Z^(l) + α Z0); α = 1 keeps Z0."""
    torch.manual_seed(0)
    model = make_model("appnp_star", karate.num_features, karate.num_classes, 3, hidden=8, alpha=0.2).eval()
    adj = full_adjs(karate, 1)[0]
    z0 = torch.relu(karate.x @ model.inp + model.inp_bias)
    z = z0
    for _ in range(3):
        z = torch.relu(0.8 * torch.sparse.mm(adj, z) + 0.2 * z0)
    _, hidden = model(karate.x, [adj] * 3, return_hidden=True)
    assert torch.allclose(hidden[-1], z, atol=1e-6)
    model.alpha = 1.0
    _, hidden = model(karate.x, [adj] * 3, return_hidden=True)
    assert all(torch.allclose(h, z0) for h in hidden)
    with pytest.raises(ModelError, match="alpha"):
        make_model("appnp_star", 4, 2, 2, alpha=1.5)


def test_jknet_concatenates_all_hidden_layers(karate):
    model = make_model("jknet", karate.num_features, karate.num_classes, 4, hidden=8)
    assert model.out.in_features == 4 * 8


def test_options_add_parameters():
    plain = make_model("gcn", 10, 3, 3, hidden=8)
    loop = make_model("gcn", 10, 3, 3, hidden=8, self_loop=True)
    bn = make_model("gcn", 10, 3, 3, hidden=8, batch_norm=True)
    nobias = make_model("gcn", 10, 3, 3, hidden=8, bias=False)
    count = lambda m: sum(p.numel() for p in m.parameters())  # noqa: E731
    assert count(loop) == count(plain) + 10 * 8 + 8 * 8 + 8 * 3
    assert len(bn.norms) == 2 and count(bn) == count(plain) + 2 * 2 * 8
    assert count(nobias) == count(plain) - (8 + 8 + 3)
    with pytest.raises(ModelError, match="dropout"):
        make_model("gcn", 10, 3, 3, dropout=1.0)
    with pytest.raises(ModelError, match="hidden"):
        make_model("gcn", 10, 3, 3, hidden=0)


@pytest.mark.parametrize("name", BACKBONES)
def test_sparse_features_match_dense(csbm, name):
    torch.manual_seed(0)
    model = make_model(name, csbm.num_features, csbm.num_classes, 3, hidden=8, self_loop=True).eval()
    adjs = full_adjs(csbm, 3)
    xs = prepare_features(csbm.x)
    assert xs.layout == torch.sparse_csr
    assert torch.allclose(model(xs, adjs), model(csbm.x, adjs), atol=1e-5)


@pytest.mark.parametrize("name", BACKBONES)
def test_64_layer_forward_and_backward(csbm, name):
    torch.manual_seed(0)
    model = make_model(name, csbm.num_features, csbm.num_classes, 64, hidden=16)
    sampler = samplers.make("dropedge++", p_min=0.2, p_max=0.9)
    masks = sampler.sample(csbm, 64, torch.Generator().manual_seed(0))
    out, hidden = model(prepare_features(csbm.x), AdjacencyBuilder(csbm, "AN")(masks), return_hidden=True)
    assert torch.isfinite(out).all() and len(hidden) >= 63
    out[csbm.train_mask].sum().backward()
    first = next(model.parameters())
    assert first.grad is not None and torch.isfinite(first.grad).all()


def test_dropout_generator_makes_runs_reproducible(karate):
    model = make_model("gcn", karate.num_features, karate.num_classes, 3, hidden=8, dropout=0.5)
    adjs = full_adjs(karate, 3)
    outs = []
    for _ in range(2):
        model.generator = torch.Generator().manual_seed(7)
        outs.append(model(karate.x, adjs))
    assert torch.equal(outs[0], outs[1])
    model.eval()
    assert torch.equal(model(karate.x, adjs), model(karate.x, adjs))


def test_batch_norm_running_statistics_start_from_the_first_batch():
    """Full-batch training takes one step per epoch: running statistics that start at
    (0, 1) and move 10% a step stay far from features whose variance is ~1e-3, and
    evaluation (running statistics) breaks. The first step sets them to the batch's."""
    from dropedge_core.models import FullBatchNorm

    bn = FullBatchNorm(4)
    x = torch.randn(500, 4) * 0.03 + 0.2
    bn.train()
    bn(x)
    assert torch.allclose(bn.running_mean, x.mean(0), atol=1e-6)
    assert torch.allclose(bn.running_var, x.var(0), rtol=1e-4)
    assert bn.momentum == 0.1
    bn(x * 2)  # later steps average as usual
    assert torch.allclose(bn.running_mean, 0.9 * x.mean(0) + 0.1 * (2 * x).mean(0), atol=1e-6)


def test_appnp_star_with_batch_norm_trains(csbm):
    """APPNP* with batch norm sat at chance in short runs (40% vs 98% without)."""
    from dropedge_explorer.training import TrainConfig, train

    config = TrainConfig(dataset="csbm", backbone="appnp_star", num_layers=8, recipe="quick", batch_norm=True,
                         epochs=50, diag_every=0, sampler="nodrop")
    result = train(config, graph=csbm)
    assert result.test_acc >= 0.9
