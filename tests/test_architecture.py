"""The layering rules of docs/ARCHITECTURE.md, checked on the source tree.

Each rule is read from the files themselves (imports parsed with :mod:`ast`, lines
counted), so moving code across a layer boundary fails here with the file named.
"""
from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CORE = REPO / "dropedge_core"
PAGES = REPO / "app_pages"
MAX_MODULE_LINES = 500
MAX_PAGE_LINES = 150
#: Every module's rank, lowest first: a module imports only modules of its own rank or
#: below. Keys are module names or packages (a package ranks everything under it); the
#: bare package name ``dropedge_core`` is its public facade (``__init__``: method + data).
RANKS: dict[str, int] = {
    "dropedge_core.method": 0,                                 # the method: torch only, the bottom
    "dropedge_core.env": 1, "dropedge_core.memory": 1,        # infrastructure: settings, limits,
    "dropedge_core.paths": 1, "dropedge_core.locations": 1,   # where assets and stores are,
    "dropedge_core.databases": 1,                              # what a database holds,
    "dropedge_core.echo": 1,                                   # refused values shown cut
    "dropedge_core.data": 2, "dropedge_core": 2,
    "dropedge_core.training": 3,
    "dropedge_core.pyg": 4,                                    # for PyG users' code: nothing here imports it
    "dropedge_core.store": 5,                                  # schema, versions, runs, claim SQL
    "dropedge_core.claims": 6,
    "dropedge_core.studies": 7,
    "dropedge_core.figures": 8,
    "dropedge_core.cli": 9, "dropedge_core.__main__": 9,
    "app_shared": 10,
    "app_pages": 11, "app": 11,
}
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


def _rank(module: str) -> int | None:
    """The rank of ``module`` (longest key of :data:`RANKS` that is it or a package above it);
    ``None`` for modules outside the project (torch, pandas, ...)."""
    keys = [k for k in RANKS if module == k or (module.startswith(k + ".") and k != "dropedge_core")]
    return RANKS[max(keys, key=len)] if keys else None


def _module_name(path: Path, repo: Path = REPO) -> str:
    parts = path.relative_to(repo).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _project_files(repo: Path = REPO) -> list[Path]:
    roots = [repo / "dropedge_core", repo / "app_shared", repo / "app_pages"]
    return [p for root in roots if root.is_dir() for p in _modules(root)] + \
        [p for p in [repo / "app.py"] if p.is_file()]


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


def _upward_imports(repo: Path = REPO) -> dict[str, list[str]]:
    """Each project file's imports of a module ranked above it."""
    bad = {}
    for p in _project_files(repo):
        own = _rank(_module_name(p, repo))
        above = sorted(m for m in _imports(p, repo)
                       if m != "dropedge_core" and (r := _rank(m)) is not None and r > own)
        if above:
            bad[str(p.relative_to(repo))] = above
    return bad


def test_every_module_of_the_project_has_a_rank():
    unranked = [str(p.relative_to(REPO)) for p in _project_files() if _rank(_module_name(p)) is None]
    assert not unranked, f"give these modules a rank in RANKS (and docs/ARCHITECTURE.md): {unranked}"


def test_a_module_imports_only_modules_of_its_rank_or_below():
    bad = _upward_imports()
    assert not bad, f"imports of a higher rank: {bad}"


def test_the_cli_and_the_pages_call_the_studies():
    cli = set().union(*(_imports(p) for p in _modules(CORE / "cli")))
    assert any(m.startswith("dropedge_core.studies") for m in cli)
    pages = set().union(*(_imports(p) for p in [*_modules(PAGES), *_modules(REPO / "app_shared")]))
    assert any(m.startswith("dropedge_core.studies") for m in pages)


def test_the_rank_check_catches_an_upward_import(tmp_path):
    """The checker itself, on a made-up tree: a method module importing the studies
    (absolute and relative) or a database module, a data module importing the store, the
    app's plumbing imported by the package, are seen; downward imports are not."""
    files = {
        "dropedge_core/method/a.py": "from dropedge_core.studies import sweep\n",
        "dropedge_core/method/b.py": "from ..figures import style\n",
        "dropedge_core/method/c.py": "from .graph import Graph\nimport torch\n",
        "dropedge_core/method/graph.py": "from dropedge_core import databases\n",
        "dropedge_core/data/presets.py": "from dropedge_core.store import ResultStore\n",
        "dropedge_core/store/runs.py": "import app_shared\nfrom dropedge_core.training import TrainConfig\n",
        "app_shared/__init__.py": "from dropedge_core.studies import runs\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert _upward_imports(tmp_path) == {
        "dropedge_core/method/a.py": ["dropedge_core.studies", "dropedge_core.studies.sweep"],
        "dropedge_core/method/b.py": ["dropedge_core.figures", "dropedge_core.figures.style"],
        "dropedge_core/method/graph.py": ["dropedge_core.databases"],
        "dropedge_core/data/presets.py": ["dropedge_core.store", "dropedge_core.store.ResultStore"],
        "dropedge_core/store/runs.py": ["app_shared"]}
