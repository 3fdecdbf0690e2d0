"""Graph breaks of one call under ``torch.compile`` (issue 36, item 7), counted with
``torch._dynamo.explain``: a regression guard at today's counts, which docs/PERFORMANCE.md
states. The target (none on the sampled-layers path on the CPU) is not met: the samplers'
validation converts tensors to Python numbers, and the nested draws walk in numpy."""
from __future__ import annotations

import pytest
import torch
from dropedge_core.pyg import layer_dropout_edge

#: Graph breaks per call measured on torch 2.13 (CPU, a 40-node ring, 4 layers), by sampler; a
#: change that adds breaks fails here, one that removes some lowers the number (and the doc's).
MEASURED_BREAKS = {"li": 10, "dropedge++": 35}


def _ring(n: int = 40) -> tuple[torch.Tensor, torch.Tensor]:
    src = torch.arange(n)
    dst = (src + 1) % n
    edge_index = torch.stack([torch.cat([src, dst]), torch.cat([dst, src])])
    return edge_index, torch.rand(n, 8, generator=torch.Generator().manual_seed(0))


def _breaks(sampler: str) -> int:
    edge_index, x = _ring()

    def call(edge_index, x):
        out = layer_dropout_edge(edge_index, 4, x=x, sampler=sampler,
                                 generator=torch.Generator().manual_seed(0))
        return [e for e, *_ in out]

    torch._dynamo.reset()
    return torch._dynamo.explain(call)(edge_index, x).graph_break_count


@pytest.mark.parametrize("sampler", sorted(MEASURED_BREAKS))
def test_graph_breaks_per_call_stay_at_most_the_measured_count(sampler):
    count = _breaks(sampler)
    assert count <= MEASURED_BREAKS[sampler], (
        f"{sampler}: {count} graph breaks per call, more than the {MEASURED_BREAKS[sampler]} measured")
    assert count > 0  # still above the target: the doc says so; lower the number when it falls
