"""``torch.compile`` (issue 46, item 5): a training-mode call breaks the graph no more often
than the same model with PyG's ``dropout_edge``, counted with ``torch._dynamo.explain``; no
recompilation for graphs of new sizes under ``dynamic=True``; and what the traced path draws
keeps each sampler's counts, nesting, duplicates and self-loops (its law: the slots' and the
segment draws' tests)."""
from __future__ import annotations

import pytest
import torch
from dropedge_core.pyg import LayerDropEdge, layer_dropout_edge
from dropedge_core.pyg._slots import edge_slots
from torch._dynamo.utils import counters
from torch_geometric.nn import GCNConv
from torch_geometric.utils import dropout_edge

LAYERS = 4
DROP = 0.45


def _ring(n: int = 40, chords: int = 0, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """A ring of ``n`` nodes (and ``chords`` random extra edges), both directions."""
    src = torch.arange(n)
    g = torch.Generator().manual_seed(seed)
    pairs = torch.stack([src, (src + 1) % n])
    if chords:
        pairs = torch.cat([pairs, torch.randint(0, n, (2, chords), generator=g)], 1)
    return torch.cat([pairs, pairs.flip(0)], 1), torch.rand(n, 8, generator=g)


class _GCN(torch.nn.Module):
    """A GCN whose layers take their edges from ``dropout_edge`` (``sampler=None``) or from
    :class:`LayerDropEdge` (torch's global random source in both, as ``dropout_edge`` has)."""

    def __init__(self, sampler: str | None):
        super().__init__()
        self.convs = torch.nn.ModuleList([GCNConv(8, 8) for _ in range(LAYERS)])
        self.drop = None if sampler is None else LayerDropEdge(LAYERS, sampler)

    def forward(self, x, edge_index):
        kept = ([dropout_edge(edge_index, p=DROP, training=self.training)[0] for _ in range(LAYERS)]
                if self.drop is None else self.drop(edge_index, x=x))
        for conv, e in zip(self.convs, kept):
            x = conv(x, e).relu()
        return x


def _breaks(model: torch.nn.Module) -> int:
    x, edge_index = _ring()[1], _ring()[0]
    torch._dynamo.reset()
    return torch._dynamo.explain(model.train())(x, edge_index).graph_break_count


@pytest.mark.parametrize("sampler", ["li", "dropedge++"])
def test_a_training_call_breaks_no_more_than_dropout_edge(sampler):
    reference = _breaks(_GCN(None))
    assert reference > 0  # dropout_edge's own: its boolean mask selection, PyG's self-loops
    assert _breaks(_GCN(sampler)) <= reference


@pytest.mark.parametrize("sampler", ["li", "dropedge++"])
def test_the_functional_call_breaks_once_per_kept_edge_index(sampler):
    """``layer_dropout_edge`` alone: the only breaks are the ``L`` boolean selections of the
    kept columns (their sizes depend on the draw, as ``dropout_edge``'s do), one each."""
    edge_index, x = _ring()

    def call(edge_index, x):
        return [e for e, _ in layer_dropout_edge(edge_index, LAYERS, x=x, sampler=sampler)]

    def reference(edge_index):
        return [dropout_edge(edge_index, p=DROP)[0] for _ in range(LAYERS)]

    torch._dynamo.reset()
    ours = torch._dynamo.explain(call)(edge_index, x)
    torch._dynamo.reset()
    theirs = torch._dynamo.explain(reference)(edge_index)
    assert ours.graph_break_count <= theirs.graph_break_count
    reasons = [r.reason for r in ours.break_reasons]
    assert all("Dynamic shape" in r for r in reasons), reasons


@pytest.mark.parametrize("sampler", ["li", "dropedge++"])
def test_no_recompilation_for_graphs_of_new_sizes(sampler):
    """``dynamic=True``: after two warm-up graphs, 20 graphs of 20 other sizes compile no new
    graph (dynamo traces only; the backend is not what is counted)."""
    model = torch.compile(_GCN(sampler).train(), dynamic=True, backend="eager")
    torch._dynamo.reset()
    counters.clear()
    for i in range(22):
        edge_index, x = _ring(30 + 7 * i, chords=30 + 7 * i, seed=i)
        model(x, edge_index)
        if i == 1:
            warm = counters["stats"]["unique_graphs"]
    assert warm > 0 and counters["stats"]["unique_graphs"] == warm


@pytest.mark.parametrize("sampler, directed", [("dropedge++", False), ("li", False), ("lid", True),
                                               ("ldd", False), ("dropedge", False), ("fd", True)])
def test_the_traced_path_keeps_counts_nesting_duplicates_and_loops(sampler, directed):
    """Compiled (dynamo, the eager backend): a ring with duplicated columns, a self-loop and
    (undirected) a one-way chord; each layer keeps floor(rate * M) of the M = 41 distinct
    edges (80 directions of the ring's 40 when directed), a duplicate with its original, the
    self-loop always."""
    n = 40
    edge_index, x = _ring(n)
    extra = [[0, 1, 5], [1, 0, 5]] if directed else [[0, 1, 5, 3], [1, 0, 5, 20]]  # + a one-way chord
    edge_index = torch.cat([edge_index, torch.tensor(extra)], 1)
    kw = {"p": 0.5} if sampler in ("dropedge", "fd") else {"keep_min": 0.25, "keep_max": 0.75}

    @torch.compile(backend="eager")
    def call(edge_index, x):
        return torch.stack([m for _, m in layer_dropout_edge(edge_index, LAYERS, x=x, sampler=sampler,
                                                             directed=directed, **kw)])

    masks = call(edge_index, x)
    m = 80 if directed else 41
    rates = ([0.5] * LAYERS if sampler in ("dropedge", "fd")
             else [0.25 + 0.5 * l / (LAYERS - 1) for l in range(LAYERS)])
    rates = rates[::-1] if sampler == "ldd" else rates
    first = 2 * n  # the first extra column
    counted = torch.ones(edge_index.size(1), dtype=torch.bool)
    counted[first:first + 3] = False  # the duplicates and the loop: checked below
    for layer, row in enumerate(masks):
        kept = {(int(u), int(v)) if directed else tuple(sorted((int(u), int(v))))
                for u, v in edge_index[:, row & counted].t()}
        assert len(kept) == int(m * rates[layer] + 1e-9), (layer, len(kept))
    assert torch.equal(masks[:, first + 2], torch.ones(LAYERS, dtype=torch.bool))  # the self-loop
    # the ring's column 0 is (0, 1), column n its reverse (1, 0)
    assert torch.equal(masks[:, first], masks[:, 0])
    assert torch.equal(masks[:, first + 1], masks[:, n if directed else 0])
    if sampler in ("dropedge++", "lid"):
        assert bool((masks[:-1] <= masks[1:]).all())
    if sampler == "ldd":
        assert bool((masks[:-1] >= masks[1:]).all())
    if sampler in ("dropedge", "fd"):
        assert bool((masks == masks[:1]).all())


def test_a_compiled_model_trains_under_the_inductor():
    """The real backend: a DropEdge++ GCN compiled with the inductor runs a training step
    and its loss has gradients (the slot path is differentiable where it should be: x)."""
    edge_index, x = _ring()
    model = torch.compile(_GCN("dropedge++").train())
    out = model(x, edge_index)
    out.sum().backward()
    assert all(p.grad is not None for p in model.parameters())


def test_edge_slots_by_hand():
    """Columns (1, 0), (0, 1), (2, 2), (2, 1), (0, 1): keys 1, 1, 8, 5, 1 (min * 3 + max),
    sorted slots (0, 1) x3, (1, 2), (2, 2): items the first (0, 1) and (1, 2); the loop no item."""
    slots = edge_slots(torch.tensor([[1, 0, 2, 2, 0], [0, 1, 2, 1, 1]]), 3)
    assert slots.lo.tolist() == [0, 0, 0, 1, 2] and slots.hi.tolist() == [1, 1, 1, 2, 2]
    assert slots.valid.tolist() == [True, False, False, True, False]
    assert slots.column.tolist() == [0, 0, 4, 3, 0]
    assert slots.loop.tolist() == [False, False, True, False, False]
    directed = edge_slots(torch.tensor([[1, 0, 2, 2, 0], [0, 1, 2, 1, 1]]), 3, directed=True)
    # (1, 0) and (2, 1) run against the key's order: the second half's slots
    assert directed.column.tolist() == [5, 0, 4, 8, 0] and int(directed.valid.sum()) == 4


@pytest.mark.parametrize("fault", ["negative id", "id too large", "nan feature", "edge across graphs"])
def test_the_traced_path_refuses_what_eager_mode_refuses(fault):
    """No ValueError can be raised from a traced tensor without a graph break: the traced
    path asserts on the device instead, and the call fails naming the fault."""
    edge_index, x = _ring(8)
    batch = None
    if fault == "negative id":
        edge_index = edge_index.clone()
        edge_index[0, 3] = -1
    elif fault == "id too large":
        edge_index = edge_index.clone()
        edge_index[1, 2] = 8
    elif fault == "nan feature":
        x = x.clone()
        x[5, 1] = float("nan")
    else:
        batch = torch.tensor([0, 0, 0, 0, 1, 1, 1, 1])  # the ring joins node 3 to node 4

    @torch.compile(backend="eager")
    def call(edge_index, x, batch):
        return [m for _, m in layer_dropout_edge(edge_index, LAYERS, x=x, sampler="dropedge++", batch=batch,
                                                 num_nodes=8)]

    message = {"negative id": "node id outside", "id too large": "node id outside",
               "nan feature": "NaN or inf", "edge across graphs": "two graphs"}[fault]
    with pytest.raises(RuntimeError, match=message):
        call(edge_index, x, batch)


@pytest.mark.parametrize("kernel", ["linear", "poly", "rbf", "reverse"])
def test_traced_kernel_weights_are_the_eager_ones(kernel):
    """Traced, the kernel weights are computed in one pass instead of cache-sized chunks:
    the same formula (to float32 rounding of the sums)."""
    from dropedge_core.samplers import kernel_weights

    edge_index, x = _ring(30, chords=20)
    x = x - 0.3  # negative dot products too: the clip at 0 is exercised
    traced = torch.compile(kernel_weights, backend="eager")(x, edge_index, kernel)
    assert torch.allclose(traced, kernel_weights(x, edge_index, kernel), rtol=1e-5, atol=1e-7)
