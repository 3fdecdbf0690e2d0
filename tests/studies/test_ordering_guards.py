"""studies/ordering.py beyond tests/studies/test_ordering.py (issue 23, mutation follow-up): the
edges of the paired test, the table's shape and columns, the family words, the readable
table, p formatting and the parts of the leader sentence. Expected values are worked out by
hand, with numpy or with scipy, never with the functions under test."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dropedge_explorer.studies import ordering

COLUMNS = ["dataset", "split", "backbone", "layers", "better", "worse", "better_mean", "worse_mean",
           "diff_mean", "diff_std", "n", "ci_low", "ci_high", "p_value", "p_holm", "family",
           "family_size", "verdict"]


def _runs(acc: dict[tuple[str, int], list[float]], dataset: str = "cora", split="semi",
          backbone: str = "gcn") -> pd.DataFrame:
    rows = [{"dataset": dataset, "split": split, "backbone": backbone, "layers": L, "sampler": s, "seed": i,
             "test_acc": v} for (s, L), values in acc.items() for i, v in enumerate(values)]
    return pd.DataFrame(rows)


# ---- paired_difference and holm at their edges -------------------------------------------

def test_paired_difference_of_no_pair_and_of_one_pair():
    none = ordering.paired_difference([], [])
    assert none.n == 0 and all(math.isnan(v) for v in (none.mean, none.std, none.ci_low, none.ci_high,
                                                        none.p_value))
    one = ordering.paired_difference([0.75], [0.5])
    assert one.mean == 0.25 and one.n == 1
    assert all(math.isnan(v) for v in (one.std, one.ci_high, one.p_value))
    same = ordering.paired_difference([0.7, 0.8, 0.9], [0.6, 0.7, 0.8])
    assert same.n == 3 and same.ci_high == pytest.approx(0.1) and same.std < 1e-12
    assert same.mean == pytest.approx(0.1)


def test_paired_difference_at_another_level_and_with_the_sample_std():
    a, b = [0.9, 0.7, 0.8, 0.75], [0.6, 0.65, 0.7, 0.71]
    d = np.subtract(a, b)
    # by hand with numpy: sample std (ddof 1), the 90% t quantile with n - 1 = 3 degrees of freedom
    s = float(np.sqrt(((d - d.mean()) ** 2).sum() / 3))
    half = stats.t.ppf(0.95, 3) * s / 2
    test = ordering.paired_difference(a, b, level=0.9)
    assert test.std == pytest.approx(s) and test.mean == pytest.approx(d.mean()) and test.n == 4
    assert (test.ci_low, test.ci_high) == pytest.approx((d.mean() - half, d.mean() + half))
    t = d.mean() / (s / 2)
    assert test.p_value == pytest.approx(2 * stats.t.sf(abs(t), 3))
    # the default level is 95%
    half95 = stats.t.ppf(0.975, 3) * s / 2
    assert ordering.paired_difference(a, b).ci_low == pytest.approx(d.mean() - half95)


def test_holm_of_one_test_of_no_test_and_of_ties():
    assert ordering.holm([0.03]) == pytest.approx([0.03])
    assert np.isnan(ordering.holm([float("nan"), float("nan")])).all()
    # ties: sorted 0.01, 0.01, 0.2: 3·0.01, max(0.03, 2·0.01), max(0.03, 0.2)
    assert ordering.holm([0.2, 0.01, 0.01]) == pytest.approx([0.2, 0.03, 0.03])
    assert ordering.holm([0.5, 0.4]) == pytest.approx([0.8, 0.8])


# ---- describe_family ----------------------------------------------------------------------

def test_describe_family_words():
    key = {"dataset": "cora", "split": "semi", "backbone": "resgcn", "better": "dropedge", "worse": "nodrop"}
    assert ordering.describe_family(key, 3) == "DropEdge vs NoDrop, every depth of cora/semi/ResGCN (3 tests)"
    words = ordering.describe_family
    assert words({"better": "a", "worse": "b"}, 1) == "a vs b, every table and depth (1 test)"
    assert words({"layers": 8}, 2) == "every pair of samplers, L = 8 (2 tests)"
    assert words({"better": "x"}, 0) == "every pair of samplers, every table and depth (0 tests)"
    nan_split = {"dataset": "karate", "split": float("nan"), "backbone": "mine"}
    assert words(nan_split, 2) == "every pair of samplers, every depth of karate/mine (2 tests)"
    assert words({"split": "full"}, 2) == "every pair of samplers, every depth of full (2 tests)"


# ---- compare_samplers: shape, pairs, means, families ----------------------------------------

def test_compare_samplers_columns_pairs_and_means_over_all_seeds():
    runs = _runs({("dropedge++", 16): [0.80, 0.84, 0.83], ("dropedge", 16): [0.70, 0.72],
                  ("nodrop", 16): [0.60, 0.65, 0.61], ("dropedge++", 8): [0.9, 0.91, 0.95],
                  ("dropedge", 8): [0.8, 0.85, 0.86]})
    runs.loc[len(runs)] = {"dataset": "cora", "split": "semi", "backbone": "gcn", "layers": 16,
                           "sampler": "dropedge", "seed": 2, "test_acc": float("nan")}  # ignored
    table = ordering.compare_samplers(runs)
    assert list(table.columns) == COLUMNS
    # rows by cell (layers sorted), pairs in order: consecutive ones, then the ends
    # (no NoDrop at 8 layers: its pairs are skipped)
    assert list(zip(table["layers"], table["better"], table["worse"])) == [
        (8, "dropedge++", "dropedge"),
        (16, "dropedge++", "dropedge"), (16, "dropedge", "nodrop"), (16, "dropedge++", "nodrop")]
    row = table.iloc[1]  # 16 layers, DropEdge++ vs DropEdge: means over every seed, diff over seeds 0, 1
    assert row["better_mean"] == pytest.approx((0.80 + 0.84 + 0.83) / 3)
    assert row["worse_mean"] == pytest.approx(0.71)
    assert row["diff_mean"] == pytest.approx(0.11) and row["n"] == 2
    assert row["diff_std"] == pytest.approx(np.std([0.10, 0.12], ddof=1))
    ends = table.iloc[3]
    assert ends["diff_mean"] == pytest.approx(np.mean([0.20, 0.19, 0.22])) and ends["n"] == 3
    assert ends["p_value"] == pytest.approx(stats.ttest_rel([0.80, 0.84, 0.83], [0.60, 0.65, 0.61]).pvalue)
    assert table["p_holm"].dtype == np.float64 and table["family_size"].dtype == np.int64
    assert table["dataset"].tolist() == ["cora"] * 4 and table["backbone"].tolist() == ["gcn"] * 4
    assert (table["split"] == "semi").all()


def test_compare_samplers_order_of_two_and_explicit_pairs():
    runs = _runs({("a", 4): [0.5, 0.6, 0.7], ("b", 4): [0.4, 0.45, 0.62], ("c", 4): [0.3, 0.3, 0.31]})
    two = ordering.compare_samplers(runs, order=("a", "b"))
    assert list(zip(two["better"], two["worse"])) == [("a", "b")]
    three = ordering.compare_samplers(runs, order=("c", "b", "a"))
    assert list(zip(three["better"], three["worse"])) == [("c", "b"), ("b", "a"), ("c", "a")]
    chosen = ordering.compare_samplers(runs, pairs=[("c", "a"), ("a", "zzz")])  # an absent one: skipped
    assert list(zip(chosen["better"], chosen["worse"])) == [("c", "a")]
    assert chosen["diff_mean"].iloc[0] == pytest.approx(np.mean([-0.2, -0.3, -0.39]))


def test_duplicate_runs_of_a_seed_are_averaged():
    runs = _runs({("dropedge++", 8): [0.8, 0.9, 0.85], ("dropedge", 8): [0.7, 0.75, 0.72]})
    extra = runs.iloc[[0]].copy()
    extra["test_acc"] = 0.6  # a second run of seed 0: the seed's accuracy is (0.8 + 0.6) / 2
    table = ordering.compare_samplers(pd.concat([runs, extra], ignore_index=True))
    assert table["diff_mean"].iloc[0] == pytest.approx(np.mean([0.0, 0.15, 0.13]))
    assert table["better_mean"].iloc[0] == pytest.approx(np.mean([0.7, 0.9, 0.85]))


def test_a_cell_without_split_is_kept():
    runs = _runs({("dropedge++", 2): [0.8, 0.9, 0.85], ("dropedge", 2): [0.7, 0.75, 0.72]},
                 dataset="karate", split=None)
    table = ordering.compare_samplers(runs)
    assert len(table) == 1 and table["dataset"].iloc[0] == "karate"
    assert table["family"].iloc[0] == "DropEdge++ vs DropEdge, every depth of karate/GCN (1 test)"


def test_nothing_to_compare_gives_the_empty_table_with_its_columns():
    runs = _runs({("dropedge++", 8): [0.8, 0.9]})
    table = ordering.compare_samplers(runs)
    assert table.empty and list(table.columns) == COLUMNS


def test_one_family_for_everything_and_a_family_per_depth():
    runs = _runs({("dropedge++", 8): [0.80, 0.83, 0.81], ("dropedge", 8): [0.78, 0.80, 0.80],
                  ("nodrop", 8): [0.70, 0.74, 0.71],
                  ("dropedge++", 16): [0.70, 0.76, 0.72], ("dropedge", 16): [0.6, 0.63, 0.66]})
    one = ordering.compare_samplers(runs, family=())
    m = int(one["p_value"].notna().sum())
    assert m == 4 and (one["family_size"] == 4).all()
    assert (one["family"] == "every pair of samplers, every table and depth (4 tests)").all()
    p = one["p_value"].to_numpy()
    order = np.argsort(p)
    want = np.empty(4)
    running = 0.0
    for k, i in enumerate(order):  # Holm by hand
        running = max(running, min(1.0, (4 - k) * p[i]))
        want[i] = running
    assert one["p_holm"].to_numpy() == pytest.approx(want)
    per_depth = ordering.compare_samplers(runs, family=("layers",))
    assert per_depth["family_size"].tolist() == [3, 3, 3, 1]
    assert per_depth["family"].tolist() == ["every pair of samplers, L = 8 (3 tests)"] * 3 + [
        "every pair of samplers, L = 16 (1 test)"]
    whole = ordering.compare_samplers(runs, family=ordering.TABLE)
    assert (whole["family"] == "every pair of samplers, every depth of cora/semi/GCN (4 tests)").all()


def test_alpha_sets_the_verdict():
    runs = _runs({("dropedge++", 8): [0.80, 0.70, 0.76], ("dropedge", 8): [0.72, 0.66, 0.73]})
    p = stats.ttest_rel([0.80, 0.70, 0.76], [0.72, 0.66, 0.73]).pvalue
    assert 0.05 < p < 0.5  # so: not shown at 0.05, shown at 0.5
    assert ordering.compare_samplers(runs)["verdict"].tolist() == ["not shown"]
    assert ordering.compare_samplers(runs, alpha=0.5)["verdict"].tolist() == ["shown"]
    flipped = ordering.compare_samplers(runs, alpha=0.5, pairs=[("dropedge", "dropedge++")])
    assert flipped["verdict"].tolist() == ["reversed"]


# ---- readable, format_p, lead_tests ---------------------------------------------------------

def test_readable_by_hand():
    runs = _runs({("dropedge++", 8): [0.75, 0.76, 0.74], ("nodrop", 8): [0.70, 0.72, 0.71],
                  ("dropedge++", 16): [0.6], ("nodrop", 16): [0.5]})
    out = ordering.readable(ordering.compare_samplers(runs, order=("dropedge++", "nodrop")))
    assert list(out.columns) == ["L", "claim", "difference (points)", "95% CI", "seeds", "p", "Holm p",
                                 "verdict", "family"]
    # d = 0.05, 0.04, 0.03 (see test_ordering): 0.04 ± 0.02484, p = 2·sf(6.928, 2) = 0.0202
    p = 2 * stats.t.sf(6.928, 2)
    assert out["L"].tolist() == [8, 16] and out["L"].dtype == np.int64
    assert out["claim"].tolist() == ["DropEdge++ ≥ NoDrop"] * 2
    assert out["difference (points)"].tolist() == ["+4.0", "+10.0"]
    assert out["95% CI"].tolist() == ["+1.5 to +6.5", "–"]
    assert out["seeds"].tolist() == [3, 1] and out["seeds"].dtype == np.int64
    assert out["p"].tolist() == [f"{p:.3f}", "–"] and out["Holm p"].tolist() == [f"{p:.3f}", "–"]
    assert out["verdict"].tolist() == ["shown", "not shown"]
    assert out["family"].tolist() == ["DropEdge++ vs NoDrop, every depth of cora/semi/GCN (1 test)"] * 2
    empty = ordering.readable(ordering.compare_samplers(_runs({("nodrop", 8): [0.5]})))
    assert empty.empty and list(empty.columns) == list(out.columns)
    odd = ordering.readable(ordering.compare_samplers(_runs({("x", 8): [0.5, 0.6], ("y", 8): [0.7, 0.75]}),
                                                      order=("x", "y")))
    assert odd["claim"].tolist() == ["x ≥ y"] and odd["difference (points)"].tolist() == ["-17.5"]


def test_format_p():
    assert ordering.format_p(float("nan")) == "–"
    assert ordering.format_p(0.0009) == "< 0.001"
    assert ordering.format_p(0.001) == "0.001"
    assert ordering.format_p(0.04567) == "0.046"
    assert ordering.format_p(1.0) == "1.000"


def test_lead_tests_pairs_the_lead_with_each_present_other():
    runs = _runs({("dropedge++", 8): [0.8, 0.82, 0.81], ("nodrop", 8): [0.6, 0.62, 0.65],
                  ("dropedge++", 16): [0.7, 0.75, 0.71], ("nodrop", 16): [0.6, 0.6, 0.61],
                  ("other", 8): [0.7, 0.7, 0.7]})
    table = ordering.lead_tests(runs)  # no DropEdge: only vs NoDrop, one family over both depths
    assert list(zip(table["layers"], table["worse"])) == [(8, "nodrop"), (16, "nodrop")]
    assert (table["family_size"] == 2).all()
    p = [stats.ttest_rel([0.8, 0.82, 0.81], [0.6, 0.62, 0.65]).pvalue,
         stats.ttest_rel([0.7, 0.75, 0.71], [0.6, 0.6, 0.61]).pvalue]
    lo, hi = sorted(p)
    want = {lo: 2 * lo, hi: max(2 * lo, hi)}
    assert table["p_holm"].tolist() == pytest.approx([want[v] for v in p])
    mine = ordering.lead_tests(runs, lead="other", others=("nodrop", "dropedge++", "absent"))
    assert list(zip(mine["better"], mine["worse"])) == [("other", "nodrop"), ("other", "dropedge++")]
    assert ordering.lead_tests(runs, lead="absent").empty
    loose = ordering.lead_tests(runs, alpha=0.999)
    strict = ordering.lead_tests(runs, alpha=1e-12)
    assert (loose["verdict"] == "shown").all() and (strict["verdict"] == "not shown").all()


# ---- leader_sentence: its parts ---------------------------------------------------------------

def _pvals(a, b):
    return stats.ttest_rel(a, b).pvalue


def test_leader_sentence_shown_ahead_of_one_sampler_only():
    # at 8 layers: far ahead of NoDrop, level with DropEdge in the test (not shown)
    lead, de, nd = [0.80, 0.70, 0.76], [0.78, 0.74, 0.72], [0.60, 0.55, 0.57]
    runs = _runs({("dropedge++", 8): lead, ("dropedge", 8): de, ("nodrop", 8): nd})
    p_nd = _pvals(lead, nd)
    assert 0.001 < p_nd < 0.05 and _pvals(lead, de) > 0.05
    sentence = ordering.leader_sentence(runs)
    d = np.mean(np.subtract(lead, nd))
    half = stats.t.ppf(0.975, 2) * np.std(np.subtract(lead, nd), ddof=1) / np.sqrt(3)
    detail = (f"L = 8 vs NoDrop {100 * d:+.1f} points, 95% CI {100 * (d - half):+.1f} to "
              f"{100 * (d + half):+.1f}, Holm p = {p_nd:.3f}")
    assert sentence == (
        "DropEdge++ has the highest mean test accuracy at every depth measured (L = 8). "
        f"DropEdge++ is shown ahead at {detail} (Holm-corrected paired t-tests over seeds, α = 0.05; "
        "one family per claim, at every depth measured: vs DropEdge 1 test, vs NoDrop 1 test); "
        "no difference is shown elsewhere.")


def test_leader_sentence_with_one_other_and_a_tie_in_the_means():
    # equal means at 8 layers count as leading (>=); only NoDrop is an other
    runs = _runs({("dropedge++", 8): [0.5, 0.7, 0.6], ("nodrop", 8): [0.6, 0.6, 0.6],
                  ("dropedge", 8): [0.9, 0.9, 0.95],
                  ("dropedge++", 16): [0.8, 0.82, 0.81], ("nodrop", 16): [0.6, 0.63, 0.60],
                  ("nodrop", 32): [0.5, 0.5, 0.6]})  # no lead at 32 layers: not a depth of the sentence
    sentence = ordering.leader_sentence(runs, others=("nodrop",))
    assert sentence.startswith("DropEdge++ has the highest mean test accuracy at every depth measured "
                               "(L = 8, 16).")
    assert "DropEdge++ is shown ahead of every other sampler at L = 16" in sentence
    assert "vs NoDrop 2 tests)" in sentence and "DropEdge" not in sentence.replace("DropEdge++", "")
    # a NaN accuracy is not a run
    runs.loc[len(runs)] = {"dataset": "cora", "split": "semi", "backbone": "gcn", "layers": 8,
                           "sampler": "dropedge++", "seed": 3, "test_acc": float("nan")}
    assert ordering.leader_sentence(runs, others=("nodrop",)) == sentence


def test_leader_sentence_alpha_and_the_depths_where_only_one_other_ran():
    lead8, nd8 = [0.80, 0.82, 0.81], [0.60, 0.64, 0.61]
    runs = _runs({("dropedge++", 8): lead8, ("nodrop", 8): nd8,
                  ("dropedge++", 16): [0.9, 0.92, 0.9], ("dropedge", 16): [0.7, 0.71, 0.7],
                  ("nodrop", 16): [0.5, 0.53, 0.49]})
    # at 8 layers only NoDrop ran: shown ahead of it, but not "of every other sampler"
    sentence = ordering.leader_sentence(runs)
    assert "shown ahead of every other sampler at L = 16;" in sentence
    assert "shown ahead at L = 8 vs NoDrop" in sentence
    strict = ordering.leader_sentence(runs, alpha=1e-9)
    assert "No difference is shown at any depth (Holm-corrected paired t-tests over seeds, α = 1e-09;" \
        in strict
    only_lead = _runs({("dropedge++", 8): [0.5, 0.6]})
    assert ordering.leader_sentence(only_lead) is None
    assert ordering.leader_sentence(runs, lead="absent") is None


def test_leader_sentence_head_when_it_trails_everywhere_and_nothing_is_tested():
    runs = _runs({("dropedge++", 8): [0.5], ("dropedge", 8): [0.6], ("dropedge++", 16): [0.4],
                  ("nodrop", 16): [0.7]})
    assert ordering.leader_sentence(runs) == (
        "DropEdge++ does not lead at any depth measured (L = 8, 16): another sampler has a higher mean "
        "test accuracy. No paired test: fewer than two seeds pair up at every depth.")
    mixed = _runs({("dropedge++", 8): [0.9], ("dropedge", 8): [0.6], ("dropedge++", 16): [0.4],
                   ("nodrop", 16): [0.7], ("dropedge++", 4): [0.3], ("nodrop", 4): [0.2]})
    assert ordering.leader_sentence(mixed).startswith(
        "DropEdge++ has the highest mean test accuracy at L = 4, 8, but not at L = 16. No paired test")


# ---- after the first mutation run: boundaries and words -----------------------------------------

def test_a_std_of_exactly_the_threshold_is_no_test():
    x = 1.414213562373095e-12  # found by numpy: the sample std of (x, 0) is exactly 1e-12
    assert np.std([x, 0.0], ddof=1) == 1e-12
    test = ordering.paired_difference([x, 0.0], [0.0, 0.0])
    assert math.isnan(test.p_value) and test.ci_low == test.ci_high == test.mean


def test_holm_reads_none_as_no_test():
    out = ordering.holm([0.02, None, 0.01])
    assert out[0] == pytest.approx(0.02) and math.isnan(out[1]) and out[2] == pytest.approx(0.02)


def test_verdicts_at_the_edges_of_alpha_and_of_a_zero_difference():
    # two depths, one family: p = 1 at 8 layers (d = -0.125, +0.125: mean exactly 0) and a
    # second test, so Holm caps the larger at 1.0
    runs = _runs({("dropedge++", 8): [0.5, 0.75], ("dropedge", 8): [0.625, 0.625],
                  ("dropedge++", 16): [0.5, 0.7, 0.6], ("dropedge", 16): [0.6, 0.65, 0.4]})
    at_one = ordering.compare_samplers(runs, alpha=1.0)
    assert at_one["diff_mean"].iloc[0] == 0.0 and at_one["p_holm"].iloc[0] == 1.0
    # 16 layers: d = -0.1, 0.05, 0.2, p ≈ 0.63 (scipy), so 2p > 1: capped at 1.0 = α, not rejected
    p16 = stats.ttest_rel([0.5, 0.7, 0.6], [0.6, 0.65, 0.4]).pvalue
    assert 2 * p16 > 1 and at_one["p_holm"].iloc[1] == 1.0 and at_one["diff_mean"].iloc[1] > 0
    assert at_one["verdict"].tolist() == ["not shown", "not shown"]  # p̃ = α does not reject
    everything = ordering.compare_samplers(runs, alpha=2.0)  # rejects every test
    assert everything["verdict"].tolist() == ["not shown", "shown"]  # a zero difference has no sign
    behind = ordering.compare_samplers(runs, pairs=[("dropedge", "dropedge++")])
    assert behind["diff_mean"].iloc[1] < 0 and behind["verdict"].tolist() == ["not shown", "not shown"]


def test_the_family_error_names_what_is_allowed():
    runs = _runs({("dropedge++", 8): [0.5, 0.75], ("dropedge", 8): [0.625, 0.625]})
    allowed = "['dataset', 'split', 'backbone', 'layers', 'better', 'worse']"
    with pytest.raises(ValueError) as err:
        ordering.compare_samplers(runs, family=("seed", "layers"))
    assert str(err.value) == f"family columns must be among {allowed} (got ['seed'])"


def test_describe_family_writes_any_value():
    key = {"dataset": "cora", "split": 1, "backbone": "gcn"}
    assert ordering.describe_family(key, 2) == "every pair of samplers, every depth of cora/1/GCN (2 tests)"


def test_readable_interval_of_a_wide_difference():
    a, b = [0.9, 0.5, 0.8], [0.1, 0.2, 0.3]
    lo, hi = stats.ttest_rel(a, b).confidence_interval(0.95)
    out = ordering.readable(ordering.compare_samplers(_runs({("x", 8): a, ("y", 8): b}), order=("x", "y")))
    assert out["95% CI"].tolist() == [f"{100 * lo:+.1f} to {100 * hi:+.1f}"]
    assert out["95% CI"].tolist() == ["-9.2 to +115.8"]  # 0.5333 ± 4.303 · 0.2517 / √3 (scipy's digits)


def test_leader_sentence_with_names_it_has_no_label_for():
    # lead "mine" behind "theirs" at two depths, ahead of "other" at two depths (not of both)
    runs = _runs({("mine", 8): [0.5, 0.52, 0.55], ("theirs", 8): [0.8, 0.81, 0.86],
                  ("other", 8): [0.3, 0.31, 0.36],
                  ("mine", 16): [0.4, 0.45, 0.41], ("theirs", 16): [0.7, 0.76, 0.72],
                  ("other", 16): [0.2, 0.24, 0.2]})
    sentence = ordering.leader_sentence(runs, lead="mine", others=("theirs", "other"))
    assert sentence.startswith("mine does not lead at any depth measured (L = 8, 16)")
    assert "mine is shown ahead at L = 8 vs other " in sentence and "; L = 16 vs other " in sentence
    assert "shown behind at L = 8 vs theirs " in sentence and "; L = 16 vs theirs " in sentence
    # the families in the order of `others`, not sorted
    assert "at every depth measured: vs theirs 2 tests, vs other 2 tests)" in sentence
