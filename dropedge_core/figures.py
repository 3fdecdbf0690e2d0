"""Figure builders: data in, :class:`plotly.graph_objects.Figure` out.

Pure and deterministic (no Streamlit, no randomness), usable from a notebook, the app
and the tests alike. Conventions every builder follows:

* one colour per sampler everywhere: :data:`SAMPLER_COLORS` (:func:`sampler_color`
  for names outside the paper's seven);
* axis titles say the quantity and its unit ("edges kept (count)", "test accuracy (%)");
* hover text says what a point is (sampler, layer or depth, run, value);
* layer ``l = 0`` is the input (bottom) layer, as in :mod:`dropedge_core.samplers`;
* graphs are drawn with a handful of traces — kept edges, dropped edges (kernel-weight
  bins for weighted samplers), one per node class — never one trace per edge: the
  edges of a class of edge are ``None``-separated line segments of one trace.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from . import experiments
from .graph import Graph
from .layout import GraphLayout

#: One colour per sampler, used by every figure.
SAMPLER_COLORS: dict[str, str] = {
    "nodrop": "#7f7f7f",
    "dropedge": "#1f77b4",
    "li": "#2ca02c",
    "lid": "#ff7f0e",
    "ldd": "#9467bd",
    "fd": "#17becf",
    "dropedge++": "#d62728",
}
#: Display names (the paper's spelling).
SAMPLER_LABELS: dict[str, str] = {
    "nodrop": "NoDrop", "dropedge": "DropEdge", "li": "LI", "lid": "LID", "ldd": "LDD",
    "fd": "FD", "dropedge++": "DropEdge++",
}
#: Node-class colours for graph drawings (kept apart from the sampler colours).
CLASS_COLORS: tuple[str, ...] = (
    "#66c2a5", "#fc8d62", "#8da0cb", "#e78ac3", "#a6d854", "#ffd92f", "#e5c494",
    "#b3b3b3", "#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02",
)
#: Kept edges of a weighted sampler, by kernel-weight bin, light (low) to dark (high).
WEIGHT_COLORS: tuple[str, ...] = ("#fdb863", "#e66101", "#8073ac", "#2d004b")
DROPPED_COLOR = "#c8c8c8"
KEPT_UNIFORM_WIDTH = 1.6
BACKBONE_LABELS: dict[str, str] = {"gcn": "GCN", "resgcn": "ResGCN", "jknet": "JKNet",
                                   "appnp": "APPNP*"}
_FALLBACK = ("#8c564b", "#e377c2", "#bcbd22", "#393b79", "#637939", "#843c39")
TEMPLATE = "plotly_white"


def sampler_color(name: str) -> str:
    """The colour of sampler ``name`` (:data:`SAMPLER_COLORS`; a stable fallback for
    other names, e.g. ``"independent/kernel"``)."""
    key = str(name).lower()
    if key in SAMPLER_COLORS:
        return SAMPLER_COLORS[key]
    return _FALLBACK[sum(map(ord, key)) % len(_FALLBACK)]


def sampler_label(name: str) -> str:
    """The paper's spelling of a sampler name (``"dropedge++"`` -> ``"DropEdge++"``)."""
    return SAMPLER_LABELS.get(str(name).lower(), str(name))


def _rgba(color: str, alpha: float) -> str:
    c = color.lstrip("#")
    r, g, b = (int(c[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


def _base_layout(fig: go.Figure, title: str, height: int = 420, legend: str = "bottom") -> go.Figure:
    """Title top left; the legend below the plot (``"bottom"``, out of the title's and
    subplot titles' way, whatever the width) or at the ``"right"``."""
    place = (dict(orientation="h", yanchor="top", y=-0.2, x=0.0, xanchor="left")
             if legend == "bottom" else
             dict(orientation="v", yanchor="top", y=1.0, x=1.02, xanchor="left"))
    fig.update_layout(title=dict(text=title, x=0.0, xanchor="left"), template=TEMPLATE,
                      height=height, margin=dict(l=60, r=20, t=60, b=50), legend=place)
    return fig


def _log_axis(values) -> dict:
    """A log axis: ticks at every power of 10 when the data span two decades or more,
    at 1, 2 and 5 times them over one to two decades, Plotly's choice below."""
    v = np.asarray(pd.Series(values, dtype=float).dropna())
    v = v[v > 0]
    span = v.max() / v.min() if v.size else 1.0
    if span >= 100:
        return dict(type="log", dtick=1, exponentformat="power")
    if span >= 10:
        return dict(type="log", dtick="D2", minor=dict(showgrid=False))
    if not v.size:
        return dict(type="log")
    # less than a decade: Plotly labels every digit (2, 3, ... 9) in small type; five ticks
    # at round values between the ends read better
    ticks = sorted({float(f"{t:.2g}") for t in np.geomspace(v.min(), v.max(), 5)})
    return dict(type="log", tickvals=ticks, ticktext=[f"{t:.3g}" for t in ticks])


#: :func:`accuracy_vs_depth`: samplers at one depth are this fraction of an octave apart.
DEPTH_SPREAD = 0.08


def _depth_axis(values: Sequence[int]) -> dict:
    """A log2 x axis with the depths as ticks (2, 4, 8, ...)."""
    ticks = sorted({int(v) for v in values})
    return dict(type="log", tickvals=ticks, ticktext=[str(t) for t in ticks])


# --------------------------------------------------------------------------------------
# Graph drawings


class _Drawing:
    """What every layer of a drawing shares: the drawn edges' segments and weight bins."""

    def __init__(self, graph: Graph, masks: torch.Tensor, positions, weights, nodes, n_bins):
        if isinstance(positions, GraphLayout):
            nodes = positions.nodes if nodes is None else nodes
            positions = positions.positions
        pos = np.asarray(positions, dtype=np.float64)
        ids = np.arange(graph.num_nodes) if nodes is None else np.asarray(nodes, dtype=np.int64)
        if pos.shape != (ids.shape[0], 2):
            raise ValueError(f"positions must be (n, 2) for the n={ids.shape[0]} drawn nodes "
                             f"(got {pos.shape})")
        masks = experiments._undirected(graph, masks.cpu())
        if masks.dim() != 2 or masks.size(1) != graph.num_edges:
            raise ValueError(f"masks must be (L, M) with M={graph.num_edges} (got {tuple(masks.shape)})")
        self.graph, self.pos, self.ids = graph, pos, ids
        local = np.full(graph.num_nodes, -1, dtype=np.int64)
        local[ids] = np.arange(ids.shape[0])
        u, v = graph.undirected_edges.cpu().numpy()
        self.edge_ids = np.nonzero((local[u] >= 0) & (local[v] >= 0))[0]
        self.lu, self.lv = local[u[self.edge_ids]], local[v[self.edge_ids]]
        self.u, self.v = u[self.edge_ids], v[self.edge_ids]
        self.masks = masks[:, torch.from_numpy(self.edge_ids)].numpy()  # (L, E_drawn)
        self.num_layers = self.masks.shape[0]
        y = graph.y.cpu().numpy()
        self.y = y[ids]
        self.intra = y[self.u] == y[self.v]
        self.weights = None
        self.bin_of = np.zeros(self.edge_ids.shape[0], dtype=np.int64)
        self.bin_labels = ["kept"]
        if weights is not None:
            w = torch.as_tensor(weights).cpu().double().numpy()
            if w.shape[0] == 2 * graph.num_edges:  # directed weights: the mean of both ways
                w = (w[: graph.num_edges] + w[graph.num_edges:]) / 2
            self.weights = w[self.edge_ids]
            inner = np.zeros(0)
            if self.weights.size and not np.isclose(self.weights.min(), self.weights.max(),
                                                    rtol=1e-6, atol=0.0):
                q = np.quantile(self.weights, np.linspace(0, 1, n_bins + 1)[1:-1])
                # 6 significant digits: float noise must not split a tie into two bins
                inner = np.unique([float(f"{v:.6g}") for v in q])
            # bin b holds weights in (inner[b-1], inner[b]]: ties at a quantile (e.g. the
            # many 1e-10 "zero similarity" edges) stay in the lower bin
            self.bin_of = np.searchsorted(inner, self.weights, side="left")
            lo = np.concatenate([[self.weights.min() if self.weights.size else 0.0], inner])
            hi = np.concatenate([inner, [self.weights.max() if self.weights.size else 0.0]])
            self.bin_labels = [f"kept, weight {_fmt_weight(a)}–{_fmt_weight(b)}"
                               for a, b in zip(lo, hi)]
            if inner.size == 0:  # one bin: every weight equal (e.g. karate's one-hot features)
                self.bin_labels = ["kept (all kernel weights equal)"]
        deg = np.bincount(np.concatenate([self.lu, self.lv]), minlength=ids.shape[0])
        self.degree = deg
        # thinner lines when many edges are drawn, so that they do not hide the nodes
        self.width_scale = float(np.clip(math.sqrt(400 / max(self.edge_ids.shape[0], 1)), 0.5, 1.0))

    def _segments(self, sel: np.ndarray) -> tuple[list, list]:
        """x and y of the selected edges as one None-separated polyline."""
        k = int(sel.sum())
        xs = np.full(3 * k, None, dtype=object)
        ys = np.full(3 * k, None, dtype=object)
        xs[0::3], xs[1::3] = self.pos[self.lu[sel], 0], self.pos[self.lv[sel], 0]
        ys[0::3], ys[1::3] = self.pos[self.lu[sel], 1], self.pos[self.lv[sel], 1]
        return xs.tolist(), ys.tolist()

    def traces(self, layer: int, sampler: str | None) -> list[go.Scatter]:
        if not 0 <= layer < self.num_layers:
            raise ValueError(f"layer must be in [0, {self.num_layers - 1}] (got {layer})")
        kept = self.masks[layer]
        out = []
        x, y = self._segments(~kept)
        out.append(go.Scatter(x=x, y=y, mode="lines", name=f"dropped ({int((~kept).sum())})",
                              line=dict(color=DROPPED_COLOR, width=0.8, dash="dot"),
                              hoverinfo="skip", legendgroup="dropped"))
        uniform_color = sampler_color(sampler) if sampler else "#444444"
        for b, label in enumerate(self.bin_labels):
            sel = kept & (self.bin_of == b)
            x, y = self._segments(sel)
            color = uniform_color if self.weights is None or len(self.bin_labels) == 1 else \
                WEIGHT_COLORS[min(len(WEIGHT_COLORS) - 1,
                                  round(b * (len(WEIGHT_COLORS) - 1) / max(1, len(self.bin_labels) - 1)))]
            width = KEPT_UNIFORM_WIDTH if self.weights is None or len(self.bin_labels) == 1 \
                else 0.9 + 0.4 * b
            width *= self.width_scale
            out.append(go.Scatter(x=x, y=y, mode="lines", name=f"{label} ({int(sel.sum())})",
                                  line=dict(color=color, width=width), hoverinfo="skip",
                                  legendgroup=f"kept{b}"))
        # one invisible marker per edge midpoint carries the edges' hover text (numbers in
        # customdata, words from vectorised np.where: no Python loop over edges)
        mid = (self.pos[self.lu] + self.pos[self.lv]) / 2
        words = np.char.add(np.where(kept, "kept", "dropped"),
                            np.where(self.intra, " · intra-class edge", " · inter-class edge"))
        weight = self.weights if self.weights is not None else np.full(self.u.shape, np.nan)
        template = (f"edge %{{customdata[0]}}–%{{customdata[1]}}: %{{text}} at layer {layer}"
                    + ("<br>kernel weight %{customdata[2]:.3g}" if self.weights is not None else "")
                    + "<extra></extra>")
        out.append(go.Scatter(x=mid[:, 0], y=mid[:, 1], mode="markers", name="edges (hover)",
                              marker=dict(size=5, color="rgba(0,0,0,0)"), text=words,
                              customdata=np.stack([self.u, self.v, weight], axis=1),
                              hovertemplate=template, showlegend=False))
        kept_deg = np.bincount(np.concatenate([self.lu[kept], self.lv[kept]]),
                               minlength=self.ids.shape[0])
        size = float(np.clip(57 / math.sqrt(max(self.ids.shape[0], 1)), 6, 14))
        for c in np.unique(self.y):  # a loop over classes
            sel = self.y == c
            out.append(go.Scatter(
                x=self.pos[sel, 0], y=self.pos[sel, 1], mode="markers", name=f"class {c}",
                customdata=np.stack([self.ids[sel], self.degree[sel], kept_deg[sel]], axis=1),
                hovertemplate=f"node %{{customdata[0]}}<br>class {c}<br>degree %{{customdata[1]}} "
                              f"(%{{customdata[2]}} kept at layer {layer})<extra></extra>",
                marker=dict(size=size, color=CLASS_COLORS[int(c) % len(CLASS_COLORS)],
                            line=dict(color="white", width=0.8)),
                legendgroup=f"class{c}"))
        return out

    def title(self, layer: int, sampler: str | None) -> str:
        kept = int(self.masks[layer].sum())
        who = f"{sampler_label(sampler)}: " if sampler else ""
        return (f"{who}layer {layer} of {self.num_layers} (0 = input) — {kept} of "
                f"{self.edge_ids.shape[0]} drawn edges kept")


def _fmt_weight(w: float) -> str:
    """Kernel weights for legends: the 1e-10 floor reads as 0."""
    return "0" if w < 1e-6 else f"{w:.2g}"


def _graph_axes(fig: go.Figure) -> go.Figure:
    axis = dict(showgrid=False, zeroline=False, showticklabels=False, title=None)
    fig.update_xaxes(**axis)
    fig.update_yaxes(scaleanchor="x", scaleratio=1, **axis)
    return fig


def layer_edges(graph: Graph, masks: torch.Tensor, positions: np.ndarray | GraphLayout,
                layer: int, weights: torch.Tensor | None = None,
                nodes: np.ndarray | torch.Tensor | None = None, sampler: str | None = None,
                n_bins: int = 4) -> go.Figure:
    """Kept vs dropped edges of one layer, drawn at fixed node positions.

    Args:
        graph: the graph the masks index.
        masks: ``(L, M)`` bool masks of a sampler (``(L, 2M)`` directed masks count an
            edge as kept when either direction is).
        positions: ``(n, 2)`` positions of the drawn nodes, or a
            :class:`~dropedge_core.layout.GraphLayout` (which also gives ``nodes``).
        layer: the layer to show (0 = input).
        weights: ``(M,)`` kernel weights (FD / DropEdge++): kept edges are then coloured
            by weight in ``n_bins`` quantile bins (:data:`WEIGHT_COLORS`, wider = heavier).
        nodes: ``(n,)`` ids of the drawn nodes (default: all ``N``). Only edges with
            both ends drawn are drawn.
        sampler: sampler name, for the title and the kept-edge colour.

    Returns:
        A figure with traces, in order: dropped edges (one trace), kept edges (one trace,
        or one per weight bin), edge midpoints (hover only), one trace per node class.
    """
    d = _Drawing(graph, masks, positions, weights, nodes, n_bins)
    fig = go.Figure(d.traces(int(layer), sampler))
    _base_layout(fig, d.title(int(layer), sampler), height=600, legend="right")
    fig.update_layout(margin=dict(l=10, r=10, t=50, b=10))
    return _graph_axes(fig)


def layer_edges_animation(graph: Graph, masks: torch.Tensor, positions: np.ndarray | GraphLayout,
                          weights: torch.Tensor | None = None,
                          nodes: np.ndarray | torch.Tensor | None = None,
                          sampler: str | None = None, n_bins: int = 4,
                          frame_ms: int = 700) -> go.Figure:
    """:func:`layer_edges` for every layer as Plotly animation frames (a play button and
    a layer slider; node positions fixed). Frame ``l`` is named ``str(l)``."""
    d = _Drawing(graph, masks, positions, weights, nodes, n_bins)
    frames = [go.Frame(data=d.traces(layer, sampler), name=str(layer),
                       layout=dict(title=dict(text=d.title(layer, sampler))))
              for layer in range(d.num_layers)]
    fig = go.Figure(data=frames[0].data, frames=frames)
    _base_layout(fig, d.title(0, sampler), height=640, legend="right")
    fig.update_layout(margin=dict(l=10, r=10, t=50, b=60))
    play = dict(frame=dict(duration=frame_ms, redraw=True), fromcurrent=True,
                transition=dict(duration=0))
    fig.update_layout(
        updatemenus=[dict(type="buttons", direction="left", x=0.0, y=-0.02, xanchor="left",
                          yanchor="top", showactive=False,
                          buttons=[dict(label="▶ play", method="animate", args=[None, play]),
                                   dict(label="❚❚ pause", method="animate",
                                        args=[[None], dict(mode="immediate",
                                                           frame=dict(duration=0, redraw=False))])])],
        sliders=[dict(active=0, x=0.22, len=0.76, y=-0.02, yanchor="top",
                      currentvalue=dict(prefix="layer ", xanchor="right"),
                      steps=[dict(label=str(layer), method="animate",
                                  args=[[str(layer)], dict(mode="immediate",
                                                           frame=dict(duration=0, redraw=True))])
                             for layer in range(d.num_layers)])])
    return _graph_axes(fig)


# --------------------------------------------------------------------------------------
# Sampler structure


def keep_counts_bar(counts_by_sampler: Mapping[str, torch.Tensor | Sequence[int]],
                    num_edges: int | None = None) -> go.Figure:
    """Edges kept per layer, one bar group per layer and one bar colour per sampler.

    Args:
        counts_by_sampler: ``{sampler: (L,) counts}``
            (:func:`dropedge_core.experiments.keep_counts_by_sampler`).
        num_edges: ``M``; drawn as a dashed line "all edges".
    """
    fig = go.Figure()
    for name, counts in counts_by_sampler.items():
        c = [int(v) for v in torch.as_tensor(counts).tolist()]
        fig.add_trace(go.Bar(x=list(range(len(c))), y=c, name=sampler_label(name),
                             marker_color=sampler_color(name),
                             hovertemplate=f"{sampler_label(name)} · layer %{{x}}: "
                                           "%{y} edges kept<extra></extra>"))
    if num_edges is not None:
        fig.add_hline(y=num_edges, line=dict(color="#555", dash="dash", width=1),
                      annotation_text=f"all edges (M = {num_edges})",
                      annotation_position="top left")
    _base_layout(fig, "Keep counts per layer (the layer schedule)")
    fig.update_layout(barmode="group", bargap=0.15)
    fig.update_xaxes(title="layer l (0 = input)", dtick=1)
    fig.update_yaxes(title="edges kept (count)", rangemode="tozero")
    return fig


def nesting_heatmap(masks: torch.Tensor, sampler: str | None = None) -> go.Figure:
    """The nesting of a sampler's layers: ``[i, j] = |mask[i] ∩ mask[j]| / |mask[i]|``
    (:func:`dropedge_core.experiments.nesting_matrix`), the share of layer ``i``'s kept
    edges that layer ``j`` keeps too. LID / DropEdge++: 1 on and above the diagonal
    (each layer's edges are kept by every layer above); LDD: 1 on and below it.
    """
    z = experiments.nesting_matrix(masks).numpy()
    num_layers = z.shape[0]
    layers = list(range(num_layers))
    text = np.where(np.isnan(z), "", np.vectorize(lambda a: f"{a:.2f}")(z)) \
        if num_layers <= 12 else None
    fig = go.Figure(go.Heatmap(
        z=z, x=layers, y=layers, zmin=0.0, zmax=1.0, colorscale="Blues",
        text=text, texttemplate="%{text}" if text is not None else None,
        colorbar=dict(title=dict(text="share")),
        hovertemplate="%{z:.1%} of layer %{y}'s kept edges are also kept at layer %{x}"
                      "<extra></extra>"))
    who = f"{sampler_label(sampler)}: " if sampler else ""
    _base_layout(fig, f"{who}nesting |kept(i) ∩ kept(j)| / |kept(i)|")
    fig.update_xaxes(title="layer j (0 = input)", dtick=1 if num_layers <= 16 else None)
    fig.update_yaxes(title="layer i (0 = input)", dtick=1 if num_layers <= 16 else None,
                     autorange="reversed")
    return fig


def intra_inter_share(graph: Graph, masks_by_sampler: Mapping[str, torch.Tensor]) -> go.Figure:
    """Kept share of intra-class (solid) and inter-class (dashed) edges per layer, per
    sampler (:func:`dropedge_core.experiments.intra_inter_shares`). A feature-dependent
    sampler on a homophilous graph keeps more intra- than inter-class edges."""
    fig = go.Figure()
    for name, masks in masks_by_sampler.items():
        df = experiments.intra_inter_shares(graph, masks)
        for kind, dash in (("intra", "solid"), ("inter", "dash")):
            part = df[df["kind"] == kind]
            total = int(part["total"].iloc[0]) if len(part) else 0
            fig.add_trace(go.Scatter(
                x=part["layer"], y=100 * part["share"], mode="lines+markers",
                name=f"{sampler_label(name)} · {kind}-class ({total} edges)",
                line=dict(color=sampler_color(name), dash=dash),
                marker=dict(symbol="circle" if kind == "intra" else "circle-open"),
                customdata=np.stack([part["kept"], part["total"]], axis=1),
                hovertemplate=f"{sampler_label(name)} · layer %{{x}} · {kind}-class edges: "
                              "%{y:.1f}% kept (%{customdata[0]} of %{customdata[1]})"
                              "<extra></extra>"))
    _base_layout(fig, "Kept share of intra-class (solid) vs inter-class (dashed) edges")
    fig.update_xaxes(title="layer l (0 = input)", dtick=1)
    fig.update_yaxes(title="edges kept (% of the class of edge)", rangemode="tozero")
    return fig


# --------------------------------------------------------------------------------------
# MEN


def _men_summary(df: pd.DataFrame) -> pd.DataFrame:
    return df if "men_mean" in df else experiments.men_summary(df)


def men_vs_depth(df: pd.DataFrame, paper: pd.DataFrame | None = None) -> go.Figure:
    """MEN vs depth per sampler, mean ± std over runs (error bars), log y.

    Args:
        df: rows of :func:`dropedge_core.experiments.men_runs` (or its summary).
        paper: optional rows of the paper's table for one dataset (``sampler, layers,
            men``), drawn as open diamonds.
    """
    s = _men_summary(df)
    fig = go.Figure()
    for name, part in s.groupby("sampler", sort=False):
        fig.add_trace(go.Scatter(
            x=part["layers"], y=part["men_mean"], mode="lines+markers", name=sampler_label(name),
            line=dict(color=sampler_color(name)),
            error_y=dict(type="data", array=part["men_std"], visible=True),
            customdata=np.stack([part["men_std"], part["runs"]], axis=1),
            hovertemplate=f"{sampler_label(name)} · L=%{{x}}<br>MEN %{{y:.3s}} ± "
                          "%{customdata[0]:.2s} over %{customdata[1]} runs<extra></extra>"))
    if paper is not None and len(paper):
        for name, part in paper.groupby("sampler", sort=False):
            fig.add_trace(go.Scatter(
                x=part["layers"], y=part["men"], mode="markers", name=f"{sampler_label(name)} (paper)",
                marker=dict(symbol="diamond-open", size=11, color=sampler_color(name),
                            line=dict(width=2)),
                hovertemplate=f"{sampler_label(name)} · L=%{{x}}<br>paper MEN %{{y:.2s}}"
                              "<extra></extra>"))
    _base_layout(fig, "MEN vs depth (mean ± std over runs)")
    fig.update_xaxes(title="depth L (layers)", **_depth_axis(s["layers"]))
    fig.update_yaxes(title="MEN (non-zeros of Π(A+I), log scale)",
                     **_log_axis(pd.concat([s["men_mean"], paper["men"] if paper is not None
                                            else pd.Series(dtype=float)])))
    return fig


def edge_number_curves(df: pd.DataFrame, layers: int | None = None) -> go.Figure:
    """Edge number ``|Π_{i<=l} (A^(i) + I)|`` vs layer ``l`` at one depth, per sampler:
    the mean over runs as a line and mean ± std as a shaded band (the paper's
    edge-number figure), log y.

    Args:
        df: rows of :func:`dropedge_core.experiments.men_runs`.
        layers: the depth ``L`` to show (default: the deepest in ``df``).
    """
    long = experiments.edge_number_table(df, layers)
    depth = int(long["layers"].iloc[0])
    stats = (long.groupby(["sampler", "layer"], sort=False)["edge_number"]
                 .agg(["mean", "std", "count"]).reset_index().fillna({"std": 0.0}))
    fig = go.Figure()
    for name, part in stats.groupby("sampler", sort=False):
        x = part["layer"].to_numpy()
        mean, std = part["mean"].to_numpy(), part["std"].to_numpy()
        lower = np.maximum(mean - std, mean * 1e-3)  # a log axis cannot show <= 0
        color = sampler_color(name)
        fig.add_trace(go.Scatter(
            x=np.concatenate([x, x[::-1]]), y=np.concatenate([mean + std, lower[::-1]]),
            fill="toself", fillcolor=_rgba(color, 0.18), line=dict(width=0), mode="lines",
            hoverinfo="skip", showlegend=False, legendgroup=name, name=f"{name} ± std"))
        fig.add_trace(go.Scatter(
            x=x, y=mean, mode="lines+markers", name=sampler_label(name), legendgroup=name,
            line=dict(color=color), marker=dict(size=5),
            customdata=np.stack([std, part["count"]], axis=1),
            hovertemplate=f"{sampler_label(name)} · L={depth} · layer %{{x}}<br>edge number "
                          "%{y:.3s} ± %{customdata[0]:.2s} over %{customdata[1]} runs"
                          "<extra></extra>"))
    _base_layout(fig, f"Edge number per layer, L = {depth} (band: mean ± std over runs)")
    fig.update_xaxes(title="layer l (0 = input)", dtick=1 if depth <= 16 else None)
    fig.update_yaxes(title="edge number |Π_{i≤l}(A⁽ⁱ⁾+I)| (non-zeros, log scale)",
                     **_log_axis(stats["mean"]))
    return fig


def men_table_compare(measured_df: pd.DataFrame, paper_df: pd.DataFrame,
                      dataset: str | None = None) -> go.Figure:
    """The paper's MEN table beside the measured one: for each depth, a bar pair per
    sampler — paper (hatched) and measured (solid, ± std) — on a log axis.

    Args:
        measured_df: rows of :func:`dropedge_core.experiments.men_runs` (or its summary).
        paper_df: the paper's table (:func:`dropedge_core.reference.paper_men`).
        dataset: dataset key (``"cora"``); default: the only one in ``paper_df``.
    """
    if dataset is None:
        keys = paper_df["dataset_key"].unique()
        if len(keys) != 1:
            raise ValueError(f"paper_df holds several datasets {list(keys)}: pass dataset=")
        dataset = str(keys[0])
    comp = experiments.men_comparison(measured_df, paper_df, dataset)
    fig = go.Figure()
    for name, part in comp.groupby("sampler", sort=False):
        x = [f"L = {v}" for v in part["layers"]]
        color = sampler_color(name)
        fig.add_trace(go.Bar(
            x=x, y=part["paper_men"], name=f"{sampler_label(name)} · paper",
            marker=dict(color=_rgba(color, 0.35), line=dict(color=color, width=1.5),
                        pattern=dict(shape="/", fgcolor=color)),
            hovertemplate=f"{sampler_label(name)} · %{{x}}<br>paper MEN %{{y:.2s}}<extra></extra>"))
        fig.add_trace(go.Bar(
            x=x, y=part["measured_men"], name=f"{sampler_label(name)} · measured",
            marker=dict(color=color),
            error_y=dict(type="data", array=part["measured_std"].fillna(0.0), visible=True),
            customdata=np.stack([part["ratio"], part["runs"].fillna(0)], axis=1),
            hovertemplate=f"{sampler_label(name)} · %{{x}}<br>measured MEN %{{y:.3s}} "
                          "(%{customdata[0]:.2f}× paper, %{customdata[1]} runs)<extra></extra>"))
    _base_layout(fig, f"MEN: paper vs measured ({dataset})")
    fig.update_layout(barmode="group", bargap=0.2, bargroupgap=0.05)
    fig.update_xaxes(title="depth")
    fig.update_yaxes(title="MEN (non-zeros, log scale)",
                     **_log_axis(pd.concat([comp["paper_men"], comp["measured_men"]])))
    return fig


# --------------------------------------------------------------------------------------
# Over-smoothing


def over_smoothing_demo(df: pd.DataFrame) -> go.Figure:
    """How representations collapse with propagation depth, per sampler (home page).

    Args:
        df: rows of :func:`dropedge_core.experiments.smoothing_curves` (``sampler,
            step, measure, value``), or of :func:`~dropedge_core.experiments.smoothing_spread`
            (with ``std, low, high, samples``: the mean is drawn with a min–max band).

    Returns:
        Two panels sharing the x axis (propagation step ``k``): the relative distance to
        the over-smoothing subspace and the relative Dirichlet energy, both log y. Per
        sampler the line comes first, then (with a spread) the band's upper and lower edge.
    """
    measures = [m for m in experiments.SMOOTHING_MEASURES if m in set(df["measure"])]
    titles = {"subspace_distance": "distance to the over-smoothing subspace",
              "dirichlet_energy": "Dirichlet energy"}
    fig = make_subplots(rows=1, cols=len(measures), subplot_titles=[titles[m] for m in measures],
                        horizontal_spacing=0.12)
    for col, measure in enumerate(measures, start=1):
        part = df[df["measure"] == measure]
        for name, run in part.groupby("sampler", sort=False):
            spread = "samples" in run and int(run["samples"].max()) > 1
            fig.add_trace(go.Scatter(
                x=run["step"], y=run["value"], mode="lines+markers", name=sampler_label(name),
                legendgroup=name, showlegend=col == 1, line=dict(color=sampler_color(name)),
                marker=dict(size=4),
                customdata=np.stack([run["std"], run["low"], run["high"]], axis=1) if spread else None,
                hovertemplate=f"{sampler_label(name)} · step %{{x}}<br>"
                              f"{experiments.SMOOTHING_MEASURES[measure]}: %{{y:.3g}}"
                              + (f" (mean of {int(run['samples'].max())} draws, ± %{{customdata[0]:.2g}};"
                                 " range %{customdata[1]:.3g} – %{customdata[2]:.3g})" if spread else "")
                              + "<extra></extra>"),
                row=1, col=col)
            if spread:  # the band: min to max over the draws (upper edge, then fill down to it)
                for edge, fill in (("high", None), ("low", "tonexty")):
                    fig.add_trace(go.Scatter(
                        x=run["step"], y=run[edge], mode="lines", line=dict(width=0),
                        fill=fill, fillcolor=_rgba(sampler_color(name), 0.18), legendgroup=name,
                        showlegend=False, hoverinfo="skip", name=f"{sampler_label(name)} {edge}"),
                        row=1, col=col)
        fig.update_yaxes(row=1, col=col, **_log_axis(pd.concat([part[c] for c in ("value", "low", "high")
                                                                 if c in part])),
                         title="‖H − P_M H‖ / ‖H‖ (ratio)" if measure == "subspace_distance"
                         else "E(H_k) / E(X) (ratio)")
        fig.update_xaxes(title="propagation step k (layers of Â)", row=1, col=col)
    _base_layout(fig, "Over-smoothing: H_k = Â⁽ᵏ⁻¹⁾ ··· Â⁽⁰⁾ X collapses as k grows", height=430)
    return fig


# --------------------------------------------------------------------------------------
# Training, diagnostics, depth study, tuning


_LOSS_COLS = (("train_loss", "solid", "train"), ("val_loss", "dash", "validation"))
_ACC_COLS = (("train_acc", "solid", "train"), ("val_acc", "dash", "validation"),
             ("test_acc", "dot", "test"))


def _as_frame(events: pd.DataFrame | Sequence[Mapping], kind: str | None = None) -> pd.DataFrame:
    """Events as a DataFrame; with a ``type`` column (the trainer's event stream), only
    the events of type ``kind``."""
    df = events.copy() if isinstance(events, pd.DataFrame) else pd.DataFrame(list(events))
    if kind is not None and "type" in df:
        df = df[df["type"] == kind].reset_index(drop=True)
    if "loss" in df and "train_loss" not in df:
        df = df.rename(columns={"loss": "train_loss"})
    if "epoch" not in df:
        df["epoch"] = range(len(df))
    return df


def _run_sampler(label: str, df: pd.DataFrame, samplers: Mapping[str, str] | None) -> str:
    if samplers and label in samplers:
        return samplers[label]
    if "sampler" in df and len(df):
        return str(df["sampler"].iloc[0])
    head = str(label).split()[0].rstrip(":,").lower()
    return head if head in SAMPLER_COLORS else str(label)


#: Line dashes that tell runs of one sampler apart where dashes are free (MEN, distances).
RUN_DASHES: tuple[str, ...] = ("solid", "dash", "dot", "dashdot", "longdash")


def shade(color: str, k: int) -> str:
    """The ``k``-th shade of ``color``: ``k = 0`` the colour itself, odd ``k`` darker,
    even ``k`` lighter, each step further from it (``#rrggbb`` out)."""
    c = color.lstrip("#")
    rgb = np.array([int(c[i:i + 2], 16) for i in (0, 2, 4)], dtype=float)
    if k > 0:
        step = min(0.3 * ((k + 1) // 2), 0.75)
        rgb = rgb * (1 - step) if k % 2 else rgb + (255 - rgb) * step
    return "#" + "".join(f"{int(round(v)):02x}" for v in rgb)


def run_styles(run_samplers: Sequence[tuple[str, str]]) -> dict[str, tuple[str, str]]:
    """``{run label: (colour, dash)}`` for runs in order: the sampler's colour, and for the
    second, third ... run of one sampler a darker/lighter shade and another dash, so two
    runs of one sampler never look alike."""
    seen: dict[str, int] = {}
    out = {}
    for label, sampler in run_samplers:
        k = seen.get(sampler, 0)
        seen[sampler] = k + 1
        out[label] = (shade(sampler_color(sampler), k), RUN_DASHES[k % len(RUN_DASHES)])
    return out


def _percent(values: pd.Series) -> pd.Series:
    """Accuracies as percent (fractions in [0, 1] are scaled by 100)."""
    v = values.astype(float)
    return v * 100.0 if v.dropna().le(1.0).all() else v


def training_curves(histories: Mapping[str, pd.DataFrame | Sequence[Mapping]],
                    samplers: Mapping[str, str] | None = None) -> go.Figure:
    """Loss and accuracy vs epoch, several runs overlaid, one colour per sampler.

    Args:
        histories: ``{run label: events}``; events are a DataFrame or a list of dicts
            with ``epoch`` and any of ``train_loss`` (or ``loss``), ``val_loss``,
            ``train_acc``, ``val_acc``, ``test_acc`` (fractions or %) — e.g. the
            trainer's whole event stream (only ``type == "epoch"`` events are used).
        samplers: ``{run label: sampler}`` for the colours; default: the events'
            ``sampler`` column, else the label's first word when it is a sampler name.

    Returns:
        Two panels: loss (train solid, validation dashed) and accuracy (train solid,
        validation dashed, test dotted).
    """
    fig = make_subplots(rows=1, cols=2, subplot_titles=("loss", "accuracy"),
                        horizontal_spacing=0.1)
    frames = {label: _as_frame(events, "epoch") for label, events in histories.items()}
    styles = run_styles([(label, _run_sampler(label, df, samplers)) for label, df in frames.items()])
    for label, df in frames.items():
        color = styles[label][0]
        first = True
        for col, spec in ((1, _LOSS_COLS), (2, _ACC_COLS)):
            for key, dash, split in spec:
                if key not in df or df[key].isna().all():
                    continue
                y = df[key].astype(float) if col == 1 else _percent(df[key])
                unit = "" if col == 1 else "%"
                fig.add_trace(go.Scatter(
                    x=df["epoch"], y=y, mode="lines", name=str(label), legendgroup=str(label),
                    showlegend=first, line=dict(color=color, dash=dash, width=1.6),
                    hovertemplate=f"{label} · epoch %{{x}}<br>{split} {key.split('_')[1]} "
                                  f"%{{y:.3f}}{unit}<extra></extra>"), row=1, col=col)
                first = False
    _base_layout(fig, "Training curves (solid: train, dashed: validation, dotted: test)",
                 height=420)
    fig.update_xaxes(title="epoch")
    fig.update_yaxes(title="loss (cross-entropy, nats)", row=1, col=1)
    fig.update_yaxes(title="accuracy (%)", row=1, col=2)
    return fig


def _diag_frame(diag_events: pd.DataFrame | Sequence[Mapping], key: str) -> tuple[np.ndarray, np.ndarray]:
    df = _as_frame(diag_events, "diagnostics")
    if key not in df:
        raise KeyError(f"diagnostic {key!r} not in the events (have {sorted(df.columns)})")
    df = df[df[key].notna()]
    rows = [np.asarray(v, dtype=float).ravel() for v in df[key]]
    width = max((r.size for r in rows), default=0)
    z = np.full((len(rows), width), np.nan)
    for i, r in enumerate(rows):  # a loop over diagnostic events (every k epochs)
        z[i, : r.size] = r
    return df["epoch"].to_numpy(), z


#: Per-layer diagnostics in words (titles, colour bars, hover).
DIAGNOSTIC_LABELS: dict[str, str] = {
    "dirichlet": "Dirichlet energy", "mad": "MAD (mean average cosine distance)",
    "subspace_distance": "distance to the over-smoothing subspace",
    "layer_distances": "layer distance ‖H⁽ˡ⁺¹⁾ − H⁽ˡ⁾‖",
}


def diagnostic_label(key: str) -> str:
    """A diagnostic's name in words (``"dirichlet"`` -> ``"Dirichlet energy"``)."""
    return DIAGNOSTIC_LABELS.get(key, str(key).replace("_", " "))


def diagnostics_heatmap(diag_events: pd.DataFrame | Sequence[Mapping], key: str = "dirichlet",
                        log: bool = True) -> go.Figure:
    """A per-layer diagnostic over training as an epoch × layer heatmap.

    Args:
        diag_events: events with ``epoch`` and ``key`` = a per-layer sequence (the
            trainer's ``diagnostics`` events: ``dirichlet`` — Dirichlet energy of each
            hidden output —, ``mad``, ``subspace_distance``, ``layer_distances``); other
            event types in the stream are skipped.
        key: which diagnostic.
        log: colour by ``log10`` of the value (non-positive values left blank).
    """
    epochs, z = _diag_frame(diag_events, key)
    shown = np.where(z > 0, np.log10(np.where(z > 0, z, 1.0)), np.nan) if log else z
    layers = list(range(z.shape[1]))
    name = diagnostic_label(key)
    short = name.split(" (")[0]
    fig = go.Figure(go.Heatmap(
        x=epochs, y=layers, z=shown.T, customdata=z.T, colorscale="Viridis",
        colorbar=dict(title=dict(text=f"log10<br>{short.split()[0]}" if log else short.split()[0])),
        hovertemplate=f"epoch %{{x}} · layer %{{y}}<br>{short} %{{customdata:.3g}}<extra></extra>"))
    _base_layout(fig, f"{name[0].upper()}{name[1:]} per layer over training")
    fig.update_xaxes(title="epoch")
    fig.update_yaxes(title="layer l (0 = first hidden output)", dtick=1 if len(layers) <= 16 else None)
    return fig


def _paper_distance(row: np.ndarray) -> float:
    """The paper's "Distance": mean of D^(l) over l = 1 .. L-3, from the list
    ``[D^(1), ..., D^(L-2)]`` (as :func:`dropedge_core.metrics.average_distance`)."""
    r = row[~np.isnan(row)]
    num_layers = r.size + 2
    chosen = r[: num_layers - 3] if num_layers >= 4 else r
    return float(chosen.mean()) if chosen.size else math.nan


def _average_distances(df: pd.DataFrame, key: str, z: np.ndarray) -> list[float]:
    """The events' ``average_distance`` where given, else computed from the rows of ``z``."""
    df = df[df[key].notna()]
    given = df["average_distance"].tolist() if "average_distance" in df else [None] * len(z)
    return [float(g) if g is not None and not pd.isna(g) else _paper_distance(r)
            for g, r in zip(given, z)]


def layer_distance_curves(diag_events: pd.DataFrame | Sequence[Mapping]
                          | Mapping[str, pd.DataFrame | Sequence[Mapping]],
                          key: str = "layer_distances",
                          samplers: Mapping[str, str] | None = None) -> go.Figure:
    """Layer distances ``D^(l) = ||H^(l+1) − H^(l)||_F`` over training.

    Args:
        diag_events: one run's events (``epoch`` and ``key`` = ``[D^(1), ...]``, the
            trainer's ``diagnostics`` events): one line per ``l`` plus the paper's
            average "Distance" (bold; the events' ``average_distance`` when given); or
            ``{run label: events}``: the average Distance of each run, coloured by
            sampler (as in :func:`training_curves`).
        key: the events' column of per-layer distances.
    """
    fig = go.Figure()
    values: list[float] = []
    if isinstance(diag_events, Mapping):
        frames = {label: _as_frame(events, "diagnostics") for label, events in diag_events.items()}
        styles = run_styles([(label, _run_sampler(label, df, samplers)) for label, df in frames.items()])
        for label, df in frames.items():
            epochs, z = _diag_frame(df, key)
            color, dash = styles[label]
            y = _average_distances(df, key, z)
            values.extend(y)
            fig.add_trace(go.Scatter(
                x=epochs, y=y, mode="lines+markers", name=str(label),
                line=dict(color=color, dash=dash), marker=dict(size=4),
                hovertemplate=f"{label} · epoch %{{x}}<br>average Distance %{{y:.3g}}<extra></extra>"))
        title = "Average layer distance (the paper's Distance) over training"
    else:
        epochs, z = _diag_frame(diag_events, key)
        values.extend(z[~np.isnan(z)].tolist())
        shades = np.linspace(0.25, 0.9, max(z.shape[1], 1))
        for i in range(z.shape[1]):  # a loop over layers
            fig.add_trace(go.Scatter(
                x=epochs, y=z[:, i], mode="lines", name=f"D^({i + 1})",
                line=dict(color=f"rgba(31,119,180,{shades[i]:.2f})", width=1),
                hovertemplate=f"epoch %{{x}} · D^({i + 1}) = ‖H^({i + 2}) − H^({i + 1})‖: "
                              "%{y:.3g}<extra></extra>"))
        fig.add_trace(go.Scatter(
            x=epochs, y=_average_distances(_as_frame(diag_events, "diagnostics"), key, z),
            mode="lines", name="average Distance",
            line=dict(color="#d62728", width=3),
            hovertemplate="epoch %{x}<br>average Distance %{y:.3g}<extra></extra>"))
        title = "Layer distances over training (bold: the paper's average Distance)"
    _base_layout(fig, title)
    fig.update_xaxes(title="epoch")
    fig.update_yaxes(title="layer distance ‖H⁽ˡ⁺¹⁾ − H⁽ˡ⁾‖_F (Frobenius norm)",
                     **_log_axis(values or [1.0]))
    return fig


def _backbone_key(name: str) -> str:
    return str(name).strip().lower().rstrip("*")


def accuracy_vs_depth(df: pd.DataFrame, paper_df: pd.DataFrame | None = None,
                      dataset: str | None = None, setting: str | None = None,
                      backbones: Sequence[str] | None = None, note: str | None = None,
                      spread: float = DEPTH_SPREAD) -> go.Figure:
    """Test accuracy vs depth, one panel per backbone, mean ± std over seeds per sampler;
    the paper's numbers overlaid as dashed lines with open markers.

    Args:
        df: one row per run: ``backbone, sampler, layers`` and ``test_acc`` (or
            ``test_accuracy``), fractions or %; a ``seed`` column is optional.
        paper_df: :func:`dropedge_core.reference.paper_accuracy_by_depth` rows; filtered
            to ``dataset`` (key, e.g. ``"cora"``) and ``setting`` (``"semi"``/``"full"``)
            when given, and to the backbones present in ``df`` when it has rows.
        backbones: the panels, in this order (runs and paper rows of other backbones
            are left out); default: the backbones of ``df`` and then of ``paper_df``.
        note: added to the title (e.g. that the runs shown have other settings).
        spread: the samplers' points at one depth are set apart by this fraction of an
            octave each (x = L · 2^offset, centred on L), so that they do not hide each
            other; hover and ticks name the true depth.
    """
    value = "test_acc" if "test_acc" in df else "test_accuracy"
    if df.empty:  # nothing measured yet: the paper's numbers alone
        measured = pd.DataFrame({"backbone_key": pd.Series(dtype=str), "sampler": pd.Series(dtype=str),
                                 "layers": pd.Series(dtype=int), "acc": pd.Series(dtype=float)})
    else:
        measured = df.assign(backbone_key=df["backbone"].map(_backbone_key), acc=_percent(df[value]))
    paper = None
    if paper_df is not None:
        paper = paper_df.assign(backbone_key=paper_df["backbone"].map(_backbone_key))
        if dataset is not None:
            paper = paper[paper["dataset_key"] == dataset]
        if setting is not None:
            paper = paper[paper["setting"] == setting]
        if backbones is None and len(measured):
            paper = paper[paper["backbone_key"].isin(set(measured["backbone_key"]))]
    if backbones is not None:
        keys = list(dict.fromkeys(_backbone_key(b) for b in backbones))
        measured = measured[measured["backbone_key"].isin(keys)]
        if paper is not None:
            paper = paper[paper["backbone_key"].isin(keys)]
    else:
        keys = list(dict.fromkeys(list(measured["backbone_key"]) +
                                  (list(paper["backbone_key"]) if paper is not None else [])))
    if not keys:
        keys = ["gcn"]
    fig = make_subplots(rows=1, cols=len(keys), shared_yaxes=True,
                        subplot_titles=[BACKBONE_LABELS.get(k, k) for k in keys],
                        horizontal_spacing=0.04)
    shown: set[str] = set()
    order = list(dict.fromkeys(list(measured["sampler"]) + (list(paper["sampler"]) if paper is not None
                                                            else [])))
    shift = {name: 2.0 ** (spread * (i - (len(order) - 1) / 2)) for i, name in enumerate(order)}
    for col, bk in enumerate(keys, start=1):
        part = measured[measured["backbone_key"] == bk]
        stats = (part.groupby(["sampler", "layers"], sort=False)["acc"]
                     .agg(["mean", "std", "count"]).reset_index().fillna({"std": 0.0}))
        for name, s in stats.groupby("sampler", sort=False):
            s = s.sort_values("layers")
            fig.add_trace(go.Scatter(
                x=s["layers"] * shift[name], y=s["mean"], mode="lines+markers", name=sampler_label(name),
                legendgroup=name, showlegend=name not in shown,
                line=dict(color=sampler_color(name)),
                error_y=dict(type="data", array=s["std"], visible=True),
                customdata=np.stack([s["std"], s["count"], s["layers"]], axis=1),
                hovertemplate=f"{BACKBONE_LABELS.get(bk, bk)} · {sampler_label(name)} · "
                              "L=%{customdata[2]}<br>test accuracy %{y:.1f}% ± %{customdata[0]:.1f} "
                              "over %{customdata[1]} seeds<extra></extra>"), row=1, col=col)
            shown.add(name)
        if paper is not None:
            for name, p in paper[paper["backbone_key"] == bk].groupby("sampler", sort=False):
                p = p.sort_values("layers")
                fig.add_trace(go.Scatter(
                    x=p["layers"] * shift[name], y=p["test_accuracy"], mode="lines+markers",
                    customdata=p["layers"],
                    name=f"{sampler_label(name)} (paper)", legendgroup=f"{name} paper",
                    showlegend=f"{name} paper" not in shown,
                    line=dict(color=sampler_color(name), dash="dash", width=1.2),
                    marker=dict(symbol="circle-open", size=8),
                    hovertemplate=f"{BACKBONE_LABELS.get(bk, bk)} · {sampler_label(name)} · "
                                  "L=%{customdata}<br>paper: %{y:.1f}%<extra></extra>"), row=1, col=col)
                shown.add(f"{name} paper")
        depths = list(part["layers"]) + (list(paper[paper["backbone_key"] == bk]["layers"])
                                         if paper is not None else [])
        fig.update_xaxes(title="depth L (layers)", row=1, col=col, **_depth_axis(depths or [2]))
    fig.update_yaxes(title="test accuracy (%)", row=1, col=1)
    with_paper = paper is not None and len(paper) > 0
    _base_layout(fig, "Test accuracy vs depth (mean ± std over seeds"
                 + ("; dashed: paper)" if with_paper else ")")
                 + (f"<br><sup>{note}</sup>" if note else ""), height=460 if note else 440)
    return fig


def tuning_surface(trials: pd.DataFrame, x: str = "p_min", y: str = "p_max",
                   value: str = "value") -> go.Figure:
    """Validation accuracy over (``p_min``, ``p_max``): an interpolated contour of the
    trials plus the trials themselves (markers) and the best one (star).

    Args:
        trials: one row per finished trial with columns ``x``, ``y``, ``value``
            (fraction or %), optionally ``number``.
    """
    t = trials.dropna(subset=[x, y, value])
    z = _percent(t[value]) if len(t) else t[value]
    fig = go.Figure()
    if len(t) >= 3:
        fig.add_trace(go.Contour(x=t[x], y=t[y], z=z, connectgaps=True, colorscale="Viridis",
                                 opacity=0.75, showscale=True, hoverinfo="skip",
                                 colorbar=dict(title=dict(text="val. acc. (%)")),
                                 contours=dict(showlabels=True)))
    numbers = t["number"] if "number" in t else pd.Series(range(len(t)), index=t.index)
    fig.add_trace(go.Scatter(
        x=t[x], y=t[y], mode="markers", name="trials",
        marker=dict(color="white", size=8, line=dict(color="black", width=1)),
        customdata=np.stack([numbers, z], axis=1) if len(t) else None,
        hovertemplate=f"trial %{{customdata[0]}}<br>{x} %{{x:.2f}} · {y} %{{y:.2f}}<br>"
                      "validation accuracy %{customdata[1]:.2f}%<extra></extra>"))
    if len(t):
        best = int(np.argmax(z.to_numpy()))
        fig.add_trace(go.Scatter(
            x=[t[x].iloc[best]], y=[t[y].iloc[best]], mode="markers", name="best",
            marker=dict(symbol="star", size=16, color="#d62728", line=dict(color="black", width=1)),
            hovertemplate=f"best trial<br>{x} %{{x:.2f}} · {y} %{{y:.2f}}<br>"
                          f"validation accuracy {z.iloc[best]:.2f}%<extra></extra>"))
    _base_layout(fig, "Validation accuracy over the keep rates")
    fig.update_xaxes(title=f"{x} (keep rate, fraction of edges)", range=[0, 1])
    fig.update_yaxes(title=f"{y} (keep rate, fraction of edges)", range=[0, 1])
    return fig


def men_over_training(diag_events: Mapping[str, pd.DataFrame | Sequence[Mapping]],
                      samplers: Mapping[str, str] | None = None) -> go.Figure:
    """MEN of each epoch's sampled layers over training, several runs overlaid.

    Args:
        diag_events: ``{run label: events}`` with ``epoch`` and ``men`` (the trainer's
            ``diagnostics`` events; other event types are skipped); a ``men_stderr``
            column (estimated MEN on big graphs) is drawn as error bars.
        samplers: ``{run label: sampler}`` for the colours (as in :func:`training_curves`).

    The MEN of the paper's Definition 1 for the masks drawn at that epoch: NoDrop's is
    the full graph's (flat), LID/DropEdge++ stay below DropEdge at equal keep rates. The y
    axis is linear from 0; runs of one sampler get shades and dashes (:func:`run_styles`).
    """
    fig = go.Figure()
    values: list[float] = []
    frames = {label: _as_frame(events, "diagnostics") for label, events in diag_events.items()}
    styles = run_styles([(label, _run_sampler(label, df, samplers)) for label, df in frames.items()])
    for label, df in frames.items():
        if "men" not in df or df["men"].isna().all():
            continue
        df = df[df["men"].notna()]
        values.extend(df["men"].astype(float))
        stderr = df["men_stderr"].astype(float) if "men_stderr" in df else None
        fig.add_trace(go.Scatter(
            x=df["epoch"], y=df["men"].astype(float), mode="lines+markers", name=str(label),
            line=dict(color=styles[label][0], dash=styles[label][1], width=1.6),
            marker=dict(size=4),
            error_y=dict(type="data", array=stderr, visible=True) if stderr is not None else None,
            hovertemplate=f"{label} · epoch %{{x}}<br>MEN %{{y:.4g}} node pairs<extra></extra>"))
    _base_layout(fig, "MEN of each epoch's sample (Definition 1)")
    fig.update_xaxes(title="epoch")
    # a linear axis from 0: the gap between samplers reads at its size, and the few-percent
    # wobble of one sampler's draws from epoch to epoch stays small (a zoomed axis made it
    # look like large swings)
    fig.update_yaxes(title="MEN (node pairs)", rangemode="tozero",
                     range=[0, 1.08 * max(values)] if values else None)
    return fig


def tuning_history(trials: pd.DataFrame, value: str = "val_acc") -> go.Figure:
    """A study's progress: each finished trial's validation accuracy and the best so far.

    Args:
        trials: one row per trial (:func:`dropedge_core.tuning.trials_frame`): ``trial``
            (number), ``state`` and ``value`` (fraction or %); pruned or failed trials
            (no value) are marked on the axis.
    """
    t = trials.sort_values("trial") if "trial" in trials else trials
    done = t.dropna(subset=[value])
    fig = go.Figure()
    z = _percent(done[value]) if len(done) else done[value].astype(float)
    fig.add_trace(go.Scatter(
        x=done["trial"], y=z, mode="markers", name="trial",
        marker=dict(color=SAMPLER_COLORS["dropedge"], size=8),
        hovertemplate="trial %{x}<br>validation accuracy %{y:.2f}%<extra></extra>"))
    fig.add_trace(go.Scatter(
        x=done["trial"], y=z.cummax(), mode="lines", name="best so far",
        line=dict(color="#d62728", width=2, shape="hv"),
        hovertemplate="after trial %{x}<br>best validation accuracy %{y:.2f}%<extra></extra>"))
    other = t[t[value].isna()] if len(t) else t
    if len(other):
        low = float(z.min()) if len(z) else 0.0
        states = other["state"].astype(str).str.lower() if "state" in other else ["no value"] * len(other)
        fig.add_trace(go.Scatter(
            x=other["trial"], y=[low] * len(other), mode="markers", name="pruned / stopped",
            marker=dict(symbol="x", color=DROPPED_COLOR, size=8), customdata=list(states),
            hovertemplate="trial %{x}: %{customdata}<extra></extra>"))
    _base_layout(fig, "Study progress: validation accuracy per trial")
    fig.update_xaxes(title="trial number")
    fig.update_yaxes(title="validation accuracy (%)")
    return fig
