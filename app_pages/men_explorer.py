"""MEN explorer: Mean-Edge-Number vs depth for every sampler."""
from __future__ import annotations

import streamlit as st
from dropedge_core import metrics, samplers

import app_shared as ui
from dropedge_explorer import figures, memory
from dropedge_explorer.data import reference
from dropedge_explorer.studies import sampling

sel = ui.selection()
graph = ui.page_header("MEN explorer", sel)
st.markdown(
    r"$\mathrm{MEN} = \frac{1}{L}\sum_{l=0}^{L-1} \left|\prod_{i=0}^{l} (A^{(i)} + I)\right|$: "
    "how many node pairs the first l + 1 sampled layers connect, averaged over the layers "
    "(the paper's Definition 1). A larger MEN means faster over-smoothing.")

big = graph.num_nodes > sampling.EXACT_BY_DEFAULT_MAX_NODES
c1, c2, c3, c4 = st.columns([1.3, 1.6, 1, 1.2])
paper_setting = c1.checkbox("Paper's setting", value=True, key="men_paper_setting",
                            help="p_min = 0.05, p_max = 1.0 (DropEdge p = 0.525): the setting "
                                 "of the paper's MEN table. Off: the sidebar's keep rates.")
p_min, p_max = ((sampling.PAPER_MEN_SETTING["p_min"], sampling.PAPER_MEN_SETTING["p_max"])
                if paper_setting else (sel.p_min, sel.p_max))
depths = c2.multiselect("Depths L", sampling.MEN_DEPTHS, default=[2, 4, 8, 16], key="men_depths")
# per-dataset keys: a big graph starts with fewer runs and the estimate, whatever was
# picked for a small one
runs = c3.slider("Runs", 1, 10, 3 if big else 5, key=f"men_runs_{ui.data_id(sel)}",
                 help="Independent samples per sampler and depth (the paper: 10).")
# exact MEN holds N x N reachability: above the limit the toggle is off and disabled
too_big = graph.num_nodes > metrics.EXACT_ALLOWED_MAX_NODES
why = (f" Disabled: {graph.num_nodes:,} nodes is above {metrics.EXACT_ALLOWED_MAX_NODES:,}, where exact MEN "
       "would need an N x N matrix." if too_big else "")
exact = c4.toggle("Exact MEN", value=not big, key=f"men_exact_{ui.data_id(sel)}", disabled=too_big,
                  help=f"Exact: every node is a source. Off: {sampling.MEN_RUNS_SOURCES} sampled source "
                       "nodes, scaled up, with a standard error (fast on big graphs)." + why) and not too_big
if too_big:
    st.caption(f"Exact MEN is off:{why[len(' Disabled:'):]}")
names = st.multiselect("Samplers", samplers.NAMES, default=list(samplers.NAMES),
                       format_func=figures.sampler_label, key="men_samplers")
if not depths or not names:
    st.info("Pick at least one depth and one sampler.")
    st.stop()


@st.cache_data(show_spinner="Sampling and multiplying the layers…", max_entries=32)
def _men_runs(_graph, graph_key: tuple, names: tuple, depths: tuple, runs: int, p_min: float,
              p_max: float, seed: int, num_sources: int):
    return sampling.men_runs(_graph, names, depths, runs, p_min, p_max, seed=seed,
                                num_sources=num_sources)


try:
    df = _men_runs(graph, ui.graph_key(sel), tuple(names), tuple(sorted(depths)), runs, p_min, p_max,
                   sel.seed, 0 if exact else sampling.MEN_RUNS_SOURCES)
except memory.MemoryLimitError as exc:  # a huge upload: refused before anything is sampled
    st.error(ui.plain(str(exc)))
    st.stop()
paper = reference.paper_men()
paper_here = paper[paper["dataset_key"] == sel.dataset]
st.plotly_chart(figures.men_vs_depth(sampling.men_summary(df), paper_here if paper_setting else None),
                key="men_depth")
st.caption(
    f"Keep rates {p_min:.2f} → {p_max:.2f} "
    f"({'exact' if exact else f'{sampling.MEN_RUNS_SOURCES}-source estimate'}, "
    f"{runs} runs). LID keeps the bottom layers sparse and nests each layer in the one "
    "above, so the accumulated product grows slowest: lowest MEN of the uniform samplers. "
    "LDD is the mirror image (densest at the bottom): highest. DropEdge++ adds kernel "
    "weights to LID." + (" Diamonds: the paper's values." if paper_setting and len(paper_here)
                         else ""))

depth = st.select_slider("Depth for the edge-number curves", sorted(depths),
                         value=max(depths), key="men_curve_depth") if len(depths) > 1 \
    else depths[0]
st.plotly_chart(figures.edge_number_curves(sampling.edge_number_stats(df, depth)), key="men_curves")
st.caption("Edge number of the accumulated product after each layer; the band is mean ± std "
           "over the runs. LID starts lowest and stays below LI, DropEdge and LDD.")

st.subheader("The paper's MEN table beside the measured one")
if not paper_setting:
    st.info("The paper's table uses p_min = 0.05, p_max = 1.0: tick “Paper's setting” to "
            "compare.")
elif paper_here.empty:
    st.info("The paper reports MEN for Cora and CiteSeer only (not "
            f"{'your graph' if sel.dataset == ui.UPLOAD else sel.dataset}).")
else:
    comp = sampling.men_comparison(df, paper, sel.dataset)
    fig = figures.men_table_compare(comp, sel.dataset)  # before the names become labels
    comp["sampler"] = comp["sampler"].map(figures.sampler_label)
    left, right = st.columns([1, 1.2])
    num = st.column_config.NumberColumn
    left.dataframe(
        comp.drop(columns="runs"), hide_index=True, placeholder="—", height=35 * (len(comp) + 1) + 3,
        column_config={"sampler": "sampler", "layers": num("L"),
                       "paper_men": num("paper", format="compact"),
                       "measured_men": num("measured", format="compact"),
                       "measured_std": num("± std", format="compact"),
                       "ratio": num("ratio", format="%.2f",
                                    help="measured / paper")})
    right.plotly_chart(fig, key="men_table")
    st.caption(f"Paper: appendix table, 10 runs, DropEdge at p = 0.525; measured: {runs} runs. "
               "A ratio (measured / paper) near 1 means the measurement reproduces the paper; "
               "an empty cell: that depth or sampler was not measured here.")
st.download_button("Download the measured runs (CSV)", df.to_csv(index=False),
                   file_name=f"men_{sel.dataset}.csv", mime="text/csv")
