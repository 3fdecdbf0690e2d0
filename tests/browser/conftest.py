"""The browser tests' fixtures: one Streamlit server and one chromium page per module."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers.browser import CHROMIUM, CHROMIUM_ARGS, SHOTS, TIMEOUT_MS, sync_playwright
from tests.helpers.servers import free_port, streamlit_server


@pytest.fixture(scope="module")
def server_stores(tmp_path_factory, request) -> dict[str, Path]:
    """The module's server's own results store and study storage, fresh, in a folder of its
    own: modules run at once under xdist, each with a server, and a shared file would be
    deleted under one server by the next module's setup."""
    folder = tmp_path_factory.mktemp(request.module.__name__.rsplit(".", 1)[-1])
    return {"results": folder / "results.sqlite", "tuning": folder / "tuning.sqlite"}


@pytest.fixture(scope="module")
def server(server_stores, request):
    """A Streamlit server on a free port, stopped (by its pid) after the module; its log in
    ``tests/screenshots/streamlit_<module>.log``."""
    port = free_port()
    SHOTS.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, DROPEDGE_TORCH_THREADS="1", DROPEDGE_TUNING_STORAGE=str(server_stores["tuning"]),
               DROPEDGE_RESULTS=str(server_stores["results"]))
    log = SHOTS / f"streamlit_{request.module.__name__.rsplit('.', 1)[-1]}.log"
    flags = ("--server.headless", "true", "--server.address", "localhost")
    with streamlit_server(port, env, log, *flags) as url:
        yield url


@pytest.fixture(scope="module")
def page(server):
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        pg = browser.new_page(viewport={"width": 1400, "height": 1000})
        pg.set_default_timeout(TIMEOUT_MS)
        yield pg
        browser.close()
