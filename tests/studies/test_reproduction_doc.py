"""docs/REPRODUCTION.md against the bundled CSVs: its generated blocks are what
``docs/tools/repro_tables.py --write`` prints today, and the front matter's counts agree with
counts made here directly from the CSVs (pandas merges, not the tool's loops)."""
from __future__ import annotations

import importlib.util
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from dropedge_core.data import reference
from dropedge_core.studies.runs import bundled_results

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "REPRODUCTION.md"


@pytest.fixture(scope="module")
def tool():
    spec = importlib.util.spec_from_file_location("repro_tables", ROOT / "docs" / "tools" / "repro_tables.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_document_is_what_the_tool_prints_from_the_csvs(tool, tmp_path):
    copy = tmp_path / "REPRODUCTION.md"
    shutil.copy(DOC, copy)
    tool.write(copy)
    assert copy.read_text(encoding="utf-8") == DOC.read_text(encoding="utf-8"), (
        "docs/REPRODUCTION.md is stale: run python docs/tools/repro_tables.py --write docs/REPRODUCTION.md")


def _cells():
    """Accuracy-by-depth cells with our mean under the depth recipe, merged with the paper's."""
    runs = bundled_results()
    runs = runs[runs["settings"] == "depth"]
    ours = runs.groupby(["dataset", "split", "backbone", "sampler", "layers"], as_index=False).agg(
        ours=("test_acc", "mean"), seeds=("seed", "nunique"))
    paper = reference.paper_accuracy_by_depth()
    paper = paper.assign(backbone=paper["backbone"].str.lower().str.replace("appnp*", "appnp_star",
                                                                             regex=False),
                         dataset=paper["dataset_key"], split=paper["setting"])
    return paper.merge(ours, on=["dataset", "split", "backbone", "sampler", "layers"], how="left")


def test_the_headline_and_the_coverage_count_agree_with_a_direct_count():
    cells = _cells()
    plus = cells[(cells["sampler"] == "dropedge++") & cells["ours"].notna()]
    below = int((100 * plus["ours"] < plus["test_accuracy"]).sum())
    text = DOC.read_text(encoding="utf-8")
    assert f"**DropEdge++ is below the paper in {below} of {len(plus)} cells**" in text
    # every cell of the four paper tables is counted once; run = a bundled run of it
    total = (len(cells) + len(reference.paper_best_accuracy()) + len(reference.paper_men())
             + 3 * 3)  # the epoch-time table: 3 phases × 3 samplers
    best = bundled_results()
    best = best[best["settings"] == "paper"]
    run = int(cells["ours"].notna().sum()) + best.groupby(["dataset", "split", "backbone"]).ngroups + 24
    row = re.search(r"\| \*\*all\*\* \| \*\*(\d+)\*\* \| \*\*(\d+) \((\d+)%\)\*\*", text)
    assert row and (int(row.group(1)), int(row.group(2))) == (total, run)
    assert int(row.group(3)) == round(100 * run / total)
    # the PubMed cells are there, not run, for the reason the issue names
    assert "accuracy by depth, PubMed (both settings, every backbone) | 126 | 0 |" in text
    assert "the data cannot be obtained on this project's machines" in text


def test_the_not_run_rows_name_the_missing_depths(tool):
    cells = _cells()
    rows = {r[0]: r for r in tool._depth_coverage(
        bundled_results().query("settings == 'depth'"), reference.paper_accuracy_by_depth())}
    for (dataset, split, backbone), part in cells[cells["dataset"].isin(["cora", "citeseer"])].groupby(
            ["dataset", "split", "backbone"]):
        missing = sorted(part.loc[part["ours"].isna(), "layers"].unique())
        name = {"cora": "Cora", "citeseer": "CiteSeer"}[dataset]
        label = {"gcn": "GCN", "resgcn": "ResGCN", "jknet": "JKNet", "appnp_star": "APPNP*"}[backbone]
        row = rows[f"accuracy by depth, {name} {split}, {label}"]
        assert row[2] == int(part["ours"].notna().sum())
        assert (row[5] == "–") == (not missing)
        if missing:
            assert row[5].startswith(f"L = {', '.join(map(str, missing))}:")
        seeds = part["seeds"].dropna().astype(int)
        if len(seeds):
            lo, hi = seeds.min(), seeds.max()
            assert row[4] == (str(lo) if lo == hi else f"{lo}-{hi}")


def test_the_ablation_table_agrees_with_scipy_and_a_hand_holm():
    """Section 1d recomputed from the bundled ablation CSV: each arm's paired difference by
    scipy's ``ttest_rel`` and the Holm step-down written out here, row by row as printed."""
    from scipy import stats

    text = DOC.read_text(encoding="utf-8")
    block = text[text.index("<!-- repro_tables: ablation -->"):text.index("<!-- /repro_tables: ablation -->")]
    rows = [r.split("|")[1:-1] for r in block.splitlines()
            if r.startswith("| ") and "(the reference)" not in r]
    rows = [[c.strip() for c in r] for r in rows[2:]]  # no header, no rule
    assert rows, "the ablation block is empty"
    runs = pd.read_csv(ROOT / "dropedge_core" / "assets" / "ablation" / "gcn32_cora_semi.csv")

    def arm(name: str) -> pd.Series:
        sampler = {"NoDrop": "nodrop", "DropEdge": "dropedge", "LID": "lid", "FD": "fd",
                   "DropEdge++": "dropedge++"}[name.split()[0]]
        part = runs[(runs["sampler"] == sampler) & (runs["directed"] == name.endswith("directed"))]
        if "→" in name:
            low, high = name.split()[1].rstrip(",").split("→")
            part = part[(part["p_min"] == float(low)) & (part["p_max"] == float(high))]
        return part.set_index("seed")["test_acc"]

    p_values, shown = [], []
    for name, seeds, acc, against, diff, p, p_holm, verdict in rows:
        a, b = arm(name), arm(against)
        both = a.index.intersection(b.index)
        assert int(seeds) == a.size and acc == f"{100 * a.mean():.1f} ± {100 * a.std():.1f}"
        assert diff.startswith(f"{100 * (a[both] - b[both]).mean():+.1f} (")
        p_values.append(stats.ttest_rel(a[both], b[both]).pvalue)
        shown.append((p, p_holm, verdict, float(diff.split()[0])))
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted, running = [0.0] * m, 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    for raw, holm_p, (p, p_holm, verdict, diff) in zip(p_values, adjusted, shown):
        assert p == ("< 0.001" if raw < 0.001 else f"{raw:.3f}")
        assert p_holm == ("< 0.001" if holm_p < 0.001 else f"{holm_p:.3f}")
        assert verdict == ("not shown" if holm_p >= 0.05 else ("lower" if diff < 0 else "higher"))


def test_the_authors_table_agrees_with_a_direct_count():
    """Section 3b: each cell's authors-recipe mean and seed count, from a pandas groupby of the
    bundled CSVs, is the one printed in its row."""
    runs = bundled_results()
    runs = runs[runs["settings"] == "authors"]
    assert len(runs), "no authors-recipe runs bundled"
    text = DOC.read_text(encoding="utf-8")
    label = {"gcn": "GCN", "resgcn": "ResGCN", "jknet": "JKNet", "appnp_star": r"APPNP\*"}
    cells = runs.groupby(["dataset", "split", "backbone", "layers"])["test_acc"].agg(["mean", "count"])
    for (dataset, split, backbone, layers), row in cells.iterrows():
        pattern = (rf"^\| {split} \| {dataset} \| {label[backbone]} \| {layers} \| [^|]+ \| "
                   rf"{100 * row['mean']:.1f}( ± [0-9.]+)? \(n={int(row['count'])}\) \|")
        assert re.search(pattern, text, re.M), (dataset, split, backbone, layers)
