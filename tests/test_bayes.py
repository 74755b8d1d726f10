"""Issue 37 §2: chance to beat the control and expected loss (live/readout/bayes.py), labelled
as Bayesian summaries: their formulas, their agreement with a Beta posterior on 0/1 rewards,
and why they are not verdicts (stopping on them errs far more often than α)."""

from __future__ import annotations

import numpy as np
import pytest

from banditkit import Experiment
from banditkit.live.readout.bayes import LABEL, bayesian_summaries
from banditkit.live.readout.sequences import asymptotic_difference


def test_the_summaries_match_their_posterior_by_simulation():
    rng = np.random.default_rng(0)
    x = [rng.normal(1.0, 2.0, 800), rng.normal(1.15, 2.5, 600), rng.normal(0.9, 1.0, 900)]
    n = np.array([v.size for v in x], dtype=float)
    S = np.array([v.sum() for v in x])
    Q = np.array([(v * v).sum() for v in x])
    chance, lose, keep = bayesian_summaries(n, S, Q, 0)
    assert np.isnan([chance[0], lose[0], keep[0]]).all()
    mean, var = S / n, np.array([v.var(ddof=1) for v in x]) / n
    for a in (1, 2):
        draws = rng.normal(mean[a] - mean[0], np.sqrt(var[a] + var[0]), 400_000)
        assert chance[a] == pytest.approx((draws > 0).mean(), abs=3e-3)
        assert lose[a] == pytest.approx(np.maximum(-draws, 0).mean(), rel=1e-2)
        assert keep[a] == pytest.approx(np.maximum(draws, 0).mean(), rel=1e-2)


def test_on_conversions_they_agree_with_beta_posteriors():
    rng = np.random.default_rng(1)
    n, S = np.array([5000.0, 5000.0]), np.array([500.0, 550.0])
    chance, lose, _ = bayesian_summaries(n, S, S, 0)
    pc = rng.beta(1 + S[0], 1 + n[0] - S[0], 400_000)
    pa = rng.beta(1 + S[1], 1 + n[1] - S[1], 400_000)
    assert chance[1] == pytest.approx((pa > pc).mean(), abs=5e-3)
    assert lose[1] == pytest.approx(np.maximum(pc - pa, 0).mean(), rel=0.05)


def test_stopping_on_the_chance_to_beat_the_control_is_not_a_verdict():
    """300 null experiments looked at every 500 units per arm (20 looks): the chance to beat the
    control passes 95% at some look in far more than 5% of runs, while the status verdict (the
    asymptotic sequence on the same sums) stays within its level."""
    rng = np.random.default_rng(2)
    runs, looks, step = 300, 20, 500
    S = np.cumsum(rng.binomial(step, 0.1, size=(runs, looks, 2)), axis=1).astype(float)
    N = np.broadcast_to(step * np.arange(1, looks + 1.0)[None, :, None], S.shape)
    chance, _, _ = bayesian_summaries(N, S, S, 0)
    crossed = (chance[..., 1] > 0.95).any(axis=1).mean()
    low, _ = asymptotic_difference(N, S, S, 0, 0.05, n_tune=5000)
    false = (low[..., 1] > 0).any(axis=1).mean()
    assert crossed > 0.15 and false <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / runs)


def test_the_experiment_frame_is_labelled_and_counts_what_status_counts(tmp_path):
    rng = np.random.default_rng(3)
    with Experiment.create(tmp_path / "b.sqlite", algorithm="FixedAllocation",
                           arms=["control", "new"], seed=0, reward_type="binary",
                           params={"batch_size": 2000}) as exp:
        got = exp.assign(2000)
        new = (got["arm"] == "new").to_numpy()
        exp.record(got["unit"], (rng.random(2000) < np.where(new, 0.2, 0.1)) * 1.0)
        frame = exp.bayesian()
        arms = exp.status().arms
    assert frame.attrs["label"] == LABEL and "not verdicts" in LABEL
    assert frame["counted"].tolist() == arms["counted"].tolist()
    assert frame.loc["new", "chance_to_beat_control"] > 0.999
    assert frame.loc["new", "expected_loss_choosing_arm"] < 1e-4
    assert frame.loc["new", "expected_loss_keeping_control"] == pytest.approx(
        arms.loc["new", "diff"], rel=1e-3)
