"""Figures of training runs: loss and accuracy curves, per-layer diagnostics as epoch x
layer heatmaps, layer distances and MEN over training."""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dropedge_explorer.figures.style import (
    SAMPLER_COLORS,
    base_layout,
    log_axis,
    percent,
    run_styles,
)

__all__ = [
    "training_curves", "diagnostic_label", "diagnostics_heatmap",
    "layer_distance_curves", "men_over_training",
]

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


def training_curves(histories: Mapping[str, pd.DataFrame | Sequence[Mapping]],
                    samplers: Mapping[str, str] | None = None) -> go.Figure:
    """Loss and accuracy vs epoch, several runs overlaid, one colour per sampler.

    Args:
        histories (Mapping[str, pandas.DataFrame or Sequence[Mapping]]): ``{run label:
            events}``; events are a DataFrame or a list of dicts with ``epoch`` and any of
            ``train_loss`` (or ``loss``), ``val_loss``, ``train_acc``, ``val_acc``,
            ``test_acc`` (fractions or %) — e.g. the trainer's whole event stream (only
            ``type == "epoch"`` events are used).
        samplers (Mapping[str, str], optional): ``{run label: sampler}`` for the colours;
            ``None``: the events' ``sampler`` column, else the label's first word when it is a
            sampler name. (default: :obj:`None`)

    Returns:
        Two panels: loss (train solid, validation dashed) and accuracy (train solid,
        validation dashed, test dotted).

    Example:
        >>> events = [{"epoch": e, "train_loss": 1.0 / e, "val_acc": 0.5 + e / 100} for e in (1, 2, 3)]
        >>> fig = training_curves({"dropedge++ seed 0": events})
        >>> [[round(float(v), 2) for v in t.y] for t in fig.data]  # train loss; val_acc in %
        [[1.0, 0.5, 0.33], [51.0, 52.0, 53.0]]
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
                y = df[key].astype(float) if col == 1 else percent(df[key])
                unit = "" if col == 1 else "%"
                fig.add_trace(go.Scatter(
                    x=df["epoch"], y=y, mode="lines", name=str(label), legendgroup=str(label),
                    showlegend=first, line=dict(color=color, dash=dash, width=1.6),
                    hovertemplate=f"{label} · epoch %{{x}}<br>{split} {key.split('_')[1]} "
                                  f"%{{y:.3f}}{unit}<extra></extra>"), row=1, col=col)
                first = False
    base_layout(fig, "Training curves (solid: train, dashed: validation, dotted: test)",
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
    """A diagnostic's name in words (``"dirichlet"`` -> ``"Dirichlet energy"``).

    Args:
        key (str): the diagnostic's key in the trainer's events.

    Example:
        >>> diagnostic_label("dirichlet")
        'Dirichlet energy'
    """
    return DIAGNOSTIC_LABELS.get(key, str(key).replace("_", " "))


def diagnostics_heatmap(diag_events: pd.DataFrame | Sequence[Mapping], key: str = "dirichlet",
                        log: bool = True) -> go.Figure:
    """A per-layer diagnostic over training as an epoch × layer heatmap.

    Args:
        diag_events (pandas.DataFrame or Sequence[Mapping]): events with ``epoch`` and
            ``key`` = a per-layer sequence (the trainer's ``diagnostics`` events:
            ``dirichlet`` — Dirichlet energy of each hidden output —, ``mad``,
            ``subspace_distance``, ``layer_distances``); other event types in the stream are
            skipped.
        key (str, optional): which diagnostic. (default: :obj:`"dirichlet"`)
        log (bool, optional): colour by ``log10`` of the value (non-positive values left
            blank). (default: :obj:`True`)
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
    base_layout(fig, f"{name[0].upper()}{name[1:]} per layer over training")
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
        diag_events (pandas.DataFrame or Sequence[Mapping] or Mapping[str, ...]): one run's
            events (``epoch`` and ``key`` = ``[D^(1), ...]``, the trainer's ``diagnostics``
            events): one line per ``l`` plus the paper's average "Distance" (bold; the events'
            ``average_distance`` when given); or ``{run label: events}``: the average Distance
            of each run, coloured by sampler (as in :func:`training_curves`).
        key (str, optional): the events' column of per-layer distances.
            (default: :obj:`"layer_distances"`)
        samplers (Mapping[str, str], optional): ``{run label: sampler}`` for the colours of
            several runs (as in :func:`training_curves`). (default: :obj:`None`)
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
        title = "Layer distances over training<br><sup>bold: the paper's average Distance</sup>"
    base_layout(fig, title)
    fig.update_xaxes(title="epoch")
    fig.update_yaxes(title="layer distance ‖H⁽ˡ⁺¹⁾ − H⁽ˡ⁾‖_F (Frobenius norm)",
                     **log_axis(values or [1.0]))
    return fig


def men_over_training(diag_events: Mapping[str, pd.DataFrame | Sequence[Mapping]],
                      samplers: Mapping[str, str] | None = None) -> go.Figure:
    """MEN of each epoch's sampled layers over training, several runs overlaid.

    Args:
        diag_events (Mapping[str, pandas.DataFrame or Sequence[Mapping]]): ``{run label:
            events}`` with ``epoch`` and ``men`` (the trainer's ``diagnostics`` events; other
            event types are skipped); a ``men_stderr`` column (estimated MEN on big graphs) is
            drawn as error bars.
        samplers (Mapping[str, str], optional): ``{run label: sampler}`` for the colours (as
            in :func:`training_curves`). (default: :obj:`None`)

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
    base_layout(fig, "MEN of each epoch's sample (Definition 1)")
    fig.update_xaxes(title="epoch")
    # a linear axis from 0: the gap between samplers reads at its size, and the few-percent
    # wobble of one sampler's draws from epoch to epoch stays small (a zoomed axis made it
    # look like large swings)
    fig.update_yaxes(title="MEN (node pairs)", rangemode="tozero",
                     range=[0, 1.08 * max(values)] if values else None)
    return fig
