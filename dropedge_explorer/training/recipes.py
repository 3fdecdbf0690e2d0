"""Training recipes: the named defaults a run takes for every setting it is not given.

A deep GCN does not train with the settings that suit a 2-layer one. Measured on Cora
(semi), GCN-16, seed 0, NoDrop: with lr 0.01, dropout 0.5 before every convolution,
weight decay 5e-4 and no self-feature term the test accuracy is 23% (chance); with
lr 1e-3, no dropout, no weight decay and the self-feature term ("Loop") on it is 70%.
One setting at a time back to the shallow value: lr 0.01 -> 30%, dropout 0.5 -> 15%,
no Loop -> 55%, weight decay 5e-4 -> 66% (docs/REPRODUCTION.md). So the defaults depend
on the depth, and every run records which recipe filled them (``TrainConfig.recipe``,
part of its key; the ``settings`` column of the bundled run CSVs).

Recipes (:data:`RECIPES`):

* ``"depth"`` (the default) — by depth L: for L <= 4 the usual GCN settings (hidden 128,
  dropout 0.5, lr 0.01, weight decay 5e-4, no Loop, 200 epochs, patience 100); from
  L = 5 on lr 1e-3, dropout 0, weight decay 0, Loop on, hidden 128 up to L = 16 and 64
  beyond (four times cheaper per epoch on a CPU), an epoch budget that grows with depth
  (200 up to L = 8, 300 up to 16, 400 beyond: deep runs were still improving at 300-400
  epochs) and patience half the budget; ResGCN beyond 16 layers also gets batch norm
  (:func:`needs_batch_norm`). APPNP*, whose depth is propagation steps between two weight
  layers, keeps the shallow settings at every depth (:data:`SHALLOW_AT_EVERY_DEPTH`).
* ``"quick"`` — the shallow settings at every depth (the project's defaults before the
  depth recipe; deep GCNs sit at chance with them).
* ``"paper"`` — the paper's best hyperparameters for the dataset, split and backbone
  (:mod:`dropedge_explorer.data.presets`), its depth and keep rates included; tuned for that one
  depth, they may not train at others. One change to the presets: ResGCN and JKNet from
  16 layers on get batch norm (:func:`needs_batch_norm`).
* ``"authors"`` — the authors' scripts (:mod:`dropedge_explorer.training._authors`): the paper's
  presets with the scripts' epoch budgets, no early stopping, their checkpoint rule,
  directed sampling, no batch norm, and the authors' models
  (``dropedge_core.make_authors_model``); Cora and CiteSeer only.

Keep rates (``p_min`` 0.3, ``p_max`` 0.8) are the same in ``"depth"`` and ``"quick"``.

Example:
    >>> recipe_fields("depth", "cora", "semi", "gcn", 16)["lr"]
    0.001
    >>> recipe_fields("quick", "cora", "semi", "gcn", 16)["lr"]
    0.01
"""
from __future__ import annotations

from dropedge_explorer.data import presets
from dropedge_explorer.training import _authors as authors

RECIPES: tuple[str, ...] = ("depth", "quick", "paper", "authors")
DEFAULT_RECIPE = "depth"
#: Settings a recipe fills when a run does not give them (besides ``num_layers`` for
#: ``"paper"``).
RECIPE_FIELDS: tuple[str, ...] = ("p_min", "p_max", "normalization", "hidden", "dropout", "lr",
                                  "weight_decay", "epochs", "patience", "self_loop", "batch_norm",
                                  "alpha", "directed")
#: The training hyperparameters among them (keep rates aside): what a run's settings
#: label names when a run changes them (:func:`settings_label`).
HYPERPARAMETERS: tuple[str, ...] = ("normalization", "hidden", "dropout", "lr", "weight_decay",
                                    "epochs", "patience", "self_loop", "batch_norm", "alpha")
DEFAULT_LAYERS = 2
#: The depth from which the depth recipe switches to its deep settings.
DEEP_FROM = 5

SHALLOW: dict = {"p_min": 0.3, "p_max": 0.8, "normalization": "AN", "hidden": 128, "dropout": 0.5,
                 "lr": 0.01, "weight_decay": 5e-4, "epochs": 200, "patience": 100,
                 "self_loop": False, "batch_norm": False, "alpha": 0.1, "directed": False}


class RecipeError(ValueError):
    """An unknown recipe, or a recipe with no values for a setting (no paper preset)."""


def check_recipe(name: str) -> str:
    """The canonical recipe name; raise :class:`RecipeError` naming the valid ones.

    Args:
        name (str): a recipe name, in any case (``"preset"`` is read as ``"paper"``).

    Returns:
        str: one of :data:`RECIPES`.

    Example:
        >>> check_recipe("Preset")
        'paper'
    """
    key = str(name).strip().lower()
    if key == "preset":
        key = "paper"
    if key not in RECIPES:
        raise RecipeError(f"unknown recipe {name!r}; valid: {', '.join(RECIPES)}")
    return key


def depth_epochs(num_layers: int) -> int:
    """The depth recipe's epoch budget: 200 up to L = 8, 300 up to 16, 400 beyond.

    Args:
        num_layers (int): the depth ``L``.

    Returns:
        int: 200, 300 or 400.

    Example:
        >>> [depth_epochs(n) for n in (8, 9, 16, 17)]
        [200, 300, 300, 400]
    """
    return 200 if num_layers <= 8 else 300 if num_layers <= 16 else 400


#: From this depth on the paper recipe turns batch norm on for ResGCN and JKNet, and
#: beyond it the depth recipe for ResGCN (:func:`needs_batch_norm`).
BATCH_NORM_FROM = 16


def needs_batch_norm(recipe: str, backbone: str, num_layers: int) -> bool:
    """Whether ``recipe`` turns batch norm on for ``backbone`` at ``num_layers`` layers.

    The paper's ResGCN adds ``H^(l)`` after every hidden layer, so without a normalisation
    the activations grow geometrically with depth (the authors' code has one long skip
    instead and does not need it). Measured (DropEdge++, seed 0, training loss of the
    first epoch): the paper's CiteSeer full ResGCN-16 preset (ANS, Loop) 8.5e3 and 18%
    after 40 epochs, with batch norm 46 and 77%; CiteSeer semi ResGCN-64 3e18 (chance) vs
    63 (45% after 40 epochs and rising); Cora semi ResGCN-64 under the depth recipe 5e12
    (32%) vs 29 (50%), while ResGCN-16 under the depth recipe trains without it (68% vs
    61% with it after 60 epochs). JKNet's 64-layer Cora preset (dropout 0.8 before each
    of 64 convolutions) starts at a loss of 2.8e7 (chance) and at 2.2 with batch norm.
    So: ``"paper"`` — ResGCN and JKNet from :data:`BATCH_NORM_FROM` layers on;
    ``"depth"`` — ResGCN beyond :data:`BATCH_NORM_FROM` layers; ``"quick"`` never.

    Args:
        recipe (str): one of :data:`RECIPES`.
        backbone (str): the backbone's canonical name.
        num_layers (int): the depth ``L``.

    Returns:
        bool: whether batch norm is on.
    """
    backbone = str(backbone).strip().lower()
    if recipe == "paper":
        return backbone in ("resgcn", "jknet") and num_layers >= BATCH_NORM_FROM
    if recipe == "depth":
        return backbone == "resgcn" and num_layers > BATCH_NORM_FROM
    return False


#: Backbones whose depth is propagation only (two weight layers at every depth): the depth
#: recipe gives them the shallow settings. APPNP*-64 on Cora (semi, DropEdge++, seed 0,
#: 150 epochs): 84.0% with the shallow settings, 78.7% with the deep ones (lr 1e-3 is slow
#: for two weight layers; paper 84.9).
SHALLOW_AT_EVERY_DEPTH: tuple[str, ...] = ("appnp_star",)


def depth_recipe(num_layers: int, backbone: str = "gcn") -> dict:
    """The depth recipe's settings for a ``backbone`` of ``num_layers`` layers (see the module).

    Args:
        num_layers (int): the depth ``L``.
        backbone (str, optional): the backbone's canonical name. (default: :obj:`"gcn"`)

    Returns:
        dict: every setting of :data:`RECIPE_FIELDS`.
    """
    if num_layers < DEEP_FROM or backbone in SHALLOW_AT_EVERY_DEPTH:
        return dict(SHALLOW)
    epochs = depth_epochs(num_layers)
    return {**SHALLOW, "hidden": 128 if num_layers <= 16 else 64, "dropout": 0.0, "lr": 1e-3,
            "weight_decay": 0.0, "self_loop": True, "epochs": epochs, "patience": epochs // 2,
            "batch_norm": needs_batch_norm("depth", backbone, num_layers)}


def recipe_fields(recipe: str, dataset: str, split: str | None, backbone: str,
                  num_layers: int | None) -> dict:
    """Every setting of :data:`RECIPE_FIELDS` (and ``num_layers``) that ``recipe`` gives a
    run of ``backbone`` on ``dataset``/``split`` at depth ``num_layers`` (``None``: the
    recipe's depth, 2 for ``"depth"``/``"quick"``, the preset's for ``"paper"``).

    Args:
        recipe (str): one of :data:`RECIPES`.
        dataset (str): the dataset.
        split (str, optional): its split (``None``: the dataset's first).
        backbone (str): the backbone.
        num_layers (int, optional): the depth, or ``None`` for the recipe's.

    Returns:
        dict: the settings, ``num_layers`` included.

    Raises:
        RecipeError: unknown recipe, or ``"paper"`` where the paper has no preset.
    """
    recipe = check_recipe(recipe)
    if recipe == "authors":
        try:
            fields = {**SHALLOW, **authors.recipe_fields(dataset, split, backbone)}
        except (authors.AuthorsError, ValueError) as exc:
            raise RecipeError(f"recipe 'authors': {exc}") from None
        if num_layers is not None:
            fields["num_layers"] = int(num_layers)
        return fields
    if recipe == "paper":
        try:
            fields = presets.paper_preset(dataset, split, backbone)
        except presets.PresetError as exc:
            raise RecipeError(f"recipe 'paper': {exc}") from None
        fields = {**SHALLOW, "epochs": 200, "patience": 100, **fields}
        if num_layers is not None:
            fields["num_layers"] = int(num_layers)
        if needs_batch_norm("paper", backbone, fields["num_layers"]):
            fields["batch_norm"] = True
        return fields
    layers = DEFAULT_LAYERS if num_layers is None else int(num_layers)
    base = dict(SHALLOW) if recipe == "quick" else depth_recipe(layers, backbone)
    return {**base, "num_layers": layers}


def settings_label(config) -> str:
    """A run's settings in a few characters, for tables: the recipe's name, plus
    ``+name=value`` for each hyperparameter the run changed (keep rates aside), e.g.
    ``"depth"``, ``"quick+batch_norm=True"``.

    Args:
        config (TrainConfig): the run's settings.

    Returns:
        str: the label.
    """
    try:
        given = recipe_fields(config.recipe, config.dataset, config.split, config.backbone,
                              config.num_layers)
    except RecipeError:
        return str(config.recipe)
    changed = [f"{name}={getattr(config, name):g}" if isinstance(getattr(config, name), float)
               else f"{name}={getattr(config, name)}"
               for name in HYPERPARAMETERS if getattr(config, name) != given[name]]
    return "+".join([config.recipe, *changed])


def parse_settings_label(label: str) -> tuple[str, dict]:
    """The inverse of :func:`settings_label`: ``(recipe, {name: value})`` of a label such as
    ``"quick+batch_norm=True+lr=0.001"``. Values are read as the label wrote them (``True``/
    ``False``, integers, else floats or text); :class:`TrainConfig` validates them.

    Args:
        label (str): a label :func:`settings_label` wrote.

    Returns:
        tuple[str, dict]: the recipe and the changed hyperparameters.

    Example:
        >>> parse_settings_label("quick+batch_norm=True+lr=0.001")
        ('quick', {'batch_norm': True, 'lr': 0.001})

    Raises:
        RecipeError: a part after the recipe is not ``name=value`` of a hyperparameter.
    """
    recipe, *parts = str(label).split("+")
    changed: dict = {}
    for part in parts:
        name, sep, text = part.partition("=")
        if not sep or name not in HYPERPARAMETERS:
            raise RecipeError(f"settings label {label!r}: {part!r} is not name=value of one of "
                              f"{', '.join(HYPERPARAMETERS)}")
        changed[name] = _label_value(text)
    return check_recipe(recipe), changed


def _label_value(text: str):
    if text in ("True", "False"):
        return text == "True"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def from_legacy(values: dict) -> dict:
    """A config dict written before recipes existed (every setting explicit, no
    ``recipe``) with the recipe that then filled its defaults: ``"paper"`` when its
    settings are the paper preset's for its dataset, split and backbone (depth aside:
    the old Depth study used presets at every depth), else ``"quick"`` (the old
    defaults).

    Args:
        values (dict): the old config dict.

    Returns:
        dict: ``values`` with its ``recipe``.
    """
    out = dict(values)
    if "recipe" in out:
        return out
    out["recipe"] = "quick"
    try:
        layers = out.get("num_layers")
        preset = recipe_fields("paper", out["dataset"], out.get("split"), out["backbone"],
                               None if layers is None else int(layers))
    except (RecipeError, KeyError, ValueError, TypeError):
        return out
    # the batch norm rule came after the old presets-at-every-depth runs: not a difference
    deep = needs_batch_norm("paper", out["backbone"], preset["num_layers"])
    ignored = ("epochs", "patience", "num_layers", "directed") + (("batch_norm",) if deep else ())
    if all(out.get(name) == value for name, value in preset.items() if name not in ignored):
        out["recipe"] = "paper"
    return out


def describe(fields: dict) -> str:
    """Settings in a few words (for captions): ``hidden 128 · dropout 0 · lr 0.001 · ...``.

    Args:
        fields (dict): settings of :data:`RECIPE_FIELDS` (missing ones are left out).

    Returns:
        str: the words, joined by `` · ``.

    Example:
        >>> describe(SHALLOW)
        'hidden 128 · dropout 0.5 · lr 0.01 · weight decay 0.0005 · AN · 200 epochs · patience 100'
    """
    out = [f"hidden {fields['hidden']}", f"dropout {fields['dropout']:g}", f"lr {fields['lr']:g}",
           f"weight decay {fields['weight_decay']:g}", f"{fields['normalization']}",
           f"{fields['epochs']} epochs"]
    if fields.get("patience"):
        out.append(f"patience {fields['patience']}")
    if fields.get("self_loop"):
        out.append("self-feature (Loop)")
    if fields.get("batch_norm"):
        out.append("batch norm")
    return " · ".join(out)


__all__ = ["BATCH_NORM_FROM", "DEEP_FROM", "DEFAULT_RECIPE", "HYPERPARAMETERS", "RECIPES", "RECIPE_FIELDS",
           "RecipeError", "SHALLOW", "SHALLOW_AT_EVERY_DEPTH", "check_recipe", "depth_epochs",
           "depth_recipe", "describe", "from_legacy", "needs_batch_norm", "parse_settings_label",
           "recipe_fields", "settings_label"]
