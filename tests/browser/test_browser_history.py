"""Back and Forward in Chromium (issue 24, item 3): the browser's history follows the pages
and their controls (:mod:`app_shared.browser_history`). Skipped like ``test_browser.py`` without
Playwright or chromium."""
from __future__ import annotations

from tests.helpers.browser import BROWSER_MARKS, TIMEOUT_MS, _no_exception, _wait_idle, _wait_main_text

pytestmark = BROWSER_MARKS


def _wait_query(pg, part: str, path: str) -> None:
    pg.wait_for_function("([q, p]) => location.search.includes(q) && location.pathname.endsWith(p)",
                         arg=[part, path], timeout=TIMEOUT_MS)


def _layers(pg) -> str:
    box = pg.get_by_test_id("stSidebar").get_by_test_id("stSlider").filter(has_text="Layers L")
    return box.get_by_test_id("stSliderThumbValue").inner_text().strip()


def test_back_and_forward_follow_pages_and_controls(page, server):
    """Theory (LID and LDD picked, 5 layers) → MEN explorer → 6 layers there; Back: 5 layers
    on the MEN explorer; Back: the theory page with its own pick; Forward twice: the MEN
    explorer, then its 6 layers."""
    page.goto(f"{server}/theory?layers=5&th_samplers=lid,ldd")
    _wait_main_text(page, "The theory, measured")
    _wait_idle(page, 3)
    start = page.evaluate("history.length")
    page.get_by_test_id("stSidebarNav").get_by_text("MEN explorer", exact=True).click()
    _wait_main_text(page, "MEN explorer")
    _wait_idle(page, 2)
    _wait_query(page, "layers=5", "/men_explorer")
    slider = (page.get_by_test_id("stSidebar").get_by_test_id("stSlider").filter(has_text="Layers L")
              .get_by_role("slider"))
    slider.focus()
    slider.press("ArrowRight")
    _wait_query(page, "layers=6", "/men_explorer")
    _wait_idle(page, 2)
    # one entry per page visit and one per control change: not one more
    assert page.evaluate("history.length") == start + 2

    page.go_back()
    _wait_query(page, "layers=5", "/men_explorer")
    _wait_idle(page, 2)
    assert _layers(page) == "5"
    page.go_back()
    _wait_query(page, "th_samplers=lid%2Cldd", "/theory")
    _wait_main_text(page, "The theory, measured")
    _wait_idle(page, 3)
    assert _layers(page) == "5"
    picked = page.get_by_test_id("stMain").get_by_test_id("stMultiSelect").inner_text()
    assert "LID" in picked and "LDD" in picked and "NoDrop" not in picked
    _no_exception(page)

    page.go_forward()
    _wait_query(page, "layers=5", "/men_explorer")
    _wait_main_text(page, "MEN explorer")
    _wait_idle(page, 2)
    page.go_forward()
    _wait_query(page, "layers=6", "/men_explorer")
    _wait_idle(page, 2)
    assert _layers(page) == "6"
    _no_exception(page)
