"""Whether a model's classes merge, said in words built from the numbers on the screen.

The class-merging view (:mod:`dropedge_core.studies.teaching`) draws, per model and hidden
layer, the class separation (the between-class share of the variance of the full hidden
representation, :func:`~dropedge_core.studies.teaching.class_separation`) and the relative
distance to the over-smoothing subspace. A caption that says "the classes merge" must be
true of those numbers for the model shown, whichever model that is (a bundled one, or one
trained a minute ago): :func:`merge_verdicts` reads the trend off the numbers with one
stated rule, and :func:`trend_caption` writes the sentences from the verdicts, quoting the
numbers it read. Nothing here is tuned to a particular snapshot.

The rule: a model **merges the classes** when, at some layer, its separation is below
:data:`MERGED_BELOW` (under a tenth of the variance lies between the classes: the class
means sit on top of each other), or when its last layer keeps at most :data:`MERGE_SHARE`
of its best separation; otherwise it **keeps them apart**. The first part is absolute
(a trained model's last layers may separate the classes again after a merged middle,
because the classifier reads them: the merge still happened); the second reads a fall on
the model's own scale.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dropedge_core.studies.teaching import Snapshots

__all__ = ["MERGED_BELOW", "MERGE_SHARE", "Verdict", "merge_verdicts", "trend_caption", "opening_sentence"]

#: Below this class separation the classes count as merged at that layer.
MERGED_BELOW = 0.1
#: The classes also "merge" when the last layer's separation is at most this share of the best.
MERGE_SHARE = 0.5

Label = Callable[[str], str]


@dataclass(frozen=True)
class Verdict:
    """One model's trend: its separation at the first, best, lowest and last layer, its
    subspace distance at the first and last, and whether the classes merge (the module's rule)."""

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
    merges: bool


def merge_verdicts(snaps: Snapshots, first: int = 1) -> list[Verdict]:
    """One :class:`Verdict` per model of ``snaps``, in their order.

    Args:
        snaps: the models' per-layer numbers (``separation`` and ``subspace``).
        first: the number of the first layer shown (1 for hidden layers, 0 for the
            propagation steps, where step 0 is ``X``).

    The best and lowest layers are the first ones that reach the maximum and minimum.
    """
    out = []
    for s in snaps.items:
        sep = [float(v) for v in s.separation]
        if not sep:
            continue
        peak, low = max(sep), min(sep)
        out.append(Verdict(s.sampler, first, first + len(sep) - 1, sep[0], peak, first + sep.index(peak),
                           low, first + sep.index(low), sep[-1], float(s.subspace[0]),
                           float(s.subspace[-1]),
                           merges=low < MERGED_BELOW or sep[-1] <= MERGE_SHARE * peak))
    return out


def _direction(a: float, b: float) -> str:
    return "falls" if b < a else "rises" if b > a else "stays"


def _sentence(v: Verdict, label: Label) -> str:
    name = label(v.sampler)
    sub = (f"its distance to the over-smoothing subspace {_direction(v.subspace_first, v.subspace_last)}, "
           f"{v.subspace_first:.2f} → {v.subspace_last:.2f}")
    ends = f"{v.first:.2f} at layer {v.first_layer}, {v.last:.2f} at layer {v.last_layer}"
    if v.low < MERGED_BELOW:
        return (f"**{name} merges the classes**: its class separation drops to {v.low:.3f} at layer "
                f"{v.low_layer} (below {MERGED_BELOW:.2f}: the class means nearly coincide; {ends}); {sub}.")
    if v.merges:
        return (f"**{name} merges the classes**: its class separation falls from {v.peak:.2f} at layer "
                f"{v.peak_layer} to {v.last:.2f} at layer {v.last_layer} ({v.last / v.peak:.0%} of its "
                f"best); {sub}.")
    return (f"**{name} keeps the classes apart**: its class separation {_direction(v.first, v.last)}, "
            f"{ends} (never below {v.low:.2f}, at most {v.peak:.2f}); {sub}.")


def opening_sentence(verdicts: list[Verdict], label: Label = str) -> str:
    """Which model shows merging and which keeps the classes apart, in one sentence
    (``label`` spells a sampler's name, e.g. :func:`dropedge_core.figures.sampler_label`)."""
    merged = [label(v.sampler) for v in verdicts if v.merges]
    apart = [label(v.sampler) for v in verdicts if not v.merges]
    if merged and apart:
        return (f"Here the classes merge under {', '.join(merged)} and stay apart under "
                f"{', '.join(apart)}.")
    if merged:
        return f"Here the classes merge under every model shown ({', '.join(merged)})."
    if apart:
        return f"Here no model merges the classes ({', '.join(apart)})."
    return "No model to read."


def trend_caption(snaps: Snapshots, first: int = 1, label: Label = str) -> str:
    """The caption under the class-merging view: :func:`opening_sentence`, then one
    sentence per model with the numbers it was read from, then the rule (``label`` spells
    a sampler's name)."""
    verdicts = merge_verdicts(snaps, first)
    return " ".join([opening_sentence(verdicts, label)] + [_sentence(v, label) for v in verdicts]
                    + [f"(“Merges”: the separation falls below {MERGED_BELOW:.2f} at some layer, or "
                       f"the last layer keeps at most {MERGE_SHARE:.0%} of the model's best.)"])
