"""Raw files that are hostile, caches that are broken (issue 15, classes 6, 7, 10).

The Planetoid raw files are pickles: every test that feeds a crafted one checks that
nothing it names ran (a marker file is never written), that the error is one line, and
that the files it did not own are byte-for-byte unchanged (SHA-256 before and after).
"""
from __future__ import annotations

import hashlib
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from dropedge_core import _safe_pickle as safe_pickle
from dropedge_core import datasets
from dropedge_core.datasets import DatasetError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import raw_dir
from tests.helpers.files import copy_raw

REPO = Path(__file__).resolve().parents[2]
# SHA-256 of x, y and edge_index as PyG's own reader (read_planetoid_data) builds them
# from the shared raw files, computed once: the restricted reader must give the same.
PYG_DIGEST = {"cora": "498df180b4fcff631f987930054bb21807fbf22e0ae000fb7caacf6ec163ee9e",
              "citeseer": "1bdb12a3d4149df3e611f77e7f9efbca0842ecbc4d710da1c7df56a6be1de4ba"}


def digest_tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}




class _RunsCode:
    """Unpickling this calls ``os.system`` (protocol 2, as the raw files are)."""

    def __init__(self, command: str):
        self.command = command

    def __reduce__(self):
        return (os.system, (self.command,))


def crafted(marker: Path, how: str) -> bytes:
    if how == "os.system":
        return pickle.dumps(_RunsCode(f"touch {marker}"), protocol=2)
    if how == "eval":
        return pickle.dumps(_Eval(f"open({str(marker)!r}, 'w').write('x')"), protocol=2)
    if how == "nested":  # a legitimate-looking array whose object payload is the exploit
        arr = np.empty(2, dtype=object)
        arr[0], arr[1] = 1, _RunsCode(f"touch {marker}")
        return pickle.dumps(arr, protocol=2)
    if how == "defaultdict":  # an allowed container with a forbidden factory
        import collections

        return pickle.dumps(collections.defaultdict(_Factory), protocol=2)
    raise AssertionError(how)


class _Eval:
    def __init__(self, code):
        self.code = code

    def __reduce__(self):
        return (eval, (self.code,))


class _Factory:
    pass


@pytest.mark.parametrize("real", ["cora", "citeseer"])
def test_restricted_reader_equals_pygs(real, request):
    request.getfixturevalue(real)  # skips without the data
    data = datasets.read_planetoid(raw_dir(real), real)
    h = hashlib.sha256()
    for t in (data["x"], data["y"], data["edge_index"]):
        h.update(t.contiguous().numpy().tobytes())
    assert h.hexdigest() == PYG_DIGEST[real]


@pytest.mark.parametrize("how", ["os.system", "eval", "nested", "defaultdict"])
@pytest.mark.parametrize("target", ["ind.cora.x", "ind.cora.graph"])
def test_crafted_raw_pickle_runs_nothing(cora, tmp_path, monkeypatch, how, target):
    src = copy_raw(tmp_path)
    marker = tmp_path / "PWNED"
    (src / "Cora" / "raw" / target).write_bytes(crafted(marker, how))
    before = digest_tree(src)
    monkeypatch.setenv("DROPEDGE_DATA", str(src))
    monkeypatch.setenv("DROPEDGE_CACHE", str(tmp_path / "cache"))
    with pytest.raises(DatasetError, match=f"cannot read cora raw files in the cache .*{target}") as info:
        datasets.load("cora")
    assert "\n" not in str(info.value)
    assert not marker.exists()
    assert digest_tree(src) == before
    assert not list((tmp_path / "cache").rglob("*.pt"))  # no processed file either


def test_crafted_pickle_through_the_cli_is_exit_2_one_line(cora, tmp_path):
    src = copy_raw(tmp_path)
    marker = tmp_path / "PWNED"
    (src / "Cora" / "raw" / "ind.cora.x").write_bytes(crafted(marker, "os.system"))
    env = {**os.environ, "DROPEDGE_DATA": str(src), "DROPEDGE_CACHE": str(tmp_path / "cache")}
    for argv in (["men", "--dataset", "cora", "--layers", "2", "--runs", "1"],
                 ["train", "--dataset", "cora", "--epochs", "1"]):
        proc = subprocess.run([sys.executable, "-m", "dropedge_core", *argv, "--no-progress"], cwd=REPO,
                              env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 2, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: cannot read cora raw files"), lines
        assert "os.system" in lines[0] or "posix.system" in lines[0]
        assert not marker.exists()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=400))
def test_random_bytes_are_an_unsafe_pickle_error(data):
    try:
        safe_pickle.loads(data)
    except safe_pickle.UnsafePickleError:
        pass
    except Exception as exc:  # anything but a refusal must come from a harmless parse
        assert isinstance(exc, (pickle.UnpicklingError, EOFError, ValueError, TypeError, KeyError,
                                IndexError, AttributeError, UnicodeDecodeError, OverflowError,
                                MemoryError, struct_error())), repr(exc)


def struct_error():
    import struct

    return struct.error


@settings(max_examples=40, deadline=None)
@given(module=st.sampled_from(["os", "posix", "subprocess", "builtins", "__builtin__", "numpy",
                               "scipy.sparse", "torch", "pickle", "shutil", "importlib"]),
       name=st.sampled_from(["system", "eval", "exec", "getattr", "__import__", "load", "rmtree",
                             "Popen", "open", "import_module", "loads", "fromfile", "save"]))
def test_any_other_global_is_refused_before_import(module, name):
    payload = b"\x80\x02c" + module.encode() + b"\n" + name.encode() + b"\n)R."
    with pytest.raises(safe_pickle.UnsafePickleError, match=f"refers to {module}.{name}"):
        safe_pickle.loads(payload)


def test_a_huge_declared_csr_shape_is_refused_before_densifying(cora, tmp_path, monkeypatch):
    import scipy.sparse as sp

    src = copy_raw(tmp_path)
    huge = sp.csr_matrix((10**6, 10**6), dtype=np.float32)  # a consistent, empty 4 TB matrix
    (src / "Cora" / "raw" / "ind.cora.x").write_bytes(pickle.dumps(huge, protocol=2))
    monkeypatch.setenv("DROPEDGE_DATA", str(src))
    monkeypatch.setenv("DROPEDGE_CACHE", str(tmp_path / "cache"))
    pattern = r"ind.cora.x \(1000000 x 1000000\) would need about .*\(DROPEDGE_MAX_MEMORY_GB\)"
    with pytest.raises(DatasetError, match=pattern):
        datasets.load("cora")


# ----------------------------------------------------------------------------- the cache


def test_same_size_corruption_is_refreshed_by_content(cora, tmp_path, monkeypatch):
    src = copy_raw(tmp_path)
    monkeypatch.setenv("DROPEDGE_DATA", str(src))
    monkeypatch.setenv("DROPEDGE_CACHE", str(tmp_path / "cache"))
    good = (src / "Cora" / "raw" / "ind.cora.graph").read_bytes()
    bad = bytes(len(good))  # same size, all zero bytes
    (src / "Cora" / "raw" / "ind.cora.graph").write_bytes(bad)
    with pytest.raises(DatasetError, match=f"in the cache {tmp_path / 'cache'}.*copied from DROPEDGE_DATA"):
        datasets.load("cora")
    (src / "Cora" / "raw" / "ind.cora.graph").write_bytes(good)  # repaired at the source
    assert datasets.load("cora").num_edges == 5278
    assert (tmp_path / "cache" / "Cora" / "raw" / "ind.cora.graph").read_bytes() == good


def test_a_damaged_cached_copy_names_the_cache(cora, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    copy_raw(tmp_path).rename(cache)
    monkeypatch.setenv("DROPEDGE_DATA", "")
    (cache / "Cora" / "raw" / "ind.cora.ally").write_bytes(b"garbage" * 100)
    monkeypatch.setenv("DROPEDGE_CACHE", str(cache))
    assert datasets.availability("cora") == "cached"
    with pytest.raises(DatasetError, match=f"cannot read cora raw files in the cache {cache}"):
        datasets.load("cora")


def test_garbage_processed_file_is_never_read(cora, tmp_path, monkeypatch):
    src = copy_raw(tmp_path)
    cache = tmp_path / "cache"
    (cache / "Cora" / "processed").mkdir(parents=True)
    (cache / "Cora" / "processed" / "data.pt").write_bytes(crafted(tmp_path / "PWNED", "os.system"))
    monkeypatch.setenv("DROPEDGE_DATA", str(src))
    monkeypatch.setenv("DROPEDGE_CACHE", str(cache))
    assert datasets.load("cora").num_edges == 5278
    assert not (tmp_path / "PWNED").exists()


def _loop(tmp_path: Path) -> Path:
    a, b = tmp_path / "loop_a", tmp_path / "loop_b"
    a.symlink_to(b)
    b.symlink_to(a)
    return a


@pytest.mark.parametrize("kind", ["file", "under_a_file", "symlink_loop", "read_only"])
def test_bad_cache_dir_is_one_line(cora, tmp_path, monkeypatch, kind):
    if kind == "file":
        cache = tmp_path / "cache"
        cache.write_text("not a directory")
    elif kind == "under_a_file":
        (tmp_path / "f").write_text("x")
        cache = tmp_path / "f" / "cache"
    elif kind == "symlink_loop":
        cache = _loop(tmp_path)
    elif os.geteuid() == 0:  # root writes through permission bits: procfs takes no new files
        cache = Path("/proc/self")
    else:
        cache = tmp_path / "ro"
        cache.mkdir()
        cache.chmod(0o555)
    monkeypatch.setenv("DROPEDGE_DATA", str(copy_raw(tmp_path)))
    monkeypatch.setenv("DROPEDGE_CACHE", str(cache))
    with pytest.raises(DatasetError, match=r"DROPEDGE_CACHE=.* is not a writable directory") as info:
        datasets.load("cora")
    assert "\n" not in str(info.value)
    assert datasets.availability("cora") == "DROPEDGE_DATA"  # listing never raises
    assert datasets.load("karate").num_nodes == 34


def test_cli_bad_cache_and_data_dir_are_one_line(tmp_path):
    (tmp_path / "file").write_text("x")
    base = {**os.environ, "DROPEDGE_CACHE": str(tmp_path / "file")}
    proc = subprocess.run([sys.executable, "-m", "dropedge_core", "men", "--dataset", "cora", "--runs", "1",
                           "--layers", "2"], cwd=REPO, env=base, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"error: DROPEDGE_CACHE={tmp_path / 'file'} is not a writable directory (it is a file); set "
        "DROPEDGE_CACHE to a directory this program may write"]
    env = {**os.environ, "DROPEDGE_DATA": str(tmp_path / "file"), "DROPEDGE_CACHE": str(tmp_path / "c")}
    proc = subprocess.run([sys.executable, "-m", "dropedge_core", "datasets"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0
    assert proc.stderr.strip().splitlines() == [
        f"warning: DROPEDGE_DATA={tmp_path / 'file'} is not a readable directory (a file); datasets not "
        "cached need a download"]


def test_no_pyg_log_lines_beside_the_error(tmp_path, monkeypatch):
    """Offline download: only our one line reaches stderr (no 'Downloading ...')."""
    code = ("import urllib.request, sys\n"
            "def refuse(*a, **k): raise OSError('network unreachable')\n"
            "urllib.request.urlopen = refuse\n"
            "from dropedge_explorer.cli import main\n"
            "sys.exit(main(['men', '--dataset', 'pubmed', '--runs', '1', '--layers', '2']))\n")
    env = {**os.environ, "DROPEDGE_DATA": str(tmp_path), "DROPEDGE_CACHE": str(tmp_path / "cache")}
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: pubmed is not available offline"), lines


def _cs_npz(path: Path, attr_shape=None, labels=None) -> None:
    import scipy.sparse as sp

    n = 60
    adj = sp.random(n, n, density=0.1, format="csr", random_state=0)
    adj = ((adj + adj.T) > 0).astype(np.float32).tocsr()
    x = sp.random(n, 12, density=0.3, format="csr", random_state=1).astype(np.float32)
    np.savez(path, adj_data=adj.data, adj_indices=adj.indices, adj_indptr=adj.indptr, adj_shape=adj.shape,
             attr_data=x.data, attr_indices=x.indices, attr_indptr=x.indptr,
             attr_shape=x.shape if attr_shape is None else attr_shape,
             labels=np.arange(n) % 3 if labels is None else labels)


@pytest.mark.parametrize("damage", ["none", "huge_shape", "object_labels"])
def test_npz_datasets_hold_no_pickles_and_no_huge_shapes(tmp_path, monkeypatch, damage):
    raw = tmp_path / "data" / "CS" / "raw"
    raw.mkdir(parents=True)
    marker = tmp_path / "PWNED"
    if damage == "object_labels":  # an object array is a pickle inside the zip
        labels = np.empty(1, dtype=object)
        labels[0] = _RunsCode(f"touch {marker}")
        _cs_npz(raw / "ms_academic_cs.npz", labels=labels)
    else:
        huge = np.array([60, 10**9]) if damage == "huge_shape" else None  # 60 rows, as indptr says
        _cs_npz(raw / "ms_academic_cs.npz", attr_shape=huge)
    before = digest_tree(tmp_path / "data")
    monkeypatch.setenv("DROPEDGE_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("DROPEDGE_CACHE", str(tmp_path / "cache"))
    if damage == "none":
        g = datasets.load("coauthor-cs")
        assert g.num_nodes <= 60 and g.num_features == 12 and not list((tmp_path / "cache").rglob("*.pt"))
    else:
        says = "would need about" if damage == "huge_shape" else "allow_pickle=False"
        with pytest.raises(DatasetError, match=f"cannot read coauthor-cs raw files in the cache .*{says}"):
            datasets.load("coauthor-cs")
    assert not marker.exists()
    assert digest_tree(tmp_path / "data") == before
