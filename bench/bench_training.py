"""Benchmark: training overhead of DropEdge++ over NoDrop (issue 7, target 2).

One GCN epoch on Cora (8 layers, hidden 128, CPU) with a fresh DropEdge++ sample and its
normalised adjacencies must cost at most 1.10x a NoDrop epoch (the paper reports 1.14x
on a GPU). Both are trained in this process, alternating, and compared by the median
epoch time; the sampling share of the DropEdge++ epoch is printed too. One row per
depth (default 8 and 64); the target applies at L = 8, the L = 64 row is recorded
(issue 28: the overhead grows with depth, 64 different sparse matrices per epoch
against NoDrop's one).

    python bench/bench_training.py [--layers 8 64] [--hidden 128] [--epochs 30] [--rounds 3]
"""
from __future__ import annotations

import argparse
import statistics

import torch
from dropedge_core import datasets

from dropedge_explorer.training import TrainConfig, train

TARGET = 1.10
TARGET_LAYERS = 8  # the depth the target is set at (issue 7)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", default="cora")
    ap.add_argument("--layers", type=int, nargs="+", default=[TARGET_LAYERS, 64])
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    graph = datasets.load(args.dataset)
    ok = True
    for num_layers in args.layers:
        ratio = row(graph, args, num_layers)
        if num_layers == TARGET_LAYERS:
            ok &= ratio <= TARGET
            print(f"   ratio {ratio:.3f}x: {'PASS' if ratio <= TARGET else 'FAIL'} (target <= {TARGET:.2f}x)")
        else:
            print(f"   ratio {ratio:.3f}x (recorded; the target is set at L = {TARGET_LAYERS})")
    return 0 if ok else 1


def row(graph, args, num_layers: int) -> float:
    """Print one depth's medians; return DropEdge++ / NoDrop."""
    times: dict[str, list[float]] = {"nodrop": [], "dropedge++": []}
    sample: list[float] = []
    for _ in range(args.rounds):  # alternate so both see the same machine noise
        for name in times:
            config = TrainConfig(dataset=args.dataset, backbone="gcn", num_layers=num_layers,
                                 sampler=name, hidden=args.hidden, epochs=args.epochs, patience=0,
                                 diag_every=0, device=args.device)
            result = train(config, graph=graph)
            epochs = result.history[2:]  # skip warm-up epochs
            times[name] += [e["epoch_time"] for e in epochs]
            if name == "dropedge++":
                sample += [e["sample_time"] for e in epochs]
    nodrop, plus = statistics.median(times["nodrop"]), statistics.median(times["dropedge++"])
    print(f"{args.dataset} GCN L={num_layers} hidden={args.hidden} on {result.device}: "
          f"nodrop {nodrop * 1e3:.1f} ms/epoch, dropedge++ {plus * 1e3:.1f} ms/epoch "
          f"(sampling + normalisation {statistics.median(sample) * 1e3:.2f} ms)")
    return plus / nodrop

if __name__ == "__main__":
    raise SystemExit(main())
