"""Schema 3: the backbone ``"appnp*"`` is called ``"appnp_star"`` (a name that is safe in
file names, URLs and SQL); rows of schema 2 that say ``"appnp*"`` are renamed."""
from __future__ import annotations

from dropedge_explorer.training import TrainConfig

VERSION = 3


def upgrade(values: dict) -> TrainConfig:
    """A schema-2 row's config as today's config: :class:`TrainConfig` reads the old name
    as the new one (``models.ALIASES``); re-keying the row (:func:`.upgrade_rows`) stores it."""
    return TrainConfig.from_dict(values)


