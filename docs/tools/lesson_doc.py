"""Print every number of docs/LESSON.md and of the snapshots' README from the code that ships,
so that both are regenerated, never edited (as docs/tools/repro_tables.py does for
docs/REPRODUCTION.md):

    python docs/tools/lesson_doc.py --write            # every block of both files, in place
    python docs/tools/lesson_doc.py --block steps      # one block (names: BLOCKS)

A block is the text between ``<!-- lesson_doc: NAME -->`` and ``<!-- /lesson_doc: NAME -->``
(each on a line of its own); ``tests/studies/test_lesson_doc.py`` fails when a block differs
from what this prints now (a stale document) and on a digit outside the blocks of LESSON.md.

The steps are computed on the lesson's default graph and controls (csbm, seed 0: what the
Lesson page opens on); the last two read the bundled snapshots and runs.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from dropedge_explorer.studies import lesson  # noqa: E402
from dropedge_core import datasets  # noqa: E402
from dropedge_explorer.figures import sampler_label  # noqa: E402
from dropedge_explorer.studies import merging, teaching  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
LESSON_DOC = ROOT / "docs" / "LESSON.md"
SNAPSHOT_README = teaching.SNAPSHOT_DIR / "README.md"
#: The controls each step opens with on the Lesson page (app_pages/lesson.py).
DEFAULTS = {"propagation": {"layers": 16}, "depth": {"layers": 16}, "dropping": {"layers": 32, "keep": 0.5},
            "lid_ldd": {"layers": 8, "p_min": 0.2, "p_max": 0.9}, "fd": {"layers": 16, "keep": 0.5}}
MARKER = re.compile(r"^<!-- lesson_doc: ([^>]+?) -->$", re.M)
#: Minutes of a ten-minute lesson per step (the plan's timing, not a measurement).
MINUTES = {"propagation": 2, "depth": 1, "dropping": 2, "lid_ldd": 1, "fd": 1, "result": 2, "verdicts": 1}


def steps_text(dataset: str = "csbm") -> str:
    """Per step: its minutes, question and the answer the page writes from its numbers."""
    graph = datasets.load(dataset, split="per-class")
    out = []
    for s in lesson.STEPS:
        args = {**DEFAULTS.get(s.key, {}), "seed": 0} if s.key in DEFAULTS else {}
        numbers = lesson.step_numbers(s.key, graph if args else None, **args)
        controls = ", ".join(f"{k} {v}" for k, v in args.items() if k != "seed")
        where = f" ({dataset}, {controls})" if args else ""
        out.append(f"**{s.title}** — {MINUTES[s.key]} min{where}\n\n- Ask: {s.question}\n"
                   f"- The page answers: {lesson.step_sentence(numbers)}")
    return "\n\n".join(out)


def _layer_range(values: list[float]) -> str:
    return f"{values[0]:.2f} → {values[-1]:.2f} (lowest {min(values):.2f}, highest {max(values):.2f})"


def snapshots_text() -> str:
    """The bundled snapshots' table: per file and sampler, test accuracy, class separation
    first → last hidden layer, the verdict of :mod:`merging`, and the stream fingerprint."""
    rows = ["| file | sampler | test accuracy | class separation, first → last hidden layer | "
            "read as | fingerprint (masks / init) |", "| --- | --- | --- | --- | --- | --- |"]
    views = {}
    for path, words in teaching.BUNDLED_VIEWS.values():
        snaps = views[words] = teaching.load_snapshots(path)
        fps = snaps.settings.get("fingerprints", {})
        for s, v in zip(snaps.items, merging.merge_verdicts(snaps)):
            fp = fps.get(s.sampler, {})
            rows.append(f"| `{path.name}` | {sampler_label(s.sampler)} | {100 * s.test_acc:.1f} % | "
                        f"{_layer_range(s.separation)} | {v.kind} | {fp.get('masks', '–')} / "
                        f"{fp.get('init', '–')} |")
    return "\n".join(rows) + "\n\n" + merging.bundle_finding(views, sampler_label)


def readme_accuracies() -> str:
    """docs/APP.md's sentence on the bundled class-merging models' test accuracies
    (best-validation epoch), written from the files."""
    deep, old = (teaching.load_snapshots(teaching.BUNDLED_VIEWS[k][0]) for k in ("bundled", "old-defaults"))
    return ("Test accuracy of the bundled models (best-validation epoch, seed 0, today's sampler streams): "
            + ", ".join(f"{sampler_label(s.sampler)} {100 * s.test_acc:.1f} %" for s in deep.items)
            + "; with the old defaults " + " / ".join(f"{100 * s.test_acc:.1f}" for s in old.items) + " %.")


BLOCKS = {"steps": steps_text, "snapshots": snapshots_text, "readme": readme_accuracies}


def regenerate(doc: str) -> str:
    """``doc`` with every named block replaced by what its generator prints now."""
    for name in MARKER.findall(doc):
        begin, end = f"<!-- lesson_doc: {name} -->\n", f"<!-- /lesson_doc: {name} -->"
        a = doc.index(begin) + len(begin)
        b = doc.index(end, a)
        doc = doc[:a] + "\n" + BLOCKS[name]().strip("\n") + "\n\n" + doc[b:]
    return doc


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="regenerate the blocks of both files in place")
    ap.add_argument("--block", choices=list(BLOCKS))
    args = ap.parse_args()
    if args.block:
        print(BLOCKS[args.block]())
    if args.write:
        for path in (LESSON_DOC, SNAPSHOT_README):
            path.write_text(regenerate(path.read_text(encoding="utf-8")), encoding="utf-8")


if __name__ == "__main__":
    main()
