"""The paper's ordering claim, tested on measured runs: is DropEdge++ >= DropEdge >= NoDrop
at a depth, and by how much?

Runs of one cell differ only in their seed, and a seed fixes the initial weights, so the
runs of two samplers at the same depth pair up by seed: the test of a difference is the
paired t-test over the seeds both samplers ran (``scipy.stats.ttest_rel``), two-sided.
With 3-5 seeds it only sees differences of a few points; "not shown" is not "false".

Example:
    >>> import pandas as pd
    >>> runs = pd.DataFrame({"dataset": "cora", "split": "semi", "backbone": "gcn",
    ...     "layers": 16, "sampler": ["nodrop"] * 3 + ["dropedge++"] * 3,
    ...     "seed": [0, 1, 2] * 2, "test_acc": [0.70, 0.72, 0.71, 0.75, 0.76, 0.74]})
    >>> row = compare_samplers(runs).iloc[0]
    >>> row.better, row.worse, round(float(row.diff_mean), 3), int(row.n), row.verdict
    ('dropedge++', 'nodrop', 0.04, 3, 'higher')
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

#: The paper's claim at 8 layers and more: each sampler at least as good as the next.
ORDER: tuple[str, ...] = ("dropedge++", "dropedge", "nodrop")
#: Two-sided p-value under which a paired difference counts as shown.
ALPHA = 0.05
CELL: tuple[str, ...] = ("dataset", "split", "backbone", "layers")


def paired_difference(a: Sequence[float], b: Sequence[float]) -> tuple[float, float, float]:
    """Mean and sample std of ``a - b`` over pairs, and the two-sided paired t-test's
    p-value (NaN below two pairs or when every difference is equal)."""
    from scipy import stats

    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    if d.size == 0:
        return float("nan"), float("nan"), float("nan")
    std = float(d.std(ddof=1)) if d.size > 1 else float("nan")
    if d.size < 2 or not std > 1e-12:  # equal differences (up to rounding): no test
        return float(d.mean()), std, float("nan")
    return float(d.mean()), std, float(stats.ttest_rel(a, b).pvalue)


def compare_samplers(runs: pd.DataFrame, order: Sequence[str] = ORDER, alpha: float = ALPHA) -> pd.DataFrame:
    """Each consecutive pair of ``order`` (DropEdge++ vs DropEdge, DropEdge vs NoDrop) and
    the ends (DropEdge++ vs NoDrop), per cell ``(dataset, split, backbone, layers)``.

    Args:
        runs: one row per run with :data:`CELL` columns, ``sampler``, ``seed`` and
            ``test_acc`` (a fraction; rows without one are ignored).
        order: samplers from the one claimed best to the one claimed worst.
        alpha: significance level of the paired t-test.

    Returns:
        One row per cell and pair: the cell, ``better``/``worse`` (the claim: ``better``
        >= ``worse``), ``better_mean``, ``worse_mean``, ``diff_mean`` (better - worse over
        the shared seeds), ``diff_std``, ``n`` (shared seeds), ``p_value`` and ``verdict``:
        ``"higher"`` (better is higher, p < alpha), ``"lower"`` (better is lower, p <
        alpha: the claim is false here), ``"no difference shown"`` or ``"too few seeds"``.
    """
    pairs = [(order[i], order[i + 1]) for i in range(len(order) - 1)]
    if len(order) > 2:
        pairs.append((order[0], order[-1]))
    rows = []
    done = runs[runs["test_acc"].notna()]
    for cell, part in done.groupby(list(CELL), sort=True):
        acc = part.pivot_table(index="seed", columns="sampler", values="test_acc", aggfunc="mean")
        for better, worse in pairs:
            if better not in acc or worse not in acc:
                continue
            both = acc[[better, worse]].dropna()
            mean, std, p = paired_difference(both[better], both[worse])
            n = len(both)
            if n < 2:
                verdict = "too few seeds"
            elif p == p and p < alpha:
                verdict = "higher" if mean > 0 else "lower"
            else:
                verdict = "no difference shown"
            rows.append({**dict(zip(CELL, cell)), "better": better, "worse": worse,
                         "better_mean": float(acc[better].mean()), "worse_mean": float(acc[worse].mean()),
                         "diff_mean": mean, "diff_std": std, "n": n, "p_value": p, "verdict": verdict})
    columns = [*CELL, "better", "worse", "better_mean", "worse_mean", "diff_mean", "diff_std", "n",
               "p_value", "verdict"]
    return pd.DataFrame(rows, columns=columns)


def leader_sentence(runs: pd.DataFrame, lead: str = "dropedge++",
                    others: Sequence[str] = ("dropedge", "nodrop")) -> str | None:
    """One sentence on where ``lead`` has the highest mean test accuracy among
    ``others`` and where it does not (by depth), or ``None`` when no depth has ``lead``
    and another sampler measured. Uses the cell means of ``runs`` (one backbone)."""
    done = runs[runs["test_acc"].notna() & runs["sampler"].isin([lead, *others])]
    means = done.pivot_table(index="layers", columns="sampler", values="test_acc", aggfunc="mean")
    if lead not in means or means.shape[1] < 2:
        return None
    means = means.dropna(subset=[lead])
    rival = means.drop(columns=lead).max(axis=1)
    leads = sorted(int(L) for L in means.index[means[lead] >= rival])
    trails = sorted(int(L) for L in means.index[means[lead] < rival])
    if not leads and not trails:
        return None

    def _ls(values: list[int]) -> str:
        return ", ".join(str(v) for v in values)

    if not trails:
        return f"DropEdge++ has the highest mean test accuracy at every depth measured (L = {_ls(leads)})."
    if not leads:
        return (f"DropEdge++ does not lead at any depth measured (L = {_ls(trails)}): another sampler "
                "has a higher mean test accuracy.")
    return (f"DropEdge++ has the highest mean test accuracy at L = {_ls(leads)}, but not at "
            f"L = {_ls(trails)}.")


__all__ = ["ALPHA", "CELL", "ORDER", "compare_samplers", "leader_sentence", "paired_difference"]
