"""A tuning study whose SQLite storage another program holds locked: said, never a silent wait.

Optuna's own connections waited SQLite's 60 s timeout in silence, then gave a traceback
(exit 1). Through :func:`dropedge_explorer._sqlite_locks.patient_connect` a ``note:`` line names
the storage, the holding process and the bound (``DROPEDGE_LOCK_WAIT``) within SQLite's
first try; then the study goes on once the lock is gone, or stops with one ``error:`` line
(exit 2). The holder is a real process holding the write lock (``BEGIN IMMEDIATE``: readers
still pass, so the storage's check before Optuna opens it does not see the lock; Optuna's
first write does).
"""
from __future__ import annotations

import subprocess

import optuna
import pytest

from tests.helpers.runs import cli_with_lock_wait, lock_holder

TUNE = ["tune", "--dataset", "karate", "--layers", "2", "--trials", "1", "--study", "s", "--search",
        "random", "--no-pruning", "--epochs", "2", "--hidden", "8", "--diag-every", "0", "--threads", "1",
        "--no-progress"]


@pytest.fixture
def storage(tmp_path):
    """An Optuna storage of this Optuna with the study in it and no trials."""
    path = tmp_path / "study.sqlite"
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    optuna.create_study(study_name="s", storage=f"sqlite:///{path}", direction="maximize")
    return path


def _tune(path, wait: str) -> subprocess.Popen:
    return cli_with_lock_wait([*TUNE, "--storage", str(path)], wait)


def _trials(path) -> int:
    return len(optuna.load_study(study_name="s", storage=f"sqlite:///{path}").get_trials())


def test_a_study_on_a_locked_storage_says_who_holds_it_then_stops_in_one_line(storage):
    holder = lock_holder(storage, "IMMEDIATE")
    try:
        tune = _tune(storage, "1")
        out, err = tune.communicate(timeout=300)
    finally:
        holder.communicate("\n", timeout=30)
    lines = err.strip().splitlines()
    assert tune.returncode == 2 and out == "" and len(lines) == 2, err
    assert lines[0].startswith(f"note: Optuna storage {str(storage)!r} is locked by process {holder.pid} (")
    assert "waiting up to 1 s" in lines[0] and "DROPEDGE_LOCK_WAIT" in lines[0]
    assert lines[1].startswith(f"error: Optuna storage {str(storage)!r} stayed locked by process "
                               f"{holder.pid}")
    assert _trials(storage) == 0


def test_a_study_goes_on_once_the_lock_it_announced_is_released(storage):
    holder = lock_holder(storage, "IMMEDIATE")
    try:
        tune = _tune(storage, "600")
        note = tune.stderr.readline()  # blocks until the study says something: the note comes first
        assert note.startswith(f"note: Optuna storage {str(storage)!r} is locked by process {holder.pid}")
        assert "waiting up to 600 s" in note
    finally:
        holder.communicate("\n", timeout=30)
    out, err = tune.communicate(timeout=300)
    assert tune.returncode == 0 and "1 complete" in out, err
    assert _trials(storage) == 1
