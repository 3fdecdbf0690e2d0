"""The app as a classroom server (issue 35): jobs belong to the browser session that
started them. Two ``AppTest`` sessions share the server's job registry (a module global,
swapped per test): B opens A's run, study or sweep — by its id in a link, or from the
server's list — and watches it read-only; only A's owner link controls it. Links echo
bounded values and open a run with its own settings; no page shows a server path."""
from __future__ import annotations

import time

import pytest

from tests.helpers.app import (
    DEPTH_PAGE,
    LIVE_PAGE,
    TUNING_PAGE,
    _app,
    _live,
    _ok,
    depth_page,
    open_page,
    query_param,
)

CONTROLS = {"lt_start", "lt_compare", "lt_stop", "lt_clear"}


@pytest.fixture(autouse=True)
def _own_registry(monkeypatch):
    """Each test its own server-wide job registry: another test's runs stay out of it."""
    from dropedge_explorer.jobs import registry

    monkeypatch.setattr(registry, "REGISTRY", registry.JobRegistry())


def _buttons(at) -> set[str]:
    return {b.key for b in at.button}


def _texts(at) -> list[str]:
    """Every text a visitor reads on the page (main and sidebar)."""
    kinds = ("markdown", "caption", "info", "warning", "error", "success", "code", "text", "title",
             "subheader", "exception")
    return [str(e.value) for kind in kinds for e in at.get(kind)]


def _long_run(at):
    """Start a run on karate that trains until stopped; the page's session and its id."""
    at.number_input(key="lt_epochs").set_value(5000).run()
    at.number_input(key="lt_patience").set_value(0).run()  # no early stop: it trains until stopped
    at.number_input(key="lt_diag_every").set_value(0).run()
    at.button(key="lt_start").click().run()
    _ok(at)
    live = at.session_state["live_training"]
    deadline = time.monotonic() + 300  # ends a hung test only: the loop waits on the job's state
    while live.current is None:  # queued until its worker process has started
        assert live.active and time.monotonic() < deadline, "the run never started"
        at.run()
        time.sleep(0.1)
    return live, query_param(at, "run")


def test_a_visitor_by_link_can_neither_stop_clear_nor_queue_into_a_run():
    """B opens A's run by its id: the curves, no Start, Compare, Stop or Clear — nothing to
    click that would end A's run, empty A's list or queue into it; A's run goes on, and
    B's "Train my own runs" gives B a session of its own."""
    a = _live(layers=2)
    live, run_id = _long_run(a)
    try:
        b = open_page(LIVE_PAGE, run=run_id)
        assert b.session_state["live_training"] is live  # B watches A's runs
        assert not CONTROLS & _buttons(b), _buttons(b)
        assert any("read-only" in i.value for i in b.info)
        b.run()
        assert live.active and len(live.runs) == 1  # nothing stopped, nothing queued
        live.stop()  # the owner's Stop (A's page) ends it; B's page now shows a finished run
        assert live.wait(60)
        b.run()
        _ok(b)
        assert not CONTROLS & _buttons(b) and len(live.runs) == 1  # no Clear for B
        b.button(key="lt_back_to_mine").click().run()
        _ok(b)
        assert b.session_state["live_training"] is not live and CONTROLS <= _buttons(b)
        assert "run" not in b.query_params
    finally:
        live.stop()


def test_a_visitor_from_the_servers_list_watches_read_only():
    """B follows A's run from "Show the other runs of this server": read-only, A's run unaffected; B's
    own session is kept and comes back."""
    a = _live(layers=2)
    live, run_id = _long_run(a)
    try:
        b = _live(layers=2)
        mine = b.session_state["live_training"]
        assert not [w for w in b.button if w.key == f"lt_follow_{run_id}"]  # drawn only when asked
        b.toggle(key="lt_show_others").set_value(True).run()
        b.button(key=f"lt_follow_{run_id}").click().run()
        _ok(b)
        assert b.session_state["live_training"] is live
        assert not CONTROLS & _buttons(b) and live.active
        assert "owner" not in b.query_params
        b.button(key="lt_back_to_mine").click().run()
        assert b.session_state["live_training"] is mine
    finally:
        live.stop()


def _token(at, job_id: str) -> str:
    """The owner key the session ``at`` holds for ``job_id`` (in no URL and no text)."""
    return at.session_state["_owned_jobs"][job_id]


def test_the_owner_link_controls_the_run_and_a_wrong_key_does_not():
    """A's owner key of 128 bits is in no URL, no list and no text of A's screen until A
    asks for the control link; that link, opened in another tab, gives Stop back (and
    leaves that tab's address bar), and the run ends with its reason stored. A wrong key
    is read-only and never echoed."""
    a = _live(layers=2)
    live, run_id = _long_run(a)
    try:
        token = _token(a, run_id)
        assert len(token) >= 22  # 16 bytes of secrets.token_urlsafe
        assert "owner" not in a.query_params  # a projected screen shows no key
        assert not any(token in t for t in _texts(a))  # not in "Link to this view" either
        a.toggle(key="live_training_control_link").set_value(True).run()
        (link,) = [c.value for c in a.code if token in c.value]  # shown when asked, once
        assert f"run={run_id}" in link and f"owner={token}" in link
        a.toggle(key="live_training_control_link").set_value(False).run()
        assert not any(token in t for t in _texts(a))
        wrong = open_page(LIVE_PAGE, run=run_id, owner="x" * 30)
        assert not CONTROLS & _buttons(wrong)
        assert not any("x" * 30 in t for t in _texts(wrong))
        other = _live(layers=2)  # the server's list shows the id only
        assert not any(token in t for t in _texts(other))
        tab = open_page(LIVE_PAGE, run=run_id, owner=token)
        assert tab.session_state["live_training"] is live and CONTROLS <= _buttons(tab)
        assert "owner" not in tab.query_params  # the key left the address bar after the first run
        tab.button(key="lt_stop").click().run()
        assert live.wait(60)
        (record,) = live.runs
        assert record.status == "stopped" and record.note == "stopped by its owner (Stop)"
    finally:
        live.stop()


def test_a_reload_keeps_control_by_the_browsers_cookie_and_another_browser_does_not(monkeypatch):
    """The owner's page writes the key into a cookie (the sync script), never the URL; a
    reload of the URL (a new session whose browser sends that cookie) keeps Stop, the same
    URL in a browser without it (a student's) is read-only, and a cookie of another job or
    a forged value grants nothing."""
    from app_shared import job_links

    a = _live(layers=2)
    live, run_id = _long_run(a)
    try:
        token = _token(a, run_id)
        scripts = [h.proto.body for h in a.sidebar.get("html")]
        assert any(f"dropedge_owner_{run_id}={token}; path=/" in body for body in scripts), scripts
        assert "owner" not in a.query_params
        cookies: dict[str, str] = {}
        monkeypatch.setattr(job_links, "_browser_cookies", lambda: cookies)
        student = open_page(LIVE_PAGE, run=run_id)  # no cookie: read-only
        assert not CONTROLS & _buttons(student)
        cookies.update({f"dropedge_owner_{run_id}": "forged" + token[6:], "dropedge_owner_0": token})
        assert not CONTROLS & _buttons(open_page(LIVE_PAGE, run=run_id))  # wrong value, wrong job
        assert not any("does not fit" in i.value for i in open_page(LIVE_PAGE, run=run_id).info)
        cookies[f"dropedge_owner_{run_id}"] = token  # the teacher's browser, reloaded
        reloaded = open_page(LIVE_PAGE, run=run_id)
        assert reloaded.session_state["live_training"] is live and CONTROLS <= _buttons(reloaded)
        assert "owner" not in reloaded.query_params
    finally:
        live.stop()


def test_a_visitor_cannot_stop_a_tuning_study(tmp_path, monkeypatch):
    """B opens A's study by ``?study_job=<id>``: its status, no Start and no Stop; the
    owner's link has Stop."""
    monkeypatch.setenv("DROPEDGE_TUNING_STORAGE", str(tmp_path / "tuning.sqlite"))
    a = _app()
    a.slider(key="layers").set_value(2).run()
    a.switch_page(TUNING_PAGE).run()
    a.number_input(key="tune_trials").set_value(500).run()
    a.number_input(key="tune_epochs").set_value(1000).run()
    a.button(key="tune_start").click().run()
    _ok(a)
    job, job_id = a.session_state["tune_job"], query_param(a, "study_job")
    try:
        b = open_page(TUNING_PAGE, study_job=job_id)
        assert b.session_state["tune_job"] is job
        assert not {"tune_start", "tune_stop"} & _buttons(b) and "tune_leave" in _buttons(b)
        b.run()
        assert not job.stopping and not job.done
        b.button(key="tune_leave").click().run()
        _ok(b)
        assert "tune_start" in _buttons(b) and b.text_input(key="tune_study").value != job.study_name
        owner = open_page(TUNING_PAGE, study_job=job_id, owner=_token(a, job_id))
        owner.button(key="tune_stop").click().run()
        assert job.stopping
    finally:
        job.stop()
        job.join(60)


def test_a_visitor_cannot_stop_a_sweep(tmp_path, monkeypatch):
    """B opens A's sweep by ``?sweep=<id>``: its progress, no Stop; A's sweep goes on."""
    monkeypatch.setenv("DROPEDGE_RESULTS", str(tmp_path / "results.sqlite"))
    monkeypatch.setattr("dropedge_explorer.studies.run_tables.BUNDLED_DIR", tmp_path / "bundled")
    a = depth_page(depths=(2, 4), seeds=3, epochs=3000)
    a.button(key="ds_run").click().run()
    _ok(a)
    job, job_id = a.session_state["ds_job"], query_param(a, "sweep")
    try:
        b = open_page(DEPTH_PAGE, sweep=job_id)
        assert b.session_state["ds_job"] is job and "ds_stop" not in _buttons(b)
        assert any("read-only" in i.value for i in b.info)
        assert not job.stopping
        a.button(key="ds_stop").click().run()  # the owner's Stop
        assert job.stopping
    finally:
        job.stop()
        job.join(60)


@pytest.mark.parametrize("page, param", [(LIVE_PAGE, "run"), (TUNING_PAGE, "study_job"),
                                         (DEPTH_PAGE, "sweep")])
def test_an_unknown_job_id_is_echoed_bounded(page, param, tmp_path, monkeypatch):
    """A 100,000-character id in a link: one warning of bounded length, with the length."""
    monkeypatch.setenv("DROPEDGE_TUNING_STORAGE", str(tmp_path / "tuning.sqlite"))
    monkeypatch.setenv("DROPEDGE_RESULTS", str(tmp_path / "results.sqlite"))
    at = open_page(page, **{param: "a" * 100_000})
    (warning,) = [w.value for w in at.warning if "not on this server" in w.value]
    assert len(warning) < 400 and "100000 characters" in warning, len(warning)


def test_a_run_link_alone_opens_with_the_runs_data_and_settings():
    """``?run=<id>`` with nothing else: the sidebar takes the run's dataset, sampler,
    layers, keep rates and seed, the form its hyperparameters (the default page was
    karate with the depth recipe)."""
    a = _app()
    a.selectbox(key="dataset").select("csbm").run()
    a.selectbox(key="sampler").select("lid").run()
    a.slider(key="layers").set_value(3).run()
    a.switch_page(LIVE_PAGE).run()
    a.radio(key="lt_mode").set_value("custom").run()
    a.number_input(key="lt_hidden").set_value(16).run()
    a.number_input(key="lt_epochs").set_value(7).run()
    a.button(key="lt_start").click().run()
    _ok(a)
    live = a.session_state["live_training"]
    assert live.wait(60)
    b = open_page(LIVE_PAGE, run=query_param(a, "run"))
    assert b.selectbox(key="dataset").value == "csbm" and b.selectbox(key="sampler").value == "lid"
    assert b.slider(key="layers").value == 3 and b.radio(key="lt_mode").value == "custom"
    assert b.number_input(key="lt_hidden").value == 16 and b.number_input(key="lt_epochs").value == 7
    assert "csbm" in b.caption[0].value  # the header's data line


def test_no_page_shows_a_server_path(tmp_path, monkeypatch):
    """The results store, the tuning storage and the data folder are named by kind and
    last name on every page; their folders never show."""
    secret = tmp_path / "server-only"
    secret.mkdir()
    monkeypatch.setenv("DROPEDGE_RESULTS", str(secret / "results.sqlite"))
    monkeypatch.setenv("DROPEDGE_TUNING_STORAGE", str(secret / "tuning.sqlite"))
    monkeypatch.setattr("dropedge_explorer.studies.run_tables.BUNDLED_DIR", tmp_path / "bundled")
    for page in ("app.py", LIVE_PAGE, TUNING_PAGE, DEPTH_PAGE):
        at = open_page(page) if page != "app.py" else _app()
        texts = _texts(at)
        assert not any(str(secret) in t for t in texts), [t for t in texts if str(secret) in t]
    tuning = open_page(TUNING_PAGE)
    assert any("SQLite file tuning.sqlite" in c.value for c in tuning.caption)


def test_the_data_line_names_the_data_folder_not_its_path(cora):
    """Cora from ``DROPEDGE_DATA`` or the cache: the data line says which (the folder's
    name), never the folder's path on the server."""
    from dropedge_core import datasets

    at = open_page("app.py", dataset="cora")
    line = next(c.value for c in at.caption if c.value.startswith("Data:"))
    assert "DROPEDGE_DATA (folder" in line or "the local cache" in line, line
    folders = [str(p) for p in (datasets.data_dir(), datasets.cache_dir()) if p is not None]
    assert not any(f in t for f in folders for t in _texts(at)), line
