"""The Tuning page and its job take the package's tuning numbers, never copies: the help
quotes the search space it runs (``tuning_space.FLOAT_RANGES``, ``HIDDEN_CHOICES``), read
back from the page and compared as numbers, so a hand-written copy that drifts (the page
once said lr in [1e-3, 5e-2] while trials drew from [1e-4, 5e-2]) fails; the trials bound
is ``tuning.MAX_TRIALS``; a ``TuningJob`` is checked by ``tune()``'s own check."""
from __future__ import annotations

import re

import pytest

from app_shared.tuning_job import TuningJob
from dropedge_core.studies import tuning
from dropedge_core.training import TrainConfig
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
                  lambda: TuningJob(base, n_trials, "s", storage, start=False)):
        with pytest.raises(tuning.TuningError, match=r"trials must be an integer in 1\.\.100000") as info:
            start()
        said.append(str(info.value))
    assert said[0] == said[1] and list(tmp_path.iterdir()) == []
    with pytest.raises(tuning.TuningError, match="space must be a SearchSpace"):
        TuningJob(base, 1, "s", storage, space={"lr": (0.1, 0.2)}, start=False)
