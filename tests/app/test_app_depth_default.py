"""The Depth study page, opened on Cora semi with the bundled runs and an empty store, shows
every bundled seed by default (its "Seeds" box is :func:`depth.default_seeds`, not a fixed
3), and its "Does DropEdge++ lead?" line is the one docs/REPRODUCTION.md prints under the
Cora semi GCN table (:func:`ordering.leader_sentence` of today's-stream rows)."""
from __future__ import annotations

from app_shared import DEFAULT_RATES
from dropedge_explorer.studies import depth, fingerprints, ordering
from dropedge_explorer.studies.run_tables import bundled_results, cached_runs, empty_runs
from tests.helpers.app import _app, _ok

DEPTH_PAGE = "app_pages/depth_study.py"


def test_the_depth_study_opens_on_every_bundled_seed_and_the_documents_verdict(tmp_path, monkeypatch):
    monkeypatch.setenv("DROPEDGE_RESULTS", str(tmp_path / "results.sqlite"))  # nothing stored
    at = _app()
    at.selectbox(key="dataset").select("cora").run()
    at.selectbox(key="split").select("semi").run()
    at.switch_page(DEPTH_PAGE).run()
    _ok(at)
    cached = cached_runs(empty_runs(), bundled_results())
    want = depth.default_seeds("cora", "semi", ["gcn"], depth.DEPTHS, depth.STUDY_SAMPLERS, cached,
                               depth.MODES[0], *DEFAULT_RATES)
    assert want > depth.FEWEST_DEFAULT_SEEDS  # Cora semi GCN has more bundled seeds than the old default
    assert at.number_input(key="ds_seeds").value == want
    runs = fingerprints.current(bundled_results())
    runs = runs[(runs["settings"] == "depth") & (runs["dataset"] == "cora") & (runs["split"] == "semi")
                & (runs["backbone"] == "gcn")]
    sentence = ordering.leader_sentence(runs)
    shown = [m.value for m in at.markdown if m.value.startswith("**Does DropEdge++ lead?**")]
    if sentence is None:
        assert not shown
    else:
        assert shown and f"GCN: {sentence}" in shown[0]
