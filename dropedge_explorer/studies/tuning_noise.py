"""How much of a tuning study's picture is noise: the best trial against seeds and errors.

A study ranks its trials by one seed's validation accuracy. Three things say how far
that ranking can be trusted, each written from numbers, never by hand:

- :func:`seed_spread`: the best trial and the start point (the study's first trial, the
  sidebar's keep rates) trained again on a few other seeds; :func:`spread_caption` says
  whether the gap between their means exceeds the seed-to-seed spread;
- :func:`colour_range`: the span of the contour's colour scale (the finished trials'
  validation accuracies) against the standard error of the difference between its two
  ends; :func:`colour_range_caption` says when the differences drawn are within noise, and
  :func:`tiny_validation_line` warns about a tiny validation set with the same verdict;
- :func:`start_point_line`: whether the best trial *is* the start point, and that the
  best trial is a place to start from, not a result.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from dropedge_explorer._lazy import lazy_import
from dropedge_explorer.training import TrainConfig, train

__all__ = ["DEFAULT_SEEDS", "accuracy_se", "start_trial", "trial_values", "seed_spread", "spread_summary",
           "spread_caption", "colour_range", "colour_range_caption", "tiny_validation_line", "surface_note",
           "start_point_line"]

#: Differences within this many standard errors count as noise.
NOISE_SES = 2.0
#: The seeds the best trial and the start point are trained again on (the study's own seed aside).
DEFAULT_SEEDS: tuple[int, ...] = (101, 102, 103)


def start_trial(study):
    """The study's start point: its first trial queued with fixed values (the base
    config's own keep rates, ``tune(include_base=True)``) that finished; ``None`` if none.

    Args:
        study (optuna.Study): the study read.
    """
    complete = lazy_import("optuna").trial.TrialState.COMPLETE
    for t in sorted(study.get_trials(deepcopy=False), key=lambda t: t.number):
        if "fixed_params" in t.system_attrs and t.state == complete:
            return t
    return None


def trial_values(trial) -> dict:
    """The config fields an Optuna trial set (its ``values`` user attribute: the keep rates,
    and lr / dropout / weight decay when tuned); ``{}`` when it recorded none.

    Args:
        trial (optuna.trial.FrozenTrial): the trial read.
    """
    return dict(trial.user_attrs.get("values") or {})


def seed_spread(base: TrainConfig, points: dict[str, dict], seeds: Iterable[int], graph=None) -> pd.DataFrame:
    """Train each point of ``points`` once per seed: one row per ``(point, seed)``.

    Args:
        base (TrainConfig): the study's base config (every field a trial does not set).
        points (dict[str, dict]): ``{name: fields}``, e.g. ``{"best": trial_values(best),
            "start": ...}``.
        seeds (Iterable[int]): the seeds (each sets the weights, the dropout and the edge
            samples).
        graph (Graph, optional): the loaded graph (loaded from ``base`` when ``None``).
            (default: :obj:`None`)

    Returns:
        columns ``point, seed, val_acc, test_acc`` (accuracies as fractions, at the best
        validation epoch; ``val_acc`` NaN where a run diverged at once).
    """
    rows = []
    for name, fields in points.items():  # a loop over full training runs
        for seed in seeds:
            result = train(base.replace(**fields, seed=int(seed)), graph=graph)
            rows.append({"point": name, "seed": int(seed),
                         "val_acc": math.nan if result.best_val_acc is None else float(result.best_val_acc),
                         "test_acc": math.nan if result.test_acc is None else float(result.test_acc)})
    return pd.DataFrame(rows, columns=["point", "seed", "val_acc", "test_acc"])


def spread_summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Per point: ``n`` seeds, ``mean`` and ``std`` (ddof 1; NaN for one seed) of ``val_acc``,
    and its standard error ``se = std / sqrt(n)``; indexed by point, in first-seen order.

    Args:
        runs (pandas.DataFrame): :func:`seed_spread`.
    """
    grouped = runs.groupby("point", sort=False)["val_acc"]
    out = pd.DataFrame({"n": grouped.count(), "mean": grouped.mean(), "std": grouped.std(ddof=1)})
    out["se"] = out["std"] / np.sqrt(out["n"])
    return out


def spread_verdict(summary: pd.DataFrame, a: str = "best", b: str = "start") -> dict:
    """Whether point ``a``'s mean validation accuracy differs from ``b``'s by more than
    :data:`NOISE_SES` standard errors of the difference ``sqrt(se_a² + se_b²)``.

    Returns ``diff`` (a − b), ``se`` (of the difference; NaN below two seeds each) and
    ``exceeds`` (``False`` where ``se`` is NaN: nothing can be said).

    Example:
        >>> s = pd.DataFrame({"n": [3, 3], "mean": [0.80, 0.70], "std": [0.01, 0.01],
        ...                   "se": [0.01 / 3 ** 0.5] * 2}, index=["best", "start"])
        >>> v = spread_verdict(s)
        >>> round(v["diff"], 2), v["exceeds"]
        (0.1, True)
    """
    diff = float(summary.loc[a, "mean"] - summary.loc[b, "mean"])
    se = math.sqrt(float(summary.loc[a, "se"]) ** 2 + float(summary.loc[b, "se"]) ** 2)
    return {"diff": diff, "se": se, "exceeds": bool(not math.isnan(se) and abs(diff) > NOISE_SES * se)}


def spread_caption(summary: pd.DataFrame, a: str = "best", b: str = "start") -> str:
    """The sentence beside the seed check, built from ``summary`` (:func:`spread_summary`).

    Args:
        summary (pandas.DataFrame): :func:`spread_summary`.
        a (str, optional): the point described first. (default: :obj:`"best"`)
        b (str, optional): the point it is compared with. (default: :obj:`"start"`)
    """
    sa = summary.loc[a]
    head = (f"On {int(sa['n'])} other seeds the best trial reaches {sa['mean']:.1%} ± {sa['std']:.1%} "
            "(mean ± std)")
    if b not in summary.index:
        return head + "."
    sb = summary.loc[b]
    v = spread_verdict(summary, a, b)
    head += f" and the start point {sb['mean']:.1%} ± {sb['std']:.1%} ({int(sb['n'])} seeds)."
    if math.isnan(v["se"]):
        return head + " Two seeds each are needed to compare them."
    if v["exceeds"]:
        return (head + f" **The difference, {v['diff']:+.1%}, exceeds the seed-to-seed noise** "
                f"({NOISE_SES:g} standard errors of the difference = {NOISE_SES * v['se']:.1%}).")
    return (head + f" **The difference, {v['diff']:+.1%}, is within the seed-to-seed noise** "
            f"({NOISE_SES:g} standard errors of the difference = {NOISE_SES * v['se']:.1%}): on these "
            "seeds the tuned keep rates are not shown to be better than the start.")


def accuracy_se(p: float, n: int) -> float:
    """One standard error of an accuracy ``p`` measured on ``n`` nodes: the half-width of the
    Wilson score interval at z = 1,

    ``se = sqrt(p (1 - p) / n + 1 / (4 n²)) / (1 + 1 / n)``,

    which is about the binomial ``sqrt(p (1 - p) / n)`` when ``n p (1 - p)`` is large and never
    0: at ``p = 0`` or ``1`` it is ``1 / (2 (n + 1))``, so a perfect score on few nodes keeps
    an uncertainty (8 nodes: 5.6 points).

    Args:
        p (float): the accuracy, a fraction in ``[0, 1]``.
        n (int): the nodes it was measured on (``n >= 1``).

    Example:
        >>> round(accuracy_se(1.0, 8), 4), round(accuracy_se(0.8, 500), 4)
        (0.0556, 0.0179)
    """
    if not isinstance(n, int | np.integer) or isinstance(n, bool) or n < 1:
        raise ValueError(f"n must be a positive integer (got {n!r})")
    p = float(p)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be an accuracy in [0, 1] (got {p!r})")
    n = int(n)
    return math.sqrt(p * (1.0 - p) / n + 1.0 / (4 * n * n)) / (1.0 + 1.0 / n)


def colour_range(values: Sequence[float], num_val: int) -> dict:
    """The contour's colour scale against the noise: ``low``/``high`` of the finished
    trials' validation accuracies, ``span = high − low``, ``se``: the standard error of
    that difference, ``sqrt(se(high)² + se(low)²)`` with :func:`accuracy_se` (never 0),
    ``ses = span / se`` and ``within_noise`` (the whole span is at most :data:`NOISE_SES`
    of them).

    Args:
        values (Sequence[float]): the validation accuracies the contour colours.
        num_val (int): the validation nodes each accuracy was measured on.
    """
    vals = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    if not vals:
        nan = math.nan
        return {"low": nan, "high": nan, "span": nan, "se": nan, "ses": nan, "within_noise": False}
    low, high = min(vals), max(vals)
    se = math.hypot(accuracy_se(high, num_val), accuracy_se(low, num_val))
    span = high - low
    return {"low": low, "high": high, "span": span, "se": se, "ses": span / se,
            "within_noise": span / se <= NOISE_SES}


def colour_range_caption(values: Sequence[float], num_val: int) -> str:
    """The sentence under the contour: its colour range in points and in standard errors of
    the difference between its ends, and whether the differences it draws are within noise.

    Args:
        values (Sequence[float]): the validation accuracies the contour colours.
        num_val (int): the validation nodes each accuracy was measured on.

    Example:
        >>> "within noise" in colour_range_caption([0.70, 0.72, 0.71], num_val=500)  # 2 points ≈ 0.7 SE
        True
    """
    r = colour_range(values, num_val)
    if math.isnan(r["span"]):
        return "No finished trial: no colour range yet."
    head = (f"The colours span {r['low']:.1%} to {r['high']:.1%}, {r['span'] * 100:.1f} points = "
            f"{r['ses']:.1f} standard errors of the difference between the two ({r['se']:.1%}: Wilson "
            f"standard errors on {int(num_val)} validation nodes).")
    if r["within_noise"]:
        return (head + f" **The differences drawn are within noise** (at most {NOISE_SES:g} standard "
                "errors): the contour's shape is not evidence that one region is better.")
    return head + f" The span exceeds {NOISE_SES:g} standard errors: part of it is more than noise."


def tiny_validation_line(num_val: int, values: Sequence[float]) -> str:
    """The warning about a tiny validation set: what one node weighs, and what the trials'
    spread says, with :func:`colour_range`'s verdict so that it never contradicts the
    contour's caption (both are read from the same numbers).

    Args:
        num_val (int): the validation nodes.
        values (Sequence[float]): the finished trials' validation accuracies.
    """
    r = colour_range(values, num_val)
    head = (f"**Tiny validation set**: {int(num_val)} nodes, so one node is {1 / int(num_val):.1%} of "
            "the accuracy")
    if math.isnan(r["span"]):
        return head + ". Use a dataset with a bigger validation split."
    spread = (f"the trials span {r['span'] * 100:.1f} points, {r['ses']:.1f} standard errors of the "
              f"difference ({r['se']:.1%})")
    if r["within_noise"]:
        return (head + f"; {spread}: within noise, **the ranking of the trials is mostly chance**. "
                "Use a dataset with a bigger validation split.")
    return (head + f"; {spread}: the worst trials are worse than the best by more than noise, but "
            f"trials within {NOISE_SES:g} standard errors of the best are not ranked by the data. "
            "Use a dataset with a bigger validation split.")


def start_point_line(best_trial: int, start_trial: int | None) -> str:
    """Whether the best trial is the start point (the study's first trial), and what the
    best trial is: a point to start from, not a result.

    Args:
        best_trial (int): the best trial's number.
        start_trial (int, optional): the start point's number (:func:`start_trial`;
            ``None`` without one).
    """
    same = start_trial is not None and best_trial == start_trial
    lead = ("**The best trial is the starting point** (the sidebar's own keep rates, trial "
            f"#{start_trial}): the search found nothing better. " if same else "")
    return (lead + "The best trial is a place to start from, not a result: its accuracy is one "
            "seed's, picked as the maximum of many, so it is biased upward; train it on other seeds "
            "(below, or in Live training) before reading it as the sampler's accuracy.")


def surface_note(trials: pd.DataFrame, num_val: int | None = None) -> str:
    """The caption under the contour: which of the study's trials it is drawn from (the
    finished ones only: a pruned trial stopped early, its accuracy is not comparable), and,
    given ``num_val`` validation nodes, its colour range against the standard error of the
    difference between its ends (:func:`colour_range_caption`).

    Args:
        trials (pandas.DataFrame): the study's trials (columns ``state``, ``val_acc``).
        num_val (int, optional): the graph's validation nodes (:obj:`None`: no noise
            sentence). (default: :obj:`None`)
    """
    noise = ""
    complete = trials.loc[trials["state"] == "COMPLETE", "val_acc"].dropna() if num_val else ()
    if len(complete):
        noise = " " + colour_range_caption(complete.tolist(), int(num_val))
    done, pruned = int((trials["state"] == "COMPLETE").sum()), int((trials["state"] == "PRUNED").sum())
    return (f"Validation accuracy interpolated between the {done} finished trials of {len(trials)} "
            "(white dots; star: the best)"
            + (f"; the {pruned} pruned trials stopped early, so their accuracy is not comparable "
               "and they are left out" if pruned else "")
            + ". The contour needs 3 finished trials." + noise)
