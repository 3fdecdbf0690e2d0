"""Demo links: the query <-> session codec and the round trip through the app (issue 16)."""
from __future__ import annotations

from streamlit.testing.v1 import AppTest

from app_shared import urlstate

from .test_app import APP, TIMEOUT, _charts, _ok


def test_decode_reads_every_sidebar_value_and_names_each_bad_one():
    values, errors = urlstate.decode(urlstate.SIDEBAR, {
        "dataset": "Karate", "sampler": "lid", "layers": "6", "p_min": "0.21", "p_max": "0.9",
        "seed": "3", "split": "per-class", "other": "kept apart"})
    assert values == {"dataset": "karate", "sampler": "lid", "layers": 6, "p_range": (0.2, 0.9),
                      "seed": 3, "split": "per-class"}
    assert errors == []
    values, errors = urlstate.decode(urlstate.SIDEBAR, {"layers": "99", "sampler": "magic",
                                                        "p_min": "0.8", "p_max": "0.2", "seed": "-1"})
    assert values == {}
    assert errors == ["sampler=magic ignored: not an option (allowed: nodrop, dropedge, li, lid, ldd, "
                      "fd, dropedge++)",
                      "layers=99 ignored: out of range (allowed: 1 .. 64)",
                      "seed=-1 ignored: out of range (allowed: 0 .. 2147483647)",
                      "p_min=0.8 > p_max=0.2 ignored: p_min must be <= p_max"]
    lone = urlstate.decode(urlstate.SIDEBAR, {"p_min": "0.1"})[1]
    assert lone == ["p_min and p_max come together: give both"]


def test_encode_then_decode_is_the_identity_for_every_page():
    spec = urlstate.spec_for("men_explorer")
    values = {"dataset": "csbm", "split": "per-class", "sampler": "dropedge++", "p_range": (0.3, 0.8),
              "layers": 8, "seed": 0, "men_paper_setting": False, "men_depths": [2, 16],
              "men_samplers": ["lid", "ldd"]}
    query = urlstate.encode(spec, values)
    assert query["men_depths"] == "2,16" and query["men_paper_setting"] == "0"
    assert urlstate.decode(spec, query) == (values, [])
    assert "men_depths" not in urlstate.encode(urlstate.spec_for("theory"), values)
    assert urlstate.encode(spec, {"layers": 500}) == {}  # a value the link could not restore


def test_a_link_with_the_papers_appnp_star_spelling_reads_as_appnp_star():
    """Links written before the identifier was ``appnp_star`` say ``appnp*`` (or ``APPNP*``)."""
    spec = urlstate.spec_for("depth_study")
    values, errors = urlstate.decode(spec, {"ds_backbones": "gcn,APPNP*,jknet"})
    assert values == {"ds_backbones": ["gcn", "appnp_star", "jknet"]} and errors == []
    live = urlstate.spec_for("live_training")
    assert urlstate.decode(live, {"lt_backbone": "appnp*"}) == ({"lt_backbone": "appnp_star"}, [])
    assert urlstate.encode(live, {"lt_backbone": "appnp_star"}) == {"lt_backbone": "appnp_star"}
    assert urlstate.decode(live, {"lt_backbone": "gat"})[1] == [
        "lt_backbone=gat ignored: not an option (allowed: gcn, resgcn, jknet, appnp_star)"]


def _open(query: dict, page: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update(query)
    if page:
        at.switch_page(page)
    at.run()
    _ok(at)
    return at


def _query(at: AppTest) -> dict:
    return {k: (v[-1] if isinstance(v, list) else v) for k, v in at.query_params.items()}


def test_a_link_restores_the_sidebar_and_changing_a_control_updates_it():
    link = {"dataset": "karate", "sampler": "lid", "layers": "6", "p_min": "0.2", "p_max": "0.9",
            "seed": "3"}
    at = _open(link)
    sb = at.sidebar
    assert sb.selectbox(key="dataset").value == "karate"
    assert sb.selectbox(key="sampler").value == "lid"
    assert sb.slider(key="p_range").value == (0.2, 0.9)
    assert sb.slider(key="layers").value == 6 and sb.number_input(key="seed").value == 3
    assert _query(at) == {**link, "split": "per-class"}
    # the home figure follows the restored sidebar: LID's curve, 6 layers
    names = {t["name"] for t in _charts(at)["home_smoothing"]["data"]}
    assert any("LID" in n for n in names)
    sb.slider(key="layers").set_value(9).run()
    assert _query(at)["layers"] == "9"
    again = _open(_query(at))  # the new link reproduces the view
    assert again.sidebar.slider(key="layers").value == 9
    assert again.sidebar.selectbox(key="sampler").value == "lid"


def test_a_page_link_restores_its_main_controls():
    at = _open({"layers": "4", "dataset": "karate", "th_samplers": "lid,ldd"}, "app_pages/theory.py")
    assert at.multiselect(key="th_samplers").value == ["lid", "ldd"]
    lam = _charts(at)["theory_lambda"]
    assert [t["name"] for t in lam["data"]] == ["LID", "LDD", "full graph"]
    assert _query(at)["th_samplers"] == "lid,ldd"
    at.multiselect(key="th_samplers").set_value(["dropedge"]).run()
    assert _query(at)["th_samplers"] == "dropedge"


def test_a_bad_link_value_is_named_and_ignored():
    at = _open({"layers": "1000", "sampler": "dropedge"})
    assert at.sidebar.slider(key="layers").value == 8  # the default
    assert at.sidebar.selectbox(key="sampler").value == "dropedge"
    warnings = [w.value for w in at.sidebar.warning]
    assert warnings == ["Link: layers=1000 ignored: out of range (allowed: 1 .. 64)"]


def test_a_long_link_value_is_echoed_cut_with_its_length():
    at = _open({"layers": "9" * 10_000, "sampler": "a\nb"})
    warnings = [w.value for w in at.sidebar.warning]
    assert warnings == [
        "Link: sampler=a?b ignored: not an option (allowed: nodrop, dropedge, li, lid, ldd, fd, dropedge++)",
        "Link: layers=" + "9" * 80 + "... (10000 characters) ignored: not an integer (allowed: 1 .. 64)"]


def test_the_sidebar_shows_a_copyable_link():
    at = _open({"sampler": "ldd"})
    code = [c.value for c in at.sidebar.code]
    assert len(code) == 1 and "sampler=ldd" in code[0] and "layers=8" in code[0]


def test_a_class_merge_link_opens_the_old_defaults_at_the_last_layer():
    at = _open({"cm_source": "old-defaults", "cm_layer": "15"}, "app_pages/class_merge.py")
    assert at.radio(key="cm_source").value == "old-defaults"
    fig = _charts(at)["class_merge"]
    assert fig["layout"]["sliders"][0]["active"] == 14
    assert _query(at)["cm_source"] == "old-defaults" and _query(at)["cm_layer"] == "15"
