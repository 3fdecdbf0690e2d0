"""Benchmark: seeds in one batch against single runs (issue 37, item 5).

Runs per minute of ``S`` seeds trained one after the other (:func:`train`) and together
(:func:`train_seeds`), on Cora semi with GCN at the depth recipe's settings (default
GCN-32 and GCN-8), printed as a ratio. Single and batched alternate within one process
(``--rounds`` times), so both see the same machine noise; the ratio is of the medians.
Epochs are cut (``--epochs``, patience off, diagnostics off) so that a row takes minutes:
every run then trains exactly ``--epochs`` epochs, single or batched.

Memory per seed: the estimate (:func:`dropedge_explorer.training.check_memory`) and, on CUDA,
the measured peak of the batch divided by its seeds beside a single run's peak.

Target (a benchmark, not a test): batched >= 1.5x single throughput at 10 seeds, Cora
GCN-32, CPU with torch threads = 1.

    python bench/bench_batched.py [--layers 32 8] [--seeds 10] [--epochs 20] [--rounds 2]
                                  [--device cpu|cuda] [--threads 1]
"""
from __future__ import annotations

import argparse
import statistics
import time

import torch
from dropedge_core import datasets

from dropedge_explorer import memory
from dropedge_explorer.training import TrainConfig, check_memory, train
from dropedge_explorer.training.seed_batch import train_seeds

TARGET = 1.5
TARGET_LAYERS = 32


def _timed(fn, device: str) -> tuple[float, int]:
    """Seconds of ``fn()`` and its peak device memory (CUDA; 0 on the CPU)."""
    cuda = device.startswith("cuda")
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()
    t0 = time.perf_counter()
    fn()
    if cuda:
        torch.cuda.synchronize()
        return time.perf_counter() - t0, torch.cuda.max_memory_allocated() - before
    return time.perf_counter() - t0, 0


def row(graph, args, num_layers: int) -> float:
    """Print one depth's runs per minute, single and batched; return batched / single."""
    configs = [TrainConfig(dataset=args.dataset, backbone="gcn", num_layers=num_layers,
                           epochs=args.epochs, patience=0, diag_every=0, device=args.device, seed=seed)
               for seed in range(args.seeds)]
    single: list[float] = []
    batched: list[float] = []
    peaks = {"single": 0, "batched": 0}
    for _ in range(args.rounds):  # interleaved: both see the same load
        seconds, peak = _timed(lambda: [train(c, graph=graph) for c in configs], args.device)
        single.append(seconds)
        peaks["single"] = max(peaks["single"], peak)
        seconds, peak = _timed(lambda: train_seeds(configs, graph=graph), args.device)
        batched.append(seconds)
        peaks["batched"] = max(peaks["batched"], peak)
    rate_single = 60 * args.seeds / statistics.median(single)
    rate_batched = 60 * args.seeds / statistics.median(batched)
    c = configs[0]
    print(f"{graph.name} {c.split} GCN-{num_layers} (hidden {c.hidden}, dropout {c.dropout:g}, "
          f"Loop {c.self_loop}), "
          f"{args.seeds} seeds x {args.epochs} epochs, {args.device}, threads {torch.get_num_threads()}")
    print(f"   single : {rate_single:7.2f} runs/min  (rounds: {', '.join(f'{s:.1f} s' for s in single)})")
    print(f"   batched: {rate_batched:7.2f} runs/min  (rounds: {', '.join(f'{s:.1f} s' for s in batched)})")
    estimate = check_memory(c, graph)
    line = f"   memory per seed: estimate {memory.human(estimate)}"
    if peaks["batched"]:
        line += (f"; measured peak single {memory.human(peaks['single'])}, batched "
                 f"{memory.human(peaks['batched'] / args.seeds)} per seed")
    print(line)
    return rate_batched / rate_single


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", default="cora",
                    help="cora (the target's, semi split) or a small built-in graph (karate, csbm), where "
                         "per-operation overhead rather than arithmetic is the cost")
    ap.add_argument("--layers", type=int, nargs="+", default=[TARGET_LAYERS, 8])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--epochs", type=int, default=20, help="epochs per run (default 20: minutes, not hours)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--device", default="cpu", help="cpu | cuda")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    graph = datasets.load(args.dataset)
    for num_layers in args.layers:
        ratio = row(graph, args, num_layers)
        verdict = ""
        if (args.dataset, num_layers, args.seeds, args.device) == ("cora", TARGET_LAYERS, 10, "cpu"):
            verdict = f": {'PASS' if ratio >= TARGET else 'FAIL'} (target >= {TARGET:.1f}x)"
        print(f"   ratio batched / single {ratio:.2f}x{verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
