"""Calibration: the training memory estimate against measured peaks (issue 28, item 2).

For every cell of a grid (graph × backbone × L × hidden) one DropEdge++ run of the depth
recipe (2 epochs; with diagnostics at the last, or none) is measured and set beside
:func:`dropedge_explorer.memory.training_bytes`; the target is 0.7 <= estimate / peak <= 1.5.

* CPU: each cell in a fresh process (``MALLOC_MMAP_THRESHOLD_`` fixed, so that freed
  tensors go back to the system and the resident set follows the tensors), after a
  one-epoch warm-up on karate that loads the code paths; the peak is the growth of the
  resident set's high-water mark during ``train`` plus the graph's own tensors (built
  before the mark is reset).
* CUDA (where there is one): in this process, ``torch.cuda.max_memory_allocated`` during
  ``train`` (the graph is copied to the device inside it).

    python bench/calibrate_memory.py [--grid small|full|diagnostics] [--device cpu|cuda|both]
                                     [--json out.json]
    python bench/calibrate_memory.py --one '{"graph": "cora", "backbone": "gcn", "layers": 8, "hidden": 64}'

``--grid full`` is Cora (where ``DROPEDGE_DATA`` has it), CSBM 5k and 20k on the CPU
(plus 100k and 1M nodes on CUDA) × the four backbones × L 2/8/16/64 × hidden 16/64/256 ×
diagnostics on / off;
``small`` is the part ``tests/training/test_memory.py`` runs. ``--grid diagnostics`` is the
grid of the diagnostics' peak: karate, Cora, CSBM 5k and 20k × GCN at L 2 (hidden 256), 8
and 32 (hidden 64) × the samplers NoDrop, DropEdge and DropEdge++ (one seed) and DropEdge++
with 4 seeds in one batch (``train_seeds``; the estimate ``training_bytes(seeds=4)``) ×
diagnostics on / off; ``--markdown`` prints its table for docs/PERFORMANCE.md
(``docs/tools/memory_table.py`` writes it there). Exit status 1 when a cell is outside
the target.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import torch
from dropedge_core import datasets
from dropedge_core.models import BACKBONES

from dropedge_explorer import memory
from dropedge_explorer.training import TrainConfig, train
from dropedge_explorer.training.checks import keep_share
from dropedge_explorer.training.seed_batch import train_seeds

REPO = Path(__file__).resolve().parent.parent
LOW, HIGH = 0.7, 1.5
#: the CSBM sizes of the grid: average degree ~10, 60 features (bench_gpu.py's shapes)
CSBM = {"csbm:5000": 5000, "csbm:20000": 20_000, "csbm:100000": 100_000, "csbm:1000000": 1_000_000}
#: the part of the grid ``tests/training/test_memory.py`` runs: each backbone once, at another depth and width
SMALL = [("csbm:5000", "gcn", 2, 256, True), ("csbm:5000", "resgcn", 64, 16, False),
         ("csbm:5000", "jknet", 16, 64, False), ("csbm:5000", "appnp_star", 64, 64, True)]
#: a cell: (graph, backbone, L, hidden, diagnostics[, sampler, seeds in one batch])
Cell = tuple
DEFAULT_SAMPLER, DEFAULT_SEEDS = "dropedge++", 1


def diagnostics_grid() -> list[Cell]:
    """The diagnostics' grid (module docstring): each graph × depth × (sampler, seeds) × on/off."""
    runs = [("nodrop", 1), ("dropedge", 1), ("dropedge++", 1), ("dropedge++", 4)]
    return [(g, "gcn", layers, hidden, diag, sampler, seeds)
            for g in ("karate", "cora", "csbm:5000", "csbm:20000")
            for layers, hidden in ((2, 256), (8, 64), (32, 64))
            for sampler, seeds in runs for diag in (True, False)]


def _full_cell(cell: Cell) -> tuple[str, str, int, int, bool, str, int]:
    return tuple(cell) + (DEFAULT_SAMPLER, DEFAULT_SEEDS)[len(cell) - 5:]


def full_grid(device: str) -> list[tuple[str, str, int, int, bool]]:
    graphs = ["cora", "csbm:5000", "csbm:20000"]
    if device == "cuda":
        graphs += ["csbm:100000", "csbm:1000000"]
    return [(g, b, layers, hidden, diag) for g in graphs for b in BACKBONES for layers in (2, 8, 16, 64)
            for hidden in (16, 64, 256) for diag in (False, True)]


def load(name: str):
    if name in CSBM:
        n = CSBM[name]
        return datasets.csbm(num_nodes=n, num_classes=3, p_intra=27.5 / n, p_inter=2.5 / n, num_features=60)
    return datasets.load(name)


def config(graph_name: str, backbone: str, layers: int, hidden: int, device: str,
           diagnostics: bool = True, sampler: str = DEFAULT_SAMPLER) -> TrainConfig:
    dataset = graph_name.split(":")[0]
    return TrainConfig(dataset=dataset, sampler=sampler, backbone=backbone, num_layers=layers,
                       hidden=hidden, epochs=2, patience=0, diag_every=2 if diagnostics else 0, device=device,
                       seed=0)


def estimate(graph, cfg: TrainConfig, seeds: int = 1) -> int:
    """The shipped estimate of ``cfg`` on ``graph`` (anything with ``num_nodes``,
    ``num_edges``, ``num_features``, ``num_classes``), as the trainer's check makes it."""
    return memory.training_bytes(graph.num_nodes, graph.num_edges, graph.num_features, graph.num_classes,
                                 cfg.num_layers, cfg.hidden, backbone=cfg.backbone, dropout=cfg.dropout,
                                 self_loop=cfg.self_loop, batch_norm=cfg.batch_norm,
                                 diagnostics=cfg.diag_every > 0, device_type=torch.device(cfg.device).type,
                                 seeds=seeds, keep=keep_share(cfg, graph))


def graph_tensor_bytes(graph) -> int:
    return sum(t.numel() * t.element_size() for t in (graph.x, graph.y, graph.undirected_edges,
                                                       graph.train_mask, graph.val_mask, graph.test_mask))


def measure_here(cell: Cell, device: str) -> dict:
    """Measure one cell in this process (the child of :func:`measure_cpu`, or on CUDA)."""
    graph_name, backbone, layers, hidden, diagnostics, sampler, seeds = _full_cell(cell)
    torch.set_num_threads(1)
    cfg = config(graph_name, backbone, layers, hidden, device, diagnostics, sampler)
    if device == "cpu":  # load the code paths first (lazy imports, kernels' first calls)
        warm = config("karate", backbone, 2, 8, "cpu", sampler=sampler).replace(epochs=1)
        karate = datasets.load("karate")
        train(warm, graph=karate)
        if seeds > 1:
            train_seeds([warm.replace(seed=s) for s in range(2)], graph=karate)
    graph = load(graph_name)
    if seeds > 1:
        run = lambda: train_seeds([cfg.replace(seed=s) for s in range(seeds)], graph=graph)  # noqa: E731
    else:
        run = lambda: train(cfg, graph=graph)  # noqa: E731
    _, grew = memory.peak_bytes(run, device)
    peak = grew + (graph_tensor_bytes(graph) if device == "cpu" else 0)  # CUDA: copied inside train
    est = estimate(graph, cfg, seeds)
    return {"graph": graph_name, "backbone": backbone, "layers": layers, "hidden": hidden,
            "diagnostics": diagnostics, "sampler": sampler, "seeds": seeds, "device": device,
            "nodes": graph.num_nodes, "edges": graph.num_edges, "features": graph.num_features,
            "classes": graph.num_classes, "peak": peak, "estimate": est,
            "ratio": est / peak}


def measure_cpu(cell: Cell) -> dict:
    """One cell in a fresh process (see the module docstring)."""
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_="65536", MALLOC_TRIM_THRESHOLD_="0",
               PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    spec = json.dumps(dict(zip(("graph", "backbone", "layers", "hidden", "diagnostics", "sampler", "seeds"),
                               _full_cell(cell))))
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--one", spec], env=env,
                          capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        raise RuntimeError(f"{cell}: {proc.stderr.strip().splitlines()[-1:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def table(rows: list[dict]) -> str:
    lines = [f"{'graph':<13}{'backbone':<11}{'sampler':<11}{'seeds':>5}{'L':>3}{'hidden':>7}{'diag':>5}"
             f"{'N':>9}{'M':>10}{'peak MiB':>10}{'est MiB':>9}{'est/peak':>9}"]
    for r in rows:
        flag = "" if LOW <= r["ratio"] <= HIGH else "  <- outside"
        lines.append(f"{r['graph']:<13}{r['backbone']:<11}{r.get('sampler', DEFAULT_SAMPLER):<11}"
                     f"{r.get('seeds', DEFAULT_SEEDS):>5}{r['layers']:>3}{r['hidden']:>7}"
                     f"{'yes' if r['diagnostics'] else 'no':>5}{r['nodes']:>9}"
                     f"{r['edges']:>10}{r['peak'] / 2**20:>10.1f}{r['estimate'] / 2**20:>9.1f}"
                     f"{r['ratio']:>9.2f}{flag}")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--grid", choices=("small", "full", "diagnostics"), default="full")
    ap.add_argument("--device", choices=("cpu", "cuda", "both"), default="both")
    ap.add_argument("--json", help="write every cell's figures to this JSON file")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # the child process: one cell, JSON out
    args = ap.parse_args(argv)
    if args.one:
        spec = json.loads(args.one)
        cell = (spec["graph"], spec["backbone"], int(spec["layers"]), int(spec["hidden"]),
                bool(spec.get("diagnostics", True)), spec.get("sampler", DEFAULT_SAMPLER),
                int(spec.get("seeds", DEFAULT_SEEDS)))
        print(json.dumps(measure_here(cell, spec.get("device", "cpu"))))
        return 0
    rows: list[dict] = []
    devices = ["cpu", "cuda"] if args.device == "both" else [args.device]
    for device in devices:
        if device == "cuda" and not torch.cuda.is_available():
            print("CUDA: no CUDA GPU here (torch.cuda.is_available() is False); section skipped")
            continue
        cells = {"small": SMALL, "diagnostics": diagnostics_grid()}.get(args.grid) or full_grid(device)
        if device == "cpu" and args.grid != "small" and "cora" in [c[0] for c in cells]:
            try:
                datasets.load("cora")
            except datasets.DatasetError:
                cells = [c for c in cells if c[0] != "cora"]
                print("CPU: Cora not available (set DROPEDGE_DATA); left out")
        print(f"{device.upper()} ({torch.cuda.get_device_name(0) if device == 'cuda' else 'one thread'}):",
              flush=True)
        for cell in cells:
            try:
                row = measure_cpu(cell) if device == "cpu" else measure_here(cell, device)
            except Exception as exc:  # one cell that fails (out of memory) does not lose the others
                print(f"  {cell}: failed: {type(exc).__name__}: {str(exc)[:200]}", flush=True)
                continue
            finally:
                if device == "cuda":
                    torch.cuda.empty_cache()
            rows.append(row)
            print(table([row]).splitlines()[1], flush=True)
    if rows:
        print(table(rows))
        ratios = [r["ratio"] for r in rows]
        print(f"estimate / peak: {min(ratios):.2f} .. {max(ratios):.2f} over {len(rows)} cells "
              f"(target {LOW} .. {HIGH})")
    if args.json:  # the commit measured, for docs/tools/memory_table.py
        commit = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=REPO, capture_output=True,
                                text=True).stdout.strip() or "?"
        Path(args.json).write_text(json.dumps([{**r, "commit": commit} for r in rows], indent=1))
    return 0 if all(LOW <= r["ratio"] <= HIGH for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
