"""The command line: --help everywhere, JSON output, exit code 2 with one line on bad
input, presets with explicit overrides, and a sweep that resumes after being killed."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from dropedge_explorer import cli
from dropedge_explorer.store import ResultStore
from dropedge_explorer.training import TrainConfig
from dropedge_explorer.training._fingerprint import RUN_PRINT_FIELDS, masks_fingerprint
from tests.helpers import REPO
from tests.helpers.runs import run_cli, run_module

SUBCOMMANDS = ["datasets", "train", "men", "sweep", "reproduce", "export"]
KARATE_TRAIN = ["train", "--dataset", "karate", "--hidden", "8", "--epochs", "5", "--diag-every", "0",
                "--no-progress"]






@pytest.mark.parametrize("command", [[]] + [[c] for c in SUBCOMMANDS])
def test_help(capsys, command):
    code, out, _ = run_cli(capsys, *command, "--help")
    assert code == 0 and "usage:" in out


def test_module_entry_point_help_and_error():
    ok = run_module("--help")
    assert ok.returncode == 0 and all(c in ok.stdout for c in SUBCOMMANDS)
    bad = run_module("train", "--dataset", "nope")
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines() == [bad.stderr.strip()]
    assert bad.stderr.startswith("error: unknown dataset 'nope'")
    assert "Traceback" not in bad.stderr


@pytest.mark.parametrize("argv, fragment", [
    (["train", "--dataset", "nope"], "unknown dataset 'nope'"),
    (["train", "--dataset", "karate", "--sampler", "dropall"], "unknown sampler 'dropall'"),
    (["train", "--dataset", "karate", "--backbone", "gat"], "unknown backbone 'gat'"),
    (["train", "--dataset", "karate", "--p-min", "1.5"], "p_min must be in [0, 1] (got 1.5)"),
    (["train", "--dataset", "karate", "--p-min", "0.9", "--p-max", "0.2"], "p_min must be <= p_max"),
    (["train", "--dataset", "karate", "--layers", "0"], "num_layers must be an integer in 1..256 (got 0)"),
    (["train", "--dataset", "karate", "--layers", "eight"], "argument --layers: invalid int value: 'eight'"),
    (["train", "--dataset", "karate", "--normalization", "L2"], "unknown normalization 'L2'"),
    (["train", "--dataset", "karate", "--dropout", "1"], "dropout must be in [0, 1) (got 1.0)"),
    (["train", "--dataset", "karate", "--lr", "0"], "lr must be in (0, 10] (got 0.0)"),
    (["train", "--dataset", "cora", "--split", "half"], "unknown split 'half' for cora"),
    (["train", "--dataset", "karate", "--preset", "paper"], "no paper preset for dataset=karate"),
    (["train", "--dataset", "karate", "--preset", "best"], "argument --preset: invalid choice: 'best'"),
    (["train", "--dataset", "karate", "--bogus"], "unrecognized arguments: --bogus"),
    (["train", "--dataset", "karate", "--threads", "0"], "--threads must be an integer in 1..256 (got '0')"),
    (["men", "--dataset", "karate", "--sampler", "lid", "nope"], "unknown sampler 'nope'"),
    (["men", "--dataset", "karate", "--runs", "0"], "--runs must be an integer in 1..10000 (got 0)"),
    (["men", "--dataset", "karate", "--layers", "300"], "num_layers must be an integer in 1..256"),
    (["men", "--dataset", "karate", "--kernel", "cosine"], "unknown kernel 'cosine'"),
    (["sweep", "--dataset", "karate", "--backbones", "gcn", "mlp"], "unknown backbone 'mlp'"),
    (["frobnicate"], "invalid choice: 'frobnicate'"),
    ([], "the following arguments are required"),
])
def test_bad_input_exits_2_with_one_line(capsys, tmp_path, argv, fragment):
    if argv[:1] == ["sweep"]:
        argv = argv + ["--store", str(tmp_path / "s.sqlite")]
    code, out, err = run_cli(capsys, *argv)
    assert code == 2
    assert err.startswith("error: ") and err.endswith("\n") and err.count("\n") == 1, err
    assert fragment in err
    assert out == ""


def test_datasets_json(capsys):
    code, out, _ = run_cli(capsys, "datasets", "--json")
    rows = json.loads(out)
    assert code == 0 and {r["name"] for r in rows} >= {"cora", "karate", "csbm"}
    karate = next(r for r in rows if r["name"] == "karate")
    assert karate["offline"] is True and karate["availability"] == "built-in"
    code, out, _ = run_cli(capsys, "datasets")
    assert code == 0 and "karate" in out


def test_train_json_and_text(capsys, tmp_path, karate):
    code, out, _ = run_cli(capsys, *KARATE_TRAIN, "--layers", "3", "--sampler", "dropedge++",
                           "--seeds", "0", "1", "--json", "--store", str(tmp_path / "r.sqlite"))
    assert code == 0
    report = json.loads(out)
    assert report["seeds"] == [0, 1] and len(report["runs"]) == 2
    assert report["config"]["num_layers"] == 3 and report["config"]["sampler"] == "dropedge++"
    accs = [r["test_acc"] for r in report["runs"]]
    assert report["test_acc_mean"] == pytest.approx(sum(accs) / 2)
    assert len(ResultStore(tmp_path / "r.sqlite")) == 2
    # each run's fingerprint, recorded as it trained: its first epochs' masks drawn again here
    # by sampling alone, its run-long digest the one the store kept
    stored = ResultStore(tmp_path / "r.sqlite").to_frame().set_index("seed")
    for run in report["runs"]:
        config = TrainConfig.from_dict(run["config"])
        assert run["fingerprint"]["masks_fp"] == masks_fingerprint(config, karate)
        assert run["fingerprint"]["run_masks_fp"] == stored.loc[config.seed, "run_masks_fp"]
        assert set(run["fingerprint"]) == set(RUN_PRINT_FIELDS)
    code, out, _ = run_cli(capsys, *KARATE_TRAIN, "--sampler", "nodrop")
    assert code == 0 and "mean test accuracy" in out and "seed 0" in out


def test_backbone_appnp_star_alias(capsys, tmp_path):
    """The paper's spelling ``appnp*`` (and ``APPNP*``) is accepted; runs are stored and
    printed as ``appnp_star``."""
    store = tmp_path / "r.sqlite"
    code, out, err = run_cli(capsys, *KARATE_TRAIN, "--backbone", "appnp*", "--layers", "2", "--json",
                             "--store", str(store))
    assert code == 0, err
    assert json.loads(out)["config"]["backbone"] == "appnp_star"
    assert list(ResultStore(store).to_frame()["backbone"]) == ["appnp_star"]
    code, out, err = run_cli(capsys, *KARATE_TRAIN, "--backbone", "APPNP*", "--layers", "2")
    assert code == 0, err
    assert " appnp_star L=2 " in out and "appnp*" not in out


def test_preset_fills_config_and_flags_override():
    parser = cli.build_parser()
    args = parser.parse_args(["train", "--dataset", "cora", "--split", "semi", "--backbone", "gcn",
                              "--preset", "paper", "--layers", "8", "--sampler", "dropedge"])
    config = cli.make_config(args, args.dataset, args.backbone, num_layers=args.layers,
                             sampler=args.sampler, seed=0)
    assert config.num_layers == 8 and config.sampler == "dropedge"  # explicit flags win
    assert (config.hidden, config.lr, config.weight_decay, config.dropout) == (256, 0.009, 1e-3, 0.8)
    assert config.normalization == "ANS" and config.p_min == 0.8 and config.p_max == pytest.approx(0.84)
    args = parser.parse_args(["train", "--dataset", "cora", "--backbone", "gcn", "--preset", "paper",
                              "--normalization", "AN", "--self-loop", "--hidden", "64"])
    config = cli.make_config(args, args.dataset, args.backbone, num_layers=args.layers, sampler=None, seed=0)
    assert (config.num_layers, config.normalization, config.self_loop, config.hidden) == (4, "AN", True, 64)


def test_sweep_with_preset_uses_each_presets_depth():
    parser = cli.build_parser()
    args = parser.parse_args(["sweep", "--datasets", "cora", "citeseer", "--split", "semi", "--backbones",
                              "gcn", "jknet", "--preset", "paper", "--samplers", "dropedge++",
                              "--seeds", "0", "1"])
    depths = {(c.dataset, c.backbone): c.num_layers for c in cli.sweep_grid(args)}
    assert depths == {("cora", "gcn"): 4, ("cora", "jknet"): 64, ("citeseer", "gcn"): 2,
                      ("citeseer", "jknet"): 8}
    assert len(cli.sweep_grid(args)) == 8
    args = parser.parse_args(["sweep", "--dataset", "cora", "--preset", "paper", "--layers", "2", "16"])
    assert sorted({c.num_layers for c in cli.sweep_grid(args)}) == [2, 16]
    args = parser.parse_args(["sweep", "--dataset", "cora"])
    assert sorted({c.num_layers for c in cli.sweep_grid(args)}) == [2, 4, 8]


def test_men_json(capsys):
    code, out, _ = run_cli(capsys, "men", "--dataset", "karate", "--sampler", "lid", "dropedge",
                           "--layers", "2", "3", "--runs", "3", "--json", "--no-progress")
    assert code == 0
    rows = json.loads(out)["rows"]
    assert [(r["sampler"], r["layers"]) for r in rows] == [("lid", 2), ("lid", 3), ("dropedge", 2),
                                                           ("dropedge", 3)]
    assert all(r["runs"] == 3 and len(r["edge_numbers_mean"]) == r["layers"] for r in rows)
    code, out, _ = run_cli(capsys, "men", "--dataset", "karate", "--sampler", "li", "--layers", "2",
                           "--runs", "2", "--estimate", "--sources", "34", "--json", "--no-progress")
    row = json.loads(out)["rows"][0]
    assert code == 0 and row["estimate"] and row["men_stderr_mean"] == pytest.approx(0.0)


SWEEP = ["sweep", "--dataset", "karate", "--backbones", "gcn", "--samplers", "nodrop", "dropedge",
         "dropedge++", "--layers", "2", "4", "--seeds", "0", "1", "--epochs", "60", "--hidden", "8",
         "--diag-every", "0", "--json", "--no-progress"]


def test_sweep_resumes_after_being_killed(capsys, tmp_path):
    path = tmp_path / "sweep.sqlite"
    total = 12
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-m", "dropedge_core", *SWEEP, "--store", str(path)], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 240
    stored = 0
    while time.monotonic() < deadline and proc.poll() is None:
        if path.exists():
            stored = len(ResultStore(path))
            if stored >= 3:
                break
        time.sleep(0.05)
    proc.kill()
    proc.communicate(timeout=60)
    before = ResultStore(path).to_frame().set_index("key")["created_at"]
    assert 1 <= len(before) <= total

    code, out, _ = run_cli(capsys, *SWEEP, "--store", str(path))
    assert code == 0
    report = json.loads(out)
    assert report["total"] == total and report["skipped"] == len(before)
    assert report["ran"] == total - len(before)
    after = ResultStore(path).to_frame().set_index("key")["created_at"]
    assert len(after) == total
    assert (after.loc[before.index] == before).all()  # stored runs were not redone
    assert {(r["sampler"], r["num_layers"]) for r in report["results"]} == {
        (s, layers) for s in ("nodrop", "dropedge", "dropedge++") for layers in (2, 4)}
    assert all(r["runs"] == 2 for r in report["results"])

    code, out, _ = run_cli(capsys, *SWEEP, "--store", str(path))
    assert json.loads(out)["skipped"] == total and json.loads(out)["ran"] == 0


@pytest.mark.parametrize("argv", [
    ["train", "--dataset", "karate", "--epochs", "3", "--seeds", "0", "0", "1"],
    ["train", "--dataset", "karate", "--epochs", "3", "--seeds", "0", "0", "1", "--batch-seeds"],
    ["train", "--dataset", "karate", "--epochs", "3", "--seeds", "0", "1", "0", "--json"],
    ["sweep", "--dataset", "karate", "--layers", "2", "--samplers", "li", "--epochs", "3",
     "--seeds", "0", "0", "1"],
])
def test_a_repeated_seed_is_refused_before_any_run(capsys, tmp_path, argv):
    """Issue 48: ``train --seeds 0 0 1`` trained seed 0 twice and gave the mean "over 3
    seed(s)"; refused in one line before the graph is loaded or a store opened."""
    store = tmp_path / "s.sqlite"
    code, out, err = run_cli(capsys, *argv, "--store", str(store))
    assert code == 2 and out == ""
    assert err == "error: --seeds repeats seed 0 (given 2 times); each seed is one run: give it once\n"
    assert not store.exists()


def test_search_refuses_a_repeated_best_seed(capsys, tmp_path):
    code, out, err = run_cli(capsys, "search", "--dataset", "karate", "--layers", "2", "--samplers", "li",
                             "--trials", "1", "--best-seeds", "3", "3", "3",
                             "--store", str(tmp_path / "s.sqlite"), "--storage", str(tmp_path / "t.sqlite"))
    assert code == 2 and out == ""
    assert err == "error: --best-seeds repeats seed 3 (given 3 times); each seed is one run: give it once\n"
    assert not (tmp_path / "s.sqlite").exists() and not (tmp_path / "t.sqlite").exists()
