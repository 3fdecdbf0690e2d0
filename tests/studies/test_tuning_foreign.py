"""Someone else's study in a shared storage (issue 15, class 4)."""
from __future__ import annotations

import hashlib
import subprocess
import sys

import optuna
import pytest

from dropedge_core.studies import tuning
from dropedge_core.training import TrainConfig
from tests.helpers import REPO

BASE = dict(dataset="karate", num_layers=2, epochs=3, hidden=8, diag_every=0)


def rows(path) -> list:
    """Every row of every table, for 'nothing was written' checks."""
    import sqlite3

    with sqlite3.connect(path) as con:
        tables = [r[0] for r in con.execute("select name from sqlite_master where type='table' order by 1")]
        return [(t, sorted(map(repr, con.execute(f"select * from {t}")))) for t in tables]


def cli(*argv):
    return subprocess.run([sys.executable, "-m", "dropedge_core", "tune", *argv, "--no-progress"], cwd=REPO,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("kind", ["minimize", "other_params", "multi_objective"])
def test_a_foreign_study_of_the_same_name_is_refused_and_untouched(tmp_path, kind):
    path = tmp_path / "shared.sqlite"
    url = f"sqlite:///{path}"
    if kind == "multi_objective":
        study = optuna.create_study(study_name="dropedge", storage=url, directions=["maximize", "minimize"])
        study.optimize(lambda t: (t.suggest_float("a", 0, 1), 1.0), n_trials=2)
    else:
        study = optuna.create_study(study_name="dropedge", storage=url,
                                    direction="minimize" if kind == "minimize" else "maximize")
        study.optimize(lambda t: t.suggest_float("learning_rate", 0, 1), n_trials=2)
    before = rows(path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    proc = cli("--dataset", "karate", "--layers", "2", "--trials", "1", "--epochs", "3",
               "--study", "dropedge", "--storage", url)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: study 'dropedge'"), lines
    assert ("direction" in lines[0]) if kind != "other_params" else ("learning_rate" in lines[0])
    assert rows(path) == before
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest


def test_our_study_with_another_space_is_refused(tmp_path):
    url = f"sqlite:///{tmp_path / 's.sqlite'}"
    base = TrainConfig(**BASE)
    tuning.tune(base, 1, "mine", storage=url, search="random", seed=0)
    with pytest.raises(tuning.TuningError, match="study 'mine' searches .*extra.*--tune parameters"):
        tuning.tune(base, 1, "mine", storage=url, search="random", seed=0,
                    space=tuning.SearchSpace(extra=("lr",)))
    study = tuning.tune(base, 1, "mine", storage=url, search="random", seed=0)  # same space: joins
    assert len(study.get_trials()) == 2


def test_the_app_job_refuses_a_foreign_study_at_once(tmp_path):
    from app_shared.tuning_job import TuningJob

    url = f"sqlite:///{tmp_path / 's.sqlite'}"
    optuna.create_study(study_name="x", storage=url, direction="minimize")
    with pytest.raises(tuning.TuningError, match="direction minimize"):
        TuningJob(TrainConfig(**BASE), 1, "x", url, start=False)


def test_default_names_differ_by_settings_and_user(monkeypatch):
    base = TrainConfig(**BASE)
    monkeypatch.setattr("getpass.getuser", lambda: "ada")
    a = tuning.default_study_name(base)
    assert a.startswith("dropedge-ada-karate-gcn-L2-dropedge++-")
    assert tuning.default_study_name(TrainConfig(**BASE)) == a  # same settings, same user: shared
    assert tuning.default_study_name(base.replace(hidden=16)) != a
    assert tuning.default_study_name(base, tuning.SearchSpace(extra=("lr",))) != a
    assert tuning.default_study_name(base, search="random") != a
    monkeypatch.setattr("getpass.getuser", lambda: "bob")
    assert tuning.default_study_name(base) != a


def test_cli_default_study_is_not_the_old_shared_name(tmp_path):
    url = f"sqlite:///{tmp_path / 's.sqlite'}"
    optuna.create_study(study_name="dropedge", storage=url, direction="minimize")  # an old, foreign one
    proc = cli("--dataset", "karate", "--layers", "2", "--trials", "1", "--epochs", "3", "--hidden", "8",
               "--storage", url, "--json")
    assert proc.returncode == 0, proc.stderr
    names = optuna.get_all_study_names(url)
    assert "dropedge" in names and len(names) == 2
    mine = next(n for n in names if n != "dropedge")
    assert mine.startswith("dropedge-") and "-karate-gcn-L2-" in mine
    assert len(optuna.load_study(study_name="dropedge", storage=url).trials) == 0


def test_a_study_records_its_settings_and_refuses_trials_of_another_depth(tmp_path):
    """Two ``tune`` runs at different depths under one study name mixed their trials (issue
    38, item 5): the study records what its trials depend on and refuses the other, unwritten."""
    path = tmp_path / "s.sqlite"
    proc = cli("--dataset", "karate", "--layers", "2", "--trials", "1", "--epochs", "3", "--hidden", "8",
               "--study", "mine", "--storage", str(path))
    assert proc.returncode == 0, proc.stderr
    basis = optuna.load_study(study_name="mine", storage=f"sqlite:///{path}").user_attrs[tuning.BASIS_ATTR]
    assert basis == {"dataset": "karate", "split": "per-class", "backbone": "gcn", "num_layers": 2,
                     "sampler": "dropedge++", "recipe": "depth"}
    before = rows(path)
    proc = cli("--dataset", "karate", "--layers", "4", "--trials", "1", "--epochs", "3", "--hidden", "8",
               "--study", "mine", "--storage", str(path))
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert lines[0] == ("error: study 'mine' holds trials of other settings (num_layers 2, not 4): its "
                        "trials would mix; give the same settings, or another --study name")
    assert rows(path) == before
    with pytest.raises(tuning.TuningError, match=r"backbone 'gcn', not 'resgcn'"):
        tuning.tune(TrainConfig(**{**BASE, "backbone": "resgcn"}), 1, "mine", storage=str(path))
    assert rows(path) == before
    study = tuning.tune(TrainConfig(**BASE), 1, "mine", storage=str(path))  # the same settings join
    assert len(study.get_trials()) == 2
