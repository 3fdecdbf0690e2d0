"""Streamlit AppTest helpers shared by the app tests: page paths, running a page, reading its charts."""
from __future__ import annotations

import base64
import json
import time

import numpy as np
from streamlit.testing.v1 import AppTest

from tests.helpers import REPO

APP = str(REPO / "app.py")


EDGE_PAGE = "app_pages/edge_sampler.py"


MEN_PAGE = "app_pages/men_explorer.py"


TIMEOUT = 60


def _app() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    _ok(at)
    return at


def _ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def _charts(at: AppTest) -> dict[str, dict]:
    """``{chart key: the figure's JSON}`` for every Plotly chart on the page."""
    return {el.key: json.loads(el.proto.spec) for el in at.get("plotly_chart")}


def _values(v) -> np.ndarray:
    """A figure array from its JSON: a list, or Plotly's typed ``{dtype, bdata}``."""
    if isinstance(v, dict) and "bdata" in v:
        out = np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"]))
        if "shape" in v:
            out = out.reshape([int(d) for d in str(v["shape"]).split(",")])
        return out
    return np.asarray(v, dtype=object)


LIVE_PAGE = "app_pages/live_training.py"


TUNING_PAGE = "app_pages/tuning.py"


DEPTH_PAGE = "app_pages/depth_study.py"


UPLOAD_PAGES = ("app.py", EDGE_PAGE, MEN_PAGE, LIVE_PAGE, TUNING_PAGE, DEPTH_PAGE)


def sbm_csv(per_class: int = 60, seed: int = 0) -> dict[str, bytes]:
    """A small two-class graph as CSV files: ``edges`` (a header, one self-loop, one
    duplicate), ``features`` (4 columns carrying the class) and ``labels`` (class names)."""
    rng = np.random.default_rng(seed)
    n = 2 * per_class
    y = np.repeat([0, 1], per_class)
    same = y[:, None] == y[None, :]
    adj = np.triu(rng.random((n, n)) < np.where(same, 0.08, 0.01), k=1)
    u, v = np.nonzero(adj)
    rows = [f"{a},{b}" for a, b in zip(u, v)] + ["5,5", f"{v[0]},{u[0]}"]
    x = rng.random((n, 4)) + np.stack([y, y, 1 - y, 1 - y], axis=1)
    return {
        "edges": ("source,target\n" + "\n".join(rows) + "\n").encode(),
        "features": "\n".join(",".join(f"{c:.4f}" for c in row) for row in x).encode() + b"\n",
        "labels": ("label\n" + "\n".join(("red", "blue")[c] for c in y) + "\n").encode(),
    }


def _pick_upload(at: AppTest) -> AppTest:
    at.selectbox(key="dataset").select("upload").run()
    _ok(at)
    return at


def _upload(at: AppTest, **files: bytes) -> AppTest:
    """Put ``files`` (role -> content) into the uploaders, as ``<role>.csv``."""
    for role, content in files.items():
        at.file_uploader(key=f"upload_{role}").set_value((f"{role}.csv", content, "text/csv"))
    at.run()
    _ok(at)
    return at


def _texts(elements) -> list[str]:
    return [e.value for e in elements]


def _live(layers: int = 4, epochs: int = 15, mode: str = "custom") -> AppTest:
    at = _app()
    at.slider(key="layers").set_value(layers).run()
    at.switch_page(LIVE_PAGE).run()
    _ok(at)
    at.radio(key="lt_mode").set_value(mode).run()
    at.number_input(key="lt_epochs").set_value(epochs).run()
    _ok(at)
    return at


def _until_idle(at: AppTest, timeout: float = 60.0) -> None:
    """Rerun the page (its fragment polls the runs) until no run is active."""
    deadline = time.monotonic() + timeout
    while True:
        at.run()
        _ok(at)
        if not at.session_state["live_training"].active:
            at.run()  # the page as it looks once idle
            _ok(at)
            return
        assert time.monotonic() < deadline, "training did not finish"
        time.sleep(0.2)


def depth_page(depths=(2, 4), seeds=2, epochs=4, dataset=None, mode="quick"):
    at = _app()
    if dataset:
        at.selectbox(key="dataset").select(dataset).run()
    at.switch_page(DEPTH_PAGE).run()
    _ok(at)
    assert at.radio(key="ds_mode").value == "depth recipe"  # the default
    at.radio(key="ds_mode").set_value(mode).run()
    at.multiselect(key="ds_depths").set_value(list(depths)).run()
    at.number_input(key="ds_seeds").set_value(seeds).run()
    at.number_input(key="ds_epochs").set_value(epochs).run()
    _ok(at)
    return at


def open_page(page: str, **params: str) -> AppTest:
    """A new browser session (a reloaded tab, a link opened) on ``page`` with ``params`` in
    its URL: the page's own URL is its first run, as on a reload."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update(params)
    at.switch_page(page).run()
    _ok(at)
    return at


def query_param(at: AppTest, name: str) -> str:
    """One query parameter's value (AppTest keeps a list where the URL had one)."""
    value = at.query_params[name]
    return value[0] if isinstance(value, list) else value
