"""The ``authors`` recipe's runs beside the ``paper`` recipe's and the paper's numbers
(docs/REPRODUCTION.md, section 3b): one row per script of the authors
(:data:`dropedge_core.training._authors.SCRIPTS`) up to a depth.

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

from dropedge_core.data import presets, reference
from dropedge_core.training import _authors as authors

__all__ = ["comparison", "summary"]

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
            (:func:`dropedge_core.studies.run_tables.bundled_results`), with columns ``dataset,
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
