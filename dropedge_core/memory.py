"""Memory estimates made before allocating, and the limit they are checked against.

A ten-byte edge list can name a ten-million-node graph and a one-row features file can be
millions of columns wide; a hidden width of 10^12 is one typed number. Each would ask for
gigabytes the moment a tensor is built. So the CLI and the app estimate what a run will
hold (graph, features, the ``L x M`` masks, the ``L`` adjacencies, the model with Adam's
state, the activations kept for the backward pass) and refuse, with one line, above
``$DROPEDGE_MAX_MEMORY_GB`` (default 8 GiB; :mod:`dropedge_core.env`).

The estimates are upper-side approximations (a few tensors of each kind at their real
sizes), measured against tracemalloc / ``ru_maxrss`` in ``tests/test_memory.py``; they are
a guard against the absurd, not an accountant.
"""
from __future__ import annotations

from dropedge_core import env

GIB = 1 << 30
_F32, _I64 = 4, 8


class MemoryLimitError(ValueError):
    """A computation would need more memory than ``$DROPEDGE_MAX_MEMORY_GB`` allows."""


def limit_bytes() -> int:
    """The limit from ``$DROPEDGE_MAX_MEMORY_GB`` (raises :class:`~dropedge_core.env.EnvError`)."""
    return int(env.settings().max_memory_gb * GIB)


def human(num_bytes: float) -> str:
    """``12.3 GiB``, ``512 MiB``, ``3 KiB``."""
    for unit, size in (("GiB", GIB), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if num_bytes >= size:
            return f"{num_bytes / size:.1f}".removesuffix(".0") + f" {unit}"
    return f"{int(num_bytes)} bytes"


def graph_bytes(num_nodes: int, num_edges: int, num_features: int) -> int:
    """A :class:`~dropedge_core.method.graph.Graph`: dense float32 features, the undirected and
    directed edge lists, labels and masks (and the float64 copy an upload normalises)."""
    return (num_nodes * num_features * (_F32 + 8) + num_edges * 6 * _I64
            + num_nodes * (_I64 + 3))


def sampling_bytes(num_nodes: int, num_edges: int, num_layers: int) -> int:
    """One draw of ``L x M`` masks with its temporaries (kernel weights, random keys and
    their sort order per layer), plus the ``L`` normalised adjacencies built from it."""
    masks = num_layers * num_edges * (1 + 2 * _I64 + _F32)
    adjacencies = num_layers * (2 * num_edges + num_nodes) * 2 * _F32 + (2 * num_edges + num_nodes) * _I64
    return masks + adjacencies


def training_bytes(num_nodes: int, num_edges: int, num_features: int, num_classes: int,
                   num_layers: int, hidden: int) -> int:
    """A training run: the graph, the masks and adjacencies (training's and the full
    graph's), the model's parameters with gradients and Adam's two moments, and the
    activations of ``L`` layers (pre-activation, activation, dropout mask, output and
    what autograd keeps besides) for the backward pass plus the evaluation pass.

    Measured (``ru_maxrss`` growth during training, 2-core CPU): csbm N=20000, 500
    features, L=16, hidden 128: 869 MiB, estimate 1207 MiB; N=5000, 2000 features,
    L=64, hidden 512: 3358 MiB, estimate 3.9 GiB; N=50000, L=32, hidden 256: 3786 MiB,
    estimate 9.8 GiB."""
    params = num_features * hidden + max(num_layers - 1, 0) * hidden * hidden + hidden * max(num_classes, 1)
    activations = (num_layers + 1) * num_nodes * max(hidden, num_classes) * _F32 * 6
    return (graph_bytes(num_nodes, num_edges, num_features)
            + 2 * sampling_bytes(num_nodes, num_edges, num_layers)
            + params * _F32 * 4 + activations + num_nodes * num_features * _F32)


def men_bytes(num_nodes: int, num_edges: int, num_layers: int, num_sources: int) -> int:
    """MEN of one sample: the masks, and the bit-packed reachability of ``S`` sources
    (``N x S/64`` words, gathered once per kept entry of a layer, and the reduced table),
    its bits counted 65536 rows at a time (``metrics.COUNT_ROWS``), and the sort order
    of the ``N + 2M`` entries.

    Measured (growth of peak RSS over ``men_estimate``, 512 sources, L=2, 2-core CPU): a
    ring of 1M nodes: 494 MiB, estimate 737 MiB (unpacking the whole table: 1226 MiB)."""
    words = (num_sources + 63) // 64
    reach = ((num_nodes + 2 * num_edges) * (2 * words * 8 + 6 * _I64) + num_nodes * words * 8
             + min(num_nodes, 1 << 16) * words * 64 * 2)
    return sampling_bytes(num_nodes, num_edges, num_layers) + reach


def parse_bytes(num_bytes: int, num_cells: int) -> int:
    """Reading an uploaded CSV file of ``num_bytes`` bytes and ``num_cells`` cells into a
    graph (:func:`dropedge_core.data.csv_graph.parse_graph`): the text and its decoded
    copy, and per cell the Arrow strings of the split rows and the exploded cells, the
    float64 values, the float64 tensor normalised and the float32 features.

    Measured (growth of peak RSS over ``parse_graph``, 2-core CPU): a features file of
    1M rows x 1 column: 103 MiB, estimate 111 MiB; 200k x 10: 146 MiB, estimate 218 MiB;
    10M x 1 (19 MiB of text): 757 MiB, estimate 1.1 GiB."""
    return 2 * num_bytes + 112 * num_cells


def check(needed: int, what: str, hint: str = "") -> int:
    """Raise :class:`MemoryLimitError` when ``needed`` bytes exceed the limit.

    Args:
        needed: the estimate in bytes.
        what: what would need it, for the message ("training gcn L=8 on upload (N=...)").
        hint: what to change, appended to the message.

    Returns:
        ``needed``.
    """
    limit = limit_bytes()
    if needed > limit:
        more = f"; {hint}" if hint else ""
        raise MemoryLimitError(
            f"{what} would need about {human(needed)} of memory, above the limit of {human(limit)} "
            f"(DROPEDGE_MAX_MEMORY_GB){more}")
    return needed


__all__ = ["GIB", "MemoryLimitError", "check", "graph_bytes", "human", "limit_bytes", "men_bytes",
           "parse_bytes", "sampling_bytes", "training_bytes"]
