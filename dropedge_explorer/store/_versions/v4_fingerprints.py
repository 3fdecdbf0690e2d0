"""Schema 4: a run carries its fingerprint from training (columns ``masks_fp``, ``init_fp``,
``run_masks_fp``, ``dropout_fp``, ``final_fp``: :data:`~dropedge_explorer.store._schema.FINGERPRINT_COLUMNS`).
Rows of schema 3 were trained before: their config and key are unchanged and their
fingerprint columns stay empty (no code can say now what their training drew)."""
from __future__ import annotations

from dropedge_explorer.training import TrainConfig

VERSION = 4


def upgrade(values: dict) -> TrainConfig:
    """A schema-3 row's config as today's config (the same config: only columns were added)."""
    return TrainConfig.from_dict(values)
