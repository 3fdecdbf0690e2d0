"""The memory calibration table of docs/PERFORMANCE.md: measured peaks against today's estimate.

The peaks are measurements (``bench/calibrate_memory.py --grid diagnostics --device cpu
--json bench/measured/memory_cpu.json``: each cell in a fresh process, the growth of the
resident set's high-water mark); the estimate beside each is computed now, by the shipped
:func:`dropedge_explorer.memory.training_bytes`, so a change of the estimate shows here once
the block is regenerated (``tests/training/test_memory_diagnostics.py`` checks both the
band and that the block is current).

    python docs/tools/memory_table.py                           # print the block
    python docs/tools/memory_table.py --write docs/PERFORMANCE.md  # replace it in place
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import re
import sys
from pathlib import Path
from types import SimpleNamespace

REPO = Path(__file__).resolve().parents[2]
MEASURED = REPO / "bench" / "measured" / "memory_cpu.json"
NAME = "cpu diagnostics"
RUNS = [("nodrop", 1, "NoDrop"), ("dropedge", 1, "DropEdge"), ("dropedge++", 1, "DropEdge++"),
        ("dropedge++", 4, "DropEdge++, 4 seeds in one batch")]


def _calibration():
    spec = importlib.util.spec_from_file_location("calibrate_memory", REPO / "bench" / "calibrate_memory.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def with_estimates(rows: list[dict]) -> list[dict]:
    """Each measured row with today's estimate and its ratio to the peak."""
    calibration = _calibration()
    out = []
    for r in rows:
        cfg = calibration.config(r["graph"], r["backbone"], r["layers"], r["hidden"], "cpu", r["diagnostics"],
                                 r["sampler"])
        graph = SimpleNamespace(num_nodes=r["nodes"], num_edges=r["edges"], num_features=r["features"],
                                num_classes=r["classes"])
        est = calibration.estimate(graph, cfg, r["seeds"])
        out.append({**r, "estimate": est, "ratio": est / r["peak"]})
    return out


def block(rows: list[dict]) -> str:
    """The markdown table: one row per graph, depth and diagnostics on/off; est/peak per run."""
    rows = with_estimates(rows)
    cells: dict[tuple, dict] = {}
    for r in rows:
        cells.setdefault((r["graph"], r["nodes"], r["edges"], r["layers"], r["hidden"], r["diagnostics"]),
                         {})[(r["sampler"], r["seeds"])] = r
    head = ("| graph (N / M) | L x hidden | diagnostics | peak MiB | "
            + " | ".join(f"est/peak {label}" for *_, label in RUNS) + " |")
    lines = [head, "|" + " --- |" * (4 + len(RUNS))]
    for (graph, n, m, layers, hidden, diag), runs in cells.items():
        peaks = [r["peak"] / 2**20 for r in runs.values()]
        ratios = [f"{runs[(s, k)]['ratio']:.2f}" if (s, k) in runs else "—" for s, k, _ in RUNS]
        lines.append(f"| {graph} ({n:,} / {m:,}) | {layers} x {hidden} | {'on' if diag else 'off'} | "
                     f"{min(peaks):.1f}–{max(peaks):.1f} | " + " | ".join(ratios) + " |")
    ratios = [r["ratio"] for r in rows]
    lines += ["", f"estimate / peak: **{min(ratios):.2f} – {max(ratios):.2f}** over {len(rows)} cells "
                  f"(target 0.7 – 1.5); peaks measured at commit {rows[0].get('commit', '?')}."]
    return "\n".join(lines)


def replace_block(text: str, content: str) -> str:
    pattern = re.compile(rf"(<!-- memory_table: {NAME} -->\n).*?(<!-- /memory_table: {NAME} -->)", re.S)
    if not pattern.search(text):
        raise SystemExit(f"no <!-- memory_table: {NAME} --> block in the file")
    return pattern.sub(lambda m: m.group(1) + content + "\n" + m.group(2), text)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--write", metavar="DOC", help="replace the block in this markdown file")
    args = ap.parse_args(argv)
    content = block(json.loads(MEASURED.read_text(encoding="utf-8")))
    if args.write:
        path = Path(args.write)
        path.write_text(replace_block(path.read_text(encoding="utf-8"), content), encoding="utf-8")
    else:
        sys.stdout.write(content + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
