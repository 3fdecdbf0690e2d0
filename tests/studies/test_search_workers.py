"""The per-cell search with several workers and signals (issue 29, class 3): two real worker
processes on one SQLite Optuna storage and one results store keep the cell's trial budget
(finished + running trials, across workers) and train each best-point run once (claims);
a SIGINT during ``search`` voids the running trial, which then does not count: the resumed
cell ends with its whole budget of finished trials, starting at the recipe's point.
Trial counts are read from the storage with sqlite3, not through the code under test."""
from __future__ import annotations

import faulthandler
import multiprocessing
import signal
import sqlite3
import subprocess
import sys
import time
import traceback

import torch

from dropedge_explorer.store import ResultStore
from dropedge_explorer.studies import cell_search
from tests.helpers import REPO


def _base(epochs: int):
    return cell_search.cell_base("karate", None, "gcn", 2, "dropedge").replace(epochs=epochs, patience=0)


def _worker(storage: str, store: str, budget: int, seeds: list[int], barrier, queue) -> None:
    # a worker that hangs prints where (stderr) and ends; one that fails sends its traceback
    faulthandler.dump_traceback_later(WORKER_DEADLINE, exit=True)
    try:
        torch.set_num_threads(1)
        base = _base(40)
        barrier.wait(timeout=WORKER_DEADLINE)  # both workers start the cell at the same moment
        study = cell_search.search_cell(base, budget, storage)
        best = cell_search.best_config(study, base)
        trained: list[str] = []
        barrier.wait(timeout=WORKER_DEADLINE)  # and the best point's runs at the same moment
        cell_search.run_best(best, seeds, ResultStore(store), trained=trained)
        queue.put((trained, best.to_dict()))
    except BaseException:
        barrier.abort()  # the other worker stops waiting for this one
        queue.put(("failed", traceback.format_exc()))
        raise


#: Seconds a worker of the two-worker test may take (24 s alone, 45 s three at once here):
#: past it, it dumps its threads' stacks and exits, so that a hang fails with where it hung.
WORKER_DEADLINE = 600


def _states(path) -> dict[str, int]:
    with sqlite3.connect(path) as db:
        return dict(db.execute("SELECT state, COUNT(*) FROM trials GROUP BY state").fetchall())


def test_two_workers_keep_the_cells_budget_and_train_each_best_run_once(tmp_path):
    storage, store = tmp_path / "tuning.sqlite", tmp_path / "runs.sqlite"
    budget, seeds = 4, [0, 1, 2, 3]
    ctx = multiprocessing.get_context("spawn")
    barrier, queue = ctx.Barrier(2), ctx.Queue()
    workers = [ctx.Process(target=_worker, args=(f"sqlite:///{storage}", str(store), budget, seeds,
                                                 barrier, queue)) for _ in range(2)]
    for w in workers:
        w.start()
    try:
        outcomes = [queue.get(timeout=WORKER_DEADLINE + 60) for _ in workers]
    finally:
        for w in workers:
            w.join(timeout=60)
            if w.is_alive():
                w.kill()
    failed = [text for kind, text in outcomes if kind == "failed"]
    assert not failed, "\n".join(failed)
    assert [w.exitcode for w in workers] == [0, 0]
    states = _states(storage)
    # each worker alone would have run the whole budget: 8 finished trials without the gate
    assert states.get("COMPLETE", 0) + states.get("PRUNED", 0) == budget, states
    assert "RUNNING" not in states and "WAITING" not in states, states
    (trained_a, best_a), (trained_b, best_b) = outcomes
    assert best_a == best_b  # both waited for the other's trials: one best point
    assert len(trained_a) + len(trained_b) == len(seeds) and not set(trained_a) & set(trained_b)
    with sqlite3.connect(store) as db:
        keys = [r[0] for r in db.execute("SELECT key FROM runs")]
        claims = db.execute("SELECT COUNT(*) FROM claims").fetchone()[0]
    assert sorted(keys) == sorted(trained_a + trained_b) and claims == 0


def _running(path) -> int:
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            return db.execute("SELECT COUNT(*) FROM trials WHERE state = 'RUNNING'").fetchone()[0]
    except sqlite3.Error:  # not created yet
        return 0


def test_a_signal_during_search_voids_the_running_trial_and_the_resumed_cell_is_whole(tmp_path):
    storage = tmp_path / "tuning.sqlite"
    # 16 layers: the depth recipe's epochs make the first trial last long enough to be caught
    argv = [sys.executable, "-m", "dropedge_core", "search", "--dataset", "karate", "--layers", "16",
            "--samplers", "dropedge", "--trials", "2", "--best-seeds", "0", "--storage", str(storage),
            "--store", str(tmp_path / "runs.sqlite"), "--no-progress"]
    proc = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 240  # a wait for the trial to start, not a timing assertion
        while not _running(storage) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
        assert _running(storage) == 1, proc.poll()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=240)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err[-2000:]
    assert len(err.strip().splitlines()) == 1 and "interrupted by SIGINT" in err, err[-2000:]
    assert _states(storage) == {"FAIL": 1}
    with sqlite3.connect(storage) as db:
        void = db.execute("SELECT value_json FROM trial_user_attributes WHERE key = 'void'").fetchall()
    assert void == [('"interrupted by SIGINT"',)]
    # resumed with the command's own settings: a study refuses trials of other settings
    base = cell_search.cell_base("karate", None, "gcn", 16, "dropedge")
    study = cell_search.search_cell(base, 2, f"sqlite:///{storage}")
    states = _states(storage)
    assert states.get("COMPLETE", 0) + states.get("PRUNED", 0) == 2 and states["FAIL"] == 1, states
    first = next(t for t in study.trials if t.state.name != "FAIL")
    assert first.params["lr"] == base.lr  # the recipe's own point is still the first counted trial


def _alive_marks(path) -> int:
    """Running trials that said they are alive (Optuna's heartbeat rows)."""
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            return db.execute("SELECT COUNT(*) FROM trial_heartbeats").fetchone()[0]
    except sqlite3.Error:  # not created yet
        return 0


#: the cell's trials' epochs: the refill trains the cell's two trials with the killed worker's
#: settings (a study refuses trials of other settings), so they stay short; the killed worker's
#: trial is made long by waiting at each epoch, not by more epochs
KILLED_EPOCHS = 40
_KILLED_WORKER = f"KILLED_EPOCHS = {KILLED_EPOCHS}\n" + """
import sys, time
from dropedge_explorer.studies import cell_search, tuning, _tuning_storage as tuning_storage
tuning_storage.ALIVE_EVERY, tuning_storage.GRACE_PERIOD = 1, 3
train = tuning.train

def slow_train(*args, on_event=None, **kwargs):  # lasts until the test kills this process
    def slowed(event):
        time.sleep(5.0)
        if on_event is not None:
            on_event(event)
    return train(*args, on_event=slowed, **kwargs)

tuning.train = slow_train
base = cell_search.cell_base("karate", None, "gcn", 2, "dropedge").replace(epochs=KILLED_EPOCHS, patience=0)
cell_search.search_cell(base, 2, sys.argv[1])
"""


def test_a_killed_workers_trial_counts_until_its_grace_is_over_then_the_cell_is_refilled(tmp_path,
                                                                                         monkeypatch):
    from dropedge_explorer.studies import _trial_budget as trial_budget
    from dropedge_explorer.studies import _tuning_storage as tuning_storage
    from dropedge_explorer.studies import tuning

    monkeypatch.setattr(tuning_storage, "ALIVE_EVERY", 1)
    # a grace no test outlasts: the trial turns silent only when the test ages its heartbeat
    monkeypatch.setattr(tuning_storage, "GRACE_PERIOD", 600)
    storage = tmp_path / "tuning.sqlite"
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_WORKER, f"sqlite:///{storage}"], cwd=REPO)
    try:
        deadline = time.monotonic() + 240  # a wait for the trial to start, not a timing assertion
        while not _running(storage) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
        assert _running(storage) == 1, proc.poll()
        while not _alive_marks(storage) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)  # a wait for its first sign of life, not a timing assertion
        assert _alive_marks(storage) == 1, proc.poll()
    finally:
        proc.kill()  # SIGKILL: nothing of the worker runs any more
        proc.wait()
    base = _base(KILLED_EPOCHS)
    study = tuning.open_study(cell_search.study_name(base), f"sqlite:///{storage}")
    assert trial_budget.taken(study.get_trials(deepcopy=False)) == 1  # a live-looking trial counts
    with sqlite3.connect(storage) as db:  # the grace period passes: its last sign of life an hour old
        db.execute("UPDATE trial_heartbeats SET heartbeat = datetime(heartbeat, '-1 hour')")
    study = cell_search.search_cell(base, 2, f"sqlite:///{storage}")
    states = _states(storage)
    assert states.get("COMPLETE", 0) + states.get("PRUNED", 0) == 2 and states["FAIL"] == 1, states


def test_which_trials_take_a_place_in_the_budget():
    from optuna.trial import TrialState, create_trial

    from dropedge_explorer.studies import _trial_budget as trial_budget

    def trial(state, **attrs):
        value = 0.5 if state == TrialState.COMPLETE else None
        return create_trial(state=state, value=value, user_attrs=attrs)

    table = [(trial(TrialState.COMPLETE), True), (trial(TrialState.PRUNED), True),
             (trial(TrialState.FAIL, error="ConfigError: bad"), True),  # fails again if redone
             (trial(TrialState.FAIL), False),  # a killed worker's (failed as stale) or an old interrupt
             (trial(TrialState.FAIL, void="interrupted by SIGINT", worker="w"), False),
             (trial(TrialState.FAIL, void="over budget", worker="w"), False),
             (trial(TrialState.RUNNING, worker="w"), True),  # running in a live worker
             (trial(TrialState.RUNNING), False),  # left by an older version: no worker mark
             (trial(TrialState.WAITING), False)]
    assert [trial_budget.counts(t) for t, _ in table] == [want for _, want in table]
