"""The store types its own errors (``store.connection.error_kind``): real SQLite errors,
raised by SQLite itself on real files, each matched to what a caller may do about it —
wait (:class:`StoreUnavailable`: locked, read-only or not openable for now) or not
(:class:`ForeignStore`, :class:`DamagedStore`, a plain :class:`StoreError`)."""
from __future__ import annotations

import sqlite3

import pytest
import sqlalchemy as sa

from dropedge_explorer.store import DamagedStore, ForeignStore, StoreError, StoreLocked, StoreUnavailable
from dropedge_explorer.store._connection import error_kind, store_error


def _raised(work) -> BaseException:
    with pytest.raises(sqlite3.Error) as info:
        work()
    return info.value


def test_sqlite_errors_are_typed_by_what_may_pass(tmp_path):
    path = tmp_path / "a.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE runs (key TEXT PRIMARY KEY)")
    holder = sqlite3.connect(path, isolation_level=None, timeout=0)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        locked = _raised(lambda: sqlite3.connect(path, timeout=0).execute("SELECT * FROM runs").fetchall())
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    readonly = _raised(lambda: sqlite3.connect(f"file:{path}?mode=ro", uri=True)
                       .execute("INSERT INTO runs VALUES ('k')"))
    unopenable = _raised(lambda: sqlite3.connect(tmp_path / "no" / "such" / "folder.sqlite"))
    foreign = _raised(lambda: sqlite3.connect(path).execute("INSERT INTO runs (config) VALUES ('{}')"))
    missing = _raised(lambda: sqlite3.connect(path).execute("SELECT * FROM claims"))
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"not a database at all, " * 100)
    damaged = _raised(lambda: sqlite3.connect(garbage).execute("SELECT * FROM runs"))
    twice = [("k",), ("k",)]
    constraint = _raised(lambda: sqlite3.connect(path).executemany("INSERT INTO runs VALUES (?)", twice))
    kinds = {name: error_kind(exc, is_server=False) for name, exc in [
        ("locked", locked), ("readonly", readonly), ("unopenable", unopenable), ("foreign", foreign),
        ("missing", missing), ("damaged", damaged), ("constraint", constraint)]}
    assert kinds == {"locked": StoreLocked, "readonly": StoreUnavailable, "unopenable": StoreUnavailable,
                     "foreign": ForeignStore, "missing": ForeignStore, "damaged": DamagedStore,
                     "constraint": StoreError}
    # SQLAlchemy's wrapper is seen through; the typed error keeps the driver's line
    wrapped = sa.exc.OperationalError("SELECT", {}, locked)
    error = store_error(wrapped, "a.sqlite", is_server=False)
    assert type(error) is StoreLocked and "database is locked" in str(error)


def test_a_servers_operational_errors_may_pass_and_its_others_do_not():
    refused = sa.exc.OperationalError("connect", {}, Exception("connection refused"))
    denied = sa.exc.ProgrammingError("INSERT", {}, Exception("permission denied for table runs"))
    assert error_kind(refused, is_server=True) is StoreUnavailable
    assert error_kind(denied, is_server=True) is StoreError
