"""Figures of studies over many runs: accuracy against depth (the Depth study) and the
tuning surface and history."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from dropedge_core.models import ALIASES
from plotly.subplots import make_subplots

from dropedge_explorer.figures.style import (
    BACKBONE_LABELS,
    DEPTH_SPREAD,
    DROPPED_COLOR,
    SAMPLER_COLORS,
    base_layout,
    depth_axis,
    percent,
    sampler_color,
    sampler_label,
)

__all__ = ["accuracy_vs_depth", "tuning_surface", "tuning_history"]


def _backbone_key(name: str) -> str:
    key = str(name).strip().lower()
    return ALIASES.get(key, key)


def accuracy_vs_depth(df: pd.DataFrame, paper_df: pd.DataFrame | None = None,
                      dataset: str | None = None, setting: str | None = None,
                      backbones: Sequence[str] | None = None, note: str | None = None,
                      spread: float = DEPTH_SPREAD) -> go.Figure:
    """Test accuracy vs depth, one panel per backbone, mean ± std over seeds per sampler;
    the paper's numbers overlaid as dashed lines with open markers.

    Args:
        df (pandas.DataFrame): one row per run: ``backbone, sampler, layers`` and
            ``test_acc`` (or ``test_accuracy``), fractions or %; a ``seed`` column is optional.
        paper_df (pandas.DataFrame, optional):
            :func:`dropedge_explorer.data.reference.paper_accuracy_by_depth` rows; filtered to
            ``dataset`` and ``setting`` when given, and to the backbones present in ``df`` when
            it has rows. (default: :obj:`None`)
        dataset (str, optional): the dataset key of the paper's rows, e.g. ``"cora"``.
            (default: :obj:`None`)
        setting (str, optional): the split of the paper's rows, ``"semi"`` or ``"full"``.
            (default: :obj:`None`)
        backbones (Sequence[str], optional): the panels, in this order (runs and paper rows of
            other backbones are left out); ``None``: the backbones of ``df`` and then of
            ``paper_df``. (default: :obj:`None`)
        note (str, optional): added to the title (e.g. that the runs shown have other
            settings). (default: :obj:`None`)
        spread (float, optional): the samplers' points at one depth are set apart by this
            fraction of an octave each (x = L · 2^offset, centred on L), so that they do not
            hide each other; hover and ticks name the true depth.
            (default: :obj:`DEPTH_SPREAD`)
    """
    measured, paper, keys = _panels(df, paper_df, dataset, setting, backbones)
    fig = make_subplots(rows=1, cols=len(keys), shared_yaxes=True,
                        subplot_titles=[BACKBONE_LABELS.get(k, k) for k in keys],
                        horizontal_spacing=0.04)
    shown: set[str] = set()
    order = list(dict.fromkeys(list(measured["sampler"]) + (list(paper["sampler"]) if paper is not None
                                                            else [])))
    shift = {name: 2.0 ** (spread * (i - (len(order) - 1) / 2)) for i, name in enumerate(order)}
    for col, bk in enumerate(keys, start=1):
        part = measured[measured["backbone_key"] == bk]
        theirs = paper[paper["backbone_key"] == bk] if paper is not None else None
        for trace in [*_measured_traces(part, bk, shift, shown), *_paper_traces(theirs, bk, shift, shown)]:
            fig.add_trace(trace, row=1, col=col)
        depths = list(part["layers"]) + (list(theirs["layers"]) if theirs is not None else [])
        fig.update_xaxes(title="depth L (layers)", row=1, col=col, **depth_axis(depths or [2]))
    fig.update_yaxes(title="test accuracy (%)", row=1, col=1)
    with_paper = paper is not None and len(paper) > 0
    base_layout(fig, "Test accuracy vs depth (mean ± std over seeds"
                + ("; dashed: paper)" if with_paper else ")")
                + (f"<br><sup>{note}</sup>" if note else ""), height=460 if note else 440)
    return fig.update_layout(margin=dict(t=100 if note else 85))  # the title above the panels' titles


def _panels(df: pd.DataFrame, paper_df: pd.DataFrame | None, dataset: str | None, setting: str | None,
            backbones: Sequence[str] | None) -> tuple[pd.DataFrame, pd.DataFrame | None, list[str]]:
    """The runs (``backbone_key``, accuracy in % as ``acc``), the paper's rows kept (see
    :func:`accuracy_vs_depth`) and the panels' backbone keys, in order."""
    value = "test_acc" if "test_acc" in df else "test_accuracy"
    if df.empty:  # nothing measured yet: the paper's numbers alone
        measured = pd.DataFrame({"backbone_key": pd.Series(dtype=str), "sampler": pd.Series(dtype=str),
                                 "layers": pd.Series(dtype=int), "acc": pd.Series(dtype=float)})
    else:
        measured = df.assign(backbone_key=df["backbone"].map(_backbone_key), acc=percent(df[value]))
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
    return measured, paper, keys or ["gcn"]


def _measured_traces(part: pd.DataFrame, bk: str, shift: dict, shown: set[str]) -> list[go.Scatter]:
    """One panel's runs: mean ± std over seeds per sampler and depth (legend once per sampler)."""
    stats = (part.groupby(["sampler", "layers"], sort=False)["acc"]
                 .agg(["mean", "std", "count"]).reset_index().fillna({"std": 0.0}))
    out = []
    for name, s in stats.groupby("sampler", sort=False):
        s = s.sort_values("layers")
        out.append(go.Scatter(
            x=s["layers"] * shift[name], y=s["mean"], mode="lines+markers", name=sampler_label(name),
            legendgroup=name, showlegend=name not in shown,
            line=dict(color=sampler_color(name)),
            error_y=dict(type="data", array=s["std"], visible=True),
            customdata=np.stack([s["std"], s["count"], s["layers"]], axis=1),
            hovertemplate=f"{BACKBONE_LABELS.get(bk, bk)} · {sampler_label(name)} · "
                          "L=%{customdata[2]}<br>test accuracy %{y:.1f}% ± %{customdata[0]:.1f} "
                          "over %{customdata[1]} seeds<extra></extra>"))
        shown.add(name)
    return out


def _paper_traces(paper: pd.DataFrame | None, bk: str, shift: dict, shown: set[str]) -> list[go.Scatter]:
    """One panel's paper rows: dashed lines with open markers, one per sampler."""
    out = []
    for name, p in (paper.groupby("sampler", sort=False) if paper is not None else []):
        p = p.sort_values("layers")
        out.append(go.Scatter(
            x=p["layers"] * shift[name], y=p["test_accuracy"], mode="lines+markers",
            customdata=p["layers"],
            name=f"{sampler_label(name)} (paper)", legendgroup=f"{name} paper",
            showlegend=f"{name} paper" not in shown,
            line=dict(color=sampler_color(name), dash="dash", width=1.2),
            marker=dict(symbol="circle-open", size=8),
            hovertemplate=f"{BACKBONE_LABELS.get(bk, bk)} · {sampler_label(name)} · "
                          "L=%{customdata}<br>paper: %{y:.1f}%<extra></extra>"))
        shown.add(f"{name} paper")
    return out


def tuning_surface(trials: pd.DataFrame, x: str = "p_min", y: str = "p_max",
                   value: str = "value") -> go.Figure:
    """Validation accuracy over (``p_min``, ``p_max``): an interpolated contour of the
    trials plus the trials themselves (markers) and the best one (star).

    Args:
        trials (pandas.DataFrame): one row per finished trial with columns ``x``, ``y``,
            ``value`` (fraction or %), optionally ``number``.
        x (str, optional): the column on the x axis. (default: :obj:`"p_min"`)
        y (str, optional): the column on the y axis. (default: :obj:`"p_max"`)
        value (str, optional): the column coloured. (default: :obj:`"value"`)
    """
    t = trials.dropna(subset=[x, y, value])
    z = percent(t[value]) if len(t) else t[value]
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
    base_layout(fig, "Validation accuracy over the keep rates")
    fig.update_xaxes(title=f"{x} (keep rate, fraction of edges)", range=[0, 1])
    fig.update_yaxes(title=f"{y} (keep rate, fraction of edges)", range=[0, 1])
    return fig


def tuning_history(trials: pd.DataFrame, value: str = "val_acc") -> go.Figure:
    """A study's progress: each finished trial's validation accuracy and the best so far.

    Args:
        trials (pandas.DataFrame): one row per trial
            (:func:`dropedge_explorer.studies.tuning.trials_frame`): ``trial`` (number), ``state``
            and ``value`` (fraction or %); pruned or failed trials (no value) are marked on the
            axis.
        value (str, optional): the column of the validation accuracy.
            (default: :obj:`"val_acc"`)
    """
    t = trials.sort_values("trial") if "trial" in trials else trials
    done = t.dropna(subset=[value])
    fig = go.Figure()
    z = percent(done[value]) if len(done) else done[value].astype(float)
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
    base_layout(fig, "Study progress: validation accuracy per trial")
    fig.update_xaxes(title="trial number")
    fig.update_yaxes(title="validation accuracy (%)")
    return fig
