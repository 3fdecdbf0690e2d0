"""``--edges/--features/--labels`` files that are not CSV text although they decode as text
(issue 29, class 7): a protocol-0 pickle and numbers in non-ASCII digits on line 1 are one
``error:`` line (exit 2), never class names or a header."""
from __future__ import annotations

import pickle

import pytest

from tests.helpers.runs import run_cli, run_module

ASCII_ONLY = "is written with non-ASCII digits; only ASCII digits 0-9 are allowed in numbers"
MEN = ["men", "--layers", "2", "--runs", "1", "--no-progress"]


def _one_error_line(code: int, err: str) -> str:
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: "), (code, err)
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize("role, content, says", [
    ("edges", "\uff10,\uff11\n1,2\n", "edges.csv line 1: '\uff10' " + ASCII_ONLY),
    ("edges", "\u0660,\u0661\n1,2\n", "edges.csv line 1: '\u0660' " + ASCII_ONLY),
    ("features", "\u0660,\u0661\n1,2\n3,4\n", "features.csv line 1, column 1: '\u0660' " + ASCII_ONLY),
    ("labels", "\uff10\n1\n0\n", "labels.csv line 1: label '\uff10' " + ASCII_ONLY),
    ("labels", pickle.dumps(["cat", "dog", "cat"], protocol=0).decode(),
     "labels.csv looks like a Python pickle (protocol 0), not CSV text; labels must be a CSV/text file"),
])
def test_line_1_in_other_digits_and_a_protocol_0_pickle_are_one_line(capsys, tmp_path, role, content, says):
    files = {"edges": "0,1\n1,2\n", role: content}
    argv = []
    for name, text in files.items():
        (tmp_path / f"{name}.csv").write_text(text, encoding="utf-8")
        argv += [f"--{name}", str(tmp_path / f"{name}.csv")]
    line = _one_error_line(*run_cli(capsys, *MEN, *argv)[::2])
    assert line.startswith(f"error: {says}"), line


def test_the_same_in_a_real_process(tmp_path):
    (tmp_path / "edges.csv").write_text("\uff10,\uff11\n\uff11,\uff12\n", encoding="utf-8")
    proc = run_module(*MEN, "--edges", str(tmp_path / "edges.csv"))
    assert _one_error_line(proc.returncode, proc.stderr) == f"error: edges.csv line 1: '\uff10' {ASCII_ONLY}"
