"""XY-static and XY-oracle with their phases in chunks (xy_blocks): the rounding of the design to
many budgets at once, and the decisions, noise stream and horizon of simulate."""

import math
from functools import partial

import numpy as np
import pytest

from banditkit.design import round_allocation, round_allocations
from banditkit.envs.instances import make_instance
from banditkit.estimation.least_squares import LeastSquares
from banditkit.identification.elimination import certified_best
from banditkit.identification.xy import XYOracle, XYStatic
from banditkit.identification.xy_blocks import _phase_ends, simulate_static_allocation
from banditkit.identification.xy_schedule import (
    CHUNK,
    SCHEDULE_MEMO,
    PhaseSchedule,
    phase_schedule,
)
from banditkit.rng import stream
from banditkit.simulate import simulate as simulate_auto

# the protocol loop: the reference every engine is checked against (simulate's default
# takes the algorithm's engine, see banditkit.engines)
simulate = partial(simulate_auto, engine="reference")


def test_round_allocations_is_round_allocation_for_every_budget():
    rng = np.random.default_rng(0)
    for _ in range(300):
        K = int(rng.integers(1, 12))
        w = rng.random(K) * (rng.random(K) < 0.7)
        if w.sum() == 0:
            w[0] = 1.0
        w /= w.sum()
        budgets = rng.integers(0, 300, size=15)
        got = round_allocations(w, budgets)
        for row, n in zip(got, budgets, strict=True):
            np.testing.assert_array_equal(row, round_allocation(w, int(n)))


def test_round_allocations_ties_go_to_the_lowest_index():
    # Equal weights: phase 2's unit moves (up for n = 5, 6; down from ⌈5/4⌉ = 2 each for
    # n = 7) go to the first arms, as round_allocation's.
    w = np.full(4, 0.25)
    np.testing.assert_array_equal(round_allocations(w, np.array([5, 6, 7])),
                                  [[2, 1, 1, 1], [2, 2, 1, 1], [1, 2, 2, 2]])


@pytest.mark.parametrize("cls", [XYOracle, XYStatic])
@pytest.mark.parametrize("d", [3, 6])
def test_chunks_take_the_decisions_of_simulate(cls, d):
    env = make_instance("soare", d=d, omega=0.05)
    for i in range(3):
        kw = {"theta": env.theta} if cls is XYOracle else {}
        a, b = cls(env.X, env.Z, 0.05, **kw), cls(env.X, env.Z, 0.05, **kw)
        ra, rb = stream(4, "xy", d, i), stream(4, "xy", d, i)
        ta = simulate(a, env, seed=ra)
        tb = simulate_static_allocation(b, env, seed=rb)
        assert ta.decisions.same_as(tb.decisions) and ta.n_batches == tb.n_batches
        assert (ta.n_pulls, ta.stopped, ta.recommendation) == (tb.n_pulls, tb.stopped,
                                                               tb.recommendation)
        np.testing.assert_array_equal(ta.counts, tb.counts)
        np.testing.assert_array_equal(a.sums, b.sums)
        assert a.phase == b.phase
        assert ra.standard_normal() == rb.standard_normal()  # the stream stands at the same place


@pytest.mark.parametrize("horizon", [1, 7, 500, 20_000, 20_001])
def test_the_horizon_cuts_the_last_phase_as_simulate_does(horizon):
    env = make_instance("soare", d=4, omega=0.01)
    a = XYOracle(env.X, env.Z, 0.05, env.theta)
    b = XYOracle(env.X, env.Z, 0.05, env.theta)
    ta = simulate(a, env, seed=2, horizon=horizon)
    tb = simulate_static_allocation(b, env, seed=2, horizon=horizon)
    assert ta.n_pulls == tb.n_pulls == horizon
    assert ta.decisions.same_as(tb.decisions) and not tb.stopped
    assert ta.recommendation == tb.recommendation
    np.testing.assert_array_equal(a.counts, b.counts)
    np.testing.assert_allclose(a.sums, b.sums, rtol=1e-12)
    assert (a.phase, a._target) == (b.phase, b._target)


def test_other_environments_and_multinomial_sampling_go_through_simulate():
    env = make_instance("soare", d=3, omega=0.3)
    a = XYStatic(env.X, env.Z, 0.1, sampling="multinomial", rng=np.random.default_rng(1))
    b = XYStatic(env.X, env.Z, 0.1, sampling="multinomial", rng=np.random.default_rng(1))
    assert simulate(a, env, seed=5).decisions.same_as(
        simulate_static_allocation(b, env, seed=5).decisions)


# --- the phase schedule shared by every trial (xy_schedule) ------------------------------------

def _schedule_reference(X, weights, gamma, n_phases):
    """Cumulative pulls and A⁺ after each phase, one phase at a time as XYStatic does."""
    counts, target, rows, invs, ranks = np.zeros(X.shape[0], dtype=np.int64), 0, [], [], []
    for t in range(1, n_phases + 1):
        target += math.ceil(gamma ** t)
        counts = np.maximum(counts, round_allocation(weights, target))
        rows.append(counts.copy())
        fit = LeastSquares.from_sums(X, counts, np.zeros(X.shape[0]))
        invs.append(fit.A_inv)
        ranks.append(fit.rank)
    return np.array(rows), np.array(invs), np.array(ranks)


@pytest.mark.parametrize("gamma", [1.1, 1.35])
@pytest.mark.parametrize("name", ["transductive", "soare"])
def test_the_schedule_is_the_phase_by_phase_rounding_and_fit(gamma, name):
    # soare's last arm is not axis-aligned: A's null directions have eigenvalues ~1e-17, not 0
    env = make_instance(name, d=6) if name == "transductive" else make_instance(name, d=5)
    alg = XYOracle(env.X, env.Z, 0.05, env.theta, gamma=gamma)
    lam = alg._design()
    sched = PhaseSchedule(env.X, lam, gamma)
    n_chunks = 3 if gamma < 1.2 else 2  # 1.35^192 pulls would not fit an int64
    n = (n_chunks - 1) * CHUNK + 5
    counts, invs, ranks = _schedule_reference(env.X, lam, gamma, n)
    for i in range(n_chunks):  # across chunk boundaries
        ch = sched.chunk(i)
        rows = slice(ch.first, ch.first + ch.n_phases)
        full = np.zeros((ch.n_phases, env.n_arms), dtype=np.int64)
        full[:, sched.support] = ch.counts
        k = min(ch.n_phases, n - ch.first)
        np.testing.assert_array_equal(full[:k], counts[rows][:k])
        np.testing.assert_array_equal(ch.ends[:k], counts[rows][:k].sum(axis=1))
        np.testing.assert_array_equal(ch.full_rank[:k], ranks[rows][:k] == env.X.shape[1])
        np.testing.assert_allclose(ch.A_inv[:k], invs[rows][:k], rtol=1e-9, atol=1e-12)
        # runs: phase by phase, arms ascending, summing to each phase's new pulls
        new = np.diff(np.vstack([counts[ch.first - 1] if ch.first else 0 * counts[0],
                                 counts[rows][:k]]), axis=0)
        for s in range(k):
            lo = ch.run_ends[s - 1] if s else 0
            arms = ch.arm_of[lo:ch.run_ends[s]]
            assert np.all(np.diff(arms) > 0) and np.all(ch.phase_of[lo:ch.run_ends[s]] == s)
            np.testing.assert_array_equal(arms, np.flatnonzero(new[s]))
            np.testing.assert_array_equal(ch.run_counts[lo:ch.run_ends[s]], new[s][arms])
            np.testing.assert_array_equal(sched.support[ch.pos_of[lo:ch.run_ends[s]]], arms)


def test_the_schedule_is_memoised_per_design_and_gamma():
    env = make_instance("soare", d=4, omega=0.05)
    lam = XYOracle(env.X, env.Z, 0.05, env.theta)._design()
    SCHEDULE_MEMO.clear()
    a = phase_schedule(env.X, lam, 1.1)
    assert phase_schedule(env.X.copy(), lam.copy(), 1.1) is a
    assert phase_schedule(env.X, lam, 1.35) is not a
    other = np.full(lam.size, 1.0 / lam.size)
    assert phase_schedule(env.X, other, 1.1) is not a


@pytest.mark.parametrize("gamma", [1.1, 1.35])
def test_trials_with_a_warm_schedule_equal_cold_ones_and_simulate(gamma):
    # Two gammas and two instances in one process: a schedule of another (design, γ) must never
    # be reused, and a warm schedule gives what a fresh one does.
    for env in (make_instance("transductive", d=6), make_instance("soare", d=5, omega=0.05)):
        for i in range(3):
            SCHEDULE_MEMO.clear() if i == 0 else None
            a = XYOracle(env.X, env.Z, 0.1, env.theta, gamma=gamma)
            b = XYOracle(env.X, env.Z, 0.1, env.theta, gamma=gamma)
            ta = simulate(a, env, seed=stream(7, i))
            tb = simulate_static_allocation(b, env, seed=stream(7, i))
            assert ta.decisions.same_as(tb.decisions)
            assert (ta.n_pulls, ta.recommendation, a.phase) == (tb.n_pulls, tb.recommendation,
                                                                b.phase)
            np.testing.assert_array_equal(a.counts, b.counts)
            np.testing.assert_allclose(a.sums, b.sums, rtol=1e-12)


def test_a_horizon_in_the_first_phase_of_a_later_chunk():
    # The cut phase's pulls start from the previous chunk's last counts.
    env = make_instance("soare", d=4, omega=0.01)
    lam = XYOracle(env.X, env.Z, 0.05, env.theta)._design()
    horizon = int(phase_schedule(env.X, lam, 1.1).chunk(0).ends[-1]) + 1
    a = XYOracle(env.X, env.Z, 0.05, env.theta)
    b = XYOracle(env.X, env.Z, 0.05, env.theta)
    ta = simulate(a, env, seed=3, horizon=horizon)
    tb = simulate_static_allocation(b, env, seed=3, horizon=horizon)
    assert ta.n_pulls == tb.n_pulls == horizon and ta.decisions.same_as(tb.decisions)
    np.testing.assert_array_equal(a.counts, b.counts)
    assert a.phase == b.phase == CHUNK + 1


@pytest.mark.parametrize("cls", [XYOracle, XYStatic])
def test_phase_ends_certify_where_the_rule_first_holds(cls):
    # The stopping rule on random fits against the sequential class's certified_best: random
    # items (the runner-up is often not the item that binds), random reward sums.
    rng = np.random.default_rng(11)
    hits = 0
    for _ in range(60):
        d, m = int(rng.integers(2, 5)), int(rng.integers(3, 9))
        Z = rng.normal(size=(m, d))
        X = np.vstack([np.eye(d), Z])
        theta = rng.normal(size=d)
        kw = {"theta": theta} if cls is XYOracle else {}
        alg = cls(X, Z, 0.3, **kw)
        sched = PhaseSchedule(X, alg._design(), alg.gamma)
        ch = sched.chunk(0)
        full = np.zeros((ch.n_phases, X.shape[0]))
        full[:, sched.support] = ch.counts
        sums = full * (X @ theta) + np.sqrt(full) * rng.normal(size=full.shape) * 100.0
        lead, certified = _phase_ends(X[sched.support], Z, ch, sums[:, sched.support], alg)
        want = -1
        for s in range(ch.n_phases):
            fit = LeastSquares.from_sums(X, full[s], sums[s])
            assert lead[s] == int(np.argmax(Z @ fit.theta))
            width = math.sqrt(2.0 * math.log(2.0 * (s + 1) ** 2 * alg._union / alg.delta))
            c = certified_best(Z, fit, width)
            if c is not None:
                want = s
                assert certified[s] == c
                break
        got = np.flatnonzero(certified >= 0)
        assert (int(got[0]) if got.size else -1) == want
        hits += want >= 0
    assert hits >= 10  # the rule is exercised where it holds, not only where it fails


def test_an_item_other_than_the_runner_up_can_hold_the_stop_back():
    # Z = {e1, 0.9 e1, e2}, θ̂ = (1, 0.85): the runner-up 0.9 e1 (gain 0.1) is certified from
    # about width² pulls of e1, but e2 (gain 0.15, direction e1 − e2) needs ~ 90 width²: the
    # phases in between must not stop.
    X = np.eye(2)
    Z = np.array([[1.0, 0.0], [0.9, 0.0], [0.0, 1.0]])
    alg = XYStatic(X, Z, 0.1, gamma=1.1)
    sched = PhaseSchedule(X, alg._design(), alg.gamma)
    ch = sched.chunk(0)
    full = np.zeros((ch.n_phases, 2))
    full[:, sched.support] = ch.counts
    sums = full * np.array([1.0, 0.85])
    lead, certified = _phase_ends(X[sched.support], Z, ch, sums[:, sched.support], alg)
    assert np.all(lead == 0)
    runner_ok, want = [], -1
    for s in range(ch.n_phases):
        fit = LeastSquares.from_sums(X, full[s], sums[s])
        width = math.sqrt(2.0 * math.log(2.0 * (ch.first + s + 1) ** 2 * 9 / 0.1))
        runner_ok.append(width * math.sqrt(fit.norms2(Z[0] - Z[1])[0]) <= 0.1)
        if want < 0 and certified_best(Z, fit, width) is not None:
            want = s
    assert want > 0 and any(runner_ok[:want])  # the runner-up alone would stop too early
    np.testing.assert_array_equal(np.flatnonzero(certified >= 0), [want])
