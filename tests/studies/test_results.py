"""Depth-study results: the run CSV format, bundled runs, the aggregation per cell, the
requested grid and its keys, and the background sweep into the store."""
from __future__ import annotations

import pandas as pd
import pytest
from dropedge_core import samplers
from dropedge_core._streams import stream_version

from dropedge_explorer import cli
from dropedge_explorer.data import reference
from dropedge_explorer.store import ResultStore, run_key
from dropedge_explorer.studies import depth as depth_study
from dropedge_explorer.studies.cells import cell_summary, depth_table, paper_rows
from dropedge_explorer.studies.run_tables import (
    GROUP_COLUMNS,
    RUN_COLUMNS,
    ResultsError,
    bundled_results,
    bundled_signature,
    cached_runs,
    empty_runs,
    export_runs,
    read_runs,
    run_row,
    store_runs,
)
from dropedge_explorer.training import TrainConfig
from dropedge_explorer.training import _authors as authors
from tests.helpers import REPO
from tests.helpers.runs import result_of


def run_rows(cells: dict[tuple[str, int], list[float]], dataset: str = "cora",
             split: str = "semi", backbone: str = "gcn") -> pd.DataFrame:
    """Run CSV rows: ``{(sampler, layers): [test_acc per seed]}``."""
    rows = [{"dataset": dataset, "split": split, "backbone": backbone, "sampler": s, "layers": L,
             "seed": seed, "test_acc": acc, "best_val_acc": 0.7, "epochs_run": 200,
             "key": f"{s}-{L}-{seed}", "stream": stream_version(s)}
            for (s, L), accs in cells.items() for seed, acc in enumerate(accs)]
    return pd.DataFrame(rows, columns=list(RUN_COLUMNS))


# ----------------------------------------------------------------------------- depth_table
def test_depth_table_mean_std_count_and_order():
    df = run_rows({("dropedge++", 2): [0.80, 0.82, 0.84], ("nodrop", 2): [0.70],
                   ("nodrop", 8): [0.30, 0.50], ("dropedge", 2): [0.75, 0.77]})
    table = depth_table(df)
    assert list(table.columns[:5]) == list(GROUP_COLUMNS)
    # samplers in the paper's order (NoDrop, DropEdge, ..., DropEdge++), depths ascending
    assert list(zip(table["sampler"], table["layers"])) == [
        ("nodrop", 2), ("nodrop", 8), ("dropedge", 2), ("dropedge++", 2)]
    row = table.set_index(["sampler", "layers"])
    assert row.loc[("dropedge++", 2), "test_acc_mean"] == pytest.approx(0.82)
    assert row.loc[("dropedge++", 2), "test_acc_std"] == pytest.approx(0.02)  # sample std
    assert row.loc[("nodrop", 8), "test_acc_std"] == pytest.approx(0.1414, abs=1e-4)
    assert pd.isna(row.loc[("nodrop", 2), "test_acc_std"])  # one run: no spread
    assert row["n"].tolist() == [1, 2, 2, 3]
    assert (row["status"] == "measured").all() and (row["missing"] == 0).all()
    assert row["n_store"].tolist() == [1, 2, 2, 3]  # no source column: the store's
    assert table["layers"].dtype == "int64" and table["n"].dtype == "int64"


def test_depth_table_missing_partial_and_paper():
    df = run_rows({("nodrop", 2): [0.80, 0.82], ("nodrop", 64): [0.2], ("dropedge++", 64): [0.5]})
    df["source"] = ["store", "bundled", "missing", "missing"]
    df.loc[df["source"] == "missing", ["test_acc", "best_val_acc"]] = float("nan")
    extra = df.iloc[[2]].assign(seed=1, key="x", source="store", test_acc=0.3)  # nodrop 64: 1 of 2
    table = depth_table(pd.concat([df, extra]), reference.paper_accuracy_by_depth())
    row = table.set_index(["sampler", "layers"])
    assert row.loc[("nodrop", 2), "status"] == "measured"
    assert row.loc[("nodrop", 2), ["n_store", "n_bundled"]].tolist() == [1, 1]
    assert row.loc[("nodrop", 64), "status"] == "partial"
    assert row.loc[("nodrop", 64), ["n", "missing"]].tolist() == [1, 1]
    assert row.loc[("nodrop", 64), "test_acc_mean"] == pytest.approx(0.3)  # the missing one left out
    assert row.loc[("dropedge++", 64), "status"] == "missing"
    assert pd.isna(row.loc[("dropedge++", 64), "test_acc_mean"])
    # the paper's Cora semi GCN numbers (percent in the table, fractions here)
    assert row.loc[("nodrop", 2), "paper_test_acc"] == pytest.approx(0.811)
    assert row.loc[("nodrop", 64), "paper_test_acc"] == pytest.approx(0.287)
    assert row.loc[("dropedge++", 64), "paper_test_acc"] == pytest.approx(0.552)
    assert row.loc[("nodrop", 2), "diff_vs_paper"] == pytest.approx(0.81 - 0.811)
    # karate: no paper number
    other = depth_table(run_rows({("nodrop", 2): [0.5]}, dataset="karate", split="per-class"),
                                reference.paper_accuracy_by_depth())
    assert other["paper_test_acc"].isna().all()


def test_depth_table_of_nothing():
    table = depth_table(empty_runs(), reference.paper_accuracy_by_depth())
    assert table.empty and {"test_acc_mean", "status", "paper_test_acc"} <= set(table.columns)


def test_paper_rows_filter():
    paper = reference.paper_accuracy_by_depth()
    rows = paper_rows(paper, "cora", "semi", ["gcn", "appnp*"], ["nodrop", "dropedge++"], [2, 4, 64])
    assert set(rows["backbone_key"]) == {"gcn", "appnp_star"}
    assert set(rows["sampler"]) == {"nodrop", "dropedge++"} and set(rows["layers"]) == {2, 4, 64}
    assert len(rows) == 2 * 3 + 2 * 2  # APPNP* starts at 4 layers in the paper
    assert paper_rows(paper, "karate", "per-class").empty


# ----------------------------------------------------------------------------- the CSV format
def test_bundled_results_reads_every_csv(tmp_path):
    assert bundled_results(tmp_path / "nothing").empty  # no folder
    assert bundled_results(tmp_path).empty  # no files
    assert list(bundled_results(tmp_path).columns) == list(RUN_COLUMNS)
    a = run_rows({("nodrop", 2): [0.8, 0.81]})
    b = run_rows({("dropedge++", 4): [0.83]}, backbone="GCN")
    (tmp_path / "sub").mkdir()
    a.to_csv(tmp_path / "cora_a.csv", index=False)
    pd.concat([b, a.iloc[[0]]]).assign(extra="ignored").to_csv(tmp_path / "sub" / "b.csv", index=False)
    (tmp_path / "notes.txt").write_text("not a run file")
    df = bundled_results(tmp_path)
    assert len(df) == 3  # the run in both files counts once
    assert list(df.columns) == list(RUN_COLUMNS)
    assert set(df["backbone"]) == {"gcn"}  # names normalised to lower case
    assert df["layers"].dtype == "int64" and df["test_acc"].dtype == float
    sig = bundled_signature(tmp_path)
    assert len(sig) == 2
    b.to_csv(tmp_path / "c.csv", index=False)
    assert bundled_signature(tmp_path) != sig


def test_a_run_csv_from_before_appnp_star_reads_as_appnp_star(tmp_path):
    """Files written while the identifier was ``appnp*`` still load, with today's name (so
    their rows group, sort and are labelled with the appnp_star runs)."""
    run_rows({("dropedge++", 4): [0.83, 0.84]}, backbone="appnp*").to_csv(tmp_path / "old.csv", index=False)
    df = bundled_results(tmp_path)
    assert list(df["backbone"]) == ["appnp_star", "appnp_star"]
    assert list(depth_table(df)["backbone"]) == ["appnp_star"]


def test_bundled_results_keep_an_older_streams_runs_out(tmp_path):
    """A file without the stream column is stream 1: its DropEdge++ rows (stream 2 today) are
    left out of bundled_results (never pooled with today's runs) unless asked for; its NoDrop
    rows (stream 1 today) count."""
    run_rows({("dropedge++", 4): [0.83, 0.84], ("nodrop", 4): [0.8]}).drop(columns="stream") \
        .to_csv(tmp_path / "old.csv", index=False)
    assert list(bundled_results(tmp_path)["sampler"]) == ["nodrop"]
    every = bundled_results(tmp_path, include_older=True)
    assert sorted(every["sampler"]) == ["dropedge++", "dropedge++", "nodrop"]
    assert list(every["stream"]) == [1, 1, 1]


def test_bundled_results_default_folder_and_bad_files(tmp_path, monkeypatch):
    monkeypatch.setattr("dropedge_explorer.studies.run_tables.BUNDLED_DIR", tmp_path)
    run_rows({("nodrop", 2): [0.8]}).to_csv(tmp_path / "ok.csv", index=False)
    assert len(bundled_results()) == 1
    run_rows({("nodrop", 4): [0.8]}).drop(columns=["key", "seed"]).to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(ResultsError, match=r"bad\.csv lacks column\(s\) seed, key"):
        bundled_results()
    run_rows({("nodrop", 4): [0.8]}).assign(layers="deep").to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(ResultsError, match="bad.csv has a bad value"):
        bundled_results()
    (tmp_path / "bad.csv").write_text("")
    assert len(bundled_results()) == 1  # an empty file holds no runs


def test_export_runs_roundtrip(tmp_path):
    store = ResultStore(tmp_path / "r.sqlite")
    configs = depth_study.depth_configs("karate", None, ["gcn"], [4, 2], ["nodrop", "dropedge++"], seeds=2,
                                    epochs=3, mode="quick")
    for i, config in enumerate(configs):
        store.put(result_of(config, test_acc=None if i == 0 else i / 10))
    path = export_runs(store, tmp_path / "out" / "karate.csv")
    text = path.read_text().splitlines()
    assert text[0] == ",".join(RUN_COLUMNS)  # the format's header, in order
    back = read_runs(path)
    assert len(back) == len(configs) == 8
    assert set(back["key"]) == {run_key(c) for c in configs}
    assert back[["sampler", "layers", "seed"]].values.tolist()[:2] == [["nodrop", 2, 0], ["nodrop", 2, 1]]
    merged = back.merge(store_runs(store), on="key", suffixes=("", "_store"))
    for c in ("dataset", "split", "backbone", "sampler", "layers", "seed", "epochs_run"):
        assert (merged[c] == merged[f"{c}_store"]).all()
    assert back["test_acc"].isna().sum() == 1  # a run without a test accuracy: an empty cell
    assert back.dropna()["test_acc"].tolist() == pytest.approx(
        merged.dropna()["test_acc_store"].tolist())
    # bundled: the exported file is read back as is
    assert bundled_results(tmp_path / "out")["key"].tolist() == back["key"].tolist()
    # only some keys
    some = export_runs(store, tmp_path / "some.csv", keys=[run_key(configs[1])])
    assert read_runs(some)["key"].tolist() == [run_key(configs[1])]
    with pytest.raises(ResultsError, match="CSV"):
        export_runs(store, tmp_path / "x.parquet")


# ----------------------------------------------------------------------------- the grid
def test_depth_configs_order_settings_and_keys():
    configs = depth_study.depth_configs("cora", "semi", ["gcn", "resgcn"], [8, 2], seeds=2, epochs=50,
                                    mode="paper preset")
    assert len(configs) == 2 * 2 * 3 * 2
    assert [(c.seed, c.backbone, c.num_layers, c.sampler) for c in configs[:4]] == [
        (0, "gcn", 2, "nodrop"), (0, "gcn", 2, "dropedge"), (0, "gcn", 2, "dropedge++"),
        (0, "gcn", 8, "nodrop")]
    assert {c.seed for c in configs[:12]} == {0}  # seed by seed
    assert all(c.diag_every == 0 and c.epochs == 50 for c in configs)
    gcn = configs[0]
    # the paper's Cora semi GCN preset (its depth replaced), ResGCN's own
    assert (gcn.hidden, gcn.dropout, gcn.p_min, gcn.normalization) == (256, 0.8, 0.8, "ANS")
    resgcn = configs[6]
    assert resgcn.backbone == "resgcn" and (resgcn.hidden, resgcn.normalization) == (64, "ARW")
    quick = depth_study.depth_configs("cora", "semi", ["gcn"], [2, 16], ["nodrop"], seeds=[5], epochs=50,
                                  mode="quick", p_min=0.2, p_max=0.6)
    assert (quick[0].hidden, quick[0].p_min, quick[0].p_max, quick[0].seed) == (128, 0.2, 0.6, 5)
    assert quick[1].lr == quick[0].lr == 0.01 and quick[1].recipe == "quick"
    depth = depth_study.depth_configs("cora", "semi", ["gcn"], [2, 16, 64], ["nodrop"], seeds=1)
    assert [c.lr for c in depth] == [0.01, 0.001, 0.001]  # the depth recipe, by depth
    assert [c.epochs for c in depth] == [200, 300, 400]
    assert [c.self_loop for c in depth] == [False, True, True]
    assert all(c.recipe == "depth" and c.settings == "depth" for c in depth)
    assert depth_study.study_settings("karate", None, "gcn", "paper preset")[1] == "depth"  # no preset
    with pytest.raises(ResultsError, match="valid: depth recipe"):
        depth_study.study_settings("cora", "semi", "gcn", "fast")
    assert len({run_key(c) for c in configs}) == len(configs)


@pytest.mark.parametrize("dataset,mode,epochs", [
    ("cora", "paper preset", 30), ("karate", "paper preset", None), ("karate", "quick", 30),
    ("cora", "quick + batch norm", 30), ("cora", "depth recipe", None)])
def test_sweep_commands_make_the_same_keys(dataset, mode, epochs):
    """``python -m dropedge_core sweep`` with the page's printed command trains the runs
    the page asks for: the same run keys."""
    kwargs = dict(backbones=["gcn", "appnp_star"], layers=[2, 4], samplers=["nodrop", "dropedge++"],
                  seeds=2, epochs=epochs, mode=mode, p_min=0.25, p_max=0.75)
    configs = depth_study.depth_configs(dataset, None, **kwargs)
    lines = depth_study.sweep_commands(dataset, None, **kwargs, store="/tmp/r.sqlite")
    keys = set()
    for line in lines:
        args = cli.build_parser().parse_args(__import__("shlex").split(line)[3:])
        assert args.store == "/tmp/r.sqlite"
        for d in args.datasets:
            for b in args.backbones:
                for L in args.layers:
                    for s in args.samplers:
                        for seed in args.seeds:
                            keys.add(run_key(cli.make_config(args, d, b, num_layers=L, sampler=s,
                                                             seed=seed)))
    assert keys == {run_key(c) for c in configs}
    batch_norm = mode == "quick + batch norm"
    assert all(c.batch_norm == batch_norm for c in configs if c.recipe != "paper")
    assert ("--batch-norm" in " ".join(lines)) == batch_norm


def test_requested_runs_and_sources():
    configs = depth_study.depth_configs("karate", None, ["gcn"], [2, 4], ["nodrop"], seeds=2, epochs=5)
    rows = [run_row(c) | {"test_acc": 0.5, "best_val_acc": 0.6, "epochs_run": 5} for c in configs]
    store_df = pd.DataFrame(rows[:2])[list(RUN_COLUMNS)]
    bundled_df = pd.DataFrame(rows[1:3])[list(RUN_COLUMNS)].assign(test_acc=0.9)
    cached = cached_runs(store_df, bundled_df)
    assert cached["source"].tolist() == ["store", "store", "bundled"]  # the store wins a tie
    runs = depth_study.requested_runs(configs, cached)
    assert runs["source"].tolist() == ["store", "store", "bundled", "missing"]
    assert runs["test_acc"].tolist()[:3] == [0.5, 0.5, 0.9] and pd.isna(runs["test_acc"].iloc[3])
    assert depth_study.other_runs(cached, runs, "karate", "per-class") == 0
    more = configs[0].replace(epochs=6)
    cached2 = cached_runs(pd.concat([store_df, pd.DataFrame(
        [run_row(more) | {"test_acc": 0.1, "best_val_acc": 0.1, "epochs_run": 6}])]))
    assert depth_study.other_runs(cached2, runs, "karate", "per-class") == 1
    assert depth_study.requested_runs(configs, empty_runs())["source"].eq("missing").all()


def test_shipped_results_are_runs_the_page_asks_for():
    """Every run bundled under assets/results/ is one the Depth study page requests with
    its defaults (200 epochs, the sidebar's default keep rates 0.3 -> 0.8) in one of its
    settings modes — quick, quick + batch norm, paper preset — any sampler, seeds 0..9 (the
    contested cells have 10): no shipped run is invisible in the app. The one exception: the
    ``authors`` recipe's runs (docs/REPRODUCTION.md sections 3b and 3c; the page counts them
    among "other runs"), which must be what ``sweep --recipe authors`` asks for: the authors'
    presets with DropEdge++, or a cell the authors' own code ran (its depth and sampler, in
    ``assets/authors_code/runs.csv``), seeds 0..9."""
    shipped = bundled_results()
    assert len(shipped), "no bundled results"
    assert shipped["key"].is_unique
    wanted = {run_key(TrainConfig(dataset=d, split=sp, backbone=b, recipe="authors", seed=seed, diag_every=0))
              for (d, sp, b) in authors.SCRIPTS for seed in range(10)}
    code_cells = pd.read_csv(REPO / "dropedge_explorer" / "assets" / "authors_code" / "runs.csv")
    cells = code_cells[["dataset", "split", "backbone", "layers", "sampler"]].drop_duplicates()
    for _, cell in cells.iterrows():
        wanted |= {run_key(TrainConfig(dataset=cell["dataset"], split=cell["split"],
                                       backbone=cell["backbone"], num_layers=int(cell["layers"]),
                                       sampler=cell["sampler"], recipe="authors", seed=seed, diag_every=0))
                   for seed in range(10)}
    for (dataset, split), part in shipped.groupby(["dataset", "split"]):
        backbones = sorted(part["backbone"].unique())
        for mode in depth_study.MODES:
            wanted |= {run_key(c) for c in depth_study.depth_configs(
                dataset, split, backbones, depth_study.DEPTHS, samplers.NAMES, seeds=10,
                epochs=None if mode == "depth recipe" else 200, mode=mode, p_min=0.3, p_max=0.8)}
    unseen = shipped[~shipped["key"].isin(wanted)]
    assert unseen.empty, unseen[list(GROUP_COLUMNS)].drop_duplicates().to_string()


def test_cell_summary_is_mean_and_sample_std_per_cell_without_nans():
    df = pd.DataFrame({"sampler": ["nodrop", "nodrop", "nodrop", "dropedge", "fd"],
                       "test_acc": [0.8, 0.9, float("nan"), 0.7, float("nan")]})
    out = cell_summary(df, by=["sampler"]).set_index("sampler")
    assert out.loc["nodrop", "test_acc_mean"] == pytest.approx(0.85)
    assert out.loc["nodrop", "test_acc_std"] == pytest.approx(0.0707107, rel=1e-5)
    assert out.loc["nodrop", "n"] == 2 and out.loc["fd", "n"] == 0
    assert pd.isna(out.loc["dropedge", "test_acc_std"]) and pd.isna(out.loc["fd", "test_acc_mean"])
    assert cell_summary(df, by=["sampler"], one_run_std=0.0).set_index("sampler").loc[
        "dropedge", "test_acc_std"] == 0.0
    assert cell_summary(df.iloc[0:0], by=["sampler"]).columns.tolist() == [
        "sampler", "test_acc_mean", "test_acc_std", "n"]
