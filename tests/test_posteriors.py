"""The posteriors of the Bayesian algorithms against their papers: the Gaussian posterior of
Agrawal & Goyal (2013, Algorithm 2) shrinks as σ²/(n + 1) around S/(n + 1), and the Beta sampler
is exact for priors below 1 (Jeffreys' Beta(½, ½)), where Marsaglia & Tsang's attempt is not
valid and the inverse-CDF fallback must take every draw."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from banditkit import jit, simulate
from banditkit.envs.multi_armed import BernoulliBandit
from banditkit.estimation.beta_draws import beta_from_uniforms, gamma_attempt
from banditkit.estimation.posteriors import sample_posterior
from banditkit.policies import ThompsonSampling
from banditkit.policies.named import thompson_lockstep
from banditkit.rng import as_generator, derive_seed, stream


def test_the_gaussian_monte_carlo_posterior_shrinks_as_sigma2_over_n_plus_1():
    pulls = np.array([0, 3, 99, 9999])
    sums = np.array([0.0, 2.4, 60.0, 2500.0])
    sigma = 0.5
    draws = sample_posterior(as_generator(0), "gaussian", pulls, sums, 200_000, sigma=sigma)
    n1 = pulls + 1.0
    np.testing.assert_allclose(draws.mean(axis=0), sums / n1, atol=4 * sigma / np.sqrt(2e5))
    np.testing.assert_allclose(draws.var(axis=0), sigma ** 2 / n1, rtol=0.02)


def test_the_beta_monte_carlo_posterior_is_beta_of_successes_and_failures():
    draws = sample_posterior(as_generator(1), "beta", np.array([10, 0]), np.array([7.0, 0.0]),
                             100_000, prior=(0.5, 0.5))
    for k, (a, b) in enumerate(((7.5, 3.5), (0.5, 0.5))):
        assert stats.kstest(draws[:, k], stats.beta(a, b).cdf).pvalue > 1e-3


@pytest.mark.parametrize("a,b", [(0.5, 0.5), (0.5, 3.0), (1.5, 0.3), (0.2, 0.2)])
def test_beta_draws_are_exact_for_shapes_below_one(a, b):
    n = 40_000
    u = as_generator(4).random((n, 5))
    theta = beta_from_uniforms(np.array([a]), np.array([b]), u)[:, 0]
    assert stats.kstest(theta, stats.beta(a, b).cdf).pvalue > 1e-3
    # the attempt is never accepted below 1 (its test would be wrong there)
    _, accepted = gamma_attempt(np.full(1000, 0.9), u[:1000, 0], u[:1000, 1])
    assert not accepted.any()


def test_thompson_sampling_takes_jeffreys_prior_on_every_engine(monkeypatch):
    env = BernoulliBandit(np.array([0.3, 0.5, 0.55]))
    seeds = [derive_seed(9, i) for i in range(2)]
    for compiled in ([True, False] if jit.available() else [False]):
        monkeypatch.setattr(jit, "available", lambda compiled=compiled: compiled)
        xis = [stream(9, i, "algorithm") for i in range(2)]
        lock = thompson_lockstep([env] * 2, xis, seeds, 600, None, prior=(0.5, 0.5))
        for i, trial in enumerate(lock):
            ref = simulate(ThompsonSampling(3, stream(9, i, "algorithm"), prior=(0.5, 0.5)),
                           env, horizon=600, seed=seeds[i])
            assert trial.decisions.same_as(ref.decisions)
    # and the prior is used: Jeffreys' and the uniform prior decide differently
    other = simulate(ThompsonSampling(3, stream(9, 0, "algorithm")), env, horizon=600,
                     seed=seeds[0])
    assert not other.decisions.same_as(lock[0].decisions)


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
def test_the_kernels_scalar_beta_draw_is_the_vectorised_one_for_every_shape(compiled):
    from banditkit.estimation import beta_kernels

    if compiled and not jit.available():
        pytest.skip("numba not installed or BANDITKIT_JIT=0")
    draw = beta_kernels.beta_draw_scalar
    if not compiled:
        draw = getattr(draw, "py_func", draw)
    ndtri, betaincinv = beta_kernels.scipy_functions()
    rng = as_generator(11)
    a = np.r_[0.2, 0.5, 0.99, 1.0, 3 * rng.random(300) + 0.05]
    b = np.r_[0.5, 0.2, 1.0, 0.99, 3 * rng.random(300) + 0.05]
    u = rng.random((a.size, 5))
    want = beta_from_uniforms(a[:, None], b[:, None], u)[:, 0]
    got = np.array([draw(x, y, *w, ndtri, betaincinv) for x, y, w in zip(a, b, u,
                                                                            strict=True)])
    # equal up to numpy's SIMD log against the C library's (an ulp), never another draw
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
