"""A closed browser session's memory is released (issue 29, class 0): the reaper holds each
session weakly, and once a session has been inactive for the grace period its state is
dropped, so its uploaded graph is garbage once no job trains on it (checked with a weak
reference to the graph, the way a closed tab's upload would be). Releasing never stops a
job (issue 35): a run ends by its owner's Stop or its own limits. Real objects: a graph,
and a real Live training job (in a worker process) whose queue holds the graph while it runs."""
from __future__ import annotations

import gc
import weakref

from dropedge_core import datasets

from app_shared import session_memory
from dropedge_explorer.jobs.live import TrainingSession
from dropedge_explorer.jobs.queue import JobQueue
from dropedge_explorer.training import TrainConfig


class _Session:
    """What the reaper needs of Streamlit's ``AppSession``: a ``session_state``."""

    def __init__(self, state: dict):
        self.session_state = state


def _session_with_a_training_graph(epochs: int = 300):
    graph = datasets.load("karate")
    jobs = JobQueue(max_running=1, store=None)
    live = TrainingSession(queue=lambda: jobs)
    live.submit([TrainConfig(dataset="karate", num_layers=2, epochs=epochs, patience=0, diag_every=0)],
                graph, owner="s1")
    session = _Session({"upload_parsed": {"graph": graph, "notes": []}, "live_training": live,
                        "dataset": "upload"})
    return session, weakref.ref(graph), live


def test_an_inactive_session_is_released_after_the_grace_and_its_graph_is_freed():
    now = {"t": 0.0}
    active = {"s1": True}
    reaper = session_memory.SessionReaper(lambda sid: active[sid], grace=100.0, clock=lambda: now["t"])
    session, graph_ref, worker = _session_with_a_training_graph()
    reaper.watch("s1", session)
    assert reaper.sweep() == []  # active: kept
    active["s1"] = False  # the tab closed
    now["t"] = 10.0
    assert reaper.sweep() == [] and session.session_state  # within the grace: a reconnect finds it
    now["t"] = 111.0
    assert reaper.sweep() == ["s1"] and session.session_state == {} and len(reaper) == 0
    assert worker.wait(300)  # trained to its end: the release did not stop it
    assert worker.runs[0].status == "finished"
    del worker
    gc.collect()
    assert graph_ref() is None  # nothing holds the closed session's graph any more


def test_a_session_that_comes_back_within_the_grace_keeps_its_state():
    now = {"t": 0.0}
    active = {"s1": False}
    reaper = session_memory.SessionReaper(lambda sid: active[sid], grace=100.0, clock=lambda: now["t"])
    session = _Session({"upload_parsed": {"graph": object()}})
    reaper.watch("s1", session)
    reaper.sweep()
    now["t"] = 90.0
    active["s1"] = True  # reconnected
    reaper.sweep()
    active["s1"] = False
    now["t"] = 150.0  # 150 s after the first disconnect, 60 s after the second
    assert reaper.sweep() == [] and "upload_parsed" in session.session_state


def test_a_session_streamlit_dropped_already_is_forgotten():
    reaper = session_memory.SessionReaper(lambda sid: False, grace=0.0)
    session = _Session({})
    reaper.watch("gone", session)
    del session
    gc.collect()
    assert reaper.sweep() == [] and len(reaper) == 0


def test_release_drops_the_widgets_whose_callbacks_hold_a_pages_globals():
    """A page's ``format_func`` lambda keeps the page script's globals (its graph) through
    Streamlit's widget metadata, which outlives the session's keys: release drops it too."""
    from streamlit.runtime.state.common import WidgetMetadata
    from streamlit.runtime.state.session_state import SessionState

    page_globals = {"graph": datasets.load("karate")}
    graph_ref = weakref.ref(page_globals["graph"])
    format_func = eval("lambda n: str(graph.num_nodes) + n", page_globals)  # a page's lambda
    state = SessionState()
    state["upload_parsed"] = {"graph": page_globals["graph"]}
    state._new_widget_state.set_widget_metadata(WidgetMetadata(
        id="$$ID-compare", deserializer=format_func, serializer=str,
        value_type="string_value"))
    del page_globals, format_func
    assert session_memory.release(state) == 1 and dict(state.filtered_state) == {}
    gc.collect()
    assert graph_ref() is None


def test_a_released_sessions_uploaded_files_are_dropped():
    dropped = []
    reaper = session_memory.SessionReaper(lambda sid: sid == "open", grace=0.0, on_release=dropped.append)
    sessions = {sid: _Session({"upload_parsed": {}}) for sid in ("open", "closed")}
    for sid, session in sessions.items():
        reaper.watch(sid, session)
    assert reaper.sweep() == ["closed"] and dropped == ["closed"]


def test_a_live_run_survives_its_sessions_release(tmp_path):
    """A closed tab's Live training session (registered, autonomous: the app's) is released
    with the tab's state: its run trains on to its own end, is stored, and stays in the
    registry where its link finds it; the state that held it is empty."""
    from dropedge_explorer.jobs.registry import JobRegistry
    from dropedge_explorer.store import ResultStore

    jobs = JobQueue(max_running=1, store=str(tmp_path / "results.sqlite"))
    registry = JobRegistry()
    live = TrainingSession(queue=lambda: jobs)
    job_id = registry.register(live, "training")
    live.submit([TrainConfig(dataset="karate", num_layers=2, epochs=200, patience=0, diag_every=0)],
                datasets.load("karate"), owner=job_id)
    state = {"live_training": live, "_job_live_training": job_id}
    assert session_memory.release(state) == 2 and state == {}
    assert live.wait(300)
    (record,) = live.runs
    store = ResultStore(tmp_path / "results.sqlite")
    assert record.status == "finished" and record.note is None, (record.status, record.note)
    assert record.stored_key and registry.get(job_id) is live
    assert store.get(record.config)["test_acc"] == record.end["test_acc"]
