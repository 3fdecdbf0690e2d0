"""Benchmark: every GPU figure of issue 13 in one run (CUDA only).

1. Cora GCN (hidden 128) epoch time, NoDrop vs DropEdge++, L = 2 / 8 / 64, and the ratio
   (target <= 1.10 at L = 8).
2. Cora DropEdge++ masks + AN adjacencies at L = 64: CUDA vs this machine's CPU
   (target <= 2 ms on CUDA).
3. CSBM 100k nodes (~1.1M edges), L = 16: masks + adjacencies, CUDA vs CPU.
4. CSBM 1M nodes (~10.8M edges), L = 16: masks + adjacencies on CUDA; GCN-16 (hidden 64)
   epoch NoDrop vs DropEdge++ (target <= 1.10); peak GPU memory of the DropEdge++ run beside
   the memory estimate (``memory.training_bytes``).

Epoch times are the trainer's own (``epoch_time`` events: sample + normalise + step +
evaluate, synchronised), median over the epochs after a warm-up. Masks + adjacencies
are ``sampler.sample`` + the trainer's ``AdjacencyBuilder``, synchronised, median of
repeats. Each section runs on its own: one that fails (out of memory, an error) is
reported and the others still run; ``--json PATH`` writes every section's figures (or its
error) to PATH, after each section. On a machine without CUDA it prints one line and
exits with status 2.

    python bench/bench_gpu.py [--epochs 30] [--repeats 20] [--skip-1m] [--json gpu.json]
"""
from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import torch
from dropedge_core import datasets, samplers
from dropedge_core.normalization import AdjacencyBuilder

from dropedge_explorer import memory
from dropedge_explorer.training import TrainConfig, train

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


def section_epochs(args, figures: dict) -> bool:
    """1. Cora GCN (hidden 128) epochs, NoDrop vs DropEdge++, L = 2 / 8 / 64."""
    cora = datasets.load("cora", split="semi")
    ok = True
    for num_layers in (2, 8, 64):
        base = epoch_time(cora, "nodrop", num_layers, 128, args.epochs)
        ours = epoch_time(cora, "dropedge++", num_layers, 128, args.epochs)
        figures[f"L{num_layers}"] = {"nodrop_ms": base * 1e3, "dropedge_plus_ms": ours * 1e3,
                                     "ratio": ours / base}
        verdict = ""
        if num_layers == 8:
            ok = ours / base <= 1.10
            verdict = f"  {'PASS' if ok else 'FAIL'} (target <= 1.10x)"
        print(f"   L={num_layers:2d}: {base * 1e3:7.2f} vs {ours * 1e3:7.2f} ms  "
              f"({ours / base:.2f}x){verdict}", flush=True)
    return ok


def section_cora_sampling(args, figures: dict) -> bool:
    """2. Cora DropEdge++ masks + AN adjacencies at L = 64, CUDA vs CPU."""
    cora = datasets.load("cora", split="semi")
    gpu = masks_and_adjacencies(cora, 64, args.repeats, torch.device("cuda"))
    host = masks_and_adjacencies(cora, 64, args.repeats, torch.device("cpu"))
    figures.update(cuda_ms=gpu * 1e3, cpu_ms=host * 1e3)
    print(f"   {gpu * 1e3:.2f} ms CUDA vs {host * 1e3:.2f} ms CPU (1 thread)  "
          f"{'PASS' if gpu <= 2e-3 else 'FAIL'} (target <= 2 ms)")
    return gpu <= 2e-3


def section_csbm_100k(args, figures: dict) -> bool:
    """3. CSBM 100k nodes, L = 16: masks + adjacencies, CUDA vs CPU."""
    big = datasets.csbm(num_nodes=100_000, num_classes=3, p_intra=5.5e-4, p_inter=5e-5, num_features=60)
    gpu = masks_and_adjacencies(big, 16, args.repeats, torch.device("cuda"))
    host = masks_and_adjacencies(big, 16, max(2, args.repeats // 10), torch.device("cpu"))
    figures.update(nodes=big.num_nodes, edges=big.num_edges, cuda_ms=gpu * 1e3, cpu_ms=host * 1e3)
    print(f"   N={big.num_nodes:,} M={big.num_edges:,}: {gpu * 1e3:.1f} ms CUDA vs {host * 1e3:.0f} ms CPU")
    return True


def section_csbm_1m(args, figures: dict) -> bool:
    """4. CSBM 1M nodes, L = 16: masks + adjacencies; GCN-16 (hidden 64) epochs; peak memory
    against the memory estimate."""
    huge = datasets.csbm(num_nodes=1_000_000, num_classes=3, p_intra=5.5e-5, p_inter=5e-6, num_features=60)
    torch.cuda.reset_peak_memory_stats()
    gpu = masks_and_adjacencies(huge, 16, max(3, args.repeats // 4), torch.device("cuda"))
    torch.cuda.empty_cache()
    base = epoch_time(huge, "nodrop", 16, 64, max(5, args.epochs // 3))
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    ours = epoch_time(huge, "dropedge++", 16, 64, max(5, args.epochs // 3))
    peak = torch.cuda.max_memory_allocated()
    estimate = memory.training_bytes(huge.num_nodes, huge.num_edges, huge.num_features, huge.num_classes,
                                     16, 64, self_loop=True, dropout=0.0, diagnostics=False,
                                     device_type="cuda")
    figures.update(nodes=huge.num_nodes, edges=huge.num_edges, sampling_ms=gpu * 1e3,
                   nodrop_ms=base * 1e3, dropedge_plus_ms=ours * 1e3, ratio=ours / base,
                   peak_gib=peak / 2**30, estimate_gib=estimate / 2**30)
    print(f"   N={huge.num_nodes:,} M={huge.num_edges:,}: masks + adjacencies {gpu * 1e3:.1f} ms; "
          f"GCN-16 (hidden 64) epoch {base * 1e3:.0f} vs {ours * 1e3:.0f} ms ({ours / base:.2f}x, "
          f"{'PASS' if ours / base <= 1.10 else 'FAIL'}, target <= 1.10x); peak GPU memory of the "
          f"DropEdge++ run {peak / 2**30:.1f} GiB, estimated {estimate / 2**30:.1f} GiB "
          f"({estimate / peak:.2f}x)")
    return ours / base <= 1.10


SECTIONS = {"cora_epochs": section_epochs, "cora_sampling_L64": section_cora_sampling,
            "csbm_100k": section_csbm_100k, "csbm_1m": section_csbm_1m}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--skip-1m", action="store_true", help="leave out the 1M-node graph")
    ap.add_argument("--json", metavar="PATH", help="write every section's figures (or its error) here")
    args = ap.parse_args(argv)
    if not torch.cuda.is_available():
        print("bench_gpu.py: no CUDA GPU here (torch.cuda.is_available() is False); "
              "run it on a machine with one")
        return 2
    torch.set_num_threads(1)
    report = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "cuda": torch.version.cuda,
              "sections": {}}
    print(f"GPU: {report['gpu']}, torch {report['torch']}, CUDA {report['cuda']}")
    ok = True
    for number, (name, section) in enumerate(SECTIONS.items(), 1):
        if name == "csbm_1m" and args.skip_1m:
            continue
        print(f"{number}. {section.__doc__.splitlines()[0].split('. ', 1)[1]}", flush=True)
        figures: dict = {}
        try:  # a section that fails (out of memory, a bug) does not lose the others
            passed = section(args, figures)
        except Exception as exc:
            figures["error"] = f"{type(exc).__name__}: {exc}".splitlines()[0][:500]
            print(f"   FAILED: {figures['error']}", flush=True)
            passed = False
        finally:
            torch.cuda.empty_cache()
        figures["passed"] = passed
        report["sections"][name] = figures
        ok &= passed
        if args.json:  # written after every section: a crash later keeps what was measured
            Path(args.json).write_text(json.dumps(report, indent=1))
    print("verdict:", "all targets met" if ok else "some targets missed")
    return 0 if ok else 1

if __name__ == "__main__":
    raise SystemExit(main())
