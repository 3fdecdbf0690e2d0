"""Datasets and splits."""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import pytest
import torch
from dropedge_core import datasets
from dropedge_core.datasets import DatasetError, DatasetUnavailable

from tests.helpers import REPO, raw_dir


def check_graph(g):
    u, v = g.undirected_edges
    assert (u < v).all()
    key = u * g.num_nodes + v
    assert torch.unique(key).numel() == key.numel()
    assert g.edge_index.shape == (2, 2 * g.num_edges)
    torch.testing.assert_close(g.edge_index[:, g.num_edges:], g.edge_index[:, :g.num_edges].flip(0))
    assert not (g.train_mask & g.val_mask).any() and not (g.val_mask & g.test_mask).any()
    assert not (g.train_mask & g.test_mask).any()
    sums = g.x.abs().sum(1)
    assert torch.all(((sums - 1).abs() < 1e-5) | (sums == 0))


@pytest.mark.parametrize("split, sizes", [("semi", (140, 500, 1000)), ("full", (1208, 500, 1000))])
def test_cora_splits(cora, split, sizes):
    g = datasets.load("cora", split=split)
    check_graph(g)
    assert (g.num_nodes, g.num_edges, g.num_classes) == (2708, 5278, 7)
    assert (int(g.train_mask.sum()), int(g.val_mask.sum()), int(g.test_mask.sum())) == sizes
    if split == "full":
        idx = torch.arange(g.num_nodes)
        assert torch.equal(g.train_mask, idx < 1208)
        assert torch.equal(g.val_mask, (idx >= 1208) & (idx < 1708))


@pytest.mark.parametrize("split, sizes", [("semi", (120, 500, 1000)), ("full", (1812, 500, 1000))])
def test_citeseer_splits(citeseer, split, sizes):
    g = datasets.load("citeseer", split=split)
    check_graph(g)
    assert (g.num_nodes, g.num_edges) == (3327, 4552)
    assert (int(g.train_mask.sum()), int(g.val_mask.sum()), int(g.test_mask.sum())) == sizes
    featureless = g.x.abs().sum(1) == 0
    assert int(featureless.sum()) == 15  # kept in the graph ...
    in_split = g.train_mask | g.val_mask | g.test_mask
    assert not (featureless & in_split).any()  # ... in no split


def test_builtin_datasets():
    k = datasets.load("karate")
    check_graph(k)
    assert (k.num_nodes, k.num_edges, k.num_classes) == (34, 78, 4)
    c = datasets.load("csbm", num_nodes=300, num_classes=3, seed=1)
    check_graph(c)
    assert c.num_nodes == 300
    per_class = torch.bincount(c.y[c.train_mask], minlength=3)
    assert per_class.tolist() == [20, 20, 20]
    assert torch.bincount(c.y[c.val_mask], minlength=3).tolist() == [30, 30, 30]
    # same seed, same graph; class signal in edges and features
    again = datasets.load("csbm", num_nodes=300, num_classes=3, seed=1)
    assert torch.equal(c.undirected_edges, again.undirected_edges)
    u, v = c.undirected_edges
    assert (c.y[u] == c.y[v]).float().mean() > 0.5


# builds a 100k-node CSBM with the address space capped at what torch took + 1 GiB: an
# N x N matrix (10 GB as bool, 40 GB as float) cannot even be reserved, so it fails at once
CSBM_UNDER_A_MEMORY_CAP = r"""
import json, resource, sys, time
import torch
torch.set_num_threads(1)
from dropedge_core import datasets

def address_space():
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmSize"))

n = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_AS, (address_space() + 2**30, resource.RLIM_INFINITY))
try:
    torch.empty(n, n, dtype=torch.bool)
    dense = "allocated"
except RuntimeError:
    dense = "refused"
t0 = time.perf_counter()
g = datasets.csbm(num_nodes=n, num_classes=5, p_intra=1e-4, p_inter=1e-5, seed=0)
seconds = time.perf_counter() - t0
u, v = g.undirected_edges
print(json.dumps({"dense": dense, "seconds": seconds, "num_nodes": g.num_nodes, "num_edges": g.num_edges,
                  "edge_index": list(g.edge_index.shape), "x": list(g.x.shape),
                  "intra": (g.y[u] == g.y[v]).float().mean().item(),
                  "tensors": [tuple(t.shape) for t in vars(g).values() if isinstance(t, torch.Tensor)]}))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the memory cap uses Linux's RLIMIT_AS")
def test_csbm_scales_without_dense_matrix():
    """100k nodes under a 1 GiB memory cap, in about a second (0.6 s on a 2-core CPU): edges
    drawn per class pair, no N x N matrix anywhere."""
    n = 100_000
    proc = subprocess.run([sys.executable, "-c", CSBM_UNDER_A_MEMORY_CAP, str(n)], cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["dense"] == "refused"  # the cap really forbids an N x N matrix
    assert got["seconds"] < 15, got["seconds"]
    # expected edges: 5 classes of 20k nodes, 1e-4 inside (~100k), 1e-5 across (~40k)
    assert got["num_nodes"] == n and 120_000 < got["num_edges"] < 160_000
    assert got["edge_index"] == [2, 2 * got["num_edges"]] and got["x"] == [n, 60]
    assert 0.65 < got["intra"] < 0.77  # 100k of 140k edges inside a class
    # every tensor of the graph is O(N + M): none has two dimensions of size N
    assert all(sum(d == n for d in shape) <= 1 for shape in map(tuple, got["tensors"])), got["tensors"]


def test_unknown_names_list_valid_ones():
    with pytest.raises(DatasetError, match="unknown dataset 'corra'; valid: cora, citeseer"):
        datasets.load("corra")
    with pytest.raises(DatasetError, match="unknown split 'half'"):
        datasets.load("karate", split="half")


def test_availability_listing():
    rows = {r["name"]: r for r in datasets.available()}
    assert set(rows) == set(datasets.NAMES)
    assert rows["karate"]["availability"] == "built-in" and rows["csbm"]["offline"]


def test_offline_without_data_is_one_line_error(tmp_path, monkeypatch):
    monkeypatch.setenv("DROPEDGE_DATA", str(tmp_path / "empty"))
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("DROPEDGE_CACHE", str(tmp_path / "cache"))
    assert datasets.availability("pubmed") == "download"
    import urllib.request

    def refuse(*args, **kwargs):
        raise OSError("network unreachable")

    monkeypatch.setattr(urllib.request, "urlopen", refuse)
    with pytest.raises(DatasetUnavailable, match="not available offline: set DROPEDGE_DATA") as info:
        datasets.load("pubmed")
    assert "\n" not in str(info.value)


def test_read_only_data_dir_is_never_written(cora, tmp_path, monkeypatch):
    src = tmp_path / "ro"
    (src / "Cora" / "raw").mkdir(parents=True)
    for f in raw_dir("cora").iterdir():
        (src / "Cora" / "raw" / f.name).write_bytes(f.read_bytes())
    for p in [src / "Cora" / "raw", src / "Cora", src]:
        os.chmod(p, stat.S_IRUSR | stat.S_IXUSR)
    before = sorted(str(p) for p in src.rglob("*"))
    monkeypatch.setenv("DROPEDGE_DATA", str(src))
    monkeypatch.setenv("DROPEDGE_CACHE", str(tmp_path / "cache"))
    try:
        g = datasets.load("cora")
        assert g.num_edges == 5278
        assert sorted(str(p) for p in src.rglob("*")) == before
        assert len(list((tmp_path / "cache" / "Cora" / "raw").iterdir())) == 8  # the copies
    finally:
        for p in [src, src / "Cora", src / "Cora" / "raw"]:
            os.chmod(p, stat.S_IRWXU)


@pytest.mark.parametrize("damage", ["truncate", "garbage"])
def test_corrupt_raw_file_is_one_line_error(cora, tmp_path, monkeypatch, damage):
    src = tmp_path / "bad"
    (src / "Cora" / "raw").mkdir(parents=True)
    for f in raw_dir("cora").iterdir():
        data = f.read_bytes()
        if f.name == "ind.cora.graph":
            data = data[: len(data) // 3] if damage == "truncate" else b"not a pickle at all\n" * 10
        (src / "Cora" / "raw" / f.name).write_bytes(data)
    monkeypatch.setenv("DROPEDGE_DATA", str(src))
    monkeypatch.setenv("DROPEDGE_CACHE", str(tmp_path / "cache"))
    with pytest.raises(DatasetError, match="cannot read cora raw files") as info:
        datasets.load("cora")
    assert "\n" not in str(info.value)


def test_missing_data_dir_is_one_line_error(tmp_path, monkeypatch):
    monkeypatch.setenv("DROPEDGE_DATA", str(tmp_path / "nowhere"))
    monkeypatch.setenv("DROPEDGE_CACHE", str(tmp_path / "cache"))
    with pytest.raises(DatasetUnavailable, match="is not a readable directory"):
        datasets.load("cora")
    assert datasets.load("karate").num_nodes == 34  # built-in data never need it
