"""Thresholds of the Chernoff (GLR) stopping rule of K-armed identification, by name:

* ``"theory"``: log(2t(K − 1)/δ) (Garivier & Kaufmann 2016, Theorem 10; δ-correct for
  Bernoulli arms whatever the sampling rule);
* ``"heuristic"``: log((log t + 1)/δ) (GK16's Section 6 experiments; not proved);
* ``"gaussian"``: c(t, δ) = 2 C_G(½ log((K − 1)/δ)) + 4 log(4 + log(t/2)), the threshold that
  Jourdan, Degenne, Baudry, de Heide & Kaufmann (2022, "Top two algorithms revisited", NeurIPS)
  and Jourdan, Degenne & Kaufmann (2023, "An ε-best-arm identification algorithm for
  fixed-confidence and beyond", NeurIPS: EB-TCε₀'s own) use, δ-correct for Gaussian arms of
  known σ whatever the sampling rule, with C_G of Kaufmann & Koolen (2021, "Mixture
  martingales revisited", JMLR): C_G(x) = min_{λ ∈ (½, 1)} (g_G(λ) + x)/λ,
  g_G(λ) = 2λ − 2λ log(4λ) + log ζ(2λ) − ½ log(1 − λ) (C_G(x) ≈ x + log x). The papers stop at
  time n on c(n − 1, δ), n − 1 the pulls made: our t. This is our reading of the formula as
  those papers state it; their full texts could not be read here (the search tool gives their
  first pages), so the constants were not checked line by line against them.
"""

from __future__ import annotations

import functools
import math

from ..top_two import stopping_threshold

__all__ = ["CHERNOFF_THRESHOLDS", "c_g", "chernoff_level", "gaussian_threshold",
           "gaussian_threshold_constant"]

CHERNOFF_THRESHOLDS = ("theory", "heuristic", "gaussian")


@functools.lru_cache(maxsize=256)
def c_g(x: float) -> float:
    """Kaufmann & Koolen's C_G(x), x > 0 (module docstring): a bounded scalar minimisation over
    λ ∈ (½, 1), cached."""
    from scipy.optimize import minimize_scalar
    from scipy.special import zeta

    def objective(lam: float) -> float:
        g = (2.0 * lam - 2.0 * lam * math.log(4.0 * lam) + math.log(zeta(2.0 * lam))
             - 0.5 * math.log(1.0 - lam))
        return (g + x) / lam

    res = minimize_scalar(objective, bounds=(0.5 + 1e-9, 1.0 - 1e-9), method="bounded",
                          options={"xatol": 1e-10})
    return float(res.fun)


def gaussian_threshold(t: int, delta: float, n_arms: int) -> float:
    """c(t, δ) = 2 C_G(½ log((K − 1)/δ)) + 4 log(4 + log(t/2)) (module docstring; Jourdan et
    al. 2022, 2023, with Kaufmann & Koolen 2021's C_G)."""
    return (gaussian_threshold_constant(delta, n_arms)
            + 4.0 * math.log(4.0 + math.log(max(t, 1) / 2.0)))


def gaussian_threshold_constant(delta: float, n_arms: int) -> float:
    """2 C_G(½ log((K − 1)/δ)): the part of c(t, δ) that does not depend on t (a compiled
    kernel takes it as a number and adds the rest, the same operations in the same order)."""
    return 2.0 * c_g(0.5 * math.log(max(n_arms - 1, 1) / delta))


def chernoff_level(t: int, delta: float, n_arms: int, kind: str) -> float:
    """The threshold ``kind`` (module docstring) at t pulls."""
    if kind == "gaussian":
        return gaussian_threshold(t, delta, n_arms)
    return stopping_threshold(t, delta, n_arms, kind)
