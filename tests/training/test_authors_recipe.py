"""The ``authors`` recipe against a reading of the authors' code (hanjq17/DropEdgePlus at the
mirrored HEAD): each test quotes the lines it was written from and recomputes the rule by
hand (dense matrices, plain loops), never with the code under test."""
from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from dropedge_core import datasets, samplers
from dropedge_core._authors_models import AuthorsGCN, make_authors_model

from dropedge_explorer.training import TrainConfig, train
from dropedge_explorer.training._selection import AuthorsCheckpoint, make_selection

N, FEAT, CLASSES, HIDDEN = 9, 5, 3, 4


def _adjs(count: int, seed: int = 0) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """``count`` random non-negative ``N x N`` matrices: dense (for the hand computation)
    and sparse CSR (for the model)."""
    gen = torch.Generator().manual_seed(seed)
    dense = [torch.rand(N, N, generator=gen) * (torch.rand(N, N, generator=gen) < 0.4) for _ in range(count)]
    return dense, [a.to_sparse_csr() for a in dense]


def _features(seed: int = 1) -> torch.Tensor:
    return torch.rand(N, FEAT, generator=torch.Generator().manual_seed(seed))


def _dropper(p: float, seed: int):
    """Inverted dropout drawing ``torch.rand(shape) >= p`` from its own generator, in call order."""
    gen = torch.Generator().manual_seed(seed)

    def drop(h: torch.Tensor) -> torch.Tensor:
        return h * (torch.rand(h.shape, generator=gen) >= p) / (1.0 - p)
    return drop


def _conv(h, adj, conv, act=True):
    out = adj @ h @ conv.weight.detach() + conv.bias.detach()
    return torch.relu(out) if act else out


def _by_hand_gcn(model, x, dense, block, drop):
    """``GCNModel.forward`` (src/models.py:107-140) and ``GraphBaseBlock.forward``
    (src/layers.py:165-178), written out."""
    h = drop(_conv(x, dense[0], model.inp))          # models.py:116-125: ingc, then dropout
    block_in, denseout = h, []
    for conv, adj in zip(model.convs, dense[1:-1]):  # layers.py:171-174
        denseout.append(h)
        h = drop(_conv(h, adj, conv))
    if block == "resgcn":                            # layers.py:177, aggrmethod "add"
        h = h + block_in
    elif block == "jknet":                           # layers.py:178: _doconcat(x, denseout)
        h = torch.cat([h] + denseout, dim=1)
    return F.log_softmax(_conv(h, dense[-1], model.out, act=False), dim=1)  # models.py:138-139


def test_gcn_dropout_after_each_convolution_never_on_features():
    """src/models.py:116-125 (``x = self.ingc(fea, adj)``; ``x = F.dropout(x, ...)``: the
    features are not dropped) and src/layers.py:173-174 (dropout after every hidden
    convolution; the output convolution gets a dropped input, nothing follows it)."""
    dense, sparse = _adjs(5)
    x = _features()
    torch.manual_seed(0)
    model = make_authors_model("gcn", FEAT, CLASSES, 5, hidden=HIDDEN, dropout=0.5,
                               generator=torch.Generator().manual_seed(7))
    model.train()
    got = model(x, sparse)
    want = _by_hand_gcn(model, x, dense, "gcn", _dropper(0.5, 7))
    assert torch.allclose(got, want, atol=1e-5)


def test_resgcn_is_one_long_skip():
    """src/layers.py:176-177 with ``aggrmethod="add"`` (src/layers.py:271): the block returns
    its last convolution's output plus the block's input — one skip, not one per layer."""
    dense, sparse = _adjs(6, seed=2)
    x = _features()
    torch.manual_seed(0)
    model = make_authors_model("resgcn", FEAT, CLASSES, 6, hidden=HIDDEN, dropout=0.3).eval()
    want = _by_hand_gcn(model, x, dense, "resgcn", lambda h: h)
    assert torch.allclose(model(x, sparse), want, atol=1e-5)


def test_jknet_is_a_dense_block_and_a_graph_convolution():
    """src/layers.py:172 and 178 (``denseout`` collects each convolution's input; the block
    returns ``cat(last output, denseout)``, width ``in + out * nbaselayer``: layers.py:134) and
    src/models.py:96 and 138 (the output layer is a ``GraphConvolutionBS`` over it)."""
    dense, sparse = _adjs(5, seed=3)
    x = _features()
    torch.manual_seed(0)
    model = make_authors_model("jknet", FEAT, CLASSES, 5, hidden=HIDDEN, dropout=0.3).eval()
    assert tuple(model.out.weight.shape) == (HIDDEN * 4, CLASSES)
    want = _by_hand_gcn(model, x, dense, "jknet", lambda h: h)
    assert torch.allclose(model(x, sparse), want, atol=1e-5)


def test_appnp_dropout_before_each_propagation_step():
    """src/models.py:173-182 (``New_APPNP.forward``): ``x = relu(input_layer(x))`` (no
    dropout on the features), then per step ``F.dropout`` followed by
    ``relu((1 - α) adj @ x + α x0)`` (Aggr_layer, models.py:157-159), a last dropout and the
    output layer."""
    dense, sparse = _adjs(4, seed=4)
    x = _features()
    torch.manual_seed(0)
    model = make_authors_model("appnp_star", FEAT, CLASSES, 4, hidden=HIDDEN, dropout=0.5, alpha=0.2,
                               generator=torch.Generator().manual_seed(11))
    model.train()
    got = model(x, sparse)
    drop = _dropper(0.5, 11)
    z0 = torch.relu(x @ model.inp.detach() + model.inp_bias.detach())
    z = z0
    for adj in dense:
        z = torch.relu(0.8 * adj @ drop(z) + 0.2 * z0)
    out = drop(z) @ model.out.weight.detach().t() + model.out.bias.detach()
    assert torch.allclose(got, F.log_softmax(out, dim=1), atol=1e-5)


def _assert_uniform(values: torch.Tensor, bound: float) -> None:
    """Inside ``[-bound, bound]``, reaching near both ends, variance ``bound^2 / 3``."""
    v = values.detach().flatten().double()
    assert v.abs().max() <= bound + 1e-7
    assert v.max() > 0.9 * bound and v.min() < -0.9 * bound
    assert abs(v.var().item() - bound ** 2 / 3) < 0.15 * bound ** 2 / 3


def test_uniform_initialisation_of_weights_and_biases():
    """src/layers.py:59-66 (``GraphConvolutionBS.reset_parameters``): weight, self weight and
    bias all ``uniform_(-stdv, stdv)`` with ``stdv = 1 / sqrt(out_features)`` (the bias uses
    the last ``stdv``, the same value); APPNP* (src/models.py:168) uses ``nn.Linear``'s
    default, ``U(-1/sqrt(in), 1/sqrt(in))`` for weight and bias."""
    torch.manual_seed(0)
    model = make_authors_model("gcn", 300, 200, 3, hidden=400, self_loop=True)
    for conv in (model.inp, model.convs[0], model.out):
        bound = 1.0 / math.sqrt(conv.weight.shape[1])
        for param in (conv.weight, conv.weight_self, conv.bias):
            _assert_uniform(param, bound)
    appnp = make_authors_model("appnp_star", 900, 300, 2, hidden=400)
    _assert_uniform(appnp.inp, 1.0 / math.sqrt(900))
    _assert_uniform(appnp.inp_bias, 1.0 / math.sqrt(900))
    _assert_uniform(appnp.out.weight, 1.0 / math.sqrt(400))


# The scripts' values, read off scripts/semi/*.sh and scripts/full/*.sh (nbaseblocklayer + 2
# layers, p_min = --b, p_max = b + (1 - b) * a: src/sample.py:85-88).
SCRIPT_VALUES = {
    # (dataset, split, backbone): (layers, hidden, epochs, lr, weight decay, dropout, norm, b, a, loop)
    ("cora", "semi", "gcn"): (4, 256, 300, 0.009, 0.001, 0.8, "ANS", 0.8, 0.2, False),
    ("cora", "semi", "resgcn"): (8, 64, 300, 0.007, 5e-5, 0.8, "ARW", 0.6, 1.0, False),
    ("cora", "semi", "jknet"): (64, 256, 400, 0.001, 0.001, 0.8, "AN", 0.05, 1.0, False),
    ("cora", "semi", "appnp_star"): (8, 64, 260, 0.01, 0.0008, 0.5, "NA", 0.9, 0.8, False),
    ("citeseer", "semi", "gcn"): (2, 128, 400, 0.009, 0.001, 0.8, "ANS", 0.8, 0.8, False),
    ("citeseer", "semi", "jknet"): (8, 128, 400, 0.007, 0.001, 0.8, "ARW", 0.6, 0.0, False),
    ("cora", "full", "resgcn"): (4, 256, 400, 0.004, 5e-3, 0.1, "ARW", 0.1, 0.3, True),
    ("citeseer", "full", "jknet"): (4, 128, 400, 0.009, 5e-4, 0.8, "ANS", 0.2, 0.4, True),
}


@pytest.mark.parametrize("cell", sorted(SCRIPT_VALUES))
def test_hyperparameters_and_epoch_budgets_are_the_scripts(cell):
    """scripts/semi/cora_gcn.sh (``--nbaseblocklayer 2 --hidden 256 --epoch 300 --lr 0.009
    --weight_decay 0.001 --dropout 0.8 --normalization BingGeNormAdj --b 0.8 --a 0.2``) and
    the others in :data:`SCRIPT_VALUES`; no script passes ``--withbn``; ``--early_stopping``
    is never below ``--epoch`` (no early stop: patience 0 here)."""
    layers, hidden, epochs, lr, wd, dropout, norm, b, a, loop = SCRIPT_VALUES[cell]
    c = TrainConfig(dataset=cell[0], split=cell[1], backbone=cell[2], recipe="authors")
    assert (c.num_layers, c.hidden, c.epochs, c.lr, c.weight_decay, c.dropout, c.normalization) == (
        layers, hidden, epochs, lr, wd, dropout, norm)
    assert c.p_min == pytest.approx(b) and c.p_max == pytest.approx(b + (1 - b) * a)
    assert (c.self_loop, c.batch_norm, c.patience) == (loop, False, 0)


def test_directed_sampling():
    """src/sample.py:86-103: the sampler draws entries of ``train_adj`` (both directions of
    an edge are separate entries, each kept or dropped on its own) — ``directed`` sampling;
    the trainer's masks then have one column per direction."""
    c = TrainConfig(dataset="cora", split="semi", backbone="gcn", recipe="authors")
    assert c.directed is True
    assert TrainConfig(dataset="cora", split="semi", backbone="gcn", recipe="paper").directed is False
    graph = datasets.load("karate")
    seen = []
    make = samplers.make

    def spy(*args, **kwargs):
        seen.append(kwargs["directed"])
        return make(*args, **kwargs)
    try:
        samplers.make = spy
        train(c.replace(epochs=1, num_layers=2, hidden=8, diag_every=0), graph=graph)
    finally:
        samplers.make = make
    assert seen and all(seen), seen  # the trainer's sampler (and the memory check's, which sizes MEN by it)


def test_checkpoint_rule_ties_go_to_the_later_epoch():
    """src/earlystopping.py:39-52: ``score = -val_loss``; ``elif score < self.best_score``
    is the only "not improved" branch, so an equal score saves a new checkpoint;
    src/train_semi.py:185-188 passes ``-acc_val`` (or ``loss_val`` with ``--loss``),
    src/train_new.py:172-176 the validation loss of the *training* forward pass."""
    rows = [(1, 0.5, 1.0, 0.9), (2, 0.7, 0.8, 0.7), (3, 0.7, 0.6, 0.8), (4, 0.6, 0.6, 0.9),
            (5, 0.4, 0.9, 0.7)]
    picks = {}
    for criterion in ("val_acc", "val_loss", "train_val_loss"):
        s = AuthorsCheckpoint(criterion)
        for epoch, acc, loss, train_val in rows:
            assert s.update(epoch, acc, loss, test_acc=epoch / 10, train_val_loss=train_val) is False
        picks[criterion] = s.epoch
    # by hand: acc 0.7 at 2 and 3 -> 3; loss 0.6 at 3 and 4 -> 4; train-pass loss 0.7 at 2 and 5 -> 5
    assert picks == {"val_acc": 3, "val_loss": 4, "train_val_loss": 5}


def test_checkpoint_criterion_per_script():
    """scripts/semi/cora_appnp.sh passes ``--loss`` (validation loss); the other semi
    scripts run src/train_semi.py without it (validation accuracy); scripts/full/*.sh run
    src/train_new.py (training pass's validation loss)."""
    def criterion(dataset, split, backbone):
        return make_selection(TrainConfig(dataset=dataset, split=split, backbone=backbone,
                                          recipe="authors")).criterion
    assert criterion("cora", "semi", "appnp_star") == "val_loss"
    assert criterion("citeseer", "semi", "appnp_star") == "val_acc"
    assert criterion("cora", "semi", "gcn") == "val_acc"
    assert criterion("cora", "full", "gcn") == "train_val_loss"
    assert criterion("citeseer", "full", "jknet") == "train_val_loss"


def test_trainer_runs_the_whole_budget_and_reports_the_checkpoint():
    """src/train_semi.py:218-251: every epoch of ``--epochs`` runs (``--early_stopping`` is
    the budget), then the checkpoint's model (the authors', src/models.py) is tested: the
    reported epoch is the last one with the highest validation accuracy, its test accuracy
    that epoch's. (lr 0.5 makes the curves jump: a patience of 1 would stop early.)"""
    graph = datasets.load("karate")
    c = TrainConfig(dataset="cora", split="semi", backbone="gcn", recipe="authors").replace(
        num_layers=2, hidden=8, epochs=40, patience=1, lr=0.5, diag_every=0)
    r = train(c, graph=graph)
    assert isinstance(r.model, AuthorsGCN)
    assert r.epochs_run == 40
    accs = [e["val_acc"] for e in r.history]
    best = max(i for i, a in enumerate(accs) if a == max(accs))
    assert r.best_epoch == best + 1 and r.test_acc == r.history[best]["test_acc"]


def test_full_split_checkpoints_on_the_training_pass_validation_loss(monkeypatch):
    """src/train_new.py:166-176: ``output = model(train_fea, train_adj)`` (before
    ``optimizer.step()``), then ``early_stopping(F.nll_loss(output[idx_val], ...))``. With
    no edge dropped and no dropout, that pass is the evaluation of the previous epoch's
    weights: its validation loss must equal the previous epoch's evaluation loss."""
    seen = []
    update = AuthorsCheckpoint.update

    def spy(self, epoch, val_acc, val_loss, test_acc, train_val_loss=math.nan):
        seen.append(train_val_loss)
        return update(self, epoch, val_acc, val_loss, test_acc, train_val_loss)
    monkeypatch.setattr(AuthorsCheckpoint, "update", spy)
    c = TrainConfig(dataset="cora", split="full", backbone="gcn", recipe="authors").replace(
        num_layers=2, hidden=8, epochs=6, dropout=0.0, sampler="nodrop", diag_every=0)
    r = train(c, graph=datasets.load("karate"))
    evals = [e["val_loss"] for e in r.history]
    assert seen[1:] == pytest.approx(evals[:-1], rel=1e-5)
    assert r.best_epoch == 1 + max(i for i, v in enumerate(seen) if v == min(seen))


@pytest.mark.parametrize("method", ["AN", "ANS", "NA", "ARW"])
def test_directed_sample_normalised_as_theirs(method):
    """src/sample.py:102-104 builds each layer's matrix from the kept entries ``(row, col)``
    and normalises it with src/normalization.py:30-47, 50-56, 67-73 — degrees are the *row*
    sums of the (now asymmetric) matrix, on both sides for the symmetric forms. Ours, with
    directed masks, written out here with scipy."""
    import numpy as np
    import scipy.sparse as sp
    from dropedge_core import normalization

    g = datasets.load("karate")
    n, ei = g.num_nodes, g.edge_index.numpy()
    masks = samplers.make("dropedge++", p_min=0.5, p_max=0.9, directed=True).sample(
        g, 3, generator=torch.Generator().manual_seed(0))
    eye = sp.eye(n)

    def sym(m):
        d = np.array(m.sum(1)).flatten() ** -0.5
        d[np.isinf(d)] = 0.0
        return sp.diags(d) @ m @ sp.diags(d)
    for layer, (index, weight) in enumerate(normalization.adjacencies(g, masks, method)):
        keep = masks[layer].numpy()
        a = sp.coo_matrix((np.ones(keep.sum()), (ei[0][keep], ei[1][keep])), shape=(n, n))
        if method == "ARW":
            want = sp.diags(1.0 / np.array((a + eye).sum(1)).flatten()) @ (a + eye)
        else:
            want = sym(a) if method == "NA" else sym(a + eye) + (eye if method == "ANS" else 0 * eye)
        ours = torch.sparse_coo_tensor(index, weight, (n, n)).to_dense().numpy()
        assert np.abs(ours - want.toarray()).max() < 1e-6
