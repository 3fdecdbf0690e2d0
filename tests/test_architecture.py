"""The layering rules of docs/ARCHITECTURE.md, checked on the source tree.

Each rule is read from the files themselves (imports parsed with :mod:`ast`, lines
counted), so moving code across a layer boundary fails here with the file named.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CORE = REPO / "dropedge_core"
PAGES = REPO / "app_pages"
MAX_MODULE_LINES = 500
MAX_PAGE_LINES = 150
#: Lower layers never import higher ones (``method`` is the bottom).
LAYERS = ("method", "data", "training", "studies", "figures", "cli")
#: App plumbing: none of it belongs in the package.
APP_WORDS = ("watchdog", "heartbeat", "session_state", "st.fragment", "poll")


def _modules(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def _imports(path: Path, repo: Path = REPO) -> set[str]:
    """Every absolute module name ``path`` imports (relative imports resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = ".".join(path.relative_to(repo).with_suffix("").parts[:-1])
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            out.add(module)
            out.update(f"{module}.{alias.name}" for alias in node.names)
    return out


def _layer(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "dropedge_core" and parts[1] in LAYERS else None


def test_no_core_module_is_over_500_lines():
    long = {str(p.relative_to(REPO)): n for p in _modules(CORE)
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert not long, f"modules over {MAX_MODULE_LINES} lines: {long}"


def test_no_page_is_over_150_lines():
    long = {p.name: n for p in _modules(PAGES)
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_PAGE_LINES}
    assert not long, f"pages over {MAX_PAGE_LINES} lines: {long}"


def test_the_package_never_imports_streamlit_or_the_app():
    app = ("streamlit", "app_shared", "app_pages", "app")
    bad = {str(p.relative_to(REPO)): sorted(m for m in _imports(p) if m.split(".")[0] in app)
           for p in _modules(CORE)}
    assert not {k: v for k, v in bad.items() if v}


def test_no_app_plumbing_in_the_package():
    found = {}
    for p in _modules(CORE):
        text = p.read_text(encoding="utf-8").lower()
        words = [w for w in APP_WORDS if w in text]
        if words:
            found[str(p.relative_to(REPO))] = words
    assert not found, f"app plumbing words in dropedge_core: {found}"


def _upward_imports(layer: str, repo: Path = REPO) -> dict[str, list[str]]:
    rank = {name: i for i, name in enumerate(LAYERS)}
    bad = {}
    for p in _modules(repo / "dropedge_core" / layer):
        above = sorted(m for m in _imports(p, repo) if (other := _layer(m)) and rank[other] > rank[layer])
        if above:
            bad[str(p.relative_to(repo))] = above
    return bad


@pytest.mark.parametrize("layer", LAYERS)
def test_a_layer_imports_only_layers_below_it(layer):
    bad = _upward_imports(layer)
    assert not bad, f"{layer} imports a higher layer: {bad}"


def test_the_cli_and_the_pages_call_the_studies():
    cli = set().union(*(_imports(p) for p in _modules(CORE / "cli")))
    assert any(m.startswith("dropedge_core.studies") for m in cli)
    pages = set().union(*(_imports(p) for p in [*_modules(PAGES), *_modules(REPO / "app_shared")]))
    assert any(m.startswith("dropedge_core.studies") for m in pages)


def test_the_layer_check_catches_an_upward_import(tmp_path):
    """The checker itself: method modules importing the studies (absolute and relative) are seen."""
    method = tmp_path / "dropedge_core" / "method"
    method.mkdir(parents=True)
    (method / "a.py").write_text("from dropedge_core.studies import sweep\n", encoding="utf-8")
    (method / "b.py").write_text("from ..figures import style\n", encoding="utf-8")
    (method / "c.py").write_text("from .graph import Graph\n", encoding="utf-8")
    assert _upward_imports("method", tmp_path) == {
        "dropedge_core/method/a.py": ["dropedge_core.studies", "dropedge_core.studies.sweep"],
        "dropedge_core/method/b.py": ["dropedge_core.figures", "dropedge_core.figures.style"]}
