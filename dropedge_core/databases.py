"""What a database location holds, looked at without changing a byte of it, and the engines
that then open it, for the results store (:mod:`dropedge_core.store`) and the Optuna storage
(:mod:`dropedge_core.studies.tuning`).

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

Locations are parsed by :mod:`dropedge_core.locations` (one parser for every flag and
variable); the names below that deal with them are kept here for their callers.

Example:
    >>> is_url("postgresql://me@db.lab:5432/dropedge"), is_url("results/results.sqlite")
    (True, False)
"""
from __future__ import annotations

import os
import sqlite3
import sys
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import URL, Engine
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.pool import NullPool

from dropedge_core.echo import bounded
from dropedge_core.locations import POSTGRES_SCHEMES, Location, LocationError, display, is_url, parse

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
#: What writing rows takes on each table a store or storage writes (no ALTER, no CREATE).
ROW_PRIVILEGES = ("SELECT", "INSERT", "UPDATE", "DELETE")

DatabaseError = LocationError  # one kind of one-line refusal for every location problem
#: Seconds one store operation waits, in all, for a SQLite file another process holds
#: locked (default of ``DROPEDGE_LOCK_WAIT``).
LOCK_WAIT = 60.0
#: Seconds SQLite waits inside one try (its busy timeout): the user hears of a lock after this.
LOCK_TRY = 2.0
#: Seconds between two tries once the user was told.
LOCK_PAUSE = 0.25
T = TypeVar("T")


class LockedError(LocationError):
    """A SQLite file stayed locked by another process for the whole wait (one line)."""


def is_locked(exc: BaseException) -> bool:
    """Whether a driver error (or SQLAlchemy's wrapper of one) is SQLite's "database is
    locked" / "busy": another connection holds the file; it may pass."""
    orig = getattr(exc, "orig", None) or exc
    return isinstance(orig, sqlite3.OperationalError) and any(
        word in str(orig).lower() for word in ("database is locked", "database table is locked", "busy"))


def lock_holders(file: Path) -> str:
    """Who holds locks on a SQLite file (or its ``-wal``/``-shm`` files), for a message:
    ``process 1234 (sqlite3)``, from Linux's ``/proc/locks``; ``another process`` where
    that cannot be read (another system) or names none (a lock of this process)."""
    inodes = set()
    for name in (str(file), f"{file}-shm", f"{file}-wal", f"{file}-journal"):
        try:
            inodes.add(os.stat(name).st_ino)
        except OSError:
            pass
    pids: list[int] = []
    try:
        with open("/proc/locks") as fh:
            for line in fh:  # "1: POSIX  ADVISORY  WRITE 23830 fe:00:2154987 120 120"
                fields = line.split()
                pid = int(fields[4]) if len(fields) > 5 and fields[4].isdigit() else None
                inode = fields[5].rsplit(":", 1)[-1] if len(fields) > 5 else ""
                ours = inode.isdigit() and int(inode) in inodes
                if pid and pid != os.getpid() and ours and pid not in pids:
                    pids.append(pid)
    except OSError:
        return "another process"
    named = []
    for pid in pids[:3]:
        try:
            with open(f"/proc/{pid}/comm") as fh:
                named.append(f"process {pid} ({fh.read().strip()})")
        except OSError:
            named.append(f"process {pid}")
    return ", ".join(named) + (f" and {len(pids) - 3} more" if len(pids) > 3 else "") or "another process"


def space_problem(file: Path) -> str | None:
    """Why writing beside ``file`` may fail for want of room, in words, or ``None``: this
    process's file-size limit (``ulimit -f``; SQLite's ``-shm`` file alone is 32 KiB), or
    a disk with less than 1 MiB free. SQLite says only "disk I/O error" or "database or
    disk is full" for both; a message should say which."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
        if soft != resource.RLIM_INFINITY:
            return f"this process's file-size limit (ulimit -f) is {soft // 1024} KiB"
    except (ImportError, OSError, ValueError):  # no resource module (Windows)
        pass
    folder = Path(file).absolute().parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:
        stat = os.statvfs(folder)
    except (OSError, AttributeError):
        return None
    free = stat.f_bavail * stat.f_frsize
    return f"the disk holding it is full ({free // 1024} KiB free)" if free < 1 << 20 else None


def io_problem(exc: BaseException, file: Path | None) -> str | None:
    """For a SQLite "disk I/O error" / "disk is full" on ``file``: the room it lacks
    (:func:`space_problem`), else ``None`` (another cause; the driver's line says it)."""
    line = error_line(exc).lower()
    if file is None or not any(word in line for word in ("disk i/o error", "disk is full", "disk full")):
        return None
    return space_problem(file)


def note(line: str) -> None:
    """The default way a wait is announced: a ``note:`` line on stderr (the CLI's notes)."""
    sys.stderr.write(f"note: {line}\n")
    sys.stderr.flush()


def wait_unlocked(attempt: Callable[[], T], file: Path, what: str, wait: float | None = None,
                  notify: Callable[[str], None] | None = None,
                  clock: Callable[[], float] = time.monotonic,
                  sleep: Callable[[float], None] = time.sleep) -> T:
    """``attempt()`` until it does not meet a lock (:func:`is_locked`), for at most ``wait``
    seconds in all; return its result.

    ``attempt`` should let SQLite wait about :data:`LOCK_TRY` seconds itself (its busy
    timeout), so the user is told within that: the first lock met calls ``notify`` with
    one line naming the file, who holds it and the bound.

    Args:
        attempt: the work; raises the driver's (or SQLAlchemy's) error on a lock.
        file: the SQLite file, named in the lines.
        what: what it is (``"results store"``).
        wait: seconds in all (``None``: ``DROPEDGE_LOCK_WAIT``, default :data:`LOCK_WAIT`).
        notify: where the line goes (``None``: :func:`note`, stderr).
        clock, sleep: time, passed in by tests.

    Raises:
        LockedError: still locked after ``wait`` seconds (one line; nothing was written).
    """
    if wait is None:
        from dropedge_core import env

        wait = env.settings_or_defaults().lock_wait
    start = None
    while True:
        try:
            return attempt()
        except (sqlite3.Error, SQLAlchemyError) as exc:
            if not is_locked(exc):
                raise
            now = clock()
            holder = lock_holders(file)
            if start is None:
                start = now
                (notify or note)(f"{what} {str(file)!r} is locked by {holder}; waiting up to {wait:g} s "
                                 "for it (DROPEDGE_LOCK_WAIT)")
            if now - start >= wait:
                raise LockedError(f"{what} {str(file)!r} stayed locked by {holder} for {wait:g} s "
                                  "(DROPEDGE_LOCK_WAIT); nothing was written: try again once it is free, "
                                  "or set a longer wait") from exc
            sleep(LOCK_PAUSE)


@dataclass(frozen=True)
class Grants:
    """What the session's role may do in a server database, read from the catalog (the
    schema new tables go to: ``current_schema()``, where :func:`inspect` looks).

    Attributes:
        role: the session's role; ``schema``: the schema (``None``: the search path names
            none that exists).
        usage: ``USAGE`` on the schema; ``create``: ``CREATE`` on it (to create tables).
        lacking: per table, the :data:`ROW_PRIVILEGES` the role lacks.
        owners: per table, its owner; ``owned``: the tables the role may ``ALTER`` (it owns
            them or has the privileges of their owner).
        sequences: per table, its sequences (serial ids) without ``USAGE`` (no ``INSERT``).
    """

    role: str
    schema: str | None
    usage: bool
    create: bool
    lacking: dict[str, tuple[str, ...]]
    owners: dict[str, str]
    owned: frozenset[str]
    sequences: dict[str, tuple[str, ...]]


@dataclass(frozen=True)
class Contents:
    """What a location holds (:func:`inspect`).

    Attributes:
        location: where.
        kind: ``"new"`` (no file yet), ``"empty"``, ``"results"`` (this program's store),
            ``"optuna"`` (an Optuna storage), ``"damaged"`` (one of these whose version
            cell is not a number) or ``"foreign"`` (anything else).
        tables: its tables; ``views``: its views.
        schema_version: the newest row's schema version of a results store (``None``: no rows).
        optuna_version: the Optuna version that made an Optuna storage; ``optuna_revision``:
            its schema revision (Optuna's alembic revision); ``None`` while another process's
            Optuna is still creating it; ``optuna_schema``: the schema number its
            ``version_info`` row holds (a newer Optuna writes a larger one).
        writable: whether this process may write there (file and folder permissions; on a
            server the session's privileges, a read-only or standby server).
        problem: why a ``"foreign"`` location is not what it looks like (a view, a table
            without our columns), or what is damaged; or ``None``.
        columns: the columns of a results store's or an Optuna storage's tables (what an
            open would add to them; whether they are Optuna's).
        grants: what the session's role may do there (a server database; ``None`` for a file).
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
        target: a file path, ``sqlite:///file`` or a server URL (:func:`locations.parse`).
        what: what the location is meant for, named in an error (``"results store"``).
        wait: seconds to wait for a SQLite file another process holds locked
            (:func:`wait_unlocked`; ``None``: ``DROPEDGE_LOCK_WAIT``), announced through
            ``notify`` (``None``: a ``note:`` line on stderr).

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
            grants = _server_grants(conn)
            contents = _contents(conn, location, _server_writable(conn, grants), grants)
            tx.rollback()
            return contents
    except SQLAlchemyError as exc:
        raise DatabaseError(f"cannot use the {what} {location.display!r}: {error_line(exc)}") from None
    finally:
        engine.dispose()


def _server_writable(conn: sa.Connection, grants: Grants) -> bool:
    """Not a standby, not read-only by default, and allowed to create tables or to write
    every one there is (:func:`missing_privilege` says what a given use lacks)."""
    standby, read_only = conn.exec_driver_sql(
        "SELECT pg_is_in_recovery(), current_setting('default_transaction_read_only') = 'on'").one()
    write = bool(grants.lacking) and not any(grants.lacking.values())
    return bool(not standby and not read_only and grants.usage and (grants.create or write))


def _server_grants(conn: sa.Connection) -> Grants:
    """The role's privileges in the current schema, from the catalog only. Each privilege is
    asked alone: ``has_table_privilege(t, 'INSERT,UPDATE')`` is true when *any* is held."""
    role, schema, usage, create = conn.exec_driver_sql(
        "SELECT current_user, current_schema(), has_schema_privilege(current_schema(), 'USAGE'), "
        "has_schema_privilege(current_schema(), 'CREATE')").one()
    asks = ", ".join(f"has_table_privilege(c.oid, '{p}')" for p in ROW_PRIVILEGES)
    tables = conn.exec_driver_sql(
        f"SELECT c.relname, pg_get_userbyid(c.relowner), pg_has_role(c.relowner, 'USAGE'), {asks} "
        "FROM pg_class c WHERE c.relnamespace = to_regnamespace(current_schema()) "
        "AND c.relkind IN ('r', 'p')").all()
    sequences: dict[str, tuple[str, ...]] = {}
    for table, sequence in conn.exec_driver_sql(  # serial and identity columns' sequences
            "SELECT t.relname, s.relname FROM pg_class s JOIN pg_depend d ON d.objid = s.oid "
            "AND d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass "
            "JOIN pg_class t ON t.oid = d.refobjid WHERE s.relkind = 'S' "
            "AND t.relnamespace = to_regnamespace(current_schema()) "
            "AND CASE WHEN s.relkind = 'S' THEN NOT has_sequence_privilege(s.oid, 'USAGE') END "
            "ORDER BY 1, 2").all():  # CASE: the planner may ask before it filters on relkind
        sequences[table] = (*sequences.get(table, ()), sequence)
    lacking = {t[0]: tuple(p for p, held in zip(ROW_PRIVILEGES, t[3:]) if not held) for t in tables}
    return Grants(role=role, schema=schema, usage=bool(usage), create=bool(create), lacking=lacking,
                  owners={t[0]: t[1] for t in tables}, owned=frozenset(t[0] for t in tables if t[2]),
                  sequences=sequences)


def missing_privilege(contents: Contents, tables: tuple[str, ...] | list[str],
                      alter: tuple[str, ...] | list[str] = ()) -> str | None:
    """What the role lacks to use a server database as a store that keeps ``tables``
    (created when missing: ``CREATE`` on the schema) and adds columns to those in ``alter``
    (ownership); the tables there need :data:`ROW_PRIVILEGES` (and ``USAGE`` on their
    sequences). ``None`` when nothing is lacking, and for a file (its mode says).

    Example: ``"CREATE on schema 'public' (to create the tables claims, runs)"``.
    """
    grants = contents.grants
    if grants is None:
        return None
    if grants.schema is None:
        return "a schema to create tables in (the search_path names none that exists)"
    if not grants.usage:
        return f"USAGE on schema {grants.schema!r}"
    absent = sorted(set(tables) - set(contents.tables))
    if absent and not grants.create:
        shown = ", ".join(absent[:4]) + (f", ... ({len(absent)} tables)" if len(absent) > 4 else "")
        return f"CREATE on schema {grants.schema!r} (to create the tables {shown})"
    unowned = sorted(set(alter) - grants.owned)
    if unowned:
        return (f"ownership of table {unowned[0]!r} (owned by {grants.owners.get(unowned[0])!r}; an "
                "upgrade adds columns to it)")
    for table in sorted(set(tables) & set(grants.lacking)):
        if grants.lacking[table]:
            return f"{', '.join(grants.lacking[table])} on table {table!r}"
        if grants.sequences.get(table):
            return f"USAGE on sequence {grants.sequences[table][0]!r} (ids of table {table!r})"
    return None


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


def same_place(a: str | Path | Location, b: str | Path | Location) -> bool:
    """Whether two locations are one database (one file, or one server database)."""
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
    """The file of a SQLite location; ``None`` for a server (:func:`locations.parse`)."""
    return parse(target).file


def server_engine(url: URL, pool_size: int = 2) -> Engine:
    """An engine on a server: connections checked before use (a restarted server or a
    dropped connection is reconnected, not an error), a bounded connect wait."""
    args = {"connect_timeout": CONNECT_TIMEOUT} if url.get_backend_name() == "postgresql" else {}
    return sa.create_engine(url, pool_pre_ping=True, pool_size=pool_size, max_overflow=4, connect_args=args)


def error_line(exc: BaseException) -> str:
    """The first meaningful line of a driver's error (psycopg puts details on later lines)."""
    orig = getattr(exc, "orig", None) or exc
    lines = [line.strip() for line in str(orig).splitlines() if line.strip()]
    return lines[0] if lines else type(orig).__name__


__all__ = ["CLAIMS_MARKERS", "CONNECT_TIMEOUT", "Contents", "DatabaseError", "Grants", "LOCK_PAUSE",
           "LOCK_TRY", "LOCK_WAIT", "LockedError", "OPTUNA_MARKERS", "POSTGRES_SCHEMES", "RESULTS_MARKERS",
           "RESULTS_TABLES", "ROW_PRIVILEGES", "SQLITE_HEADER", "display", "error_line", "inspect",
           "io_problem", "is_locked", "is_url", "lock_holders", "missing_privilege", "note", "same_place",
           "server_engine", "space_problem", "sqlite_path", "wait_unlocked"]
