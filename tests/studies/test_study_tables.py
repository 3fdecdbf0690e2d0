"""The study tables the app and the CLI show, on small fixed inputs whose answers are
worked out here by hand (the numbers in the comments), never with the function under test."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch
from dropedge_core.graph import Graph

from dropedge_explorer.studies import cells, edge_drawing, sampling

# ---- MEN over runs -----------------------------------------------------------------------

MEN_RUNS = pd.DataFrame({
    "sampler": ["lid", "lid", "lid", "dropedge", "dropedge", "lid"],
    "layers": [2, 2, 2, 2, 2, 4],
    "run": [0, 1, 2, 0, 1, 0],
    "men": [10.0, 20.0, 60.0, 7.0, 9.0, 100.0],
    "men_stderr": [0.0, 0.0, 0.0, 1.0, 3.0, 0.0],
    "edge_numbers": [(4.0, 16.0), (6.0, 34.0), (2.0, 118.0), (5.0, 9.0), (7.0, 11.0),
                     (1.0, 2.0, 3.0, 394.0)],
    "exact": [True, True, True, False, False, True],
})


def test_men_summary_mean_and_sample_std_by_hand():
    out = sampling.men_summary(MEN_RUNS)
    # first-seen sampler order (lid before dropedge), then depth
    assert list(zip(out["sampler"], out["layers"])) == [("lid", 2), ("lid", 4), ("dropedge", 2)]
    # lid L=2: mean (10 + 20 + 60) / 3 = 30; sample std sqrt(((-20)^2 + (-10)^2 + 30^2) / 2) = sqrt(700)
    assert out.loc[0, "men_mean"] == pytest.approx(30.0)
    assert out.loc[0, "men_std"] == pytest.approx(math.sqrt(700.0))
    assert out.loc[0, "runs"] == 3
    # one run: std 0 (not NaN), runs 1
    assert (out.loc[1, "men_mean"], out.loc[1, "men_std"], out.loc[1, "runs"]) == (100.0, 0.0, 1)
    # dropedge: mean 8, std sqrt((1 + 1) / 1) = sqrt(2)
    assert out.loc[2, "men_mean"] == pytest.approx(8.0)
    assert out.loc[2, "men_std"] == pytest.approx(math.sqrt(2.0))


def test_men_summary_curves_by_hand():
    out = sampling.men_summary(MEN_RUNS, curves=True)
    lid2 = out.iloc[0]
    # per layer over runs: (4, 6, 2) -> mean 4, std 2; (16, 34, 118) -> mean 56, std sqrt(2964)
    assert lid2["edge_numbers_mean"] == pytest.approx([4.0, 56.0])
    assert lid2["edge_numbers_std"] == pytest.approx([2.0, math.sqrt(((16 - 56) ** 2 + (34 - 56) ** 2
                                                                     + (118 - 56) ** 2) / 2)])
    assert out.iloc[1]["edge_numbers_std"] == [0.0] * 4  # one run
    dropedge = out.iloc[2]
    assert dropedge["men_stderr_mean"] == pytest.approx(2.0)  # (1 + 3) / 2
    assert bool(lid2["exact"]) and not bool(dropedge["exact"])


def test_edge_number_table_long_form_by_hand():
    long = sampling.edge_number_table(MEN_RUNS, layers=2)
    assert len(long) == 5 * 2  # five runs at depth 2, two layers each
    lid_run1 = long[(long["sampler"] == "lid") & (long["run"] == 1)]
    assert lid_run1["layer"].tolist() == [0, 1] and lid_run1["edge_number"].tolist() == [6.0, 34.0]
    deepest = sampling.edge_number_table(MEN_RUNS)
    assert deepest["edge_number"].tolist() == [1.0, 2.0, 3.0, 394.0]
    with pytest.raises(ValueError, match="no runs at depth 8"):
        sampling.edge_number_table(MEN_RUNS, layers=8)


def test_men_comparison_ratio_by_hand():
    paper = pd.DataFrame({"dataset_key": ["cora", "cora", "citeseer"], "sampler": ["lid", "li", "lid"],
                          "layers": [2, 2, 2], "men": [40.0, 50.0, 1.0]})
    out = sampling.men_comparison(MEN_RUNS, paper, "cora")
    assert out["sampler"].tolist() == ["lid", "li"]
    assert out.loc[0, "ratio"] == pytest.approx(30.0 / 40.0)
    assert out.loc[0, "measured_std"] == pytest.approx(math.sqrt(700.0))
    assert math.isnan(out.loc[1, "ratio"])  # li never measured


def test_edge_number_stats_by_hand():
    out = sampling.edge_number_stats(MEN_RUNS, layers=2)
    # lid at L=2, per layer over runs: (4, 6, 2) -> mean 4, std 2; (16, 34, 118) -> mean 56
    lid = out[out["sampler"] == "lid"]
    assert lid["layer"].tolist() == [0, 1] and lid["mean"].tolist() == pytest.approx([4.0, 56.0])
    assert lid["std"].iloc[0] == pytest.approx(2.0) and lid["count"].tolist() == [3, 3]
    # dropedge: (5, 7) -> mean 6, std sqrt(2)
    dropedge = out[out["sampler"] == "dropedge"]
    assert dropedge["mean"].tolist() == pytest.approx([6.0, 10.0])
    assert dropedge["std"].iloc[0] == pytest.approx(math.sqrt(2.0))
    assert set(out["layers"]) == {2}
    deepest = sampling.edge_number_stats(MEN_RUNS)  # one run at L=4: std 0, not NaN
    assert deepest["std"].tolist() == [0.0] * 4 and set(deepest["layers"]) == {4}


def test_mean_std_of_a_plain_list_by_hand():
    # (0.70, 0.74, 0.78): mean 0.74, sample std sqrt((0.04^2 + 0 + 0.04^2) / 2) = 0.04; None left out
    mean, std = cells.mean_std([0.70, None, 0.74, 0.78])
    assert mean == pytest.approx(0.74) and std == pytest.approx(0.04)
    assert cells.mean_std([0.5]) == (0.5, 0.0)  # one value: std 0 (the command line's choice)
    assert cells.mean_std([]) == (None, None) and cells.mean_std([None]) == (None, None)


# ---- a drawing of sampled layers ------------------------------------------------------------

def _square():
    """Nodes 0..4 (classes 0, 0, 1, 1, 0); edges 0-1, 0-2, 1-3, 2-3, 3-4 (sorted, u < v)."""
    none = torch.zeros(5, dtype=torch.bool)
    return Graph("square", torch.eye(5), torch.tensor([0, 0, 1, 1, 0]),
                 torch.tensor([[0, 0, 1, 2, 3], [1, 2, 3, 3, 4]]), none, none, none, 2)


def test_edge_drawing_tables_by_hand():
    g = _square()
    masks = torch.tensor([[1, 0, 0, 1, 1], [1, 1, 1, 1, 0]], dtype=torch.bool)
    pos = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    d = edge_drawing.edge_drawing(g, masks, pos, nodes=np.array([0, 1, 2, 3]))  # node 4 not drawn
    # edge 3-4 has an end outside: 4 drawn edges, the masks' first four columns
    assert d.edges[["u", "v"]].values.tolist() == [[0, 1], [0, 2], [1, 3], [2, 3]]
    assert d.kept.tolist() == [[True, False, False, True], [True, True, True, True]]
    assert d.edges["intra"].tolist() == [True, False, False, True]
    assert d.edges[["x0", "y0", "x1", "y1"]].values.tolist()[2] == [1.0, 0.0, 1.0, 1.0]  # 1 -> 3
    assert d.nodes["degree"].tolist() == [2, 2, 2, 2]
    # layer 0 keeps 0-1 and 2-3: one kept edge per node; layer 1 keeps all four
    assert d.kept_degree.tolist() == [[1, 1, 1, 1], [2, 2, 2, 2]]
    assert d.bin_labels == ("kept",) and not d.weighted and d.edges["weight"].isna().all()
    # directed masks (L, 2M): an edge is kept when either direction is
    directed = torch.zeros(1, 10, dtype=torch.bool)
    directed[0, 5 + 2] = True  # the direction 3 -> 1 of edge 1-3
    assert edge_drawing.edge_drawing(g, directed, pos, nodes=[0, 1, 2, 3]).kept.tolist() == \
        [[False, False, True, False]]
    with pytest.raises(ValueError, match="positions must be"):
        edge_drawing.edge_drawing(g, masks, pos[:3], nodes=[0, 1, 2, 3])
    with pytest.raises(ValueError, match="masks must be"):
        edge_drawing.edge_drawing(g, masks[:, :4], pos, nodes=[0, 1, 2, 3])


def test_weight_bins_by_hand():
    # quartiles of (1, 2, 3, 4, 5, 6, 7, 8) at 1/4, 2/4, 3/4: 2.75, 4.5, 6.25
    bins, labels = edge_drawing.weight_bins(np.arange(1.0, 9.0), 4)
    assert bins.tolist() == [0, 0, 1, 1, 2, 2, 3, 3]
    assert labels == ("kept, weight 1–2.8", "kept, weight 2.8–4.5", "kept, weight 4.5–6.2",
                      "kept, weight 6.2–8")
    # ties at a quantile stay in the lower bin: median of (1e-10 x 3, 1) is 1e-10
    bins, labels = edge_drawing.weight_bins(np.array([1e-10, 1e-10, 1e-10, 1.0]), 2)
    assert bins.tolist() == [0, 0, 0, 1] and labels == ("kept, weight 0–0", "kept, weight 0–1")
    bins, labels = edge_drawing.weight_bins(np.full(3, 0.2), 4)
    assert bins.tolist() == [0, 0, 0] and labels == ("kept (all kernel weights equal)",)


def test_edge_drawing_weights_directed_are_averaged():
    g = _square()
    w = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 3.0, 2.0, 1.0, 0.0, 1.0])  # (2M,): both ways
    d = edge_drawing.edge_drawing(g, torch.ones(1, 5, dtype=torch.bool), np.zeros((5, 2)), w, n_bins=2)
    assert d.edges["weight"].tolist() == [2.0, 2.0, 2.0, 2.0, 3.0] and d.weighted
    assert d.edges["bin"].tolist() == [0, 0, 0, 0, 1]


def test_intra_inter_by_sampler_by_hand():
    g = _square()  # intra: 0-1, 2-3 (3-4 is inter: classes 1, 0); inter: 0-2, 1-3, 3-4
    out = sampling.intra_inter_by_sampler(g, {"a": torch.tensor([[1, 1, 0, 0, 0]], dtype=torch.bool),
                                              "b": torch.zeros(1, 5, dtype=torch.bool)})
    assert out["sampler"].tolist() == ["a", "a", "b", "b"] and out.index.tolist() == [0, 1, 2, 3]
    assert out["kind"].tolist() == ["intra", "inter"] * 2
    assert out["kept"].tolist() == [1, 1, 0, 0] and out["total"].tolist() == [2, 3, 2, 3]
    assert out["share"].tolist() == pytest.approx([0.5, 1 / 3, 0.0, 0.0])


# ---- cells of a depth study ----------------------------------------------------------------

def runs_frame() -> pd.DataFrame:
    rows = []
    for seed, acc in enumerate([0.70, 0.74, 0.78]):  # mean .74, sample std .04
        rows.append(("gcn", "nodrop", 16, seed, acc, 0.7))
    for seed, acc in enumerate([0.60, float("nan"), 0.66]):  # NaN left out: mean .63, std sqrt(.0018)
        rows.append(("gcn", "dropedge++", 16, seed, acc, 0.6))
    rows.append(("gcn", "dropedge", 16, 0, 0.5, 0.5))  # one run
    df = pd.DataFrame(rows, columns=["backbone", "sampler", "layers", "seed", "test_acc", "best_val_acc"])
    return df.assign(dataset="cora", split="semi", epochs_run=200, key=[f"k{i}" for i in range(len(df))])


def test_cell_summary_by_hand():
    out = cells.cell_summary(runs_frame(), by=["sampler"]).set_index("sampler")
    assert out.loc["nodrop", "test_acc_mean"] == pytest.approx(0.74)
    assert out.loc["nodrop", "test_acc_std"] == pytest.approx(0.04)
    assert out.loc["dropedge++", "test_acc_mean"] == pytest.approx(0.63)
    assert out.loc["dropedge++", "test_acc_std"] == pytest.approx(math.sqrt(0.0018))
    assert out.loc["dropedge++", "n"] == 2
    assert math.isnan(out.loc["dropedge", "test_acc_std"]) and out.loc["dropedge", "n"] == 1
    assert cells.cell_summary(runs_frame(), by=["sampler"], one_run_std=0.0).set_index(
        "sampler").loc["dropedge", "test_acc_std"] == 0.0


def test_depth_table_counts_status_and_paper_gap_by_hand():
    df = runs_frame()
    df["source"] = ["store", "store", "bundled", "store", "missing", "store", "store"]
    paper = pd.DataFrame({"dataset_key": "cora", "setting": "semi", "backbone": "GCN",
                          "sampler": ["nodrop", "dropedge++"], "layers": 16, "test_accuracy": [80.0, 70.0]})
    table = cells.depth_table(df, paper).set_index("sampler")
    nodrop, plus = table.loc["nodrop"], table.loc["dropedge++"]
    assert (nodrop["n"], nodrop["n_store"], nodrop["n_bundled"], nodrop["status"]) == (3, 2, 1, "measured")
    # the missing run is a request, not a value: n 2, missing 1, partial
    assert (plus["n"], plus["missing"], plus["status"]) == (2, 1, "partial")
    assert nodrop["diff_vs_paper"] == pytest.approx(0.74 - 0.80)
    assert plus["diff_vs_paper"] == pytest.approx(0.63 - 0.70)
    assert np.isnan(table.loc["dropedge", "paper_test_acc"])
    gaps = cells.paper_gaps(table.reset_index(), threshold=0.065)
    assert gaps["sampler"].tolist() == ["dropedge++"]  # |-.07| > .065 > |-.06|
    wider = cells.paper_gaps(table.reset_index(), threshold=0.05)
    assert wider["sampler"].tolist() == ["dropedge++", "nodrop"]  # largest gap first
