"""The K-armed environments' noise one pull at a time, for compiled kernels: the reward
:meth:`BernoulliBandit.pull <banditkit.envs.multi_armed.BernoulliBandit.pull>` and
:meth:`GaussianBandit.pull <banditkit.envs.multi_armed.GaussianBandit.pull>` draw for a run of
one pull, from the same ``Generator`` values in the same order.

* Bernoulli: numpy's ``binomial(1, μ)`` reads one uniform U and inverts: U > (1 − μ) for
  μ ≤ ½, U ≤ 1 − (1 − μ) otherwise (it inverts the complement and returns 1 − X);
  :func:`~banditkit.envs.multi_armed.bernoulli_rule` gives each arm's threshold and direction.
* Gaussian: n·μ + z·√n·σ with n = 1 and z one standard normal.

This module imports numba (through :func:`banditkit.jit.njit`) when imported: only kernel
modules import it.
"""

from __future__ import annotations

import numpy as np

from ..jit import njit
from .multi_armed import bernoulli_rule, bernoulli_rules

__all__ = ["bernoulli_rule", "bernoulli_rules", "one_reward"]


@njit
def one_reward(noise: np.random.Generator, gaussian: bool, arm: int, means: np.ndarray,
               thresholds: np.ndarray, below: np.ndarray, sigma: float) -> float:
    """One pull's reward of ``arm``, as the environment's ``pull`` draws it."""
    if gaussian:
        return 1.0 * means[arm] + noise.standard_normal() * 1.0 * sigma
    u = noise.random()
    return 1.0 if (u > thresholds[arm]) != below[arm] else 0.0
