"""training/seed_batch.py (issue 37): seeds trained in one batch against the same seeds
trained alone by :func:`train` — the independent computation. Masks are compared as the
sampler hands them out (recorded per stream), initial weights against a single run's
``_prepare``, outcomes (selected epoch, accuracies, early stops) and curves per seed."""
from __future__ import annotations

import copy
import math

import pytest
import torch

from dropedge_core.data import synthetic
from dropedge_core.method import samplers
from dropedge_core.studies.sweep import train_seeds_and_store
from dropedge_core.training import ConfigError, TrainConfig, check_memory, train
from dropedge_core.training import seed_batch as seed_batch_module
from dropedge_core.training import trainer as trainer_module
from dropedge_core.training.checks import seeds_per_batch
from dropedge_core.training.seed_batch import train_seeds
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
    from dropedge_core.store import ResultStore

    stop = __import__("threading").Event()
    stop.set()
    store = ResultStore(tmp_path / "runs.db")
    results = train_seeds_and_store(configs(), store, graph=KARATE, stop_event=stop)
    assert [r.reason for r in results] == ["stopped"] * 3 and len(store) == 0


def test_the_cli_stores_one_row_per_seed_as_single_runs_do(capsys, tmp_path, monkeypatch):
    from dropedge_core.store import ResultStore

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
