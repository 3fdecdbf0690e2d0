"""Live training stores by the one rule (``studies.sweep.store_result``) the command line
uses, in the job's worker process (:mod:`dropedge_explorer.jobs`): a run that ended on its
own is stored; a run on an uploaded graph never reaches the shared store, however it
ended. Real runs on karate; the store read with ``sqlite3`` itself. (A NaN run is stored
by the same call, ``train_and_store``: ``tests/cli/test_cli_storing.py`` makes one.)"""
from __future__ import annotations

import sqlite3

from dropedge_explorer.jobs.live import TrainingSession
from dropedge_explorer.jobs.queue import JobQueue
from dropedge_explorer.store import run_key
from dropedge_explorer.training import TrainConfig


def _stored(path) -> dict[str, str]:
    """key -> end reason of every stored run, read without the store."""
    with sqlite3.connect(path) as db:
        return dict(db.execute("SELECT key, reason FROM runs"))


def test_an_uploaded_graphs_live_run_is_never_stored(tmp_path, karate):
    """Karate's graph passed as an upload: it trains to the end (a result the rule would
    store under a dataset's name), and the shared store stays empty; the same run under
    karate's name is stored, once."""
    path = tmp_path / "results.sqlite"
    jobs = JobQueue(max_running=1, store=str(path))
    session = TrainingSession(queue=lambda: jobs)
    upload = TrainConfig(dataset="upload", num_layers=2, hidden=8, epochs=5, patience=0, diag_every=0)
    named = upload.replace(dataset="karate", split=None)
    uploaded, measured = session.submit([upload, named], karate, owner="me").runs
    assert session.wait(300)
    assert uploaded.status == "finished" and uploaded.stored_key is None and not uploaded.note
    assert measured.status == "finished" and measured.stored_key == run_key(named)
    assert _stored(path) == {run_key(named): "finished"}
