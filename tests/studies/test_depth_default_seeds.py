"""The Depth study opens on what docs/REPRODUCTION.md says: with the page's default request
(depth recipe, every depth, the three samplers, the sidebar's default keep rates) and the
"Seeds" box's default (:func:`dropedge_explorer.studies.depth.default_seeds`), the view's paired
tests and its "Does DropEdge++ lead?" sentence are the document's, both computed by
:mod:`dropedge_explorer.studies.ordering` — the page from the runs it found by key, the document
from the bundled CSVs' today's-stream rows."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from dropedge_core import samplers

from app_shared import DEFAULT_RATES
from dropedge_explorer.data import reference
from dropedge_explorer.studies import depth, fingerprints, ordering
from dropedge_explorer.studies.depth_view import depth_view
from dropedge_explorer.studies.run_tables import bundled_results, cached_runs, empty_runs

DOC = Path(__file__).resolve().parents[2] / "docs" / "REPRODUCTION.md"
COMPARED = ["layers", "better", "worse", "n", "diff_mean", "p_value", "p_holm", "verdict"]


def _tables() -> list[tuple[str, str, str]]:
    runs = bundled_results()
    return sorted(runs[runs["settings"] == "depth"].groupby(["dataset", "split", "backbone"]).groups)


def _default_view(dataset: str, split: str, backbone: str, seeds: int | None = None):
    cached = cached_runs(empty_runs(), bundled_results())
    p_min, p_max = DEFAULT_RATES
    kernel = samplers.KERNELS[0]  # the page's kernel box opens on the first
    if seeds is None:
        seeds = depth.default_seeds(dataset, split, [backbone], depth.DEPTHS, depth.STUDY_SAMPLERS, cached,
                                    depth.MODES[0], p_min, p_max, kernel, False)
    return depth_view(dataset, split, [backbone], depth.DEPTHS, depth.STUDY_SAMPLERS, seeds, None,
                      depth.MODES[0], p_min, p_max, kernel, False, cached,
                      reference.paper_accuracy_by_depth())


def _documents(dataset: str, split: str, backbone: str) -> pd.DataFrame:
    runs = fingerprints.current(bundled_results())
    return runs[(runs["settings"] == "depth") & (runs["dataset"] == dataset) & (runs["split"] == split)
                & (runs["backbone"] == backbone)]


def _claims(runs: pd.DataFrame) -> pd.DataFrame:
    return ordering.compare_samplers(runs)[COMPARED].reset_index(drop=True)


@pytest.mark.parametrize("table", _tables(), ids="-".join)
def test_the_page_opens_on_the_documents_verdicts(table):
    dataset, split, backbone = table
    view, documented = _default_view(*table), _documents(*table)
    pd.testing.assert_frame_equal(_claims(view.measured), _claims(documented))
    sentence = ordering.leader_sentence(documented)
    assert dict(view.verdicts).get(backbone) == sentence
    if sentence:  # and the document prints that sentence under the table
        text = DOC.read_text(encoding="utf-8")
        block = text.split(f"<!-- repro_tables: depth {dataset} {split} {backbone} -->")[1]
        assert sentence in block.split("<!-- /repro_tables:")[0]


def test_the_default_takes_every_cached_seed_and_no_fewer_than_three():
    cora = _documents("cora", "semi", "gcn")
    assert _default_view("cora", "semi", "gcn").configs[-1].seed + 1 == max(
        depth.FEWEST_DEFAULT_SEEDS, int(cora["seed"].max()) + 1 if len(cora) else 0)
    # nothing cached: the box's old default
    nothing = depth.default_seeds("karate", None, ["gcn"], [2], ["nodrop"], empty_runs())
    assert nothing == depth.FEWEST_DEFAULT_SEEDS
