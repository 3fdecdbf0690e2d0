"""The class-merging page's models: the bundled snapshots (read once per server), the
sentence over all of them, and propagation alone on the sidebar's graph."""
from __future__ import annotations

import streamlit as st
from dropedge_core.graph import Graph

from dropedge_explorer.figures import sampler_label
from dropedge_explorer.studies import merging, sampling, teaching

__all__ = ["MAX_STEPS", "bundled", "bundle_finding", "propagation", "settings_caption"]

#: The most propagation steps the page offers.
MAX_STEPS = 64


@st.cache_resource(show_spinner="Loading the bundled snapshots…")
def bundled(key: str) -> teaching.Snapshots:
    """The bundled view ``key`` of :data:`~dropedge_explorer.studies.teaching.BUNDLED_VIEWS`."""
    return teaching.load_snapshots(teaching.BUNDLED_VIEWS[key][0])


@st.cache_data(show_spinner=False)
def bundle_finding() -> str:
    """:func:`dropedge_explorer.studies.merging.bundle_finding` over every bundled view (a view
    that cannot be read is left out)."""
    views = {}
    for key, (_, words) in teaching.BUNDLED_VIEWS.items():
        try:
            views[words] = bundled(key)
        except teaching.SnapshotError:
            continue
    return merging.bundle_finding(views, sampler_label)


@st.cache_resource(show_spinner="Propagating the features…", max_entries=4)
def propagation(_graph: Graph, graph_key: tuple, steps: int, p_min: float, p_max: float,
                seed: int) -> teaching.Snapshots:
    """``H_k = Â^(k) ... Â^(1) X`` for ``k = 0 .. steps``, no weights, under NoDrop, DropEdge
    and DropEdge++ (:func:`dropedge_explorer.studies.teaching.propagation_snapshots`)."""
    masks = sampling.masks_by_sampler(_graph, teaching.VIEW_SAMPLERS, steps, p_min, p_max, seed)
    snaps = teaching.propagation_snapshots(_graph, masks, seed=seed)
    snaps.settings.update(p_min=p_min, p_max=p_max)
    return snaps


def _kept(snaps: teaching.Snapshots) -> str:
    """The least share of the between-class spread the 2-D axes hold, per model."""
    return ", ".join(f"{sampler_label(i.sampler)} {min(i.between_kept):.0%}" for i in snaps.items)


def settings_caption(snaps: teaching.Snapshots) -> str:
    """The line under the animation: what was trained (or propagated), and how each picture
    is drawn."""
    s = snaps.settings
    drawn = ("Each layer is drawn on its two between-class axes, the spread around each class average "
             "scaled so that the picture's class separation is the measured one; the axes hold at least "
             f"{_kept(snaps)} of the between-class spread.")
    if "propagation" in s:
        return (f"{s['graph']}: {s['num_layers']} averaging steps ({s['propagation']}), keep rates "
                f"{s['p_min']:.2f} → {s['p_max']:.2f} (DropEdge: their mean), seed {s['seed']}; wide "
                f"features are first projected to 64 dimensions. {drawn}")
    return (f"{s['graph']}: {s['num_layers']}-layer GCN, hidden {s['hidden']}, lr {s['lr']:g}, dropout "
            f"{s['dropout']:g}, weight decay {s['weight_decay']:g}, self-feature term {s['self_loop']}, "
            f"{s['normalization']}, {s['epochs']} epochs, keep rates {s['p_min']:.2f} → {s['p_max']:.2f} "
            f"(DropEdge: their mean), seed {s['seed']}. Shown: the weights after the last epoch, on the "
            f"full graph; test accuracy at the best-validation epoch. {drawn}")
