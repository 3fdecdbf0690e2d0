"""The user's own graph in the app (``AppTest``): the dataset picker's "upload (your
CSV)" entry, its file uploaders (``FileUploader.set_value``), every page on the uploaded
graph, one-line errors for bad files, and one upload per browser session."""
from __future__ import annotations

import os
import pickle

from tests.helpers.app import (
    DEPTH_PAGE,
    EDGE_PAGE,
    LIVE_PAGE,
    MEN_PAGE,
    TUNING_PAGE,
    UPLOAD_PAGES,
    _app,
    _charts,
    _ok,
    _pick_upload,
    _texts,
    _upload,
    sbm_csv,
)


def test_upload_entry_asks_for_the_edge_list():
    at = _pick_upload(_app())
    box = at.selectbox(key="dataset")
    assert box.options[-1] == "upload (your CSV)"
    labels = [u.label for u in at.file_uploader]
    assert labels[0].startswith("Edge list") and "features" in labels[1] and "labels" in labels[2]
    assert all(u.allowed_type == [".csv", ".txt", ".tsv"] for u in at.file_uploader)
    assert at.selectbox(key="split").options == ["per-class"]
    for page in UPLOAD_PAGES[1:]:
        at.switch_page(page).run()
        _ok(at)
        assert any("Upload your graph in the sidebar" in i for i in _texts(at.info)), page
        assert not at.error and not _charts(at)


def test_edges_only_every_page_works_training_says_no_labels():
    files = sbm_csv()
    at = _upload(_pick_upload(_app()), edges=files["edges"])
    caption = next(c for c in _texts(at.caption) if c.startswith("Data:"))
    assert "**edges** uploaded: edges.csv ·" in caption and "N = 120 nodes" in caption
    assert "no labels" in caption
    notes = _texts(at.sidebar.caption)
    assert any("dropped 1 self-loop" in n for n in notes)
    assert any("dropped 1 duplicate edge" in n for n in notes)
    assert any("no features: using a constant feature" in n for n in notes)
    assert list(_charts(at)) == ["home_smoothing"]
    at.switch_page(EDGE_PAGE).run()
    _ok(at)
    assert set(_charts(at)) == {"edges", "reach", "counts", "nesting"}  # no labels: no class shares
    assert any("No labels" in i for i in _texts(at.info))
    assert any("no features file (one constant feature)" in c for c in _texts(at.caption))
    at.switch_page(MEN_PAGE).run()
    _ok(at)
    at.multiselect(key="men_depths").set_value([2, 4]).run()
    _ok(at)
    assert set(_charts(at)) == {"men_depth", "men_curves"}
    for page in (LIVE_PAGE, TUNING_PAGE):
        at.switch_page(page).run()
        _ok(at)
        assert [i for i in _texts(at.info) if i.startswith("no labels: training is unavailable")], page
        assert not _charts(at) and not at.error
    at.switch_page(DEPTH_PAGE).run()
    _ok(at)
    assert any("not available for an uploaded graph" in i for i in _texts(at.info))


def test_features_and_labels_train_on_the_upload():
    files = sbm_csv()
    at = _upload(_pick_upload(_app()), **files)
    caption = next(c for c in _texts(at.caption) if c.startswith("Data:"))
    assert "uploaded: edges.csv (+features.csv, labels.csv)" in caption
    assert "2 classes" in caption and "(40/60/20)" in caption  # 20/30 per class, the rest test
    assert any("2 labels mapped to class ids" in n for n in _texts(at.sidebar.caption))
    at.switch_page(EDGE_PAGE).run()
    _ok(at)
    assert set(_charts(at)) == {"edges", "reach", "counts", "nesting", "shares"}
    # Live training on the uploaded graph
    at.slider(key="layers").set_value(2).run()
    at.switch_page(LIVE_PAGE).run()
    _ok(at)
    assert not any(i.startswith("no labels") for i in _texts(at.info))
    at.radio(key="lt_mode").set_value("paper preset").run()
    _ok(at)
    assert any("No paper preset for your own graph" in i for i in _texts(at.info))
    at.radio(key="lt_mode").set_value("custom").run()
    at.number_input(key="lt_epochs").set_value(10).run()
    at.number_input(key="lt_diag_every").set_value(0).run()
    at.button(key="lt_start").click().run()
    _ok(at)
    session = at.session_state["live_training"]
    assert session.wait(60)
    at.run()
    _ok(at)
    run = session.runs[0]
    assert run.status == "finished", run.message
    assert run.config.dataset == "upload" and run.config.split == "per-class"
    assert run.events[0]["num_nodes"] == 120
    table = at.dataframe[0].value
    assert table.loc[0, "dataset"] == "upload" and 0 <= table.loc[0, "test_acc"] <= 1


def test_bad_files_are_one_error_line_never_unpickled(tmp_path):
    at = _upload(_pick_upload(_app()), edges=b"source,target\n0,1\n1,x*y*\n")
    errors = _texts(at.error)
    assert errors == ["Cannot use your upload: edges.csv line 3: 'x\\*y\\*' is not a non-negative "
                      "integer node id"]  # Markdown escaped: shown as written
    assert not _charts(at)
    for page in (EDGE_PAGE, LIVE_PAGE):
        at.switch_page(page).run()
        _ok(at)
        assert len(at.error) == 1 and "line 3" in at.error[0].value and not _charts(at)
    # a pickle whose loading would create a directory: refused as a pickle, never loaded
    marker = tmp_path / "unpickled"
    files = sbm_csv()

    class Payload:
        def __reduce__(self):
            return os.mkdir, (str(marker),)

    for protocol in (0, pickle.HIGHEST_PROTOCOL):
        for role in ("edges", "labels"):  # protocol 0's ASCII lines were read as class names
            _upload(at, **{role: pickle.dumps(Payload(), protocol=protocol)})
            assert len(at.error) == 1 and at.error[0].value.startswith(
                f"Cannot use your upload: {role}.csv looks like a Python pickle (protocol {protocol})")
            assert not marker.exists()
            _upload(at, **{role: files[role]})
    # labels that do not fit the edge list: the labels file and its line named
    _upload(at, edges=files["edges"], labels=b"0\n1\n")
    assert len(at.error) == 1 and "labels.csv has 2 labels, one per node" in at.error[0].value
    # fixed: the graph is back
    _upload(at, labels=files["labels"])
    assert not at.error
    at.switch_page(EDGE_PAGE).run()
    _ok(at)
    assert not at.error and "shares" in _charts(at)


def test_a_new_upload_replaces_the_old_and_survives_a_detour():
    at = _upload(_pick_upload(_app()), edges=b"0,1\n1,2\n2,3\n")
    at.switch_page(EDGE_PAGE).run()
    _ok(at)
    assert any("N = 4 nodes" in c for c in _texts(at.caption))
    first = _charts(at)["edges"]
    _upload(at, edges=b"0,1\n1,2\n2,3\n3,4\n4,0\n")
    assert any("N = 5 nodes" in c for c in _texts(at.caption))
    assert _charts(at)["edges"] != first  # drawn anew, not from the first upload's cache
    # another dataset and back: the upload is still in use until replaced or forgotten
    at.selectbox(key="dataset").select("karate").run()
    _ok(at)
    assert any("Data: **karate**" in c for c in _texts(at.caption))
    _pick_upload(at)
    assert any("N = 5 nodes" in c for c in _texts(at.caption))
    assert any("Still using your earlier upload (edges.csv)" in c for c in _texts(at.sidebar.caption))
    at.run()  # stays on later reruns
    _ok(at)
    assert any("N = 5 nodes" in c for c in _texts(at.caption))
    at.button(key="upload_forget").click().run()
    _ok(at)
    assert any("Upload your graph in the sidebar" in i for i in _texts(at.info))


def test_each_browser_session_keeps_its_own_upload():
    one = _upload(_pick_upload(_app()), edges=b"0,1\n1,2\n2,3\n")
    two = _upload(_pick_upload(_app()), edges=b"0,1\n1,2\n2,3\n3,4\n4,0\n0,2\n")
    three = _pick_upload(_app())
    one.run()
    _ok(one)
    assert any("N = 4 nodes" in c for c in _texts(one.caption))
    assert any("N = 5 nodes" in c and "M = 6 edges" in c for c in _texts(two.caption))
    assert any("Upload your graph in the sidebar" in i for i in _texts(three.info))


def test_tuning_on_the_upload_and_train_this(tmp_path, monkeypatch):
    monkeypatch.setenv("DROPEDGE_TUNING_STORAGE", str(tmp_path / "tuning.sqlite"))
    at = _upload(_pick_upload(_app()), **sbm_csv())
    at.slider(key="layers").set_value(2).run()
    at.switch_page(TUNING_PAGE).run()
    _ok(at)
    study = at.text_input(key="tune_study").value
    assert study.startswith("upload-") and at.session_state["upload_parsed"]["id"] in study
    at.number_input(key="tune_trials").set_value(2).run()
    at.number_input(key="tune_epochs").set_value(5).run()
    at.button(key="tune_start").click().run()
    _ok(at)
    assert at.session_state["tune_job"].join(60)
    at.run()
    _ok(at)
    assert at.success and "finished 2 trials" in at.success[0].value
    at.button(key="tune_train_this").click().run()
    _ok(at)
    assert at.title[0].value == "Live training" and not at.error
    assert any("From study" in i.value for i in at.info)
