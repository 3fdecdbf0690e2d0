"""A tuning study's noise: captions read against numbers worked out here by hand, on
cases where each caption must say one thing and on cases where it must say the opposite."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from dropedge_explorer.studies import tuning, tuning_noise
from dropedge_explorer.training import TrainConfig, train


def _wilson(p: float, n: int) -> float:
    """The one-sigma Wilson half-width, written out here (not the function under test)."""
    return math.sqrt(p * (1 - p) / n + 1 / (4 * n * n)) / (1 + 1 / n)


def test_the_standard_error_of_an_accuracy_is_never_zero():
    # 100 % on 8 nodes: sqrt(0 + 1/256) / (9/8) = (1/16) (8/9) = 1/18
    assert tuning_noise.accuracy_se(1.0, 8) == pytest.approx(1 / 18)
    assert tuning_noise.accuracy_se(0.0, 8) == pytest.approx(1 / 18)
    # 0.8 on 500 nodes: about the binomial sqrt(0.8 * 0.2 / 500) = 0.017889
    assert tuning_noise.accuracy_se(0.8, 500) == pytest.approx(0.0178807, abs=1e-6)
    assert tuning_noise.accuracy_se(0.8, 500) == pytest.approx(math.sqrt(0.16 / 500), rel=0.003)
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match=f"n must be a positive integer \\(got {bad!r}\\)"):
            tuning_noise.accuracy_se(0.5, bad)
    with pytest.raises(ValueError, match="p must be an accuracy in \\[0, 1\\] \\(got 1.5\\)"):
        tuning_noise.accuracy_se(1.5, 8)


def test_a_colour_range_under_two_standard_errors_is_called_noise():
    # 0.79 .. 0.80 on 500 nodes: se of the difference = hypot(se(0.80), se(0.79)) = 0.02552;
    # the span 0.01 is 0.39 of them
    se = math.hypot(_wilson(0.80, 500), _wilson(0.79, 500))
    assert se == pytest.approx(0.025518, abs=1e-5)
    text = tuning_noise.colour_range_caption([0.79, 0.795, 0.80], 500)
    assert "79.0% to 80.0%" in text and "1.0 points = 0.4 standard errors" in text and "(2.6%" in text
    assert "within noise" in text and "more than noise" not in text


def test_a_colour_range_over_two_standard_errors_is_not_called_noise():
    se = math.hypot(_wilson(0.80, 500), _wilson(0.70, 500))  # 0.02719: the span 0.10 = 3.7 se
    text = tuning_noise.colour_range_caption([0.70, 0.75, 0.80], 500)
    assert f"10.0 points = {0.10 / se:.1f} standard errors" in text and "3.7 standard errors" in text
    assert "within noise" not in text and "more than noise" in text


def test_a_perfect_score_on_a_tiny_split_is_not_infinitely_precise():
    # the page's case: 100 % and 87.5 % on karate's 8 validation nodes (one node apart). The
    # plain binomial error of 100 % is 0 and the caption read "12.5 points = inf standard errors";
    # Wilson: se(1) = 1/18, se(7/8) = sqrt(7/512 + 1/256) / (9/8) = 0.117851, of the difference
    # 0.130289: the span is 0.96 of them, within noise
    se = math.hypot(1 / 18, math.sqrt(7 / 512 + 1 / 256) * 8 / 9)
    assert se == pytest.approx(0.130289, abs=1e-6)
    values = [1.0, 0.875, 0.875]
    text = tuning_noise.colour_range_caption(values, 8)
    assert "inf" not in text and f"12.5 points = {0.125 / se:.1f} standard errors" in text
    assert "within noise" in text and "more than noise" not in text
    warning = tuning_noise.tiny_validation_line(8, values)
    assert "one node is 12.5%" in warning and "mostly chance" in warning and "12.5 points" in warning
    # the best trial's own standard error is the same floor
    assert tuning.best_uncertainty(1.0, 8, 2, values)["se"] == pytest.approx(1 / 18)


def test_the_tiny_split_warning_and_the_caption_give_one_verdict():
    # 8 nodes, 1.0 against 0.25: se of the difference hypot(1/18, se(0.25)) with
    # se(0.25) = sqrt(0.1875/8 + 1/256) / (9/8) = 0.146986 -> 0.157135; 0.75 / it = 4.77
    se = math.hypot(1 / 18, math.sqrt(0.1875 / 8 + 1 / 256) * 8 / 9)
    assert 0.75 / se == pytest.approx(4.7730, abs=1e-3)
    for values, noise in (([1.0, 0.25, 0.5], False), ([1.0, 0.875], True), ([0.5, 0.375, 0.25], True)):
        caption = tuning_noise.colour_range_caption(values, 8)
        warning = tuning_noise.tiny_validation_line(8, values)
        assert ("within noise" in caption) == noise == ("mostly chance" in warning), (values, caption)
        assert ("more than noise" in caption) == (not noise) == ("more than noise" in warning)
    assert "4.8 standard errors" in tuning_noise.tiny_validation_line(8, [1.0, 0.25])


def _summary(means, stds, n=3) -> pd.DataFrame:
    runs = pd.DataFrame([{"point": p, "seed": s, "val_acc": m + d * sd}
                         for p, m, sd in zip(("best", "start"), means, stds)
                         for s, d in zip(range(n), (-1.0, 0.0, 1.0))])
    return tuning_noise.spread_summary(runs)


def test_the_spread_caption_says_within_noise_when_the_gap_is_small():
    # values m-1, m, m+1 (x sd): std = sd exactly; se of the gap = sqrt(2 sd^2 / 3)
    s = _summary((0.80, 0.79), (0.02, 0.02))
    assert s.loc["best", "std"] == pytest.approx(0.02) and s.loc["start", "mean"] == pytest.approx(0.79)
    gap_se = math.sqrt(2 * 0.02 ** 2 / 3)  # 0.01633: the gap 0.01 is 0.61 of them
    assert tuning_noise.spread_verdict(s)["se"] == pytest.approx(gap_se)
    text = tuning_noise.spread_caption(s)
    assert "80.0% ± 2.0%" in text and "79.0% ± 2.0%" in text and "3 other seeds" in text
    assert "+1.0%, is within the seed-to-seed noise" in text and f"= {2 * gap_se:.1%}" in text


def test_the_spread_caption_says_exceeds_when_the_gap_is_large():
    s = _summary((0.80, 0.70), (0.01, 0.01))
    text = tuning_noise.spread_caption(s)
    assert "+10.0%, exceeds the seed-to-seed noise" in text and "within" not in text


def test_the_best_being_the_start_is_said_only_when_it_is():
    assert "The best trial is the starting point" in tuning_noise.start_point_line(0, 0)
    other = tuning_noise.start_point_line(4, 0)
    assert "starting point" not in other and "a place to start from, not a result" in other


def test_seed_spread_trains_each_point_on_each_seed(karate, tmp_path):
    base = TrainConfig(dataset="karate", num_layers=2, hidden=16, epochs=15, diag_every=0, device="cpu")
    study = tuning.tune(base, 3, "noise", f"sqlite:///{tmp_path / 's.sqlite'}", search="random", seed=0,
                        graph=karate, pruner=False, include_base=True)
    start = tuning_noise.start_trial(study)
    assert start.number == 0 and start.params["p_min"] == pytest.approx(base.p_min)
    last = study.trials[-1]
    runs = tuning_noise.seed_spread(base, {"best": tuning_noise.trial_values(last)}, (5, 6), karate)
    assert list(runs["seed"]) == [5, 6] and list(runs["point"]) == ["best", "best"]
    # the trial's keep rates and the seed reached the run: the same run trained directly
    direct = train(base.replace(p_min=last.params["p_min"], p_max=last.user_attrs["p_max"], seed=6),
                   graph=karate)
    assert runs.loc[1, "val_acc"] == direct.best_val_acc and runs.loc[1, "test_acc"] == direct.test_acc
