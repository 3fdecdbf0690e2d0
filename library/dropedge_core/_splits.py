"""The per-class random split of the built-in, Coauthor and Amazon graphs (the Planetoid
graphs come with theirs)."""
from __future__ import annotations

import torch


def per_class_split(y: torch.Tensor, train_per_class: int, val_per_class: int,
                    generator: torch.Generator) -> tuple[torch.Tensor, ...]:
    """Random ``train_per_class`` / ``val_per_class`` nodes per class; the rest is test.

    Nodes with ``y < 0`` (unlabelled) are in no split. Vectorised: one random
    permutation, a stable sort by class, the rank of each node inside its class.

    Args:
        y (Tensor): ``(N,)`` long labels, ``-1`` for unlabelled.
        train_per_class (int): training nodes per class (fewer where a class is smaller).
        val_per_class (int): validation nodes per class, after the training ones.
        generator (torch.Generator): the random source.

    Returns:
        tuple[Tensor, Tensor, Tensor]: the train, validation and test masks, ``(N,)`` bool,
        disjoint.

    Example:
        >>> y = torch.tensor([0, 0, 0, 1, 1, 1, -1])
        >>> train, val, test = per_class_split(y, 1, 1, torch.Generator().manual_seed(0))
        >>> int(train.sum()), int(val.sum()), int(test.sum()), bool(train[6] or val[6] or test[6])
        (2, 2, 2, False)
    """
    n = y.numel()
    perm = torch.randperm(n, generator=generator)
    labels = y[perm]
    order = torch.argsort(labels, stable=True)
    nodes, classes = perm[order], labels[order]
    first = torch.searchsorted(classes, classes, right=False)  # first slot of each class
    rank = torch.arange(n) - first
    labelled = classes >= 0
    train = torch.zeros(n, dtype=torch.bool)
    val = torch.zeros(n, dtype=torch.bool)
    test = torch.zeros(n, dtype=torch.bool)
    train[nodes[labelled & (rank < train_per_class)]] = True
    val[nodes[labelled & (rank >= train_per_class) & (rank < train_per_class + val_per_class)]] = True
    test[nodes[labelled & (rank >= train_per_class + val_per_class)]] = True
    return train, val, test
