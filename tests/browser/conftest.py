"""The browser tests' fixtures: one Streamlit server and one chromium page per module."""
from __future__ import annotations

import os

import pytest

from tests.helpers.browser import CHROMIUM, CHROMIUM_ARGS, SHOTS, TIMEOUT_MS, sync_playwright
from tests.helpers.servers import free_port, streamlit_server


@pytest.fixture(scope="module")
def server():
    """A Streamlit server on a free port, stopped (by its pid) after the module."""
    port = free_port()
    SHOTS.mkdir(parents=True, exist_ok=True)
    tuning_storage = SHOTS / "tuning.sqlite"  # a fresh study store for the Tuning page
    tuning_storage.unlink(missing_ok=True)
    results_store = SHOTS / "results.sqlite"  # a fresh results store for the Depth study page
    for path in SHOTS.glob("results.sqlite*"):
        path.unlink()
    env = dict(os.environ, DROPEDGE_TORCH_THREADS="1", DROPEDGE_TUNING_STORAGE=str(tuning_storage),
               DROPEDGE_RESULTS=str(results_store))
    with streamlit_server(port, env, SHOTS / "streamlit.log", "--server.headless", "true",
                          "--server.address", "localhost") as url:
        yield url


@pytest.fixture(scope="module")
def page(server):
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        pg = browser.new_page(viewport={"width": 1400, "height": 1000})
        pg.set_default_timeout(TIMEOUT_MS)
        yield pg
        browser.close()
