"""The paper's best hyperparameters as training presets (paper appendix, Table
"Hyper-parameters for achieving the best testing accuracy on all datasets").

The table lives in ``dropedge_explorer/assets/reference/paper_best_hyperparameters.csv`` (facts from the
paper). It gives ``p_min`` and ``p_max' = (p_max - p_min) / (1 - p_min)``; presets carry
``p_max`` (:func:`dropedge_core.samplers.p_max_from_prime`). The presets are DropEdge++'s
settings: they set no sampler, so the caller picks one (``nodrop``/``dropedge`` with the
same preset compare samplers at otherwise equal settings).

Example:
    >>> paper_preset("cora", "semi", "gcn")["num_layers"]
    4
"""
from __future__ import annotations

import csv
from functools import lru_cache

from dropedge_core import datasets, samplers
from dropedge_core.models import ModelError, check_backbone

from dropedge_explorer import paths
from dropedge_explorer.data import reference

__all__ = ["HYPERPARAMETERS_CSV", "PRESETS", "PresetError", "available", "paper_preset", "preset"]

HYPERPARAMETERS_CSV = paths.REFERENCE_DIR / "paper_best_hyperparameters.csv"
PRESETS: tuple[str, ...] = ("paper",)


class PresetError(ValueError):
    """No preset for a (dataset, split, backbone) combination, or an unknown preset."""


def _yes(value: str) -> bool:
    return str(value).strip().lower() in ("yes", "true", "1", "y", "x", "✓")


def _row_to_fields(row: dict) -> dict:
    """One CSV row → :class:`~dropedge_explorer.training.config.TrainConfig` fields."""
    p_min = float(row["p_min"])
    fields = {
        "num_layers": int(row["layers"]),
        "hidden": int(row["hidden"]),
        "lr": float(row["lr"]),
        "weight_decay": float(row["weight_decay"]),
        "p_min": p_min,
        "p_max": round(samplers.p_max_from_prime(p_min, float(row["p_max_prime"])), 10),
        "normalization": row["normalization"].strip().upper(),
        "dropout": float(row["dropout"]),
        "batch_norm": _yes(row["batch_norm"]),
        "self_loop": _yes(row["self_loop"]),
    }
    if str(row.get("alpha") or "").strip():
        fields["alpha"] = float(row["alpha"])
    return fields


def _split_key(dataset: str, split: str | None) -> str:
    """Our split name → the table's ``setting`` (``semi``/``full``); the co-author and
    co-purchase graphs have one split (20/30 per class), the paper's semi setting."""
    if datasets.SOURCES[dataset].pyg_class == "Planetoid":
        key = "semi" if split is None else str(split).strip().lower()
        if key not in ("semi", "full"):
            raise PresetError(f"unknown split {split!r} for {dataset}; valid: semi, full")
        return key
    return "semi"


@lru_cache(maxsize=1)
def _table() -> dict[tuple[str, str, str], dict]:
    if not HYPERPARAMETERS_CSV.is_file():
        raise PresetError(f"preset table missing: {HYPERPARAMETERS_CSV}")
    table = {}
    with HYPERPARAMETERS_CSV.open(newline="") as fh:
        for row in csv.DictReader(fh):
            dataset = reference.dataset_key(row["dataset"])
            key = (dataset, row["setting"].strip().lower(), check_backbone(row["backbone"]))
            table[key] = _row_to_fields(row)
    return table


def available() -> list[tuple[str, str, str]]:
    """Every ``(dataset, setting, backbone)`` with a paper preset."""
    return sorted(_table())


def paper_preset(dataset: str, split: str | None, backbone: str) -> dict:
    """The paper's best hyperparameters for ``(dataset, split, backbone)``.

    Returns a dict of :class:`~dropedge_explorer.training.config.TrainConfig` fields:
    ``num_layers, hidden, lr, weight_decay, p_min, p_max, normalization, dropout,
    batch_norm, self_loop`` and ``alpha`` (APPNP* only).

    Args:
        dataset (str): the dataset.
        split (str, optional): its split (``None``: the dataset's first).
        backbone (str): the backbone (aliases accepted).

    Raises:
        PresetError: no preset for the combination (the message lists the ones for the
            dataset), or an unknown dataset/backbone/split.
    """
    try:
        key_dataset = datasets.check_name(dataset)
        key_backbone = check_backbone(backbone)
    except (datasets.DatasetError, ModelError) as exc:
        raise PresetError(str(exc)) from None
    key = (key_dataset, _split_key(key_dataset, split), key_backbone)
    table = _table()
    if key not in table:
        have = [f"{s}/{b}" for d, s, b in table if d == key_dataset]
        raise PresetError(f"no paper preset for dataset={key[0]}, split={key[1]}, backbone={key[2]}; "
                          f"presets exist for {key_dataset}: {', '.join(have) if have else 'none'}")
    return dict(table[key])


def preset(name: str, dataset: str, split: str | None, backbone: str) -> dict:
    """A named preset (only ``"paper"`` for now) → TrainConfig fields.

    Args:
        name (str): the preset's name, ``"paper"``.
        dataset (str): the dataset.
        split (str, optional): its split (``None``: the dataset's first).
        backbone (str): the backbone.

    Returns:
        dict: TrainConfig fields, as :func:`paper_preset`.
    """
    if str(name).strip().lower() != "paper":
        raise PresetError(f"unknown preset {name!r}; valid: {', '.join(PRESETS)}")
    return paper_preset(dataset, split, backbone)
