"""Controls in a real browser: the sidebar's sliders moved with the keyboard (the arrow
keys alone, no other control touched) change the page and its link."""
from __future__ import annotations

import re

from tests.helpers.browser import BROWSER_MARKS, TIMEOUT_MS, _no_exception, _wait_idle

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
