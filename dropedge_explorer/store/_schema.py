"""The results store's schema: the ``runs`` and ``claims`` tables, the run key, and the
columns a newer :class:`~dropedge_explorer.training.config.TrainConfig` adds.

A run is keyed by :func:`run_key`, the SHA-256 of its full config (seed included) as
canonical JSON, so a sweep can ask :meth:`ResultStore.has` and skip what is stored.
Each row of ``runs`` has a column per config field (same names), the final metrics, JSON
blobs of the per-epoch curves and diagnostics, and the :data:`SCHEMA_VERSION` it was
written with; rows of an older version are upgraded on open (:mod:`.versions`, one
module per version, as Optuna's ``storages/_rdb/alembic/versions`` keeps them).
"""
from __future__ import annotations

import dataclasses
import hashlib
import json

import sqlalchemy as sa
from dropedge_core import stream_version

from dropedge_explorer import databases
from dropedge_explorer.training import TrainConfig

TABLE = "runs"
CLAIMS = "claims"
#: The tables an open creates when missing (``CREATE`` on the schema, on a server).
TABLES = (TABLE, CLAIMS)
#: The version rows are written with; :mod:`.versions` holds how each older one is upgraded.
SCHEMA_VERSION = 4
#: Columns every version of this store has had in ``runs``: how it tells its own table
#: from another program's table of the same name (:func:`dropedge_explorer.databases.inspect`).
MARKER_COLUMNS = databases.RESULTS_MARKERS
METRIC_COLUMNS: dict[str, type] = {
    "reason": sa.Text, "message": sa.Text, "best_epoch": sa.BigInteger, "best_val_acc": sa.Float,
    "test_acc": sa.Float, "epochs_run": sa.BigInteger, "total_time": sa.Float,
    "mean_epoch_time": sa.Float, "mean_sample_time": sa.Float, "ran_on": sa.Text,
    # the sampler's stream version the run drew from (dropedge_core.stream_version; rows written
    # before the column existed read as 1, the version their keys hash)
    "stream": sa.BigInteger,
}
#: The run's fingerprint as it trained (:class:`~dropedge_explorer.training._fingerprint.TrainingPrint`,
#: 16 hex digits each; schema 4): rows trained before it have them empty (``NULL``).
FINGERPRINT_COLUMNS: dict[str, type] = {name: sa.Text for name in
                                        ("masks_fp", "init_fp", "run_masks_fp", "dropout_fp", "final_fp")}
BLOB_COLUMNS = ("config_json", "history_json", "diagnostics_json")
BOOL_COLUMNS = ("directed", "self_loop", "batch_norm")
#: Config fields that do not change a run's outcome (how often diagnostics are taken,
#: where it runs): left out of the run key, so equal runs share one key.
NOT_IN_KEY: tuple[str, ...] = ("diag_every", "device")
_COLUMN_TYPES = {"int": sa.BigInteger, "float": sa.Float, "bool": sa.Integer}


def canonical_json(config: TrainConfig | dict) -> str:
    """The config as canonical JSON (sorted keys, no spaces), every field filled.

    Args:
        config (TrainConfig or dict): the run's config (or its dict, validated here).

    Returns:
        str: the JSON text.

    Example:
        >>> canonical_json({"dataset": "karate", "num_layers": 2})[:40]
        '{"alpha":0.1,"backbone":"gcn","batch_nor'
    """
    values = config.to_dict() if isinstance(config, TrainConfig) else TrainConfig.from_dict(config).to_dict()
    return json.dumps(values, sort_keys=True, separators=(",", ":"))


def run_key(config: TrainConfig | dict, stream: int | None = None) -> str:
    """SHA-256 (hex) of the config as canonical JSON, seed and recipe included, without
    :data:`NOT_IN_KEY` (settings that do not change the outcome), and of the sampler's random
    stream version when it is above 1.

    Args:
        config (TrainConfig or dict): the run's config (or its dict).
        stream (int, optional): the stream version the run drew its masks from. A run of an
            older stream has another key than today's run of the same config, so it never
            counts for a config asked for today; version 1 adds nothing (the keys written
            before streams were versioned are version 1's). (default: :obj:`None`: the
            version the code draws today, :func:`dropedge_core.stream_version`)

    Returns:
        str: 64 hex digits.

    Example:
        >>> key = run_key({"dataset": "karate", "num_layers": 2})
        >>> len(key), key == run_key({"dataset": "karate", "num_layers": 2, "device": "cpu"})
        (64, True)
        >>> key == run_key({"dataset": "karate", "num_layers": 2, "seed": 1})
        False
    """
    values = config.to_dict() if isinstance(config, TrainConfig) else TrainConfig.from_dict(config).to_dict()
    for name in NOT_IN_KEY:
        values.pop(name, None)
    stream = stream_version(values["sampler"]) if stream is None else int(stream)
    if stream != 1:
        values["stream"] = stream
    return hashlib.sha256(json.dumps(values, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def config_columns() -> dict[str, type]:
    """One column per :class:`TrainConfig` field, typed by the field's annotation."""
    out = {}
    for f in dataclasses.fields(TrainConfig):
        base = str(f.type).split("|")[0].strip()
        out[f.name] = _COLUMN_TYPES.get(base, sa.Text)
    return out


def value_columns() -> dict[str, type]:
    """The config, metric and fingerprint columns of ``runs`` (what a row holds besides key
    and blobs)."""
    return {**config_columns(), **METRIC_COLUMNS, **FINGERPRINT_COLUMNS}


def tables() -> tuple[sa.MetaData, sa.Table, sa.Table]:
    """The metadata, ``runs`` and ``claims`` (run key, owner, lease expiry)."""
    meta = sa.MetaData()
    columns = [sa.Column("key", sa.Text, primary_key=True), sa.Column("created_at", sa.Float),
               sa.Column("schema_version", sa.Integer)]
    columns += [sa.Column(name, kind) for name, kind in value_columns().items()]
    columns += [sa.Column(name, sa.Text) for name in BLOB_COLUMNS]
    runs = sa.Table(TABLE, meta, *columns)
    claims = sa.Table(CLAIMS, meta, sa.Column("key", sa.Text, primary_key=True),
                      sa.Column("owner", sa.Text, nullable=False), sa.Column("claimed_at", sa.Float),
                      sa.Column("expires_at", sa.Float, nullable=False))
    return meta, runs, claims


def create(conn: sa.Connection, meta: sa.MetaData) -> None:
    """Create the tables that are missing, and a column for each config field added since
    the table was made (a new field needs no schema version: its rows are read as before).

    Args:
        conn (sqlalchemy.Connection): a connection inside a write transaction.
        meta (sqlalchemy.MetaData): the tables' metadata (:func:`tables`).
    """
    meta.create_all(conn, checkfirst=True)
    have = {c["name"] for c in sa.inspect(conn).get_columns(TABLE)}
    quote = conn.dialect.identifier_preparer.quote
    for name, kind in value_columns().items():
        if name not in have:
            conn.exec_driver_sql(f"ALTER TABLE {TABLE} ADD COLUMN {quote(name)} "
                                 f"{kind().compile(dialect=conn.dialect)}")


