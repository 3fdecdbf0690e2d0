"""The paper's tables beside ours: time per epoch (measured live) and best accuracy per backbone."""
from __future__ import annotations

import streamlit as st

import app_shared as ui
from dropedge_explorer import figures
from dropedge_explorer.data import reference
from dropedge_explorer.figures import teaching as teaching_figures
from dropedge_explorer.studies import cell_search, ordering, paper_views
from dropedge_explorer.training import TrainConfig

sel = ui.selection()
st.title("The paper's tables, beside ours")

st.subheader("Time per epoch: NoDrop, DropEdge, DropEdge++")
st.markdown(
    "The paper's timing table (Cora, seconds per epoch, its GPU) beside the same three samplers "
    "timed here, now, on the sidebar's dataset: a GCN with the sidebar's layers and keep rates, "
    "trained for a few epochs per sampler. *Sampling* is drawing the masks and normalising each "
    "layer's adjacency; *training* is the rest (forward, backward, step, evaluation).")
c1, c2 = st.columns([1, 3])
epochs = c1.slider("Epochs per sampler", 5, 50, 15, step=5, key="pt_epochs")
measured = st.session_state.get("pt_measured")
wanted = (ui.graph_key(sel), sel.layers, sel.p_min, sel.p_max, sel.seed, epochs)
if c2.button("Measure on this machine", key="pt_measure", type="primary"):
    graph = ui.current_graph(sel)
    if graph is not None and graph.num_classes == 0:
        st.info(ui.NO_LABELS)
    elif graph is not None:
        base = TrainConfig(dataset=sel.dataset, split=sel.split, num_layers=sel.layers, p_min=sel.p_min,
                           p_max=sel.p_max, epochs=epochs, seed=sel.seed)
        with st.spinner("Timing NoDrop, DropEdge and DropEdge++…"):
            st.session_state["pt_measured"] = measured = (wanted, graph.name,
                                                          paper_views.measure_epoch_times(graph, base))
if measured is not None and measured[0] != wanted:
    st.caption("The numbers below were measured with other sidebar settings; press the button to "
               "measure these.")
table = paper_views.epoch_time_table(measured[2] if measured else None)
st.plotly_chart(teaching_figures.epoch_time_figure(table), key="paper_epoch_time")
shown = table.assign(sampler=table["sampler"].map(figures.sampler_label))
st.dataframe(shown, hide_index=True, placeholder="—", column_config={
    "sampling_s": st.column_config.NumberColumn("sampling (s)", format="%.4f"),
    "training_s": st.column_config.NumberColumn("training (s)", format="%.4f"),
    "total_s": st.column_config.NumberColumn("total (s)", format="%.4f"),
    "sampling_share": st.column_config.NumberColumn("sampling share", format="percent")})
if measured:
    m = measured[2]
    st.caption(f"Measured here on {measured[1]} ({m['device'].iloc[0]}, {int(m['epochs'].iloc[0])} "
               "timed epochs per sampler after one warm-up). The paper's numbers are from its GPU "
               "and an unstated depth: compare the shares, not the seconds.")
else:
    st.caption("Only the paper's numbers so far: press “Measure on this machine”.")

st.subheader("Best accuracy per backbone (DropEdge++)")
st.markdown(
    "The paper's best test accuracy of each backbone with DropEdge++ (its comparison tables, and the "
    "depth it chose) beside the best depth of our bundled runs (mean ± std over "
    "seeds, `dropedge_explorer/assets/results/best_per_backbone.csv`). Empty: not run here (Cora and "
    "CiteSeer only).")
try:
    best = paper_views.best_accuracy_table(paper_views.best_runs())
except (OSError, ValueError) as exc:
    st.error(f"Cannot read the bundled runs: {exc}")
    st.stop()
split = st.radio("Setting", ["semi", "full"], horizontal=True, key="pt_split",
                 format_func={"semi": "semi-supervised", "full": "full-supervised"}.get)
part = best[best["split"] == split].drop(columns="split")
num = st.column_config.NumberColumn
st.dataframe(part, hide_index=True, placeholder="—", column_config={
    "paper_acc": num("paper (%)", format="%.2f"), "paper_std": num("± std", format="%.2f"),
    "paper_layers": num("paper L"), "ours_acc": num("ours (%)", format="%.1f"),
    "ours_std": num("± std", format="%.1f"), "ours_layers": num("our L"),
    "seeds": num("seeds"), "gap": num("ours − paper", format="%+.1f")}, key="pt_best",
    height=35 * (len(part) + 1) + 3)
st.caption("Our runs: each backbone with DropEdge++ and the paper's preset for its dataset and "
           "setting, 5 seeds, at the depth in the “our L” column (docs/REPRODUCTION.md discusses "
           "each gap).")

st.subheader("The per-cell search: DropEdge++ against tuned baselines (Cora, semi)")
st.markdown(
    "The paper tuned each depth with a random search before comparing samplers. Ours: per depth "
    "and sampler an Optuna study with the same trial budget over lr, dropout, weight decay, "
    "width and the sampler's own keep rates, on validation accuracy only (the depth recipe's point "
    "first); each cell's best then trained on 5 seeds (`python -m dropedge_core search`).")
search = cell_search.bundled_view("cora", "semi")
if len(search["runs"]):
    paper = reference.paper_accuracy_by_depth()
    st.plotly_chart(figures.accuracy_vs_depth(search["runs"], paper, "cora", "semi", ["gcn"],
                                              note="each cell's searched best"), key="pt_search")
    st.dataframe(search["summary"].drop(columns=["dataset", "split", "backbone", "recipe"]),
                 hide_index=True, placeholder="—", key="pt_search_table")
    if search["sentence"]:
        st.caption(search["sentence"])
    claims = ordering.readable(search["claims"])
    if len(claims):
        st.dataframe(claims, hide_index=True, placeholder="—", key="pt_search_claims")
        st.caption("The ordering claim per depth on the searched cells: mean paired difference over the 5 "
                   "seeds (points) with its 95% t-interval, the paired t-test's p and its Holm correction "
                   "over the family named in the last column; “shown” / “reversed” only where the "
                   "corrected test rejects (α = 0.05), else “not shown”.")
else:
    st.info("No bundled search (dropedge_explorer/assets/search/).")

st.subheader("MEN analysis of a 16-layer GCN on Cora")
st.markdown(
    "The paper's MEN figure: for DropEdge, LI, LID and LDD, MEN against the validation loss and "
    "against the \"Distance\" between adjacent hidden layers (its claim: lower MEN, larger "
    "Distance — less over-smoothing — and lower loss). Ours: bundled runs of a 16-layer GCN on "
    "Cora semi with the deep recipe and the keep rates of the paper's MEN table (0.05 → 1.0; "
    "`bench/make_men_analysis.py`).")
try:
    men_runs = paper_views.read_men_analysis()
except ValueError as exc:
    st.info(str(exc))
else:
    st.plotly_chart(teaching_figures.men_analysis_figure(men_runs), key="paper_men_analysis")
    st.caption(f"{len(men_runs)} runs ({men_runs['epochs_run'].max()} epochs each); MEN is the mean "
               "over the masks sampled at the diagnostics epochs, the Distance that of the trained "
               "model, the loss the lowest validation loss of the run.")
