"""Helpers the tests share (paths, small graphs); one home each, no test-to-test imports."""
from __future__ import annotations

from pathlib import Path

import torch

#: The repository root (tests/helpers/ is two levels below it).
REPO = Path(__file__).resolve().parents[2]


def random_graph(num_nodes: int, num_edges: int, num_features: int = 8, seed: int = 0):
    """A small random simple graph with non-negative features, for property tests."""
    from dropedge_core.graph import Graph, l1_normalize_rows, simple_undirected_edges

    g = torch.Generator().manual_seed(seed)
    raw = torch.randint(num_nodes, (2, num_edges * 3), generator=g)
    edges = simple_undirected_edges(raw, num_nodes)[:, :num_edges]
    x = l1_normalize_rows(torch.rand(num_nodes, num_features, generator=g))
    y = torch.randint(2, (num_nodes,), generator=g)
    none = torch.zeros(num_nodes, dtype=torch.bool)
    return Graph("random", x, y, edges, none.clone(), none.clone(), none.clone(), 2)


def ring_graph(num_nodes: int, ring: bool = True, num_features: int = 1):
    """``num_nodes`` nodes on a ring (``ring``) or with one edge 0-1 only, random features:
    a graph as large as asked that costs nothing to build (memory estimates)."""
    from dropedge_core.graph import Graph, simple_undirected_edges

    ids = torch.arange(num_nodes)
    edges = torch.stack([ids, (ids + 1) % num_nodes]) if ring else torch.tensor([[0], [1]])
    none = torch.zeros(num_nodes, dtype=torch.bool)
    x = torch.rand(num_nodes, num_features, generator=torch.Generator().manual_seed(0))
    labels = torch.zeros(num_nodes, dtype=torch.long)
    return Graph("big", x, labels, simple_undirected_edges(edges, num_nodes), none, none, none, 1, {})


def raw_dir(name: str) -> Path:
    """The folder a Planetoid dataset's raw files load from now: ``DROPEDGE_DATA``'s or,
    when they come from the cache, the cache's (call after the dataset's fixture, which
    skips where neither has them)."""
    from dropedge_core import datasets

    source = datasets.SOURCES[name]
    base = datasets.data_dir() if datasets.availability(name) == "DROPEDGE_DATA" else datasets.cache_dir()
    return base / source.folder / "raw"
