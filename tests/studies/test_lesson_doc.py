"""Issue 43: docs/LESSON.md and the snapshots' README hold only generated numbers, and the
generated blocks are what the code gives now (a stale document fails)."""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tool():
    spec = importlib.util.spec_from_file_location("lesson_doc", ROOT / "docs" / "tools" / "lesson_doc.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _outside_blocks(doc: str) -> str:
    return re.sub(r"<!-- lesson_doc: (\w+) -->.*?<!-- /lesson_doc: \1 -->", "", doc, flags=re.S)


@pytest.mark.parametrize("which", ["LESSON_DOC", "SNAPSHOT_README"])
def test_the_generated_blocks_are_what_the_code_gives_now(tool, which):
    path = getattr(tool, which)
    doc = path.read_text(encoding="utf-8")
    assert tool.MARKER.findall(doc), f"{path.name} has no generated block"
    assert tool.regenerate(doc) == doc, (f"{path.name} is stale: run python docs/tools/lesson_doc.py --write")


def test_the_lesson_plan_has_no_number_outside_its_blocks_and_covers_every_step(tool):
    doc = tool.LESSON_DOC.read_text(encoding="utf-8")
    assert not re.search(r"\d", _outside_blocks(doc)), "a number typed by hand in docs/LESSON.md"
    steps = doc.split("<!-- lesson_doc: steps -->")[1].split("<!-- /lesson_doc: steps -->")[0]
    from dropedge_explorer.studies import lesson
    for s in lesson.STEPS:
        assert f"**{s.title}**" in steps and s.question in steps
    assert sum(tool.MINUTES.values()) == 10  # a ten-minute plan


def test_the_app_guide_quotes_the_bundled_models_as_the_files_hold_them(tool):
    readme = " ".join((ROOT / "docs" / "APP.md").read_text(encoding="utf-8").split())
    assert tool.readme_accuracies() in readme
