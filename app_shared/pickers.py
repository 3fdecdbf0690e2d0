"""The sidebar's shared pickers: their defaults, their values (:class:`Selection`) and
what identifies the selected data in cache keys and widget keys.

``app.py`` calls :func:`sidebar_pickers` on every run (so the pickers and their values
in ``st.session_state`` live across pages); a page calls :func:`selection`. The dataset
picker's last entry, "upload (your CSV)", is the user's own graph: file uploaders appear
under it and their parse is kept in the browser session (:mod:`app_shared.upload`).
"""
from __future__ import annotations

from dataclasses import dataclass

import streamlit as st
from dropedge_core import datasets, samplers

from app_shared import upload
from app_shared.text import plain, private
from dropedge_explorer import links
from dropedge_explorer.figures import sampler_label
from dropedge_explorer.training import UPLOAD_DATASET, UPLOAD_SPLITS

__all__ = ["DATA_SEED", "DATASET_OPTIONS", "DEFAULT_DATASET", "DEFAULT_LAYERS", "DEFAULT_RATES",
           "DEFAULT_SAMPLER", "PICKER_KEYS", "UPLOAD", "Selection", "data_id", "dataset_splits", "graph_key",
           "selection", "sidebar_pickers"]

DEFAULT_DATASET = "karate"
DEFAULT_SAMPLER = "dropedge++"
DEFAULT_RATES = (0.3, 0.8)
DEFAULT_LAYERS = 8
#: Splits and the csbm graph use this fixed seed; the seed picker drives the samples.
DATA_SEED = 0
#: The dataset picker's entry for the user's own graph (``TrainConfig.dataset`` too).
UPLOAD = UPLOAD_DATASET
DATASET_OPTIONS: tuple[str, ...] = (*datasets.NAMES, UPLOAD)
@dataclass(frozen=True)
class Selection:
    """The shared pickers' values."""

    dataset: str
    split: str
    sampler: str
    p_min: float
    p_max: float
    layers: int
    seed: int


def _availability_label(name: str, where: dict[str, str]) -> str:
    if name == UPLOAD:
        return "upload (your CSV)"
    tag = {"built-in": "built in", "DROPEDGE_DATA": "offline · DROPEDGE_DATA",
           "cached": "offline · cached", "download": "needs download"}[where[name]]
    return f"{name}  ({tag})"


#: The shared pickers' session keys (kept on a page that does not draw them).
PICKER_KEYS: tuple[str, ...] = ("dataset", "split", "sampler", "p_range", "layers", "seed")
_KEPT = "_kept_"


def _value(key: str, default):
    """A picker's value: its widget's, else the one kept while a page did not draw it."""
    ss = st.session_state
    return ss[key] if key in ss else ss.get(_KEPT + key, default)


def _restore_kept(ss) -> None:
    """The pickers' values kept while a page that does not draw them was shown, put back;
    only after such a page (elsewhere a value another page set, e.g. "Train this", stands)."""
    if not ss.pop("_pickers_hidden", False):
        return
    for key in PICKER_KEYS:
        if _KEPT + key in ss:
            value = ss.pop(_KEPT + key)
            if key not in ss:
                ss[key] = value


def sidebar_pickers(shown: bool = True) -> Selection:
    """Draw the shared pickers in the sidebar and return their values.

    Every picker has a key, so its value is in ``st.session_state`` and, because
    ``app.py`` draws the pickers on every page, survives page switches.

    Args:
        shown (bool, optional): ``False`` on a page that uses none of them (the Lesson picks
            its own graphs): no picker is drawn, one line says why, and their values are kept
            for the other pages. (default: :obj:`True`)
    """
    ss = st.session_state
    if not shown:
        # Streamlit drops the value of a keyed widget that a run does not draw (already when the
        # page changes): every run that draws them keeps a copy (below), which comes back when
        # the pickers are drawn again
        ss["_upload_drawn"] = False
        ss["_pickers_hidden"] = True  # the next run that draws them restores the kept values
        st.sidebar.caption("**Shared settings** (dataset, sampler, keep rates, layers, seed): not used "
                           "on this page, which picks its own graphs; they are kept for the other pages.")
        return selection()
    _restore_kept(ss)
    where = {row["name"]: row["availability"] for row in datasets.available()}
    with st.sidebar:
        st.markdown("**Shared settings**")
        problem = datasets.data_dir_problem()
        if problem:
            st.warning(f"{plain(private(problem))}: datasets not cached need a download.")
        ss.setdefault("dataset", DEFAULT_DATASET)
        if ss["dataset"] not in DATASET_OPTIONS:  # e.g. a stale value: back to the default
            ss["dataset"] = DEFAULT_DATASET
        name = st.selectbox(
            "Dataset", DATASET_OPTIONS, key="dataset",
            format_func=lambda n: _availability_label(n, where),
            help="karate and csbm are built in. The others are read from $DROPEDGE_DATA "
                 "(PyG's raw layout) or the local cache; 'needs download' means PyG "
                 "would fetch them from the internet. 'upload (your CSV)': your own graph "
                 "from an edge list and optional features and labels.")
        if name == UPLOAD:
            upload.upload_widgets(DATA_SEED)
        ss["_upload_drawn"] = name == UPLOAD
        splits = dataset_splits(name)
        if ss.get("split") not in splits:  # a dataset with other split rules was picked
            ss["split"] = splits[0]
        st.selectbox("Split", splits, key="split",
                     help="semi: the public Planetoid split; full: all labelled nodes "
                          "but validation/test; per-class: 20/30 per class (karate 2/2; "
                          "an upload: 20/30 per class of its labels).")
        ss.setdefault("sampler", DEFAULT_SAMPLER)
        st.selectbox("Sampler", samplers.NAMES, key="sampler", format_func=sampler_label,
                     help="nodrop, dropedge, LI (independent per layer), LID (nested, "
                          "bottom sparsest), LDD (nested, bottom densest), FD (kernel "
                          "weighted), DropEdge++ (LID + kernel weights).")
        ss.setdefault("p_range", DEFAULT_RATES)
        p_min, p_max = st.slider(
            "Keep rates p_min – p_max", 0.0, 1.0, step=0.05, key="p_range",
            help="Fractions of the M edges kept: layer 0 (input) keeps p_min, the top "
                 "layer p_max (LDD mirrored); DropEdge/FD keep (p_min + p_max)/2 everywhere.")
        st.caption(f"p_max' = (p_max − p_min)/(1 − p_min) = "
                   f"{samplers.p_max_prime(p_min, p_max):.2f} (the paper's table)")
        ss.setdefault("layers", DEFAULT_LAYERS)
        st.slider("Layers L", 1, links.APP_MAX_LAYERS, key="layers",
                  help="Number of layers that each get their own sampled adjacency.")
        ss.setdefault("seed", 0)
        st.number_input("Seed", min_value=0, max_value=2**31 - 1, step=1, key="seed",
                        help="Seed of the edge samples. Dataset splits (and the csbm "
                             "graph) use their fixed seed 0.")
    for key in PICKER_KEYS:  # for a page that does not draw them, and the way back
        ss[_KEPT + key] = ss[key]
    return selection()


def dataset_splits(name: str) -> tuple[str, ...]:
    """The splits the Split picker offers for a dataset (or the upload)."""
    return UPLOAD_SPLITS if name == UPLOAD else datasets.SOURCES[name].splits


def selection() -> Selection:
    """The shared pickers' current values (from ``st.session_state``)."""
    p_min, p_max = _value("p_range", DEFAULT_RATES)
    name = _value("dataset", DEFAULT_DATASET)
    if name not in DATASET_OPTIONS:
        name = DEFAULT_DATASET
    return Selection(dataset=name, split=_value("split", dataset_splits(name)[0]),
                     sampler=_value("sampler", DEFAULT_SAMPLER), p_min=float(p_min),
                     p_max=float(p_max), layers=int(_value("layers", DEFAULT_LAYERS)),
                     seed=int(_value("seed", 0)))


def graph_key(sel: Selection) -> tuple:
    """What identifies the loaded graph in cache keys (an upload: its files' hashes)."""
    if sel.dataset == UPLOAD:
        return (UPLOAD, data_id(sel), DATA_SEED)
    return (sel.dataset, sel.split, DATA_SEED)


def data_id(sel: Selection) -> str:
    """The dataset's name in widget keys and study names: ``"upload-<hash>"`` for an
    upload, so that a new upload does not inherit the last one's widgets."""
    if sel.dataset == UPLOAD:
        parsed = st.session_state.get("upload_parsed")
        return f"{UPLOAD}-{parsed['id'] if parsed else 'none'}"
    return sel.dataset
