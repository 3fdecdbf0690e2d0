"""The ``authors`` recipe: the training protocol of the authors' scripts
(hanjq17/DropEdgePlus, ``scripts/{semi,full}/<dataset>_<backbone>.sh``).

Hyperparameters (depth, width, lr, weight decay, dropout, normalisation, keep rates, Loop,
α) are the paper's table (:mod:`dropedge_explorer.data.presets`): the scripts give the same values
in all 16 Cora/CiteSeer cells (``--nbaseblocklayer`` + 2 = the table's depth; ``--b`` is
``p_min``, ``--a`` is ``p_max'``). What the scripts add, per cell (:data:`SCRIPTS`):

* the epoch budget (``--epoch``: 300 for Cora semi GCN/ResGCN, 260 for Cora semi APPNP*,
  400 elsewhere) and no early stopping (``--early_stopping`` equals or exceeds the budget);
* the checkpoint rule (:class:`~dropedge_explorer.training._selection.AuthorsCheckpoint`):
  validation accuracy in ``train_semi.py``, validation loss with ``--loss`` (Cora semi
  APPNP*), the training pass's validation loss in ``train_new.py`` (the full split);
* no batch norm (no script for these datasets passes ``--withbn``);
* directed sampling (their sampler draws the entries of the adjacency matrix, each
  direction of an edge on its own: ``src/sample.py``).

The models are the authors' (``dropedge_core.make_authors_model``). PubMed and the
co-author/co-purchase graphs have scripts too, but no data on this project's machines;
they are not mapped here.

Example:
    >>> script("cora", "semi", "appnp_star").criterion
    'val_loss'
"""
from __future__ import annotations

from typing import NamedTuple

from dropedge_explorer.data import presets


class Script(NamedTuple):
    """One of the authors' scripts: its path, ``--epoch`` and checkpoint criterion.

    Args:
        path (str): the script's path in the authors' repository.
        epochs (int): its ``--epoch``.
        criterion (str): its checkpoint criterion (:data:`~dropedge_explorer.training._selection.CRITERIA`).
    """

    path: str
    epochs: int
    criterion: str


def _scripts() -> dict[tuple[str, str, str], Script]:
    out = {}
    for dataset in ("cora", "citeseer"):
        for split, trainer in (("semi", "val_acc"), ("full", "train_val_loss")):
            for backbone, name in (("gcn", "gcn"), ("resgcn", "resgcn"), ("jknet", "jknet"),
                                   ("appnp_star", "appnp")):
                out[dataset, split, backbone] = Script(f"scripts/{split}/{dataset}_{name}.sh", 400, trainer)
    semi_cora = {"gcn": 300, "resgcn": 300}
    for backbone, epochs in semi_cora.items():
        out["cora", "semi", backbone] = out["cora", "semi", backbone]._replace(epochs=epochs)
    out["cora", "semi", "appnp_star"] = Script("scripts/semi/cora_appnp.sh", 260, "val_loss")
    return out


#: ``(dataset, split, backbone)`` → :class:`Script`.
SCRIPTS: dict[tuple[str, str, str], Script] = _scripts()


class AuthorsError(ValueError):
    """No script of the authors for a (dataset, split, backbone)."""


def script(dataset: str, split: str | None, backbone: str) -> Script:
    """The authors' script for the cell; raise :class:`AuthorsError` where there is none.

    Args:
        dataset (str): a dataset of the authors' scripts.
        split (str, optional): its split, ``"semi"`` or ``"full"`` (``None``: ``"semi"``).
        backbone (str): the backbone.

    Returns:
        Script: the script.
    """
    key = (str(dataset), "semi" if split is None else str(split), str(backbone))
    if key not in SCRIPTS:
        raise AuthorsError(f"no script of the authors for dataset={key[0]}, split={key[1]}, "
                           f"backbone={key[2]}; the authors recipe covers cora and citeseer, semi and full")
    return SCRIPTS[key]


def recipe_fields(dataset: str, split: str | None, backbone: str) -> dict:
    """The settings of the ``authors`` recipe for the cell (``num_layers`` included).

    Args:
        dataset (str): a dataset of the authors' scripts.
        split (str, optional): its split, ``"semi"`` or ``"full"`` (``None``: ``"semi"``).
        backbone (str): the backbone.

    Returns:
        dict: the settings, ``num_layers`` included.
    """
    s = script(dataset, split, backbone)
    fields = presets.paper_preset(dataset, split, backbone)
    return {**fields, "epochs": s.epochs, "patience": 0, "batch_norm": False, "directed": True}


