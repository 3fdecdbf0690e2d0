"""Refusals that name what they refuse (issue 38, item 4): a keep rate by its own name, a
damaged row by its store and key, a file-size limit as a limit (not as a damaged store),
and a message that survives an ASCII-only output. Each is exit 2 and one line, and the
store's bytes are unchanged (SHA-256 before and after)."""
from __future__ import annotations

import hashlib
import os
import resource
import sqlite3
import subprocess
import sys

from dropedge_explorer.store import ResultStore
from tests.helpers import REPO
from tests.helpers.runs import fake_result, refused_line

SWEEP = ["sweep", "--dataset", "karate", "--samplers", "nodrop", "--layers", "2", "--epochs", "2",
         "--hidden", "8", "--diag-every", "0", "--no-progress"]


def _sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _store(path):
    store = ResultStore(path)
    key = store.put(fake_result(0))
    store.close()
    return path, key


def _module(*argv, env=None, limit_bytes=None) -> subprocess.CompletedProcess:
    def limit():
        if limit_bytes is not None:
            hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, hard))

    return subprocess.run([sys.executable, "-m", "dropedge_core", *argv], cwd=REPO, capture_output=True,
                          text=True, timeout=300, env={**os.environ, **(env or {})}, preexec_fn=limit)


def test_a_keep_rate_p_is_named_p_not_p_min(capsys):
    for value in ("inf", "nan", "1.5"):
        line = refused_line(capsys, "men", "--dataset", "karate", "--samplers", "dropedge", "--layers", "2",
                            "--p", value)
        assert line == f"error: p must be a keep rate in [0, 1] (got {float(value)!r})"


def test_a_damaged_row_names_its_store_and_run(tmp_path, capsys):
    path, key = _store(tmp_path / "results.sqlite")
    with sqlite3.connect(path) as db:  # an old row (upgraded on open) whose config is not JSON
        db.execute("UPDATE runs SET schema_version = 1, config_json = '{'")
    db.close()
    before = _sha(path)
    line = refused_line(capsys, *SWEEP, "--store", path)
    assert line.startswith(f"error: results store {str(path)!r} is damaged: its run {key!r} has a "
                           "config_json")
    assert "nothing was changed" in line and _sha(path) == before


def test_a_file_size_limit_is_named_as_one_not_as_damage(tmp_path):
    path, _ = _store(tmp_path / "results.sqlite")
    before = _sha(path)
    for _ in range(2):  # the first leaves SQLite's -wal/-shm files; the second opens beside them
        proc = _module(*SWEEP, "--seeds", "5", "--store", str(path), limit_bytes=16 * 1024)
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 2 and len(lines) == 1, proc.stderr
        assert lines[0].startswith(f"error: results store {str(path)!r} cannot be")
        assert "file-size limit (ulimit -f) is 16 KiB" in lines[0] and "damaged" not in lines[0]
        assert _sha(path) == before


def test_output_and_messages_survive_an_ascii_only_terminal(tmp_path):
    env = {"PYTHONIOENCODING": "ascii"}
    proc = _module("train", "--dataset", "karate", "--layers", "2", "--epochs", "2", "--seeds", "0", "1",
                   "--no-progress", env=env)
    assert proc.returncode == 0, proc.stderr
    assert "mean test accuracy" in proc.stdout and "\\xb1" in proc.stdout
    folder = tmp_path / "r\u00e9sultats.sqlite"
    folder.mkdir()
    proc = _module(*SWEEP, "--store", str(folder), env=env)
    assert proc.returncode == 2 and proc.stderr.startswith("error: results store"), proc.stderr
    assert "is a directory" in proc.stderr and "codec" not in proc.stderr
