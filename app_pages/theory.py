"""The theory made visible: λ per sampled layer, the geometric bound, MEN and its upper bound."""
from __future__ import annotations

import streamlit as st
from dropedge_core import samplers

import app_shared as ui
from dropedge_explorer import figures
from dropedge_explorer.figures import teaching as teaching_figures
from dropedge_explorer.studies import sampling, theory

DEFAULT_SAMPLERS = ["nodrop", "dropedge", "li", "lid", "dropedge++"]
#: Above this many nodes λ is computed for the full graph only (one eigenproblem per
#: sampled layer would take minutes).
LAMBDA_MAX_NODES = 5000

sel = ui.selection()
graph = ui.page_header("The theory, measured", sel)
names = st.multiselect("Samplers", samplers.NAMES, default=DEFAULT_SAMPLERS, key="th_samplers",
                       format_func=figures.sampler_label)
if not names:
    st.info("Pick at least one sampler.")
    st.stop()
st.caption(f"Each sampler draws one sample of {sel.layers} layers (keep rates {sel.p_min:.2f} → "
           f"{sel.p_max:.2f}, seed {sel.seed}; the sidebar sets them). Â is the AN normalisation "
           "D̃^-1/2 (A+I) D̃^-1/2 of each layer's kept edges.")


@st.cache_data(show_spinner="Sampling and computing eigenvalues…", max_entries=16)
def _theory(_graph, graph_key: tuple, names: tuple, layers: int, p_min: float, p_max: float, seed: int):
    masks = sampling.masks_by_sampler(_graph, names, layers, p_min, p_max, seed)
    lam = theory.lambda_by_layer(_graph, masks if _graph.num_nodes <= LAMBDA_MAX_NODES else {}, layers)
    full = float(lam.loc[lam["sampler"] == theory.FULL, "lam"].iloc[0])
    decay = theory.subspace_decay(_graph, masks, lam=full, seed=seed)
    return lam, decay, theory.men_bound_table(_graph, masks)


lam, decay, men = _theory(graph, ui.graph_key(sel), tuple(names), sel.layers, sel.p_min, sel.p_max, sel.seed)

st.subheader("1 · λ, the rate of over-smoothing")
st.markdown(
    "**The theorem** (the paper's Theorem 1, from Oono & Suzuki): with a fixed Â, every layer "
    "brings the representations closer to the over-smoothing subspace by at least a factor "
    "s·λ, where λ is the largest |eigenvalue| of Â apart from the eigenvalue 1 of each "
    "connected component (s: the largest singular value of the layer's weights). "
    "**The curve**: λ of every sampled layer beside the full graph's (dashed); the closer λ is "
    "to 1, the slower the collapse — dropping edges splits the graph and usually raises λ, "
    "which is what DropEdge relies on.")
if graph.num_nodes > LAMBDA_MAX_NODES:
    st.info(f"{graph.name} has {graph.num_nodes} nodes: λ of every sampled layer is computed up to "
            f"{LAMBDA_MAX_NODES} nodes; shown here, the full graph's only.")
st.plotly_chart(teaching_figures.lambda_figure(lam), key="theory_lambda")

st.subheader("2 · The distance to the over-smoothing subspace, and the bound")
full_lam = float(lam.loc[lam["sampler"] == theory.FULL, "lam"].iloc[0])
st.markdown(
    r"**The theorem**: $d_\mathcal{M}(H^{(l)}) \le s\,\lambda\, d_\mathcal{M}(H^{(l-1)})$, so "
    f"propagating the features without weights (s = 1) on the full graph, the distance falls at "
    f"least as fast as λ^l (dashed; λ = {full_lam:.4f} here). **The curves**: the measured "
    "distance d_M(Â^(l-1)···Â^(0) X) / d_M(X) to the full graph's subspace M. NoDrop stays under "
    "the bound, as it must; the samplers' layers change from layer to layer, so the theorem "
    "does not bind them — they fall more slowly.")
st.plotly_chart(teaching_figures.subspace_decay_figure(decay), key="theory_decay")

st.subheader("3 · MEN and the paper's upper bound MEN*")
st.markdown(
    r"**The theorem** (the paper's Theorem 3): $\mathrm{MEN}^* = \frac{1}{L}\sum_l \prod_{i\le l} "
    r"|A^{(i)}|$ bounds MEN from above (a product has at most as many non-zeros as the product "
    "of the counts), and in expectation MEN* of LID is at most MEN* of LI at the same keep rates. "
    "**The curves**: per layer the measured non-zeros of the accumulated product (solid) under "
    "the bound (dotted); the legend gives each sampler's MEN and MEN*. The bound is loose by "
    "many orders of magnitude at depth: it says which sampler grows slower, not how many "
    "pairs are connected.")
st.plotly_chart(teaching_figures.men_bound_figure(men), key="theory_men")
summary = men.drop_duplicates("sampler")[["sampler", "men", "log10_men_star"]].copy()
summary["sampler"] = summary["sampler"].map(figures.sampler_label)
st.dataframe(summary, hide_index=True, placeholder="—", column_config={
    "men": st.column_config.NumberColumn("MEN (measured)", format="compact"),
    "log10_men_star": st.column_config.NumberColumn("log10 MEN*", format="%.2f")})
