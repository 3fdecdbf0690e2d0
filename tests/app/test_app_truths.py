"""Issue 17: the pages tell the truth at first sight — the Depth study never hides its
cached runs (nearest bundled settings, no data needed), gaps to the paper are said, the
Home figure shows the spread over sample seeds, Tuning says when its best point is noise,
the kernel is offered wherever a sampler is configured, and the charts stay legible."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dropedge_explorer import figures
from dropedge_explorer.figures import style as figure_style
from dropedge_explorer.store import run_key
from dropedge_explorer.studies import depth as depth_study
from dropedge_explorer.studies.cells import paper_gaps, reproduction_notes
from dropedge_explorer.studies.run_tables import RUN_COLUMNS, cached_runs, run_row
from tests.helpers.app import _app, _charts, _ok, _values

DEPTH_PAGE = "app_pages/depth_study.py"


def _lines(fig: dict, paper: bool) -> dict[str, dict]:
    return {t["name"]: t for t in fig["data"] if ("(paper)" in t["name"]) == paper}


def _bundle(tmp_path, monkeypatch, configs, accs) -> None:
    """Bundle runs of ``configs`` (made-up accuracies) in a temporary assets folder, with an
    empty results store."""
    rows = [run_row(c) | {"test_acc": a, "best_val_acc": a, "epochs_run": 10}
            for c, a in zip(configs, accs)]
    folder = tmp_path / "bundled"
    folder.mkdir()
    pd.DataFrame(rows)[list(RUN_COLUMNS)].to_csv(folder / "runs.csv", index=False)
    monkeypatch.setattr("dropedge_explorer.studies.run_tables.BUNDLED_DIR", folder)
    monkeypatch.setenv("DROPEDGE_RESULTS", str(tmp_path / "results.sqlite"))


def test_cached_settings_finds_the_keep_rates_and_mode_of_bundled_runs():
    made = depth_study.depth_configs("karate", None, ["gcn"], [2, 4], ["nodrop", "dropedge++"], 2, 5,
                                 mode="quick", p_min=0.2, p_max=0.65)
    deep = depth_study.depth_configs("karate", None, ["gcn"], [8], ["dropedge"], 1, None,
                                 mode="depth recipe", kernel="rbf")
    cached = cached_runs(None, pd.DataFrame(
        [run_row(c) | {"test_acc": 0.5, "best_val_acc": 0.5, "epochs_run": 5}
         for c in made + deep]).reindex(columns=list(RUN_COLUMNS)))
    cached.loc[:, "settings"] = [c.settings for c in made + deep]
    found = depth_study.cached_settings(cached, "karate", "per-class", kernel="rbf")
    assert len(found) == 2
    quick, depth = found
    assert (quick["mode"], quick["p_min"], quick["p_max"], quick["epochs"]) == ("quick", 0.2, 0.65, 5)
    assert quick["runs"] == 8 and quick["layers"] == [2, 4] and set(quick["keys"]) == {
        run_key(c) for c in made}
    assert (depth["mode"], depth["p_min"], depth["kernel"], depth["runs"]) == ("depth recipe", 0.3, "rbf", 1)
    # nearest to a request of p_min 0.35 in the depth recipe: the same mode wins over keep rates
    near = depth_study.nearest_settings(found, ["gcn"], "depth recipe", 0.35, 0.8, kernel="rbf")
    assert near is depth
    assert depth_study.nearest_settings(found, ["gcn"], "quick", 0.35, 0.8) is quick
    assert depth_study.describe_settings(quick) == "quick, keep rates 0.20 → 0.65, 5 epochs"
    assert depth_study.nearest_settings([], ["gcn"], "quick", 0.3, 0.8) is None


def test_kernel_and_direction_change_the_keys_only_when_not_default():
    base = depth_study.depth_configs("karate", None, ["gcn"], [2], ["dropedge++"], 1, 5)
    same = depth_study.depth_configs("karate", None, ["gcn"], [2], ["dropedge++"], 1, 5, kernel="linear",
                                 directed=False)
    rbf = depth_study.depth_configs("karate", None, ["gcn"], [2], ["dropedge++"], 1, 5, kernel="rbf",
                                directed=True)
    assert run_key(base[0]) == run_key(same[0]) != run_key(rbf[0])
    assert (rbf[0].kernel, rbf[0].directed) == ("rbf", True)
    line = depth_study.sweep_commands("karate", None, ["gcn"], [2], ["dropedge++"], 1, 5, kernel="rbf",
                                  directed=True)[0]
    assert "--kernel rbf" in line and "--directed" in line
    assert "--kernel" not in depth_study.sweep_commands("karate", None, ["gcn"], [2], ["dropedge++"], 1, 5)[0]


def test_depth_study_shows_the_nearest_bundled_settings_and_adopts_them(tmp_path, monkeypatch):
    configs = depth_study.depth_configs("karate", None, ["gcn"], [2, 4], depth_study.STUDY_SAMPLERS, 1, 5,
                                    mode="quick", p_min=0.3, p_max=0.8)
    _bundle(tmp_path, monkeypatch, configs, [0.5, 0.6, 0.7, 0.4, 0.5, 0.6])
    at = _app()
    at.switch_page(DEPTH_PAGE).run()
    _ok(at)
    at.multiselect(key="ds_depths").set_value([2, 4]).run()
    at.number_input(key="ds_seeds").set_value(1).run()
    at.number_input(key="ds_epochs").set_value(5).run()
    at.slider(key="p_range").set_value((0.35, 0.8)).run()  # the depth recipe at 0.35: nothing run
    _ok(at)
    assert at.button(key="ds_run").label == "Run missing (6)"
    assert any("No runs for these settings yet" in w.value
               and "quick, keep rates 0.30 → 0.80, 5 epochs" in w.value for w in at.warning)
    fig = _charts(at)["ds_figure"]
    assert "nearest cached settings: quick, keep rates 0.30 → 0.80" in fig["layout"]["title"]["text"]
    measured = _lines(fig, paper=False)
    assert list(measured) == ["NoDrop", "DropEdge", "DropEdge++"]
    assert np.allclose(_values(measured["NoDrop"]["y"]).astype(float), [50.0, 40.0])
    # the samplers are set apart at one depth; the hover names the true depth
    xs = {n: _values(t["x"]).astype(float) for n, t in measured.items()}
    assert xs["NoDrop"][0] < 2 < xs["DropEdge++"][0] and xs["DropEdge"][0] == pytest.approx(2)
    assert _values(measured["NoDrop"]["customdata"])[:, 2].astype(float).tolist() == [2, 4]
    # one click: the page asks for the bundled settings, and they are the requested runs
    at.button(key="ds_use_bundled").click().run()
    _ok(at)
    assert at.radio(key="ds_mode").value == "quick" and at.slider(key="p_range").value == (0.3, 0.8)
    assert at.button(key="ds_run").label == "Run missing (0)"
    assert not any("No runs for these settings" in w.value for w in at.warning)
    assert "nearest" not in _charts(at)["ds_figure"]["layout"]["title"]["text"]


def test_depth_study_draws_cora_without_the_data(tmp_path, monkeypatch):
    """No DROPEDGE_DATA, nothing cached: the bundled runs and the paper's numbers need no
    graph, and the gap to the paper is said with the explanation at hand."""
    monkeypatch.delenv("DROPEDGE_DATA", raising=False)
    monkeypatch.setenv("DROPEDGE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("DROPEDGE_RESULTS", str(tmp_path / "results.sqlite"))
    at = _app()
    at.selectbox(key="dataset").select("cora").run()
    at.switch_page(DEPTH_PAGE).run()
    _ok(at)
    assert not at.error
    assert any("not on this machine" in i.value for i in at.info)
    assert at.button(key="ds_run").disabled
    fig = _charts(at)["ds_figure"]
    assert list(_lines(fig, paper=True)) == ["NoDrop (paper)", "DropEdge (paper)", "DropEdge++ (paper)"]
    measured = _lines(fig, paper=False)
    assert list(measured) == ["NoDrop", "DropEdge", "DropEdge++"]  # the bundled runs, drawn
    assert len(_values(measured["NoDrop"]["y"])) == len(depth_study.DEPTHS)
    gap = [w.value for w in at.warning if "Measured and paper differ by more than 5 points" in w.value]
    assert gap and "docs/REPRODUCTION.md" in gap[0]
    assert any("Why measured and paper differ" in e.label for e in at.expander)
    assert "## 1. GCN by depth under the depth recipe" in reproduction_notes()
    assert "## 4. GCN by depth, quick recipe" in reproduction_notes()


def test_paper_gaps_are_the_cells_beyond_the_threshold():
    table = pd.DataFrame({"backbone": "gcn", "sampler": ["nodrop", "dropedge"], "layers": [2, 64],
                          "test_acc_mean": [0.80, 0.30], "paper_test_acc": [0.81, 0.55],
                          "diff_vs_paper": [-0.01, -0.25]})
    gaps = paper_gaps(table)
    assert gaps["sampler"].tolist() == ["dropedge"]
    assert paper_gaps(table.drop(columns="diff_vs_paper")).empty
    fig = figures.accuracy_vs_depth(pd.DataFrame({"backbone": "gcn", "sampler": ["nodrop", "dropedge"],
                                                  "layers": 4, "test_acc": 0.5}), note="other settings")
    assert "other settings" in fig.layout.title.text


def test_home_shows_the_spread_over_draws_and_says_what_it_does_not_show():
    at = _app()
    fig = _charts(at)["home_smoothing"]
    lines = {t["name"]: t for t in fig["data"] if t.get("showlegend", True)}
    assert list(lines) == ["NoDrop", "DropEdge", "DropEdge++"]
    bands = {t["name"]: t for t in fig["data"] if t.get("fill") == "tonexty"}
    assert {"DropEdge low", "DropEdge++ low"} <= set(bands)
    high = next(t for t in fig["data"] if t["name"] == "DropEdge++ high" and t["xaxis"] == "x")
    low = next(t for t in fig["data"] if t["name"] == "DropEdge++ low" and t["xaxis"] == "x")
    mean = next(t for t in fig["data"] if t["name"] == "DropEdge++" and t["xaxis"] == "x")
    hi, lo, mid = (_values(t["y"]).astype(float) for t in (high, low, mean))
    assert (lo <= mid + 1e-12).all() and (mid <= hi + 1e-12).all() and (hi - lo).max() > 0
    caption = next(c.value for c in at.caption if "What it shows" in c.value)
    assert "mean over 5 draws" in caption and "What it does not show" in caption
    assert "MEN" in caption and "DropEdge++ " in caption.split("At the last layer")[1]


def test_smoothing_spread_summarises_independent_draws(karate):
    from dropedge_explorer.studies import sampling

    df = sampling.smoothing_spread(karate, ["nodrop", "dropedge"], 4, 0.3, 0.8, seed=0, samples=3)
    one = sampling.smoothing_curves(karate, sampling.masks_by_sampler(
        karate, ["nodrop", "dropedge"], 4, 0.3, 0.8, 1))
    assert set(df.columns) >= {"value", "std", "low", "high", "samples"} and (df["samples"] == 3).all()
    nodrop = df[df["sampler"] == "nodrop"]
    assert (nodrop["std"] == 0).all()  # nothing random without dropping
    drop = df[(df["sampler"] == "dropedge") & (df["step"] == 4)]
    draw1 = one[(one["sampler"] == "dropedge") & (one["step"] == 4)].set_index("measure")["value"]
    for _, row in drop.iterrows():  # draw seed 1 is one of the three
        assert row["low"] - 1e-12 <= draw1[row["measure"]] <= row["high"] + 1e-12
    last = sampling.smoothing_at_last_step(df)
    assert set(last) == {"nodrop", "dropedge"} and last["nodrop"][1] == 0.0
    with pytest.raises(ValueError, match="samples must be a positive integer"):
        sampling.smoothing_spread(karate, ["nodrop"], 2, 0.3, 0.8, samples=0)


def test_live_training_kernel_two_runs_of_one_sampler_and_legible_diagnostics():
    from tests.helpers.app import LIVE_PAGE, _until_idle

    at = _app()
    at.selectbox(key="dataset").select("csbm").run()
    at.slider(key="layers").set_value(4).run()
    at.switch_page(LIVE_PAGE).run()
    _ok(at)
    at.radio(key="lt_mode").set_value("custom").run()
    at.number_input(key="lt_epochs").set_value(6).run()
    at.number_input(key="lt_diag_every").set_value(3).run()
    assert not at.selectbox(key="lt_kernel").disabled  # DropEdge++ is weighted
    at.selectbox(key="lt_kernel").select("rbf").run()
    at.checkbox(key="lt_directed").check().run()
    at.button(key="lt_start").click().run()
    _until_idle(at)
    at.selectbox(key="lt_kernel").select("linear").run()
    at.checkbox(key="lt_directed").uncheck().run()
    at.button(key="lt_start").click().run()
    _until_idle(at)
    first, second = at.session_state["live_training"].runs
    assert (first.config.kernel, first.config.directed) == ("rbf", True)
    assert (second.config.kernel, second.config.directed) == ("linear", False)
    charts = _charts(at)
    colors = {t["line"]["color"] for t in charts["lt_curves"]["data"]}
    assert len(colors) == 2 and figures.SAMPLER_COLORS["dropedge++"] in colors  # shades of one
    men = [t for t in charts["lt_men"]["data"] if t["type"] == "scatter"]
    assert len({(t["line"]["color"], t["line"]["dash"]) for t in men}) == 2
    # MEN on a linear axis from 0: a few percent of draw-to-draw noise stays small
    yaxis = charts["lt_men"]["layout"]["yaxis"]
    assert yaxis.get("type", "linear") == "linear" and yaxis["range"][0] == 0
    heat = charts["lt_heatmap"]
    assert heat["layout"]["title"]["text"].startswith("Dirichlet energy per layer")
    at.radio(key="lt_diag_key").set_value("mad").run()
    _ok(at)
    assert _charts(at)["lt_heatmap"]["layout"]["title"]["text"].startswith("MAD (mean average cosine")
    assert any("Over-smoothing shows as MAD falling" in c.value for c in at.caption)


def test_log_axes_label_few_round_ticks():
    narrow = figure_style.log_axis([0.31, 0.35, 0.9])
    assert narrow["type"] == "log" and 2 <= len(narrow["tickvals"]) <= 5
    assert all(len(t) <= 4 for t in narrow["ticktext"])
    # one to two decades: 1, 2, 5 x 10^k, each with its number (issue 24: "D2" read "1000, 5, 2, 100, 5")
    mid = figure_style.log_axis([1, 50])
    assert mid["tickvals"] == [1, 2, 5, 10, 20, 50] and mid["ticktext"] == ["1", "2", "5", "10", "20", "50"]
    assert figure_style.log_axis([1, 1e4])["dtick"] == 1
    events = [{"type": "diagnostics", "epoch": e, "layer_distances": [1.0 + e, 2.0, 3.0]}
              for e in range(3)]
    fig = figures.layer_distance_curves(events)
    assert fig.layout.yaxis.type == "log" and fig.layout.yaxis.tickvals is not None


def test_run_styles_tell_runs_of_one_sampler_apart():
    styles = figures.run_styles([("a", "dropedge"), ("b", "dropedge"), ("c", "nodrop"), ("d", "dropedge")])
    assert styles["a"] == (figures.SAMPLER_COLORS["dropedge"], "solid")
    assert len({styles[k] for k in "abd"}) == 3 and styles["c"][0] == figures.SAMPLER_COLORS["nodrop"]
    assert figures.shade("#808080", 1) < "#808080" < figures.shade("#808080", 2)


def test_edge_sampler_on_cora_draws_a_small_neighbourhood(cora):
    from tests.helpers.app import EDGE_PAGE

    at = _app()
    at.selectbox(key="dataset").select("cora").run()
    at.switch_page(EDGE_PAGE).run()
    _ok(at)
    caption = next(c.value for c in at.caption if "hop neighbourhood of node" in c.value)
    drawn = int(caption.split("(")[1].split(" nodes")[0])
    assert 20 <= drawn <= 100
    fig = _charts(at)["edges"]
    kept = [t for t in fig["data"] if t["name"].startswith("kept")]
    assert len({t["line"]["color"] for t in kept}) == len(kept) >= 2
    assert at.select_slider(key="max_nodes").value == 100 and not at.select_slider(key="max_nodes").disabled


def test_best_uncertainty_says_when_the_best_point_is_noise():
    from dropedge_explorer.studies import tuning

    cora = tuning.best_uncertainty(0.254, 500, 7, [0.254, 0.25, 0.2, 0.13])
    # one-sigma Wilson half-width: sqrt(p(1-p)/n + 1/(4n^2)) / (1 + 1/n), about sqrt(p(1-p)/n)
    assert cora["se"] == pytest.approx((0.254 * 0.746 / 500 + 1 / 1e6) ** 0.5 / 1.002)
    assert not cora["near_chance"] and not cora["tiny"] and cora["ties"] == 1  # 0.25 within 2 SE
    karate = tuning.best_uncertainty(0.375, 8, 4, [0.375, 0.25])
    assert karate["near_chance"] and karate["tiny"] and karate["ties"] == 1
    trained = tuning.best_uncertainty(0.74, 500, 7, [0.74, 0.70, 0.6])
    assert not trained["near_chance"] and trained["ties"] == 0 and trained["top_std"] > 0
    with pytest.raises(tuning.TuningError, match="num_val must be a positive integer"):
        tuning.best_uncertainty(0.5, 0, 4)


def test_tuning_offers_the_kernel_and_sizes_its_defaults(tmp_path, monkeypatch):
    from tests.helpers.app import TUNING_PAGE

    monkeypatch.setenv("DROPEDGE_TUNING_STORAGE", str(tmp_path / "tuning.sqlite"))
    at = _app()
    at.selectbox(key="dataset").select("csbm").run()
    at.slider(key="layers").set_value(2).run()
    at.switch_page(TUNING_PAGE).run()
    _ok(at)
    assert at.number_input(key="tune_epochs").value == 100 and at.number_input(key="tune_hidden").value == 64
    at.selectbox(key="tune_kernel").select("poly").run()
    at.checkbox(key="tune_directed").check().run()
    token = at.session_state["tune_session_token"]  # two sessions never share a default study
    assert at.text_input(key="tune_study").value.endswith(f"-poly-directed-{token}")
    at.number_input(key="tune_trials").set_value(1).run()
    at.number_input(key="tune_epochs").set_value(5).run()
    at.button(key="tune_start").click().run()
    _ok(at)
    job = at.session_state["tune_job"]
    assert (job.base.kernel, job.base.directed) == ("poly", True)
    assert job.join(60)
    at.run()
    _ok(at)
    assert at.metric[0].value.count("±") == 1
    assert not any("Tiny validation set" in w.value for w in at.warning)  # csbm: 90 nodes
    assert any("one standard error of the best trial's validation accuracy on 90 nodes" in c.value
               for c in at.caption)
