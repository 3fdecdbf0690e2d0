"""training/checks.py (issue 23, mutation follow-up): the keep share by hand (floor of M
times the densest layer's rate, over M or 2M), every setting of a run reaching the memory
estimate (compared with :func:`memory.training_bytes` called with the settings written out,
on a graph where each of them moves the estimate), the refusal's message word for word, and
the seeds of a batch bounded by the count asked for and by the limit of the run's device."""
from __future__ import annotations

import pytest
import torch
from dropedge_core.graph import Graph

from dropedge_explorer import memory
from dropedge_explorer.training import TrainConfig
from dropedge_explorer.training.checks import check_memory, keep_share, seeds_per_batch

GIB = 1 << 30


def circulant(num_nodes: int, reach: int, num_features: int = 8, num_classes: int = 3) -> Graph:
    """Node ``i`` joined to ``i + 1 .. i + reach`` (mod N): ``N * reach`` distinct edges."""
    i = torch.arange(num_nodes).repeat(reach)
    j = (i + torch.arange(1, reach + 1).repeat_interleave(num_nodes)) % num_nodes
    edges = torch.stack([torch.minimum(i, j), torch.maximum(i, j)])
    edges = edges[:, torch.argsort(edges[0] * num_nodes + edges[1])]
    none = torch.zeros(num_nodes, dtype=torch.bool)
    return Graph("ring", torch.ones(num_nodes, num_features) / num_features,
                 torch.arange(num_nodes) % num_classes, edges, none, none, none, num_classes)


RING = circulant(3000, 10)  # N 3000, M 30000, 8 features, 3 classes
ODD = circulant(13, 3)  # M 39


def config(**settings) -> TrainConfig:
    base = {"dataset": "upload", "sampler": "lid", "p_min": 0.1, "p_max": 0.25, "num_layers": 2, "hidden": 16,
            "backbone": "gcn", "dropout": 0.5, "self_loop": False, "batch_norm": False, "diag_every": 1,
            "device": "cpu"}
    return TrainConfig(**{**base, **settings})


@pytest.fixture
def fake_gpu(monkeypatch):
    """A CUDA device with 20 GiB free of 80 GiB, as far as the memory check can tell."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device=None: (20 * GIB, 80 * GIB))
    monkeypatch.delenv("DROPEDGE_MAX_GPU_MEMORY_GB", raising=False)


def test_the_keep_share_is_the_densest_layer_by_hand():
    assert ODD.num_edges == 39 and RING.num_edges == 30000
    # LID keeps floor(M * p) at p from p_min up to p_max: the densest layer is p_max's
    assert keep_share(config(p_max=0.25, num_layers=4), ODD) == 9 / 39  # floor(9.75)
    # p_max under the sampler's default p_min (0.3): a sampler built without p_min is refused
    assert keep_share(config(p_min=0.05, p_max=0.2, num_layers=3), ODD) == 7 / 39  # floor(7.8)
    # directed: 2M = 78 columns, floor(19.5) = 19 of them (undirected: floor(9.75) = 9 of 39)
    assert keep_share(config(directed=True), ODD) == 19 / 78
    # DropEdge keeps floor(M * p) at every layer, p its own rate (not (p_min + p_max) / 2)
    assert keep_share(config(sampler="dropedge", p=0.5), ODD) == 19 / 39
    assert keep_share(config(sampler="nodrop"), ODD) == 1.0
    edgeless = Graph("dots", torch.eye(3), torch.tensor([0, 1, 0]), torch.zeros(2, 0, dtype=torch.long),
                     *[torch.zeros(3, dtype=torch.bool)] * 3, 2)
    assert keep_share(config(), edgeless) == 1.0  # nothing to keep a share of


# (the run's settings, the estimate's arguments written out): on RING each argument moves
# the estimate in one of the cases (asserted below; dropout counts only as zero or not), so a
# setting that does not reach it fails
CASES = [
    ({}, {"backbone": "gcn", "dropout": 0.5, "self_loop": False, "batch_norm": False, "diagnostics": True,
          "device_type": "cpu", "keep": 0.25, "layers": 2, "hidden": 16}),
    ({"backbone": "jknet", "dropout": 0.0, "self_loop": True, "batch_norm": True, "diag_every": 0,
      "num_layers": 4, "hidden": 256},
     {"backbone": "jknet", "dropout": 0.0, "self_loop": True, "batch_norm": True, "diagnostics": False,
      "device_type": "cpu", "keep": 0.25, "layers": 4, "hidden": 256}),
    ({"device": "cuda"},
     {"backbone": "gcn", "dropout": 0.5, "self_loop": False, "batch_norm": False, "diagnostics": True,
      "device_type": "cuda", "keep": 0.25, "layers": 2, "hidden": 16}),
]


def expected_bytes(args: dict, **change) -> int:
    a = {**args, **change}
    return memory.training_bytes(3000, 30000, 8, 3, a["layers"], a["hidden"], backbone=a["backbone"],
                                 dropout=a["dropout"], self_loop=a["self_loop"], batch_norm=a["batch_norm"],
                                 diagnostics=a["diagnostics"], device_type=a["device_type"], keep=a["keep"])


def test_every_setting_reaches_the_memory_estimate(monkeypatch, fake_gpu):
    monkeypatch.setenv("DROPEDGE_MAX_MEMORY_GB", "64")
    for settings, args in CASES:
        assert check_memory(config(**settings), RING) == expected_bytes(args), settings
    # the cases can tell: each argument, at training_bytes' default (or flipped), moves one of them
    for name, other in [("backbone", "gcn"), ("dropout", 0.5), ("self_loop", False), ("batch_norm", False),
                        ("diagnostics", True), ("diagnostics", False), ("device_type", "cpu"), ("keep", 1.0)]:
        assert any(expected_bytes(args, **{name: other}) != expected_bytes(args) for _, args in CASES), name


def test_a_refused_run_names_itself_its_need_the_limit_and_what_to_change(monkeypatch):
    monkeypatch.setenv("DROPEDGE_MAX_MEMORY_GB", "0.001")
    need, limit = expected_bytes(CASES[0][1]), int(0.001 * GIB)
    with pytest.raises(memory.MemoryLimitError) as err:
        check_memory(config(), RING)
    assert str(err.value) == (
        f"training gcn L=2 hidden=16 on ring (N=3000, M=30000, 8 features) would need about "
        f"{memory.human(need)} of memory, above the limit of {memory.human(limit)} (DROPEDGE_MAX_MEMORY_GB); "
        f"use fewer layers, a smaller hidden width or a smaller graph")


def test_a_batch_holds_no_more_seeds_than_asked(monkeypatch):
    monkeypatch.setenv("DROPEDGE_MAX_MEMORY_GB", "64")  # 4 seeds of RING's first case: ~0.1 GiB
    assert memory.training_bytes(3000, 30000, 8, 3, 2, 16, keep=0.25, seeds=5) < 64 * GIB
    assert [seeds_per_batch(config(), RING, s) for s in (1, 2, 4)] == [1, 2, 4]


def test_a_batch_is_sized_by_the_limit_of_the_device_it_runs_on(monkeypatch, fake_gpu):
    # one seed is over the RAM variable but far under the GPU's 20 GiB free: the GPU decides
    monkeypatch.setenv("DROPEDGE_MAX_MEMORY_GB", "0.001")
    assert expected_bytes(CASES[2][1]) > 0.001 * GIB
    assert seeds_per_batch(config(device="cuda"), RING, 4) == 4
