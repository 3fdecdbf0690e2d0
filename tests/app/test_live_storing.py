"""Live training stores by the one rule (``studies.sweep.store_result``) the command line
uses: a run that ended on its own is stored, a NaN run included (the Depth study then
shows it measured and does not offer it again); a run on an uploaded graph never reaches
the shared store, however it ended. Real runs on karate, trained by the app's own worker
(:class:`~app_shared.background.TrainingWorker`); the store read with ``sqlite3`` itself."""
from __future__ import annotations

import sqlite3

import torch

from app_shared.training_session import TrainingSession
from dropedge_core.store import ResultStore, run_key
from dropedge_core.training import TrainConfig


def _stored(path) -> dict[str, str]:
    """key -> end reason of every stored run, read without the store."""
    with sqlite3.connect(path) as db:
        return dict(db.execute("SELECT key, reason FROM runs"))


def _session(store: ResultStore) -> TrainingSession:
    return TrainingSession(idle_timeout=None, max_seconds=None, store=lambda: store)


def test_a_nan_live_run_is_stored_as_the_command_line_stores_it(tmp_path, karate, monkeypatch):
    loss = torch.nn.functional.nll_loss
    monkeypatch.setattr(torch.nn.functional, "nll_loss", lambda *a, **k: loss(*a, **k) * float("nan"))
    path = tmp_path / "results.sqlite"
    session = _session(ResultStore(path))
    config = TrainConfig(dataset="karate", num_layers=2, hidden=8, epochs=5, diag_every=0)
    (record,) = session.submit([config], karate)
    assert session.wait(60)
    assert record.status == "nan" and record.stored_key == run_key(config)
    assert _stored(path) == {run_key(config): "nan"}


def test_an_uploaded_graphs_live_run_is_never_stored(tmp_path, karate):
    """Karate's graph passed as an upload: it trains to the end (a result the rule would
    store under a dataset's name), and the shared store stays empty."""
    path = tmp_path / "results.sqlite"
    session = _session(ResultStore(path))
    upload = TrainConfig(dataset="upload", num_layers=2, hidden=8, epochs=5, patience=0, diag_every=0)
    named = upload.replace(dataset="karate", split=None)
    uploaded, measured = session.submit([upload], karate) + session.submit([named], karate)
    assert session.wait(60)
    assert uploaded.status == "finished" and uploaded.stored_key is None and not uploaded.note
    assert measured.status == "finished" and _stored(path) == {run_key(named): "finished"}
