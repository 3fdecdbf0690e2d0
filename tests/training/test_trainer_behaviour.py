"""What the trainer does, seen from the model's side and checked against numbers computed
here by hand or with numpy (never with the trainer's own helpers):

* in training, every layer gets the normalised adjacency of its own sampled edges (a fresh
  sample per epoch), in evaluation the whole graph's;
* model selection and early stopping follow the rule of SPEC §Training on a scripted
  validation curve (best accuracy, ties to the lower loss, a falling loss resets patience).
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from dropedge_core import samplers
from dropedge_core.graph import Graph
from torch import nn

from dropedge_explorer.training import _seeding as seeding
from dropedge_explorer.training import trainer
from dropedge_explorer.training._selection import ModelSelection
from dropedge_explorer.training.config import TrainConfig
from tests.helpers import random_graph


class ScriptedModel(nn.Module):
    """Stands in for a backbone: records what it is given, and answers evaluation passes
    with scripted log-probabilities (one ``(N, C)`` table per epoch)."""

    def __init__(self, num_nodes: int, num_classes: int, script: list[torch.Tensor] | None = None):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(()))  # something for Adam to step
        self.shape = (num_nodes, num_classes)
        self.script = script
        self.calls: list[tuple[bool, list[torch.Tensor]]] = []

    def forward(self, x, adjs, return_hidden=False):
        self.calls.append((self.training, [a.to_dense() for a in adjs]))
        if self.training or self.script is None:
            out = torch.full(self.shape, -math.log(self.shape[1])) + 0 * self.bias
        else:
            epoch = sum(1 for training, _ in self.calls if training)
            out = self.script[epoch - 1] + 0 * self.bias
        return (out, [x, x]) if return_hidden else out


def install(monkeypatch, model: ScriptedModel) -> None:
    monkeypatch.setattr(seeding, "make_model", lambda *args, **kwargs: model)


def dense_an(num_nodes: int, edges: np.ndarray) -> np.ndarray:
    """D~^-1/2 (A + I) D~^-1/2 of the undirected ``edges`` ``(2, K)``, with numpy."""
    a = np.zeros((num_nodes, num_nodes))
    a[edges[0], edges[1]] = 1.0
    a[edges[1], edges[0]] = 1.0
    a += np.eye(num_nodes)
    d = 1.0 / np.sqrt(a.sum(1))
    return d[:, None] * a * d[None, :]


def kept_pairs(adj: torch.Tensor) -> set[tuple[int, int]]:
    nz = torch.nonzero(torch.triu(adj, diagonal=1)).tolist()
    return {(u, v) for u, v in nz}


def test_training_gets_each_layers_sample_and_evaluation_the_whole_graph(monkeypatch):
    g = random_graph(30, 70, seed=3)
    g.train_mask[:10] = True
    g.val_mask[10:20] = True
    g.test_mask[20:] = True
    num_layers, p_min, p_max, epochs = 4, 0.3, 0.8, 3
    model = ScriptedModel(g.num_nodes, 2)
    install(monkeypatch, model)
    config = TrainConfig(dataset="csbm", sampler="dropedge++", num_layers=num_layers, p_min=p_min,
                         p_max=p_max, epochs=epochs, patience=0, diag_every=0, seed=5, device="cpu")
    trainer.train(config, graph=g)

    training = [adjs for was_training, adjs in model.calls if was_training]
    evaluation = [adjs for was_training, adjs in model.calls if not was_training]
    assert len(training) == epochs and len(evaluation) == epochs
    m = g.num_edges
    counts = [math.floor(m * (p_min + (p_max - p_min) * l / (num_layers - 1)) + 1e-9)
              for l in range(num_layers)]
    full = dense_an(g.num_nodes, g.undirected_edges.numpy())
    # the trainer's draws, repeated with the documented seed: one sample per epoch
    gen = torch.Generator().manual_seed(config.seed)
    sampler = samplers.make("dropedge++", p_min=p_min, p_max=p_max)
    epochs_pairs = []
    for adjs in training:
        assert len(adjs) == num_layers
        masks = sampler.sample(g, num_layers, generator=gen)
        pairs = [kept_pairs(a) for a in adjs]
        assert [len(p) for p in pairs] == counts  # the hand-computed keep counts, layer by layer
        assert all(pairs[l] <= pairs[l + 1] for l in range(num_layers - 1))  # LID nesting
        for l, adj in enumerate(adjs):
            edges = g.undirected_edges[:, masks[l]].numpy()
            np.testing.assert_allclose(adj.numpy(), dense_an(g.num_nodes, edges), atol=1e-6)
        epochs_pairs.append(pairs)
    assert epochs_pairs[0] != epochs_pairs[1]  # a fresh sample every epoch
    for adjs in evaluation:
        assert len(adjs) == num_layers
        for adj in adjs:
            np.testing.assert_allclose(adj.numpy(), full, atol=1e-6)


def test_nodrop_training_gets_the_whole_graph(monkeypatch):
    g = random_graph(20, 40, seed=1)
    g.train_mask[:5] = True
    g.val_mask[5:10] = True
    model = ScriptedModel(g.num_nodes, 2)
    install(monkeypatch, model)
    trainer.train(TrainConfig(dataset="csbm", sampler="nodrop", num_layers=3, epochs=2, patience=0,
                              diag_every=0, device="cpu"), graph=g)
    full = dense_an(g.num_nodes, g.undirected_edges.numpy())
    for _, adjs in model.calls:
        for adj in adjs:
            np.testing.assert_allclose(adj.numpy(), full, atol=1e-6)


# ---- model selection and early stopping on a scripted validation curve ---------------

# (validation accuracy, validation loss) per epoch, and the rule's verdicts worked out by hand
CURVE = [(0.50, 1.00),  # 1: first best
         (0.50, 0.90),  # 2: same accuracy, lower loss -> best
         (0.40, 1.10),  # 3: worse                      -> 1 epoch without improvement
         (0.40, 0.80),  # 4: lowest loss so far          -> counter reset, best stays 2
         (0.45, 0.85),  # 5: no new best, loss above 0.80 -> 1
         (0.45, 0.95),  # 6:                              -> 2
         (0.60, 0.70),  # 7: new best (unreached with patience 2)
         ]


@pytest.mark.parametrize("patience, stop_epoch, best_epoch", [(2, 6, 2), (3, None, 7), (0, None, 7)])
def test_model_selection_on_a_scripted_curve(patience, stop_epoch, best_epoch):
    selection = ModelSelection(patience)
    stopped = None
    for epoch, (acc, loss) in enumerate(CURVE, start=1):
        if selection.update(epoch, acc, loss, test_acc=epoch / 100):
            stopped = epoch
            break
    assert stopped == stop_epoch
    assert selection.epoch == best_epoch and selection.test_acc == best_epoch / 100


def test_model_selection_ignores_nan_validation():
    selection = ModelSelection(patience=2)
    assert [selection.update(e, math.nan, math.nan, 0.5) for e in (1, 2)] == [False, True]
    assert selection.epoch is None


def scripted_log_probs(num_nodes: int, val: list[int], test: list[int], correct_val: int, p: float,
                       wrong_p: float, correct_test: int) -> torch.Tensor:
    """Two classes, every node of class 0: the first ``correct_val`` validation nodes give
    class 0 probability ``p`` (> 1/2, right), the others ``wrong_p`` (< 1/2, wrong); the
    first ``correct_test`` test nodes are right."""
    prob0 = torch.full((num_nodes,), 0.5)
    prob0[val] = torch.tensor([p if i < correct_val else wrong_p for i in range(len(val))])
    prob0[test] = torch.tensor([0.9 if i < correct_test else 0.1 for i in range(len(test))])
    return torch.stack([prob0, 1 - prob0], 1).log()


def test_the_trainer_reports_the_best_epoch_and_stops_on_a_scripted_curve(monkeypatch):
    n = 12
    val, test = list(range(4, 8)), list(range(8, 12))
    y = torch.zeros(n, dtype=torch.long)
    y[:2] = 1  # two classes among the training nodes
    masks = [torch.zeros(n, dtype=torch.bool) for _ in range(3)]
    masks[0][:4] = True
    masks[1][val] = True
    masks[2][test] = True
    edges = torch.tensor([[0, 1, 2, 4, 6, 8], [1, 2, 3, 5, 7, 9]])
    g = Graph("scripted", torch.eye(n), y, edges, *masks, 2)
    # (correct of 4 validation nodes, p, wrong_p, correct of 4 test nodes) per epoch
    script = [(2, 0.6, 0.4, 1),    # 1: acc .50, loss .7136 -> best
              (2, 0.7, 0.4, 3),    # 2: acc .50, loss .6365 -> best (same accuracy, lower loss)
              (1, 0.99, 0.4, 2),   # 3: acc .25, loss .6897 -> 1 epoch without improvement
              (1, 0.95, 0.49, 4),  # 4: acc .25, loss .5478: lowest loss so far -> reset to 0
              (1, 0.95, 0.45, 4),  # 5: loss .6117 -> 1
              (1, 0.95, 0.45, 4),  # 6: -> 2 = patience: stop
              (4, 0.95, 0.45, 4)]  # 7: a new best that patience 2 never reaches
    # wrong nodes give class 0 (their label) probability w < 1/2: their loss term is -log(w)
    expected_loss = [-(c * math.log(p) + (4 - c) * math.log(w)) / 4 for c, p, w, _ in script]
    table = [scripted_log_probs(n, val, test, c, p, w, t) for c, p, w, t in script]
    model = ScriptedModel(n, 2, table)
    install(monkeypatch, model)
    result = trainer.train(TrainConfig(dataset="csbm", sampler="dropedge", num_layers=2, epochs=7,
                                       patience=2, diag_every=0, device="cpu"), graph=g)
    losses = [e["val_loss"] for e in result.history]
    np.testing.assert_allclose(losses, expected_loss[:len(losses)], rtol=1e-5)
    assert [e["val_acc"] for e in result.history] == [c / 4 for c, *_ in script][:len(losses)]
    assert result.reason == "early_stop" and result.epochs_run == 6
    assert result.best_epoch == 2 and result.best_val_acc == 0.5 and result.test_acc == 0.75
