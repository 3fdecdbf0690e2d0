"""A SQLite store another program holds locked (issue 38, item 3): never a silent wait.

Within a try of SQLite's own (two seconds) a ``note:`` line names the file, the process
that holds it (``/proc/locks``) and the bound (``DROPEDGE_LOCK_WAIT``); then the work goes
on once the lock is gone, or stops with one ``error:`` line (exit 2). The holder is a real
process with ``BEGIN EXCLUSIVE``; the waits of :func:`wait_unlocked` are checked on a
clock passed in (no time is asserted).
"""
from __future__ import annotations

import sqlite3
import subprocess

import pytest

from dropedge_explorer import databases
from dropedge_explorer.store import ResultStore
from tests.helpers.runs import cli_with_lock_wait, lock_holder

SWEEP = ["sweep", "--dataset", "karate", "--samplers", "nodrop", "--layers", "2", "--epochs", "2",
         "--hidden", "8", "--diag-every", "0", "--no-progress"]


def _locked() -> sqlite3.OperationalError:
    return sqlite3.OperationalError("database is locked")


class Clock:
    """Time that moves only when the code under test sleeps."""

    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_a_wait_is_announced_once_then_goes_on_or_stops_at_its_bound(tmp_path):
    clock, lines, tries = Clock(), [], []

    def attempt(free_after: int):
        tries.append(1)
        if len(tries) <= free_after:
            raise _locked()
        return "done"

    kw = dict(file=tmp_path / "r.sqlite", what="results store", wait=5.0, notify=lines.append,
              clock=clock, sleep=clock.sleep)
    assert databases.wait_unlocked(lambda: attempt(3), **kw) == "done"
    assert len(lines) == 1 and "r.sqlite' is locked by another process; waiting up to 5 s" in lines[0]
    tries.clear()
    with pytest.raises(databases.LockedError, match=r"r.sqlite' stayed locked by another process for 5 s"):
        databases.wait_unlocked(lambda: attempt(10**6), **kw)
    assert len(lines) == 2 and clock.now >= 5.0
    with pytest.raises(sqlite3.OperationalError, match="disk I/O"):  # not a lock: no wait at all
        databases.wait_unlocked(lambda: (_ for _ in ()).throw(sqlite3.OperationalError("disk I/O error")),
                                **kw)
    assert len(lines) == 2


def _sweep(store, wait: str) -> subprocess.Popen:
    return cli_with_lock_wait([*SWEEP, "--store", str(store)], wait)


@pytest.fixture
def store(tmp_path):
    path = tmp_path / "results.sqlite"
    ResultStore(path).close()
    return path


def test_a_sweep_on_a_locked_store_says_who_holds_it_then_stops_in_one_line(store):
    holder = lock_holder(store, "EXCLUSIVE")
    try:
        sweep = _sweep(store, "1")
        out, err = sweep.communicate(timeout=300)
    finally:
        holder.communicate("\n", timeout=30)
    lines = err.strip().splitlines()
    assert sweep.returncode == 2 and out == "" and len(lines) == 2, err
    assert lines[0].startswith(f"note: results store {str(store)!r} is locked by process {holder.pid} (")
    assert "waiting up to 1 s" in lines[0]
    assert lines[1].startswith(f"error: results store {str(store)!r} stayed locked by process {holder.pid}")
    with sqlite3.connect(store) as db:
        assert db.execute("SELECT count(*) FROM runs").fetchone() == (0,)


def test_a_sweep_goes_on_once_the_lock_it_announced_is_released(store):
    holder = lock_holder(store, "EXCLUSIVE")
    try:
        sweep = _sweep(store, "600")
        note = sweep.stderr.readline()  # blocks until the sweep says something: the note comes first
        assert note.startswith("note: ") and f"locked by process {holder.pid}" in note
        assert "waiting up to 600 s" in note
    finally:
        holder.communicate("\n", timeout=30)
    out, err = sweep.communicate(timeout=300)
    assert sweep.returncode == 0 and "1 trained here" in out, err
    with sqlite3.connect(store) as db:
        assert db.execute("SELECT count(*) FROM runs").fetchone() == (1,)


def test_the_bound_is_a_checked_variable():
    from dropedge_explorer import env

    assert env.settings({"DROPEDGE_LOCK_WAIT": "2.5"}).lock_wait == 2.5
    assert env.settings({}).lock_wait == databases.LOCK_WAIT
    for bad in ("abc", "0", "-1", "inf", "1e9"):
        with pytest.raises(env.EnvError, match=r"DROPEDGE_LOCK_WAIT must be a number in \(0, 86400\]"):
            env.settings({"DROPEDGE_LOCK_WAIT": bad})
