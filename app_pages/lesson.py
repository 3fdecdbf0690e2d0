"""Lesson mode: six guided steps for a class, one figure each."""
from __future__ import annotations

import streamlit as st

import app_shared as ui
from app_shared import lesson
from dropedge_core import samplers

ss = st.session_state
ss.setdefault("lesson_step", lesson.STEP_KEYS[0])
key = st.segmented_control("Lesson step", lesson.STEP_KEYS, key="lesson_step",
                           format_func=lambda k: lesson.step(k).short,
                           help="A guided path for a class: one figure per step, a question to "
                                "ask, what to look for. The lesson uses its own small graphs; "
                                "the sidebar's settings do not apply here.")
key = key or lesson.STEP_KEYS[0]
step = lesson.step(key)
st.subheader(step.title)

left, right = st.columns([5, 2])
with right:
    st.markdown(step.text)
    graph = None
    if key != "result":
        ss.setdefault("lesson_dataset", lesson.LESSON_DATASETS[0])
        name = st.selectbox("Graph", lesson.LESSON_DATASETS, key="lesson_dataset",
                            help="csbm: 600 nodes in 3 classes whose features carry the class "
                                 "(FD needs that); karate: Zachary's karate club, 34 nodes.")
        graph = ui.load_graph(name, "per-class")
    args = {"seed": 0, "height": 400}
    if key in ("propagation", "dropping", "depth", "lid_ldd", "fd"):
        top = 64 if key == "depth" else 32
        ss.setdefault(f"lesson_layers_{key}", 16 if key != "lid_ldd" else 8)
        args["layers"] = st.slider("Layers (averaging steps)", 2, top, key=f"lesson_layers_{key}")
    if key in ("dropping", "fd"):
        ss.setdefault("lesson_keep", 0.5)
        args["keep"] = st.slider("Keep rate p", 0.05, 1.0, step=0.05, key="lesson_keep")
    if key == "lid_ldd":
        ss.setdefault("lesson_rates", (0.2, 0.9))
        args["p_min"], args["p_max"] = st.slider("Keep rates p_min – p_max", 0.0, 1.0, step=0.05,
                                                 key="lesson_rates")
        st.caption(f"p_max' = {samplers.p_max_prime(args['p_min'], args['p_max']):.2f}")
    if key == "fd":
        ss.setdefault("lesson_kernel", "linear")
        args["kernel"] = st.selectbox("Kernel", samplers.KERNELS, key="lesson_kernel")
    if key == "result":
        ss.setdefault("lesson_recipe", "deep")
        args["recipe"] = st.radio("Training recipe", ["deep", "old-defaults"], key="lesson_recipe",
                                  format_func={"deep": "one that trains",
                                               "old-defaults": "the old defaults"}.get)
    st.markdown(f"**Ask the class:** {step.question}")


@st.cache_data(show_spinner="Computing…", max_entries=32)
def _figure(key: str, dataset: str | None, **args):
    graph = ui.load_graph(dataset, "per-class") if dataset else None
    return lesson.step_figure(key, graph, **args)


with left:
    st.plotly_chart(_figure(key, graph.name if graph is not None else None, **args), key="lesson_figure")
    if caption := lesson.step_caption(key, args.get("recipe", "deep")):
        st.markdown(caption)
with st.expander("What to look for", expanded=False):
    st.markdown(step.look_for)
with st.expander("What the symbols mean"):
    st.dataframe(lesson.glossary_table(key), hide_index=True, placeholder="—", width="stretch")
