"""The layering rules of docs/ARCHITECTURE.md, checked on the source tree.

Each rule is read from the files themselves (imports parsed with :mod:`ast`, lines
counted), so moving code across a layer boundary fails here with the file named.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.helpers import REPO

LIBRARY = REPO / "library" / "dropedge_core"
EXPLORER = REPO / "dropedge_explorer"
#: What the library may import besides itself and the standard library.
LIBRARY_MAY_IMPORT = ("torch", "numpy", "scipy", "torch_geometric")
PAGES = REPO / "app_pages"
#: A module's code, its docstrings aside.
MAX_MODULE_LINES = 400
#: A function's code, its docstring aside (a PyG-style docstring documents; it is not code).
MAX_FUNCTION_LINES = 60
MAX_PAGE_LINES = 150
#: ``app_shared``'s code (blank lines, comments and docstrings aside): the app's plumbing
#: stays small, what is not Streamlit lives in the packages.
MAX_APP_SHARED_LINES = 1500
#: Every module's rank, lowest first: a module imports only modules of its own rank or
#: below. Keys are module names or packages (a package ranks everything under it); the
#: bare package name ``dropedge_core`` is its public facade (``__init__``: method + data).
RANKS: dict[str, int] = {
    "dropedge_core": 0,                                   # the library: torch, numpy, scipy, PyG
    "dropedge_explorer._lazy": 0,                         # importlib only: heavy libraries on first use
    "dropedge_explorer.env": 1, "dropedge_explorer.memory": 1,         # infrastructure: settings, limits,
    "dropedge_explorer.paths": 1, "dropedge_explorer.locations": 1,    # where assets and stores are,
    "dropedge_explorer.databases": 1,                                  # what a database holds,
    "dropedge_explorer._privileges": 1, "dropedge_explorer._sqlite_locks": 1,  # a role's grants, locks
    "dropedge_explorer": 0,                               # the package itself: a docstring, no imports
    "dropedge_explorer.data": 2,
    "dropedge_explorer.figures": 3,                       # tables in, Figure out: data and method only
    "dropedge_explorer.training": 4,
    "dropedge_explorer.store": 6,                         # schema, versions, runs, claim SQL
    "dropedge_explorer.sweep_workers": 7,
    "dropedge_explorer.studies": 8,
    "dropedge_explorer.studies.tuned": 8,                 # a study read back
    "dropedge_explorer.links": 8,                         # a page's link format: bounds from the studies
    "dropedge_explorer.jobs": 8.5,                        # the fair queue: worker processes run studies
    # the command line; the library's __main__ hands over to it (the one place that reaches up)
    "dropedge_explorer.cli": 9, "dropedge_explorer.__main__": 9, "dropedge_core.__main__": 9,
    "app_shared": 10,
    # the app's jobs, one idea each: a page's Live runs and the job ids in the URL (the
    # registry, sweeps and studies: dropedge_explorer.jobs)
    "dropedge_explorer.jobs.live": 10, "app_shared.job_links": 10, "app_shared.live_runs": 10,
    "app_shared.upload": 10, "app_shared.text": 10,
    "app_pages": 11, "app": 11,
}
#: App plumbing: none of it belongs in the package.
APP_WORDS = ("watchdog", "heartbeat", "session_state", "st.fragment", "poll")
#: Optuna's own option of the same word (its storage fails a killed worker's trial): allowed.
OPTUNA_NAMES = ("heartbeat_interval",)


def _modules(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def _imports(path: Path, repo: Path = REPO) -> set[str]:
    """Every absolute module name ``path`` imports (relative imports resolved; an
    ``importlib.import_module("x")`` or ``lazy_import("x")`` of a constant counts)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    rel = path.relative_to(repo)
    rel = rel.relative_to("library") if rel.parts[0] == "library" else rel
    package = ".".join(rel.with_suffix("").parts[:-1])
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
        elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
              and (isinstance(node.func, ast.Name) and node.func.id in ("lazy_import", "import_module")
                   or isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")):
            out.add(node.args[0].value)  # an import on first use is an import all the same
    return out


def _rank(module: str) -> int | None:
    """The rank of ``module`` (longest key of :data:`RANKS` that is it or a package above it;
    the bare ``dropedge_explorer`` ranks its ``__init__`` alone, every module under it has its
    own key); ``None`` for modules outside the project (torch, pandas, ...)."""
    keys = [k for k in RANKS if module == k or (module.startswith(k + ".") and k != "dropedge_explorer")]
    return RANKS[max(keys, key=len)] if keys else None


def _module_name(path: Path, repo: Path = REPO) -> str:
    """``dropedge_core.samplers`` for ``library/dropedge_core/samplers.py`` (the library's
    distribution lives in ``library/``), ``app_shared.x`` for ``app_shared/x.py``."""
    rel = path.relative_to(repo)
    parts = (rel.relative_to("library") if rel.parts[0] == "library" else rel).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _project_files(repo: Path = REPO) -> list[Path]:
    roots = [repo / "library" / "dropedge_core", repo / "dropedge_explorer", repo / "app_shared",
             repo / "app_pages"]
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


def _sloc(path: Path) -> int:
    """The lines of code of ``path``: not blank, not a comment, not in a docstring (module,
    class, function)."""
    text = path.read_text(encoding="utf-8")
    doc = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                doc.update(range(first.lineno, first.end_lineno + 1))
    return sum(1 for i, line in enumerate(text.splitlines(), 1)
               if line.strip() and not line.strip().startswith("#") and i not in doc)


def _too_long(roots: list[Path], repo: Path = REPO) -> dict[str, object]:
    """Modules over :data:`MAX_MODULE_LINES` lines of code and their functions over
    :data:`MAX_FUNCTION_LINES` (``{path: lines}``, ``{path: {function: lines}}``); docstrings
    do not count (the PyG-style ``Args:``/``Example:`` sections document, they are not code)."""
    modules = [p for root in roots if root.is_dir() for p in _modules(root)]
    long = {str(p.relative_to(repo)): n for p in modules if (n := _code_lines(p)) > MAX_MODULE_LINES}
    functions = {str(p.relative_to(repo)): f for p in modules if (f := _long_functions(p))}
    return {**long, **functions}


def test_modules_and_functions_are_split_by_idea():
    """Every module of the library, the explorer and ``app_shared`` <= 400 lines, every
    function's code <= 60."""
    assert _too_long([LIBRARY, EXPLORER, REPO / "app_shared"]) == {}


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


def test_app_shared_is_at_most_1500_lines_of_code():
    lines = {p.name: _sloc(p) for p in _modules(REPO / "app_shared")}
    assert sum(lines.values()) <= MAX_APP_SHARED_LINES, sorted(lines.items(), key=lambda kv: -kv[1])


def test_the_lines_of_code_skip_blanks_comments_and_docstrings(tmp_path):
    path = tmp_path / "m.py"
    path.write_text('"""Module\n\ndoc."""\nimport os\n\n# why\nclass A:\n    """Doc."""\n\n'
                    '    def f(self):\n        """One\n        two."""\n        return os.sep  # end\n',
                    encoding="utf-8")
    assert _sloc(path) == 4  # import, class, def, return


def test_no_page_is_over_150_lines():
    long = {p.name: n for p in _modules(PAGES)
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_PAGE_LINES}
    assert not long, f"pages over {MAX_PAGE_LINES} lines: {long}"


def test_the_package_never_imports_streamlit_or_the_app():
    app = ("streamlit", "app_shared", "app_pages", "app")
    bad = {str(p.relative_to(REPO)): sorted(m for m in _imports(p) if m.split(".")[0] in app)
           for p in _modules(LIBRARY) + _modules(EXPLORER)}
    assert not {k: v for k, v in bad.items() if v}


def test_no_app_plumbing_in_the_package():
    found = {}
    for p in _modules(LIBRARY) + _modules(EXPLORER):
        text = p.read_text(encoding="utf-8").lower()
        for name in OPTUNA_NAMES:  # a library's option, not app plumbing
            text = text.replace(name, "")
        words = [w for w in APP_WORDS if w in text]
        if words:
            found[str(p.relative_to(REPO))] = words
    assert not found, f"app plumbing words in the library or the explorer: {found}"


def _upward_imports(repo: Path = REPO) -> dict[str, list[str]]:
    """Each project file's imports of a module ranked above it."""
    bad = {}
    for p in _project_files(repo):
        own = _rank(_module_name(p, repo))
        above = sorted(m for m in _imports(p, repo) if (r := _rank(m)) is not None and r > own)
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
    cli = set().union(*(_imports(p) for p in _modules(EXPLORER / "cli")))
    assert any(m.startswith("dropedge_explorer.studies") for m in cli)
    pages = set().union(*(_imports(p) for p in [*_modules(PAGES), *_modules(REPO / "app_shared")]))
    assert any(m.startswith("dropedge_explorer.studies") for m in pages)


def test_the_rank_check_catches_an_upward_import(tmp_path):
    """The checker itself, on a made-up tree: a library module importing the explorer
    (absolute, through ``import_module``) or a database module, an explorer module importing
    a higher one relatively, a data module importing the store, the app's plumbing imported
    by the explorer, a figure importing the studies or training, are seen; downward imports
    are not."""
    files = {
        "library/dropedge_core/a.py": "from dropedge_explorer.studies import sweep\n",
        "library/dropedge_core/c.py": "from .graph import Graph\nimport torch\n",
        "library/dropedge_core/d.py": ("def f():\n"
                                       "    return import_module('dropedge_explorer.store').ResultStore\n"),
        "library/dropedge_core/graph.py": "from dropedge_explorer import databases\n",
        "dropedge_explorer/data/presets.py": "from dropedge_explorer.store import ResultStore\n",
        "dropedge_explorer/data/b.py": "from ..figures import style\nfrom dropedge_core import samplers\n",
        "dropedge_explorer/store/_runs.py": ("import app_shared\n"
                                             "from dropedge_explorer.training import TrainConfig\n"),
        "app_shared/__init__.py": "from dropedge_explorer.studies import run_tables as runs\n",
        "dropedge_explorer/figures/men.py": ("from ..studies.sampling import men_runs\n"
                                             "from dropedge_explorer.data import x\n"),
        "dropedge_explorer/figures/teaching.py": "import dropedge_explorer.training.trainer\n",
    }
    _write_tree(tmp_path, files)
    assert _upward_imports(tmp_path) == {
        "library/dropedge_core/a.py": ["dropedge_explorer.studies", "dropedge_explorer.studies.sweep"],
        "library/dropedge_core/d.py": ["dropedge_explorer.store"],
        "library/dropedge_core/graph.py": ["dropedge_explorer.databases"],
        "dropedge_explorer/data/presets.py": ["dropedge_explorer.store",
                                              "dropedge_explorer.store.ResultStore"],
        "dropedge_explorer/data/b.py": ["dropedge_explorer.figures", "dropedge_explorer.figures.style"],
        "dropedge_explorer/store/_runs.py": ["app_shared"],
        # a figure draws a table the caller built: it imports neither the studies nor training
        "dropedge_explorer/figures/men.py": ["dropedge_explorer.studies.sampling",
                                             "dropedge_explorer.studies.sampling.men_runs"],
        "dropedge_explorer/figures/teaching.py": ["dropedge_explorer.training.trainer"]}


def _library_foreign_imports(repo: Path = REPO) -> dict[str, list[str]]:
    """Each library module's imports of anything but itself, the standard library and
    :data:`LIBRARY_MAY_IMPORT` (its ``__main__`` aside: the one place that hands over to
    the explorer's command line)."""
    import sys

    allowed = set(LIBRARY_MAY_IMPORT) | set(sys.stdlib_module_names) | {"dropedge_core", "__future__"}
    bad = {}
    for p in _modules(repo / "library" / "dropedge_core"):
        if p.name == "__main__.py":
            continue
        foreign = sorted(m for m in _imports(p, repo) if m and m.split(".")[0] not in allowed)
        if foreign:
            bad[str(p.relative_to(repo))] = foreign
    return bad


def test_the_library_imports_only_torch_numpy_scipy_and_pyg():
    assert _library_foreign_imports() == {}


def test_the_library_import_check_sees_a_foreign_import(tmp_path):
    _write_tree(tmp_path, {
        "library/dropedge_core/a.py": "import pandas as pd\nimport os\nimport numpy as np\n",
        "library/dropedge_core/b.py": "def f():\n    return importlib.import_module('sqlalchemy.engine')\n",
        "library/dropedge_core/pyg/c.py": ("from torch_geometric.utils import dropout_edge\n"
                                           "import scipy.sparse\n"),
        "library/dropedge_core/__main__.py": "from dropedge_explorer.cli import main\n",
        "library/dropedge_core/d.py": "from dropedge_explorer import memory\n"})
    assert _library_foreign_imports(tmp_path) == {
        "library/dropedge_core/a.py": ["pandas"],
        "library/dropedge_core/b.py": ["sqlalchemy.engine"],
        "library/dropedge_core/d.py": ["dropedge_explorer", "dropedge_explorer.memory"]}


#: Test folders beside the explorer's layers (dropedge_explorer/<layer>/ -> tests/<layer>/): the
#: library's tests (``core``: its modules; ``pyg``: its PyG front end), the app's AppTests, the
#: real-browser tests and the shared helpers.
TEST_FOLDERS_BESIDE = ("core", "pyg", "app", "browser", "helpers")
#: Tests of the whole project, not of one layer: they stay at the top of tests/.
TOP_LEVEL_TESTS = ("test_architecture.py", "test_ci_skips.py", "test_client_imports.py", "test_cuda.py",
                   "test_docstrings.py", "test_mutation_records.py", "test_packaging.py",
                   "test_public_surface.py")


def _test_tree_problems(repo: Path = REPO) -> list[str]:
    """What breaks the tests' layout: a test module importing another test module (shared
    code lives in ``tests/helpers``), a test folder that is not a layer of the package, a
    layer's test left at the top of ``tests/``."""
    tests = repo / "tests"
    explorer = repo / "dropedge_explorer"
    layers = {p.name for p in explorer.iterdir() if (p / "__init__.py").is_file()}
    layers |= {p.stem for p in explorer.glob("*.py")}
    problems = []
    for path in _modules(tests):
        rel = path.relative_to(repo).as_posix()
        for module in _imports(path, repo):
            parts = module.split(".")
            if parts[0] == "tests" and any(p.startswith("test_") or p == "conftest" for p in parts):
                problems.append(f"{rel} imports {module}")
        folder = path.relative_to(tests).parts
        if len(folder) > 1 and folder[0] not in layers | set(TEST_FOLDERS_BESIDE):
            problems.append(f"{rel}: tests/{folder[0]}/ is not a layer of the project")
        if len(folder) == 1 and path.name.startswith("test_") and path.name not in TOP_LEVEL_TESTS:
            problems.append(f"{rel}: a layer's test at the top of tests/")
    return sorted(set(problems))


def test_tests_mirror_the_package_and_share_code_only_through_helpers():
    assert _test_tree_problems() == []


def test_the_test_tree_check_catches_test_to_test_imports_and_stray_folders(tmp_path):
    files = {
        "library/dropedge_core/__init__.py": "",
        "dropedge_explorer/studies/__init__.py": "",
        "tests/core/test_a.py": "from tests.core.test_b import helper\n",
        "tests/core/test_b.py": "from .test_c import x\nfrom tests.helpers import REPO\n",
        "tests/core/test_c.py": "from ..conftest import random_graph\n",
        "tests/studies/test_d.py": "from tests.helpers.app import _ok\n",
        "tests/misc/test_e.py": "",
        "tests/test_f.py": "",
        "tests/test_packaging.py": "",
    }
    _write_tree(tmp_path, files)
    assert _test_tree_problems(tmp_path) == [
        "tests/core/test_a.py imports tests.core.test_b",
        "tests/core/test_a.py imports tests.core.test_b.helper",
        "tests/core/test_b.py imports tests.core.test_c",
        "tests/core/test_b.py imports tests.core.test_c.x",
        "tests/core/test_c.py imports tests.conftest",
        "tests/core/test_c.py imports tests.conftest.random_graph",
        "tests/misc/test_e.py: tests/misc/ is not a layer of the project",
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
    """``dropedge_core.limits.MAX_LAYERS`` is the one number; the app's lower limit is derived from
    the depth study's depths. The checker sees a copy and a hard-coded default."""
    assert [h.split(":")[0] for h in _layer_limit_homes()] == ["library/dropedge_core/limits.py"]
    from dropedge_core import limits

    from dropedge_explorer import links
    from dropedge_explorer.studies.depth import DEPTHS

    assert links.APP_MAX_LAYERS == max(DEPTHS) <= limits.MAX_LAYERS
    files = {"dropedge_explorer/training/config.py": "MAX_LAYERS = 256\n",
             "library/dropedge_core/samplers.py": "def check_layers(n, max_layers=256):\n    pass\n",
             "app_shared/links.py": "APP_MAX_LAYERS = max(DEPTHS)\n"}
    _write_tree(tmp_path, files)
    assert sorted(_layer_limit_homes(tmp_path)) == ["dropedge_explorer/training/config.py:1",
                                                    "library/dropedge_core/samplers.py:1"]


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
    bad = _issue_numbers([LIBRARY, EXPLORER, REPO / "app_shared", REPO / "app_pages"])
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
#: make an import cycle) used by few calls comes through ``dropedge_explorer._lazy.lazy_import``
#: (the library: ``importlib.import_module``) instead of an ``import`` inside a function. Every
#: package but the explorer's ``cli``, whose commands import what they run only once the signal
#: handlers are set (importing torch takes seconds, and Ctrl-C in them must be one line), and
#: the library's ``__main__`` (the same reason).
TOP_IMPORT_PACKAGES = ("library/dropedge_core", "dropedge_explorer/training", "dropedge_explorer/data",
                       "dropedge_explorer/store", "dropedge_explorer/studies", "dropedge_explorer/figures",
                       "dropedge_explorer")


def _function_imports(repo: Path = REPO) -> list[str]:
    """``"path:line"`` of every ``import`` inside a function of :data:`TOP_IMPORT_PACKAGES`
    (the explorer itself: its top-level modules only)."""
    found = []
    for package in TOP_IMPORT_PACKAGES:
        folder = repo / package
        files = sorted(folder.glob("*.py")) if package == "dropedge_explorer" else _modules(folder)
        for p in files:
            if p.name == "__main__.py":
                continue
            for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    found += [f"{p.relative_to(repo).as_posix()}:{inner.lineno}" for inner in ast.walk(node)
                              if isinstance(inner, (ast.Import, ast.ImportFrom))]
    return sorted(set(found))


def test_imports_are_at_the_top_or_through_the_lazy_helper():
    assert _function_imports() == []


def test_the_import_check_finds_an_import_inside_a_function(tmp_path):
    files = {"dropedge_explorer/data/a.py": "import torch\n\n\ndef f():\n    from scipy import sparse\n"
                                            "    return sparse\n",
             "library/dropedge_core/pyg/b.py": "class C:\n    def m(self):\n        import pandas as pd\n",
             "dropedge_explorer/data/c.py": "from dropedge_explorer._lazy import lazy_import\n\n\n"
                                            "def f():\n    return lazy_import('scipy.sparse')\n",
             "dropedge_explorer/studies/d.py": "def f():\n    import optuna\n",
             "dropedge_explorer/e.py": "def f():\n    import resource\n",
             "dropedge_explorer/cli/f.py": "def f():\n    from dropedge_explorer.store import ResultStore\n"}
    _write_tree(tmp_path, files)
    assert _function_imports(tmp_path) == ["dropedge_explorer/data/a.py:5", "dropedge_explorer/e.py:2",
                                           "dropedge_explorer/studies/d.py:2",
                                           "library/dropedge_core/pyg/b.py:3"]
