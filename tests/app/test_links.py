"""Every control in the link (issue 24, item 3): walk every widget of every page.

For each page (and each state of a page that shows other widgets: a Lesson step, Live
training's custom mode, the class view's "train now"), every keyed widget is either a
parameter of the page's link (:data:`dropedge_explorer.links.PAGES`) or listed in
:data:`EXEMPT` with the reason it does not change the view. Each linkable widget that is
enabled is set to a value other than its current one, the session's link is opened in a
fresh session, and every widget there must hold the value it held in the first session.
"""
from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from dropedge_explorer import links
from tests.helpers.app import APP, TIMEOUT, _ok

KINDS = ("selectbox", "slider", "number_input", "checkbox", "radio", "multiselect", "toggle",
         "select_slider", "text_input", "text_area", "button_group", "date_input", "color_picker")

CHOICES = ("Selectbox", "Radio", "SelectSlider", "ButtonGroup")
#: Widgets that are not in a link, and why (by key; unkeyed buttons by label).
EXEMPT = {
    "Resample": "a button: the draw it counts is in the link (draw=)",
    "lt_start": "starts a run (runs are not view state)", "lt_compare": "starts runs",
    "lt_stop": "stops the running job", "lt_clear": "forgets this session's runs",
    "lt_drop_override": "forgets a Tuning hand-off (the hand-off is not in a link)",
    "lt_focus": "picks one of this session's runs (runs are not in a link)",
    "lt_diag_key": "shown only with this session's runs",
    "tune_start": "starts a study", "tune_stop": "stops the study",
    "tune_train_this": "hands the best point to Live training",
    "ds_run": "trains the missing runs", "ds_stop": "stops the sweep",
    "ds_batch": "how \"Run missing\" trains (the runs it makes are the same), not what the view shows",
    "ds_show_mine": "applies settings that are themselves in the link",
    "ds_use_bundled": "applies settings that are themselves in the link",
    "ds_open_bundled": "sets the sidebar's dataset and split, which are themselves in the link",
    "home_lesson": "opens the Lesson page (a page change, its own link)",
    "ds_list_mine": "shown only when the store holds this user's runs",
    "lt_show_others": "shows the other sessions' runs (the server's runs are not view state)",
    "cm_train": "trains three models (the settings it trains with are in the link)",
    "pt_measure": "times the samplers on this machine (a measurement, not view state)",
}
#: Keyed widgets made per item of a list (a key prefix, then the item's id), and why.
EXEMPT_PREFIXES = {
    "lt_follow_": "shows another session's run here (the server's runs are not view state; a run's "
                  "own link is ?run=)",
}


def _exempt(name: str) -> bool:
    return name in EXEMPT or name.startswith(tuple(EXEMPT_PREFIXES))


def _walk(node):
    """The widgets under ``node`` in page order."""
    children = getattr(node, "children", None)
    if isinstance(children, dict):
        for child in children.values():
            yield from _walk(child)
    elif type(node).__name__.lower().replace("_", "") in {k.replace("_", "") for k in KINDS + ("button",)}:
        yield node


def _widgets(at: AppTest) -> list:
    return [w for w in _walk(at._tree) if getattr(w, "key", None) or getattr(w, "label", None)]


def _name(w) -> str:
    return w.key or w.label


def _url_name(key: str, dataset: str, page: str) -> str | None:
    """The link parameter that holds session key ``key`` on ``page`` (None: not linkable)."""
    spec = links.spec_for(page)
    if key == "p_range":
        return "p_min"
    for name in spec:
        if links.session_key(name, dataset) == key:
            return name
    return None


def _other(w, param: links.Param):
    """A value the widget accepts that differs from its current one."""
    kind, value = type(w).__name__, w.value
    if kind in ("Checkbox", "Toggle"):
        return not value
    if kind == "TextInput":
        return value + "-x"
    if param.kind == "range":
        lo, hi = value
        return (lo, round(hi - w.step, 6)) if hi - w.step >= lo else (lo, round(hi + w.step, 6))
    if param.kind == "multi":
        return value[:-1] if len(value) > 1 else [*value, next(o for o in param.options if o not in value)]
    if kind in ("Slider", "NumberInput"):
        step = w.step or 1
        up = value + step
        new = up if w.max is None or up <= w.max else value - step
        return round(new, 6) if isinstance(new, float) else new
    if not param.options:  # a choice among numbers the page computes (e.g. the drawn nodes)
        return [type(value)(o) for o in w.options if str(o) != str(value)][:3]
    return [o for o in param.options if o != value]  # choices: tried in turn


def _set(at: AppTest, w, value) -> bool:
    """Set ``w`` (by key) to ``value`` and run; False if the widget does not offer it."""
    try:
        found = next(x for x in _widgets(at) if _name(x) == _name(w))
        found.set_value(value).run()
    except (ValueError, IndexError, KeyError):
        return False
    _ok(at)
    return True


def _values(at: AppTest) -> dict:
    return {_name(w): w.value for w in _widgets(at) if type(w).__name__ != "Button"}


def _query(at: AppTest) -> dict:
    return {k: (v[-1] if isinstance(v, list) else v) for k, v in at.query_params.items()}


def _session(page: str | None, dataset: str, before: list[tuple[str, object]]) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.sidebar.selectbox(key="dataset").set_value(dataset).run()
    if page:
        at.switch_page(page).run()
    _ok(at)
    for key, value in before:
        w = next(x for x in _widgets(at) if _name(x) == key)
        assert _set(at, w, value), (key, value)
    return at


# (page, sidebar dataset, settings made first, widgets not walked here)
SCENARIOS = [
    (None, "csbm", [], {"dataset"}),  # Home: the sidebar (dataset: set first, to csbm)
    ("app_pages/edge_sampler.py", "csbm", [], {"animate", "dataset", "split", "sampler", "p_range",
                                              "layers", "seed"}),
    ("app_pages/edge_sampler.py", "csbm", [("animate", True)], {"dataset", "split", "sampler",
                                                                 "p_range", "layers", "seed"}),
    ("app_pages/men_explorer.py", "csbm", [], set()),
    ("app_pages/live_training.py", "karate", [("lt_mode", "custom")], {"lt_mode"}),
    ("app_pages/live_training.py", "karate", [], set()),
    ("app_pages/depth_study.py", "karate", [], set()),
    ("app_pages/tuning.py", "karate", [], set()),
    ("app_pages/class_merge.py", "karate", [], set()),
    ("app_pages/class_merge.py", "karate", [("cm_source", "session")], {"cm_source"}),
    ("app_pages/theory.py", "karate", [], set()),
    ("app_pages/paper_tables.py", "karate", [], set()),
    *[("app_pages/lesson.py", "karate", [("lesson_step", step)] if step != "propagation" else [],
       {"lesson_step"}) for step in ("propagation", "depth", "dropping", "lid_ldd", "fd", "result")],
]
SIDEBAR = {"dataset", "split", "sampler", "p_range", "layers", "seed"}


def _id(s) -> str:
    return f"{(s[0] or 'home').split('/')[-1].removesuffix('.py')}-{s[2][0][1] if s[2] else 'default'}"


@pytest.mark.parametrize("page,dataset,before,skip", SCENARIOS, ids=[_id(s) for s in SCENARIOS])
def test_every_widget_round_trips_through_the_link(page, dataset, before, skip):
    at = _session(page, dataset, before)
    url_page = (page or "").split("/")[-1].removesuffix(".py")
    unlisted = [_name(w) for w in _widgets(at)
                if not _exempt(_name(w)) and _url_name(_name(w), dataset, url_page) is None]
    assert unlisted == [], f"widgets neither in the link nor exempt: {unlisted}"
    walked = []
    for w in _widgets(at):
        key = _name(w)
        if _exempt(key) or key in skip or (page and key in SIDEBAR) or w.disabled:
            continue
        live = next((x for x in _widgets(at) if _name(x) == key), None)
        if live is None or live.disabled or (type(live).__name__ in CHOICES and len(live.options) < 2):
            continue  # an earlier change hid or locked it, or it has one option only
        param = links.spec_for(url_page)[_url_name(key, dataset, url_page)]
        if key == "p_range":
            param = links.span(0.0, 1.0)
        new = _other(live, param)
        candidates = new if isinstance(new, list) and param.kind != "multi" else [new]
        old = live.value
        assert any(_set(at, live, c) for c in candidates), (key, old)
        assert _values(at).get(key) != old, (key, old)  # the walk really changed it
        walked.append(key)
    assert walked, "nothing walked"
    link = _query(at)
    fresh = AppTest.from_file(APP, default_timeout=TIMEOUT)
    fresh.query_params.update(link)
    if page:
        fresh.switch_page(page)
    fresh.run()
    _ok(fresh)
    first, again = _values(at), _values(fresh)
    assert again == first, {k: (first.get(k), again.get(k)) for k in {*first, *again}
                            if first.get(k) != again.get(k)}
    assert _query(fresh) == link


def test_the_tuning_link_knows_every_optional_parameter():
    from dropedge_explorer.studies import tuning

    assert links.PAGES["tuning"]["tune_extra"].options == tuning.OPTIONAL_PARAMS
