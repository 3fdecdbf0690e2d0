"""Figure builders, read back from the figures' data (no Streamlit, no browser)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
import torch
from dropedge_core import samplers

from dropedge_explorer import figures
from dropedge_explorer.data import reference
from dropedge_explorer.figures import SAMPLER_COLORS
from dropedge_explorer.studies.edge_drawing import EdgeDrawing


def _segments(trace) -> int:
    """Edges in a None-separated line trace (each is x0, x1, None)."""
    x = list(trace.x or [])
    assert len(x) % 3 == 0
    assert all(v is None for v in x[2::3])
    return len(x) // 3


def _edge_traces(fig):
    dropped = [t for t in fig.data if t.name.startswith("dropped")]
    kept = [t for t in fig.data if t.name.startswith("kept")]
    return dropped, kept


def test_one_colour_per_sampler():
    assert set(SAMPLER_COLORS) == set(samplers.NAMES)
    assert len(set(SAMPLER_COLORS.values())) == len(SAMPLER_COLORS)
    assert figures.sampler_color("dropedge++") == SAMPLER_COLORS["dropedge++"]
    assert figures.sampler_color("independent/kernel").startswith("#")  # stable fallback
    assert figures.sampler_label("dropedge++") == "DropEdge++"


def _drawing(weights=None, bins=(0, 0, 0), labels=("kept",)) -> EdgeDrawing:
    """A hand-made drawing: nodes 10, 11, 12, 13 on a unit square (classes 0, 0, 1, 1);
    edges 10-11 (intra), 10-12, 11-13 (inter); layer 0 keeps 10-11 only, layer 1 all."""
    nodes = pd.DataFrame({"node": [10, 11, 12, 13], "x": [0.0, 1.0, 0.0, 1.0],
                          "y": [0.0, 0.0, 1.0, 1.0], "label": [0, 0, 1, 1], "degree": [2, 2, 1, 1]})
    edges = pd.DataFrame({"u": [10, 10, 11], "v": [11, 12, 13], "x0": [0.0, 0.0, 1.0],
                          "y0": [0.0, 0.0, 0.0], "x1": [1.0, 0.0, 1.0], "y1": [0.0, 1.0, 1.0],
                          "intra": [True, False, False],
                          "weight": [np.nan] * 3 if weights is None else weights, "bin": list(bins)})
    kept = np.array([[True, False, False], [True, True, True]])
    kept_degree = np.array([[1, 1, 0, 0], [2, 2, 1, 1]])
    return EdgeDrawing(nodes, edges, kept, kept_degree, labels, weights is not None)


def test_layer_edges_draws_the_kept_and_dropped_edges_of_a_layer():
    fig = figures.layer_edges(_drawing(), 0, sampler="lid")
    dropped, kept = _edge_traces(fig)
    assert len(dropped) == 1 and len(kept) == 1
    assert _segments(kept[0]) == 1 and _segments(dropped[0]) == 2
    assert list(kept[0].x) == [0.0, 1.0, None] and list(kept[0].y) == [0.0, 0.0, None]  # 10-11
    assert kept[0].line.color == SAMPLER_COLORS["lid"]
    assert "layer 0 of 2" in fig.layout.title.text and "1 of 3 drawn edges kept" in fig.layout.title.text
    hover = next(t for t in fig.data if t.name == "edges (hover)")
    assert list(hover.x) == [0.5, 0.0, 1.0] and list(hover.y) == [0.0, 0.5, 0.5]  # midpoints
    assert list(hover.text) == ["kept · intra-class edge", "dropped · inter-class edge",
                                "dropped · inter-class edge"]
    assert "kernel weight" not in hover.hovertemplate
    classes = [t for t in fig.data if t.name.startswith("class")]
    assert [t.name for t in classes] == ["class 0", "class 1"]
    # customdata: node id, degree, kept degree at the layer
    assert classes[0].customdata.tolist() == [[10, 2, 1], [11, 2, 1]]
    assert classes[1].customdata.tolist() == [[12, 1, 0], [13, 1, 0]]
    top = figures.layer_edges(_drawing(), 1)
    assert [_segments(t) for t in _edge_traces(top)[1]] == [3]
    assert [t for t in top.data if t.name == "class 1"][0].customdata.tolist() == [[12, 1, 1], [13, 1, 1]]


def test_layer_edges_colours_kept_edges_by_weight_bin():
    labels = ("kept, weight 0–0.5", "kept, weight 0.5–0.9")
    fig = figures.layer_edges(_drawing([0.1, 0.5, 0.9], (0, 0, 1), labels), 1, sampler="dropedge++")
    _, kept = _edge_traces(fig)
    assert [t.name for t in kept] == [f"{labels[0]} (2)", f"{labels[1]} (1)"]
    assert [t.line.color for t in kept] == [figures.WEIGHT_COLORS[0], figures.WEIGHT_COLORS[-1]]
    assert kept[0].line.width < kept[1].line.width  # heavier: wider
    hover = next(t for t in fig.data if t.name == "edges (hover)")
    assert "kernel weight" in hover.hovertemplate
    assert hover.customdata.tolist() == [[10, 11, 0.1], [10, 12, 0.5], [11, 13, 0.9]]
    one = figures.layer_edges(_drawing([0.2] * 3, (0, 0, 0), ("kept (all kernel weights equal)",)), 1,
                              sampler="fd")
    assert [t.line.color for t in _edge_traces(one)[1]] == [SAMPLER_COLORS["fd"]]


def test_layer_edges_rejects_a_layer_out_of_range():
    with pytest.raises(ValueError, match=r"layer must be in \[0, 1\] \(got 2\)"):
        figures.layer_edges(_drawing(), 2)


def test_layer_edges_animation_frames():
    fig = figures.layer_edges_animation(_drawing(), sampler="lid")
    assert len(fig.frames) == 2 and len(fig.layout.sliders[0].steps) == 2
    assert {len(f.data) for f in fig.frames} == {len(fig.data)}  # same traces in every frame
    for layer, frame in enumerate(fig.frames):
        kept = [t for t in frame.data if t.name.startswith("kept")]
        assert _segments(kept[0]) == [1, 3][layer]
        assert frame.name == str(layer)


def test_keep_counts_bar():
    counts = {"lid": [2, 5, 9], "dropedge": torch.tensor([5, 5, 5])}
    fig = figures.keep_counts_bar(counts, 10)
    assert [t.name for t in fig.data] == ["LID", "DropEdge"]
    assert list(fig.data[0].y) == [2, 5, 9] and list(fig.data[1].y) == [5, 5, 5]
    assert [t.marker.color for t in fig.data] == [SAMPLER_COLORS["lid"], SAMPLER_COLORS["dropedge"]]
    assert "edges kept" in fig.data[0].hovertemplate
    assert "layer" in fig.layout.xaxis.title.text
    assert "(count)" in fig.layout.yaxis.title.text


def test_nesting_heatmap_draws_the_matrix_it_is_given():
    z = np.array([[1.0, 1.0, 1.0], [0.5, 1.0, 1.0], [np.nan, 0.25, 1.0]])
    fig = figures.nesting_heatmap(z, "lid")
    np.testing.assert_array_equal(np.array(fig.data[0].z, dtype=float), z)
    assert list(fig.data[0].text[1]) == ["0.50", "1.00", "1.00"] and fig.data[0].text[2][0] == ""
    assert "LID" in fig.layout.title.text
    assert "layer" in fig.layout.xaxis.title.text and "layer" in fig.layout.yaxis.title.text


def test_intra_inter_share():
    shares = pd.DataFrame({"sampler": ["lid"] * 4 + ["dropedge++"] * 4, "layer": [0, 1, 0, 1] * 2,
                           "kind": ["intra", "intra", "inter", "inter"] * 2,
                           "kept": [1, 2, 3, 4, 5, 6, 1, 2], "total": [8, 8, 4, 4, 8, 8, 4, 4]})
    shares["share"] = shares["kept"] / shares["total"]
    fig = figures.intra_inter_share(shares)
    assert len(fig.data) == 4
    colors = [SAMPLER_COLORS["lid"]] * 2 + [SAMPLER_COLORS["dropedge++"]] * 2
    assert [t.line.color for t in fig.data] == colors
    assert [t.line.dash for t in fig.data] == ["solid", "dash"] * 2
    assert np.allclose(np.asarray(fig.data[2].y, dtype=float), [62.5, 75.0])  # 5/8, 6/8 in %
    assert fig.data[3].name == "DropEdge++ · inter-class (4 edges)"
    assert fig.data[1].customdata.tolist() == [[3, 4], [4, 4]]
    assert "%" in fig.layout.yaxis.title.text


def test_men_vs_depth():
    summary = pd.DataFrame({"sampler": ["lid", "lid", "ldd", "ldd"], "layers": [2, 4, 2, 4],
                            "men_mean": [10.0, 30.0, 20.0, 90.0], "men_std": [1.0, 3.0, 0.0, 9.0],
                            "runs": [3, 3, 3, 3]})
    paper = pd.DataFrame({"sampler": ["lid", "ldd"], "layers": [4, 4], "men": [25.0, 80.0]})
    fig = figures.men_vs_depth(summary, paper)
    assert [t.name for t in fig.data] == ["LID", "LDD", "LID (paper)", "LDD (paper)"]
    assert list(fig.data[0].x) == [2, 4] and list(fig.data[0].y) == [10.0, 30.0]
    assert list(fig.data[1].error_y.array) == [0.0, 9.0]
    assert fig.data[0].line.color == SAMPLER_COLORS["lid"]
    assert list(fig.data[3].y) == [80.0] and fig.data[3].marker.symbol == "diamond-open"
    assert fig.layout.yaxis.type == "log" and fig.layout.xaxis.type == "log"
    assert "MEN" in fig.layout.yaxis.title.text and "layers" in fig.layout.xaxis.title.text


def test_edge_number_curves():
    stats = pd.DataFrame({"sampler": ["lid"] * 3 + ["ldd"] * 3, "layer": [0, 1, 2] * 2,
                          "mean": [4.0, 10.0, 30.0, 8.0, 20.0, 40.0], "std": [1.0, 2.0, 3.0, 0, 0, 0],
                          "count": [5] * 6, "layers": 3})
    fig = figures.edge_number_curves(stats)
    assert len(fig.data) == 4  # a band and a mean line per sampler
    bands, lines = fig.data[0::2], fig.data[1::2]
    assert all(b.fill == "toself" for b in bands)
    assert list(lines[0].y) == [4.0, 10.0, 30.0] and list(lines[0].x) == [0, 1, 2]
    # the band: mean + std out, then mean - std back
    assert list(bands[0].y) == [5.0, 12.0, 33.0, 27.0, 8.0, 3.0]
    assert fig.layout.yaxis.type == "log"
    assert "L = 3" in fig.layout.title.text


def test_men_table_compare():
    comp = pd.DataFrame({"sampler": ["dropedge", "dropedge", "lid"], "layers": [4, 8, 4],
                         "paper_men": [9.0e4, 6.0e5, 5.7e4], "measured_men": [9.2e4, np.nan, 5.5e4],
                         "measured_std": [2e3, np.nan, 1e3], "runs": [10, np.nan, 10],
                         "ratio": [9.2 / 9.0, np.nan, 5.5 / 5.7]})
    fig = figures.men_table_compare(comp, "cora")
    assert len(fig.data) == 4  # paper + measured per sampler
    assert [t.name for t in fig.data] == ["DropEdge · paper", "DropEdge · measured", "LID · paper",
                                          "LID · measured"]
    assert list(fig.data[0].y) == [9.0e4, 6.0e5] and list(fig.data[0].x) == ["L = 4", "L = 8"]
    assert list(fig.data[1].error_y.array) == [2e3, 0.0]  # not measured: no error bar
    assert fig.layout.barmode == "group" and fig.layout.yaxis.type == "log"
    assert "cora" in fig.layout.title.text


def test_over_smoothing_demo():
    rows = [{"sampler": name, "step": k, "measure": measure, "value": base ** k}
            for name, base in (("nodrop", 0.5), ("dropedge", 0.8), ("dropedge++", 0.9))
            for measure in ("subspace_distance", "dirichlet_energy") for k in range(4)]
    fig = figures.over_smoothing_demo(pd.DataFrame(rows))
    assert len(fig.data) == 6  # 3 samplers x 2 measures
    assert [t.showlegend for t in fig.data] == [True] * 3 + [False] * 3
    assert fig.data[0].line.color == SAMPLER_COLORS["nodrop"]
    assert list(fig.data[0].y) == [1.0, 0.5, 0.25, 0.125] and list(fig.data[0].x) == [0, 1, 2, 3]
    assert "propagation step" in fig.layout.xaxis.title.text
    assert "subspace" in fig.data[0].hovertemplate and "Dirichlet" in fig.data[3].hovertemplate


def _history(epochs=10, scale=1.0):
    return [{"epoch": e, "train_loss": scale / (e + 1), "val_loss": 1.2 * scale / (e + 1),
             "train_acc": e / 10, "val_acc": e / 12, "test_acc": e / 13} for e in range(epochs)]


def test_training_curves():
    # the trainer's stream: start / epoch / diagnostics / end events; only epochs are drawn
    stream = [{"type": "start", "device": "cpu"}] + [dict(e, type="epoch") for e in _history()] \
        + [{"type": "diagnostics", "epoch": 9, "dirichlet": [1.0]}, {"type": "end", "test_acc": 0.8}]
    fig = figures.training_curves({"nodrop seed 0": stream, "dropedge++ seed 0": _history(scale=0.5)})
    assert len(fig.data) == 10  # 2 losses + 3 accuracies per run
    assert {t.line.color for t in fig.data[:5]} == {SAMPLER_COLORS["nodrop"]}
    assert {t.line.color for t in fig.data[5:]} == {SAMPLER_COLORS["dropedge++"]}
    assert max(fig.data[2].y) == pytest.approx(90.0)  # fractions shown as %
    assert sum(t.showlegend for t in fig.data) == 2
    assert "accuracy (%)" in fig.layout.yaxis2.title.text and fig.layout.xaxis.title.text == "epoch"


def _diag(epochs=(0, 5, 10), layers=6):
    return [{"epoch": e, "dirichlet": list(np.exp(-np.arange(layers) * (e + 1) / 5)),
             "layer_distances": list(np.linspace(1, 2, layers - 2) / (e + 1))} for e in epochs]


def test_diagnostics_heatmap():
    fig = figures.diagnostics_heatmap(_diag(), key="dirichlet")
    z = np.asarray(fig.data[0].z, dtype=float)
    assert z.shape == (6, 3)  # layer x epoch
    assert np.allclose(z[:, 0], np.log10(np.exp(-np.arange(6) / 5)))
    assert list(fig.data[0].x) == [0, 5, 10]
    assert fig.layout.xaxis.title.text == "epoch" and "layer" in fig.layout.yaxis.title.text
    with pytest.raises(KeyError):
        figures.diagnostics_heatmap(_diag(), key="mad")


def test_layer_distance_curves():
    one = figures.layer_distance_curves(_diag())
    assert len(one.data) == 5  # D^(1..4) + the average
    avg = np.asarray(one.data[-1].y, dtype=float)
    assert avg[0] == pytest.approx(np.mean(np.linspace(1, 2, 4)[:3]))  # l = 1 .. L-3
    many = figures.layer_distance_curves({"lid": _diag(), "dropedge": _diag()})
    assert [t.line.color for t in many.data] == [SAMPLER_COLORS["lid"], SAMPLER_COLORS["dropedge"]]


def test_accuracy_vs_depth_with_paper():
    rows = [{"backbone": b, "sampler": s, "layers": L, "seed": seed,
             "test_acc": 0.8 - 0.01 * L + 0.01 * seed}
            for b in ("gcn", "resgcn") for s in ("nodrop", "dropedge++") for L in (2, 4, 8)
            for seed in range(3)]
    fig = figures.accuracy_vs_depth(pd.DataFrame(rows), reference.paper_accuracy_by_depth(),
                                    dataset="cora", setting="semi")
    measured = [t for t in fig.data if "paper" not in t.name]
    paper = [t for t in fig.data if "paper" in t.name]
    assert len(measured) == 4 and len(paper) == 2 * 3  # 3 paper samplers per backbone
    assert measured[0].y[0] == pytest.approx(100 * (0.8 - 0.02 + 0.01))  # mean over seeds, in %
    assert measured[0].error_y.array[0] == pytest.approx(1.0)
    assert all(t.line.dash == "dash" for t in paper)
    assert fig.layout.yaxis.title.text == "test accuracy (%)"
    assert [a.text for a in fig.layout.annotations] == ["GCN", "ResGCN"]


def test_tuning_surface():
    rng = np.random.default_rng(0)
    trials = pd.DataFrame({"number": range(12), "p_min": rng.uniform(0, 0.5, 12),
                           "p_max": rng.uniform(0.5, 1, 12), "value": rng.uniform(0.6, 0.8, 12)})
    fig = figures.tuning_surface(trials)
    assert [type(t).__name__ for t in fig.data] == ["Contour", "Scatter", "Scatter"]
    best = fig.data[2]
    assert best.x[0] == trials["p_min"].iloc[int(trials["value"].argmax())]
    assert "p_min" in fig.layout.xaxis.title.text


def test_every_figure_serialises():
    """The app sends figures as JSON: every builder's output must encode."""
    figs = [figures.layer_edges(_drawing(), 0), figures.nesting_heatmap(np.eye(3)),
            figures.layer_edges_animation(_drawing([0.1, 0.5, 0.9], (0, 0, 1), ("a", "b")))]
    for fig in figs:
        assert isinstance(fig, go.Figure)
        assert fig.to_json()


def test_accuracy_vs_depth_before_any_run():
    """The depth-study page starts empty: the paper's numbers alone, one panel per backbone."""
    fig = figures.accuracy_vs_depth(pd.DataFrame(), reference.paper_accuracy_by_depth(),
                                    dataset="cora", setting="full")
    assert [a.text for a in fig.layout.annotations] == ["GCN", "ResGCN", "JKNet", "APPNP*"]
    assert fig.data and all("paper" in t.name for t in fig.data)


def test_men_over_training():
    events = {
        "#1 NoDrop": [{"type": "diagnostics", "epoch": e, "men": 900.0} for e in (5, 10)],
        "#2 DropEdge++": [{"type": "epoch", "epoch": 1}]
        + [{"type": "diagnostics", "epoch": e, "men": m, "men_stderr": 4.0}
           for e, m in ((5, 600.0), (10, 620.0))],
        "#3 LID": [],  # no diagnostics yet: no line
    }
    fig = figures.men_over_training(events, samplers={"#1 NoDrop": "nodrop", "#2 DropEdge++": "dropedge++"})
    assert [t.name for t in fig.data] == ["#1 NoDrop", "#2 DropEdge++"]
    assert fig.data[0].line.color == SAMPLER_COLORS["nodrop"]
    assert list(fig.data[1].x) == [5, 10] and list(fig.data[1].y) == [600.0, 620.0]
    assert list(fig.data[1].error_y.array) == [4.0, 4.0] and fig.data[0].error_y.array is None
    assert fig.layout.yaxis.type in (None, "linear") and fig.layout.yaxis.range[0] == 0  # from 0
    assert "MEN" in fig.layout.yaxis.title.text


def test_tuning_history():
    trials = pd.DataFrame({"trial": [0, 1, 2, 3], "state": ["COMPLETE", "PRUNED", "COMPLETE", "COMPLETE"],
                           "val_acc": [0.5, np.nan, 0.7, 0.6]})
    fig = figures.tuning_history(trials)
    points, best, other = fig.data
    assert list(points.x) == [0, 2, 3] and np.allclose(points.y, [50, 70, 60])
    assert np.allclose(best.y, [50, 70, 70])  # best so far
    assert list(other.x) == [1] and other.customdata[0] == "pruned"
    empty = figures.tuning_history(pd.DataFrame({"trial": [], "state": [], "val_acc": []}))
    assert len(empty.data[0].x) == 0
