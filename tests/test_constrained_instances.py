"""The constrained instances of the DEBORA figures, the Slater strategy x◇, and huge batches
answered from sufficient statistics."""

from __future__ import annotations

import numpy as np
import pytest

from banditkit.envs.constrained import MAX_BETA_PULLS, slater_strategy
from banditkit.envs.instances import make_instance
from banditkit.protocol import Batch


def test_soft_instance_optimum_mixes_two_arms_on_the_boundary():
    env = make_instance("constrained-soft")
    x = env.optimal_strategy
    assert np.flatnonzero(x > 1e-9).tolist() == [1, 2]
    np.testing.assert_allclose(x[[1, 2]], [0.5, 0.5], atol=1e-9)
    np.testing.assert_allclose(env.G @ x, [0.5, 0.475], atol=1e-9)
    # no pure arm is both safe and as good: the mixture is needed
    safe_arms = np.all(env.G <= env.alpha[:, None], axis=0)
    assert env.r[safe_arms].max() < env.optimal_value


@pytest.mark.parametrize("lam", [0.05, 0.1, 0.2])
def test_hard_instance_has_the_requested_slater_margin(lam):
    env = make_instance("constrained-hard", lambda_min=lam)
    x = env.safe_strategy
    margins = env.alpha - env.G @ x
    assert margins.min() == pytest.approx(lam)
    # x◇ maximises the smallest margin: no vertex or random strategy does better
    rng = np.random.default_rng(0)
    for y in np.vstack([np.eye(5), rng.dirichlet(np.ones(5), 500)]):
        assert (env.alpha - env.G @ y).min() <= lam + 1e-9


def test_slater_strategy_refuses_when_nothing_is_strictly_safe():
    G = np.array([[0.5, 0.6], [0.7, 0.5]])
    with pytest.raises(ValueError, match="no strictly safe strategy"):
        slater_strategy(G, np.array([0.5, 0.5]))
    x, margins = slater_strategy(G, np.array([0.6, 0.6]))
    assert margins.min() > 0 and x.sum() == pytest.approx(1.0)


def test_hard_instance_bad_margins_refused():
    with pytest.raises(ValueError, match="lambda_min"):
        make_instance("constrained-hard", lambda_min=0.0)
    with pytest.raises(ValueError, match="thresholds outside"):
        make_instance("constrained-hard", lambda_min=0.95)


def test_huge_batches_answered_from_sufficient_statistics():
    """A batch of 10¹⁵ Bernoulli pulls is one Binomial per run (within 6 sd of n·mean); Beta
    noise, drawn pull by pull, refuses a batch above MAX_BETA_PULLS before drawing anything."""
    env = make_instance("constrained-soft")
    batch = Batch(np.array([1, 3]), np.array([10**15, 3 * 10**14]), strategy=np.full(5, 0.2))
    out = env.pull(batch, np.random.default_rng(0))
    n = batch.counts.astype(float)
    for sums, mean in [(out.rewards, env.r[batch.arms])] + [
            (out.costs[:, i], env.G[i, batch.arms]) for i in range(2)]:
        assert np.all(np.abs(sums - n * mean) < 6 * np.sqrt(n * mean * (1 - mean)))
    assert env.regret(batch) == pytest.approx(n * (env.optimal_value - 0.2 * env.r.sum()))
    beta = make_instance("constrained-soft", noise="beta")
    rng = np.random.default_rng(1)
    state = rng.bit_generator.state
    with pytest.raises(ValueError, match="noise='beta' draws every pull"):
        beta.pull(Batch(np.array([0]), np.array([MAX_BETA_PULLS + 1])), rng)
    assert rng.bit_generator.state == state
