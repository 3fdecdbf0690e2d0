"""What a database location holds, looked at without changing a byte of it, and the engines
that then open it, for the results store (:mod:`dropedge_explorer.store`) and the Optuna storage
(:mod:`dropedge_explorer.studies.tuning`).

Both refuse a location before anything is created or altered unless :func:`inspect` says it
is theirs: nothing there yet, an empty database, the results store (with its schema
version) or an Optuna storage (with the Optuna version that made it); anything else, a
view where a table is expected, or a location that cannot be written is one line
(:class:`DatabaseError`, a ``ValueError``: the CLI's exit 2, the app's ``st.error``).
On a server, :func:`missing_privilege` says what the role lacks for a given use: ``CREATE``
on the schema for a table to be made, ownership for a table to be altered, the four row
privileges (and ``USAGE`` on serial ids' sequences) for the tables there.
:func:`inspect` only reads: a SQLite file is opened with SQLite's ``mode=ro`` URI (no
journal, no lock file, no schema change), a server database in a ``READ ONLY`` transaction.

A SQLite file another process holds locked is waited for by :func:`wait_unlocked`, never in
silence: after :data:`LOCK_TRY` seconds (SQLite's own wait inside one try) a ``note:`` line
says which process holds it (from ``/proc/locks``) and how long it will be waited for
(``DROPEDGE_LOCK_WAIT``, default :data:`LOCK_WAIT` s); then the work goes on, or stops with
one :class:`LockedError` line.

Locations are parsed by :mod:`dropedge_explorer.locations` (one parser for every flag and
variable); the names below that deal with them are kept here for their callers.

Example:
    >>> is_url("postgresql://me@db.lab:5432/dropedge"), is_url("results/results.sqlite")
    (True, False)
"""
from __future__ import annotations

import os
import sqlite3
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import sqlalchemy as sa
from dropedge_core.echo import bounded
from sqlalchemy.engine import URL, Engine
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.pool import NullPool

from dropedge_explorer._privileges import (
    ROW_PRIVILEGES,
    Grants,
    missing_privilege,
    server_grants,
    server_writable,
)
from dropedge_explorer._sqlite_locks import (
    LOCK_PAUSE,
    LOCK_TRY,
    LOCK_WAIT,
    LockedError,
    is_locked,
    lock_holders,
    note,
    space_problem,
    wait_unlocked,
)
from dropedge_explorer.locations import Location, LocationError, display, is_url, parse

#: Seconds to wait for a server to answer before saying it does not.
CONNECT_TIMEOUT = 10
#: How the results store is recognised: its tables, and columns every version of its
#: ``runs`` and ``claims`` tables has had (another program's ``runs`` lacks them).
RESULTS_TABLES = ("runs", "claims")
RESULTS_MARKERS = ("key", "created_at", "schema_version", "config_json", "history_json", "diagnostics_json")
CLAIMS_MARKERS = ("key", "owner", "expires_at")
#: Tables every Optuna RDB storage has (made in one transaction; ``alembic_version``, which
#: holds its schema revision, comes a moment later).
OPTUNA_MARKERS = ("studies", "version_info")
SQLITE_HEADER = b"SQLite format 3\x00"

DatabaseError = LocationError  # one kind of one-line refusal for every location problem
@dataclass(frozen=True)
class Contents:
    """What a location holds (:func:`inspect`).

    Args:
        location (Location): where.
        kind (str): ``"new"`` (no file yet), ``"empty"``, ``"results"`` (this program's
            store), ``"optuna"`` (an Optuna storage), ``"damaged"`` (one of these whose
            version cell is not a number) or ``"foreign"`` (anything else).
        tables (tuple[str, ...], optional): its tables. (default: :obj:`()`)
        views (tuple[str, ...], optional): its views. (default: :obj:`()`)
        schema_version (int, optional): the newest row's schema version of a results store
            (``None``: no rows). (default: :obj:`None`)
        optuna_version (str, optional): the Optuna version that made an Optuna storage.
            (default: :obj:`None`)
        optuna_revision (str, optional): its schema revision (Optuna's alembic revision);
            ``None`` while another process's Optuna is still creating it.
            (default: :obj:`None`)
        optuna_schema (int, optional): the schema number its ``version_info`` row holds (a
            newer Optuna writes a larger one). (default: :obj:`None`)
        writable (bool, optional): whether this process may write there (file and folder
            permissions; on a server the session's privileges, a read-only or standby
            server). (default: :obj:`True`)
        problem (str, optional): why a ``"foreign"`` location is not what it looks like (a
            view, a table without our columns), or what is damaged; or ``None``.
            (default: :obj:`None`)
        columns (dict[str, tuple[str, ...]], optional): the columns of a results store's or
            an Optuna storage's tables (what an open would add to them; whether they are
            Optuna's). (default: :obj:`{}`)
        grants (Grants, optional): what the session's role may do there (a server database;
            ``None`` for a file). (default: :obj:`None`)
    """

    location: Location
    kind: str
    tables: tuple[str, ...] = ()
    views: tuple[str, ...] = ()
    schema_version: int | None = None
    optuna_version: str | None = None
    optuna_revision: str | None = None
    optuna_schema: int | None = None
    writable: bool = True
    problem: str | None = None
    columns: dict[str, tuple[str, ...]] = field(default_factory=dict)
    grants: Grants | None = None

    @property
    def where(self) -> str:
        return repr(self.location.display)

    def describe(self) -> str:
        """What it holds, for a refusal: ``an Optuna storage (made by Optuna 5.0.0)``, ..."""
        if self.kind == "results":
            version = "no runs" if self.schema_version is None else f"schema {self.schema_version}"
            return f"a DropEdge results store ({version})"
        if self.kind == "optuna" and self.optuna_revision is None and self.optuna_version is None:
            return "an Optuna storage (being created)"
        if self.kind == "optuna":
            schema = self.optuna_revision if self.optuna_revision is not None else self.optuna_schema
            return f"an Optuna storage (made by Optuna {self.optuna_version}, schema {schema})"
        if self.kind in ("new", "empty"):
            return "nothing yet" if self.kind == "new" else "an empty database"
        if self.kind == "damaged":
            return f"a damaged database ({self.problem})"
        if self.problem:
            return f"another program's database ({self.problem})"
        names = sorted(self.tables + self.views)
        shown = ", ".join(names[:6]) + (", ..." if len(names) > 6 else "")
        return f"another program's database (tables: {shown})"


def inspect(target: str | Path | Location, what: str = "database", wait: float | None = None,
            notify: Callable[[str], None] | None = None) -> Contents:
    """Look at a location without changing it: what it holds, and whether it is writable.

    Args:
        target (str or Path or Location): a file path, ``sqlite:///file`` or a server URL
            (:func:`locations.parse`).
        what (str, optional): what the location is meant for, named in an error
            (``"results store"``). (default: :obj:`"database"`)
        wait (float, optional): seconds to wait for a SQLite file another process holds
            locked (:func:`wait_unlocked`; ``None``: ``DROPEDGE_LOCK_WAIT``).
            (default: :obj:`None`)
        notify (Callable[[str], None], optional): announces the wait (``None``: a ``note:``
            line on stderr). (default: :obj:`None`)

    Raises:
        DatabaseError: the location cannot be read at all: a directory, a device, a file
            that is not a SQLite database or is damaged, a server that refuses (one line).
    """
    location = parse(target, what)
    if location.is_server:
        return _inspect_server(location, what)
    return _inspect_file(location, what, wait, notify)


def _inspect_file(location: Location, what: str, wait: float | None,
                  notify: Callable[[str], None] | None) -> Contents:
    file = location.file
    where = repr(str(file))
    if not file.exists():
        return Contents(location, "new", writable=_creatable(file))
    if file.is_dir():
        example = str(file / "db.sqlite")
        raise DatabaseError(f"{what} {where} is a directory; give a file in it, e.g. {example!r}")
    if not file.is_file():
        raise DatabaseError(f"{what} {where} is not a regular file (a device or a pipe); give a SQLite file")
    writable = os.access(file, os.R_OK | os.W_OK) and os.access(file.parent, os.W_OK | os.X_OK)
    if file.stat().st_size == 0:
        return Contents(location, "empty", writable=writable)
    with open(file, "rb") as fh:
        header = fh.read(20)
    if header[:len(SQLITE_HEADER)] != SQLITE_HEADER:
        raise DatabaseError(f"{what} {where} is not a SQLite database (it does not begin with "
                            "'SQLite format 3'); nothing was changed")
    for attempt in range(3):
        try:
            return wait_unlocked(lambda: _read_file(location, writable, wal=header[18:20] == b"\x02\x02"),
                                 file, what, wait, notify)
        except (SQLAlchemyError, sqlite3.Error) as exc:
            error = exc  # a checkpoint of another process while an immutable read ran: read again
            time.sleep(0.1 * (attempt < 2))
    room = io_problem(error, file)
    if room:  # a read-only reader of a WAL file writes its -shm index: a size limit stops it
        raise DatabaseError(f"{what} {where} cannot be opened ({error_line(error)}): {room}; nothing "
                            "was changed: raise the limit or free space")
    raise DatabaseError(f"{what} {where} cannot be read ({error_line(error)}): damaged or not a "
                        "database; nothing was changed")


def _read_file(location: Location, writable: bool, wal: bool) -> Contents:
    """Classify a SQLite file through a ``mode=ro`` connection. A read-only reader of a WAL
    database creates ``-wal``/``-shm`` files it cannot remove: a WAL file without them is
    quiescent (no writer holds it open), so it is read as ``immutable`` (no file created)."""
    file = location.file
    quiet = wal and not Path(f"{file}-wal").exists()
    uri = f"file:{urllib.parse.quote(str(file.absolute()))}?mode=ro" + ("&immutable=1" if quiet else "")
    engine = sa.create_engine("sqlite://", poolclass=NullPool,
                              creator=lambda: sqlite3.connect(uri, uri=True, timeout=LOCK_TRY))
    try:
        with engine.connect() as conn:
            return _contents(conn, location, writable)
    finally:
        engine.dispose()


def _creatable(file: Path) -> bool:
    """Whether the nearest existing folder above ``file`` lets us create it (and its folders)."""
    parent = file.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    return parent.is_dir() and os.access(parent, os.W_OK | os.X_OK)


def _inspect_server(location: Location, what: str) -> Contents:
    engine = server_engine(location.url, pool_size=1)
    try:
        with engine.connect() as conn, conn.begin() as tx:
            conn.exec_driver_sql("SET TRANSACTION READ ONLY")  # a looker cannot write, even by mistake
            grants = server_grants(conn)
            contents = _contents(conn, location, server_writable(conn, grants), grants)
            tx.rollback()
            return contents
    except SQLAlchemyError as exc:
        raise DatabaseError(f"cannot use the {what} {location.display!r}: {error_line(exc)}") from None
    finally:
        engine.dispose()


def _contents(conn: sa.Connection, location: Location, writable: bool,
              grants: Grants | None = None) -> Contents:
    """Classify what ``conn`` shows, by reading the catalog and at most two version rows."""
    look = sa.inspect(conn)
    tables, views = tuple(sorted(look.get_table_names())), tuple(sorted(look.get_view_names()))
    names = set(tables) | set(views)
    base = {"location": location, "tables": tables, "views": views, "writable": writable, "grants": grants}
    if not names:
        mark = _sqlite_mark(conn)
        if mark:
            return Contents(kind="foreign", problem=f"no tables, but marked by another program: {mark}",
                            **base)
        return Contents(kind="empty", **base)
    if names & set(RESULTS_TABLES) and not set(OPTUNA_MARKERS) <= names:
        columns = {t: tuple(c["name"] for c in look.get_columns(t)) for t in RESULTS_TABLES if t in tables}
        problem = _results_problem(look, names, set(views), columns)
        if problem:
            return Contents(kind="foreign", problem=problem, **base)
        newest = None
        if "runs" in names:
            # max() of a text among numbers is the text (SQLite orders numbers first)
            newest = conn.execute(sa.text("SELECT max(schema_version) FROM runs")).scalar()
        if newest is not None and not _is_integer(newest):
            return Contents(kind="damaged", problem="its 'runs' table has a schema_version that is "
                            f"not a whole number ({bounded(newest, 40)})", columns=columns, **base)
        return Contents(kind="results", schema_version=None if newest is None else int(newest),
                        columns=columns, **base)
    if set(OPTUNA_MARKERS) <= names and "runs" not in names:
        marked_views = sorted(set(OPTUNA_MARKERS) & set(views))
        if marked_views:
            return Contents(kind="foreign", problem=f"{marked_views[0]!r} is a view", **base)
        try:  # no rows yet: another worker's Optuna is creating the storage right now
            version, number = conn.execute(sa.text(
                "SELECT library_version, schema_version FROM version_info")).first() or (None, None)
            revision = None
            if "alembic_version" in names:
                revision = conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalar()
        except SQLAlchemyError:
            return Contents(kind="foreign", problem="Optuna's table names, not its columns", **base)
        if number is not None and not _is_integer(number):
            return Contents(kind="damaged", problem="its version_info holds a schema version that "
                            f"is not a whole number ({bounded(number, 40)})", **base)
        columns = {t: tuple(c["name"] for c in look.get_columns(t)) for t in tables}
        return Contents(kind="optuna", optuna_version=None if version is None else str(version),
                        optuna_revision=None if revision is None else str(revision),
                        optuna_schema=None if number is None else int(number), columns=columns, **base)
    return Contents(kind="foreign", **base)


def _is_integer(value: object) -> bool:
    """Whether a version cell holds a whole number (a damaged row may hold any text)."""
    try:
        return int(value) == float(value)
    except (TypeError, ValueError, OverflowError):
        return False


def _sqlite_mark(conn: sa.Connection) -> str | None:
    """A SQLite file's header marks (``PRAGMA user_version`` / ``application_id``, both 0
    unless a program sets them; this one never does): an empty file that carries one
    belongs to another program. ``None`` when unmarked or not SQLite."""
    if conn.dialect.name != "sqlite":
        return None
    marks = [f"{name} {value}" for name in ("user_version", "application_id")
             if (value := conn.execute(sa.text(f"PRAGMA {name}")).scalar())]
    return ", ".join(marks) or None


def _results_problem(look, names: set[str], views: set[str],
                     columns: dict[str, tuple[str, ...]]) -> str | None:
    """Why a database with a ``runs`` object is not the results store, or ``None``."""
    for table in sorted(set(RESULTS_TABLES) & views):
        return f"its {table!r} is a view, not a table"
    other = sorted(names - set(RESULTS_TABLES))
    if other:
        return "tables: " + ", ".join(other[:6]) + (", ..." if len(other) > 6 else "")
    for table, markers in (("runs", RESULTS_MARKERS), ("claims", CLAIMS_MARKERS)):
        if table not in names:
            continue
        have = set(columns[table])
        lacking = [name for name in markers if name not in have]
        if lacking:
            return f"its {table!r} table lacks {', '.join(lacking)}"
        if look.get_pk_constraint(table).get("constrained_columns") != ["key"]:
            return f"its {table!r} table has no primary key on 'key'"
    return None


def io_problem(exc: BaseException, file: Path | None) -> str | None:
    """For a SQLite "disk I/O error" / "disk is full" on ``file``: the room it lacks
    (:func:`space_problem`), else ``None`` (another cause; the driver's line says it).

    Args:
        exc (BaseException): the driver's error.
        file (Path, optional): the SQLite file written (``None`` for a server).
    """
    line = error_line(exc).lower()
    if file is None or not any(word in line for word in ("disk i/o error", "disk is full", "disk full")):
        return None
    return space_problem(file)


def same_place(a: str | Path | Location, b: str | Path | Location) -> bool:
    """Whether two locations are one database (one file, or one server database).

    Args:
        a (str or Path or Location): one location.
        b (str or Path or Location): the other.

    Example:
        >>> same_place("runs.sqlite", "./runs.sqlite"), same_place("a.sqlite", "b.sqlite")
        (True, False)
    """
    a, b = parse(a), parse(b)
    if a.is_server or b.is_server:
        keys = [(u.get_backend_name(), u.host, u.port, u.database) if u is not None else None
                for u in (a.url, b.url)]
        return keys[0] == keys[1]
    try:
        return a.file.resolve() == b.file.resolve()
    except OSError:
        return a.file.absolute() == b.file.absolute()


def sqlite_path(target: str | Path | Location) -> Path | None:
    """The file of a SQLite location; ``None`` for a server (:func:`locations.parse`).

    Args:
        target (str or Path or Location): a location.

    Example:
        >>> sqlite_path("sqlite:///runs.sqlite"), sqlite_path("postgresql://ann@db/runs")
        (PosixPath('runs.sqlite'), None)
    """
    return parse(target).file


def server_engine(url: URL, pool_size: int = 2) -> Engine:
    """An engine on a server: connections checked before use (a restarted server or a
    dropped connection is reconnected, not an error), a bounded connect wait.

    Args:
        url (sqlalchemy.engine.URL): the server's URL (:attr:`Location.url`).
        pool_size (int, optional): connections kept open. (default: :obj:`2`)
    """
    args = {"connect_timeout": CONNECT_TIMEOUT} if url.get_backend_name() == "postgresql" else {}
    return sa.create_engine(url, pool_pre_ping=True, pool_size=pool_size, max_overflow=4, connect_args=args)


def creation_race(exc: BaseException) -> bool:
    """Whether a driver's error is the loser's side of two connections creating the same
    tables at once: "already exists" (a table; on PostgreSQL also an enum type) or "locked"
    (SQLite). Only the message says so (the drivers type both as operational or programming
    errors), so it is read here, with the drivers' other errors.

    Args:
        exc (BaseException): the driver's error.

    Example:
        >>> creation_race(Exception("table runs already exists")), creation_race(Exception("no such table"))
        (True, False)
    """
    line = error_line(exc)
    return "already exists" in line or "locked" in line


def error_line(exc: BaseException) -> str:
    """The first meaningful line of a driver's error (psycopg puts details on later lines).

    Args:
        exc (BaseException): the driver's error (its ``orig`` when it wraps one).

    Example:
        >>> error_line(Exception("connection refused\\nDETAIL: is the server running?"))
        'connection refused'
    """
    orig = getattr(exc, "orig", None) or exc
    lines = [line.strip() for line in str(orig).splitlines() if line.strip()]
    return lines[0] if lines else type(orig).__name__


__all__ = ["Contents", "DatabaseError", "Grants", "LOCK_PAUSE",
           "LOCK_TRY", "LOCK_WAIT", "LockedError", "OPTUNA_MARKERS", "RESULTS_MARKERS",
           "ROW_PRIVILEGES", "creation_race", "display", "error_line",
           "inspect", "io_problem", "is_locked", "is_url", "lock_holders", "missing_privilege", "note",
           "same_place", "server_engine", "space_problem", "sqlite_path", "wait_unlocked"]
