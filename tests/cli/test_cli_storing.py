"""``train --store`` stores by the one rule (``studies.sweep.store_result``) the app uses:
a run that ended on its own is stored, a NaN run included, single or batched seeds; a run
on an uploaded graph never reaches the shared store (the command refuses ``--store`` with
``--edges``; the path it calls stores nothing of one either). The store read with
``sqlite3`` itself."""
from __future__ import annotations

import sqlite3

import pytest
import torch

from dropedge_explorer.store import ResultStore, run_key
from dropedge_explorer.studies import sweep
from dropedge_explorer.training import TrainConfig
from tests.helpers.runs import run_cli

KARATE = ["train", "--dataset", "karate", "--layers", "2", "--hidden", "8", "--epochs", "5",
          "--diag-every", "0", "--no-progress", "--seeds", "0", "1"]


def _stored(path) -> dict[str, str]:
    """key -> end reason of every stored run, read without the store."""
    with sqlite3.connect(path) as db:
        return dict(db.execute("SELECT key, reason FROM runs"))


@pytest.mark.parametrize("batched", [False, True])
def test_nan_runs_are_stored_from_the_command_line(capsys, tmp_path, monkeypatch, batched):
    loss = torch.nn.functional.nll_loss
    monkeypatch.setattr(torch.nn.functional, "nll_loss", lambda *a, **k: loss(*a, **k) * float("nan"))
    path = tmp_path / "results.sqlite"
    code, _, err = run_cli(capsys, *KARATE, *(["--batch-seeds"] if batched else []), "--store", str(path))
    assert code == 0, err
    keys = {run_key(TrainConfig(dataset="karate", num_layers=2, hidden=8, epochs=5, diag_every=0, seed=s))
            for s in (0, 1)}
    assert _stored(path) == dict.fromkeys(keys, "nan")


def test_the_command_lines_path_never_stores_an_uploaded_graphs_run(tmp_path, karate):
    path = tmp_path / "results.sqlite"
    store = ResultStore(path)
    upload = TrainConfig(dataset="upload", num_layers=2, hidden=8, epochs=5, patience=0, diag_every=0)
    result = sweep.train_and_store(upload, store, graph=karate)
    (batched,) = sweep.train_seeds_and_store([upload.replace(seed=1)], store, graph=karate)
    assert result.reason == batched.reason == "finished"  # a result the rule would store by name
    assert _stored(path) == {}
    named = upload.replace(dataset="karate", split=None)
    sweep.train_and_store(named, store, graph=karate)
    assert _stored(path) == {run_key(named): "finished"}
