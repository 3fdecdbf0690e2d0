"""Downloads and progress (issue 35, item 7): a Live run's history and a study's trials as
CSV files, and a study's progress bar while it runs."""
from __future__ import annotations

import io

import pandas as pd
import pytest

from tests.helpers.app import TUNING_PAGE, _app, _live, _ok, _until_idle


@pytest.fixture(autouse=True)
def _own_registry(monkeypatch):
    """Each test its own server-wide job registry."""
    from dropedge_explorer.jobs import registry

    monkeypatch.setattr(registry, "REGISTRY", registry.JobRegistry())


@pytest.fixture
def downloads(monkeypatch) -> dict[str, pd.DataFrame]:
    """What the pages' download buttons hand out, by file name, read back as CSV (AppTest
    runs without the server's file manager, so the data is caught on its way there)."""
    from streamlit.elements.widgets import button

    seen, marshall = {}, button.marshall_file

    def catch(coordinates, data, proto, mimetype, file_name=None, **kwargs):
        content = data() if callable(data) else data
        seen[file_name] = pd.read_csv(io.StringIO(content if isinstance(content, str) else content.decode()))
        return marshall(coordinates, data, proto, mimetype, file_name, **kwargs)

    monkeypatch.setattr(button, "marshall_file", catch)
    return seen


def test_a_live_runs_history_downloads_as_csv(downloads):
    at = _live(layers=2, epochs=6)
    at.number_input(key="lt_diag_every").set_value(0).run()
    at.button(key="lt_start").click().run()
    _until_idle(at)
    history = downloads["live_training_history.csv"]
    (record,) = at.session_state["live_training"].runs
    assert len(history) == record.epochs_done == 6
    assert history["epoch"].tolist() == list(range(1, 7)) and (history["run"] == record.label).all()
    assert {"train_loss", "val_loss", "train_acc", "val_acc"} <= set(history.columns)


def test_a_study_shows_its_progress_and_its_trials_download(tmp_path, monkeypatch, downloads):
    monkeypatch.setenv("DROPEDGE_TUNING_STORAGE", str(tmp_path / "tuning.sqlite"))
    at = _app()
    at.slider(key="layers").set_value(2).run()
    at.switch_page(TUNING_PAGE).run()
    at.number_input(key="tune_trials").set_value(2).run()
    at.number_input(key="tune_epochs").set_value(5).run()
    at.button(key="tune_start").click().run()
    _ok(at)
    job = at.session_state["tune_job"]
    (bar,) = at.get("progress")
    assert "of 2 trials done" in bar.proto.text
    assert job.join(120)
    at.run()
    _ok(at)
    assert not at.get("progress")
    (trials,) = [v for k, v in downloads.items() if k.startswith("tuning_")]
    assert len(trials) == 2 and {"p_min", "p_max", "val_acc", "state"} <= set(trials.columns)
