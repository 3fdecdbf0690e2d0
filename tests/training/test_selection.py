"""training/_selection.py (issue 23, mutation follow-up): ModelSelection against the rule of
SPEC §Training restated by brute force over whole prefixes of a validation curve (the best
epoch is the first lexicographic maximum of (accuracy, -loss); the counter is the number of
epochs since the last new best or new lowest loss), on curves full of ties, and at the
edges (equal losses, patience 1, NaN)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from dropedge_explorer.training._selection import AuthorsCheckpoint, ModelSelection


def expected(curve: list[tuple[float, float]], t: int, patience: int) -> dict:
    """The state after epoch ``t`` (1-based) by brute force over the prefix ``curve[:t]``."""
    prefix = curve[:t]
    best = None
    for e, (acc, loss) in enumerate(prefix, start=1):  # the first maximum of (acc, -loss)
        if best is None or (acc, -loss) > (prefix[best - 1][0], -prefix[best - 1][1]):
            best = e

    def event(e: int) -> bool:
        acc, loss = curve[e - 1]
        before = curve[:e - 1]
        new_best = all((acc, -loss) > (a, -l) for a, l in before)
        new_low = all(loss < l for _, l in before)
        return new_best or new_low

    last = max([e for e in range(1, t + 1) if event(e)], default=0)
    counter = t - last
    return {"epoch": best, "val_acc": curve[best - 1][0], "val_loss": curve[best - 1][1],
            "test_acc": best / 100, "lowest_loss": min(l for _, l in prefix), "since_improved": counter,
            "stop": patience > 0 and counter >= patience}


@pytest.mark.parametrize("patience", [0, 1, 2, 3])
def test_model_selection_matches_brute_force_on_curves_with_ties(patience):
    rng = np.random.default_rng(patience)
    for _ in range(60):
        # few distinct values: equal accuracies, equal losses and equal pairs are common
        curve = [(float(a), float(b)) for a, b in zip(rng.integers(0, 4, 12) / 4, rng.integers(1, 5, 12) / 4)]
        s = ModelSelection(patience)
        for t, (acc, loss) in enumerate(curve, start=1):
            stop = s.update(t, acc, loss, test_acc=t / 100)
            want = expected(curve, t, patience)
            got = {"epoch": s.epoch, "val_acc": s.val_acc, "val_loss": s.val_loss, "test_acc": s.test_acc,
                   "lowest_loss": s.lowest_loss, "since_improved": s.since_improved, "stop": stop}
            assert got == want, (curve, t)


def test_equal_accuracy_needs_a_strictly_lower_loss_than_the_best_not_the_lowest():
    s = ModelSelection(patience=0)
    s.update(1, 0.5, 1.0, test_acc=0.1)
    s.update(2, 0.4, 0.5, test_acc=0.2)  # the lowest loss, not the best
    s.update(3, 0.5, 1.0, test_acc=0.3)  # equal accuracy and loss: the earlier epoch stays
    assert (s.epoch, s.test_acc) == (1, 0.1)
    s.update(4, 0.5, 0.8, test_acc=0.4)  # lower than the best's loss (not than 0.5): the new best
    assert (s.epoch, s.val_acc, s.val_loss, s.test_acc) == (4, 0.5, 0.8, 0.4)
    s.update(5, 0.5, 0.9, test_acc=0.5)  # equal accuracy, higher loss: no
    assert s.epoch == 4 and s.lowest_loss == 0.5


def test_patience_one_stops_at_the_first_epoch_without_improvement():
    s = ModelSelection(patience=1)
    assert s.update(1, 0.5, 1.0, 0.1) is False
    assert s.update(2, 0.5, 1.0, 0.2) is True  # equal loss is no new lowest loss
    assert s.since_improved == 1


def test_the_counter_counts_and_resets():
    s = ModelSelection(patience=5)
    out = [s.update(e, acc, loss, 0.0) for e, (acc, loss) in
           enumerate([(0.5, 1.0), (0.4, 1.2), (0.4, 1.3), (0.4, 1.1), (0.4, 0.9), (0.3, 2.0)], start=1)]
    assert out == [False] * 6 and s.since_improved == 1 and s.lowest_loss == 0.9


def test_nan_validation_never_improves_and_keeps_the_lowest_loss():
    s = ModelSelection(patience=3)
    s.update(1, 0.5, 0.7, 0.25)
    assert [s.update(e, math.nan, math.nan, 0.9) for e in (2, 3, 4)] == [False, False, True]
    assert (s.epoch, s.val_acc, s.val_loss, s.test_acc, s.lowest_loss) == (1, 0.5, 0.7, 0.25, 0.7)
    fresh = ModelSelection(patience=1)
    assert fresh.update(1, math.nan, math.nan, 0.5) is True
    assert fresh.epoch is None and fresh.test_acc is None and fresh.lowest_loss == math.inf


def test_an_unknown_checkpoint_criterion_is_named_with_the_valid_ones():
    # the one-line bad-input message: the value given and every criterion allowed, comma-separated
    with pytest.raises(ValueError) as err:
        AuthorsCheckpoint("val_f1")
    assert str(err.value) == "unknown checkpoint criterion 'val_f1'; valid: val_acc, val_loss, train_val_loss"
