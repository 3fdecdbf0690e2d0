"""How the store talks to its database: a SQLite engine that starts every transaction
itself, the WAL journal, and a database error as one line.

Concurrency on SQLite: WAL journal (readers never block the writer), every write in its
own ``BEGIN IMMEDIATE`` transaction, so several processes (a sweep and the app, or two
sweeps) can write at once without losing rows. A transaction takes its lock as it begins,
through :func:`dropedge_explorer.databases.wait_unlocked`: a file another program holds locked
is announced after two seconds (who holds it, for how long it will be waited for) and
waited for up to the store's bound (``DROPEDGE_LOCK_WAIT``), then :class:`StoreBusy`. A
connection is opened per call (SQLite) or taken from a small pool (server), so a store
object may be shared between threads.

Errors are typed here, where the driver's error is still at hand (:func:`store_error`):
callers match the type (:class:`StoreUnavailable`: write again later; :class:`ForeignStore`,
:class:`DamagedStore`: it will not pass), never the message.
"""
from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.pool import NullPool

from dropedge_explorer import databases


class StoreError(ValueError):
    """A store location, database or export format that cannot be used (one line). Raised
    as such, it will not pass by waiting (a read-only role, a schema too new, a missing
    driver); the subclasses say more."""


class StoreUnavailable(StoreError):
    """The store cannot be used for now and may be again later: a SQLite file locked, busy,
    read-only or not openable for the moment, a disk I/O error, a server's connection
    refused or lost (its "operational" errors). A finished run is worth writing again."""


class StoreLocked(StoreUnavailable):
    """Another connection held the SQLite file's lock past the busy timeout of a statement."""


class StoreBusy(StoreLocked):
    """The store's SQLite file stayed locked by another process for the whole announced
    wait (``DROPEDGE_LOCK_WAIT``)."""


class ForeignStore(StoreError):
    """The location holds another program's tables (or ours replaced by another's): it is
    never written to."""


class DamagedStore(StoreError):
    """The store's file or one of its rows is damaged (not a database, malformed)."""


#: SQLite's messages (``sqlite3.OperationalError``) that name a state that may pass.
_SQLITE_LOCKED = re.compile(r"locked|busy", re.IGNORECASE)
_SQLITE_FOR_NOW = re.compile(r"readonly|unable to open|disk i/o", re.IGNORECASE)
#: SQLite's messages of a table that is not the one this store created.
_SQLITE_FOREIGN = re.compile(r"no such table|no such column|has no column named", re.IGNORECASE)
#: SQLite's messages of a damaged file.
_SQLITE_DAMAGED = re.compile(r"malformed|not a database|file is encrypted", re.IGNORECASE)


def _busy_ms(seconds: float) -> int:
    return max(1, int(seconds * 1000))


def sqlite_engine(path: Path, timeout: float, notify: Callable[[str], None] | None = None) -> sa.Engine:
    """A SQLite engine that opens a connection per use and starts every transaction itself.

    ``BEGIN IMMEDIATE`` for writes (take the write lock at once: no lock-upgrade deadlock
    between two writers), a deferred ``BEGIN`` and a first read for reads (the read lock
    taken there too), each tried through :func:`databases.wait_unlocked`. Once the lock is
    held, a statement may still wait ``timeout`` seconds (SQLite's busy timeout).

    Args:
        path (Path): the database file.
        timeout (float): the most seconds a transaction's start, and then a statement,
            waits for a lock.
        notify (Callable[[str], None], optional): where a wait is announced.
            (default: :obj:`None`)

    Returns:
        sqlalchemy.Engine: the engine.
    """
    first_try = min(databases.LOCK_TRY, timeout)

    def connect() -> sqlite3.Connection:
        conn = sqlite3.connect(str(path), timeout=first_try, isolation_level=None, check_same_thread=False)
        conn.execute(f"PRAGMA busy_timeout = {_busy_ms(timeout)}")
        return conn

    engine = sa.create_engine("sqlite://", creator=connect, poolclass=NullPool)

    @sa.event.listens_for(engine, "begin")
    def _begin(conn: sa.Connection) -> None:
        raw = conn.connection.dbapi_connection
        write = conn.get_execution_options().get("write")

        def take_lock() -> None:
            raw.execute(f"PRAGMA busy_timeout = {_busy_ms(first_try)}")
            raw.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                if not write:
                    raw.execute("SELECT count(*) FROM sqlite_master").fetchone()
            except sqlite3.Error:
                raw.execute("ROLLBACK")
                raise
            raw.execute(f"PRAGMA busy_timeout = {_busy_ms(timeout)}")

        try:
            databases.wait_unlocked(take_lock, path, "results store", timeout, notify)
        except databases.LockedError as exc:
            raise StoreBusy(str(exc)) from exc.__cause__

    return engine


def error_kind(exc: BaseException, is_server: bool) -> type[StoreError]:
    """The :class:`StoreError` type of a driver's (or SQLAlchemy's) error: what a caller may
    do about it. SQLite says why only in its message, so the message is read here, once,
    and nowhere else.

    Args:
        exc (BaseException): the driver's or SQLAlchemy's error.
        is_server (bool): the store is on a PostgreSQL server (not a SQLite file).

    Returns:
        type[StoreError]: :class:`StoreLocked`, :class:`StoreUnavailable`,
        :class:`ForeignStore`, :class:`DamagedStore` or :class:`StoreError`.

    Example:
        >>> import sqlite3
        >>> error_kind(sqlite3.OperationalError("database is locked"), is_server=False).__name__
        'StoreLocked'
        >>> error_kind(sqlite3.OperationalError("no such table: runs"), is_server=False).__name__
        'ForeignStore'
    """
    orig = getattr(exc, "orig", None) or exc
    if isinstance(orig, sqlite3.OperationalError):  # SQLite's own error, through SQLAlchemy or not
        line = str(orig)
        if _SQLITE_LOCKED.search(line):
            return StoreLocked
        if _SQLITE_FOR_NOW.search(line):
            return StoreUnavailable
        if _SQLITE_FOREIGN.search(line):
            return ForeignStore
    if isinstance(orig, sqlite3.DatabaseError) and _SQLITE_DAMAGED.search(str(orig)):
        return DamagedStore
    if is_server and isinstance(exc, sa.exc.OperationalError):  # connection refused, lost, restarting
        return StoreUnavailable
    return StoreError


def error_message(exc: BaseException, where: str, is_server: bool) -> str:
    """A database error of the store at ``where`` as one line.

    Args:
        exc (BaseException): the driver's or SQLAlchemy's error.
        where (str): the store as shown to the user (a file or a server's address).
        is_server (bool): the store is on a PostgreSQL server.

    Returns:
        str: one line naming the store and what to do.
    """
    line = databases.error_line(exc)
    if is_server and isinstance(exc, sa.exc.OperationalError):
        return f"cannot use the results store {where!r}: {line}"
    room = None if is_server else databases.io_problem(exc, Path(where))
    if room:
        return f"results store {where!r} cannot be written ({line}): {room}; raise the limit or free space"
    if error_kind(exc, is_server) is DamagedStore:
        return (f"{where!r} is not a usable SQLite results store ({line}): it is damaged "
                "or not a database; move it away or restore a copy")
    return f"results store {where!r}: {line}"


def store_error(exc: BaseException, where: str, is_server: bool) -> StoreError:
    """A database error of the store at ``where`` as a typed one-line :class:`StoreError`
    (:func:`error_kind`, :func:`error_message`); raise it ``from None``.

    Args:
        exc (BaseException): the driver's or SQLAlchemy's error.
        where (str): the store as shown to the user.
        is_server (bool): the store is on a PostgreSQL server.

    Returns:
        StoreError: an instance of the type :func:`error_kind` chooses.
    """
    return error_kind(exc, is_server)(error_message(exc, where, is_server))


def use_wal(engine: sa.Engine, path: Path, timeout: float,
            notify: Callable[[str], None] | None = None) -> None:
    """WAL journal (persistent: set once per file); the switch needs a moment without other
    connections, so a locked database is waited for (:func:`databases.wait_unlocked`).

    Args:
        engine (sqlalchemy.Engine): the file's engine (:func:`sqlite_engine`).
        path (Path): the database file.
        timeout (float): the most seconds to wait for the lock.
        notify (Callable[[str], None], optional): where a wait is announced.
            (default: :obj:`None`)

    Raises:
        StoreBusy: the file stayed locked for ``timeout`` seconds.
    """
    def switch() -> None:
        with engine.connect() as conn:
            raw = conn.connection.dbapi_connection
            raw.execute(f"PRAGMA busy_timeout = {_busy_ms(min(databases.LOCK_TRY, timeout))}")
            if raw.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                raw.execute("PRAGMA journal_mode = WAL")

    try:
        databases.wait_unlocked(switch, path, "results store", timeout, notify)
    except databases.LockedError as exc:
        raise StoreBusy(str(exc)) from exc.__cause__
    except sqlite3.Error as exc:
        raise store_error(exc, str(path), is_server=False) from None


