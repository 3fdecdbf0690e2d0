"""Lesson mode: seven guided steps for a class, one question, one figure and one answer each."""
from __future__ import annotations

import streamlit as st
from dropedge_core import samplers

import app_shared as ui
from dropedge_explorer.studies import lesson

ss = st.session_state
ss.setdefault("lesson_step", lesson.STEP_KEYS[0])
key = st.segmented_control("Lesson step", lesson.STEP_KEYS, key="lesson_step",
                           format_func=lambda k: lesson.step(k).short,
                           help="A guided path for a class: one question per step, the figure, and "
                                "the answer written from the number that answers it. The lesson uses "
                                "its own small graphs; the sidebar's settings do not apply here.")
key = key or lesson.STEP_KEYS[0]
step = lesson.step(key)
st.subheader(step.title)

left, right = st.columns([3, 2])
with right:
    st.markdown(f"**Ask the class:** {step.question}")
    answer = st.empty()  # filled below, once the controls under it are read
    args: dict = {}
    dataset = None
    if key not in ("result", "verdicts"):
        ss.setdefault("lesson_dataset", lesson.LESSON_DATASETS[0])
        dataset = st.selectbox("Graph", lesson.LESSON_DATASETS, key="lesson_dataset",
                               help="csbm: 600 nodes in 3 classes whose features carry the class "
                                    "(FD needs that); karate: Zachary's karate club, 34 nodes.")
        args["seed"] = 0
    if key in ("propagation", "depth", "dropping", "lid_ldd", "fd"):
        top = 64 if key == "depth" else 32  # the link spec (app_shared/links.py) allows these
        ss.setdefault(f"lesson_layers_{key}", {"lid_ldd": 8, "dropping": 32}.get(key, 16))
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
    recipe = "deep"
    if key == "result":
        ss.setdefault("lesson_recipe", "deep")
        recipe = st.radio("Training recipe", ["deep", "old-defaults"], key="lesson_recipe",
                          format_func={"deep": "the depth recipe", "old-defaults": "the old defaults"}.get)


@st.cache_resource(show_spinner="Computing…", max_entries=32)
def _numbers(key: str, dataset: str | None, **args) -> dict:
    graph = ui.load_graph(dataset, "per-class") if dataset else None
    return lesson.step_numbers(key, graph, **args)


numbers = _numbers(key, dataset, **args)
answer.info(f"**What the numbers say.** {lesson.step_sentence(numbers)}")
with left:
    st.plotly_chart(lesson.step_figure(key, numbers, recipe, height=400), key="lesson_figure")
    st.caption(step.text)
with st.expander("What the theory says", expanded=False):
    st.markdown(step.theory)
with st.expander("What the symbols mean"):
    st.dataframe(lesson.glossary_table(key), hide_index=True, placeholder="—", width="stretch")
