"""The app under hostile input (issue 15): bad environment variables, a graph too big for
exact MEN, a ten-byte edge list naming ten million nodes, one-class labels, a memory limit,
someone else's study. Each is an ``st.error`` / ``st.info`` line, never an exception."""
from __future__ import annotations

import optuna
import pytest
import streamlit as st

from tests.helpers.app import (
    LIVE_PAGE,
    MEN_PAGE,
    TUNING_PAGE,
    _app,
    _charts,
    _ok,
    _pick_upload,
    _texts,
    _upload,
)
from tests.helpers.app import UPLOAD_PAGES as PAGES


@pytest.mark.parametrize("var, value", [("DROPEDGE_TORCH_THREADS", "abc"), ("DROPEDGE_TORCH_THREADS", "2048"),
                                        ("DROPEDGE_TORCH_THREADS", "\u00b2"),  # isdigit() True, int() fails
                                        ("DROPEDGE_SESSION_GRACE", "abc"), ("DROPEDGE_MAX_JOB_SECONDS", "-1"),
                                        ("DROPEDGE_MAX_MEMORY_GB", "inf"), ("DROPEDGE_MAX_WORKERS", "0"),
                                        ("DROPEDGE_MAX_WORKERS", "many")])
def test_bad_environment_is_one_error_on_every_page(monkeypatch, var, value):
    monkeypatch.setenv(var, value)
    at = _app()
    for page in PAGES[1:]:
        at.switch_page(page).run()
        _ok(at)
        errors = _texts(at.error)
        assert len(errors) == 1 and errors[0].startswith(f"Cannot start: {var} must be"), errors
        assert repr(value) in errors[0]
        assert not _charts(at)


def test_exact_men_is_disabled_above_the_limit_on_a_25000_node_ring():
    n = 25_000
    ring = "".join(f"{i},{(i + 1) % n}\n" for i in range(n)).encode()
    at = _upload(_pick_upload(_app()), edges=ring)
    at.switch_page(MEN_PAGE).run()
    _ok(at)
    toggle = next(t for t in at.toggle if t.label == "Exact MEN")
    assert toggle.disabled and not toggle.value
    assert any("Exact MEN is off" in c and "25,000 nodes" in c for c in _texts(at.caption))
    at.multiselect(key="men_depths").set_value([2]).run()
    _ok(at)
    assert not at.error and "men_depth" in _charts(at)


def test_a_ten_byte_edge_list_is_renumbered_not_ten_million_nodes():
    at = _upload(_pick_upload(_app()), edges=b"0,9999999\n")
    caption = next(c for c in _texts(at.caption) if c.startswith("Data:"))
    assert "N = 2 nodes" in caption
    assert any("renumbered them 0..1" in n for n in _texts(at.sidebar.caption))


def test_a_huge_upload_is_refused_before_the_home_page_propagates_it(monkeypatch):
    """Re-probe of issue 29: two nodes with an edge and a features file of ten million rows
    grew the server by 6.9 GB under a 3 GiB limit (the home page's over-smoothing curves had
    no estimate). Scaled down: 300k rows under 0.15 GiB, which the upload, the graph and
    the sidebar's sampling check pass and the curves (~0.4 GB) do not."""
    monkeypatch.setenv("DROPEDGE_MAX_MEMORY_GB", "0.15")
    at = _upload(_pick_upload(_app()), edges=b"0,1\n", features=b"1\n" * 300_000)
    errors = _texts(at.error)
    assert len(errors) == 1 and "over-smoothing curves of edges (N=300000, M=1, L=" in errors[0], errors
    assert "above the limit of 153.6 MiB" in errors[0] and not _charts(at)


def test_one_class_and_nan_labels(monkeypatch):
    edges = b"".join(f"{i},{i + 1}\n".encode() for i in range(9))
    at = _upload(_pick_upload(_app()), edges=edges, labels=b"a\n" * 9 + b"nan\n")
    notes = _texts(at.sidebar.caption)
    assert any("every labelled node has the same label ('a')" in n for n in notes), notes
    assert any("1 of 10 nodes has no label" in n for n in notes), notes  # nan: unlabelled
    at.switch_page(LIVE_PAGE).run()
    at.number_input(key="lt_epochs").set_value(2).run()
    at.button(key="lt_start").click().run()
    _ok(at)
    assert any("one class only" in e for e in _texts(at.error)), _texts(at.error)
    assert not at.session_state["live_training"].runs


def test_memory_limit_is_one_error_on_every_page(monkeypatch):
    monkeypatch.setenv("DROPEDGE_MAX_MEMORY_GB", "0.00001")  # 10 KiB: even karate is too big
    at = _app()
    for page in PAGES:
        if page != "app.py":
            at.switch_page(page).run()
        _ok(at)
        errors = [e.replace("\\", "") for e in _texts(at.error)]  # Markdown escapes
        assert len(errors) == 1 and "would need about" in errors[0] and "DROPEDGE_MAX_MEMORY_GB" in errors[0]
        assert not _charts(at)


def test_someone_elses_study_is_refused_on_the_tuning_page(tmp_path, monkeypatch):
    path = tmp_path / "tuning.sqlite"
    monkeypatch.setenv("DROPEDGE_TUNING_STORAGE", str(path))
    optuna.create_study(study_name="theirs", storage=f"sqlite:///{path}", direction="minimize")
    at = _app()
    at.switch_page(TUNING_PAGE).run()
    _ok(at)
    mine = at.text_input(key="tune_study").value
    other = _app()
    other.switch_page(TUNING_PAGE).run()
    assert other.text_input(key="tune_study").value != mine  # two sessions, two studies
    at.text_input(key="tune_study").input("theirs").run()
    at.button(key="tune_start").click().run()
    _ok(at)
    assert any("study 'theirs' exists with direction minimize" in e for e in _texts(at.error))
    assert "tune_job" not in at.session_state


@pytest.mark.parametrize("kind", ["file", "symlink_loop"])
def test_bad_cache_is_one_error_in_the_app(tmp_path, monkeypatch, cora, kind):
    cache = tmp_path / "cache"
    if kind == "file":
        cache.write_text("x")
    else:
        (tmp_path / "other").symlink_to(cache)
        cache.symlink_to(tmp_path / "other")
    monkeypatch.setenv("DROPEDGE_CACHE", str(cache))
    st.cache_resource.clear()  # earlier tests of this process may hold a loaded Cora
    at = _app()
    at.selectbox(key="dataset").select("cora").run()
    _ok(at)
    errors = _texts(at.error)
    assert len(errors) == 1 and "is not a writable directory" in errors[0], errors
    at.switch_page(MEN_PAGE).run()
    _ok(at)
    assert len(_texts(at.error)) == 1 and not _charts(at)


def test_a_crafted_raw_file_is_one_error_and_the_app_lives_on(tmp_path, monkeypatch, cora):
    """Issue 29: an ``ind.cora.x`` whose column index is past the matrix's width used to
    kill the Streamlit server (-11, every session with it) when a page loaded Cora. The
    app runs in this process here: a segmentation fault would end the test run."""
    from tests.helpers.files import _index, copy_raw, raw_value

    src = copy_raw(tmp_path)
    (src / "Cora" / "raw" / "ind.cora.x").write_bytes(_index(raw_value(src, "ind.cora.x"), 5, 10**6))
    monkeypatch.setenv("DROPEDGE_DATA", str(src))
    monkeypatch.setenv("DROPEDGE_CACHE", str(tmp_path / "cache"))
    st.cache_resource.clear()  # earlier tests of this process may hold a loaded Cora
    at = _app()
    at.selectbox(key="dataset").select("cora").run()
    _ok(at)
    at.switch_page(MEN_PAGE).run()
    _ok(at)
    errors = _texts(at.error)
    assert len(errors) == 1 and "ind.cora.x: column index 1000000 is outside 0..1432" in errors[0], errors
    assert not _charts(at)
    at.selectbox(key="dataset").select("karate").run()  # the same session goes on
    _ok(at)
    assert not at.error and _charts(at)
