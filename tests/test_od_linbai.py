"""OD-LinBAI (Yang & Tan 2022, Algorithm 1), as Xiong et al. run it (Appendix D)."""

from __future__ import annotations

import numpy as np
import pytest

from banditkit.design import design_value, round_allocation
from banditkit.envs import NonStationaryLinearBandit
from banditkit.envs.instances import make_instance
from banditkit.identification.od_linbai import ODLinBAI, phase_design
from banditkit.simulate import simulate

TOL = 0.01


def exact_sums(X: np.ndarray, batch, theta: np.ndarray) -> np.ndarray:
    return batch.counts * (X[batch.arms] @ theta)


def test_phase_budget_closed_form():
    X = make_instance("soare", d=10, omega=0.1).X  # K = 11, R = 4, keep 5, 3, 2, 1
    algo = ODLinBAI(X, None, 10_000)
    assert algo.n_phases == 4 and algo.keep == [5, 3, 2, 1]
    assert algo.m == (10_000 - 11 - (5 + 3 + 2)) / 4
    X = make_instance("multivariate-testing", rng=np.random.default_rng(0), D=5).X  # 32 x 16
    algo = ODLinBAI(X, None, 10_000)
    assert algo.n_phases == 4 and algo.keep == [8, 4, 2, 1]
    assert algo.m == (10_000 - 32 - (8 + 4 + 2)) / 4
    X = np.vstack([np.eye(3), np.ones((40, 3)) + np.arange(40)[:, None] * [0, 0, 1e-3]])
    # K = 43 > d(d+1)/2 = 6
    algo = ODLinBAI(X, None, 1000)
    assert algo.n_phases == 2 and algo.m == (1000 - 6 - 2) / 2


@pytest.mark.parametrize("T", [11, 12, 30, 31, 500, 10_001])
def test_exactly_budget_pulls_and_halving_sizes(T):
    env = make_instance("soare", d=10, omega=0.5)
    algo = ODLinBAI(env.X, None, T, rng=T)
    trial = simulate(algo, env, seed=2)
    assert trial.n_pulls == T and trial.stopped
    assert trial.info["survivors"] == [11, 5, 3, 2, 1]  # ⌈d / 2^r⌉ after phase r
    assert trial.decisions.n_batches == 4
    assert trial.recommendation == int(algo.active[0])
    assert trial.info["short_budget"] == (T <= 21)


def test_phase_counts_are_ceil_of_design_times_m_and_last_takes_the_rest():
    env = make_instance("soare", d=10, omega=0.3)
    X, T = env.X, 5000
    algo = ODLinBAI(X, None, T, rng=0)
    rng = np.random.default_rng(0)
    for r in range(algo.n_phases):
        design = phase_design(X, algo.active, TOL)
        remaining = algo.remaining
        batch = algo.next_batch()
        got = batch.allocation(11)
        assert got[np.setdiff1d(np.arange(11), design.arms)].sum() == 0  # survivors only
        if r < algo.n_phases - 1:
            np.testing.assert_array_equal(got[design.arms],
                                          np.ceil(design.weights * algo.m).astype(int))
        else:
            np.testing.assert_array_equal(got[design.arms],
                                          round_allocation(design.weights, remaining))
        algo.observe(batch, exact_sums(X, batch, env.theta) + rng.normal(size=batch.n_runs))
    assert algo.remaining == 0 and algo.next_batch() is None


def test_short_budget_still_runs_every_phase():
    X = make_instance("soare", d=10, omega=0.3).X
    algo = ODLinBAI(X, None, 11, rng=0)
    assert algo.m <= 0 and algo.short_budget
    sizes = []
    while (batch := algo.next_batch()) is not None:
        sizes.append(batch.n_pulls)
        algo.observe(batch, np.zeros(batch.n_runs))
    assert sizes[:-1] == [11 // 4] * 3 and sum(sizes) == 11


def test_dimension_reduction():
    X = make_instance("soare", d=6, omega=0.4).X
    for arms in ([0, 1, 6], [0, 6], [2, 3, 4], [1, 6], [0, 1, 2, 3, 4], [0, 1, 2, 3, 4, 6],
                 list(range(7))):
        arms = np.array(arms)
        pd = phase_design(X, arms, TOL)
        rank = np.linalg.matrix_rank(X[arms])
        assert pd.dim == rank and pd.features.shape == (arms.size, rank)
        np.testing.assert_allclose(pd.basis.T @ pd.basis, np.eye(rank), atol=1e-12)
        # Coordinates in an orthonormal basis of the span: inner products preserved.
        np.testing.assert_allclose(pd.features @ pd.features.T, X[arms] @ X[arms].T,
                                   atol=1e-12)
        # G-optimal in R^{d_r}: value d_r (Kiefer–Wolfowitz) within the tolerance.
        value = design_value(pd.features, pd.weights)
        assert rank - 1e-9 <= value <= rank * (1 + TOL)
    # Set, not order: the memoised design of a permuted arm set is the same object.
    assert phase_design(X, np.array([6, 0, 1]), TOL) is phase_design(X, np.array([0, 1, 6]),
                                                                      TOL)


def test_each_phase_ranks_by_its_own_data():
    """Phase 1 (θ1) keeps arms 0 and 1; phase 2 (θ2 favours arm 1 by a hair) must pick arm 1.
    Pooling both phases would pick arm 0 (it led phase 1 by a wide margin)."""
    X = np.eye(4)
    algo = ODLinBAI(X, None, 400, rng=0)
    thetas = [np.array([3.0, 2.0, 0.0, 0.0]), np.array([0.0, 1e-3, 0.0, 0.0])]
    for theta in thetas:
        batch = algo.next_batch()
        algo.observe(batch, exact_sums(X, batch, theta))
    assert algo.info["survivors"] == [4, 2, 1]
    assert algo.recommendation == 1
    np.testing.assert_allclose(X[:2] @ algo.theta_hat, [0.0, 1e-3], atol=1e-12)


def test_one_dimension():
    X = np.array([[1.0], [2.0], [-1.0]])
    algo = ODLinBAI(X, None, 9, rng=0)
    assert algo.n_phases == 1
    batch = algo.next_batch()
    assert batch.n_pulls == 9
    algo.observe(batch, exact_sums(X, batch, np.array([1.0])))
    assert algo.recommendation == 1


def test_pull_order_is_a_permutation_drawn_from_xi():
    X = make_instance("soare", d=10, omega=0.3).X
    batches = [ODLinBAI(X, None, 4000, rng=s).next_batch() for s in (5, 5, 6)]
    np.testing.assert_array_equal(batches[0].sequence(), batches[1].sequence())
    assert not np.array_equal(batches[0].sequence(), batches[2].sequence())
    np.testing.assert_array_equal(batches[0].allocation(11), batches[2].allocation(11))
    assert batches[0].n_runs > 100
    alloc = batches[0].allocation(11)
    np.testing.assert_array_equal(
        batches[0].sequence(),
        np.random.default_rng(5).permutation(np.repeat(np.arange(11), alloc)))


def test_low_error_on_a_stationary_instance():
    env = make_instance("soare", d=5, omega=0.5)
    errors = sum(not simulate(ODLinBAI(env.X, None, 1000, rng=s), env, seed=100 + s).correct
                 for s in range(60))
    assert errors <= 4


def test_fails_on_the_malicious_schedule():
    """Xiong et al., Appendix D.1, Fig. 4: phase 1 falls in the first third, where e1 is the
    worst arm, so e1 is dropped although it is best on average."""
    T, d = 3000, 10
    X = make_instance("soare", d=d, omega=0.5).X
    schedule = np.zeros((T, d))
    schedule[: T // 3, 1:] = 1.0
    schedule[T // 3:, 0] = 2.0
    env = NonStationaryLinearBandit(X, schedule)
    assert env.best_item() == 0
    errors = sum(not simulate(ODLinBAI(X, None, T, rng=s), env, seed=s).correct
                 for s in range(20))
    assert errors >= 18


def test_bad_input_refused():
    X = make_instance("soare", d=5, omega=0.5).X
    with pytest.raises(ValueError, match="Z must be None or equal to X"):
        ODLinBAI(X, X[:3], 100)
    ODLinBAI(X, X.copy(), 100)  # Z equal to X is fine
    with pytest.raises(ValueError, match="budget"):
        ODLinBAI(X, None, 5)
    with pytest.raises(TypeError, match="budget"):
        ODLinBAI(X, None, 1e3)
    with pytest.raises(ValueError, match="design_tol"):
        ODLinBAI(X, None, 100, design_tol=-1.0)
    with pytest.raises(ValueError, match="span"):
        ODLinBAI(np.ones((4, 2)), None, 100)
