"""One module per schema version of the results store, each upgrading rows of the version
before it (as Optuna's ``storages/_rdb/alembic/versions`` keeps one file per revision).

A version module has ``VERSION`` (the schema it produces) and ``upgrade(values) ->
TrainConfig``: the config a row of the version before means today. :func:`upgrade_rows`
applies them in order inside the store's opening transaction and re-keys each row, so it
counts for the config that asks for it today (a row that becomes a run already stored
is the same run stored twice: it is dropped).

* :mod:`.v2_recipes`: rows written before recipes (keys hashing ``diag_every``/``device``).
* :mod:`.v3_appnp_star`: the backbone ``"appnp*"`` renamed ``"appnp_star"``.
* :mod:`.v4_fingerprints`: the run's fingerprint from training (older rows: empty).
"""
from __future__ import annotations

import json

import sqlalchemy as sa
from dropedge_core.echo import bounded

from dropedge_explorer.store._schema import SCHEMA_VERSION, canonical_json, run_key
from dropedge_explorer.store._versions import v2_recipes, v3_appnp_star, v4_fingerprints

#: The upgrades, oldest first; the last one's ``VERSION`` is :data:`SCHEMA_VERSION`.
VERSIONS = (v2_recipes, v3_appnp_star, v4_fingerprints)
assert VERSIONS[-1].VERSION == SCHEMA_VERSION, "a new schema version needs its module here"


def upgrade_rows(conn: sa.Connection, runs: sa.Table) -> int:
    """Bring every row older than :data:`SCHEMA_VERSION` up to it; return how many rows
    were upgraded (a row counts once per version it passed)."""
    done = 0
    for module in VERSIONS:
        old = conn.execute(sa.select(runs.c.key, runs.c.config_json, runs.c.stream).where(
            sa.func.coalesce(runs.c.schema_version, 1) < module.VERSION)).all()
        for key, text, stream in old:
            _rekey(conn, runs, key, _upgraded(module, key, text), module.VERSION, stream or 1)
        done += len(old)
    return done


class DamagedRow(ValueError):
    """A row an upgrade cannot read (its config is not JSON, or not a config), in one line."""


def _upgraded(module, key: str, text: str | None):
    """``module.upgrade`` of a row's config; a row that cannot be read is named, not a
    bare JSON or config error (the store adds its name and rolls the upgrade back)."""
    try:
        values = json.loads(text)
        if not isinstance(values, dict):
            raise TypeError(f"a JSON {type(values).__name__}, not an object")
        return module.upgrade(values)
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        reason = " ".join(str(exc).split())[:120] or type(exc).__name__
        raise DamagedRow(f"its run {bounded(key, 70)} has a config_json this program cannot read "
                         f"({reason})") from None


def _rekey(conn: sa.Connection, runs: sa.Table, key: str, config, version: int, stream: int) -> None:
    # the row keeps its own stream: an old row re-keyed with today's stream would pass
    # for a run today's sampler draws
    new_key = run_key(config, stream=stream)
    if new_key != key and conn.execute(sa.select(runs.c.key).where(runs.c.key == new_key)).first():
        conn.execute(sa.delete(runs).where(runs.c.key == key))  # the same run, stored twice
        return
    conn.execute(sa.update(runs).where(runs.c.key == key).values(
        key=new_key, recipe=config.recipe, backbone=config.backbone,
        config_json=canonical_json(config), schema_version=version))


