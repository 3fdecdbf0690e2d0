"""Every page through ``streamlit.testing.v1.AppTest``: run it, move its main controls,
read back the Plotly figures it produced (the chart protos' JSON ``spec``)."""
from __future__ import annotations

import numpy as np
from dropedge_core import datasets

from dropedge_explorer.figures import SAMPLER_COLORS
from tests.helpers.app import EDGE_PAGE, MEN_PAGE, _app, _charts, _ok, _values


def _title(fig: dict) -> str:
    return fig["layout"]["title"]["text"]


def _segments(trace: dict) -> int:
    return len(trace.get("x") or []) // 3


def test_home_renders_the_over_smoothing_figure():
    at = _app()
    assert at.title[0].value == "DropEdge++ Explorer"
    charts = _charts(at)
    assert list(charts) == ["home_smoothing"]
    fig = charts["home_smoothing"]
    names = [t["name"] for t in fig["data"] if t.get("showlegend", True)]
    assert names == ["NoDrop", "DropEdge", "DropEdge++"]
    assert fig["data"][0]["line"]["color"] == SAMPLER_COLORS["nodrop"]
    assert _values(fig["data"][0]["x"]).max() == 8  # the default L = 8
    assert any("karate" in c.value for c in at.caption)  # says which data source
    # the shared pickers drive it
    at.slider(key="layers").set_value(4).run()
    _ok(at)
    assert _values(_charts(at)["home_smoothing"]["data"][0]["x"]).max() == 4
    at.selectbox(key="sampler").select("lid").run()
    _ok(at)
    names = [t["name"] for t in _charts(at)["home_smoothing"]["data"] if t.get("showlegend", True)]
    assert names == ["NoDrop", "DropEdge", "LID"]


def test_dataset_picker_says_what_is_offline():
    at = _app()
    box = at.selectbox(key="dataset")
    labels = dict(zip(datasets.NAMES, box.options))
    assert "built in" in labels["karate"] and "built in" in labels["csbm"]
    for row in datasets.available():
        label = labels[row["name"]]
        assert ("needs download" in label) == (not row["offline"])


def test_edge_sampler_page_controls():
    at = _app()
    at.switch_page(EDGE_PAGE).run()
    _ok(at)
    charts = _charts(at)
    assert set(charts) == {"edges", "reach", "counts", "nesting", "shares"}
    fig = charts["edges"]
    assert "DropEdge++: layer 0 of 8" in _title(fig)
    kept0 = sum(_segments(t) for t in fig["data"] if t["name"].startswith("kept"))
    assert f"{kept0} of 78 drawn edges kept" in _title(fig)
    # the layer slider moves through the layers; LID/DropEdge++ keep more at the top
    at.slider(key="edge_layer").set_value(7).run()
    _ok(at)
    fig = _charts(at)["edges"]
    assert "layer 7 of 8" in _title(fig)
    kept7 = sum(_segments(t) for t in fig["data"] if t["name"].startswith("kept"))
    assert kept7 > kept0
    # another sampler: its colour for the kept edges, its nesting
    at.selectbox(key="sampler").select("ldd").run()
    _ok(at)
    charts = _charts(at)
    kept = [t for t in charts["edges"]["data"] if t["name"].startswith("kept")]
    assert len(kept) == 1 and kept[0]["line"]["color"] == SAMPLER_COLORS["ldd"]
    z = _values(charts["nesting"]["data"][0]["z"]).astype(float)
    assert z.shape == (8, 8)
    assert np.allclose(np.tril(z), np.tril(np.ones_like(z)))  # LDD nests downwards
    # resample: a new draw, the same counts
    before = next(t for t in charts["edges"]["data"] if t["name"].startswith("dropped"))
    at.button[0].click().run()
    _ok(at)
    assert any("draw #1" in c.value for c in at.caption)
    after = next(t for t in _charts(at)["edges"]["data"] if t["name"].startswith("dropped"))
    assert _segments(before) == _segments(after)  # same counts ...
    assert before["x"] != after["x"]  # ... other edges
    # the animation: one Plotly frame per layer
    at.toggle(key="animate").set_value(True).run()
    _ok(at)
    assert len(_charts(at)["edges"]["frames"]) == 8


def test_edge_sampler_weighted_on_csbm_and_cora(cora):
    at = _app()
    at.selectbox(key="dataset").select("csbm").run()
    at.switch_page(EDGE_PAGE).run()
    _ok(at)
    charts = _charts(at)
    kept = [t for t in charts["edges"]["data"] if t["name"].startswith("kept")]
    assert len(kept) >= 2 and all("weight" in t["name"] for t in kept)  # kernel-weight bins
    shares = [t["name"] for t in charts["shares"]["data"]]
    assert any("DropEdge++" in n for n in shares) and any("LID" in n for n in shares)
    # a big graph: a k-hop neighbourhood around a centre node
    at.selectbox(key="dataset").select("cora").run()
    _ok(at)
    assert any("hop neighbourhood of node" in c.value for c in at.caption)
    at.number_input(key="center_cora").set_value(0).run()
    _ok(at)
    assert any("neighbourhood of node 0 " in c.value for c in at.caption)


def test_men_explorer_karate_and_cora(cora):
    at = _app()
    at.switch_page(MEN_PAGE).run()
    _ok(at)
    charts = _charts(at)
    assert set(charts) == {"men_depth", "men_curves"}  # karate: no paper table
    fig = charts["men_depth"]
    assert fig["layout"]["yaxis"]["type"] == "log"
    assert [t["name"] for t in fig["data"]][:7] == ["NoDrop", "DropEdge", "LI", "LID", "LDD", "FD",
                                                    "DropEdge++"]
    assert any("Cora and CiteSeer only" in i.value for i in at.info)
    at.multiselect(key="men_samplers").set_value(["lid", "ldd"]).run()
    at.multiselect(key="men_depths").set_value([2, 4]).run()
    _ok(at)
    fig = _charts(at)["men_depth"]
    assert [t["name"] for t in fig["data"]] == ["LID", "LDD"]
    lid, ldd = (_values(t["y"]).astype(float) for t in fig["data"])
    assert (lid <= ldd).all()  # the paper's theorem
    # Cora: the paper's table beside the measured one
    at.selectbox(key="dataset").select("cora").run()
    _ok(at)
    charts = _charts(at)
    assert "men_table" in charts
    assert len(at.dataframe) == 1
    table = at.dataframe[0].value
    assert len(table) == 12  # the paper's Cora rows: 4 samplers x L = 4, 8, 16
    measured = table.dropna(subset=["measured_men"])
    assert set(measured["sampler"]) == {"LID", "LDD"} and set(measured["layers"]) == {4}
    assert measured["ratio"].between(0.8, 1.2).all()


def test_unavailable_dataset_is_a_message(tmp_path, monkeypatch):
    monkeypatch.setenv("DROPEDGE_DATA", str(tmp_path / "data"))  # PubMed is nowhere
    monkeypatch.setenv("DROPEDGE_CACHE", str(tmp_path / "cache"))
    assert datasets.availability("pubmed") == "download"
    at = _app()
    at.selectbox(key="dataset").select("pubmed").run()
    _ok(at)
    assert at.error and "pubmed" in at.error[0].value
    for page in (EDGE_PAGE, MEN_PAGE, "app_pages/live_training.py", "app_pages/tuning.py"):
        at.switch_page(page).run()
        _ok(at)
        assert at.error and not at.get("plotly_chart")
