"""Chromium via Playwright: where it is, how to wait for a page to settle, screenshots."""
from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from tests.helpers import REPO

SHOTS = REPO / "tests" / "screenshots"


DOCS_SHOTS = REPO / "docs" / "screenshots"


CHROMIUM = os.environ.get("DROPEDGE_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


TIMEOUT_MS = 120_000


#: A background job's end is waited for as a state, not timed: this limit only ends a hung
#: test (a loaded 2-core machine took over 120 s for the tuning study's 10 trials).
JOB_TIMEOUT_MS = 900_000


try:
    from playwright.sync_api import sync_playwright
except ImportError:  # pragma: no cover - depends on the machine
    sync_playwright = None


def _wait_idle(pg, charts: int) -> None:
    """Wait until the script run is over (``stApp``'s ``data-test-script-state``), no
    element is stale or spinning, and ``charts`` Plotly charts are drawn."""
    pg.wait_for_function(
        "n => document.querySelector('[data-testid=stApp]')?.getAttribute('data-test-script-state')"
        " === 'notRunning' && !document.querySelector('[data-stale=true], [data-testid=stSpinner]')"
        " && document.querySelectorAll('[data-testid=stPlotlyChart] .js-plotly-plot').length >= n",
        arg=charts, timeout=TIMEOUT_MS)
    pg.wait_for_timeout(400)  # Plotly finishes drawing


def _wait_main_text(pg, text: str, timeout: int = TIMEOUT_MS) -> None:
    """Wait until the main area (not the sidebar) shows ``text``."""
    pg.wait_for_function(
        "t => (document.querySelector('[data-testid=stMain]')?.innerText || '').includes(t)",
        arg=text, timeout=timeout)


def _wait_state(pg, expression: str, arg=None) -> None:
    """Wait until the JavaScript predicate ``expression`` holds of the app's own state (a
    job's progress bar, its id in the URL, its curves, its end): as long as the job takes on
    this machine; :data:`JOB_TIMEOUT_MS` only ends a hung test."""
    pg.wait_for_function(expression, arg=arg, timeout=JOB_TIMEOUT_MS)


#: A background job's state on the page: its progress bar while it runs, or the line its
#: end leaves (a fast machine may end a short job before a poll draws the bar), or an error box
#: (a job refused at its start: the test then fails at once with the box's text, not after
#: :data:`JOB_TIMEOUT_MS`).
RUNNING_OR_DONE = (
    "() => !!document.querySelector('[data-testid=stProgress], [data-testid=stAlertContentSuccess],"
    " [data-testid=stAlertContentError]')"
    " || (document.querySelector('[data-testid=stMain]')?.innerText || '').includes('finished · ')")


def _no_error_box(pg) -> None:
    """No ``st.error`` box on the page (its text is the failure's message)."""
    boxes = pg.locator("[data-testid=stAlertContentError]")
    assert boxes.count() == 0, boxes.first.inner_text()


def _no_exception(pg) -> None:
    boxes = pg.locator("[data-testid=stException]")
    assert boxes.count() == 0, boxes.first.inner_text()


def _screenshot(pg, name: str, docs: bool = False) -> Path:
    """A screenshot of the whole page: the viewport is stretched to the content first
    (Streamlit scrolls inside its main block, so a full-page shot alone would cut it)."""
    height = pg.evaluate(
        "Math.max(document.querySelector('[data-testid=stMainBlockContainer]').scrollHeight + 120,"
        " document.querySelector('[data-testid=stSidebarContent]')?.scrollHeight || 0)")
    pg.set_viewport_size({"width": 1400, "height": int(min(max(height, 800), 6000))})
    pg.wait_for_timeout(600)  # charts resize to the new viewport
    path = SHOTS / f"{name}.png"
    pg.screenshot(path=str(path), full_page=True)
    pg.set_viewport_size({"width": 1400, "height": 1000})
    if docs and os.environ.get("DROPEDGE_UPDATE_SCREENSHOTS") == "1":
        DOCS_SHOTS.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, DOCS_SHOTS / path.name)
    return path


#: The marks of every browser test module: skipped, with the reason, where Playwright or chromium is missing.
BROWSER_MARKS = [
    pytest.mark.skipif(sync_playwright is None, reason="playwright (python) is not installed"),
    pytest.mark.skipif(not Path(CHROMIUM).is_file(),
                       reason=f"chromium not found at {CHROMIUM} (apt-get install chromium)"),
]


def _set_number(pg, label: str, value: int) -> None:
    """Type ``value`` into the main area's number input labelled ``label`` (Enter commits),
    until the box holds it after the page settled: on a loaded machine a rerun still on its
    way (an earlier click's) can put the old value back, so the box's state decides, not
    one try."""
    box = pg.get_by_test_id("stMain").get_by_label(label, exact=True)
    deadline = time.monotonic() + JOB_TIMEOUT_MS / 1000  # ends a hung test only
    while True:
        box.fill(str(value))
        box.press("Enter")
        _wait_idle(pg, 0)
        if box.input_value() == str(value) or time.monotonic() > deadline:
            break
    assert box.input_value() == str(value), (label, box.input_value())
