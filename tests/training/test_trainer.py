"""training/trainer.py: what reaches the model (the sampled, normalised per-layer
adjacencies in training, the full one in evaluation) and model selection / early stopping
on a scripted validation curve. Expected adjacencies are dense numpy formulas of the masks;
expected epochs are worked out by hand from the script (``python tools/mutation.py trainer``)."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from dropedge_core import samplers
from dropedge_core.normalization import AdjacencyBuilder

from dropedge_explorer.training import TrainConfig, train
from dropedge_explorer.training import _seeding as seeding
from dropedge_explorer.training import trainer as trainer_module
from tests.helpers import random_graph
from tests.helpers.references import dense_reference

N_TRAIN, N_VAL, N_TEST = 8, 12, 20


def split_graph(seed: int = 0):
    g = random_graph(50, 120, seed=seed)
    idx = torch.arange(50)
    g.train_mask = idx < N_TRAIN
    g.val_mask = (idx >= N_TRAIN) & (idx < N_TRAIN + N_VAL)
    g.test_mask = (idx >= N_TRAIN + N_VAL) & (idx < N_TRAIN + N_VAL + N_TEST)
    return g


def dense_adjacency(g, mask: torch.Tensor) -> torch.Tensor:
    a = np.zeros((g.num_nodes, g.num_nodes), dtype=np.float32)
    u, v = g.undirected_edges[:, mask].numpy()
    a[u, v] = a[v, u] = 1.0
    return torch.from_numpy(a)


class Recorder(torch.nn.Module):
    """The real model, with every forward pass's mode and (dense) adjacencies written down."""

    def __init__(self, model: torch.nn.Module, calls: list):
        super().__init__()
        self.model, self.calls = model, calls

    def forward(self, x, adjs, return_hidden=False):
        self.calls.append((self.training, [a.to_dense() for a in adjs]))
        return self.model(x, adjs, return_hidden=return_hidden)


@pytest.mark.parametrize("sampler, method", [("dropedge++", "AN"), ("li", "ARW"), ("dropedge", "NA")])
def test_sampled_adjacencies_reach_the_model_in_training_and_the_full_one_in_evaluation(
        monkeypatch, sampler, method):
    g = split_graph()
    calls: list = []
    make = seeding.make_model
    monkeypatch.setattr(seeding, "make_model", lambda *a, **k: Recorder(make(*a, **k), calls))
    config = TrainConfig(dataset="upload", backbone="gcn", sampler=sampler, num_layers=3, p_min=0.2,
                         p_max=0.7, normalization=method, hidden=8, epochs=2, patience=0, diag_every=0,
                         seed=3)
    train(config, graph=g)
    # the trainer's sample stream: its own generator seeded with the run's seed
    gen = torch.Generator().manual_seed(3)
    s = samplers.make(sampler, p_min=0.2, p_max=0.7)
    full = dense_reference(dense_adjacency(g, torch.ones(g.num_edges, dtype=torch.bool)), method)
    assert [mode for mode, _ in calls] == [True, False, True, False]
    for epoch in range(2):
        masks = s.sample(g, 3, generator=gen)
        training, evaluation = calls[2 * epoch][1], calls[2 * epoch + 1][1]
        assert len(training) == len(evaluation) == 3
        for layer in range(3):
            want = dense_reference(dense_adjacency(g, masks[layer]), method)
            torch.testing.assert_close(training[layer], want)
            torch.testing.assert_close(evaluation[layer], full)
        # the sample is not the full graph (else the test could not tell them apart)
        assert int(masks.sum()) < 3 * g.num_edges


def test_nodrop_trains_on_the_full_adjacency(monkeypatch):
    g = split_graph(1)
    calls: list = []
    make = seeding.make_model
    monkeypatch.setattr(seeding, "make_model", lambda *a, **k: Recorder(make(*a, **k), calls))
    train(TrainConfig(dataset="upload", sampler="nodrop", num_layers=2, hidden=8, epochs=1, patience=0,
                      diag_every=0), graph=g)
    full = dense_reference(dense_adjacency(g, torch.ones(g.num_edges, dtype=torch.bool)), "AN")
    for _, adjs in calls:
        for a in adjs:
            torch.testing.assert_close(a, full)


class Script:
    """A scripted validation curve: epoch e reports val_acc[e - 1], val_loss[e - 1] and a
    test accuracy of e / 100 (so the chosen epoch can be read from the test accuracy)."""

    def __init__(self, monkeypatch, val_acc: list[float], val_loss: list[float]):
        self.val_acc, self.val_loss, self.epoch = val_acc, val_loss, 0
        real_loss = trainer_module.F.nll_loss

        def nll_loss(inp, target, *args, **kwargs):
            if inp.size(0) == N_VAL:  # the evaluation's validation loss: a new epoch's numbers
                self.epoch += 1
                return torch.tensor(self.val_loss[self.epoch - 1])
            return real_loss(inp, target, *args, **kwargs)

        def accuracy(log_probs, y, mask):
            size = int(mask.sum())
            if size == N_VAL:
                return self.val_acc[self.epoch - 1]
            return self.epoch / 100 if size == N_TEST else 0.5

        monkeypatch.setattr(trainer_module.F, "nll_loss", nll_loss)
        monkeypatch.setattr(trainer_module, "_accuracy", accuracy)


def run(epochs: int, patience: int, diag_every: int = 0, events: list | None = None):
    config = TrainConfig(dataset="upload", sampler="dropedge", num_layers=2, hidden=8, epochs=epochs,
                         patience=patience, diag_every=diag_every)
    return train(config, graph=split_graph(), on_event=None if events is None else events.append)


def test_model_selection_best_accuracy_ties_to_the_lower_loss(monkeypatch):
    Script(monkeypatch, val_acc=[0.5, 0.7, 0.7, 0.6, 0.7], val_loss=[1.0, 0.9, 0.8, 0.85, 0.8])
    result = run(epochs=5, patience=0)
    # epoch 2 raises the accuracy, epoch 3 ties it with a lower loss, epoch 5 ties both: 3
    assert (result.best_epoch, result.best_val_acc, result.test_acc) == (3, 0.7, 0.03)
    assert (result.reason, result.epochs_run, result.message) == ("finished", 5, "finished 5 epochs")


def test_early_stopping_waits_while_the_loss_falls(monkeypatch):
    # counter by hand (patience 2): epochs 1, 2 raise the accuracy; 3, 4, 5 do not, but each
    # brings the lowest loss seen so far (0.85, 0.8, 0.75): reset; 6 +1, 7 +1: stop after 7.
    # (Without the loss rule it stops after 4; with a patience of 4, after 9 - or after 6
    # with both changes.)
    Script(monkeypatch, val_acc=[0.5, 0.6, 0.55, 0.55, 0.55, 0.55, 0.55] + [0.9] * 5,
           val_loss=[1.0, 0.9, 0.85, 0.8, 0.75, 0.9, 0.9] + [0.1] * 5)
    events: list = []
    result = run(epochs=20, patience=2, diag_every=5, events=events)
    assert (result.reason, result.epochs_run) == ("early_stop", 7)
    assert (result.best_epoch, result.test_acc) == (2, 0.02)
    assert result.message == "early stop at epoch 7: no better validation accuracy or loss for 2 epochs"
    # diagnostics at the schedule (5) and at the early stop (7)
    assert [d["epoch"] for d in result.diagnostics] == [5, 7]
    end = events[-1]
    assert end == {"type": "end", "reason": "early_stop", "message": result.message, "best_epoch": 2,
                   "best_val_acc": 0.6, "test_acc": 0.02, "epochs_run": 7, "total_time": end["total_time"]}


def test_a_run_whose_patience_runs_out_at_the_last_epoch_finished(monkeypatch):
    Script(monkeypatch, val_acc=[0.5, 0.4, 0.4], val_loss=[1.0, 1.1, 1.2])
    result = run(epochs=3, patience=2)
    assert (result.reason, result.epochs_run, result.best_epoch) == ("finished", 3, 1)


def test_patience_zero_never_stops_early(monkeypatch):
    Script(monkeypatch, val_acc=[0.5] + [0.1] * 5, val_loss=[1.0] + [2.0] * 5)
    result = run(epochs=6, patience=0)
    assert (result.reason, result.epochs_run, result.best_epoch) == ("finished", 6, 1)


def test_adjacency_builder_reuses_its_buffer_only_for_the_same_shape():
    g = split_graph(2)
    builder = AdjacencyBuilder(g, "AN")
    gen = torch.Generator().manual_seed(5)
    for num_layers in (3, 3, 2, 4):  # same depth twice, then others: the buffer must follow
        masks = torch.rand(num_layers, g.num_edges, generator=gen) < 0.5
        adjs = builder(masks)
        assert len(adjs) == num_layers
        for layer, adj in enumerate(adjs):
            want = dense_reference(dense_adjacency(g, masks[layer]), "AN")
            torch.testing.assert_close(adj.to_dense(), want)
    every = torch.ones(g.num_edges, dtype=torch.bool)
    torch.testing.assert_close(builder.full().to_dense(), dense_reference(dense_adjacency(g, every), "AN"))


def test_undefined_diagnostics_are_none_not_nan():
    assert trainer_module._finite_or_none(0.25) == 0.25
    assert trainer_module._finite_or_none(float("nan")) is None
    assert trainer_module._finite_or_none(float("inf")) is None


def _path_graph(n: int):
    from dropedge_core.graph import Graph

    edges = torch.stack([torch.arange(n - 1), torch.arange(1, n)])
    none = torch.zeros(n, dtype=torch.bool)
    x = torch.rand(n, 4, generator=torch.Generator().manual_seed(n))
    return Graph("path", x, torch.zeros(n, dtype=torch.long), edges, none, none, none, 2)


def test_diagnostics_wire_mad_subset_and_men_sources_to_their_generators():
    """On a graph above both thresholds (MAD's node subset, MEN's exact limit), the MAD
    subset comes from ``seed`` (default 0) and MEN's sources from ``generator``: the
    numbers are those of metrics.mad / metrics.men_measure called with the same draws."""
    from dropedge_core import metrics

    g = _path_graph(20_001)
    gen = torch.Generator().manual_seed(0)
    hidden = [torch.rand(g.num_nodes, 3, generator=gen) for _ in range(2)]
    masks = torch.rand(2, g.num_edges, generator=gen) < 0.7
    out = trainer_module.diagnostics(g, hidden, masks, generator=torch.Generator().manual_seed(4),
                                     mad_nodes=300)
    want_mad = [metrics.mad(h, max_nodes=300, generator=torch.Generator().manual_seed(0)) for h in hidden]
    assert out["mad"] == pytest.approx(want_mad)
    est = metrics.men_measure(g, masks, generator=torch.Generator().manual_seed(4))
    assert est.sources < g.num_nodes  # estimated: the branch under test
    assert out["men"] == pytest.approx(est.value) and out["men_stderr"] == pytest.approx(est.stderr)
    assert out["edge_numbers"] == pytest.approx(list(est.edge_numbers))


def test_diagnostics_of_a_small_graph_are_exact_integers():
    g = _path_graph(30)
    gen = torch.Generator().manual_seed(1)
    hidden = [torch.rand(30, 3, generator=gen) for _ in range(3)]
    masks = torch.ones(2, g.num_edges, dtype=torch.bool)
    out = trainer_module.diagnostics(g, hidden, masks)
    assert "men_stderr" not in out
    # a path of 30 with every edge kept: (A + I) has 30 + 2 * 29 = 88 nonzeros, (A + I)^2
    # (pairs within 2 steps) 30 + 2 * 29 + 2 * 28 = 144
    assert out["edge_numbers"] == [88, 144] and all(isinstance(v, int) for v in out["edge_numbers"])
    assert out["men"] == pytest.approx((88 + 144) / 2)
    assert len(out["mad"]) == len(out["dirichlet"]) == len(out["subspace_distance"]) == 3
    assert len(out["layer_distances"]) == 2


def test_accuracy_by_hand_and_of_no_nodes():
    log_probs = torch.tensor([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4], [0.3, 0.7]]).log()
    y = torch.tensor([0, 1, 1, 1])
    assert trainer_module._accuracy(log_probs, y, torch.tensor([True, True, True, False])) == 2 / 3
    assert trainer_module._accuracy(log_probs, y, torch.tensor([False, False, True, True])) == 0.5
    nothing = trainer_module._accuracy(log_probs, y, torch.zeros(4, dtype=torch.bool))
    assert isinstance(nothing, float) and nothing != nothing  # NaN: no nodes, no accuracy


def test_a_validation_loss_that_is_not_finite_stops_the_run(monkeypatch):
    Script(monkeypatch, val_acc=[0.5, 0.6, 0.7], val_loss=[1.0, float("inf"), 0.5])
    result = run(epochs=3, patience=0)
    assert (result.reason, result.epochs_run, result.best_epoch) == ("nan", 1, 1)
    lr = TrainConfig(dataset="upload", sampler="dropedge", num_layers=2).lr
    assert result.message == (f"validation loss became inf at epoch 2 (learning rate {lr} too high?); "
                              "stopped, curves up to epoch 1 kept")


def test_a_training_loss_that_is_not_finite_names_the_epoch(monkeypatch):
    nan = lambda *a, **k: torch.tensor(float("nan"), requires_grad=True)  # noqa: E731
    monkeypatch.setattr(trainer_module.F, "nll_loss", nan)
    config = TrainConfig(dataset="upload", sampler="dropedge", num_layers=2, hidden=8, epochs=3, lr=0.01)
    result = train(config, graph=split_graph())
    assert (result.reason, result.epochs_run) == ("nan", 0)
    assert result.message == ("training loss became nan at epoch 1 (learning rate 0.01 too high?); "
                              "stopped, curves up to epoch 0 kept")


def test_without_validation_nodes_the_run_goes_on_and_selects_nothing():
    g = split_graph()
    g.val_mask = torch.zeros(g.num_nodes, dtype=torch.bool)
    result = train(TrainConfig(dataset="upload", sampler="dropedge", num_layers=2, hidden=8, epochs=3,
                               patience=0, diag_every=0), graph=g)
    assert (result.reason, result.epochs_run) == ("finished", 3)
    assert (result.best_epoch, result.best_val_acc, result.test_acc) == (None, None, None)
    assert all(e["val_loss"] != e["val_loss"] for e in result.history)  # NaN: nothing to measure


def test_stop_before_an_epoch_says_which():
    import threading

    stop = threading.Event()
    stop.set()
    result = train(TrainConfig(dataset="upload", sampler="dropedge", num_layers=2, hidden=8, epochs=3),
                   graph=split_graph(), stop_event=stop)
    assert (result.reason, result.epochs_run) == ("stopped", 0)
    assert result.message == "stopped by request before epoch 1"


def test_times_are_durations_of_their_parts():
    events: list = []
    result = run(epochs=3, patience=0, diag_every=1, events=events)
    epochs = [e for e in events if e["type"] == "epoch"]
    diags = [e for e in events if e["type"] == "diagnostics"]
    assert len(epochs) == len(diags) == 3  # diag_every=1: diagnostics after every epoch
    for e in epochs:
        assert 0.0 <= e["sample_time"] <= e["epoch_time"] <= result.total_time
        assert isinstance(e["train_acc"], float) and 0.0 <= e["train_acc"] <= 1.0
    assert all(0.0 <= d["diag_time"] <= result.total_time for d in diags)
    assert sum(e["epoch_time"] for e in epochs) + sum(d["diag_time"] for d in diags) <= result.total_time
    assert events[0]["device_name"] == "CPU" and events[0]["device"] == "cpu"


def test_refused_graphs_and_missing_inputs():
    from dropedge_explorer.training import ConfigError

    config = TrainConfig(dataset="upload", sampler="dropedge", num_layers=2, hidden=8, epochs=1)
    with pytest.raises(ConfigError) as err:
        train(config)
    assert str(err.value) == "dataset 'upload' needs the uploaded graph (pass graph=...)"
    g = split_graph()
    g.train_mask = torch.zeros(g.num_nodes, dtype=torch.bool)
    with pytest.raises(ConfigError, match="random has no training nodes in split"):
        train(config, graph=g)
    for classes, fragment in ((0, "random has no labels"), (1, "random has one class only")):
        g = split_graph()
        g.num_classes = classes
        with pytest.raises(ConfigError, match=fragment):
            train(config, graph=g)


def test_prepare_features_makes_sparse_features_csr_and_leaves_dense_ones():
    sparse = torch.zeros(10, 10)
    sparse[0, 1] = sparse[3, 4] = 1.0  # 2% non-zero
    got = trainer_module.prepare_features(sparse)
    assert got.layout == torch.sparse_csr and torch.equal(got.to_dense(), sparse)
    dense = torch.rand(10, 10) + 0.1  # no zero
    assert trainer_module.prepare_features(dense) is dense
    empty = torch.zeros(0, 3)
    assert trainer_module.prepare_features(empty) is empty


def test_the_run_settings_reach_the_model_and_the_sampler(monkeypatch):
    seen: dict = {}
    make = seeding.make_model

    def spy(*args, **kwargs):
        seen.update(args=args, kwargs=kwargs)
        return make(*args, **kwargs)

    monkeypatch.setattr(seeding, "make_model", spy)
    made = samplers.make
    spy_sampler = lambda *a, **k: seen.update(sampler=(a, k)) or made(*a, **k)  # noqa: E731
    monkeypatch.setattr(trainer_module.samplers, "make", spy_sampler)
    adam = torch.optim.Adam
    spy_adam = lambda params, **k: seen.update(adam=k) or adam(params, **k)  # noqa: E731
    monkeypatch.setattr(trainer_module.torch.optim, "Adam", spy_adam)
    g = split_graph(3)
    config = TrainConfig(dataset="upload", backbone="appnp_star", sampler="fd", num_layers=3, p=0.3,
                         kernel="rbf", directed=True, hidden=12, dropout=0.25, self_loop=False,
                         batch_norm=True, alpha=0.3, lr=0.02, weight_decay=0.001, epochs=1, patience=0,
                         diag_every=0)
    train(config, graph=g)
    assert seen["adam"] == {"lr": 0.02, "weight_decay": 0.001}
    assert seen["args"] == ("appnp_star", g.num_features, g.num_classes, 3)
    kwargs = dict(seen["kwargs"])
    assert kwargs.pop("generator").initial_seed() == config.seed + 1
    assert kwargs == {"hidden": 12, "dropout": 0.25, "self_loop": False, "batch_norm": True, "alpha": 0.3}
    assert seen["sampler"] == (("fd",), {"p_min": config.p_min, "p_max": config.p_max, "p": 0.3,
                                         "kernel": "rbf", "directed": True})


def test_memory_refusal_names_the_run_and_what_to_do(monkeypatch):
    from dropedge_explorer.memory import MemoryLimitError

    monkeypatch.setenv("DROPEDGE_MAX_MEMORY_GB", "0.000001")
    g = split_graph()
    config = TrainConfig(dataset="upload", sampler="dropedge", num_layers=2, hidden=8, epochs=1)
    with pytest.raises(MemoryLimitError) as err:
        train(config, graph=g)
    text = str(err.value)
    assert "training gcn L=2 hidden=8 on random (N=50, M=120, 8 features)" in text
    assert "use fewer layers, a smaller hidden width or a smaller graph" in text
    g.num_classes = 1
    with pytest.raises(Exception) as err:
        train(config, graph=g)
    assert str(err.value) == ("random has one class only: every prediction would be right "
                              "(100% accuracy says nothing); training needs at least 2 classes")


def test_without_a_graph_the_named_dataset_is_loaded():
    events: list = []
    train(TrainConfig(dataset="karate", sampler="dropedge", num_layers=2, hidden=8, epochs=1, diag_every=0),
          on_event=events.append)
    assert (events[0]["num_nodes"], events[0]["num_edges"]) == (34, 78)


def test_features_at_the_density_threshold_stay_dense():
    x = torch.zeros(10, 10)
    x[:3] = 1.0  # exactly 30% non-zero: not below the threshold
    assert trainer_module.prepare_features(x) is x


def test_patience_one_stops_after_one_epoch_without_progress_and_equal_loss_is_no_progress(monkeypatch):
    # epoch 2 repeats the best loss (not lower): no progress; patience 1 stops after it
    Script(monkeypatch, val_acc=[0.5, 0.5, 0.9], val_loss=[1.0, 1.0, 0.1])
    events: list = []
    result = run(epochs=3, patience=1, diag_every=0, events=events)
    assert (result.reason, result.epochs_run, result.best_epoch) == ("early_stop", 2, 1)
    assert result.diagnostics == [] and not [e for e in events if e["type"] == "diagnostics"]


def test_the_result_carries_the_run():
    import time as clock

    config = TrainConfig(dataset="upload", sampler="dropedge", num_layers=2, hidden=8, epochs=2, diag_every=0)
    t0 = clock.perf_counter()
    result = train(config, graph=split_graph())
    elapsed = clock.perf_counter() - t0
    assert result.config is config and result.device == "cpu"
    assert isinstance(result.model, torch.nn.Module)
    assert 0.0 < result.total_time <= elapsed
