"""The best-arm identifiers by name, for ``banditkit audit`` and any tool that builds an
algorithm from a name (see :mod:`banditkit.policies.registry`).

Each factory takes a linear environment (``env.X`` arms, ``env.Z`` items; the oracle also reads
``env.theta``), the internal randomness ``rng`` and δ. ``horizon`` is accepted for the
registry's uniform call and unused: identifiers stop by themselves.
"""

from __future__ import annotations

import numpy as np

from ..envs.base import Environment
from ..policies.registry import register_policy
from .alba import ALBA
from .lingape import LinGapE
from .rage import RAGE
from .xy import XYAdaptive, XYOracle, XYStatic

__all__ = ["alba", "lingape", "rage", "xy_adaptive", "xy_oracle", "xy_static"]


def _arms_items(env: Environment, name: str) -> tuple[np.ndarray, np.ndarray]:
    X, Z = getattr(env, "X", None), getattr(env, "Z", None)
    if X is None or Z is None:
        raise ValueError(f"{name} needs a linear environment with arms X and items Z, got "
                         f"{type(env).__name__}")
    return X, Z


def _theta(env: Environment, name: str) -> np.ndarray:
    theta = getattr(env, "theta", None)
    if theta is None:
        raise ValueError(f"{name} needs an environment that knows its true theta")
    return np.asarray(theta, dtype=float)


@register_policy("RAGE")
def rage(env: Environment, rng: np.random.Generator, *, horizon: int | None = None,
         delta: float = 0.05, epsilon: float = 0.1) -> RAGE:
    """RAGE (Fiez et al. 2019, Algorithm 1), fixed confidence δ."""
    return RAGE(*_arms_items(env, "RAGE"), delta, epsilon, rng=rng)


@register_policy("XYStatic")
def xy_static(env: Environment, rng: np.random.Generator, *, horizon: int | None = None,
              delta: float = 0.05, gamma: float = 1.35) -> XYStatic:
    """Static XY-allocation (Fiez et al. 2019, Section 2; Appendix F)."""
    return XYStatic(*_arms_items(env, "XYStatic"), delta, gamma=gamma, rng=rng)


@register_policy("XYOracle")
def xy_oracle(env: Environment, rng: np.random.Generator, *, horizon: int | None = None,
              delta: float = 0.05, gamma: float = 1.1) -> XYOracle:
    """Oracle XY-allocation that knows θ* (Fiez et al. 2019, Section 5)."""
    return XYOracle(*_arms_items(env, "XYOracle"), delta, _theta(env, "XYOracle"),
                    gamma=gamma, rng=rng)


@register_policy("XYAdaptive")
def xy_adaptive(env: Environment, rng: np.random.Generator, *, horizon: int | None = None,
                delta: float = 0.05, alpha: float = 0.1) -> XYAdaptive:
    """XY-adaptive (Soare et al. 2014) with α = 0.1, sequential."""
    return XYAdaptive(*_arms_items(env, "XYAdaptive"), delta, alpha=alpha, rng=rng)


@register_policy("LinGapE")
def lingape(env: Environment, rng: np.random.Generator, *, horizon: int | None = None,
            delta: float = 0.05, theta_bound: float | None = None) -> LinGapE:
    """LinGapE (Xu et al. 2018, analysed form); S = ‖θ*‖ unless ``theta_bound`` is given."""
    bound = (float(np.linalg.norm(_theta(env, "LinGapE"))) if theta_bound is None
             else theta_bound)
    return LinGapE(*_arms_items(env, "LinGapE"), delta, theta_bound=bound)


@register_policy("ALBA")
def alba(env: Environment, rng: np.random.Generator, *, horizon: int | None = None,
         delta: float = 0.05, theta_bound: float | None = None) -> ALBA:
    """ALBA with Y-ElimTil (Tao et al. 2018); S = ‖θ*‖ unless ``theta_bound`` is given."""
    bound = (float(np.linalg.norm(_theta(env, "ALBA"))) if theta_bound is None
             else theta_bound)
    return ALBA(*_arms_items(env, "ALBA"), delta, theta_bound=bound)
