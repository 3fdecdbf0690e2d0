"""Layout and controls in a real browser: no overlapping or clipped text on any page at
1280x800 and 1920x1080, and the sidebar's sliders moved with the keyboard (the arrow keys
alone, no other control touched) change the page and its link."""
from __future__ import annotations

import re

from tests.helpers.browser import BROWSER_MARKS, TIMEOUT_MS, _no_exception, _wait_idle
from tests.helpers.overlaps import VIEWPORTS, overlaps

pytestmark = BROWSER_MARKS


def _sidebar_slider(pg, label: str):
    sliders = pg.get_by_test_id("stSidebar").get_by_test_id("stSlider")
    return sliders.filter(has_text=label).get_by_role("slider")


def _wait_url(pg, pattern: str) -> None:
    pg.wait_for_url(re.compile(pattern), timeout=TIMEOUT_MS)


def test_arrow_keys_move_the_sidebar_sliders_and_the_link_follows(page, server):
    page.goto(f"{server}/theory?dataset=karate&layers=6&p_min=0.3&p_max=0.8")
    _wait_idle(page, 3)
    layers = _sidebar_slider(page, "Layers L")
    layers.focus()
    layers.press("ArrowRight")
    _wait_url(page, r"[?&]layers=7(&|$)")
    page.wait_for_function(
        "() => (document.querySelector('[data-testid=stMain]')?.innerText || '').includes('7 layers')",
        timeout=TIMEOUT_MS)
    _wait_idle(page, 3)
    # the range slider: its lower thumb, one step of 0.05 down
    low = _sidebar_slider(page, "Keep rates").first
    low.focus()
    low.press("ArrowLeft")
    _wait_url(page, r"[?&]p_min=0\.25(&|$)")
    _wait_idle(page, 3)
    main = " ".join(page.get_by_test_id("stMain").inner_text().split())
    assert "keep rates 0.25 → 0.80" in main, main[:400]
    _no_exception(page)


# (url path, Plotly charts to wait for): every page, and the views with their own layout
# (the Lesson's first and last steps, propagation on the class-merging page)
WALK = [("", 1), ("edge_sampler", 4), ("men_explorer", 2), ("depth_study", 0), ("class_merge", 2),
        ("class_merge?cm_source=propagation", 2), ("theory", 3), ("paper_tables", 1), ("lesson", 1),
        ("lesson?lesson_step=result", 1), ("tuning", 0), ("live_training", 0)]


def test_no_page_has_overlapping_or_clipped_text_at_either_size(page, server):
    """Every page at 1280x800 and 1920x1080: no text, button, slider value or chart label
    covers another, no label is cut, no legend covers a data point (element boxes from
    the browser: :mod:`tests.helpers.overlaps`)."""
    found = []
    try:
        for width, height in VIEWPORTS:
            page.set_viewport_size({"width": width, "height": height})
            for path, charts in WALK:
                page.goto(f"{server}/{path}")
                _wait_idle(page, charts)
                _no_exception(page)
                found += [f"/{path} at {width}x{height}: {line}" for line in overlaps(page)]
    finally:
        page.set_viewport_size({"width": 1400, "height": 1000})
    assert not found, "\n".join(found)


def test_the_overlap_check_sees_a_label_pulled_over_its_slider(page, server):
    """The check itself: a negative margin that pulls every widget label down over its
    slider's value is reported (a check that cannot fail would pass the walk above)."""
    page.goto(f"{server}/theory")
    _wait_idle(page, 3)
    assert not overlaps(page)
    page.add_style_tag(content="[data-testid=stWidgetLabel] { margin-bottom: -1.4rem; }")
    page.wait_for_timeout(300)
    found = overlaps(page)
    assert any("Layers L" in line and "stSliderThumbValue" in line for line in found), found
