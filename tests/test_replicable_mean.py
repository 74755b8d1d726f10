"""Replicable mean estimation (Impagliazzo et al. 2022; RepMean of Bollini et al.)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from banditkit.estimation import (
    grid_width,
    hoeffding_radius,
    prop2_samples,
    replicable_mean,
    replicable_means,
    replicable_sq,
    repmean_precision,
    repmean_samples,
)
from banditkit.rng import stream


def test_offset_rounding_closed_form():
    rho, delta, n = 0.3, 0.01, 400
    alpha = grid_width(n, delta, rho)
    eps = repmean_precision(n, delta, rho)
    assert alpha == pytest.approx(2 * eps / (1 + rho - 2 * delta))
    for total, u in [(123.0, 0.0), (200.0, 0.37), (399.0, 0.99), (0.0, 0.5), (400.0, 0.25)]:
        mean = total / n
        off = u * alpha
        z = math.floor((mean - off) / alpha)
        expect = min(max(off + (z + 0.5) * alpha, 0.0), 1.0)
        got = replicable_mean(total=total, count=n, rho=rho, delta=delta, xi=u)
        assert got == pytest.approx(expect, abs=1e-15)
        # the answer is the centre of the cell holding the sample mean (clipped into [0, 1])
        assert abs(got - mean) <= alpha / 2 + 1e-12
        cell_lo = off + z * alpha
        assert cell_lo <= mean < cell_lo + alpha


def test_generator_and_explicit_offset_agree_and_samples_equal_sums():
    x = stream(1, "samples").random(300)
    u = stream(2, "xi").random()
    a = replicable_mean(x, 0.2, 0.01, stream(2, "xi"))
    b = replicable_mean(x, 0.2, 0.01, u)
    c = replicable_mean(total=x.sum(), count=x.size, rho=0.2, delta=0.01, xi=u)
    assert a == b == c


def test_replicability_two_independent_sample_sets_same_xi():
    """P[estimate differs between executions with the same ξ] ≤ ρ (Lemma 2.5), over 20000 pairs."""
    rng = stream(3, "noise")
    rho, delta, n, m = 0.2, 0.01, 20_000, 20_000
    mu = rng.uniform(0.05, 0.95, size=m)
    u = stream(3, "xi").random(m)
    s1 = rng.binomial(n, mu)
    s2 = rng.binomial(n, mu)
    e1 = replicable_means(s1, np.full(m, n), rho, delta, u)
    e2 = replicable_means(s2, np.full(m, n), rho, delta, u)
    rate = float(np.mean(e1 != e2))
    # binomial sd at ρ is ~0.003; the guarantee is an upper bound, so a margin of 3 sd suffices
    assert rate <= rho + 3 * math.sqrt(rho * (1 - rho) / m)
    assert rate > 0  # not trivially constant: the estimates really depend on the samples
    # a shared uniform offset puts a cell boundary between the two sample means with
    # probability min(|m1 − m2|/α, 1): the count of differing pairs is a sum of independent
    # Bernoullis with these means (4 sd of tolerance)
    alpha = grid_width(n, delta, rho)
    p = np.minimum(np.abs(s1 - s2) / n / alpha, 1.0)
    assert abs(np.sum(e1 != e2) - p.sum()) <= 4 * math.sqrt(np.sum(p * (1 - p)))


def test_disagreement_probability_is_distance_over_cell_width():
    """Two sample means |m1 − m2| apart, rounded with one shared uniform offset, land in
    different cells with probability min(|m1 − m2|/α, 1) (the step behind Lemma 2.5), checked
    in bands of that distance over 30000 pairs of hand-placed means."""
    rho, delta, n, m = 0.3, 0.01, 10**6, 30_000  # α ≈ 0.018
    alpha = grid_width(n, delta, rho)
    rng = stream(7, "means")
    m1 = rng.uniform(0.2, 0.8, size=m)
    r = rng.uniform(-1.5, 1.5, size=m)  # signed distance in cells
    m2 = m1 + r * alpha
    u = stream(7, "xi").random(m)
    differ = (replicable_means(m1 * n, np.full(m, n), rho, delta, u)
              != replicable_means(m2 * n, np.full(m, n), rho, delta, u))
    p = np.minimum(np.abs(r), 1.0)
    assert np.all(differ[np.abs(r) > 1])  # more than a cell apart: never the same cell
    for lo, hi in [(0.0, 0.1), (0.1, 0.4), (0.4, 0.7), (0.7, 1.0)]:
        band = (np.abs(r) >= lo) & (np.abs(r) < hi)
        expect, sd = p[band].sum(), math.sqrt(np.sum(p[band] * (1 - p[band])))
        assert abs(differ[band].sum() - expect) <= 4 * sd, (lo, hi)


def test_accuracy_within_lemma_precision_with_probability_1_minus_delta():
    rng = stream(5, "noise")
    rho, delta, m = 0.25, 0.05, 20_000
    eps = 0.1
    n = repmean_samples(eps, delta, rho)
    assert repmean_precision(n, delta, rho) <= eps
    mu = rng.uniform(0, 1, size=m)
    est = replicable_means(rng.binomial(n, mu), np.full(m, n), rho, delta,
                           stream(5, "xi").random(m), precision=eps)
    fail = float(np.mean(np.abs(est - mu) > eps))
    assert fail <= delta
    # the finer statement behind it: error ≤ Hoeffding radius + half a cell w.p. ≥ 1 − δ
    bound = hoeffding_radius(n, delta) + grid_width(n, delta, rho, eps) / 2
    assert np.mean(np.abs(est - mu) > bound) <= delta + 3 * math.sqrt(delta / m)


def test_generator_gives_one_offset_per_estimate_in_order():
    sums, counts = np.array([30.0, 55.0, 71.0, 12.0]), np.array([100, 100, 100, 100])
    xi, ref = stream(8, "xi"), stream(8, "xi")
    got = replicable_means(sums, counts, 0.2, 0.01, xi)
    want = replicable_means(sums, counts, 0.2, 0.01, ref.random(4))
    assert np.array_equal(got, want)
    assert xi.random() == ref.random()  # ξ advanced by exactly one uniform per estimate


def test_hoeffding_radius_closed_form_and_not_loose():
    """τ' = sqrt(ln(2/δ)/(2n)); on fair coins it fails with probability below δ but not far
    below it (a radius √2 too wide would fail about 50 times less often)."""
    n, delta, m = 1000, 0.05, 200_000
    tau = hoeffding_radius(n, delta)
    assert tau == pytest.approx(math.sqrt(math.log(2 / delta) / (2 * n)), rel=1e-15)
    means = stream(9, "coins").binomial(n, 0.5, size=m) / n
    fail = float(np.mean(np.abs(means - 0.5) > tau))
    assert delta / 20 <= fail <= delta


def test_sample_size_calculators():
    assert repmean_samples(0.1, 0.01, 0.3) == math.ceil(2 * math.log(200) / (0.01 * 0.28**2))
    assert prop2_samples(0.1, 0.01, 0.3) == math.ceil(math.log(100) / (0.01 * 0.29**2))
    n = repmean_samples(0.05, 0.001, 0.1)
    assert repmean_precision(n, 0.001, 0.1) <= 0.05 < repmean_precision(n - 50, 0.001, 0.1)


def test_statistical_query_rescales_bounded_values():
    v = stream(6, "v").uniform(-2, 3, size=500)
    got = replicable_sq(v, 0.2, 0.01, 0.4, bounds=(-2, 3))
    ref = -2 + 5 * replicable_mean((v + 2) / 5, 0.2, 0.01, 0.4)
    assert got == pytest.approx(ref)
    # rounding moves the (rescaled) sample mean by at most half a cell
    assert abs(got - v.mean()) <= 5 * grid_width(500, 0.01, 0.2) / 2 + 1e-12
    with pytest.raises(ValueError, match="bounds"):
        replicable_sq(v, 0.2, 0.01, 0.4, bounds=(0, 1))


@pytest.mark.parametrize("kwargs, match", [
    (dict(rho=0.0), "rho"),
    (dict(rho=1.5), "rho"),
    (dict(rho=0.1, delta=0.05), "2\\*delta"),
    (dict(delta=0.0), "delta"),
])
def test_bad_parameters_refused(kwargs, match):
    args = dict(samples=np.array([0.2, 0.4]), rho=0.2, delta=0.01, xi=0.5) | kwargs
    with pytest.raises(ValueError, match=match):
        replicable_mean(**args)


def test_bad_samples_refused():
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        replicable_mean(np.array([0.5, 1.2]), 0.2, 0.01, 0.5)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        replicable_means(np.array([5.0]), np.array([4]), 0.2, 0.01, 0.5)
    with pytest.raises(ValueError, match="count"):
        replicable_means(np.array([0.0]), np.array([0]), 0.2, 0.01, 0.5)
    with pytest.raises(ValueError, match="too few samples"):
        replicable_means(np.array([5.0]), np.array([10]), 0.2, 0.01, 0.5, precision=0.01)
    # exactly the Lemma 2.5 count is enough for a precision, one sample fewer is not
    need = repmean_samples(0.05, 0.01, 0.2)
    replicable_means(np.array([need / 2]), np.array([need]), 0.2, 0.01, 0.5, precision=0.05)
    with pytest.raises(ValueError, match="too few samples"):
        replicable_means(np.array([need / 2]), np.array([need - 1]), 0.2, 0.01, 0.5,
                         precision=0.05)
    with pytest.raises(ValueError, match="offsets"):
        replicable_mean(np.array([0.5]), 0.2, 0.01, 1.0)
    with pytest.raises(TypeError, match="xi"):
        replicable_mean(np.array([0.5]), 0.2, 0.01)
    assert replicable_mean(np.array([1.0, 1.0]), 1.0, 0.01, 0.0) == 1.0  # ρ = 1 allowed
