"""The layering rules of docs/ARCHITECTURE.md, checked on the source tree.

Each rule is read from the files themselves (imports parsed with :mod:`ast`, lines
counted), so moving code across a layer boundary fails here with the file named.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.helpers import REPO

CORE = REPO / "dropedge_core"
PAGES = REPO / "app_pages"
#: A module's code, its docstrings aside.
MAX_MODULE_LINES = 400
#: A function's code, its docstring aside (a PyG-style docstring documents; it is not code).
MAX_FUNCTION_LINES = 60
MAX_PAGE_LINES = 150
#: Every module's rank, lowest first: a module imports only modules of its own rank or
#: below. Keys are module names or packages (a package ranks everything under it); the
#: bare package name ``dropedge_core`` is its public facade (``__init__``: method + data).
RANKS: dict[str, int] = {
    "dropedge_core.method": 0,                                 # the method: torch only, the bottom
    "dropedge_core._lazy": 0,                                  # importlib only: heavy libraries on first use
    "dropedge_core.env": 1, "dropedge_core.memory": 1,        # infrastructure: settings, limits,
    "dropedge_core.paths": 1, "dropedge_core.locations": 1,   # where assets and stores are,
    "dropedge_core.databases": 1,                              # what a database holds,
    "dropedge_core._privileges": 1, "dropedge_core._sqlite_locks": 1,  # a role's grants, a file's locks,
    "dropedge_core.echo": 1,                                   # refused values shown cut
    "dropedge_core.data": 2, "dropedge_core": 2,
    "dropedge_core.figures": 3,                                # tables in, Figure out: data and method only
    "dropedge_core.training": 4,
    "dropedge_core.pyg": 5,                                    # for PyG users' code: nothing here imports it
    "dropedge_core.store": 6,                                  # schema, versions, runs, claim SQL
    "dropedge_core.sweep_workers": 7,
    "dropedge_core.studies": 8,
    "dropedge_core.cli": 9, "dropedge_core.__main__": 9,
    "app_shared": 10,
    # the app's jobs, one idea each (issue 27): the thread, the watchdog, a run, a session,
    # a sweep, a study, the server-wide registry and the job ids in the URL
    "app_shared.background": 10, "app_shared.watchdog": 10, "app_shared.run_records": 10,
    "app_shared.training_session": 10, "app_shared.sweep_job": 10, "app_shared.tuning_job": 10,
    "app_shared.registry": 10, "app_shared.job_links": 10, "app_shared.live_runs": 10,
    "app_shared.upload": 10, "app_shared.text": 10,
    "dropedge_core.studies.tuned": 8,                           # a study read back
    "app_pages": 11, "app": 11,
}
#: App plumbing: none of it belongs in the package.
APP_WORDS = ("watchdog", "heartbeat", "session_state", "st.fragment", "poll")
#: Optuna's own option of the same word (its storage fails a killed worker's trial): allowed.
OPTUNA_NAMES = ("heartbeat_interval",)


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
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "lazy_import"
              and node.args and isinstance(node.args[0], ast.Constant)):
            out.add(node.args[0].value)  # an import on first use is an import all the same
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


def _long_functions(path: Path, limit: int = MAX_FUNCTION_LINES) -> dict[str, int]:
    """``{function name: lines}`` of the functions in ``path`` whose code, docstring aside,
    is longer than ``limit`` lines."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0]
            doc = (first.end_lineno - first.lineno + 1 if isinstance(first, ast.Expr)
                   and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str) else 0)
            if (n := node.end_lineno - node.lineno + 1 - doc) > limit:
                out[node.name] = n
    return out


def _code_lines(path: Path) -> int:
    """The lines of ``path``, its docstrings (module, classes, functions) aside."""
    text = path.read_text(encoding="utf-8")
    doc = 0
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                doc += first.end_lineno - first.lineno + 1
    return len(text.splitlines()) - doc


def _too_long(roots: list[Path], repo: Path = REPO) -> dict[str, object]:
    """Modules over :data:`MAX_MODULE_LINES` lines of code and their functions over
    :data:`MAX_FUNCTION_LINES` (``{path: lines}``, ``{path: {function: lines}}``); docstrings
    do not count (the PyG-style ``Args:``/``Example:`` sections document, they are not code)."""
    modules = [p for root in roots if root.is_dir() for p in _modules(root)]
    long = {str(p.relative_to(repo)): n for p in modules if (n := _code_lines(p)) > MAX_MODULE_LINES}
    functions = {str(p.relative_to(repo)): f for p in modules if (f := _long_functions(p))}
    return {**long, **functions}


def test_modules_and_functions_are_split_by_idea():
    """Issue 27: every module of ``dropedge_core`` and ``app_shared`` <= 400 lines, every
    function's code <= 60."""
    assert _too_long([CORE, REPO / "app_shared"]) == {}


def test_the_size_check_counts_code_not_docstrings(tmp_path):
    doc = "    \"\"\"" + "\n    words" * 80 + "\n    \"\"\"\n"
    files = {"dropedge_core/a.py": "def documented():\n" + doc + "    return 1\n",
             "dropedge_core/b.py": "def long():\n" + "    x = 1\n" * 61,
             "dropedge_core/c.py": "X = 1\n" * 401,
             "app_shared/d.py": "def fine():\n" + "    x = 1\n" * 59,
             "app_shared/e.py": '"""' + "words\n" * 300 + '"""\n' + "X = 1\n" * 399}
    _write_tree(tmp_path, files)
    assert _too_long([tmp_path / "dropedge_core", tmp_path / "app_shared"], tmp_path) == {
        "dropedge_core/b.py": {"long": 62}, "dropedge_core/c.py": 401}


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
        for name in OPTUNA_NAMES:  # a library's option, not app plumbing
            text = text.replace(name, "")
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
    app's plumbing imported by the package, a figure importing the studies or training, are
    seen; downward imports are not."""
    files = {
        "dropedge_core/method/a.py": "from dropedge_core.studies import sweep\n",
        "dropedge_core/method/b.py": "from ..figures import style\n",
        "dropedge_core/method/c.py": "from .graph import Graph\nimport torch\n",
        "dropedge_core/method/d.py": "def f():\n    return lazy_import('dropedge_core.store').ResultStore\n",
        "dropedge_core/method/graph.py": "from dropedge_core import databases\n",
        "dropedge_core/data/presets.py": "from dropedge_core.store import ResultStore\n",
        "dropedge_core/store/_runs.py": "import app_shared\nfrom dropedge_core.training import TrainConfig\n",
        "app_shared/__init__.py": "from dropedge_core.studies import run_tables as runs\n",
        "dropedge_core/figures/men.py": ("from ..studies.sampling import men_runs\n"
                                         "from dropedge_core.data import x\n"),
        "dropedge_core/figures/teaching.py": "import dropedge_core.training.trainer\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert _upward_imports(tmp_path) == {
        "dropedge_core/method/a.py": ["dropedge_core.studies", "dropedge_core.studies.sweep"],
        "dropedge_core/method/b.py": ["dropedge_core.figures", "dropedge_core.figures.style"],
        "dropedge_core/method/d.py": ["dropedge_core.store"],
        "dropedge_core/method/graph.py": ["dropedge_core.databases"],
        "dropedge_core/data/presets.py": ["dropedge_core.store", "dropedge_core.store.ResultStore"],
        "dropedge_core/store/_runs.py": ["app_shared"],
        # a figure draws a table the caller built: it imports neither the studies nor training
        "dropedge_core/figures/men.py": ["dropedge_core.studies.sampling",
                                         "dropedge_core.studies.sampling.men_runs"],
        "dropedge_core/figures/teaching.py": ["dropedge_core.training.trainer"]}


#: Test folders beside the package's own (dropedge_core/<layer>/ -> tests/<layer>/): the app's
#: AppTests, the real-browser tests and the shared helpers.
TEST_FOLDERS_BESIDE = ("app", "browser", "helpers")
#: Tests of the whole project, not of one layer: they stay at the top of tests/.
TOP_LEVEL_TESTS = ("test_architecture.py", "test_ci_skips.py", "test_cuda.py", "test_docstrings.py",
                   "test_mutation_records.py", "test_packaging.py", "test_public_surface.py")


def _test_tree_problems(repo: Path = REPO) -> list[str]:
    """What breaks the tests' layout: a test module importing another test module (shared
    code lives in ``tests/helpers``), a test folder that is not a layer of the package, a
    layer's test left at the top of ``tests/``."""
    tests = repo / "tests"
    core = repo / "dropedge_core"
    layers = {p.name for p in core.iterdir() if (p / "__init__.py").is_file()}
    layers |= {p.stem for p in core.glob("*.py")}
    problems = []
    for path in _modules(tests):
        rel = path.relative_to(repo).as_posix()
        for module in _imports(path, repo):
            parts = module.split(".")
            if parts[0] == "tests" and any(p.startswith("test_") or p == "conftest" for p in parts):
                problems.append(f"{rel} imports {module}")
        folder = path.relative_to(tests).parts
        if len(folder) > 1 and folder[0] not in layers | set(TEST_FOLDERS_BESIDE):
            problems.append(f"{rel}: tests/{folder[0]}/ is not a layer of dropedge_core")
        if len(folder) == 1 and path.name.startswith("test_") and path.name not in TOP_LEVEL_TESTS:
            problems.append(f"{rel}: a layer's test at the top of tests/")
    return sorted(set(problems))


def test_tests_mirror_the_package_and_share_code_only_through_helpers():
    assert _test_tree_problems() == []


def test_the_test_tree_check_catches_test_to_test_imports_and_stray_folders(tmp_path):
    files = {
        "dropedge_core/method/__init__.py": "",
        "dropedge_core/studies/__init__.py": "",
        "tests/method/test_a.py": "from tests.method.test_b import helper\n",
        "tests/method/test_b.py": "from .test_c import x\nfrom tests.helpers import REPO\n",
        "tests/method/test_c.py": "from ..conftest import random_graph\n",
        "tests/studies/test_d.py": "from tests.helpers.app import _ok\n",
        "tests/misc/test_e.py": "",
        "tests/test_f.py": "",
        "tests/test_packaging.py": "",
    }
    _write_tree(tmp_path, files)
    assert _test_tree_problems(tmp_path) == [
        "tests/method/test_a.py imports tests.method.test_b",
        "tests/method/test_a.py imports tests.method.test_b.helper",
        "tests/method/test_b.py imports tests.method.test_c",
        "tests/method/test_b.py imports tests.method.test_c.x",
        "tests/method/test_c.py imports tests.conftest",
        "tests/method/test_c.py imports tests.conftest.random_graph",
        "tests/misc/test_e.py: tests/misc/ is not a layer of dropedge_core",
        "tests/test_f.py: a layer's test at the top of tests/",
    ]
def _write_tree(root: Path, files: dict[str, str]) -> None:
    """A made-up project tree under ``root``: ``{relative path: text}``."""
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")


def _layer_limit_homes(repo: Path = REPO) -> list[str]:
    """Where a layer limit is written down: assignments to a name ending ``MAX_LAYERS`` with
    a number, and ``max_layers`` parameters defaulting to a number."""
    found = []
    for p in _project_files(repo):
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and any(
                    isinstance(t, ast.Name) and t.id.endswith("MAX_LAYERS") for t in node.targets):
                found.append(f"{p.relative_to(repo)}:{node.lineno}")
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                args = node.args.args[len(node.args.args) - len(node.args.defaults):]
                found += [f"{p.relative_to(repo)}:{node.lineno}" for a, d in zip(args, node.args.defaults)
                          if a.arg == "max_layers" and isinstance(d, ast.Constant)]
    return found


def test_the_layer_limit_has_one_home(tmp_path):
    """``method.limits.MAX_LAYERS`` is the one number; the app's lower limit is derived from
    the depth study's depths. The checker sees a copy and a hard-coded default."""
    assert [h.split(":")[0] for h in _layer_limit_homes()] == ["dropedge_core/method/_limits.py"]
    from app_shared import urlstate
    from dropedge_core.method import _limits as limits
    from dropedge_core.studies.depth import DEPTHS

    assert urlstate.APP_MAX_LAYERS == max(DEPTHS) <= limits.MAX_LAYERS
    files = {"dropedge_core/training/config.py": "MAX_LAYERS = 256\n",
             "dropedge_core/method/samplers.py": "def check_layers(n, max_layers=256):\n    pass\n",
             "app_shared/urlstate.py": "APP_MAX_LAYERS = max(DEPTHS)\n"}
    _write_tree(tmp_path, files)
    assert sorted(_layer_limit_homes(tmp_path)) == ["dropedge_core/method/samplers.py:1",
                                                    "dropedge_core/training/config.py:1"]


#: An issue number in prose ("issue 37", "issues 16, 24", "issue #39"): history, which belongs
#: in commit messages and the issue tracker, not in what the code says it does.
ISSUE_NUMBER = re.compile(r"\b[Ii]ssues? #?\d+")


def _issue_numbers(roots: list[Path], repo: Path = REPO) -> list[str]:
    """``path:line`` of every docstring (module, class, function) of the product code under
    ``roots`` that names an issue number."""
    found = []
    for root in roots:
        for path in _modules(root):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            nodes = [tree, *(n for n in ast.walk(tree)
                             if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))]
            for node in nodes:
                doc = ast.get_docstring(node, clean=False)
                if doc and ISSUE_NUMBER.search(doc):
                    found.append(f"{path.relative_to(repo)}:{getattr(node, 'lineno', 1)}")
    return found


def test_no_docstring_names_an_issue_number():
    bad = _issue_numbers([CORE, REPO / "app_shared", REPO / "app_pages"])
    assert not bad, f"say what the code does, not which issue asked for it: {bad}"


def test_the_issue_number_check_sees_one(tmp_path):
    _write_tree(tmp_path, {
        "dropedge_core/a.py": '"""Seeds in one batch (issue 37)."""\n',
        "dropedge_core/b.py": 'def f():\n    """As issue #12 asked."""\n',
        "dropedge_core/c.py": '"""Run #3 of 3 issues; 37 seeds."""\n',
    })
    assert _issue_numbers([tmp_path / "dropedge_core"], tmp_path) == ["dropedge_core/a.py:1",
                                                                      "dropedge_core/b.py:1"]


#: The packages whose imports are all at the top: a heavy library (or a module that would
#: make an import cycle) used by few calls comes through ``dropedge_core._lazy.lazy_import``
#: instead of an ``import`` inside a function. Every package but ``cli``, whose commands
#: import what they run only once the signal handlers are set (importing torch takes
#: seconds, and Ctrl-C in them must be one line), and the top-level modules (``""``).
TOP_IMPORT_PACKAGES = ("method", "training", "data", "store", "pyg", "studies", "figures", "")


def _function_imports(repo: Path = REPO) -> list[str]:
    """``"path:line"`` of every ``import`` inside a function of :data:`TOP_IMPORT_PACKAGES`."""
    found = []
    for package in TOP_IMPORT_PACKAGES:
        folder = repo / "dropedge_core" / package
        for p in _modules(folder) if package else sorted(folder.glob("*.py")):
            for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    found += [f"{p.relative_to(repo).as_posix()}:{inner.lineno}" for inner in ast.walk(node)
                              if isinstance(inner, (ast.Import, ast.ImportFrom))]
    return sorted(set(found))


def test_imports_are_at_the_top_or_through_the_lazy_helper():
    assert _function_imports() == []


def test_the_import_check_finds_an_import_inside_a_function(tmp_path):
    files = {"dropedge_core/data/a.py": "import torch\n\n\ndef f():\n    from scipy import sparse\n"
                                        "    return sparse\n",
             "dropedge_core/pyg/b.py": "class C:\n    def m(self):\n        import pandas as pd\n",
             "dropedge_core/data/c.py": "from dropedge_core._lazy import lazy_import\n\n\n"
                                        "def f():\n    return lazy_import('scipy.sparse')\n",
             "dropedge_core/studies/d.py": "def f():\n    import optuna\n",
             "dropedge_core/e.py": "def f():\n    import resource\n",
             "dropedge_core/cli/f.py": "def f():\n    from dropedge_core.store import ResultStore\n"}
    _write_tree(tmp_path, files)
    assert _function_imports(tmp_path) == ["dropedge_core/data/a.py:5", "dropedge_core/e.py:2",
                                           "dropedge_core/pyg/b.py:3", "dropedge_core/studies/d.py:2"]
