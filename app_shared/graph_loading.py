"""The selected graph on a page: loaded once per process, refused above the memory limit,
described in one line, and its layouts cached.

A page calls :func:`page_header` (the title, the graph or a one-line message and a stop,
the data-source line) and hands the graph to one ``dropedge_core`` function and one
figure builder. Heavy objects (graphs, layouts) are behind ``st.cache_resource``.
"""
from __future__ import annotations

import streamlit as st
from dropedge_core import datasets
from dropedge_core.graph import Graph, GraphError

from app_shared.pickers import DATA_SEED, UPLOAD, Selection, selection
from app_shared.text import plain, private
from app_shared.upload import upload_files_text
from dropedge_explorer import memory
from dropedge_explorer.studies import graph_layout as layout

__all__ = ["NO_LABELS", "cached_default_center", "cached_layout", "current_graph", "data_source",
           "load_graph", "page_header", "require_labels"]

NO_LABELS = ("no labels: training is unavailable. Upload a labels file in the sidebar "
             "(one label per node, or rows `node,label`); the Edge sampler and the MEN "
             "explorer work without labels.")



@st.cache_resource(show_spinner="Loading the dataset…", max_entries=8)
def load_graph(name: str, split: str, seed: int = DATA_SEED) -> Graph:
    """The dataset as a :class:`Graph`, loaded once per process (memoised kernel weights
    and components live on it)."""
    return datasets.load(name, split=split, seed=seed)


def current_graph(sel: Selection | None = None) -> Graph | None:
    """The selected dataset, or ``None`` after showing a one-line ``st.error`` (or, for
    an upload still missing its edge list, an ``st.info`` saying what to upload).

    A graph whose ``L``-layer samples (the sidebar's depth, or the MEN explorer's
    deepest, 32) would need more memory than ``$DROPEDGE_MAX_MEMORY_GB`` is refused here,
    for every page, before anything is sampled."""
    sel = sel or selection()
    graph = _current_graph(sel)
    if graph is None:
        return None
    try:
        memory.check(memory.sampling_bytes(graph.num_nodes, graph.num_edges, max(sel.layers, 32)),
                     f"sampling {max(sel.layers, 32)} layers of {graph.name} (N={graph.num_nodes}, "
                     f"M={graph.num_edges})", "pick fewer layers or a smaller graph")
    except memory.MemoryLimitError as exc:
        st.error(plain(str(exc)))
        return None
    return graph


def _current_graph(sel: Selection) -> Graph | None:
    if sel.dataset == UPLOAD:
        parsed = st.session_state.get("upload_parsed")
        if parsed is None:
            st.info("Upload your graph in the sidebar (“Your graph”): an edge list as CSV rows "
                    "`source,target` of node ids 0..N-1, with optional features (one row of "
                    "numbers per node) and labels (one per node, or rows `node,label`).")
            return None
        if parsed["error"]:
            st.error(f"Cannot use your upload: {plain(parsed['error'])}")
            return None
        return parsed["graph"]
    try:
        return load_graph(sel.dataset, sel.split)
    except (datasets.DatasetError, GraphError) as exc:
        st.error(f"Cannot load **{sel.dataset}**: {private(exc)}")
        if datasets.availability(sel.dataset) == "download":
            st.info("Pick a dataset marked 'offline' or 'built in', or set DROPEDGE_DATA "
                    "to a directory with PyG's raw files and restart the app.")
        return None


def data_source(graph: Graph) -> str:
    """One line saying where the data came from and what it is."""
    where = graph.info.get("source", "?")
    if where == "DROPEDGE_DATA":
        where = f"DROPEDGE_DATA (folder {datasets.data_dir().name})"  # the folder's name, not its path
    elif where == "cached":
        where = "the local cache"
    origin = f"from {where}"
    if where == "upload":
        origin = f"uploaded: {plain(upload_files_text(graph.info.get('files', {})))}"
    split = graph.info.get("split", "")
    classes = (f"{graph.num_classes} classes · split {split} ({int(graph.train_mask.sum())}/"
               f"{int(graph.val_mask.sum())}/{int(graph.test_mask.sum())})" if graph.num_classes
               else "no labels")
    return (f"Data: **{graph.name}** {origin} · N = {graph.num_nodes} nodes · "
            f"M = {graph.num_edges} edges · {classes}")


def page_header(title: str, sel: Selection, labels: bool = False) -> Graph:
    """Every page's top: the title, the selected graph (the page stops, after a one-line
    message, when there is none) and the data-source line; ``labels=True`` also stops a
    training page on a graph without labels."""
    st.title(title)
    graph = current_graph(sel)
    if graph is None:
        st.stop()
    st.caption(data_source(graph))
    if labels:
        require_labels(graph)
    return graph


def require_labels(graph: Graph) -> None:
    """Stop a training page, with one ``st.info``, on a graph without labels."""
    if graph.num_classes == 0:
        st.info(NO_LABELS)
        st.stop()


@st.cache_resource(show_spinner="Placing the nodes…", max_entries=32)
def cached_layout(_graph: Graph, graph_key: tuple, center: int | None, hops: int,
                  max_nodes: int) -> layout.GraphLayout:
    """:func:`dropedge_explorer.studies.graph_layout.graph_layout`, once per graph and neighbourhood
    (``graph_key`` identifies ``_graph``, which is not hashed)."""
    return layout.graph_layout(_graph, center=center, k=hops, max_nodes=max_nodes)


@st.cache_resource(max_entries=32)
def cached_default_center(_graph: Graph, graph_key: tuple, hops: int, max_nodes: int) -> int:
    return layout.default_center(_graph, hops, max_nodes)
