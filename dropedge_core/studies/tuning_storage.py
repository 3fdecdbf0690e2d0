"""Where a tuning study lives: an Optuna storage, checked before Optuna touches it.

A bare path means a SQLite file (``results/tuning.sqlite`` by default); a PostgreSQL or
MySQL URL lets workers on many machines share one study. :func:`check_storage` admits a
new, empty or Optuna database only (never the results store, another program's tables,
a read-only file or random bytes) and writes nothing when it refuses; :func:`open_study`
creates or joins a study, retrying the races of workers that start together.
"""
from __future__ import annotations

import os
import re
import sqlite3
import time
import warnings
from pathlib import Path

import optuna
import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from dropedge_core import databases, paths
from dropedge_core.studies.tuning_space import TuningError, make_sampler

#: Tables every Optuna RDB storage has: how an existing database is recognised as one.
OPTUNA_MARKERS = ("studies", "version_info")
_SQLITE_HEADER = b"SQLite format 3\x00"


def storage_url(storage: str | None) -> str:
    """The storage as a URL, without looking at it: a bare file path means SQLite at that
    path; ``postgresql://`` means psycopg 3 (``postgresql+psycopg://``)."""
    target = str(storage or paths.tuning_storage()).strip()
    if not databases.is_url(target):
        return f"sqlite:///{target}"
    scheme, rest = target.split("://", 1)
    return f"{databases.POSTGRES_SCHEMES.get(scheme.lower(), scheme)}://{rest}"


def _refuse_tables(tables: set[str], where: str, runs_columns: set[str]) -> None:
    """An existing database must be empty or an Optuna storage (never our results store,
    recognised by the columns of its ``runs`` table)."""
    from dropedge_core.store import MARKER_COLUMNS, TABLE

    if not tables or (set(OPTUNA_MARKERS) <= tables and TABLE not in tables):
        return
    if TABLE in tables and set(MARKER_COLUMNS) <= runs_columns:
        raise TuningError(f"{where} is the DropEdge results store, not an Optuna storage; give the study "
                          "its own file or database; nothing was written")
    shown = ", ".join(sorted(tables)[:6]) + (", ..." if len(tables) > 6 else "")
    raise TuningError(f"{where} is another program's database (tables: {shown}), not an Optuna storage; "
                      "give a new file or an empty database; nothing was written")


def _check_sqlite(path: Path) -> None:
    where = repr(str(path))
    if path.exists():
        if path.is_dir():
            raise TuningError(f"Optuna storage {where} is a directory; give a file, "
                              f"e.g. {path / 'tuning.sqlite'}")
        if not path.is_file():
            raise TuningError(f"Optuna storage {where} is not a regular file (a device or a pipe); "
                              "give a SQLite file")
        if not os.access(path, os.R_OK | os.W_OK):
            raise TuningError(f"Optuna storage {where} is read-only (trials are written to it); "
                              "give a writable file")
        if path.stat().st_size == 0:
            return  # an empty file is an empty SQLite database
        with open(path, "rb") as fh:
            head = fh.read(len(_SQLITE_HEADER))
        if head != _SQLITE_HEADER:
            raise TuningError(f"Optuna storage {where} is not a SQLite database (it does not begin with "
                              "'SQLite format 3'); give a new file or an Optuna storage; nothing was written")
        try:  # only read (not mode=ro: a read-only reader of a WAL file leaves -wal/-shm files behind)
            conn = sqlite3.connect(str(path), timeout=30)
            try:
                tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                                     "AND name NOT LIKE 'sqlite_%'")}
                runs = {r[1] for r in conn.execute("PRAGMA table_info(runs)")}
            finally:
                conn.close()
        except sqlite3.Error as exc:
            raise TuningError(f"Optuna storage {where} cannot be read ({exc}): damaged or not a database; "
                              "nothing was written") from None
        _refuse_tables(tables, f"Optuna storage {where}", runs)
        return
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise TuningError(f"cannot create the Optuna storage {where}: {str(parent)!r} is not a "
                          "writable folder")


#: Seconds between a running trial's signs of life in the storage (Optuna's option).
ALIVE_EVERY = 10
#: Seconds of silence after which a running trial's worker counts as dead.
GRACE_PERIOD = 60


def check_storage(storage: str | None, create_folder: bool = True) -> str:
    """Check an Optuna storage before Optuna touches it; return its URL.

    A SQLite file must be new, empty or already an Optuna storage (not a directory, a
    device, a read-only file, another program's database, random bytes or text, nor the
    results store); a server URL must name a known scheme whose driver is installed, a
    server that answers, and an empty database or an Optuna storage. Anything else is
    one :class:`TuningError` line, and nothing is written. With ``create_folder``, makes the
    folder of a new SQLite file once the check passed.
    """
    url = storage_url(storage)
    try:
        file = databases.sqlite_path(url)
        if file is None:
            server = databases.server_url(url)
    except databases.DatabaseError as exc:
        raise TuningError(f"Optuna storage: {exc}") from None
    if file is not None:
        if str(file) == ":memory:":
            return url
        _check_sqlite(file)
        if create_folder:
            file.parent.mkdir(parents=True, exist_ok=True)
        return url
    where = repr(databases.display(server))
    engine = databases.server_engine(server, pool_size=1)
    try:
        with engine.connect() as conn:
            inspector = sa.inspect(conn)
            tables = set(inspector.get_table_names())
            runs = {c["name"] for c in inspector.get_columns("runs")} if "runs" in tables else set()
    except SQLAlchemyError as exc:
        raise TuningError(f"cannot use the Optuna storage {where}: {databases.error_line(exc)}") from None
    finally:
        engine.dispose()
    _refuse_tables(tables, f"Optuna storage {where}", runs)
    return server.render_as_string(hide_password=False)


def resolve_storage(storage: str | None) -> str:
    """:func:`check_storage` (kept under its old name)."""
    return check_storage(storage)


def open_study(study_name: str, storage: str | None = None, search: str = "tpe",
               seed: int | None = None, pruner: bool = True) -> optuna.Study:
    """Create the study, or join it when another worker already created it.

    The storage is checked first (:func:`check_storage`). Workers starting at the same
    moment race to create the storage's tables or the study; the loser gets an integrity
    error, "already exists" or "locked", and tries again (the tables then exist). Any
    other database error is one :class:`TuningError` line at once.
    """
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    url = check_storage(storage)
    where = repr(databases.display(url))
    cannot = f"cannot open the Optuna storage {where}"
    sampler = make_sampler(search, seed)
    for attempt in range(6):
        try:
            with warnings.catch_warnings():  # Optuna marks this option experimental
                warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
                # a running trial says it is alive every ALIVE_EVERY s; one silent for
                # GRACE_PERIOD s (its worker was killed) is failed by the next worker that
                # looks, and stops counting toward a budget (trial_budget)
                rdb = optuna.storages.RDBStorage(
                    url, engine_kwargs={"connect_args": {"timeout": 60}} if url.startswith("sqlite") else {},
                    heartbeat_interval=ALIVE_EVERY, grace_period=GRACE_PERIOD)
            return optuna.create_study(
                study_name=study_name, storage=rdb, direction="maximize", sampler=sampler,
                pruner=optuna.pruners.MedianPruner(n_startup_trials=3, n_warmup_steps=20) if pruner
                else optuna.pruners.NopPruner(),
                load_if_exists=True)
        except (IntegrityError, optuna.exceptions.DuplicatedStudyError) as exc:
            error = exc  # another worker created it a moment ago
        except SQLAlchemyError as exc:
            # two workers creating Optuna's tables at once: the loser sees "already exists"
            # (a table, or on PostgreSQL an enum type: ProgrammingError) or "locked" (SQLite)
            if not re.search(r"already exists|locked", str(exc)):
                raise TuningError(f"{cannot}: {databases.error_line(exc)}") from None
            error = exc
        time.sleep(0.2 * (attempt + 1))
    raise TuningError(f"{cannot}: {databases.error_line(error)}")



__all__ = ["OPTUNA_MARKERS", "check_storage", "open_study", "resolve_storage", "storage_url"]
