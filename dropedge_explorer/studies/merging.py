"""Whether a model's classes merge, said in words built from the numbers on the screen.

The class-merging view (:mod:`dropedge_explorer.studies.teaching`) draws, per model and hidden
layer, the class separation (the between-class share of the variance of the full hidden
representation, :func:`~dropedge_explorer.studies.teaching.class_separation`) and the relative
distance to the over-smoothing subspace. A caption that says "the classes merge" must be
true of those numbers for the model shown, whichever model that is (a bundled one, or one
trained a minute ago): :func:`merge_verdicts` reads the trend off the numbers with one
stated rule, and :func:`trend_caption` writes the sentences from the verdicts, quoting the
numbers it read. Nothing here is tuned to a particular snapshot.

The rule, in three cases, read in this order:

- a model **did not train** when its test accuracy is below the share of the largest class
  plus :data:`TRAINED_MARGIN` (it does no better than a constant guess would): its classes
  may sit on top of each other from the first layer on, but that is a failure to learn,
  not merging with depth;
- a model that trains **merges the classes with depth** when its separation, after being
  at least :data:`MERGED_BELOW` at some layer, drops below it at a later layer (the class
  means come to coincide), or when its last layer keeps at most :data:`MERGE_SHARE` of its
  best separation reached at an earlier layer (a fall on the model's own scale);
- otherwise it **keeps the classes apart**.

A view without test accuracies (propagation alone, no training) skips the first case.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dropedge_explorer.studies.teaching import Snapshots

__all__ = [
           "trend_caption", "bundle_finding"]

#: Below this class separation the classes count as merged at that layer.
MERGED_BELOW = 0.1
#: The classes also "merge" when the last layer's separation is at most this share of the best.
MERGE_SHARE = 0.5
#: A model trains when its test accuracy beats the largest class's share by this much.
TRAINED_MARGIN = 0.10

Label = Callable[[str], str]


@dataclass(frozen=True)
class Verdict:
    """One model's trend: its separation at the first, best, lowest and last layer, its
    subspace distance at the first and last, its test accuracy against the largest class's
    share, and its case (the module's rule): ``kind`` is ``"untrained"``, ``"merges"``
    (with depth) or ``"apart"``."""

    sampler: str
    first_layer: int
    last_layer: int
    first: float
    peak: float
    peak_layer: int
    low: float
    low_layer: int
    last: float
    subspace_first: float
    subspace_last: float
    kind: str
    test_acc: float | None = None
    majority: float | None = None

    @property
    def merges(self) -> bool:
        """Whether the classes merge with depth (in a model that trains)."""
        return self.kind == "merges"


def majority_share(labels) -> float | None:
    """The share of the labelled nodes (label ``>= 0``) in the largest class: the accuracy of
    always guessing it (``None`` without labels)."""
    y = np.asarray(labels)
    y = y[y >= 0]
    return float(np.bincount(y).max() / y.size) if y.size else None


def _kind(sep: list[float], test_acc: float | None, majority: float | None) -> str:
    if test_acc is not None and majority is not None and test_acc < majority + TRAINED_MARGIN:
        return "untrained"
    apart_before = [k for k, v in enumerate(sep) if v >= MERGED_BELOW]
    drops = bool(apart_before) and any(v < MERGED_BELOW for v in sep[apart_before[0] + 1:])
    peak = max(sep)
    falls = sep.index(peak) < len(sep) - 1 and sep[-1] <= MERGE_SHARE * peak
    return "merges" if drops or falls else "apart"


def merge_verdicts(snaps: Snapshots, first: int = 1) -> list[Verdict]:
    """One :class:`Verdict` per model of ``snaps``, in their order.

    Args:
        snaps: the models' per-layer numbers (``separation`` and ``subspace``).
        first: the number of the first layer shown (1 for hidden layers, 0 for the
            propagation steps, where step 0 is ``X``).

    The best and lowest layers are the first ones that reach the maximum and minimum.
    """
    out = []
    majority = majority_share(snaps.labels)
    for s in snaps.items:
        sep = [float(v) for v in s.separation]
        if not sep:
            continue
        peak, low = max(sep), min(sep)
        out.append(Verdict(s.sampler, first, first + len(sep) - 1, sep[0], peak, first + sep.index(peak),
                           low, first + sep.index(low), sep[-1], float(s.subspace[0]),
                           float(s.subspace[-1]), _kind(sep, s.test_acc, majority),
                           None if s.test_acc is None else float(s.test_acc), majority))
    return out


def _direction(a: float, b: float) -> str:
    return "falls" if b < a else "rises" if b > a else "stays"


def _sentence(v: Verdict, label: Label) -> str:
    name = label(v.sampler)
    sub = (f"its distance to the over-smoothing subspace {_direction(v.subspace_first, v.subspace_last)}, "
           f"{v.subspace_first:.2f} → {v.subspace_last:.2f}")
    ends = f"{v.first:.2f} at layer {v.first_layer}, {v.last:.2f} at layer {v.last_layer}"
    if v.kind == "untrained":
        return (f"**{name} did not train**: test accuracy {v.test_acc:.1%}, against {v.majority:.1%} for "
                f"always guessing the largest class; its class separation is {ends} (at most "
                f"{v.peak:.2f}, at least {v.low:.3f}): classes piled together by a model that did not "
                f"learn, not merging with depth; {sub}.")
    if v.merges and v.low < MERGED_BELOW:
        return (f"**{name} merges the classes with depth**: its class separation drops to {v.low:.3f} "
                f"at layer {v.low_layer} (below {MERGED_BELOW:.2f}: the class means nearly coincide; "
                f"{ends}); {sub}.")
    if v.merges:
        return (f"**{name} merges the classes with depth**: its class separation falls from {v.peak:.2f} "
                f"at layer {v.peak_layer} to {v.last:.2f} at layer {v.last_layer} "
                f"({v.last / v.peak:.0%} of its best); {sub}.")
    return (f"**{name} keeps the classes apart**: its class separation {_direction(v.first, v.last)}, "
            f"{ends} (never below {v.low:.2f}, at most {v.peak:.2f}); {sub}.")


def opening_sentence(verdicts: list[Verdict], label: Label = str) -> str:
    """Which model shows merging and which keeps the classes apart, in one sentence
    (``label`` spells a sampler's name, e.g. :func:`dropedge_explorer.figures.sampler_label`)."""
    if not verdicts:
        return "No model to read."
    kinds = ("merges", "apart", "untrained")
    groups = {k: [label(v.sampler) for v in verdicts if v.kind == k] for k in kinds}
    if len(groups["merges"]) == len(verdicts):
        return f"Here the classes merge with depth under every model shown ({', '.join(groups['merges'])})."
    parts = []
    if groups["merges"]:
        parts.append(f"the classes merge with depth under {', '.join(groups['merges'])}")
    if groups["apart"]:
        they = "they" if groups["merges"] else "the classes"
        parts.append(f"{they} stay apart under {', '.join(groups['apart'])}")
    if groups["untrained"]:
        parts.append(f"{', '.join(groups['untrained'])} did not train")
    lead = "Here " + "; ".join(parts) + "."
    return lead if groups["merges"] else lead + " No model shown merges the classes with depth."


def trend_caption(snaps: Snapshots, first: int = 1, label: Label = str) -> str:
    """The caption under the class-merging view: :func:`opening_sentence`, then one
    sentence per model with the numbers it was read from, then the rule (``label`` spells
    a sampler's name).

    Args:
        snaps (Snapshots): the models' per-layer numbers (``separation`` and ``subspace``) of
            the view.
        first (int, optional): the number of the first layer shown (1 for hidden layers, 0
            for the propagation steps, where step 0 is ``X``). (default: :obj:`1`)
        label (Callable[[str], str], optional): spells a sampler's name, e.g.
            :func:`dropedge_explorer.figures.sampler_label`. (default: :obj:`str`)
    """
    verdicts = merge_verdicts(snaps, first)
    return " ".join([opening_sentence(verdicts, label)] + [_sentence(v, label) for v in verdicts]
                    + [f"(“Did not train”: test accuracy below the largest class's share + "
                       f"{TRAINED_MARGIN * 100:.0f} points. “Merges with depth”: after being at least "
                       f"{MERGED_BELOW:.2f}, the separation falls below it at a later layer, or the last "
                       f"layer keeps at most {MERGE_SHARE:.0%} of an earlier best.)"])


def bundle_finding(views: dict[str, Snapshots], label: Label = str) -> str:
    """One sentence over several views (``{name: snapshots}``, e.g. the bundled models):
    in how many of the models that train the classes merge with depth, and where.

    Args:
        views (dict[str, Snapshots]): ``{name: snapshots}`` of each view, e.g. the bundled
            models.
        label (Callable[[str], str], optional): spells a sampler's name.
            (default: :obj:`str`)
    """
    trained, merging, untrained = 0, [], 0
    for name, snaps in views.items():
        for v in merge_verdicts(snaps):
            if v.kind == "untrained":
                untrained += 1
                continue
            trained += 1
            if v.merges:
                merging.append(f"{label(v.sampler)} in {name}")
    total = trained + untrained
    if not trained:
        return f"None of the {total} models here trained."
    head = f"Of the {total} models here, {trained} train and {untrained} do not. "
    if merging:
        return head + (f"In {len(merging)} of the {trained} that train the classes merge with depth "
                       f"({'; '.join(merging)}).")
    return head + (f"**In none of the {trained} that train do the classes merge with depth**: their "
                   "separation stays up or rises layer by layer. Classes piled together are seen only "
                   "in models that did not train.")
