"""Bundled runs re-run from the command line give the bundled numbers (issue 34, item 2):
the fingerprints pin the streams; this pins the whole computation (training, selection,
early stopping) end to end — bit for bit on the machine that trained the rows, within
:data:`tests.helpers.runs.RERUN_ACC_TOLERANCE` on a CPU whose float kernels round otherwise
(:func:`tests.helpers.runs.assert_retrains`).

The default tier re-runs shallow runs (seconds each); the ``deep`` tier re-runs the headline
cell's DropEdge++ runs at 16 and 32 layers (minutes each): ``DROPEDGE_DEEP_RERUNS=1 python -m
pytest -q -m deep tests/cli/test_bundled_reruns.py`` (elsewhere they skip, saying so).
"""
from __future__ import annotations

import json
import os

import pandas as pd
import pytest

from dropedge_explorer.store import ResultStore
from dropedge_explorer.studies import fingerprints
from dropedge_explorer.studies import run_tables as runs
from dropedge_explorer.training import TrainConfig
from tests.helpers.runs import assert_retrains, run_module, streams_to_compare

#: Shallow bundled runs, one per sampler family and both datasets: (file, dataset, split,
#: backbone, sampler, layers, seed, settings).
SHALLOW = [
    ("depth_gcn_semi_cora.csv", "cora", "semi", "gcn", "nodrop", 2, 0, "depth"),
    ("depth_gcn_semi_cora.csv", "cora", "semi", "gcn", "dropedge", 4, 1, "depth"),
    ("depth_gcn_semi_cora.csv", "cora", "semi", "gcn", "dropedge++", 2, 0, "depth"),
    ("depth_gcn_semi_citeseer.csv", "citeseer", "semi", "gcn", "dropedge++", 4, 2, "depth"),
]
DEEP = [
    ("depth_gcn_semi_cora.csv", "cora", "semi", "gcn", "dropedge++", 16, 0, "depth"),
    ("depth_gcn_semi_cora.csv", "cora", "semi", "gcn", "dropedge++", 32, 0, "depth"),
]


def _bundled_row(file: str, dataset, split, backbone, sampler, layers, seed, settings) -> pd.Series:
    df = fingerprints.current(runs.read_runs(runs.BUNDLED_DIR / file))
    hit = df[(df["dataset"] == dataset) & (df["split"] == split) & (df["backbone"] == backbone)
             & (df["sampler"] == sampler) & (df["layers"] == layers) & (df["seed"] == seed)
             & (df["settings"] == settings)]
    assert len(hit) == 1, f"{file}: no current-stream run {dataset} {sampler} L={layers} seed {seed}"
    return hit.iloc[0]


def _cli_args(config: TrainConfig) -> list[str]:
    """The command a user types for ``config`` (its recipe fills every other setting)."""
    return ["train", "--dataset", config.dataset, "--split", config.split, "--backbone", config.backbone,
            "--recipe", config.recipe, "--layers", str(config.num_layers), "--sampler", config.sampler,
            "--seeds", str(config.seed), "--json", "--no-progress"]


def _rerun_and_compare(case, tmp_path) -> None:
    row = _bundled_row(*case)
    config = fingerprints.row_config(row)
    store = tmp_path / "rerun.sqlite"
    proc = run_module(*_cli_args(config), "--store", str(store), timeout=3600)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)["runs"][0]
    where = f"{config.dataset} {config.sampler} L={config.num_layers} seed {config.seed}"
    verdict = assert_retrains(result, row, where)
    for name in streams_to_compare(verdict, result["epochs_run"], int(row["epochs_run"])):
        if isinstance(row.get(name), str) and row[name]:
            assert result["fingerprint"][name] == row[name], f"{where}: {name}"
    stored = runs.store_runs(ResultStore(store))
    assert list(stored["key"]) == [row["key"]]  # the same run: its key, its stream


@pytest.mark.parametrize("case", SHALLOW, ids=lambda c: f"{c[1]}-{c[4]}-L{c[5]}-s{c[6]}")
def test_shallow_bundled_runs_rerun_exactly(case, tmp_path, cora, citeseer):
    _rerun_and_compare(case, tmp_path)


@pytest.mark.deep
@pytest.mark.skipif(os.environ.get("DROPEDGE_DEEP_RERUNS") != "1",
                    reason="deep reruns take minutes each: DROPEDGE_DEEP_RERUNS=1 pytest -m deep")
@pytest.mark.parametrize("case", DEEP, ids=lambda c: f"{c[1]}-{c[4]}-L{c[5]}-s{c[6]}")
def test_deep_bundled_runs_rerun_exactly(case, tmp_path, cora):
    _rerun_and_compare(case, tmp_path)
