"""Calibration: the training memory estimate against measured peaks (issue 28, item 2).

For every cell of a grid (graph × backbone × L × hidden) one DropEdge++ run of the depth
recipe (2 epochs; with diagnostics at the last, or none) is measured and set beside
:func:`dropedge_core.memory.training_bytes`; the target is 0.7 <= estimate / peak <= 1.5.

* CPU: each cell in a fresh process (``MALLOC_MMAP_THRESHOLD_`` fixed, so that freed
  tensors go back to the system and the resident set follows the tensors), after a
  one-epoch warm-up on karate that loads the code paths; the peak is the growth of the
  resident set's high-water mark during ``train`` plus the graph's own tensors (built
  before the mark is reset).
* CUDA (where there is one): in this process, ``torch.cuda.max_memory_allocated`` during
  ``train`` (the graph is copied to the device inside it).

    python bench/calibrate_memory.py [--grid small|full] [--device cpu|cuda|both] [--json out.json]
    python bench/calibrate_memory.py --one '{"graph": "cora", "backbone": "gcn", "layers": 8, "hidden": 64}'

``--grid full`` is Cora (where ``DROPEDGE_DATA`` has it), CSBM 5k and 20k on the CPU
(plus 100k and 1M nodes on CUDA) × the four backbones × L 2/8/16/64 × hidden 16/64/256 ×
diagnostics on / off;
``small`` is the part ``tests/training/test_memory.py`` runs. Exit status 1 when a cell is outside
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

from dropedge_core import datasets, memory
from dropedge_core.method.models import BACKBONES
from dropedge_core.training import TrainConfig, train

REPO = Path(__file__).resolve().parent.parent
LOW, HIGH = 0.7, 1.5
#: the CSBM sizes of the grid: average degree ~10, 60 features (bench_gpu.py's shapes)
CSBM = {"csbm:5000": 5000, "csbm:20000": 20_000, "csbm:100000": 100_000, "csbm:1000000": 1_000_000}
#: the part of the grid ``tests/training/test_memory.py`` runs: each backbone once, at another depth and width
SMALL = [("csbm:5000", "gcn", 2, 256, True), ("csbm:5000", "resgcn", 64, 16, False),
         ("csbm:5000", "jknet", 16, 64, False), ("csbm:5000", "appnp_star", 64, 64, True)]


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
           diagnostics: bool = True) -> TrainConfig:
    dataset = graph_name.split(":")[0]
    return TrainConfig(dataset=dataset, sampler="dropedge++", backbone=backbone, num_layers=layers,
                       hidden=hidden, epochs=2, patience=0, diag_every=2 if diagnostics else 0, device=device,
                       seed=0)


def estimate(graph, cfg: TrainConfig) -> int:
    return memory.training_bytes(graph.num_nodes, graph.num_edges, graph.num_features, graph.num_classes,
                                 cfg.num_layers, cfg.hidden, backbone=cfg.backbone, dropout=cfg.dropout,
                                 self_loop=cfg.self_loop, batch_norm=cfg.batch_norm,
                                 diagnostics=cfg.diag_every > 0, device_type=torch.device(cfg.device).type)


def graph_tensor_bytes(graph) -> int:
    return sum(t.numel() * t.element_size() for t in (graph.x, graph.y, graph.undirected_edges,
                                                       graph.train_mask, graph.val_mask, graph.test_mask))


def measure_here(cell: tuple[str, str, int, int, bool], device: str) -> dict:
    """Measure one cell in this process (the child of :func:`measure_cpu`, or on CUDA)."""
    graph_name, backbone, layers, hidden, diagnostics = cell
    torch.set_num_threads(1)
    if device == "cpu":  # load the code paths first (lazy imports, kernels' first calls)
        train(config("karate", backbone, 2, 8, "cpu").replace(epochs=1), graph=datasets.load("karate"))
    graph = load(graph_name)
    cfg = config(graph_name, backbone, layers, hidden, device, diagnostics)
    _, grew = memory.peak_bytes(lambda: train(cfg, graph=graph), device)
    peak = grew + (graph_tensor_bytes(graph) if device == "cpu" else 0)  # CUDA: copied inside train
    est = estimate(graph, cfg)
    return {"graph": graph_name, "backbone": backbone, "layers": layers, "hidden": hidden,
            "diagnostics": diagnostics, "device": device,
            "nodes": graph.num_nodes, "edges": graph.num_edges, "peak": peak, "estimate": est,
            "ratio": est / peak}


def measure_cpu(cell: tuple[str, str, int, int, bool]) -> dict:
    """One cell in a fresh process (see the module docstring)."""
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_="65536", MALLOC_TRIM_THRESHOLD_="0",
               PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    spec = json.dumps(dict(zip(("graph", "backbone", "layers", "hidden", "diagnostics"), cell)))
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--one", spec], env=env,
                          capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        raise RuntimeError(f"{cell}: {proc.stderr.strip().splitlines()[-1:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def table(rows: list[dict]) -> str:
    lines = [f"{'graph':<13}{'backbone':<11}{'L':>3}{'hidden':>7}{'diag':>5}{'N':>9}{'M':>10}{'peak MiB':>10}"
             f"{'est MiB':>9}{'est/peak':>9}"]
    for r in rows:
        flag = "" if LOW <= r["ratio"] <= HIGH else "  <- outside"
        lines.append(f"{r['graph']:<13}{r['backbone']:<11}{r['layers']:>3}{r['hidden']:>7}"
                     f"{'yes' if r['diagnostics'] else 'no':>5}{r['nodes']:>9}"
                     f"{r['edges']:>10}{r['peak'] / 2**20:>10.1f}{r['estimate'] / 2**20:>9.1f}"
                     f"{r['ratio']:>9.2f}{flag}")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--grid", choices=("small", "full"), default="full")
    ap.add_argument("--device", choices=("cpu", "cuda", "both"), default="both")
    ap.add_argument("--json", help="write every cell's figures to this JSON file")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # the child process: one cell, JSON out
    args = ap.parse_args(argv)
    if args.one:
        spec = json.loads(args.one)
        cell = (spec["graph"], spec["backbone"], int(spec["layers"]), int(spec["hidden"]),
                bool(spec.get("diagnostics", True)))
        print(json.dumps(measure_here(cell, spec.get("device", "cpu"))))
        return 0
    rows: list[dict] = []
    devices = ["cpu", "cuda"] if args.device == "both" else [args.device]
    for device in devices:
        if device == "cuda" and not torch.cuda.is_available():
            print("CUDA: no CUDA GPU here (torch.cuda.is_available() is False); section skipped")
            continue
        cells = SMALL if args.grid == "small" else full_grid(device)
        if device == "cpu" and args.grid == "full" and "cora" in [c[0] for c in cells]:
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
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0 if all(LOW <= r["ratio"] <= HIGH for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
