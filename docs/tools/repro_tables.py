"""Print the depth tables and the ordering claims of docs/REPRODUCTION.md from the bundled
run CSVs (``dropedge_core/assets/results/``), so that the document can be regenerated after a sweep:

    python docs/tools/repro_tables.py --settings depth > /tmp/tables.md
    python docs/tools/repro_tables.py --search > /tmp/search.md   # the per-cell search


Cells: mean ± sample std of the test accuracy over the seeds (n = seeds), in %, beside
the paper's number; claims: the paired t-test over seeds of :mod:`dropedge_core.studies.ordering`.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from dropedge_core.data import reference
from dropedge_core.figures import BACKBONE_LABELS
from dropedge_core.method.models import BACKBONES
from dropedge_core.studies import cell_search, ordering
from dropedge_core.studies import depth as results

LABELS = {"nodrop": "NoDrop", "dropedge": "DropEdge", "dropedge++": "DropEdge++"}


def _cell(values) -> str:
    values = [v for v in values if v == v]
    if not values:
        return "–"
    mean = 100 * sum(values) / len(values)
    if len(values) == 1:
        return f"{mean:.1f} (n=1)"
    std = 100 * (sum((v - mean / 100) ** 2 for v in values) / (len(values) - 1)) ** 0.5
    return f"{mean:.1f} ± {std:.1f} (n={len(values)})"


def depth_table(runs, paper, dataset: str, split: str, backbone: str = "gcn") -> str:
    part = runs[(runs["dataset"] == dataset) & (runs["split"] == split) & (runs["backbone"] == backbone)]
    ref = results.paper_rows(paper, dataset, split, [backbone])
    samplers = [s for s in LABELS if s in set(part["sampler"])]
    head = "| L | " + " | ".join(f"{LABELS[s]} | paper" for s in samplers) + " |"
    lines = [head, "|" + " --- |" * (1 + 2 * len(samplers))]
    for L in sorted(part["layers"].unique()):
        cells = []
        for s in samplers:
            cells.append(_cell(part[(part["sampler"] == s) & (part["layers"] == L)]["test_acc"].tolist()))
            hit = ref[(ref["sampler"] == s) & (ref["layers"] == L)]["test_accuracy"]
            cells.append(f"{float(hit.iloc[0]):.1f}" if len(hit) else "–")
        lines.append(f"| {L} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def claims_table(runs, dataset: str, split: str, backbone: str = "gcn") -> str:
    part = runs[(runs["dataset"] == dataset) & (runs["split"] == split) & (runs["backbone"] == backbone)]
    table = ordering.compare_samplers(part)
    lines = ["| L | claim | difference (points) | seeds | p (paired t) | verdict |", "|" + " --- |" * 6]
    for row in table.itertuples():
        std = "" if row.diff_std != row.diff_std else f" ± {100 * row.diff_std:.1f}"
        p = "–" if row.p_value != row.p_value else f"{row.p_value:.3f}"
        lines.append(f"| {row.layers} | {LABELS[row.better]} ≥ {LABELS[row.worse]} | "
                     f"{100 * row.diff_mean:+.1f}{std} | {row.n} | {p} | {row.verdict} |")
    sentence = ordering.leader_sentence(part)
    return "\n".join(lines) + (f"\n\n{sentence}" if sentence else "")


def search_table(summary, paper, dataset: str, split: str, backbone: str = "gcn") -> str:
    """One row per searched cell: budget, best validation accuracy, whether the best is the
    recipe's own point (trial 0), what it changed, and its test accuracy over the seeds."""
    part = summary[(summary["dataset"] == dataset) & (summary["split"] == split)
                   & (summary["backbone"] == backbone)].sort_values(["num_layers", "sampler"])
    ref = results.paper_rows(paper, dataset, split, [backbone])
    lines = ["| L | sampler | trials (done / pruned) | best val | best = recipe point | best's settings "
             "(keep rates) | test, best on 5 seeds | paper |", "|" + " --- |" * 8]
    for r in part.itertuples():
        keep = (f"p = {r.p:.2f}" if r.sampler == "dropedge" else "–" if r.sampler == "nodrop"
                else f"{r.p_min:.2f} → {r.p_max:.2f}")
        hit = ref[(ref["sampler"] == r.sampler) & (ref["layers"] == r.num_layers)]["test_accuracy"]
        std = "" if r.test_acc_std != r.test_acc_std else f" ± {100 * r.test_acc_std:.1f}"
        recipe_point = "yes" if r.best_is_recipe_point else "no"
        lines.append(f"| {r.num_layers} | {LABELS.get(r.sampler, r.sampler)} | {r.trials} ({r.complete} / "
                     f"{r.pruned}) | {100 * r.best_val_acc:.1f} | {recipe_point} | "
                     f"{r.settings} ({keep}) | {100 * r.test_acc_mean:.1f}{std} (n={r.seeds}) | "
                     + (f"{float(hit.iloc[0]):.1f}" if len(hit) else "–") + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--settings", default="depth", help="the settings column to keep (default depth)")
    parser.add_argument("--search", action="store_true",
                        help="print the per-cell search (dropedge_core/assets/search/) instead")
    args = parser.parse_args()
    if args.search:
        summary, best = cell_search.bundled_summary(), cell_search.bundled_best_runs()
        paper = reference.paper_accuracy_by_depth()
        for (dataset, split), _ in summary.groupby(["dataset", "split"]):
            print(f"### {dataset} / {split}, GCN, the per-cell search\n")
            print(search_table(summary, paper, dataset, split) + "\n")
            print(claims_table(best, dataset, split) + "\n")
        return
    runs = results.bundled_results()
    runs = runs[runs["settings"] == args.settings]
    paper = reference.paper_accuracy_by_depth()
    order = {b: i for i, b in enumerate(BACKBONES)}
    groups = sorted(runs.groupby(["dataset", "split", "backbone"]).groups,
                    key=lambda g: (g[0], g[1], order[g[2]]))
    for dataset, split, backbone in groups:
        print(f"### {dataset} / {split}, {BACKBONE_LABELS[backbone]}, settings {args.settings!r}\n")
        print(depth_table(runs, paper, dataset, split, backbone) + "\n")
        print(claims_table(runs, dataset, split, backbone) + "\n")


if __name__ == "__main__":
    main()
