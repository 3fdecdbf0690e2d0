"""Benchmark: a layer-wise sample of a fresh graph per call vs PyG's ``dropout_edge`` (issue 46).

A PyG user calls the sampler once per step, often on a new graph (a mini-batch, a
NeighborLoader subgraph, a feature dropout's new ``x``). Cora, ``L`` layers (default 16),
one CPU thread, CPU time per call (the machine is shared), the median over ``--calls``
calls, the ways interleaved in rounds so that all see the same machine:

* ``fresh``: :func:`~dropedge_core.pyg.layer_dropout_edge` given a fresh graph every call
  (the columns of ``edge_index`` permuted, ``x`` cloned), for DropEdge, LI and DropEdge++;
  the reference is what a PyG user writes today: ``L`` calls of
  :func:`torch_geometric.utils.dropout_edge` (``p = 0.45``, the default rates' mean);
* ``cached``: :class:`~dropedge_core.pyg.LayerDropEdge` called with the same ``edge_index``
  and ``x`` every time (the cache hits), against the same reference;
* ``floor``: what no sampler's call can go below, measured beside them (no target): the
  ``L`` column selections from fixed masks that every layer-wise call returns, and the
  mapping of a fresh ``edge_index`` onto undirected edges (with ``x``: its check and row
  norms, which the kernel samplers read), and LI's ``(L, M)`` float64 uniforms (its stream);
* ``batch``: a mini-batch of 64 small graphs (10..30 nodes) with ``batch=`` (every graph
  keeps its own share) against the same batch drawn as one graph, per sampler.

Prints every time and every ratio measured in this one run, and each against the issue's
target (fresh <= 1.0x, cached <= 0.5x, batch <= 1.5x); it only reports (exit 0).
``--section compile`` counts the graph breaks of a training-mode call of a small GCN under
``torch._dynamo.explain``, with ``dropout_edge`` and with ``LayerDropEdge``.

    DROPEDGE_DATA=../shared/data python bench/bench_pyg_fresh.py [--layers 16] [--calls 40]
        [--section fresh|batch|compile|all]
"""
from __future__ import annotations

import argparse
import statistics
import time

import torch
from dropedge_core import datasets
from dropedge_core.pyg import EdgeIndexer, LayerDropEdge, layer_dropout_edge, to_pyg
from torch_geometric.data import Batch, Data
from torch_geometric.utils import dropout_edge

SAMPLERS = ("dropedge", "li", "dropedge++")
BATCH_SAMPLERS = ("dropedge", "li", "lid", "ldd", "dropedge++")
TARGETS = {"fresh": 1.0, "cached": 0.5, "batch": 1.5}
DROP = 0.45  # PyG's drop probability matching the default keep rates' mean (0.3 + 0.8) / 2


def _interleaved(fns: dict, calls: int) -> dict[str, float]:
    """Median CPU seconds per call of each ``fns[name](i)``, the names taking turns call by
    call (after one warm-up call each)."""
    for fn in fns.values():
        fn(0)
    times: dict[str, list[float]] = {name: [] for name in fns}
    for i in range(1, calls + 1):
        for name, fn in fns.items():
            t = time.process_time()
            fn(i)
            times[name].append(time.process_time() - t)
    return {name: statistics.median(v) for name, v in times.items()}


def _verdict(ratio: float, target: float) -> str:
    return f"{ratio:6.2f}x {'meets' if ratio <= target else 'MISSES'} <= {target}x"


def fresh_and_cached(layers: int, calls: int) -> None:
    """Fresh-graph and cached calls on Cora against ``layers`` x ``dropout_edge``."""
    data = to_pyg(datasets.load("cora"))
    ei, x = data.edge_index, data.x
    inputs = []
    for s in range(calls + 1):  # fresh graphs made before timing: equal graphs, new tensors
        perm = torch.randperm(ei.size(1), generator=torch.Generator().manual_seed(s))
        inputs.append((ei[:, perm], x.clone()))
    gen = torch.Generator().manual_seed(0)
    fns = {"dropout_edge": lambda i: [dropout_edge(inputs[i][0], p=DROP) for _ in range(layers)]}
    for name in SAMPLERS:
        fns[f"fresh {name}"] = (lambda i, name=name: layer_dropout_edge(
            inputs[i][0], layers, x=inputs[i][1], sampler=name, generator=gen))
    for name in SAMPLERS:
        module = LayerDropEdge(layers, name, generator=torch.Generator().manual_seed(0))
        fns[f"cached {name}"] = lambda i, m=module: m(ei, x=x)
    # what every layer-wise sampler hands back, L kept edge_index tensors, selected from
    # fixed masks: no sampler drawing L edge sets can cost less (a floor, no target)
    kept = torch.stack([m for _, m in layer_dropout_edge(ei, layers, sampler="li", generator=gen)])
    fns["floor: the L selections alone"] = lambda i: [ei[:, row] for row in kept]
    # what every fresh-graph call pays before drawing: the mapping of its edge_index onto
    # undirected edges (one sort/unique), and for the kernel samplers x's check and row norms
    n = x.size(0)
    fns["floor: a fresh graph's mapping"] = lambda i: EdgeIndexer(inputs[i][0], n)
    fns["floor: the mapping with x"] = lambda i: EdgeIndexer(inputs[i][0], n, inputs[i][1])
    # LI's stream draws an (L, M) float64 uniform row per layer before selecting from them
    m = EdgeIndexer(ei, n).undirected.size(1)
    fns["floor: LI's (L, M) uniforms"] = lambda i: torch.rand((layers, m), generator=gen, dtype=torch.float64)
    med = _interleaved(fns, calls)
    ref = med["dropout_edge"]
    print(f"Cora ({ei.size(1)} columns, x {tuple(x.shape)}), {layers} layers, "
          f"{torch.get_num_threads()} thread(s), median CPU time of {calls} calls")
    print(f"  {layers} x dropout_edge(p={DROP})            {ref * 1e3:7.2f} ms")
    for name in fns:
        if name == "dropout_edge":
            continue
        kind = name.split()[0]
        verdict = (f"{med[name] / ref:6.2f}x (no target)" if kind == "floor:"
                   else _verdict(med[name] / ref, TARGETS[kind]))
        print(f"  {name:36s} {med[name] * 1e3:7.2f} ms  {verdict}")


def _small_batch() -> Batch:
    gen = torch.Generator().manual_seed(1)
    graphs = []
    for _ in range(64):  # molecule-sized graphs: 10..30 nodes, about 2 edges per node
        n = int(torch.randint(10, 31, (1,), generator=gen))
        pairs = torch.randint(0, n, (2, 2 * n), generator=gen)
        graphs.append(Data(x=torch.rand(n, 16, generator=gen),
                           edge_index=torch.cat([pairs, pairs.flip(0)], dim=1), num_nodes=n))
    return Batch.from_data_list(graphs)


def mini_batch(layers: int, calls: int) -> None:
    """``batch=`` (per-graph keep counts) against the whole batch as one graph, cached module."""
    batch = _small_batch()
    fns = {}
    for name in BATCH_SAMPLERS:
        module = LayerDropEdge(layers, name, generator=torch.Generator().manual_seed(0))
        fns[f"{name} whole"] = lambda i, m=module: m(batch.edge_index, x=batch.x)
        fns[f"{name} batch="] = lambda i, m=module: m(batch.edge_index, x=batch.x, batch=batch.batch)
    med = _interleaved(fns, calls)
    print(f"Mini-batch of 64 graphs ({batch.num_nodes} nodes, {batch.edge_index.size(1)} columns), "
          f"{layers} layers, LayerDropEdge (cached), median CPU time of {calls} calls")
    for name in BATCH_SAMPLERS:
        whole, per = med[f"{name} whole"], med[f"{name} batch="]
        print(f"  {name:12s} whole {whole * 1e3:7.2f} ms, batch= {per * 1e3:7.2f} ms  "
              f"{_verdict(per / whole, TARGETS['batch'])}")


def compile_breaks(layers: int = 4) -> None:
    """Graph breaks under ``torch._dynamo.explain`` of one training-mode call of a small GCN
    (40-node ring, ``layers`` layers) fed by ``dropout_edge`` or by ``LayerDropEdge`` (torch's
    global random source, as ``dropout_edge`` draws; and with a ``torch.Generator``, which
    dynamo cannot hold in a graph), then the graphs compiled over 20 calls with graphs of 20
    sizes under ``dynamic=True`` (the eager backend: tracing is what is counted)."""
    from torch._dynamo.utils import counters
    from torch_geometric.nn import GCNConv

    def ring(n: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
        g = torch.Generator().manual_seed(seed)
        src = torch.arange(n)
        pairs = torch.cat([torch.stack([src, (src + 1) % n]), torch.randint(0, n, (2, n), generator=g)], 1)
        return torch.cat([pairs, pairs.flip(0)], 1), torch.rand(n, 8, generator=g)

    class Model(torch.nn.Module):
        def __init__(self, sampler: str | None, seeded: bool = False):
            super().__init__()
            self.convs = torch.nn.ModuleList([GCNConv(8, 8) for _ in range(layers)])
            self.drop = None if sampler is None else LayerDropEdge(
                layers, sampler, generator=torch.Generator().manual_seed(0) if seeded else None)

        def forward(self, x, edge_index):
            kept = ([dropout_edge(edge_index, p=DROP, training=self.training)[0] for _ in range(layers)]
                    if self.drop is None else self.drop(edge_index, x=x))
            for conv, e in zip(self.convs, kept):
                x = conv(x, e).relu()
            return x

    edge_index, x = ring(40)
    print(f"Graph breaks of one training-mode call, GCN-{layers} on a 40-node graph (torch._dynamo.explain); "
          "graphs compiled after 2 warm-up calls and after 22 (dynamic=True, graphs of 22 sizes)")
    for name in (None, "dropedge", "li", "lid", "dropedge++"):
        row = []
        for seeded in ((False, True) if name else (False,)):
            torch._dynamo.reset()
            row.append(torch._dynamo.explain(Model(name, seeded).train())(x, edge_index).graph_break_count)
        torch._dynamo.reset()
        counters.clear()
        model = torch.compile(Model(name).train(), dynamic=True, backend="eager")
        for i in range(22):
            model(*reversed(ring(30 + 7 * i, seed=i)))
            if i == 1:
                warm = counters["stats"]["unique_graphs"]
        seeded_note = f", with a torch.Generator {row[1]}" if name else ""
        print(f"  {name or 'dropout_edge':14s} breaks {row[0]}{seeded_note}; graphs {warm} -> "
              f"{counters['stats']['unique_graphs']}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--layers", type=int, default=16)
    ap.add_argument("--calls", type=int, default=40)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--section", choices=["fresh", "batch", "compile", "all"], default="all")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    if args.section in ("fresh", "all"):
        fresh_and_cached(args.layers, args.calls)
    if args.section in ("batch", "all"):
        mini_batch(args.layers, args.calls)
    if args.section == "compile":  # minutes of tracing: only when asked
        compile_breaks()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
