"""Legibility (issue 24, item 5), read from what every page sends: the figures' JSON and
the tables' data.

- no log axis whose ticks Plotly labels "2" and "5" (read as "1000, 5, 2, 100, 5"): every
  log axis labels whole decades only (``dtick=1``) or gives its ticks with their text;
- a figure title fits its chart: at most :data:`FULL` characters per line for a chart
  across the page, :data:`HALF` for one in a column (Plotly cuts what does not fit);
- a panel title (the class view's three panels, also in the Lesson's column) has lines of
  at most :data:`PANEL` characters, so that neighbouring panels' titles do not run together;
- an animation's play button sits left of its slider, not over the slider's label;
- no table cell reads "None": a table with missing values says what shows instead.
"""
from __future__ import annotations

import json
import re

import pytest
from dropedge_core import datasets
from streamlit.testing.v1 import AppTest

from dropedge_explorer.figures.style import log_axis
from tests.helpers.app import APP, TIMEOUT, _ok

#: Characters per title line that fit a chart across the main area at 1280 px (Plotly's
#: title at 17 px is ~9 px a character; the main area is ~930 px wide beside the sidebar),
#: and a chart in one of two columns.
FULL, HALF = 80, 45
#: Characters per line of a panel title (13 px, ~7 px a character, ~200 px a panel).
PANEL = 26
#: Charts drawn in a column (half the width or less).
IN_COLUMNS = {"counts", "nesting", "edges_beside", "men_table", "tune_surface", "tune_history"}
PAGES = [None, "app_pages/edge_sampler.py", "app_pages/men_explorer.py", "app_pages/depth_study.py",
         "app_pages/class_merge.py", "app_pages/theory.py", "app_pages/paper_tables.py",
         "app_pages/lesson.py", "app_pages/tuning.py", "app_pages/live_training.py"]


def _open(page: str | None, dataset: str, settings=()) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.sidebar.selectbox(key="dataset").set_value(dataset).run()
    if page:
        at.switch_page(page).run()
    for kind, key, value in settings:
        getattr(at, kind)(key=key).set_value(value).run()
    _ok(at)
    return at


def log_axis_problems(fig: dict) -> list[str]:
    out = []
    for name, axis in fig.get("layout", {}).items():
        if not re.fullmatch(r"[xy]axis\d*", name) or axis.get("type") != "log":
            continue
        ticks, text = axis.get("tickvals"), axis.get("ticktext")
        if ticks is not None and text is not None and len(ticks) == len(text):
            continue
        if axis.get("dtick") not in (1, "1"):
            out.append(f"{name}: dtick={axis.get('dtick')!r}, no tick text")
    return out


def title_lines(fig: dict) -> list[str]:
    title = fig.get("layout", {}).get("title", {})
    text = title.get("text", "") if isinstance(title, dict) else str(title)
    return [re.sub(r"<[^>]+>", "", line) for line in re.split(r"<br\s*/?>", text or "")]


def layout_problems(fig: dict) -> list[str]:
    layout, out = fig.get("layout", {}), []
    for note in layout.get("annotations", []):
        if str(note.get("xref", "")).endswith("domain") and note.get("yanchor") == "bottom":
            out += [f"panel title line {len(line)} > {PANEL}: {line!r}"
                    for line in title_lines({"layout": {"title": {"text": note.get("text", "")}}})
                    if len(line) > PANEL]
    for slider in layout.get("sliders", []):
        for menu in layout.get("updatemenus", []):
            if menu.get("xanchor") != "left" or slider.get("x", 0) - menu.get("x", 0) < 0.08:
                out.append(f"play button at x={menu.get('x')} ({menu.get('xanchor')}) over the "
                           f"slider at x={slider.get('x', 0)}")
    return out


def _check_page(at: AppTest, where: str, half: set = frozenset()) -> list[str]:
    problems = []
    for el in at.get("plotly_chart"):
        fig = json.loads(el.proto.spec)
        problems += [f"{where} {el.key} {p}" for p in log_axis_problems(fig) + layout_problems(fig)]
        limit = HALF if el.key in IN_COLUMNS | half else FULL
        problems += [f"{where} {el.key} title {len(line)} > {limit}: {line!r}"
                     for line in title_lines(fig) if len(line) > limit]
    for table in at.dataframe:
        if table.value.isna().to_numpy().any() and table.proto.placeholder in ("", "None", "nan"):
            problems.append(f"{where} table {list(table.value.columns)[:4]}: missing values read 'None'")
    return problems


@pytest.mark.parametrize("dataset", ["karate", "cora"])
def test_every_page_figure_and_table_is_legible(dataset):
    if datasets.availability(dataset) == "download":
        pytest.skip(f"{dataset} is not available offline")
    problems = []
    for page in PAGES:
        problems += _check_page(_open(page, dataset), f"{page or 'home'}/{dataset}")
    beside = _open("app_pages/edge_sampler.py", dataset, [("selectbox", "compare", "ldd")])
    problems += _check_page(beside, f"edge_sampler beside/{dataset}", {"edges"})
    animated = _open("app_pages/edge_sampler.py", dataset, [("toggle", "animate", True)])
    problems += _check_page(animated, f"edge_sampler animated/{dataset}")
    for step in ("depth", "dropping", "lid_ldd", "fd", "result"):
        at = _open("app_pages/lesson.py", "karate")
        next(w for w in at.get("button_group") if w.key == "lesson_step").set_value(step).run()
        problems += _check_page(at, f"lesson {step}")
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("values", [[300, 9000], [0.02, 0.9], [3, 4e5], [3, 5], [7e-13, 1.0]])
def test_a_log_axis_labels_every_tick_it_draws(values):
    axis = log_axis(values)
    assert log_axis_problems({"layout": {"yaxis": axis}}) == []
    if "tickvals" in axis:  # each label is its tick's number, not a bare "2" or "5"
        for tick, text in zip(axis["tickvals"], axis["ticktext"]):
            assert float(text.replace(",", "")) == pytest.approx(tick, rel=0.01)
        assert min(axis["tickvals"]) <= min(values) * 1.5 and max(axis["tickvals"]) >= max(values) / 1.5


def test_the_contour_caption_says_which_trials_it_is_drawn_from():
    """With pruning, the contour uses the finished trials only: the caption says how many of
    how many, and why the pruned ones are left out."""
    import pandas as pd

    from dropedge_explorer.studies import tuning_noise

    states = ["COMPLETE", "PRUNED", "PRUNED", "COMPLETE", "PRUNED", "COMPLETE", "PRUNED", "PRUNED"]
    note = tuning_noise.surface_note(pd.DataFrame({"state": states}))
    assert "the 3 finished trials of 8" in note and "the 5 pruned trials stopped early" in note
    plain = tuning_noise.surface_note(pd.DataFrame({"state": ["COMPLETE"] * 4}))
    assert "the 4 finished trials of 4" in plain and "pruned" not in plain
