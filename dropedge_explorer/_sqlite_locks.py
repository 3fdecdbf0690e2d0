"""A SQLite file in use by others: the locks another process holds on it, waited for
never in silence, and the room a write beside it lacks.

:func:`wait_unlocked` runs a piece of work until it no longer meets SQLite's "database is
locked": after :data:`LOCK_TRY` seconds (SQLite's own wait inside one try) a ``note:``
line says which process holds the file (from ``/proc/locks``, :func:`lock_holders`) and
how long it will be waited for (``DROPEDGE_LOCK_WAIT``, default :data:`LOCK_WAIT` s); then
the work goes on, or stops with one :class:`LockedError` line. :func:`space_problem` says
whether a file-size limit or a full disk is why SQLite reported "disk I/O error".
Used by :mod:`dropedge_explorer.databases` (the read-only look) and the results store.
"""
from __future__ import annotations

import errno
import os
import sqlite3
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from sqlalchemy.exc import SQLAlchemyError

from dropedge_explorer._lazy import lazy_import
from dropedge_explorer.locations import LocationError

#: Seconds one store operation waits, in all, for a SQLite file another process holds
#: locked (default of ``DROPEDGE_LOCK_WAIT``).
LOCK_WAIT = 60.0
#: Seconds SQLite waits inside one try (its busy timeout): the user hears of a lock after this.
LOCK_TRY = 2.0
#: Seconds between two tries once the user was told.
LOCK_PAUSE = 0.25
#: ``OSError.errno`` of a write that found no room: a full disk or quota, a file-size limit
#: (``ulimit -f``; Python ignores ``SIGXFSZ``, so the write fails with ``EFBIG``).
NO_ROOM = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
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
        resource = lazy_import("resource")  # POSIX only
        soft = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
        if soft != resource.RLIM_INFINITY:
            size = f"{soft // 1024} KiB" if soft >= 1024 else f"{soft} bytes"
            return f"this process's file-size limit (ulimit -f) is {size}"
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
        wait = lazy_import("dropedge_explorer.env").settings_or_defaults().lock_wait
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


def patient_connect(file: Path, what: str, wait: float | None = None,
                    notify: Callable[[str], None] | None = None) -> Callable[[], sqlite3.Connection]:
    """A connect function (SQLAlchemy's ``creator``) for a SQLite file used by code that
    is not ours (Optuna): every statement and commit of its connections goes through
    :func:`wait_unlocked`, so a lock another process holds is announced after
    :data:`LOCK_TRY` seconds and waited for at most ``wait`` seconds in all (``None``:
    ``DROPEDGE_LOCK_WAIT``), then one :class:`LockedError` line -- where SQLite alone would
    wait its timeout in silence and the library turn its error into a traceback.

    A statement that met a lock did not run (SQLite's "busy"), so trying it again is the
    same statement; the transaction it is part of stays open.
    """
    def waited(work: Callable[[], T]) -> T:
        return wait_unlocked(work, file, what, wait, notify)

    class Cursor(sqlite3.Cursor):
        def execute(self, sql, parameters=()):
            return waited(lambda: sqlite3.Cursor.execute(self, sql, parameters))

        def executemany(self, sql, seq_of_parameters):
            rows = list(seq_of_parameters)  # an iterator would be spent by a first, locked try
            return waited(lambda: sqlite3.Cursor.executemany(self, sql, rows))

    class Connection(sqlite3.Connection):
        def cursor(self, factory=Cursor):
            return super().cursor(factory)

        def execute(self, sql, parameters=()):
            return self.cursor().execute(sql, parameters)

        def commit(self):
            waited(lambda: sqlite3.Connection.commit(self))

    def connect() -> sqlite3.Connection:
        # check_same_thread off: the pool hands a connection to one thread at a time
        # (Optuna signs a running trial's life from a thread of its own)
        return sqlite3.connect(str(file), timeout=LOCK_TRY, factory=Connection, check_same_thread=False)

    return connect


