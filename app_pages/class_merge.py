"""Watch the classes merge: each layer's node representations in 2-D, per sampler (issue 16)."""
from __future__ import annotations

import streamlit as st

import app_shared as ui
from dropedge_core.figures import teaching as teaching_figures
from dropedge_core.studies import teaching
from dropedge_core.training import TrainConfig

MAX_SESSION_NODES = 1000
SOURCES = {"bundled": "Cora GCN-16, a recipe that trains",
           "old-defaults": "Cora GCN-16, the old defaults (does not learn)",
           "session": "Train now on the sidebar's dataset (small graphs)"}
BUNDLED = {"bundled": teaching.BUNDLED_SNAPSHOT, "old-defaults": teaching.BUNDLED_FAILING}

sel = ui.selection()
st.title("Watch the classes merge")
st.markdown(
    "A trained GCN's node representations after every hidden layer, squeezed to 2-D by one "
    "principal-component projection fitted once per model (so a point moves only when its "
    "representation changes), coloured by class; above each panel, how far apart the classes "
    "still are. Press ▶ or drag the layer slider under the figure. The two bundled Cora "
    "models (trained offline, no data needed) differ only in the training recipe: under the "
    "**old defaults** (dropout at every layer, no self-feature term) the deep layers collapse "
    "and the classes fall on top of each other for every sampler; with the **recipe that "
    "trains**, NoDrop's last layers flatten onto a line and keep the classes least apart, "
    "while **DropEdge** and **DropEdge++** keep them further apart.")
source = st.radio("Model", list(SOURCES), format_func=SOURCES.get, key="cm_source", horizontal=True)


@st.cache_resource(show_spinner="Loading the bundled snapshots…")
def _bundled(path: str) -> teaching.Snapshots:
    return teaching.load_snapshots(path)


@st.cache_resource(show_spinner="Training NoDrop, DropEdge and DropEdge++…", max_entries=4)
def _trained(_graph, graph_key: tuple, config: dict) -> teaching.Snapshots:
    return teaching.class_snapshots(_graph, TrainConfig.from_dict(config))


if source in BUNDLED:
    try:
        snaps = _bundled(str(BUNDLED[source]))
    except teaching.SnapshotError as exc:
        st.error(str(exc))
        st.stop()
else:
    graph = ui.current_graph(sel)
    if graph is None:
        st.stop()
    ui.require_labels(graph)
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

if st.session_state.get("cm_layer", 1) > snaps.num_layers:  # a shallower model (or a link)
    st.session_state["cm_layer"] = snaps.num_layers
layer = st.slider("Start at hidden layer", 1, snaps.num_layers, 1, key="cm_layer",
                  help="The layer the figure opens at; the slider under the figure moves through all.")
st.plotly_chart(teaching_figures.class_merge_animation(snaps, layer=layer), key="class_merge")
s = snaps.settings
st.caption(
    f"{s['graph']}: {s['num_layers']}-layer GCN, hidden {s['hidden']}, lr {s['lr']:g}, dropout "
    f"{s['dropout']:g}, weight decay {s['weight_decay']:g}, self-feature term {s['self_loop']}, "
    f"{s['normalization']}, {s['epochs']} epochs, keep rates {s['p_min']:.2f} → {s['p_max']:.2f} "
    f"(DropEdge: their mean), seed {s['seed']}. Shown: the weights after the last epoch, on the "
    "full graph; test accuracy at the best-validation epoch. Silhouette: 1 = classes tight and "
    "apart, 0 = on top of each other (over all the hidden units, not just the two drawn).")
st.plotly_chart(teaching_figures.separation_curves(snaps), key="class_separation")
st.caption("The same two numbers for every layer. Over-smoothing is the right panel falling "
           "toward 0: the representations approach the subspace that only knows node degrees.")
with st.expander("Settings of these models"):
    st.json(s)
