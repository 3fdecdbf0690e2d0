"""The two distributions installed by pip into fresh virtual environments: the library
(``library/``: ``dropedge-core``) alone, and the explorer (``.``: ``dropedge-explorer``) on it.
The library declares torch, numpy and scipy only (torch_geometric under ``[pyg]``), and
``import dropedge_core.pyg`` there loads none of the explorer's libraries; the explorer's data
from outside the repository: the paper's presets and tables, the bundled runs and the teaching
snapshots come from the installed package (package data), never from the checkout.

The venv sees the system's site-packages (torch, pandas, ... are not installed again) and
the build runs without isolation or an index, so the test works offline. The sources are
copied first: an in-tree setuptools build writes ``build/`` and ``*.egg-info`` beside them.
"""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import site
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO

#: What both sides compute: in the venv (the installed package) and here (the checkout).
SUMMARY = r"""
def summary():
    from dropedge_explorer import paths
    from dropedge_explorer.data import presets, reference
    from dropedge_explorer.studies import cell_search, paper_views, run_tables as runs, teaching

    return {
        "preset": presets.paper_preset("cora", "semi", "gcn"),
        "presets": len(presets.available()),
        "paper_men": len(reference.paper_men()),
        "paper_men_datasets": sorted(set(reference.paper_men()["dataset_key"])),
        "paper_depth": len(reference.paper_accuracy_by_depth()),
        "paper_best": sorted(set(reference.paper_best_accuracy()["dataset_key"])),
        "paper_epoch_time": len(reference.paper_epoch_time()),
        "bundled_files": [p.name for p in runs.bundled_files()],
        "bundled_runs": len(runs.bundled_results()),
        "best_runs": len(paper_views.best_runs()),
        "men_analysis": len(paper_views.read_men_analysis()),
        "search_cells": len(cell_search.bundled_summary()),
        "snapshot": [s.sampler for s in teaching.load_snapshots().items],
        "snapshot_failing": [s.sampler for s in teaching.load_snapshots(teaching.BUNDLED_FAILING).items],
        # every asset file of the checkout ships with the package
        "assets": sorted(str(f.relative_to(paths.ASSETS)) for f in paths.ASSETS.rglob("*")
                         if f.is_file() and "__pycache__" not in f.parts),
    }
"""

# runs in the venv's python, with the working directory outside the repository
CHILD = r"""
import json, sys
from pathlib import Path

import dropedge_core
import dropedge_explorer
from dropedge_explorer import paths
from dropedge_explorer.studies import cells

venv, repo = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
for module in (dropedge_core, dropedge_explorer):
    where = Path(module.__file__).resolve().parent
    assert where.is_relative_to(venv), f"{module.__name__} imported from {where}, not from {venv}"
    assert not where.is_relative_to(repo), f"{module.__name__} imported from the checkout {where}"
package = Path(dropedge_explorer.__file__).resolve().parent
assert not any(Path(p or ".").resolve().is_relative_to(repo) for p in sys.path), sys.path
assert paths.REPO is None, paths.REPO
assert paths.ASSETS.resolve().is_relative_to(package), paths.ASSETS
assert cells.reproduction_notes().startswith("(docs/REPRODUCTION.md is in the repository")
""" + SUMMARY + """
print(json.dumps(summary()))
"""


def _expected() -> dict:
    """The same summary, computed in this process from the checkout."""
    namespace: dict = {}
    exec(SUMMARY, namespace)
    return namespace["summary"]()


def _run(argv: list, cwd: Path, env: dict, timeout: int = 120) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def _venv(tmp_path_factory, dists: tuple[str, ...]) -> tuple[Path, Path, dict, Path]:
    """``(venv, python, env, outside)``: the distributions ``dists`` (``"library"``, ``"."``)
    installed by pip (``--no-deps``) into a fresh venv."""
    if importlib.util.find_spec("pip") is None:
        pytest.skip("pip is not installed for this Python: cannot test `pip install .`")
    root = tmp_path_factory.mktemp("packaging")
    venv, src, outside = root / "venv", root / "src", root / "elsewhere"
    outside.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV", "PIP_REQUIRE_VIRTUALENV",
                        "DROPEDGE_RESULTS", "DROPEDGE_TUNING_STORAGE")}
    env["PYTHONNOUSERSITE"] = "1"
    # without pip: the venv's own bundled setuptools/pip would shadow the system's (whose
    # setuptools builds wheels); `python -m pip` then runs the system's pip for the venv
    made = _run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", venv], root, env)
    if made.returncode != 0:
        pytest.skip(f"python -m venv is unavailable here: {made.stderr.strip().splitlines()[-1:]}")
    python = venv / "bin" / "python"
    # --system-site-packages is the *base* interpreter's: when the tests run in a venv of
    # their own, torch, setuptools (>= 70.1, requirements-dev.txt: it builds the wheel)
    # and pip live in that venv, so the new venv is pointed at this process's site-packages
    inner = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                           capture_output=True, text=True, env=env, check=True).stdout.strip()
    Path(inner).mkdir(parents=True, exist_ok=True)
    (Path(inner) / "outer_site.pth").write_text("\n".join(site.getsitepackages()) + "\n", encoding="utf-8")
    for dist, package in (("library", "library/dropedge_core"), (".", "dropedge_explorer")):
        if dist not in dists:
            continue
        here = src / dist
        here.mkdir(parents=True, exist_ok=True)
        for name in ("pyproject.toml", "README.md", "LICENSE"):  # what the project metadata may name
            if (REPO / dist / name).is_file():
                shutil.copy2(REPO / dist / name, here / name)
        shutil.copytree(REPO / package, here / Path(package).name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        pip = _run([python, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index",
                    "--disable-pip-version-check", here], outside, env, timeout=180)
        assert pip.returncode == 0, pip.stdout[-3000:] + pip.stderr[-3000:]
    return venv, python, env, outside


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The library and the explorer installed into one fresh venv."""
    return _venv(tmp_path_factory, ("library", "."))


@pytest.fixture(scope="module")
def library_only(tmp_path_factory):
    """The library alone installed into a fresh venv."""
    return _venv(tmp_path_factory, ("library",))


def test_installed_package_data_loads_outside_the_repository(installed):
    venv, python, env, outside = installed
    proc = _run([python, "-c", CHILD, venv, REPO], outside, env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got == _expected()
    assert got["preset"]["num_layers"] == 4 and got["bundled_runs"] > 0 and got["snapshot"]


def test_installed_command_line_runs(installed):
    venv, python, env, outside = installed
    for argv in ([python, "-m", "dropedge_core", "--help"], [venv / "bin" / "dropedge", "--help"]):
        proc = _run(argv, outside, env)
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert "usage:" in proc.stdout and "men" in proc.stdout


# runs in the venv's python: what the installed package declares, and the PyG front end
METADATA = r"""
import json
from importlib.metadata import requires

import torch
from dropedge_core.pyg import LayerDropEdge

reqs = requires("dropedge-explorer")
edges = torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]])
kept = LayerDropEdge(2, "dropedge", p=0.5, generator=torch.Generator().manual_seed(0))(edges)
print(json.dumps({"requires": reqs, "kept": [k.size(1) for k in kept]}))
"""


def test_installed_metadata_declares_the_tested_ranges_and_keeps_the_app_optional(installed):
    """``pip install .`` is the explorer: torch and torch_geometric in the range CI tests
    (the pins of requirements.txt inside it, older and newer releases outside), the app's
    Streamlit only under the ``app`` extra; the PyG front end runs from the install."""
    from packaging.requirements import Requirement

    venv, python, env, outside = installed
    proc = _run([python, "-c", METADATA], outside, env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["kept"] == [2, 2]  # p is PyG's drop probability: half of the 2 edges' 4 columns
    reqs = [Requirement(r) for r in got["requires"]]
    core = {r.name.lower().replace("_", "-"): r for r in reqs if r.marker is None}
    extras = {r.name.lower(): str(r.marker) for r in reqs if r.marker is not None}
    assert "streamlit" not in core and 'extra == "app"' in extras["streamlit"]
    pins = {}
    for line in (REPO / "requirements.txt").read_text(encoding="utf-8").splitlines():
        if "==" in line and not line.startswith("#"):
            name, version = line.split("==")
            pins[name.strip().lower().replace("_", "-")] = version.strip()
    for name, outside_range in (("torch", ["2.12.1", "3.0.0"]), ("torch-geometric", ["2.7.0", "3.0.0"])):
        spec = core[name].specifier
        assert spec.contains(pins[name]), (name, str(spec), pins[name])
        assert not any(spec.contains(v) for v in outside_range), (name, str(spec))


# runs in the venv's python: the library's declared needs, and what `import dropedge_core.pyg` loads
#: What a PyG user must not get with the library.
EXPLORER_ONLY = ("pandas", "pyarrow", "optuna", "alembic", "sqlalchemy", "plotly", "streamlit",
                 "dropedge_explorer")
#: Prepended to a child process: the explorer cannot be imported (this machine's site-packages,
#: which the venv sees, hold the checkout's explorer as an editable install)
BLOCKER = """
import importlib.abc, sys
class _Blocked(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "dropedge_explorer":
            raise ModuleNotFoundError("No module named " + repr(name), name=name)
sys.meta_path.insert(0, _Blocked())
"""
LIBRARY_CHILD = BLOCKER + f"EXPLORER_ONLY = {EXPLORER_ONLY!r}\n" + r"""
import sys
# The venv sees this machine's site-packages, which hold the explorer's libraries; a PyG user
# with the library alone has none of them (the closure below says so), and torch_geometric
# imports pandas where it is installed (torch_geometric.llm). So they are made absent: an import
# raises ImportError and importlib's find_spec finds nothing, as in a lean environment.
for _name in EXPLORER_ONLY:
    sys.modules.setdefault(_name, None)

import json
from importlib.metadata import PackageNotFoundError, requires

import dropedge_core.pyg  # noqa: F401
from packaging.requirements import Requirement

declared = [Requirement(r) for r in requires("dropedge-core")]
# every distribution the library's own requirements bring, followed through their metadata
seen, todo = set(), [r.name for r in declared]
while todo:
    name = todo.pop().lower().replace("_", "-")
    if name in seen:
        continue
    seen.add(name)
    try:
        todo += [Requirement(r).name for r in (requires(name) or []) if "extra" not in r]
    except PackageNotFoundError:
        pass
print(json.dumps({"declared": sorted(str(r) for r in declared), "closure": sorted(seen),
                  "loaded": sorted({m.split(".")[0] for m, mod in sys.modules.items() if mod is not None}
                                 & set(EXPLORER_ONLY)),
                  "library_modules": sorted(m for m in sys.modules if m.split(".")[0] == "dropedge_core"),
                  "where": dropedge_core.__file__}))
"""


def test_the_library_alone_declares_torch_numpy_scipy_and_imports_pyg_lean(library_only):
    """The library's distribution declares torch, numpy and scipy (torch_geometric under
    ``[pyg]``); none of the explorer's libraries is among what those bring; there, with the
    explorer and its libraries absent (as without them installed), ``import dropedge_core.pyg``
    works, loads none of them and at most
    20 of the library's modules; ``python -m dropedge_core`` says in one line where the
    command line is."""
    venv, python, env, outside = library_only
    proc = _run([python, "-c", LIBRARY_CHILD], outside, env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert Path(got["where"]).resolve().is_relative_to(venv.resolve())
    names = sorted(d.split(";")[0].split(">")[0].split("<")[0].split("=")[0].split("[")[0].strip()
                   .lower().replace("_", "-") for d in got["declared"])
    assert names == ["numpy", "scipy", "torch", "torch-geometric"]
    assert [d for d in got["declared"] if d.replace("_", "-").startswith("torch-geometric")][0].endswith(
        'extra == "pyg"')
    assert not set(got["closure"]) & set(EXPLORER_ONLY), got["closure"]
    assert got["loaded"] == []
    assert 0 < len(got["library_modules"]) <= 20, got["library_modules"]
    run_main = "import runpy; runpy.run_module('dropedge_core', run_name='__main__')"
    cli = _run([python, "-c", BLOCKER + run_main, "--help"], outside, env)
    assert cli.returncode == 2 and cli.stdout == ""
    assert cli.stderr.strip().splitlines() == [
        "error: the command line is the explorer's: pip install dropedge-explorer "
        "(this is the dropedge_core library alone)"]
