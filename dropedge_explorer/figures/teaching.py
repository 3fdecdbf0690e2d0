"""Figure builders of the teaching views (class merging, the theory, the paper's tables).

The same conventions as :mod:`dropedge_explorer.figures` (pure, deterministic, one colour per
sampler from :data:`~dropedge_explorer.figures.style.SAMPLER_COLORS`, hover text that says what a
point is); kept in their own module so the views can grow without crowding that one.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dropedge_explorer.data.reference import FULL_GRAPH as FULL
from dropedge_explorer.figures.style import base_layout, log_axis, sampler_color, sampler_label

__all__ = [
    "Snapshots",
    "class_merge_animation", "separation_curves", "depth_verdict_figure", "lambda_figure",
    "subspace_decay_figure",
    "men_bound_figure", "epoch_time_figure", "receptive_field_figure", "men_analysis_figure",
]

FULL_COLOR = "#000000"
#: Strong, distinct class colours for the scatter views (ColorBrewer Set1 + Dark2, no yellow):
#: the pastel graph colours of :data:`~dropedge_explorer.figures.style.CLASS_COLORS` blur on a cloud.
SCATTER_CLASS_COLORS: tuple[str, ...] = ("#e41a1c", "#377eb8", "#4daf4a", "#984ea3", "#ff7f00",
                                         "#a65628", "#f781bf", "#1b9e77", "#7570b3", "#666666")


class SnapshotView(Protocol):
    """One model's view as the class pictures read it
    (:class:`dropedge_explorer.studies.teaching.Snapshot`)."""

    sampler: str
    proj: np.ndarray            # (K, N, 2)
    separation: list[float]     # K
    subspace: list[float]       # K
    test_acc: float | None
    between_kept: list[float]   # K


class Snapshots(Protocol):
    """The views side by side (:class:`dropedge_explorer.studies.teaching.Snapshots`)."""

    labels: np.ndarray          # (N,) int, -1 = no label
    items: Sequence[SnapshotView]

    @property
    def num_layers(self) -> int: ...


def _color(name: str) -> str:
    return FULL_COLOR if name == FULL else sampler_color(name)


def _label(name: str) -> str:
    return name if name == FULL else sampler_label(name)


def _panel_range(values: np.ndarray) -> list[float]:
    lo, hi = np.nanpercentile(values, [0.5, 99.5]) if values.size else (-1.0, 1.0)
    pad = 0.08 * max(hi - lo, 1e-6)
    return [float(lo - pad), float(hi + pad)]


def point_subset(num_nodes: int, max_points: int, seed: int = 0) -> np.ndarray:
    """The (sorted) nodes a scatter shows: all, or a seeded random ``max_points``."""
    if num_nodes <= max_points:
        return np.arange(num_nodes)
    return np.sort(np.random.default_rng(seed).permutation(num_nodes)[:max_points])


#: Below this share of the between-class spread held by the two axes, a panel's title says so.
LOW_KEPT = 0.6


def _panel_title(snaps: Snapshots, i: int, k: int) -> str:
    s = snaps.items[i]
    acc = "" if s.test_acc is None else f"<br>test {100 * s.test_acc:.1f} %"
    kept = s.between_kept
    low = (f"<br>2-D holds only {kept[k]:.0%} of the between-class spread"
           if k < len(kept) and kept[k] < LOW_KEPT else "")
    # short lines: three panels in the Lesson's column are ~200 px each
    return (f"<b>{sampler_label(s.sampler)}</b>{acc}<br>separation {s.separation[k]:.2f}<br>"
            f"subspace dist. {s.subspace[k]:.2f}{low}")


def _class_traces(snaps: Snapshots, nodes: np.ndarray, labels: np.ndarray, classes: list[int],
                  k: int, first: int) -> list[go.Scatter]:
    """Layer ``k``'s points of every panel, one trace per class (panel-major order)."""
    out = []
    for i, s in enumerate(snaps.items):
        xy = s.proj[k][nodes]
        for c in classes:
            sel = labels == c
            out.append(go.Scatter(
                x=xy[sel, 0], y=xy[sel, 1], mode="markers", name=f"class {c}",
                legendgroup=f"class {c}", showlegend=i == 0,
                marker=dict(size=5, color=SCATTER_CLASS_COLORS[c % len(SCATTER_CLASS_COLORS)],
                            opacity=0.7),
                customdata=nodes[sel],
                hovertemplate=(f"{sampler_label(s.sampler)} · layer {k + first}<br>node %{{customdata}}"
                               f" · class {c}<extra></extra>")))
    return out


def _class_merge_controls(layer: int, num_layers: int, first: int, prefix: str) -> dict:
    """The layer slider (frames ``"L<k>"``) and the play/pause buttons left of it, one above
    the other (side by side they are ~80 px wide: in a column they reached over the slider)."""
    step_args = dict(mode="immediate", frame=dict(duration=0, redraw=True), transition=dict(duration=0))
    return dict(
        sliders=[dict(active=layer - 1, currentvalue=dict(prefix=prefix), pad=dict(t=40), x=0.17, len=0.83,
                      steps=[dict(label=str(k + first), method="animate",
                                  args=[[f"L{k + first}"], step_args])
                             for k in range(num_layers)])],
        updatemenus=[dict(type="buttons", showactive=False, x=0.0, y=0, xanchor="left",
                          yanchor="top", direction="down", pad=dict(t=50),
                          buttons=[dict(label="▶", method="animate",
                                        args=[None, dict(mode="immediate", fromcurrent=True,
                                                         frame=dict(duration=600, redraw=True),
                                                         transition=dict(duration=250))]),
                                   dict(label="❚❚", method="animate",
                                        args=[[None], dict(mode="immediate", frame=dict(duration=0))])])])


def class_merge_animation(snaps: Snapshots, max_points: int = 800, seed: int = 0,
                          layer: int = 1, first: int = 1, prefix: str = "hidden layer ",
                          height: int = 470) -> go.Figure:
    """Each hidden layer's 2-D projection, coloured by class, one panel per sampler, with
    a layer slider and Plotly animation frames (one frame per layer).

    Args:
        snaps (Snapshots): :class:`~dropedge_explorer.studies.teaching.Snapshots` (coordinates
            ``(K, N, 2)``).
        max_points (int, optional): at most this many nodes drawn (the same seeded subset
            everywhere). (default: :obj:`800`)
        seed (int, optional): the seed of that subset. (default: :obj:`0`)
        layer (int, optional): the layer shown first (``first`` .. ``first + K - 1``).
            (default: :obj:`1`)
        first (int, optional): the number of the first layer (1 for hidden layers; 0 for
            propagation steps, where step 0 is ``X`` itself). (default: :obj:`1`)
        prefix (str, optional): the slider's label before the layer number.
            (default: :obj:`"hidden layer "`)
        height (int, optional): the figure's height in pixels. (default: :obj:`470`)

    Each layer is drawn on its own two between-class axes, with the spread around each class
    mean scaled so that the picture's between-class share of the variance is the class
    separation in the title (:func:`dropedge_explorer.studies.teaching.class_picture`): a panel
    cannot look more (or less) separated than its number says. Every panel keeps one axis
    range over all layers (the ``0.5``-``99.5`` percentiles). A frame is named ``"L<k>"``
    (``k`` counted from ``first``); its layout carries the panel titles with that layer's
    class separation and subspace distance (both measured in the full representation), and,
    when the two axes hold less than :data:`LOW_KEPT` of the between-class spread, that share.
    """
    num_panels, num_layers = len(snaps.items), snaps.num_layers
    if num_panels == 0:
        raise ValueError("no snapshots to draw")
    layer = min(max(int(layer) - first + 1, 1), num_layers)
    nodes = point_subset(len(snaps.labels), max_points, seed)
    labels = snaps.labels[nodes]
    classes = [int(c) for c in np.unique(labels) if c >= 0]
    fig = make_subplots(rows=1, cols=num_panels, horizontal_spacing=0.04)

    def traces(k: int) -> list[go.Scatter]:
        return _class_traces(snaps, nodes, labels, classes, k, first)

    def titles(k: int) -> list[dict]:
        return [dict(text=_panel_title(snaps, i, k), xref=f"x{'' if i == 0 else i + 1} domain",
                     yref="paper", x=0.5, y=1.0, yanchor="bottom", showarrow=False,
                     font=dict(size=13)) for i in range(num_panels)]

    for t_index, trace in enumerate(traces(layer - 1)):
        fig.add_trace(trace, row=1, col=t_index // len(classes) + 1)
    fig.frames = [go.Frame(name=f"L{k + first}", data=traces(k), layout=go.Layout(annotations=titles(k)))
                  for k in range(num_layers)]
    for i, s in enumerate(snaps.items):
        fig.update_xaxes(range=_panel_range(s.proj[:, nodes, 0]), showticklabels=False,
                         title_text="axis 1", row=1, col=i + 1)
        fig.update_yaxes(range=_panel_range(s.proj[:, nodes, 1]), showticklabels=False,
                         title_text="axis 2" if i == 0 else None, row=1, col=i + 1)
    fig.update_layout(annotations=titles(layer - 1),
                      **_class_merge_controls(layer, num_layers, first, prefix))
    base_layout(fig, "", height=height, legend="right")
    # one legend group per class: without a gap between groups the legend of 7 classes fits
    # beside the panels (with Plotly's 10 px per group it scrolled, hiding class 6)
    fig.update_layout(legend=dict(tracegroupgap=0))
    fig.update_layout(margin=dict(l=40, r=20, t=110, b=40))  # four title lines per panel
    return fig


def separation_curves(snaps: Snapshots, first: int = 1) -> go.Figure:
    """Class separation (the between-class share of the variance) and subspace distance
    against the layer, one line per sampler (layers counted from ``first``).

    Args:
        snaps (Snapshots): the views (:class:`~dropedge_explorer.studies.teaching.Snapshots`).
        first (int, optional): the number of the first layer (1 for hidden layers, 0 for
            propagation steps). (default: :obj:`1`)
    """
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.1,
                        subplot_titles=("class separation (1 = apart, 0 = merged)",
                                        "relative distance to the over-smoothing subspace"))
    for s in snaps.items:
        layers = np.arange(first, len(s.separation) + first)
        for col, values, what in ((1, s.separation, "class separation"),
                                  (2, s.subspace, "subspace distance")):
            fig.add_trace(go.Scatter(
                x=layers, y=values, mode="lines+markers", name=sampler_label(s.sampler),
                legendgroup=s.sampler, showlegend=col == 1, line=dict(color=sampler_color(s.sampler)),
                hovertemplate=(f"{sampler_label(s.sampler)} · layer %{{x}}<br>{what} %{{y:.3f}}"
                               "<extra></extra>")),
                row=1, col=col)
    fig.update_xaxes(title_text="hidden layer l" if first else "averaging step l")
    fig.update_yaxes(title_text="between-class share of variance", range=[0, 1], row=1, col=1)
    fig.update_yaxes(title_text="‖H − P_M H‖_F / ‖H‖_F", row=1, col=2)
    return base_layout(fig, "How far the classes have merged, layer by layer", height=380)


def depth_verdict_figure(spread: dict[str, dict[int, tuple[float, float, int]]], clear: list[dict],
                         title: str = "Test accuracy by depth (bundled runs)") -> go.Figure:
    """Mean test accuracy against depth, one line per sampler with ± sample std bars, and a
    label at each depth where a paired comparison is clear (from
    :func:`dropedge_explorer.studies.lesson_climax.verdict_numbers`).

    Args:
        spread (dict): ``{sampler: {layers: (mean, std, seeds)}}``.
        clear (list[dict]): the comparisons that are shown or reversed (``layers, better,
            worse, diff, verdict``).
        title (str, optional): the figure's title. (default: :obj:`"Test accuracy by depth (bundled runs)"`)
    """
    fig = go.Figure()
    for name, by_depth in spread.items():
        depths = sorted(by_depth)
        mean, std, n = (np.array([by_depth[L][i] for L in depths], dtype=float) for i in range(3))
        fig.add_trace(go.Scatter(
            x=depths, y=100 * mean, mode="lines+markers", name=sampler_label(name),
            line=dict(color=sampler_color(name)), error_y=dict(type="data", array=100 * std, visible=True),
            customdata=np.stack([100 * std, n], 1),
            hovertemplate=(f"{sampler_label(name)} · %{{x}} layers<br>mean %{{y:.1f}} % "
                           "± %{customdata[0]:.1f} (sample std, %{customdata[1]:.0f} seeds)<extra></extra>")))
    top = max((100 * v[0] for d in spread.values() for v in d.values()), default=0.0)
    for i, r in enumerate(clear):
        side = "above" if r["diff"] > 0 else "below"
        fig.add_annotation(x=np.log10(r["layers"]),  # a log axis places annotations in log10
                           y=top + 4 + 5 * i, showarrow=False, font=dict(size=12),
                           text=f"{r['layers']} layers: {sampler_label(r['better'])} {side} "
                                f"{sampler_label(r['worse'])} ({100 * r['diff']:+.1f} pts)")
    depths = sorted({L for d in spread.values() for L in d})
    fig.update_xaxes(title_text="layers", type="log", tickvals=depths)
    fig.update_yaxes(title_text="test accuracy (%)")
    return base_layout(fig, title, height=420)


def lambda_figure(df: pd.DataFrame) -> go.Figure:
    """``λ`` (Theorem 1's second-largest eigenvalue in magnitude) per layer, one line per
    sampler and the full graph's as a dashed black line (from
    :func:`dropedge_explorer.studies.theory.lambda_by_layer`).

    Args:
        df (pandas.DataFrame): :func:`dropedge_explorer.studies.theory.lambda_by_layer`
            (``sampler, layer, lam, edges_kept``).
    """
    fig = go.Figure()
    for name, part in df.groupby("sampler", sort=False):
        fig.add_trace(go.Scatter(
            x=part["layer"], y=part["lam"], mode="lines" if name == FULL else "lines+markers",
            name=_label(name), line=dict(color=_color(name), dash="dash" if name == FULL else "solid"),
            customdata=part["edges_kept"],
            hovertemplate=(f"{_label(name)} · layer %{{x}}<br>λ %{{y:.5f}}<br>"
                           "edges kept %{customdata}<extra></extra>")))
    fig.update_xaxes(title_text="layer l (0 = input)", dtick=1 if df["layer"].max() < 20 else None)
    fig.update_yaxes(title_text="λ (second-largest |eigenvalue| of Â)")
    return base_layout(fig, "λ of every sampled layer: closer to 1 = slower over-smoothing")


def subspace_decay_figure(df: pd.DataFrame) -> go.Figure:
    """``d_M(H_l) / d_M(H_0)`` per sampler (log axis) and Theorem 1's bound ``λ^l`` of the
    full graph, dashed (from :func:`dropedge_explorer.studies.theory.subspace_decay`).

    Args:
        df (pandas.DataFrame): :func:`dropedge_explorer.studies.theory.subspace_decay`
            (``sampler, step, ratio, bound``).
    """
    fig = go.Figure()
    for name, part in df.groupby("sampler", sort=False):
        fig.add_trace(go.Scatter(
            x=part["step"], y=part["ratio"].clip(lower=1e-12), mode="lines+markers", name=sampler_label(name),
            line=dict(color=sampler_color(name)),
            hovertemplate=f"{sampler_label(name)} · after %{{x}} layers<br>d/d0 %{{y:.4f}}<extra></extra>"))
    bound = df.drop_duplicates("step")
    fig.add_trace(go.Scatter(x=bound["step"], y=bound["bound"], mode="lines", name="bound λ^l (full graph)",
                             line=dict(color=FULL_COLOR, dash="dash"),
                             hovertemplate="Theorem 1 bound after %{x} layers: %{y:.4f}<extra></extra>"))
    fig.update_xaxes(title_text="layers propagated l")
    fig.update_yaxes(title_text="d_M(H_l) / d_M(X)",
                     **log_axis(pd.concat([df["ratio"].clip(lower=1e-12), df["bound"]])))
    return base_layout(fig, "Distance to the over-smoothing subspace, with the theorem's bound")


def men_bound_figure(df: pd.DataFrame) -> go.Figure:
    """Per layer, the measured edge number ``|Π_{i<=l}(A^(i)+I)|`` (solid) and the bound
    ``Π_{i<=l}|A^(i)|`` (dotted), one colour per sampler, log axis (from
    :func:`dropedge_explorer.studies.theory.men_bound_table`); the legend names MEN and MEN*.

    Args:
        df (pandas.DataFrame): :func:`dropedge_explorer.studies.theory.men_bound_table`.
    """
    fig = go.Figure()
    for name, part in df.groupby("sampler", sort=False):
        color, label = sampler_color(name), sampler_label(name)
        men, star = float(part["men"].iloc[0]), float(part["log10_men_star"].iloc[0])
        fig.add_trace(go.Scatter(
            x=part["layer"], y=part["edge_number"], mode="lines+markers", line=dict(color=color),
            name=f"{label}: MEN {men:.3g}", legendgroup=name,
            hovertemplate=f"{label} · layer %{{x}}<br>|Π(A+I)| %{{y:.3s}}<extra></extra>"))
        bound = np.where(part["log10_bound"] < 300, 10.0 ** part["log10_bound"].clip(upper=300), np.nan)
        fig.add_trace(go.Scatter(
            x=part["layer"], y=bound, mode="lines", line=dict(color=color, dash="dot"),
            name=f"{label}: MEN* 10^{star:.1f}", legendgroup=name, customdata=part["log10_bound"],
            hovertemplate=f"{label} · layer %{{x}}<br>Π|A| = 10^%{{customdata:.2f}}<extra></extra>"))
    fig.update_xaxes(title_text="layer l (0 = input)")
    fig.update_yaxes(title_text="non-zero entries (count)", **log_axis(pd.concat(
        [df["edge_number"], 10.0 ** df["log10_bound"].clip(upper=300)])))
    return base_layout(fig, "Edge numbers (solid) under the paper's upper bound (dotted)", legend="right")


def epoch_time_figure(df: pd.DataFrame) -> go.Figure:
    """Stacked bars of the sampling and the rest of an epoch, measured here beside the
    paper's (from :func:`dropedge_explorer.studies.paper_views.epoch_time_table`).

    Args:
        df (pandas.DataFrame): :func:`dropedge_explorer.studies.paper_views.epoch_time_table`.
    """
    fig = go.Figure()
    x = [[sampler_label(s) for s in df["sampler"]], list(df["source"])]
    for phase, color in (("sampling", "#d62728"), ("training", "#1f77b4")):
        fig.add_trace(go.Bar(x=x, y=df[f"{phase}_s"], name=phase, marker_color=color,
                             hovertemplate=f"%{{x}}<br>{phase} %{{y:.4f}} s per epoch<extra></extra>"))
    fig.update_layout(barmode="stack")
    fig.update_yaxes(title_text="time per epoch (s)")
    return base_layout(fig, "Time per epoch: sampling and the rest", height=380)


def _segments(pos: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``None``-separated line segments ``pos[a] -> pos[b]`` (one trace for many edges)."""
    xs = np.full((a.size, 3), np.nan)
    ys = np.full((a.size, 3), np.nan)
    xs[:, 0], xs[:, 1] = pos[a, 0], pos[b, 0]
    ys[:, 0], ys[:, 1] = pos[a, 1], pos[b, 1]
    return xs.ravel(), ys.ravel()


def _reach_traces(k: int, reach, ids, pos, row, u, v, kept_all, first, edges_xy, color: str, size: float,
                  star, node: int) -> list[go.Scatter]:
    """Frame ``k`` of :func:`receptive_field_figure`: drawn edges, kept edges between reached
    nodes, unreached nodes, reached nodes by the layer that first reached them, the node."""
    got = reach[k][ids]
    used = kept_all[k] & reach[k][u] & reach[k][v]
    kx, ky = _segments(pos, row[u[used]], row[v[used]])
    return [
        go.Scatter(x=edges_xy[0], y=edges_xy[1], mode="lines", line=dict(color="#e3e3e3", width=0.7),
                   hoverinfo="skip", name="edges", showlegend=False),
        go.Scatter(x=kx, y=ky, mode="lines", line=dict(color=color, width=1.6), hoverinfo="skip",
                   name=f"kept at layer {k}, between reached nodes"),
        go.Scatter(x=pos[~got, 0], y=pos[~got, 1], mode="markers", name="not reached yet",
                   marker=dict(size=size * 0.8, color="#cfcfcf"), customdata=ids[~got],
                   hovertemplate=f"node %{{customdata}}: not reached by layer {k}<extra></extra>"),
        go.Scatter(x=pos[got, 0], y=pos[got, 1], mode="markers", name="reached",
                   customdata=np.stack([ids[got], first[ids[got]]], 1),
                   marker=dict(size=size, color=first[ids[got]], colorscale="Viridis_r", cmin=0,
                               cmax=max(reach.shape[0] - 1, 1), line=dict(color="white", width=0.6),
                               colorbar=dict(title="first reached<br>at layer", len=0.6)),
                   hovertemplate="node %{customdata[0]}: reached at layer %{customdata[1]}"
                                 "<extra></extra>"),
        go.Scatter(x=star[:, 0], y=star[:, 1], mode="markers", name=f"node {node}",
                   marker=dict(size=size * 1.9, symbol="star", color="#d62728",
                               line=dict(color="black", width=1)),
                   customdata=[node], hovertemplate="node %{customdata}: the chosen node<extra></extra>"),
    ]


def _reach_controls(layer: int, num_layers: int) -> dict:
    """The layer slider and, left of it (not over its "through layer" label), the play button."""
    step_args = dict(mode="immediate", frame=dict(duration=0, redraw=True), transition=dict(duration=0))
    return dict(
        sliders=[dict(active=layer, currentvalue=dict(prefix="through layer "), pad=dict(t=10),
                      x=0.1, len=0.9,
                      steps=[dict(label=str(k), method="animate", args=[[str(k)], step_args])
                             for k in range(num_layers)])],
        updatemenus=[dict(type="buttons", showactive=False, x=0.0, y=0.0, xanchor="left", yanchor="top",
                          pad=dict(t=45),
                          buttons=[dict(label="▶", method="animate",
                                        args=[None, dict(mode="immediate", fromcurrent=True,
                                                         frame=dict(duration=700, redraw=True))])])])


def receptive_field_figure(graph, masks, layout, node: int, reach, sampler: str | None = None,
                           layer: int | None = None) -> go.Figure:
    """The nodes ``node`` reaches through each layer's kept edges, one animation frame per
    layer (the receptive field that MEN counts).

    Args:
        graph (Graph): the graph the masks index.
        masks (torch.Tensor): its ``(L, M)`` bool masks.
        layout (GraphLayout): a :class:`~dropedge_explorer.studies.graph_layout.GraphLayout` (drawn
            nodes and positions).
        node (int): the chosen node (a star).
        reach (torch.Tensor): ``(L, N)`` bool from
            :func:`dropedge_explorer.studies.teaching.receptive_field`.
        sampler (str, optional): sampler name, for the title. (default: :obj:`None`)
        layer (int, optional): the frame shown first (``None``: the last).
            (default: :obj:`None`)

    Traces per frame, in order: the drawn edges (faint), the kept edges of the layer
    between reached nodes, the nodes not reached (grey), the reached nodes coloured by the
    layer that first reached them, the chosen node. Node traces carry the node id in
    ``customdata`` (a click selects it).
    """
    reach = np.asarray(reach, dtype=bool)
    num_layers, n = reach.shape
    layer = num_layers - 1 if layer is None else min(max(int(layer), 0), num_layers - 1)
    ids = np.asarray(layout.nodes)
    pos = np.asarray(layout.positions)
    row = np.full(n, -1)
    row[ids] = np.arange(ids.size)
    edge_ids = np.asarray(layout.edge_ids)
    u, v = graph.undirected_edges[:, edge_ids].cpu().numpy()
    kept_all = np.asarray(masks.cpu())[:, edge_ids]
    first = np.where(reach.any(0), reach.argmax(0), -1)
    ex, ey = _segments(pos, row[u], row[v])
    color = sampler_color(sampler) if sampler else "#444444"
    size = float(np.clip(57 / np.sqrt(max(ids.size, 1)), 6, 14))
    star = pos[row[[node]]] if row[node] >= 0 else np.zeros((0, 2))  # not drawn: no star

    def traces(k: int) -> list[go.Scatter]:
        return _reach_traces(k, reach, ids, pos, row, u, v, kept_all, first, (ex, ey), color, size,
                             star, node)

    def title(k: int) -> str:
        return (f"Node {node} reaches {int(reach[k].sum())} of {n} nodes through layers 0..{k}"
                f"{' (' + sampler_label(sampler) + ')' if sampler else ''}")

    fig = go.Figure(traces(layer))
    fig.frames = [go.Frame(name=str(k), data=traces(k), layout=go.Layout(title=dict(text=title(k))))
                  for k in range(num_layers)]
    fig.update_layout(**_reach_controls(layer, num_layers), clickmode="event+select")
    base_layout(fig, title(layer), height=580, legend="bottom")
    fig.update_layout(margin=dict(b=130))  # the legend (at the bottom edge) below the layer slider
    fig.update_xaxes(showgrid=False, zeroline=False, showticklabels=False)
    fig.update_yaxes(showgrid=False, zeroline=False, showticklabels=False, scaleanchor="x", scaleratio=1)
    return fig


def men_analysis_figure(df: pd.DataFrame) -> go.Figure:
    """The paper's MEN analysis: MEN against the lowest validation loss (left) and against
    the paper's "Distance" (right), one marker per run, one colour per sampler (from
    :func:`dropedge_explorer.studies.paper_views.men_analysis_runs`).

    Args:
        df (pandas.DataFrame): :func:`dropedge_explorer.studies.paper_views.men_analysis_runs` (or
            the bundled :func:`~dropedge_explorer.studies.paper_views.read_men_analysis`).
    """
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.1,
                        subplot_titles=("MEN vs validation loss", "MEN vs Distance"))
    for name, part in df.groupby("sampler", sort=False):
        label = sampler_label(name)
        for col, what, title in ((1, "val_loss", "lowest validation loss"), (2, "distance", "Distance")):
            fig.add_trace(go.Scatter(
                x=part["men"], y=part[what], mode="markers", name=label, legendgroup=name,
                showlegend=col == 1, marker=dict(size=11, color=sampler_color(name)),
                customdata=np.stack([part["seed"], 100 * part["test_acc"].astype(float)], 1),
                hovertemplate=(f"{label} · seed %{{customdata[0]}}<br>MEN %{{x:.3s}}<br>{title} "
                               "%{y:.3f}<br>test %{customdata[1]:.1f} %<extra></extra>")), row=1, col=col)
    fig.update_xaxes(title_text="MEN (node pairs)", **log_axis(df["men"]))
    fig.update_yaxes(title_text="validation loss (NLL)", row=1, col=1)
    fig.update_yaxes(title_text="Distance (mean ‖H^(l+1) − H^(l)‖_F)", row=1, col=2)
    return base_layout(fig, "MEN analysis of a 16-layer GCN on Cora", height=400)
