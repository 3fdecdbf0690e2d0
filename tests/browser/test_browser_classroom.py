"""The classroom server in Chromium (issue 35): two browser contexts (two students) on one
server. B opens A's run by its id and watches it read-only; A's owner link, opened in B's
context, gives Stop. Skipped like ``test_browser.py`` without Playwright or chromium."""
from __future__ import annotations

from tests.helpers.browser import (
    BROWSER_MARKS,
    CHROMIUM,
    CHROMIUM_ARGS,
    JOB_TIMEOUT_MS,
    TIMEOUT_MS,
    _no_exception,
    _wait_idle,
    _wait_main_text,
    _wait_state,
    sync_playwright,
)

pytestmark = BROWSER_MARKS

CONTROLS = ("Start", "Compare samplers", "Stop", "Clear runs")


def _set_number(pg, label: str, value: int) -> None:
    box = pg.get_by_test_id("stMain").get_by_label(label, exact=True)
    box.fill(str(value))
    box.press("Enter")
    _wait_idle(pg, 0)


def _param(pg, name: str) -> str | None:
    return pg.evaluate("n => new URL(location.href).searchParams.get(n)", name)


def _buttons(pg) -> set[str]:
    """The labels of the main area's buttons."""
    return set(pg.get_by_test_id("stMain").get_by_role("button").all_inner_texts())


def test_a_visitor_watches_read_only_and_the_owner_link_controls(server):
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            a = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
            b = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
            for pg in (a, b):
                pg.set_default_timeout(TIMEOUT_MS)
            a.goto(f"{server}/live_training?layers=16")  # 16 layers: 5000 epochs outlast the test
            _wait_main_text(a, "Live training")
            _wait_idle(a, 0)
            a.get_by_test_id("stMain").get_by_text("custom", exact=True).click()
            _wait_idle(a, 0)
            _set_number(a, "Epochs", 5000)
            _set_number(a, "Patience", 0)  # no early stop: karate's run would end within the test
            _set_number(a, "Diagnostics every", 0)
            a.get_by_role("button", name="Start", exact=True).click()
            _wait_state(a, "() => !!document.querySelector('[data-testid=stProgress]')")  # the job's state
            _wait_state(a, "() => new URL(location.href).searchParams.get('owner')")
            run_id, token = _param(a, "run"), _param(a, "owner")
            assert len(token) >= 22

            b.goto(f"{server}/live_training?run={run_id}")  # the id alone: read-only
            _wait_main_text(b, "read-only")
            _wait_main_text(b, "Runs on karate")
            _no_exception(b)
            assert not set(CONTROLS) & _buttons(b), _buttons(b)
            assert token not in b.content()
            assert a.locator("[data-testid=stProgress]").count() == 1  # A's run trains on

            b.goto(f"{server}/live_training?run={run_id}&owner={token}")  # the owner's link
            _wait_main_text(b, "Runs on karate")
            b.get_by_role("button", name="Stop", exact=True).click()
            _wait_main_text(b, "stopped by its owner (Stop)", timeout=JOB_TIMEOUT_MS)
            _no_exception(b)
        finally:
            browser.close()
