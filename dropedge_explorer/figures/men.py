"""Figures of the Mean-Edge-Number: MEN against depth, edge-number curves, the paper's MEN
table beside ours, and the over-smoothing demo of the home page."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dropedge_explorer.figures.style import (
    base_layout,
    depth_axis,
    log_axis,
    rgba,
    sampler_color,
    sampler_label,
)

__all__ = [
    "men_vs_depth", "edge_number_curves", "men_table_compare", "over_smoothing_demo",
]


def men_vs_depth(summary: pd.DataFrame, paper: pd.DataFrame | None = None) -> go.Figure:
    """MEN vs depth per sampler, mean ± std over runs (error bars), log y.

    Args:
        summary (pandas.DataFrame): one row per ``(sampler, layers)`` with ``men_mean,
            men_std, runs`` (:func:`dropedge_explorer.studies.sampling.men_summary`), drawn in its
            order.
        paper (pandas.DataFrame, optional): rows of the paper's table for one dataset
            (``sampler, layers, men``), drawn as open diamonds. (default: :obj:`None`)
    """
    s = summary
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
    base_layout(fig, "MEN vs depth (mean ± std over runs)")
    fig.update_xaxes(title="depth L (layers)", **depth_axis(s["layers"]))
    fig.update_yaxes(title="MEN (non-zeros of Π(A+I), log scale)",
                     **log_axis(pd.concat([s["men_mean"], paper["men"] if paper is not None
                                            else pd.Series(dtype=float)])))
    return fig


def edge_number_curves(stats: pd.DataFrame) -> go.Figure:
    """Edge number ``|Π_{i<=l} (A^(i) + I)|`` vs layer ``l`` at one depth, per sampler:
    the mean over runs as a line and mean ± std as a shaded band (the paper's
    edge-number figure), log y.

    Args:
        stats (pandas.DataFrame): one row per ``(sampler, layer)`` with ``mean, std, count``
            and the depth ``layers`` (:func:`dropedge_explorer.studies.sampling.edge_number_stats`).
    """
    depth = int(stats["layers"].iloc[0])
    fig = go.Figure()
    for name, part in stats.groupby("sampler", sort=False):
        x = part["layer"].to_numpy()
        mean, std = part["mean"].to_numpy(), part["std"].to_numpy()
        lower = np.maximum(mean - std, mean * 1e-3)  # a log axis cannot show <= 0
        color = sampler_color(name)
        fig.add_trace(go.Scatter(
            x=np.concatenate([x, x[::-1]]), y=np.concatenate([mean + std, lower[::-1]]),
            fill="toself", fillcolor=rgba(color, 0.18), line=dict(width=0), mode="lines",
            hoverinfo="skip", showlegend=False, legendgroup=name, name=f"{name} ± std"))
        fig.add_trace(go.Scatter(
            x=x, y=mean, mode="lines+markers", name=sampler_label(name), legendgroup=name,
            line=dict(color=color), marker=dict(size=5),
            customdata=np.stack([std, part["count"]], axis=1),
            hovertemplate=f"{sampler_label(name)} · L={depth} · layer %{{x}}<br>edge number "
                          "%{y:.3s} ± %{customdata[0]:.2s} over %{customdata[1]} runs"
                          "<extra></extra>"))
    base_layout(fig, f"Edge number per layer, L = {depth} (band: mean ± std over runs)")
    fig.update_xaxes(title="layer l (0 = input)", dtick=1 if depth <= 16 else None)
    fig.update_yaxes(title="edge number |Π_{i≤l}(A⁽ⁱ⁾+I)| (non-zeros, log scale)",
                     **log_axis(stats["mean"]))
    return fig


def men_table_compare(comp: pd.DataFrame, dataset: str) -> go.Figure:
    """The paper's MEN table beside the measured one: for each depth, a bar pair per
    sampler — paper (hatched) and measured (solid, ± std) — on a log axis.

    Args:
        comp (pandas.DataFrame): one row per ``(sampler, layers)`` with ``paper_men,
            measured_men, measured_std, runs, ratio``
            (:func:`dropedge_explorer.studies.sampling.men_comparison`).
        dataset (str): the dataset's name, for the title.
    """
    fig = go.Figure()
    for name, part in comp.groupby("sampler", sort=False):
        x = [f"L = {v}" for v in part["layers"]]
        color = sampler_color(name)
        fig.add_trace(go.Bar(
            x=x, y=part["paper_men"], name=f"{sampler_label(name)} · paper",
            marker=dict(color=rgba(color, 0.35), line=dict(color=color, width=1.5),
                        pattern=dict(shape="/", fgcolor=color)),
            hovertemplate=f"{sampler_label(name)} · %{{x}}<br>paper MEN %{{y:.2s}}<extra></extra>"))
        fig.add_trace(go.Bar(
            x=x, y=part["measured_men"], name=f"{sampler_label(name)} · measured",
            marker=dict(color=color),
            error_y=dict(type="data", array=part["measured_std"].fillna(0.0), visible=True),
            customdata=np.stack([part["ratio"], part["runs"].fillna(0)], axis=1),
            hovertemplate=f"{sampler_label(name)} · %{{x}}<br>measured MEN %{{y:.3s}} "
                          "(%{customdata[0]:.2f}× paper, %{customdata[1]} runs)<extra></extra>"))
    base_layout(fig, f"MEN: paper vs measured ({dataset})")
    fig.update_layout(barmode="group", bargap=0.2, bargroupgap=0.05)
    fig.update_xaxes(title="depth")
    fig.update_yaxes(title="MEN (non-zeros, log scale)",
                     **log_axis(pd.concat([comp["paper_men"], comp["measured_men"]])))
    return fig


# --------------------------------------------------------------------------------------
# Over-smoothing


#: The over-smoothing measures the demo draws, in panel order, with their hover names.
SMOOTHING_LABELS: dict[str, str] = {
    "subspace_distance": "relative distance to the over-smoothing subspace",
    "dirichlet_energy": "Dirichlet energy / its value at step 0",
}


def over_smoothing_demo(df: pd.DataFrame) -> go.Figure:
    """How representations collapse with propagation depth, per sampler (home page).

    Args:
        df (pandas.DataFrame): rows of :func:`dropedge_explorer.studies.sampling.smoothing_curves`
            (``sampler, step, measure, value``), or of
            :func:`~dropedge_explorer.studies.sampling.smoothing_spread` (with ``std, low, high,
            samples``: the mean is drawn with a min–max band).

    Returns:
        Two panels sharing the x axis (propagation step ``k``): the relative distance to
        the over-smoothing subspace and the relative Dirichlet energy, both log y. Per
        sampler the line comes first, then (with a spread) the band's upper and lower edge.
    """
    measures = [m for m in SMOOTHING_LABELS if m in set(df["measure"])]
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
                              f"{SMOOTHING_LABELS[measure]}: %{{y:.3g}}"
                              + (f" (mean of {int(run['samples'].max())} draws, ± %{{customdata[0]:.2g}};"
                                 " range %{customdata[1]:.3g} – %{customdata[2]:.3g})" if spread else "")
                              + "<extra></extra>"),
                row=1, col=col)
            if spread:  # the band: min to max over the draws (upper edge, then fill down to it)
                for edge, fill in (("high", None), ("low", "tonexty")):
                    fig.add_trace(go.Scatter(
                        x=run["step"], y=run[edge], mode="lines", line=dict(width=0),
                        fill=fill, fillcolor=rgba(sampler_color(name), 0.18), legendgroup=name,
                        showlegend=False, hoverinfo="skip", name=f"{sampler_label(name)} {edge}"),
                        row=1, col=col)
        fig.update_yaxes(row=1, col=col, **log_axis(pd.concat([part[c] for c in ("value", "low", "high")
                                                                 if c in part])),
                         title="‖H − P_M H‖ / ‖H‖ (ratio)" if measure == "subspace_distance"
                         else "E(H_k) / E(X) (ratio)")
        fig.update_xaxes(title="propagation step k (layers of Â)", row=1, col=col)
    base_layout(fig, "Over-smoothing: H_k = Â⁽ᵏ⁻¹⁾ ··· Â⁽⁰⁾ X collapses as k grows", height=430)
    return fig


# --------------------------------------------------------------------------------------
# Training, diagnostics, depth study, tuning
