"""RAGE (Fiez et al. 2019, Algorithm 1): invariants, correctness and the sufficient-statistic
least squares."""

from __future__ import annotations

import itertools
import math
import tracemalloc

import numpy as np
import pytest

from banditkit.envs.instances import make_instance
from banditkit.envs.linear import LinearBandit
from banditkit.estimation.least_squares import LeastSquares
from banditkit.identification.rage import RAGE
from banditkit.identification.xy import XYOracle
from banditkit.protocol import Batch
from banditkit.simulate import simulate


def _run(alg, env, seed=0, horizon=10**9):
    return simulate(alg, env, seed=seed, horizon=horizon)


def test_noiseless_never_eliminates_best_and_active_set_shrinks():
    # σ tiny: the estimate is θ* to ~1e-9, so any elimination of the best item would be a bug
    # in the rule, not bad luck.
    for name, kw in [("soare", {"d": 6}), ("transductive", {"d": 10})]:
        base = make_instance(name, **kw)
        env = LinearBandit(base.X, base.theta, base.Z, sigma=1e-9)
        alg = RAGE(env.X, env.Z, 0.05)
        best = env.best_item()
        sizes = []
        while (batch := alg.next_batch()) is not None:
            sizes.append(alg.active.size)
            out = env.pull(batch, np.random.default_rng(1))
            alg.observe(batch, out.rewards)
            assert best in alg.active
        assert alg.recommendation == best
        sizes.append(alg.active.size)
        assert all(b <= a for a, b in itertools.pairwise(sizes))
        assert sizes[-1] == 1 and sizes[0] == env.n_items
        info = alg.info
        assert info["phases"] == len(info["phase_pulls"]) == len(info["active_sizes"])


def test_phase_sizes_follow_algorithm_1():
    env = make_instance("soare", d=4)
    alg = RAGE(env.X, env.Z, 0.05, epsilon=0.1)
    tr = _run(alg, env)
    assert tr.correct and tr.stopped
    rho, pulls = tr.info["design_values"], tr.info["phase_pulls"]
    for t, (r, n) in enumerate(zip(rho, pulls, strict=True), start=1):
        expected = math.ceil(2 * 4.0 ** t * r * 1.1 * math.log(env.n_items ** 2 * t * t / 0.05))
        assert n >= expected  # max with r(ε) can only add pulls
        assert n <= max(expected, 2 * (env.n_arms) / 0.1 + 1)
    assert sum(pulls) == tr.n_pulls


def test_delta_pac_on_small_instances():
    # 30 trials each on two instances with moderate gaps: δ = 0.1 allows a few failures in
    # expectation; the guarantee is conservative, so we demand none.
    for env in (make_instance("multivariate-testing", D=3, rng=np.random.default_rng(4)),
                make_instance("many-arms", n=30, rng=np.random.default_rng(5))):
        wrong = 0
        for s in range(30):
            tr = _run(RAGE(env.X, env.Z, 0.1), env, seed=s)
            assert tr.stopped
            wrong += not tr.correct
        assert wrong == 0


def test_oracle_needs_fewer_samples_than_rage_on_average():
    env = make_instance("transductive", d=8)
    rage = np.mean([_run(RAGE(env.X, env.Z, 0.05), env, seed=s).n_pulls for s in range(8)])
    oracle = np.mean([_run(XYOracle(env.X, env.Z, 0.05, env.theta), env, seed=s).n_pulls
                      for s in range(8)])
    assert oracle <= rage


def test_single_item_stops_at_once():
    env = make_instance("soare", d=3)
    alg = RAGE(env.X, env.Z[:1], 0.05)
    assert alg.next_batch() is None
    assert alg.recommendation == 0
    assert alg.t == 0


def test_refuses_bad_input():
    X = np.eye(3)
    with pytest.raises(ValueError, match="span"):
        RAGE(np.array([[1.0, 0, 0], [0, 1.0, 0]]), X, 0.05)
    with pytest.raises(ValueError, match="delta"):
        RAGE(X, X, 1.0)
    with pytest.raises(ValueError, match="delta"):
        RAGE(X, X, 0.0)
    with pytest.raises(ValueError, match="finite"):
        RAGE(np.array([[1.0, np.nan, 0], [0, 1, 0], [0, 0, 1]]), X, 0.05)
    with pytest.raises(ValueError, match="columns"):
        RAGE(X, np.eye(2), 0.05)
    with pytest.raises(ValueError, match="distinct"):
        RAGE(X, np.vstack([X, X[:1]]), 0.05)
    with pytest.raises(ValueError, match="epsilon"):
        RAGE(X, X, 0.05, epsilon=0.0)


def test_least_squares_matches_lstsq_on_expanded_pulls():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((7, 4))
    counts = np.array([3, 0, 5, 1, 2, 0, 4])
    theta = rng.standard_normal(4)
    batch = Batch.from_allocation(counts)
    per_pull = X[batch.sequence()] @ theta + rng.standard_normal(batch.n_pulls)
    sums = np.bincount(batch.sequence(), weights=per_pull, minlength=7)
    fit = LeastSquares.from_sums(X, counts, sums)
    ref = np.linalg.lstsq(X[batch.sequence()], per_pull, rcond=None)[0]
    np.testing.assert_allclose(fit.theta, ref, rtol=1e-9, atol=1e-12)
    # Rank-deficient pulls (2 arms in R^4): lstsq's minimum-norm solution.
    counts2 = np.array([4, 0, 0, 3, 0, 0, 0])
    b2 = Batch.from_allocation(counts2)
    y2 = X[b2.sequence()] @ theta + rng.standard_normal(b2.n_pulls)
    fit2 = LeastSquares.from_sums(X, counts2, np.bincount(b2.sequence(), weights=y2,
                                                           minlength=7))
    ref2 = np.linalg.lstsq(X[b2.sequence()], y2, rcond=None)[0]
    np.testing.assert_allclose(fit2.theta, ref2, rtol=1e-8, atol=1e-10)
    assert fit2.rank == 2


def test_rage_phase_estimate_is_lstsq_of_the_phase():
    # The estimate RAGE eliminates with is least squares on that phase's pulls alone.
    env = make_instance("soare", d=3)
    alg = RAGE(env.X, env.Z, 0.05)
    batch = alg.next_batch()
    rng = np.random.default_rng(3)
    seq = batch.sequence()
    per_pull = env.X[seq] @ env.theta + rng.standard_normal(seq.size)
    alg.observe(batch, batch.sum_runs(per_pull))
    ref = np.linalg.lstsq(env.X[seq], per_pull, rcond=None)[0]
    fit = LeastSquares.from_sums(env.X, batch.allocation(env.n_arms),
                                 np.bincount(seq, weights=per_pull, minlength=env.n_arms))
    np.testing.assert_allclose(fit.theta, ref, rtol=1e-8)


def test_huge_phase_costs_no_more_than_small_one():
    # A phase of ~10^7 pulls is answered from per-arm sums: same work as a small one. Checked
    # by the memory used, not by a clock: nothing may expand a batch into its pulls.
    tracemalloc.start()  # numpy reports its buffers: one array per pull would need > 8 MB
    env = LinearBandit(np.eye(3), np.array([1.0, 0.999, 0.0]))
    alg = RAGE(env.X, env.Z, 0.05)
    try:
        tr = _run(alg, env)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert tr.correct and tr.n_pulls > 10**6
    assert peak < 8 * 10**6 < 8 * tr.n_pulls


def test_design_memo_changes_no_number():
    from banditkit.identification import rage

    env = make_instance("transductive", d=6)
    rage.DESIGN_MEMO.clear()
    cold = _run(RAGE(env.X, env.Z, 0.05), env, seed=2)
    warm = _run(RAGE(env.X, env.Z, 0.05), env, seed=2)
    assert cold.decisions.same_as(warm.decisions) and cold.n_pulls == warm.n_pulls


@pytest.mark.parametrize("factors", [
    # arm 0's mean as a fraction of its current-phase elimination threshold, per phase (the
    # other arms' means are 0). (0.9, 0.95, 1.2): no phase alone eliminates before phase 3, but
    # phases 1 and 2 pooled would. (-0.9, 1.05): phase 2 alone eliminates items 1 and 2; pooled
    # with phase 1 it would not.
    (0.9, 0.95, 1.2),
    (-0.9, 1.05),
])
def test_rage_eliminates_on_the_current_phase_pulls_alone(factors):
    """RAGE's eliminations are ``dominated`` on the least-squares fit of the current phase's
    pulls only (Algorithm 1, line 8 of Fiez et al.), on noiseless rewards chosen so that the fit
    on all phases' pulls would eliminate differently."""
    from banditkit.identification.elimination import dominated

    X = np.eye(3)
    alg = RAGE(X, X, 0.05)
    counts_all, sums_all = np.zeros(3), np.zeros(3)
    pooled_differs = False
    for t, factor in enumerate(factors, start=1):
        batch = alg.next_batch()
        assert batch is not None
        n = batch.allocation(3).astype(float)
        width = math.sqrt(2 * math.log(3**2 * t * t / 0.05))
        # ||e_0 − e_j||_{A⁻¹} = sqrt(1/n_0 + 1/n_j) with A = diag(n): the pair's threshold
        means = np.zeros(3)
        means[0] = factor * width * math.sqrt(1 / n[0] + 1 / n[1:].min())
        rewards = batch.counts * means[batch.arms]
        before = alg.active.copy()
        alg.observe(batch, rewards)
        counts_all += n
        sums_all += n * means
        phase = dominated(X, before, LeastSquares.from_batch(X, batch, rewards), width)
        pooled = dominated(X, before, LeastSquares.from_sums(X, counts_all, sums_all), width)
        assert alg.active.tolist() == before[~phase].tolist()
        pooled_differs |= bool(np.any(phase != pooled))
    assert alg.next_batch() is None and alg.recommendation == 0
    assert pooled_differs  # the rewards really tell the two rules apart


@pytest.mark.parametrize(("name", "kw"), [
    ("soare", {"d": 4}),
    ("many-arms", {"n": 30, "rng": np.random.default_rng(5)}),
])
def test_each_phase_is_the_rounded_design_of_the_active_items(name, kw):
    """Phase t pulls exactly ``round_allocation(λ_t, N_t)``: λ_t the XY design of the *active*
    items' differences, N_t = max(⌈2·4^t ρ_t (1+ε) log(|Z|²t²/δ)⌉, r(ε)) with r(ε) = 2p/ε for
    the support size p of λ_t (Appendix B), not the number of arms. On these instances the
    active set shrinks after phase 1, and r(ε) sets N_t in several soare phases (p = 4 < K = 5).
    """
    from banditkit.design import pairwise_design, round_allocation, rounding_min_samples

    env = make_instance(name, **kw)
    alg = RAGE(env.X, env.Z, 0.05)
    noise = np.random.default_rng(0)
    t = 0
    while True:
        active = alg.active.copy()
        batch = alg.next_batch()
        if batch is None:
            break
        t += 1
        design, rho = pairwise_design(env.X, env.Z, active, alg.design_tol)
        n_t = max(math.ceil(2 * 4.0**t * rho * 1.1 * math.log(env.n_items**2 * t * t / 0.05)),
                  rounding_min_samples(design.support.size, 0.1))
        assert batch.allocation(env.n_arms).tolist() == round_allocation(design.weights,
                                                                          n_t).tolist()
        assert alg.info["design_values"][-1] == rho
        alg.observe(batch, env.pull(batch, noise).rewards)
    assert t >= 3 and alg.recommendation == env.best_item()
