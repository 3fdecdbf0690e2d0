"""The Live training and Tuning forms' decisions, without the app: the point a run trains,
the recipe and its fallback, the fields a run is built from, a study's automatic name."""
from __future__ import annotations

import pytest

from dropedge_explorer.training import UPLOAD_DATASET, ConfigError, TrainConfig
from dropedge_explorer.training import forms as tf

SIDEBAR = {"sampler": "dropedge++", "num_layers": 8, "p_min": 0.3, "p_max": 0.8, "seed": 0}


def test_a_tuned_point_replaces_the_sidebars_point_and_nothing_else():
    tuned = {"sampler": "lid", "p_min": 0.4123, "p_max": 0.9, "seed": 7, "source": "trial #2",
             "dataset": "cora", "hidden": 3}
    assert tf.run_point(SIDEBAR, tuned) == {"sampler": "lid", "num_layers": 8, "p_min": 0.4123,
                                            "p_max": 0.9, "seed": 7}
    assert tf.run_point(SIDEBAR, None) == SIDEBAR and tf.run_point(SIDEBAR, {}) == SIDEBAR
    assert tf.run_point(SIDEBAR, None) is not SIDEBAR  # the caller's dict is left alone


def test_the_paper_preset_or_why_it_falls_back_to_the_depth_recipe():
    # the paper's Table: Cora, semi-supervised, GCN: 4 layers, keep rates 0.8 -> 0.84
    cora = tf.choose_recipe("paper preset", "cora", "semi", "gcn")
    assert cora.recipe == "paper" and cora.fallback is None
    assert (cora.preset["num_layers"], cora.preset["p_min"], cora.preset["p_max"]) == (4, 0.8, 0.84)
    upload = tf.choose_recipe("paper preset", UPLOAD_DATASET, "per-class", "gcn")
    assert (upload.recipe, upload.preset) == ("depth", None) and "your own graph" in upload.fallback
    karate = tf.choose_recipe("paper preset", "karate", None, "gcn")
    assert (karate.recipe, karate.preset) == ("depth", None)
    assert karate.fallback.startswith("No paper preset here — ") and "karate" in karate.fallback
    assert tf.choose_recipe("depth recipe", "cora", "semi", "gcn") == tf.RecipeChoice("depth")
    assert tf.choose_recipe("quick", UPLOAD_DATASET, None, "gcn") == tf.RecipeChoice("quick")
    assert tf.choose_recipe("custom", "cora", "semi", "gcn") == tf.RecipeChoice(None)


def test_the_preset_overrides_the_point_and_custom_is_recorded_as_depth():
    form = {"hidden": 64, "lr": 0.01, "dropout": 0.5, "epochs": 30, "diag_every": 10}
    cora = tf.choose_recipe("paper preset", "cora", "semi", "gcn")
    point = tf.run_point(SIDEBAR, cora.preset)
    values = tf.run_values(form, "cora", "semi", "gcn", point, cora)
    assert (values["num_layers"], values["p_min"], values["p_max"]) == (4, 0.8, 0.84)
    assert (values["hidden"], values["lr"], values["dropout"]) == (256, 0.009, 0.8)  # the preset's
    assert values["epochs"] == 30 and values["sampler"] == "dropedge++" and values["recipe"] == "paper"
    TrainConfig(**values)  # a valid run
    custom = tf.run_values(form, "karate", None, "gcn", SIDEBAR, tf.choose_recipe("custom", "karate",
                                                                                  None, "gcn"))
    assert custom["recipe"] == "depth" and custom["hidden"] == 64 and custom["num_layers"] == 8


def test_an_upload_takes_karates_recipe_without_the_forms_own_fields():
    fields = tf.recipe_widget_fields("depth", UPLOAD_DATASET, "per-class", "gcn", 8)
    # the depth recipe from L = 5: lr 0.001, no dropout or weight decay, the self-feature term on
    assert (fields["lr"], fields["dropout"], fields["weight_decay"], fields["self_loop"]) == (
        0.001, 0.0, 0.0, True)
    assert "backbone" not in fields and "diag_every" not in fields
    assert fields == tf.recipe_widget_fields("depth", "karate", None, "gcn", 8)
    shallow = tf.recipe_widget_fields("depth", "karate", None, "gcn", 2)
    assert (shallow["lr"], shallow["dropout"]) == (0.01, 0.5)


def test_kernel_and_direction_follow_the_sampler():
    assert tf.sampler_options("dropedge++", "rbf", True) == ("rbf", True)
    assert tf.sampler_options("fd", "poly", False) == ("poly", False)
    assert tf.sampler_options("lid", "rbf", True) == ("linear", True)
    assert tf.sampler_options("nodrop", "rbf", True) == ("linear", False)


def test_a_studys_automatic_name_says_its_settings_and_its_session():
    a = tf.study_name("cora", "semi", "lid", "gcn", 8, 64, 100, 3, "linear", False, "aaaaaa")
    assert a == "cora-semi-lid-gcn-L8-h64-e100-s3-aaaaaa"
    assert tf.study_name("cora", "semi", "lid", "gcn", 8, 64, 100, 3, "linear", False, "bbbbbb") != a
    assert tf.study_name("cora", "semi", "dropedge++", "gcn", 8, 64, 100, 3, "poly", True, "t").endswith(
        "-poly-directed-t")
    names = {tf.study_name("cora", "semi", "lid", "gcn", layers, 64, 100, 3, "linear", False, "t")
             for layers in (4, 8, 16)}
    assert len(names) == 3


def test_the_tuning_form_describes_one_config():
    """The study's base and "Train this"'s base are the same run (built by one function)."""
    config = tf.tuning_config("cora", "semi", "nodrop", 8, 2, "gcn", 64, 100, "rbf", True)
    assert config == TrainConfig(dataset="cora", split="semi", sampler="nodrop", num_layers=8, seed=2,
                                 backbone="gcn", hidden=64, epochs=100)  # no kernel, no direction
    assert config == tf.tuning_config("cora", "semi", "nodrop", 8, 2, "gcn", 64, 100, "rbf", True)
    with pytest.raises(ConfigError):
        tf.tuning_config("cora", "semi", "lid", 8, 2, "gcn", 0, 100, "linear", False)
