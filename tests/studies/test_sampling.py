"""studies/sampling.py: the tables behind the app's sampling figures against numbers worked
out by hand, brute force or numpy on small fixed inputs — MEN summary (mean and sample std,
curves), nesting, intra/inter shares, the paper comparison, the edge-number table and the
smoothing summaries (``python tools/mutation.py sampling``)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch
from dropedge_core.graph import Graph

from dropedge_explorer.studies import sampling


def men_rows() -> pd.DataFrame:
    """Hand-made men_runs rows: lid first, then dropedge; two depths for lid."""
    rows = [("lid", 2, 0, 3.0, 0.0, (2.0, 4.0), True), ("lid", 2, 1, 5.0, 0.2, (4.0, 6.0), True),
            ("lid", 2, 2, 7.0, 0.4, (6.0, 8.0), False), ("lid", 4, 0, 1.0, 0.0, (1.0,) * 4, True),
            ("dropedge", 2, 0, 10.0, 0.0, (10.0, 10.0), True),
            ("dropedge", 2, 1, 12.0, 0.0, (12.0, 12.0), True)]
    columns = ["sampler", "layers", "run", "men", "men_stderr", "edge_numbers", "exact"]
    return pd.DataFrame(rows, columns=columns)


def test_men_summary_is_mean_and_sample_std_in_first_seen_order():
    out = sampling.men_summary(men_rows())
    assert list(zip(out["sampler"], out["layers"])) == [("lid", 2), ("lid", 4), ("dropedge", 2)]
    assert out.columns.tolist() == ["sampler", "layers", "men_mean", "men_std", "runs"]
    assert out["men_mean"].tolist() == pytest.approx([5.0, 1.0, 11.0])
    # sample std (ddof 1) of {3, 5, 7} is 2; of {10, 12} sqrt(2); one run: 0
    assert out["men_std"].tolist() == pytest.approx([2.0, 0.0, math.sqrt(2.0)])
    assert out["runs"].tolist() == [3, 1, 2]
    assert not isinstance(out["sampler"].dtype, pd.CategoricalDtype)  # plain strings


def test_men_summary_curves():
    out = sampling.men_summary(men_rows(), curves=True).set_index(["sampler", "layers"])
    lid2 = out.loc[("lid", 2)]
    assert lid2["edge_numbers_mean"] == pytest.approx([4.0, 6.0])
    assert lid2["edge_numbers_std"] == pytest.approx([2.0, 2.0])  # ddof 1 over (2, 4, 6) and (4, 6, 8)
    assert lid2["men_stderr_mean"] == pytest.approx(0.2)
    assert not lid2["exact"]  # one of its runs was an estimate
    assert out.loc[("lid", 4), "edge_numbers_std"] == [0.0] * 4  # one run: zeros, one per layer
    assert out.loc[("dropedge", 2), "exact"]
    assert out.loc[("dropedge", 2), "edge_numbers_std"] == pytest.approx([math.sqrt(2.0)] * 2)


def test_nesting_matrix_matches_brute_force():
    gen = torch.Generator().manual_seed(0)
    masks = torch.rand(4, 30, generator=gen) < 0.5
    masks[2] = False  # a layer that keeps nothing
    got = sampling.nesting_matrix(masks)
    assert got.dtype == torch.float32
    m = masks.numpy()
    for i in range(4):
        for j in range(4):
            if m[i].sum() == 0:
                assert math.isnan(float(got[i, j]))
            else:
                assert float(got[i, j]) == pytest.approx((m[i] & m[j]).sum() / m[i].sum())


def labelled_path() -> Graph:
    """Path 0-1-2-3-4 with labels 0, 0, 1, 1, -1: edges intra, inter, intra, unlabelled."""
    edges = torch.tensor([[0, 1, 2, 3], [1, 2, 3, 4]])
    none = torch.zeros(5, dtype=torch.bool)
    return Graph("path", torch.eye(5), torch.tensor([0, 0, 1, 1, -1]), edges, none, none, none, 2)


def test_edge_classes_and_shares_by_hand():
    g = labelled_path()
    assert sampling.edge_classes(g).tolist() == [1, 0, 1, -1]
    assert sampling.edge_classes(g, torch.tensor([[0, 4], [3, 0]])).tolist() == [0, -1]
    masks = torch.tensor([[True, True, False, True], [False, False, True, True]])
    df = sampling.intra_inter_shares(g, masks)
    assert df.columns.tolist() == ["layer", "kind", "kept", "total", "share"]
    assert df.index.tolist() == [0, 1, 2, 3]
    assert df[["layer", "kind", "kept", "total"]].values.tolist() == [
        [0, "intra", 1, 2], [1, "intra", 1, 2], [0, "inter", 1, 1], [1, "inter", 0, 1]]
    assert df["share"].tolist() == [0.5, 0.5, 1.0, 0.0]
    # directed masks (2M columns): an edge counts as kept when either direction is
    directed = torch.tensor([[False, False, False, False, True, True, False, False]])
    df = sampling.intra_inter_shares(g, directed)
    assert df["kept"].tolist() == [1, 1]


def test_shares_of_a_kind_without_edges_are_nan():
    g = labelled_path()
    g.y = torch.tensor([0, 0, 0, 0, 0])  # every edge intra-class: no inter edge at all
    df = sampling.intra_inter_shares(g, torch.ones(2, 4, dtype=torch.bool))
    inter = df[df["kind"] == "inter"]
    assert inter["total"].tolist() == [0, 0] and inter["share"].isna().all()


def test_men_comparison_ratio_against_the_paper():
    paper = pd.DataFrame({"dataset_key": ["cora", "cora", "cora", "citeseer"],
                          "sampler": ["lid", "dropedge", "ldd", "lid"], "layers": [2, 2, 2, 2],
                          "men": [4.0, 8.0, 9.0, 1.0]})
    comp = sampling.men_comparison(men_rows(), paper, "cora")
    assert comp.columns.tolist() == ["sampler", "layers", "paper_men", "measured_men", "measured_std",
                                     "runs", "ratio"]
    assert comp["sampler"].tolist() == ["lid", "dropedge", "ldd"]
    assert comp["ratio"].tolist()[:2] == pytest.approx([5.0 / 4.0, 11.0 / 8.0])
    assert math.isnan(comp["ratio"].iloc[2]) and math.isnan(comp["measured_men"].iloc[2])


def test_edge_number_table_by_hand():
    long = sampling.edge_number_table(men_rows(), 2)
    assert long.columns.tolist() == ["sampler", "run", "edge_number", "layer", "layers"]
    assert long[["sampler", "run", "layer"]].values.tolist() == [
        ["lid", 0, 0], ["lid", 0, 1], ["lid", 1, 0], ["lid", 1, 1], ["lid", 2, 0], ["lid", 2, 1],
        ["dropedge", 0, 0], ["dropedge", 0, 1], ["dropedge", 1, 0], ["dropedge", 1, 1]]
    assert long["edge_number"].tolist() == [2.0, 4.0, 4.0, 6.0, 6.0, 8.0, 10.0, 10.0, 12.0, 12.0]
    assert long["edge_number"].dtype == float and (long["layers"] == 2).all()
    assert sampling.edge_number_table(men_rows())["layers"].eq(4).all()  # default: the deepest
    with pytest.raises(ValueError) as err:
        sampling.edge_number_table(men_rows(), 3)
    assert str(err.value) == "no runs at depth 3; depths: [2, 4]"


def test_edge_number_stats_by_hand():
    out = sampling.edge_number_stats(men_rows(), 2)
    assert out.columns.tolist() == ["sampler", "layer", "mean", "std", "count", "layers"]
    # first-seen order (lid before dropedge); lid's runs {2, 4, 6} and {4, 6, 8}: sample std 2
    assert out[["sampler", "layer", "count", "layers"]].values.tolist() == [
        ["lid", 0, 3, 2], ["lid", 1, 3, 2], ["dropedge", 0, 2, 2], ["dropedge", 1, 2, 2]]
    assert out["mean"].tolist() == pytest.approx([4.0, 6.0, 11.0, 11.0])
    assert out["std"].tolist() == pytest.approx([2.0, 2.0, math.sqrt(2.0), math.sqrt(2.0)])
    deepest = sampling.edge_number_stats(men_rows())  # depth 4: one lid run, std 0 (not NaN)
    assert deepest[["sampler", "layer", "mean", "std", "count", "layers"]].values.tolist() == [
        ["lid", layer, 1.0, 0.0, 1, 4] for layer in range(4)]
    one = pd.DataFrame([("lid", 1, 0, 2.0, 0.0, (3.0,), True)], columns=men_rows().columns)
    assert sampling.edge_number_stats(one).values.tolist() == [["lid", 0, 3.0, 0.0, 1, 1]]  # one row


def test_intra_inter_by_sampler_stacks_each_samplers_shares_by_hand():
    g = labelled_path()  # edges: intra, inter, intra, unlabelled
    masks_by = {"b": torch.tensor([[True, True, False, True]]),
                "a": torch.tensor([[False, True, True, False], [True, False, False, False]])}
    df = sampling.intra_inter_by_sampler(g, masks_by)
    assert df.columns.tolist() == ["layer", "kind", "kept", "total", "share", "sampler"]
    assert df.index.tolist() == list(range(6))
    assert df[["sampler", "layer", "kind", "kept", "total"]].values.tolist() == [
        ["b", 0, "intra", 1, 2], ["b", 0, "inter", 1, 1],
        ["a", 0, "intra", 1, 2], ["a", 1, "intra", 1, 2], ["a", 0, "inter", 1, 1], ["a", 1, "inter", 0, 1]]


def path_graph(num_nodes: int) -> Graph:
    edges = torch.stack([torch.arange(num_nodes - 1), torch.arange(1, num_nodes)])
    none = torch.zeros(num_nodes, dtype=torch.bool)
    return Graph("line", torch.ones(num_nodes, 1), torch.zeros(num_nodes, dtype=torch.long), edges,
                 none, none, none, 1)


@pytest.mark.parametrize("nodes, layers, num_sources, sources, deepest", [
    (1500, [2, 3], None, 256, 3),  # above EXACT_BY_DEFAULT_MAX_NODES (1000): MEN_RUNS_SOURCES sources
    (1000, [2], None, 1000, 2),  # at it: exact, every node a source
    (800, [4, 2], None, 800, 4), (1500, [2], 0, 1500, 2),  # 0: always exact
    (1500, [2], 100, 100, 2), (1500, [2], 1, 1, 2), (50, [2], 100, 50, 2),  # S sources, at most N
    (1500, [], None, 256, 1)])  # no depth: the estimate of one layer
def test_men_runs_refusal_names_the_estimate_of_its_sources(monkeypatch, nodes, layers, num_sources, sources,
                                                              deepest):
    from dropedge_explorer import memory

    monkeypatch.setenv("DROPEDGE_MAX_MEMORY_GB", "0.000001")
    need = memory.men_bytes(nodes, nodes - 1, deepest, sources)
    with pytest.raises(memory.MemoryLimitError) as err:
        sampling.men_runs(path_graph(nodes), ["nodrop"], layers, 1, 0.3, 1.0, num_sources=num_sources)
    assert str(err.value) == (
        f"MEN at L={deepest} on line (N={nodes}, M={nodes - 1}) would need about {memory.human(need)} of "
        f"memory, above the limit of {memory.human(int(0.000001 * 2**30))} (DROPEDGE_MAX_MEMORY_GB); "
        "use fewer layers, fewer sources or a smaller graph")


def test_smoothing_spread_refusal_word_for_word(monkeypatch):
    from dropedge_explorer import memory

    monkeypatch.setenv("DROPEDGE_MAX_MEMORY_GB", "0.000001")
    need = memory.smoothing_bytes(30, 29, 3, 1)
    with pytest.raises(memory.MemoryLimitError) as err:
        sampling.smoothing_spread(path_graph(30), ["nodrop"], 3, 0.3, 1.0)
    assert str(err.value) == (
        f"the over-smoothing curves of line (N=30, M=29, L=3) would need about {memory.human(need)} of "
        f"memory, above the limit of {memory.human(int(0.000001 * 2**30))} (DROPEDGE_MAX_MEMORY_GB); "
        "pick fewer layers or a smaller graph")


def test_the_seed_reaches_the_sample():
    g = path_graph(200)
    draws = [sampling.sample_masks(g, "dropedge", 2, 0.5, 0.5, seed=seed) for seed in (0, 1, 0)]
    assert torch.equal(draws[0], draws[2]) and not torch.equal(draws[0], draws[1])


def test_smoothing_at_last_step():
    df = pd.DataFrame({"sampler": ["a", "a", "b", "b", "a"], "step": [0, 2, 0, 2, 2],
                       "measure": ["subspace_distance"] * 4 + ["dirichlet_energy"],
                       "value": [1.0, 0.4, 1.0, 0.6, 9.0], "std": [0.0, 0.1, 0.0, 0.2, 9.0]})
    assert sampling.smoothing_at_last_step(df) == {"a": (0.4, 0.1), "b": (0.6, 0.2)}
    assert sampling.smoothing_at_last_step(df.drop(columns="std")) == {"a": (0.4, 0.0), "b": (0.6, 0.0)}
    assert sampling.smoothing_at_last_step(df, "dirichlet_energy") == {"a": (9.0, 9.0)}


def test_smoothing_spread_summarises_the_draws(karate):
    names = ["nodrop", "fd"]
    spread = sampling.smoothing_spread(karate, names, 3, 0.3, 0.8, seed=2, samples=3, kernel="rbf",
                                       method="ARW")
    draws = [sampling.smoothing_curves(karate, sampling.masks_by_sampler(karate, names, 3, 0.3, 0.8, 2 + i,
                                                                         "rbf"), method="ARW", seed=2)
             for i in range(3)]
    values = np.stack([d["value"].to_numpy() for d in draws])  # (draw, row), rows in the same order
    first = draws[0]
    assert spread[["sampler", "step", "measure"]].values.tolist() == \
        first[["sampler", "step", "measure"]].values.tolist()
    np.testing.assert_allclose(spread["value"], values.mean(0), atol=1e-12)
    np.testing.assert_allclose(spread["std"], values.std(0, ddof=1), atol=1e-12)
    np.testing.assert_allclose(spread["low"], values.min(0))
    np.testing.assert_allclose(spread["high"], values.max(0))
    assert (spread["samples"] == 3).all()
    one = sampling.smoothing_spread(karate, ["dropedge"], 2, 0.3, 0.8, samples=1)
    assert (one["std"] == 0.0).all()
    with pytest.raises(ValueError) as err:
        sampling.smoothing_spread(karate, names, 2, 0.3, 0.8, samples=0)
    assert str(err.value) == "samples must be a positive integer (got 0)"


def test_smoothing_curves_start_at_the_features_and_nodrop_collapses(karate):
    masks = {"nodrop": torch.ones(4, karate.num_edges, dtype=torch.bool)}
    df = sampling.smoothing_curves(karate, masks)
    energy = df[df["measure"] == "dirichlet_energy"]["value"].tolist()
    assert energy[0] == 1.0 and len(energy) == 5  # H_0 = X, then one value per layer
    assert energy[-1] < energy[0]
    dist = df[df["measure"] == "subspace_distance"]["value"].tolist()
    assert dist[-1] < dist[0]


def test_men_runs_columns_flags_and_callback(karate):
    calls = []
    df = sampling.men_runs(karate, ["lid"], [2, 3], 2, 0.2, 0.9, on_sample=lambda: calls.append(1))
    assert len(calls) == 4
    assert df[["sampler", "layers", "run"]].values.tolist() == [["lid", 2, 0], ["lid", 2, 1],
                                                                ["lid", 3, 0], ["lid", 3, 1]]
    assert (df["p_min"] == 0.2).all() and (df["p_max"] == 0.9).all() and df["exact"].all()
    assert [len(e) for e in df["edge_numbers"]] == [2, 2, 3, 3]
    with pytest.raises(ValueError) as err:
        sampling.men_runs(karate, ["lid"], [2], 0, 0.2, 0.9)
    assert str(err.value) == "runs must be >= 1 (got 0)"


def test_keep_counts_by_sampler_follow_the_schedule(karate):
    m = karate.num_edges
    counts = sampling.keep_counts_by_sampler(karate, ["nodrop", "lid", "ldd", "dropedge"], 3, 0.2, 0.8)
    lid = [math.floor(m * (0.2 + 0.6 * layer / 2) + 1e-9) for layer in range(3)]
    assert counts["nodrop"].tolist() == [m] * 3
    assert counts["lid"].tolist() == lid and counts["ldd"].tolist() == lid[::-1]
    assert counts["dropedge"].tolist() == [math.floor(m * 0.5)] * 3


def wide_graph(features: int, zero: bool = False) -> Graph:
    gen = torch.Generator().manual_seed(features)
    n = 40
    edges = torch.stack([torch.arange(n - 1), torch.arange(1, n)])
    x = torch.zeros(n, features) if zero else torch.rand(n, features, generator=gen)
    none = torch.zeros(n, dtype=torch.bool)
    return Graph("wide", x, torch.zeros(n, dtype=torch.long), edges, none, none, none, 2)


def test_smoothing_curves_project_only_wider_features_from_the_seed():
    masks = {"lid": torch.ones(3, 39, dtype=torch.bool)}
    at64 = wide_graph(64)  # exactly max_features: no projection
    pd.testing.assert_frame_equal(sampling.smoothing_curves(at64, masks),
                                  sampling.smoothing_curves(at64, masks, max_features=1000))
    wide = wide_graph(65)  # one more: projected, by default with seed 0 and to 64 columns
    default = sampling.smoothing_curves(wide, masks)
    pd.testing.assert_frame_equal(default, sampling.smoothing_curves(wide, masks, max_features=64, seed=0))
    pd.testing.assert_frame_equal(default, sampling.smoothing_curves(wide, masks))  # seeded: the same again
    assert not default.equals(sampling.smoothing_curves(wide, masks, max_features=65))
    assert not default.equals(sampling.smoothing_curves(wide, masks, seed=1))


def test_smoothing_of_zero_features_has_no_energy_to_lose():
    masks = {"nodrop": torch.ones(2, 39, dtype=torch.bool)}
    df = sampling.smoothing_curves(wide_graph(3, zero=True), masks)
    assert df[df["measure"] == "dirichlet_energy"]["value"].tolist() == [0.0, 0.0, 0.0]


def test_smoothing_spread_defaults(karate):
    args = (karate, ["dropedge"], 2, 0.3, 0.8)
    pd.testing.assert_frame_equal(sampling.smoothing_spread(*args),
                                  sampling.smoothing_spread(*args, seed=0, samples=5))


def test_masks_by_sampler_are_the_seeded_samples(karate):
    got = sampling.masks_by_sampler(karate, ["lid", "dropedge"], 3, 0.2, 0.8)
    for name in ("lid", "dropedge"):
        assert torch.equal(got[name], sampling.sample_masks(karate, name, 3, 0.2, 0.8, 0, "linear", 0))
    other = sampling.masks_by_sampler(karate, ["lid"], 3, 0.2, 0.8, draw=1)
    assert torch.equal(other["lid"], sampling.sample_masks(karate, "lid", 3, 0.2, 0.8, draw=1))
    assert not torch.equal(other["lid"], got["lid"])


def test_men_runs_defaults_and_seeds(karate):
    args = (karate, ["dropedge"], [3], 2, 0.2, 0.9)
    default = sampling.men_runs(*args)
    pd.testing.assert_frame_equal(default, sampling.men_runs(*args, seed=0, directed=False, p=None))
    assert not default["men"].equals(sampling.men_runs(*args, seed=1)["men"])  # the seed matters
    assert not default["men"].equals(sampling.men_runs(*args, p=0.3)["men"])  # so does p
    assert not default["men"].equals(sampling.men_runs(*args, directed=True)["men"])
    one = sampling.men_runs(karate, ["lid"], [2], 1, 0.2, 0.9)  # one run is allowed
    assert len(one) == 1
    # two names of one sampler draw apart: the name is part of each draw's seed
    both = sampling.men_runs(karate, ["lid", "LID"], [3], 2, 0.2, 0.9)
    assert not np.allclose(both["men"][:2], both["men"][2:])


def test_men_comparison_takes_a_summary_as_it_is():
    paper = pd.DataFrame({"dataset_key": ["cora"], "sampler": ["lid"], "layers": [2], "men": [4.0]})
    pd.testing.assert_frame_equal(sampling.men_comparison(sampling.men_summary(men_rows()), paper, "cora"),
                                  sampling.men_comparison(men_rows(), paper, "cora"))


def test_men_runs_estimates_from_the_sources_asked_for(karate):
    args = (karate, ["lid"], [2], 2, 0.2, 0.9)
    est = sampling.men_runs(*args, num_sources=5)
    assert not est["exact"].any() and (est["men_stderr"] > 0).all()
    pd.testing.assert_frame_equal(est, sampling.men_runs(*args, num_sources=5))  # sources from the seed


def test_smoothing_curves_follow_the_method_and_measure_energy_relative_to_step_0():
    from dropedge_core import metrics

    g = wide_graph(8)
    masks = torch.ones(2, g.num_edges, dtype=torch.bool)
    an = sampling.smoothing_curves(g, {"x": masks})
    assert an.index.tolist() == list(range(len(an)))
    assert not an["value"].equals(sampling.smoothing_curves(g, {"x": masks}, method="ARW")["value"])
    # step 1 by hand: H_1 = Â X with the dense renormalised adjacency
    a = torch.zeros(40, 40)
    u, v = g.undirected_edges
    a[u, v] = a[v, u] = 1.0
    a += torch.eye(40)
    d = a.sum(1).rsqrt()
    h1 = d[:, None] * a * d[None, :] @ g.x
    e0 = metrics.dirichlet_energy(g.x, g.undirected_edges)
    assert 0 < e0 < 1  # a ratio, not a product, and not only above 1
    energy = an[an["measure"] == "dirichlet_energy"]["value"].tolist()
    assert energy[0] == 1.0
    assert energy[1] == pytest.approx(metrics.dirichlet_energy(h1, g.undirected_edges) / e0, rel=1e-4)


def test_smoothing_spread_projects_wide_features_with_its_seed():
    g = wide_graph(70)
    spread = sampling.smoothing_spread(g, ["dropedge"], 2, 0.3, 0.8, seed=3, samples=1)
    one = sampling.smoothing_curves(g, sampling.masks_by_sampler(g, ["dropedge"], 2, 0.3, 0.8, 3), seed=3)
    np.testing.assert_allclose(spread["value"], one["value"])


def test_kernel_reaches_the_samplers(csbm):
    assert sampling.make_sampler("fd", 0.2, 0.8, kernel="rbf").kernel == "rbf"
    rbf = sampling.sample_masks(csbm, "fd", 2, 0.2, 0.8, kernel="rbf")
    assert not torch.equal(rbf, sampling.sample_masks(csbm, "fd", 2, 0.2, 0.8))
    assert torch.equal(sampling.sample_masks(csbm, "lid", 3, 0.2, 0.8),
                       sampling.sample_masks(csbm, "lid", 3, 0.2, 0.8, seed=0, draw=0))
    names = ["fd"]
    spread = sampling.smoothing_spread(csbm, names, 2, 0.2, 0.8, samples=1, kernel="rbf")
    linear = sampling.smoothing_spread(csbm, names, 2, 0.2, 0.8, samples=1)
    assert not np.allclose(spread["value"], linear["value"])


def test_run_seeds_fit_torchs_32_bits():
    assert all(0 <= sampling.run_seed(s, "lid", 8, r) < 2**32 for s in range(5) for r in range(50))
