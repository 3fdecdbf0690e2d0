"""studies/sweep.py with ``batch_seeds``: a grid walked cell by cell, the free seeds of a cell
claimed together and trained as one batch. Checked against the unbatched sweep of the same
grid (the independent computation: single runs), against two workers on one store, against
a claim lost mid-batch and against a stop and its resume."""
from __future__ import annotations

import json
import threading

import pytest

from dropedge_explorer import cli
from dropedge_explorer.store import ResultStore, run_key
from dropedge_explorer.studies import cell_search
from dropedge_explorer.studies import sweep as sweep_module
from dropedge_explorer.studies.sweep import SweepOutcome, cell_of, run_claimed
from dropedge_explorer.sweep_workers import ClaimedRuns
from dropedge_explorer.training import TrainConfig, train
from dropedge_explorer.training.seed_batch import train_seeds
from tests.helpers.runs import result_of, run_cli

#: Columns of a stored row that measure time or the moment of storing, not the run.
CLOCK = ("created_at", "total_time", "mean_epoch_time", "mean_sample_time", "history", "diagnostics")

#: A small depth-recipe grid (dropout 0 from L = 5) with early stops at different epochs.
SWEEP = ["sweep", "--dataset", "karate", "--backbones", "gcn", "resgcn", "--samplers", "dropedge",
         "dropedge++", "--layers", "5", "--seeds", "0", "1", "2", "--epochs", "40", "--patience", "5",
         "--hidden", "8", "--diag-every", "0", "--json", "--no-progress"]


@pytest.fixture
def batch_sizes(monkeypatch) -> list[int]:
    """The sizes of the batches the sweep hands to ``train_seeds`` (the real one)."""
    sizes: list[int] = []

    def spy(configs, *args, **kwargs):
        sizes.append(len(configs))
        return train_seeds(configs, *args, **kwargs)

    monkeypatch.setattr(sweep_module, "train_seeds", spy)
    return sizes


def assert_same_rows(single: ResultStore, batched: ResultStore) -> None:
    """The same keys; per key every column but the clock's equal, the curves to float tolerance."""
    assert batched.keys() == single.keys()
    for key in single.keys():
        a, b = single.get(key), batched.get(key)
        same = [c for c in a if c not in CLOCK]
        assert {c: b[c] for c in same} == {c: a[c] for c in same} and set(b) == set(a)
        assert [e["epoch"] for e in b["history"]] == [e["epoch"] for e in a["history"]]
        assert [e["val_loss"] for e in b["history"]] == pytest.approx([e["val_loss"] for e in a["history"]],
                                                                      abs=1e-5)


def test_a_batched_sweep_stores_the_rows_of_the_unbatched_one(capsys, tmp_path, batch_sizes):
    code, out, _ = run_cli(capsys, *SWEEP, "--store", str(tmp_path / "single.sqlite"))
    assert code == 0 and json.loads(out)["ran"] == 12 and batch_sizes == []
    code, out, _ = run_cli(capsys, *SWEEP, "--batch-seeds", "--store", str(tmp_path / "batched.sqlite"))
    report = json.loads(out)
    assert code == 0 and report["batch_seeds"] and report["ran"] == 12
    assert batch_sizes == [3, 3, 3, 3]  # one batch per cell: its three seeds together
    single, batched = ResultStore(tmp_path / "single.sqlite"), ResultStore(tmp_path / "batched.sqlite")
    assert {r["epochs_run"] for r in single.to_frame().to_dict("records")} != {40}  # early stops happened
    assert_same_rows(single, batched)
    assert batched.claims() == []
    # stored by anyone: not trained again, batched or not
    code, out, _ = run_cli(capsys, *SWEEP, "--batch-seeds", "--store", str(tmp_path / "single.sqlite"))
    assert code == 0 and json.loads(out)["ran"] == 0 and json.loads(out)["skipped"] == 12
    assert batch_sizes == [3, 3, 3, 3]


def test_the_authors_recipe_is_refused_before_the_store_opens(capsys, tmp_path):
    code, _, err = run_cli(capsys, "sweep", "--dataset", "cora", "--recipe", "authors", "--samplers",
                           "dropedge++", "--seeds", "0", "1", "--batch-seeds", "--no-progress",
                           "--store", str(tmp_path / "r.sqlite"))
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "authors recipe" in lines[0]
    assert not (tmp_path / "r.sqlite").exists()


def _grid(seeds=(0, 1, 2), layers=(5, 6), **settings) -> list[TrainConfig]:
    base = {"dataset": "karate", "hidden": 8, "epochs": 6, "diag_every": 0, "device": "cpu", **settings}
    return [TrainConfig(num_layers=n, seed=s, **base) for n in layers for s in seeds]


def test_two_batched_workers_split_a_grid_and_train_no_run_twice(tmp_path, karate):
    path = tmp_path / "r.sqlite"
    grid = _grid(layers=(5, 6, 7, 8))
    both_claimed = threading.Event()
    trained: list[list[str]] = [[], []]

    def worker(i: int) -> None:
        store = ResultStore(path)

        def train_fn(configs, graph, on_event, stop_event, seed_stops):
            trained[i].extend(run_key(c) for c in configs)
            if len({c["owner"] for c in store.claims()}) == 2:
                both_claimed.set()
            both_claimed.wait(30)  # hold the first batch until the other worker claimed a cell too
            return train_seeds(configs, graph, on_event, stop_event, seed_stops)

        runs = ClaimedRuns(store, grid, owner=f"w{i}", lease=30)
        run_claimed(runs, store, karate, batch_seeds=True, train_seeds_fn=train_fn)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert both_claimed.is_set() and all(trained)  # each worker trained a part
    assert not set(trained[0]) & set(trained[1])  # no run twice
    assert sorted(trained[0] + trained[1]) == sorted(run_key(c) for c in grid)
    store = ResultStore(path)
    assert store.keys() == {run_key(c) for c in grid} and store.claims() == []


def test_a_seed_whose_claim_is_taken_over_stops_alone_and_is_left_to_the_other_worker(tmp_path, karate):
    store = ResultStore(tmp_path / "r.sqlite")
    grid = _grid(layers=(5,), epochs=30, patience=30)
    taken = grid[1]
    runs = ClaimedRuns(store, grid, owner="here", lease=1.5)

    def other_worker_stores_it():
        ResultStore(tmp_path / "r.sqlite").put(result_of(taken, test_acc=0.123))

    def train_fn(configs, graph, on_event, stop_event, seed_stops):
        def events(event):
            if event["type"] == "epoch" and event["seed"] == taken.seed and event["epoch"] == 3:
                store.release(run_key(taken), "here")  # its lease ran out: another worker took it over
                assert store.claim(run_key(taken), "there", lease=60)
                assert seed_stops[1].wait(10), "the renewer never noticed"
                threading.Thread(target=other_worker_stores_it).start()
        return train_seeds(configs, graph, events, stop_event, seed_stops)

    outcome = run_claimed(runs, store, karate, batch_seeds=True, train_seeds_fn=train_fn)
    assert outcome.lost == 1 and [r.config.seed for r in outcome.results] == [0, 2]
    assert set(outcome.stored_keys) == {run_key(grid[0]), run_key(grid[2])}
    assert store.get(taken)["test_acc"] == 0.123  # the other worker's row, not overwritten here
    for config in (grid[0], grid[2]):  # its batch lost a seed after epoch 3; the others as alone
        alone = train(config, graph=karate)
        row = store.get(config)
        assert (row["best_epoch"], row["test_acc"], row["epochs_run"]) == (
            alone.best_epoch, alone.test_acc, alone.epochs_run)
    assert (runs.trained, runs.skipped) == (2, 1)


def test_a_stopped_batched_sweep_keeps_what_ended_and_resumes_the_rest(tmp_path, karate):
    store = ResultStore(tmp_path / "r.sqlite")
    grid = _grid(seeds=(0, 1, 2), layers=(5, 6), epochs=20, patience=2)
    stop = threading.Event()
    ends: dict[int, int] = {}

    def on_event(event):  # the stop comes once a seed of the first cell ended on its own
        if event["type"] == "end" and event["reason"] != "stopped":
            ends[event["seed"]] = event["epochs_run"]
            stop.set()

    first = run_claimed(ClaimedRuns(store, grid, stop_event=stop), store, karate, on_event=on_event,
                        stop_event=stop, batch_seeds=True)
    stored = set(first.stored_keys)
    assert 1 <= len(stored) < 3 and stored == set(store.keys())  # the seeds that ended early, only
    assert store.claims() == []  # the stopped seeds' claims released
    before = {k: store.get(k)["created_at"] for k in stored}
    again = ClaimedRuns(store, grid)
    second = run_claimed(again, store, karate, batch_seeds=True)
    assert again.skipped == len(stored) and len(second.stored_keys) == len(grid) - len(stored)
    assert store.keys() == {run_key(c) for c in grid}
    assert {k: store.get(k)["created_at"] for k in stored} == before  # not trained again


def test_cells_are_every_setting_but_the_seed():
    grid = _grid(layers=(5, 6))
    assert len({cell_of(c) for c in grid}) == 2
    assert cell_of(grid[0]) == cell_of(grid[1]) != cell_of(grid[0].replace(lr=0.5))


def test_the_searchs_best_seeds_train_in_one_batch(tmp_path, karate, batch_sizes):
    config = TrainConfig(dataset="karate", num_layers=5, epochs=12, hidden=8, diag_every=0, device="cpu")
    single, batched = ResultStore(tmp_path / "single.sqlite"), ResultStore(tmp_path / "batched.sqlite")
    cell_search.run_best(config, [0, 1, 2], single, graph=karate)
    assert batch_sizes == []
    trained: list[str] = []
    rows = cell_search.run_best(config, [0, 1, 2], batched, graph=karate, trained=trained, batch_seeds=True)
    assert batch_sizes == [3] and len(trained) == 3 and [r["seed"] for r in rows] == [0, 1, 2]
    assert_same_rows(single, batched)


def test_the_search_command_batches_the_best_seeds(capsys, tmp_path, batch_sizes):
    args = ["search", "--dataset", "karate", "--layers", "2", "--samplers", "nodrop", "--trials", "1",
            "--best-seeds", "0", "1", "2", "--batch-seeds", "--storage", str(tmp_path / "s.sqlite"),
            "--store", str(tmp_path / "r.sqlite"), "--json", "--no-progress"]
    assert cli.main(args) == 0
    cell = json.loads(capsys.readouterr().out)["cells"][0]
    assert cell["seeds"] == 3 and cell["trained_here"] == 3
    assert batch_sizes == [3]  # the trial trained alone; the best point's seeds together


def test_a_sweep_outcome_names_the_batch_while_it_trains(tmp_path, karate):
    store = ResultStore(tmp_path / "r.sqlite")
    grid = _grid(layers=(5,))
    outcome = SweepOutcome()
    seen: list[list[int]] = []

    def on_event(event):
        if event["type"] == "start":
            seen.append([c.seed for c in outcome.batch])

    run_claimed(ClaimedRuns(store, grid), store, karate, on_event=on_event, outcome=outcome, batch_seeds=True)
    assert seen == [[0, 1, 2]] * 3 and outcome.batch == [] and outcome.current is None
