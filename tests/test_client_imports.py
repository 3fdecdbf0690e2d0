"""Every name the project's scripts import from its own packages exists.

The benchmarks, examples and doc tools run outside the suite (by hand, at release), so a
moved name breaks them silently: ``bench/bench_sampler.py`` imported ``AdjacencyBuilder``
from the explorer's training package for a week after it moved into the library. Read
with :mod:`ast` and resolved with :func:`importlib.import_module`, nothing of the scripts
run."""
from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from tests.helpers import REPO

#: Scripts that no test imports or runs: their own-package imports are checked here.
SCRIPTS = ("bench", "examples", "docs/tools")
OWN = ("dropedge_core", "dropedge_explorer", "app_shared")


def _scripts() -> list[Path]:
    return sorted(p for d in SCRIPTS for p in (REPO / d).rglob("*.py"))


def _own_imports(path: Path) -> list[tuple[str, str | None, int]]:
    """``(module, name or None, line)`` of every import of an own package in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module.split(".")[0] in OWN:
            found += [(node.module, alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(alias.name, None, node.lineno) for alias in node.names
                      if alias.name.split(".")[0] in OWN]
    return found


def _missing(module: str, name: str | None) -> str | None:
    """Why ``from module import name`` (``import module``) would fail, or ``None``."""
    try:
        mod = importlib.import_module(module)
    except ImportError as exc:
        return f"{module}: {exc}"
    if name is None or name == "*" or hasattr(mod, name):
        return None
    try:  # a submodule not imported by its package's __init__
        importlib.import_module(f"{module}.{name}")
    except ImportError:
        return f"{module} has no {name!r}"
    return None


def test_the_scripts_are_found():
    names = {p.relative_to(REPO).as_posix() for p in _scripts()}
    assert {"bench/bench_sampler.py", "bench/bench_pyg_fresh.py"} <= names


@pytest.mark.parametrize("path", _scripts(), ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_own_import_resolves(path):
    broken = [f"line {line}: {why}" for module, name, line in _own_imports(path)
              if (why := _missing(module, name))]
    assert not broken, f"{path.relative_to(REPO)}: " + "; ".join(broken)
