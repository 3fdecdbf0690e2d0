"""Model selection and early stopping of one training run (SPEC §Training).

The reported test accuracy is the one at the epoch with the best validation accuracy;
ties go to the lower validation loss. Early stopping waits while *either* the validation
accuracy reaches a new best *or* the validation loss falls below every loss seen so far:
deep models often lower their loss for many epochs before their accuracy moves.

The ``authors`` recipe uses the authors' rule instead (:class:`AuthorsCheckpoint`): one
criterion per script, the later epoch on ties, no early stopping.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from dropedge_explorer.training import _authors as authors

#: The authors' checkpoint criteria: ``train_semi.py`` saves on validation accuracy
#: (``val_acc``) or, with ``--loss``, validation loss (``val_loss``), both from the
#: evaluation pass; ``train_new.py`` (full split) on the validation loss of the *training*
#: forward pass (sampled graph, dropout on: ``train_val_loss``).
CRITERIA: tuple[str, ...] = ("val_acc", "val_loss", "train_val_loss")


@dataclass
class ModelSelection:
    """The best epoch so far and the patience counter, updated once per epoch.

    Args:
        patience (int): epochs without a new best accuracy or a new lowest loss after which
            :meth:`update` says stop; ``0`` never stops.
        epoch (int, optional): the best epoch so far (state). (default: :obj:`None`)
        val_acc (float, optional): its validation accuracy. (default: :obj:`-1.0`)
        val_loss (float, optional): its validation loss. (default: :obj:`inf`)
        test_acc (float, optional): its test accuracy. (default: :obj:`None`)
        lowest_loss (float, optional): the lowest validation loss so far.
            (default: :obj:`inf`)
        since_improved (int, optional): epochs since the last improvement.
            (default: :obj:`0`)

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
    #: whether :meth:`update` needs the training pass's validation loss (never here)
    uses_train_val_loss = False

    def update(self, epoch: int, val_acc: float, val_loss: float, test_acc: float,
               train_val_loss: float = math.nan) -> bool:
        """Record one epoch's evaluation; ``True`` when the patience has run out.

        A NaN accuracy or loss (no validation nodes) never counts as an improvement;
        ``train_val_loss`` is not used here (:class:`AuthorsCheckpoint` uses it).
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


@dataclass
class AuthorsCheckpoint:
    """The authors' ``EarlyStopping`` as their scripts use it (``src/earlystopping.py``):
    the score is ``-criterion`` for a loss and the accuracy itself (their ``-(-acc)``);
    an epoch whose score is **not below** the best so far is the new checkpoint (``score <
    best_score`` is the only "no improvement" case, so ties go to the later epoch). Their
    patience equals the epoch budget, so training never stops early: :meth:`update`
    always returns ``False``.

    Args:
        criterion (str): one of :data:`CRITERIA`.
        epoch (int, optional): the checkpoint's epoch (state). (default: :obj:`None`)
        val_acc (float, optional): its validation accuracy. (default: :obj:`-1.0`)
        test_acc (float, optional): its test accuracy. (default: :obj:`None`)
        best_score (float, optional): its score. (default: :obj:`-inf`)

    Example:
        >>> s = AuthorsCheckpoint("val_acc")
        >>> [s.update(e, acc, 1.0, test_acc=e / 10) for e, acc in [(1, .5), (2, .6), (3, .6), (4, .4)]]
        [False, False, False, False]
        >>> s.epoch, s.test_acc
        (3, 0.3)
    """

    criterion: str
    epoch: int | None = None
    val_acc: float = -1.0
    test_acc: float | None = None
    best_score: float = -math.inf

    def __post_init__(self) -> None:
        if self.criterion not in CRITERIA:
            raise ValueError(f"unknown checkpoint criterion {self.criterion!r}; valid: {', '.join(CRITERIA)}")

    @property
    def uses_train_val_loss(self) -> bool:
        """Whether :meth:`update` needs ``train_val_loss`` (``train_new.py``'s rule)."""
        return self.criterion == "train_val_loss"

    def update(self, epoch: int, val_acc: float, val_loss: float, test_acc: float,
               train_val_loss: float = math.nan) -> bool:
        """Record one epoch; never asks to stop (the authors' patience is their budget)."""
        score = {"val_acc": val_acc, "val_loss": -val_loss, "train_val_loss": -train_val_loss}[self.criterion]
        # ``not score < best``, as theirs: a NaN on either side also saves
        if self.epoch is None or not score < self.best_score:
            self.epoch, self.val_acc, self.test_acc, self.best_score = epoch, val_acc, test_acc, score
        return False


def make_selection(config) -> ModelSelection | AuthorsCheckpoint:
    """The model selection of a run (a :class:`~dropedge_explorer.training.config.TrainConfig`):
    for the ``authors`` recipe :class:`AuthorsCheckpoint` with the criterion of the cell's
    script (:func:`dropedge_explorer.training._authors.script`), else :class:`ModelSelection`
    with ``config.patience``.

    Args:
        config (TrainConfig): the run's settings.

    Returns:
        ModelSelection or AuthorsCheckpoint: a fresh selection.
    """
    if config.recipe == "authors":
        return AuthorsCheckpoint(authors.script(config.dataset, config.split, config.backbone).criterion)
    return ModelSelection(config.patience)
