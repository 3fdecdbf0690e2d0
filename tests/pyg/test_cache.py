"""LayerDropEdge's cache never lends one graph's mapping to another (issue 36 (a)).

A freed ``edge_index`` hands its memory to the next tensor of the same size, so a cache
keyed by address, shape, device and version reused the previous graph's mapping for a
new graph (wrong keep counts in about a quarter of the steps). Every layer's kept edges
are checked here against counts made with numpy, from the input alone."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from dropedge_core import samplers
from dropedge_core.pyg import LayerDropEdge

L, KEEP_MIN, KEEP_MAX, E, N = 4, 0.25, 0.75, 60, 24


def expected_counts(edge_index: np.ndarray) -> list[int]:
    """numpy: M distinct undirected non-loop pairs, layer l keeps floor(M * rate_l)."""
    m = len(undirected_pairs(edge_index))
    rates = KEEP_MIN + (KEEP_MAX - KEEP_MIN) * np.arange(L) / (L - 1)
    return [int(np.floor(m * r + 1e-9)) for r in rates]


def undirected_pairs(edge_index: np.ndarray) -> set:
    u, v = edge_index
    keep = u != v
    return set(zip(np.minimum(u, v)[keep].tolist(), np.maximum(u, v)[keep].tolist()))


def check_layers(layers, edge_index: np.ndarray, step: int) -> None:
    counts = expected_counts(edge_index)
    given = {tuple(c) for c in edge_index.T.tolist()}
    for l, kept in enumerate(layers):
        kept = kept.numpy()
        pairs = undirected_pairs(kept)
        assert len(pairs) == counts[l], f"step {step} layer {l}: {len(pairs)} kept, expected {counts[l]}"
        # an undirected edge is kept with every column of the input that names it, loops always
        whole = [c for c in given if (min(c), max(c)) in pairs or c[0] == c[1]]
        assert {tuple(c) for c in kept.T.tolist()} == set(whole), f"step {step} layer {l}"
        assert kept.shape[1] == sum(1 for c in edge_index.T.tolist()
                                    if (min(c), max(c)) in pairs or c[0] == c[1]), f"step {step} layer {l}"


def random_edges(rng: np.random.Generator) -> np.ndarray:
    """(2, E) with duplicates, loops and one-way edges; M varies from graph to graph."""
    n = int(rng.integers(4, N))
    half = rng.integers(0, n, size=(2, E // 2))
    return np.concatenate([half, half[::-1] if rng.random() < 0.5 else half], axis=1)


@pytest.mark.parametrize("how", ["fresh_tensor_same_address", "rewritten_behind_autograd",
                                 "freed_and_reallocated"])
def test_a_fresh_graph_every_step_gets_its_own_keep_counts(how):
    """100 graphs of one shape through one module: every layer's count is the new graph's.

    ``fresh_tensor_same_address``: ``torch.from_numpy`` of one rewritten buffer, so every
    step's tensor has the previous one's address, shape, device and version 0 (an
    address-keyed cache hits every step); ``rewritten_behind_autograd``: one tensor whose
    memory is rewritten through numpy (no version bump: an identity cache hits);
    ``freed_and_reallocated``: the issue's case, a new tensor after freeing the last."""
    rng = np.random.default_rng(0)
    drop = LayerDropEdge(L, "lid", keep_min=KEEP_MIN, keep_max=KEEP_MAX,
                         generator=torch.Generator().manual_seed(0))
    buffer = np.zeros((2, E), dtype=np.int64)
    same = torch.from_numpy(buffer)
    for step in range(100):
        edges = random_edges(rng)
        if how == "freed_and_reallocated":
            edge_index = torch.tensor(edges)  # torch's allocator hands back the freed block
        else:
            buffer[:] = edges
            edge_index = same if how == "rewritten_behind_autograd" else torch.from_numpy(buffer)
        check_layers(drop(edge_index), edges, step)
        del edge_index


def test_features_changed_in_place_give_fresh_kernel_weights(csbm):
    """Learned features updated in place: the cached module draws what an uncached one
    draws (a new module for every call is the reference)."""
    from dropedge_core.pyg import to_pyg

    data = to_pyg(csbm)
    x = data.x.clone()
    cached = LayerDropEdge(L, "dropedge++", generator=torch.Generator().manual_seed(1))
    reference = torch.Generator().manual_seed(1)
    for step in range(3):
        fresh = LayerDropEdge(L, "dropedge++", generator=reference)
        assert torch.equal(cached.masks(data.edge_index, x=x), fresh.masks(data.edge_index, x=x)), step
        with torch.no_grad():
            x.mul_(torch.rand(x.size(0), 1, generator=torch.Generator().manual_seed(step)) + 0.5).add_(
                torch.rand_like(x) * x.mean())  # in place: same object, new version


def test_an_equal_edge_index_in_a_new_tensor_reuses_the_mapping(csbm, monkeypatch):
    """A content check, not an address: a copy every step (``.to(device)``, a re-collated
    batch) hits the cache; the kernel weights are computed once."""
    from dropedge_core.pyg import to_pyg

    calls = []
    real = samplers.kernel_weights
    monkeypatch.setattr(samplers, "kernel_weights", lambda *a, **k: calls.append(1) or real(*a, **k))
    data = to_pyg(csbm)
    drop = LayerDropEdge(L, "dropedge++")
    for _ in range(3):
        drop(data.edge_index.clone(), x=data.x)
    assert len(calls) == 1
