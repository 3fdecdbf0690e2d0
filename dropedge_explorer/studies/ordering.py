"""The paper's ordering claim, tested on measured runs: is DropEdge++ >= DropEdge >= NoDrop
at a depth, and by how much?

Runs of one cell differ only in their seed, and a seed fixes the initial weights, so the
runs of two samplers at the same depth pair up by seed. Every comparison reports:

- the mean paired difference (better − worse) with its 95% t-interval over the seeds both
  samplers ran (mean ± t₀.₉₇₅,ₙ₋₁ · s / √n; a per-comparison interval, not a simultaneous one);
- the two-sided paired t-test's p-value (``scipy.stats.ttest_rel``) and its **Holm**-adjusted
  value over the *family* of comparisons it belongs to (by default: the same pair of samplers
  at every depth of one table), stated in the ``family`` column;
- a verdict on the corrected p only: ``"shown"`` (better > worse, Holm p < α), ``"reversed"``
  (better < worse, Holm p < α: the claim is contradicted) or ``"not shown"`` (the corrected
  test does not reject, or fewer than two seeds pair up). "Not shown" is not "false": with
  3-5 seeds a paired test only sees differences of a few points.

Example:
    >>> import pandas as pd
    >>> runs = pd.DataFrame({"dataset": "cora", "split": "semi", "backbone": "gcn",
    ...     "layers": 16, "sampler": ["nodrop"] * 3 + ["dropedge++"] * 3,
    ...     "seed": [0, 1, 2] * 2, "test_acc": [0.70, 0.72, 0.71, 0.75, 0.76, 0.74]})
    >>> row = compare_samplers(runs).iloc[0]
    >>> row.better, row.worse, round(float(row.diff_mean), 3), int(row.n), row.verdict
    ('dropedge++', 'nodrop', 0.04, 3, 'shown')
    >>> round(float(row.ci_low), 3), round(float(row.ci_high), 3)
    (0.015, 0.065)
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd

from dropedge_explorer._lazy import lazy_import

#: The paper's claim at 8 layers and more: each sampler at least as good as the next.
ORDER: tuple[str, ...] = ("dropedge++", "dropedge", "nodrop")
#: Family-wise error rate of the Holm procedure (two-sided tests).
ALPHA = 0.05
#: Coverage of the interval of a paired difference.
LEVEL = 0.95
CELL: tuple[str, ...] = ("dataset", "split", "backbone", "layers")
#: The default family: one pair of samplers at every depth of one table.
PAIR_IN_TABLE: tuple[str, ...] = ("dataset", "split", "backbone", "better", "worse")
#: Every comparison of one table (all pairs, all depths).
TABLE: tuple[str, ...] = ("dataset", "split", "backbone")
VERDICTS: tuple[str, ...] = ("shown", "reversed", "not shown")
_LABELS = {"nodrop": "NoDrop", "dropedge": "DropEdge", "dropedge++": "DropEdge++", "gcn": "GCN",
           "resgcn": "ResGCN", "jknet": "JKNet", "appnp_star": "APPNP*"}


class PairedTest(NamedTuple):
    """One paired comparison of ``a - b`` over seeds (NaN where undefined)."""

    mean: float
    std: float
    n: int
    ci_low: float
    ci_high: float
    p_value: float


def paired_difference(a: Sequence[float], b: Sequence[float], level: float = LEVEL) -> PairedTest:
    """Mean and sample std of ``d = a - b`` over pairs, the t-interval
    ``mean ± t_{(1+level)/2, n-1} · std / √n`` and the two-sided paired t-test's p-value.

    Below two pairs the std, the interval and p are NaN. When every difference is equal (up to
    rounding) p is NaN and the interval has width 0: no test, so no verdict can rest on it.

    Args:
        a (Sequence[float]): the first sampler's values, one per seed.
        b (Sequence[float]): the second sampler's values at the same seeds, in the same order.
        level (float, optional): the confidence level of the interval.
            (default: :obj:`LEVEL`, 0.95)

    Returns:
        PairedTest: ``(mean, std, n, ci_low, ci_high, p_value)``, NaN where undefined.

    Example:
        >>> t = paired_difference([0.80, 0.82, 0.81], [0.78, 0.79, 0.80])
        >>> round(t.mean, 4), t.n, bool(t.ci_low < t.mean < t.ci_high)
        (0.02, 3, True)
    """
    stats = lazy_import("scipy.stats")
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    n = int(d.size)
    nan = float("nan")
    if n == 0:
        return PairedTest(nan, nan, 0, nan, nan, nan)
    mean = float(d.mean())
    if n < 2:
        return PairedTest(mean, nan, 1, nan, nan, nan)
    std = float(d.std(ddof=1))
    if not std > 1e-12:  # equal differences (up to rounding): t is undefined
        return PairedTest(mean, std, n, mean, mean, nan)
    half = float(stats.t.ppf((1 + level) / 2, n - 1)) * std / np.sqrt(n)
    return PairedTest(mean, std, n, mean - half, mean + half, float(stats.ttest_rel(a, b).pvalue))


def holm(p_values: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjusted p-values (Holm 1979): sort the m defined p-values,
    ``p̃_(i) = max_{j <= i} min(1, (m - j + 1) · p_(j))``, back in input order. Rejecting
    where ``p̃ < α`` controls the family-wise error at α under any dependence between the
    tests, and is the step-down: once one sorted test fails, every later one fails too
    (the running maximum). NaN p-values (no test) stay NaN and do not count in m.

    Args:
        p_values (Sequence[float]): the raw p-values of one family (NaN for no test).

    Example:
        >>> holm([0.01, 0.04, 0.03, float("nan")]).round(2).tolist()
        [0.03, 0.06, 0.06, nan]
    """
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    tested = np.flatnonzero(~np.isnan(p))
    m = tested.size
    if m == 0:
        return out
    order = tested[np.argsort(p[tested], kind="stable")]
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    out[order] = np.maximum.accumulate(scaled)
    return out


def describe_family(key: dict, size: int) -> str:
    """Words for a family: what is fixed in it (``key``, its columns' values) and how many tests."""
    pair = (f"{_LABELS.get(key['better'], key['better'])} vs {_LABELS.get(key['worse'], key['worse'])}"
            if "better" in key and "worse" in key else "every pair of samplers")
    fixed = [str(key[c]) if c != "backbone" else _LABELS.get(key[c], key[c])
             for c in ("dataset", "split", "backbone") if c in key and not pd.isna(key[c])]
    where = f"every depth of {'/'.join(fixed)}" if "layers" not in key else f"L = {key['layers']}"
    if "layers" not in key and not fixed:
        where = "every table and depth"
    return f"{pair}, {where} ({size} test{'s' if size != 1 else ''})"


def compare_samplers(runs: pd.DataFrame, order: Sequence[str] = ORDER, alpha: float = ALPHA,
                     family: Sequence[str] = PAIR_IN_TABLE,
                     pairs: Sequence[tuple[str, str]] | None = None) -> pd.DataFrame:
    """Each consecutive pair of ``order`` (DropEdge++ vs DropEdge, DropEdge vs NoDrop) and
    the ends (DropEdge++ vs NoDrop), per cell ``(dataset, split, backbone, layers)``, with
    Holm's correction over each family.

    Args:
        runs (pandas.DataFrame): one row per run with the cell columns ``dataset, split,
            backbone, layers``, ``sampler``, ``seed`` and ``test_acc`` (a fraction; rows
            without one are ignored).
        order (Sequence[str], optional): samplers from the one claimed best to the one
            claimed worst. (default: :obj:`("dropedge++", "dropedge", "nodrop")`)
        alpha (float, optional): family-wise error rate of the Holm-corrected tests.
            (default: :obj:`ALPHA`, 0.05)
        family (Sequence[str], optional): the columns whose values are shared by one family
            (among the cell columns, ``better``, ``worse``); the default is one pair at every
            depth of one table. ``()`` makes every comparison of ``runs`` one family.
            (default: :obj:`("dataset", "split", "backbone", "better", "worse")`)
        pairs (Sequence[tuple[str, str]], optional): ``(better, worse)`` pairs to test
            instead of those from ``order``. (default: :obj:`None`)

    Returns:
        One row per cell and pair: the cell, ``better``/``worse`` (the claim: ``better``
        >= ``worse``), ``better_mean``, ``worse_mean``, ``diff_mean`` (better - worse over
        the shared seeds), ``diff_std``, ``n`` (shared seeds), ``ci_low``/``ci_high`` (the 95%
        t-interval of the difference), ``p_value`` (uncorrected), ``p_holm``, ``family`` (its
        words), ``family_size`` (tests in it) and ``verdict`` (one of :data:`VERDICTS`).
    """
    if pairs is None:
        pairs = [(order[i], order[i + 1]) for i in range(len(order) - 1)]
        if len(order) > 2:
            pairs.append((order[0], order[-1]))
    bad = set(family) - {*CELL, "better", "worse"}
    if bad:
        raise ValueError(f"family columns must be among {[*CELL, 'better', 'worse']} (got {sorted(bad)})")
    table = pd.DataFrame(_paired_rows(runs[runs["test_acc"].notna()], pairs), columns=_COLUMNS[:-4])
    if table.empty:
        return pd.DataFrame(columns=_COLUMNS)
    return _corrected(table, list(family), alpha)[_COLUMNS]


_COLUMNS = [*CELL, "better", "worse", "better_mean", "worse_mean", "diff_mean", "diff_std", "n",
            "ci_low", "ci_high", "p_value", "p_holm", "family", "family_size", "verdict"]


def _paired_rows(done: pd.DataFrame, pairs: Sequence[tuple[str, str]]) -> list[dict]:
    """One paired test per cell and ``(better, worse)`` pair present in it, over the seeds
    both samplers ran (uncorrected)."""
    rows = []
    for cell, part in done.groupby(list(CELL), sort=True, dropna=False):  # karate has no split (None)
        acc = part.pivot_table(index="seed", columns="sampler", values="test_acc", aggfunc="mean")
        for better, worse in pairs:
            if better not in acc or worse not in acc:
                continue
            both = acc[[better, worse]].dropna()
            test = paired_difference(both[better], both[worse])
            rows.append({**dict(zip(CELL, cell)), "better": better, "worse": worse,
                         "better_mean": float(acc[better].mean()), "worse_mean": float(acc[worse].mean()),
                         "diff_mean": test.mean, "diff_std": test.std, "n": test.n, "ci_low": test.ci_low,
                         "ci_high": test.ci_high, "p_value": test.p_value})
    return rows


def _corrected(table: pd.DataFrame, keys: list[str], alpha: float) -> pd.DataFrame:
    """Holm's correction within each family (rows sharing ``keys``; all rows when empty),
    the family's words and size, and each row's verdict."""
    groups = table.groupby(keys, sort=False, dropna=False).groups.items() if keys else [((), table.index)]
    for key, index in groups:
        key = key if isinstance(key, tuple) else (key,)
        p = table.loc[index, "p_value"].to_numpy(dtype=float)
        size = int((~np.isnan(p)).sum())
        table.loc[index, "p_holm"] = holm(p)
        table.loc[index, "family"] = describe_family(dict(zip(keys, key)), size)
        table.loc[index, "family_size"] = size
    table["p_holm"] = table["p_holm"].astype(float)
    table["family_size"] = table["family_size"].astype(int)
    rejects = table["p_holm"] < alpha  # NaN compares False: no test, no verdict
    table["verdict"] = np.where(rejects & (table["diff_mean"] > 0), "shown",
                                np.where(rejects & (table["diff_mean"] < 0), "reversed", "not shown"))
    return table


def readable(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`compare_samplers` rows for a reader: ``L``, ``claim`` ("DropEdge++ ≥ DropEdge"),
    ``difference (points)``, ``95% CI`` (points), ``seeds``, ``p``, ``Holm p``, ``verdict``,
    ``family`` (strings, rounded as the document prints them).

    Args:
        table (pandas.DataFrame): :func:`compare_samplers` rows.
    """
    if table.empty:
        return pd.DataFrame(columns=["L", "claim", "difference (points)", "95% CI", "seeds", "p", "Holm p",
                                     "verdict", "family"])
    return pd.DataFrame({
        "L": table["layers"].astype(int),
        "claim": [f"{_LABELS.get(b, b)} ≥ {_LABELS.get(w, w)}"
                  for b, w in zip(table["better"], table["worse"])],
        "difference (points)": [f"{100 * d:+.1f}" for d in table["diff_mean"]],
        "95% CI": ["–" if lo != lo else f"{100 * lo:+.1f} to {100 * hi:+.1f}"
                   for lo, hi in zip(table["ci_low"], table["ci_high"])],
        "seeds": table["n"].astype(int), "p": table["p_value"].map(format_p),
        "Holm p": table["p_holm"].map(format_p), "verdict": table["verdict"], "family": table["family"]})


def lead_tests(runs: pd.DataFrame, lead: str = "dropedge++", others: Sequence[str] = ("dropedge", "nodrop"),
               alpha: float = ALPHA) -> pd.DataFrame:
    """``lead`` against each of ``others`` at every depth, as :func:`compare_samplers` rows,
    Holm-corrected over the same families as the tables of docs/REPRODUCTION.md: one claim
    (``lead`` vs one other sampler) at every depth of a table (:data:`PAIR_IN_TABLE`), so a
    comparison gets the same verdict in the sentence as in its table.

    Args:
        runs (pandas.DataFrame): runs as :func:`compare_samplers` reads them.
        lead (str, optional): the sampler claimed to lead. (default: :obj:`"dropedge++"`)
        others (Sequence[str], optional): the samplers it is compared with.
            (default: :obj:`("dropedge", "nodrop")`)
        alpha (float, optional): family-wise error rate. (default: :obj:`ALPHA`, 0.05)
    """
    present = set(runs["sampler"])
    pairs = [(lead, o) for o in others if o in present and lead in present]
    return compare_samplers(runs, alpha=alpha, family=PAIR_IN_TABLE, pairs=pairs)


def _ls(values: list[int]) -> str:
    return ", ".join(str(v) for v in values)


def format_p(p: float) -> str:
    """A p-value for a sentence or a table: three decimals, ``< 0.001`` below, ``–`` if none.

    Args:
        p (float): the p-value (NaN: no test).

    Example:
        >>> format_p(0.0123), format_p(0.0004), format_p(float("nan"))
        ('0.012', '< 0.001', '–')
    """
    return "–" if p != p else "< 0.001" if p < 0.001 else f"{p:.3f}"


def _detail(row) -> str:
    p = format_p(row.p_holm)
    p = p if p.startswith("<") else f"= {p}"
    return (f"L = {row.layers} vs {_LABELS.get(row.worse, row.worse)} {100 * row.diff_mean:+.1f} points, "
            f"95% CI {100 * row.ci_low:+.1f} to {100 * row.ci_high:+.1f}, Holm p {p}")


def leader_sentence(runs: pd.DataFrame, lead: str = "dropedge++",
                    others: Sequence[str] = ("dropedge", "nodrop"), alpha: float = ALPHA) -> str | None:
    """Where ``lead`` has the highest mean test accuracy among ``others`` (by depth), then
    what the Holm-corrected paired tests of :func:`lead_tests` show: the depths where it is
    shown ahead of every other sampler, those where it is shown behind one, and otherwise the
    comparison closest to rejecting. ``None`` when no depth has ``lead`` and another sampler
    measured. ``runs``: one backbone of one table.

    Args:
        runs (pandas.DataFrame): the runs of one backbone of one table, as
            :func:`compare_samplers` reads them.
        lead (str, optional): the sampler claimed to lead. (default: :obj:`"dropedge++"`)
        others (Sequence[str], optional): the samplers it is compared with.
            (default: :obj:`("dropedge", "nodrop")`)
        alpha (float, optional): family-wise error rate. (default: :obj:`ALPHA`, 0.05)
    """
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
    name = _LABELS.get(lead, lead)
    if not trails:
        head = f"{name} has the highest mean test accuracy at every depth measured (L = {_ls(leads)})."
    elif not leads:
        head = (f"{name} does not lead at any depth measured (L = {_ls(trails)}): another sampler "
                "has a higher mean test accuracy.")
    else:
        head = f"{name} has the highest mean test accuracy at L = {_ls(leads)}, but not at L = {_ls(trails)}."
    tests = lead_tests(done, lead, others, alpha)
    tested = tests[tests["p_holm"].notna()]
    if tested.empty:
        return head + " No paired test: fewer than two seeds pair up at every depth."
    sizes = tests.groupby("worse", sort=False)["family_size"].first()
    fam = (f"Holm-corrected paired t-tests over seeds, α = {alpha:g}; one family per claim, at every "
           "depth measured: " + ", ".join(f"vs {_LABELS.get(w, w)} {n} test{'s' if n != 1 else ''}"
                                          for w, n in sizes.items()))
    per_depth = tests.groupby("layers")["verdict"]
    ahead = sorted(int(L) for L, v in per_depth if (v == "shown").all() and len(v) == len(others))
    behind = tests[tests["verdict"] == "reversed"]
    partly = tests[(tests["verdict"] == "shown") & ~tests["layers"].isin(ahead)]
    parts = []
    if ahead:
        parts.append(f"shown ahead of every other sampler at L = {_ls(ahead)}")
    if len(partly):
        parts.append("shown ahead at " + "; ".join(_detail(r) for r in partly.itertuples()))
    if len(behind):
        parts.append("shown behind at " + "; ".join(_detail(r) for r in behind.itertuples()))
    if not parts:
        closest = tested.sort_values("p_holm").iloc[0]
        return (f"{head} No difference is shown at any depth ({fam}); the closest: "
                f"{_detail(closest)}.")
    return f"{head} {name} is " + "; ".join(parts) + f" ({fam}); no difference is shown elsewhere."


def pair_sentence(runs: pd.DataFrame, better: str, worse: str, alpha: float = ALPHA) -> str | None:
    """What the runs show about one claim, ``better`` ≥ ``worse``, at every depth measured,
    for a reader: the depths where the Holm-corrected paired test (:func:`compare_samplers`,
    one family: this pair at every depth of the table) shows ``better`` above, those where it
    shows it below, and how many depths show neither. ``None`` when no depth has both.
    ``runs``: one backbone of one table.

    Args:
        runs (pandas.DataFrame): runs as :func:`compare_samplers` reads them.
        better (str): the sampler claimed at least as good.
        worse (str): the sampler it is compared with.
        alpha (float, optional): family-wise error rate. (default: :obj:`ALPHA`, 0.05)

    Example:
        >>> runs = pd.DataFrame({"dataset": "cora", "split": "semi", "backbone": "gcn",
        ...     "layers": 32, "sampler": ["nodrop"] * 3 + ["dropedge"] * 3,
        ...     "seed": [0, 1, 2] * 2, "test_acc": [0.30, 0.32, 0.31, 0.75, 0.76, 0.74]})
        >>> pair_sentence(runs, "dropedge", "nodrop").split(" (")[0]
        'DropEdge is shown above NoDrop at L = 32'
    """
    tests = compare_samplers(runs, alpha=alpha, family=PAIR_IN_TABLE, pairs=[(better, worse)])
    if tests.empty:
        return None
    b, w = _LABELS.get(better, better), _LABELS.get(worse, worse)
    tests = tests.sort_values("layers")
    above, below = tests[tests["verdict"] == "shown"], tests[tests["verdict"] == "reversed"]
    neither = sorted(int(L) for L in tests.loc[tests["verdict"] == "not shown", "layers"])
    size = int(tests["family_size"].iloc[0])
    parts = []
    if len(above):
        parts.append(f"{b} is shown above {w} at " + "; ".join(
            f"L = {r.layers} ({100 * r.diff_mean:+.1f} points, Holm p {format_p(r.p_holm)})"
            for r in above.itertuples()))
    if len(below):
        parts.append(f"{b} is shown below {w} at " + "; ".join(
            f"L = {r.layers} ({100 * r.diff_mean:+.1f} points, Holm p {format_p(r.p_holm)})"
            for r in below.itertuples()))
    if neither:
        parts.append(f"{'elsewhere' if parts else f'{b} against {w}:'} no difference is shown "
                     f"either way at L = {_ls(neither)}")
    return ("; ".join(parts) + f" (paired t-tests over seeds, Holm-corrected over {size} depth"
            f"{'s' if size != 1 else ''}, α = {alpha:g}).")


__all__ = ["ALPHA", "LEVEL",
           "compare_samplers", "format_p", "holm", "lead_tests", "leader_sentence", "pair_sentence",
           "paired_difference", "readable"]
