"""The public API's docstrings in PyG's format, checked on the source tree.

Every function and class a module of the documented packages (or a documented top-level
module of ``dropedge_core``) lists in ``__all__`` says
what each of its parameters is in an ``Args:`` section, one entry per parameter written as
PyG writes it, ``name (type[, optional]): meaning``. Read with :mod:`ast`, so a parameter
added without its line fails here with the module and the name.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.helpers import REPO

#: The folders whose public API is documented in PyG's format (their ``_private`` modules
#: aside: no public names): the whole library, and the explorer's packages; and the
#: explorer's top-level modules documented too.
DOCUMENTED = ("library/dropedge_core", "library/dropedge_core/pyg", "dropedge_explorer/training",
              "dropedge_explorer/data", "dropedge_explorer/store", "dropedge_explorer/studies",
              "dropedge_explorer/figures")
DOCUMENTED_MODULES = ("memory", "sweep_workers", "locations", "databases", "paths")
#: An ``Args:`` entry: the name (``*args``/``**kwargs`` with their stars), then its type.
_ENTRY = re.compile(r"^(\*{0,2}\w+) \(")


def _parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """``node``'s parameter names (``self``/``cls`` aside), stars kept on ``*args``/``**kwargs``."""
    a = node.args
    names = [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs]
    names += [f"*{a.vararg.arg}"] if a.vararg else []
    names += [f"**{a.kwarg.arg}"] if a.kwarg else []
    return [n for n in names if n not in ("self", "cls")]


def _fields(node: ast.ClassDef) -> list[str]:
    """The constructor's parameters of a class: its ``__init__``'s, else (a dataclass or a
    ``NamedTuple``) its annotated fields, private and ``ClassVar`` ones aside."""
    init = next((b for b in node.body if isinstance(b, ast.FunctionDef) and b.name == "__init__"), None)
    if init is not None:
        return _parameters(init)
    record = any("dataclass" in ast.unparse(d) for d in node.decorator_list) or any(
        ast.unparse(b).endswith("NamedTuple") for b in node.bases)
    if not record:
        return []
    return [b.target.id for b in node.body if isinstance(b, ast.AnnAssign) and isinstance(b.target, ast.Name)
            and not b.target.id.startswith("_") and "ClassVar" not in ast.unparse(b.annotation)]


def _documented_args(doc: str) -> set[str] | None:
    """The names of the ``Args:`` entries of ``doc`` (``None`` without an ``Args:`` section)."""
    lines = doc.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip() == "Args:"), None)
    if start is None:
        return None
    indent = len(lines[start]) - len(lines[start].lstrip())
    names, entry = set(), None
    for line in lines[start + 1:]:
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            break  # the next section
        if not line.strip():
            continue
        entry = entry if entry is not None else len(line) - len(line.lstrip())
        if len(line) - len(line.lstrip()) == entry and (m := _ENTRY.match(line.strip())):
            names.add(m.group(1))
    return names


def _exported(tree: ast.Module) -> list[str]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__"
                                                for t in node.targets):
            return list(ast.literal_eval(node.value))
    return []


def _docstring_problems(repo: Path = REPO) -> list[str]:
    """``"path: name lacks Args: a, b"`` for every public function or class of the documented
    packages and top-level modules whose ``Args:`` section is missing or does not name each
    parameter."""
    problems = []
    root = repo / "dropedge_explorer"
    paths = [p for package in DOCUMENTED for p in sorted((repo / package).glob("*.py"))]
    paths += [root / f"{name}.py" for name in DOCUMENTED_MODULES if (root / f"{name}.py").is_file()]
    for path in paths:
        rel = path.relative_to(repo).as_posix()
        if path.name.startswith("_") and path.name != "__init__.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        defined = {n.name: n for n in tree.body
                   if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
        for name in _exported(tree):
            node = defined.get(name)
            if node is None:  # re-exported, or a constant: documented where it is defined
                continue
            wanted = _fields(node) if isinstance(node, ast.ClassDef) else _parameters(node)
            if not wanted:
                continue
            found = _documented_args(ast.get_docstring(node) or "")
            if found is None:
                problems.append(f"{rel}: {name} has no Args:")
            elif missing := [p for p in wanted if p not in found]:
                problems.append(f"{rel}: {name} lacks Args: {', '.join(missing)}")
    return problems


def test_every_public_function_documents_each_parameter():
    # a documented module renamed or moved must not drop out of the check unseen
    assert [m for m in DOCUMENTED_MODULES if not (REPO / "dropedge_explorer" / f"{m}.py").is_file()] == []
    assert _docstring_problems() == []


def _write(root: Path, rel: str, text: str) -> None:
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(text, encoding="utf-8")


def test_the_docstring_check_catches_a_missing_parameter_and_a_missing_section(tmp_path):
    good = ('def keep(num_edges: int, p: float = 0.5, *rest, **options):\n'
            '    """How many edges to keep.\n\n    Args:\n'
            '        num_edges (int): the number of edges :math:`M`.\n'
            '        p (float, optional): the keep rate. (default: :obj:`0.5`)\n'
            '        *rest (int): more counts.\n'
            '        **options (dict): passed on.\n\n'
            '    Returns:\n        p (int): not a parameter entry: another section.\n    """\n')
    files = {
        "library/dropedge_core/a.py": "__all__ = ['keep', 'Box', 'Record']\n" + good
        + "class Box:\n    \"\"\"A box.\n\n    Args:\n        size (int): its size.\n    \"\"\"\n"
        "    def __init__(self, size, colour):\n        pass\n"
        + "from dataclasses import dataclass\n@dataclass\nclass Record:\n"
        "    \"\"\"A record.\"\"\"\n    value: float\n    _cache: dict = None\n",
        # ``seen`` is documented in the prose only, and ``Returns:`` is no ``Args:``
        "dropedge_explorer/data/b.py": "__all__ = ['load', '_hidden']\n"
        'def load(name, seen):\n    """Load ``seen``.\n\n    Args:\n        name (str): a name.\n'
        '            seen (bool): indented as a continuation line, so not an entry.\n\n'
        '    Returns:\n        seen (bool): an entry of another section.\n    """\n'
        "def _hidden(x):\n    pass\n"
        "def unlisted(x):\n    pass\n",
        "dropedge_explorer/store/c.py": "__all__ = ['f']\ndef f(x):\n    \"\"\"No sections.\"\"\"\n",
        "dropedge_explorer/figures/d.py": "__all__ = ['plot']\ndef plot(df):\n    \"\"\"A figure.\"\"\"\n",
        # left out: a private module, and a top-level module not in DOCUMENTED_MODULES
        "dropedge_explorer/studies/_stopping.py": "__all__ = ['g']\ndef g(x):\n    pass\n",
        "dropedge_explorer/env.py": "__all__ = ['g']\ndef g(x):\n    pass\n",
        "dropedge_explorer/paths.py": "__all__ = ['h']\ndef h(target):\n    pass\n",
    }
    for rel, text in files.items():
        _write(tmp_path, rel, text)
    assert _docstring_problems(tmp_path) == [
        "library/dropedge_core/a.py: Box lacks Args: colour",
        "library/dropedge_core/a.py: Record has no Args:",
        "dropedge_explorer/data/b.py: load lacks Args: seen",
        "dropedge_explorer/data/b.py: _hidden has no Args:",
        "dropedge_explorer/store/c.py: f has no Args:",
        "dropedge_explorer/figures/d.py: plot has no Args:",
        "dropedge_explorer/paths.py: h has no Args:",
    ]
