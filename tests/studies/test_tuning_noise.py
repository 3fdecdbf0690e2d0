"""A tuning study's noise: captions read against numbers worked out here by hand, on
cases where each caption must say one thing and on cases where it must say the opposite."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from dropedge_core.studies import tuning, tuning_noise
from dropedge_core.training import TrainConfig, train


def test_a_colour_range_under_two_standard_errors_is_called_noise():
    # best 0.80 on 500 nodes: se = sqrt(0.8 * 0.2 / 500) = 0.017889; span 0.01 = 0.56 se
    se = math.sqrt(0.8 * 0.2 / 500)
    text = tuning_noise.colour_range_caption([0.79, 0.795, 0.80], se)
    assert "79.0% to 80.0%" in text and "1.0 points = 0.6 standard errors" in text
    assert "within noise" in text and "more than noise" not in text


def test_a_colour_range_over_two_standard_errors_is_not_called_noise():
    se = math.sqrt(0.8 * 0.2 / 500)  # span 0.10 = 5.6 se
    text = tuning_noise.colour_range_caption([0.70, 0.75, 0.80], se)
    assert "10.0 points = 5.6 standard errors" in text
    assert "within noise" not in text and "more than noise" in text


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
