"""tools/mutation.py's records against the docs and its judgements (docs/TESTING_MUTATION.md):
the score tables of docs/TESTING.md and docs/TESTING_MUTATION.md are the tool's rendering of
tools/mutation-records.toml; every judgement is keyed by the hash of its own change, so a
renumbered mutant cannot inherit it; a judgement of a module whose record is of the current
source names a mutant that survived that run. None of this needs mutmut (not a dev
requirement): the full check, which generates the mutants, is ``python tools/mutation.py check``."""
from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parent.parent


def _tool() -> ModuleType:
    """tools/mutation.py as a module (tools/ is no package)."""
    spec = importlib.util.spec_from_file_location("mutation_tool", REPO / "tools" / "mutation.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TOOL = _tool()
CFG = TOOL.load()
RECORDS = TOOL.load(TOOL.RECORDS)


def test_the_docs_score_tables_are_the_records():
    for doc, style in TOOL.DOCS.items():
        text = (REPO / "docs" / doc).read_text(encoding="utf-8")
        expected = TOOL.docs_text(text, TOOL.table(CFG, RECORDS, style))
        assert text == expected, f"docs/{doc}: not the records' table (python tools/mutation.py docs)"


def test_every_judgement_is_keyed_by_its_own_change():
    problems = {name: TOOL.entry_problems(module) for name, module in CFG["modules"].items()}
    assert {k: v for k, v in problems.items() if v} == {}


def test_judgements_of_a_current_record_name_mutants_that_survived_it():
    for name, record in RECORDS.items():
        if not record.get("legacy") and record["source"] == TOOL.source_hash(name, CFG):
            judged = TOOL.judgements(CFG["modules"][name])
            assert TOOL.killed_judgements(judged, record) == [], f"{name}: judged, but killed or gone"


def test_a_key_follows_the_change_not_mutmuts_number():
    before = TOOL.keyed({"m.x_f__mutmut_1": "-a = 1\n+a = 2", "m.x_f__mutmut_2": "-b()\n+b(None)"})
    # a mutant added above renumbers the others: their keys stay, the new one gets its own
    after = TOOL.keyed({"m.x_f__mutmut_1": "-c\n+d", "m.x_f__mutmut_2": "-a = 1\n+a = 2",
                        "m.x_f__mutmut_3": "-b()\n+b(None)"})
    assert before["m.x_f__mutmut_1"] == after["m.x_f__mutmut_2"]
    assert before["m.x_f__mutmut_2"] == after["m.x_f__mutmut_3"]
    assert after["m.x_f__mutmut_1"][0] not in {key for key, _ in before.values()}
    # the same change twice in one function: told apart by its order, a method by its class
    twice = TOOL.keyed({"m.x_f__mutmut_1": "-x\n+y", "m.x_f__mutmut_2": "-x\n+y"})
    assert twice["m.x_f__mutmut_2"][0] == twice["m.x_f__mutmut_1"][0] + " #2"
    assert TOOL.function_of("p.m.xǁEdgeSamplerǁlayer_counts__mutmut_9") == "EdgeSampler.layer_counts"
    diff = "--- a\n+++ b\n@@ -1 +1 @@\n     keep\n-    old(1)\n+    new(1)"
    assert TOOL.change_text(diff) == "-old(1)\n+new(1)"


def test_the_check_names_stale_killed_and_hand_edited_judgements():
    key = TOOL.judgement_key("f", "-a = 1\n+a = 2")
    module = {"equivalent": {key: {"change": "-a = 1\n+a = 2", "why": "no test can tell"},
                             "f 0123456789": {"change": "-a = 1\n+a = 3", "why": "edited by hand"}}}
    judged = TOOL.judgements(module)
    assert TOOL.stale_judgements(judged, {key}) == ["f 0123456789"]
    assert TOOL.killed_judgements(judged, {"survivors": {key: "survived"}}) == ["f 0123456789"]
    assert TOOL.entry_problems(module) == [
        "f 0123456789: the key is not the hash of its change '-a = 1\\n+a = 3'"]


def test_counts_follow_the_judgements_and_the_table_marks_a_record_of_other_code():
    module = {"source": "dropedge_explorer/studies/cells.py", "tests": [],
              "equivalent": {"f 1": {"change": "", "why": ""}},
              "out_of_reach": {"f 2": {"change": "", "why": ""}}}
    record = {"run": "2026-01-01", "commit": "abc1234", "source": "0" * 16, "mutants": 10, "killed": 6,
              "timeout": 1, "survivors": {"f 1": "survived", "f 2": "survived", "f 3": "no tests",
                                          "f 4": "not checked"}}
    counts = TOOL.counts(record, module)
    columns = ("equivalent", "out_of_reach", "not_killed", "not_checked")
    assert [counts[c] for c in columns] == [1, 1, 1, 1]
    assert TOOL.score(counts) == (100.0 * 6 / 9, 100.0 * 6 / 8)
    row = TOOL.table({"modules": {"cells": module}}, {"cells": record}, "short").splitlines()[-1]
    assert row.endswith("2026-01-01 at abc1234: **source changed since, not rerun** |")
