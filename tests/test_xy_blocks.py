"""XY-static and XY-oracle with their phases in chunks (xy_blocks): the rounding of the design to
many budgets at once, and the decisions, noise stream and horizon of simulate."""

import numpy as np
import pytest

from banditkit import simulate
from banditkit.design import round_allocation, round_allocations
from banditkit.envs.instances import make_instance
from banditkit.identification.xy import XYOracle, XYStatic
from banditkit.identification.xy_blocks import simulate_static_allocation
from banditkit.rng import stream


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


@pytest.mark.parametrize("horizon", [1, 7, 500, 20_000])
def test_the_horizon_cuts_the_last_phase_as_simulate_does(horizon):
    env = make_instance("soare", d=4, omega=0.01)
    a = XYOracle(env.X, env.Z, 0.05, env.theta)
    b = XYOracle(env.X, env.Z, 0.05, env.theta)
    ta = simulate(a, env, seed=2, horizon=horizon)
    tb = simulate_static_allocation(b, env, seed=2, horizon=horizon)
    assert ta.n_pulls == tb.n_pulls == horizon
    assert ta.decisions.same_as(tb.decisions) and not tb.stopped
    assert ta.recommendation == tb.recommendation


def test_other_environments_and_multinomial_sampling_go_through_simulate():
    env = make_instance("soare", d=3, omega=0.3)
    a = XYStatic(env.X, env.Z, 0.1, sampling="multinomial", rng=np.random.default_rng(1))
    b = XYStatic(env.X, env.Z, 0.1, sampling="multinomial", rng=np.random.default_rng(1))
    assert simulate(a, env, seed=5).decisions.same_as(
        simulate_static_allocation(b, env, seed=5).decisions)
