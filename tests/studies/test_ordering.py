"""The ordering claim tested on runs: paired differences over seeds with their t-interval,
Holm's correction over a family, verdicts, the page's sentence. Expected values are worked
out by hand or with scipy here, never with the functions under test."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dropedge_explorer.studies import ordering


def _runs(acc: dict[tuple[str, int], list[float]], dataset: str = "cora") -> pd.DataFrame:
    rows = [{"dataset": dataset, "split": "semi", "backbone": "gcn", "layers": L, "sampler": s, "seed": i,
             "test_acc": v} for (s, L), values in acc.items() for i, v in enumerate(values)]
    return pd.DataFrame(rows)


def _holm_rejects(p: list[float], alpha: float) -> list[bool]:
    """Holm's procedure as the textbook states it: test the sorted p-values against
    alpha / (m - k) and stop at the first that fails."""
    m, reject = len(p), [False] * len(p)
    for k, i in enumerate(sorted(range(m), key=lambda j: p[j])):
        if p[i] >= alpha / (m - k):
            break
        reject[i] = True
    return reject


def test_holm_by_hand_where_the_step_down_stops():
    # sorted: 0.005·4 = 0.02 (reject), 0.01·3 = 0.03 (reject), 0.03·2 = 0.06 (stop), then
    # 0.04·1 = 0.04 would pass on its own but the step-down has stopped: max(0.06, 0.04)
    p = [0.01, 0.04, 0.03, 0.005]
    assert ordering.holm(p) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert list(ordering.holm(p) < 0.05) == [True, False, False, True]
    assert list(ordering.holm(p) < 0.05) == _holm_rejects(p, 0.05)
    # capped at 1; a missing test stays missing and does not count in m (here m = 2)
    assert ordering.holm([0.6, 0.7]) == pytest.approx([1.0, 1.0])
    out = ordering.holm([0.01, float("nan"), 0.04])
    assert out[0] == pytest.approx(0.02) and math.isnan(out[1]) and out[2] == pytest.approx(0.04)
    assert ordering.holm([]).size == 0


def test_holm_agrees_with_the_textbook_procedure_on_random_families():
    rng = np.random.default_rng(0)
    for _ in range(200):
        p = list(rng.uniform(0, 0.08, size=int(rng.integers(1, 9))) ** 1.5)
        for alpha in (0.01, 0.05, 0.1):
            assert list(ordering.holm(p) < alpha) == _holm_rejects(p, alpha)


def test_paired_difference_interval_and_p_by_hand_and_with_scipy():
    # d = 0.05, 0.04, 0.03: mean 0.04, s = 0.01, t(0.975, 2) = 4.303 (a t table), so
    # the interval is 0.04 ± 4.303 · 0.01 / √3 = 0.04 ± 0.02484; t = 0.04 / (0.01 / √3) = 6.928
    a, b = [0.75, 0.76, 0.74], [0.70, 0.72, 0.71]
    test = ordering.paired_difference(a, b)
    assert test.mean == pytest.approx(0.04) and test.std == pytest.approx(0.01) and test.n == 3
    assert test.ci_low == pytest.approx(0.04 - 0.02484, abs=2e-5)
    assert test.ci_high == pytest.approx(0.04 + 0.02484, abs=2e-5)
    assert test.p_value == pytest.approx(2 * stats.t.sf(6.928, 2), rel=1e-3)
    a, b = [0.75, 0.80, 0.78, 0.77, 0.61], [0.70, 0.79, 0.71, 0.74, 0.66]
    test = ordering.paired_difference(a, b)
    ref = stats.ttest_rel(a, b)
    low, high = ref.confidence_interval(0.95)
    assert (test.ci_low, test.ci_high) == pytest.approx((low, high))
    assert test.p_value == pytest.approx(ref.pvalue)
    one = ordering.paired_difference([0.7], [0.6])
    assert one.n == 1 and math.isnan(one.p_value) and math.isnan(one.ci_low)
    same = ordering.paired_difference([0.7, 0.8], [0.6, 0.7])  # a constant difference: no test
    assert math.isnan(same.p_value) and same.ci_low == pytest.approx(0.1) == same.ci_high


def test_verdicts_rest_on_the_holm_corrected_p_of_the_family():
    runs = _runs({("dropedge++", 8): [0.80, 0.81, 0.82, 0.80, 0.81],
                  ("dropedge", 8): [0.75, 0.76, 0.75, 0.74, 0.76],
                  ("nodrop", 8): [0.76, 0.74, 0.75, 0.77, 0.73],
                  ("dropedge++", 16): [0.74, 0.765, 0.75],
                  ("dropedge", 16): [0.72, 0.73, 0.73],
                  ("dropedge++", 64): [0.70, 0.72, 0.71],
                  ("dropedge", 64): [0.71, 0.70, 0.72],
                  ("dropedge++", 32): [0.50, 0.52, 0.49],
                  ("dropedge", 32): [0.60, 0.61, 0.62],
                  ("nodrop", 32): [0.55]})
    table = ordering.compare_samplers(runs).set_index(["layers", "better", "worse"])
    # the family of DropEdge++ vs DropEdge: four depths, p from scipy, Holm by hand
    raw = {L: stats.ttest_rel(runs.query(f"layers == {L} and sampler == 'dropedge++'")["test_acc"],
                              runs.query(f"layers == {L} and sampler == 'dropedge'")["test_acc"]).pvalue
           for L in (8, 16, 32, 64)}
    ranked = sorted(raw, key=raw.get)
    assert ranked[2] == 16  # so its multiplier is 4 - 2 = 2
    want, running = {}, 0.0
    for k, L in enumerate(ranked):
        running = max(running, min(1.0, (4 - k) * raw[L]))
        want[L] = running
    for L in (8, 16, 32, 64):
        row = table.loc[(L, "dropedge++", "dropedge")]
        assert row["p_value"] == pytest.approx(raw[L]) and row["p_holm"] == pytest.approx(want[L])
        assert row["family_size"] == 4
        assert row["family"] == "DropEdge++ vs DropEdge, every depth of cora/semi/GCN (4 tests)"
    # 16 layers: +2.5 points, p < 0.05 uncorrected, but not after Holm over 4 depths
    assert raw[16] < 0.05 and want[16] >= 0.05
    assert table.loc[(16, "dropedge++", "dropedge"), "verdict"] == "not shown"
    assert table.loc[(8, "dropedge++", "dropedge"), "verdict"] == "shown"
    assert table.loc[(32, "dropedge++", "dropedge"), "verdict"] == "reversed"  # the claim contradicted
    # one seed pairs up at 32 layers: no test, not in the family, not shown
    row = table.loc[(32, "dropedge", "nodrop")]
    assert row["n"] == 1 and math.isnan(row["p_holm"]) and row["verdict"] == "not shown"
    assert table.loc[(8, "dropedge", "nodrop"), "family_size"] == 1
    # the interval of a row is scipy's
    low, high = stats.ttest_rel([0.80, 0.81, 0.82, 0.80, 0.81], [0.75, 0.76, 0.75, 0.74, 0.76]
                                ).confidence_interval(0.95)
    assert table.loc[(8, "dropedge++", "dropedge"), ["ci_low", "ci_high"]].tolist() == pytest.approx(
        [low, high])


def test_a_wider_family_corrects_more():
    runs = pd.concat([_runs({("dropedge++", 8): [0.80, 0.83, 0.81], ("dropedge", 8): [0.78, 0.80, 0.80]}, d)
                      for d in ("cora", "citeseer")])
    per_table = ordering.compare_samplers(runs)
    assert (per_table["family_size"] == 1).all()
    assert per_table["p_holm"].tolist() == pytest.approx(per_table["p_value"].tolist())
    pooled = ordering.compare_samplers(runs, family=("better", "worse"))
    assert (pooled["family_size"] == 2).all()
    assert pooled["p_holm"].tolist() == pytest.approx([min(1, 2 * p) for p in per_table["p_value"]])
    assert pooled["family"].iloc[0] == "DropEdge++ vs DropEdge, every table and depth (2 tests)"
    with pytest.raises(ValueError, match="family columns"):
        ordering.compare_samplers(runs, family=("seed",))


def test_leader_sentence_reports_means_then_the_corrected_tests():
    runs = _runs({("dropedge++", 8): [0.8, 0.82, 0.81], ("dropedge", 8): [0.7, 0.71, 0.69],
                  ("nodrop", 8): [0.6, 0.62, 0.6],
                  ("dropedge++", 16): [0.5, 0.55, 0.52], ("dropedge", 16): [0.7, 0.68, 0.72]})
    sentence = ordering.leader_sentence(runs)
    assert sentence.startswith("DropEdge++ has the highest mean test accuracy at L = 8, but not at L = 16.")
    # one family per claim: vs DropEdge at 8 and 16 layers (2 tests), vs NoDrop at 8 (1 test).
    # p from scipy; Holm by hand: vs DropEdge, the smaller p (8 layers) × 2, then the larger × 1
    # (the running max); vs NoDrop, p itself
    p16 = stats.ttest_rel([0.5, 0.55, 0.52], [0.7, 0.68, 0.72]).pvalue
    p8 = [stats.ttest_rel([0.8, 0.82, 0.81], w).pvalue for w in ([0.7, 0.71, 0.69], [0.6, 0.62, 0.6])]
    assert p8[0] < p16
    holm16 = max(2 * p8[0], p16)
    assert 2 * p8[0] < 0.05 and p8[1] < 0.05 and holm16 < 0.05  # so: ahead at 8, behind at 16
    assert "one family per claim, at every depth measured: vs DropEdge 2 tests, vs NoDrop 1 test" in sentence
    assert "DropEdge++ is shown ahead of every other sampler at L = 8" in sentence
    # d = −0.20, −0.13, −0.20: mean −0.17667
    assert "shown behind at L = 16 vs DropEdge -17.7 points" in sentence
    assert f"Holm p = {holm16:.3f}" in sentence
    assert ordering.leader_sentence(runs[runs["layers"] == 8]).startswith(
        "DropEdge++ has the highest mean test accuracy at every depth measured")
    assert "does not lead at any depth" in ordering.leader_sentence(runs[runs["layers"] == 16])
    assert ordering.leader_sentence(runs[runs["sampler"] == "nodrop"]) is None


def test_leader_sentence_says_when_nothing_is_shown_and_names_the_closest():
    runs = _runs({("dropedge++", 8): [0.80, 0.70, 0.75], ("dropedge", 8): [0.72, 0.74, 0.73],
                  ("dropedge++", 16): [0.60, 0.70, 0.66], ("dropedge", 16): [0.64, 0.62, 0.70]})
    sentence = ordering.leader_sentence(runs)
    p = {8: stats.ttest_rel([0.80, 0.70, 0.75], [0.72, 0.74, 0.73]).pvalue,
         16: stats.ttest_rel([0.60, 0.70, 0.66], [0.64, 0.62, 0.70]).pvalue}
    closest = min(p, key=p.get)
    assert "No difference is shown at any depth" in sentence
    assert f"the closest: L = {closest} vs DropEdge" in sentence
    assert f"Holm p = {min(1, 2 * p[closest]):.3f}" in sentence
    one = _runs({("dropedge++", 8): [0.8], ("dropedge", 8): [0.7]})
    assert "No paired test" in ordering.leader_sentence(one)


def test_leader_sentence_names_a_depth_where_the_lead_is_shown_and_where_it_trails():
    base = [0.70, 0.72, 0.71, 0.73, 0.70, 0.72]
    runs = _runs({("dropedge++", 8): [v + 0.10 + 0.002 * i for i, v in enumerate(base)],
                  ("dropedge", 8): base, ("nodrop", 8): [v - 0.05 for v in base],
                  ("dropedge++", 32): [v - 0.10 + 0.002 * i for i, v in enumerate(base)],
                  ("dropedge", 32): base,
                  ("nodrop", 32): [v + 0.003 * (-1) ** i for i, v in enumerate(base)]})
    sentence = ordering.leader_sentence(runs)
    assert "DropEdge++ is shown ahead of every other sampler at L = 8" in sentence
    # by hand: the differences at 32 layers are -0.10 + 0.002 i, mean -0.095
    assert "shown behind at L = 32 vs DropEdge -9.5 points" in sentence
    assert "L = 32 vs NoDrop" in sentence and "Holm p < 0.001" in sentence
