"""The predictable plug-in empirical-Bernstein sequence (banditkit.live.readout.plugin, "The
plug-in"; Waudby-Smith & Ramdas 2023, Theorem 2) checked against its definition: the terms by a
plain loop, the ends where the brute-forced log e-value reaches log(1/α), the supermartingale's
expectation by exact enumeration, the α split in compare, and coverage near the range's ends and
under an adaptive allocation."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from banditkit.live.readout.anytime import confidence_sequence
from banditkit.live.readout.plugin import (
    PluginSums,
    plugin_difference,
    plugin_level,
    plugin_sequence,
    plugin_terms,
)
from banditkit.live.readout.sequences import psi_e
from banditkit.live.readout.statistics import compare, plugin_sums
from banditkit.live.readout.sums import ArmSums
from banditkit.live.readout.verdict_spec import check_verdicts


def _psi(lam: float, b: float) -> float:
    """ψ_E(λb)/b², by its definition (b > 0)."""
    return float(psi_e(lam * b)) / (b * b)


def _loop(x, n_tune, level, k=2.0, cap=0.5):
    """The plug-in's per-reward terms by a plain loop over the definition."""
    out = []
    s = q = 0.0
    for i, xi in enumerate(x, start=1):
        mu = (0.5 + s) / i
        mean = s / (i - 1) if i > 1 else 0.0
        var = (0.25 + (q - (i - 1) * mean * mean if i > 1 else 0.0)) / i
        base = 2 * level / (k * var * max(i, n_tune))
        lam = min(cap, math.sqrt(base))
        for _ in range(3):
            g = (_psi(lam, mu) + _psi(lam, 1 - mu)) / lam ** 2
            lam = min(cap, math.sqrt(base / g))
        v = (xi - mu) ** 2
        out.append((lam, lam * xi, _psi(lam, mu) * v, _psi(lam, 1 - mu) * v))
        s += xi
        q += xi * xi
    return np.array(out)


@pytest.mark.parametrize("n_tune", [1.0, 50.0, 1000.0])
def test_the_terms_are_the_definition_computed_by_a_loop(n_tune):
    rng = np.random.default_rng(3)
    x = rng.beta(0.5, 3.0, 200)
    got = np.stack(plugin_terms(x, n_tune=n_tune, level=4.0), axis=-1)
    np.testing.assert_allclose(got, _loop(x, n_tune, 4.0), rtol=1e-9, atol=1e-15)
    # in two pieces with the first's (count, sum, sum of squares) as the prior: the same
    # (what the live store does when a call resolves more units of an arm)
    first = np.stack(plugin_terms(x[:73], n_tune=n_tune, level=4.0), axis=-1)
    rest = np.stack(plugin_terms(x[73:], n_tune=n_tune, level=4.0,
                                 prior=(73.0, x[:73].sum(), (x[:73] ** 2).sum())), axis=-1)
    np.testing.assert_allclose(np.concatenate([first, rest]), got, rtol=1e-9, atol=1e-15)


def _log_e_arm(x, mu, side, n_tune, level):
    """log M_n(μ) of one arm by brute force: Σ λ_i·side·(x_i − μ) − Σ pen_i (side's b)."""
    t = _loop(x, n_tune, level)
    pen = t[:, 2] if side > 0 else t[:, 3]
    return float(np.sum(t[:, 0] * side * (np.asarray(x) - mu)) - pen.sum())


@pytest.mark.parametrize("seed, n", [(0, 60), (1, 400)])
def test_the_ends_are_where_the_brute_force_e_value_reaches_one_over_alpha(seed, n):
    rng = np.random.default_rng(seed)
    x = rng.beta(1.0, 6.0, n)
    level = 3.0
    sums = PluginSums.of(x, n_tune=100.0, level=level)
    low, high = plugin_sequence(float(n), sums, 0.05)
    assert 0 < low < x.mean() < high < 1
    for mu, side in ((float(low), 1.0), (float(high), -1.0)):
        assert _log_e_arm(x, mu, side, 100.0, level) == pytest.approx(math.log(40), abs=1e-9)
        # beyond the end rejected, inside kept (the log e-value is linear in μ)
        assert _log_e_arm(x, mu - side * 1e-3, side, 100.0, level) > math.log(40)
        assert _log_e_arm(x, mu + side * 1e-3, side, 100.0, level) < math.log(40)
    one, _ = plugin_sequence(float(n), sums, 0.05, side="lower")
    assert _log_e_arm(x, float(one), 1.0, 100.0, level) == pytest.approx(math.log(20))


def test_the_difference_ends_are_where_the_brute_force_e_value_reaches_one_over_alpha():
    rng = np.random.default_rng(4)
    xa, xc = rng.beta(1.2, 8.0, 300), rng.beta(1.0, 8.0, 240)
    level = 3.5
    ta, tc = _loop(xa, 100.0, level), _loop(xc, 100.0, level)
    sums = PluginSums(*(np.array([tc[:, j].sum(), ta[:, j].sum()]) for j in range(4)))
    cl, ch = 0.08, 0.14
    low, high = plugin_difference(np.array([240.0, 300.0]), sums, 0, cl, ch, 0.05)

    def log_e(delta, m, side):
        # lower end (side +1): treatment λ(x − m − Δ) with b = μ̂_a, control λ(m − x) with
        # b = 1 − μ̂_c; upper end: the mirror
        mu_a = m + delta
        if side > 0:
            return (np.sum(ta[:, 0] * (xa - mu_a)) - ta[:, 2].sum()
                    + np.sum(tc[:, 0] * (m - xc)) - tc[:, 3].sum())
        return (np.sum(ta[:, 0] * (mu_a - xa)) - ta[:, 3].sum()
                + np.sum(tc[:, 0] * (xc - m)) - tc[:, 2].sum())

    for delta, side in ((float(low[1]), 1.0), (float(high[1]), -1.0)):
        worst = min(log_e(delta, cl, side), log_e(delta, ch, side))
        assert worst == pytest.approx(math.log(40), abs=1e-9)
        for m in np.linspace(cl, ch, 7):  # every nuisance in the control's interval rejects
            assert log_e(delta - side * 1e-4, m, side) > math.log(40)
    assert np.isnan(low[0]) and np.isnan(high[0])


@pytest.mark.parametrize("p", [0.05, 0.3, 0.5, 0.9])
def test_the_process_is_a_supermartingale_by_exact_enumeration(p):
    # every 0/1 sequence of length 10 with its probability: E[M_t(μ)] ≤ 1 at each t, for both
    # ends' processes at the true mean (λ at its cap 1/2: n_tune = 1, where a non-predictable
    # centre or a too small penalty shows)
    x = np.array(list(itertools.product([0.0, 1.0], repeat=10)))
    prob = np.prod(np.where(x == 1, p, 1 - p), axis=1)
    lam, _, pen_low, pen_high = plugin_terms(x, n_tune=1.0, level=5.0)
    assert lam.max() == 0.5
    for side, pen in ((1.0, pen_low), (-1.0, pen_high)):
        log_m = np.cumsum(lam * side * (x - p) - pen, axis=1)
        assert (prob @ np.exp(log_m) <= 1 + 1e-12).all()


def test_compare_splits_alpha_as_documented():
    # the control's own sequence at α·share, each difference at α(1 − share)/(K − 1), each
    # bounded arm at α/K
    rng = np.random.default_rng(6)
    x = [rng.beta(m * 10, (1 - m) * 10, 3000) for m in (0.2, 0.25, 0.22)]
    spec = check_verdicts("bounded", (0.0, 1.0), None, None)
    ps = plugin_sums(x, spec)
    n = np.full(3, 3000.0)
    S = np.array([a.sum() for a in x])
    Q = np.array([(a * a).sum() for a in x])
    c = compare(ArmSums(n, n, S, Q, np.zeros(3, bool), plugin=ps), (0.0, 1.0),
                intervals="anytime", alpha=0.05, control=0, spec=spec)
    sums = PluginSums.from_array(ps)
    cl, ch = plugin_sequence(3000.0, PluginSums.from_array(ps[0]), 0.05 * 0.05)
    dl, dh = plugin_difference(n, sums, 0, cl, ch, 0.05 * 0.95 / 2)
    np.testing.assert_allclose(c.diff_low[1:], dl[1:], rtol=1e-12)
    np.testing.assert_allclose(c.diff_high[1:], dh[1:], rtol=1e-12)
    al, ah = plugin_sequence(n, sums, 0.05 / 3)
    np.testing.assert_allclose(c.low, al, rtol=1e-12)
    np.testing.assert_allclose(c.high, ah, rtol=1e-12)
    assert plugin_level(3) == pytest.approx(math.log(4 / (0.05 * 0.95)))
    # the plug-in is what "exact" means with the sums; the mixture without them
    without = compare(ArmSums(n, n, S, Q, np.zeros(3, bool)), (0.0, 1.0),
                      intervals="anytime", alpha=0.05, control=0, spec=spec)
    assert not np.allclose(without.diff_low[1:], dl[1:])


def _adaptive_run(rng, draw, means, horizon, look):
    """Per-arm streams and a Thompson-like allocation on the rewards so far: the counts at
    every look (an allocation that depends on past values)."""
    K = len(means)
    streams = [draw(rng, m, horizon) for m in means]
    n = np.zeros(K, dtype=int)
    counts = []
    s = np.zeros(K)
    for _ in range(horizon * K // look):
        post = rng.beta(1 + s, 1 + np.maximum(n - s, 0))
        share = np.full(K, 0.1 / K) + 0.9 * np.eye(K)[np.argmax(post)]
        add = rng.multinomial(look, share)
        add = np.minimum(add, horizon - n)
        for a in range(K):
            s[a] += streams[a][n[a]: n[a] + add[a]].sum()
        n += add
        counts.append(n.copy())
    return streams, np.array(counts)


def _bernoulli(rng, m, size):
    return (rng.random(size) < m).astype(float)


def _beta(rng, m, size):
    return rng.beta(2 * m, 2 * (1 - m), size)


@pytest.mark.parametrize("draw, means", [(_bernoulli, (0.03, 0.03)), (_beta, (0.97, 0.97)),
                                         (_beta, (0.02, 0.05))])
def test_the_plugin_covers_near_the_range_ends_under_adaptive_allocation(draw, means):
    rng = np.random.default_rng(11)
    runs, horizon, look = 100, 2000, 100
    spec = check_verdicts("bounded", (0.0, 1.0), {"tune_n": 500}, None)
    miss_arm = miss_diff = 0
    for _ in range(runs):
        streams, counts = _adaptive_run(rng, draw, means, horizon, look)
        cum = [np.stack(plugin_terms(s, n_tune=500, level=plugin_level(2)), -1).cumsum(0)
               for s in streams]
        ok = counts.min(axis=1) > 0
        counts = counts[ok]
        idx = counts - 1
        ps = np.stack([cum[a][idx[:, a]] for a in range(2)], axis=1)
        S = np.stack([np.cumsum(streams[a])[idx[:, a]] for a in range(2)], axis=1)
        Q = np.stack([np.cumsum(streams[a] ** 2)[idx[:, a]] for a in range(2)], axis=1)
        n = counts.astype(float)
        c = compare(ArmSums(n, n, S, Q, np.zeros(n.shape, bool), plugin=ps), (0.0, 1.0),
                    intervals="anytime", alpha=0.05, control=0, spec=spec)
        truth = np.array(means)
        miss_arm += bool(((c.low > truth) | (c.high < truth)).any())
        gap = truth[1] - truth[0]
        miss_diff += bool(((c.diff_low[:, 1] > gap) | (c.diff_high[:, 1] < gap)).any())
    # α = 0.05 over all looks; 100 runs: a miss rate above ~0.11 is beyond Monte-Carlo error
    assert miss_arm <= 11 and miss_diff <= 11


def test_a_binary_control_uses_the_beta_binomial_sequence_for_the_nuisance():
    rng = np.random.default_rng(8)
    x = [(rng.random(5000) < m).astype(float) for m in (0.1, 0.12)]
    spec = check_verdicts("binary", None, None, None)
    ps = plugin_sums(x, spec)
    n = np.full(2, 5000.0)
    S = np.array([a.sum() for a in x])
    c = compare(ArmSums(n, n, S, S, np.ones(2, bool), plugin=ps), (0.0, 1.0),
                intervals="anytime", alpha=0.05, control=0, spec=spec)
    cl, ch = confidence_sequence(S[0], 5000.0, 0.05 * 0.05)
    dl, dh = plugin_difference(n, PluginSums.from_array(ps), 0, cl, ch, 0.05 * 0.95)
    assert c.diff_low[1] == pytest.approx(dl[1]) and c.diff_high[1] == pytest.approx(dh[1])
