"""Tuning with Optuna: shared storage across worker processes, a useful search."""
from __future__ import annotations

import json
import subprocess
import sys

import optuna
import pytest

from dropedge_explorer.studies import tuning
from dropedge_explorer.training import TrainConfig, train
from tests.helpers import REPO


def test_two_cli_workers_share_one_sqlite_study(tmp_path):
    """Two `tune` processes, 4 trials each, one SQLite storage: 8 finished trials."""
    storage = f"sqlite:///{tmp_path / 'study.sqlite'}"
    cmd = [sys.executable, "-m", "dropedge_core", "tune", "--dataset", "karate", "--layers", "2",
           "--trials", "4", "--study", "shared", "--storage", storage, "--search", "random",
           "--no-pruning", "--epochs", "15", "--hidden", "16", "--diag-every", "0",
           "--threads", "1", "--json", "--no-progress"]
    procs = [subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-2000:]
        assert json.loads(out)["best"]["val_acc"] is not None
    study = optuna.load_study(study_name="shared", storage=storage)
    states = [t.state for t in study.get_trials()]
    assert len(states) == 8
    assert all(s == optuna.trial.TrialState.COMPLETE for s in states)
    frame = tuning.trials_frame(study)
    assert (frame.p_min <= frame.p_max + 1e-12).all()
    assert frame.test_acc.notna().all()


def test_short_study_is_at_least_as_good_as_default(tmp_path):
    base = TrainConfig(dataset="csbm", backbone="gcn", num_layers=4, sampler="dropedge++",
                       p_min=0.3, p_max=0.8, epochs=40, patience=0, diag_every=0, hidden=32)
    default = train(base)
    study = tuning.tune(base, 6, "csbm", storage=str(tmp_path / "t.sqlite"), seed=0,
                        include_base=True, pruner=False)
    best = tuning.best_summary(study)
    assert best["finished_trials"] == 6
    assert best["val_acc"] >= default.best_val_acc
    first = study.trials[0]
    assert first.params["p_min"] == pytest.approx(0.3)
    assert first.user_attrs["p_max"] == pytest.approx(0.8)


def test_bad_arguments():
    with pytest.raises(tuning.TuningError, match="valid: tpe, random"):
        tuning.make_sampler("grid")
    with pytest.raises(tuning.TuningError, match="unknown tuning parameter"):
        tuning.SearchSpace(extra=("momentum",))
    with pytest.raises(tuning.TuningError, match=r"trials must be an integer in 1\.\.100000 \(got 0\)"):
        tuning.tune(TrainConfig(dataset="karate"), 0, "x", storage="sqlite:///:memory:")
