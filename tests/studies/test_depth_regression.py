"""Deep models train with the defaults (issue: a 16-layer GCN on Cora sat at chance).

The CLI's defaults (the depth recipe) must train GCN-16 on Cora (semi): DropEdge++ to at
least 70% test accuracy and NoDrop to at least 65% with seed 0 (the paper: 77.3 / 64.9).
About a minute on a 2-core CPU; diagnostics are off (they do not change a run).
"""
from __future__ import annotations

import json

import pytest

from dropedge_explorer import cli


@pytest.mark.parametrize("sampler,floor", [("dropedge++", 0.70), ("nodrop", 0.65)])
def test_gcn16_cora_trains_with_the_cli_defaults(cora, capsys, sampler, floor):
    code = cli.main(["train", "--dataset", "cora", "--split", "semi", "--layers", "16", "--sampler", sampler,
                     "--seeds", "0", "--diag-every", "0", "--json", "--no-progress"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["config"]["recipe"] == "depth" and out["config"]["lr"] == 1e-3
    assert out["test_acc_mean"] >= floor, out["runs"][0]
