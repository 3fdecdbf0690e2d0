"""A disk that is full while the project writes: exit 2 and one line naming the file and
the full disk, nothing it held before changed.

The full disk is a real one: a 256 KiB ``tmpfs`` filled with zeros, mounted in a user and
mount namespace of its own (``unshare --user --map-root-user --mount``: no root needed
where the kernel allows unprivileged user namespaces, and gone when the process ends).
Where that cannot be mounted the tests skip, saying why (under ``CI=true`` a skip fails).
A file-size limit (``ulimit -f``) is the other way to run out of room:
``tests/cli/test_refusals.py``.
"""
from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import subprocess
import sys

import pytest

from tests.helpers.runs import REPO

SWEEP = ["-m", "dropedge_core", "sweep", "--dataset", "karate", "--samplers", "nodrop", "--layers", "2",
         "--epochs", "2", "--hidden", "8", "--diag-every", "0", "--no-progress"]
#: run inside the namespace, a 256 KiB tmpfs mounted at argv[1]: a test's steps in order,
#: each a command (stdout to a file or kept) or ``"fill"`` (write zeros until no room is
#: left); prints every command's exit code and stderr as JSON
DRIVER = """
import json, os, subprocess, sys
full, steps = sys.argv[1], json.loads(sys.argv[2])
out = []
for step in steps:
    if step == "fill":
        fd = os.open(full + "/fill", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        try:
            while True:
                os.write(fd, bytes(4096))
        except OSError:
            pass
        os.close(fd)
        continue
    stdout = open(step["stdout"], "w") if step.get("stdout") else subprocess.PIPE
    proc = subprocess.run(step["argv"], stdout=stdout, stderr=subprocess.PIPE, text=True, cwd=step["cwd"])
    out.append({"code": proc.returncode, "err": proc.stderr})
print(json.dumps(out))
"""


def on_a_full_disk(tmp_path, steps: list) -> list[dict]:
    """Mount a 256 KiB disk at ``tmp_path / "full"`` in a namespace of its own and run
    ``steps`` there (``{"argv": [...], "stdout": path}`` or ``"fill"``); return each
    command's exit code and stderr. Skips where no such disk can be mounted."""
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("no unshare command: a small full filesystem cannot be mounted here")
    (tmp_path / "full").mkdir()
    steps = [step if step == "fill" else {"cwd": str(REPO), **step} for step in steps]
    script = 'mount -t tmpfs -o size=256k tmpfs "$1" || exit 97; exec "$4" -c "$2" "$1" "$3"'
    proc = subprocess.run([unshare, "--user", "--map-root-user", "--mount", "sh", "-c", script, "sh",
                           str(tmp_path / "full"), DRIVER, json.dumps(steps), sys.executable],
                          capture_output=True, text=True, timeout=600)
    if proc.returncode == 97 or (proc.returncode != 0 and proc.stderr.startswith("unshare:")):
        pytest.skip(f"cannot mount a small filesystem here: {proc.stderr.strip()[:200]}")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _py(code: str) -> dict:
    return {"argv": [sys.executable, "-c", code]}


def _copy(source, target) -> dict:
    return _py(f"import shutil; shutil.copyfile({str(source)!r}, {str(target)!r})")


def _sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _one_error_line(result: dict) -> str:
    lines = result["err"].strip().splitlines()
    assert result["code"] == 2 and len(lines) == 1 and lines[0].startswith("error: "), result
    return lines[0]


@pytest.mark.namespaces
def test_a_run_stored_on_a_full_disk_is_one_line_and_the_store_keeps_its_rows(tmp_path):
    made, after = tmp_path / "made.sqlite", tmp_path / "after.sqlite"
    first = subprocess.run([sys.executable, *SWEEP, "--seeds", "0", "--store", str(made)], cwd=REPO,
                           capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    store = tmp_path / "full" / "runs.sqlite"
    results = on_a_full_disk(tmp_path, [
        _copy(made, store), "fill",
        {"argv": [sys.executable, *SWEEP, "--seeds", "1", "--store", str(store)]},
        _copy(store, after)])
    line = _one_error_line(results[1])
    assert line.startswith(f"error: results store {str(store)!r} cannot be written (")
    assert "the disk holding it is full" in line
    assert _sha(after) == _sha(made)  # its one row, byte for byte
    with sqlite3.connect(after) as db:
        assert db.execute("SELECT seed FROM runs").fetchall() == [(0,)]


@pytest.mark.namespaces
def test_a_new_store_on_a_full_disk_is_one_line(tmp_path):
    store = tmp_path / "full" / "new.sqlite"
    results = on_a_full_disk(tmp_path, ["fill", {"argv": [sys.executable, *SWEEP, "--store", str(store)]}])
    line = _one_error_line(results[0])
    assert f"results store {str(store)!r}" in line and "the disk holding it is full" in line


@pytest.mark.namespaces
@pytest.mark.parametrize("flags", [["--json"], []], ids=["json", "text"])
def test_output_to_a_full_disk_is_one_line_naming_where_it_went(tmp_path, flags):
    """Standard output redirected into a file on the full disk: the CLI's flush fails. It was
    a traceback (exit 1), or, for an output small enough to stay buffered until the
    interpreter's last flush, "Exception ignored" and exit 120."""
    target = tmp_path / "full" / "out.txt"
    results = on_a_full_disk(tmp_path, ["fill", {"argv": [sys.executable, "-m", "dropedge_core", "datasets",
                                                          *flags], "stdout": str(target)}])
    line = _one_error_line(results[0])
    assert line == (f"error: cannot write the output (standard output: {str(target)!r}): the disk holding "
                    "it is full (0 KiB free); free space or raise the limit")


@pytest.mark.namespaces
def test_an_export_to_a_full_disk_is_one_line_and_keeps_the_earlier_file(tmp_path):
    made = tmp_path / "made.sqlite"
    first = subprocess.run([sys.executable, *SWEEP, "--seeds", "0", "--store", str(made)], cwd=REPO,
                           capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    target, kept = tmp_path / "full" / "runs.csv", tmp_path / "kept"
    export = ("import sys\n"
              "from dropedge_explorer.store import ResultStore\n"
              "from dropedge_explorer.studies import run_tables as runs\n"
              "try:\n"
              f"    runs.export_table(ResultStore({str(made)!r}), {str(target)!r})\n"
              "except runs.ResultsError as exc:\n"
              "    sys.exit(f'error: {exc}')\n")
    listing = f"import os, sys; print(sorted(os.listdir({str(target.parent)!r})), file=sys.stderr)"
    results = on_a_full_disk(tmp_path, [_py(f"open({str(target)!r}, 'w').write('earlier')"), "fill",
                                        _py(export), _copy(target, kept), _py(listing)])
    assert results[1]["code"] == 1  # sys.exit with the message: the exception is one line
    assert results[1]["err"].strip() == (
        f"error: cannot write the export {str(target)!r}: the disk holding it is full (0 KiB free); "
        "free space or raise the limit; an earlier file of that name is unchanged")
    assert kept.read_text() == "earlier"
    assert results[3]["err"].strip() == "['fill', 'runs.csv']"  # no partial file left beside it


def test_output_cut_by_the_file_size_limit_is_one_line_not_a_cut_file(tmp_path):
    """Standard output into a file under ``ulimit -f`` (512 bytes; the JSON is ~900): the write
    that reaches the limit is short, and CPython's buffered flush takes it as done -- the
    CLI exited 0 with a file cut at the limit."""
    import resource

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (512, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))

    target = tmp_path / "out.json"
    with open(target, "w") as out:
        proc = subprocess.run([sys.executable, "-m", "dropedge_core", "datasets", "--json"], cwd=REPO,
                              stdout=out, stderr=subprocess.PIPE, text=True, preexec_fn=limit, timeout=120)
    line = _one_error_line({"code": proc.returncode, "err": proc.stderr})
    assert line == (f"error: cannot write the output (standard output: {str(target)!r}): this process's "
                    "file-size limit (ulimit -f) is 512 bytes; free space or raise the limit")


def test_a_reader_that_leaves_early_is_no_traceback():
    """``| head``: the pipe's reader closes it before the output is written (was: a
    BrokenPipeError traceback, exit 1); now no line at all and 141, as a process ended by
    SIGPIPE."""
    proc = subprocess.Popen([sys.executable, "-m", "dropedge_core", "datasets"], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # the reader is gone before the first line
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141 and err == ""
