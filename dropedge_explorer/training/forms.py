"""The decisions of the Live training and Tuning forms, as pure functions.

What a page would otherwise decide inline, where only a whole-app test reached it: which
recipe fills the form (and why the paper preset falls back to the depth recipe), which
point (the sidebar's or a tuned one) a run trains, the settings a run is built from, a
study's automatic name, and the one :class:`TrainConfig` a tuning form describes. Nothing
here imports Streamlit: the pages pass the widgets' values in.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from dropedge_core import samplers

from dropedge_explorer.data import presets
from dropedge_explorer.training import UPLOAD_DATASET, TrainConfig, recipes

#: The point a tuned or linked run brings, used instead of the sidebar's.
OVERRIDE_KEYS = ("sampler", "num_layers", "p_min", "p_max", "seed")
#: The Live training form's hyperparameter modes and the recipe each names (custom: none).
MODES = ["depth recipe", "quick", "paper preset", "custom"]
MODE_RECIPES = {"depth recipe": "depth", "quick": "quick", "paper preset": "paper"}
#: Where a recipe has no rule for an uploaded graph, its settings are the built-in karate's.
UPLOAD_STAND_IN = "karate"

__all__ = ["MODES", "MODE_RECIPES", "OVERRIDE_KEYS", "RecipeChoice", "UPLOAD_STAND_IN", "choose_recipe",
           "recipe_widget_fields", "run_point", "run_values", "sampler_options", "study_name",
           "tuning_config"]


def run_point(sidebar: Mapping, override: Mapping | None) -> dict:
    """The point a Live run trains: the sidebar's sampler, layers, keep rates and seed,
    each replaced by ``override``'s (a tuned point, a linked run) where it has one.

    Args:
        sidebar (Mapping): the sidebar's values (every key of :data:`OVERRIDE_KEYS`).
        override (Mapping, optional): a tuned or linked point (:obj:`None`: none); keys
            outside :data:`OVERRIDE_KEYS` are ignored.

    Example:
        >>> run_point({"sampler": "dropedge", "num_layers": 8, "p_min": 0.3, "p_max": 0.8, "seed": 0},
        ...           {"p_min": 0.123, "seed": 4, "source": "trial #3", "hidden": 7})
        {'sampler': 'dropedge', 'num_layers': 8, 'p_min': 0.123, 'p_max': 0.8, 'seed': 4}
    """
    point = {k: sidebar[k] for k in OVERRIDE_KEYS}
    point.update({k: override[k] for k in OVERRIDE_KEYS if k in (override or {})})
    return point


@dataclass(frozen=True)
class RecipeChoice:
    """The recipe a form mode comes to: ``recipe`` (``None``: custom values), the paper's
    ``preset`` when one applies, and ``fallback``, why a paper preset fell back to the
    depth recipe (``None``: it did not).

    Args:
        recipe (str, optional): the recipe's name (:obj:`None`: custom values).
        preset (dict, optional): the paper preset's fields. (default: :obj:`None`)
        fallback (str, optional): why a paper preset fell back. (default: :obj:`None`)
    """

    recipe: str | None
    preset: dict | None = None
    fallback: str | None = None


def choose_recipe(mode: str, dataset: str, split: str | None, backbone: str) -> RecipeChoice:
    """The recipe of the form mode ``mode`` on ``dataset``/``split``/``backbone``: the
    paper preset where the paper has one, else the depth recipe with the reason.

    Args:
        mode (str): the form's mode (:data:`MODES`).
        dataset (str): the dataset (an upload: :data:`UPLOAD_DATASET`).
        split (str, optional): its split.
        backbone (str): the backbone.

    Example:
        >>> choose_recipe("quick", "cora", "semi", "gcn")
        RecipeChoice(recipe='quick', preset=None, fallback=None)
        >>> print(choose_recipe("paper preset", UPLOAD_DATASET, "per-class", "gcn").fallback)
        No paper preset for your own graph: the paper's presets are per dataset.
    """
    recipe = MODE_RECIPES.get(mode)
    if recipe != "paper":
        return RecipeChoice(recipe)
    if dataset == UPLOAD_DATASET:
        return RecipeChoice("depth", fallback="No paper preset for your own graph: the paper's "
                                              "presets are per dataset.")
    try:
        return RecipeChoice("paper", preset=presets.paper_preset(dataset, split, backbone))
    except presets.PresetError as exc:
        return RecipeChoice("depth", fallback=f"No paper preset here — {exc}.")


def recipe_widget_fields(recipe: str, dataset: str, split: str | None, backbone: str,
                         num_layers: int) -> dict:
    """The form fields ``recipe`` gives at ``num_layers`` (the backbone and the
    diagnostics' interval stay the form's own); an upload takes karate's settings.

    Args:
        recipe (str): the recipe's name.
        dataset (str): the dataset (an upload: :data:`UPLOAD_DATASET`).
        split (str, optional): its split.
        backbone (str): the backbone.
        num_layers (int): the depth the recipe is read at.
    """
    if dataset == UPLOAD_DATASET:
        dataset, split = UPLOAD_STAND_IN, None
    fields = recipes.recipe_fields(recipe, dataset, split, backbone, num_layers)
    return {k: v for k, v in fields.items() if k not in ("backbone", "diag_every")}


def sampler_options(sampler: str, kernel: str, directed: bool) -> tuple[str, bool]:
    """The kernel and direction a run of ``sampler`` uses: a kernel only for the weighted
    samplers (else ``"linear"``), directed sampling only for a sampler that drops.

    Args:
        sampler (str): the sampler.
        kernel (str): the form's kernel.
        directed (bool): the form's "directed" switch.

    Example:
        >>> sampler_options("dropedge", "rbf", True), sampler_options("nodrop", "rbf", True)
        (('linear', True), ('linear', False))
    """
    weighted = samplers.NAMED[sampler][1] == "kernel"
    return (kernel if weighted else "linear"), bool(directed) and sampler != "nodrop"


def run_values(hyperparameters: Mapping, dataset: str, split: str | None, backbone: str,
               point: Mapping, choice: RecipeChoice) -> dict:
    """The fields of a Live run's :class:`TrainConfig`: the form's hyperparameters, the
    data, the point (:func:`run_point`), then the paper preset's own fields over all of
    them; ``recipe`` is the recipe it came from (custom values are recorded against the
    depth recipe).

    Args:
        hyperparameters (Mapping): the form's hyperparameter fields.
        dataset (str): the dataset.
        split (str, optional): its split.
        backbone (str): the backbone.
        point (Mapping): the run's point (:func:`run_point`).
        choice (RecipeChoice): the form's recipe (:func:`choose_recipe`).
    """
    values = dict(hyperparameters) | {"dataset": dataset, "split": split, "backbone": backbone}
    values |= dict(point) | (choice.preset or {})
    values["recipe"] = choice.recipe or "depth"
    return values


def study_name(data_id: str, split: str, sampler: str, backbone: str, layers: int, hidden: int,
               epochs: int, seed: int, kernel: str, directed: bool, token: str) -> str:
    """A tuning study's automatic name: its settings, then the browser session's ``token``
    (two sessions with the same settings get their own studies in one storage).

    Args:
        data_id (str): the graph's id (a dataset's name, an upload's content id).
        split (str): its split.
        sampler (str): the sampler.
        backbone (str): the backbone.
        layers (int): the depth.
        hidden (int): the hidden width.
        epochs (int): the epochs per trial.
        seed (int): the seed.
        kernel (str): the kernel (``"linear"`` is left out of the name).
        directed (bool): directed sampling (named only when on).
        token (str): the browser session's token.

    Example:
        >>> study_name("cora", "semi", "dropedge++", "gcn", 8, 64, 100, 0, "rbf", True, "a1b2c3")
        'cora-semi-dropedge++-gcn-L8-h64-e100-s0-rbf-directed-a1b2c3'
        >>> study_name("karate", "semi", "nodrop", "gcn", 2, 16, 5, 1, "linear", False, "t")
        'karate-semi-nodrop-gcn-L2-h16-e5-s1-t'
    """
    return (f"{data_id}-{split}-{sampler}-{backbone}-L{layers}-h{hidden}-e{epochs}-s{seed}"
            + ("" if kernel == "linear" else f"-{kernel}") + ("-directed" if directed else "")
            + f"-{token}")


def tuning_config(dataset: str, split: str | None, sampler: str, num_layers: int, seed: int,
                  backbone: str, hidden: int, epochs: int, kernel: str, directed: bool) -> TrainConfig:
    """The run a tuning form describes (the study's base; "Train this" builds on it when
    the study is not this session's). Raises :class:`~dropedge_explorer.training.ConfigError`.

    Args:
        dataset (str): the dataset.
        split (str, optional): its split.
        sampler (str): the sampler.
        num_layers (int): the depth.
        seed (int): the seed.
        backbone (str): the backbone.
        hidden (int): the hidden width.
        epochs (int): the epochs per trial.
        kernel (str): the form's kernel (:func:`sampler_options` decides the run's).
        directed (bool): the form's "directed" switch (likewise).
    """
    kernel, directed = sampler_options(sampler, kernel, directed)
    return TrainConfig(dataset=dataset, split=split, backbone=backbone, num_layers=num_layers,
                       sampler=sampler, hidden=int(hidden), epochs=int(epochs), seed=seed, kernel=kernel,
                       directed=directed)
