"""The lesson's last two steps, read off the project's own trained models and runs.

- **What fails first in a deep GCN** (:func:`trainability_numbers`,
  :func:`trainability_sentence`): the bundled 16-layer Cora snapshots under the old defaults
  and under the depth recipe (:mod:`dropedge_explorer.studies.teaching`; their verdicts by the
  rule of :mod:`dropedge_explorer.studies.merging`), beside the bundled runs of the same depth
  (today's sampler streams only): whether a model trains, and whether its hidden classes
  merge, are two numbers, said separately.
- **The depth verdicts** (:func:`verdict_numbers`, :func:`verdict_sentence`): the
  Holm-corrected paired tests of :func:`dropedge_explorer.studies.ordering.compare_samplers` on
  one bundled table (default Cora semi GCN, depth recipe): which comparisons are shown,
  which are reversed, how many are not shown either way, and where DropEdge++ is ahead or
  behind.

Every sentence is written from the numbers these functions return, never typed by hand.
"""
from __future__ import annotations

import pandas as pd

from dropedge_explorer.studies import merging, ordering, run_tables

__all__ = ["DEPTH_TABLE", "LABELS", "trainability_numbers", "trainability_sentence", "verdict_numbers",
           "verdict_sentence", "table_runs"]

#: The bundled table the verdict step reads: ``(dataset, split, backbone, settings)``.
DEPTH_TABLE: tuple[str, str, str, str] = ("cora", "semi", "gcn", "depth")
#: The settings of the bundled runs trained with the old defaults (the quick recipe).
OLD_DEFAULTS = "quick"
LABELS = {"nodrop": "NoDrop", "dropedge": "DropEdge", "dropedge++": "DropEdge++"}


def table_runs(runs: pd.DataFrame | None = None, table: tuple[str, str, str, str] = DEPTH_TABLE,
               settings: str | None = None) -> pd.DataFrame:
    """The bundled runs of today's streams of one ``(dataset, split, backbone, settings)``.

    Args:
        runs (pandas.DataFrame, optional): the runs (``None``: :func:`run_tables.bundled_results`).
        table (tuple, optional): ``(dataset, split, backbone, settings)``. (default: :data:`DEPTH_TABLE`)
        settings (str, optional): overrides the table's settings. (default: :obj:`None`)
    """
    runs = run_tables.bundled_results() if runs is None else runs
    d, sp, b, s = table
    s = settings or s
    keep = (runs["dataset"] == d) & (runs["split"] == sp) & (runs["backbone"] == b) & (runs["settings"] == s)
    return runs[keep & runs["sampler"].isin(list(LABELS))].reset_index(drop=True)


def _acc_rows(runs: pd.DataFrame, layers: int) -> dict[str, dict]:
    part = runs[(runs["layers"] == layers) & runs["test_acc"].notna()]
    return {s: {"mean": float(g["test_acc"].mean()), "low": float(g["test_acc"].min()),
                "high": float(g["test_acc"].max()), "n": int(len(g))}
            for s, g in part.groupby("sampler", sort=False)}


def trainability_numbers(deep, old, runs: pd.DataFrame | None = None, layers: int = 16) -> dict:
    """The numbers of the "what fails first" step.

    Args:
        deep (Snapshots): the depth recipe's snapshots (:data:`teaching.BUNDLED_SNAPSHOT`).
        old (Snapshots, optional): the old defaults' snapshots (``None``: not shown).
        runs (pandas.DataFrame, optional): the bundled runs (``None``: read them).
        layers (int, optional): the depth of the runs quoted. (default: :obj:`16`)

    Returns:
        ``{"models": {recipe: [{sampler, kind, test_acc, majority, first, last, low}]},
        "runs": {recipe: {sampler: {mean, low, high, n}}}, "layers": L}``.
    """
    runs = run_tables.bundled_results() if runs is None else runs
    models = {}
    for recipe, snaps in (("old defaults", old), ("depth recipe", deep)):
        if snaps is not None:
            models[recipe] = [{"sampler": v.sampler, "kind": v.kind, "test_acc": v.test_acc,
                               "majority": v.majority, "first": v.first, "last": v.last, "low": v.low,
                               "last_layer": v.last_layer} for v in merging.merge_verdicts(snaps)]
    return {"layers": layers, "models": models,
            "runs": {"old defaults": _acc_rows(table_runs(runs, settings=OLD_DEFAULTS), layers),
                     "depth recipe": _acc_rows(table_runs(runs), layers)}}


def _models_clause(recipe: str, rows: list[dict]) -> str:
    untrained = [r for r in rows if r["kind"] == "untrained"]
    parts = ", ".join(f"{LABELS.get(r['sampler'], r['sampler'])} {r['test_acc']:.1%}" for r in rows)
    if len(untrained) == len(rows):
        head = f"under the {recipe} no model trains ({parts}; always guessing the largest class: " \
               f"{rows[0]['majority']:.1%})"
    elif not untrained:
        head = f"under the {recipe} every model trains ({parts})"
    else:
        head = (f"under the {recipe} {len(rows) - len(untrained)} of {len(rows)} models train ({parts}; "
                f"the largest class: {rows[0]['majority']:.1%})")
    trained = [r for r in rows if r["kind"] != "untrained"]
    if not trained:
        return head
    merged = [r for r in trained if r["kind"] == "merges"]
    seps = ", ".join(f"{LABELS.get(r['sampler'], r['sampler'])} {r['first']:.2f} → {r['last']:.2f}"
                     for r in trained)
    tail = (f"the hidden classes of those that train stay apart (class separation, first → last hidden "
            f"layer: {seps})" if not merged else
            f"the hidden classes merge with depth in {len(merged)} of the {len(trained)} that train "
            f"({seps})")
    return f"{head}, and {tail}"


def _runs_clause(recipe: str, rows: dict[str, dict]) -> str:
    if not rows:
        return f"no bundled run of the {recipe}"
    return f"{recipe}: " + ", ".join(
        f"{LABELS[s]} {100 * r['mean']:.1f} % ({r['n']} seed{'s' if r['n'] != 1 else ''}, "
        f"{100 * r['low']:.1f}–{100 * r['high']:.1f})" for s, r in rows.items())


def trainability_sentence(numbers: dict) -> str:
    """The answer of the "what fails first" step, from :func:`trainability_numbers` only.

    Args:
        numbers (dict): :func:`trainability_numbers`.
    """
    models = numbers["models"]
    old, deep = models.get("old defaults", []), models.get("depth recipe", [])
    fails_first = (old and all(r["kind"] == "untrained" for r in old) and deep
                   and all(r["kind"] == "apart" for r in deep))
    lead = ("What fails first here is training, not the classes: " if fails_first else
            "Training and merging, model by model: ")
    clauses = [_models_clause(recipe, rows) for recipe, rows in models.items()]
    runs = numbers["runs"]
    return (lead + "; ".join(clauses) + ". The bundled runs at "
            f"{numbers['layers']} layers (mean test accuracy, lowest–highest): "
            + "; ".join(_runs_clause(r, rows) for r, rows in runs.items()) + ".")


def verdict_numbers(runs: pd.DataFrame | None = None, table: tuple[str, str, str, str] = DEPTH_TABLE) -> dict:
    """The Holm-corrected paired tests of one bundled table
    (:func:`~dropedge_explorer.studies.ordering.compare_samplers`) and each sampler's mean per depth.

    Args:
        runs (pandas.DataFrame, optional): the runs (``None``: the bundled runs of today's streams).
        table (tuple, optional): ``(dataset, split, backbone, settings)``. (default: :data:`DEPTH_TABLE`)

    Returns:
        ``{"table": table, "tests": [{layers, better, worse, diff, low, high, n, p_holm,
        verdict}], "spread": {sampler: {layers: (mean, sample std, seeds)}}}``.
    """
    part = table_runs(runs, table)
    tests = ordering.compare_samplers(part)
    rows = [{"layers": int(r.layers), "better": r.better, "worse": r.worse, "diff": float(r.diff_mean),
             "low": float(r.ci_low), "high": float(r.ci_high), "n": int(r.n), "p_holm": float(r.p_holm),
             "verdict": r.verdict} for r in tests.itertuples()]
    spread = {s: {int(L): (float(a.mean()), float(a.std(ddof=1)) if len(a) > 1 else 0.0, int(len(a)))
                  for L, a in g.dropna(subset=["test_acc"]).groupby("layers")["test_acc"]}
              for s, g in part.groupby("sampler", sort=False)}
    return {"table": table, "tests": rows, "spread": spread}


def _clause(r: dict) -> str:
    side = "above" if r["diff"] > 0 else "below"
    return (f"at {r['layers']} layers {LABELS[r['better']]} is {side} {LABELS[r['worse']]} by "
            f"{100 * abs(r['diff']):.1f} points (95 % interval {100 * r['low']:+.1f} to "
            f"{100 * r['high']:+.1f}, "
            f"{r['n']} seeds, Holm p {ordering.format_p(r['p_holm'])})")


def _plus_says(tests: list[dict]) -> str:
    plus = [r for r in tests if "dropedge++" in (r["better"], r["worse"])]
    ahead = sorted({r["layers"] for r in plus if (r["verdict"] == "shown") == (r["better"] == "dropedge++")
                    and r["verdict"] != "not shown"})
    behind = sorted({r["layers"] for r in plus if r["verdict"] != "not shown"} - set(ahead))
    helps = (f"DropEdge++ is shown ahead of another sampler at {', '.join(map(str, ahead))} layers"
             if ahead else "DropEdge++ is shown ahead of no other sampler at any depth")
    hurts = (f"shown behind one at {', '.join(map(str, behind))} layers" if behind
             else "shown behind none")
    return f"{helps}, and {hurts}"


def verdict_sentence(numbers: dict) -> str:
    """The answer of the verdict step, from :func:`verdict_numbers` only.

    Args:
        numbers (dict): :func:`verdict_numbers`.
    """
    tests = [r for r in numbers["tests"] if r["verdict"] in ordering.VERDICTS and r["n"] >= 2]
    if not tests:
        return "No paired test: no two samplers of this table share seeds."
    decided = [r for r in tests if r["verdict"] != "not shown"]
    d, sp, b, _ = numbers["table"]
    head = (f"{d.capitalize()} {sp}, {b.upper()}, depth recipe: of {len(tests)} paired comparisons "
            f"(each sampler against the next, Holm-corrected over the depths), ")
    if decided:
        head += (f"{len(decided)} {'is' if len(decided) == 1 else 'are'} clear — "
                 + "; ".join(_clause(r) for r in decided)
                 + f" — and {len(tests) - len(decided)} are not shown either way.")
    else:
        head += "none is clear: the data show no sampler ahead of another at any depth."
    return f"{head} {_plus_says(tests)}."
