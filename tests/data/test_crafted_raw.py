"""Crafted raw dataset files (issue 29, classes 0 and 1): arrays that are valid pickles or
zips but whose contents lie (an index past a matrix's width, an ``indptr`` past the end,
a negative node id, one list referenced a billion times, a zip member that inflates to
gigabytes). Each used to end in a segmentation fault, a kernel kill or a multi-GB peak;
each must now be one ``error:`` line naming the file and what is wrong, exit 2.

Every case runs the real CLI (``men --dataset ...``) in a fresh process on files written
into temporary ``DROPEDGE_DATA`` / ``DROPEDGE_CACHE`` directories, so a crash shows as
its signal (-11, -9) rather than taking pytest down with it.
"""
from __future__ import annotations

import os
import pickle
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from dropedge_core import _raw_arrays as raw_arrays
from dropedge_core import _safe_pickle as safe_pickle

from tests.helpers import REPO
from tests.helpers.files import FOLDER, _index, copy_raw, crafted_csr, raw_value

PEAK = ("import resource, sys\n"
        "from dropedge_explorer.cli import main\n"
        "rc = main(sys.argv[1:])\n"
        "print('PEAK', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10, file=sys.stderr)\n"
        "sys.exit(rc)\n")


def run_men(dataset: str, data: Path, cache: Path, **env) -> tuple[int, list[str], int]:
    """Exit code, stderr lines (without the PEAK line) and peak RSS (MiB) of
    ``men --dataset <dataset>`` in a fresh process."""
    argv = ["men", "--dataset", dataset, "--layers", "2", "--runs", "1", "--no-progress"]
    proc = subprocess.run(
        [sys.executable, "-c", PEAK, *argv], cwd=REPO, capture_output=True, text=True, timeout=300,
        env={**os.environ, "DROPEDGE_DATA": str(data), "DROPEDGE_CACHE": str(cache), **env})
    lines = proc.stderr.strip().splitlines()
    mib = int(lines.pop().split()[1]) if lines and lines[-1].startswith("PEAK ") else -1
    return proc.returncode, lines, mib


@pytest.fixture(scope="module")
def baseline_mib(tmp_path_factory) -> int:
    """Peak RSS (MiB) of the same command on karate, in the same environment: the process
    itself (interpreter, torch, the package), against which a refused file's peak is read."""
    where = tmp_path_factory.mktemp("baseline")
    rc, _, mib = run_men("karate", where, where / "cache")
    assert rc == 0 and mib > 0
    return mib


def assert_one_line(rc: int, lines: list[str], dataset: str, *says: str) -> None:
    assert rc != -11, "segmentation fault"
    assert rc == 2, (rc, lines[-5:])
    assert len(lines) == 1 and lines[0].startswith(f"error: cannot read {dataset} raw files"), lines
    assert all(say in lines[0] for say in says), (says, lines[0])
    assert "Traceback" not in lines[0]
    for text in says:
        assert text in lines[0], lines[0]




class _Reduce:
    """Pickles as ``func(*args)`` followed by ``__setstate__(state)``: a hand-written file."""

    def __init__(self, func, args, state=None):
        self.value = (func, args) if state is None else (func, args, state)

    def __reduce__(self):
        return self.value


def billion_laughs() -> dict:
    """``{0: L4}`` where ``L4`` is 1000 references to ``L3``, ... ``L0`` 1000 zeros:
    10^15 node ids for whoever flattens it, in a ~10 KB file."""
    inner: list = [0] * 1000
    for _ in range(4):
        inner = [inner] * 1000
    return {0: inner}


def self_containing() -> dict:
    loop: list = [1]
    loop.append(loop)
    return {0: loop}


def _with(graph_change):
    def build(src: Path) -> bytes:
        graph = raw_value(src, "ind.cora.graph")
        graph_change(graph)
        return pickle.dumps(graph, protocol=2)
    return build


def _indptr_past_end(m):
    ptr = m.indptr.copy()
    ptr[-1] += 10**6
    return crafted_csr(m, indptr=ptr)


def _indptr_decreasing(m):
    ptr = m.indptr.copy()
    ptr[3] = ptr[6] + 1
    return crafted_csr(m, indptr=ptr)




# (file, how to build its bytes from the copied raw folder, what the line must say)
PLANETOID = {
    "x_index_past_width": ("ind.cora.x", lambda s: _index(raw_value(s, "ind.cora.x"), 5, 10**6),
                           ["ind.cora.x: column index 1000000 is outside 0..1432 (entry 5)"]),
    "tx_negative_index": ("ind.cora.tx", lambda s: _index(raw_value(s, "ind.cora.tx"), 0, -7),
                          ["ind.cora.tx: column index -7 is outside 0..1432"]),
    "allx_indptr_past_end": ("ind.cora.allx", lambda s: _indptr_past_end(raw_value(s, "ind.cora.allx")),
                             ["ind.cora.allx: indptr ends at", "but there are"]),
    "tx_indptr_decreasing": ("ind.cora.tx", lambda s: _indptr_decreasing(raw_value(s, "ind.cora.tx")),
                             ["ind.cora.tx: indptr decreases at row 3"]),
    "x_shape_not_rows": ("ind.cora.x",
                         lambda s: crafted_csr(raw_value(s, "ind.cora.x"), _shape=(10**6, 1433)),
                         ["ind.cora.x: indptr has 141 entries; a matrix of 1000000 rows needs 1000001"]),
    "graph_negative_neighbour": ("ind.cora.graph", _with(lambda g: g[5].append(-5)),
                                 ["ind.cora.graph names node -5; node ids are 0..2707"]),
    "graph_negative_node": ("ind.cora.graph", _with(lambda g: g.__setitem__(-3, [1])),
                            ["ind.cora.graph names node -3; node ids are 0..2707"]),
    "graph_node_past_the_end": ("ind.cora.graph", _with(lambda g: g[0].append(2708)),
                                ["ind.cora.graph names node 2708; node ids are 0..2707"]),
    "graph_huge_id": ("ind.cora.graph", _with(lambda g: g[0].append(2**70)),
                      ["ind.cora.graph names node 1180591620717411303424"]),
    "graph_float_neighbour": ("ind.cora.graph", _with(lambda g: g[0].append(1.5)),
                              ["ind.cora.graph holds the neighbour '1.5', not an integer node id"]),
    "graph_billion_laughs": ("ind.cora.graph", lambda s: pickle.dumps(billion_laughs(), protocol=2),
                             ["ind.cora.graph expands to more than", "DROPEDGE_MAX_MEMORY_GB"]),
    "graph_contains_itself": ("ind.cora.graph", lambda s: pickle.dumps(self_containing(), protocol=2),
                              ["ind.cora.graph holds a list that contains itself"]),
    # numpy's own __setstate__ of an object array given a short list reads past it (-11)
    "y_object_array_short_list": ("ind.cora.y", lambda s: pickle.dumps(_Reduce(
        np._core.multiarray._reconstruct, (np.ndarray, (0,), b"b"),
        (1, (10**7,), np.dtype("O"), False, [1, 2])), protocol=2), ["ind.cora.y names the dtype 'O8'"]),
    "ally_reconstruct_huge": ("ind.cora.ally", lambda s: pickle.dumps(_Reduce(
        np._core.multiarray._reconstruct, (np.ndarray, (10**10,), b"b")), protocol=2),
        ["ind.cora.ally calls numpy's _reconstruct in a way numpy's pickles never do"]),
    "x_bytes_of_a_huge_size": ("ind.cora.x", lambda s: pickle.dumps(_Reduce(bytes, (10**11,)), protocol=2),
                               ["ind.cora.x calls bytes(...) with an argument"]),
    "y_short_data": ("ind.cora.y", lambda s: pickle.dumps(_Reduce(
        np._core.multiarray._reconstruct, (np.ndarray, (0,), b"b"),
        (1, (140, 7), np.dtype("i4"), False, b"\x00" * 12)), protocol=2),
        ["ind.cora.y holds an array of shape (140, 7) whose data is not 3920 bytes of int32"]),
    "test_index_past_the_end": ("ind.cora.test.index", lambda s: b"1708\n99999\n",
                                ["ind.cora.test.index names node 99999; the test nodes are 1708..2707"]),
    "test_index_superscript": ("ind.cora.test.index", lambda s: "1708\n\u00b2\n".encode(),
                               ["ind.cora.test.index is not a list of node indices"]),
}


@pytest.mark.parametrize("case", sorted(PLANETOID))
def test_crafted_planetoid_file_is_one_line(cora, tmp_path, case):
    name, build, says = PLANETOID[case]
    src = copy_raw(tmp_path)
    (src / "Cora" / "raw" / name).write_bytes(build(src))
    rc, lines, _ = run_men("cora", src, tmp_path / "cache")
    assert_one_line(rc, lines, "cora", *says)


def test_citeseer_test_index_span_is_refused_before_padding(citeseer, tmp_path, baseline_mib):
    """CiteSeer's featureless test nodes are padded with zero rows over the index span;
    a span of a billion used to be allocated (2.9-3.1 GB peak) before failing."""
    src = copy_raw(tmp_path, "citeseer")
    index = src / FOLDER["citeseer"] / "raw" / "ind.citeseer.test.index"
    ids = index.read_text().split()
    index.write_text("\n".join(ids[:-1] + ["1000000000"]) + "\n")
    rc, lines, mib = run_men("citeseer", src, tmp_path / "cache")
    assert_one_line(rc, lines, "citeseer", "ind.citeseer.test.index (a span of 999997689 nodes) would need")
    # the padding would be ~3 GB; CiteSeer's own arrays are ~100 MB above the karate baseline
    assert mib < baseline_mib + 512, (mib, baseline_mib)


# ----------------------------------------------------------------------------- .npz (Coauthor)


def cs_arrays(n: int = 60) -> dict[str, np.ndarray]:
    adj = sp.random(n, n, density=0.1, format="csr", random_state=0)
    adj = ((adj + adj.T) > 0).astype(np.float32).tocsr()
    x = sp.random(n, 12, density=0.3, format="csr", random_state=1).astype(np.float32)
    return dict(adj_data=adj.data, adj_indices=adj.indices, adj_indptr=adj.indptr,
                adj_shape=np.array(adj.shape), attr_data=x.data, attr_indices=x.indices,
                attr_indptr=x.indptr, attr_shape=np.array(x.shape), labels=np.arange(n) % 3)


def _changed(**changes):
    def build() -> dict:
        arrays = cs_arrays()
        for key, change in changes.items():
            arrays[key] = change(arrays[key].copy())
        return arrays
    return build


def _set(position, value):
    def change(a):
        a[position] = value
        return a
    return change


NPZ = {
    "adj_index_past_width": (_changed(adj_indices=_set(3, 10**6)),
                             ["ms_academic_cs.npz adjacency: column index 1000000 is outside 0..59 "
                              "(entry 3)"]),
    "adj_negative_index": (_changed(adj_indices=_set(0, -1)),
                           ["ms_academic_cs.npz adjacency: column index -1 is outside 0..59"]),
    "attr_indptr_past_end": (_changed(attr_indptr=_set(-1, 10**7)),
                             ["ms_academic_cs.npz features: indptr ends at 10000000 but there are"]),
    "adj_indptr_not_from_zero": (_changed(adj_indptr=_set(0, 5)),
                                 ["ms_academic_cs.npz adjacency: indptr starts at 5, not 0"]),
    "adj_not_square": (_changed(adj_shape=lambda s: np.array([60, 70])),
                       ["do not describe one graph"]),
    "labels_negative": (_changed(labels=_set(4, -2)), ["labels -2..2 are not class ids 0..999"]),
    "labels_too_few": (_changed(labels=lambda a: a[:10]), ["labels of shape (10,)"]),
    # re-probe of issue 29: a graph of no nodes was a 25-line traceback (max() of no labels)
    "no_nodes": (lambda: dict(adj_data=np.zeros(0, np.float32), adj_indices=np.zeros(0, np.int32),
                              adj_indptr=np.zeros(1, np.int32), adj_shape=np.array([0, 0]),
                              attr_data=np.zeros(0, np.float32), attr_indices=np.zeros(0, np.int32),
                              attr_indptr=np.zeros(1, np.int32), attr_shape=np.array([0, 12]),
                              labels=np.zeros(0, np.int64)),
                 ["ms_academic_cs.npz: the graph has no nodes (features of shape (0, 12))"]),
    "attr_shape_not_two": (_changed(attr_shape=lambda s: np.array([60, 12, 3])),
                           ["ms_academic_cs.npz features: the matrix shape"]),
}


def write_npz(tmp_path: Path, arrays: dict, compressed: bool = False) -> Path:
    raw = tmp_path / "data" / "CS" / "raw"
    raw.mkdir(parents=True)
    (np.savez_compressed if compressed else np.savez)(raw / "ms_academic_cs.npz", **arrays)
    return raw / "ms_academic_cs.npz"


@pytest.mark.parametrize("case", sorted(NPZ))
def test_crafted_npz_is_one_line(tmp_path, case):
    build, says = NPZ[case]
    write_npz(tmp_path, build())
    rc, lines, _ = run_men("coauthor-cs", tmp_path / "data", tmp_path / "cache")
    assert_one_line(rc, lines, "coauthor-cs", *says)


def test_the_uncrafted_npz_loads(tmp_path):
    write_npz(tmp_path, cs_arrays())
    rc, lines, _ = run_men("coauthor-cs", tmp_path / "data", tmp_path / "cache")
    assert rc == 0, lines


def test_npz_inflating_past_the_limit_is_refused_before_inflating(tmp_path, baseline_mib):
    """A 200 KB compressed member that inflates to 190 MiB, under a 64 MiB limit: refused
    from the zip header's declared size, so the process never holds the 190 MiB."""
    arrays = cs_arrays()
    arrays["attr_data"] = np.zeros(50_000_000, dtype=np.float32)  # compresses ~1000:1
    path = write_npz(tmp_path, arrays, compressed=True)
    assert path.stat().st_size < 1 << 20
    rc, lines, mib = run_men("coauthor-cs", tmp_path / "data", tmp_path / "cache",
                             DROPEDGE_MAX_MEMORY_GB="0.0625")
    assert_one_line(rc, lines, "coauthor-cs", "ms_academic_cs.npz (190.7 MiB uncompressed) would need about",
                    "above the limit of 64 MiB")
    assert mib < baseline_mib + 150, (mib, baseline_mib)  # the inflated member would be 190 MiB


def test_npz_member_lying_about_its_size_stops_at_the_declared_size(tmp_path):
    """A member whose header declares fewer bytes than it inflates to: zipfile stops at
    the declared size and reports a bad CRC (so the declared sizes bound memory)."""
    path = write_npz(tmp_path, cs_arrays(), compressed=True)
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo("adj_indices.npy")
    central = data.find(b"PK\x01\x02")  # the central directory entry of that member
    while data[central + 46:central + 46 + len(info.filename)] != info.filename.encode():
        central = data.find(b"PK\x01\x02", central + 4)
    small = 200
    data[central + 24:central + 28] = small.to_bytes(4, "little")  # central directory's size
    data[info.header_offset + 22:info.header_offset + 26] = small.to_bytes(4, "little")  # local header's
    path.write_bytes(bytes(data))
    rc, lines, _ = run_men("coauthor-cs", tmp_path / "data", tmp_path / "cache")
    assert_one_line(rc, lines, "coauthor-cs", "BadZipFile")


# ----------------------------------------------------------------------------- in process


def test_expansion_counts_shared_lists_each_time_and_is_linear_in_the_file():
    laughs = billion_laughs()
    assert safe_pickle.expanded_items(laughs, 10**16) == 2 + 1000 + 10**6 + 10**9 + 10**12 + 10**15
    assert safe_pickle.expanded_items({0: [1, 2], 1: [3]}, 100) == 4 + 3  # 2 keys + 2 lists, 3 ids
    shared = [7] * 10
    assert safe_pickle.expanded_items([shared, shared, [shared]], 10**6) == 3 + 10 + 10 + 1 + 10
    with pytest.raises(safe_pickle.UnsafePickleError, match="contains itself"):
        safe_pickle.expanded_items(self_containing(), 10**6)


def test_one_array_referenced_many_times_counts_every_time(cora, tmp_path):
    """Re-probe of issue 29: a neighbour list of 250 references to one array of a million
    ids (8 MB on disk) was counted as 250 items, then stacked by numpy into 2 GB before the
    one-line error (2.4 GB peak under a 0.5 GiB limit). An array counts its elements, each
    time it is referenced; here 200 x 10,000 ids under a limit of 1M items."""
    shared = np.zeros(10_000, dtype=np.int64)
    assert safe_pickle.expanded_items([shared] * 200, 10**9) == 200 + 200 * 10_000
    assert safe_pickle.expanded_items({0: [shared, 3]}, 10**9) == 2 + 2 + 10_000
    src = copy_raw(tmp_path)
    (src / "Cora" / "raw" / "ind.cora.graph").write_bytes(pickle.dumps({0: [shared] * 200}, protocol=2))
    rc, lines, _ = run_men("cora", src, tmp_path / "cache", DROPEDGE_MAX_MEMORY_GB="0.0625")
    assert_one_line(rc, lines, "cora", "ind.cora.graph expands to more than 1048576 items")


def test_planetoid_blocks_each_under_the_limit_but_not_together_are_refused(cora, tmp_path, baseline_mib):
    """Re-probe of issue 29: x, tx and allx widened to 60,000 columns each passed the
    per-file check under a 0.5 GiB limit and the load grew by 1.5 GB (exit 0), and a
    float64 file was densified at 8 + 4 bytes a cell. Scaled down: 20,000 columns under
    0.2 GiB (each block 11-137 MB; all of them, the assembled features and their
    normalised copy 661 MB)."""
    # by hand: (140 + 1000 + 1708) x 20000 + (140 + 1000 + 1708) x 7 + 2 x (1708 + 1000) x 20000
    assert (140 + 1000 + 1708) * 20_000 + 2848 * 7 + 2 * 2708 * 20_000 == 165_299_936
    src = copy_raw(tmp_path)
    for name in ("ind.cora.x", "ind.cora.tx", "ind.cora.allx"):
        m = raw_value(src, name)
        m.data = m.data.astype(np.float64)
        (src / "Cora" / "raw" / name).write_bytes(crafted_csr(m, _shape=(m.shape[0], 20_000)))
    rc, lines, mib = run_men("cora", src, tmp_path / "cache", DROPEDGE_MAX_MEMORY_GB="0.2")
    assert_one_line(rc, lines, "cora", "the dense arrays of ind.cora.* (165299936 cells) would need about "
                                       "630.6 MiB of memory, above the limit of 204.8 MiB")
    assert mib < baseline_mib + 128, (mib, baseline_mib)


def test_npz_features_are_checked_with_their_copies(tmp_path):
    """A float64 feature matrix of 60 x 300,000 (72 MB as float32) under a 0.1 GiB limit
    used to load (toarray at 8 bytes a cell, the largest component's copy, the normalised
    copy); the check now counts the three float32 copies."""
    arrays = cs_arrays()
    arrays["attr_data"] = arrays["attr_data"].astype(np.float64)
    arrays["attr_shape"] = np.array([60, 300_000])
    write_npz(tmp_path, arrays)
    rc, lines, _ = run_men("coauthor-cs", tmp_path / "data", tmp_path / "cache", DROPEDGE_MAX_MEMORY_GB="0.1")
    assert_one_line(rc, lines, "coauthor-cs", "ms_academic_cs.npz features (60 x 300000) would need about "
                                              "206 MiB of memory, above the limit of 102.4 MiB")


def test_check_csr_agrees_with_scipys_full_check_on_random_triples():
    """Brute force: every small random CSR triple that check_csr accepts, scipy's own
    full check (check_format(full_check=True)) accepts too, and densifies to the matrix
    a dense loop builds from the same triple."""
    rng = np.random.default_rng(0)
    accepted = 0
    for _ in range(400):
        rows, cols = int(rng.integers(0, 5)), int(rng.integers(0, 5))
        nnz = int(rng.integers(0, 7))
        indptr = (np.sort(rng.integers(0, nnz + 1, rows + 1)) if rng.random() < 0.7
                  else rng.integers(-2, 9, rows + 1))
        if rng.random() < 0.7 and indptr.size:
            indptr[0], indptr[-1] = 0, nnz
        indices = rng.integers(-1, cols + 1, nnz)
        data = rng.random(nnz).astype(np.float32)
        try:
            m = raw_arrays.check_csr(data, indices, indptr, (rows, cols), "m")
        except raw_arrays.RawDataError:
            continue
        accepted += 1
        m.check_format(full_check=True)
        dense = np.zeros((rows, cols), np.float32)
        for r in range(rows):
            for k in range(indptr[r], indptr[r + 1]):
                dense[r, indices[k]] += data[k]
        assert np.allclose(m.toarray(), dense)
    assert accepted > 50
