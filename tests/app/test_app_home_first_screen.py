"""A teacher's first screen (issue 43, item 5): Home names every page and starts the lesson in
one click; the Lesson draws none of the sidebar's shared settings (it picks its own graphs)
and leaves their values to the other pages; Home's numbers carry no unexplained "± 0.000"."""
from __future__ import annotations

import re

import numpy as np

from dropedge_explorer.studies import sampling
from tests.helpers.app import _app, _ok

#: Every page of the app, by the title its navigation shows.
TITLES = ["Home", "Edge sampler", "MEN explorer", "Live training", "Depth study", "Tuning", "Lesson",
          "Watch the classes merge", "The theory, measured", "The paper's tables"]


def _text(at) -> str:
    return " ".join([m.value for m in at.markdown] + [c.value for c in at.caption])


def test_home_names_every_page_and_starts_the_lesson_in_one_click():
    at = _app()
    _ok(at)
    listing = next(m.value for m in at.markdown if m.value.startswith("**Every page**"))
    for title in TITLES[1:]:
        assert f"- *{title}*: " in listing, title
    assert len(re.findall(r"^- \*", listing, flags=re.M)) == len(TITLES) - 1
    sidebar = [s.key for s in at.sidebar.selectbox]
    assert {"dataset", "split", "sampler"} <= set(sidebar)
    at.selectbox(key="sampler").select("lid").run()
    at.button(key="home_lesson").click().run()
    _ok(at)
    assert "lesson_step" in at.session_state  # the Lesson ran
    assert not [s.key for s in at.sidebar.selectbox] and not at.sidebar.slider and not at.sidebar.number_input
    assert any("not used on this page" in c.value for c in at.sidebar.caption)
    at.switch_page("app_pages/theory.py").run()  # another page: the shared settings and their values
    _ok(at)
    assert at.selectbox(key="sampler").value == "lid"


def test_homes_last_layer_numbers_say_what_their_spread_is():
    at = _app()
    _ok(at)
    text = _text(at)
    assert "± 0.000" not in text
    assert "mean ± standard deviation over the 5 draws" in text
    # the numbers, worked out again from the same propagation: NoDrop's draws are all the
    # same graph (no ±), DropEdge's differ (a ± with a nonzero spread)
    from dropedge_core import datasets

    graph = datasets.load("karate", "per-class", seed=0)
    df = sampling.smoothing_spread(graph, ("nodrop", "dropedge", "dropedge++"), 8, 0.3, 0.8, 0, 5)
    part = df[(df["measure"] == "subspace_distance") & (df["step"] == df["step"].max())]
    for name, label in (("nodrop", "NoDrop"), ("dropedge", "DropEdge")):
        row = part[part["sampler"] == name].iloc[0]
        if np.round(row["std"], 3) == 0:
            assert re.search(rf"{label} {row['value']:.3f}(?! ±)", text), (label, text)
        else:
            assert f"{label} {row['value']:.3f} ± {row['std']:.3f}" in text
