"""The user's own runs that a Depth study view does not show, and how to show them.

A run trained on the Live training page (or by ``train --store`` / ``sweep``) lands in the
results store under its run key; the Depth study shows it only when the page asks for
exactly that config (settings, depth, sampler, seed). Under the page's default request
(the depth recipe, the recipe's epochs, seeds 0-2) a 40-epoch Live training run is one of
hundreds of "other runs". :func:`own_runs` picks out the store's runs of the dataset and
split that the view leaves out, finds the page settings that would show most of them
(:func:`dropedge_explorer.studies.depth.cached_settings` on those runs alone) and says both in
one line; the page offers a button that takes the settings.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import pandas as pd
from dropedge_core.models import BACKBONES

from dropedge_explorer.studies.depth import DEPTHS, cached_settings, describe_settings

__all__ = ["OwnRuns", "own_runs", "request_for"]


@dataclass(frozen=True)
class OwnRuns:
    """The store's runs of one dataset/split that a view leaves out (:func:`own_runs`).

    Args:
        runs (pandas.DataFrame): those runs (run CSV columns, newest key order as stored).
        settings (dict, optional): the :func:`~dropedge_explorer.studies.depth.cached_settings`
            entry that shows the most of them, or ``None`` when no page setting gives their
            keys (e.g. a learning rate the page never sets).
        line (str): the one line that says where they are.
    """

    runs: pd.DataFrame
    settings: dict | None
    line: str


def _names(values) -> str:
    return ", ".join(str(v) for v in values)


def own_runs(cached: pd.DataFrame, shown: Iterable[str], dataset: str, split: str | None,
             lookup: Callable[..., list[dict]] | None = None) -> OwnRuns | None:
    """The runs of ``dataset``/``split`` from the results store (``source == "store"``)
    whose keys are not in ``shown``, or ``None`` when there are none.

    Args:
        cached (pandas.DataFrame): :func:`~dropedge_explorer.studies.run_tables.cached_runs`
            (with ``source``).
        shown (Iterable[str]): the keys of the runs the view asks for or draws.
        dataset (str): the dataset.
        split (str, optional): the split (``None``: the dataset's default).
        lookup (Callable[..., list[dict]], optional):
            :func:`~dropedge_explorer.studies.depth.cached_settings` or a cached wrapper with its
            signature (``None``: the function itself). (default: :obj:`None`)
    """
    if cached.empty or "source" not in cached:
        return None
    mine = cached[(cached["source"] == "store") & (cached["dataset"] == dataset)
                  & (cached["split"] == (split or "")) & ~cached["key"].isin(set(shown))]
    if mine.empty:
        return None
    showable = mine[mine["layers"].isin(DEPTHS)]  # the page offers these depths only
    found = ((lookup or cached_settings)(showable, dataset, split, "linear", False, (0.3, 0.8))
             if len(showable) else [])
    settings = found[0] if found else None
    where = dataset if not split else f"{dataset}/{split}"
    head = f"{len(mine)} of your run(s) of {where} in the results store are not in this view"
    if settings is None:
        line = (f"{head}: they were made with settings or depths this page does not offer "
                f"(settings {_names(sorted(set(mine['settings'])))}; L = "
                f"{_names(sorted(set(mine['layers'])))}); “Show my runs” lists them.")
    else:
        count = "it was" if len(mine) == 1 else f"{settings['runs']} were"
        line = (f"{head}: {count} made with the settings “{describe_settings(settings)}” "
                f"({_names(settings['backbones'])} · {_names(settings['samplers'])} · L = "
                f"{_names(settings['layers'])} · seeds {_names(settings['seeds'])}); "
                "“Show my runs” switches the view to them.")
    return OwnRuns(mine.reset_index(drop=True), settings, line)


def request_for(settings: dict, backbones: list, depths: list, samplers: list, seeds: int) -> dict:
    """The page request that shows the runs of ``settings`` beside what was picked: its
    mode, keep rates, epochs, kernel and direction, the picked backbones, depths and
    samplers widened by the runs', and enough seeds (``0 .. max seed``).

    Args:
        settings (dict): a :func:`~dropedge_explorer.studies.depth.cached_settings` entry
            (:attr:`OwnRuns.settings`).
        backbones (list): the backbones picked.
        depths (list): the depths picked.
        samplers (list): the samplers picked.
        seeds (int): the seed count picked.
    """
    def widen(picked: list, theirs: list, order: list | None = None) -> list:
        out = list(dict.fromkeys([*picked, *theirs]))
        return sorted(out, key=order.index) if order else sorted(out)

    return {"mode": settings["mode"], "p_min": settings["p_min"], "p_max": settings["p_max"],
            "epochs": settings["epochs"], "kernel": settings["kernel"], "directed": settings["directed"],
            "backbones": widen(backbones, settings["backbones"], list(BACKBONES)),
            "depths": widen(depths, settings["layers"]),
            "samplers": list(dict.fromkeys([*samplers, *settings["samplers"]])),
            "seeds": max(int(seeds), int(max(settings["seeds"])) + 1)}
