"""Training recipes: the defaults a run takes, by depth, and how a config records them."""
from __future__ import annotations

import pytest

from dropedge_explorer.training import ConfigError, TrainConfig, recipes


@pytest.mark.parametrize("layers", [1, 2, 4])
def test_depth_recipe_is_the_usual_gcn_settings_when_shallow(layers):
    c = TrainConfig(dataset="karate", num_layers=layers)
    assert (c.lr, c.dropout, c.weight_decay, c.self_loop, c.hidden, c.epochs) == (0.01, 0.5, 5e-4, False,
                                                                                  128, 200)


@pytest.mark.parametrize("layers,hidden,epochs", [(5, 128, 200), (8, 128, 200), (16, 128, 300),
                                                  (32, 64, 400), (64, 64, 400)])
def test_depth_recipe_deep(layers, hidden, epochs):
    c = TrainConfig(dataset="karate", num_layers=layers)
    assert (c.lr, c.dropout, c.weight_decay, c.self_loop) == (1e-3, 0.0, 0.0, True)
    assert (c.hidden, c.epochs, c.patience) == (hidden, epochs, epochs // 2)
    assert c.recipe == "depth" and c.settings == "depth"


def test_given_values_win_and_are_named_in_the_settings_label():
    c = TrainConfig(dataset="karate", num_layers=16, lr=0.005, batch_norm=True, p_min=0.2)
    assert (c.lr, c.batch_norm, c.p_min, c.dropout) == (0.005, True, 0.2, 0.0)
    assert c.settings == "depth+lr=0.005+batch_norm=True"  # keep rates are not hyperparameters here
    assert TrainConfig(dataset="karate", recipe="quick", num_layers=16).settings == "quick"


def test_filled_config_roundtrips_and_replace_keeps_values():
    c = TrainConfig(dataset="karate", num_layers=16)
    assert TrainConfig.from_dict(c.to_dict()) == c
    assert c.replace(num_layers=2).lr == 1e-3  # filled values are the config's own now
    assert TrainConfig(dataset="karate", num_layers=2).lr == 0.01


def test_paper_recipe_takes_the_preset_and_its_depth():
    c = TrainConfig(dataset="cora", split="semi", recipe="paper")
    assert (c.num_layers, c.hidden, c.normalization, c.dropout) == (4, 256, "ANS", 0.8)
    assert TrainConfig(dataset="cora", split="semi", recipe="preset", num_layers=16).num_layers == 16
    with pytest.raises(ConfigError, match="recipe 'paper': no paper preset"):
        TrainConfig(dataset="karate", recipe="paper")
    with pytest.raises(ConfigError, match="unknown recipe 'fast'; valid: depth, quick, paper"):
        TrainConfig(dataset="karate", recipe="fast")
    # every setting given: the recipe fills nothing, so no preset is needed
    full = TrainConfig(dataset="karate").to_dict() | {"recipe": "paper"}
    assert TrainConfig.from_dict(full).lr == 0.01


def test_from_legacy_names_the_recipe_that_filled_an_old_config():
    quick = TrainConfig(dataset="cora", split="semi", recipe="quick", num_layers=16).to_dict()
    paper = TrainConfig(dataset="cora", split="semi", recipe="paper", num_layers=16).to_dict()
    for values, name in ((quick, "quick"), (paper, "paper")):
        legacy = {k: v for k, v in values.items() if k != "recipe"}
        assert recipes.from_legacy(legacy)["recipe"] == name


@pytest.mark.parametrize("backbone,layers,batch_norm", [("resgcn", 16, False), ("resgcn", 17, True),
                                                        ("resgcn", 64, True), ("gcn", 64, False),
                                                        ("jknet", 64, False), ("appnp_star", 64, False)])
def test_depth_recipe_gives_deep_resgcn_batch_norm(backbone, layers, batch_norm):
    c = TrainConfig(dataset="karate", backbone=backbone, num_layers=layers)
    assert c.batch_norm is batch_norm and c.settings == "depth"
    quick = TrainConfig(dataset="karate", backbone=backbone, num_layers=layers, recipe="quick")
    assert quick.batch_norm is False


@pytest.mark.parametrize("dataset,split,backbone,layers", [("citeseer", "full", "resgcn", 16),
                                                           ("citeseer", "semi", "resgcn", 64),
                                                           ("cora", "semi", "jknet", 64)])
def test_paper_recipe_gives_deep_resgcn_and_jknet_batch_norm(dataset, split, backbone, layers):
    c = TrainConfig(dataset=dataset, split=split, backbone=backbone, recipe="paper")
    assert (c.num_layers, c.batch_norm, c.settings) == (layers, True, "paper")
    # the preset itself (the paper's table) has no batch norm: a run without it says so
    off = c.replace(batch_norm=False)
    assert off.settings == "paper+batch_norm=False"
    legacy = {k: v for k, v in off.to_dict().items() if k != "recipe"}
    assert recipes.from_legacy(legacy)["recipe"] == "paper"  # old preset runs are still the preset's
    # shallower presets of the same backbones keep the paper's values
    assert TrainConfig(dataset="cora", split="semi", backbone="resgcn", recipe="paper").batch_norm is False
    assert TrainConfig(dataset=dataset, split=split, backbone=backbone, recipe="paper",
                       num_layers=8).batch_norm is False


def test_deep_resgcn_preset_no_longer_explodes_at_initialisation():
    """CiteSeer semi ResGCN-64 (the paper's preset, ARW, hidden 64): the first training loss
    was 3e18 without batch norm; with the recipe's batch norm it is that of a sane model."""
    import torch
    import torch.nn.functional as F
    from dropedge_core import datasets
    from dropedge_core.models import make_model
    from dropedge_core.normalization import AdjacencyBuilder

    from dropedge_explorer.training.trainer import prepare_features

    c = TrainConfig(dataset="citeseer", split="semi", backbone="resgcn", recipe="paper")
    graph = datasets.load("citeseer", "semi")
    adj = AdjacencyBuilder(graph, c.normalization).full()
    x = prepare_features(graph.x)

    def first_loss(batch_norm: bool) -> float:
        torch.manual_seed(0)
        model = make_model(c.backbone, graph.num_features, graph.num_classes, c.num_layers,
                           hidden=c.hidden, dropout=c.dropout, self_loop=c.self_loop, batch_norm=batch_norm)
        with torch.no_grad():
            out = model(x, [adj] * c.num_layers)
        return float(F.nll_loss(out[graph.train_mask], graph.y[graph.train_mask]))

    assert first_loss(c.batch_norm) < 1e3 < 1e10 < first_loss(False)


@pytest.mark.parametrize("layers", [2, 16, 64])
def test_depth_recipe_keeps_appnp_star_shallow(layers):
    """APPNP*'s depth is propagation between two weight layers: the deep GCN settings (lr
    1e-3, no dropout) only slow it down."""
    c = TrainConfig(dataset="karate", backbone="appnp_star", num_layers=layers)
    assert (c.lr, c.dropout, c.weight_decay, c.hidden, c.epochs) == (0.01, 0.5, 5e-4, 128, 200)
    jknet = TrainConfig(dataset="karate", backbone="jknet", num_layers=layers)
    assert jknet.lr == (0.01 if layers < 5 else 1e-3)
