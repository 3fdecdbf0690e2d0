"""DropEdge++ Explorer: the entry point (``streamlit run app.py``).

The frame of every page: page config, navigation, the shared pickers in the sidebar,
the loaded dataset and where it came from. Adding a page is one line in ``PAGES``.
"""
from __future__ import annotations

import streamlit as st
import torch

import app_shared as ui
from app_shared import browser_history, session_memory
from app_shared.st_internals import StopException
from dropedge_explorer import env, figures, memory
from dropedge_explorer.studies import lesson, sampling


def home() -> None:
    """Home: what over-smoothing is, with one live figure driven by the sidebar."""
    sel = ui.selection()
    graph = ui.current_graph(sel)
    st.title("DropEdge++ Explorer")
    st.markdown(
        "A graph convolution replaces each node's representation by a weighted average "
        "over its neighbours: `H ← Â H`. Stack many layers and every node ends up with "
        "(almost) the same vector, up to a factor set by its degree — **over-smoothing**: "
        "the representations fall into a low-dimensional subspace that carries no "
        "information about the node's class, and deep GCNs stop learning.\n\n"
        "**DropEdge** keeps a random subset of the edges at every training step, which "
        "slows the collapse. **DropEdge++** (Structure-Aware DropEdge) chooses *which* "
        "edges per layer: the **layer-increasingly-dependent** sampler (LID) keeps the "
        "bottom layers sparsest and nests each layer inside the one above, which "
        "minimises the Mean-Edge-Number (MEN); the **feature-dependent** sampler (FD) "
        "prefers edges between nodes with similar features.")
    c1, c2 = st.columns([1.3, 4])
    steps = len(lesson.STEP_KEYS)
    if c1.button("Start the lesson", type="primary", key="home_lesson",
                 help=f"{steps} guided steps for a class, one question and one figure each."):
        st.switch_page(LESSON)
    c2.markdown(f"**New here, or teaching?** The *Lesson* walks through over-smoothing and edge "
                f"dropping in {steps} steps, each with its question and its figure.")
    if graph is None:
        _every_page()
        return
    st.caption(ui.data_source(graph))
    shown = list(dict.fromkeys(["nodrop", "dropedge", sel.sampler
                                if sel.sampler not in ("nodrop", "dropedge") else "dropedge++"]))
    try:
        df = _smoothing(graph, ui.graph_key(sel), tuple(shown), sel.layers, sel.p_min, sel.p_max,
                        sel.seed)
    except memory.MemoryLimitError as exc:  # a huge upload: refused before it is propagated
        st.error(ui.plain(str(exc)))
        _every_page()
        return
    st.plotly_chart(figures.over_smoothing_demo(df), key="home_smoothing")
    last = sampling.smoothing_at_last_step(df)
    at_top = ", ".join(f"{figures.sampler_label(n)} {at_last_step(m, s)}" for n, (m, s) in last.items())
    st.caption(
        f"**What it shows**: the features X propagated through L = {sel.layers} layers of the "
        "normalised adjacency Â = D̃^-1/2 (A+I) D̃^-1/2, each layer with the edges its sampler "
        f"kept (keep rates {sel.p_min:.2f} → {sel.p_max:.2f}) — a linear GCN with no weights and "
        f"no training. Lines: the mean over {SAMPLE_DRAWS} draws of the masks (sample seeds "
        f"{sel.seed} … {sel.seed + SAMPLE_DRAWS - 1}); bands: their range. Without dropping "
        "(grey) both curves fall fastest: the nodes' vectors approach the over-smoothing subspace "
        "(left) and become equal across edges (right); dropping edges slows the fall. "
        f"At the last layer, distance to the subspace (mean ± standard deviation over the "
        f"{SAMPLE_DRAWS} draws; no ± where every draw is the same, as without dropping): {at_top}.  \n"
        "**What it does not show**: which sampler trains a deep GCN better. DropEdge keeps the same "
        "(p_min + p_max)/2 of the edges at every layer, DropEdge++ keeps fewest at the bottom and "
        "most at the top, so on this curve DropEdge can keep as much signal as DropEdge++ or more. "
        "DropEdge++'s claim is about the Mean-Edge-Number (MEN: fewer message paths through "
        "the stack, *MEN explorer*) and about what that does to training (*Depth study*), not "
        "about this curve alone.")
    _every_page()


def _every_page() -> None:
    """Home's list of every page (app.py's ``PAGES``) with what it shows (``ABOUT``)."""
    st.markdown("**Every page** (the sidebar opens each)\n"
                + "\n".join(f"- *{p.title}*: {ABOUT[p.title]}" for p in PAGES[1:]))


def at_last_step(mean: float, std: float) -> str:
    """One sampler's distance at the last layer: ``mean ± std`` over the draws, the mean
    alone where the draws agree to the digits shown (NoDrop: every draw is the same graph)."""
    return f"{mean:.3f}" if round(std, 3) == 0 else f"{mean:.3f} ± {std:.3f}"


#: Home: draws of the masks the figure averages (one draw can land either side of another).
SAMPLE_DRAWS = 5


@st.cache_data(show_spinner="Propagating…", max_entries=64)
def _smoothing(_graph, graph_key: tuple, names: tuple[str, ...], layers: int, p_min: float,
               p_max: float, seed: int):
    return sampling.smoothing_spread(_graph, names, layers, p_min, p_max, seed, SAMPLE_DRAWS)


#: What each page shows, in Home's list of every page (keyed by the page's title).
ABOUT = {
    "Edge sampler": "what each sampler keeps, layer by layer, and the receptive field MEN counts",
    "MEN explorer": "the Mean-Edge-Number of every sampler against depth, beside the paper's table",
    "Live training": "train a backbone and watch its curves and over-smoothing diagnostics grow; "
                     "compare samplers",
    "Depth study": "test accuracy against depth for NoDrop, DropEdge and DropEdge++, the paper's claim "
                   "beside what the runs show",
    "Tuning": "search the keep rates with Optuna, with how much of the ranking is noise; train the "
              "best point",
    "Lesson": "a guided lesson for a class, step by step, on its own small graphs",
    "Watch the classes merge": "the hidden representations of trained GCNs (or plain averaging) layer by "
                               "layer, with their class separation",
    "The theory, measured": "the theory on the sidebar's graph: λ of each sampled layer, the geometric "
                            "bound on the distance to the subspace, MEN and its upper bound",
    "The paper's tables": "the paper's time per epoch (measured here, live) and best accuracy per "
                          "backbone, beside ours",
}
LESSON = "app_pages/lesson.py"

PAGES = [
    st.Page(home, title="Home", icon=":material/home:", default=True),
    st.Page("app_pages/edge_sampler.py", title="Edge sampler", icon=":material/hub:"),
    st.Page("app_pages/men_explorer.py", title="MEN explorer", icon=":material/stacked_line_chart:"),
    st.Page("app_pages/live_training.py", title="Live training", icon=":material/model_training:"),
    st.Page("app_pages/depth_study.py", title="Depth study", icon=":material/show_chart:"),
    st.Page("app_pages/tuning.py", title="Tuning", icon=":material/tune:"),
    st.Page(LESSON, title="Lesson", icon=":material/school:"),
    st.Page("app_pages/class_merge.py", title="Watch the classes merge", icon=":material/scatter_plot:"),
    st.Page("app_pages/theory.py", title="The theory, measured", icon=":material/functions:"),
    st.Page("app_pages/paper_tables.py", title="The paper's tables", icon=":material/table_chart:"),
]

# Offline classrooms: Streamlit 1.67 fetches a ":material/...:" favicon from fonts.gstatic.com;
# an emoji favicon is an inline data: URL (the pages' own material icons use the bundled font).
#: Pages that pick their own graphs: the sidebar's dataset, split and sampler boxes are not drawn there.
OWN_DATA = ("lesson",)
st.set_page_config(page_title="DropEdge++ Explorer", page_icon="🕸️", layout="wide")
try:  # every DROPEDGE_* variable, checked once per run, before any page uses one
    settings = env.settings()
except env.EnvError as exc:
    st.error(f"Cannot start: {exc}. Fix the variable(s) and restart the app.")
    st.stop()
# Torch's OpenMP pool stalls when its cores are shared (a training thread, other
# processes): on 2 busy cores small tensor ops went from microseconds to milliseconds
# and the home figure from 0.1 s to 8 s. One intra-op thread keeps the pages fast.
if torch.get_num_threads() != settings.torch_threads:
    torch.set_num_threads(settings.torch_threads)
page = st.navigation(PAGES)
session_memory.watch_current()  # a closed tab's upload, jobs and figures are freed after a grace
browser_history.restore(page.url_path)
ui.sidebar_pickers(shown=page.url_path not in OWN_DATA)
try:
    page.run()
except StopException:  # st.stop() in a page: the URL and the link are still sent
    browser_history.resume_after_stop()
finally:  # the URL follows every control
    browser_history.sync(page.url_path)
    browser_history.share_link()
