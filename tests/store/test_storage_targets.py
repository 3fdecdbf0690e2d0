"""Hostile database targets (ROBUSTNESS 15.2, 15.3) and claims on SQLite (15.12, issue 18).

Every refusal is one line, and a checksum of the target (and of its folder's listing)
shows that nothing was written; the Optuna storage is checked before Optuna touches it,
without its old silent retries. Claims: workers on one SQLite store split a grid, a dead
worker's claim is taken over after its lease, the app's sweep waits for runs others train.
"""
from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dropedge_explorer import cli
from dropedge_explorer.store import SCHEMA_VERSION, ResultStore, StoreError, run_key
from dropedge_explorer.studies import tuning
from dropedge_explorer.studies.tuned import load_study
from dropedge_explorer.sweep_workers import ClaimedRuns, check_lease
from dropedge_explorer.training import TrainConfig
from tests.helpers.app import _ok
from tests.helpers.runs import fake_result


def _fingerprint(path: Path) -> tuple:
    """The file's SHA-256 and its folder's listing: nothing written, nothing created beside it."""
    digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None
    return digest, sorted(p.name for p in path.parent.iterdir())


def _run(capsys, *argv) -> tuple[int, str, str]:
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


def _foreign_db(path: Path, runs_table: bool = True) -> Path:
    """Another program's SQLite database (a ``runs`` table of its own, or other tables)."""
    with sqlite3.connect(path) as conn:
        if runs_table:
            conn.execute("CREATE TABLE runs (id INTEGER PRIMARY KEY, athlete TEXT, km REAL)")
            conn.executemany("INSERT INTO runs (athlete, km) VALUES (?, ?)", [("ana", 5.2), ("bo", 10.0)])
        else:
            conn.execute("CREATE TABLE shoes (id INTEGER PRIMARY KEY, brand TEXT)")
    conn.close()
    return path


def _damaged_store(path: Path) -> Path:
    """A results store with rows whose pages after the first are overwritten midway."""
    store = ResultStore(path)
    for seed in range(30):
        store.put(fake_result(seed))
    store.close()
    with sqlite3.connect(path) as conn:  # fold the WAL in, so the damage hits the rows
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("PRAGMA journal_mode = DELETE")
    conn.close()
    data = bytearray(path.read_bytes())
    page = 4096
    assert len(data) > 4 * page
    data[page: len(data) - page] = bytes([0xA5]) * (len(data) - 2 * page)
    path.write_bytes(bytes(data))
    return path


SWEEP = ["sweep", "--dataset", "karate", "--samplers", "nodrop", "--layers", "2", "--epochs", "3",
         "--hidden", "8", "--diag-every", "0", "--json", "--no-progress"]


# ----------------------------------------------------------------------------- 15.3
def test_foreign_database_is_refused_and_left_untouched(tmp_path, capsys):
    for name, with_runs in (("other.sqlite", True), ("optuna-like.sqlite", False)):
        path = _foreign_db(tmp_path / name, runs_table=with_runs)
        before = _fingerprint(path)
        with pytest.raises(StoreError, match="is not a DropEdge results store") as info:
            ResultStore(path)
        assert "nothing was changed" in str(info.value) and "\n" not in str(info.value)
        code, out, err = _run(capsys, *SWEEP, "--store", path)
        assert code == 2 and out == ""
        line = _one_line(err)
        assert name in line and ("lacks key" in line if with_runs else "(tables: shoes)" in line)
        assert _fingerprint(path) == before
    with sqlite3.connect(tmp_path / "other.sqlite") as conn:  # its rows and columns as they were
        assert conn.execute("SELECT athlete, km FROM runs").fetchall() == [("ana", 5.2), ("bo", 10.0)]
        assert len(conn.execute("PRAGMA table_info(runs)").fetchall()) == 3


def test_newer_schema_and_damaged_store_are_one_line(tmp_path, capsys):
    newer = tmp_path / "newer.sqlite"
    ResultStore(newer).put(fake_result(0))
    with sqlite3.connect(newer) as conn:
        conn.execute("UPDATE runs SET schema_version = ?", (SCHEMA_VERSION + 1,))
    conn.close()
    before = _fingerprint(newer)
    with pytest.raises(StoreError, match=f"newer version .*schema {SCHEMA_VERSION + 1}"):
        ResultStore(newer)
    assert _fingerprint(newer) == before

    damaged = _damaged_store(tmp_path / "damaged.sqlite")
    with pytest.raises(StoreError, match="damaged or not a database"):
        ResultStore(damaged).to_frame()
    code, out, err = _run(capsys, *SWEEP, "--store", damaged)
    assert code == 2 and "damaged" in _one_line(err)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(min_size=1, max_size=3000) | st.text(min_size=1, max_size=500).map(str.encode))
def test_random_bytes_are_never_a_store(tmp_path, blob):
    path = tmp_path / "blob.sqlite"
    path.write_bytes(blob)
    before = _fingerprint(path)
    with pytest.raises(StoreError) as info:
        ResultStore(path).to_frame()
    assert "\n" not in str(info.value)
    assert _fingerprint(path) == before


def test_store_locations_that_are_not_files(tmp_path, capsys):
    with pytest.raises(StoreError, match="not a regular file"):
        ResultStore("/dev/null")
    with pytest.raises(StoreError, match="unknown database URL scheme 'foo://'"):
        ResultStore("foo://host/db")
    with pytest.raises(StoreError, match="mysql URLs are not supported here"):
        ResultStore("mysql://me@localhost/db")
    with pytest.raises(StoreError, match="driver for postgresql\\+psycopg2:// URLs is not installed"):
        ResultStore("postgresql+psycopg2://me@localhost/db")
    # the report: a URL once made a local folder named 'postgresql:'
    for typo in ("postgresql:/me@localhost/db", "postgres:/x"):
        code, _, err = _run(capsys, *SWEEP, "--store", typo)
        assert code == 2 and "slash missing" in _one_line(err)
    code, _, err = _run(capsys, *SWEEP, "--store", "postgresql://me@127.0.0.1:1/db")
    assert code == 2 and "Connection refused" in _one_line(err)
    assert not (Path.cwd() / "postgresql:").exists() and not (Path.cwd() / "postgres:").exists()


def test_depth_study_page_shows_a_foreign_or_damaged_store_as_one_line(tmp_path, monkeypatch):
    from tests.helpers.app import depth_page as _page

    monkeypatch.setattr("dropedge_explorer.studies.run_tables.BUNDLED_DIR", tmp_path / "bundled")
    for path, words in ((_foreign_db(tmp_path / "other.sqlite"), "is not a DropEdge results store"),
                        (_damaged_store(tmp_path / "damaged.sqlite"), "damaged")):
        before = _fingerprint(path)
        monkeypatch.setenv("DROPEDGE_RESULTS", str(path))
        at = _page(depths=(2,), seeds=1)
        _ok(at)
        assert any("cannot be opened" in c.value and words in c.value for c in at.caption)
        assert at.error and words in at.error[0].value and "\n" not in at.error[0].value
        assert at.button(key="ds_run").disabled
        assert _fingerprint(path) == before


# ----------------------------------------------------------------------------- 15.2
def _hostile_storages(tmp_path: Path) -> dict[str, tuple[str, str]]:
    """name -> (storage argument, words of the refusal)."""
    folder = tmp_path / "a-folder"
    folder.mkdir()
    (tmp_path / "random.sqlite").write_bytes(bytes(range(256)) * 8)
    (tmp_path / "notes.txt").write_text("not a database\n" * 20)
    read_only = tmp_path / "read-only"
    read_only.mkdir(mode=0o500)
    store = tmp_path / "results.sqlite"
    ResultStore(store).put(fake_result(0))
    ResultStore(store).close()
    return {
        "directory": (str(folder), "is a directory"),
        "device": ("/dev/null", "not a regular file"),
        "unknown scheme": ("foo://host/db", "unknown database URL scheme 'foo://'"),
        "missing driver": ("mysql://me@localhost/optuna", "driver for mysql:// URLs is not installed"),
        "missing driver 2": ("postgresql+psycopg2://me@localhost/optuna", "is not installed"),
        "refusing server": ("postgresql://me@127.0.0.1:1/optuna", "Connection refused"),
        "random bytes": (str(tmp_path / "random.sqlite"), "not a SQLite database"),
        "text file": (f"sqlite:///{tmp_path / 'notes.txt'}", "not a SQLite database"),
        "foreign db": (str(_foreign_db(tmp_path / "other.sqlite")), "another program's database"),
        "results store": (str(store), "is the DropEdge results store"),
        "under a file": (str(tmp_path / "notes.txt" / "t.sqlite"), "not a writable folder"),
        **({"read-only folder": (str(read_only / "t.sqlite"), "not a writable folder")}
           if not os.access(read_only, os.W_OK) else {}),  # root may write anywhere
    }


def test_optuna_storage_is_checked_before_optuna_touches_it(tmp_path, capsys):
    cases = _hostile_storages(tmp_path)
    prints = {p: _fingerprint(p) for p in tmp_path.iterdir() if p.is_file()}
    for name, (storage, words) in cases.items():
        started = time.monotonic()
        with pytest.raises(tuning.TuningError, match=words):
            tuning.check_storage(storage)
        with pytest.raises(tuning.TuningError, match=words):
            load_study("dropedge", storage)  # what the Tuning page does on opening
        with pytest.raises(tuning.TuningError, match=words):
            tuning.open_study("dropedge", storage)
        code, out, err = _run(capsys, "tune", "--dataset", "karate", "--trials", "1", "--epochs", "2",
                              "--storage", storage, "--no-progress")
        assert code == 2 and out == "", name
        assert words in _one_line(err), name
        assert time.monotonic() - started < 4, f"{name}: no silent retries (they took 9-13 s)"
    assert {p: _fingerprint(p) for p in tmp_path.iterdir() if p.is_file()} == prints
    assert not (tmp_path / "read-only" / "t.sqlite").exists()
    # the good ones: new, empty, an Optuna storage; reading a new one creates nothing
    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    assert load_study("x", str(empty)) is None and empty.stat().st_size == 0
    new = tmp_path / "sub" / "new.sqlite"
    assert load_study("x", str(new)) is None and not new.parent.exists()
    assert tuning.check_storage(str(new)) == f"sqlite:///{new}" and new.parent.is_dir()
    study = tuning.open_study("s", str(new))
    assert tuning.check_storage(f"sqlite:///{new}")
    assert load_study("s", str(new)).study_name == study.study_name


def test_tuning_page_refuses_a_foreign_storage(tmp_path, monkeypatch):
    from tests.helpers.app import _app

    path = _foreign_db(tmp_path / "other.sqlite")
    before = _fingerprint(path)
    monkeypatch.setenv("DROPEDGE_TUNING_STORAGE", str(path))
    at = _app()
    at.switch_page("app_pages/tuning.py").run()
    _ok(at)
    assert at.error and "another program's database" in at.error[0].value
    at.button(key="tune_start").click().run()
    _ok(at)
    assert any("Cannot start the study" in e.value and "another program's" in e.value for e in at.error)
    assert _fingerprint(path) == before


# ----------------------------------------------------------------------------- claims (SQLite)
def _configs(n: int) -> list[TrainConfig]:
    return [TrainConfig(dataset="karate", num_layers=2, sampler="nodrop", epochs=3, seed=s) for s in range(n)]


def test_claims_are_exclusive_expire_and_go_with_the_stored_run(tmp_path, monkeypatch):
    store = ResultStore(tmp_path / "r.sqlite")
    now = [1e9]
    monkeypatch.setattr(store, "_now", lambda conn: now[0])  # the claims' clock, faked
    key = run_key(_configs(1)[0])
    assert store.claim(key, "a", lease=60) and not store.claim(key, "b", lease=60)
    assert store.claim(key, "a", lease=60)  # its own claim: renewed
    assert store.renew(key, "a", 60) and not store.renew(key, "b", 60)
    assert store.claim("other", "b", lease=1) and not store.claim("other", "a", lease=60)
    now[0] += 0.9
    assert not store.claim("other", "a", lease=60)  # b's lease still holds
    now[0] += 0.2
    assert store.claim("other", "a", lease=60)  # b died: its claim expired and is taken over
    assert not store.renew("other", "b", 60)
    store.put(fake_result(0, num_layers=2, sampler="nodrop", epochs=3))
    assert [c["key"] for c in store.claims()] == ["other"]  # the stored run's claim went with it
    assert not store.claim(key, "c", lease=60)  # stored: nobody trains it again
    store.release("other", "a")
    assert store.claims() == []
    for bad in (0, -1, float("nan"), "x", 10**9):
        with pytest.raises(ValueError, match="lease must be"):
            check_lease(bad)


def test_two_workers_in_threads_split_a_sqlite_grid(tmp_path):
    store = ResultStore(tmp_path / "r.sqlite")
    configs = _configs(12)
    trained: list[list[str]] = [[], []]
    both_claimed = threading.Barrier(2, timeout=60)

    def work(i: int) -> None:
        runs = ClaimedRuns(ResultStore(tmp_path / "r.sqlite"), configs, owner=f"w{i}", lease=30)
        for n, claim in enumerate(runs):
            if n == 0:  # each holds a claim before either trains: both get work, whoever is faster
                both_claimed.wait()
            trained[i].append(claim.key)
            runs.store.put(fake_result(claim.config.seed, num_layers=2, sampler="nodrop", epochs=3))
            runs.stored(claim)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert all(trained) and not set(trained[0]) & set(trained[1])
    assert sorted(trained[0] + trained[1]) == sorted(run_key(c) for c in configs) and len(store) == 12
    assert store.claims() == []


def test_cli_sweep_trains_only_what_is_neither_stored_nor_claimed(tmp_path, capsys):
    """15.12: a second identical sweep on one store trains nothing; a run another live
    worker holds is left to it until its lease runs out."""
    path = tmp_path / "r.sqlite"
    code, out, _ = _run(capsys, *SWEEP, "--seeds", "0", "1", "--store", path)
    first = json.loads(out)
    assert code == 0 and first["ran"] == 2 and len(first["ran_keys"]) == 2
    code, out, _ = _run(capsys, *SWEEP, "--seeds", "0", "1", "--store", path)
    assert json.loads(out)["ran"] == 0 and json.loads(out)["skipped"] == 2
    store = ResultStore(path)
    config = cli.sweep_grid(cli.build_parser().parse_args(SWEEP + ["--seeds", "2"]))[0]
    assert store.claim(config, "dead-worker", lease=1)
    started = time.monotonic()
    code, out, _ = _run(capsys, *SWEEP, "--seeds", "0", "1", "2", "--store", path, "--lease", "5")
    report = json.loads(out)
    assert code == 0 and report["ran_keys"] == [run_key(config)] and report["skipped"] == 2
    assert time.monotonic() - started >= 0.5  # waited for the dead worker's lease
    assert len(store) == 3 and store.claims() == []
