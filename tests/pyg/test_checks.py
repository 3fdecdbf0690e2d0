"""Inputs checked before any work (issue 36 (b), (c)): one ValueError each, naming the value,
for non-finite features, node ids or num_nodes beyond memory, a bad generator, HeteroData
and edge values that do not match the edges; nothing drawn, nothing large allocated."""
from __future__ import annotations

import resource

import pytest
import torch
from dropedge_core import limits
from dropedge_core.pyg import (
    LayerDropEdge,
    LayerWiseEdges,
    SampleLayerEdges,
    from_pyg,
    layer_dropout_edge,
    normalize,
)
from dropedge_core.pyg.checks import check_features
from dropedge_core.pyg.edges import EdgeIndexer, normalized_features
from torch_geometric.data import Data, HeteroData

RING = torch.tensor([[0, 1, 1, 2, 2, 3, 3, 0], [1, 0, 2, 1, 3, 2, 0, 3]])


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


def _features_with(bad_rows: list[int], n: int = 8) -> torch.Tensor:
    x = torch.rand(n, 3, generator=gen(1))
    for i, row in enumerate(bad_rows):
        x[row, i % 3] = (float("nan"), float("inf"), -float("inf"))[i % 3]
    return x


def _callers(x, g):
    """Every front-end path that reads features, as (name, call)."""
    from torch_geometric.nn.models import GCN

    ei = torch.cat([RING, RING + 4], dim=1)
    model = LayerWiseEdges(GCN(3, 4, num_layers=2), LayerDropEdge(2, "fd", generator=g))
    return [
        ("layer_dropout_edge", lambda: layer_dropout_edge(ei, 2, x=x, sampler="dropedge++", generator=g)),
        ("LayerDropEdge", lambda: LayerDropEdge(2, "fd", generator=g)(ei, x=x)),
        ("normalization=", lambda: LayerDropEdge(2, "dropedge++", generator=g, normalization="AN")(ei, x=x)),
        ("SampleLayerEdges", lambda: SampleLayerEdges(2, generator=g)(Data(x=x, edge_index=ei))),
        ("LayerWiseEdges", lambda: model(x, ei)),
    ]


@pytest.mark.parametrize("path", range(5))
def test_non_finite_features_are_named_by_every_kernel_sampler_path(path):
    g = gen()
    before = g.get_state()
    name, call = _callers(_features_with([2, 5, 6]), g)[path]
    with pytest.raises(ValueError, match=r"x holds NaN or inf in 3 row\(s\) \(node 2, 5, 6\)"):
        call()
    assert torch.equal(g.get_state(), before), name  # nothing drawn


def test_uniform_samplers_do_not_read_features_and_accept_them():
    kept = layer_dropout_edge(RING, 2, x=_features_with([1], n=4), sampler="li", generator=gen())
    assert len(kept) == 2


def test_finite_features_keep_every_node_reachable():
    """The reason for the check: with a NaN row the kernel weight is NaN and the node's
    edges are never drawn; finite features of the same graph draw them."""
    x = torch.rand(4, 3, generator=gen(2))
    counts = torch.zeros(RING.size(1))
    for s in range(30):
        counts += layer_dropout_edge(RING, 1, x=x, sampler="fd", p=0.5, generator=gen(s))[0][1]
    assert bool((counts > 0).all())


@pytest.mark.parametrize("edge_index, num_nodes, size", [
    (torch.tensor([[0, 2_000_000_000], [1, 0]]), None, "node id 2000000000"),
    (torch.tensor([[0, 1], [1, 0]]), 10**10, "num_nodes=10000000000"),
    (torch.tensor([[0, 2**63 - 1], [1, 0]]), None, "node id 9223372036854775807"),
    (torch.tensor([[0, 1], [1, 0]]), 10**30, "num_nodes=10"),
])
def test_huge_ids_and_num_nodes_are_refused_before_allocating(edge_index, num_nodes, size, sixteen_gib):
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    calls = [
        lambda: layer_dropout_edge(edge_index, 2, sampler="li", num_nodes=num_nodes),
        lambda: layer_dropout_edge(edge_index, 2, sampler="li", num_nodes=num_nodes, training=False),
        lambda: LayerDropEdge(2, "li")(edge_index, num_nodes=num_nodes),
        lambda: LayerDropEdge(2, "li").eval()(edge_index, num_nodes=num_nodes),
        lambda: normalize(edge_index, num_nodes),
    ]
    for call in calls:
        with pytest.raises(ValueError, match=rf"{size}.*(would need about .* above the limit|"
                                             r"above the \d+ an edge key can address)"):
            call()
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak  # KiB
    assert grown < 200 * 1024, f"peak RSS grew by {grown} KiB"


@pytest.fixture
def sixteen_gib():
    """A memory limit of the test's own: node id 2e9 needs ~22 GB, under a 24 GiB machine's
    memory (refused only where the explorer's rule, set when it is imported, was in force)."""
    before = limits._RULE[0]
    limits.set_memory_limit(lambda device: (16 * 2**30, "the test's 16 GiB"))
    yield
    limits.set_memory_limit(before)


@pytest.mark.parametrize("bad", [42, "cuda", torch.Generator().manual_seed(0).get_state()])
def test_a_generator_of_the_wrong_type_is_refused_at_once(bad):
    message = rf"generator must be a torch.Generator or None \(got {type(bad).__name__}"
    with pytest.raises(ValueError, match=message):
        LayerDropEdge(2, "li", generator=bad)
    with pytest.raises(ValueError, match=message):
        layer_dropout_edge(RING, 2, sampler="li", generator=bad)
    with pytest.raises(ValueError, match=message):
        SampleLayerEdges(2, "li", generator=bad)


def test_the_generator_stays_when_the_module_stays_on_its_device():
    g = gen()
    drop = LayerDropEdge(2, "li", generator=g)
    assert drop.to("cpu").generator is g and drop.double().generator is g


def test_heterodata_and_edge_type_dicts_are_refused_clearly():
    hetero = HeteroData()
    hetero["paper"].x = torch.rand(4, 3)
    hetero["paper", "cites", "paper"].edge_index = RING
    with pytest.raises(ValueError, match="HeteroData is not supported.*one edge type at a time"):
        SampleLayerEdges(2, "li")(hetero)
    with pytest.raises(ValueError, match="HeteroData is not supported"):
        from_pyg(hetero)
    with pytest.raises(ValueError, match=r"\(got dict\); a heterogeneous graph: one edge type at a time"):
        LayerDropEdge(2, "li")(hetero.edge_index_dict)


@pytest.mark.parametrize("kwargs, message", [
    ({"edge_weight": torch.ones(7)}, r"edge_weight must have shape \(8,\).*\(got \(7,\)\)"),
    ({"edge_weight": torch.ones(8, 1)}, r"edge_weight must have shape \(8,\).*\(got \(8, 1\)\)"),
    ({"edge_weight": torch.tensor([1.0] * 7 + [float("nan")])},
     r"edge_weight holds NaN or inf at column\(s\) 7"),
    ({"edge_attr": torch.ones(9, 2)}, r"edge_attr must have 8 rows.*\(got \(9, 2\)\)"),
])
def test_edge_values_that_do_not_match_the_edges_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        LayerDropEdge(2, "li")(RING, **kwargs)
    with pytest.raises(ValueError, match=message):
        LayerDropEdge(2, "li").eval()(RING, **kwargs)


def test_normalize_refuses_negative_weights():
    with pytest.raises(ValueError, match=r"negative weight \(-1.0\)"):
        normalize(RING, 4, "NA", edge_weight=torch.tensor([1.0] * 7 + [-1.0]))


def test_finite_features_whose_row_sums_overflow_pass_and_a_hidden_nan_is_named():
    """The check clears rows by their sums first (issue 46): a sum that overflows to inf
    from finite values must not refuse the row; one inf beside a -inf (a NaN sum), or a NaN
    among huge values, must still be named."""
    big = torch.full((3, 4), 3e38)  # finite float32, every row sum overflows to inf
    big[1] = -3e38
    check_features(big)
    bad = big.clone()
    bad[2, 0], bad[2, 1] = float("inf"), -float("inf")
    with pytest.raises(ValueError, match=r"in 1 row\(s\) \(node 2\)"):
        check_features(bad)
    bad = big.clone()
    bad[0, 3] = float("nan")
    with pytest.raises(ValueError, match=r"in 1 row\(s\) \(node 0\)"):
        check_features(bad)


def _normalized_by_abs(x: torch.Tensor) -> torch.Tensor:
    """The reference: rows L1-normalised unless their norm (from ``abs``) is 1 (within 1e-6)
    or 0, in numpy's float32."""
    import numpy as np

    a = x.detach().float().numpy()
    norm = np.abs(a).sum(axis=1, keepdims=True, dtype=np.float32)
    done = (np.abs(norm - 1.0) <= 1e-6) | (norm == 0)
    return torch.from_numpy(np.where(done, a, a / np.where(norm == 0, 1, norm)))


@pytest.mark.parametrize("shift", [0.0, -0.3])
def test_normalized_features_read_non_negative_rows_without_abs(shift):
    """Non-negative features skip the abs copy (issue 46): they must be normalised exactly
    as rows with negative entries are, through their absolute values (numpy's here):
    rows already normalised or zero as given, the others divided by their L1 norm."""
    x = torch.rand(30, 7, generator=gen(4)) + shift
    x[3] = 0.0
    x[4] = x[4].abs() / x[4].abs().sum()  # already normalised: kept as it is
    x[5, 2] = -0.0
    x[6] = 0.0
    x[6, :3] = torch.tensor([0.75, 0.5, -0.25])  # sums to 1, but its L1 norm is 1.5
    got = normalized_features(x)
    assert torch.allclose(got, _normalized_by_abs(x), rtol=1e-6, atol=0)
    assert torch.equal(got[3], x[3]) and torch.equal(got[4], x[4])
    assert torch.allclose(got.abs().sum(1)[torch.arange(30) != 3], torch.ones(29), atol=1e-6)
    # a fresh graph's mapping normalises with the row sums its finiteness check took: the same
    # rows, bit for bit (row 6's signed sum is 1, not its norm)
    assert torch.equal(EdgeIndexer(torch.tensor([[0], [1]]), 30, x).graph.x, got)
