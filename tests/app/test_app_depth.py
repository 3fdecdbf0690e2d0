"""The Depth study page through ``AppTest``: a temporary results store
(``DROPEDGE_RESULTS``) pre-filled with tiny karate runs, bundled runs from a temporary
folder, the paper's overlay on Cora, and "Run missing" training into the store."""
from __future__ import annotations

import time

import numpy as np
import pytest
from dropedge_core import datasets
from scipy import stats

from dropedge_explorer.figures import SAMPLER_COLORS, SAMPLER_LABELS
from dropedge_explorer.jobs.handles import SweepJob
from dropedge_explorer.jobs.queue import JobQueue
from dropedge_explorer.store import ResultStore, run_key
from dropedge_explorer.studies import depth as depth_study
from dropedge_explorer.studies.run_tables import bundled_results, cached_runs, export_runs, store_runs
from tests.helpers.app import _app, _charts, _ok, _values, depth_page, open_page, query_param

PAGE = "app_pages/depth_study.py"
EPOCHS = 4


@pytest.fixture
def store(tmp_path, monkeypatch):
    """An empty results store the page uses, and no bundled runs."""
    monkeypatch.setenv("DROPEDGE_RESULTS", str(tmp_path / "results.sqlite"))
    monkeypatch.setattr("dropedge_explorer.studies.run_tables.BUNDLED_DIR", tmp_path / "bundled")
    return ResultStore(tmp_path / "results.sqlite")


def _fill(store: ResultStore, configs, graph) -> None:
    """Train ``configs`` (tiny) into ``store``."""
    job = SweepJob(configs, JobQueue(max_running=1, store=str(store.path)), graph=graph).start()
    assert job.join(300) and not job.failures and job.error is None, job.status




def _lines(fig: dict, paper: bool) -> dict[str, dict]:
    return {t["name"]: t for t in fig["data"] if ("(paper)" in t["name"]) == paper}


def _table(at):
    return at.dataframe[0].value


def test_cached_runs_show_at_once_store_and_bundled(store, tmp_path, karate):
    configs = depth_study.depth_configs("karate", None, ["gcn"], [2, 4], depth_study.STUDY_SAMPLERS, seeds=2,
                                    epochs=EPOCHS, mode="quick")
    stored, bundled = configs[:9], configs[9:]  # seed 0 and half of seed 1 / the rest
    _fill(store, stored, karate)
    other = ResultStore(tmp_path / "other.sqlite")
    _fill(other, bundled, karate)
    export_runs(other, tmp_path / "bundled" / "karate.csv")

    at = depth_page()
    assert at.title[0].value == "Depth study"
    assert any("**GCN**: the quick recipe — L = 2: hidden 128" in c.value for c in at.caption)
    assert at.button(key="ds_run").label == "Run missing (0)" and at.button(key="ds_run").disabled
    # karate has no paper preset: the depth recipe (other runs), said so
    at.radio(key="ds_mode").set_value("paper preset").run()
    _ok(at)
    assert any("**GCN**: the depth recipe — L = 2: hidden 128" in c.value and "no preset here for karate"
               in c.value for c in at.caption)
    assert at.button(key="ds_run").label == "Run missing (12)"
    # quick + batch norm: other runs (batch norm is part of the run key), none of them cached
    at.radio(key="ds_mode").set_value("quick + batch norm").run()
    _ok(at)
    assert any("**GCN**: the quick recipe — L = 2: hidden 128" in c.value and "· batch norm" in c.value
               for c in at.caption)
    assert at.button(key="ds_run").label == "Run missing (12)"
    assert "--batch-norm" in at.code[0].value
    at.radio(key="ds_mode").set_value("quick").run()
    assert any("**9 from the results store**, **3 bundled with the app**, **0 missing**" in c.value
               for c in at.caption)
    fig = _charts(at)["ds_figure"]
    measured = _lines(fig, paper=False)
    assert list(measured) == ["NoDrop", "DropEdge", "DropEdge++"] and not _lines(fig, paper=True)
    assert measured["DropEdge++"]["line"]["color"] == SAMPLER_COLORS["dropedge++"]
    for trace in measured.values():
        assert _values(trace["customdata"])[:, 2].astype(int).tolist() == [2, 4]
    assert [a["text"] for a in fig["layout"]["annotations"]] == ["GCN"]
    # the figure's points are the means of the stored + bundled runs
    runs = depth_study.requested_runs(configs, cached_runs(store_runs(store),
                                                               bundled_results()))
    want = runs[runs["sampler"] == "nodrop"].groupby("layers")["test_acc"].mean() * 100
    assert np.allclose(_values(measured["NoDrop"]["y"]).astype(float), want.values)
    table = _table(at)
    assert len(table) == 6 and (table["status"] == "measured").all() and (table["n"] == 2).all()
    assert table["n_store"].sum() == 9 and table["n_bundled"].sum() == 3
    # the claim said plainly, from the drawn means
    lead = [m.value for m in at.markdown if m.value.startswith("**Does DropEdge++ lead?**")]
    means = table.pivot_table(index="layers", columns="sampler", values="test_acc_mean")
    leads = sorted(int(L) for L in means.index if means.loc[L, "DropEdge++"] >= means.loc[L].max())
    assert len(lead) == 1 and "GCN: DropEdge++" in lead[0]
    if len(leads) == 2:
        assert "at every depth measured (L = 2, 4)" in lead[0]
    elif not leads:
        assert "does not lead at any depth" in lead[0]
    else:
        assert f"at L = {leads[0]}, but not" in lead[0]
    # ... then the corrected tests: DropEdge++ vs each other sampler at L = 2 and 4, paired by
    # seed (scipy), Holm by hand over each claim's depths (one family per rival), counting only
    # the tests that have a p (a constant difference has none)
    raw = {}
    for L in (2, 4):
        acc = runs[runs["layers"] == L].pivot_table(index="seed", columns="sampler", values="test_acc")
        for other in ("dropedge", "nodrop"):
            d = acc["dropedge++"] - acc[other]
            if d.std(ddof=1) > 1e-12:
                raw[(L, other)] = stats.ttest_rel(acc["dropedge++"], acc[other]).pvalue
    holm = {}
    for other in ("dropedge", "nodrop"):
        family = {k: p for k, p in raw.items() if k[1] == other}
        running = 0.0
        for k, key in enumerate(sorted(family, key=family.get)):
            running = max(running, min(1.0, (len(family) - k) * family[key]))
            holm[key] = running
    if raw:
        assert "one family per claim, at every depth measured" in lead[0]
    if raw and all(p >= 0.05 for p in holm.values()):
        assert "No difference is shown at any depth" in lead[0]
    tests = next((d.value for d in at.dataframe if "p_holm" in d.value.columns), None)
    assert tests is not None  # both samplers ran at both depths: the table is there
    for (L, other), p in holm.items():
        row = tests[(tests["layers"] == L) & (tests["worse"] == SAMPLER_LABELS[other])]
        assert float(row["p_holm"].iloc[0]) == pytest.approx(p)
        assert row["verdict"].iloc[0] == ("not shown" if p >= 0.05 else
                                          "shown" if float(row["diff_mean"].iloc[0]) > 0 else "reversed")
    assert table["paper_test_acc"].isna().all()
    assert any("reports no numbers for karate" in c.value for c in at.caption)
    # the CSV download of that table
    buttons = {b.proto.label: b for b in at.get("download_button")}
    assert "Download this table (CSV)" in buttons
    # one seed more: those cells become partial and the button offers the missing runs
    at.number_input(key="ds_seeds").set_value(3).run()
    _ok(at)
    assert at.button(key="ds_run").label == "Run missing (6)" and not at.button(key="ds_run").disabled
    assert (_table(at)["status"] == "partial").all()


def test_run_missing_trains_into_the_store(store):
    at = depth_page(seeds=1)
    assert at.info and "Nothing measured" in at.info[0].value and not _charts(at)
    configs = depth_study.depth_configs("karate", None, ["gcn"], [2, 4], depth_study.STUDY_SAMPLERS, seeds=1,
                                    epochs=EPOCHS, mode="quick")
    assert not any(store.has(c) for c in configs)
    at.button(key="ds_run").click().run()
    _ok(at)
    job = at.session_state["ds_job"]
    deadline = time.monotonic() + 60
    while not job.done:  # the fragment polls it
        assert time.monotonic() < deadline, "the sweep did not finish"
        time.sleep(0.2)
        at.run()
        _ok(at)
    at.run()
    _ok(at)
    assert job.stored == 6 and all(store.has(c) for c in configs)
    assert set(job.stored_keys) == {run_key(c) for c in configs}
    assert at.success and "finished · 6 of 6 runs trained and stored" in at.success[0].value
    assert at.button(key="ds_run").label == "Run missing (0)" and at.button(key="ds_stop").disabled
    fig = _charts(at)["ds_figure"]
    assert list(_lines(fig, paper=False)) == ["NoDrop", "DropEdge", "DropEdge++"]
    assert (_table(at)["status"] == "measured").all()
    # stored runs are never redone: with a second seed only seed 1's runs are missing
    at.number_input(key="ds_seeds").set_value(2).run()
    assert at.button(key="ds_run").label == "Run missing (6)"
    at.button(key="ds_run").click().run()
    _ok(at)
    second = at.session_state["ds_job"]
    assert second is not job and {c.seed for c in second.configs} == {1}
    assert second.join(60) and second.stored == 6 and len(store) == 12


def test_cora_paper_overlay(store, cora):
    configs = depth_study.depth_configs("cora", "semi", ["gcn"], [2], ["nodrop"], seeds=1, epochs=EPOCHS,
                                    mode="paper preset")
    _fill(store, configs, cora)
    at = depth_page(depths=(2, 64), seeds=1, dataset="cora")
    at.radio(key="ds_mode").set_value("paper preset").run()
    _ok(at)
    assert any("**GCN**: the paper preset (tuned for L = 4) — L = 2: hidden 256" in c.value
               for c in at.caption)
    fig = _charts(at)["ds_figure"]
    paper = _lines(fig, paper=True)
    assert list(paper) == ["NoDrop (paper)", "DropEdge (paper)", "DropEdge++ (paper)"]
    assert all(t["line"]["dash"] == "dash" for t in paper.values())
    assert _values(paper["NoDrop (paper)"]["y"]).astype(float).tolist() == [81.1, 28.7]
    assert _values(paper["DropEdge++ (paper)"]["y"]).astype(float).tolist() == [82.9, 55.2]
    measured = _lines(fig, paper=False)
    assert list(measured) == ["NoDrop"]
    assert _values(measured["NoDrop"]["customdata"])[:, 2].astype(int).tolist() == [2]
    table = _table(at).set_index(["sampler", "layers"])
    assert table.loc[("NoDrop", 2), "status"] == "measured"
    assert table.loc[("NoDrop", 64), "status"] == "missing"
    assert table.loc[("NoDrop", 64), "paper_test_acc"] == pytest.approx(28.7)  # shown in %
    assert at.button(key="ds_run").label == "Run missing (5)"
    assert any("Dashed lines, open circles" in c.value for c in at.caption)
    # the full split: other paper numbers, no measured run
    at.selectbox(key="split").select("full").run()
    _ok(at)
    paper = _lines(_charts(at)["ds_figure"], paper=True)
    assert _values(paper["NoDrop (paper)"]["y"]).astype(float)[0] != 81.1


def test_unusable_store_and_unavailable_dataset(tmp_path, monkeypatch):
    monkeypatch.setenv("DROPEDGE_RESULTS", str(tmp_path))  # a directory: no store
    monkeypatch.setattr("dropedge_explorer.studies.run_tables.BUNDLED_DIR", tmp_path / "bundled")
    (tmp_path / "bundled").mkdir()
    (tmp_path / "bundled" / "bad.csv").write_text("dataset,split\nkarate,per-class\n")
    at = depth_page(depths=(2,), seeds=1)
    assert any("cannot be opened" in c.value and "is a directory" in c.value for c in at.caption)
    assert at.warning and "bad.csv lacks column(s)" in at.warning[0].value
    assert at.button(key="ds_run").disabled and at.button(key="ds_run").label == "Run missing (3)"
    if datasets.availability("pubmed") == "download":
        at.selectbox(key="dataset").select("pubmed").run()
        _ok(at)
        # no graph needed to show cached runs and the paper's numbers: a note, not an error
        assert [e.value for e in at.error] == [at.error[0].value] and "Results store" in at.error[0].value
        assert any("**pubmed** is not on this machine" in i.value for i in at.info)
        assert at.button(key="ds_run").disabled


def _mine(at) -> list[str]:
    return [i.value for i in at.info if "of your run(s)" in i.value]


def test_the_default_view_finds_a_live_training_run_and_offers_to_show_it(store, karate):
    """Issue 24 (4): a run trained with 6 epochs at L = 8 (as Live training makes one) is
    not in the default request (the recipe's epochs, seeds 0-2): the page says where it is
    in one line, and "Show my runs" brings it into the view."""
    shown = depth_study.depth_configs("karate", None, ["gcn"], [2], ["nodrop"], seeds=1, epochs=None)
    mine = depth_study.depth_configs("karate", None, ["gcn"], [8], ["dropedge++"], seeds=1,
                                 epochs=6)[0].replace(seed=4, diag_every=5)  # Live training's diagnostics
    _fill(store, [*shown, mine], karate)
    at = _app()
    at.switch_page(PAGE).run()
    _ok(at)
    lines = _mine(at)
    assert len(lines) == 1 and lines[0].startswith("1 of your run(s) of karate/per-class")
    assert "“depth recipe, keep rates 0.30 → 0.80, 6 epochs”" in lines[0] and "seeds 4" in lines[0]
    runs = at.dataframe[1].value  # the runs of the view, one row per seed
    assert run_key(mine) not in set(runs["key"])
    at.button(key="ds_show_mine").click().run()
    _ok(at)
    # now the recipe-epochs run at L = 2 is the one outside the view, and said so
    want = (" it was made with the settings “depth recipe, keep rates 0.30 → 0.80” (gcn · nodrop · L = 2 · "
            "seeds 0); “Show my runs” switches the view to them.")
    assert [line.split(":")[1] for line in _mine(at)] == [want]
    assert at.number_input(key="ds_epochs").value == 6 and at.number_input(key="ds_seeds").value == 5
    assert 8 in at.multiselect(key="ds_depths").value
    assert "dropedge++" in at.multiselect(key="ds_samplers").value
    runs = at.dataframe[1].value
    row = runs[runs["key"] == run_key(mine)]
    assert len(row) == 1 and row["source"].iloc[0] == "store"
    assert row["test_acc"].iloc[0] == pytest.approx(100 * store.get(mine)["test_acc"])


def test_runs_with_settings_the_page_cannot_ask_for_are_listed(store, karate):
    shown = depth_study.depth_configs("karate", None, ["gcn"], [2], ["nodrop"], seeds=1, epochs=None)
    odd = depth_study.depth_configs("karate", None, ["gcn"], [5], ["lid"], seeds=1, epochs=3)[0]
    _fill(store, [*shown, odd], karate)
    at = _app()
    at.switch_page(PAGE).run()
    lines = _mine(at)
    assert len(lines) == 1 and "L = 5" in lines[0] and "lists them" in lines[0]
    assert "ds_show_mine" not in [b.key for b in at.button]
    at.toggle(key="ds_list_mine").set_value(True).run()
    _ok(at)
    listed = next(d.value for d in at.dataframe if "key" in d.value and len(d.value) == 1)
    assert listed["key"].iloc[0] == run_key(odd)


def test_a_sweep_outlives_its_tab_and_a_reloaded_page_finds_it(store):
    """"Run missing", then the tab closes: the sweep trains and stores every run unwatched;
    a new session with ``?sweep=<id>`` shows how it ended."""


    at = depth_page(depths=(2,), seeds=1)
    at.button(key="ds_run").click().run()
    _ok(at)
    job = at.session_state["ds_job"]
    job_id = query_param(at, "sweep")
    del at  # nobody polls from here on
    assert job.join(300) and job.stored == 3 and not job.stopped  # a closed tab leaves it running
    again = open_page(PAGE, sweep=job_id)
    assert again.session_state["ds_job"] is job
    assert again.success and "finished · 3 of 3 runs trained and stored" in again.success[0].value


def test_run_missing_can_train_a_cells_seeds_together(store):
    at = depth_page(depths=(2,), seeds=2)
    box = at.checkbox(key="ds_batch")
    assert not box.value and "Faster on a GPU, about the same on a CPU" in box.help
    box.check().run()
    at.button(key="ds_run").click().run()
    _ok(at)
    job = at.session_state["ds_job"]
    assert job.options["batch_seeds"]
    assert job.join(300) and job.stored == 6 and not job.failures
    assert job.batch_sizes == [2, 2, 2]  # one batch per cell (sampler), its two seeds together
    configs = depth_study.depth_configs("karate", None, ["gcn"], [2], depth_study.STUDY_SAMPLERS, seeds=2,
                                        epochs=EPOCHS, mode="quick")
    assert set(job.stored_keys) == {run_key(c) for c in configs}
    at.run()
    assert at.success and "finished · 6 of 6 runs trained and stored" in at.success[0].value
