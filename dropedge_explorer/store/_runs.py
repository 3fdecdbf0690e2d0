"""The results store's runs: open (inspect, refuse, create, upgrade), put, get, delete, and
the table of every run.

Before creating or altering anything, the store looks at its location without writing
(:func:`dropedge_explorer.databases.inspect`): only nothing yet, an empty database or this
store (of this schema version or an older one) is opened, and only when it is writable;
anything else (another program's tables, a view named ``runs``, an Optuna storage, rows
of a newer schema, a read-only file) is refused in one line and left untouched.
"""
from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlalchemy as sa
from dropedge_core import stream_version
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import SQLAlchemyError

from dropedge_explorer import databases, env, locations, paths
from dropedge_explorer._lazy import lazy_import
from dropedge_explorer.store import _schema as schema
from dropedge_explorer.store import _versions as versions
from dropedge_explorer.store._claims import Claims
from dropedge_explorer.store._connection import (
    DamagedStore,
    ForeignStore,
    StoreBusy,
    StoreError,
    StoreLocked,
    sqlite_engine,
    store_error,
    use_wal,
)
from dropedge_explorer.training import RunResult, TrainConfig

_PG_INIT_LOCK = 0x64726F70  # advisory lock id ("drop"): one worker creates the tables at a time


def open_location(target: str | Path | locations.Location | None, wait: float | None = None,
                  on_wait: Callable[[str], None] | None = None) -> locations.Location:
    """Parse and inspect a store location; refuse, in one line, one that is not this
    store's or not writable. Nothing is written.

    Args:
        target (str or Path or Location, optional): as :class:`ResultStore`'s ``path``
            (``None``: ``$DROPEDGE_RESULTS``, :func:`dropedge_explorer.paths.results_store`).
        wait (float, optional): seconds to wait for a SQLite file another process holds
            locked. (default: :obj:`None`)
        on_wait (Callable[[str], None], optional): where that wait is announced.
            (default: :obj:`None`)

    Returns:
        Location: the parsed location, checked.

    Raises:
        StoreBusy: the file stayed locked.
        ForeignStore: it holds another program's tables.
        StoreError: it cannot be used (unparsable, newer schema, missing privileges,
            read-only).
    """
    location, contents = _inspect(target, wait, on_wait)
    shown = contents.where
    if contents.kind not in ("new", "empty", "results"):
        raise ForeignStore(f"results store {shown} is not a DropEdge results store: it holds "
                         f"{contents.describe()}; nothing was changed. Give a new file or an empty database")
    if contents.kind == "results" and (contents.schema_version or 0) > schema.SCHEMA_VERSION:
        raise StoreError(f"results store {shown} was written by a newer version of this program (schema "
                         f"{contents.schema_version}; this one reads up to {schema.SCHEMA_VERSION}); "
                         "nothing was changed")
    lacking = databases.missing_privilege(contents, schema.TABLES, alter=_altered(contents))
    if lacking:
        raise StoreError(f"results store {shown} is read-only here for role {contents.grants.role!r}: it "
                         f"lacks {lacking}; nothing was changed: grant it, or open the store once as "
                         "a role that has it")
    if not contents.writable:
        verb = "cannot be created here" if contents.kind == "new" else "is read-only here"
        raise StoreError(f"results store {shown} {verb} (runs are written to it); nothing was changed: "
                         "give a writable file or database")
    return location


def _inspect(target: str | Path | locations.Location | None, wait: float | None,
             on_wait: Callable[[str], None] | None) -> tuple[locations.Location, databases.Contents]:
    """The parsed location and what it holds, read without writing (one-line errors)."""
    try:
        where = paths.results_store() if target is None else target
        location = locations.parse(where, "results store", allowed=("postgresql",))
        return location, databases.inspect(location, "results store", wait, on_wait)
    except databases.LockedError as exc:
        raise StoreBusy(str(exc)) from None
    except databases.DatabaseError as exc:
        raise StoreError(str(exc)) from None


def _altered(contents: databases.Contents) -> tuple[str, ...]:
    """The tables an open would add columns to (:func:`schema.create`): ``runs`` when it
    lacks a column of a config field added since it was made."""
    have = contents.columns.get(schema.TABLE)
    return (schema.TABLE,) if have is not None and set(schema.value_columns()) - set(have) else ()


class ResultStore(Claims):
    """A store of :class:`~dropedge_explorer.training.config.RunResult` rows, in a SQLite file or on a
    PostgreSQL server.

    Args:
        path (str or Path or Location, optional): a database file (created with its
            folder), ``sqlite:///file``, or ``postgresql://user[:password]@host[:port]/database``.
            (default: :obj:`None`: ``$DROPEDGE_RESULTS``, else ``results/results.sqlite``,
            :mod:`dropedge_explorer.paths`)
        timeout (float, optional): seconds one operation waits for a SQLite file another
            process holds locked, announced after two seconds; then
            :class:`~dropedge_explorer.store._connection.StoreBusy`.
            (default: :obj:`None`: ``DROPEDGE_LOCK_WAIT``, 60 s)
        on_wait (Callable[[str], None], optional): where that announcement goes.
            (default: :obj:`None`: a ``note:`` line on stderr)

    Raises:
        StoreError: the location cannot be used (a directory, an unknown scheme, a missing
            driver, a refusing server, a read-only file), or it holds another program's
            tables (:class:`~dropedge_explorer.store._connection.ForeignStore`), a damaged file
            or row (:class:`~dropedge_explorer.store._connection.DamagedStore`) or rows of a newer
            schema; nothing is written then. Later calls raise
            :class:`~dropedge_explorer.store._connection.StoreUnavailable` for a state that may
            pass (a lock, a server restarting), the other types for one that will not.

    Example:
        >>> import tempfile
        >>> from dropedge_explorer.training import TrainConfig, train
        >>> result = train(TrainConfig(dataset="karate", num_layers=2, epochs=3, device="cpu"))
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     store = ResultStore(f"{folder}/results.sqlite")
        ...     key = store.put(result)
        ...     print(store.has(result.config), len(store), store.get(key)["epochs_run"])
        ...     store.close()
        True 1 3

        A server: ``ResultStore("postgresql://me@db.lab/dropedge")``.
    """

    def __init__(self, path: str | Path | locations.Location | None = None, timeout: float | None = None,
                 on_wait: Callable[[str], None] | None = None):
        self.timeout = float(env.settings_or_defaults().lock_wait if timeout is None else timeout)
        self._on_wait = on_wait
        self._meta, self._runs, self._claims = schema.tables()
        self._columns = schema.value_columns()
        location = open_location(path, self.timeout, on_wait)
        self.is_server = location.is_server
        self.url = location.display if self.is_server else location.sqlalchemy_url
        self.path: Path | str = location.file if location.file is not None else self.url
        if self.is_server:
            self._engine = databases.server_engine(location.url)
        else:
            try:
                location.file.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create the results folder {str(location.file.parent)!r}: "
                                 f"{exc.strerror}") from None
            self._engine = sqlite_engine(location.file, self.timeout, on_wait)
        self._init_schema()

    @classmethod
    def for_reading(cls, path: str | Path | locations.Location | None = None, timeout: float | None = None,
                    on_wait: Callable[[str], None] | None = None) -> ResultStore | None:
        """The store at ``path`` for a command that only reads it, or ``None`` when there is
        none yet (no file, a 0-byte file, an empty database): opening it would create the
        store's tables there, which a reader must not do.

        Args:
            path (str or Path or Location, optional): as :class:`ResultStore`'s.
                (default: :obj:`None`)
            timeout (float, optional): as :class:`ResultStore`'s. (default: :obj:`None`)
            on_wait (Callable[[str], None], optional): as :class:`ResultStore`'s.
                (default: :obj:`None`)

        Raises:
            StoreError: as :class:`ResultStore` (another program's tables, a damaged file).
        """
        wait = float(env.settings_or_defaults().lock_wait if timeout is None else timeout)
        _, contents = _inspect(path, wait, on_wait)
        if contents.kind in ("new", "empty"):
            return None
        return cls(path, timeout, on_wait)

    # -- plumbing ---------------------------------------------------------------------
    @contextmanager
    def _tx(self, write: bool = False) -> Iterator[sa.Connection]:
        """One transaction; a database error becomes one :class:`StoreError` line."""
        try:
            with self._engine.connect() as conn:
                if write:
                    conn.execution_options(write=True)
                with conn.begin():
                    yield conn
        except (SQLAlchemyError, sqlite3.Error) as exc:
            raise store_error(exc, str(self.path), self.is_server) from None

    def _insert(self, table: sa.Table):
        """The dialect's INSERT (with ``on_conflict_do_update``)."""
        return (postgresql if self.is_server else sqlite).insert(table)

    def _init_schema(self) -> None:
        """Create what is missing and upgrade older rows (:mod:`.versions`), in one write
        transaction; SQLite's WAL journal after."""
        for attempt in range(50):
            try:
                with self._tx(write=True) as conn:
                    if self.is_server:  # concurrent CREATE TABLEs collide in PostgreSQL's catalog
                        conn.execute(sa.text("SELECT pg_advisory_xact_lock(:id)"), {"id": _PG_INIT_LOCK})
                    schema.create(conn, self._meta)
                    versions.upgrade_rows(conn, self._runs)
                break
            except StoreLocked as exc:  # a lock met after BEGIN (two creators at once); not a waited one
                if isinstance(exc, StoreBusy) or attempt == 49:
                    raise
                time.sleep(0.1)
            except versions.DamagedRow as exc:  # the upgrade was rolled back with its transaction
                raise DamagedStore(f"results store {str(self.path)!r} is damaged: {exc}; nothing was "
                                 "changed: repair or delete that row, or give another store") from None
        if not self.is_server:
            use_wal(self._engine, self.path, self.timeout, self._on_wait)

    @staticmethod
    def _key(key_or_config: str | TrainConfig | dict) -> str:
        return key_or_config if isinstance(key_or_config, str) else schema.run_key(key_or_config)

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
        row = _row(result)
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
        for name in schema.BOOL_COLUMNS:
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
        pd = lazy_import("pandas")
        names = ["key", "created_at", *self._columns]
        if curves:
            names += ["history_json", "diagnostics_json"]
        query = sa.select(*(self._runs.c[n] for n in names)).order_by(self._runs.c.created_at)
        with self._tx() as conn:
            rows = conn.execute(query).all()
        df = pd.DataFrame.from_records([tuple(r) for r in rows], columns=names, coerce_float=True)
        for name in schema.BOOL_COLUMNS:
            df[name] = df[name].astype(bool)
        if curves:
            df["history"] = [json.loads(v or "[]") for v in df.pop("history_json")]
            df["diagnostics"] = [json.loads(v or "[]") for v in df.pop("diagnostics_json")]
        return df

    def close(self) -> None:
        """Close pooled connections (a server store); the store opens new ones when used again."""
        self._engine.dispose()

    def __repr__(self) -> str:
        return f"ResultStore({str(self.path)!r})"


def _row(result: RunResult) -> dict:
    """One run as a ``runs`` row of this schema version."""
    config = result.config.to_dict()
    summary = result.summary()
    row = {"key": schema.run_key(result.config), "created_at": time.time(),
           "schema_version": schema.SCHEMA_VERSION}
    row.update({name: config[name] for name in schema.config_columns()})
    row.update({name: int(row[name]) for name in schema.BOOL_COLUMNS})
    row.update({name: summary.get(name) for name in schema.METRIC_COLUMNS if name != "ran_on"})
    row["ran_on"] = result.device
    row["stream"] = stream_version(result.config.sampler)
    # the fingerprint the trainer recorded (a result made otherwise has none: NULL)
    row.update({name: result.fingerprint.get(name) or None for name in schema.FINGERPRINT_COLUMNS})
    row["config_json"] = schema.canonical_json(result.config)
    row["history_json"] = json.dumps(result.history)
    row["diagnostics_json"] = json.dumps(result.diagnostics)
    return row


