"""Schema 2: recipes. Rows of schema 1 were written before recipes existed: every setting
explicit, no ``recipe``, and keys that hashed ``diag_every`` and ``device``. Each gets
the recipe that then filled its defaults (:func:`recipes.from_legacy`)."""
from __future__ import annotations

from dropedge_explorer.training import TrainConfig, recipes

VERSION = 2


def upgrade(values: dict) -> TrainConfig:
    """A schema-1 row's config as today's config."""
    return TrainConfig.from_dict(recipes.from_legacy(values))


