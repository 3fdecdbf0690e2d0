"""Someone else's study in a shared storage (issue 15, class 4)."""
from __future__ import annotations

import hashlib
import subprocess
import sys

import optuna
import pytest

from dropedge_explorer.studies import tuning
from dropedge_explorer.training import TrainConfig
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
    from dropedge_explorer.jobs.handles import TuningJob
    from dropedge_explorer.jobs.queue import JobQueue

    url = f"sqlite:///{tmp_path / 's.sqlite'}"
    optuna.create_study(study_name="x", storage=url, direction="minimize")
    with pytest.raises(tuning.TuningError, match="direction minimize"):
        TuningJob(TrainConfig(**BASE), 1, "x", url, queue=JobQueue(max_running=1))


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
    assert {k: basis[k] for k in ("dataset", "split", "backbone", "num_layers", "sampler", "recipe")} == {
        "dataset": "karate", "split": "per-class", "backbone": "gcn", "num_layers": 2,
        "sampler": "dropedge++", "recipe": "depth"}
    assert basis["epochs"] == 3 and basis["hidden"] == 8 and len(basis["data"]) == 16
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


def test_the_cli_refuses_trials_of_other_epochs_or_hidden_width(tmp_path):
    """Issue 48: another ``tune`` run with other epochs or hidden width joined the study in
    silence; the trials could not be told apart afterwards. Refused in one line, unwritten."""
    path = tmp_path / "s.sqlite"
    common = ("--dataset", "karate", "--layers", "2", "--trials", "1", "--study", "mine",
              "--storage", str(path))
    proc = cli(*common, "--epochs", "3", "--hidden", "8")
    assert proc.returncode == 0, proc.stderr
    before = rows(path)
    for flags, shown in ((("--epochs", "4", "--hidden", "8"), "epochs 3, not 4"),
                         (("--epochs", "3", "--hidden", "16"), "hidden 8, not 16"),
                         (("--epochs", "4", "--hidden", "16"), "hidden 8, not 16, epochs 3, not 4")):
        proc = cli(*common, *flags)
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 2 and len(lines) == 1, proc.stderr
        assert lines[0] == (f"error: study 'mine' holds trials of other settings ({shown}): its trials "
                            "would mix; give the same settings, or another --study name")
        assert rows(path) == before


@pytest.mark.parametrize("change", [
    {"epochs": 4}, {"hidden": 16}, {"lr": 0.05}, {"dropout": 0.1}, {"weight_decay": 0.0}, {"patience": 7},
    {"self_loop": True}, {"batch_norm": True}, {"normalization": "ARW"}, {"kernel": "rbf"},
    {"directed": True}, {"seed": 1}, {"recipe": "quick"},
])
def test_every_training_setting_is_part_of_the_basis(tmp_path, karate, change):
    """Each training field a trial does not search changes what it measures: a study of
    another value is refused before any trial, the storage's rows unchanged."""
    path = tmp_path / "s.sqlite"
    tuning.tune(TrainConfig(**BASE), 1, "mine", storage=str(path), search="random", seed=0, graph=karate)
    before = rows(path)
    (name, value), = change.items()
    other = TrainConfig(**{**BASE, **change})
    with pytest.raises(tuning.TuningError) as info:
        tuning.tune(other, 1, "mine", storage=str(path), graph=karate)
    assert f"study 'mine' holds trials of other settings ({name} " in str(info.value)
    assert f", not {getattr(other, name)!r}" in str(info.value)
    assert rows(path) == before


def test_the_data_is_part_of_the_basis(tmp_path, karate):
    """Two graphs under one dataset name (another data folder, another upload of the same
    size) are told apart by their content."""
    import dataclasses

    path = tmp_path / "s.sqlite"
    tuning.tune(TrainConfig(**BASE), 1, "mine", storage=str(path), search="random", seed=0, graph=karate)
    before = rows(path)
    other = dataclasses.replace(karate, y=karate.y.flip(0))  # the same size, other labels
    with pytest.raises(tuning.TuningError, match=r"settings \(data '[0-9a-f]{16}', not '[0-9a-f]{16}'\)"):
        tuning.tune(TrainConfig(**BASE), 1, "mine", storage=str(path), graph=other)
    assert rows(path) == before


def test_a_searched_setting_is_not_part_of_the_basis(tmp_path, karate):
    """With hidden searched, the base's hidden width is only the first trial's point."""
    path = tmp_path / "s.sqlite"
    space = tuning.SearchSpace(extra=("hidden",))
    tuning.tune(TrainConfig(**BASE), 1, "mine", storage=str(path), search="random", seed=0, space=space,
                graph=karate)
    study = tuning.tune(TrainConfig(**{**BASE, "hidden": 16}), 1, "mine", storage=str(path), space=space,
                        graph=karate)
    assert len(study.get_trials()) == 2 and "hidden" not in study.user_attrs[tuning.BASIS_ATTR]


def test_a_record_of_the_last_version_is_compared_on_its_fields_and_completed(tmp_path, karate):
    """A study recorded before this round kept six settings: compared on those (another depth
    still refused), then completed with the current ones (so another epochs is refused next)."""
    url = f"sqlite:///{tmp_path / 's.sqlite'}"
    study = optuna.create_study(study_name="old", storage=url, direction="maximize")
    study.set_user_attr(tuning.SPACE_ATTR, tuning.SearchSpace().describe())
    study.set_user_attr(tuning.BASIS_ATTR, {"dataset": "karate", "split": "per-class", "backbone": "gcn",
                                            "num_layers": 2, "sampler": "dropedge++", "recipe": "depth"})
    with pytest.raises(tuning.TuningError, match=r"\(num_layers 2, not 4\)"):
        tuning.tune(TrainConfig(**{**BASE, "num_layers": 4}), 1, "old", storage=url, graph=karate)
    tuning.tune(TrainConfig(**BASE), 1, "old", storage=url, search="random", seed=0, graph=karate)
    with pytest.raises(tuning.TuningError, match=r"\(epochs 3, not 4\)"):
        tuning.tune(TrainConfig(**{**BASE, "epochs": 4}), 1, "old", storage=url, graph=karate)


def test_the_app_job_refuses_a_study_of_other_settings_at_once(tmp_path, karate):
    """The Tuning page builds a TuningJob on Start: a study of other epochs is refused there
    (its ``st.error``), before its job is queued; was: joined, or failed later in the thread."""
    from dropedge_explorer.jobs.handles import TuningJob
    from dropedge_explorer.jobs.queue import JobQueue

    url = f"sqlite:///{tmp_path / 's.sqlite'}"
    tuning.tune(TrainConfig(**BASE), 1, "x", storage=url, search="random", seed=0, graph=karate)
    with pytest.raises(tuning.TuningError,
                       match=r"study .x. holds trials of other settings \(epochs 3, not 9"):
        TuningJob(TrainConfig(**{**BASE, "epochs": 9}), 1, "x", url, graph=karate,
                  queue=JobQueue(max_running=1))


def test_a_second_worker_joins_a_study_marked_between_its_two_reads(monkeypatch):
    """Two workers starting together (test_tuning's two CLI workers, seen failing in CI on
    2026-12-02): the first marks the new study, then starts a trial. The second reads the
    study twice, its trials and its mark; here the first worker's mark and trial land right
    after the second worker's first read. Had the mark been read first (no mark yet) and the
    trials after (one), the study would be refused as foreign; trials first, it is joined."""
    from dropedge_explorer.studies._tuning_space import SPACE_ATTR, SearchSpace, check_study

    space = SearchSpace()
    study = optuna.create_study(direction="maximize")
    landed = []

    def first_worker_starts():  # its mark, then its first trial, once
        if not landed:
            landed.append(True)
            study._storage.set_study_user_attr(study._study_id, SPACE_ATTR, space.describe())
            study.enqueue_trial({"p_min": 0.3, "p_max_prime": 0.5})

    real_attrs, real_trials = optuna.Study.user_attrs, optuna.Study.get_trials

    def user_attrs(s):
        value = real_attrs.fget(s)
        first_worker_starts()
        return value

    def get_trials(s, *args, **kwargs):
        value = real_trials(s, *args, **kwargs)
        first_worker_starts()
        return value

    monkeypatch.setattr(optuna.Study, "user_attrs", property(user_attrs))
    monkeypatch.setattr(optuna.Study, "get_trials", get_trials)
    check_study(study, space)  # joined, not refused
    assert landed and real_attrs.fget(study)[SPACE_ATTR] == space.describe()
