"""Benchmark: epoch cost of the PyG path vs the project's trainer on the same model (issue 26).

The model of ``examples/pyg_deep_gcn.py``: Cora (semi), a 16-layer GCN, hidden 128, the
self-feature term, AN, DropEdge++ 0.3 -> 0.8, the depth recipe's settings. One epoch =
a fresh sample, one training step, a full-graph evaluation (the trainer's epoch). Three
ways, interleaved in one process (rounds), each timed per epoch in process CPU time (the
machine is shared; wall time is printed beside it):

* ``trainer``: :func:`dropedge_explorer.training.train` (clock: its epoch events);
* ``pyg``: PyG ``GCNConv(cached=False)`` layers on ``LayerDropEdge``'s kept ``edge_index``
  (``gcn_norm`` in every layer) — the plain PyG way;
* ``pyg-adj``: the same layers with ``normalize=False`` on ``LayerDropEdge(normalization="AN")``'s
  normalised sparse adjacencies.

Prints the median per-epoch costs and the ratios to the trainer; the verdict is on the
plain ``pyg`` path (target <= 1.10x); exit 1 when missed.

``--section cache`` (issue 36) times one ``LayerDropEdge`` call (16 layers, DropEdge++, Cora)
when the cache hits (the same ``edge_index``), when an equal ``edge_index`` arrives in a
new tensor (content check, a hit), and when every call brings a new graph (a miss: the
mapping and the kernel weights rebuilt); and a mini-batch of 64 small graphs sampled
over the whole batch vs per graph (``batch=``).

    DROPEDGE_DATA=../shared/data python bench/bench_pyg.py [--epochs 20] [--rounds 3] [--layers 16]
        [--section epoch|cache|all] [--calls 20]
"""
from __future__ import annotations

import argparse
import importlib.util
import statistics
import time
from pathlib import Path

import torch
from dropedge_core import datasets
from dropedge_core.pyg import to_pyg

from dropedge_explorer.training import TrainConfig, train
from dropedge_explorer.training.trainer import prepare_features

TARGET = 1.10
WARMUP = 2  # first epochs of each run left out (allocations, caches)


def _example():
    path = Path(__file__).resolve().parent.parent / "examples" / "pyg_deep_gcn.py"
    spec = importlib.util.spec_from_file_location("pyg_deep_gcn", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Clock:
    """Per-epoch CPU and wall deltas between consecutive ticks."""

    def __init__(self) -> None:
        self.cpu, self.wall = [], []
        self.last = (time.process_time(), time.perf_counter())

    def tick(self, *_) -> None:
        now = (time.process_time(), time.perf_counter())
        self.cpu.append(now[0] - self.last[0])
        self.wall.append(now[1] - self.last[1])
        self.last = now


def _per_call(fn, calls: int) -> tuple[float, float]:
    """Median CPU and wall seconds of ``fn()`` over ``calls`` calls (after one warm-up)."""
    fn()
    cpu, wall = [], []
    for _ in range(calls):
        t = (time.process_time(), time.perf_counter())
        fn()
        cpu.append(time.process_time() - t[0])
        wall.append(time.perf_counter() - t[1])
    return statistics.median(cpu), statistics.median(wall)


def cache_and_batch(layers: int, calls: int) -> None:
    """What a cache hit, an equal new tensor, a miss and the batch path cost per call."""
    from dropedge_core.pyg import LayerDropEdge
    from torch_geometric.data import Batch, Data

    data = to_pyg(datasets.load("cora", split="semi"))
    ei, x = data.edge_index, data.x
    drop = LayerDropEdge(layers, "dropedge++", generator=torch.Generator().manual_seed(0))
    shuffled = [ei[:, torch.randperm(ei.size(1), generator=torch.Generator().manual_seed(s))]
                for s in range(calls + 1)]  # equal graphs, different columns: every call a miss
    turn = iter(range(10**9))
    rows = {
        "hit (same edge_index)": lambda: drop(ei, x=x),
        "equal edge_index, new tensor": lambda: drop(ei.clone(), x=x),
        "miss (a new graph every call)": lambda: drop(shuffled[next(turn) % len(shuffled)], x=x),
    }
    print(f"LayerDropEdge, Cora, {layers} layers, DropEdge++, {torch.get_num_threads()} thread(s), "
          f"median of {calls} calls")
    for name, fn in rows.items():
        cpu, wall = _per_call(fn, calls)
        print(f"  {name:32s} {cpu * 1e3:7.2f} ms CPU ({wall * 1e3:7.2f} ms wall)")
    gen = torch.Generator().manual_seed(1)
    graphs = []
    for _ in range(64):  # molecule-sized graphs: 10..30 nodes, about 2 edges per node
        n = int(torch.randint(10, 31, (1,), generator=gen))
        pairs = torch.randint(0, n, (2, 2 * n), generator=gen)
        graphs.append(Data(x=torch.rand(n, 16, generator=gen),
                           edge_index=torch.cat([pairs, pairs.flip(0)], dim=1), num_nodes=n))
    batch = Batch.from_data_list(graphs)
    small = LayerDropEdge(layers, "dropedge++", generator=torch.Generator().manual_seed(0))
    for name, kw in (("batch as one graph", {}), ("batch per graph (batch=)", {"batch": batch.batch})):
        cpu, wall = _per_call(lambda kw=kw: small(batch.edge_index, x=batch.x, **kw), calls)
        print(f"  {name:32s} {cpu * 1e3:7.2f} ms CPU ({wall * 1e3:7.2f} ms wall), 64 graphs, "
              f"{batch.num_nodes} nodes, {batch.edge_index.size(1)} columns")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--layers", type=int, default=16)
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--section", choices=["epoch", "cache", "all"], default="all")
    ap.add_argument("--calls", type=int, default=20)
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    if args.section in ("cache", "all"):
        cache_and_batch(args.layers, args.calls)
    if args.section == "cache":
        return 0
    example = _example()
    graph = datasets.load("cora", split="semi")
    data = to_pyg(graph)
    x_conv = prepare_features(data.x)
    config = TrainConfig(dataset="cora", split="semi", backbone="gcn", num_layers=args.layers,
                         sampler="dropedge++", epochs=args.epochs, patience=0, diag_every=0, device="cpu")
    cpu: dict[str, list[float]] = {"trainer": [], "pyg": [], "pyg-adj": []}
    wall: dict[str, list[float]] = {k: [] for k in cpu}
    for r in range(args.rounds):  # interleaved, so that all three see the same machine
        run = config.replace(seed=r)
        for name in cpu:
            clock = Clock()
            if name == "trainer":
                train(run, graph=graph, on_event=lambda e, c=clock: e["type"] == "epoch" and c.tick())
            else:
                example.fit_pyg("gcn", data, run, x_conv, adjacency=name == "pyg-adj", on_epoch=clock.tick)
            cpu[name] += clock.cpu[WARMUP:]
            wall[name] += clock.wall[WARMUP:]
    med = {k: statistics.median(v) for k, v in cpu.items()}
    med_wall = {k: statistics.median(v) for k, v in wall.items()}
    print(f"Cora semi, GCN-{args.layers} hidden {config.hidden} Loop {config.self_loop}, DropEdge++ "
          f"{config.p_min}->{config.p_max}, CPU, {torch.get_num_threads()} thread(s), "
          f"{args.rounds} rounds x {args.epochs - WARMUP} epochs")
    for name in cpu:
        print(f"  {name:8s} {med[name] * 1e3:7.1f} ms CPU/epoch ({med_wall[name] * 1e3:7.1f} ms wall), ratio "
              f"{med[name] / med['trainer']:.3f}x CPU, {med_wall[name] / med_wall['trainer']:.3f}x wall")
    ratio = med["pyg"] / med["trainer"]
    print(f"PyG path (GCNConv on kept edge_index) / trainer: {ratio:.3f}x CPU: "
          f"{'PASS' if ratio <= TARGET else 'FAIL'} (target <= {TARGET:.2f}x); "
          f"with normalised adjacencies: {med['pyg-adj'] / med['trainer']:.3f}x")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
