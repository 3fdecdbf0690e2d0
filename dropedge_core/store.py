"""The results store: one row per training run, in
an embedded SQLite file or on a database server, through SQLAlchemy.

Where: ``path`` — default ``$DROPEDGE_RESULTS``, else ``./results/results.sqlite``. A file
path (or ``sqlite:///path``) is an embedded SQLite database, the default for one machine;
a ``postgresql://user[:password]@host[:port]/database`` URL puts the store on a server that
sweep workers on several machines and the app share (:mod:`dropedge_core.databases`
parses it; a missing driver or a refusing server is one line). Same tables either way.

A run is keyed by :func:`run_key`, the SHA-256 of its full
:class:`~dropedge_core.training.config.TrainConfig` (seed included) as canonical JSON, so a sweep
can ask :meth:`ResultStore.has` and skip what is stored (resumable).

Each row of ``runs`` has a column per config field (same names: ``dataset``, ``backbone``,
``num_layers``, ``sampler``, ``seed``, ...), the final metrics (``test_acc``,
``best_val_acc``, ``best_epoch``, ``epochs_run``, ``reason``, ``total_time``,
``mean_epoch_time``, ``mean_sample_time``, ``ran_on`` — the device it ran on), JSON blobs of
the per-epoch curves (``history_json``) and diagnostics (``diagnostics_json``), and the
``schema_version`` it was written with (:data:`SCHEMA_VERSION`; older rows are migrated
on open). Before creating or altering anything, the store recognises its own tables: a
database holding any other table, or a ``runs`` table without this store's columns (another
program's), or rows of a newer schema, is refused in one line and left untouched.

Claims (``claims`` table: run key, owner, lease expiry): sweep workers claim a run before
training it (:meth:`ResultStore.claim`, atomic: SQLite ``BEGIN IMMEDIATE``, PostgreSQL
``INSERT ... ON CONFLICT DO UPDATE ... WHERE expired``), renew the lease while training
(:meth:`ResultStore.renew`) and drop the claim in the transaction that stores the run, so
N workers split a grid and no run is trained twice; a claim whose worker died expires and
is taken over (:mod:`dropedge_core.claims` runs that loop).

Concurrency on SQLite: WAL journal (readers never block the writer), a busy timeout, and
every write in its own ``BEGIN IMMEDIATE`` transaction, so several processes (a sweep and
the app, or two sweeps) can write at once without losing rows. A connection is opened per
call (SQLite) or taken from a small pool (server), so a store object may be shared
between threads.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.pool import NullPool

from dropedge_core import databases, paths
from dropedge_core.training import RunResult, TrainConfig, recipes

TABLE = "runs"
CLAIMS = "claims"
SCHEMA_VERSION = 3  # 2: the recipe field; keys without diag_every/device. 3: backbone "appnp_star"
#: Columns every version of this store has had in ``runs``: how it tells its own table
#: from another program's table of the same name.
MARKER_COLUMNS = ("key", "created_at", "schema_version", "config_json", "history_json", "diagnostics_json")
_METRIC_COLUMNS: dict[str, type] = {
    "reason": sa.Text, "message": sa.Text, "best_epoch": sa.BigInteger, "best_val_acc": sa.Float,
    "test_acc": sa.Float, "epochs_run": sa.BigInteger, "total_time": sa.Float,
    "mean_epoch_time": sa.Float, "mean_sample_time": sa.Float, "ran_on": sa.Text,
}
_BLOB_COLUMNS = ("config_json", "history_json", "diagnostics_json")
_BOOL_COLUMNS = ("directed", "self_loop", "batch_norm")
_PG_INIT_LOCK = 0x64726F70  # advisory lock id ("drop"): one worker creates the tables at a time


class StoreError(ValueError):
    """A store location, database or export format that cannot be used (one line)."""


def default_path() -> Path | str:
    """The default store (:func:`dropedge_core.paths.results_store`)."""
    return paths.results_store()


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


_COLUMN_TYPES = {"int": sa.BigInteger, "float": sa.Float, "bool": sa.Integer}


def _config_columns() -> dict[str, type]:
    out = {}
    for f in dataclasses.fields(TrainConfig):
        base = str(f.type).split("|")[0].strip()
        out[f.name] = _COLUMN_TYPES.get(base, sa.Text)
    return out


def _tables() -> tuple[sa.MetaData, sa.Table, sa.Table]:
    meta = sa.MetaData()
    columns = [sa.Column("key", sa.Text, primary_key=True), sa.Column("created_at", sa.Float),
               sa.Column("schema_version", sa.Integer)]
    columns += [sa.Column(name, kind) for name, kind in {**_config_columns(), **_METRIC_COLUMNS}.items()]
    columns += [sa.Column(name, sa.Text) for name in _BLOB_COLUMNS]
    runs = sa.Table(TABLE, meta, *columns)
    claims = sa.Table(CLAIMS, meta, sa.Column("key", sa.Text, primary_key=True),
                      sa.Column("owner", sa.Text, nullable=False), sa.Column("claimed_at", sa.Float),
                      sa.Column("expires_at", sa.Float, nullable=False))
    return meta, runs, claims


def _is_sqlite(path: Path) -> bool:
    """Whether the file begins with SQLite's header."""
    try:
        with open(path, "rb") as fh:
            return fh.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def _sqlite_engine(path: Path, timeout: float) -> sa.Engine:
    """A SQLite engine that opens a connection per use and starts every transaction
    itself: ``BEGIN IMMEDIATE`` for writes (take the write lock at once: no lock-upgrade
    deadlock between two writers), a deferred ``BEGIN`` for reads."""
    def connect() -> sqlite3.Connection:
        conn = sqlite3.connect(str(path), timeout=timeout, isolation_level=None, check_same_thread=False)
        conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
        return conn

    engine = sa.create_engine("sqlite://", creator=connect, poolclass=NullPool)

    @sa.event.listens_for(engine, "begin")
    def _begin(conn: sa.Connection) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("write") else "BEGIN")

    return engine


class ResultStore:
    """A store of :class:`~dropedge_core.training.config.RunResult` rows, in a SQLite file or on a
    PostgreSQL server.

    Args:
        path: a database file (created with its folder), ``sqlite:///file``, or
            ``postgresql://user[:password]@host[:port]/database``; default
            :func:`default_path`.
        timeout: seconds a SQLite writer waits for a lock held by another process.

    Raises:
        StoreError: the location cannot be used (a directory, an unknown scheme, a missing
            driver, a refusing server), or it holds another program's tables, a damaged
            file or rows of a newer schema; nothing is written then.

    Example (the second needs a PostgreSQL server)::

        store = ResultStore("results/results.sqlite")
        store.put(result); store.has(result.config)   # True
        store = ResultStore("postgresql://me@db.lab/dropedge")
    """

    def __init__(self, path: str | Path | None = None, timeout: float = 60.0):
        target = default_path() if path is None else path
        self.timeout = float(timeout)
        self._meta, self._runs, self._claims = _tables()
        self._columns = {**_config_columns(), **_METRIC_COLUMNS}
        try:
            file = databases.sqlite_path(target)
            if file is None:
                url = databases.server_url(str(target), allowed=("postgresql",))
        except databases.DatabaseError as exc:
            raise StoreError(str(exc)) from None
        if file is not None:
            self.path: Path | str = file
            self.url = f"sqlite:///{file}"
            self.is_server = False
            if file.exists() and file.is_dir():
                raise StoreError(f"results store path {str(file)!r} is a directory, not a file")
            if file.exists() and not file.is_file():
                raise StoreError(f"results store path {str(file)!r} is not a regular file")
            if file.exists() and file.stat().st_size and not _is_sqlite(file):  # SQLite would take a
                raise StoreError(f"{str(file)!r} is not a usable SQLite results store (not a SQLite "  # tiny
                                 "database file); nothing was changed")  # file for an empty database
            try:
                file.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create the results folder {str(file.parent)!r}: "
                                 f"{exc.strerror}") from None
            self._engine = _sqlite_engine(file, self.timeout)
        else:
            self.url = databases.display(url)
            self.path = self.url
            self.is_server = True
            self._engine = databases.server_engine(url)
        self._init_schema()

    # -- plumbing ---------------------------------------------------------------------
    @property
    def _where(self) -> str:
        return str(self.path)

    def _message(self, exc: BaseException) -> str:
        line = databases.error_line(exc)
        if self.is_server and isinstance(exc, sa.exc.OperationalError):
            return f"cannot use the results store {self._where!r}: {line}"
        if not self.is_server and re.search(r"malformed|not a database|file is encrypted", line):
            return (f"{self._where!r} is not a usable SQLite results store ({line}): it is damaged "
                    "or not a database; move it away or restore a copy")
        return f"results store {self._where!r}: {line}"

    @contextmanager
    def _tx(self, write: bool = False) -> Iterator[sa.Connection]:
        """One transaction; a database error becomes one :class:`StoreError` line."""
        try:
            with self._engine.connect() as conn:
                if write:
                    conn.execution_options(write=True)
                with conn.begin():
                    yield conn
        except SQLAlchemyError as exc:
            raise StoreError(self._message(exc)) from None
        except sqlite3.Error as exc:
            raise StoreError(self._message(exc)) from None

    def _insert(self, table: sa.Table):
        """The dialect's INSERT (with ``on_conflict_do_update``)."""
        if self.is_server:
            from sqlalchemy.dialects.postgresql import insert
        else:
            from sqlalchemy.dialects.sqlite import insert
        return insert(table)

    def _now(self, conn: sa.Connection) -> float:
        """Seconds since the epoch, on the server's clock when there is a server (workers on
        several machines compare leases on one clock)."""
        if self.is_server:
            return float(conn.execute(sa.text("SELECT EXTRACT(EPOCH FROM clock_timestamp())")).scalar())
        return time.time()

    def _check_ours(self, conn: sa.Connection) -> None:
        """Refuse (one line, before anything is written) a database that is not this store:
        other tables, a ``runs`` table without this store's columns, rows of a newer schema."""
        inspector = sa.inspect(conn)
        tables = set(inspector.get_table_names())
        foreign = sorted(tables - {TABLE, CLAIMS})
        if foreign:
            shown = ", ".join(foreign[:6]) + (", ..." if len(foreign) > 6 else "")
            raise StoreError(f"{self._where!r} is not a DropEdge results store: it holds other tables "
                             f"({shown}); nothing was changed. Give a new file or an empty database")
        if TABLE in tables:
            have = {c["name"] for c in inspector.get_columns(TABLE)}
            lacking = [name for name in MARKER_COLUMNS if name not in have]
            if lacking:
                raise StoreError(f"{self._where!r} is not a DropEdge results store: its {TABLE!r} table "
                                 f"lacks {', '.join(lacking)} (another program's table); nothing was changed")
            newest = conn.execute(sa.select(sa.func.max(self._runs.c.schema_version))).scalar()
            if newest is not None and int(newest) > SCHEMA_VERSION:
                raise StoreError(f"{self._where!r} was written by a newer version of this program "
                                 f"(schema {int(newest)}; this one reads up to {SCHEMA_VERSION}); "
                                 "nothing was changed")
        if CLAIMS in tables:
            have = {c["name"] for c in inspector.get_columns(CLAIMS)}
            if not {"key", "owner", "expires_at"} <= have:
                raise StoreError(f"{self._where!r} is not a DropEdge results store: its {CLAIMS!r} table "
                                 "is another program's; nothing was changed")

    def _init_schema(self) -> None:
        for attempt in range(50):
            try:
                with self._tx(write=True) as conn:
                    if self.is_server:  # concurrent CREATE TABLEs collide in PostgreSQL's catalog
                        conn.execute(sa.text("SELECT pg_advisory_xact_lock(:id)"), {"id": _PG_INIT_LOCK})
                    self._check_ours(conn)
                    self._meta.create_all(conn, checkfirst=True)
                    have = {c["name"] for c in sa.inspect(conn).get_columns(TABLE)}
                    quote = conn.dialect.identifier_preparer.quote
                    for name, kind in self._columns.items():  # a newer TrainConfig field
                        if name not in have:
                            conn.exec_driver_sql(f"ALTER TABLE {TABLE} ADD COLUMN {quote(name)} "
                                                 f"{kind().compile(dialect=conn.dialect)}")
                    self._migrate(conn)
                break
            except StoreError as exc:
                if "locked" not in str(exc) or attempt == 49:
                    raise
                time.sleep(0.1)
        if not self.is_server:
            self._wal()

    def _wal(self) -> None:
        """WAL journal (persistent: set once per file); the switch needs a moment without
        other writers."""
        for attempt in range(50):
            try:
                with self._engine.connect() as conn:
                    raw = conn.connection.dbapi_connection
                    if raw.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                        raw.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or attempt == 49:
                    raise StoreError(f"cannot initialise results store {self._where!r}: {exc}") from None
                time.sleep(0.1)
            except sqlite3.Error as exc:
                raise StoreError(self._message(exc)) from None

    def _migrate(self, conn: sa.Connection) -> None:
        """Rows of schema 1 (before recipes; keys with ``diag_every``/``device``): name
        the recipe that filled their defaults (:func:`recipes.from_legacy`); rows of
        schema 1 and 2 with backbone ``"appnp*"``: ``"appnp_star"`` (what
        :class:`TrainConfig` makes of it). Both re-keyed, so they count for the configs that
        ask for them today."""
        runs = self._runs
        old = conn.execute(sa.select(runs.c.key, runs.c.config_json).where(
            sa.func.coalesce(runs.c.schema_version, 1) < SCHEMA_VERSION)).all()
        for key, text in old:
            config = TrainConfig.from_dict(recipes.from_legacy(json.loads(text)))
            new_key = run_key(config)
            if new_key != key and conn.execute(sa.select(runs.c.key).where(runs.c.key == new_key)).first():
                conn.execute(sa.delete(runs).where(runs.c.key == key))  # the same run, stored twice
                continue
            conn.execute(sa.update(runs).where(runs.c.key == key).values(
                key=new_key, recipe=config.recipe, backbone=config.backbone,
                config_json=canonical_json(config), schema_version=SCHEMA_VERSION))

    @staticmethod
    def _key(key_or_config: str | TrainConfig | dict) -> str:
        return key_or_config if isinstance(key_or_config, str) else run_key(key_or_config)

    # -- API --------------------------------------------------------------------------
    def has(self, key_or_config: str | TrainConfig | dict) -> bool:
        """Whether a run with this key (or config) is stored."""
        with self._tx() as conn:
            row = conn.execute(sa.select(self._runs.c.key).where(
                self._runs.c.key == self._key(key_or_config))).first()
        return row is not None

    def keys(self) -> set[str]:
        """All stored run keys."""
        with self._tx() as conn:
            return set(conn.execute(sa.select(self._runs.c.key)).scalars())

    def __len__(self) -> int:
        with self._tx() as conn:
            return int(conn.execute(sa.select(sa.func.count()).select_from(self._runs)).scalar())

    def put(self, result: RunResult) -> str:
        """Store (or replace) one run and drop its claim, in one transaction; return its key."""
        config = result.config.to_dict()
        summary = result.summary()
        row = {"key": run_key(result.config), "created_at": time.time(),
               "schema_version": SCHEMA_VERSION}
        row.update({name: config[name] for name in _config_columns()})
        row.update({name: int(row[name]) for name in _BOOL_COLUMNS})
        row.update({name: summary.get(name) for name in _METRIC_COLUMNS if name != "ran_on"})
        row["ran_on"] = result.device
        row["config_json"] = canonical_json(result.config)
        row["history_json"] = json.dumps(result.history)
        row["diagnostics_json"] = json.dumps(result.diagnostics)
        insert = self._insert(self._runs).values(**row)
        upsert = insert.on_conflict_do_update(
            index_elements=[self._runs.c.key], set_={n: insert.excluded[n] for n in row if n != "key"})
        with self._tx(write=True) as conn:
            conn.execute(upsert)
            conn.execute(sa.delete(self._claims).where(self._claims.c.key == row["key"]))
        return row["key"]

    def get(self, key_or_config: str | TrainConfig | dict) -> dict | None:
        """One run as a dict: the columns, plus ``config`` (dict), ``history`` and
        ``diagnostics`` (lists of event dicts); ``None`` when not stored."""
        with self._tx() as conn:
            row = conn.execute(sa.select(self._runs).where(
                self._runs.c.key == self._key(key_or_config))).first()
        if row is None:
            return None
        out = dict(row._mapping)
        out["config"] = json.loads(out.pop("config_json"))
        out["history"] = json.loads(out.pop("history_json") or "[]")
        out["diagnostics"] = json.loads(out.pop("diagnostics_json") or "[]")
        for name in _BOOL_COLUMNS:
            out[name] = bool(out[name])
        return out

    def delete(self, key_or_config: str | TrainConfig | dict) -> bool:
        """Remove one run (and any claim on it); ``True`` if it was there."""
        key = self._key(key_or_config)
        with self._tx(write=True) as conn:
            gone = conn.execute(sa.delete(self._runs).where(self._runs.c.key == key)).rowcount
            conn.execute(sa.delete(self._claims).where(self._claims.c.key == key))
        return gone > 0

    def to_frame(self, curves: bool = False):
        """All runs as a pandas ``DataFrame``, one row per run (config columns + metrics).

        With ``curves=True`` the ``history`` and ``diagnostics`` columns hold the decoded
        lists of event dicts.
        """
        import pandas as pd

        names = ["key", "created_at", *self._columns]
        if curves:
            names += ["history_json", "diagnostics_json"]
        query = sa.select(*(self._runs.c[n] for n in names)).order_by(self._runs.c.created_at)
        with self._tx() as conn:
            rows = conn.execute(query).all()
        df = pd.DataFrame.from_records([tuple(r) for r in rows], columns=names, coerce_float=True)
        for name in _BOOL_COLUMNS:
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

    # -- claims (sweep workers sharing a grid) ----------------------------------------
    def claim(self, key_or_config: str | TrainConfig | dict, owner: str, lease: float) -> bool:
        """Claim one run for ``owner`` for ``lease`` seconds; ``True`` when this worker may
        train it: the run is not stored, and nobody else holds a live claim on it (an
        expired claim — its worker died — is taken over). Atomic: one transaction, the
        insert-or-take-over is a single upsert whose ``WHERE`` only matches an expired
        claim or the owner's own."""
        key = self._key(key_or_config)
        claims = self._claims
        with self._tx(write=True) as conn:
            now = self._now(conn)
            insert = self._insert(claims).values(key=key, owner=owner, claimed_at=now, expires_at=now + lease)
            upsert = insert.on_conflict_do_update(
                index_elements=[claims.c.key],
                set_={"owner": insert.excluded.owner, "claimed_at": insert.excluded.claimed_at,
                      "expires_at": insert.excluded.expires_at},
                where=(claims.c.expires_at < now) | (claims.c.owner == owner)).returning(claims.c.owner)
            if conn.execute(upsert).first() is None:
                return False  # a live claim of another worker
            # checked after the claim: a worker storing this run right now holds the claim
            # row until it commits, so by here its run is visible
            if conn.execute(sa.select(self._runs.c.key).where(self._runs.c.key == key)).first():
                conn.execute(sa.delete(claims).where(claims.c.key == key))
                return False
        return True

    def renew(self, key: str, owner: str, lease: float) -> bool:
        """Extend ``owner``'s claim on ``key`` by ``lease`` seconds from now; ``False`` when
        the claim is no longer ``owner``'s (it expired and another worker took it)."""
        claims = self._claims
        with self._tx(write=True) as conn:
            now = self._now(conn)
            done = conn.execute(sa.update(claims).where(claims.c.key == key, claims.c.owner == owner)
                                .values(expires_at=now + lease)).rowcount
        return done == 1

    def release(self, key: str, owner: str) -> None:
        """Drop ``owner``'s claim on ``key`` (a run not stored: another worker may take it)."""
        claims = self._claims
        with self._tx(write=True) as conn:
            conn.execute(sa.delete(claims).where(claims.c.key == key, claims.c.owner == owner))

    def claims(self) -> list[dict]:
        """The claims now held: ``key``, ``owner``, ``claimed_at``, ``expires_at`` and
        ``expired`` (seconds since the epoch, on the store's clock)."""
        with self._tx() as conn:
            now = self._now(conn)
            rows = conn.execute(sa.select(self._claims).order_by(self._claims.c.claimed_at)).all()
        return [{**dict(r._mapping), "expired": r.expires_at < now} for r in rows]

    def close(self) -> None:
        """Close pooled connections (a server store); the store opens new ones when used again."""
        self._engine.dispose()

    def __repr__(self) -> str:
        return f"ResultStore({str(self.path)!r})"
