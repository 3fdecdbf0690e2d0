"""Backbones against numpy: tiny GCN / ResGCN / JKNet / APPNP* with fixed weights on a
4-node graph, each forward pass checked against SPEC's propagation rule written out in
numpy (dropout, batch norm, self-loop, bias and alpha options included), the dropout
helper on dense/CSR/COO features, defaults, and the messages naming bad values."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from dropedge_core import models
from dropedge_core.models import (
    GCN,
    APPNPStar,
    FullBatchNorm,
    GraphConv,
    JKNet,
    ModelError,
    check_backbone,
    feature_dropout,
    make_model,
    matmul,
)

N, F_IN, HID, C = 4, 3, 2, 2
A_NP = [np.array([[0.5, 0.5, 0.0, 0.0], [0.25, 0.25, 0.5, 0.0],
                  [0.0, 0.4, 0.2, 0.4], [0.0, 0.0, 0.7, 0.3]]),
        np.array([[0.2, 0.0, 0.8, 0.0], [0.0, 1.0, 0.0, 0.0],
                  [0.3, 0.3, 0.1, 0.3], [0.6, 0.0, 0.0, 0.4]]),
        np.array([[0.0, 1.0, 0.0, 0.0], [0.5, 0.0, 0.5, 0.0],
                  [0.0, 0.5, 0.0, 0.5], [0.0, 0.0, 1.0, 0.0]])]
X_NP = np.array([[1.0, -2.0, 0.5], [0.0, 1.0, -1.0], [2.0, 0.5, 0.0], [-1.0, 0.0, 3.0]])


def adjs(k):
    return [torch.tensor(a, dtype=torch.float64).to_sparse_csr() for a in A_NP[:k]]


def x():
    return torch.tensor(X_NP, dtype=torch.float64)


def relu(a):
    return np.maximum(a, 0.0)


def log_softmax(a):
    m = a.max(1, keepdims=True)
    return a - m - np.log(np.exp(a - m).sum(1, keepdims=True))


def fixed(shape, seed):
    """Deterministic weights with both signs (not Glorot: independent of the init)."""
    v = np.sin(np.arange(1, math.prod(shape) + 1) * (1.3 + seed)).reshape(shape)
    return v


def set_conv(conv, seed):
    with torch.no_grad():
        conv.weight.copy_(torch.tensor(fixed(conv.weight.shape, seed)))
        if conv.weight_self is not None:
            conv.weight_self.copy_(torch.tensor(fixed(conv.weight_self.shape, seed + 10)))
        if conv.bias is not None:
            conv.bias.copy_(torch.tensor(fixed(conv.bias.shape, seed + 20)))


def np_conv(conv, h, a):
    out = a @ h @ conv.weight.detach().numpy()
    if conv.weight_self is not None:
        out = out + h @ conv.weight_self.detach().numpy()
    if conv.bias is not None:
        out = out + conv.bias.detach().numpy()
    return out


def set_bn(bn, seed):
    with torch.no_grad():
        bn.weight.copy_(torch.tensor(1.0 + 0.5 * fixed(bn.weight.shape, seed)))
        bn.bias.copy_(torch.tensor(fixed(bn.bias.shape, seed + 3)))


def np_bn_train(bn, z):
    mean, var = z.mean(0), z.var(0)  # biased: as in batch norm's normalisation
    return (z - mean) / np.sqrt(var + bn.eps) * bn.weight.detach().numpy() + bn.bias.detach().numpy()


def build(cls, k, **kw):
    m = cls(F_IN, C, k, hidden=HID, **kw).double()
    for i, conv in enumerate(getattr(m, "convs", [])):
        set_conv(conv, i)
    for i, bn in enumerate(getattr(m, "norms", [])):
        set_bn(bn, 30 + i)
    return m


def set_linear(lin, seed):
    with torch.no_grad():
        lin.weight.copy_(torch.tensor(fixed(lin.weight.shape, seed)))
        if lin.bias is not None:
            lin.bias.copy_(torch.tensor(fixed(lin.bias.shape, seed + 1)))


def np_linear(lin, h):
    out = h @ lin.weight.detach().numpy().T
    return out + lin.bias.detach().numpy() if lin.bias is not None else out


# ------------------------------------------------------------------ names, helpers

def test_backbone_names_aliases_and_message():
    assert check_backbone("Res-GCN") == "resgcn"
    assert check_backbone("JK-Net") == "jknet"
    assert check_backbone("  GCN\t") == "gcn"
    assert check_backbone("APPNP") == "appnp_star"
    assert check_backbone("jknet") == "jknet"
    with pytest.raises(ModelError) as err:
        check_backbone("Gat")
    assert str(err.value) == ("unknown backbone 'Gat'; valid: gcn, resgcn, jknet, appnp_star "
                              "('appnp*' and 'appnp' are accepted for 'appnp_star')")


def test_matmul_dense_and_sparse():
    w = torch.tensor(fixed((F_IN, 2), 0))
    expected = X_NP @ w.numpy()
    for h in (x(), x().to_sparse_csr(), x().to_sparse()):
        assert np.allclose(matmul(h, w).numpy(), expected)


def test_feature_dropout_dense_with_generator():
    h = torch.arange(1.0, 41.0).reshape(8, 5)
    out = feature_dropout(h, 0.3, True, torch.Generator().manual_seed(5))
    keep = torch.rand((8, 5), generator=torch.Generator().manual_seed(5)) >= 0.3
    assert 0 < keep.sum() < 40
    assert torch.allclose(out, h * keep / 0.7)


def test_feature_dropout_off_and_identity_cases():
    h = torch.arange(1.0, 13.0).reshape(3, 4)
    assert feature_dropout(h, 0.5, False) is h
    assert feature_dropout(h, 0.0, True) is h
    assert feature_dropout(h, 0.5, False, torch.Generator()) is h


def test_feature_dropout_global_rng():
    h = torch.ones(50, 40)
    torch.manual_seed(3)
    out = feature_dropout(h, 0.25, True)
    vals = out.unique()
    assert len(vals) == 2 and vals[0] == 0.0 and torch.isclose(vals[1], torch.tensor(1 / 0.75))
    torch.manual_seed(3)
    assert torch.equal(feature_dropout(h, 0.25, True), out)


@pytest.mark.parametrize("layout", ["csr", "coo"])
def test_feature_dropout_sparse_drops_non_zeros(layout):
    dense = torch.tensor([[0.0, 2.0, 0.0, 1.0], [3.0, 0.0, 0.0, 4.0], [0.0, 5.0, 6.0, 0.0]])
    if layout == "csr":
        h = dense.to_sparse_csr()
    else:  # uncoalesced: the entry (0, 1) given as 0.5 + 1.5
        idx = torch.tensor([[0, 0, 0, 1, 1, 2, 2], [1, 3, 1, 0, 3, 1, 2]])
        val = torch.tensor([0.5, 1.0, 1.5, 3.0, 4.0, 5.0, 6.0])
        h = torch.sparse_coo_tensor(idx, val, (3, 4))
    out = feature_dropout(h, 0.4, True, torch.Generator().manual_seed(2))
    assert out.layout == h.layout and out.shape == h.shape
    keep = (torch.rand(6, generator=torch.Generator().manual_seed(2)) >= 0.4).float()
    nz = dense != 0  # row-major order of the non-zeros = CSR / coalesced COO order
    expected = torch.zeros_like(dense)
    expected[nz] = dense[nz] * keep / 0.6
    assert 0 < keep.sum() < 6
    assert torch.allclose(out.to_dense(), expected)
    if layout == "coo":
        assert out.is_coalesced()


def test_graph_conv_init_defaults_and_formula():
    conv = GraphConv(6, 4)
    assert conv.weight_self is None and conv.bias is not None
    assert torch.equal(conv.bias.detach(), torch.zeros(4))
    bound = math.sqrt(6.0 / (6 + 4))  # Glorot uniform
    assert conv.weight.abs().max() <= bound and conv.weight.abs().max() > 0.5 * bound
    loop = GraphConv(6, 4, bias=False, self_loop=True)
    assert loop.bias is None and loop.weight_self is not None
    assert loop.weight_self.abs().max() <= bound and loop.weight_self.abs().max() > 0.5 * bound
    assert not torch.equal(loop.weight_self, loop.weight)
    for kw in ({}, {"self_loop": True}, {"bias": False, "self_loop": True}, {"bias": False}):
        c = GraphConv(F_IN, 2, **kw).double()
        set_conv(c, 1)
        assert np.allclose(c(x(), adjs(1)[0]).detach().numpy(), np_conv(c, X_NP, A_NP[0]))


def test_wrong_number_of_adjacencies_message():
    for m in (GCN(3, 2, 2), JKNet(3, 2, 2), APPNPStar(3, 2, 2)):
        with pytest.raises(ModelError) as err:
            m(torch.zeros(3, 3), [torch.eye(3).to_sparse_csr()] * 3)
        assert str(err.value) == "the model has 2 layers but got 3 adjacencies"


# ------------------------------------------------------------------ validation, defaults

@pytest.mark.parametrize("cls", [GCN, JKNet, APPNPStar])
def test_option_validation_names_the_value(cls):
    good = dict(in_dim=3, num_classes=2, num_layers=2, hidden=4)
    for pname in good:
        for bad in (0, -1, 2.0, "3"):
            with pytest.raises(ModelError) as err:
                cls(**{**good, pname: bad})
            assert str(err.value) == f"{pname} must be a positive integer (got {bad!r})"
    cls(in_dim=1, num_classes=1, num_layers=1, hidden=1)  # 1 is allowed everywhere
    for bad in (1.0, -0.1, 1.5):
        with pytest.raises(ModelError) as err:
            cls(**good, dropout=bad)
        assert str(err.value) == f"dropout must be in [0, 1) (got {bad!r})"
    assert cls(**good, dropout=0.0).dropout == 0.0
    assert cls(**good, dropout=0.99).dropout == 0.99


def test_alpha_validation():
    for bad in (-0.1, 1.01, float("nan"), "0.5", None):
        with pytest.raises(ModelError) as err:
            APPNPStar(3, 2, 2, alpha=bad)
        assert str(err.value) == f"alpha must be in [0, 1] (got {bad!r})"
    for good in (0, 0.0, 1, 1.0):
        m = APPNPStar(3, 2, 2, alpha=good)
        assert m.alpha == float(good) and isinstance(m.alpha, float)


@pytest.mark.parametrize("cls", [GCN, JKNet, APPNPStar])
def test_class_defaults(cls):
    m = cls(5, 3, 2)
    assert (m.hidden, m.dropout, m.self_loop, m.batch_norm, m.bias) == (128, 0.5, False, False, True)
    assert m.generator is None and isinstance(m.dropout, float)
    assert (m.in_dim, m.num_classes, m.num_layers) == (5, 3, 2)
    assert len(m.norms) == 0
    if cls is APPNPStar:
        assert m.alpha == 0.1
    if cls is GCN:
        assert m.residual is False and m.name == "gcn"
        assert all(c.weight_self is None and c.bias is not None for c in m.convs)


def test_make_model_defaults_and_passing():
    for name, cls in (("gcn", GCN), ("resgcn", GCN), ("jknet", JKNet), ("appnp*", APPNPStar)):
        m = make_model(name, 5, 3, 2)
        assert type(m) is cls
        assert (m.hidden, m.dropout, m.self_loop, m.batch_norm, m.bias) == (128, 0.5, False, False, True)
        assert m.generator is None and m.num_layers == 2 and m.in_dim == 5 and m.num_classes == 3
    assert make_model("appnp", 5, 3, 2).alpha == 0.1
    g = torch.Generator()
    for name in ("gcn", "resgcn", "jknet", "appnp_star"):
        m = make_model(name, 5, 3, 3, hidden=7, dropout=0.2, self_loop=True, batch_norm=True,
                       bias=False, alpha=0.3, generator=g)
        assert m.generator is g
        assert (m.hidden, m.dropout, m.self_loop, m.batch_norm, m.bias) == (7, 0.2, True, True, False)
        assert len(m.norms) == (2 if name in ("gcn", "resgcn") else 3)
        assert all(bn.num_features == 7 for bn in m.norms)
        assert m.name == name
    assert make_model("appnp_star", 5, 3, 3, alpha=0.3).alpha == 0.3
    assert make_model("resgcn", 5, 3, 3).residual is True
    assert make_model("gcn", 5, 3, 3).residual is False


def test_extra_repr_and_hidden_output_counts():
    m = make_model("gcn", 5, 3, 4, hidden=6, dropout=0.25, self_loop=True)
    assert m.extra_repr() == "L=4, hidden=6, dropout=0.25, self_loop=True, batch_norm=False"
    a = make_model("appnp", 5, 3, 4, hidden=6, dropout=0.0, batch_norm=True, alpha=0.2)
    assert a.extra_repr() == "L=4, hidden=6, dropout=0.0, self_loop=False, batch_norm=True, alpha=0.2"
    assert m.num_hidden_outputs == 3 and make_model("resgcn", 5, 3, 4).num_hidden_outputs == 3
    assert make_model("jknet", 5, 3, 4).num_hidden_outputs == 4 and a.num_hidden_outputs == 4


def test_shapes_of_layers():
    g = GCN(5, 3, 3, hidden=6)
    assert [tuple(c.weight.shape) for c in g.convs] == [(5, 6), (6, 6), (6, 3)]
    j = JKNet(5, 3, 3, hidden=6)
    assert [tuple(c.weight.shape) for c in j.convs] == [(5, 6), (6, 6), (6, 6)]
    assert (j.out.in_features, j.out.out_features) == (18, 3) and j.out.bias is not None
    assert JKNet(5, 3, 3, hidden=6, bias=False).out.bias is None
    a = APPNPStar(5, 3, 3, hidden=6)
    assert tuple(a.inp.shape) == (5, 6) and torch.equal(a.inp_bias.detach(), torch.zeros(6))
    bound = math.sqrt(6.0 / 11)
    assert 0.5 * bound < a.inp.abs().max() <= bound
    assert (a.out.in_features, a.out.out_features) == (6, 3)
    nb = APPNPStar(5, 3, 3, hidden=6, bias=False)
    assert nb.inp_bias is None and nb.out.bias is None


# ------------------------------------------------------------------ forward vs numpy

@pytest.mark.parametrize("self_loop", [False, True])
@pytest.mark.parametrize("bias", [True, False])
def test_gcn_forward_matches_numpy(self_loop, bias):
    m = build(GCN, 3, self_loop=self_loop, bias=bias, dropout=0.5).eval()
    out, hidden = m(x(), adjs(3), return_hidden=True)
    h1 = relu(np_conv(m.convs[0], X_NP, A_NP[0]))
    h2 = relu(np_conv(m.convs[1], h1, A_NP[1]))
    logits = np_conv(m.convs[2], h2, A_NP[2])
    assert len(hidden) == 2
    assert np.allclose(hidden[0].detach().numpy(), h1) and np.allclose(hidden[1].detach().numpy(), h2)
    assert np.allclose(out.detach().numpy(), log_softmax(logits))
    assert torch.equal(m(x(), adjs(3)), out)  # return_hidden defaults to False


def test_gcn_single_layer_is_features_to_classes():
    m = build(GCN, 1).eval()
    out, hidden = m(x(), adjs(1), return_hidden=True)
    assert hidden == []
    assert np.allclose(out.detach().numpy(), log_softmax(np_conv(m.convs[0], X_NP, A_NP[0])))


def test_resgcn_forward_matches_numpy():
    m = build(GCN, 3, residual=True, self_loop=True).eval()
    assert m.name == "resgcn"
    out, hidden = m(x(), adjs(3), return_hidden=True)
    h1 = relu(np_conv(m.convs[0], X_NP, A_NP[0]))  # features -> hidden: no residual
    h2 = relu(np_conv(m.convs[1], h1, A_NP[1])) + h1
    logits = np_conv(m.convs[2], h2, A_NP[2])  # hidden -> classes: no residual
    assert np.allclose(hidden[0].detach().numpy(), h1) and np.allclose(hidden[1].detach().numpy(), h2)
    assert np.allclose(out.detach().numpy(), log_softmax(logits))


def test_resgcn_with_hidden_equal_to_input_width_adds_no_first_residual():
    """With in_dim == hidden the first layer could add X: it must not (features -> hidden)."""
    m = GCN(F_IN, C, 2, hidden=F_IN, residual=True).double().eval()
    for i, conv in enumerate(m.convs):
        set_conv(conv, i)
    out, hidden = m(x(), adjs(2), return_hidden=True)
    h1 = relu(np_conv(m.convs[0], X_NP, A_NP[0]))
    assert np.allclose(hidden[0].detach().numpy(), h1)
    assert np.allclose(out.detach().numpy(), log_softmax(np_conv(m.convs[1], h1, A_NP[1])))


def test_gcn_batch_norm_training_and_eval():
    m = build(GCN, 3, batch_norm=True, dropout=0.0).train()
    out, hidden = m(x(), adjs(3), return_hidden=True)
    h1 = relu(np_bn_train(m.norms[0], np_conv(m.convs[0], X_NP, A_NP[0])))
    h2 = relu(np_bn_train(m.norms[1], np_conv(m.convs[1], h1, A_NP[1])))
    assert np.allclose(hidden[0].detach().numpy(), h1) and np.allclose(hidden[1].detach().numpy(), h2)
    assert np.allclose(out.detach().numpy(), log_softmax(np_conv(m.convs[2], h2, A_NP[2])))
    # eval uses the running statistics, which the first step set to that batch's (unbiased var)
    m.eval()
    z1 = np_conv(m.convs[0], X_NP, A_NP[0])
    bn = m.norms[0]
    e1 = relu((z1 - z1.mean(0)) / np.sqrt(z1.var(0, ddof=1) + bn.eps) * bn.weight.detach().numpy()
              + bn.bias.detach().numpy())
    _, hidden = m(x(), adjs(3), return_hidden=True)
    assert np.allclose(hidden[0].detach().numpy(), e1)


def test_gcn_dropout_with_generator_matches_masks():
    m = build(GCN, 2, dropout=0.4).train()
    m.generator = torch.Generator().manual_seed(11)
    out, hidden = m(x(), adjs(2), return_hidden=True)
    g = torch.Generator().manual_seed(11)
    k0 = (torch.rand((N, F_IN), generator=g) >= 0.4).double().numpy()
    h1 = relu(np_conv(m.convs[0], X_NP * k0 / 0.6, A_NP[0]))
    k1 = (torch.rand((N, HID), generator=g) >= 0.4).double().numpy()
    assert np.allclose(hidden[0].detach().numpy(), h1)
    assert np.allclose(out.detach().numpy(), log_softmax(np_conv(m.convs[1], h1 * k1 / 0.6, A_NP[1])))


@pytest.mark.parametrize("self_loop", [False, True])
def test_jknet_forward_matches_numpy(self_loop):
    m = build(JKNet, 3, self_loop=self_loop).eval()
    set_linear(m.out, 50)
    out, hidden = m(x(), adjs(3), return_hidden=True)
    hs, h = [], X_NP
    for conv, a in zip(m.convs, A_NP):
        h = relu(np_conv(conv, h, a))
        hs.append(h)
    assert len(hidden) == 3 and all(np.allclose(a.detach().numpy(), b) for a, b in zip(hidden, hs))
    expected = log_softmax(np_linear(m.out, np.concatenate(hs, axis=1)))
    assert np.allclose(out.detach().numpy(), expected)
    assert torch.equal(m(x(), adjs(3)), out)


def test_jknet_batch_norm_and_dropout():
    m = build(JKNet, 2, batch_norm=True, dropout=0.3).train()
    set_linear(m.out, 50)
    m.generator = torch.Generator().manual_seed(4)
    out, hidden = m(x(), adjs(2), return_hidden=True)
    g = torch.Generator().manual_seed(4)
    k0 = (torch.rand((N, F_IN), generator=g) >= 0.3).double().numpy()
    h1 = relu(np_bn_train(m.norms[0], np_conv(m.convs[0], X_NP * k0 / 0.7, A_NP[0])))
    k1 = (torch.rand((N, HID), generator=g) >= 0.3).double().numpy()
    h2 = relu(np_bn_train(m.norms[1], np_conv(m.convs[1], h1 * k1 / 0.7, A_NP[1])))
    k2 = (torch.rand((N, 2 * HID), generator=g) >= 0.3).double().numpy()
    cat = np.concatenate([h1, h2], axis=1) * k2 / 0.7
    assert np.allclose(hidden[1].detach().numpy(), h2)
    assert np.allclose(out.detach().numpy(), log_softmax(np_linear(m.out, cat)))


def np_appnp(m, alpha, k, xin=X_NP, bn=False):
    z0 = xin @ m.inp.detach().numpy()
    if m.inp_bias is not None:
        z0 = z0 + m.inp_bias.detach().numpy()
    z0 = relu(z0)
    z, zs = z0, []
    for i in range(k):
        z = (1 - alpha) * A_NP[i] @ z + alpha * z0
        if bn:
            z = np_bn_train(m.norms[i], z)
        z = relu(z)
        zs.append(z)
    return z0, zs


@pytest.mark.parametrize("alpha", [0.0, 0.3, 1.0])
@pytest.mark.parametrize("bias", [True, False])
def test_appnp_star_forward_matches_numpy(alpha, bias):
    m = build(APPNPStar, 3, alpha=alpha, bias=bias, self_loop=True).eval()
    with torch.no_grad():
        m.inp.copy_(torch.tensor(fixed((F_IN, HID), 7)))
        if bias:
            m.inp_bias.copy_(torch.tensor([0.3, -0.2]))
    set_linear(m.out, 60)
    out, hidden = m(x(), adjs(3), return_hidden=True)
    _, zs = np_appnp(m, alpha, 3)
    assert len(hidden) == 3 and all(np.allclose(a.detach().numpy(), b) for a, b in zip(hidden, zs))
    assert np.allclose(out.detach().numpy(), log_softmax(np_linear(m.out, zs[-1])))
    assert torch.equal(m(x(), adjs(3)), out)


def test_appnp_star_batch_norm_and_dropout():
    m = build(APPNPStar, 2, alpha=0.25, batch_norm=True, dropout=0.5).train()
    with torch.no_grad():
        m.inp.copy_(torch.tensor(fixed((F_IN, HID), 7)))
        m.inp_bias.copy_(torch.tensor([0.3, -0.2]))
    set_linear(m.out, 60)
    m.generator = torch.Generator().manual_seed(9)
    out, hidden = m(x(), adjs(2), return_hidden=True)
    g = torch.Generator().manual_seed(9)
    k0 = (torch.rand((N, F_IN), generator=g) >= 0.5).double().numpy()
    _, zs = np_appnp(m, 0.25, 2, xin=X_NP * k0 / 0.5, bn=True)
    k1 = (torch.rand((N, HID), generator=g) >= 0.5).double().numpy()
    assert all(np.allclose(a.detach().numpy(), b) for a, b in zip(hidden, zs))
    assert np.allclose(out.detach().numpy(), log_softmax(np_linear(m.out, zs[-1] * k1 / 0.5)))


# ------------------------------------------------------------------ FullBatchNorm

def test_full_batch_norm_first_step_and_eval():
    bn = FullBatchNorm(2).double()
    z = torch.tensor([[1.0, 2.0], [3.0, -1.0], [0.5, 0.0]], dtype=torch.float64)
    bn.train()
    out = bn(z)
    zn = z.numpy()
    assert np.allclose(out.detach().numpy(), (zn - zn.mean(0)) / np.sqrt(zn.var(0) + bn.eps))
    assert np.allclose(bn.running_mean.numpy(), zn.mean(0))
    assert np.allclose(bn.running_var.numpy(), zn.var(0, ddof=1))
    assert bn.momentum == 0.1 and int(bn.num_batches_tracked) == 1
    bn.eval()  # evaluation does not move the statistics, nor resets them
    bn(z * 5)
    assert np.allclose(bn.running_mean.numpy(), zn.mean(0))
    bn.train()
    bn(z * 3)
    assert np.allclose(bn.running_mean.numpy(), 0.9 * zn.mean(0) + 0.1 * 3 * zn.mean(0))


def test_full_batch_norm_without_running_statistics():
    bn = FullBatchNorm(2, track_running_stats=False).double().train()
    z = torch.tensor([[1.0, 2.0], [3.0, -1.0], [0.5, 0.0]], dtype=torch.float64)
    zn = z.numpy()
    assert np.allclose(bn(z).detach().numpy(), (zn - zn.mean(0)) / np.sqrt(zn.var(0) + bn.eps))
    assert bn.momentum == 0.1


def test_module_has_the_four_backbones():
    assert models.BACKBONES == ("gcn", "resgcn", "jknet", "appnp_star")


def test_feature_dropout_keeps_a_draw_equal_to_p():
    """Inverted dropout keeps a unit whose uniform draw u satisfies u >= p (P(keep) = 1 - p):
    p set to the generator's own first draw must keep that unit."""
    first = float(torch.rand(3, generator=torch.Generator().manual_seed(0))[0])
    out = feature_dropout(torch.ones(3), first, True, torch.Generator().manual_seed(0))
    assert out[0] == pytest.approx(1.0 / (1.0 - first))


def test_feature_dropout_zero_rate_draws_nothing():
    """p = 0 returns the input and leaves the generator alone (a run with dropout 0 must not
    shift the random stream of anything that shares the generator)."""
    g = torch.Generator().manual_seed(1)
    state = g.get_state()
    h = torch.arange(6.0).reshape(2, 3)
    assert feature_dropout(h, 0.0, True, g) is h
    assert torch.equal(g.get_state(), state)


def test_feature_dropout_coo_keeps_shape_with_empty_last_column():
    h = torch.sparse_coo_tensor(torch.tensor([[0, 1], [0, 1]]), torch.tensor([1.0, 2.0]), (3, 5))
    out = feature_dropout(h, 0.5, True, torch.Generator().manual_seed(0))
    assert out.shape == (3, 5) and out.layout == torch.sparse_coo


@pytest.mark.parametrize("name", ["gcn", "resgcn", "jknet", "appnp_star"])
def test_forward_emits_no_warnings(name):
    """log_softmax over the classes is asked for explicitly (an implicit dim warns)."""
    import warnings

    m = make_model(name, F_IN, C, 2, hidden=HID).double().eval()
    a = adjs(2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = m(x(), a)
    assert torch.allclose(out.exp().sum(1), torch.ones(N, dtype=torch.float64))


def test_bias_and_self_loop_reach_every_layer():
    for bias in (True, False):
        for loop in (True, False):
            for m in (GCN(5, 3, 3, hidden=4, bias=bias, self_loop=loop),
                      JKNet(5, 3, 3, hidden=4, bias=bias, self_loop=loop)):
                assert all((c.bias is not None) == bias for c in m.convs)
                assert all((c.weight_self is not None) == loop for c in m.convs)
            a = APPNPStar(5, 3, 3, hidden=4, bias=bias, self_loop=loop)
            assert (a.out.bias is not None) == bias and (a.inp_bias is not None) == bias
