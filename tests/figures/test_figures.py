"""Figure builders, read back from the figures' data (no Streamlit, no browser)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
import torch

from dropedge_core import figures, samplers
from dropedge_core.data import reference
from dropedge_core.figures import SAMPLER_COLORS
from dropedge_core.studies import graph_layout as layout
from dropedge_core.studies import sampling


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


def _masks(graph, name, layers=6, p_min=0.3, p_max=0.8, seed=0):
    return sampling.sample_masks(graph, name, layers, p_min, p_max, seed)


def test_one_colour_per_sampler():
    assert set(SAMPLER_COLORS) == set(samplers.NAMES)
    assert len(set(SAMPLER_COLORS.values())) == len(SAMPLER_COLORS)
    assert figures.sampler_color("dropedge++") == SAMPLER_COLORS["dropedge++"]
    assert figures.sampler_color("independent/kernel").startswith("#")  # stable fallback
    assert figures.sampler_label("dropedge++") == "DropEdge++"


@pytest.mark.parametrize("name", ["nodrop", "dropedge", "li", "lid", "ldd"])
def test_layer_edges_counts_match_masks(karate, name):
    lay = layout.graph_layout(karate)
    masks = _masks(karate, name)
    for layer in (0, 3, 5):
        fig = figures.layer_edges(karate, masks, lay, layer, sampler=name)
        dropped, kept = _edge_traces(fig)
        assert len(dropped) == 1 and len(kept) == 1  # one trace per class of edge
        assert _segments(kept[0]) == int(masks[layer].sum())
        assert _segments(dropped[0]) == int((~masks[layer]).sum())
        assert kept[0].line.color == SAMPLER_COLORS[name]
        # one marker trace per node class, every node once
        nodes = [t for t in fig.data if t.name.startswith("class")]
        assert len(nodes) == karate.num_classes
        assert sum(len(t.x) for t in nodes) == karate.num_nodes
        assert f"layer {layer} of 6" in fig.layout.title.text
    assert len(fig.data) <= 3 + karate.num_classes


def test_layer_edges_on_a_neighbourhood_slices_the_masks(cora):
    lay = layout.graph_layout(cora, center=0, k=2, max_nodes=120)
    masks = _masks(cora, "lid", layers=4)
    sub = masks[:, torch.from_numpy(lay.edge_ids)]
    for layer in range(4):
        fig = figures.layer_edges(cora, masks, lay, layer, sampler="lid")
        dropped, kept = _edge_traces(fig)
        assert _segments(kept[0]) == int(sub[layer].sum())
        assert _segments(dropped[0]) == int((~sub[layer]).sum())
    # positions and nodes may also be passed separately
    fig2 = figures.layer_edges(cora, masks, lay.positions, 1, nodes=lay.nodes)
    assert _segments(_edge_traces(fig2)[1][0]) == int(sub[1].sum())


def test_layer_edges_weight_bins(csbm):
    s = samplers.make("dropedge++", p_min=0.3, p_max=0.8)
    masks = s.sample(csbm, 5, torch.Generator().manual_seed(0))
    w = s.weights(csbm)
    lay = layout.graph_layout(csbm)  # 600 nodes: a 2-hop neighbourhood
    fig = figures.layer_edges(csbm, masks, lay, 2, weights=w, sampler="dropedge++", n_bins=4)
    dropped, kept = _edge_traces(fig)
    assert 2 <= len(kept) <= 4  # a handful of traces, not one per edge
    assert len(fig.data) <= 1 + 4 + 1 + csbm.num_classes
    sub = masks[2, torch.from_numpy(lay.edge_ids)]
    assert sum(_segments(t) for t in kept) == int(sub.sum())
    assert _segments(dropped[0]) == int((~sub).sum())
    assert {t.line.color for t in kept} <= set(figures.WEIGHT_COLORS)
    assert all("weight" in t.name for t in kept)
    # hover text names the edge and its weight
    hover = next(t for t in fig.data if t.name == "edges (hover)")
    assert len(hover.customdata) == len(hover.text) == lay.edge_ids.size
    assert "kernel weight" in hover.hovertemplate and "edge" in hover.hovertemplate
    u, v = csbm.undirected_edges[:, torch.from_numpy(lay.edge_ids)]
    assert hover.customdata[:, 0].tolist() == u.tolist() and hover.customdata[:, 1].tolist() == v.tolist()
    assert np.allclose(hover.customdata[:, 2], w[torch.from_numpy(lay.edge_ids)].double().numpy())
    words = {f"{a} · {b}-class edge" for a in ("kept", "dropped") for b in ("intra", "inter")}
    assert set(hover.text) <= words


def test_layer_edges_equal_weights_is_one_bin(karate):
    s = samplers.make("fd", p_min=0.3, p_max=0.8)
    masks = s.sample(karate, 3, torch.Generator().manual_seed(0))
    fig = figures.layer_edges(karate, masks, layout.graph_layout(karate), 0, weights=s.weights(karate),
                              sampler="fd")
    _, kept = _edge_traces(fig)
    assert len(kept) == 1 and "equal" in kept[0].name
    assert kept[0].line.color == SAMPLER_COLORS["fd"]


def test_layer_edges_rejects_bad_input(karate):
    masks = _masks(karate, "lid", layers=3)
    lay = layout.graph_layout(karate)
    with pytest.raises(ValueError, match="layer"):
        figures.layer_edges(karate, masks, lay, 3)
    with pytest.raises(ValueError, match="positions"):
        figures.layer_edges(karate, masks, lay.positions[:5], 0)


def test_layer_edges_animation_frames(karate):
    masks = _masks(karate, "lid", layers=5)
    fig = figures.layer_edges_animation(karate, masks, layout.graph_layout(karate), sampler="lid")
    assert len(fig.frames) == 5
    assert len(fig.layout.sliders[0].steps) == 5
    assert {len(f.data) for f in fig.frames} == {len(fig.data)}  # same traces in every frame
    for layer, frame in enumerate(fig.frames):
        kept = [t for t in frame.data if t.name.startswith("kept")]
        assert _segments(kept[0]) == int(masks[layer].sum())
        assert frame.name == str(layer)


def test_keep_counts_bar(karate):
    counts = sampling.keep_counts_by_sampler(karate, samplers.NAMES, 4, 0.2, 0.8)
    fig = figures.keep_counts_bar(counts, karate.num_edges)
    assert [t.name for t in fig.data] == [figures.sampler_label(n) for n in samplers.NAMES]
    for trace, name in zip(fig.data, samplers.NAMES):
        assert list(trace.y) == counts[name].tolist()
        assert trace.marker.color == SAMPLER_COLORS[name]
        assert "edges kept" in trace.hovertemplate
    assert list(fig.data[samplers.NAMES.index("lid")].y) == samplers.keep_counts(78, 4, 0.2, 0.8).tolist()
    assert "layer" in fig.layout.xaxis.title.text
    assert "(count)" in fig.layout.yaxis.title.text


def test_nesting_heatmap_shows_nesting(karate):
    lid = figures.nesting_heatmap(_masks(karate, "lid"), "lid")
    z = np.array(lid.data[0].z, dtype=float)
    assert np.allclose(np.triu(z), np.triu(np.ones_like(z)))  # mask[i] ⊆ mask[j], i <= j
    ldd = np.array(figures.nesting_heatmap(_masks(karate, "ldd")).data[0].z, dtype=float)
    assert np.allclose(np.tril(ldd), np.tril(np.ones_like(ldd)))
    assert "layer" in lid.layout.xaxis.title.text and "layer" in lid.layout.yaxis.title.text


def test_intra_inter_share(csbm):
    masks = {n: _masks(csbm, n) for n in ("lid", "dropedge++")}
    fig = figures.intra_inter_share(csbm, masks)
    assert len(fig.data) == 4
    colors = [SAMPLER_COLORS["lid"]] * 2 + [SAMPLER_COLORS["dropedge++"]] * 2
    assert [t.line.color for t in fig.data] == colors
    df = sampling.intra_inter_shares(csbm, masks["dropedge++"])
    intra = df[df["kind"] == "intra"]["share"].to_numpy() * 100
    assert np.allclose(np.asarray(fig.data[2].y, dtype=float), intra)
    assert "%" in fig.layout.yaxis.title.text
    # csbm features carry the class: kernel weights favour intra-class edges
    inter = df[df["kind"] == "inter"]["share"].to_numpy() * 100
    assert (intra > inter).all()


@pytest.fixture(scope="module")
def men_df(request):
    karate = request.getfixturevalue("karate")
    return sampling.men_runs(karate, ["dropedge", "lid", "li", "ldd"], [2, 4, 8], 3, 0.05, 1.0)


def test_men_vs_depth(men_df):
    paper = reference.paper_men().query("dataset_key == 'cora'")
    fig = figures.men_vs_depth(men_df, paper)
    measured = [t for t in fig.data if "paper" not in t.name]
    assert [t.name for t in measured] == ["DropEdge", "LID", "LI", "LDD"]
    summary = sampling.men_summary(men_df)
    for trace, name in zip(measured, ["dropedge", "lid", "li", "ldd"]):
        part = summary[summary["sampler"] == name]
        assert list(trace.x) == [2, 4, 8]
        assert np.allclose(trace.y, part["men_mean"])
        assert np.allclose(trace.error_y.array, part["men_std"])
        assert trace.line.color == SAMPLER_COLORS[name]
    assert len(fig.data) == 8  # + one paper trace per sampler
    assert fig.layout.yaxis.type == "log" and fig.layout.xaxis.type == "log"
    assert "MEN" in fig.layout.yaxis.title.text and "layers" in fig.layout.xaxis.title.text


def test_edge_number_curves(men_df):
    fig = figures.edge_number_curves(men_df, layers=8)
    assert len(fig.data) == 8  # a band and a mean line per sampler
    bands, lines = fig.data[0::2], fig.data[1::2]
    assert all(b.fill == "toself" for b in bands)
    long = sampling.edge_number_table(men_df, 8)
    lid = long[long["sampler"] == "lid"].groupby("layer")["edge_number"].mean()
    assert np.allclose(lines[1].y, lid.to_numpy())
    assert list(lines[1].x) == list(range(8))
    assert fig.layout.yaxis.type == "log"
    assert "L = 8" in fig.layout.title.text


def test_men_table_compare(men_df):
    paper = reference.paper_men()
    fig = figures.men_table_compare(men_df, paper, "cora")
    assert len(fig.data) == 8  # paper + measured per sampler
    assert fig.data[0].name == "DropEdge · paper"
    assert list(fig.data[0].y) == [9.0e4, 6.0e5, 1.8e6]
    assert fig.layout.barmode == "group" and fig.layout.yaxis.type == "log"
    with pytest.raises(ValueError, match="several datasets"):
        figures.men_table_compare(men_df, paper)


def test_over_smoothing_demo(karate):
    masks = sampling.masks_by_sampler(karate, ["nodrop", "dropedge", "dropedge++"], 8, 0.3, 0.8)
    df = sampling.smoothing_curves(karate, masks)
    fig = figures.over_smoothing_demo(df)
    assert len(fig.data) == 6  # 3 samplers x 2 measures
    assert [t.showlegend for t in fig.data] == [True] * 3 + [False] * 3
    assert fig.data[0].line.color == SAMPLER_COLORS["nodrop"]
    assert "propagation step" in fig.layout.xaxis.title.text
    nodrop = np.asarray(fig.data[0].y, dtype=float)
    assert nodrop[-1] < nodrop[0]  # representations collapse without dropping


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


def test_every_figure_serialises(karate, men_df):
    """The app sends figures as JSON: every builder's output must encode."""
    masks = _masks(karate, "dropedge++")
    lay = layout.graph_layout(karate)
    figs = [figures.layer_edges(karate, masks, lay, 0), figures.nesting_heatmap(masks),
            figures.men_vs_depth(men_df), figures.edge_number_curves(men_df)]
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
