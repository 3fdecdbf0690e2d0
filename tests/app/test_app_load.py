"""A classroom on one server (issues 35 and 44): 30 ``AppTest`` sessions — 24 on Live
training, 6 on Tuning — press Start at once on one job registry and one job queue (one
place: ``DROPEDGE_MAX_WORKERS=1``). Nothing is refused: one Live run trains, the other 29
jobs (Live runs and studies alike) wait in line, each told a different place; no session
holds another's job or key; every owner's Stop ends or dequeues its own; then short runs
are each stored once, and the registry stays bounded."""
from __future__ import annotations

import re

import pytest

from tests.helpers.app import LIVE_PAGE, TUNING_PAGE, _ok, open_page

SESSIONS, TUNERS, LEARNERS_STORING = 30, 6, 4
REFUSAL = "Cannot start"


@pytest.fixture(autouse=True)
def _server_registry(monkeypatch, tmp_path):
    """One fresh registry, one job queue with one place, a results store and a tuning storage."""
    from dropedge_explorer.jobs import live as training_session
    from dropedge_explorer.jobs import registry
    from dropedge_explorer.jobs.queue import JobQueue

    monkeypatch.setattr(registry, "REGISTRY", registry.JobRegistry())
    monkeypatch.setattr(training_session, "QUEUE",
                        JobQueue(max_running=1, store=str(tmp_path / "results.sqlite")))
    monkeypatch.setenv("DROPEDGE_RESULTS", str(tmp_path / "results.sqlite"))
    monkeypatch.setenv("DROPEDGE_TUNING_STORAGE", str(tmp_path / "tuning.sqlite"))


def _running() -> int:
    from dropedge_explorer.jobs import registry

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


def _place(at) -> int | None:
    """The place in line the page shows (``None``: it shows none)."""
    found = [re.search(r"\*\*(\d+)\w\w in line\*\*", i.value) for i in at.info]
    return next((int(m.group(1)) for m in found if m), None)


def test_thirty_sessions_on_one_server():
    from dropedge_explorer import paths
    from dropedge_explorer.jobs import live as training_session
    from dropedge_explorer.jobs import registry
    from dropedge_explorer.store import ResultStore

    pages = _class()
    tuners = [at for at in pages if "tune_study" in at.session_state]
    learners = [at for at in pages if "tune_study" not in at.session_state]
    assert len({at.session_state["tune_session_token"] for at in tuners}) == len(tuners) == TUNERS
    for at in pages:  # everyone presses Start at once: nobody is refused
        key = "tune_start" if "tune_study" in at.session_state else "lt_start"
        at.button(key=key).click().run()
        _ok(at)
    assert not any(_refused(at) for at in pages)
    queue = training_session.QUEUE
    assert len(queue.running()) == 1 and len(queue.order()) == SESSIONS - 1
    for at in learners:  # each waiting learner is told its own place; each study has its own
        at.run()
    study_places = [_job(at).place() for at in tuners]
    assert all(f"place {p} in the server's line" in _job(at).status for at, p in zip(tuners, study_places))
    places = sorted([p for p in map(_place, learners) if p is not None] + study_places)
    assert places == list(range(1, SESSIONS)), places
    # no session holds another's job or key
    owned = [set(at.session_state["_owned_jobs"]) for at in pages]
    assert all(len(o) == 1 for o in owned) and len(set().union(*owned)) == len(pages)
    assert len({id(_job(at)) for at in pages}) == len(pages)
    for at in pages:  # each owner stops its own (a waiting run leaves the line)
        at.button(key="tune_stop" if "tune_study" in at.session_state else "lt_stop").click().run()
        _ok(at)
    for at in pages:
        job = _job(at)
        assert job.wait(300) if hasattr(job, "wait") else job.join(60)
    assert _running() == 0 and not queue.order()

    # then a few Live sessions train a short run each: all queued at once, each stored once
    storing = learners[:LEARNERS_STORING]
    for at in storing:
        at.number_input(key="lt_epochs").set_value(3).run()
        at.button(key="lt_start").click().run()
        _ok(at)
        assert not _refused(at)
    for at in storing:
        assert at.session_state["live_training"].wait(600)
    finished = [r for at in storing for r in at.session_state["live_training"].runs
                if r.status in ("finished", "early_stop")]
    assert len(finished) == len(storing)
    keys = [r.stored_key for r in finished]
    assert all(keys) and len(set(keys)) == len(keys)
    assert len(ResultStore(paths.results_store())) == len(storing)  # each stored once
    assert len(registry.REGISTRY) <= registry.MAX_FINISHED  # memory: finished jobs bounded
