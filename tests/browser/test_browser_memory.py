"""A closed tab's memory comes back on a live server (issue 29, class 0): ``streamlit run
app.py`` with a short ``DROPEDGE_SESSION_GRACE``, a Chromium tab that uploads a 200,000-node
edge list (1.4M edges, 17 MB) on the Edge sampler, then closes; the server process's resident
memory (``VmRSS``) after the grace must be back within a share of what the upload added.

What it guards (:mod:`app_shared.session_memory`): the session's keys dropped, the widgets'
metadata too (a page's ``format_func`` lambda holds the page's globals, and so the graph),
the garbage collected and the heap trimmed. Skipped like ``test_browser.py`` without
Playwright or chromium.
"""
from __future__ import annotations

import io
import os
import time

import numpy as np

from tests.helpers.browser import (
    BROWSER_MARKS,
    CHROMIUM,
    CHROMIUM_ARGS,
    SHOTS,
    TIMEOUT_MS,
    _no_exception,
    _wait_idle,
    _wait_main_text,
    sync_playwright,
)
from tests.helpers.servers import free_port, server_pid, streamlit_server

pytestmark = BROWSER_MARKS

GRACE = 4  # seconds (DROPEDGE_SESSION_GRACE); the reaper sweeps every third of it
#: Share of what the upload added that may stay resident after the grace: glibc and Python's
#: small-object arenas keep some freed pages (measured: 16% on the 2-core machine); the
#: closed session's graph alone, when it was kept, was 75%.
KEPT_SHARE = 0.3
#: The upload must grow the server by at least this much, or the test proves nothing.
MIN_GROWTH_MB = 150


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:")) / 1024


def _edge_list(nodes: int = 200_000, edges: int = 1_400_000) -> bytes:
    pairs = np.random.default_rng(0).integers(0, nodes, size=(edges, 2))
    out = io.BytesIO()
    np.savetxt(out, pairs, fmt="%d", delimiter=",")
    return out.getvalue()


def _open_upload(page, url: str) -> None:
    page.goto(f"{url}/edge_sampler")
    _wait_idle(page, 4)
    box = page.get_by_test_id("stSidebar").get_by_test_id("stSelectbox").filter(has_text="Dataset")
    box.click()
    page.get_by_role("option").filter(has_text="upload (your CSV)").first.click()
    _wait_main_text(page, "Upload your graph in the sidebar")
    _wait_idle(page, 0)


def _upload(page, url: str, edges: bytes, opened: bool = False) -> None:
    """Upload ``edges`` as the Edge sampler's edge list (the page opened first unless
    ``opened``) and wait until the page has drawn the graph."""
    page.set_default_timeout(TIMEOUT_MS)
    if not opened:
        _open_upload(page, url)
    (page.get_by_test_id("stSidebar").get_by_test_id("stFileUploader").filter(has_text="Edge list")
     .locator("input[type=file]").set_input_files({"name": "edges.csv", "mimeType": "text/csv",
                                                   "buffer": edges}))
    _wait_main_text(page, "uploaded: edges.csv")
    _wait_idle(page, 1)
    _no_exception(page)


def test_a_closed_tabs_upload_is_freed_after_the_grace(tmp_path):
    edges = _edge_list()
    port = free_port()
    SHOTS.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, DROPEDGE_TORCH_THREADS="1", DROPEDGE_SESSION_GRACE=str(GRACE),
               DROPEDGE_RESULTS=str(tmp_path / "results.sqlite"),
               DROPEDGE_TUNING_STORAGE=str(tmp_path / "tuning.sqlite"))
    with streamlit_server(port, env, SHOTS / "streamlit_memory.log", "--server.headless", "true",
                          "--server.address", "localhost") as url, sync_playwright() as p:
        pid = server_pid(port)
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        # a small upload first, in a tab closed past its grace: the modules and caches the
        # upload's path loads once per server are in ``before``, not counted as kept
        warm = browser.new_context()
        _upload(warm.new_page(), url, _edge_list(2_000, 10_000))
        warm.close()
        time.sleep(2 * GRACE)
        tab = browser.new_context()
        page = tab.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        _open_upload(page, url)
        before = _rss_mb(pid)
        _upload(page, url, edges, opened=True)
        assert "N = 200000 nodes" in page.get_by_test_id("stMain").inner_text()
        opened = _rss_mb(pid)
        assert opened - before >= MIN_GROWTH_MB, (before, opened)
        tab.close()
        bound = before + KEPT_SHARE * (opened - before)
        seen = []
        deadline = time.monotonic() + GRACE + 60  # ends a wait that fails; nothing is timed
        while time.monotonic() < deadline and (not seen or seen[-1] > bound):
            time.sleep(0.5)
            seen.append(_rss_mb(pid))
        browser.close()
    assert seen[-1] <= bound, (f"before {before:.0f} MB, open {opened:.0f} MB, after the grace "
                               f"{seen[-1]:.0f} MB > {bound:.0f} MB", seen[::10])
