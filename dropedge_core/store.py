"""The results store: one SQLite row per training run (SPEC §2 ``sweep``, §3 "Depth study").

An embedded database (stdlib ``sqlite3``) at ``path`` — default ``$DROPEDGE_RESULTS``, else
``./results/results.sqlite``. A run is keyed by :func:`run_key`, the SHA-256 of its full
:class:`~dropedge_core.training.TrainConfig` (seed included) as canonical JSON, so a sweep
can ask :meth:`ResultStore.has` and skip what is stored (resumable).

Each row has a column per config field (same names: ``dataset``, ``backbone``,
``num_layers``, ``sampler``, ``seed``, ...), the final metrics (``test_acc``,
``best_val_acc``, ``best_epoch``, ``epochs_run``, ``reason``, ``total_time``,
``mean_epoch_time``, ``mean_sample_time``, ``ran_on`` — the device it ran on) and JSON
blobs of the per-epoch curves (``history_json``) and diagnostics (``diagnostics_json``).

Concurrency: WAL journal (readers never block the writer), a busy timeout, and every
write in its own ``BEGIN IMMEDIATE`` transaction, so several processes (a sweep and
the app, or two sweeps) can write at once without losing rows. A connection is opened
per call, so a store object may be shared between threads.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from . import recipes
from .training import RunResult, TrainConfig

TABLE = "runs"
SCHEMA_VERSION = 2  # 2: the recipe field; keys without diag_every/device
_METRIC_COLUMNS: dict[str, str] = {
    "reason": "TEXT", "message": "TEXT", "best_epoch": "INTEGER", "best_val_acc": "REAL",
    "test_acc": "REAL", "epochs_run": "INTEGER", "total_time": "REAL",
    "mean_epoch_time": "REAL", "mean_sample_time": "REAL", "ran_on": "TEXT",
}
_BLOB_COLUMNS = ("config_json", "history_json", "diagnostics_json")


class StoreError(ValueError):
    """A store path or export format that cannot be used."""


def default_path() -> Path:
    """``$DROPEDGE_RESULTS`` or ``./results/results.sqlite``."""
    value = os.environ.get("DROPEDGE_RESULTS", "").strip()
    return Path(value).expanduser() if value else Path("results") / "results.sqlite"


#: Config fields that do not change a run's outcome (how often diagnostics are taken,
#: where it runs): left out of the run key, so equal runs share one key.
NOT_IN_KEY: tuple[str, ...] = ("diag_every", "device")


def canonical_json(config: TrainConfig | dict) -> str:
    """The config as canonical JSON (sorted keys, no spaces)."""
    values = config.to_dict() if isinstance(config, TrainConfig) else TrainConfig.from_dict(config).to_dict()
    return json.dumps(values, sort_keys=True, separators=(",", ":"))


def run_key(config: TrainConfig | dict) -> str:
    """SHA-256 (hex) of the config as canonical JSON, seed and recipe included, without
    :data:`NOT_IN_KEY` (settings that do not change the outcome)."""
    values = config.to_dict() if isinstance(config, TrainConfig) else TrainConfig.from_dict(config).to_dict()
    for name in NOT_IN_KEY:
        values.pop(name, None)
    return hashlib.sha256(json.dumps(values, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


_COLUMN_TYPES = {"int": "INTEGER", "float": "REAL", "bool": "INTEGER"}


def _config_columns() -> dict[str, str]:
    out = {}
    for f in dataclasses.fields(TrainConfig):
        base = str(f.type).split("|")[0].strip()
        out[f.name] = _COLUMN_TYPES.get(base, "TEXT")
    return out


class ResultStore:
    """A SQLite-backed store of :class:`~dropedge_core.training.RunResult` rows.

    Args:
        path: the database file (created with its folder); default :func:`default_path`.
        timeout: seconds a writer waits for a lock held by another process.

    Example:
        >>> store = ResultStore("/tmp/results.sqlite")          # doctest: +SKIP
        >>> store.put(result); store.has(result.config)          # doctest: +SKIP
        True
    """

    def __init__(self, path: str | Path | None = None, timeout: float = 60.0):
        self.path = Path(path).expanduser() if path is not None else default_path()
        self.timeout = float(timeout)
        if self.path.exists() and self.path.is_dir():
            raise StoreError(f"results store path {str(self.path)!r} is a directory, not a file")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the results folder {str(self.path.parent)!r}: "
                             f"{exc.strerror}") from None
        self._columns = {**_config_columns(), **_METRIC_COLUMNS}
        self._init_schema()

    # -- plumbing ---------------------------------------------------------------------
    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        try:
            conn = sqlite3.connect(str(self.path), timeout=self.timeout, isolation_level=None)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open results store {str(self.path)!r}: {exc}") from None
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")
            yield conn
        finally:
            conn.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._connect() as conn:
            conn.execute("BEGIN IMMEDIATE")  # take the write lock now: no upgrade deadlock
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def _init_schema(self) -> None:
        cols = ", ".join(f'"{name}" {kind}' for name, kind in self._columns.items())
        blobs = ", ".join(f"{name} TEXT" for name in _BLOB_COLUMNS)
        for attempt in range(50):  # WAL switch needs a moment without other writers
            try:
                with self._connect() as conn:
                    conn.execute("PRAGMA journal_mode = WAL")  # persistent: set once per file
                with self._transaction() as tx:
                    tx.execute(f"CREATE TABLE IF NOT EXISTS {TABLE} (key TEXT PRIMARY KEY, "
                               f"created_at REAL, schema_version INTEGER, {cols}, {blobs})")
                    have = {row[1] for row in tx.execute(f"PRAGMA table_info({TABLE})")}
                    for name, kind in self._columns.items():  # a newer TrainConfig field
                        if name not in have:
                            tx.execute(f'ALTER TABLE {TABLE} ADD COLUMN "{name}" {kind}')
                    self._migrate(tx)
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or attempt == 49:
                    raise StoreError(f"cannot initialise results store {str(self.path)!r}: {exc}") from None
                time.sleep(0.1)
            except sqlite3.DatabaseError as exc:
                raise StoreError(f"{str(self.path)!r} is not a usable SQLite results store: {exc}") from None

    @staticmethod
    def _migrate(tx: sqlite3.Connection) -> None:
        """Rows of schema 1 (before recipes; keys with ``diag_every``/``device``): name
        the recipe that filled their defaults (:func:`recipes.from_legacy`) and re-key
        them, so they count for the configs that ask for them today."""
        old = tx.execute(f"SELECT key, config_json FROM {TABLE} WHERE COALESCE(schema_version, 1) < ?",
                         (SCHEMA_VERSION,)).fetchall()
        for key, text in old:
            config = TrainConfig.from_dict(recipes.from_legacy(json.loads(text)))
            new_key = run_key(config)
            if new_key != key and tx.execute(f"SELECT 1 FROM {TABLE} WHERE key = ?", (new_key,)).fetchone():
                tx.execute(f"DELETE FROM {TABLE} WHERE key = ?", (key,))  # the same run, stored twice
                continue
            tx.execute(f"UPDATE {TABLE} SET key = ?, recipe = ?, config_json = ?, schema_version = ? "
                       "WHERE key = ?", (new_key, config.recipe, canonical_json(config), SCHEMA_VERSION, key))

    @staticmethod
    def _key(key_or_config: str | TrainConfig | dict) -> str:
        return key_or_config if isinstance(key_or_config, str) else run_key(key_or_config)

    # -- API --------------------------------------------------------------------------
    def has(self, key_or_config: str | TrainConfig | dict) -> bool:
        """Whether a run with this key (or config) is stored."""
        with self._connect() as conn:
            row = conn.execute(f"SELECT 1 FROM {TABLE} WHERE key = ?", (self._key(key_or_config),)).fetchone()
        return row is not None

    def keys(self) -> set[str]:
        """All stored run keys."""
        with self._connect() as conn:
            return {row[0] for row in conn.execute(f"SELECT key FROM {TABLE}")}

    def __len__(self) -> int:
        with self._connect() as conn:
            return int(conn.execute(f"SELECT COUNT(*) FROM {TABLE}").fetchone()[0])

    def put(self, result: RunResult) -> str:
        """Store (or replace) one run, in one transaction; return its key."""
        config = result.config.to_dict()
        summary = result.summary()
        row = {"key": run_key(result.config), "created_at": time.time(),
               "schema_version": SCHEMA_VERSION}
        row.update({name: config[name] for name in _config_columns()})
        row.update({name: summary.get(name) for name in _METRIC_COLUMNS if name != "ran_on"})
        row["ran_on"] = result.device
        row["config_json"] = canonical_json(result.config)
        row["history_json"] = json.dumps(result.history)
        row["diagnostics_json"] = json.dumps(result.diagnostics)
        names = ", ".join(f'"{n}"' for n in row)
        marks = ", ".join("?" for _ in row)
        with self._transaction() as tx:
            tx.execute(f"INSERT OR REPLACE INTO {TABLE} ({names}) VALUES ({marks})", tuple(row.values()))
        return row["key"]

    def get(self, key_or_config: str | TrainConfig | dict) -> dict | None:
        """One run as a dict: the columns, plus ``config`` (dict), ``history`` and
        ``diagnostics`` (lists of event dicts); ``None`` when not stored."""
        with self._connect() as conn:
            conn.row_factory = sqlite3.Row
            row = conn.execute(f"SELECT * FROM {TABLE} WHERE key = ?", (self._key(key_or_config),)).fetchone()
        if row is None:
            return None
        out = dict(row)
        out["config"] = json.loads(out.pop("config_json"))
        out["history"] = json.loads(out.pop("history_json") or "[]")
        out["diagnostics"] = json.loads(out.pop("diagnostics_json") or "[]")
        for name in ("directed", "self_loop", "batch_norm"):
            out[name] = bool(out[name])
        return out

    def delete(self, key_or_config: str | TrainConfig | dict) -> bool:
        """Remove one run; ``True`` if it was there."""
        with self._transaction() as tx:
            cur = tx.execute(f"DELETE FROM {TABLE} WHERE key = ?", (self._key(key_or_config),))
        return cur.rowcount > 0

    def to_frame(self, curves: bool = False):
        """All runs as a pandas ``DataFrame``, one row per run (config columns + metrics).

        With ``curves=True`` the ``history`` and ``diagnostics`` columns hold the decoded
        lists of event dicts.
        """
        import pandas as pd

        names = ["key", "created_at", *self._columns]
        if curves:
            names += ["history_json", "diagnostics_json"]
        quoted = ", ".join(f'"{n}"' for n in names)
        with self._connect() as conn:
            df = pd.read_sql_query(f"SELECT {quoted} FROM {TABLE} ORDER BY created_at", conn)
        df.columns = names
        for name in ("directed", "self_loop", "batch_norm"):
            df[name] = df[name].astype(bool)
        if curves:
            df["history"] = [json.loads(v or "[]") for v in df.pop("history_json")]
            df["diagnostics"] = [json.loads(v or "[]") for v in df.pop("diagnostics_json")]
        return df

    def export(self, path: str | Path) -> Path:
        """Write :meth:`to_frame` to ``.csv`` or ``.parquet`` (by the suffix); return the path."""
        path = Path(path).expanduser()
        suffix = path.suffix.lower()
        if suffix not in (".csv", ".parquet"):
            raise StoreError(f"unknown export format {path.suffix!r} of {str(path)!r}; valid: .csv, .parquet")
        df = self.to_frame()
        path.parent.mkdir(parents=True, exist_ok=True)
        if suffix == ".csv":
            df.to_csv(path, index=False)
        else:
            try:
                df.to_parquet(path, index=False)
            except ImportError:
                raise StoreError("parquet export needs pyarrow (pip install pyarrow); use .csv") from None
        return path

    def __repr__(self) -> str:
        return f"ResultStore({str(self.path)!r})"
