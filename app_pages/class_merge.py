"""Watch the classes merge: each layer's node representations in 2-D, per sampler.

The separation is measured in the full hidden representation; the 2-D projection is only its
picture, and the sentences that say which model merges are built from the numbers shown
(:func:`dropedge_explorer.studies.merging.trend_caption`)."""
from __future__ import annotations

import streamlit as st

import app_shared as ui
from app_shared import class_merge_view as view
from dropedge_explorer.figures import sampler_label
from dropedge_explorer.figures import teaching as teaching_figures
from dropedge_explorer.studies import merging, teaching
from dropedge_explorer.training import TrainConfig

MAX_SESSION_NODES = 1000
SOURCES = {**{k: label for k, (_, label) in teaching.BUNDLED_VIEWS.items()},
           "propagation": "Propagation alone, no weights (the sidebar's dataset)",
           "session": "Train now on the sidebar's dataset (small graphs)"}

sel = ui.selection()
st.title("Watch the classes merge")
st.markdown(
    "A GCN's node representations after every layer, coloured by class, one panel per sampler. "
    "**How far apart the classes are is measured in the full hidden representation** (all "
    "hidden units): the *class separation* is the share of the variance that lies between the "
    "class means (1 = each class a point of its own, 0 = the class means coincide), beside the "
    "distance to the over-smoothing subspace. Each picture is drawn on the layer's two "
    "between-class axes, the spread around each class mean scaled so that the picture's "
    "separation is the number in its title. Press ▶ or drag the slider under the figure. The "
    "bundled Cora models were trained offline at today's code (no data needed); *propagation "
    "alone* applies the samplers' normalised adjacencies to the features with no weights and no "
    "training, which is what the over-smoothing theorems describe.")
st.info(f"**What the bundled models show.** {view.bundle_finding()} Whether classes merge with depth "
        "under averaging alone: pick “Propagation alone”. Every sentence on this page is computed "
        "from the numbers it shows.")
source = st.radio("Model", list(SOURCES), format_func=SOURCES.get, key="cm_source", horizontal=True)


@st.cache_resource(show_spinner="Training NoDrop, DropEdge and DropEdge++…", max_entries=4)
def _trained(_graph, graph_key: tuple, config: dict) -> teaching.Snapshots:
    return teaching.class_snapshots(_graph, TrainConfig.from_dict(config))


if source in teaching.BUNDLED_VIEWS:
    try:
        snaps = view.bundled(source)
    except teaching.SnapshotError as exc:
        st.error(str(exc))
        st.stop()
else:
    graph = ui.current_graph(sel)
    if graph is None:
        st.stop()
    ui.require_labels(graph)
if source == "propagation":
    steps = st.slider("Averaging steps", 2, view.MAX_STEPS, 32, key="cm_steps",
                      help="H_k = Â_k ··· Â_1 X, each Â the sampler's AN-normalised kept adjacency at "
                           "step k (keep rates from the sidebar; DropEdge: their mean).")
    snaps = view.propagation(graph, ui.graph_key(sel), steps, sel.p_min, sel.p_max, sel.seed)
elif source == "session":
    if graph.num_nodes > MAX_SESSION_NODES:
        st.info(f"{graph.name} has {graph.num_nodes} nodes: training three deep models here would "
                f"take minutes. Pick karate or csbm (up to {MAX_SESSION_NODES} nodes) in the "
                "sidebar, or look at the bundled Cora snapshots.")
        st.stop()
    if sel.layers < 2:
        st.info("The view needs at least 2 layers (one hidden layer): raise “Layers L” in the sidebar.")
        st.stop()
    epochs = st.slider("Epochs", 50, 400, 200, step=50, key="cm_epochs",
                       help="Each model trains this many epochs with the deep recipe: lr 1e-3, "
                            "dropout 0, weight decay 0, the self-feature term, hidden 128, AN.")
    config = TrainConfig(dataset=sel.dataset, split=sel.split, backbone="gcn", num_layers=sel.layers,
                         p_min=sel.p_min, p_max=sel.p_max, epochs=epochs, patience=0, seed=sel.seed,
                         diag_every=0, device="cpu", **teaching.DEEP_RECIPE).to_dict()
    wanted = (ui.graph_key(sel), tuple(sorted(config.items())))
    if st.button("Train the three models", key="cm_train", type="primary"):
        st.session_state["cm_trained_for"] = wanted
    if st.session_state.get("cm_trained_for") != wanted:
        st.info(f"Press “Train the three models”: {sel.layers}-layer GCNs on {graph.name}, "
                f"{epochs} epochs each, keep rates {sel.p_min:.2f} → {sel.p_max:.2f}, seed {sel.seed}.")
        st.stop()
    snaps = _trained(graph, ui.graph_key(sel), config)

first = 0 if source == "propagation" else 1  # propagation: step 0 is X itself
last = first + snaps.num_layers - 1
if st.session_state.get("cm_layer", 1) > last:  # a shallower model (or a link)
    st.session_state["cm_layer"] = last
layer = st.slider("Start at layer", first, last, first, key="cm_layer",
                  help="The layer the figure opens at; the slider under the figure moves through all.")
st.markdown(merging.trend_caption(snaps, first, label=sampler_label))
st.plotly_chart(teaching_figures.class_merge_animation(
    snaps, layer=layer, first=first, prefix="averaging step " if first == 0 else "hidden layer "),
    key="class_merge")
st.caption(view.settings_caption(snaps))
st.plotly_chart(teaching_figures.separation_curves(snaps, first), key="class_separation")
st.caption("The same two numbers for every layer, from the full hidden representation. Class "
           "separation: tr(S_B) / tr(S_T), the between-class share of the variance. Subspace "
           "distance: ‖H − P_M H‖ / ‖H‖, where M is the subspace that only knows node degrees "
           "(over-smoothing is H approaching it). The silhouette over all hidden units is in the "
           "table below.")
with st.expander("The numbers, layer by layer"):
    st.dataframe(teaching.separation_table(snaps, first).round(4), hide_index=True, placeholder="—",
                 key="cm_numbers")
with st.expander("Settings of these models"):
    st.json(snaps.settings)
