"""The ordering claim tested on runs: paired differences over seeds, verdicts, the page's
sentence."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dropedge_core.studies import ordering


def _runs(acc: dict[tuple[str, int], list[float]]) -> pd.DataFrame:
    rows = [{"dataset": "cora", "split": "semi", "backbone": "gcn", "layers": L, "sampler": s, "seed": i,
             "test_acc": v} for (s, L), values in acc.items() for i, v in enumerate(values)]
    return pd.DataFrame(rows)


def test_paired_difference_matches_scipy_and_a_hand_computation():
    a, b = [0.75, 0.80, 0.78, 0.77], [0.70, 0.79, 0.71, 0.74]
    mean, std, p = ordering.paired_difference(a, b)
    d = np.subtract(a, b)
    assert mean == pytest.approx(d.mean()) and std == pytest.approx(d.std(ddof=1))
    t = d.mean() / (d.std(ddof=1) / math.sqrt(len(d)))
    assert p == pytest.approx(2 * stats.t.sf(abs(t), len(d) - 1))
    assert math.isnan(ordering.paired_difference([0.7], [0.6])[2])
    assert math.isnan(ordering.paired_difference([0.7, 0.8], [0.6, 0.7])[2])  # constant difference


def test_verdicts_per_pair_and_depth():
    runs = _runs({("dropedge++", 8): [0.80, 0.81, 0.82, 0.80, 0.81],
                  ("dropedge", 8): [0.75, 0.76, 0.75, 0.74, 0.76],
                  ("nodrop", 8): [0.76, 0.74, 0.75, 0.77, 0.73],
                  ("dropedge++", 32): [0.50, 0.52, 0.49],
                  ("dropedge", 32): [0.60, 0.61, 0.62],
                  ("nodrop", 32): [0.55]})
    table = ordering.compare_samplers(runs).set_index(["layers", "better", "worse"])["verdict"]
    assert table[(8, "dropedge++", "dropedge")] == "higher"
    assert table[(8, "dropedge", "nodrop")] == "no difference shown"
    assert table[(8, "dropedge++", "nodrop")] == "higher"
    assert table[(32, "dropedge++", "dropedge")] == "lower"  # the claim is false there
    assert table[(32, "dropedge", "nodrop")] == "too few seeds"
    # seeds pair up: a run missing for one sampler drops that seed from the pair
    row = ordering.compare_samplers(runs).query("layers == 32 and worse == 'nodrop' and better == 'dropedge'")
    assert int(row["n"].iloc[0]) == 1


def test_leader_sentence():
    runs = _runs({("dropedge++", 8): [0.8], ("dropedge", 8): [0.7], ("nodrop", 8): [0.6],
                  ("dropedge++", 16): [0.5], ("dropedge", 16): [0.7]})
    assert ordering.leader_sentence(runs) == ("DropEdge++ has the highest mean test accuracy at L = 8, but "
                                            "not at L = 16.")
    assert "every depth" in ordering.leader_sentence(runs[runs["layers"] == 8])
    assert "does not lead at any depth" in ordering.leader_sentence(runs[runs["layers"] == 16])
    assert ordering.leader_sentence(runs[runs["sampler"] == "nodrop"]) is None
