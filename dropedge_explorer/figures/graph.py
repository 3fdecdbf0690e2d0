"""Figures of a graph and its sampled layers: kept and dropped edges per layer (still and
animated), keep counts, nesting, intra- vs inter-class shares."""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Protocol

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import torch

from dropedge_explorer.figures.style import (
    CLASS_COLORS,
    DROPPED_COLOR,
    KEPT_UNIFORM_WIDTH,
    WEIGHT_COLORS,
    base_layout,
    sampler_color,
    sampler_label,
)

__all__ = [
    "layer_edges", "layer_edges_animation", "keep_counts_bar", "nesting_heatmap",
    "intra_inter_share",
]


class LayerDrawing(Protocol):
    """What the layer pictures read: the tables of
    :class:`dropedge_explorer.studies.edge_drawing.EdgeDrawing` (built by
    :func:`~dropedge_explorer.studies.edge_drawing.edge_drawing`)."""

    nodes: pd.DataFrame        # node, x, y, label, degree
    edges: pd.DataFrame        # u, v, x0, y0, x1, y1, intra, weight, bin
    kept: np.ndarray           # (L, E) bool
    kept_degree: np.ndarray    # (L, n)
    bin_labels: tuple[str, ...]
    weighted: bool


def _segments(edges: pd.DataFrame, sel: np.ndarray) -> tuple[list, list]:
    """x and y of the selected edges as one None-separated polyline."""
    k = int(sel.sum())
    xs = np.full(3 * k, None, dtype=object)
    ys = np.full(3 * k, None, dtype=object)
    xs[0::3], xs[1::3] = edges["x0"].to_numpy()[sel], edges["x1"].to_numpy()[sel]
    ys[0::3], ys[1::3] = edges["y0"].to_numpy()[sel], edges["y1"].to_numpy()[sel]
    return xs.tolist(), ys.tolist()


def _edge_traces(d: LayerDrawing, kept: np.ndarray, sampler: str | None) -> list[go.Scatter]:
    """The dropped edges (one trace), then the kept ones (one trace per weight bin)."""
    x, y = _segments(d.edges, ~kept)
    out = [go.Scatter(x=x, y=y, mode="lines", name=f"dropped ({int((~kept).sum())})",
                      line=dict(color=DROPPED_COLOR, width=0.8, dash="dot"),
                      hoverinfo="skip", legendgroup="dropped")]
    # thinner lines when many edges are drawn, so that they do not hide the nodes
    width_scale = float(np.clip(math.sqrt(400 / max(len(d.edges), 1)), 0.5, 1.0))
    binned = len(d.bin_labels) > 1
    bin_of = d.edges["bin"].to_numpy()
    for b, label in enumerate(d.bin_labels):
        sel = kept & (bin_of == b)
        x, y = _segments(d.edges, sel)
        color = WEIGHT_COLORS[min(len(WEIGHT_COLORS) - 1,
                                  round(b * (len(WEIGHT_COLORS) - 1) / max(1, len(d.bin_labels) - 1)))] \
            if binned else (sampler_color(sampler) if sampler else "#444444")
        width = (0.9 + 0.4 * b if binned else KEPT_UNIFORM_WIDTH) * width_scale
        out.append(go.Scatter(x=x, y=y, mode="lines", name=f"{label} ({int(sel.sum())})",
                              line=dict(color=color, width=width), hoverinfo="skip",
                              legendgroup=f"kept{b}"))
    return out


def _hover_trace(d: LayerDrawing, kept: np.ndarray, layer: int) -> go.Scatter:
    """One invisible marker per edge midpoint carries the edges' hover text (numbers in
    customdata, words from vectorised np.where: no Python loop over edges)."""
    e = d.edges
    words = np.char.add(np.where(kept, "kept", "dropped"),
                        np.where(e["intra"].to_numpy(), " · intra-class edge", " · inter-class edge"))
    template = (f"edge %{{customdata[0]}}–%{{customdata[1]}}: %{{text}} at layer {layer}"
                + ("<br>kernel weight %{customdata[2]:.3g}" if d.weighted else "")
                + "<extra></extra>")
    return go.Scatter(x=(e["x0"] + e["x1"]).to_numpy() / 2, y=(e["y0"] + e["y1"]).to_numpy() / 2,
                      mode="markers", name="edges (hover)", marker=dict(size=5, color="rgba(0,0,0,0)"),
                      text=words, customdata=np.stack([e["u"], e["v"], e["weight"]], axis=1),
                      hovertemplate=template, showlegend=False)


def _node_traces(d: LayerDrawing, layer: int) -> list[go.Scatter]:
    nodes, out = d.nodes, []
    size = float(np.clip(57 / math.sqrt(max(len(nodes), 1)), 6, 14))
    labels = nodes["label"].to_numpy()
    for c in np.unique(labels):  # a loop over classes
        sel = labels == c
        out.append(go.Scatter(
            x=nodes["x"].to_numpy()[sel], y=nodes["y"].to_numpy()[sel], mode="markers", name=f"class {c}",
            customdata=np.stack([nodes["node"].to_numpy()[sel], nodes["degree"].to_numpy()[sel],
                                 d.kept_degree[layer][sel]], axis=1),
            hovertemplate=f"node %{{customdata[0]}}<br>class {c}<br>degree %{{customdata[1]}} "
                          f"(%{{customdata[2]}} kept at layer {layer})<extra></extra>",
            marker=dict(size=size, color=CLASS_COLORS[int(c) % len(CLASS_COLORS)],
                        line=dict(color="white", width=0.8)),
            legendgroup=f"class{c}"))
    return out


def _layer_traces(d: LayerDrawing, layer: int, sampler: str | None) -> list[go.Scatter]:
    num_layers = d.kept.shape[0]
    if not 0 <= layer < num_layers:
        raise ValueError(f"layer must be in [0, {num_layers - 1}] (got {layer})")
    kept = d.kept[layer]
    return [*_edge_traces(d, kept, sampler), _hover_trace(d, kept, layer), *_node_traces(d, layer)]


def _layer_title(d: LayerDrawing, layer: int, sampler: str | None) -> str:
    who = f"{sampler_label(sampler)}: " if sampler else ""
    return (f"{who}layer {layer} of {d.kept.shape[0]} (0 = input)<br><sup>{int(d.kept[layer].sum())} of "
            f"{len(d.edges)} drawn edges kept</sup>")


def _graph_axes(fig: go.Figure) -> go.Figure:
    axis = dict(showgrid=False, zeroline=False, showticklabels=False, title=None)
    fig.update_xaxes(**axis)
    fig.update_yaxes(scaleanchor="x", scaleratio=1, **axis)
    return fig


def layer_edges(drawing: LayerDrawing, layer: int, sampler: str | None = None) -> go.Figure:
    """Kept vs dropped edges of one layer, drawn at fixed node positions.

    Args:
        drawing (EdgeDrawing): the drawing's tables
            (:func:`dropedge_explorer.studies.edge_drawing.edge_drawing`); with kernel weights, kept
            edges are coloured by weight bin (:data:`WEIGHT_COLORS`, wider = heavier).
        layer (int): the layer to show (0 = input).
        sampler (str, optional): sampler name, for the title and the kept-edge colour.
            (default: :obj:`None`)

    Returns:
        A figure with traces, in order: dropped edges (one trace), kept edges (one trace,
        or one per weight bin), edge midpoints (hover only), one trace per node class.
    """
    fig = go.Figure(_layer_traces(drawing, int(layer), sampler))
    base_layout(fig, _layer_title(drawing, int(layer), sampler), height=600, legend="right")
    fig.update_layout(margin=dict(l=10, r=10, t=50, b=10))
    return _graph_axes(fig)


def layer_edges_animation(drawing: LayerDrawing, sampler: str | None = None,
                          frame_ms: int = 700) -> go.Figure:
    """:func:`layer_edges` for every layer as Plotly animation frames (a play button and
    a layer slider; node positions fixed). Frame ``l`` is named ``str(l)``.

    Args:
        drawing (EdgeDrawing): the drawing's tables
            (:func:`dropedge_explorer.studies.edge_drawing.edge_drawing`).
        sampler (str, optional): sampler name, for the title and the kept-edge colour.
            (default: :obj:`None`)
        frame_ms (int, optional): how long each frame shows, in milliseconds.
            (default: :obj:`700`)
    """
    num_layers = drawing.kept.shape[0]
    frames = [go.Frame(data=_layer_traces(drawing, layer, sampler), name=str(layer),
                       layout=dict(title=dict(text=_layer_title(drawing, layer, sampler))))
              for layer in range(num_layers)]
    fig = go.Figure(data=frames[0].data, frames=frames)
    base_layout(fig, _layer_title(drawing, 0, sampler), height=640, legend="right")
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
                             for layer in range(num_layers)])])
    return _graph_axes(fig)


# --------------------------------------------------------------------------------------
# Sampler structure


def keep_counts_bar(counts_by_sampler: Mapping[str, torch.Tensor | Sequence[int]],
                    num_edges: int | None = None) -> go.Figure:
    """Edges kept per layer, one bar group per layer and one bar colour per sampler.

    Args:
        counts_by_sampler (Mapping[str, torch.Tensor or Sequence[int]]): ``{sampler: (L,)
            counts}`` (:func:`dropedge_explorer.studies.sampling.keep_counts_by_sampler`).
        num_edges (int, optional): ``M``; drawn as a dashed line "all edges" (none when
            ``None``). (default: :obj:`None`)

    Example:
        >>> fig = keep_counts_bar({"dropedge": [42, 42, 42], "dropedge++": [23, 42, 62]}, 78)
        >>> [(t.name, t.y) for t in fig.data]
        [('DropEdge', (42, 42, 42)), ('DropEdge++', (23, 42, 62))]
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
    base_layout(fig, "Keep counts per layer (the layer schedule)")
    fig.update_layout(barmode="group", bargap=0.15)
    fig.update_xaxes(title="layer l (0 = input)", dtick=1)
    fig.update_yaxes(title="edges kept (count)", rangemode="tozero")
    return fig


def nesting_heatmap(nesting: np.ndarray | torch.Tensor, sampler: str | None = None) -> go.Figure:
    """The nesting of a sampler's layers: ``[i, j] = |mask[i] ∩ mask[j]| / |mask[i]|``
    (:func:`dropedge_explorer.studies.sampling.nesting_matrix`), the share of layer ``i``'s kept
    edges that layer ``j`` keeps too. LID / DropEdge++: 1 on and above the diagonal
    (each layer's edges are kept by every layer above); LDD: 1 on and below it.

    Args:
        nesting (numpy.ndarray or torch.Tensor): the ``(L, L)`` nesting matrix.
        sampler (str, optional): sampler name, for the title. (default: :obj:`None`)
    """
    z = np.asarray(nesting, dtype=float)
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
    base_layout(fig, f"{who}nesting<br><sup>|kept(i) ∩ kept(j)| / |kept(i)|</sup>")
    fig.update_xaxes(title="layer j (0 = input)", dtick=1 if num_layers <= 16 else None)
    fig.update_yaxes(title="layer i (0 = input)", dtick=1 if num_layers <= 16 else None,
                     autorange="reversed")
    return fig


def intra_inter_share(shares: pd.DataFrame) -> go.Figure:
    """Kept share of intra-class (solid) and inter-class (dashed) edges per layer, per
    sampler. A feature-dependent sampler on a homophilous graph keeps more intra- than
    inter-class edges.

    Args:
        shares (pandas.DataFrame): one row per ``(sampler, layer, kind)`` with ``kept, total,
            share`` (:func:`dropedge_explorer.studies.sampling.intra_inter_by_sampler`).
    """
    fig = go.Figure()
    for name, df in shares.groupby("sampler", sort=False):
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
    base_layout(fig, "Kept share of intra-class (solid) vs inter-class (dashed) edges")
    fig.update_xaxes(title="layer l (0 = input)", dtick=1)
    fig.update_yaxes(title="edges kept (% of the class of edge)", rangemode="tozero")
    return fig


# --------------------------------------------------------------------------------------
# MEN
