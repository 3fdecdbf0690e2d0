"""Offline by construction (issue 43, item 6): with every host but the app's own server
blocked, no page of the app asks for anything elsewhere (icons, fonts, scripts, map tiles,
math). Streamlit 1.67 turns a ``:material/...:`` page icon into a favicon fetched from
fonts.gstatic.com; an emoji favicon is a ``data:`` URL. Skipped like ``test_browser.py``
without Playwright or chromium."""
from __future__ import annotations

from urllib.parse import urlsplit

from tests.helpers.browser import (
    BROWSER_MARKS,
    CHROMIUM,
    CHROMIUM_ARGS,
    TIMEOUT_MS,
    _no_exception,
    _wait_idle,
    _wait_main_text,
    sync_playwright,
)

pytestmark = BROWSER_MARKS

#: Every page of app.py's PAGES: (url path, a title the main area shows).
PAGES = [("", "DropEdge++ Explorer"), ("edge_sampler", "Edge sampler"), ("men_explorer", "MEN explorer"),
         ("live_training", "Live training"), ("depth_study", "Depth study"), ("tuning", "Tuning"),
         ("lesson", "Lesson"), ("class_merge", "Watch the classes merge"),
         ("theory", "The theory, measured"), ("paper_tables", "The paper's tables")]


def test_no_page_asks_a_host_but_the_apps_server(server):
    own = urlsplit(server).netloc
    outside: list[str] = []

    def guard(route) -> None:
        url = route.request.url
        if urlsplit(url).scheme in ("http", "https", "ws", "wss") and urlsplit(url).netloc != own:
            outside.append(url)
            route.abort()  # as an offline classroom would: the request fails
        else:
            route.continue_()

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        context.route("**/*", guard)
        pg = context.new_page()
        pg.set_default_timeout(TIMEOUT_MS)
        pg.on("request", lambda r: None if urlsplit(r.url).netloc in (own, "") else outside.append(r.url))
        try:
            for path, title in PAGES:
                pg.goto(f"{server}/{path}")
                _wait_main_text(pg, title)
                _wait_idle(pg, 0)
                pg.wait_for_timeout(1500)  # the favicon and late fonts are asked for after the run
                _no_exception(pg)
                assert not outside, f"/{path} asked outside hosts: {sorted(set(outside))}"
        finally:
            browser.close()
    # the guard saw the app's own requests: it was in place
    assert own
