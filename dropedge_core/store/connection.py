"""How the store talks to its database: a SQLite engine that starts every transaction
itself, the WAL journal, and a database error as one line.

Concurrency on SQLite: WAL journal (readers never block the writer), a busy timeout, and
every write in its own ``BEGIN IMMEDIATE`` transaction, so several processes (a sweep and
the app, or two sweeps) can write at once without losing rows. A connection is opened per
call (SQLite) or taken from a small pool (server), so a store object may be shared
between threads.
"""
from __future__ import annotations

import re
import sqlite3
import time
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.pool import NullPool

from dropedge_core import databases


class StoreError(ValueError):
    """A store location, database or export format that cannot be used (one line)."""


def sqlite_engine(path: Path, timeout: float) -> sa.Engine:
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


def error_message(exc: BaseException, where: str, is_server: bool) -> str:
    """A database error of the store at ``where`` as one line."""
    line = databases.error_line(exc)
    if is_server and isinstance(exc, sa.exc.OperationalError):
        return f"cannot use the results store {where!r}: {line}"
    if not is_server and re.search(r"malformed|not a database|file is encrypted", line):
        return (f"{where!r} is not a usable SQLite results store ({line}): it is damaged "
                "or not a database; move it away or restore a copy")
    return f"results store {where!r}: {line}"


def use_wal(engine: sa.Engine, where: str) -> None:
    """WAL journal (persistent: set once per file); the switch needs a moment without
    other writers, so a locked database is tried again for a few seconds."""
    for attempt in range(50):
        try:
            with engine.connect() as conn:
                raw = conn.connection.dbapi_connection
                if raw.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                    raw.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or attempt == 49:
                raise StoreError(f"cannot initialise results store {where!r}: {exc}") from None
            time.sleep(0.1)
        except sqlite3.Error as exc:
            raise StoreError(error_message(exc, where, is_server=False)) from None


__all__ = ["StoreError", "error_message", "sqlite_engine", "use_wal"]
