"""The Tuning page says how much of its picture is noise: the contour's colour range
against one standard error, whether the best trial is the start point, and the best
trial's seed-to-seed spread; each sentence read against the numbers the page shows."""
from __future__ import annotations

import math
import time

import pytest

from tests.helpers.app import _app, _ok

TUNING_PAGE = "app_pages/tuning.py"


@pytest.fixture(autouse=True)
def _own_registry(monkeypatch):
    from dropedge_explorer.jobs import registry

    monkeypatch.setattr(registry, "REGISTRY", registry.JobRegistry())


def _captions(at) -> str:
    return " ".join(c.value for c in at.caption) + " " + " ".join(m.value for m in at.markdown)


def test_tuning_says_what_is_noise_and_measures_the_seed_spread(tmp_path, monkeypatch):
    monkeypatch.setenv("DROPEDGE_TUNING_STORAGE", str(tmp_path / "tuning.sqlite"))
    at = _app()
    at.slider(key="layers").set_value(2).run()
    at.switch_page(TUNING_PAGE).run()
    at.number_input(key="tune_trials").set_value(3).run()
    at.number_input(key="tune_epochs").set_value(10).run()
    at.text_input(key="tune_study").input("noise").run()
    at.button(key="tune_start").click().run()
    deadline = time.monotonic() + 120
    while not at.session_state["tune_job"].done:
        assert time.monotonic() < deadline, "the study did not finish"
        time.sleep(0.2)
        at.run()
    at.run()
    _ok(at)
    table = at.dataframe[0].value
    done = table[table["state"] == "COMPLETE"]
    # karate: 8 validation nodes; the standard error of the difference between the best and the
    # worst trial (one-sigma Wilson half-widths, never 0), worked out here
    def wilson(p):
        return math.sqrt(p * (1 - p) / 8 + 1 / 256) / (9 / 8)

    best, worst = done["val_acc"].max(), done["val_acc"].min()
    se = math.hypot(wilson(best), wilson(worst))
    span = best - worst
    text = _captions(at)
    assert f"{span * 100:.1f} points = {span / se:.1f} standard errors" in text
    assert ("within noise" in text) == (span / se <= 2), text
    assert "inf standard errors" not in text
    # karate's 8 validation nodes: the tiny-split warning gives the caption's verdict, never the opposite
    warning = next(w.value for w in at.warning if "Tiny validation set" in w.value)
    assert ("mostly chance" in warning) == (span / se <= 2), warning
    best_trial = int(done.loc[done["val_acc"].idxmax(), "trial"])
    assert ("The best trial is the starting point" in text) == (best_trial == 0)
    assert "a place to start from, not a result" in text
    assert "Seed-to-seed spread: not measured yet" in text
    # the seed check: the best (and the start, when it is another trial) on 3 seeds
    at.button(key="tune_seed_check").click().run()
    _ok(at)
    runs = next(d.value for d in at.dataframe if "seed" in d.value.columns)
    assert sorted(set(runs["seed"])) == [101, 102, 103]
    assert len(runs) == (3 if best_trial == 0 else 6)
    b = runs[runs["point"] == "best"]["val_acc"]
    text = _captions(at)
    assert f"the best trial reaches {b.mean():.1%} ± {b.std(ddof=1):.1%}" in text
    if best_trial != 0:
        s = runs[runs["point"] == "start"]["val_acc"]
        gap, gap_se = b.mean() - s.mean(), math.sqrt(b.var(ddof=1) / 3 + s.var(ddof=1) / 3)
        assert ("exceeds the seed-to-seed noise" in text) == (abs(gap) > 2 * gap_se)
