"""docs/REPRODUCTION.md against the bundled CSVs: the document is what
``docs/tools/repro_tables.py --write`` prints today, no number is written outside its generated
blocks, and the blocks' counts agree with counts made here directly from the CSVs (pandas
merges and scipy, not the tool's loops), today's sampler streams only."""
from __future__ import annotations

import importlib.util
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from dropedge_explorer.data import reference
from dropedge_explorer.studies import fingerprints, ordering
from dropedge_explorer.studies.run_tables import bundled_results

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "REPRODUCTION.md"
ABLATION = ROOT / "dropedge_explorer" / "assets" / "ablation" / "gcn32_cora_semi.csv"

#: A generated block: from its opening marker to its closing one, each on a line of its own.
GENERATED = re.compile(r"^<!-- repro_tables: (?P<name>[^>]+?) -->$.*?^<!-- /repro_tables: (?P=name) -->$",
                       re.S | re.M)
FENCE = re.compile(r"^```.*?^```", re.S | re.M)  # commands to run: inputs, not results
CODE = re.compile(r"`[^`\n]+`")  # paths, flags, identifiers (`gcn32_cora_semi.csv`, `--seeds 0 1`)
DEPTH = r"(?:2|4|8|16|32|64)"  # the paper's depths: a depth label names one of them
#: The only numbers allowed outside generated blocks, code and code spans: structure, not results.
STRUCTURE = [
    re.compile(r"^#{2,} \d+[a-z]?\. ", re.M),  # a heading's section number ("## 1b. ")
    # "section 1b", "sections 1 and 1c"
    re.compile(r"\b[Ss]ections?\s+\d+[a-z]?(?:(?:,\s+|\s+and\s+|\s+or\s+)\d+[a-z]?)*\b"),
    re.compile(r"\bissue \d+(?:,? item \d+)?\b"),  # "issue 25, item 7"
    re.compile(rf"\bL = {DEPTH}(?:(?:, | and | or ){DEPTH})*\b"),  # "L = 4", "L = 8 vs L = 4"
    re.compile(rf"\b(?:GCN|ResGCN|JKNet|APPNP\\?\*)-{DEPTH}\b"),  # "GCN-32", "APPNP\*-64"
    # "32 layers", "8-64-layer", "16 and 64 layers", "8 / 16 / 32 layers"
    re.compile(rf"\b{DEPTH}(?:(?:,\s+|\s+and\s+|\s+or\s+|-|\s+to\s+|\s+/\s+){DEPTH})*(?:-|\s+)layers?\b"),
]
#: What counts as a number: a digit, a superscript digit (10¹²), a vulgar fraction.
DIGIT = re.compile(r"[0-9⁰¹²³⁴⁵⁶⁷⁸⁹½]")

# -- claims about results are generated (issue 47, item 3) -----------------------------------
#: Any generated block of any tool (``<!-- repro_tables: name -->`` ... ``<!-- /repro_tables: name -->``,
#: ``<!-- memory_table: ... -->``, ``<!-- mutation-scores: ... -->`` ...).
ANY_BLOCK = re.compile(r"^<!-- (?P<tool>[a-z_-]+): ?(?P<name>[^>]*?) -->$.*?^<!-- /(?P=tool)(?::[^>]*)? -->$",
                       re.S | re.M)
_SAMPLER = r"(?<![\w`])(?:DropEdge\+\+|DropEdge|NoDrop|no-drop|LID|LDD|LI|FD)(?![\w+])"
_ORDER = (r"(?:(?:is|are|was|were|stays?|ranks?)\s+)?(?:[\d.,]+\s*(?:points?|pp|%)\s+)?"
          r"(?:above|below|ahead\s+of|behind|beats?|better\s+than|worse\s+than|outperforms?|higher\s+than|"
          r"lower\s+than|leads?|exceeds?|trails?|more\s+accurate\s+than|less\s+accurate\s+than|[≥≤><]=?)")
#: A comparison of two samplers within one clause ("DropEdge++ is 2 points below DropEdge"), or a
#: sampler said to be ahead / behind / best.
COMPARISON = re.compile(rf"{_SAMPLER}[^.;:|\n]{{0,60}}?{_ORDER}[^.;:|\n]{{0,60}}?{_SAMPLER}"
                        rf"|{_SAMPLER}\s+(?:is|are|was|were|stays?|comes?|ranks?)\s+(?:not\s+)?"
                        r"(?:ahead|behind|best|worst|first|last|on\s+top)\b")
#: Not a claim: a claim named as a label ("the DropEdge ≥ NoDrop rows"), or the paper's own claim.
NAMED_CLAIM = re.compile(rf"{_SAMPLER}\s*[≥≤><]=?\s*{_SAMPLER}\s+(?:rows?|claims?|famil(?:y|ies))\b"
                         rf"|\b(?:claims?|rows?)\s+{_SAMPLER}\s*[≥≤><]=?\s*{_SAMPLER}")
THE_PAPERS = re.compile(r"\bthe paper's (?:headline|claim)|\bthe paper (?:claims|reports|says|shows)\b", re.I)
#: The documents whose prose is checked: the README and every document of docs/.
PROSE = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def hand_written_comparisons(text: str) -> list[str]:
    """The sentences (a table row counts as one) of ``text`` outside generated blocks, code and
    code spans that compare samplers (:data:`COMPARISON`)."""
    text = CODE.sub("", FENCE.sub("", ANY_BLOCK.sub("", text)))
    out = []
    for paragraph in re.split(r"\n\s*\n", text):
        table = paragraph.lstrip().startswith("|")
        units = paragraph.splitlines() if table else [" ".join(paragraph.split())]
        for unit in units:
            for sentence in re.split(r"(?<=[.!?])\s+", unit):
                if COMPARISON.search(NAMED_CLAIM.sub("", sentence)) and not THE_PAPERS.search(sentence):
                    out.append(sentence.strip())
    return out


@pytest.fixture(scope="module")
def tool():
    spec = importlib.util.spec_from_file_location("repro_tables", ROOT / "docs" / "tools" / "repro_tables.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def stray_numbers(text: str) -> list[str]:
    """The lines of ``text`` with a number outside generated blocks, code and :data:`STRUCTURE`."""
    text = CODE.sub("", FENCE.sub("", GENERATED.sub("", text)))
    for pattern in STRUCTURE:
        text = pattern.sub("", text)
    return [line for line in text.splitlines() if DIGIT.search(line)]


def test_the_document_is_what_the_tool_prints_from_the_csvs(tool, tmp_path):
    copy = tmp_path / "REPRODUCTION.md"
    shutil.copy(DOC, copy)
    tool.write(copy)
    assert copy.read_text(encoding="utf-8") == DOC.read_text(encoding="utf-8"), (
        "docs/REPRODUCTION.md is stale: run python docs/tools/repro_tables.py --write docs/REPRODUCTION.md")


def test_no_number_is_written_outside_a_generated_block():
    stray = stray_numbers(DOC.read_text(encoding="utf-8"))
    assert not stray, ("numbers outside generated blocks (print them from repro_tables.py or remove "
                       "them):\n" + "\n".join(stray))


@pytest.mark.parametrize("path", PROSE, ids=lambda p: p.name)
def test_no_comparison_of_samplers_is_written_by_hand(path):
    """Which sampler is above which, and by how much, comes from a generator; prose keeps none."""
    found = hand_written_comparisons(path.read_text(encoding="utf-8"))
    assert not found, (f"{path.name}: comparisons of samplers outside generated blocks (generate them, "
                       "e.g. from docs/tools/repro_tables.py, or remove them):\n" + "\n".join(found))


@pytest.mark.parametrize("line", [
    "DropEdge++ is 2.1 points above DropEdge at 8 layers.",
    "At 32 layers on Cora DropEdge++ is 11.3 points below DropEdge.",
    "NoDrop beats DropEdge at 64 layers, and DropEdge++ trails NoDrop.",
    "DropEdge ≥ NoDrop holds at every depth.",
    "| Cora | DropEdge++ is ahead at every depth |",
    "In this table DropEdge++ is best.",
])
def test_the_comparison_check_sees_a_hand_written_claim(line):
    assert hand_written_comparisons(f"Intro.\n\n{line}\n") != []
    generated = f"<!-- repro_tables: x -->\n{line}\n<!-- /repro_tables: x -->\n"
    assert hand_written_comparisons(generated) == []


@pytest.mark.parametrize("line", [
    "One GCN epoch, DropEdge++ vs NoDrop: the ratio is printed by `bench/bench_epoch.py`.",
    "The paper's headline, DropEdge++ above DropEdge, at 32 layers in each GCN table.",
    "The qualitative point is the DropEdge ≥ NoDrop rows at the deepest depth.",
    "Run `DropEdge++ above DropEdge` as a query.",
])
def test_the_comparison_check_lets_labels_and_the_papers_claims_be(line):
    assert hand_written_comparisons(line) == []


@pytest.mark.parametrize("line", [
    "The CLI's defaults train GCN-16 on Cora to 75.8 ± 1.3% with DropEdge++ (5 seeds).",
    "| 32 | **−11.6** | −2.7 |",
    "first training loss 5·10¹² without batch norm",
    "Cora semi has 3 seeds at 2-8 layers",  # a seed count beside a depth label
    "from 5 layers on",  # not one of the paper's depths
    "## 9. Results (10 seeds)",
])
def test_the_number_check_sees_a_hand_written_number(line):
    """Each line, added outside the blocks, is caught: the allowed structure is no loophole."""
    assert stray_numbers(DOC.read_text(encoding="utf-8") + "\n" + line + "\n") == [
        stray_numbers(line + "\n")[0]]


def test_every_block_is_closed_and_named_once():
    text = DOC.read_text(encoding="utf-8")
    opened = re.findall(r"^<!-- repro_tables: ([^>]+?) -->$", text, re.M)
    closed = re.findall(r"^<!-- /repro_tables: ([^>]+?) -->$", text, re.M)
    assert opened == closed and len(set(opened)) == len(opened)


def _current() -> pd.DataFrame:
    return fingerprints.current(bundled_results())


def _cells(runs: pd.DataFrame) -> pd.DataFrame:
    """Accuracy-by-depth cells with our mean under the depth recipe, merged with the paper's."""
    runs = runs[runs["settings"] == "depth"]
    ours = runs.groupby(["dataset", "split", "backbone", "sampler", "layers"], as_index=False).agg(
        ours=("test_acc", "mean"), seeds=("seed", "nunique"))
    paper = reference.paper_accuracy_by_depth()
    paper = paper.assign(backbone=paper["backbone"].str.lower().str.replace("appnp*", "appnp_star",
                                                                             regex=False),
                         dataset=paper["dataset_key"], split=paper["setting"])
    return paper.merge(ours, on=["dataset", "split", "backbone", "sampler", "layers"], how="left")


def test_the_headline_and_the_coverage_count_agree_with_a_direct_count():
    cells = _cells(_current())
    plus = cells[(cells["sampler"] == "dropedge++") & cells["ours"].notna()]
    below = int((100 * plus["ours"] < plus["test_accuracy"]).sum())
    text = DOC.read_text(encoding="utf-8")
    if len(plus):
        assert f"**DropEdge++ is below the paper in {below} of {len(plus)} cells**" in text
    else:
        assert "**No cell of the accuracy-by-depth table has a DropEdge++ run of today's sampler" in text
    # every cell of the four paper tables is counted once; run = a bundled run of today's stream
    total = (len(cells) + len(reference.paper_best_accuracy()) + len(reference.paper_men())
             + 3 * 3)  # the epoch-time table: 3 phases × 3 samplers
    best = _current()
    best = best[best["settings"] == "paper"]
    run = int(cells["ours"].notna().sum()) + best.groupby(["dataset", "split", "backbone"]).ngroups + 24
    row = re.search(r"\| \*\*all\*\* \| \*\*(\d+)\*\* \| \*\*(\d+) \((\d+)%\)\*\*", text)
    assert row and (int(row.group(1)), int(row.group(2))) == (total, run)
    assert int(row.group(3)) == round(100 * run / total)
    # the PubMed cells are there, not run, for the reason the issue names
    assert "accuracy by depth, PubMed (both settings, every backbone) | 126 | 0 |" in text
    assert "the data cannot be obtained on this project's machines" in text


def test_the_not_run_rows_name_the_missing_depths(tool):
    every = bundled_results(include_older=True).query("settings == 'depth'")
    now, old = fingerprints.current(every), fingerprints.older(every)
    cells = _cells(now)
    key = ["dataset", "split", "backbone", "sampler", "layers"]
    stale = set(map(tuple, old[key].itertuples(index=False)))
    rows = {r[0]: r for r in tool._depth_coverage(now, reference.paper_accuracy_by_depth(), old)}
    for (dataset, split, backbone), part in cells[cells["dataset"].isin(["cora", "citeseer"])].groupby(
            ["dataset", "split", "backbone"]):
        gone = part[part["ours"].isna()]
        name = {"cora": "Cora", "citeseer": "CiteSeer"}[dataset]
        label = {"gcn": "GCN", "resgcn": "ResGCN", "jknet": "JKNet", "appnp_star": "APPNP*"}[backbone]
        row = rows[f"accuracy by depth, {name} {split}, {label}"]
        assert row[2] == int(part["ours"].notna().sum())
        assert (row[5] == "–") == gone.empty
        is_old = [(dataset, split, backbone, s, L) in stale for s, L in zip(gone["sampler"], gone["layers"])]
        for flag, reason in ((True, tool.STALE), (False, tool.NOT_REACHED)):
            depths = sorted(set(gone["layers"][[f == flag for f in is_old]]))
            if depths:
                assert f"L = {', '.join(map(str, depths))} (" in row[5] and reason in row[5]
        seeds = part["seeds"].dropna().astype(int)
        if len(seeds):
            lo, hi = seeds.min(), seeds.max()
            assert row[4] == (str(lo) if lo == hi else f"{lo}-{hi}")


def _block(text: str, name: str) -> str:
    return text[text.index(f"<!-- repro_tables: {name} -->"):text.index(f"<!-- /repro_tables: {name} -->")]


def test_the_depth_tables_count_todays_stream_only():
    """Each cell's n in every depth-recipe table is the number of today's-stream seeds: an
    older-stream row bundled beside them is never pooled."""
    text = DOC.read_text(encoding="utf-8")
    now = _current().query("settings == 'depth'")
    label = {"gcn": "GCN", "resgcn": "ResGCN", "jknet": "JKNet", "appnp_star": "APPNP*"}
    names = ["NoDrop", "DropEdge", "DropEdge++"]
    every = bundled_results(include_older=True).query("settings == 'depth'")
    for (dataset, split, backbone), part in every.groupby(
            ["dataset", "split", "backbone"]):
        block = _block(text, f"depth {dataset} {split} {backbone}")
        assert f"#### {dataset} / {split}, {label[backbone]}, settings 'depth'" in block
        head = next(line for line in block.splitlines() if line.startswith("| L | NoDrop"))
        columns = [c.strip() for c in head.split("|")[1:-1]]
        for L in sorted(part["layers"].unique()):
            row = next(line for line in block.splitlines() if line.startswith(f"| {L} | "))
            cells = [c.strip() for c in row.split("|")[1:-1]]
            for sampler, name in zip(("nodrop", "dropedge", "dropedge++"), names):
                n = now[(now["dataset"] == dataset) & (now["split"] == split) & (now["backbone"] == backbone)
                        & (now["sampler"] == sampler) & (now["layers"] == L)]["seed"].nunique()
                if name not in columns:
                    assert n == 0
                    continue
                cell = cells[columns.index(name)]
                where = (dataset, split, backbone, L, name)
                assert (cell == "–") if n == 0 else cell.endswith(f"(n={n})"), where


def test_the_older_stream_list_counts_every_older_row():
    """The older-stream block counts every bundled row of an older stream (runs, search, ablation)."""
    from dropedge_explorer.studies import cell_search
    from dropedge_explorer.studies.run_tables import read_runs

    best = pd.concat([read_runs(f) for f in sorted(cell_search.SEARCH_DIR.glob("cell_best_*.csv"))])
    old = sum(len(fingerprints.older(rows)) for rows in (
        bundled_results(include_older=True), best, pd.read_csv(ABLATION)))
    block = _block(DOC.read_text(encoding="utf-8"), "older")
    if old:
        assert f"{old} bundled runs of an older stream in " in block
        assert "**Not used in any table or verdict of this document**" in block
    else:
        assert "No run of an older sampler stream is bundled." in block


def _runs(means: dict[str, list[float]]) -> pd.DataFrame:
    rows = [{"dataset": "cora", "split": "semi", "backbone": "gcn", "layers": 32, "sampler": s, "seed": i,
             "test_acc": v} for s, values in means.items() for i, v in enumerate(values)]
    return pd.DataFrame(rows)


@pytest.mark.parametrize("plus, verdict", [
    ([0.60, 0.61, 0.59, 0.62, 0.60], "**shown below** DropEdge"),
    ([0.80, 0.81, 0.79, 0.82, 0.80], "**shown above** DropEdge"),
    ([0.70, 0.72, 0.69, 0.71, 0.70], "**not shown to differ** from DropEdge"),
])
def test_the_headline_verdict_is_phrased_from_the_data_whichever_way(tool, plus, verdict):
    runs = _runs({"dropedge++": plus, "dropedge": [0.70, 0.71, 0.70, 0.71, 0.705],
                  "nodrop": [0.60, 0.62, 0.61, 0.63, 0.6]})
    sentence = tool.headline_verdict("Cora semi", ordering.compare_samplers(runs))
    assert sentence.startswith(f"- Cora semi, L = 32: DropEdge++ is {verdict} (")


def test_the_ablation_table_agrees_with_scipy_and_a_hand_holm():
    """Section 1d recomputed from the bundled ablation CSV (today's-stream rows): each arm's
    paired difference by scipy's ``ttest_rel`` and the Holm step-down written out here, row by
    row as printed."""
    from scipy import stats

    block = _block(DOC.read_text(encoding="utf-8"), "ablation")
    rows = [r.split("|")[1:-1] for r in block.splitlines()
            if r.startswith("| ") and "(the reference)" not in r]
    rows = [[c.strip() for c in r] for r in rows[2:]]  # no header, no rule
    runs = fingerprints.current(pd.read_csv(ABLATION))
    # every arm against DropEdge at the recipe's rates; DropEdge++ at other rates against its own
    arms = runs.groupby(["sampler", "p_min", "p_max", "directed"]).ngroups
    plus = runs[runs["sampler"] == "dropedge++"].groupby(["p_min", "p_max", "directed"]).ngroups

    def has(sampler: str) -> bool:
        return bool(((runs["sampler"] == sampler) & (runs["p_min"] == 0.3) & (runs["p_max"] == 0.8)
                     & ~runs["directed"].astype(bool)).any())

    assert len(rows) == (arms - 1 if has("dropedge") else 0) + (plus - 1 if has("dropedge++") else 0)

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
    """Section 3b: each cell's authors-recipe mean and seed count (today's stream), from a pandas
    groupby of the bundled CSVs, is the one printed in its row; a cell without is "–". The
    section lists DropEdge++ at each script's own depth (other depths and NoDrop are 3c's)."""
    from dropedge_explorer.data import presets

    runs = _current()
    runs = runs[(runs["settings"] == "authors") & (runs["sampler"] == "dropedge++")]
    own = runs.apply(lambda r: r["layers"] == presets.paper_preset(r["dataset"], r["split"],
                                                                   r["backbone"])["num_layers"], axis=1)
    runs = runs[own]
    block = _block(DOC.read_text(encoding="utf-8"), "authors")
    label = {"gcn": "GCN", "resgcn": "ResGCN", "jknet": "JKNet", "appnp_star": r"APPNP\*"}
    cells = runs.groupby(["dataset", "split", "backbone", "layers"])["test_acc"].agg(["mean", "count"])
    for (dataset, split, backbone, layers), row in cells.iterrows():
        pattern = (rf"^\| {split} \| {dataset} \| {label[backbone]} \| {layers} \| [^|]+ \| "
                   rf"{100 * row['mean']:.1f}( ± [0-9.]+)? \(n={int(row['count'])}\) \|")
        assert re.search(pattern, block, re.M), (dataset, split, backbone, layers)
    printed = [r for r in block.splitlines() if re.match(r"^\| (semi|full) \|", r)]
    assert sum(r.split("|")[6].strip() != "–" for r in printed) == len(cells)


def test_the_authors_code_table_agrees_with_a_direct_count():
    """Section 3c: each cell's mean and run count of the authors' own code (their bundled
    numbers), of our authors recipe and of our depth recipe, from pandas groupbys of the CSVs,
    are the ones printed in its row."""
    code = pd.read_csv(ROOT / "dropedge_explorer" / "assets" / "authors_code" / "runs.csv")
    ours = _current()
    block = _block(DOC.read_text(encoding="utf-8"), "authors_code")
    label = {"nodrop": "NoDrop", "dropedge++": "DropEdge++"}
    cells = code.groupby(["dataset", "split", "layers", "sampler"])["test_acc"].agg(["mean", "count"])
    for (dataset, split, layers, sampler), row in cells.iterrows():
        head = rf"^\| {dataset} {split} GCN \| {layers} \| {re.escape(label[sampler])} \|.*$"
        line = re.search(head, block, re.M)
        assert line, (dataset, layers, sampler)
        columns = [c.strip() for c in line.group(0).split("|")[1:-1]]
        assert columns[4].startswith(f"{100 * row['mean']:.1f}") and f"(n={int(row['count'])})" in columns[4]
        for column, settings in ((5, "authors"), (6, "depth")):
            part = ours[(ours["dataset"] == dataset) & (ours["split"] == split) & (ours["backbone"] == "gcn")
                        & (ours["layers"] == layers) & (ours["sampler"] == sampler)
                        & (ours["settings"] == settings)]
            expected = f"{100 * part['test_acc'].mean():.1f}" if len(part) else "–"
            assert columns[column].startswith(expected), (dataset, layers, sampler, settings, columns[column])
    assert len(re.findall(r"^\| (cora|citeseer) semi GCN \|", block, re.M)) == len(cells)


def test_a_table_the_data_call_for_gets_a_block_beside_its_kind(tool):
    """A table block the document lacks (a new table bundled by ``reproduce``) is added after
    the last block of the same backbone, and filled by the next regeneration."""
    doc = DOC.read_text(encoding="utf-8")
    name = "depth cora semi jknet"
    whole = re.compile(rf"^<!-- repro_tables: {name} -->$.*?^<!-- /repro_tables: {name} -->\n", re.S | re.M)
    without = whole.sub("", doc, count=1)
    assert name not in tool.MARKER.findall(without)
    added, names = tool.add_missing_blocks(without)
    assert names == [name]
    blocks = tool.MARKER.findall(added)
    assert blocks[blocks.index(name) - 1] == "depth citeseer semi jknet"  # jknet's last block before it
    assert "#### cora / semi, JKNet, settings 'depth'" in tool.regenerate(without)


def test_a_row_says_what_it_lacks_and_its_gpu_time(tool):
    """The runs a table lacks to 10 seeds a cell and their GPU minutes, as handed in, on the
    row of that table (and only there); with nothing lacking, no such part."""
    now = fingerprints.current(bundled_results(include_older=True).query("settings == 'depth'"))
    paper = reference.paper_accuracy_by_depth()
    lacking = {("cora", "semi", "resgcn"): (135, 1020.0), ("cora", "semi", "jknet"): (2, 30.0)}
    rows = {r[0]: r[5] for r in tool._depth_coverage(now, paper, None, lacking)}
    assert "135 runs to 10 seeds a cell, about 17 min on an H200-class GPU" in rows[
        "accuracy by depth, Cora semi, ResGCN"]
    assert "2 runs to 10 seeds a cell, under 1 min on an H200-class GPU" in rows[
        "accuracy by depth, Cora semi, JKNet"]
    assert "2 runs to" not in rows["accuracy by depth, Cora semi, ResGCN"]
    assert "runs to 10 seeds" not in rows["accuracy by depth, CiteSeer semi, GCN"]


def test_the_authors_code_sentence_by_depth_agrees_with_a_direct_count():
    """Section 3c's sentence by depth: at 8 layers (not a script's own depth), our authors
    recipe minus their code over the cells both ran, and each side's best cell mean, from
    pandas groupbys of the CSVs (their scripts' depths, Cora 4 and CiteSeer 2, written here)."""
    code = pd.read_csv(ROOT / "dropedge_explorer" / "assets" / "authors_code" / "runs.csv")
    ours = _current()
    ours = ours[(ours["settings"] == "authors") & (ours["split"] == "semi") & (ours["backbone"] == "gcn")]
    keys = ["dataset", "layers", "sampler"]
    theirs_mean = code.groupby(keys)["test_acc"].mean()
    ours_mean = ours.groupby(keys)["test_acc"].mean()
    block = _block(DOC.read_text(encoding="utf-8"), "authors_code")
    for layers, own in ((8, False), (None, True)):
        cells = [k for k in theirs_mean.index if k in ours_mean.index
                 and ((k[1] == {"cora": 4, "citeseer": 2}[k[0]]) if own else k[1] == layers)]
        diff = [100 * (ours_mean[k] - theirs_mean[k]) for k in cells]
        label = "At their scripts' own depths" if own else f"At {layers} layers"
        expected = (f"{label} ({len(cells)} cells), our authors recipe minus their code: "
                    f"{sum(diff) / len(diff):+.1f} points on average ({min(diff):+.1f} to {max(diff):+.1f}); "
                    f"the best cell mean is {100 * max(theirs_mean[k] for k in cells):.1f} % for their code "
                    f"and {100 * max(ours_mean[k] for k in cells):.1f} % for ours")
        assert expected in block, expected
