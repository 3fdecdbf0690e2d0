"""Demo links: the query <-> session codec and the round trip through the app (issue 16)."""
from __future__ import annotations

from streamlit.testing.v1 import AppTest

from dropedge_explorer import links
from tests.helpers.app import APP, TIMEOUT, _charts, _ok


def test_decode_reads_every_sidebar_value_and_names_each_bad_one():
    values, errors = links.decode(links.SIDEBAR, {
        "dataset": "Karate", "sampler": "lid", "layers": "6", "p_min": "0.21", "p_max": "0.9",
        "seed": "3", "split": "per-class", "other": "kept apart"})
    assert values == {"dataset": "karate", "sampler": "lid", "layers": 6, "p_range": (0.2, 0.9),
                      "seed": 3, "split": "per-class"}
    assert errors == []
    values, errors = links.decode(links.SIDEBAR, {"layers": "99", "sampler": "magic",
                                                        "p_min": "0.8", "p_max": "0.2", "seed": "-1"})
    assert values == {}
    assert errors == ["sampler=magic ignored: not an option (allowed: nodrop, dropedge, li, lid, ldd, "
                      "fd, dropedge++)",
                      "layers=99 ignored: out of range (allowed: 1 .. 64)",
                      "seed=-1 ignored: out of range (allowed: 0 .. 2147483647)",
                      "p_min=0.8 > p_max=0.2 ignored: p_min must be <= p_max"]
    lone = links.decode(links.SIDEBAR, {"p_min": "0.1"})[1]
    assert lone == ["p_min and p_max come together: give both"]


def test_encode_then_decode_is_the_identity_for_every_page():
    spec = links.spec_for("men_explorer")
    values = {"dataset": "csbm", "split": "per-class", "sampler": "dropedge++", "p_range": (0.3, 0.8),
              "layers": 8, "seed": 0, "men_paper_setting": False, "men_depths": [2, 16],
              "men_samplers": ["lid", "ldd"]}
    query = links.encode(spec, values)
    assert query["men_depths"] == "2,16" and query["men_paper_setting"] == "0"
    assert links.decode(spec, query) == (values, [])
    assert "men_depths" not in links.encode(links.spec_for("theory"), values)
    assert links.encode(spec, {"layers": 500}) == {}  # a value the link could not restore


def test_a_link_with_the_papers_appnp_star_spelling_reads_as_appnp_star():
    """Links written before the identifier was ``appnp_star`` say ``appnp*`` (or ``APPNP*``)."""
    spec = links.spec_for("depth_study")
    values, errors = links.decode(spec, {"ds_backbones": "gcn,APPNP*,jknet"})
    assert values == {"ds_backbones": ["gcn", "appnp_star", "jknet"]} and errors == []
    live = links.spec_for("live_training")
    assert links.decode(live, {"lt_backbone": "appnp*"}) == ({"lt_backbone": "appnp_star"}, [])
    assert links.encode(live, {"lt_backbone": "appnp_star"}) == {"lt_backbone": "appnp_star"}
    assert links.decode(live, {"lt_backbone": "gat"})[1] == [
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


def _widget(at: AppTest, key: str):
    """The value of the widget with session key ``key``, whatever its kind."""
    for kind in ("slider", "number_input", "selectbox", "select_slider", "radio", "multiselect", "toggle"):
        found = [w for w in at.get(kind) if getattr(w, "key", None) == key]
        if found:
            return found[0].value
    seg = [w for w in at.get("button_group") if getattr(w, "key", None) == key]
    return seg[0].value if seg else KeyError(key)


# (page, sidebar dataset, [(widget kind, key, non-default value)]) — issue 24 (3)
ROUND_TRIPS = [
    ("app_pages/edge_sampler.py", "csbm", [("number_input", "center_csbm", 123), ("slider", "edge_layer", 3),
                                           ("select_slider", "max_nodes", 150), ("slider", "hops", 1)]),
    ("app_pages/lesson.py", "karate", [("button_group", "lesson_step", "lid_ldd"),
                                       ("slider", "lesson_rates", (0.1, 0.6)),
                                       ("slider", "lesson_layers_lid_ldd", 12)]),
    ("app_pages/lesson.py", "karate", [("button_group", "lesson_step", "dropping"),
                                       ("slider", "lesson_keep", 0.1),
                                       ("slider", "lesson_layers_dropping", 6)]),
    ("app_pages/live_training.py", "karate", [("number_input", "lt_epochs", 7),
                                              ("number_input", "lt_patience", 3)]),
    ("app_pages/depth_study.py", "karate", [("number_input", "ds_epochs", 9),
                                            ("number_input", "ds_seeds", 2)]),
]


def _set(at: AppTest, kind: str, key: str, value) -> None:
    if kind == "button_group":
        next(w for w in at.get("button_group") if w.key == key).set_value(value).run()
    else:
        getattr(at, kind)(key=key).set_value(value).run()
    _ok(at)


def test_a_link_restores_every_control_set_in_another_session():
    """Set non-default values, take the session's link, open it in a fresh session: the
    same values, and the Edge sampler the same drawing (centre node and layer included)."""
    for page, dataset, settings in ROUND_TRIPS:
        at = AppTest.from_file(APP, default_timeout=TIMEOUT)
        at.run()
        at.sidebar.selectbox(key="dataset").set_value(dataset).run()
        at.switch_page(page).run()
        _ok(at)
        for kind, key, value in settings:
            assert _widget(at, key) != value, (page, key)  # a non-default value
            _set(at, kind, key, value)
            assert _widget(at, key) == value, (page, key)
        link = _query(at)
        fresh = _open(link, page)
        for _, key, value in settings:
            assert _widget(fresh, key) == value, (page, key, link)
        assert _query(fresh) == link
        if page.endswith("edge_sampler.py"):
            assert _charts(fresh)["edges"]["data"] == _charts(at)["edges"]["data"]
            assert any("neighbourhood of node 123" in c.value for c in fresh.caption)


def test_a_range_parameter_reads_two_increasing_numbers():
    spec = links.spec_for("lesson")
    assert links.decode(spec, {"lesson_rates": "0.1,0.6"}) == ({"lesson_rates": (0.1, 0.6)}, [])
    assert links.encode(spec, {"lesson_rates": (0.1, 0.6)}) == {"lesson_rates": "0.1,0.6"}
    assert links.decode(spec, {"lesson_rates": "0.6,0.1"})[1] == [
        "lesson_rates=0.6,0.1 ignored: not two increasing numbers (allowed: a,b with 0 <= a <= b <= 1)"]
    assert links.decode(spec, {"lesson_rates": "0.1,7"})[1][0].endswith("out of range (allowed: a,b with "
                                                                           "0 <= a <= b <= 1)")


def test_list_parameters_are_deduplicated_and_bounded():
    """A link's list names each value once, in its order; more than ``MAX_LIST_ITEMS``
    values (a link with ~3,000 repeated depths cost minutes of server time) are one
    bounded warning, decided before any value is parsed."""
    spec = links.PAGES["men_explorer"]
    assert links.decode(spec, {"men_depths": "4,2,4,2,4"}) == ({"men_depths": [4, 2]}, [])
    values, (error,) = links.decode(spec, {"men_depths": ",".join(["2"] * 3000)})
    assert values == {} and "more than 64 values" in error and len(error) < 250
    edge = ",".join(["2"] * links.MAX_LIST_ITEMS)
    assert links.decode(spec, {"men_depths": edge}) == ({"men_depths": [2]}, [])
