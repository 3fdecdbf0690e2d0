"""Streamlit's internals: used in one module only, checked against the supported versions,
with a public fallback outside them."""
from __future__ import annotations

import ast
import re

import pytest

from app_shared import browser_history, st_internals
from tests.helpers import REPO


@pytest.mark.parametrize("version, ok", [("1.67.0", True), ("1.67.12", True), ("1.66.2", False),
                                         ("1.68.0", False), ("2.0.0", False), ("nightly", False)])
def test_the_version_check_names_the_supported_range(version, ok):
    problem = st_internals.version_problem(version)
    assert (problem is None) == ok
    if not ok:
        assert f"Streamlit {version} " in problem and "supported: 1.67.x" in problem


def test_the_pinned_streamlit_is_supported():
    """Bumping the pin without reading the internals again fails here."""
    pin = re.search(r"^streamlit==(\S+)$", (REPO / "requirements.txt").read_text(), re.M)[1]
    assert st_internals.version_problem(pin) is None, pin


def _internal_imports(path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module]
    names += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    return [n for n in names if n.startswith("streamlit.") and not n.startswith("streamlit.testing")]


def test_only_st_internals_imports_streamlits_internals():
    files = [REPO / "app.py", *sorted((REPO / "app_pages").glob("*.py")),
             *sorted((REPO / "app_shared").glob("*.py"))]
    found = {str(p.relative_to(REPO)): _internal_imports(p) for p in files}
    assert {p: n for p, n in found.items() if n and p != "app_shared/st_internals.py"} == {}
    assert found["app_shared/st_internals.py"]  # the guard is itself seen by the scan


def test_outside_the_supported_versions_the_public_fallbacks_run(monkeypatch):
    """The internals off: no history handling, no resume, no sessions; the query is then
    set the public way (``set_query_quietly`` says it did not)."""
    monkeypatch.setattr(st_internals, "PROBLEM", st_internals.version_problem("9.0.0"))
    monkeypatch.setattr(st_internals, "get_script_run_ctx", lambda: pytest.fail("internals used"))
    assert st_internals.is_history_run() is False
    assert st_internals.set_query_quietly({"a": "1"}) is False
    assert st_internals.current_session() is None
    st_internals.resume_after_stop()
    browser_history.resume_after_stop()
