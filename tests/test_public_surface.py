"""A public surface per package, as Optuna keeps one: internals in ``_``-prefixed modules
that state no ``__all__``, public modules that state theirs, each package's docstring
naming its public modules (``:mod:`.name```), and the app and the tools reaching only
public modules. Read from the source tree with :mod:`ast`, nothing imported."""
from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.helpers import REPO

LIBRARY = REPO / "library" / "dropedge_core"
EXPLORER = REPO / "dropedge_explorer"
PACKAGE = LIBRARY
#: The library's clients (the explorer, the app, the benchmarks, the doc tools, the examples)
#: and the explorer's (the same but itself): each reaches only public modules of the other.
CLIENTS = ("app.py", "app_pages", "app_shared", "bench", "docs/tools", "examples")
LIBRARY_CLIENTS = (*CLIENTS, "dropedge_explorer")
_MOD = re.compile(r":mod:`~?([\w.]+)`")


def _private(path: Path, root: Path = PACKAGE) -> bool:
    """A path inside a ``_name`` module or package of ``root`` (``__init__``/``__main__`` are
    not private)."""
    return any(p.startswith("_") and not p.startswith("__")
               for p in path.relative_to(root).with_suffix("").parts)


def _packages(root: Path = PACKAGE) -> list[Path]:
    """Every public package folder of ``root`` (itself included)."""
    return [root] + [d for d in sorted(root.rglob("*")) if (d / "__init__.py").is_file()
                     and not _private(d / "__init__.py", root)]


def _children(package: Path) -> tuple[set[str], set[str]]:
    """(public, private) names of ``package``'s modules and sub-packages."""
    names = {p.stem for p in package.glob("*.py") if p.stem not in ("__init__", "__main__")}
    names |= {d.name for d in package.iterdir() if (d / "__init__.py").is_file()}
    return {n for n in names if not n.startswith("_")}, {n for n in names if n.startswith("_")}


def _dotted(package: Path) -> str:
    """``dropedge_explorer.studies`` for the folder ``.../dropedge_explorer/studies`` (the
    outermost folder named like one of the two packages is the root)."""
    start = next(i for i, part in enumerate(package.parts) if part in ("dropedge_core", "dropedge_explorer"))
    return ".".join(package.parts[start:])


def stated_modules(package: Path) -> set[str]:
    """The children of ``package`` its ``__init__`` docstring names with ``:mod:``."""
    doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text(encoding="utf-8"))) or ""
    dotted, named = _dotted(package), set()
    for ref in _MOD.findall(doc):
        if ref.startswith("."):
            named.add(ref[1:].split(".")[0])
        elif ref.startswith(dotted + "."):
            named.add(ref[len(dotted) + 1:].split(".")[0])
    return named


def _all_problems(path: Path, shown: str) -> list[str]:
    """What is wrong with ``path``'s ``__all__`` as a public module: missing, or listing a name
    the module neither defines nor imports."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bound, listed = set(), None
    functions = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {t.id for t in targets if isinstance(t, ast.Name)}
            bound |= names
            if "__all__" in names:
                listed = ast.literal_eval(node.value)
            if "_LAZY" in names and "__getattr__" in functions:  # imported on first use
                bound |= set(ast.literal_eval(node.value))
    if listed is None:
        return [f"{shown}: a public module without __all__"]
    return [f"{shown}: __all__ lists {name!r}, not defined there" for name in listed if name not in bound]


def _states_all(path: Path) -> bool:
    return any(isinstance(node, (ast.Assign, ast.AnnAssign)) and "__all__" in ast.unparse(node).split("=")[0]
               for node in ast.parse(path.read_text(encoding="utf-8")).body)


def surface_problems(root: Path = PACKAGE) -> list[str]:
    """One line per package whose docstring's module list differs from its public modules,
    per private module stating an ``__all__``, per public module without one or listing a
    name it does not have."""
    problems = []
    for package in _packages(root):
        public, _ = _children(package)
        stated = stated_modules(package)
        if stated != public:
            problems.append(f"{_dotted(package)}: public modules not named in its docstring: "
                            f"{sorted(public - stated)}; named but not public modules: "
                            f"{sorted(stated - public)}")
    for path in sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts):
        private, shown = _private(path, root), path.relative_to(root.parent).as_posix()
        if path.name == "__main__.py":
            continue
        if private and _states_all(path):
            problems.append(f"{shown}: a private module states __all__")
        elif not private:
            problems += _all_problems(path, shown)
    return problems


def private_imports(paths: list[Path], repo: Path = REPO, package: str = "dropedge_core") -> list[str]:
    """``"file:line module"`` for every import of a private module of ``package`` (or of a
    ``_name`` from one of its packages) in ``paths``."""
    found = []
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            modules = []
            if isinstance(node, ast.Import):
                modules = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                modules = [f"{node.module}.{a.name}" for a in node.names]
            for name in modules:
                parts = name.split(".")
                if parts[0] == package and any(p.startswith("_") for p in parts[1:]):
                    found.append(f"{path.relative_to(repo).as_posix()}:{node.lineno} {name}")
    return found


def _client_files(names: tuple[str, ...] = CLIENTS) -> list[Path]:
    out = []
    for name in names:
        target = REPO / name
        out += [target] if target.is_file() else sorted(target.rglob("*.py"))
    return out


def test_each_package_names_its_public_modules_and_only_its_public_modules_state_all():
    assert surface_problems(LIBRARY) + surface_problems(EXPLORER) == []


def test_app_shared_modules_state_what_they_export():
    folder = REPO / "app_shared"
    assert [line for path in sorted(folder.glob("*.py"))
            for line in _all_problems(path, path.relative_to(REPO).as_posix())] == []


def test_the_app_and_the_tools_import_only_public_modules():
    assert private_imports(_client_files(), package="dropedge_explorer") == []


def test_the_explorer_and_the_app_import_only_the_librarys_public_face():
    assert private_imports(_client_files(LIBRARY_CLIENTS)) == []


def test_the_checks_see_a_package_that_breaks_the_rules(tmp_path):
    """The rules on a made-up package: a public module left out of the docstring, a private
    one named there and stating ``__all__``, a public one without ``__all__``, and a client
    importing a private module (directly and by name from its package)."""
    root = tmp_path / "dropedge_core"
    (root / "pkg").mkdir(parents=True)
    (root / "__init__.py").write_text('"""Top: :mod:`dropedge_core.pkg`."""\n__all__ = []\n')
    (root / "pkg" / "__init__.py").write_text(
        '"""Pkg: :mod:`.shown`, :mod:`._inner`, :mod:`.stale`."""\n__all__ = []\n')
    (root / "pkg" / "shown.py").write_text('def f():\n    pass\n\n__all__ = ["f"]\n')
    (root / "pkg" / "hidden.py").write_text("x = 1\n")
    (root / "pkg" / "_inner.py").write_text('__all__ = ["g"]\n')
    (root / "pkg" / "stale.py").write_text('def f():\n    pass\n\n__all__ = ["f", "gone"]\n')
    client = tmp_path / "client.py"
    client.write_text("from dropedge_core.pkg import _inner\nimport dropedge_core.pkg._inner\n"
                      "from dropedge_core.pkg.shown import f\n")
    problems, imports = surface_problems(root), private_imports([client], tmp_path)
    assert problems == [
        "dropedge_core.pkg: public modules not named in its docstring: ['hidden']; named but not public "
        "modules: ['_inner']",
        "dropedge_core/pkg/_inner.py: a private module states __all__",
        "dropedge_core/pkg/hidden.py: a public module without __all__",
        "dropedge_core/pkg/stale.py: __all__ lists 'gone', not defined there"]
    assert imports == ["client.py:1 dropedge_core.pkg._inner", "client.py:2 dropedge_core.pkg._inner"]
