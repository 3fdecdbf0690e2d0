"""The ``authors`` recipe's runs beside the ``paper`` recipe's and the paper's numbers
(docs/REPRODUCTION.md, section 3b): one row per script of the authors
(:data:`dropedge_explorer.training._authors.SCRIPTS`) up to a depth.

The authors' own code's results (section 3c): :func:`code_runs` reads the test
accuracies their code (hanjq17/DropEdgePlus at a pinned commit, run outside this repository)
printed on this project's machine (``assets/authors_code/runs.csv``: their numbers, not their
code); :func:`code_comparison` sets them beside the paper, our ``authors`` recipe and our
``depth`` recipe at the same cells, and :func:`code_summary` says which gap is which.

Example:
    >>> import pandas as pd
    >>> runs = pd.DataFrame({"dataset": ["cora"] * 3, "split": ["semi"] * 3, "backbone": ["gcn"] * 3,
    ...                      "sampler": ["dropedge++"] * 3, "layers": [4] * 3, "seed": [0, 1, 0],
    ...                      "test_acc": [0.8, 0.9, 0.7], "epochs_run": [300, 300, 200],
    ...                      "settings": ["authors", "authors", "paper"]})
    >>> row = comparison(runs, deepest=4, seeds=[0, 1, 2]).iloc[0]
    >>> round(float(row.authors_mean), 3), int(row.authors_n), int(row.paper_recipe_n), row.missing_seeds
    (0.85, 2, 1, '2')
"""
from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from dropedge_explorer import paths
from dropedge_explorer.data import presets, reference
from dropedge_explorer.training import _authors as authors

__all__ = ["CODE_RUNS", "code_comparison", "code_depth_summary", "code_runs", "code_summary", "comparison",
           "summary"]

#: The authors' code's runs (one row per run their code finished on this project's machine).
CODE_RUNS = paths.asset("authors_code", "runs.csv")
#: Its columns: the cell and seed, the test accuracy their script printed (a fraction), the
#: epochs it ran, where the code came from and what was passed to it.
CODE_COLUMNS = ("dataset", "split", "backbone", "sampler", "layers", "seed", "test_acc", "epochs_run",
                "repository", "commit", "script", "arguments")

COLUMNS = ("dataset", "split", "backbone", "layers", "epochs", "criterion", "authors_mean", "authors_std",
           "authors_n", "paper_recipe_mean", "paper_recipe_std", "paper_recipe_n", "paper",
           "missing_seeds")


def _seed_ranges(seeds: Iterable[int]) -> str:
    """``[0, 1, 2, 5]`` → ``"0-2, 5"``."""
    out: list[list[int]] = []
    for s in sorted(seeds):
        if out and s == out[-1][1] + 1:
            out[-1][1] = s
        else:
            out.append([s, s])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in out)


def comparison(runs: pd.DataFrame, deepest: int = 8, seeds: Iterable[int] = range(10),
               sampler: str = "dropedge++") -> pd.DataFrame:
    """Per script of the authors whose preset has at most ``deepest`` layers: the
    ``authors`` recipe's test accuracy (mean, sample std, seeds), the
    ``paper`` recipe's at the same cell, the paper's best-accuracy number (%), and the
    seeds of ``seeds`` with no ``authors`` run (``""`` when none is missing).

    Args:
        runs (pandas.DataFrame): the bundled runs
            (:func:`dropedge_explorer.studies.run_tables.bundled_results`), with columns ``dataset,
            split, backbone, sampler, layers, seed, test_acc, epochs_run, settings``.
        deepest (int, optional): the deepest preset listed, in layers. (default: :obj:`8`)
        seeds (Iterable[int], optional): the seeds each cell should have.
            (default: :obj:`range(10)`)
        sampler (str, optional): the scripts' sampler. (default: :obj:`"dropedge++"`)

    Returns:
        pandas.DataFrame: one row per script: ``dataset, split, backbone, layers, epochs,
        criterion``, then ``authors_mean/_std/_n``, ``paper_recipe_mean/_std/_n``, ``paper`` (%)
        and ``missing_seeds``.
    """
    wanted = set(seeds)
    paper = reference.paper_best_accuracy()
    rows = []
    for (dataset, split, backbone), script in authors.SCRIPTS.items():
        layers = presets.paper_preset(dataset, split, backbone)["num_layers"]
        if layers > deepest:
            continue
        cell = runs[(runs["dataset"] == dataset) & (runs["split"] == split) & (runs["backbone"] == backbone)
                    & (runs["sampler"] == sampler) & (runs["layers"] == layers)]
        ours, theirs = cell[cell["settings"] == "authors"], cell[cell["settings"] == "paper"]
        ref = paper[(paper["dataset_key"] == dataset) & (paper["setting"] == split)
                    & (paper["backbone"].str.lower().str.replace("appnp*", "appnp_star", regex=False)
                       == backbone)]["test_accuracy"]
        rows.append({"dataset": dataset, "split": split, "backbone": backbone, "layers": layers,
                     "epochs": script.epochs, "criterion": script.criterion,
                     "authors_mean": ours["test_acc"].mean(), "authors_std": ours["test_acc"].std(),
                     "authors_n": int(ours["seed"].nunique()),
                     "paper_recipe_mean": theirs["test_acc"].mean(),
                     "paper_recipe_std": theirs["test_acc"].std(),
                     "paper_recipe_n": int(theirs["seed"].nunique()),
                     "paper": float(ref.iloc[0]) if len(ref) else float("nan"),
                     "missing_seeds": _seed_ranges(wanted - set(ours["seed"]))})
    return pd.DataFrame(rows, columns=list(COLUMNS))


def summary(table: pd.DataFrame) -> str:
    """One sentence on a :func:`comparison` table: the cells where both recipes ran, how
    often and by how much the authors recipe's mean is above the paper recipe's, and how
    often it is below the paper's number (``""`` when no cell has both).

    Args:
        table (pandas.DataFrame): a :func:`comparison` table (the columns ``authors_n``,
            ``paper_recipe_n``, ``authors_mean``, ``paper_recipe_mean`` and ``paper`` are read).

    Example:
        >>> t = pd.DataFrame({"authors_n": [3, 2, 0], "paper_recipe_n": [5, 5, 5],
        ...                   "authors_mean": [0.80, 0.70, None], "paper_recipe_mean": [0.75, 0.72, 0.9],
        ...                   "paper": [83.0, 69.0, 90.0]})
        >>> summary(t)  # doctest: +NORMALIZE_WHITESPACE
        "In the 2 cells where both recipes ran, the authors recipe's mean is above the paper recipe's in 1
        (difference +1.5 points on average, -2.0 to +5.0) and below the paper's number in 1 (-1.0 points
        on average)."
    """
    both = table[(table["authors_n"] > 0) & (table["paper_recipe_n"] > 0)]
    if both.empty:
        return ""
    diff = 100 * (both["authors_mean"] - both["paper_recipe_mean"])
    gap = 100 * both["authors_mean"] - both["paper"]
    return (f"In the {len(both)} cells where both recipes ran, the authors recipe's mean is above the paper "
            f"recipe's in {int((diff > 0).sum())} (difference {diff.mean():+.1f} points on average, "
            f"{diff.min():+.1f} to {diff.max():+.1f}) and below the paper's number in {int((gap < 0).sum())} "
            f"({gap.mean():+.1f} points on average).")


def code_runs(path=None) -> pd.DataFrame:
    """The authors' code's runs (:data:`CODE_RUNS`), columns :data:`CODE_COLUMNS`.

    Args:
        path (str or Path, optional): another file of that format. (default: :obj:`None`)

    Raises:
        ValueError: a column missing (the message names the file and the columns).
    """
    path = CODE_RUNS if path is None else path
    df = pd.read_csv(path, dtype={"commit": str, "arguments": str})
    missing = [c for c in CODE_COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"{path}: lacks column(s) {', '.join(missing)}; expected {', '.join(CODE_COLUMNS)}")
    return df[list(CODE_COLUMNS)]


def _stats(values: pd.Series) -> tuple[float, float, int]:
    return float(values.mean()), float(values.std()), int(values.size)


def code_comparison(code: pd.DataFrame, runs: pd.DataFrame, paper: pd.DataFrame) -> pd.DataFrame:
    """Per cell (dataset, split, backbone, sampler, depth) the authors' code ran: the paper's
    number (%), their code's test accuracy, ours under their protocol (the ``authors`` recipe)
    and ours under the ``depth`` recipe (mean, sample std and runs of each, fractions), and the
    seeds each of ours has that their code has too.

    Args:
        code (pandas.DataFrame): :func:`code_runs`.
        runs (pandas.DataFrame): our bundled runs of today's stream (``settings`` is read).
        paper (pandas.DataFrame): the paper's accuracy by depth
            (:func:`dropedge_explorer.data.reference.paper_accuracy_by_depth`).

    Returns:
        pandas.DataFrame: one row per cell: ``dataset, split, backbone, sampler, layers, paper``,
        then ``code_/authors_/depth_`` ``mean``, ``std`` and ``n``.
    """
    rows = []
    keys = ["dataset", "split", "backbone", "sampler", "layers"]
    for cell, theirs in code.groupby(keys, sort=False):
        dataset, split, backbone, sampler, layers = cell
        ours = runs[(runs["dataset"] == dataset) & (runs["split"] == split) & (runs["backbone"] == backbone)
                    & (runs["sampler"] == sampler) & (runs["layers"] == layers)]
        ref = paper[(paper["dataset_key"] == dataset) & (paper["setting"] == split)
                    & (paper["backbone"].str.lower() == backbone) & (paper["layers"] == layers)
                    & (paper["sampler"].str.lower() == sampler)]["test_accuracy"]
        row = dict(zip(keys, cell))
        row["paper"] = float(ref.iloc[0]) if len(ref) else float("nan")
        for name, part in (("code", theirs), ("authors", ours[ours["settings"] == "authors"]),
                           ("depth", ours[ours["settings"] == "depth"])):
            row[f"{name}_mean"], row[f"{name}_std"], row[f"{name}_n"] = _stats(part["test_acc"].dropna())
        rows.append(row)
    return pd.DataFrame(rows)


def _gap(a: pd.Series, b: pd.Series) -> tuple[int, float, float, float]:
    """Over the cells where both are known: how many, mean, min and max of ``a - b`` (points)."""
    d = (a - b).dropna()
    return (len(d), float(d.mean()), float(d.min()), float(d.max())) if len(d) else (0, 0.0, 0.0, 0.0)


def code_depth_summary(table: pd.DataFrame) -> str:
    """Our implementation against the authors' code, both under their protocol, split by depth:
    at their scripts' own depth (the preset's, :func:`dropedge_explorer.data.presets.paper_preset`)
    and at each other depth, with the best mean each side reaches there and the paper's range.

    Args:
        table (pandas.DataFrame): a :func:`code_comparison` table.
    """
    code = 100 * table["code_mean"].astype(float).where(table["code_n"] > 0)
    ours = 100 * table["authors_mean"].astype(float).where(table["authors_n"] > 0)
    preset = table.apply(lambda r: r["layers"] == presets.paper_preset(r["dataset"], r["split"],
                                                                       r["backbone"])["num_layers"], axis=1)
    groups = [("At their scripts' own depths", preset)]
    groups += [(f"At {int(depth)} layers", ~preset & (table["layers"] == depth))
               for depth in sorted(table.loc[~preset, "layers"].unique())]
    parts = []
    for label, mask in groups:
        n, mean, lo, hi = _gap(ours[mask], code[mask])
        if not n:
            continue
        both = mask & code.notna() & ours.notna()
        paper = table.loc[both, "paper"].astype(float)
        cells = f"{n} cell" + ("" if n == 1 else "s")
        parts.append(f"{label} ({cells}), our authors recipe minus their code: {mean:+.1f} points on "
                     f"average ({lo:+.1f} to {hi:+.1f}); the best cell mean is {code[both].max():.1f} % "
                     f"for their code and {ours[both].max():.1f} % for ours, the paper's numbers "
                     f"{paper.min():.1f} to {paper.max():.1f} %.")
    return " ".join(parts)


def code_summary(table: pd.DataFrame) -> str:
    """Which part of the gap between our numbers and the paper's each step explains, over the
    cells of a :func:`code_comparison` table where both sides ran: the published numbers
    against the authors' code (what their code gives on this machine), their code against our
    implementation under their protocol, and their protocol against our depth recipe.

    Args:
        table (pandas.DataFrame): a :func:`code_comparison` table.

    Example:
        >>> t = pd.DataFrame({"paper": [80.0, 70.0], "code_mean": [0.78, 0.69], "code_n": [5, 5],
        ...                   "authors_mean": [0.77, None], "authors_n": [5, 0],
        ...                   "depth_mean": [0.75, 0.7], "depth_n": [10, 10]})
        >>> print(code_summary(t))  # doctest: +NORMALIZE_WHITESPACE
        Published against the authors' code (their code's mean minus the paper's number, 2 cells):
        -1.5 points on average (-2.0 to -1.0). Our implementation against theirs, both under their
        protocol (our authors recipe minus their code, 1 cell): -1.0 points on average (-1.0 to
        -1.0). Our depth recipe against their protocol (depth recipe minus authors recipe, 1
        cell): -2.0 points on average (-2.0 to -2.0).
    """
    def pts(values) -> pd.Series:
        return 100 * values.astype(float)

    code = pts(table["code_mean"]).where(table["code_n"] > 0)
    ours = pts(table["authors_mean"]).where(table["authors_n"] > 0)
    depth = pts(table["depth_mean"]).where(table["depth_n"] > 0)
    parts = []
    for label, (n, mean, lo, hi) in (
            ("Published against the authors' code (their code's mean minus the paper's number",
             _gap(code, table["paper"].astype(float))),
            ("Our implementation against theirs, both under their protocol (our authors recipe minus "
             "their code", _gap(ours, code)),
            ("Our depth recipe against their protocol (depth recipe minus authors recipe",
             _gap(depth, ours))):
        cells = f"{n} cell" + ("" if n == 1 else "s")
        parts.append(f"{label}, {cells}): " + (f"{mean:+.1f} points on average ({lo:+.1f} to {hi:+.1f})."
                                               if n else "no cell has both yet."))
    return " ".join(parts)
