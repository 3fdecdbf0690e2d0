"""Bundled runs pinned to the code that ships: each row's config, stream and fingerprint.

A bundled run row (:mod:`dropedge_explorer.studies.run_tables`' run CSV format, or the ablation's
format with its keep-rate columns) names its config only through its descriptive columns
and its key. :func:`row_config` rebuilds the config from them and proves it by the key;
:func:`fingerprint_rows` recomputes each row's fingerprint
(:func:`dropedge_explorer.training._fingerprint.fingerprint`: the masks its seed draws, its
initial weights) at the code that runs now; :func:`drifted` lists the rows whose stored
fingerprint the code no longer gives — runs it could not produce again.

Rows carry more when their run was trained with fingerprints recorded (the store
keeps what the trainer computed, :data:`~dropedge_explorer.training._fingerprint.RUN_PRINT_FIELDS`):
``run_masks_fp`` (every epoch's masks), ``dropout_fp`` and ``final_fp``. A row bundled from
a run trained before has ``run_masks_fp`` computed by sampling when it was bundled and no
``dropout_fp``/``final_fp``. :func:`run_masks_rows` recomputes ``run_masks_fp`` by sampling
alone (no training); :func:`checked` compares what a row stores with what the code computes
and refuses a row that differs (:class:`FingerprintMismatch`).

A row's ``stream`` is the sampler stream version it was drawn from
(:data:`dropedge_core.STREAMS`). Only rows of today's version count in a
table or a verdict (:func:`~dropedge_explorer.studies.run_tables.current`, re-exported here); rows of an
older stream stay bundled, labelled, for comparison.
"""
from __future__ import annotations

import math
from collections.abc import Iterable

import pandas as pd
from dropedge_core import datasets

from dropedge_explorer.store import run_key
from dropedge_explorer.studies.run_tables import current, older
from dropedge_explorer.training import TrainConfig
from dropedge_explorer.training._fingerprint import MASKS_FIELDS, FingerprintCache, run_masks_fingerprints
from dropedge_explorer.training.recipes import RecipeError, parse_settings_label

__all__ = ["row_config", "current", "older",
           "fingerprint_rows", "run_masks_rows", "checked", "FingerprintMismatch"]

#: The digests a check recomputes (sampling and building only); ``dropout_fp`` and
#: ``final_fp`` need the training itself.
COMPUTABLE: tuple[str, ...] = ("masks_fp", "init_fp", "run_masks_fp")

#: Config fields a row may carry as columns, overriding its settings label: the ablation's file
#: has the keep rates; the per-cell search's best runs have the searched values in full (a
#: label rounds them to 6 digits).
CONFIG_COLUMNS: tuple[str, ...] = ("p_min", "p_max", "p", "directed", "kernel", "normalization", "hidden",
                                   "dropout", "lr", "weight_decay", "epochs", "patience", "self_loop",
                                   "batch_norm", "alpha")
_INT_FIELDS = ("hidden", "epochs", "patience")
_BOOL_FIELDS = ("directed", "self_loop", "batch_norm")
_STR_FIELDS = ("kernel", "normalization")


class FingerprintError(ValueError):
    """A bundled row whose config cannot be rebuilt (the message names the row)."""


class FingerprintMismatch(FingerprintError):
    """Rows whose stored fingerprint is not what the code computes: runs another code made
    (the message names them, stored and computed digests)."""


def _row_stream(row) -> int:
    value = row.get("stream") if hasattr(row, "get") else None
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return 1
    return int(value)


def _columns(row) -> dict:
    """The :data:`CONFIG_COLUMNS` a row carries, typed as the config takes them."""
    out = {}
    for name in CONFIG_COLUMNS:
        value = row.get(name) if hasattr(row, "get") else None
        if value is None or (isinstance(value, float) and math.isnan(value)) or value == "":
            continue
        if name in _BOOL_FIELDS:
            out[name] = value if isinstance(value, bool) else str(value).strip().lower() == "true"
        elif name in _INT_FIELDS:
            out[name] = int(value)
        elif name in _STR_FIELDS:
            out[name] = str(value)
        else:
            out[name] = float(value)
    return out


def row_config(row) -> TrainConfig:
    """The config of one bundled run row, proven by its key.

    Args:
        row (Mapping): a ``pandas`` row (or a dict) with ``dataset``, ``split``, ``backbone``,
            ``sampler``, ``layers``, ``seed``, ``key``, and ``settings`` (the recipe and what
            the run changed; ``depth`` when absent) or the keep-rate columns (which override
            the label); ``stream`` (default 1).

    Raises:
        FingerprintError: the columns do not rebuild a config whose key (of the row's
            stream) is the row's key.
    """
    settings = row.get("settings") if hasattr(row, "get") else None
    label = "depth" if settings is None or (isinstance(settings, float) and math.isnan(settings)) \
        or settings == "" else str(settings)
    where = (f"{row['dataset']} {row['split']} {row['backbone']}-{row['layers']} {row['sampler']} "
             f"seed {row['seed']} ({label})")
    try:
        recipe, changed = parse_settings_label(label)
        config = TrainConfig(dataset=row["dataset"], split=row["split"], backbone=row["backbone"],
                             recipe=recipe, num_layers=int(row["layers"]), sampler=row["sampler"],
                             seed=int(row["seed"]), **{**changed, **_columns(row)})
    except (RecipeError, ValueError, TypeError) as exc:
        raise FingerprintError(f"bundled run {where}: {exc}") from None
    if run_key(config, stream=_row_stream(row)) != row["key"]:
        raise FingerprintError(f"bundled run {where}: its columns give another config than its key "
                               f"{str(row['key'])[:12]}… says")
    return config


def fingerprint_configs(configs: list[TrainConfig]) -> list:
    """:class:`~dropedge_explorer.training._fingerprint.Fingerprint` of each config, computed now
    (each graph loaded once, each distinct half computed once). No training: a few
    milliseconds a run."""
    graphs: dict = {}

    def graph_of(config: TrainConfig):
        where = (config.dataset, config.split)
        if where not in graphs:
            graphs[where] = datasets.load(*where)
        return graphs[where]

    compute = FingerprintCache(graph_of)
    return [compute(c) for c in configs]


def fingerprint_rows(df: pd.DataFrame, configs: list[TrainConfig] | None = None) -> pd.DataFrame:
    """``df`` with ``masks_fp`` and ``init_fp`` computed now for each row, from ``configs``
    (one per row) or else each row's :func:`row_config`.

    Args:
        df (pandas.DataFrame): runs in the run CSV format.
        configs (list[TrainConfig], optional): one config per row (``None``: each row's
            :func:`row_config`). (default: :obj:`None`)
    """
    if configs is None:
        configs = [row_config(row) for _, row in df.iterrows()]
    prints = fingerprint_configs(configs)
    return df.assign(masks_fp=[p.masks for p in prints], init_fp=[p.init for p in prints])


def run_masks_rows(df: pd.DataFrame, configs: list[TrainConfig] | None = None) -> pd.Series:
    """``run_masks_fp`` of each row computed now by sampling alone: the masks of its first
    ``epochs_run`` epochs (:func:`~dropedge_explorer.training._fingerprint.run_masks_fingerprints`);
    rows that share their masks' settings (:data:`MASKS_FIELDS`: other backbones, recipes,
    epochs) share one pass of sampling.

    Args:
        df (pandas.DataFrame): runs in the run CSV format (``epochs_run`` is read).
        configs (list[TrainConfig], optional): one config per row (``None``: each row's
            :func:`row_config`). (default: :obj:`None`)

    Returns:
        pandas.Series: 16 hex digits per row, on ``df``'s index.
    """
    if configs is None:
        configs = [row_config(row) for _, row in df.iterrows()]
    graphs: dict = {}
    groups: dict[tuple, list[int]] = {}
    for i, config in enumerate(configs):
        values = config.to_dict()
        groups.setdefault(tuple(values[f] for f in MASKS_FIELDS), []).append(i)
    epochs = [int(e) for e in df["epochs_run"]]
    out = [""] * len(configs)
    for members in groups.values():
        config = configs[members[0]]
        where = (config.dataset, config.split)
        if where not in graphs:
            graphs[where] = datasets.load(*where)
        digests = run_masks_fingerprints(config, graphs[where], [epochs[i] for i in members])
        for i in members:
            out[i] = digests[epochs[i]]
    return pd.Series(out, index=df.index, dtype=str)


def _name(row) -> str:
    return (f"{row['dataset']} {row['split']} {row['backbone']}-{row['layers']} {row['sampler']} "
            f"seed {row['seed']} ({row.get('settings') or 'depth'})")


def checked(df: pd.DataFrame, configs: list[TrainConfig] | None = None, refuse: bool = True) -> pd.DataFrame:
    """``df`` (rows of today's stream) with :data:`COMPUTABLE` computed now: an empty cell is
    filled with the computed digest; a stored one is kept, and when it differs from the
    computed one the row is a run another code made: refused (``refuse=True``, bundling) or
    kept as it was stored (an export carries the stored value).

    Args:
        df (pandas.DataFrame): runs in the run CSV format, all of today's stream.
        configs (list[TrainConfig], optional): one config per row (``None``: each row's
            :func:`row_config`). (default: :obj:`None`)
        refuse (bool, optional): raise on a difference. (default: :obj:`True`)

    Raises:
        FingerprintMismatch: ``refuse`` and a row whose stored digest differs, naming up to
            five rows with their stored and computed digests.
    """
    if configs is None:
        configs = [row_config(row) for _, row in df.iterrows()]
    out = df.copy()
    for name in COMPUTABLE:
        out[name] = out[name].fillna("").astype(str) if name in out else ""
    if not len(out):
        return out
    now = fingerprint_rows(out, configs)
    now["run_masks_fp"] = run_masks_rows(out, configs)
    bad = []
    for name in COMPUTABLE:
        stored, computed = out[name], now[name]
        differs = (stored != "") & (stored != computed)
        bad += [f"{_name(out.loc[i])}: {name} stored {stored[i]}, this code computes {computed[i]}"
                for i in out.index[differs]]
        out[name] = stored.where(stored != "", computed)
    if bad and refuse:
        raise FingerprintMismatch(f"{len(bad)} stored fingerprint(s) differ from what this code draws: the "
                                  "runs were made by other code (re-run them with this code): "
                                  + "; ".join(bad[:5]))
    return out


def drifted(df: pd.DataFrame, columns: Iterable[str] = ("masks_fp", "init_fp")) -> pd.DataFrame:
    """The rows of today's stream whose stored fingerprint differs from the one computed
    now, with ``now_masks_fp`` / ``now_init_fp`` beside the stored ones."""
    rows = current(df)
    now = fingerprint_rows(rows)
    changed = pd.Series(False, index=rows.index)
    out = rows.copy()
    for name in columns:
        out[f"now_{name}"] = now[name]
        changed |= rows[name].astype(str) != now[name].astype(str)
    return out[changed]
