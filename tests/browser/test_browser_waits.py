"""No browser test waits for a background job's state on a wall-clock deadline (issue 48: on
a busy 2-core machine ``test_depth_study_run_missing`` failed twice waiting 120 s for the
progress bar). A job's progress, its URL parameters, its curves and its end depend on the
machine's speed: such a wait must use ``JOB_TIMEOUT_MS`` (or ``_wait_state``), a deadline
that only ends a hung test. Read from the test files' source (``ast``), no browser needed."""
from __future__ import annotations

import ast

from tests.helpers import REPO

#: What a job's state looks like in a wait's first argument.
JOB_STATE = ("stProgress", "searchParams", "CURVE_POINTS", "stAlertContentSuccess", "finished",
             "trained and stored", "from the results store", "stopped by")
WAITS = ("wait_for_selector", "wait_for_function", "_wait_main_text")


def _job_waits_on_a_short_deadline(path) -> list[str]:
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if name not in WAITS or not node.args:
            continue
        what = ast.get_source_segment(source, node.args[-1 if name == "_wait_main_text" else 0]) or ""
        timeout = next((kw.value for kw in node.keywords if kw.arg == "timeout"), None)
        long = isinstance(timeout, ast.Name) and timeout.id == "JOB_TIMEOUT_MS"
        if any(word in what for word in JOB_STATE) and not long:
            found.append(f"{path.name}:{node.lineno} {name}({what[:60]})")
    return found


def test_no_browser_test_waits_for_a_job_on_a_wall_clock_deadline():
    files = sorted((REPO / "tests" / "browser").glob("test_*.py"))
    assert files
    found = [hit for path in files for hit in _job_waits_on_a_short_deadline(path)]
    assert not found, found


def test_the_check_sees_a_short_deadline(tmp_path):
    """The check itself: a wait for the progress bar on TIMEOUT_MS is found, one on
    JOB_TIMEOUT_MS is not."""
    path = tmp_path / "test_x.py"
    path.write_text('pg.wait_for_selector("[data-testid=stProgress]", timeout=TIMEOUT_MS)\n'
                    'pg.wait_for_selector("[data-testid=stProgress]", timeout=JOB_TIMEOUT_MS)\n'
                    '_wait_main_text(pg, "finished 10 trials")\n', encoding="utf-8")
    assert [hit.split()[0] for hit in _job_waits_on_a_short_deadline(path)] == ["test_x.py:1", "test_x.py:3"]
