"""The default constants of the GLR-stopped linear identifiers against Jedra & Proutière (2020):
c of the paper threshold (stopping needs A_t ⪰ cI; default λ_min(A₀), the spanning set's Gram
matrix) and c₀ of Track-and-Stop's forced exploration f(t) = c₀√t (default λ_min(A₀)/√d, so that
f(d) ≤ λ_min(A₀): no forced pull right after the spanning pulls), on arms whose spanning set is
not orthonormal (λ_min(A₀) ≠ 1, where a constant 1 would pass unnoticed)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from banditkit import simulate
from banditkit.envs.linear import LinearBandit
from banditkit.identification.fw_sampling import FrankWolfeSampling
from banditkit.identification.lingame import LinGame
from banditkit.identification.track_and_stop import LinearTrackAndStop

# arms 3e_1, 2e_2 + 0.5e_1, 0.5e_3 and a mixed arm: the spanning set's Gram matrix has
# λ_min well away from 1
X = np.array([[3.0, 0.0, 0.0], [0.5, 2.0, 0.0], [0.0, 0.0, 0.5], [2.0, 1.0, 0.4]])
THETA = np.array([1.0, 0.6, 0.2])
ENV = LinearBandit(X, THETA, sigma=1.0)


def _lambda0(alg) -> float:
    B = X[alg.basis]
    return float(np.linalg.eigvalsh(B.T @ B)[0])


@pytest.mark.parametrize("cls", [LinearTrackAndStop, FrankWolfeSampling, LinGame])
def test_default_c_is_lambda_min_of_the_spanning_pulls(cls):
    alg = cls(X, None, 0.1)
    lam0 = _lambda0(alg)
    assert not math.isclose(lam0, 1.0, rel_tol=0.05)
    assert alg.c == pytest.approx(lam0, rel=1e-12)
    assert cls(X, None, 0.1, c=0.3).c == 0.3
    # stopping waits for λ_min(A_t) ≥ c: with c far above what the run can reach it never stops
    tr = simulate(cls(X, None, 0.1, c=1e6), ENV, horizon=400, seed=2)
    assert not tr.stopped
    tr = simulate(cls(X, None, 0.1), ENV, horizon=20_000, seed=2)
    assert tr.stopped and tr.correct


def test_default_forced_scale_is_lambda0_over_sqrt_d():
    alg = LinearTrackAndStop(X, None, 0.1)
    lam0 = _lambda0(alg)
    assert alg.forced_scale == pytest.approx(lam0 / math.sqrt(3), rel=1e-12)
    # f(d) = c₀√d = λ_min(A₀): the first decision after the spanning pulls is not forced
    simulate(alg, ENV, horizon=4, seed=0)
    assert alg.forced == 0
    # and forced exploration keeps λ_min(A_t) ≥ c₀√t (up to one round of d pulls)
    alg = LinearTrackAndStop(X, None, 1e-300)
    simulate(alg, ENV, horizon=4000, seed=1)
    lam = np.linalg.eigvalsh(alg.state.A)[0]
    assert lam >= alg.forced_scale * math.sqrt(alg.state.t) - 3 * np.max(
        np.sum(X ** 2, axis=1))
