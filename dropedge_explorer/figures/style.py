"""The look every figure shares: one colour and label per sampler, per backbone and per
class, run dashes and shades, the base layout and the depth / log axes."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

__all__ = [
    "SAMPLER_COLORS", "SAMPLER_LABELS", "CLASS_COLORS", "WEIGHT_COLORS", "DROPPED_COLOR",
    "KEPT_UNIFORM_WIDTH", "BACKBONE_LABELS", "sampler_color", "sampler_label", "rgba",
    "base_layout", "log_axis", "DEPTH_SPREAD", "depth_axis", "shade",
    "run_styles", "percent",
]

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
                                   "appnp_star": "APPNP*"}
_FALLBACK = ("#8c564b", "#e377c2", "#bcbd22", "#393b79", "#637939", "#843c39")
TEMPLATE = "plotly_white"


def sampler_color(name: str) -> str:
    """The colour of sampler ``name`` (:data:`SAMPLER_COLORS`; a stable fallback for
    other names, e.g. ``"independent/kernel"``).

    Args:
        name (str): the sampler's name.
    """
    key = str(name).lower()
    if key in SAMPLER_COLORS:
        return SAMPLER_COLORS[key]
    return _FALLBACK[sum(map(ord, key)) % len(_FALLBACK)]


def sampler_label(name: str) -> str:
    """The paper's spelling of a sampler name (``"dropedge++"`` -> ``"DropEdge++"``).

    Args:
        name (str): the sampler's name in our spelling.

    Example:
        >>> sampler_label("dropedge++")
        'DropEdge++'
    """
    return SAMPLER_LABELS.get(str(name).lower(), str(name))


def rgba(color: str, alpha: float) -> str:
    """``#rrggbb`` with opacity ``alpha``, as Plotly's ``rgba(r,g,b,a)`` (bands, hatched bars).

    Args:
        color (str): ``#rrggbb``.
        alpha (float): the opacity, in ``[0, 1]``.

    Example:
        >>> rgba("#ff8000", 0.5)
        'rgba(255,128,0,0.5)'
    """
    c = color.lstrip("#")
    r, g, b = (int(c[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


def base_layout(fig: go.Figure, title: str, height: int = 420, legend: str = "bottom") -> go.Figure:
    """Title top left; the legend below the plot (``"bottom"``: out of the title's and the
    subplot titles' way, whatever the width, and under the x-axis title: at the figure's
    bottom edge, in a 100 px margin; placed at a share of the plot's height it met the
    axis title after a window resize) or at the ``"right"``.

    Args:
        fig (plotly.graph_objects.Figure): the figure, changed in place and returned.
        title (str): the title.
        height (int, optional): the height in pixels. (default: :obj:`420`)
        legend (str, optional): ``"bottom"`` or ``"right"``. (default: :obj:`"bottom"`)
    """
    place = (dict(orientation="h", yref="container", yanchor="bottom", y=0.0, x=0.0, xanchor="left")
             if legend == "bottom" else
             dict(orientation="v", yanchor="top", y=1.0, x=1.02, xanchor="left"))
    fig.update_layout(title=dict(text=title, x=0.0, xanchor="left"), template=TEMPLATE,
                      height=height, margin=dict(l=60, r=20, t=60, b=100 if legend == "bottom" else 50),
                      legend=place)
    return fig


def tick_text(t: float) -> str:
    return f"{int(t):,}" if 1 <= t < 1e7 and t == int(t) else f"{t:.3g}"


def log_axis(values) -> dict:
    """A log axis whose every tick has its full label: every power of 10 when the data
    span two decades or more, 1, 2 and 5 times them over one to two decades (Plotly's own
    ``dtick="D2"`` labels those "2" and "5", so "1000, 5, 2, 100, 5" read as numbers).

    Args:
        values (array-like): the positive values the axis shows.
    """
    v = np.asarray(pd.Series(values, dtype=float).dropna())
    v = v[np.isfinite(v) & (v > 0)]
    span = v.max() / v.min() if v.size else 1.0
    if span >= 100:
        return dict(type="log", dtick=1, exponentformat="power")
    if span >= 10:
        low, high = np.floor(np.log10(v.min())), np.ceil(np.log10(v.max()))
        ticks = [float(m * 10.0 ** k) for k in np.arange(low, high + 1) for m in (1, 2, 5)]
        ticks = [t for t in ticks if v.min() / 1.5 <= t <= v.max() * 1.5]
        return dict(type="log", tickvals=ticks, ticktext=[tick_text(t) for t in ticks],
                    minor=dict(showgrid=False))
    if not v.size:
        return dict(type="log", dtick=1, exponentformat="power")
    # less than a decade: Plotly labels every digit (2, 3, ... 9) in small type; five ticks
    # at round values between the ends read better
    ticks = sorted({float(f"{t:.2g}") for t in np.geomspace(v.min(), v.max(), 5)})
    return dict(type="log", tickvals=ticks, ticktext=[f"{t:.3g}" for t in ticks])


#: :func:`accuracy_vs_depth`: samplers at one depth are this fraction of an octave apart.
DEPTH_SPREAD = 0.08


def depth_axis(values: Sequence[int]) -> dict:
    """A log2 x axis with the depths as ticks (2, 4, 8, ...).

    Args:
        values (Sequence[int]): the depths shown.

    Example:
        >>> depth_axis([2, 8, 4])
        {'type': 'log', 'tickvals': [2, 4, 8], 'ticktext': ['2', '4', '8']}
    """
    ticks = sorted({int(v) for v in values})
    return dict(type="log", tickvals=ticks, ticktext=[str(t) for t in ticks])


# --------------------------------------------------------------------------------------
# Graph drawings


RUN_DASHES: tuple[str, ...] = ("solid", "dash", "dot", "dashdot", "longdash")


def shade(color: str, k: int) -> str:
    """The ``k``-th shade of ``color``: ``k = 0`` the colour itself, odd ``k`` darker,
    even ``k`` lighter, each step further from it (``#rrggbb`` out).

    Args:
        color (str): ``#rrggbb``.
        k (int): the shade's number (0: the colour itself).

    Example:
        >>> shade("#808080", 0), shade("#808080", 1), shade("#808080", 2)
        ('#808080', '#5a5a5a', '#a6a6a6')
    """
    c = color.lstrip("#")
    rgb = np.array([int(c[i:i + 2], 16) for i in (0, 2, 4)], dtype=float)
    if k > 0:
        step = min(0.3 * ((k + 1) // 2), 0.75)
        rgb = rgb * (1 - step) if k % 2 else rgb + (255 - rgb) * step
    return "#" + "".join(f"{int(round(v)):02x}" for v in rgb)


def run_styles(run_samplers: Sequence[tuple[str, str]]) -> dict[str, tuple[str, str]]:
    """``{run label: (colour, dash)}`` for runs in order: the sampler's colour, and for the
    second, third ... run of one sampler a darker/lighter shade and another dash, so two
    runs of one sampler never look alike.

    Args:
        run_samplers (Sequence[tuple[str, str]]): ``(run label, sampler)`` per run, in order.
    """
    seen: dict[str, int] = {}
    out = {}
    for label, sampler in run_samplers:
        k = seen.get(sampler, 0)
        seen[sampler] = k + 1
        out[label] = (shade(sampler_color(sampler), k), RUN_DASHES[k % len(RUN_DASHES)])
    return out


def percent(values: pd.Series) -> pd.Series:
    """Accuracies as percent (fractions in [0, 1] are scaled by 100).

    Args:
        values (pandas.Series): accuracies, fractions or %.

    Example:
        >>> percent(pd.Series([0.8, 0.9])).tolist(), percent(pd.Series([80.0, 0.9])).tolist()
        ([80.0, 90.0], [80.0, 0.9])
    """
    v = values.astype(float)
    return v * 100.0 if v.dropna().le(1.0).all() else v
