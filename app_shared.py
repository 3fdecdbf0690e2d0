"""The app's frame shared by every page: the sidebar pickers and the cached loaders.

``app.py`` calls :func:`sidebar_pickers` on every run (so the pickers and their values
in ``st.session_state`` live across pages); a page calls :func:`selection` and
:func:`current_graph` and hands them to one ``dropedge_core`` function and one figure
builder. Heavy objects (graphs, layouts) are behind ``st.cache_resource``; computed
tables behind ``st.cache_data``. No logic worth a test lives here: it is in
``dropedge_core``.
"""
from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from dropedge_core import datasets, layout, samplers
from dropedge_core.figures import sampler_label
from dropedge_core.graph import Graph, GraphError

DEFAULT_DATASET = "karate"
DEFAULT_SAMPLER = "dropedge++"
DEFAULT_RATES = (0.3, 0.8)
DEFAULT_LAYERS = 8
MAX_LAYERS = 64
#: Splits and the csbm graph use this fixed seed; the seed picker drives the samples.
DATA_SEED = 0


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
    tag = {"built-in": "built in", "DROPEDGE_DATA": "offline · DROPEDGE_DATA",
           "cached": "offline · cached", "download": "needs download"}[where[name]]
    return f"{name}  ({tag})"


def sidebar_pickers() -> Selection:
    """Draw the shared pickers in the sidebar and return their values.

    Every picker has a key, so its value is in ``st.session_state`` and, because
    ``app.py`` draws the pickers on every page, survives page switches.
    """
    where = {row["name"]: row["availability"] for row in datasets.available()}
    ss = st.session_state
    with st.sidebar:
        st.markdown("**Shared settings**")
        ss.setdefault("dataset", DEFAULT_DATASET)
        name = st.selectbox(
            "Dataset", datasets.NAMES, key="dataset",
            format_func=lambda n: _availability_label(n, where),
            help="karate and csbm are built in. The others are read from $DROPEDGE_DATA "
                 "(PyG's raw layout) or the local cache; 'needs download' means PyG "
                 "would fetch them from the internet.")
        splits = datasets.SOURCES[name].splits
        if ss.get("split") not in splits:  # a dataset with other split rules was picked
            ss["split"] = splits[0]
        st.selectbox("Split", splits, key="split",
                     help="semi: the public Planetoid split; full: all labelled nodes "
                          "but validation/test; per-class: 20/30 per class (karate 2/2).")
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
        st.slider("Layers L", 1, MAX_LAYERS, key="layers",
                  help="Number of layers that each get their own sampled adjacency.")
        ss.setdefault("seed", 0)
        st.number_input("Seed", min_value=0, max_value=2**31 - 1, step=1, key="seed",
                        help="Seed of the edge samples. Dataset splits (and the csbm "
                             "graph) use their fixed seed 0.")
    return selection()


def selection() -> Selection:
    """The shared pickers' current values (from ``st.session_state``)."""
    ss = st.session_state
    p_min, p_max = ss.get("p_range", DEFAULT_RATES)
    name = ss.get("dataset", DEFAULT_DATASET)
    return Selection(dataset=name, split=ss.get("split", datasets.SOURCES[name].splits[0]),
                     sampler=ss.get("sampler", DEFAULT_SAMPLER), p_min=float(p_min),
                     p_max=float(p_max), layers=int(ss.get("layers", DEFAULT_LAYERS)),
                     seed=int(ss.get("seed", 0)))


@st.cache_resource(show_spinner="Loading the dataset…", max_entries=8)
def load_graph(name: str, split: str, seed: int = DATA_SEED) -> Graph:
    """The dataset as a :class:`Graph`, loaded once per process (memoised kernel weights
    and components live on it)."""
    return datasets.load(name, split=split, seed=seed)


def current_graph(sel: Selection | None = None) -> Graph | None:
    """The selected dataset, or ``None`` after showing a one-line ``st.error``."""
    sel = sel or selection()
    try:
        return load_graph(sel.dataset, sel.split)
    except (datasets.DatasetError, GraphError) as exc:
        st.error(f"Cannot load **{sel.dataset}**: {exc}")
        if datasets.availability(sel.dataset) == "download":
            st.info("Pick a dataset marked 'offline' or 'built in', or set DROPEDGE_DATA "
                    "to a directory with PyG's raw files and restart the app.")
        return None


def data_source(graph: Graph) -> str:
    """One line saying where the data came from and what it is."""
    where = graph.info.get("source", "?")
    if where == "DROPEDGE_DATA":
        where = f"DROPEDGE_DATA ({datasets.data_dir()})"
    elif where == "cached":
        where = f"the local cache ({datasets.cache_dir()})"
    split = graph.info.get("split", "")
    return (f"Data: **{graph.name}** from {where} · N = {graph.num_nodes} nodes · "
            f"M = {graph.num_edges} edges · {graph.num_classes} classes · split {split} "
            f"({int(graph.train_mask.sum())}/{int(graph.val_mask.sum())}/"
            f"{int(graph.test_mask.sum())})")


@st.cache_resource(show_spinner="Placing the nodes…", max_entries=32)
def cached_layout(_graph: Graph, graph_key: tuple, center: int | None, hops: int,
                  max_nodes: int) -> layout.GraphLayout:
    """:func:`dropedge_core.layout.graph_layout`, once per graph and neighbourhood
    (``graph_key`` identifies ``_graph``, which is not hashed)."""
    return layout.graph_layout(_graph, center=center, k=hops, max_nodes=max_nodes)


@st.cache_resource(max_entries=32)
def cached_default_center(_graph: Graph, graph_key: tuple, hops: int, max_nodes: int) -> int:
    return layout.default_center(_graph, hops, max_nodes)


def graph_key(sel: Selection) -> tuple:
    """What identifies the loaded graph in cache keys."""
    return (sel.dataset, sel.split, DATA_SEED)
