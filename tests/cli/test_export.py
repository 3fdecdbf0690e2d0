"""``export``: the store's runs as the run CSV format (read back by the bundled-file reader,
keys and fingerprints those of the runs) or every column; bad outputs and missing stores
refused in one line, nothing written."""
from __future__ import annotations

import pandas as pd

from dropedge_core.store import ResultStore
from dropedge_core.studies import run_tables as runs
from dropedge_core.training import TrainConfig, train
from dropedge_core.training._fingerprint import masks_fingerprint
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
