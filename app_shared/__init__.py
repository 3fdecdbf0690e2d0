"""The app's frame shared by every page: the sidebar pickers and the cached loaders.

``app.py`` calls :func:`sidebar_pickers` on every run (so the pickers and their values
in ``st.session_state`` live across pages); a page calls :func:`selection` and
:func:`current_graph` and hands them to one ``dropedge_core`` function and one figure
builder. Heavy objects (graphs, layouts) are behind ``st.cache_resource``; computed
tables behind ``st.cache_data``. No logic worth a test lives here: it is in
``dropedge_core``.

The dataset picker's last entry, "upload (your CSV)", is the user's own graph: file
uploaders appear under it and their parse is kept in the browser session
(:mod:`app_shared.upload`).
"""
from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from app_shared import upload, urlstate
from app_shared.text import plain, private, store_label
from app_shared.upload import upload_files_text
from dropedge_core import datasets, memory, samplers
from dropedge_core.figures import sampler_label
from dropedge_core.method.graph import Graph, GraphError
from dropedge_core.studies import graph_layout as layout
from dropedge_core.training import UPLOAD_DATASET, UPLOAD_SPLITS

__all__ = [
    "DEFAULT_DATASET", "DEFAULT_SAMPLER", "DEFAULT_RATES", "DEFAULT_LAYERS", "DATA_SEED", "UPLOAD",
    "DATASET_OPTIONS", "NO_LABELS", "Selection", "sidebar_pickers", "dataset_splits", "selection",
    "load_graph", "current_graph", "data_source", "page_header", "require_labels", "cached_layout",
    "cached_default_center", "graph_key", "data_id", "restore_url_state", "share_link", "plain",
    "private", "store_label",
]

DEFAULT_DATASET = "karate"
DEFAULT_SAMPLER = "dropedge++"
DEFAULT_RATES = (0.3, 0.8)
DEFAULT_LAYERS = 8
#: Splits and the csbm graph use this fixed seed; the seed picker drives the samples.
DATA_SEED = 0
#: The dataset picker's entry for the user's own graph (``TrainConfig.dataset`` too).
UPLOAD = UPLOAD_DATASET
DATASET_OPTIONS: tuple[str, ...] = (*datasets.NAMES, UPLOAD)
NO_LABELS = ("no labels: training is unavailable. Upload a labels file in the sidebar "
             "(one label per node, or rows `node,label`); the Edge sampler and the MEN "
             "explorer work without labels.")


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


def sidebar_pickers() -> Selection:
    """Draw the shared pickers in the sidebar and return their values.

    Every picker has a key, so its value is in ``st.session_state`` and, because
    ``app.py`` draws the pickers on every page, survives page switches.
    """
    where = {row["name"]: row["availability"] for row in datasets.available()}
    ss = st.session_state
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
        st.slider("Layers L", 1, urlstate.APP_MAX_LAYERS, key="layers",
                  help="Number of layers that each get their own sampled adjacency.")
        ss.setdefault("seed", 0)
        st.number_input("Seed", min_value=0, max_value=2**31 - 1, step=1, key="seed",
                        help="Seed of the edge samples. Dataset splits (and the csbm "
                             "graph) use their fixed seed 0.")
    return selection()


def dataset_splits(name: str) -> tuple[str, ...]:
    """The splits the Split picker offers for a dataset (or the upload)."""
    return UPLOAD_SPLITS if name == UPLOAD else datasets.SOURCES[name].splits


def selection() -> Selection:
    """The shared pickers' current values (from ``st.session_state``)."""
    ss = st.session_state
    p_min, p_max = ss.get("p_range", DEFAULT_RATES)
    name = ss.get("dataset", DEFAULT_DATASET)
    if name not in DATASET_OPTIONS:
        name = DEFAULT_DATASET
    return Selection(dataset=name, split=ss.get("split", dataset_splits(name)[0]),
                     sampler=ss.get("sampler", DEFAULT_SAMPLER), p_min=float(p_min),
                     p_max=float(p_max), layers=int(ss.get("layers", DEFAULT_LAYERS)),
                     seed=int(ss.get("seed", 0)))


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
    """:func:`dropedge_core.studies.graph_layout.graph_layout`, once per graph and neighbourhood
    (``graph_key`` identifies ``_graph``, which is not hashed)."""
    return layout.graph_layout(_graph, center=center, k=hops, max_nodes=max_nodes)


@st.cache_resource(max_entries=32)
def cached_default_center(_graph: Graph, graph_key: tuple, hops: int, max_nodes: int) -> int:
    return layout.default_center(_graph, hops, max_nodes)


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


# ---- demo links: the state in the URL (app_shared.urlstate) ----------------------------

def _query() -> dict[str, str]:
    return {k: st.query_params[k] for k in st.query_params}


def restore_url_state(page: str) -> None:
    """Before the pickers are drawn, on a session's first run (a link was opened): put the
    URL's values (sidebar and ``page``'s controls) into the session. Values that cannot be
    used are named in a sidebar warning.

    Only the first run: the browser updates its URL after a run ends, so a rerun that a
    quick second click starts may still carry the previous run's URL — restoring from it
    would undo that click."""
    ss = st.session_state
    if ss.get("_url_restored"):
        return
    ss["_url_restored"] = True
    query = _query()
    if not query:
        return
    values, errors = urlstate.decode(urlstate.spec_for(page), query)
    if page == "live_training":  # a run's link: its own data and settings under the link's values
        from app_shared.training_view import run_link_values  # (a submodule that imports this package)

        values = run_link_values(query) | values
    dataset = values.get("dataset", ss.get("dataset", DEFAULT_DATASET))
    if "split" in values and values["split"] not in dataset_splits(dataset):
        errors.append(f"split={values.pop('split')} ignored: not a split of {dataset} "
                      f"(allowed: {', '.join(dataset_splits(dataset))})")
    ss.update({urlstate.session_key(k, dataset): v for k, v in values.items()})
    ss["_url_errors"] = errors
    ss["_url_written"] = query
    ss["_url_values"] = set(values)  # a recipe fills its widgets once: not over these


def share_link() -> None:
    """The sidebar's "Link to this view": the URL with the current state, copyable."""
    ss = st.session_state
    with st.sidebar:
        for line in ss.pop("_url_errors", None) or []:
            st.warning(f"Link: {plain(line)}")
        with st.expander("Link to this view"):
            base = str(getattr(st.context, "url", "") or "").split("?")[0]
            from app_shared.job_links import OWNER_PARAM  # (a submodule that imports this package)

            # a job's owner key controls it: whoever opens the shared link watches, read-only
            query = {k: v for k, v in (ss.get("_url_written") or {}).items() if k != OWNER_PARAM}
            from urllib.parse import urlencode
            st.code(base + ("?" + urlencode(query) if query else ""), language=None, wrap_lines=True)
            st.caption("Copy it (the icon at the right): opening it restores the sidebar and "
                       "this page's main controls. An uploaded graph is not part of the link.")
