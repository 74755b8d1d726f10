"""Live verdicts (issue 23 §2-4): the confidence sequences of banditkit.live.readout.sequences
against brute force and a second implementation (ville), their coverage under adaptive allocation,
reward types declared at create, FixedAllocation, the control floor and the planner."""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from banditkit import Experiment, ExperimentError
from banditkit.live.problem import LiveArms
from banditkit.live.readout.anytime import confidence_sequence
from banditkit.live.readout.plan import plan
from banditkit.live.readout.plugin import plugin_level, plugin_terms
from banditkit.live.readout.sequences import (
    asymptotic_difference,
    asymptotic_mean,
    asymptotic_rho2,
    bernstein_sequence,
    difference_sequence,
    log_e_value,
    mixture,
    msprt_difference,
    psi_e,
    psi_scaled,
)
from banditkit.live.readout.statistics import compare
from banditkit.live.readout.sums import ArmSums
from banditkit.live.readout.verdict_spec import check_verdicts
from banditkit.registry import make_policy
from banditkit.rng import stream
from live_support import thompson_looks

_spec = importlib.util.spec_from_file_location(
    "bench_verdicts", Path(__file__).resolve().parents[1] / "benchmarks" / "bench_verdicts.py")
bench = importlib.util.module_from_spec(_spec)
sys.modules["bench_verdicts"] = bench
_spec.loader.exec_module(bench)


# -- the mathematics ---------------------------------------------------------------------------
@pytest.mark.parametrize("mu", [0.02, 0.3, 0.5, 0.9])
@pytest.mark.parametrize("lam", [0.01, 0.2, 0.5, 0.9])
def test_each_factor_has_mean_at_most_one_for_bernoulli_and_beta_values(mu, lam):
    # Fan et al.'s inequality behind every sequence: E exp(lam(X - mu) - psi_E(lam)(X - mu)^2)
    # <= 1 for xi = X - mu >= -1 (X in [0, 1] with mean mu), Bernoulli and Beta values
    x = np.array([0.0, 1.0])
    bern = ((1 - mu) * np.exp(lam * (x[0] - mu) - psi_e(lam) * (x[0] - mu) ** 2)
            + mu * np.exp(lam * (x[1] - mu) - psi_e(lam) * (x[1] - mu) ** 2))
    assert bern <= 1 + 1e-12
    from scipy import integrate, stats
    beta = stats.beta(mu * 4, (1 - mu) * 4)
    value = integrate.quad(lambda y: beta.pdf(y) * np.exp(lam * (y - mu) - psi_e(lam)
                                                          * (y - mu) ** 2), 0, 1)[0]
    assert value <= 1 + 1e-9


@pytest.mark.parametrize("lam", [1e-4, 0.01, 0.2, 0.5, 0.9])
@pytest.mark.parametrize("b", [0.0, 1e-6, 0.009, 0.011, 0.1, 0.5, 0.9, 1.0])
def test_the_scaled_inequality_holds_on_a_grid_and_is_tight_at_the_bound(lam, b):
    # exp(lam z - psi_E(lam b)/b^2 z^2) <= 1 + lam z for every z >= -b (Fan et al.'s inequality
    # for xi = z/b at lam' = lam b), on a grid of z in [-b, 1]; at z = -b it is an equality,
    # so no smaller penalty (a smaller b) would do
    psi = psi_scaled(lam, b)
    z = np.concatenate([np.linspace(-b, 1.0, 4001), [-b, -b * (1 - 1e-9), 0.0]])
    assert np.all(lam * z - psi * z * z <= np.log1p(lam * z) + 1e-12)
    if b > 0:
        x = lam * b  # psi_E(x) = sum_{k>=2} x^k / k (the closed form cancels for small x)
        exact = (sum(x ** k / k for k in range(2, 80)) if x < 0.5
                 else -math.log1p(-x) - x)
        assert psi * b * b == pytest.approx(exact, rel=1e-9, abs=1e-300)
        # at z = -b: lam z - psi z^2 <= log(1 + lam z) iff psi b^2 >= psi_E(lam b)
        # (resolvable in floating point where lam b >= 1e-6)
        if x >= 1e-6:
            assert psi_scaled(lam, 0.9 * b) * b * b < exact
    assert psi_scaled(lam, b) <= psi_e(lam) * (1 + 1e-9)  # never above the unscaled penalty
    assert psi_scaled(lam, 0.0) == pytest.approx(lam * lam / 2)


@pytest.mark.parametrize("mu", [0.003, 0.1, 0.5, 0.97])
@pytest.mark.parametrize("lam", [0.05, 0.3, 0.5])
def test_each_scaled_factor_has_mean_at_most_one_on_both_ends(mu, lam):
    # the one-arm sequence's factors: lower end X - mu >= -mu (b = mu), upper end
    # mu - X >= -(1 - mu) (b = 1 - mu); Bernoulli values (the extreme case) and Beta values
    from scipy import integrate, stats
    beta = stats.beta(mu * 4, (1 - mu) * 4)
    for sign, b in ((1.0, mu), (-1.0, 1.0 - mu)):
        psi = psi_scaled(lam, b)
        bern = ((1 - mu) * math.exp(sign * lam * -mu - psi * mu ** 2)
                + mu * math.exp(sign * lam * (1 - mu) - psi * (1 - mu) ** 2))
        assert bern <= 1 + 1e-12
        value = integrate.quad(lambda y, s=sign, p=psi: beta.pdf(y) * math.exp(
            s * lam * (y - mu) - p * (y - mu) ** 2), 0, 1, points=[mu], limit=200)[0]
        assert value <= 1 + 1e-7
    # the wrong side's bound is not enough: for a low rate, the upper end's increments
    # mu - X reach -(1 - mu), and the lower end's penalty (b = mu) fails for them
    if mu < 0.5:
        psi = psi_scaled(lam, mu)
        bern = ((1 - mu) * math.exp(lam * mu - psi * mu ** 2)
                + mu * math.exp(-lam * (1 - mu) - psi * (1 - mu) ** 2))
        assert bern > 1 + 1e-9


def test_the_running_sums_give_the_product_of_the_per_reward_factors():
    # the supermartingale from (n, S, Q) equals the product over rewards taken one by one
    rng = np.random.default_rng(3)
    x = rng.beta(2, 5, 300)
    mix = mixture(1000, 0.05)
    mu = 0.31
    brute = np.log(np.sum(np.exp(mix.log_w) * np.prod(
        np.exp(mix.lam[:, None] * (x - mu) - mix.psi[:, None] * (x - mu) ** 2), axis=1)))
    S, Q, n = x.sum(), (x * x).sum(), x.size
    assert log_e_value(S - n * mu, Q - 2 * mu * S + n * mu * mu, mix) == pytest.approx(brute)


def test_the_difference_sums_are_the_signed_per_reward_process():
    # Z_i = +(R - mu_a) for the treatment, -(R - mu_c) for the control, in any interleaving
    rng = np.random.default_rng(4)
    a, c = rng.random(200) < 0.3, rng.random(150) < 0.2
    mu_a, mu_c = 0.27, 0.22
    z = np.concatenate([a - mu_a, -(c - mu_c)])
    mix = mixture(500, 0.05)
    brute = np.log(np.sum(np.exp(mix.log_w + mix.lam * z.sum() - mix.psi * (z * z).sum())))
    n = np.array([150.0, 200.0])
    S = np.array([c.sum(), a.sum()], dtype=float)
    # at control_low = control_high = mu_c the nuisance is pinned: the lower end is where
    # the log e-value of Delta crosses log(2/alpha); check the process at Delta = mu_a - mu_c
    s = (S[1] - n[1] * mu_a) - (S[0] - n[0] * mu_c)
    v = (S[1] - 2 * mu_a * S[1] + n[1] * mu_a ** 2) + (S[0] - 2 * mu_c * S[0]
                                                       + n[0] * mu_c ** 2)
    assert log_e_value(s, v, mix) == pytest.approx(brute)


def _log_mix(mix, s, psi, v):
    """log sum_j w_j exp(lam_j s - psi_j v), by brute force."""
    return np.log(np.sum(np.exp(mix.log_w + mix.lam * s - psi * v)))


@pytest.mark.parametrize("n, S, Q", [(2000.0, 300.0, 300.0), (5000.0, 500.0, 80.0)])
def test_the_ends_are_where_the_e_value_reaches_one_over_alpha(n, S, Q):
    # each end tested with its own bound: b = mu below, 1 - mu above
    low, high = bernstein_sequence(n, S, Q, 0.05, n_tune=1000)
    mix = mixture(1000 * 0.25, 0.025)
    for mu, side, b in ((low, 1.0, low), (high, -1.0, 1 - high)):
        e = _log_mix(mix, side * (S - n * mu), psi_scaled(mix.lam, b),
                     Q - 2 * mu * S + n * mu * mu)
        assert e == pytest.approx(math.log(40), abs=1e-6)
        # and every candidate beyond the end is rejected, every one inside kept (half-lines)
        for step in (1e-4, 1e-2, 0.1):
            out = mu - side * step
            if 0 <= out <= 1:
                assert _log_mix(mix, side * (S - n * out), psi_scaled(mix.lam, out if side > 0
                                                                       else 1 - out),
                                Q - 2 * out * S + n * out * out) >= math.log(40)
            inside = mu + side * step * (high - low)
            assert _log_mix(mix, side * (S - n * inside), psi_scaled(
                mix.lam, inside if side > 0 else 1 - inside),
                Q - 2 * inside * S + n * inside * inside) < math.log(40)


@pytest.mark.parametrize("n_c, Q", [(5000.0, None), (3000.0, (40.0, 80.0))])
def test_the_difference_ends_use_the_control_interval_ends_for_the_nuisance(n_c, Q):
    # each arm's rewards with their own bound over m in [cl, ch]: lower end b_a = ch + delta,
    # b_c = 1 - cl; upper end b_a = 1 - cl - delta, b_c = ch; each term's minimum over the
    # two ends of the control's interval
    n = np.array([n_c, 5000.0])
    S = np.array([0.1 * n_c, 600.0])
    Q = S.copy() if Q is None else np.array(Q)
    cl, ch = 0.09, 0.11
    low, high = difference_sequence(n, S, Q, 0, cl, ch, 0.05)
    mix = mixture(2 * 10_000 * 0.25, 0.025)

    def log_e(delta, m, sign):
        mu = m + delta
        s = sign * ((S[1] - n[1] * mu) - (S[0] - n[0] * m))
        va = Q[1] - 2 * mu * S[1] + n[1] * mu * mu
        vc = Q[0] - 2 * m * S[0] + n[0] * m * m
        b_a, b_c = (ch + delta, 1 - cl) if sign > 0 else (1 - cl - delta, ch)
        return (mix.log_w + mix.lam * s - psi_scaled(mix.lam, b_a) * va
                - psi_scaled(mix.lam, b_c) * vc)

    def log_mix(delta, sign):
        terms = np.minimum(log_e(delta, cl, sign), log_e(delta, ch, sign))
        return np.log(np.exp(terms).sum())

    for delta, sign in ((low[1], 1.0), (high[1], -1.0)):
        assert log_mix(delta, sign) == pytest.approx(math.log(40), abs=1e-6)
        for step in (1e-4, 1e-2, 0.1):  # rejected outside, kept inside: half-lines
            assert log_mix(delta - sign * step, sign) >= math.log(40)
            assert log_mix(delta + sign * step * (high[1] - low[1]), sign) < math.log(40)
    assert np.isnan(low[0]) and np.isnan(high[0])


def test_the_direct_difference_is_narrower_than_subtracting_two_arm_intervals():
    n = np.array([15_000.0, 15_000.0])
    S = np.array([1500.0, 1650.0])
    al, ah = confidence_sequence(S, n, 0.025)
    cl, ch = confidence_sequence(S[0], n[0], 0.005)
    dl, dh = difference_sequence(n, S, S, 0, cl, ch, 0.045)
    subtracted = (ah[1] - al[0]) - (al[1] - ah[0])
    fixed = 2 * 1.959964 * math.sqrt(0.1 * 0.9 / 15_000 + 0.11 * 0.89 / 15_000)
    assert dh[1] - dl[1] < 0.7 * subtracted
    assert dh[1] - dl[1] < 1.7 * fixed


# -- a second implementation (ville, Waudby-Smith et al. / Johari et al.) ----------------------
def test_the_asymptotic_sequence_matches_ville_with_the_same_rho():
    ville = pytest.importorskip("ville")
    rng = np.random.default_rng(5)
    x = rng.lognormal(0, 1, 3000)
    cs = ville.AsymptoticCS(alpha=0.05, t_opt=2000, min_samples=2)
    cs.rho_ = 1.0 / asymptotic_rho2(2000, 0.05)  # ville's rho: the precision in t units
    cs.fit(x)
    low, high = asymptotic_mean(x.size, x.sum(), (x * x).sum(), 0.05, n_tune=2000)
    assert (low, high) == pytest.approx(cs.interval(), rel=1e-9)


def test_the_msprt_sequence_ends_where_villes_msprt_reaches_one_over_alpha():
    ville = pytest.importorskip("ville")
    rng = np.random.default_rng(6)
    x = rng.normal(0.3, 1.0, 4000)
    n = np.array([4000.0, 4000.0])
    # a control with zero variance at 0: the difference's variance is the treatment's alone
    S = np.array([0.0, x.sum()])
    Q = np.array([0.0, (x * x).sum()])
    low, high = msprt_difference(n, S, Q, 0, 0.05, tau=0.1)
    sd = float(np.std(x, ddof=1))
    for end in (low[1], high[1]):
        test = ville.MSPRT(theta0=end, sigma=sd, tau=0.1, alpha=0.05).fit(x)
        assert test.log_e_values_[-1] == pytest.approx(math.log(20), abs=1e-6)


def test_the_exact_sequence_is_no_wider_than_villes_empirical_bernstein_at_scale():
    ville = pytest.importorskip("ville")
    rng = np.random.default_rng(7)
    x = rng.beta(1, 9, 20_000)
    cs = ville.EmpiricalBernsteinCS(alpha=0.05, intersect=False).fit(x)
    lo, hi = cs.interval()
    low, high = bernstein_sequence(x.size, x.sum(), (x * x).sum(), 0.05)
    assert low <= x.mean() <= high and lo <= x.mean() <= hi
    assert (high - low) < 1.1 * (hi - lo)


# -- coverage under adaptive allocation -------------------------------------------------------
def test_the_difference_sequences_cover_under_batched_thompson():
    # BatchedThompson without a floor starves the worse arms; every look (batch end) of every
    # run: does an exact difference interval ever miss the truth? At most alpha (it is
    # conservative; the bound is checked at 2*alpha to stay within Monte-Carlo error)
    means = np.array([0.30, 0.25, 0.45])
    runs = 100
    N, T, run_of = thompson_looks(means, runs, 11, "cover", horizon=4000, draws=500)
    c = compare(ArmSums(N, N, T, T, np.ones(N.shape, bool)), (0.0, 1.0), intervals="anytime",
                alpha=0.05, control=0)
    truth = means - means[0]
    miss = ((c.diff_low[:, 1:] > truth[1:]) | (c.diff_high[:, 1:] < truth[1:])).any(axis=1)
    per_run = np.bincount(np.array(run_of), weights=miss, minlength=runs) > 0
    assert per_run.mean() <= 0.10
    # and the sequences are not vacuous: the best arm, which starves the control, is called
    # better than it in some runs (18% of these, the control starved to a few hundred units)
    better = (c.verdict[:, 2] == "better")
    assert np.bincount(np.array(run_of), weights=better, minlength=runs).astype(bool).mean() \
        > 0.1


@pytest.mark.parametrize("reward", ["bernoulli", "beta"])
def test_the_scaled_sequences_cover_near_the_range_ends_under_batched_thompson(reward):
    # means near 0 and 1, where the scaled penalties are smallest (b = mu or 1 - mu): the
    # control at 0.03 (its lower-end increments pay almost lam^2/2), an arm at 0.97. Every
    # look of every run: does an arm's or a difference's interval ever miss the truth?
    means = np.array([0.03, 0.01, 0.97])
    runs, K = 100, 3
    looks, truth_runs = [], []
    for r in range(runs):
        noise = stream(13, "cover-ends", r)
        policy = make_policy("BatchedThompson", LiveArms(K, None, None),
                             stream(13, "cover-ends-xi", r), horizon=3000, batch_size=150,
                             draws=200, control_floor=0.1)
        n, S, Q = np.zeros(K), np.zeros(K), np.zeros(K)
        P = np.zeros((K, 4))  # the plug-in's sums, each arm's rewards in order
        while (batch := policy.next_batch()) is not None:
            pulls = np.bincount(batch.arms, weights=batch.counts, minlength=K).astype(int)
            got = np.zeros(K)
            for k in range(K):
                if reward == "bernoulli":
                    x = (noise.random(pulls[k]) < means[k]).astype(float)
                else:  # Beta(2 mu, 2(1 - mu)): most of the mass at the near end, a long tail
                    x = noise.beta(2 * means[k], 2 * (1 - means[k]), pulls[k])
                got[k] = x.sum()
                if x.size:
                    P[k] += np.stack(plugin_terms(x, n_tune=1000, level=plugin_level(K),
                                                  prior=(n[k], S[k], Q[k])), -1).sum(0)
                n[k], S[k], Q[k] = n[k] + x.size, S[k] + x.sum(), Q[k] + (x * x).sum()
            policy.observe(batch, got[batch.arms])
            looks.append((n.copy(), S.copy(), Q.copy(), P.copy()))
            truth_runs.append(r)
    N, T, U, PS = (np.array([x[i] for x in looks]) for i in range(4))
    truth = means - means[0]
    spec = check_verdicts("binary" if reward == "bernoulli" else "bounded", (0.0, 1.0),
                          {"tune_n": 1000}, None)
    # the plug-in (the exact default, with its sums) and the mixture (without them)
    for plugin in (PS, None):
        c = compare(ArmSums(N, N, T, U, np.full(N.shape, reward == "bernoulli"), plugin=plugin),
                    (0.0, 1.0), intervals="anytime", alpha=0.05, control=0, spec=spec)
        miss = ((c.diff_low[:, 1:] > truth[1:]) | (c.diff_high[:, 1:] < truth[1:])).any(axis=1)
        miss |= ((c.low > means) | (c.high < means)).any(axis=1)
        per_run = np.bincount(np.array(truth_runs), weights=miss, minlength=runs) > 0
        assert per_run.mean() <= 0.10
        # not vacuous: the 0.97 arm is called better than the control in every run by the end
        assert (c.verdict[:, 2] == "better").sum() >= runs


# -- through Experiment ------------------------------------------------------------------------
def _ab(tmp_path, name, means, per_look, looks, seed=0, **create):
    rng = np.random.default_rng(seed)
    with Experiment.create(tmp_path / name, algorithm="FixedAllocation",
                           arms=["control", "treatment"], seed=seed,
                           params={"batch_size": per_look}, **create) as exp:
        for _ in range(looks):
            got = exp.assign(per_look)
            arm = (got["arm"] == "treatment").to_numpy()
            exp.record(got["unit"], (rng.random(arm.size) < np.where(arm, means[1], means[0]))
                       .astype(float))
        return exp.status(), exp.units()


def test_fixed_allocation_splits_each_batch_exactly_and_reaches_a_verdict(tmp_path):
    state, units = _ab(tmp_path, "ab.sqlite", (0.10, 0.20), 400, 10, reward_type="binary")
    assert state.arms["assigned"].tolist() == [2000, 2000]
    assert state.arms.loc["treatment", "verdict"] == "better"
    assert state.verdicts == {"reward_type": "binary", "reward_range": [0.0, 1.0],
                              "sequence": "exact", "tune_n": 10_000.0, "tau": None,
                              "control_share": 0.05, "alternative": "two-sided",
                              "margin": None, "winsorize": None, "cuped": False,
                              "ratio": False}
    assert "exact plug-in empirical-Bernstein" in str(state)
    np.testing.assert_allclose(units["propensity"], 0.5)


def test_fixed_allocation_takes_weights_and_refuses_wrong_ones(tmp_path):
    with Experiment.create(tmp_path / "w.sqlite", algorithm="FixedAllocation",
                           arms=["a", "b", "c"], seed=0,
                           params={"weights": [2, 1, 1], "batch_size": 100}) as exp:
        assert exp.assign(100)["arm"].value_counts().to_dict() == {"a": 50, "b": 25, "c": 25}
    with pytest.raises(ExperimentError, match="weights must be 3 non-negative numbers"):
        Experiment.create(tmp_path / "x.sqlite", algorithm="FixedAllocation",
                          arms=["a", "b", "c"], seed=0, params={"weights": [1, 1]})
    assert not (tmp_path / "x.sqlite").exists()


@pytest.mark.parametrize("kwargs, match", [
    ({"reward_type": "bounded", "reward_range": (1.0, 1.0)}, "reward_range must be two"),
    ({"reward_type": "bounded"}, "reward_range is required"),
    ({"reward_type": "binary", "reward_range": (0, 5)}, "reward_type='binary'"),
    ({"reward_type": "ordinal"}, "reward_type must be one of"),
    ({"reward_type": "continuous", "reward_range": (0, 1)}, "unbounded"),
    ({"reward_type": "continuous", "verdicts": {"sequence": "exact"}}, "needs bounded"),
    ({"verdicts": {"sequence": "msprt"}}, r"verdicts\['tau'\]"),
    ({"verdicts": {"tau": 0.1}}, "only with sequence='msprt'"),
    ({"verdicts": {"control_share": 1.0}}, r"verdicts\['control_share'\]"),
    ({"verdicts": {"tune_n": 0}}, r"verdicts\['tune_n'\]"),
    ({"verdicts": {"alpha": 0.1}}, "unknown key"),
    ({"reward_type": "binary", "verdicts": {"margin": 1.5}}, r"verdicts\['margin'\]"),
    ({"reward_type": "binary", "verdicts": {"margin": -0.1}}, r"verdicts\['margin'\]"),
    ({"verdicts": {"alternative": "less"}}, r"verdicts\['alternative'\]"),
    ({"reward_type": "continuous", "verdicts": {"alternative": "greater"}},
     "needs sequence='exact'"),
])
def test_create_refuses_what_cannot_be_true_and_writes_nothing(tmp_path, kwargs, match):
    with pytest.raises(ExperimentError, match=match):
        Experiment.create(tmp_path / "r.sqlite", algorithm="FixedAllocation", arms=["a", "b"],
                          seed=0, **kwargs)
    assert not (tmp_path / "r.sqlite").exists()


def test_record_refuses_rewards_outside_the_declared_type_and_records_nothing(tmp_path):
    with Experiment.create(tmp_path / "b.sqlite", algorithm="FixedAllocation", arms=["a", "b"],
                           seed=0, reward_type="binary") as exp:
        got = exp.assign(4)
        with pytest.raises(ExperimentError, match="must be 0 or 1"):
            exp.record(got["unit"], [1, 0, 0.5, 1])
        assert exp.units()["reward"].isna().all()
    with Experiment.create(tmp_path / "c.sqlite", algorithm="FixedAllocation", arms=["a", "b"],
                           seed=0, reward_type="bounded", reward_range=(0, 10)) as exp:
        got = exp.assign(2)
        with pytest.raises(ExperimentError, match=r"must lie in \[0, 10\]"):
            exp.record(got["unit"], [3.0, 11.0])
        assert exp.units()["reward"].isna().all()


def test_an_algorithm_without_a_range_decides_on_declared_binary_rewards(tmp_path):
    # Gaussian BatchedThompson declares no range: before issue 23 its intervals were NaN and
    # its verdicts 'undecided' forever; declared binary, the exact sequences apply
    rng = np.random.default_rng(1)
    with Experiment.create(tmp_path / "g.sqlite", algorithm="BatchedThompson",
                           arms=["control", "b"], seed=0, reward_type="binary",
                           params={"posterior": "gaussian", "batch_size": 500,
                                   "sigma": 0.3}) as exp:
        for _ in range(12):
            got = exp.assign(500)
            arm = (got["arm"] == "b").to_numpy()
            exp.record(got["unit"], (rng.random(arm.size) < np.where(arm, 0.047 * 3, 0.03 * 3))
                       .astype(float))
        state = exp.status()
    assert state.arms[["low", "high"]].notna().all().all()
    assert state.arms.loc["b", "verdict"] == "better"
    # the live default control floor kept the control measured
    assert state.params["control_floor"] == 0.2 and "control_floor" in state.live_defaults
    assert state.arms.loc["control", "assigned"] >= 0.19 * 6000


def test_status_compares_the_sequences_on_the_same_data(tmp_path):
    with Experiment.create(tmp_path / "s.sqlite", algorithm="FixedAllocation",
                           arms=["control", "t"], seed=0, reward_type="binary") as exp:
        got = exp.assign(2000)
        rng = np.random.default_rng(2)
        arm = (got["arm"] == "t").to_numpy()
        exp.record(got["unit"], (rng.random(arm.size) < np.where(arm, 0.3, 0.2)).astype(float))
        exact = exp.status()
        asym = exp.status(verdicts={"sequence": "asymptotic"})
        msprt = exp.status(verdicts={"sequence": "msprt", "tau": 0.05})
        with pytest.raises(ExperimentError, match=r"verdicts\['tau'\]"):
            exp.status(verdicts={"sequence": "msprt"})
    assert exact.verdicts["sequence"] == "exact" and asym.verdicts["sequence"] == "asymptotic"
    for s in (exact, asym, msprt):
        assert s.arms.loc["t", "diff"] == pytest.approx(exact.arms.loc["t", "diff"])
        assert s.arms.loc["t", "diff_low"] < s.arms.loc["t", "diff"] < s.arms.loc["t",
                                                                                  "diff_high"]
    # both normal mixtures: the same formula, tuned differently
    assert asym.arms.loc["t", "diff_low"] != msprt.arms.loc["t", "diff_low"]


def test_continuous_rewards_get_the_asymptotic_sequence(tmp_path):
    rng = np.random.default_rng(3)
    with Experiment.create(tmp_path / "rev.sqlite", algorithm="FixedAllocation",
                           arms=["control", "t"], seed=0, reward_type="continuous",
                           params={"batch_size": 4000}) as exp:
        got = exp.assign(4000)
        arm = (got["arm"] == "t").to_numpy()
        exp.record(got["unit"], np.where(rng.random(arm.size) < 0.3,
                                         rng.lognormal(2, 0.5, arm.size) * np.where(arm, 1.4, 1),
                                         0.0))
        state = exp.status()
    n = state.arms["recorded"].to_numpy(float)
    assert state.verdicts["sequence"] == "asymptotic"
    assert state.arms.loc["t", "verdict"] == "better"
    assert np.isfinite(state.arms["low"]).all() and (n == 2000).all()


# -- the planner and the speed, through Experiment (fast versions of bench_verdicts.py) --------
def test_exact_verdicts_come_within_one_and_a_half_times_the_msprt():
    result = bench.speed(8, 0, means=(0.10, 0.20), step=100, cap=3000, width_at=1000,
                         tau=0.05, tune_n=1000)
    s = bench.summary(result)
    assert s["exact"]["undecided"] == 0
    assert s["exact"]["median"] <= 1.5 * s["msprt"]["median"]
    assert s["asymptotic"]["median"] <= 1.1 * s["msprt"]["median"]


def test_the_planner_predicts_the_units_experiment_takes():
    result = bench.speed(12, 1, means=(0.10, 0.20), step=100, cap=4000, width_at=100,
                         methods=("exact",), tune_n=1000)
    simulated = result.units["exact"]
    predicted = plan(base_rate=0.10, mde=0.10, daily_units=200, look_every=100, tune_n=1000,
                     runs=200, seed=2)
    assert predicted.expected_units == pytest.approx(simulated.mean(), rel=0.3)
    assert predicted.expected_days == pytest.approx(predicted.expected_units / 100)
    assert predicted.p90_units >= predicted.expected_units > predicted.fixed_n_units * 0.8


@pytest.mark.parametrize("kwargs, match", [
    ({"base_rate": 0.1, "mde": 0.0, "daily_units": 10}, "mde must be"),
    ({"base_rate": 0.95, "mde": 0.1, "daily_units": 10}, "base_rate \\+ mde"),
    ({"mean": 1.0, "mde": 0.1, "daily_units": 10}, "give base_rate, or both"),
    ({"base_rate": 0.1, "mean": 1.0, "variance": 1, "mde": 0.1, "daily_units": 10}, "not both"),
    ({"base_rate": 0.1, "mde": 0.1, "daily_units": -1}, "daily_units must be"),
    ({"base_rate": 0.1, "mde": 0.1, "daily_units": 10, "runs": 3}, "runs must be"),
])
def test_plan_refuses_what_cannot_be_true(kwargs, match):
    with pytest.raises(ExperimentError, match=match):
        plan(**kwargs)


def test_the_asymptotic_difference_is_infinite_below_min_n():
    low, high = asymptotic_difference(np.array([50, 50]), np.array([5.0, 9]),
                                      np.array([5.0, 9]), 0, 0.05)
    assert np.isneginf(low[1]) and np.isposinf(high[1])


def test_the_mixture_weights_sum_to_one_and_cover_the_grid():
    for v_tune in (10.0, 2_500.0, 1e7):
        mix = mixture(v_tune, 0.025)
        assert np.exp(mix.log_w).sum() == pytest.approx(1.0)
        assert mix.lam.max() <= 0.5 and mix.lam.min() <= 1e-5 * 1.1
        assert log_e_value(0.0, 0.0, mix) == pytest.approx(0.0, abs=1e-12)


def test_the_mixtures_uniform_part_sits_on_the_coarse_grid_from_rho_up():
    # weights (1 - eps) * half-normal cell masses + eps uniform over every 4th point (from
    # lam = 1/2 down) at lam >= rho: 7 points at V* = 5,000 (rho = 0.044)
    from banditkit.live.readout.sequences import ROBUST_SHARE
    v_tune, alpha = 5000.0, 0.0225
    mix = mixture(v_tune, alpha)
    rho = math.sqrt(asymptotic_rho2(v_tune, alpha))
    edges = np.concatenate([[0.0], np.sqrt(mix.lam[:-1] * mix.lam[1:]), [np.inf]])
    normal = np.diff([math.erf(e / (rho * math.sqrt(2))) if np.isfinite(e) else 1.0
                      for e in edges])
    extra = np.exp(mix.log_w) - (1 - ROBUST_SHARE) * normal / normal.sum()
    on = extra > 1e-12
    assert ROBUST_SHARE == 0.15 and on.sum() == 7
    assert np.allclose(extra[on], ROBUST_SHARE / 7) and np.all(np.abs(extra[~on]) < 1e-12)
    assert mix.lam[on].min() >= rho and mix.lam[on].max() == mix.lam.max()
    assert np.allclose(np.diff(np.log(mix.lam[on])), 4 * math.log(1.1))


def test_the_asymptotic_difference_is_waudby_smiths_radius_on_both_arms_units():
    # v = s_a^2/n_a + s_c^2/n_c, N = n_a + n_c, rho^2 tuned at N* = 2 * tune_n
    n = np.array([400.0, 600.0])
    mean, sd = np.array([1.0, 1.5]), np.array([2.0, 3.0])
    S, Q = mean * n, sd ** 2 * (n - 1) + n * mean ** 2
    low, high = asymptotic_difference(n, S, Q, 0, 0.05, n_tune=500)
    v = 4 / 400 + 9 / 600
    rho2 = (2 * math.log(20) + math.log(2 * math.log(20) + 1)) / 1000
    x = 1000 * rho2
    radius = math.sqrt(v * 2 * (x + 1) / x * math.log(math.sqrt(x + 1) / 0.05))
    assert (low[1], high[1]) == pytest.approx((0.5 - radius, 0.5 + radius))


def test_margins_give_equivalence_and_non_inferiority_decisions():
    n = np.full((4, 2), 20_000.0)
    S = np.array([[2000.0, 2000], [2000, 2300], [2000, 2050], [2000, 1400]])
    spec = check_verdicts("binary", None, {"margin": 0.01}, None)
    c = compare(ArmSums(n, n, S, S, np.ones(n.shape, bool)), (0.0, 1.0), intervals="anytime",
                alpha=0.05, control=0, spec=spec)
    assert c.decision[:, 1].tolist() == ["equivalent", "better", "non-inferior", "worse"]
    assert c.verdict[:, 1].tolist() == ["undecided", "better", "undecided", "worse"]
    # the decisions are read off the same intervals
    assert (c.diff_low[2, 1] > -0.01) and (c.diff_high[2, 1] > 0.01)


def test_one_sided_decisions_spend_all_of_alpha_on_the_lower_end():
    from banditkit.live.readout.verdict_spec import check_verdicts
    n = np.full(2, 10_000.0)
    S = np.array([1000.0, 1120.0])
    sums = ArmSums(n, n, S, S, np.ones(2, bool))
    two = compare(sums, (0.0, 1.0), intervals="anytime", alpha=0.05, control=0,
                  spec=check_verdicts("binary", None, None, None))
    one = compare(sums, (0.0, 1.0), intervals="anytime", alpha=0.05, control=0,
                  spec=check_verdicts("binary", None, {"alternative": "greater"}, None))
    assert one.diff_low[1] > two.diff_low[1] and np.isposinf(one.diff_high[1])
    # the default split: the control's sequence at alpha * 0.05, the difference at alpha * 0.95
    cl, ch = confidence_sequence(S[0], n[0], 0.0025)
    low, _ = difference_sequence(n, S, S, 0, cl, ch, 0.0475, side="lower")
    assert one.diff_low[1] == pytest.approx(low[1])


def test_status_shows_decisions_with_a_margin(tmp_path):
    state, _ = _ab(tmp_path, "m.sqlite", (0.10, 0.10), 2000, 5, reward_type="binary",
                   verdicts={"margin": 0.05})
    assert state.arms.loc["treatment", "decision"] == "equivalent"
    assert "margin 0.05" in str(state)


def test_the_command_line_creates_with_a_reward_type_and_plans(tmp_path, capsys):
    from banditkit.cli import main

    path = tmp_path / "cli.sqlite"
    assert main(["experiment", "create", str(path), "--algorithm", "FixedAllocation",
                 "--arms", "control,b", "--seed", "0", "--reward-type", "bounded",
                 "--reward-range", "0", "5", "--tune-n", "2000"]) == 0
    with Experiment.open(path, readonly=True) as exp:
        assert exp.verdict_spec.reward_range == (0.0, 5.0)
        assert exp.verdict_spec.tune_n == 2000
    capsys.readouterr()
    assert main(["experiment", "status", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["verdicts"]["reward_type"] == "bounded"
    assert main(["experiment", "create", str(tmp_path / "bad.sqlite"), "--algorithm",
                 "FixedAllocation", "--arms", "a,b", "--seed", "0", "--reward-type", "bounded",
                 "--reward-range", "5", "0"]) == 2
    assert "reward_range must be two finite numbers lo < hi" in capsys.readouterr().err
    assert not (tmp_path / "bad.sqlite").exists()
    assert main(["experiment", "plan", "--base-rate", "0.1", "--mde", "0.05",
                 "--daily-units", "1000", "--runs", "50", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["runs"] == 50 and got["expected_units"] > 0 and got["sequence"] == "exact"
    assert main(["experiment", "plan", "--base-rate", "0.1", "--mde", "-1",
                 "--daily-units", "1000"]) == 2
    assert "mde must be" in capsys.readouterr().err


def test_the_http_service_creates_with_a_reward_type_and_shows_the_verdicts(tmp_path):
    # a real server on 127.0.0.1 (banditkit serve), an SQLite folder as its database
    pytest.importorskip("starlette")
    from service_support import Server, call

    db = tmp_path / "db"
    db.mkdir()
    server = Server(db)
    try:
        status, created = call(server.port, "POST", "/experiments", {
            "name": "ab", "algorithm": "FixedAllocation", "arms": ["control", "b"],
            "seed": 0, "reward_type": "bounded", "reward_range": [0, 10],
            "verdicts": {"margin": 1}})
        assert status == 201, created
        status, state = call(server.port, "GET", "/experiments/ab/status")
        assert status == 200 and state["verdicts"]["reward_range"] == [0.0, 10.0]
        assert state["verdicts"]["margin"] == 1.0
        status, refused = call(server.port, "POST", "/experiments", {
            "name": "bad", "algorithm": "FixedAllocation", "arms": ["a", "b"], "seed": 0,
            "reward_type": "bounded", "reward_range": [10, 0]})
        assert status == 400 and "reward_range must be two" in json.dumps(refused)
    finally:
        server.stop()
