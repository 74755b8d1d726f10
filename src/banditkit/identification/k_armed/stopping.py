"""Stopping rules of K-armed best-arm identification, to combine with a sampling rule
(:mod:`.rules`) and a recommendation rule in :class:`~.composed.ComposedIdentifier` (issue 36
§2). A rule sees the identifier after every batch (its counts, sums, μ̂, pulls ``t``, batches
``rounds``, model, σ and δ) and says whether to stop.

* :class:`ChernoffStopping` — the GLR (Chernoff) statistic of the model,
  Z(t) = min_{j ≠ î} [N_î d(μ̂_î, m) + N_j d(μ̂_j, m)], above a threshold:

  - ``"theory"``: log(2t(K − 1)/δ) (Garivier & Kaufmann 2016, Theorem 10; δ-correct for
    Bernoulli arms whatever the sampling rule);
  - ``"heuristic"``: log((log t + 1)/δ) (GK16's Section 6 experiments; not proved);
  - ``"gaussian"``: c(t, δ) = 2 C_G(½ log((K − 1)/δ)) + 4 log(4 + log(t/2)), the threshold
    Jourdan, Degenne, Baudry, de Heide & Kaufmann (2022, "Top two algorithms revisited") and
    Jourdan, Degenne & Kaufmann (2023, EB-TCε₀) prove δ-correct for Gaussian arms of known σ
    whatever the sampling rule, with C_G of Kaufmann & Koolen (2021, "Mixture martingales
    revisited"): C_G(x) = min_{λ ∈ (½, 1)} (g_G(λ) + x)/λ,
    g_G(λ) = 2λ − 2λ log(4λ) + log ζ(2λ) − ½ log(1 − λ) (≈ x + log x). The papers stop at
    time n with c(n − 1, δ), n − 1 the pulls made: our t.

* :class:`LUCBStopping` — LUCB's rule (Kalyanakrishnan et al. 2012; Kaufmann &
  Kalyanakrishnan 2013): with h the empirical best and l = argmax_{a ≠ h} U_a, stop when
  U_l − L_h < ε. Bounds at round t (``rounds``, the batches observed: 1 after the first
  batch, as LUCB's t):

  - ``"kl"`` (KL-LUCB, default): {q : N_a d(μ̂_a, q) ≤ β(t, δ)}, β = log(k₁ K t^α/δ),
    k₁ = 405.5, α = 1.1 (or ``threshold="heuristic"`` log((log t + 1)/δ));
  - ``"hoeffding"`` (LUCB1): μ̂_a ± √(log(k₁ K t⁴/δ)/(2N_a)), k₁ = 5/4 (Bernoulli rewards in
    [0, 1]); with ``model="gaussian"``, μ̂_a ± σ√(2 log(k₁ K t⁴/δ)/N_a).

  With a one-pull-per-round sampling rule, t counts single pulls, so the bounds are wider
  than LUCB's at the same number of pulls (the rule stays δ-correct: its proof takes a union
  over t and needs N_a ≤ 2t only).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ..top_two import chernoff_scalar
from .base import check_threshold
from .lucb import KLLUCB_ALPHA, KLLUCB_K1, LUCB1_K1
from .solvers import bounds_solver
from .thresholds import CHERNOFF_THRESHOLDS, chernoff_level

if TYPE_CHECKING:
    from .base import KArmedIdentifier

__all__ = ["BOUNDS", "CHERNOFF_THRESHOLDS", "ChernoffStopping", "LUCBStopping", "StoppingRule",
           "lucb_bounds"]

BOUNDS = ("kl", "hoeffding")


class StoppingRule:
    """A stopping rule: :meth:`stops` says, after a batch, whether the identifier stops."""

    #: The models the rule is proved (or stated) for.
    models: tuple[str, ...] = ("bernoulli", "gaussian")

    def check(self, alg: KArmedIdentifier) -> None:
        """Refuse an identifier the rule cannot stop (called once, before any pull)."""
        if alg.model not in self.models:
            raise ValueError(f"{type(self).__name__}'s threshold {self.label!r} needs model in "
                             f"{self.models}, got model={alg.model!r}")

    @property
    def label(self) -> str:
        return ""

    def stops(self, alg: KArmedIdentifier) -> bool:
        raise NotImplementedError

    @property
    def info(self) -> dict:
        return {}


class ChernoffStopping(StoppingRule):
    """The Chernoff (GLR) stopping rule of the model (module docstring).

    Parameters
    ----------
    threshold : {"theory", "heuristic", "gaussian"}
        log(2t(K − 1)/δ) (GK16 Theorem 10, default); log((log t + 1)/δ) (not proved);
        c(t, δ) of Jourdan et al. (Gaussian model only).
    """

    def __init__(self, threshold: str = "theory") -> None:
        self.threshold = check_threshold(threshold, CHERNOFF_THRESHOLDS)
        if threshold == "gaussian":
            self.models = ("gaussian",)

    @property
    def label(self) -> str:
        return self.threshold

    def level(self, alg: KArmedIdentifier) -> float:
        return chernoff_level(alg.t, alg.delta, alg.n_arms, self.threshold)

    def stops(self, alg: KArmedIdentifier) -> bool:
        _, alg.statistic = chernoff_scalar(alg.pulls, alg.sums, alg.gaussian, alg.sigma)
        return bool(alg.statistic > self.level(alg))


def lucb_bounds(alg: KArmedIdentifier, bounds: str, k1: float, alpha: float,
                threshold: str, solver=None) -> tuple[np.ndarray, np.ndarray]:
    """(L, U) of every arm at the identifier's round ``alg.rounds``: the expressions of
    :class:`~.lucb.LUCB` (``"hoeffding"``) and :class:`~.lucb.KLLUCB` (``"kl"``), so a
    composition gives their numbers to the bit."""
    t, K, delta, mu = alg.rounds, alg.n_arms, alg.delta, alg.means()
    if bounds == "hoeffding":
        log_term = math.log(k1 * K * t ** 4 / delta)
        if alg.gaussian:
            width = alg.sigma * np.sqrt(2.0 * log_term / alg.pulls)
        else:
            width = np.sqrt(log_term / (2.0 * alg.pulls))
        return mu - width, mu + width
    if threshold == "heuristic":
        level = math.log((math.log(t) + 1.0) / delta)
    else:
        level = math.log(k1 * K * t ** alpha / delta)
    lower, upper = np.empty(K), np.empty(K)
    (solver or bounds_solver())(mu, alg.pulls, level, alg.gaussian, alg.sigma, lower, upper)
    return lower, upper


def check_bounds(bounds: str, k1: float | None, alpha: float, threshold: str
                 ) -> tuple[str, float, float, str]:
    """Validated (bounds, k₁, α, threshold) of an LUCB part (k₁ None: the paper's)."""
    if bounds not in BOUNDS:
        raise ValueError(f"bounds must be one of {BOUNDS}, got {bounds!r}")
    if k1 is None:
        k1 = KLLUCB_K1 if bounds == "kl" else LUCB1_K1
    if not (isinstance(k1, (int, float)) and math.isfinite(k1) and k1 > 0):
        raise ValueError(f"k1 must be a positive finite number, got {k1!r}")
    if not (isinstance(alpha, (int, float)) and math.isfinite(alpha) and alpha > 1):
        raise ValueError(f"alpha must be a finite number > 1, got {alpha!r}")
    threshold = check_threshold(threshold, ("paper", "heuristic"))
    if threshold == "heuristic" and bounds != "kl":
        raise ValueError("threshold='heuristic' is a rate of the KL bounds: give bounds='kl'")
    return bounds, float(k1), float(alpha), threshold


class LUCBStopping(StoppingRule):
    """LUCB's stopping rule: U_l − L_h < ε (module docstring).

    Parameters
    ----------
    bounds : {"kl", "hoeffding"}
        KL-LUCB's KL bounds (default) or LUCB1's Hoeffding bounds.
    epsilon : float
        ε ≥ 0 (0: the exact best arm).
    k1 : float, optional
        k₁ of the bounds' level: 405.5 (KL) or 5/4 (Hoeffding), the papers'.
    alpha : float
        α of the KL level log(k₁ K t^α/δ); 1.1.
    threshold : {"paper", "heuristic"}
        The KL level: the paper's, or log((log t + 1)/δ) (not proved).
    """

    def __init__(self, bounds: str = "kl", *, epsilon: float = 0.0, k1: float | None = None,
                 alpha: float = KLLUCB_ALPHA, threshold: str = "paper") -> None:
        self.bounds, self.k1, self.alpha, self.threshold = check_bounds(bounds, k1, alpha,
                                                                        threshold)
        if not (isinstance(epsilon, (int, float)) and math.isfinite(epsilon) and epsilon >= 0):
            raise ValueError(f"epsilon must be a finite number >= 0, got {epsilon!r}")
        self.epsilon = float(epsilon)
        self.gap = math.inf
        self._solver = bounds_solver() if self.bounds == "kl" else None

    @property
    def label(self) -> str:
        return f"{self.bounds}/{self.threshold}"

    def stops(self, alg: KArmedIdentifier) -> bool:
        lower, upper = lucb_bounds(alg, self.bounds, self.k1, self.alpha, self.threshold,
                                   self._solver)
        h = int(np.argmax(alg.means()))
        masked = upper.copy()
        masked[h] = -math.inf
        l_arm = int(np.argmax(masked))
        self.gap = float(upper[l_arm] - lower[h])
        return self.gap < self.epsilon

    @property
    def info(self) -> dict:
        return {"gap": self.gap}
