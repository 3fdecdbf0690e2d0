"""SIGINT / SIGTERM during ``tune`` (issue 29, class 3): exit 130 / 143 with one line and
no traceback (Optuna used to log a 17-35 line one), and the interrupted trial is ended as
FAIL marked void (``trial_budget.VOID_ATTR``), which no budget counts (an Optuna FAIL from
KeyboardInterrupt used to count). Real signals, sent to the
real CLI in a fresh process once its trial is running."""
from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time

import optuna
import pytest

from tests.helpers import REPO


def _running_trials(path) -> int:
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            return db.execute("SELECT COUNT(*) FROM trials WHERE state = 'RUNNING'").fetchone()[0]
    except sqlite3.Error:  # not created yet
        return 0


def _signalled(argv: list[str], ready, signum: int, wait: float, poll: float) -> tuple[int, list[str]]:
    """Start the CLI (``python -m dropedge_core`` + ``argv``), send ``signum`` once
    ``ready(proc)`` holds (waiting up to ``wait`` seconds for it: a wait, not a timing
    assertion), and return the exit code and stderr's lines."""
    proc = subprocess.Popen([sys.executable, "-m", "dropedge_core", *argv], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + wait
        while not ready(proc) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(poll)
        assert ready(proc), proc.poll()
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=wait)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, err.strip().splitlines()


@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_during_tune_is_one_line_and_the_trial_is_not_counted(tmp_path, signum, code):
    storage = tmp_path / "tune.sqlite"
    argv = ["tune", "--dataset", "karate", "--layers", "2", "--trials", "3", "--epochs", "100000",
            "--patience", "0", "--no-pruning", "--study", "s", "--storage", str(storage), "--no-progress"]
    returncode, lines = _signalled(argv, lambda proc: _running_trials(storage) == 1, signum, 240, 0.5)
    assert returncode == code, lines[-5:]
    assert lines == [f"error: interrupted by {signal.Signals(signum).name}; the running trial or run was "
                     "left unfinished and not counted: run the same command again to resume"], lines
    study = optuna.load_study(study_name="s", storage=f"sqlite:///{storage}")
    trials = study.get_trials(deepcopy=False)
    assert [t.state for t in trials] == [optuna.trial.TrialState.FAIL]  # ended, so no worker waits for it
    # voided: no budget counts it (an unmarked FAIL would be an old interrupt or a killed worker)
    assert trials[0].user_attrs["void"] == f"interrupted by {signal.Signals(signum).name}"


def _maps_torch(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/maps") as maps:
            return "libtorch_cpu" in maps.read()
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/<pid>/maps")
@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_while_the_command_starts_is_one_line(tmp_path, signum, code):
    """Re-probe of issue 29: Ctrl-C in the first seconds of ``tune`` (torch loading, imported
    by the package before ``__main__`` ran) was a 17-26 line KeyboardInterrupt traceback, and
    SIGTERM killed the process without a word. The signal is sent as soon as torch's library
    is mapped, i.e. while it is being imported."""
    argv = ["tune", "--dataset", "karate", "--layers", "2", "--trials", "1", "--storage",
            str(tmp_path / "t.sqlite"), "--no-progress"]
    returncode, lines = _signalled(argv, lambda proc: _maps_torch(proc.pid), signum, 120, 0.01)
    assert returncode == code, lines[-3:]
    assert len(lines) == 1 and lines[0].startswith("error: interrupted"), lines
