"""The Tuning page and its job take the package's tuning numbers, never copies: the help
quotes the search space it runs (``tuning_space.FLOAT_RANGES``, ``HIDDEN_CHOICES``), read
back from the page and compared as numbers, so a hand-written copy that drifts (the page
once said lr in [1e-3, 5e-2] while trials drew from [1e-4, 5e-2]) fails; the trials bound
is ``tuning.MAX_TRIALS``; a ``TuningJob`` is checked by ``tune()``'s own check."""
from __future__ import annotations

import re

import pytest

from dropedge_explorer.jobs.handles import TuningJob
from dropedge_explorer.jobs.queue import JobQueue
from dropedge_explorer.studies import tuning
from dropedge_explorer.training import TrainConfig
from tests.helpers.app import TUNING_PAGE, open_page


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("DROPEDGE_TUNING_STORAGE", str(tmp_path_factory.mktemp("tune") / "tuning.sqlite"))
    yield open_page(TUNING_PAGE)
    mp.undo()


def test_the_help_quotes_the_spaces_ranges(page):
    text = page.multiselect(key="tune_extra").help
    for name, (low, high, log) in tuning.FLOAT_RANGES.items():
        label = name.replace("_", " ")
        found = re.search(rf"{label} in \[([^,\]]+), ([^\]]+)\]( \(log\))?", text)
        assert found, f"{label!r} not in {text!r}"
        assert (float(found[1]), float(found[2]), bool(found[3])) == (low, high, log), found[0]
    hidden = re.search(r"hidden one of ([\d, ]+)", text)
    assert hidden and tuple(int(h) for h in hidden[1].split(", ")) == tuning.HIDDEN_CHOICES


def test_the_trials_bound_is_the_packages(page):
    assert page.number_input(key="tune_trials").max == tuning.MAX_TRIALS


@pytest.mark.parametrize("n_trials", [0, tuning.MAX_TRIALS + 1, 2.0, True])
def test_a_tuning_job_is_checked_in_one_place_before_its_storage_is_opened(tmp_path, n_trials):
    """``tune()`` and the app's ``TuningJob`` refuse the same trial counts with the same
    line (``tuning.check_job``), and neither creates the storage first."""
    storage = str(tmp_path / "t.sqlite")
    base = TrainConfig(dataset="karate", num_layers=2, epochs=2)
    said = []
    for start in (lambda: tuning.tune(base, n_trials, "s", storage),
                  lambda: TuningJob(base, n_trials, "s", storage, queue=JobQueue(max_running=1))):
        with pytest.raises(tuning.TuningError, match=r"trials must be an integer in 1\.\.100000") as info:
            start()
        said.append(str(info.value))
    assert said[0] == said[1] and list(tmp_path.iterdir()) == []
    with pytest.raises(tuning.TuningError, match="space must be a SearchSpace"):
        TuningJob(base, 1, "s", storage, space={"lr": (0.1, 0.2)}, queue=JobQueue(max_running=1))


def test_the_tuning_page_refuses_a_study_of_other_epochs_in_one_error(tmp_path, monkeypatch):
    """Issue 48: another visitor, given a study's name, added trials of other epochs to it.
    Session A runs a 1-trial study (waited for by its job's own state); session B, same name,
    other epochs: one ``st.error`` naming the study and the setting on Start, no job."""
    import time

    from tests.helpers.app import _app, _ok, _texts

    monkeypatch.setenv("DROPEDGE_TUNING_STORAGE", str(tmp_path / "tuning.sqlite"))
    sessions = []
    for epochs in (5, 6):
        at = _app()
        at.selectbox(key="dataset").select("karate").run()
        at.switch_page(TUNING_PAGE).run()
        at.number_input(key="tune_trials").set_value(1).run()
        at.number_input(key="tune_epochs").set_value(epochs).run()
        at.text_input(key="tune_study").input("shared").run()
        at.button(key="tune_start").click().run()
        _ok(at)
        sessions.append(at)
        if epochs == 5:
            job = at.session_state["tune_job"]
            deadline = time.monotonic() + 600  # ends a hung test only: the job's state decides
            while not job.done and time.monotonic() < deadline:
                time.sleep(0.2)
            assert job.done and job.finished == 1, job.status
    b = sessions[1]
    errors = [e for e in _texts(b.error) if "holds trials of other settings" in e]
    assert len(errors) == 1 and "study 'shared'" in errors[0] and "epochs 5, not 6" in errors[0], errors
    assert "tune_job" not in b.session_state
