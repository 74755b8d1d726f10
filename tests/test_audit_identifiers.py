"""The replicability audit on best-arm identifiers: same pulls and same recommendation."""

import numpy as np
import pytest

from banditkit import simulate
from banditkit.envs import LinearBandit
from banditkit.envs.instances import make_instance
from banditkit.experiments.replicability import audit
from banditkit.registry import get_policy, make_policy, policy_names
from banditkit.rng import STREAMS, derive_seed, stream


@pytest.mark.parametrize("name", ["RAGE", "XYStatic", "XYOracle", "XYAdaptive", "LinGapE",
                                  "ALBA"])
def test_every_identifier_is_registered(name):
    assert name in policy_names()
    env = make_instance("soare", d=3, omega=0.3)
    algo = make_policy(name, env, np.random.default_rng(0), delta=0.05)
    assert algo.kind == "identification"


def test_rage_pairs_replicate_when_the_noise_vanishes():
    # RAGE draws no internal randomness, so with (almost) no noise both executions of every
    # pair see the same rewards up to 1e-9 and must take exactly the same decisions.
    base = make_instance("soare", d=3, omega=0.3)
    env = LinearBandit(base.X, base.theta, sigma=1e-9)
    result = audit(get_policy("RAGE").factory, env, pairs=4, params={"delta": 0.05})
    assert result.n_identical == 4
    assert np.all(result.differences == 0)


def test_audit_counts_agree_with_a_direct_comparison_of_the_executions():
    env = make_instance("soare", d=3, omega=0.3)
    factory = get_policy("RAGE").factory
    result = audit(factory, env, pairs=5, seed=3, params={"delta": 0.05})
    identical, diffs = [], []
    for j in range(5):
        runs = []
        for e in (0, 1):
            algo = factory(env, stream(3, "audit", j, "algorithm"), delta=0.05)
            noise = derive_seed(3, "audit", j, e, STREAMS["environment"])
            runs.append(simulate(algo, env, seed=noise))
        a, b = runs
        identical.append(a.decisions.same_as(b.decisions)
                         and a.recommendation == b.recommendation)
        diffs.append(a.decisions.count_differences(b.decisions))
    assert result.n_identical == sum(identical)
    assert result.differences.tolist() == diffs
    # RAGE is δ-PAC: every execution recommends the best item (index 0 on Soare).
    assert np.all(result.recommendations == 0)


def test_oracle_refuses_an_environment_without_theta():
    from banditkit.envs import BernoulliBandit

    with pytest.raises(ValueError, match="linear environment"):
        make_policy("RAGE", BernoulliBandit([0.1, 0.2]), np.random.default_rng(0))
