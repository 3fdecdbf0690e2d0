"""Watch the classes merge: each layer's node representations in 2-D, per sampler.

The separation is measured in the full hidden representation; the 2-D projection is only its
picture, and the sentences that say which model merges are built from the numbers shown
(:func:`dropedge_core.studies.merging.trend_caption`)."""
from __future__ import annotations

import streamlit as st

import app_shared as ui
from dropedge_core.figures import sampler_label
from dropedge_core.figures import teaching as teaching_figures
from dropedge_core.studies import merging, teaching
from dropedge_core.training import TrainConfig

MAX_SESSION_NODES = 1000
SOURCES = {**{k: label for k, (_, label) in teaching.BUNDLED_VIEWS.items()},
           "session": "Train now on the sidebar's dataset (small graphs)"}

sel = ui.selection()
st.title("Watch the classes merge")
st.markdown(
    "A trained GCN's node representations after every hidden layer, coloured by class, one panel "
    "per sampler. **How far apart the classes are is measured in the full hidden representation** "
    "(all hidden units): the *class separation* is the share of the variance that lies between the "
    "class means (1 = each class a point of its own, 0 = the class means coincide), beside the "
    "distance to the over-smoothing subspace. The 2-D picture is one principal-component "
    "projection per model, fitted once (a point moves only when its representation changes): "
    "a picture of the numbers, not their source. Press ▶ or drag the slider under the figure. "
    "The bundled Cora models were trained offline (no data needed). The first one uses the "
    "shallow settings (lr 0.01, dropout 0.5, weight decay 5e-4, no self-feature term) at 8 "
    "layers, where whether a model trains depends on the seed: seed 1 is shown first, seed 0 is "
    "the next choice, and there the outcome reverses (NoDrop keeps the classes apart, both "
    "edge-dropping models merge them). One seed shows what merging looks like, not which sampler "
    "prevents it: the Depth study's seeds answer that.")
source = st.radio("Model", list(SOURCES), format_func=SOURCES.get, key="cm_source", horizontal=True)


@st.cache_resource(show_spinner="Loading the bundled snapshots…")
def _bundled(path: str) -> teaching.Snapshots:
    return teaching.load_snapshots(path)


@st.cache_resource(show_spinner="Training NoDrop, DropEdge and DropEdge++…", max_entries=4)
def _trained(_graph, graph_key: tuple, config: dict) -> teaching.Snapshots:
    return teaching.class_snapshots(_graph, TrainConfig.from_dict(config))


if source in teaching.BUNDLED_VIEWS:
    try:
        snaps = _bundled(str(teaching.BUNDLED_VIEWS[source][0]))
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
st.markdown(merging.trend_caption(snaps, label=sampler_label))
st.plotly_chart(teaching_figures.class_merge_animation(snaps, layer=layer), key="class_merge")
s = snaps.settings
st.caption(
    f"{s['graph']}: {s['num_layers']}-layer GCN, hidden {s['hidden']}, lr {s['lr']:g}, dropout "
    f"{s['dropout']:g}, weight decay {s['weight_decay']:g}, self-feature term {s['self_loop']}, "
    f"{s['normalization']}, {s['epochs']} epochs, keep rates {s['p_min']:.2f} → {s['p_max']:.2f} "
    f"(DropEdge: their mean), seed {s['seed']}. Shown: the weights after the last epoch, on the "
    "full graph; test accuracy at the best-validation epoch. The 2-D axes hold "
    + ", ".join(f"{sampler_label(i.sampler)} {i.variance_share:.0%}" for i in snaps.items)
    + " of the (scaled) variance.")
st.plotly_chart(teaching_figures.separation_curves(snaps), key="class_separation")
st.caption("The same two numbers for every layer, from the full hidden representation. Class "
           "separation: tr(S_B) / tr(S_T), the between-class share of the variance. Subspace "
           "distance: ‖H − P_M H‖ / ‖H‖, where M is the subspace that only knows node degrees "
           "(over-smoothing is H approaching it). The silhouette over all hidden units is in the "
           "table below.")
with st.expander("The numbers, layer by layer"):
    st.dataframe(teaching.separation_table(snaps).round(4), hide_index=True, placeholder="—",
                 key="cm_numbers")
with st.expander("Settings of these models"):
    st.json(s)
