"""Print every number of docs/REPRODUCTION.md from the bundled run CSVs
(``dropedge_explorer/assets/results/``, the search and the ablation files) and the paper's tables, so
that the document is regenerated, never edited, after a sweep:

    python docs/tools/repro_tables.py --write docs/REPRODUCTION.md  # every block, in place
    python docs/tools/repro_tables.py --block ordering              # one block (names: BLOCKS)
    python docs/tools/repro_tables.py --settings depth > /tmp/tables.md
    python docs/tools/repro_tables.py --search > /tmp/search.md   # the per-cell search

A block is the text between ``<!-- repro_tables: NAME -->`` and ``<!-- /repro_tables: NAME -->``
(each on a line of its own); ``tests/studies/test_reproduction_doc.py`` fails on a number outside
the blocks and on a block the bundled data no longer give. Only runs of today's sampler streams
(:func:`dropedge_explorer.studies.fingerprints.current`) enter a table, a count or a verdict; the
``older`` block lists the others, beside today's runs of the same cell.

Cells: mean ± sample std of the test accuracy over the seeds (n = seeds), in %, beside
the paper's number; claims: the paired t-test over seeds of :mod:`dropedge_explorer.studies.ordering`,
with its 95% interval and its Holm-corrected p over the claim's depths in one table.
"""
from __future__ import annotations

import argparse
import functools
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import pandas as pd

from dropedge_explorer import paths
from dropedge_explorer.data import reference
from dropedge_explorer.figures import BACKBONE_LABELS
from dropedge_core.models import BACKBONES
from dropedge_explorer.studies import authors, cell_search, fingerprints, ordering, reproduce
from dropedge_explorer.studies.cells import paper_rows
from dropedge_explorer.studies.run_tables import bundled_results, empty_runs, read_runs

LABELS = {"nodrop": "NoDrop", "dropedge": "DropEdge", "dropedge++": "DropEdge++"}
BACKBONES_BY_LABEL = {label: key for key, label in BACKBONE_LABELS.items()}


@functools.lru_cache(maxsize=1)
def _every() -> pd.DataFrame:
    """Every bundled run row, of every stream (read once per process)."""
    return bundled_results(include_older=True)


def every_best_run() -> pd.DataFrame:
    """Every bundled best-point run of the per-cell search, of every stream
    (:func:`cell_search.bundled_best_runs` keeps today's only)."""
    files = sorted(cell_search.SEARCH_DIR.glob("cell_best_*.csv"))
    return pd.concat([read_runs(f) for f in files], ignore_index=True) if files else empty_runs()


def current_runs() -> pd.DataFrame:
    """The bundled runs of today's sampler streams: the only rows any table or verdict uses
    (:func:`dropedge_explorer.studies.fingerprints.current`; older-stream rows are listed apart,
    :func:`older_text`)."""
    return fingerprints.current(_every()).copy()


def older_depth_runs() -> pd.DataFrame:
    """The depth recipe's bundled runs of an older stream than today's."""
    old = fingerprints.older(_every())
    return old[old["settings"] == "depth"]


def current_best_runs() -> pd.DataFrame:
    """The per-cell search's best-point runs of today's streams."""
    best = cell_search.bundled_best_runs()
    return fingerprints.current(best).copy() if len(best) else best


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
    ref = paper_rows(paper, dataset, split, [backbone])
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


FAMILY_NOTE = ("Verdicts on the Holm-corrected p (α = 0.05); the family of each test is its claim at "
               "every depth of this table (e.g. all DropEdge++ ≥ DropEdge cells of this table; its size "
               "is the last column). The interval is the 95% t-interval of the mean paired difference "
               "over the seeds (per comparison, not simultaneous), so it can exclude 0 where the "
               "corrected test does not reject.")
CLAIMS_HEAD = "| L | claim | difference, points (95% CI) | seeds | p | Holm p | verdict | family |"


def claims_table(runs, dataset: str, split: str, backbone: str = "gcn") -> str:
    part = runs[(runs["dataset"] == dataset) & (runs["split"] == split) & (runs["backbone"] == backbone)]
    table = ordering.compare_samplers(part)
    lines = [CLAIMS_HEAD, "|" + " --- |" * 8]
    for row in table.itertuples():
        ci = "" if row.ci_low != row.ci_low else f" ({100 * row.ci_low:+.1f} to {100 * row.ci_high:+.1f})"
        lines.append(f"| {row.layers} | {LABELS[row.better]} ≥ {LABELS[row.worse]} | "
                     f"{100 * row.diff_mean:+.1f}{ci} | {row.n} | {ordering.format_p(row.p_value)} | "
                     f"{ordering.format_p(row.p_holm)} | {row.verdict} | "
                     f"this claim, {row.family_size} depths |")
    sentence = ordering.leader_sentence(part)
    return "\n".join(lines) + (f"\n\n{sentence}" if sentence else "")


def search_table(summary, best, paper, dataset: str, split: str, backbone: str = "gcn") -> str:
    """One row per searched cell: budget, best validation accuracy, whether the best is the
    recipe's own point (trial 0), what it changed, and its test accuracy over the seeds of
    ``best`` (today's-stream runs of the best point only; ``summary`` from
    :func:`cell_search.bundled_summary`, which leaves out a search of an older stream)."""
    part = summary[(summary["dataset"] == dataset) & (summary["split"] == split)
                   & (summary["backbone"] == backbone)].sort_values(["num_layers", "sampler"])
    ref = paper_rows(paper, dataset, split, [backbone])
    lines = ["| L | sampler | trials (done / pruned) | best val | best = recipe point | best's settings "
             "(keep rates) | test, the best point's runs | paper |", "|" + " --- |" * 8]
    for r in part.itertuples():
        keep = (f"p = {r.p:.2f}" if r.sampler == "dropedge" else "–" if r.sampler == "nodrop"
                else f"{r.p_min:.2f} → {r.p_max:.2f}")
        hit = ref[(ref["sampler"] == r.sampler) & (ref["layers"] == r.num_layers)]["test_accuracy"]
        runs = best[(best["dataset"] == dataset) & (best["split"] == split) & (best["backbone"] == backbone)
                    & (best["layers"] == r.num_layers) & (best["sampler"] == r.sampler)]
        recipe_point = "yes" if r.best_is_recipe_point else "no"
        lines.append(f"| {r.num_layers} | {LABELS.get(r.sampler, r.sampler)} | {r.trials} "
                     f"({r.complete} / {r.pruned}) | {100 * r.best_val_acc:.1f} | {recipe_point} | "
                     f"{r.settings} ({keep}) | {_cell(runs['test_acc'].tolist())} | "
                     + (f"{float(hit.iloc[0]):.1f}" if len(hit) else "–") + " |")
    return "\n".join(lines)


NO_DATA = "not run: the data cannot be obtained on this project's machines (offline; Cora and CiteSeer only)"
NOT_REACHED = "CPU time (a shared 2-core machine, no GPU)"
STALE = "runs of an older sampler stream only (section \"Older-stream runs\")"
#: The paper's dataset names as the text spells them.
NAMES = {"Citeseer": "CiteSeer", "Pubmed": "PubMed"}


def _seeds(counts) -> str:
    lo, hi = int(counts.min()), int(counts.max())
    return str(lo) if lo == hi else f"{lo}-{hi}"


def reproduce_command(dataset: str, split: str, backbone: str) -> str:
    """The command that runs the missing cells of a depth table (:mod:`dropedge_explorer.studies.reproduce`)."""
    table = next(t for t in reproduce.TABLES.values()
                 if (t.dataset, t.split) == (dataset, split) and backbone in t.backbones)
    return f"reproduce --table {table.name}"


#: The seeds every cell of a depth table should have (what ``reproduce`` runs by default).
TARGET_SEEDS = 10


def _gpu_minutes(seconds: float) -> str:
    return f"about {seconds / 60:.0f} min" if seconds >= 60 else "under 1 min"


def remaining_on_gpu() -> dict[tuple[str, str, str], tuple[int, float]]:
    """``{(dataset, split, backbone): (runs, seconds)}``: the runs each depth table lacks to
    :data:`TARGET_SEEDS` seeds a cell beside its bundled runs of today's stream, and their
    estimated time as single runs on an H200-class GPU
    (:func:`dropedge_explorer.studies.reproduce.remaining_gpu_plan`)."""
    out: dict[tuple[str, str, str], tuple[int, float]] = {}
    for table in reproduce.TABLES.values():
        plan = reproduce.remaining_gpu_plan(table, TARGET_SEEDS)
        for backbone, part in plan.groupby("backbone"):
            out[(table.dataset, table.split, backbone)] = (int(part["seeds"].sum()), float(part["seconds"].sum()))
    return out


def _depth_coverage(runs, paper, older=None, remaining=None) -> list[tuple]:
    """Rows of the coverage table for the accuracy-by-depth table: one per Cora/CiteSeer
    (setting, dataset, backbone), one for PubMed. A cell is run when the depth recipe has a
    run of its (dataset, split, backbone, sampler, layers) of today's sampler stream; a cell
    with runs of an older stream only (``older``) says so; ``remaining``
    (:func:`remaining_on_gpu`) adds the runs still lacking and their estimated GPU time."""
    seeds = runs.groupby(["dataset", "split", "backbone", "sampler", "layers"])["seed"].nunique()
    stale = set() if older is None else set(map(tuple, older[["dataset", "split", "backbone", "sampler",
                                                              "layers"]].itertuples(index=False)))
    rows = []
    for (setting, name, backbone), part in paper.groupby(["setting", "dataset", "backbone"], sort=False):
        key, bb = part["dataset_key"].iloc[0], BACKBONES_BY_LABEL[backbone]
        if key not in set(runs["dataset"]):
            continue
        got = [seeds.get((key, setting, bb, r.sampler, r.layers)) for r in part.itertuples()]
        run = [g for g in got if g is not None]
        depths = sorted({r.layers for r, g in zip(part.itertuples(), got) if g is not None})
        cells = [(r, (key, setting, bb, r.sampler, r.layers) in stale) for r, g in zip(part.itertuples(), got)
                 if g is None]
        why = []
        for reason, old in ((STALE, True), (NOT_REACHED, False)):
            missing = sorted({r.layers for r, o in cells if o == old})
            if missing:
                samplers_ = sorted({LABELS[r.sampler] for r, o in cells if o == old})
                why.append(f"L = {', '.join(map(str, missing))} ({', '.join(samplers_)}): {reason}")
        lacking, seconds = (remaining or {}).get((key, setting, bb), (0, 0.0))
        if lacking:
            why.append(f"{lacking} runs to {TARGET_SEEDS} seeds a cell, {_gpu_minutes(seconds)} on an "
                       "H200-class GPU")
        if why:  # every missing cell or seed, an older stream's too, is what `reproduce` runs
            why.append(f"`{reproduce_command(key, setting, bb)}`")
        rows.append((f"accuracy by depth, {NAMES.get(name, name)} {setting}, {backbone}", len(part), len(run),
                     ", ".join(map(str, depths)) or "–", _seeds(pd.Series(run)) if run else "–",
                     "; ".join(why) or "–"))
    rest = paper[~paper["dataset_key"].isin(set(runs["dataset"]))]
    for name, part in rest.groupby("dataset"):
        rows.append((f"accuracy by depth, {NAMES.get(name, name)} (both settings, every backbone)",
                     len(part), 0, "–", "–", NO_DATA))
    return rows


def coverage_rows(runs, paper, best, paper_best, men, paper_men, epoch_time,
                  older=None, remaining=None) -> list[tuple]:
    """(paper table, cells, cells run, depths run, seeds per cell, why not) per part of the
    paper's tables: accuracy by depth (depth recipe runs), best accuracy per backbone (the
    ``paper`` preset's runs), the MEN table (``assets/men``), the epoch-time table; ``older``:
    the depth recipe's older-stream runs (named as the reason a cell is not run)."""
    rows = _depth_coverage(runs, paper, older, remaining)
    seeds = best.groupby(["dataset", "split", "backbone"])["seed"].nunique()
    for name, part in paper_best.groupby("dataset", sort=False):
        got = [seeds.get((r.dataset_key, r.setting, BACKBONES_BY_LABEL[r.backbone]))
               for r in part.itertuples()]
        run = [g for g in got if g is not None]
        rows.append((f"best accuracy per backbone, {NAMES.get(name, name)}", len(part), len(run),
                     "the paper's depth" if run else "–",
                     _seeds(pd.Series(run)) if run else "–", "–" if run else NO_DATA))
    keys = {(d, s, int(L)) for d, s, L in zip(men["dataset"], men["sampler"], men["layers"])}
    for name, part in paper_men.groupby("dataset", sort=False):
        hit = [r for r in part.itertuples() if (r.dataset.lower(), r.sampler, int(r.layers)) in keys]
        runs_n = men[men["dataset"] == name.lower()]["runs"]
        rows.append((f"MEN, {NAMES.get(name, name)}", len(part), len(hit), "4, 8, 16",
                     f"{_seeds(runs_n)} (sampling runs)", "–"))
    cells = epoch_time.shape[0] * (epoch_time.shape[1] - 1)
    rows.append(("time per epoch (Cora)", cells, 0, "–", "–",
                 "not bundled: the page \"The paper's tables\" measures it live on the machine it runs on "
                 "(the paper's numbers are from its GPU at an unstated depth)"))
    return rows


def coverage_table(rows) -> str:
    total, run = sum(r[1] for r in rows), sum(r[2] for r in rows)
    lines = ["| the paper's table | cells | run here | depths run | seeds per cell | not run, and why |",
             "|" + " --- |" * 6]
    lines += [f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]} | {r[5]} |" for r in rows]
    lines.append(f"| **all** | **{total}** | **{run} ({100 * run / total:.0f}%)** | | | |")
    return "\n".join(lines)


def _pts(value: float, signed: bool = True) -> str:
    """Points (already ×100) to one decimal, ``–`` when not a number."""
    if value is None or value != value:
        return "–"
    return f"{value:+.1f}" if signed else f"{value:.1f}"


def below_paper(runs, paper, sampler: str = "dropedge++") -> tuple[int, int, list[float]]:
    """(cells where our mean is below the paper's number, cells with both, our mean − paper per cell,
    points) for one sampler of the accuracy-by-depth table."""
    part = runs[runs["sampler"] == sampler]
    means = part.groupby(["dataset", "split", "backbone", "layers"])["test_acc"].mean()
    gaps = []
    for r in paper[paper["sampler"] == sampler].itertuples():
        m = means.get((r.dataset_key, r.setting, BACKBONES_BY_LABEL[r.backbone], r.layers))
        if m is not None:
            gaps.append(100 * m - r.test_accuracy)
    return sum(g < 0 for g in gaps), len(gaps), gaps


def headline_sentence(runs, paper, best, paper_best) -> str:
    """DropEdge++ against the paper in both tables, NoDrop against the paper's copied column;
    says so when no today's-stream DropEdge++ run is bundled."""
    n, m, gaps = below_paper(runs, paper)
    bm = best.groupby(["dataset", "split", "backbone"])["test_acc"].mean()
    best_gaps = [100 * bm[k] - r.test_accuracy for r in paper_best.itertuples()
                 if (k := (r.dataset_key, r.setting, BACKBONES_BY_LABEL[r.backbone])) in bm.index]
    nd, nm, nd_gaps = below_paper(runs, paper, "nodrop")
    if m:
        head = (f"**DropEdge++ is below the paper in {n} of {m} cells** of the accuracy-by-depth table run "
                f"here (depth recipe; mean {sum(gaps) / m:+.1f} points, median "
                f"{pd.Series(gaps).median():+.1f})")
    else:
        head = ("**No cell of the accuracy-by-depth table has a DropEdge++ run of today's sampler "
                "stream yet** (the older-stream runs are listed apart and used nowhere)")
    if best_gaps:
        head += (f", and in {sum(g < 0 for g in best_gaps)} of {len(best_gaps)} cells of the best-accuracy "
                 f"table (the paper's presets; mean {sum(best_gaps) / len(best_gaps):+.1f}).")
    else:
        head += "; the best-accuracy table has no DropEdge++ run of today's stream either."
    if nm:
        head += (f" Our NoDrop is above the paper's (copied from the DropEdge paper) in {nm - nd} of {nm} "
                 f"cells (largest {max(nd_gaps):+.1f} points).")
    return head


def remaining_sentence(remaining) -> str:
    """The depth tables' runs still lacking to :data:`TARGET_SEEDS` seeds a cell, and their
    estimated time on one GPU."""
    runs = sum(n for n, _ in remaining.values())
    seconds = sum(t for _, t in remaining.values())
    per_layer = reproduce.GPU_EPOCH_SECONDS_PER_LAYER
    return (f"**What remains of the Cora and CiteSeer depth tables**: {runs} runs to {TARGET_SEEDS} seeds "
            f"a cell, {_gpu_minutes(seconds)} on one H200-class GPU as single runs (estimated, not "
            f"measured here: {per_layer * 32:g} s per epoch for a Cora GCN-32 run on an H200, scaled by depth, "
            "times each cell's mean epochs; batching a cell's seeds takes less), against hours on this "
            "project's CPU (`reproduce --table NAME --dry-run` measures it).")


def front_matter(runs, paper, best, paper_best, men, paper_men, epoch_time, older=None,
                 remaining=None) -> str:
    """The lines at the top of docs/REPRODUCTION.md: DropEdge++ against the paper, the coverage
    table, and the ordering tests of sections 1 and 1c taken as one family."""
    claims = ordering.compare_samplers(runs, family=())
    tested = claims[claims["p_value"].notna()]
    out = [headline_sentence(runs, paper, best, paper_best),
           "",
           coverage_table(coverage_rows(runs, paper, best, paper_best, men, paper_men, epoch_time, older,
                                        remaining)),
           "",
           *([remaining_sentence(remaining), ""] if remaining else []),
           f"**The ordering tests taken together** (sections 1 and 1c, depth recipe): {len(tested)} "
           f"paired tests, {int((tested['p_value'] < ordering.ALPHA).sum())} with an uncorrected "
           f"p < {ordering.ALPHA:g}; Holm-corrected over all {len(tested)} as one family, "
           f"{int((tested['verdict'] != 'not shown').sum())} reject."]
    return "\n".join(out)


def _mean(runs, **where) -> float:
    part = runs
    for k, v in where.items():
        part = part[part[k] == v]
    return 100 * part["test_acc"].mean()


def _paper_number(paper, dataset: str, split: str, backbone: str, sampler: str, layers: int) -> float:
    ref = paper_rows(paper, dataset, split, [backbone], [sampler])
    hit = ref[ref["layers"] == layers]["test_accuracy"]
    return float(hit.iloc[0]) if len(hit) else float("nan")


GCN_TABLES = [("cora", "semi"), ("cora", "full"), ("citeseer", "semi"), ("citeseer", "full")]


def facts(every, paper) -> str:
    """The numbers behind the document's statements, each recomputed from the bundled CSVs
    (today's streams): the paper's copied NoDrop/DropEdge columns against ours at 8-32 layers
    (section 1), when the 32-/64-layer runs stopped (section 1), DropEdge++ − paper per GCN
    cell (section 1), ResGCN's NoDrop against the paper (section 1c), and the 2/4-layer runs
    of the ``quick`` and ``depth`` sweeps, whose settings are identical there (section 4)."""
    depth_runs, quick = every[every["settings"] == "depth"], every[every["settings"] == "quick"]
    gcn = depth_runs[depth_runs["backbone"] == "gcn"]
    out = ["#### The paper's NoDrop and DropEdge columns against ours, GCN, 8-32 layers (depth recipe)", ""]
    for sampler in ("nodrop", "dropedge"):
        above = []
        cells = 0
        for d, sp in GCN_TABLES:
            for L in (8, 16, 32):
                ours = _mean(gcn, dataset=d, split=sp, sampler=sampler, layers=L)
                theirs = _paper_number(paper, d, sp, "gcn", sampler, L)
                if ours != ours:
                    continue
                cells += 1
                if theirs >= ours:
                    above.append(f"{d} {sp} {L} (paper {theirs:.1f}, ours {ours:.1f})")
        out.append(f"- {LABELS[sampler]}: the paper's number is below ours in {cells - len(above)} of "
                   f"{cells} cells; at or above ours in {len(above)}"
                   + (f": {'; '.join(above)}" if above else ""))
    out += ["", "#### Runs at 32 and 64 layers that stopped before the 400-epoch budget (GCN, depth recipe; "
            "patience 200, so the best validation epoch is at most epochs run − 200)", ""]
    for L in (32, 64):
        part = gcn[gcn["layers"] == L]
        early = part[part["epochs_run"] < 400].sort_values(["dataset", "split", "sampler", "seed"])
        listed = "; ".join(f"{r.dataset} {r.split} {LABELS[r.sampler]} seed {r.seed}: {r.epochs_run}"
                           for r in early.itertuples())
        out.append(f"- L = {L}: {len(part) - len(early)} of {len(part)} runs trained all 400 epochs; "
                   f"stopped early: {len(early)}" + (f" ({listed})" if listed else ""))
    out += ["", "#### DropEdge++ − the paper, GCN (depth recipe; points)", "",
            "| L | " + " | ".join(f"{d} {sp}" for d, sp in GCN_TABLES) + " |", "|" + " --- |" * 5]
    for L in sorted(gcn["layers"].unique()):
        cells = [_pts(_mean(gcn, dataset=d, split=sp, sampler="dropedge++", layers=L)
                      - _paper_number(paper, d, sp, "gcn", "dropedge++", L)) for d, sp in GCN_TABLES]
        out.append(f"| {L} | " + " | ".join(cells) + " |")
    out += ["", "#### ResGCN NoDrop against the paper (semi, depth recipe)", ""]
    res = depth_runs[(depth_runs["backbone"] == "resgcn") & (depth_runs["sampler"] == "nodrop")]
    for (d, L), part in res.groupby(["dataset", "layers"]):
        theirs = _paper_number(paper, d, "semi", "resgcn", "nodrop", L)
        out.append(f"- {d} {L}: ours {100 * part['test_acc'].mean():.1f}, paper {theirs:.1f} "
                   f"({100 * part['test_acc'].mean() - theirs:+.1f})")
    out += ["", "#### GCN at 2 and 4 layers: the quick sweep against the depth sweep (identical settings)",
            ""]
    cols = ["dataset", "split", "sampler", "layers", "seed"]
    both = quick[quick["layers"] <= 4].merge(gcn[gcn["layers"] <= 4], on=cols, suffixes=("_quick", "_depth"))
    for sampler, part in both.groupby("sampler"):
        diff = 100 * (part["test_acc_quick"] - part["test_acc_depth"])
        out.append(f"- {LABELS[sampler]}: {int((diff.abs() > 1e-9).sum())} of {len(part)} runs differ "
                   f"(largest |quick − depth| {diff.abs().max():.1f} points; mean quick − depth "
                   f"{diff.mean():+.2f})")
    missing = sorted(set(LABELS) - set(both["sampler"]))
    if missing:
        out.append(f"- {', '.join(LABELS[s] for s in missing)}: no run of today's stream in both sweeps")
    return "\n".join(out)


CRITERIA = {"val_acc": "validation accuracy", "val_loss": "validation loss",
            "train_val_loss": "training pass's validation loss"}


def _pct(mean: float, std: float, n: int) -> str:
    if not n:
        return "–"
    return f"{100 * mean:.1f}" + ("" if n < 2 else f" ± {100 * std:.1f}") + f" (n={n})"


def authors_text() -> str:
    """Section 3b: the authors recipe's runs (DropEdge++, the scripts' presets up to 8 layers)
    beside the paper recipe's and the paper's best-accuracy numbers; the seeds not run."""
    table = authors.comparison(current_runs())
    lines = ["| split | dataset | backbone | L | epochs, checkpoint on | authors recipe | paper recipe | "
             "paper | authors − paper recipe | seeds 0-9 not run |", "|" + " --- |" * 10]
    for r in table.itertuples():
        diff = ("–" if not (r.authors_n and r.paper_recipe_n)
                else f"{100 * (r.authors_mean - r.paper_recipe_mean):+.1f}")
        lines.append(f"| {r.split} | {r.dataset} | {BACKBONE_LABELS[r.backbone]} | {r.layers} | {r.epochs}, "
                     f"{CRITERIA[r.criterion]} | {_pct(r.authors_mean, r.authors_std, r.authors_n)} | "
                     f"{_pct(r.paper_recipe_mean, r.paper_recipe_std, r.paper_recipe_n)} | {r.paper:g} | "
                     f"{diff} | {r.missing_seeds or '–'} |")
    summary = authors.summary(table) or ("No cell has runs of both recipes at today's sampler stream: "
                                         "nothing to compare yet.")
    return "\n".join(lines) + f"\n\n{summary}"


def authors_code_text() -> str:
    """Section 3c: the authors' own code's runs (``assets/authors_code/runs.csv``) beside the
    paper, our ``authors`` recipe and our ``depth`` recipe, cell by cell, and which gap is which."""
    code = authors.code_runs()
    table = authors.code_comparison(code, current_runs(), reference.paper_accuracy_by_depth())
    lines = ["| dataset | L | sampler | paper | authors' code | ours, authors recipe | ours, depth recipe |",
             "|" + " --- |" * 7]
    for r in table.itertuples():
        lines.append(f"| {r.dataset} {r.split} {BACKBONE_LABELS[r.backbone]} | {r.layers} | "
                     f"{LABELS[r.sampler]} | {r.paper:g} | {_pct(r.code_mean, r.code_std, r.code_n)} | "
                     f"{_pct(r.authors_mean, r.authors_std, r.authors_n)} | "
                     f"{_pct(r.depth_mean, r.depth_std, r.depth_n)} |")
    source = code.drop_duplicates(["repository", "commit", "script"])
    scripts = ", ".join(f"`{s}`" for s in source["script"])
    seeds = ", ".join(f"{int(s)}" for s in sorted(code["seed"].unique()))
    plural = "" if len(code) == 1 else "s"
    head = (f"Their code: `{source['repository'].iloc[0]}` at commit `{source['commit'].iloc[0]}`, "
            f"`src/train_semi.py` with the settings of {scripts}; {len(code)} run{plural}, seeds {seeds} "
            "(a cell lists the runs it has). Accuracy in %, mean ± sample std (n = runs).")
    return (head + "\n\n" + "\n".join(lines) + "\n\n" + authors.code_summary(table) + "\n\n"
            + authors.code_depth_summary(table))


def _groups(runs) -> list[tuple[str, str, str]]:
    order = {b: i for i, b in enumerate(BACKBONES)}
    return sorted(runs.groupby(["dataset", "split", "backbone"]).groups,
                  key=lambda g: (g[0], g[1], order[g[2]]))


def depth_block(dataset: str, split: str, backbone: str, settings: str = "depth") -> str:
    """One (dataset, split, backbone) of one settings column: its heading, depth table and claims."""
    runs = current_runs()
    runs = runs[runs["settings"] == settings]
    paper = reference.paper_accuracy_by_depth()
    return (f"#### {dataset} / {split}, {BACKBONE_LABELS[backbone]}, settings {settings!r}\n\n"
            f"{depth_table(runs, paper, dataset, split, backbone)}\n\n"
            f"{claims_table(runs, dataset, split, backbone)}")


def depth_text(settings: str = "depth") -> str:
    """Every (dataset, split, backbone) of one settings column: its depth table and its claims."""
    runs = current_runs()
    runs = runs[runs["settings"] == settings]
    return "\n\n".join(depth_block(*g, settings=settings) for g in _groups(runs))


def search_block(dataset: str, split: str, backbone: str = "gcn") -> str:
    """The per-cell search of one table: its summary and the claims over its best points' runs."""
    summary, best = cell_search.bundled_summary(), current_best_runs()
    paper = reference.paper_accuracy_by_depth()
    return (f"#### {dataset} / {split}, {BACKBONE_LABELS[backbone]}, the per-cell search\n\n"
            f"{search_table(summary, best, paper, dataset, split, backbone)}\n\n"
            f"{claims_table(best, dataset, split, backbone)}")


def search_text() -> str:
    """The per-cell search of every searched table: its summary and its claims."""
    summary = cell_search.bundled_summary()
    return "\n\n".join(search_block(d, sp, b)
                       for (d, sp, b), _ in summary.groupby(["dataset", "split", "backbone"]))


def front_text() -> str:
    every = current_runs()
    men = pd.read_csv(paths.MEN_DIR / "men_table.csv")
    return front_matter(every[every["settings"] == "depth"], reference.paper_accuracy_by_depth(),
                        every[every["settings"] == "paper"], reference.paper_best_accuracy(), men,
                        reference.paper_men(), reference.paper_epoch_time(), older_depth_runs(),
                        remaining_on_gpu())


def facts_text() -> str:
    return facts(current_runs(), reference.paper_accuracy_by_depth())


ABLATION = Path(paths.BUNDLED_RESULTS_DIR).parent / "ablation" / "gcn32_cora_semi.csv"
ABLATION_REFERENCE = ("dropedge", 0.3, 0.8, False)
ABLATION_ARMS = ["sampler", "p_min", "p_max", "directed"]


def ablation_runs(path: Path = ABLATION) -> pd.DataFrame:
    """The ablation's rows of today's streams (a file without a ``stream`` column is stream 1)."""
    return fingerprints.current(pd.read_csv(path))


def _arm(sampler: str, p_min: float, p_max: float, directed: bool) -> str:
    """An ablation arm's name with its keep rates (``p`` is the sampler's default, (p_min + p_max) / 2)."""
    rates = {"nodrop": "", "dropedge": f" p = {(p_min + p_max) / 2:g}", "fd": f" p = {(p_min + p_max) / 2:g}"}
    name = {"lid": "LID", "fd": "FD", **LABELS}[sampler] + rates.get(sampler, f" {p_min:g}→{p_max:g}")
    return name + (", directed" if directed else "")


def ablation_text(path: Path = ABLATION) -> str:
    """The 32-layer ablation: every arm's accuracy, each arm against DropEdge (paired by seed) and
    DropEdge++ with each bottom keep rate against DropEdge++ at the recipe's; one Holm family.
    Today's-stream rows only."""
    runs = ablation_runs(path)
    by_arm = {key: part.set_index("seed")["test_acc"]
              for key, part in runs.groupby(ABLATION_ARMS, sort=False)}
    if ABLATION_REFERENCE not in by_arm:
        return f"No {_arm(*ABLATION_REFERENCE)} run of today's stream in the ablation file: no test."
    order = sorted(by_arm, key=lambda k: (list(LABELS).index(k[0]) if k[0] in LABELS else 1.5, k[3], k[1]))
    base_plus = ("dropedge++", 0.3, 0.8, False)
    pairs = [(a, ABLATION_REFERENCE) for a in order if a != ABLATION_REFERENCE]
    if base_plus in by_arm:
        pairs += [(a, base_plus) for a in order if a[0] == "dropedge++" and a != base_plus]
    tests = []
    for a, b in pairs:
        both = by_arm[a].index.intersection(by_arm[b].index)
        tests.append(ordering.paired_difference(by_arm[a][both], by_arm[b][both]))
    adjusted = ordering.holm([t.p_value for t in tests]) if tests else []
    lines = [f"| arm | seeds | test accuracy, % | against | difference, points ({ordering.LEVEL:.0%} CI) | p "
             "| Holm p | verdict |",
             "|" + " --- |" * 8]
    for (a, b), t, ph in zip(pairs, tests, adjusted):
        acc = by_arm[a]
        verdict = "not shown" if not ph < ordering.ALPHA else ("lower" if t.mean < 0 else "higher")
        lines.append(f"| {_arm(*a)} | {acc.size} | {100 * acc.mean():.1f} ± {100 * acc.std():.1f} | "
                     f"{_arm(*b)} | "
                     f"{100 * t.mean:+.1f} ({100 * t.ci_low:+.1f} to {100 * t.ci_high:+.1f}) | "
                     f"{ordering.format_p(t.p_value)} | {ordering.format_p(ph)} | {verdict} |")
    ref = by_arm[ABLATION_REFERENCE]
    lines.append(f"| {_arm(*ABLATION_REFERENCE)} | {ref.size} | "
                 f"{100 * ref.mean():.1f} ± {100 * ref.std():.1f} | (the reference) | | | | |")
    lower = [_arm(*a) for (a, b), t, ph in zip(pairs, tests, adjusted)
             if b == ABLATION_REFERENCE and ph < ordering.ALPHA and t.mean < 0]
    higher = [_arm(*a) for (a, b), t, ph in zip(pairs, tests, adjusted)
              if b == ABLATION_REFERENCE and ph < ordering.ALPHA and t.mean > 0]
    kept = [_arm(*a) for (a, b), t, ph in zip(pairs, tests, adjusted)
            if b == ABLATION_REFERENCE and not ph < ordering.ALPHA and a[0] != "nodrop"]
    extra = (f"; DropEdge++ at other keep rates against DropEdge++ {base_plus[1]:g}→{base_plus[2]:g}"
             if base_plus in by_arm else "")
    missing = "" if base_plus in by_arm else (" No DropEdge++ arm of today's stream is bundled: the table "
                                              "has no DropEdge++ row yet.")
    summary = (f"One family of {len(tests)} paired t-tests (each arm against DropEdge{extra}), "
               f"Holm-corrected (α = {ordering.ALPHA:g}). Below DropEdge: {'; '.join(lower) or 'none'}. "
               f"Above it: {'; '.join(higher) or 'none'}. "
               f"Not shown to differ from it: {'; '.join(kept) or 'none'}.{missing}")
    return "\n".join(lines) + "\n\n" + summary


#: Points: a cell this close to the paper's number counts as near it (sections 1 and 3).
NEAR = 3.0


def _depth_runs(backbone: str | None = "gcn", settings: str = "depth") -> pd.DataFrame:
    runs = current_runs()
    runs = runs[runs["settings"] == settings]
    return runs if backbone is None else runs[runs["backbone"] == backbone]


def _table_name(dataset: str, split: str, backbone: str = "gcn") -> str:
    name = {"cora": "Cora", "citeseer": "CiteSeer"}.get(dataset, dataset)
    return f"{name} {split}" + ("" if backbone == "gcn" else f" {BACKBONE_LABELS[backbone]}")


def _p(name: str, value: float) -> str:
    """``p = 0.012`` or ``p < 0.001`` (:func:`ordering.format_p`)."""
    text = ordering.format_p(value)
    return f"{name} {text}" if text.startswith("<") else f"{name} = {text}"


def _claim_phrase(row, table: str) -> str:
    """One row of :func:`ordering.compare_samplers` as a clause with its numbers."""
    side = "above" if row.diff_mean > 0 else "below"
    return (f"{table}, L = {row.layers}: {LABELS[row.better]} {side} {LABELS[row.worse]} by "
            f"{100 * row.diff_mean:+.1f} points ({100 * row.ci_low:+.1f} to {100 * row.ci_high:+.1f}), "
            f"{row.n} seeds, {_p('p', row.p_value)}, {_p('Holm p', row.p_holm)} ({row.verdict})")


def _claims(runs) -> list[tuple[str, pd.DataFrame]]:
    """(table name, its claims) for every (dataset, split, backbone) of ``runs``."""
    out = []
    for d, sp, b in _groups(runs):
        part = runs[(runs["dataset"] == d) & (runs["split"] == sp) & (runs["backbone"] == b)]
        out.append((_table_name(d, sp, b), ordering.compare_samplers(part)))
    return out


def verdict_rules_text() -> str:
    """How a verdict is made, with the level, α, the family sizes and the seed counts of the
    bundled tables (the paragraph under the coverage table)."""
    kinds = [("the GCN tables", _depth_runs("gcn")),
             ("the backbone tables", _depth_runs(None).query("backbone != 'gcn'")),
             ("the search", current_best_runs())]
    sizes, seeds = [], []
    for label, runs in kinds:
        claims = pd.concat([c for _, c in _claims(runs)] or [pd.DataFrame(columns=["family_size", "n"])])
        if len(claims):
            counts = "/".join(str(int(v)) for v in sorted(claims["family_size"].unique()))
            sizes.append(f"{counts} for {label}")
            seeds += claims["n"].dropna().astype(int).tolist()
    span = f"{min(seeds)}-{max(seeds)}" if seeds else "few"
    return (f"**Verdicts.** Every ordering claim below (is DropEdge++ ≥ DropEdge ≥ NoDrop at a depth?) is a "
            f"paired t-test over the seeds both samplers ran (`dropedge_explorer.studies.ordering`), reported as "
            f"the mean paired difference with its {ordering.LEVEL:.0%} t-interval, the uncorrected p and the "
            f"**Holm-corrected p over the claim's family**: one claim (say DropEdge++ ≥ DropEdge) at every "
            f"depth of one table — {'; '.join(sizes) or 'no family yet'} tests; each table's closing "
            f"sentence and the Depth study page's \"Does DropEdge++ lead?\" use the same families. A verdict "
            f"is **shown** (or **reversed**, the claim contradicted) only where the corrected "
            f"p < {ordering.ALPHA:g}, otherwise **not shown** — which is not \"false\": with {span} seeds a "
            f"paired test sees only differences of a few points. The interval is per comparison, so it can "
            f"exclude 0 where the corrected test does not reject. Only runs of today's sampler streams enter "
            f"a table or a verdict; runs of an older stream are listed in \"Older-stream runs\" and used "
            f"nowhere else.")


def recipes_text() -> str:
    """The settings each recipe gives by depth, from :func:`dropedge_explorer.training.recipes.describe`."""
    from dropedge_explorer.training import TrainConfig, recipes

    def line(label: str, **fields) -> str:
        config = TrainConfig(dataset="cora", split="semi", **fields)
        return f"- {label}: {recipes.describe(config.to_dict())}"

    base = TrainConfig(dataset="cora", split="semi")
    lines = [line(f"`depth`, GCN, L = {L}", num_layers=L) for L in (2, 4, 8, 16, 32, 64)]
    lines += [line(f"`depth`, ResGCN, L = {L}", backbone="resgcn", num_layers=L) for L in (16, 32)]
    lines += [line("`depth`, APPNP*, L = 64", backbone="appnp_star", num_layers=64),
              line("`quick`, every backbone and depth (GCN, L = 64)", recipe="quick", num_layers=64),
              f"- keep rates (every recipe but the paper's presets): p_min = {base.p_min:g} → "
              f"p_max = {base.p_max:g}; DropEdge at {(base.p_min + base.p_max) / 2:g}"]
    return "\n".join(lines)


def _span(values: list[float]) -> str:
    values = [v for v in values if v == v]
    return f"{min(values):.1f}-{max(values):.1f}%" if values else "–"


def depth_changed_text() -> str:
    """Section 1, "What the depth recipe changed": Cora semi at 8-16 layers under both recipes,
    and GCN-16 DropEdge++ with the CLI's defaults against the paper."""
    deep, quick = _depth_runs("gcn"), _depth_runs("gcn", "quick")

    def means(runs) -> list[float]:
        part = runs[(runs["dataset"] == "cora") & (runs["split"] == "semi") & runs["layers"].isin([8, 16])]
        return (100 * part.groupby(["sampler", "layers"])["test_acc"].mean()).tolist()

    cell = deep[(deep["dataset"] == "cora") & (deep["split"] == "semi") & (deep["layers"] == 16)
                & (deep["sampler"] == "dropedge++")]["test_acc"]
    paper = _paper_number(reference.paper_accuracy_by_depth(), "cora", "semi", "gcn", "dropedge++", 16)
    cli = (f"The CLI's defaults train GCN-16 on Cora semi to {_cell(cell.tolist())} with DropEdge++ "
           f"(mean ± std, %; paper {paper:.1f})." if len(cell) else
           "No GCN-16 DropEdge++ run of today's stream is bundled yet for Cora semi.")
    return (f"**What the depth recipe changed.** On Cora semi at 8-16 layers the samplers' cell means "
            f"span {_span(means(deep))} under the depth recipe, against {_span(means(quick))} under the "
            f"quick recipe (section 4; today's-stream runs of each). {cli}")


def near_paper_text() -> str:
    """Section 1: the GCN DropEdge++ cells at 8-32 layers within :data:`NEAR` points of the paper
    and those further off."""
    gcn, paper = _depth_runs("gcn"), reference.paper_accuracy_by_depth()
    near, far = [], []
    for d, sp in GCN_TABLES:
        for L in (8, 16, 32):
            gap = (_mean(gcn, dataset=d, split=sp, sampler="dropedge++", layers=L)
                   - _paper_number(paper, d, sp, "gcn", "dropedge++", L))
            if gap == gap:
                (near if abs(gap) <= NEAR else far).append(f"{_table_name(d, sp)} L = {L} ({gap:+.1f})")
    if not near and not far:
        return "No GCN DropEdge++ cell at 8-32 layers has a run of today's stream yet."
    return (f"DropEdge++ against the paper at 8-32 layers (our mean − the paper's, points): within "
            f"{NEAR:g} points: {'; '.join(near) or 'none'}; further: {'; '.join(far) or 'none'}.")


def search_vs_recipe_text() -> str:
    """Section 1: per searched depth, DropEdge++ at the search's best point against the recipe."""
    summary, best, deep = cell_search.bundled_summary(), current_best_runs(), _depth_runs("gcn")
    paper = reference.paper_accuracy_by_depth()
    lines = []
    for r in summary[summary["sampler"] == "dropedge++"].sort_values("num_layers").itertuples():
        where = dict(dataset=r.dataset, split=r.split, sampler=r.sampler, layers=r.num_layers)
        searched = best[(best[list(where)] == pd.Series(where)).all(axis=1)]["test_acc"].tolist()
        recipe = deep[(deep[list(where)] == pd.Series(where)).all(axis=1)]["test_acc"].tolist()
        lines.append(f"- {_table_name(r.dataset, r.split)}, L = {r.num_layers}: the search's best point "
                     f"(keep rates {r.p_min:.2f} → {r.p_max:.2f}; {r.settings}) "
                     f"{_cell(searched)}, the recipe {_cell(recipe)}, the paper "
                     f"{_paper_number(paper, r.dataset, r.split, 'gcn', r.sampler, r.num_layers):.1f}")
    return "\n".join(lines) or ("No DropEdge++ search of today's sampler stream is bundled (a search of "
                                "an older stream is left out with its runs).")


HEADLINE_WORDS = {"reversed": "**shown below** DropEdge", "shown": "**shown above** DropEdge",
                  "not shown": "**not shown to differ** from DropEdge"}


def headline_verdict(table: str, claims: pd.DataFrame, layers: int = 32) -> str:
    """The paper's headline at one depth of one table, phrased from the verdict of its
    DropEdge++ ≥ DropEdge test (``claims``: :func:`ordering.compare_samplers` of the table),
    whichever way it went."""
    row = claims[(claims["layers"] == layers) & (claims["better"] == "dropedge++")
                 & (claims["worse"] == "dropedge") & claims["p_value"].notna()]
    if not len(row):
        return f"- {table}, L = {layers}: no DropEdge++ and DropEdge runs of today's stream pair up."
    r = next(row.itertuples())
    return (f"- {table}, L = {layers}: DropEdge++ is {HEADLINE_WORDS[r.verdict]} ({100 * r.diff_mean:+.1f} "
            f"points, {100 * r.ci_low:+.1f} to {100 * r.ci_high:+.1f}, {r.n} seeds, {_p('p', r.p_value)}, "
            f"{_p('Holm p', r.p_holm)} over its {r.family_size} depths).")


def ordering_text() -> str:
    """Section 1's verdict on the paper's ordering: DropEdge++ against DropEdge at 32 layers in
    each GCN table, then every corrected rejection of the GCN tables and of the search."""
    out = [headline_verdict(table, claims) for table, claims in _claims(_depth_runs("gcn"))]
    for label, runs in (("the four GCN tables", _depth_runs("gcn")),
                        ("the per-cell search", current_best_runs())):
        rows = [(r, table) for table, claims in _claims(runs)
                for r in claims[claims["verdict"] != "not shown"].itertuples()]
        deep = [_claim_phrase(r, t) for r, t in rows if r.layers >= 8]
        shallow = [_claim_phrase(r, t) for r, t in rows if r.layers < 8]
        untested = ("" if (runs["sampler"] == "dropedge++").any() else
                    f" No DropEdge++ run of today's stream in {label}: its claims are not tested yet.")
        out.append(f"\nCorrected rejections in {label} at L ≥ 8: "
                   + ("; ".join(deep) if deep else "none — the paper's DropEdge++ ≥ DropEdge ≥ NoDrop is "
                      "not shown, nor contradicted, at any of these depths") + "."
                   + (f" Shallower: {'; '.join(shallow)}." if shallow else "") + untested)
    return "\n".join(out)


def backbones_text() -> str:
    """Section 1c: per backbone, ours − the paper per sampler over its tables, its corrected
    rejections, and how many uncorrected p < α chance alone gives among the section's tests."""
    runs, paper = _depth_runs(None), reference.paper_accuracy_by_depth()
    runs = runs[runs["backbone"] != "gcn"]
    out, tested = [], []
    for b in [b for b in BACKBONES if b in set(runs["backbone"])]:
        part = runs[runs["backbone"] == b]
        gaps = []
        cells = list(part[["dataset", "split", "layers"]].drop_duplicates().itertuples(index=False))
        for s in LABELS:
            values = [_mean(part, dataset=d, split=sp, sampler=s, layers=L)
                      - _paper_number(paper, d, sp, b, s, L) for (d, sp, L) in cells]
            values = [v for v in values if v == v]
            if values:
                gaps.append(f"{LABELS[s]} {min(values):+.1f} to {max(values):+.1f}")
        claims = _claims(part)
        tested += [c[c["p_value"].notna()] for _, c in claims]
        rejected = [_claim_phrase(r, t) for t, c in claims
                    for r in c[c["verdict"] != "not shown"].itertuples()]
        out.append(f"- **{BACKBONE_LABELS[b]}**: ours − the paper per cell, points: "
                   f"{'; '.join(gaps) or '–'}. Corrected rejections: {'; '.join(rejected) or 'none'}.")
    if tested:
        every = pd.concat(tested)
        out.append(f"- **Chance**: {len(every)} paired tests in this section, "
                   f"{int((every['p_value'] < ordering.ALPHA).sum())} with an uncorrected "
                   f"p < {ordering.ALPHA:g}; "
                   f"chance alone gives about {len(every) * ordering.ALPHA:.1f}.")
    return "\n".join(out)


def _men() -> pd.DataFrame:
    return pd.read_csv(paths.MEN_DIR / "men_table.csv")


def _men_order(table: pd.DataFrame, column: str) -> dict[tuple[str, int], list[str]]:
    return {(d, int(L)): part.sort_values(column)["sampler"].tolist()
            for (d, L), part in table.groupby(["dataset", "layers"])}


MEN_LABELS = {"dropedge": "DropEdge", "lid": "LID", "li": "LI", "ldd": "LDD"}


def men_text() -> str:
    """Section 2: the MEN table against the paper's (runs, keep rates, ratio range, orderings)."""
    men = _men()
    ratio = men["ratio_to_paper"]
    ours, theirs = _men_order(men, "men_mean"), _men_order(men, "paper_men")
    lines = [f"Exact MEN (sparse layered reachability) over {_seeds(men['runs'])} sampling runs per cell, "
             f"keep rates {men['p_min'].iloc[0]:g} → {men['p_max'].iloc[0]:g} (DropEdge at their mean, "
             f"{(men['p_min'].iloc[0] + men['p_max'].iloc[0]) / 2:g}). Ours / the paper's MEN over the "
             f"{len(men)} cells: {ratio.min():.2f} to {ratio.max():.2f} "
             "(`dropedge_explorer/assets/men/men_table.csv`). Lowest MEN first, ours (the paper's where it "
             "differs):",
             ""]
    for key in sorted(ours):
        a = " < ".join(MEN_LABELS.get(s, s) for s in ours[key])
        b = " < ".join(MEN_LABELS.get(s, s) for s in theirs.get(key, []))
        lines.append(f"- {key[0]}, L = {key[1]}: {a}" + ("" if a == b else f" (paper: {b})"))
    return "\n".join(lines)


def best_text() -> str:
    """Section 3: DropEdge++ with the paper's presets per backbone against the paper's
    best-accuracy table, and the cells more than :data:`NEAR` points below it."""
    from dropedge_explorer.data import presets

    runs = current_runs()
    runs = runs[(runs["settings"] == "paper") & (runs["sampler"] == "dropedge++")]
    paper = reference.paper_best_accuracy()
    paper = paper[paper["dataset_key"].isin(["cora", "citeseer"])]
    rank = {**{b: i for i, b in enumerate(BACKBONES)}, "semi": 0, "full": 1, "cora": 0, "citeseer": 1}
    paper = paper.assign(bb=paper["backbone"].map(BACKBONES_BY_LABEL))
    paper = paper.sort_values(["setting", "dataset_key", "bb"], key=lambda column: column.map(rank))
    lines = ["| split | dataset | backbone | L | ours | paper | Δ |", "|" + " --- |" * 7]
    far = []
    for r in paper.itertuples():
        L = presets.paper_preset(r.dataset_key, r.setting, r.bb)["num_layers"]
        cell = runs[(runs["dataset"] == r.dataset_key) & (runs["split"] == r.setting)
                    & (runs["backbone"] == r.bb)]
        depth = f"{L}" if L == r.layers else f"{L} (paper table: {r.layers})"
        gap = 100 * cell["test_acc"].mean() - r.test_accuracy if len(cell) else float("nan")
        lines.append(f"| {r.setting} | {r.dataset_key} | {r.backbone} | {depth} | "
                     f"{_cell(cell['test_acc'].tolist())} | {r.test_accuracy:g} ± {r.std:g} | {_pts(gap)} |")
        if gap == gap and gap < -NEAR:
            far.append(f"{r.setting} {r.dataset_key} {r.backbone}-{L} ({gap:+.1f})")
    return "\n".join(lines) + (f"\n\nMore than {NEAR:g} points below the paper: {'; '.join(far) or 'none'}."
                               if len(runs) else "\n\nNo run of today's DropEdge++ stream with the paper's "
                               "presets is bundled yet.")


def quick_text() -> str:
    """Section 4: GCN by depth under the quick recipe (today's-stream runs), one table per
    dataset and split."""
    runs = _depth_runs("gcn", "quick")
    paper = reference.paper_accuracy_by_depth()
    return "\n\n".join(f"#### {d} / {sp}, GCN, settings 'quick'\n\n{depth_table(runs, paper, d, sp)}"
                       for d, sp, _ in _groups(runs))


BATCH_NORM = "quick+batch_norm=True"


def batchnorm_text() -> str:
    """Section 5: GCN by depth, quick recipe with batch norm (today's-stream runs)."""
    runs = _depth_runs("gcn", BATCH_NORM)
    paper = reference.paper_accuracy_by_depth()
    return "\n\n".join(f"#### {d} / {sp}, GCN, settings {BATCH_NORM!r}\n\n{depth_table(runs, paper, d, sp)}"
                       for d, sp, _ in _groups(runs))


SAMPLER_ORDER = ("nodrop", "dropedge", "fd", "li", "lid", "ldd", "dropedge++")


def _gcn8() -> pd.DataFrame:
    runs = _depth_runs("gcn", BATCH_NORM)
    return runs[(runs["dataset"] == "cora") & (runs["split"] == "semi") & (runs["layers"] == 8)]


def samplers_text() -> str:
    """Section 6: every sampler at GCN-8, Cora semi, batch norm; the spread of the means
    against the largest standard deviation."""
    runs = _gcn8()
    lines = ["| sampler | test accuracy, % |", "| --- | --- |"]
    stats = runs.groupby("sampler")["test_acc"].agg(["mean", "std"])
    for s in SAMPLER_ORDER:
        lines.append(f"| {s} | {_cell(runs[runs['sampler'] == s]['test_acc'].tolist())} |")
    if len(stats) < 2:
        return "\n".join(lines)
    spread, widest = 100 * (stats["mean"].max() - stats["mean"].min()), 100 * stats["std"].max()
    word = "within" if spread <= widest else "not all within"
    return "\n".join(lines) + (f"\n\nThe means of the {len(stats)} samplers with today's-stream runs span "
                               f"{spread:.1f} points; the largest standard deviation is {widest:.1f}: "
                               f"{word} one standard deviation of each other.")


def _paired(a: str, b: str) -> str:
    runs = _gcn8()
    x, y = (runs[runs["sampler"] == s].set_index("seed")["test_acc"] for s in (a, b))
    both = x.index.intersection(y.index)
    if len(both) < 2:
        return f"{a} and {b}: no paired runs of today's stream"
    t = ordering.paired_difference(x[both], y[both])
    word = "not shown" if not t.p_value < ordering.ALPHA else ("higher" if t.mean > 0 else "lower")
    return (f"{a} {_cell(x.tolist())} vs {b} {_cell(y.tolist())}: {a} − {b} {100 * t.mean:+.1f} points, "
            f"{_p('p', t.p_value)} ({word}; one uncorrected paired t-test)")


def claims7_text() -> str:
    """Section 7: the paper's qualitative claims, each verdict computed here."""
    men = _men()
    order = _men_order(men, "men_mean")
    lid_low = [k for k, v in order.items() if v[0] != "lid"]
    ldd_high = [k for k, v in order.items() if v[-1] != "ldd"]
    where = lambda keys: "; ".join(f"{d} L = {L}" for d, L in keys)  # noqa: E731
    gcn_claims = [(t, c) for t, c in _claims(_depth_runs("gcn"))]
    deep = (pd.concat([c[c["layers"] >= 8].assign(table=t) for t, c in gcn_claims]) if gcn_claims
            else pd.DataFrame())
    shown = deep[deep["verdict"] == "shown"] if len(deep) else deep
    reversed_ = deep[deep["verdict"] == "reversed"] if len(deep) else deep
    ordering_verdict = ("**reversed at "
                        + "; ".join(_claim_phrase(r, r.table) for r in reversed_.itertuples())
                        + "**" if len(reversed_) else "**not reversed at any depth ≥ 8**")
    ordering_verdict += ("; shown at " + "; ".join(_claim_phrase(r, r.table) for r in shown.itertuples())
                         if len(shown) else "; no claim shown at any depth ≥ 8")
    if not (_depth_runs("gcn")["sampler"] == "dropedge++").any():
        ordering_verdict = ("**DropEdge++ not tested yet** (no run of today's stream); DropEdge ≥ NoDrop: "
                            + ordering_verdict)
    rows = [("LID has the lowest MEN",
             "**true**: lowest at every depth on both datasets" if not lid_low else
             f"**not everywhere**: another sampler is lower at {where(lid_low)}",
             "section 2; `test_metrics::test_lid_has_lowest_men_on_cora`"),
            ("DropEdge++ ≥ DropEdge ≥ NoDrop for GCN at 8+ layers", ordering_verdict,
             "Holm-corrected paired t-tests over each claim's depths in a table; section 1"),
            ("FD beats DropEdge at equal keep rate",
             "structure: see the test; accuracy: " + _paired("fd", "dropedge"),
             "`test_samplers::test_fd_keeps_more_intra_class_edges_than_dropedge_on_cora`; section 6"),
            ("LID beats LDD",
             ("MEN: LDD highest everywhere" if not ldd_high else f"MEN: LDD not highest at {where(ldd_high)}")
             + "; accuracy: " + _paired("lid", "ldd"), "sections 2 and 6")]
    lines = ["| claim | verdict here | from |", "| --- | --- | --- |"]
    lines += [f"| {a} | {b} | {c} |" for a, b, c in rows]
    return "\n".join(lines)


def older_text() -> str:
    """Every bundled run of an older sampler stream than today's, per cell: its count and mean
    beside today's-stream runs of the same cell. None of these rows is used anywhere else."""
    every = _every()
    best = every_best_run()
    ablation = pd.read_csv(ABLATION)
    frames = [every.assign(source=every["settings"]), best.assign(source="search: " + best["settings"])]
    arm = ablation.apply(lambda r: _arm(r["sampler"], r["p_min"], r["p_max"],
                                        str(r["directed"]).strip().lower() == "true"), axis=1)
    frames.append(ablation.assign(source="ablation: " + arm, settings="depth"))
    rows = pd.concat(frames, ignore_index=True)
    rows["stream"] = rows["stream"].fillna(1).astype(int) if "stream" in rows else 1
    old, now = fingerprints.older(rows), fingerprints.current(rows)
    if old.empty:
        return "No run of an older sampler stream is bundled."
    keys = ["source", "dataset", "split", "backbone", "layers", "sampler", "stream"]
    lines = ["| runs of | dataset | split | backbone | L | sampler | older stream | older runs "
             "| older mean, % | today's runs | today's mean, % |", "|" + " --- |" * 11]
    today_means = now.groupby(keys[:-1])["test_acc"].agg(["count", "mean"])
    for key, part in old.groupby(keys):
        hit = today_means.loc[key[:-1]] if key[:-1] in today_means.index else None
        lines.append("| " + " | ".join(str(k) for k in key[:-1]) + f" | {key[-1]} | {len(part)} | "
                     f"{100 * part['test_acc'].mean():.1f} | "
                     + (f"{int(hit['count'])} | {100 * hit['mean']:.1f} |" if hit is not None else "0 | – |"))
    files = sorted(cell_search.SEARCH_DIR.glob("cell_search_*.csv"))
    searched = pd.concat([pd.read_csv(f) for f in files], ignore_index=True) if files else pd.DataFrame()
    stale = fingerprints.older(searched) if len(searched) else searched
    trials = (" The per-cell search's trials of an older stream are left out as well: "
              + "; ".join(f"{LABELS.get(r.sampler, r.sampler)} L = {r.num_layers} ({r.trials} trials)"
                          for r in stale.sort_values(["sampler", "num_layers"]).itertuples()) + "."
              if len(stale) else "")
    return (f"{len(old)} bundled runs of an older stream in {old.groupby(keys).ngroups} cells (today's "
            "streams: `dropedge_core.STREAMS`). **Not used in any table or verdict of "
            f"this document**; listed for comparison only.{trials}\n\n" + "\n".join(lines))


@functools.lru_cache(maxsize=1)
def _front_parts() -> tuple[str, str]:
    headline, front = front_text().split("\n\n", 1)
    return headline, front


#: The named blocks :func:`write` regenerates (``<!-- repro_tables: NAME -->`` …
#: ``<!-- /repro_tables: NAME -->``); ``depth DATASET SPLIT BACKBONE`` and
#: ``search DATASET SPLIT BACKBONE`` name one table each.
BLOCKS = {
    "headline": lambda: _front_parts()[0], "front": lambda: _front_parts()[1],
    "verdict_rules": verdict_rules_text, "recipes": recipes_text, "depth_changed": depth_changed_text,
    "near_paper": near_paper_text, "search_vs_recipe": search_vs_recipe_text, "ordering": ordering_text,
    "backbones": backbones_text, "ablation": ablation_text, "men": men_text, "best": best_text,
    "authors": authors_text, "authors_code": authors_code_text,
    "quick": quick_text, "batchnorm": batchnorm_text, "samplers": samplers_text,
    "claims": claims7_text, "older": older_text, "facts": facts_text,
}
#: A block opens on a line of its own (the marker quoted in prose is not one).
MARKER = re.compile(r"^<!-- repro_tables: ([^>]+?) -->$", re.M)


def render(name: str) -> str:
    """The text of one named block."""
    kind, *args = name.split()
    if kind == "depth" and len(args) == 3:
        return depth_block(*args)
    if kind == "search" and len(args) == 3:
        return search_block(*args)
    if name not in BLOCKS:
        raise SystemExit(f"unknown block {name!r}: one of {', '.join(BLOCKS)}, 'depth D S B', 'search D S B'")
    return BLOCKS[name]()


def expected_tables() -> list[str]:
    """The table blocks the bundled data call for: every (dataset, split, backbone) of the depth
    recipe's runs and of the search."""
    names = [f"depth {d} {sp} {b}" for d, sp, b in _groups(_depth_runs(None))]
    summary = cell_search.bundled_summary()
    names += [f"search {d} {sp} {b}" for (d, sp, b), _ in summary.groupby(["dataset", "split", "backbone"])]
    return names


def _neighbour(name: str, names: list[str]) -> str | None:
    """The block a new table block ``name`` goes after: the last block of a depth table of the
    same backbone, else of the same kind (GCN or another backbone), else of any depth table."""
    kind, *args = name.split()
    tables = [n.split() for n in names if n.split()[0] == kind and len(n.split()) == 4]
    for same in (lambda t: t[3] == args[2], lambda t: (t[3] == "gcn") == (args[2] == "gcn"), lambda t: True):
        hits = [" ".join(t) for t in tables if same(t)]
        if hits:
            return hits[-1]
    return None


def add_missing_blocks(doc: str) -> tuple[str, list[str]]:
    """``doc`` with an empty block for every table the bundled data call for and the document
    lacks (a table a ``reproduce`` run added), each after its nearest neighbour
    (:func:`_neighbour`); and the names added.

    Raises:
        SystemExit: a missing table with no table block of its kind to go after.
    """
    added = []
    for name in expected_tables():
        names = MARKER.findall(doc)
        if name in names:
            continue
        after = _neighbour(name, names)
        if after is None:
            raise SystemExit(f"no block for {name}: add '<!-- repro_tables: {name} -->' and "
                             f"'<!-- /repro_tables: {name} -->' where it belongs, then rerun --write")
        end = f"\n<!-- /repro_tables: {after} -->\n"
        at = doc.index(end) + len(end)
        doc = doc[:at] + f"\n<!-- repro_tables: {name} -->\n<!-- /repro_tables: {name} -->\n" + doc[at:]
        added.append(name)
    return doc, added


def regenerate(doc: str) -> str:
    """``doc`` with every named block replaced by what :func:`render` prints now (a table block
    the data call for and the document lacks is added first, :func:`add_missing_blocks`)."""
    doc, _ = add_missing_blocks(doc)
    names = MARKER.findall(doc)
    for name in names:
        begin, end = f"\n<!-- repro_tables: {name} -->\n", f"\n<!-- /repro_tables: {name} -->\n"
        a = doc.index(begin) + 1
        b = doc.index(end, a) + 1
        doc = doc[:a] + begin.strip("\n") + "\n\n" + render(name).strip("\n") + "\n\n" + doc[b:]
    return doc


def write(path: Path) -> None:
    """Regenerate every named block of ``path`` in place (:func:`regenerate`)."""
    path.write_text(regenerate(path.read_text(encoding="utf-8")), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--settings", default="depth", help="the settings column to keep (default depth)")
    parser.add_argument("--search", action="store_true",
                        help="print the per-cell search (dropedge_explorer/assets/search/) instead")
    parser.add_argument("--block", metavar="NAME", help="print one named block (see BLOCKS)")
    parser.add_argument("--write", metavar="DOC", type=Path,
                        help="regenerate every generated block of DOC (docs/REPRODUCTION.md) in place")
    args = parser.parse_args()
    if args.write:
        write(args.write)
    elif args.block:
        print(render(args.block))
    elif args.search:
        print(FAMILY_NOTE + "\n\n" + search_text())
    else:
        print(FAMILY_NOTE + "\n\n" + depth_text(args.settings))


if __name__ == "__main__":
    main()
