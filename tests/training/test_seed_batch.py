"""training/seed_batch.py (issue 37): seeds trained in one batch against the same seeds
trained alone by :func:`train` — the independent computation. Masks are compared as the
sampler hands them out (recorded per stream), initial weights against a single run's
``_prepare``, outcomes (selected epoch, accuracies, early stops) and curves per seed."""
from __future__ import annotations

import copy
import math
from types import SimpleNamespace

import pytest
import torch
from dropedge_core import _synthetic as synthetic
from dropedge_core import samplers
from dropedge_core.metrics import MAD_NODES

from dropedge_explorer.studies.sweep import train_seeds_and_store
from dropedge_explorer.training import ConfigError, TrainConfig, check_memory, train
from dropedge_explorer.training import seed_batch as seed_batch_module
from dropedge_explorer.training import trainer as trainer_module
from dropedge_explorer.training.checks import seeds_per_batch
from dropedge_explorer.training.seed_batch import train_seeds
from tests.helpers.runs import refused_line, run_cli

SEEDS = (0, 1, 2)
KARATE = synthetic.karate()  # features sparse enough for the CSR path (identity)
CSBM = synthetic.csbm()  # dense features


def configs(seeds=SEEDS, **settings) -> list[TrainConfig]:
    base = {"dataset": "karate", "num_layers": 5, "epochs": 12, "diag_every": 4, "device": "cpu", **settings}
    return [TrainConfig(seed=seed, **base) for seed in seeds]


def assert_same_runs(singles, batched, tol: float = 1e-5) -> None:
    """Per seed: outcome exactly, curves to float tolerance, masks through the diagnostics."""
    for one, many in zip(singles, batched, strict=True):
        assert many.config == one.config
        outcome = ("reason", "message", "best_epoch", "best_val_acc", "test_acc", "epochs_run")
        assert {k: getattr(many, k) for k in outcome} == {k: getattr(one, k) for k in outcome}
        for a, b in zip(one.history, many.history, strict=True):
            assert set(a) == set(b)
            for key in ("train_loss", "val_loss", "train_acc", "val_acc", "test_acc"):
                assert b[key] == pytest.approx(a[key], abs=tol), (one.config.seed, a["epoch"], key)
        assert [d["edge_numbers"] for d in many.diagnostics] == [d["edge_numbers"] for d in one.diagnostics]
        assert [d["epoch"] for d in many.diagnostics] == [d["epoch"] for d in one.diagnostics]
        for name, value in one.model.state_dict().items():
            assert torch.allclose(many.model.state_dict()[name].float(), value.float(), atol=1e-4), name
        assert (many.model.training, many.device) == (one.model.training, one.device)


@pytest.mark.parametrize("backbone, sampler, graph", [
    ("gcn", "dropedge++", KARATE), ("resgcn", "lid", KARATE), ("jknet", "dropedge", KARATE),
    ("appnp_star", "ldd", KARATE), ("gcn", "nodrop", KARATE), ("jknet", "li", CSBM)])
def test_the_depth_recipe_batched_selects_the_epochs_and_accuracies_of_single_runs(backbone, sampler, graph):
    cells = configs(dataset=graph.name, backbone=backbone, sampler=sampler,
                    dropout=0.0)  # APPNP* keeps 0.5 in the recipe
    assert_same_runs([train(c, graph=graph) for c in cells], train_seeds(cells, graph=graph))


@pytest.mark.parametrize("graph, dataset", [(KARATE, "karate"), (CSBM, "csbm")])
def test_with_dropout_every_seed_keeps_its_dropout_stream(graph, dataset):
    # sparse features (karate: one block-diagonal CSR of the seeds' dropped copies) and
    # dense ones (csbm), dropout before every weight: a wrong stream changes the first loss
    cells = configs(dataset=dataset, recipe="quick", num_layers=3, hidden=16, dropout=0.5, directed=True,
                    epochs=6)
    assert_same_runs([train(c, graph=graph) for c in cells], train_seeds(cells, graph=graph))


def test_seeds_that_stop_early_keep_their_selected_epoch_and_leave_the_batch():
    cells = configs(num_layers=6, batch_norm=True, dropout=0.3, patience=3, epochs=15)
    singles = [train(c, graph=KARATE) for c in cells]
    reasons = [r.reason for r in singles]
    assert "early_stop" in reasons and "finished" in reasons  # the case under test happens
    assert_same_runs(singles, train_seeds(cells, graph=KARATE), tol=1e-4)


def _nan_features():
    graph = copy.copy(KARATE)
    graph.x = KARATE.x.clone()
    graph.x[0, 0] = math.nan
    return graph


@pytest.mark.parametrize("graph, settings, loss", [
    (KARATE, {"num_layers": 16, "lr": 10.0}, "validation"),  # diverges in the first step
    (_nan_features(), {"num_layers": 2}, "training")])
def test_a_seed_whose_loss_is_not_finite_ends_as_its_single_run(graph, settings, loss):
    cells = configs(recipe="quick", self_loop=True, epochs=3, diag_every=0, **settings)
    singles = [train(c, graph=graph) for c in cells]
    assert {r.reason for r in singles} == {"nan"} and singles[0].message.startswith(f"{loss} loss")
    assert_same_runs(singles, train_seeds(cells, graph=graph))


def _recorded_masks(monkeypatch, run) -> dict[int, list[torch.Tensor]]:
    """Every mask sample ``run()`` draws, by the seed of the stream it came from."""
    drawn: dict[int, list[torch.Tensor]] = {}
    sample = samplers.EdgeSampler.sample

    def recording(self, graph, num_layers, generator=None):
        masks = sample(self, graph, num_layers, generator=generator)
        drawn.setdefault(generator.initial_seed(), []).append(masks.clone())
        return masks

    monkeypatch.setattr(samplers.EdgeSampler, "sample", recording)
    run()
    monkeypatch.setattr(samplers.EdgeSampler, "sample", sample)
    return drawn


@pytest.mark.parametrize("sampler", ["dropedge++", "li", "fd"])
def test_every_seed_draws_the_masks_of_its_single_run(monkeypatch, sampler):
    cells = configs(sampler=sampler, epochs=4, diag_every=0)
    alone = _recorded_masks(monkeypatch, lambda: [train(c, graph=KARATE) for c in cells])
    together = _recorded_masks(monkeypatch, lambda: train_seeds(cells, graph=KARATE))
    assert sorted(together) == sorted(alone) == list(SEEDS)
    for seed in SEEDS:
        assert len(together[seed]) == len(alone[seed]) == 4
        assert all(torch.equal(a, b) for a, b in zip(alone[seed], together[seed]))


@pytest.mark.parametrize("backbone", ["gcn", "resgcn", "jknet", "appnp_star"])
def test_every_seed_starts_from_the_weights_of_its_single_run(backbone):
    cells = configs(backbone=backbone, batch_norm=True)
    shared = trainer_module._prepare_graph(cells[0], KARATE)
    batch = seed_batch_module._start(cells, shared, lambda seed, event: None)
    for position, config in enumerate(cells):
        alone = trainer_module._prepare(config, KARATE).model.state_dict()
        together = batch.stack.state_of(position)
        assert together.keys() == alone.keys()
        assert all(torch.equal(together[name], alone[name]) for name in alone)


def test_a_batch_that_memory_cannot_hold_is_split(monkeypatch):
    cells = configs(seeds=(0, 1, 2, 3, 4), epochs=5)
    per_seed = check_memory(cells[0], KARATE)
    monkeypatch.setenv("DROPEDGE_MAX_MEMORY_GB", f"{2.5 * per_seed / (1 << 30):.9f}")
    assert seeds_per_batch(cells[0], KARATE, 5) == 2
    sizes: list[int] = []
    run_batch = seed_batch_module._train_batch
    monkeypatch.setattr(seed_batch_module, "_train_batch",
                        lambda batch, *a: sizes.append(len(batch)) or run_batch(batch, *a))
    batched = train_seeds(cells, graph=KARATE)
    assert sizes == [2, 2, 1]
    assert_same_runs([train(c, graph=KARATE) for c in cells], batched)


def test_what_one_batch_cannot_train_is_refused():
    with pytest.raises(ConfigError, match="authors recipe"):
        train_seeds([TrainConfig(dataset="cora", recipe="authors", seed=s) for s in (0, 1)])
    with pytest.raises(ConfigError, match=r"differ: \['hidden'\]"):
        train_seeds([TrainConfig(dataset="karate", seed=0), TrainConfig(dataset="karate", seed=1, hidden=8)])
    with pytest.raises(ConfigError, match=r"one flag per config \(3\), got 2"):
        train_seeds(configs(), graph=KARATE, seed_stops=[None, None])


def test_a_stopped_batch_ends_every_seed_and_stores_none(tmp_path):
    from dropedge_explorer.store import ResultStore

    stop = __import__("threading").Event()
    stop.set()
    store = ResultStore(tmp_path / "runs.db")
    results = train_seeds_and_store(configs(), store, graph=KARATE, stop_event=stop)
    assert [r.reason for r in results] == ["stopped"] * 3 and len(store) == 0


def test_the_cli_stores_one_row_per_seed_as_single_runs_do(capsys, tmp_path, monkeypatch):
    from dropedge_explorer.store import ResultStore

    flags = ["train", "--dataset", "karate", "--layers", "5", "--epochs", "8", "--seeds", "0", "1",
             "--device", "cpu", "--no-progress"]
    assert run_cli(capsys, *flags, "--store", str(tmp_path / "single.db"))[0] == 0
    code, out, _ = run_cli(capsys, *flags, "--batch-seeds", "--store", str(tmp_path / "batched.db"))
    assert code == 0 and "seed 1: test" in out
    single, batched = ResultStore(tmp_path / "single.db"), ResultStore(tmp_path / "batched.db")
    assert batched.keys() == single.keys() and len(batched) == 2
    for key in single.keys():
        a, b = single.get(key), batched.get(key)
        for column in ("best_epoch", "best_val_acc", "test_acc", "epochs_run", "reason", "config"):
            assert b[column] == a[column], column
    per_seed = check_memory(TrainConfig(**{**single.get(key)["config"], "seed": 0}), KARATE)
    monkeypatch.setenv("DROPEDGE_MAX_MEMORY_GB", f"{1.5 * per_seed / (1 << 30):.9f}")
    code, _, err = run_cli(capsys, *flags, "--batch-seeds")
    assert code == 0 and "holds 1 of the 2 seeds at once; training them in 2 batches" in err
    line = refused_line(capsys, "train", "--dataset", "cora", "--recipe", "authors", "--seeds", "0", "1",
                        "--batch-seeds", "--no-progress")
    assert "authors recipe" in line


TIMES = ("epoch_time", "sample_time", "diag_time", "total_time")


def assert_close(a, b, where) -> None:
    """Equal structures; numbers to float tolerance (batched products sum in another order)."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), where
        for key in a:
            assert_close(a[key], b[key], (*where, key))
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            assert_close(x, y, (*where, i))
    elif isinstance(a, float) and not isinstance(b, bool):
        assert b == pytest.approx(a, abs=1e-4, nan_ok=True), where
    else:
        assert b == a, where


@pytest.mark.parametrize("diag_every", [0, 1, 4])
def test_every_seed_emits_the_events_of_its_single_run_with_its_seed(diag_every):
    # early stops (the diagnostics of a seed that stops, with and without diagnostics) and finishes
    cells = configs(num_layers=6, batch_norm=True, dropout=0.3, patience=3, epochs=15, diag_every=diag_every)
    singles, alone = [], {}
    for c in cells:
        alone[c.seed] = []
        singles.append(train(c, graph=KARATE, on_event=alone[c.seed].append))
    assert {r.reason for r in singles} == {"early_stop", "finished"}
    events: list[dict] = []
    batched = train_seeds(cells, graph=KARATE, on_event=events.append)
    assert_same_runs(singles, batched, tol=1e-4)
    for seed in SEEDS:
        mine = [e for e in events if e["seed"] == seed]
        assert [e["type"] for e in mine] == [e["type"] for e in alone[seed]]
        for i, (one, many) in enumerate(zip(alone[seed], mine)):
            assert set(many) == {*one, "seed"}, (seed, i)
            assert_close({k: v for k, v in one.items() if k not in TIMES},
                         {k: v for k, v in many.items() if k not in (*TIMES, "seed")}, (seed, i))
    assert len(events) == sum(len(e) for e in alone.values())


def test_a_seed_whose_patience_runs_out_at_the_last_epoch_finishes():
    cells = configs(num_layers=6, batch_norm=True, dropout=0.3, patience=3, epochs=15)
    stopped = [r for r in (train(c, graph=KARATE) for c in cells) if r.reason == "early_stop"]
    last = stopped[0].epochs_run  # its patience runs out at this epoch: make it the budget
    cells = [c.replace(epochs=last) for c in cells]
    singles = [train(c, graph=KARATE) for c in cells]
    assert singles[SEEDS.index(stopped[0].config.seed)].reason == "finished"
    assert_same_runs(singles, train_seeds(cells, graph=KARATE), tol=1e-4)


def test_another_normalization_reaches_the_batched_adjacencies():
    cells = configs(normalization="FOG", dropout=0.0, epochs=4)
    assert_same_runs([train(c, graph=KARATE) for c in cells], train_seeds(cells, graph=KARATE))


def test_one_seed_alone_is_a_batch_of_one():
    cell = configs(seeds=(5,), epochs=4)
    assert_same_runs([train(cell[0], graph=KARATE)], train_seeds(cell, graph=KARATE))


def test_seeds_stopped_by_their_own_flags_leave_the_others_training():
    import threading

    cells = configs(epochs=5)
    stop = threading.Event()
    stop.set()
    results = train_seeds(cells, graph=KARATE, seed_stops=[stop, stop, None])
    for result in results[:2]:
        assert (result.reason, result.message, result.epochs_run, result.best_epoch) == (
            "stopped", "stopped by request before epoch 1", 0, None)
    assert_same_runs([train(cells[2], graph=KARATE)], results[2:])


def test_what_cannot_be_batched_is_refused_word_for_word():
    with pytest.raises(ConfigError) as err:
        train_seeds([])
    assert str(err.value) == "no seeds to train in a batch"
    with pytest.raises(ConfigError) as err:  # one config alone is checked too
        train_seeds([TrainConfig(dataset="cora", recipe="authors", seed=0)])
    assert str(err.value) == ("the authors recipe cannot train seeds in one batch: its models "
                              "(method.authors_models) and checkpoint rule are not batched; train its "
                              "seeds one at a time (without --batch-seeds)")


def test_the_seeds_times_share_the_batch_clock(monkeypatch):
    """On a clock that ticks once per reading (no real time): a seed's sampling is part of its
    epoch, its epochs and diagnostics are within the run, and the seeds' epoch and total
    times add up to no more than the batch's clock (each is the batch's share per seed)."""
    ticks = iter(range(10**6, 10**7))
    monkeypatch.setattr(seed_batch_module, "time", SimpleNamespace(perf_counter=lambda: float(next(ticks))))
    cells = configs(epochs=6, diag_every=2)
    start = float(next(ticks))
    results = train_seeds(cells, graph=KARATE)
    wall = float(next(ticks)) - start
    for r in results:
        assert all(0 < e["sample_time"] <= e["epoch_time"] for e in r.history)
        assert all(0 < d["diag_time"] < wall for d in r.diagnostics) and len(r.diagnostics) == 3
    assert sum(e["epoch_time"] for r in results for e in r.history) <= wall
    assert 0 < sum(r.total_time for r in results) <= wall


def test_above_mads_node_limit_every_seed_keeps_its_own_mad_subset():
    # MAD samples MAD_NODES nodes above that size, from the run's seed: a seed's diagnostics
    # in the batch are those of its single run, not of seed 0's subset
    graph = synthetic.csbm(num_nodes=MAD_NODES + 100)
    cells = configs(seeds=(1, 2), dataset=graph.name, num_layers=2, hidden=8, epochs=1, diag_every=1)
    singles, batched = [train(c, graph=graph) for c in cells], train_seeds(cells, graph=graph)
    for one, many in zip(singles, batched, strict=True):
        assert many.diagnostics[0]["mad"] == pytest.approx(one.diagnostics[0]["mad"], abs=1e-5)


def test_a_seed_whose_training_loss_goes_nan_leaves_the_other_seeds_epochs_whole(monkeypatch):
    # seed 0's training loss (the first block of per-node losses) is made NaN in epoch 2:
    # it ends there; the seeds after it in the batch still train that epoch, as alone
    nll_loss, calls = seed_batch_module.F.nll_loss, []

    def nan_in_epoch_two(*args, **kwargs):
        out = nll_loss(*args, **kwargs)
        calls.append(1)
        if len(calls) == 2:
            out = out.clone()
            out[0] = math.nan
        return out

    monkeypatch.setattr(seed_batch_module, "F", SimpleNamespace(nll_loss=nan_in_epoch_two))
    cells = configs(epochs=4, diag_every=0)
    results = train_seeds(cells, graph=KARATE)
    first = results[0]
    assert (first.reason, first.epochs_run, first.model.training) == ("nan", 1, True)
    assert first.message == (f"training loss became nan at epoch 2 (learning rate {cells[0].lr} too high?); "
                             "stopped, curves up to epoch 1 kept")
    monkeypatch.undo()
    assert_same_runs([train(c, graph=KARATE) for c in cells[1:]], results[1:])
