"""Model selection and early stopping of one training run (SPEC §Training).

The reported test accuracy is the one at the epoch with the best validation accuracy;
ties go to the lower validation loss. Early stopping waits while *either* the validation
accuracy reaches a new best *or* the validation loss falls below every loss seen so far:
deep models often lower their loss for many epochs before their accuracy moves.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["ModelSelection"]


@dataclass
class ModelSelection:
    """The best epoch so far and the patience counter, updated once per epoch.

    Args:
        patience: epochs without a new best accuracy or a new lowest loss after which
            :meth:`update` says stop; ``0`` never stops.

    Example:
        >>> s = ModelSelection(patience=2)
        >>> [s.update(e, acc, loss, test_acc=e / 10)
        ...  for e, acc, loss in [(1, .5, 1.0), (2, .5, .9), (3, .4, 1.1), (4, .4, 1.2)]]
        [False, False, False, True]
        >>> s.epoch, s.test_acc
        (2, 0.2)
    """

    patience: int
    epoch: int | None = None
    val_acc: float = -1.0
    val_loss: float = math.inf
    test_acc: float | None = None
    lowest_loss: float = math.inf
    since_improved: int = 0

    def update(self, epoch: int, val_acc: float, val_loss: float, test_acc: float) -> bool:
        """Record one epoch's evaluation; ``True`` when the patience has run out.

        A NaN accuracy or loss (no validation nodes) never counts as an improvement.
        """
        if val_acc > self.val_acc or (val_acc == self.val_acc and val_loss < self.val_loss):
            self.epoch, self.val_acc, self.val_loss, self.test_acc = epoch, val_acc, val_loss, test_acc
            self.since_improved = 0
        elif val_loss < self.lowest_loss:
            self.since_improved = 0
        else:
            self.since_improved += 1
        self.lowest_loss = min(self.lowest_loss, val_loss)
        return self.patience > 0 and self.since_improved >= self.patience
