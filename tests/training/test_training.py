"""The training engine: config validation, every backbone × sampler
trains, events, stop flag, NaN handling, model selection, determinism, the background
worker and the paper presets."""
from __future__ import annotations

import dataclasses
import json
import math
import threading

import pytest
import torch
import torch.nn.functional as F
from dropedge_core import normalization, samplers
from dropedge_core.models import BACKBONES, make_model
from dropedge_core.normalization import AdjacencyBuilder

from dropedge_explorer.data import presets
from dropedge_explorer.training import (
    ConfigError,
    TrainConfig,
    prepare_features,
    train,
)

FAST = dict(hidden=16, epochs=4, patience=0, diag_every=2)


def strict_json(obj) -> str:
    return json.dumps(obj, allow_nan=False)


# ------------------------------------------------------------------ configuration
@pytest.mark.parametrize("field, value, fragment", [
    ("p_min", 1.5, "p_min must be in [0, 1] (got 1.5)"),
    ("p_max", -0.1, "p_max must be in [0, 1] (got -0.1)"),
    ("p", 2.0, "p must be in [0, 1] (got 2.0)"),
    ("num_layers", 0, "num_layers must be an integer in 1..256 (got 0)"),
    ("num_layers", 257, "(got 257)"),
    ("hidden", 0, "hidden must be an integer in 1..4096 (got 0)"),
    ("dropout", 1.0, "dropout must be in [0, 1) (got 1.0)"),
    ("lr", 0.0, "lr must be in (0, 10] (got 0.0)"),
    ("epochs", 0, "epochs must be an integer in 1..100000 (got 0)"),
    ("weight_decay", -1.0, "weight_decay must be in [0, 10]"),
    ("alpha", 2.0, "alpha must be in [0, 1]"),
    ("dataset", "imagenet", "unknown dataset 'imagenet'; valid: cora, citeseer"),
    ("split", "weird", "unknown split 'weird' for cora; valid: semi, full"),
    ("sampler", "dropnode",
     "unknown sampler 'dropnode'; valid: nodrop, dropedge, li, lid, ldd, fd, dropedge++"),
    ("backbone", "gat", "unknown backbone 'gat'; valid: gcn, resgcn, jknet, appnp_star"),
    ("kernel", "cosine", "unknown kernel 'cosine'; valid: linear, poly, rbf, reverse"),
    ("normalization", "XYZ", "unknown normalization 'XYZ'; valid: NA, FOG, AN, ANS, ARW"),
    ("device", "tpu", "unknown device 'tpu'"),
    ("self_loop", "yes", "self_loop must be true or false"),
])
def test_config_errors_name_the_value(field, value, fragment):
    with pytest.raises(ConfigError) as err:
        TrainConfig(**{field: value})
    assert fragment in str(err.value)
    assert "\n" not in str(err.value)
    assert isinstance(err.value, ValueError)


def test_config_p_min_above_p_max():
    with pytest.raises(ConfigError, match=r"p_min must be <= p_max \(got p_min=0.9, p_max=0.5\)"):
        TrainConfig(p_min=0.9, p_max=0.5)


def test_config_normalises_names_and_split():
    c = TrainConfig(dataset="Cora", backbone="APPNP*", sampler="DropEdge++", normalization="arw")
    assert (c.dataset, c.split, c.backbone, c.sampler, c.normalization) == ("cora", "semi", "appnp_star",
                                                                          "dropedge++", "ARW")
    assert TrainConfig(dataset="karate").split == "per-class"
    assert TrainConfig(backbone="appnp").backbone == "appnp_star"
    assert TrainConfig(backbone="appnp*").backbone == "appnp_star"  # the paper's spelling
    d = c.to_dict()
    assert TrainConfig.from_dict(d) == c
    with pytest.raises(ConfigError, match="unknown config field"):
        TrainConfig.from_dict({**d, "momentum": 0.9})
    assert c.replace(seed=3).seed == 3 and c.seed == 0


# ------------------------------------------------------------------ adjacency builder
@pytest.mark.parametrize("method", normalization.METHODS)
@pytest.mark.parametrize("directed", [False, True])
def test_adjacency_builder_matches_normalization(karate, method, directed):
    masks = samplers.make("lid", p_min=0.1, p_max=0.8, directed=directed).sample(
        karate, 4, torch.Generator().manual_seed(0))
    ours = AdjacencyBuilder(karate, method)(masks)
    ref = normalization.adjacencies(karate, masks, method)
    for a, (ei, w) in zip(ours, ref):
        assert torch.allclose(a.to_dense(), normalization.to_dense(ei, w, karate.num_nodes), atol=1e-6)
    full = AdjacencyBuilder(karate, method).full().to_dense()
    assert torch.allclose(full, normalization.to_dense(*normalization.full_adjacency(karate, method),
                                                       karate.num_nodes), atol=1e-6)


# ------------------------------------------------------------------ every backbone x sampler
@pytest.mark.parametrize("graph_name", ["karate", "csbm"])
@pytest.mark.parametrize("backbone", BACKBONES)
@pytest.mark.parametrize("sampler", samplers.NAMES)
def test_every_backbone_and_sampler_trains(request, graph_name, backbone, sampler):
    graph = request.getfixturevalue(graph_name)
    config = TrainConfig(dataset=graph_name, backbone=backbone, sampler=sampler, num_layers=4,
                         p_min=0.2, p_max=0.8, **FAST)
    result = train(config, graph=graph)
    assert result.reason == "finished" and result.epochs_run == 4
    assert all(math.isfinite(e["train_loss"]) and math.isfinite(e["val_loss"]) for e in result.history)
    assert 0.0 <= result.test_acc <= 1.0

    # gradients reach the first layer through the sampled per-layer adjacencies
    torch.manual_seed(0)
    model = make_model(backbone, graph.num_features, graph.num_classes, 4, hidden=16)
    masks = samplers.make(sampler, p_min=0.2, p_max=0.8).sample(graph, 4, torch.Generator().manual_seed(0))
    out = model(prepare_features(graph.x), AdjacencyBuilder(graph, "AN")(masks))
    F.nll_loss(out[graph.train_mask], graph.y[graph.train_mask]).backward()
    first = next(model.parameters())
    assert first.grad is not None and torch.isfinite(first.grad).all() and first.grad.abs().sum() > 0


# ------------------------------------------------------------------ events
def test_event_sequence_is_well_formed(csbm):
    events = []
    config = TrainConfig(dataset="csbm", backbone="gcn", sampler="dropedge++", num_layers=5,
                         hidden=16, epochs=7, patience=0, diag_every=3)
    result = train(config, graph=csbm, on_event=events.append)
    strict_json(events)  # plain JSON, no NaN
    types = [e["type"] for e in events]
    assert types[0] == "start" and types[-1] == "end"
    assert types.count("epoch") == 7
    start = events[0]
    assert start["config"] == config.to_dict() and start["device"] == "cpu"
    assert (start["num_nodes"], start["num_edges"]) == (csbm.num_nodes, csbm.num_edges)
    epochs = [e for e in events if e["type"] == "epoch"]
    assert [e["epoch"] for e in epochs] == list(range(1, 8))
    keys = {"type", "epoch", "train_loss", "val_loss", "train_acc", "val_acc", "test_acc",
            "epoch_time", "sample_time"}
    assert all(set(e) == keys for e in epochs)
    diags = [e for e in events if e["type"] == "diagnostics"]
    assert [d["epoch"] for d in diags] == [3, 6, 7]  # every 3 epochs and the last one
    d = diags[0]
    assert len(d["dirichlet"]) == len(d["mad"]) == len(d["subspace_distance"]) == 4  # H^(1..L-1)
    assert len(d["layer_distances"]) == 3 and len(d["edge_numbers"]) == 5
    assert d["men"] == pytest.approx(sum(d["edge_numbers"]) / 5)
    assert d["average_distance"] == pytest.approx(sum(d["layer_distances"][:2]) / 2)
    # epochs come before their diagnostics
    assert types.index("diagnostics") == types.index("epoch") + 3
    end = events[-1]
    assert end["reason"] == "finished" and end["epochs_run"] == 7
    assert end["test_acc"] == result.test_acc and end["best_epoch"] == result.best_epoch
    assert result.history == epochs and result.diagnostics == diags


def test_model_selection_best_validation_accuracy(csbm):
    result = train(TrainConfig(dataset="csbm", sampler="dropedge", num_layers=2, hidden=16, epochs=30,
                               patience=0, diag_every=0), graph=csbm)
    best = max(e["val_acc"] for e in result.history)
    ties = [e for e in result.history if e["val_acc"] == best]
    chosen = min(ties, key=lambda e: e["val_loss"])
    assert result.best_epoch == chosen["epoch"] and result.best_val_acc == best
    assert result.test_acc == chosen["test_acc"]


def test_stop_flag(csbm):
    stop = threading.Event()

    def on_event(event):
        if event["type"] == "epoch" and event["epoch"] == 3:
            stop.set()

    events = []
    result = train(TrainConfig(dataset="csbm", hidden=16, epochs=100, diag_every=0), graph=csbm,
                   on_event=lambda e: (events.append(e), on_event(e)), stop_event=stop)
    assert result.reason == "stopped" and result.epochs_run == 3
    assert events[-1]["type"] == "end" and events[-1]["reason"] == "stopped"
    assert result.test_acc is not None


def test_nan_loss_stops_with_reason_nan(karate, monkeypatch):
    # lr is bounded (<= 10, where Adam stays finite on karate): diverge by corrupting the
    # weights at the third step instead, as an overflowing update would
    step, calls = torch.optim.Adam.step, []

    def diverging_step(self, *args, **kwargs):
        out = step(self, *args, **kwargs)
        calls.append(1)
        if len(calls) == 3:
            with torch.no_grad():
                for group in self.param_groups:
                    for param in group["params"]:
                        param.fill_(float("inf"))
        return out

    monkeypatch.setattr(torch.optim.Adam, "step", diverging_step)
    result = train(TrainConfig(dataset="karate", lr=0.01, hidden=16, epochs=50, diag_every=0), graph=karate)
    assert result.reason == "nan"
    assert "nan" in result.message.lower() or "inf" in result.message.lower()
    assert "learning rate" in result.message
    assert result.epochs_run < 50
    assert all(math.isfinite(e["train_loss"]) for e in result.history)


def test_nan_from_the_first_epoch_keeps_a_clean_result(karate, monkeypatch):
    import dropedge_explorer.training.trainer as training

    nan_loss = lambda *a, **k: torch.tensor(float("nan"), requires_grad=True)  # noqa: E731
    monkeypatch.setattr(training.F, "nll_loss", nan_loss)
    events = []
    result = train(TrainConfig(dataset="karate", hidden=8, epochs=5), graph=karate, on_event=events.append)
    assert result.reason == "nan" and result.epochs_run == 0
    assert result.best_epoch is None and result.test_acc is None
    strict_json(events)


def test_early_stopping_and_final_diagnostics(csbm):
    result = train(TrainConfig(dataset="csbm", hidden=16, epochs=200, patience=3, diag_every=50,
                               lr=0.05), graph=csbm)
    assert result.reason == "early_stop" and result.epochs_run < 200
    assert result.diagnostics and result.diagnostics[-1]["epoch"] == result.epochs_run


def test_seed_fixes_everything_and_diagnostics_do_not_perturb(csbm):
    base = TrainConfig(dataset="csbm", sampler="dropedge++", num_layers=3, hidden=16, epochs=6, patience=0)
    a = train(base.replace(diag_every=0), graph=csbm)
    b = train(base.replace(diag_every=1), graph=csbm)
    c = train(base.replace(seed=1, diag_every=0), graph=csbm)
    losses = lambda r: [e["train_loss"] for e in r.history]  # noqa: E731
    assert losses(a) == losses(b)
    assert losses(a) != losses(c)


def test_cora_two_layer_gcn_smoke(cora):
    result = train(TrainConfig(dataset="cora", split="semi", backbone="gcn", num_layers=2, sampler="nodrop",
                               epochs=100, diag_every=50), graph=cora)
    assert result.test_acc >= 0.78
    assert result.diagnostics[-1]["men"] > 0


# ------------------------------------------------------------------ presets
def test_paper_presets_load():
    p = presets.paper_preset("cora", "semi", "gcn")
    assert p == {"num_layers": 4, "hidden": 256, "lr": 0.009, "weight_decay": 1e-3, "p_min": 0.8,
                 "p_max": pytest.approx(0.84), "normalization": "ANS", "dropout": 0.8,
                 "batch_norm": False, "self_loop": False}
    a = presets.paper_preset("Cora", "semi", "APPNP*")
    assert a["alpha"] == 0.1 and a["normalization"] == "NA"
    assert presets.paper_preset("pubmed", "full", "resgcn")["batch_norm"] is True
    assert presets.paper_preset("coauthor-cs", None, "gcn")["self_loop"] is True
    assert presets.paper_preset("amazon-photo", "per-class", "appnp")["num_layers"] == 4
    assert len(presets.available()) == 36
    for dataset, setting, backbone in presets.available():  # every preset is a valid config
        split = setting if dataset in ("cora", "citeseer", "pubmed") else None
        TrainConfig(dataset=dataset, split=split, backbone=backbone,
                    **presets.paper_preset(dataset, split, backbone))


def test_missing_preset_is_a_clear_error():
    with pytest.raises(presets.PresetError, match="no paper preset for dataset=karate"):
        presets.paper_preset("karate", None, "gcn")
    with pytest.raises(presets.PresetError, match="unknown preset 'best'"):
        presets.preset("best", "cora", "semi", "gcn")
    with pytest.raises(presets.PresetError, match="unknown backbone"):
        presets.paper_preset("cora", "semi", "gat")


def test_a_config_is_frozen_after_validation():
    config = TrainConfig(dataset="karate", backbone="Res-GCN", normalization="an", num_layers=6)
    assert config.backbone == "resgcn" and config.normalization == "AN" and config.lr == 1e-3
    assert TrainConfig(dataset="karate", backbone="APPNP*").backbone == "appnp_star"
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.lr = 0.5  # type: ignore[misc]
    assert config.replace(lr=0.5).lr == 0.5 and config.lr == 1e-3
    assert hash(config) == hash(config.replace())
