"""A classroom on one server (issue 35, item 4): 30 ``AppTest`` sessions — 24 on Live
training, 6 on Tuning — start runs and studies at once on one job registry (the server's
caps: 6 running jobs, 16 finished kept). The cap holds with one clear refusal, no session
holds another's job or key, the registry stays bounded, and every finished run is stored
once."""
from __future__ import annotations

import time

import pytest

from tests.helpers.app import LIVE_PAGE, TUNING_PAGE, _ok, open_page

SESSIONS, TUNERS = 30, 6
REFUSAL = "Cannot start now: 6 jobs are running on this server (at most 6)"


@pytest.fixture(autouse=True)
def _server_registry(monkeypatch, tmp_path):
    """One fresh registry with the server's caps, a results store and a tuning storage."""
    from app_shared import registry

    monkeypatch.setattr(registry, "REGISTRY", registry.JobRegistry())
    monkeypatch.setenv("DROPEDGE_RESULTS", str(tmp_path / "results.sqlite"))
    monkeypatch.setenv("DROPEDGE_TUNING_STORAGE", str(tmp_path / "tuning.sqlite"))


def _running() -> int:
    from app_shared import registry

    return sum(e.active for e in registry.REGISTRY.entries())


def _refused(at) -> bool:
    return any(REFUSAL in e.value for e in at.error)


def _class() -> list:
    """30 sessions, each on its page with its own seed; every 5th on Tuning."""
    pages = []
    for i in range(SESSIONS):
        if i % 5 == 4:
            pages.append(open_page(TUNING_PAGE, layers="2", seed=str(i), tune_trials="500",
                                   tune_epochs="1000"))
        else:
            pages.append(open_page(LIVE_PAGE, layers="2", seed=str(i), lt_mode="custom",
                                   lt_epochs="5000", lt_patience="0", lt_diag_every="0"))
    return pages


def _job(at):
    """The job a session's page shows: its study, or its Live training session."""
    return at.session_state["tune_job" if "tune_study" in at.session_state else "live_training"]


def test_thirty_sessions_on_one_server():
    from app_shared import registry
    from dropedge_core import paths
    from dropedge_core.store import ResultStore

    pages = _class()
    tuners = [at for at in pages if "tune_study" in at.session_state]
    assert len({at.session_state["tune_session_token"] for at in tuners}) == len(tuners) == TUNERS
    for at in pages:  # everyone presses Start at once: the cap holds, the rest are told why
        key = "tune_start" if "tune_study" in at.session_state else "lt_start"
        at.button(key=key).click().run()
        _ok(at)
    started = [at for at in pages if not _refused(at)]
    assert len(started) == registry.MAX_ACTIVE and _running() == registry.MAX_ACTIVE
    assert sum(_refused(at) for at in pages) == SESSIONS - registry.MAX_ACTIVE
    # no session holds another's job or key
    owned = [set(at.session_state["_owned_jobs"]) for at in started]
    assert all(len(o) == 1 for o in owned) and len(set().union(*owned)) == len(started)
    assert len({id(_job(at)) for at in started}) == len(started)
    for at in started:  # each owner stops its own
        at.button(key="tune_stop" if "tune_study" in at.session_state else "lt_stop").click().run()
        _ok(at)
    for at in started:
        job = _job(at)
        assert job.wait(60) if hasattr(job, "wait") else job.join(60)
    assert _running() == 0

    # then every Live session trains a short run; a refused one tries again once a job ended
    learners = [at for at in pages if "tune_study" not in at.session_state]
    for at in learners:
        at.number_input(key="lt_epochs").set_value(3).run()
    waiting = list(learners)
    deadline = time.monotonic() + 600  # ends a hung test only: the loop waits on the registry's state
    while waiting:
        assert time.monotonic() < deadline, f"{len(waiting)} sessions never got to start"
        if _running() >= registry.MAX_ACTIVE:
            time.sleep(0.2)
            continue
        at = waiting[0]
        at.button(key="lt_start").click().run()
        _ok(at)
        assert _running() <= registry.MAX_ACTIVE
        if not _refused(at):
            waiting.pop(0)
    for at in learners:
        assert at.session_state["live_training"].wait(120)
    finished = [r for at in learners for r in at.session_state["live_training"].runs
                if r.status in ("finished", "early_stop")]
    assert len(finished) == len(learners)
    keys = [r.stored_key for r in finished]
    assert all(keys) and len(set(keys)) == len(keys)
    assert len(ResultStore(paths.results_store())) == len(learners)  # each stored once
    assert len(registry.REGISTRY) <= registry.MAX_FINISHED  # memory: finished jobs bounded
