"""DEBORA's starting estimates (Bollini et al., Algorithms 2–4, line 4: r̂_0(a) = ½ for every
arm; the paper gives no ĝ_0, the module documents ½): pinned by value and by the decisions
they make (issue 17 §2).

An arm never pulled has width ζ(max{0, 1}) = ζ(1), the width of an arm pulled once, so right
after epoch 0 (arm 0 pulled once) the choice between arm 0 and an unpulled arm is decided by
r̂(0) against r̂_0 alone. The expected estimates r̂(0) are computed here by RepMean from the
paper's constants (line 2), independently of the policy."""

from __future__ import annotations

import math

import numpy as np
import pytest

from banditkit.envs.constrained import slater_strategy
from banditkit.estimation.replicable_mean import replicable_means
from banditkit.policies.constrained.debora import DEBORA, DEBORAH, DEBORAS
from banditkit.protocol import Batch

RHO, DELTA, K, T = 0.2, 0.01, 3, 1000
G = np.array([[0.2, 0.6, 0.5]])
ALPHA = np.array([0.55])


def _constants(name: str, m: int = 0) -> tuple[float, float, float]:
    """ρ', δ' of line 2 and the narrowest width multiplier c (RepMean at ρ'_c ≈ 1/1.2), and
    ρ'_c = 2δ' + (ρ' − 2δ')/c: the finest RepMean grid, where an estimate from one pull can
    land inside (0, 1)."""
    if name == "DEBORA":
        denominator = 2 * K * max(1, math.ceil(math.log(T)))
    else:
        denominator = 2 * (m + 1) * K**2 * max(1, math.ceil(math.log2(T)))
    rp, dp = RHO / denominator, DELTA / denominator
    c = 1.2 * (rp - 2 * dp) / (1 - 2 * dp)
    return dp, c, 2 * dp + (rp - 2 * dp) / c


def _seeds_around_half(offset_of_seed, dp: float, rho_c: float) -> tuple[int, int]:
    """Two seeds of ξ whose first RepMean estimate of arm 0 (one reward of ½) falls just below
    ½ and at or just above it."""
    below = above = None
    for seed in range(3000):
        u = offset_of_seed(seed)
        est = replicable_means(np.array([0.5]), np.array([1]), rho_c, dp, np.array([u]))[0]
        if below is None and 0.45 < est < 0.5:
            below = seed
        if above is None and 0.5 <= est < 0.55:
            above = seed
        if below is not None and above is not None:
            return below, above
    raise AssertionError("no seed puts the estimate near 1/2")


def _first_two_epochs(policy, cost: bool) -> tuple[Batch, Batch]:
    first = policy.next_batch()
    assert first.arms.tolist() == [0] and first.n_pulls == 1  # a_0 / x_0: all tie at ½
    costs = np.full((1, 1), 0.5) if cost else None
    policy.observe(first, np.array([0.5]), costs)
    return first, policy.next_batch()


def test_debora_starts_every_arm_at_one_half():
    p = DEBORA(K, T, rho=RHO, delta=DELTA, rng=0)
    np.testing.assert_array_equal(p.estimates, np.full(K, 0.5))


def test_debora_never_pulled_arms_keep_one_half_and_decide_against_the_pulled_arm():
    dp, c, rho_c = _constants("DEBORA")
    below, above = _seeds_around_half(lambda s: np.random.default_rng(s).random(), dp, rho_c)
    for seed, expected_arm in ((below, 1), (above, 0)):
        p = DEBORA(K, T, rho=RHO, delta=DELTA, rng=seed, width_scale=c)
        _, second = _first_two_epochs(p, cost=False)
        # r̂(0) < ½ = r̂_0: the unpulled arm 1 (lowest index of the tied) wins; r̂(0) ≥ ½: arm 0
        assert second.arms.tolist() == [expected_arm], (seed, p.estimates)
        np.testing.assert_array_equal(p.estimates[1:], [0.5, 0.5])


def _constrained(cls, seed: int, c: float):
    if cls is DEBORAS:
        return DEBORAS(K, T, ALPHA, rho=RHO, delta=DELTA, rng=seed, width_scale=c)
    x_safe, margins = slater_strategy(G, ALPHA)
    return DEBORAH(K, T, ALPHA, x_safe, safe_margins=margins, rho=RHO, delta=DELTA, rng=seed,
                   width_scale=c)


def _reward_offset(seed: int) -> float:
    # DEBORA-S/H derive the action stream first (four integers of ξ), then draw (m + 1)K
    # offsets per epoch: row 0 is the rewards', column 0 arm 0's
    xi = np.random.default_rng(seed)
    xi.integers(0, 2**63, size=4)
    return float(xi.random((2, K))[0, 0])


@pytest.mark.parametrize("cls", [DEBORAS, DEBORAH])
def test_constrained_debora_starts_rewards_and_costs_at_one_half(cls):
    p = _constrained(cls, 0, 1.0)
    p.next_batch()
    record = p.epochs[0]
    np.testing.assert_array_equal(record.rewards, np.full(K, 0.5))
    np.testing.assert_array_equal(record.costs, np.full((1, K), 0.5))


@pytest.mark.parametrize("cls", [DEBORAS, DEBORAH])
def test_constrained_debora_priors_decide_the_second_epoch(cls):
    dp, c, rho_c = _constants("DEBORA-S", m=1)
    below, above = _seeds_around_half(_reward_offset, dp, rho_c)
    for seed, arm0_best in ((below, False), (above, True)):
        p = _constrained(cls, seed, c)
        _first_two_epochs(p, cost=True)
        record = p.epochs[1]
        # arms 1 and 2 were never pulled: ½ for reward and cost (line 4; ĝ_0 = ½ as documented)
        np.testing.assert_array_equal(record.rewards[1:], [0.5, 0.5])
        np.testing.assert_array_equal(record.costs[:, 1:], [[0.5, 0.5]])
        assert record.counts.tolist() == [1, 0, 0]
        # equal widths ζ(1) for all three arms, costs far inside the optimistic set (ζ ≫ 1):
        # x̃_1 is all on arm 0 exactly when r̂(0) ≥ r̂_0 = ½
        assert record.widths.min() == record.widths.max() > 1
        assert (record.optimistic[0] == 1.0) == arm0_best, (seed, record.rewards)
