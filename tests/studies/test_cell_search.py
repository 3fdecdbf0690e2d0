"""The per-cell search: each sampler's own keep-rate space, the recipe's point first, an
equal budget that survives a restart, the best trained on seeds and stored, and the
bundled search that docs/REPRODUCTION.md reports."""
from __future__ import annotations

import json

import optuna
import pytest

from dropedge_explorer import cli
from dropedge_explorer.store import ResultStore
from dropedge_explorer.studies import cell_search, tuning
from dropedge_explorer.training import TrainConfig


def test_each_sampler_searches_its_own_keep_rates():
    assert tuning.SearchSpace.for_sampler("nodrop").keep == "none"
    assert tuning.SearchSpace.for_sampler("DropEdge").keep == "single"
    assert tuning.SearchSpace.for_sampler("dropedge++").keep == "range"
    assert tuning.SearchSpace.for_sampler("lid", ["hidden"]).extra == ("hidden",)
    with pytest.raises(tuning.TuningError, match="unknown keep space"):
        tuning.SearchSpace(keep="all")
    # the old studies' mark is unchanged for the (p_min, p_max') space
    assert "keep" not in tuning.SearchSpace().describe()


@pytest.mark.parametrize("sampler, names", [("nodrop", set()), ("dropedge", {"p"}),
                                             ("dropedge++", {"p_min", "p_max_prime"})])
def test_a_trial_draws_the_samplers_rates_and_the_cell_params(sampler, names):
    space = tuning.SearchSpace.for_sampler(sampler, cell_search.CELL_PARAMS)
    trial = optuna.create_study().ask()
    values = space.suggest(trial)
    assert set(trial.params) == names | {"lr", "dropout", "weight_decay", "hidden"}
    assert 1e-4 <= values["lr"] <= 5e-2 and values["hidden"] in tuning.HIDDEN_CHOICES
    config = TrainConfig(dataset="karate", sampler=sampler, num_layers=8).replace(**values)
    assert config.lr == values["lr"]


def test_the_recipes_own_point_is_a_point_of_the_space():
    base = cell_search.cell_base("karate", None, "gcn", 8, "dropedge")
    point = cell_search.cell_space(base).point(base)
    assert point["p"] == pytest.approx((base.p_min + base.p_max) / 2)  # DropEdge's own rule
    assert point["lr"] == base.lr and point["dropout"] == base.dropout == 0.0
    assert point["weight_decay"] == 1e-6  # the recipe's 0, at the log range's floor
    assert point["hidden"] == base.hidden


def test_search_cell_keeps_the_budget_across_restarts_and_starts_at_the_recipe(tmp_path):
    storage = f"sqlite:///{tmp_path / 'search.sqlite'}"
    base = cell_search.cell_base("karate", None, "gcn", 2, "dropedge++").replace(epochs=15, patience=0)
    study = cell_search.search_cell(base, 2, storage)
    assert cell_search.trials_done(study) == 2
    first = study.trials[0]
    assert first.params["lr"] == pytest.approx(base.lr) and first.params["p_min"] == pytest.approx(base.p_min)
    again = cell_search.search_cell(base, 3, storage)  # a restart asks for one more
    assert cell_search.trials_done(again) == 3
    assert cell_search.trials_done(cell_search.search_cell(base, 3, storage)) == 3  # nothing to do
    best = cell_search.best_config(again, base)
    assert isinstance(best, TrainConfig) and best.dataset == "karate" and best.num_layers == 2


def test_run_best_stores_each_seed_once(tmp_path):
    store = ResultStore(tmp_path / "runs.sqlite")
    config = TrainConfig(dataset="karate", num_layers=2, epochs=5, hidden=8, diag_every=0)
    seen = []
    rows = cell_search.run_best(config, [0, 1], store, on_run=lambda c, row: seen.append(row["key"]))
    assert len(store) == 2 and len(rows) == 2 and len(set(seen)) == 2
    created = {r["key"]: r["created_at"] for r in rows}
    again = cell_search.run_best(config, [0, 1], store)
    assert {r["key"]: r["created_at"] for r in again} == created  # not trained again


def test_the_search_command(capsys, tmp_path):
    args = ["search", "--dataset", "karate", "--layers", "2", "--samplers", "nodrop", "dropedge",
            "--trials", "2", "--best-seeds", "0", "1", "--storage", str(tmp_path / "s.sqlite"),
            "--store", str(tmp_path / "r.sqlite"), "--json", "--no-progress"]
    assert cli.main(args) == 0
    out = json.loads(capsys.readouterr().out)
    cells = {c["sampler"]: c for c in out["cells"]}
    assert set(cells) == {"nodrop", "dropedge"}
    assert all(c["trials"] == 2 and c["seeds"] == 2 and 0 <= c["test_acc_mean"] <= 1 for c in cells.values())
    assert cells["dropedge"]["p"] is not None
    assert len(ResultStore(tmp_path / "r.sqlite")) == 4


@pytest.mark.parametrize("bad, what", [(["--trials", "0"], "--trials"),
                                       (["--best-seeds", "-1"], "--best-seeds"),
                                       (["--samplers", "nosuch"], "sampler")])
def test_the_search_command_refuses_bad_input(capsys, tmp_path, bad, what):
    args = ["search", "--dataset", "karate", "--layers", "2", "--storage", str(tmp_path / "s.sqlite"),
            "--store", str(tmp_path / "r.sqlite"), *bad]
    assert cli.main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and what in err[0]
    assert not (tmp_path / "r.sqlite").exists()  # refused before anything was written


def test_the_bundled_search_matches_its_runs():
    summary = cell_search.bundled_summary()
    best = cell_search.bundled_best_runs()
    assert len(summary) and len(best)
    for row in summary[summary["seeds"] > 0].itertuples():
        cell = best[(best["dataset"] == row.dataset) & (best["split"] == row.split)
                    & (best["layers"] == row.num_layers) & (best["sampler"] == row.sampler)]
        assert len(cell) == row.seeds and set(cell["settings"]) == {row.settings}
        assert cell["test_acc"].mean() == pytest.approx(row.test_acc_mean)
    assert summary["trials"].nunique() == 1  # the same budget for every cell
