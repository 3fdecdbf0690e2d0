"""studies/cells.py against numbers worked out by hand on small fixed tables: the per-cell
summary, the depth table's counts and paper columns, the paper filter, the gap list and the
reproduction notes. Each test was written to kill the mutants that survived
``python tools/mutation.py cells`` (docs/TESTING_MUTATION.md)."""
from __future__ import annotations

import math

import pandas as pd
import pytest
from dropedge_core._streams import stream_version

from dropedge_explorer.studies import cells
from dropedge_explorer.studies.run_tables import PRINT_COLUMNS, RUN_COLUMNS


def _runs(rows: list[tuple]) -> pd.DataFrame:
    """Run rows ``(sampler, layers, test_acc, best_val_acc, source)`` of one cora/semi/gcn study."""
    df = pd.DataFrame([{"dataset": "cora", "split": "semi", "backbone": "gcn", "sampler": s, "layers": L,
                        "seed": i, "test_acc": t, "best_val_acc": b, "epochs_run": 200, "settings": "",
                        "key": f"k{i}", "stream": stream_version(s), **dict.fromkeys(PRINT_COLUMNS, ""),
                        "source": src} for i, (s, L, t, b, src) in enumerate(rows)])
    return df[[*RUN_COLUMNS, "source"]]


# ----------------------------------------------------------------------------- cell_summary
def test_cell_summary_sorts_cells_coerces_text_and_keeps_its_columns_and_types():
    df = pd.DataFrame({"sampler": ["nodrop", "lid", "nodrop", "lid", "lid"],
                       "test_acc": [0.8, "n/a", 0.6, 0.5, 0.7]})
    out = cells.cell_summary(df, by=["sampler"])
    # cells sorted by name (lid < nodrop), whatever order the runs came in
    assert out["sampler"].tolist() == ["lid", "nodrop"]
    assert out.columns.tolist() == ["sampler", "test_acc_mean", "test_acc_std", "n"]
    assert out["n"].dtype == "int64"
    # "n/a" is no number: left out; lid = {0.5, 0.7}: mean 0.6, sample std sqrt(0.02) by hand
    assert out["n"].tolist() == [2, 2]
    assert out["test_acc_mean"].tolist() == pytest.approx([0.6, 0.7])
    assert out["test_acc_std"].tolist() == pytest.approx([math.sqrt(0.02), math.sqrt(0.02)])


def test_cell_summary_of_no_runs_has_typed_columns():
    out = cells.cell_summary(pd.DataFrame({"sampler": [], "test_acc": []}), by=["sampler"])
    assert out.empty
    assert out.columns.tolist() == ["sampler", "test_acc_mean", "test_acc_std", "n"]
    assert out["test_acc_mean"].dtype == float and out["test_acc_std"].dtype == float
    assert out["n"].dtype == "int64"


# ----------------------------------------------------------------------------- depth_table
def test_depth_table_counts_sources_and_leaves_out_missing_and_nan_runs():
    nan = float("nan")
    df = _runs([("nodrop", 2, 0.8, 0.70, "store"),
                ("nodrop", 2, 0.6, 0.50, "bundled"),
                ("nodrop", 2, 0.7, 0.60, "bundled"),
                ("nodrop", 2, nan, 0.90, "store"),      # ran, no test accuracy: not measured
                ("nodrop", 2, 0.1, 0.10, "missing")])   # a requested run not made: its numbers ignored
    row = cells.depth_table(df).iloc[0]
    assert int(row.n) == 3 and int(row.missing) == 1
    assert int(row.n_store) == 1 and int(row.n_bundled) == 2
    assert row.test_acc_mean == pytest.approx(0.7)   # (0.8 + 0.6 + 0.7) / 3
    assert row.test_acc_std == pytest.approx(0.1)    # sample std of {0.6, 0.7, 0.8}
    # best validation: the four runs made, the missing one left out: (0.7 + 0.5 + 0.6 + 0.9) / 4
    assert row.best_val_acc_mean == pytest.approx(0.675)
    assert row.status == "partial"


def test_depth_table_paper_columns_keep_cells_the_paper_lacks_and_its_first_number():
    df = _runs([("nodrop", 2, 0.80, 0.7, "store"), ("nodrop", 2, 0.82, 0.7, "store"),
                ("lid", 4, 0.50, 0.7, "store")])
    paper = pd.DataFrame({"dataset_key": ["cora", "cora", "cora"], "setting": ["semi"] * 3,
                          "backbone": ["GCN", "GCN", "GCN"], "sampler": ["nodrop", "nodrop", "ldd"],
                          "layers": [2, 2, 4], "test_accuracy": [78.0, 90.0, 60.0]})
    table = cells.depth_table(df, paper).set_index(["sampler", "layers"])
    assert len(table) == 2  # lid 4 is not in the paper: kept, with NaN
    assert table.loc[("nodrop", 2), "paper_test_acc"] == pytest.approx(0.78)  # the first of the two
    assert table.loc[("nodrop", 2), "diff_vs_paper"] == pytest.approx(0.81 - 0.78)
    assert math.isnan(table.loc[("lid", 4), "paper_test_acc"])
    assert math.isnan(table.loc[("lid", 4), "diff_vs_paper"])


# ----------------------------------------------------------------------------- paper_rows
def test_paper_rows_filters_by_dataset_and_setting_with_a_fresh_index():
    paper = pd.DataFrame({"dataset_key": ["cora", "cora", "citeseer", "cora"],
                          "setting": ["full", "semi", "semi", "semi"],
                          "backbone": ["GCN", "APPNP*", "GCN", "GCN"], "sampler": ["nodrop"] * 4,
                          "layers": [2, 4, 2, 8], "test_accuracy": [1.0, 2.0, 3.0, 4.0]})
    rows = cells.paper_rows(paper, "cora", "semi")
    assert rows["test_accuracy"].tolist() == [2.0, 4.0]
    assert rows["backbone_key"].tolist() == ["appnp_star", "gcn"]
    assert rows.columns.tolist() == [*paper.columns, "backbone_key"]
    assert rows.index.tolist() == [0, 1]


# ----------------------------------------------------------------------------- paper_gaps
def test_paper_gaps_are_beyond_the_threshold_largest_first():
    table = pd.DataFrame({"sampler": ["a", "b", "c", "d", "e"],
                          "diff_vs_paper": [0.02, -0.08, 0.05, 0.10, float("nan")]})
    gaps = cells.paper_gaps(table, threshold=0.05)
    # |diff| > 0.05: b (0.08) and d (0.10); exactly 0.05 is not beyond it
    assert gaps["sampler"].tolist() == ["d", "b"]


def test_paper_gaps_without_a_paper_column_or_rows_is_empty():
    assert cells.paper_gaps(pd.DataFrame({"sampler": ["a"], "test_acc_mean": [0.5]})).empty
    empty = pd.DataFrame({"sampler": [], "diff_vs_paper": []})
    assert cells.paper_gaps(empty).empty


# ----------------------------------------------------------------------------- reproduction_notes
NOTES = ("# Reproduction\nintro\n## 1. GCN by depth\nbody one ±\n## 2. Not a gap\nbody two\n"
         "##   3. Batch norm\nbody three\n")


def test_reproduction_notes_picks_the_named_sections(tmp_path):
    doc = tmp_path / "REPRODUCTION.md"
    doc.write_text(NOTES, encoding="utf-8")
    assert cells.reproduction_notes(doc, sections=("1.", "3.")) == (
        "## 1. GCN by depth\nbody one ±\n\n## 3. Batch norm\nbody three")
    # no section matches: the whole text, rather than nothing
    assert cells.reproduction_notes(doc, sections=("9.",)) == NOTES


def test_reproduction_notes_leave_out_the_generators_markers(tmp_path):
    doc = tmp_path / "REPRODUCTION.md"
    doc.write_text("# Doc\n## 1. GCN\ntext\n<!-- repro_tables: ordering -->\n\n- a verdict\n\n"
                   "<!-- /repro_tables: ordering -->\nmore\n", encoding="utf-8")
    assert cells.reproduction_notes(doc, sections=("1.",)) == "## 1. GCN\ntext\n\n- a verdict\n\nmore"


def test_reproduction_notes_reads_utf8_under_a_latin1_locale(tmp_path, monkeypatch):
    """The doc is UTF-8 whatever the machine's locale: under a Latin-1 one, reading with the
    locale's encoding would turn "±" into "Â±". ``io.text_encoding`` is where ``read_text``
    resolves ``encoding=None`` to the locale's encoding; patching it stands in for a
    non-UTF-8 locale (none is installed here, and a subprocess would not run mutmut's mutant)."""
    import io

    doc = tmp_path / "REPRODUCTION.md"
    doc.write_text(NOTES, encoding="utf-8")
    monkeypatch.setattr(io, "text_encoding", lambda encoding, stacklevel=2: encoding or "latin-1")
    assert cells.reproduction_notes(doc, sections=("1.",)) == "## 1. GCN by depth\nbody one ±"


def test_reproduction_notes_default_path_and_a_missing_file(tmp_path, monkeypatch):
    doc = tmp_path / "REPRODUCTION.md"
    doc.write_text(NOTES, encoding="utf-8")
    monkeypatch.setattr(cells, "REPRODUCTION_DOC", doc)
    assert cells.reproduction_notes(sections=("2.",)) == "## 2. Not a gap\nbody two"
    gone = tmp_path / "gone.md"
    assert cells.reproduction_notes(gone) == f"({gone} is missing.)"
    monkeypatch.setattr(cells, "REPRODUCTION_DOC", None)
    assert cells.reproduction_notes().startswith("(docs/REPRODUCTION.md is in the repository")

