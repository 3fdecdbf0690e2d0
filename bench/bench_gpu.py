"""Benchmark: every GPU figure of issue 13 in one run (CUDA only).

1. Cora GCN (hidden 128) epoch time, NoDrop vs DropEdge++, L = 2 / 8 / 64, and the ratio
   (target <= 1.10 at L = 8).
2. Cora DropEdge++ masks + AN adjacencies at L = 64: CUDA vs this machine's CPU
   (target <= 2 ms on CUDA).
3. CSBM 100k nodes (~1.1M edges), L = 16: masks + adjacencies, CUDA vs CPU.
4. CSBM 1M nodes (~10.8M edges), L = 16: masks + adjacencies on CUDA; GCN-16 (hidden 64)
   epoch NoDrop vs DropEdge++ (target <= 1.10); peak GPU memory.

Epoch times are the trainer's own (``epoch_time`` events: sample + normalise + step +
evaluate, synchronised), median over the epochs after a warm-up. Masks + adjacencies
are ``sampler.sample`` + the trainer's ``AdjacencyBuilder``, synchronised, median of
repeats. On a machine without CUDA it prints one line and exits with status 2.

    python bench/bench_gpu.py [--epochs 30] [--repeats 20] [--skip-1m]
"""
from __future__ import annotations

import argparse
import statistics
import time

import torch

from dropedge_core import datasets, samplers
from dropedge_core.training import AdjacencyBuilder, TrainConfig, train

WARMUP = 5


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def masks_and_adjacencies(graph, num_layers: int, repeats: int, device: torch.device) -> float:
    """Median seconds of one epoch's DropEdge++ masks + AN adjacencies on ``device``."""
    g = graph if graph.x.device == device else graph.to(device)
    sampler = samplers.make("dropedge++", p_min=0.3, p_max=0.8)
    sampler.weights(g)
    builder = AdjacencyBuilder(g, "AN")
    gen = torch.Generator(device=device).manual_seed(0)
    times = []
    for i in range(repeats + 2):
        sync(device)
        t = time.perf_counter()
        builder(sampler.sample(g, num_layers, generator=gen))
        sync(device)
        if i >= 2:  # the first calls build the index tables and buffers
            times.append(time.perf_counter() - t)
    return statistics.median(times)


def epoch_time(graph, sampler: str, num_layers: int, hidden: int, epochs: int) -> float:
    """Median epoch time (s) of a GCN run on CUDA, after :data:`WARMUP` epochs."""
    config = TrainConfig(dataset=graph.name if graph.name in datasets.NAMES else "cora",
                         sampler=sampler, num_layers=num_layers, hidden=hidden, dropout=0.0,
                         lr=1e-3, weight_decay=0.0, self_loop=True, epochs=epochs + WARMUP,
                         patience=0, diag_every=0, device="cuda", seed=0)
    result = train(config, graph=graph)
    return statistics.median(e["epoch_time"] for e in result.history[WARMUP:])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--skip-1m", action="store_true", help="leave out the 1M-node graph")
    args = ap.parse_args(argv)
    if not torch.cuda.is_available():
        print("bench_gpu.py: no CUDA GPU here (torch.cuda.is_available() is False); "
              "run it on a machine with one")
        return 2
    torch.set_num_threads(1)
    cuda, cpu = torch.device("cuda"), torch.device("cpu")
    print(f"GPU: {torch.cuda.get_device_name(0)}, torch {torch.__version__}, CUDA {torch.version.cuda}")
    ok = True

    cora = datasets.load("cora", split="semi")
    print("1. Cora GCN (hidden 128) epoch, NoDrop vs DropEdge++:")
    for num_layers in (2, 8, 64):
        base = epoch_time(cora, "nodrop", num_layers, 128, args.epochs)
        ours = epoch_time(cora, "dropedge++", num_layers, 128, args.epochs)
        verdict = ""
        if num_layers == 8:
            verdict = "PASS" if ours / base <= 1.10 else "FAIL"
            verdict = f"  {verdict} (target <= 1.10x)"
            ok &= ours / base <= 1.10
        print(f"   L={num_layers:2d}: {base * 1e3:7.2f} vs {ours * 1e3:7.2f} ms  "
              f"({ours / base:.2f}x){verdict}")

    gpu = masks_and_adjacencies(cora, 64, args.repeats, cuda)
    host = masks_and_adjacencies(cora, 64, args.repeats, cpu)
    ok &= gpu <= 2e-3
    print(f"2. Cora DropEdge++ masks + AN adjacencies, L=64: {gpu * 1e3:.2f} ms CUDA vs "
          f"{host * 1e3:.2f} ms CPU (1 thread)  {'PASS' if gpu <= 2e-3 else 'FAIL'} (target <= 2 ms)")

    big = datasets.csbm(num_nodes=100_000, num_classes=3, p_intra=5.5e-4, p_inter=5e-5, num_features=60)
    gpu = masks_and_adjacencies(big, 16, args.repeats, cuda)
    host = masks_and_adjacencies(big, 16, max(2, args.repeats // 10), cpu)
    print(f"3. CSBM N={big.num_nodes:,} M={big.num_edges:,}, L=16 masks + adjacencies: "
          f"{gpu * 1e3:.1f} ms CUDA vs {host * 1e3:.0f} ms CPU")

    if not args.skip_1m:
        huge = datasets.csbm(num_nodes=1_000_000, num_classes=3, p_intra=5.5e-5, p_inter=5e-6,
                             num_features=60)
        torch.cuda.reset_peak_memory_stats()
        gpu = masks_and_adjacencies(huge, 16, max(3, args.repeats // 4), cuda)
        torch.cuda.empty_cache()
        base = epoch_time(huge, "nodrop", 16, 64, max(5, args.epochs // 3))
        ours = epoch_time(huge, "dropedge++", 16, 64, max(5, args.epochs // 3))
        peak = torch.cuda.max_memory_allocated() / 2**30
        ok &= ours / base <= 1.10
        print(f"4. CSBM N={huge.num_nodes:,} M={huge.num_edges:,}, L=16: masks + adjacencies "
              f"{gpu * 1e3:.1f} ms; GCN-16 (hidden 64) epoch {base * 1e3:.0f} vs {ours * 1e3:.0f} ms "
              f"({ours / base:.2f}x, {'PASS' if ours / base <= 1.10 else 'FAIL'}, target <= 1.10x); "
              f"peak GPU memory {peak:.1f} GiB")
    print("verdict:", "all targets met" if ok else "some targets missed")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
