"""Constrained K-armed instances for the figures of Bollini et al., "Replicable Constrained
Bandits" (the paper has no experiment; these instances are ours, built from its claims).

* ``constrained-soft``: K = 5 Bernoulli arms, m = 2 cost constraints, thresholds 0.5; the
  optimal safe strategy mixes arms 1 and 2 (½, ½: reward 0.625, first constraint tight, the
  second slack at 0.475), so an algorithm must learn a mixed strategy on the boundary of the
  safe set — where soft-constraint algorithms accumulate violation.
* ``constrained-hard``: the same arms and costs with every threshold shifted by one constant,
  chosen so that the most strictly safe strategy x◇ (Assumption 2.2; arm 4 here) has Slater
  margin ``λ_min`` exactly. Shifting every α by the same constant keeps x◇ (it maximises the
  smallest margin) and moves λ_min by that constant; the optimal safe strategy changes with the
  thresholds.
"""

from __future__ import annotations

import numpy as np

from ..constrained import ConstrainedBandit, slater_strategy
from .registry import register_instance

__all__ = ["HARD_MARGINS", "SOFT_COSTS", "SOFT_REWARDS", "SOFT_THRESHOLDS", "constrained_hard",
           "constrained_soft"]

SOFT_REWARDS = (0.9, 0.7, 0.55, 0.4, 0.2)
SOFT_COSTS = ((0.9, 0.6, 0.4, 0.3, 0.1),
              (0.2, 0.3, 0.65, 0.5, 0.1))
SOFT_THRESHOLDS = (0.5, 0.5)
#: The Slater margins of the hard-constraint figure.
HARD_MARGINS = (0.05, 0.1, 0.2)


@register_instance("constrained-soft")
def constrained_soft(noise: str = "bernoulli") -> ConstrainedBandit:
    """K = 5, m = 2, optimal safe strategy (0, ½, ½, 0, 0); Bernoulli rewards and costs."""
    return ConstrainedBandit(np.array(SOFT_REWARDS), np.array(SOFT_COSTS),
                             np.array(SOFT_THRESHOLDS), noise=noise)


@register_instance("constrained-hard")
def constrained_hard(lambda_min: float = 0.1, noise: str = "bernoulli") -> ConstrainedBandit:
    """The soft instance's arms with thresholds shifted so that x◇ has margin ``lambda_min``
    on its tightest constraint; the environment carries x◇ as its ``safe_strategy``."""
    lam = float(lambda_min)
    if not (np.isfinite(lam) and lam > 0):
        raise ValueError(f"lambda_min must be a finite number > 0, got {lambda_min!r}")
    G = np.array(SOFT_COSTS)
    _, margins = slater_strategy(G, np.array(SOFT_THRESHOLDS))
    alpha = np.array(SOFT_THRESHOLDS) + (lam - margins.min())
    if np.any(alpha < 0) or np.any(alpha > 1):
        raise ValueError(f"lambda_min = {lam} puts thresholds outside [0, 1]: {alpha}")
    x_safe, _ = slater_strategy(G, alpha)
    return ConstrainedBandit(np.array(SOFT_REWARDS), G, alpha, noise=noise,
                             safe_strategy=x_safe)
