"""Training recipes: the defaults a run takes, by depth, and how a config records them."""
from __future__ import annotations

import pytest

from dropedge_core.training import ConfigError, TrainConfig, recipes


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
