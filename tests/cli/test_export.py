"""``export``: the store's runs as the run CSV format (read back by the bundled-file reader,
keys and fingerprints those of the runs) or every column; bad outputs and missing stores
refused in one line, nothing written."""
from __future__ import annotations

import pandas as pd

from dropedge_explorer.store import ResultStore
from dropedge_explorer.studies import run_tables as runs
from dropedge_explorer.training import TrainConfig, train
from dropedge_explorer.training._fingerprint import masks_fingerprint
from tests.helpers.runs import refused_line, run_cli


def _store_with_a_run(tmp_path, karate) -> tuple:
    store = ResultStore(tmp_path / "runs.sqlite")
    config = TrainConfig(dataset="karate", num_layers=2, sampler="dropedge++", seed=3, epochs=5, diag_every=0)
    key = store.put(train(config, graph=karate))
    return store, config, key


def test_the_run_csv_reads_back_with_key_and_fingerprint(capsys, tmp_path, karate):
    store, config, key = _store_with_a_run(tmp_path, karate)
    code, out, err = run_cli(capsys, "export", str(tmp_path / "out.csv"), "--store", str(store.path))
    assert code == 0, err
    assert "1 run(s)" in out
    df = runs.read_runs(tmp_path / "out.csv")
    assert df["key"].tolist() == [key] and df["seed"].tolist() == [3]
    assert df["masks_fp"].iloc[0] == masks_fingerprint(config, karate)  # the masks drawn again here
    code, _, err = run_cli(capsys, "export", str(tmp_path / "all.csv"), "--store", str(store.path),
                           "--all-columns")
    assert code == 0, err
    every = pd.read_csv(tmp_path / "all.csv")
    assert every["key"].tolist() == [key] and {"num_layers", "p_min", "lr", "test_acc"} <= set(every)


def test_bad_outputs_and_missing_stores_are_one_line(capsys, tmp_path, karate):
    store, _, _ = _store_with_a_run(tmp_path, karate)
    (tmp_path / "folder.csv").mkdir()
    cases = [
        ([str(tmp_path / "out.txt"), "--store", str(store.path)], "the run CSV format is a .csv file"),
        ([str(tmp_path / "folder.csv"), "--store", str(store.path)], "exists and is not a file"),
        ([str(tmp_path / "out.csv"), "--store", str(tmp_path / "none.sqlite")], "no results store at"),
        ([str(tmp_path / "out.json"), "--store", str(store.path), "--all-columns"], "unknown export format"),
    ]
    for argv, fragment in cases:
        assert fragment in refused_line(capsys, "export", *argv)
    assert not (tmp_path / "out.csv").exists() and not (tmp_path / "none.sqlite").exists()


def _digest(path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_an_export_onto_its_own_store_is_refused_before_anything_is_written(capsys, tmp_path, karate,
                                                                           monkeypatch):
    """Issue 48: ``export st/runs.csv --store st/runs.csv`` (a SQLite store named like a CSV)
    replaced the store with its own export. Refused, by any name of the file (relative, a
    symlink, a hard link, ``DROPEDGE_RESULTS``), the store byte for byte as it was."""
    import os

    folder = tmp_path / "st"
    folder.mkdir()
    store = ResultStore(folder / "runs.csv")
    store.put(train(TrainConfig(dataset="karate", num_layers=2, epochs=3, diag_every=0), graph=karate))
    store.close()
    parquet = folder / "runs.parquet"
    os.link(folder / "runs.csv", parquet)  # the same file under a .parquet name
    os.symlink(folder / "runs.csv", folder / "link.csv")
    before = _digest(folder / "runs.csv")
    monkeypatch.chdir(tmp_path)
    cases = [
        ["st/runs.csv", "--store", "st/runs.csv"],
        ["st/runs.csv", "--store", "st/runs.csv", "--all-columns"],
        [str(folder / "runs.csv"), "--store", "st/../st/runs.csv"],
        ["st/link.csv", "--store", "st/runs.csv"],
        ["st/runs.parquet", "--store", "st/runs.csv", "--all-columns"],
        ["st/runs.csv", "--store", "sqlite:///st/runs.csv"],
    ]
    for argv in cases:
        line = refused_line(capsys, "export", *argv)
        assert "is the results store it reads" in line and "nothing was written" in line, line
        assert _digest(folder / "runs.csv") == before, argv
    monkeypatch.setenv("DROPEDGE_RESULTS", str(folder / "runs.csv"))
    assert "is the results store it reads" in refused_line(capsys, "export", "st/runs.csv")
    assert _digest(folder / "runs.csv") == before
    assert sorted(p.name for p in folder.iterdir()) == ["link.csv", "runs.csv", "runs.parquet"]


def test_an_export_from_an_empty_sqlite_file_creates_no_table(capsys, tmp_path):
    """Issue 48: ``export`` from a 0-byte SQLite file created the store's tables in it."""
    empty = tmp_path / "empty.sqlite"
    empty.touch()
    line = refused_line(capsys, "export", str(tmp_path / "out.csv"), "--store", str(empty))
    assert "holds no runs" in line and "nothing was changed" in line, line
    assert empty.stat().st_size == 0 and not (tmp_path / "out.csv").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.sqlite"]  # no journal either
