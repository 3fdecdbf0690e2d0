"""Regenerate the README's screenshots from the running app (issue 24, item 6).

Starts ``streamlit run app.py`` on a free port with a fresh results store and tuning
storage (a temporary folder: only the bundled runs and what this script trains), opens
each view by its link (fixed seeds: the sidebar's seed 0 unless the link says otherwise)
in headless Chromium at 1280x800, and writes one 1280x800 PNG per view, reduced to 256
colours so that each stays under :data:`MAX_BYTES` (they are committed). Each view is also
checked at 1280x800 and 1920x1080 for overlapping or clipped text and legends over data
(:func:`tests.helpers.overlaps.overlaps`, element boxes from the browser): the script lists
what it finds and exits 1 (``--no-overlap-check`` skips it).

Usage (Cora and CiteSeer from ``DROPEDGE_DATA``; chromium from Debian, or ``--chromium``)::

    DROPEDGE_DATA=/path/to/data python docs/tools/screenshots.py            # all
    DROPEDGE_DATA=/path/to/data python docs/tools/screenshots.py home tuning  # some
"""
from __future__ import annotations

import argparse
import io
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PIL import Image
from playwright.sync_api import Page, sync_playwright

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
from tests.helpers.overlaps import VIEWPORTS, overlaps  # noqa: E402
OUT = REPO / "docs" / "screenshots"
WIDTH, HEIGHT = 1280, 800
MAX_BYTES = 300_000
TIMEOUT_MS = 600_000
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _click(label: str) -> Callable[[Page], None]:
    return lambda pg: pg.get_by_role("button", name=label).click()


def _wait_text(text: str) -> Callable[[Page], None]:
    return lambda pg: pg.wait_for_function(
        "t => (document.querySelector('[data-testid=stMain]')?.innerText || '').includes(t)",
        arg=text, timeout=TIMEOUT_MS)


@dataclass(frozen=True)
class Shot:
    """One picture: the view's link, Plotly charts to wait for, steps to take (clicks,
    waits), and the chart (by its index on the page) to scroll to the top, if any."""
    name: str
    link: str
    charts: int = 0
    steps: tuple[Callable[[Page], None], ...] = ()
    scroll_to: int | None = None


CORA = "dataset=cora&split=semi"
SHOTS = [
    Shot("home", "?dataset=karate", 1),
    Shot("edge_sampler", "edge_sampler?dataset=csbm&edge_layer=2", 4),
    Shot("edge_sampler_cora", f"edge_sampler?{CORA}&edge_layer=3", 4),
    Shot("edge_sampler_receptive_field", f"edge_sampler?{CORA}&edge_layer=3", 4, scroll_to=1),
    Shot("men_explorer", "men_explorer?dataset=karate", 2),
    Shot("men_explorer_cora", f"men_explorer?{CORA}", 3),
    Shot("depth_study_cora", f"depth_study?{CORA}", 1),
    Shot("live_training", "live_training?dataset=karate&lt_mode=custom&lt_epochs=200&lt_patience=200"
         "&lt_diag_every=10", 0,
         (_click("Compare samplers"), _wait_text("#3 DropEdge++"),
          lambda pg: pg.wait_for_selector("[data-testid=stAlertContentSuccess]", timeout=TIMEOUT_MS)),
         scroll_to=0),
    Shot("tuning", "tuning?dataset=karate&tune_trials=10&tune_epochs=20&tune_study=readme", 0,
         (_click("Start study"), _wait_text("finished 10 trials")), scroll_to=0),
    Shot("lesson_step1", "lesson?lesson_step=propagation", 1),
    Shot("lesson_step4", "lesson?lesson_step=lid_ldd", 1),
    Shot("class_merge_last_layer", "class_merge?cm_layer=255", 2),
    Shot("theory", "theory?dataset=karate", 3),
    Shot("paper_tables", "paper_tables", 1),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def _start(port: int, workdir: Path) -> subprocess.Popen:
    env = dict(os.environ, DROPEDGE_TORCH_THREADS="1",
               DROPEDGE_RESULTS=str(workdir / "results.sqlite"),
               DROPEDGE_TUNING_STORAGE=str(workdir / "tuning.sqlite"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
         "--server.headless", "true", "--server.address", "localhost",
         "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
        cwd=REPO, env=env, stdout=open(workdir / "streamlit.log", "w"), stderr=subprocess.STDOUT)
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(f"http://localhost:{port}/_stcore/health", timeout=2) as r:
                if r.read().strip() == b"ok":
                    return proc
        except OSError:
            time.sleep(0.5)
    proc.terminate()
    raise SystemExit(f"streamlit did not start: {(workdir / 'streamlit.log').read_text()[-2000:]}")


def _wait_idle(pg: Page, charts: int) -> None:
    """The script run is over, nothing is stale or spinning, ``charts`` charts are drawn."""
    pg.wait_for_function(
        "n => document.querySelector('[data-testid=stApp]')?.getAttribute('data-test-script-state')"
        " === 'notRunning' && !document.querySelector('[data-stale=true], [data-testid=stSpinner]')"
        " && document.querySelectorAll('[data-testid=stPlotlyChart] .js-plotly-plot').length >= n",
        arg=charts, timeout=TIMEOUT_MS)
    pg.wait_for_timeout(1200)  # Plotly's last redraw


def _save(png: bytes, path: Path) -> int:
    """256 colours (the app's flat colours survive), optimised; returns the size in bytes."""
    image = Image.open(io.BytesIO(png)).convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
    image.save(path, optimize=True)
    return path.stat().st_size


def _overlaps_at_both_sizes(pg: Page, shot: Shot) -> list[str]:
    """:func:`overlaps` of the view as it stands, at every size of :data:`VIEWPORTS`
    (the page back at :data:`WIDTH` x :data:`HEIGHT` after)."""
    found = []
    for width, height in VIEWPORTS:
        pg.set_viewport_size({"width": width, "height": height})
        pg.wait_for_timeout(800)  # charts resize to the new viewport
        found += [f"{shot.name} at {width}x{height}: {line}" for line in overlaps(pg)]
    pg.set_viewport_size({"width": WIDTH, "height": HEIGHT})
    pg.wait_for_timeout(800)
    return found


def take(shots: list[Shot], out: Path, chromium: str, check: bool = True) -> dict[str, int]:
    """Every shot in ``shots`` written to ``out``; ``{name: bytes}``. With ``check``, each
    view's overlaps at both sizes are listed and the script exits 1 after the last shot."""
    out.mkdir(parents=True, exist_ok=True)
    sizes, found = {}, []
    with tempfile.TemporaryDirectory() as tmp:
        port = _free_port()
        proc = _start(port, Path(tmp))
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
                for shot in shots:
                    pg = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
                    pg.set_default_timeout(TIMEOUT_MS)
                    pg.goto(f"http://localhost:{port}/{shot.link}")
                    _wait_idle(pg, shot.charts)
                    for step in shot.steps:
                        step(pg)
                        _wait_idle(pg, shot.charts)
                    if shot.scroll_to is not None:
                        pg.locator("[data-testid=stPlotlyChart]").nth(shot.scroll_to).scroll_into_view_if_needed()
                        pg.locator("[data-testid=stPlotlyChart]").nth(shot.scroll_to).evaluate(
                            "e => e.scrollIntoView({block: 'start'})")
                        pg.wait_for_timeout(800)
                    if pg.locator("[data-testid=stException]").count():
                        raise SystemExit(f"{shot.name}: an exception on the page")
                    sizes[shot.name] = _save(pg.screenshot(), out / f"{shot.name}.png")
                    print(f"{shot.name}.png  {sizes[shot.name] / 1000:.0f} kB", flush=True)
                    if check:
                        found += _overlaps_at_both_sizes(pg, shot)
                    pg.close()
                browser.close()
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    too_big = {n: s for n, s in sizes.items() if s > MAX_BYTES}
    if too_big:
        raise SystemExit(f"over {MAX_BYTES} bytes: {too_big}")
    if found:
        raise SystemExit("overlapping or clipped on the screen:\n" + "\n".join(found))
    return sizes


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help=f"some of: {', '.join(s.name for s in SHOTS)}")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    parser.add_argument("--no-overlap-check", action="store_true",
                        help="skip the overlap check at 1280x800 and 1920x1080")
    args = parser.parse_args(argv)
    unknown = set(args.names) - {s.name for s in SHOTS}
    if unknown:
        parser.exit(2, f"unknown screenshot(s) {sorted(unknown)}: allowed {[s.name for s in SHOTS]}\n")
    take([s for s in SHOTS if not args.names or s.name in args.names], args.out, args.chromium,
         check=not args.no_overlap_check)


if __name__ == "__main__":
    main()
