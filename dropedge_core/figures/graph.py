"""Figures of a graph and its sampled layers: kept and dropped edges per layer (still and
animated), keep counts, nesting, intra- vs inter-class shares."""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
import torch

from dropedge_core.figures.style import (
    CLASS_COLORS,
    DROPPED_COLOR,
    KEPT_UNIFORM_WIDTH,
    WEIGHT_COLORS,
    _base_layout,
    sampler_color,
    sampler_label,
)
from dropedge_core.method.graph import Graph
from dropedge_core.studies import sampling
from dropedge_core.studies.graph_layout import GraphLayout


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
        masks = sampling._undirected(graph, masks.cpu())
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
        return (f"{who}layer {layer} of {self.num_layers} (0 = input)<br><sup>{kept} of "
                f"{self.edge_ids.shape[0]} drawn edges kept</sup>")


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
            :class:`~dropedge_core.studies.graph_layout.GraphLayout` (which also gives ``nodes``).
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
            (:func:`dropedge_core.studies.sampling.keep_counts_by_sampler`).
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
    (:func:`dropedge_core.studies.sampling.nesting_matrix`), the share of layer ``i``'s kept
    edges that layer ``j`` keeps too. LID / DropEdge++: 1 on and above the diagonal
    (each layer's edges are kept by every layer above); LDD: 1 on and below it.
    """
    z = sampling.nesting_matrix(masks).numpy()
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
    _base_layout(fig, f"{who}nesting<br><sup>|kept(i) ∩ kept(j)| / |kept(i)|</sup>")
    fig.update_xaxes(title="layer j (0 = input)", dtick=1 if num_layers <= 16 else None)
    fig.update_yaxes(title="layer i (0 = input)", dtick=1 if num_layers <= 16 else None,
                     autorange="reversed")
    return fig


def intra_inter_share(graph: Graph, masks_by_sampler: Mapping[str, torch.Tensor]) -> go.Figure:
    """Kept share of intra-class (solid) and inter-class (dashed) edges per layer, per
    sampler (:func:`dropedge_core.studies.sampling.intra_inter_shares`). A feature-dependent
    sampler on a homophilous graph keeps more intra- than inter-class edges."""
    fig = go.Figure()
    for name, masks in masks_by_sampler.items():
        df = sampling.intra_inter_shares(graph, masks)
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
