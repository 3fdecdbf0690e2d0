"""Edge sampler: which edges each layer keeps."""
from __future__ import annotations

import streamlit as st
from dropedge_core import samplers

import app_shared as ui
from dropedge_explorer import figures
from dropedge_explorer.figures import teaching as teaching_figures
from dropedge_explorer.studies import edge_drawing, sampling, teaching
from dropedge_explorer.studies.graph_layout import WHOLE_GRAPH_MAX_NODES

# a weighted sampler is shown beside its uniform twin (and vice versa)
TWIN = {"dropedge++": "lid", "lid": "dropedge++", "fd": "dropedge", "dropedge": "fd"}
# a big graph is drawn as a neighbourhood of at most this many nodes by default: on Cora the
# old 300 made a 288-node hairball whose edge colours could not be told apart
DEFAULT_MAX_NODES = 100

sel = ui.selection()
graph = ui.page_header("Edge sampler", sel)
sampler = samplers.make(sel.sampler, p_min=sel.p_min, p_max=sel.p_max)

c1, c2, c5, c3, c4 = st.columns([1.1, 1.1, 1.1, 0.9, 0.9])
weighted = sampler.weighting == "kernel"
kernel = c1.selectbox("Kernel (FD / DropEdge++)", samplers.KERNELS, key="kernel",
                      disabled=not weighted,
                      help="Weight of an edge from its end points' features: linear x_u·x_v, "
                           "poly (x_u·x_v)², rbf exp(-6‖x_u−x_v‖²), reverse 1 − x_u·x_v.")
big = graph.num_nodes > WHOLE_GRAPH_MAX_NODES
hops = c2.slider("Neighbourhood hops", 1, 3, 2, key="hops", disabled=not big,
                 help="Big graphs are drawn as the k-hop neighbourhood of one node.")
max_nodes = int(c5.select_slider("Nodes at most", [50, 100, 150, 200, 300], DEFAULT_MAX_NODES,
                                  key="max_nodes", disabled=not big,
                                  help="The drawn neighbourhood's cap: fewer nodes, a clearer drawing."))
if big:
    center_default = ui.cached_default_center(graph, ui.graph_key(sel), hops, max_nodes)
    if not 0 <= st.session_state.get(center_key := f"center_{ui.data_id(sel)}", 0) < graph.num_nodes:
        st.warning(f"Centre node {st.session_state.pop(center_key)} ignored (a link's?): "
                   f"{graph.name} has nodes 0 .. {graph.num_nodes - 1}.")
    center = c3.number_input("Centre node", 0, graph.num_nodes - 1, center_default, key=center_key,
                             help="The drawn part: this node's k-hop neighbourhood "
                                  f"(at most {max_nodes} nodes, nearer hops first).")
else:
    center = None
    c3.caption(f"{graph.num_nodes} nodes: drawn whole.")
st.session_state.setdefault("draw", 0)
if c4.button("Resample", help="Draw new masks (same seed, next draw)."):
    st.session_state["draw"] += 1
draw = st.session_state["draw"]
c4.caption(f"seed {sel.seed} · draw #{draw}")

lay = ui.cached_layout(graph, ui.graph_key(sel), center, hops, max_nodes)
masks = sampling.sample_masks(graph, sel.sampler, sel.layers, sel.p_min, sel.p_max,
                                 sel.seed, kernel, draw)
weights = samplers.make(sel.sampler, p_min=sel.p_min, p_max=sel.p_max,
                        kernel=kernel).weights(graph)

s1, s3, s2 = st.columns([2.8, 1.2, 1.6], vertical_alignment="bottom")  # the toggle's label whole at 1280 px
animate = s2.toggle("Animate over the layers", key="animate",
                    help="Plotly frames with a play button and a layer slider.")
if st.session_state.get("compare") == sel.sampler:  # the sidebar now picks the one beside
    st.session_state["compare"] = "none"
beside = s3.selectbox("Beside it", ["none", *(n for n in samplers.NAMES if n != sel.sampler)], key="compare",
                      format_func=lambda n: "—" if n == "none" else figures.sampler_label(n),
                      disabled=animate, help="A second sampler on the same drawn nodes and layer "
                                             "(same seed and draw).")
if animate:
    fig = figures.layer_edges_animation(edge_drawing.edge_drawing(graph, masks, lay, weights), sel.sampler)
else:
    if st.session_state.get("edge_layer", 0) > sel.layers - 1:  # fewer layers picked
        st.session_state["edge_layer"] = sel.layers - 1
    layer = s1.slider("Layer (0 = input)", 0, max(sel.layers - 1, 1), key="edge_layer",
                      disabled=sel.layers == 1)
    fig = figures.layer_edges(edge_drawing.edge_drawing(graph, masks, lay, weights), layer, sel.sampler)
if animate or beside == "none":
    st.plotly_chart(fig, key="edges")
else:  # the same neighbourhood, positions and layer: only the sampler differs
    other = sampling.sample_masks(graph, beside, sel.layers, sel.p_min, sel.p_max, sel.seed, kernel, draw)
    kept = {n: int(m[layer, lay.edge_ids].sum()) for n, m in ((sel.sampler, masks), (beside, other))}
    for col, name, m in zip(st.columns(2), kept, (masks, other)):
        w = samplers.make(name, p_min=sel.p_min, p_max=sel.p_max, kernel=kernel).weights(graph)
        col.plotly_chart(figures.layer_edges(edge_drawing.edge_drawing(graph, m, lay, w), layer, name),
                         key="edges" if name == sel.sampler else "edges_beside")
    st.caption(f"Layer {layer}, the same {lay.edge_ids.size} drawn edges: " + ", ".join(
        f"{figures.sampler_label(n)} keeps {k}" for n, k in kept.items()) + ".")
where = (f"the {hops}-hop neighbourhood of node {lay.center} ({lay.num_nodes} nodes"
         f"{', cut at the cap' if lay.truncated else ''}, {lay.edge_ids.size} edges)"
         if lay.center is not None else f"the whole graph ({lay.num_nodes} nodes)")
st.caption(
    f"Drawn: {where}; positions fixed across layers and samples. Dotted grey: dropped at "
    "this layer. " + ("Kept edges are coloured by kernel weight (dark = similar "
                      "features, drawn more often)." if weighted else
                      f"Kept edges in the {figures.sampler_label(sel.sampler)} colour.")
    + (" Karate's features are one-hot node ids, so every kernel weight is the same."
       if weighted and sel.dataset == "karate" else "")
    + (" Your graph has no features file (one constant feature), so every kernel weight is the "
       "same." if weighted and graph.info.get("source") == "upload"
       and "features" not in graph.info.get("files", {}) else ""))

st.subheader("Receptive field: what MEN counts")
# a click on a node of the figure (its selection, kept under the chart's key) picks the node
clicked = [p.get("customdata") for p in
           (st.session_state.get("reach") or {}).get("selection", {}).get("points", [])]
clicked = [c[0] if isinstance(c, list) else c for c in clicked if c is not None]
if clicked and st.session_state.get("_reach_clicked") != clicked:
    st.session_state["_reach_clicked"] = clicked
    st.session_state["reach_node"] = int(clicked[0])
default_node = int(lay.center if lay.center is not None else lay.nodes[0])
if st.session_state.get("reach_node", default_node) not in set(lay.nodes.tolist()):
    st.session_state["reach_node"] = default_node  # another graph or neighbourhood
st.session_state.setdefault("reach_node", default_node)
node = st.selectbox("Node (or click one in the figure)", lay.nodes.tolist(), key="reach_node")
reach = teaching.receptive_field(graph, masks, node)
st.plotly_chart(teaching_figures.receptive_field_figure(graph, masks, lay, node, reach, sel.sampler),
                key="reach", on_select="rerun", selection_mode="points")
st.caption(
    f"Start at node {node} and, layer by layer, step along the edges that layer kept (or stay): "
    "the coloured nodes are those its features reach after layers 0..l (colour: the layer that "
    "first reached them). Summed over every start node this is the edge number of the product "
    "Π (A^(i) + I) whose mean over the layers is MEN; press ▶ to watch it grow. LID reaches "
    "fewest in the first layers; LDD most.")

left, right = st.columns(2)
with left:
    counts = sampling.keep_counts_by_sampler(graph, samplers.NAMES, sel.layers, sel.p_min,
                                                sel.p_max)
    st.plotly_chart(figures.keep_counts_bar(counts, graph.num_edges), key="counts")
    st.caption("LI, LID and DropEdge++ grow from p_min·M at the input to p_max·M at the top; "
               "LDD mirrors them; DropEdge and FD keep (p_min + p_max)/2 · M everywhere.")
with right:
    st.plotly_chart(figures.nesting_heatmap(sampling.nesting_matrix(masks), sel.sampler), key="nesting")
    st.caption("LID / DropEdge++ keep every layer's edges in all layers above (1 on and above "
               "the diagonal); LDD nests the other way; LI overlaps only by chance; DropEdge "
               "and FD share one sample (all 1).")

twin = TWIN.get(sel.sampler)
names = [sel.sampler] + ([twin] if twin else [])
if graph.num_classes == 0:
    st.info("No labels: the share of intra- and inter-class edges kept needs node labels "
            "(upload a labels file in the sidebar).")
else:
    shares = {n: masks if n == sel.sampler else
              sampling.sample_masks(graph, n, sel.layers, sel.p_min, sel.p_max, sel.seed, kernel,
                                       draw)
              for n in names}
    st.plotly_chart(figures.intra_inter_share(sampling.intra_inter_by_sampler(graph, shares)), key="shares")
    st.caption("Share of the intra-class and inter-class edges that each layer keeps. Uniform "
               "samplers keep both at the same rate; the feature-dependent ones (FD, DropEdge++) "
               "favour intra-class edges when features carry the class (csbm, Cora, CiteSeer).")
