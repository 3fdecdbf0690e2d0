"""The Live training and Tuning pages through ``AppTest``: start short runs on karate,
poll them like the page's fragment does (``at.run()``), read the figures back."""
from __future__ import annotations

import time

import numpy as np
import pytest

from dropedge_explorer.figures import SAMPLER_COLORS
from tests.helpers.app import (
    _app,
    _charts,
    _live,
    _ok,
    _until_idle,
    _values,
    open_page,
    query_param,
)

LIVE_PAGE = "app_pages/live_training.py"


@pytest.fixture(autouse=True)
def _own_registry(monkeypatch):
    """Each test its own server-wide job registry: another test's runs stay out of its list."""
    from dropedge_explorer.jobs import registry

    monkeypatch.setattr(registry, "REGISTRY", registry.JobRegistry())


TUNING_PAGE = "app_pages/tuning.py"






def _legend(fig: dict) -> list[str]:
    return [t["name"] for t in fig["data"] if t.get("showlegend", True)]


def test_live_training_shows_the_gpu_memory_of_a_gpu_run():
    """A run whose epochs report device memory (a CUDA run: the trainer's
    ``device_memory``; its events made here by the trainer on the CPU, with the two
    figures added as a CUDA run's worker would send them) shows it in use and at its peak;
    a CPU run shows none (the next test's page). The real GPU: ``tests/test_cuda.py``."""
    from dropedge_explorer.jobs.live import TrainingSession
    from dropedge_explorer.jobs.records import RunRecord, run_label
    from dropedge_explorer.training import TrainConfig, train

    at = _live(layers=2, epochs=2)
    config = TrainConfig(dataset="karate", num_layers=2, epochs=2, diag_every=0)
    events: list[dict] = []
    train(config, on_event=events.append)
    for event in events:
        if event["type"] == "epoch":
            event.update(memory_in_use=3 << 29, memory_peak=5 << 30)
    live = TrainingSession()
    live.runs.append(RunRecord(1, config, run_label(config, 1), events=events, status="finished"))
    at.session_state["live_training"] = live
    at.run()
    _ok(at)
    assert "GPU memory 1.5 GiB in use, peak 5 GiB" in at.success[0].value, at.success[0].value


def test_live_training_one_run_draws_every_figure():
    at = _live()
    assert at.title[0].value == "Live training"
    assert any("Training on **CPU" in c.value for c in at.caption)  # the device is shown
    at.number_input(key="lt_diag_every").set_value(5).run()
    at.button(key="lt_start").click().run()
    _ok(at)
    assert at.button(key="lt_start").disabled or not at.session_state["live_training"].active
    # while its worker process starts (or the job waits in line) the page says so, never an error
    assert not at.error, [e.value for e in at.error]
    assert at.get("progress") or any("worker process" in i.value or "in line" in i.value for i in at.info)
    _until_idle(at)
    assert at.success and "finished" in at.success[0].value and "device cpu" in at.success[0].value
    assert "GPU memory" not in at.success[0].value
    assert at.button(key="lt_stop").disabled and not at.button(key="lt_start").disabled
    charts = _charts(at)
    assert set(charts) == {"lt_curves", "lt_heatmap", "lt_distances", "lt_men"}
    curves = charts["lt_curves"]
    assert _legend(curves) == ["#1 DropEdge++ · GCN L=4 · seed 0"]
    assert curves["data"][0]["line"]["color"] == SAMPLER_COLORS["dropedge++"]
    assert _values(curves["data"][0]["x"]).astype(int).tolist() == list(range(1, 16))
    # Dirichlet energy: epoch x layer, diagnostics at epochs 5, 10, 15; L - 1 = 3 hidden outputs
    heat = charts["lt_heatmap"]["data"][0]
    assert _values(heat["x"]).astype(int).tolist() == [5, 10, 15]
    assert _values(heat["z"]).astype(float).shape == (3, 3)
    assert "Dirichlet energy" in charts["lt_heatmap"]["layout"]["title"]["text"]
    men = charts["lt_men"]["data"]
    assert len(men) == 1 and (_values(men[0]["y"]).astype(float) > 0).all()
    table = at.dataframe[0].value
    assert table.loc[0, "status"] == "finished" and table.loc[0, "device"] == "cpu"
    assert 0 <= table.loc[0, "test_acc"] <= 1
    # the per-layer view switches diagnostic
    at.radio(key="lt_diag_key").set_value("mad").run()
    _ok(at)
    assert "MAD" in _charts(at)["lt_heatmap"]["layout"]["title"]["text"]


def test_compare_samplers_overlays_three_runs_and_clear():
    at = _live(layers=3, epochs=10)
    at.button(key="lt_compare").click().run()
    _ok(at)
    _until_idle(at, 90)
    charts = _charts(at)
    names = _legend(charts["lt_curves"])
    assert [n.split(" · ")[0] for n in names] == ["#1 NoDrop", "#2 DropEdge", "#3 DropEdge++"]
    colors = [t["line"]["color"] for t in charts["lt_curves"]["data"] if t.get("showlegend", True)]
    assert colors == [SAMPLER_COLORS[s] for s in ("nodrop", "dropedge", "dropedge++")]
    men = {t["name"].split(" · ")[0]: _values(t["y"]).astype(float) for t in charts["lt_men"]["data"]}
    assert len(men) == 3 and men["#1 NoDrop"].min() >= men["#3 DropEdge++"].max()
    assert len(charts["lt_distances"]["data"]) == 3  # one average Distance per run
    assert at.selectbox(key="lt_focus").value.startswith("#3")  # the latest run in focus
    assert len(at.dataframe[0].value) == 3
    at.button(key="lt_clear").click().run()
    _ok(at)
    assert not _charts(at) and at.info  # back to the hint


def test_stop_ends_a_long_run():
    at = _live(epochs=5000)
    at.number_input(key="lt_diag_every").set_value(0).run()
    at.button(key="lt_start").click().run()
    _ok(at)
    session = at.session_state["live_training"]
    run = session.runs[0]  # queued until its worker process has started, then running
    deadline = time.monotonic() + 120  # ends a hung test only: the loop waits on the run's epochs
    while run.epochs_done < 3:
        assert not run.over, "the long run ended by itself"
        assert time.monotonic() < deadline, "the run never reached its third epoch"
        at.run()
        time.sleep(0.1)
    assert session.current is run, "the long run ended by itself"
    assert not at.button(key="lt_stop").disabled
    at.button(key="lt_stop").click().run()
    _until_idle(at, 30)
    assert at.warning and "stopped" in at.warning[0].value
    assert session.runs[0].status == "stopped" and session.runs[0].epochs_done < 5000


def test_bad_settings_are_a_message_and_sessions_are_separate():
    at = _live()
    at.number_input(key="lt_lr").set_value(0.0).run()
    at.button(key="lt_start").click().run()
    _ok(at)
    assert at.error and "lr must be in (0, 10]" in at.error[0].value
    assert not at.session_state["live_training"].runs
    # a run in one browser session is not seen by another
    at.number_input(key="lt_lr").set_value(0.01).run()
    at.button(key="lt_start").click().run()
    other = _live()
    assert not other.session_state["live_training"].runs and "lt_curves" not in _charts(other)
    _until_idle(at)
    assert len(at.session_state["live_training"].runs) == 1
    other.run()  # the other session, driven again once the first one's run is over
    _ok(other)
    assert not other.session_state["live_training"].runs and not other.success
    assert "lt_curves" not in _charts(other)  # the first session's run is only in the server's list
    assert any("Start a run" in i.value for i in other.info)


def test_depth_recipe_is_the_default_and_follows_the_depth():
    at = _app()
    at.slider(key="layers").set_value(16).run()
    at.switch_page(LIVE_PAGE).run()
    _ok(at)
    assert at.radio(key="lt_mode").value == "depth recipe"
    assert at.number_input(key="lt_lr").value == pytest.approx(1e-3) and at.number_input(key="lt_lr").disabled
    assert at.checkbox(key="lt_loop").value and at.slider(key="lt_dropout").value == 0.0
    assert at.number_input(key="lt_epochs").value == 300 and not at.number_input(key="lt_epochs").disabled
    at.number_input(key="lt_epochs").set_value(3).run()  # a shorter demo run keeps the recipe
    at.slider(key="layers").set_value(2).run()
    _ok(at)
    assert at.number_input(key="lt_lr").value == pytest.approx(0.01) and not at.checkbox(key="lt_loop").value
    at.number_input(key="lt_epochs").set_value(3).run()
    at.button(key="lt_start").click().run()
    _until_idle(at)
    run = at.session_state["live_training"].runs[0]
    assert run.config.recipe == "depth" and run.config.settings == "depth+epochs=3"


def test_paper_preset(cora):
    at = _live()
    at.radio(key="lt_mode").set_value("paper preset").run()
    _ok(at)
    assert any("No paper preset" in i.value and "depth recipe" in i.value for i in at.info)  # karate: none
    assert at.number_input(key="lt_hidden").disabled
    at.selectbox(key="dataset").select("cora").run()
    at.selectbox(key="lt_backbone").select("resgcn").run()
    _ok(at)
    assert at.success and "num_layers = 8" in at.success[0].value  # the paper's Cora semi ResGCN
    assert at.number_input(key="lt_hidden").disabled
    assert any("L = 8" in c.value for c in at.caption)


def test_backbone_appnp_star_is_labelled_appnp_star_and_enables_alpha():
    at = _live()
    box = at.selectbox(key="lt_backbone")
    assert box.options == ["GCN", "ResGCN", "JKNet", "APPNP*"]
    assert at.slider(key="lt_alpha").disabled  # GCN: no teleport
    box.select("appnp_star").run()
    _ok(at)
    assert at.selectbox(key="lt_backbone").value == "appnp_star" and not at.slider(key="lt_alpha").disabled


def test_tuning_study_heatmap_and_train_this(tmp_path, monkeypatch):
    monkeypatch.setenv("DROPEDGE_TUNING_STORAGE", str(tmp_path / "tuning.sqlite"))
    at = _app()
    at.slider(key="layers").set_value(3).run()
    at.switch_page(TUNING_PAGE).run()
    _ok(at)
    assert at.title[0].value == "Tuning" and not _charts(at)
    assert "karate" in at.text_input(key="tune_study").value
    at.number_input(key="tune_trials").set_value(3).run()
    at.number_input(key="tune_epochs").set_value(10).run()
    at.text_input(key="tune_study").input("app-test").run()
    at.button(key="tune_start").click().run()
    _ok(at)
    deadline = time.monotonic() + 60
    while not at.session_state["tune_job"].done:
        assert time.monotonic() < deadline, "the study did not finish"
        time.sleep(0.2)
        at.run()
        _ok(at)
    at.run()
    _ok(at)
    assert at.success and "finished 3 trials" in at.success[0].value
    charts = _charts(at)
    assert set(charts) == {"tune_surface", "tune_history"}
    surface = {t.get("name") or t["type"]: t for t in charts["tune_surface"]["data"]}
    assert set(surface) == {"contour", "trials", "best"}
    assert len(_values(surface["trials"]["x"])) == 3
    table = at.dataframe[0].value
    assert len(table) == 3 and table["val_acc"].notna().all()
    assert np.isclose(table.loc[0, "p_min"], 0.3)  # the sidebar's point comes first
    best = table.loc[table["val_acc"].idxmax()]
    assert at.metric[0].value.startswith(f"{table['val_acc'].max():.1%} ± ")
    # karate: 8 validation nodes, said so; the ± is the binomial standard error
    assert any("Tiny validation set" in w.value and "8 nodes" in w.value for w in at.warning)
    # Train this: the Live training page, pre-filled with the best point
    at.button(key="tune_train_this").click().run()
    _ok(at)
    assert at.title[0].value == "Live training"
    info = next(i.value for i in at.info if "From study 'app-test'" in i.value)
    assert f"p_min = {best['p_min']:.3f}" in info and "L = 3" in info
    assert at.number_input(key="lt_epochs").value == 10 and at.number_input(key="lt_hidden").value == 64
    at.switch_page(LIVE_PAGE)  # AppTest reruns the page it was told, not the one st.switch_page chose
    at.button(key="lt_start").click().run()
    _ok(at)
    run = at.session_state["live_training"].runs[0]
    assert run.config.p_min == pytest.approx(best["p_min"]) and run.config.num_layers == 3
    _until_idle(at)
    # back to the sidebar's values
    at.button(key="lt_drop_override").click().run()
    _ok(at)
    assert not any("From study" in i.value for i in at.info)


def test_a_bad_train_request_is_a_message():
    at = _app()
    at.session_state["train_request"] = {"dataset": "karate", "p_min": 0.9, "p_max": 0.2}
    at.switch_page(LIVE_PAGE).run()
    _ok(at)
    assert at.error and "p_min must be <= p_max" in at.error[0].value
    assert not any("From " in i.value for i in at.info)
    # values beyond a widget's range are clamped to it
    at.session_state["train_request"] = {"dataset": "karate", "hidden": 4096, "epochs": 7,
                                         "source": "a test"}
    at.run()
    _ok(at)
    assert at.number_input(key="lt_hidden").value == 1024 and at.number_input(key="lt_epochs").value == 7
    assert any("From a test" in i.value for i in at.info)


def test_a_run_outlives_its_tab_and_a_reloaded_page_finds_it(tmp_path, monkeypatch):
    """Start a run, then nobody polls (the tab closed): it trains to its end and is stored
    all the same; a new session with the run's id in its URL shows it finished, stored."""
    from dropedge_explorer.store import ResultStore

    monkeypatch.setenv("DROPEDGE_RESULTS", str(tmp_path / "results.sqlite"))
    at = _live(layers=2, epochs=30)
    at.button(key="lt_start").click().run()
    _ok(at)
    run_id = query_param(at, "run")
    live = at.session_state["live_training"]
    assert run_id == at.session_state["_job_live_training"] and live.active
    del at  # the tab is gone: nothing polls from here on
    deadline = time.monotonic() + 120
    while live.active:  # the worker process and the queue's reader thread, not a page, move it on
        assert time.monotonic() < deadline, "the run did not end without a page"
        time.sleep(0.2)
    (record,) = live.runs
    assert record.status in ("finished", "early_stop") and record.stored_key
    store = ResultStore(tmp_path / "results.sqlite")
    assert store.get(record.config)["test_acc"] == record.end["test_acc"]
    again = open_page(LIVE_PAGE, run=run_id)
    assert again.session_state["live_training"] is live  # the same runs, found by id
    assert "Stored in the results store" in again.success[0].value
    assert again.success[0].value.startswith(record.label)
    assert _legend(_charts(again)["lt_curves"]) == [record.label]
    unknown = open_page(LIVE_PAGE, run="nope")
    assert unknown.warning and "nope" in unknown.warning[0].value
    assert not unknown.session_state["live_training"].runs


def test_switching_the_dataset_mid_run_keeps_the_runs_data_named():
    """The sidebar switches to another dataset while a karate run trains: the runs stay
    under a header naming karate, and the progress text names it too."""
    at = _live(layers=2, epochs=5000)
    at.number_input(key="lt_diag_every").set_value(0).run()
    at.button(key="lt_start").click().run()
    _ok(at)
    live = at.session_state["live_training"]
    try:
        deadline = time.monotonic() + 120  # ends a hung test only: the loop waits on the run's start
        while live.current is None:  # queued until its worker process has started
            assert live.active and time.monotonic() < deadline, "the run never started"
            at.run()
            time.sleep(0.1)
        at.selectbox(key="dataset").set_value("csbm").run()
        _ok(at)
        assert "csbm" in at.caption[0].value  # the page's header: the sidebar's dataset
        heads = [h.value for h in at.subheader]
        assert any(h.startswith("Runs on karate") for h in heads), heads
        assert live.current is not None
        progress = at.get("progress")[0].proto.text
        assert "on karate" in progress and "csbm" not in progress
    finally:
        live.stop()
        assert live.wait(30)


def test_a_reloaded_tuning_page_finds_its_study(tmp_path, monkeypatch):
    """A study started, its tab closed: it runs all its trials unwatched; a new session
    with ``?study_job=<id>`` shows that study (its name, its status, its figures)."""
    monkeypatch.setenv("DROPEDGE_TUNING_STORAGE", str(tmp_path / "tuning.sqlite"))
    at = _app()
    at.slider(key="layers").set_value(2).run()
    at.switch_page(TUNING_PAGE).run()
    at.number_input(key="tune_trials").set_value(3).run()
    at.number_input(key="tune_epochs").set_value(5).run()
    at.text_input(key="tune_study").input("reload-test").run()
    at.button(key="tune_start").click().run()
    _ok(at)
    job, job_id = at.session_state["tune_job"], query_param(at, "study_job")
    del at  # nobody polls from here on
    assert job.join(300) and job.finished == 3 and not job.stopped  # a closed tab leaves it running
    again = open_page(TUNING_PAGE, study_job=job_id)
    assert again.session_state["tune_job"] is job
    assert again.text_input(key="tune_study").value == "reload-test"  # not this session's default name
    assert again.success and "finished 3 trials" in again.success[0].value
    assert set(_charts(again)) == {"tune_surface", "tune_history"}


def test_a_study_waiting_for_its_worker_says_so_not_press_start(tmp_path, monkeypatch):
    """A started study whose worker has not made a trial yet (here: it waits in line behind a
    long Live run) is not told to "press Start study": its first trial is coming."""
    from dropedge_explorer.jobs import live as training_session
    from dropedge_explorer.jobs.queue import JobQueue
    from dropedge_explorer.training import TrainConfig

    jobs = JobQueue(max_running=1, store=None)
    monkeypatch.setattr(training_session, "QUEUE", jobs)
    monkeypatch.setenv("DROPEDGE_TUNING_STORAGE", str(tmp_path / "tuning.sqlite"))
    ahead = jobs.submit("train", [TrainConfig(dataset="karate", epochs=100_000, patience=0, diag_every=0)],
                        owner="someone else")
    try:
        at = open_page(TUNING_PAGE, layers="2", tune_trials="2", tune_epochs="5")
        at.button(key="tune_start").click().run()
        _ok(at)
        job = at.session_state["tune_job"]
        assert job.queued and "place 1 in the server's line" in job.status
        said = " ".join(i.value for i in at.info)
        assert "its first one is coming" in said and "press “Start study”" not in said, said
        job.stop()
    finally:
        jobs.cancel(ahead)
        jobs.wait(ahead, 300)
