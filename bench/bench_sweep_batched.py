"""Benchmark: a sweep with and without ``--batch-seeds``, through the sweep's own loop.

Runs per minute of one grid (samplers x ``--seeds`` seeds at one depth) trained by
:func:`dropedge_explorer.studies.sweep.run_claimed` into a fresh SQLite store, one run after
another and each cell's seeds in one batch, alternating ``--rounds`` times in one process
(so both see the same machine noise). Claims, renewals and store writes are counted, as a
sweep pays them. Every run trains exactly ``--epochs`` epochs (patience = epochs,
diagnostics off). ``bench/bench_batched.py`` times the trainer alone.

    python bench/bench_sweep_batched.py [--dataset cora] [--layers 8] [--epochs 10]
                                        [--samplers dropedge++] [--seeds 10] [--rounds 2]
                                        [--device cpu] [--threads 1]
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import torch
from dropedge_core import datasets

from dropedge_explorer.store import ResultStore
from dropedge_explorer.studies.sweep import run_claimed
from dropedge_explorer.sweep_workers import ClaimedRuns
from dropedge_explorer.training import TrainConfig


def _sweep(grid: list[TrainConfig], graph, batch: bool, folder: str) -> float:
    """Seconds of one sweep of ``grid`` into a new store under ``folder``."""
    store = ResultStore(Path(folder) / f"{'batched' if batch else 'single'}-{time.monotonic_ns()}.sqlite")
    start = time.perf_counter()
    out = run_claimed(ClaimedRuns(store, grid), store, graph, batch_seeds=batch)
    seconds = time.perf_counter() - start
    assert len(out.stored_keys) == len(grid)
    return seconds


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dataset", default="cora")
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--samplers", nargs="+", default=["dropedge++"])
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--device", default="cpu")
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    split = "semi" if args.dataset in ("cora", "citeseer", "pubmed") else None
    graph = datasets.load(args.dataset, split)
    grid = [TrainConfig(dataset=args.dataset, split=split, num_layers=args.layers, sampler=sampler, seed=seed,
                        epochs=args.epochs, patience=args.epochs, diag_every=0, device=args.device)
            for sampler in args.samplers for seed in range(args.seeds)]
    print(f"{args.dataset} L={args.layers}, {args.epochs} epochs, {len(grid)} runs "
          f"({len(args.samplers)} cell(s) x {args.seeds} seeds), {args.device}, {args.threads} thread(s)")
    with tempfile.TemporaryDirectory() as folder:
        for round_ in range(1, args.rounds + 1):
            single = _sweep(grid, graph, False, folder)
            batched = _sweep(grid, graph, True, folder)
            print(f"round {round_}: one by one {single:.1f} s ({60 * len(grid) / single:.1f} runs/min), "
                  f"seeds together {batched:.1f} s ({60 * len(grid) / batched:.1f} runs/min): "
                  f"{single / batched:.2f}x", flush=True)


if __name__ == "__main__":
    main()
