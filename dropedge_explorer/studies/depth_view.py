"""The whole view the Depth study page draws for one request (:func:`depth_view`): the
requested runs against the cached ones, the per-cell table beside the paper's numbers,
the nearest cached settings when nothing requested is measured, and whether DropEdge++
leads. The grid and the settings lookup it uses are in :mod:`dropedge_explorer.studies.depth`.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import pandas as pd

from dropedge_explorer.data import presets
from dropedge_explorer.studies import ordering
from dropedge_explorer.studies.cells import depth_table, paper_gaps, paper_rows
from dropedge_explorer.studies.depth import (
    cached_settings,
    depth_configs,
    describe_settings,
    nearest_settings,
    other_runs,
    requested_runs,
    study_settings,
)
from dropedge_explorer.training import TrainConfig, recipes


@dataclass
class DepthView:
    """What the Depth study page draws for one request (:func:`depth_view`).

    Args:
        configs (list[TrainConfig]): the requested runs.
        missing (list[TrainConfig]): the requested runs not cached (to train).
        runs (pandas.DataFrame): :func:`~.depth.requested_runs` (one row per config,
            ``source`` store/bundled/missing).
        counts (dict): ``{"store": n, "bundled": n}``, requested runs found in each.
        measured (pandas.DataFrame): the runs drawn: requested ones with a test accuracy,
            or, when there is none, the runs of the nearest cached settings (``fallback``).
        paper (pandas.DataFrame): the paper's rows drawn beside them
            (:func:`~.cells.paper_rows`).
        table (pandas.DataFrame): :func:`~.cells.depth_table` of ``measured`` (of ``runs``
            without a fallback).
        backbones (list[str]): the backbones drawn (the fallback's own when none of the
            picked has runs).
        fallback (dict, optional): the :func:`~.depth.nearest_settings` entry shown
            instead, or ``None``. (default: :obj:`None`)
        narrowed (bool, optional): the fallback's runs were narrowed to the picked
            backbones/samplers/depths. (default: :obj:`True`)
        note (str, optional): the fallback's settings in words (``None`` without one).
            (default: :obj:`None`)
        others (int, optional): cached runs of the dataset/split with other settings
            (:func:`~.depth.other_runs`). (default: :obj:`0`)
        recipes (dict, optional): ``{backbone: what its runs use, in words}``.
            (default: :obj:`{}`)
        preset_missing (bool, optional): the paper preset was asked for and some backbone
            has none here (the depth recipe is used). (default: :obj:`False`)
        verdicts (list, optional): ``[(backbone, sentence)]``: does DropEdge++ lead, for
            what is drawn. (default: :obj:`[]`)
        lead_tests (pandas.DataFrame, optional): the Holm-corrected paired tests behind the
            verdicts (:func:`dropedge_explorer.studies.ordering.lead_tests`, one family per
            backbone). (default: :obj:`None`)
        gaps (pandas.DataFrame, optional): :func:`~.cells.paper_gaps` of ``table``.
            (default: :obj:`None`)
        findings (list, optional): ``[(backbone, [sentence, ...])]``: what the runs drawn
            show about each step of the paper's claim (:data:`CLAIM_PAIRS`,
            :func:`dropedge_explorer.studies.ordering.pair_sentence`). (default: :obj:`[]`)
    """
    configs: list[TrainConfig]
    missing: list[TrainConfig]
    runs: pd.DataFrame
    counts: dict
    measured: pd.DataFrame
    paper: pd.DataFrame
    table: pd.DataFrame
    backbones: list[str]
    fallback: dict | None = None
    narrowed: bool = True
    note: str | None = None
    others: int = 0
    recipes: dict = field(default_factory=dict)
    preset_missing: bool = False
    verdicts: list = field(default_factory=list)
    lead_tests: pd.DataFrame | None = None
    gaps: pd.DataFrame | None = None
    findings: list = field(default_factory=list)


#: The paper's claim by depth, step by step: DropEdge slows the fall of NoDrop, and
#: DropEdge++ holds the accuracy beyond DropEdge (``(better, worse)`` pairs).
CLAIM_PAIRS: tuple[tuple[str, str], ...] = (("dropedge", "nodrop"), ("dropedge++", "dropedge"))
#: The paper's claim, in words: shown as the paper's, beside :attr:`DepthView.findings`.
PAPER_CLAIM = ("without dropping, GCN's accuracy falls with depth; DropEdge slows the fall, and "
               "DropEdge++ holds the accuracy up to deeper models")


def recipe_line(dataset: str, split: str | None, backbone: str, fields: dict, recipe: str,
                depths: Sequence[int]) -> str:
    """What one backbone's runs use, in words, at the shallowest and deepest depth asked for."""
    parts = []
    for L in sorted({min(depths), max(depths)}):
        c = TrainConfig(dataset=dataset, split=split, backbone=backbone, num_layers=L, **fields)
        parts.append(f"L = {L}: {recipes.describe(c.to_dict())}, keep rates {c.p_min:.2f} → {c.p_max:.2f}")
    head = (f"the paper preset (tuned for L = {presets.paper_preset(dataset, split, backbone)['num_layers']})"
            if recipe == "paper" else f"the {recipe} recipe")
    return f"{head} — " + "; ".join(parts)


def depth_view(dataset: str, split: str, backbones: Sequence[str], depths: Sequence[int],
               samplers: Sequence[str], seeds: int, epochs: int | None, mode: str, p_min: float,
               p_max: float, kernel: str, directed: bool, cached: pd.DataFrame, paper: pd.DataFrame,
               settings_lookup: Callable[..., list[dict]] | None = None) -> DepthView:
    """The Depth study for one request: the requested runs against the cached ones
    (:func:`~.runs.cached_runs`), the per-cell table beside the paper's numbers, and — when
    nothing requested is measured yet — the nearest cached settings instead, so that the
    page never shows an empty chart while runs of the dataset/split exist.

    Args:
        dataset (str): the dataset.
        split (str): the split.
        backbones (Sequence[str]): the backbones picked.
        depths (Sequence[int]): the depths picked.
        samplers (Sequence[str]): the samplers picked.
        seeds (int): the seed count (seeds ``0 .. seeds-1``).
        epochs (int, optional): epochs per run (``None``: the recipe's).
        mode (str): the settings (:func:`~.depth.study_settings`).
        p_min (float): the keep rate :math:`p_{min}`.
        p_max (float): the keep rate :math:`p_{max}`.
        kernel (str): the FD kernel.
        directed (bool): per-direction sampling.
        cached (pandas.DataFrame): :func:`~.run_tables.cached_runs`.
        paper (pandas.DataFrame): the paper's accuracy-by-depth table
            (:func:`dropedge_explorer.data.reference.paper_accuracy_by_depth`).
        settings_lookup (Callable[..., list[dict]], optional): :func:`~.depth.cached_settings`
            or a cached wrapper with its signature (``None``: the function itself).
            (default: :obj:`None`)
    """
    lookup = settings_lookup or cached_settings
    configs = depth_configs(dataset, split, backbones, depths, samplers, seeds, epochs, mode=mode,
                            p_min=p_min, p_max=p_max, kernel=kernel, directed=directed)
    runs = requested_runs(configs, cached)
    counts = runs["source"].value_counts()
    view = DepthView(
        configs=configs, runs=runs, counts={k: int(counts.get(k, 0)) for k in ("store", "bundled")},
        missing=[c for c, s in zip(configs, runs["source"]) if s == "missing"],
        measured=runs[(runs["source"] != "missing") & runs["test_acc"].notna()],
        paper=paper_rows(paper, dataset, split, backbones, samplers, depths), table=None,
        backbones=list(backbones), others=other_runs(cached, runs, dataset, split))
    view.table = depth_table(runs, view.paper)
    for b in backbones:
        fields, recipe = study_settings(dataset, split, b, mode, p_min, p_max)
        view.recipes[b] = recipe_line(dataset, split, b, fields, recipe, depths)
        view.preset_missing |= mode == "paper preset" and recipe != "paper"
    if view.measured.empty:
        view.fallback = nearest_settings(lookup(cached, dataset, split, kernel, directed, (p_min, p_max)),
                                         backbones, mode, p_min, p_max, epochs, kernel, directed)
    if view.fallback is not None:
        alt = cached[cached["key"].isin(set(view.fallback["keys"]))]
        narrowed = alt[alt["backbone"].isin(backbones) & alt["sampler"].isin(samplers)
                       & alt["layers"].isin(depths)]
        view.narrowed = bool(len(narrowed))
        view.measured = narrowed if view.narrowed else alt
        if not view.narrowed:
            view.backbones = list(view.fallback["backbones"])
            view.paper = paper_rows(paper, dataset, split, view.backbones, samplers,
                                    sorted(set(depths) | set(view.fallback["layers"])))
        view.table = depth_table(view.measured, view.paper)
        view.note = f"nearest cached settings: {describe_settings(view.fallback)}"
    view.verdicts = [(b, v) for b in view.backbones
                     if (v := ordering.leader_sentence(view.measured[view.measured["backbone"] == b]))]
    tests = [ordering.lead_tests(view.measured[view.measured["backbone"] == b]) for b in view.backbones]
    view.lead_tests = pd.concat([t for t in tests if len(t)]) if any(len(t) for t in tests) else None
    view.gaps = paper_gaps(view.table)
    for b in view.backbones:
        mine = view.measured[view.measured["backbone"] == b]
        found = [t for pair in CLAIM_PAIRS if (t := ordering.pair_sentence(mine, *pair))]
        if found:
            view.findings.append((b, found))
    return view


__all__ = ["CLAIM_PAIRS", "PAPER_CLAIM", "DepthView", "depth_view"]
