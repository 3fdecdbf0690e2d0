"""Memory estimates made before allocating, and the limit they are checked against.

A ten-byte edge list can name a ten-million-node graph and a one-row features file can be
millions of columns wide; a hidden width of 10^12 is one typed number. Each would ask for
gigabytes the moment a tensor is built. So the CLI and the app estimate what a run will
hold (graph, features, the ``L x M`` masks, the ``L`` adjacencies, the model with Adam's
state, the activations kept for the backward pass, the diagnostics) and refuse, with one
line, above the limit of the device it would run on (:func:`device_limit`): on the CPU
``$DROPEDGE_MAX_MEMORY_GB`` (default 8 GiB; :mod:`dropedge_explorer.env`), on a CUDA device
its free memory, capped by ``$DROPEDGE_MAX_GPU_MEMORY_GB`` when that is set.

The training estimate (:func:`training_bytes`) is calibrated against measured peaks
(``bench/calibrate_memory.py``, part of its grid in ``tests/training/test_memory.py``): within
0.7-1.5x, so that it neither refuses what fits (it said 38.2 GiB for a run that peaked at
8.1 GiB on an H100) nor lets through what does not. :func:`peak_bytes` measures a peak.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import torch
from dropedge_core.limits import MemoryLimitError, graph_bytes, human, set_memory_limit

from dropedge_explorer import env
from dropedge_explorer._lazy import lazy_import

T = TypeVar("T")

GIB = 1 << 30
_F32, _F64, _I64 = 4, 8, 8
#: What a run holds whatever its size (measured on karate, where nothing else counts: the
#: resident set grows by 0.6-1.1 MiB for a run whose tensors are under 0.5 MiB): the
#: allocator's arena, autograd's and the run's own Python objects.
RUN_OVERHEAD = 1 << 19


def limit_bytes() -> int:
    """The limit from ``$DROPEDGE_MAX_MEMORY_GB`` (raises :class:`~dropedge_explorer.env.EnvError`)."""
    return int(env.settings().max_memory_gb * GIB)


def sampling_bytes(num_nodes: int, num_edges: int, num_layers: int) -> int:
    """One draw of ``L x M`` masks with its temporaries (kernel weights, random keys and
    their sort order per layer), plus the ``L`` normalised adjacencies built from it.

    Args:
        num_nodes (int): the nodes :math:`N`.
        num_edges (int): the undirected edges :math:`M`.
        num_layers (int): the layers :math:`L` of a sample.
    """
    masks = num_layers * num_edges * (1 + 2 * _I64 + _F32)
    adjacencies = num_layers * (2 * num_edges + num_nodes) * 2 * _F32 + (2 * num_edges + num_nodes) * _I64
    return masks + adjacencies


def model_parameters(backbone: str, num_features: int, num_classes: int, num_layers: int, hidden: int,
                     self_loop: bool = False) -> int:
    """How many weights a backbone has (biases and batch norm left out: ``O(L h)``)."""
    loop = 2 if self_loop else 1  # the self-feature term doubles every graph convolution's weight
    c = max(num_classes, 1)
    if backbone == "appnp_star":
        return num_features * hidden + hidden * c
    if backbone == "jknet":
        return loop * (num_features * hidden + (num_layers - 1) * hidden * hidden) + num_layers * hidden * c
    if num_layers == 1:
        return loop * num_features * c
    return loop * (num_features * hidden + (num_layers - 2) * hidden * hidden + hidden * c)


def diagnostics_bytes(num_nodes: int, num_edges: int, num_layers: int, hidden: int,
                      device_type: str = "cpu", seeds: int = 1, keep: float = 1.0) -> int:
    """The diagnostics of one epoch (:func:`dropedge_explorer.training.trainer.diagnostics`).

    Held throughout: the evaluation pass's ``L`` hidden outputs (``N x h`` float32; of
    every seed of a batch). On top of them, one after the other (the peak is the largest):

    * the layer distances: the outputs stacked, and their differences (``2 L N h`` floats);
    * the Dirichlet energy: the scaled outputs, both ends of every undirected edge and
      their difference (``N h + 3 M h`` floats);
    * MAD: a float64 copy of the output and, over at most ``MAD_NODES`` nodes ``K``, its
      unit rows, the ``K x K`` product and distances (float64);
    * MEN over ``S`` sources (all ``N`` up to ``EXACT_ALLOWED_MAX_NODES``, else ``DEFAULT_SOURCES``): on
      the CPU the bit-packed reachability (``W = ceil(S / 64)`` words a row), either while a
      layer is gathered (the old and the reduced table, the gathered rows of every kept
      entry -- the ``N`` self-loops and the directions of a layer's sample: ``keep``, the
      largest share of edges a layer keeps, times ``2M`` -- and three index arrays over
      them) or while its bits are counted (the table and ``COUNT_ROWS`` rows unpacked
      to bytes); on CUDA three dense ``N x S`` floats and the ``L`` layer operators.
    """
    metrics = lazy_import("dropedge_core.metrics")
    n, m, h, e = num_nodes, num_edges, hidden, 2 * num_edges + num_nodes
    hidden_outputs = num_layers * n * h * _F32
    distances = 2 * hidden_outputs
    dirichlet = (n + 3 * m) * h * _F32
    k = min(n, metrics.MAD_NODES)
    mad = n * h * _F64 + 2 * k * h * _F64 + 3 * k * k * _F64
    sources = n if n <= metrics.EXACT_ALLOWED_MAX_NODES else metrics.DEFAULT_SOURCES
    if device_type == "cuda":
        men = 13 * n * sources + num_layers * e * 20
    else:
        row = (sources + 63) // 64 * 8
        entries = n + int(keep * 2 * m)
        gather = (entries + 2 * n) * row + entries * 3 * _I64
        count = n * row + min(n, metrics.COUNT_ROWS) * row * 8
        men = max(gather, count) + num_layers * 2 * m
    return seeds * hidden_outputs + max(distances, dirichlet, mad, men)


def training_bytes(num_nodes: int, num_edges: int, num_features: int, num_classes: int,
                   num_layers: int, hidden: int, *, backbone: str = "gcn", dropout: float = 0.5,
                   self_loop: bool = False, batch_norm: bool = False, diagnostics: bool = True,
                   device_type: str = "cpu", seeds: int = 1, keep: float = 1.0) -> int:
    """Peak bytes of a training run (:func:`dropedge_explorer.training.train`), or of ``seeds``
    seeds trained in one batch (:func:`dropedge_explorer.training.seed_batch.train_seeds`:
    the graph held once, everything else per seed but the diagnostics' temporaries,
    computed for one seed at a time). ``keep``: the largest share of the edges one layer
    of a sample keeps (the sampler's densest layer; 1, every edge, bounds every sampler).

    What lives through the run: the graph with its cached edge structures (the directed
    edge list, the CSR entries of every adjacency, the degree incidence), kernel weights,
    the ``L x M`` masks, the ``L`` adjacencies' values and the value table, the full
    adjacency, and the model's weights with gradients and Adam's two moments. On top of
    that, at different moments of an epoch, the larger of: the sampler's temporaries
    (``L x M`` keys); the activations autograd keeps for the backward pass (per layer and
    backbone: the output, the dropout mask and its output, batch norm's input, JKNet's
    concatenation) with the backward's gradients; Adam's step (two parameter-sized
    temporaries); the diagnostics
    (:func:`diagnostics_bytes`, when ``diagnostics``).

    Calibrated against measured peaks (``bench/calibrate_memory.py``, resident-set growth
    on the CPU): 0.83-1.24x over 44 cells of Cora and CSBM graphs, the four backbones,
    L 2-64, hidden 16-256, diagnostics on and off (docs/PERFORMANCE.md); the diagnostics'
    grid (karate to CSBM 20k, L 2-32, three samplers and 4 seeds in one batch, on and off)
    within 0.7-1.5x, kept so by ``tests/training/test_memory_diagnostics.py``; on CUDA it is
    1.02x the 8.1 GiB an H100 measured for a 1M-node GCN-16 (the script's CUDA section,
    ``torch.cuda.max_memory_allocated``, is still to be run on the rest of the grid).

    Args:
        num_nodes (int): the nodes :math:`N`.
        num_edges (int): the undirected edges :math:`M`.
        num_features (int): the feature width.
        num_classes (int): the classes.
        num_layers (int): the depth :math:`L`.
        hidden (int): the hidden width.
        backbone (str, optional): the backbone. (default: :obj:`"gcn"`)
        dropout (float, optional): the feature dropout (0: no dropout masks kept).
            (default: :obj:`0.5`)
        self_loop (bool, optional): the backbone's self-feature term (doubles each
            convolution's weight).
            (default: :obj:`False`)
        batch_norm (bool, optional): batch normalisation after every hidden layer.
            (default: :obj:`False`)
        diagnostics (bool, optional): the run computes diagnostics. (default: :obj:`True`)
        device_type (str, optional): ``"cpu"`` or ``"cuda"``. (default: :obj:`"cpu"`)
        seeds (int, optional): seeds trained in one batch. (default: :obj:`1`)
        keep (float, optional): the largest share of the edges one layer of a sample keeps.
            (default: :obj:`1.0`)
    """
    n, m, e = num_nodes, num_edges, 2 * num_edges + num_nodes
    width = max(hidden, num_classes)
    # features (and the sparse copy the trainer makes of bag-of-words ones); per edge the
    # undirected (16 B) and directed (32 B) lists, the CSR entries (2 x 16 B), their
    # directions and table rows (2 x 12 B) and the degree incidence (2 x 12 B): ~128 B
    graph = int(n * num_features * _F32 * 1.25) + 128 * m + 60 * n + m * _F32
    adjacency = num_layers * (e * _F32 + (m + n) * _F32 + m) + e * _F32
    params = model_parameters(backbone, num_features, num_classes, num_layers, hidden, self_loop)
    persistent = graph + seeds * (adjacency + params * _F32 * 4)
    sampling = num_layers * m * _F32 + 3 * n * num_layers * _F32 + 2 * m * _I64
    layer = n * width * _F32
    # APPNP* drops out only its input and output: its propagation steps keep no dropout masks
    dropped = dropout > 0 and backbone != "appnp_star"
    per_layer = 1.0 + (1.25 if dropped else 0.0) + (1.0 if batch_norm else 0.0)
    # gcn/resgcn: the last layer maps to the classes (its output is C wide, not hidden)
    hidden_layers = num_layers if backbone in ("jknet", "appnp_star") else num_layers - 1
    activations = hidden_layers * per_layer * layer + 3 * layer
    if backbone == "resgcn":  # the residual sums of the hidden -> hidden layers
        activations += max(hidden_layers - 1, 0) * layer
    if backbone == "jknet":  # the concatenation, its dropout and its gradient
        activations += num_layers * layer * (3.0 if dropout > 0 else 2.0)
    # Adam's step: its update and the squared gradients' root, one parameter-sized tensor each
    step = seeds * max(sampling, activations, params * _F32 * 2)
    diag = diagnostics_bytes(n, m, num_layers, width, device_type, seeds, keep) if diagnostics else 0
    return int(RUN_OVERHEAD + persistent + max(step, diag))


def men_bytes(num_nodes: int, num_edges: int, num_layers: int, num_sources: int) -> int:
    """MEN of one sample: the masks, and the bit-packed reachability of ``S`` sources
    (``N x S/64`` words, gathered once per kept entry of a layer, and the reduced table),
    its bits counted 65536 rows at a time (``metrics.COUNT_ROWS``), and the sort order
    of the ``N + 2M`` entries.

    Measured (growth of peak RSS over ``men_estimate``, 512 sources, L=2, 2-core CPU): a
    ring of 1M nodes: 494 MiB, estimate 737 MiB (unpacking the whole table: 1226 MiB).

    Args:
        num_nodes (int): the nodes :math:`N`.
        num_edges (int): the undirected edges :math:`M`.
        num_layers (int): the layers :math:`L` of the sample.
        num_sources (int): the sources :math:`S` of the reachability (``N`` when exact).
    """
    words = (num_sources + 63) // 64
    reach = ((num_nodes + 2 * num_edges) * (2 * words * 8 + 6 * _I64) + num_nodes * words * 8
             + min(num_nodes, 1 << 16) * words * 64 * 2)
    return sampling_bytes(num_nodes, num_edges, num_layers) + reach


def smoothing_bytes(num_nodes: int, num_edges: int, num_layers: int, num_features: int) -> int:
    """The over-smoothing curves of the app's home page
    (:func:`dropedge_explorer.studies.sampling.smoothing_spread`: three samplers' masks, ``L``
    propagations, the subspace projection and Dirichlet energy at every step), with the
    features projected to at most 64 columns.

    Measured (growth of peak RSS, 5 draws, 2-core CPU; estimate / real): in a long-lived
    process, 1M nodes and one edge, L=8: 1.3; rings of 100k-300k nodes, L=4-32, 1-200
    features: 1.2-1.7; 20k nodes x 1433 features: 1.8. In a fresh process with freed memory
    returned to the system (:func:`peak_bytes`'s way): 100k-node ring, L=4, 8 features: 2.9;
    300k, L=8: 2.0; 1M nodes and one edge, L=8: 1.9; 300k, L=16, 64 features: 2.4 — a
    conservative bound either way. (A 10M-node upload with one edge, L=8, grew the app by
    6.9 GB.)"""
    width = num_features + 6 * min(num_features, 64)
    return (num_nodes * (320 + 100 * num_layers) + num_edges * (200 + 180 * num_layers)
            + num_nodes * width * 5 + (64 << 20))  # + the tables' and pandas' own 20-30 MiB


def parse_bytes(num_bytes: int, num_cells: int) -> int:
    """Reading an uploaded CSV file of ``num_bytes`` bytes and ``num_cells`` cells into a
    graph (:func:`dropedge_explorer.data.csv_graph.parse_graph`): the text and its decoded
    copy, and per cell the Arrow strings of the split rows and the exploded cells, the
    float64 values, the float64 tensor normalised and the float32 features.

    Measured (growth of peak RSS over ``parse_graph``, 2-core CPU): a features file of
    1M rows x 1 column: 103 MiB, estimate 111 MiB; 200k x 10: 146 MiB, estimate 218 MiB;
    10M x 1 (19 MiB of text): 757 MiB, estimate 1.1 GiB.

    Args:
        num_bytes (int): the file's size in bytes.
        num_cells (int): its cells (rows × columns).
    """
    return 2 * num_bytes + 112 * num_cells


def device_limit(device: torch.device | str | None = None) -> tuple[int, str]:
    """The bytes a computation on ``device`` may ask for, and where that limit comes from.

    The CPU (and ``None``): ``$DROPEDGE_MAX_MEMORY_GB`` (host RAM). A CUDA device: its free
    memory now (``torch.cuda.mem_get_info``: what other processes and this one's cache hold
    is not free), capped by ``$DROPEDGE_MAX_GPU_MEMORY_GB`` when that is set: a host-RAM
    limit says nothing about an 80 GB card.

    Args:
        device (torch.device or str, optional): the device (``None``: the CPU).
            (default: :obj:`None`)

    Raises:
        EnvError: a bad variable.
    """
    settings = env.settings()
    device = torch.device("cpu") if device is None else torch.device(device)
    if device.type != "cuda":
        return int(settings.max_memory_gb * GIB), "DROPEDGE_MAX_MEMORY_GB"
    free, total = torch.cuda.mem_get_info(device)
    where = f"free on {device} of {human(total)}"
    cap = settings.max_gpu_memory_gb
    if cap is not None and cap * GIB < free:
        return int(cap * GIB), f"DROPEDGE_MAX_GPU_MEMORY_GB; {human(free)} {where}"
    return int(free), where + (f", under DROPEDGE_MAX_GPU_MEMORY_GB = {cap:g}" if cap is not None else "")


def check(needed: int, what: str, hint: str = "", device: torch.device | str | None = None) -> int:
    """Raise :class:`MemoryLimitError` when ``needed`` bytes exceed ``device``'s limit
    (:func:`device_limit`: RAM under ``$DROPEDGE_MAX_MEMORY_GB`` on the CPU, the free
    memory of a CUDA device).

    Args:
        needed (int): the estimate in bytes.
        what (str): what would need it, for the message ("training gcn L=8 on upload
            (N=...)").
        hint (str, optional): what to change, appended to the message. (default: :obj:`""`)
        device (torch.device or str, optional): where it would be allocated; ``None``: the
            CPU. (default: :obj:`None`)

    Returns:
        ``needed``.
    """
    limit, source = device_limit(device)
    if needed > limit:
        more = f"; {hint}" if hint else ""
        kind = "memory" if device is None or torch.device(device).type == "cpu" else f"{device} memory"
        raise MemoryLimitError(
            f"{what} would need about {human(needed)} of {kind}, above the limit of {human(limit)} "
            f"({source}){more}")
    return needed


def _proc_status_bytes(field: str) -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise OSError(f"no {field} in /proc/self/status")


def peak_bytes(fn: Callable[[], T], device: torch.device | str | None = None) -> tuple[T, int]:
    """Run ``fn()``; return its result and the peak growth of memory while it ran.

    A CUDA device: ``torch.cuda.max_memory_allocated`` above what was allocated before
    (tensors only; the caching allocator's reserve and the CUDA context are not counted).
    The CPU: the growth of the resident set's high-water mark (Linux ``/proc``: the mark is
    reset to the current resident set first). Run it in a fresh process with
    ``MALLOC_MMAP_THRESHOLD_`` set, so that freed tensors go back to the system and a
    later tensor does not reuse a cached heap unseen (``bench/calibrate_memory.py``).

    Args:
        fn (Callable[[], T]): the computation measured.
        device (torch.device or str, optional): where it allocates (``None``: the CPU).
            (default: :obj:`None`)
    """
    device = torch.device("cpu") if device is None else torch.device(device)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        before = torch.cuda.memory_allocated(device)
        torch.cuda.reset_peak_memory_stats(device)
        result = fn()
        torch.cuda.synchronize(device)
        return result, torch.cuda.max_memory_allocated(device) - before
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")  # VmHWM := VmRSS
    before = _proc_status_bytes("VmRSS")
    result = fn()
    return result, _proc_status_bytes("VmHWM") - before


__all__ = ["MemoryLimitError", "check", "device_limit", "graph_bytes", "human",
           "limit_bytes", "men_bytes", "parse_bytes", "peak_bytes", "sampling_bytes",
           "training_bytes"]


def _library_rule(device: torch.device) -> tuple[int, str]:
    # the library's own refusals (a raw file's claimed size, a PyG graph's ids) follow the
    # explorer's limit wherever the explorer runs: one limit for a run, whoever checks it
    return device_limit(device)


set_memory_limit(_library_rule)
