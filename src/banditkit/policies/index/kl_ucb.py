"""KL-UCB (Garivier and Cappé, 2011, "The KL-UCB algorithm for bounded stochastic bandits and
beyond", Algorithm 1; Cappé, Garivier, Maillard, Munos and Stoltz, 2013, "Kullback-Leibler upper
confidence bounds for optimal sequential allocation", Eq. (4)).

After one pull of each arm, play the arm maximising

    U_k(t) = max { q ∈ [μ̂_k, 1] : n_k · kl(μ̂_k, q) ≤ log t + c · log log t },

with kl the Bernoulli divergence (rewards in [0, 1]: Garivier & Cappé's bounded case, where the
Bernoulli kl is the right divergence for any reward law in [0, 1]) or the Gaussian one,
(p − q)² / (2σ²), whose index is the closed form μ̂ + σ sqrt(2 f(t) / n).

The exploration function f(t) = log t + c log log t. Garivier & Cappé prove their regret bound
with c = 3 but recommend c = 0 in practice (Section 4: "c = 0 ... for optimal performance in
practice"; their experiments use it), which is our default; ``c=3`` is the theorem's. log log t
is taken as log(max(log t, 1)) so that f stays ≥ log t at t < e^e.

The Bernoulli index is found by Newton's method from an upper bound (10 steps, monotone: see
:func:`klucb_bernoulli_index`), for every arm at once, vectorised over any leading axes so the
lock-step driver computes exactly what the sequential class does.
"""

from __future__ import annotations

import numpy as np

from ...estimation.posteriors import bounded_reward_range, kl_bernoulli, kl_gaussian
from ...validation import check_positive
from .base import IndexPolicy

__all__ = ["KLUCB", "exploration_level", "kl_bernoulli", "kl_gaussian", "klucb_bernoulli_index"]

#: Newton steps of the Bernoulli index: 8 reach 1e-12 of a 200-step bisection on 200,000
#: random (p, n ≤ 10⁶, level ≤ 25) including p ∈ {0, 1} and p within 10⁻⁶ of them.
NEWTON_STEPS = 10
_BELOW_ONE = 1.0 - 2.0 ** -53


def exploration_level(t: int, c: float) -> float:
    """f(t) = log t + c log log t, with log log t read as log(max(log t, 1))."""
    lt = np.log(max(t, 1))
    return float(lt + c * np.log(max(lt, 1.0)))


def klucb_bernoulli_index(means: np.ndarray, pulls: np.ndarray, level: float,
                          steps: int = NEWTON_STEPS) -> np.ndarray:
    """max{q ∈ [p, 1]: n kl(p, q) ≤ level} for every entry, by ``steps`` Newton steps.

    q ↦ kl(p, q) is convex and increasing on [p, 1), so Newton's method started at an upper
    bound of the root decreases monotonically to it and never passes it: every iterate is an
    upper bound of the index (a valid upper confidence bound). The start is the smaller of
    Pinsker's bound p + sqrt(b/2) (kl(p, q) ≥ 2(q − p)²) and 1 − (1 − p) exp(−(b − p log p)/(1 − p))
    (kl(p, q) ≥ p log p + (1 − p) log((1 − p)/(1 − q))), with b = level/n, capped at the largest
    double below 1. A fixed number of steps (not a tolerance) keeps the operations the same for
    one trial and for many in lock-step.
    """
    p = np.clip(means, 0.0, 1.0)
    b = level / pulls
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        plogp = np.where(p > 0, p * np.log(p), 0.0)
        neg_entropy = plogp + np.where(p < 1, (1 - p) * np.log1p(-p), 0.0)
        tail = np.where(p < 1, 1.0 - (1.0 - p) * np.exp(-(b - plogp) / (1.0 - p)), 1.0)
        q = np.minimum(np.minimum(p + np.sqrt(b / 2), tail), _BELOW_ONE)
        q1 = 1.0 - p
        for _ in range(steps):
            f = neg_entropy - p * np.log(q) - q1 * np.log1p(-q) - b
            slope = (q - p) / (q * (1.0 - q))
            # f > 0 implies q > p, so slope > 0; at or below the root the iterate stays
            q = np.where(f > 0, np.minimum(q, q - f / slope), q)
    return q


class KLUCB(IndexPolicy):
    """KL-UCB of Garivier & Cappé (2011) (Cappé et al. 2013 for the Gaussian form).

    Parameters
    ----------
    n_arms : int
        K ≥ 1.
    divergence : {"bernoulli", "gaussian"}
        Bernoulli kl (rewards in [0, 1], the default) or Gaussian with variance ``sigma²``.
    c : float
        The constant of f(t) = log t + c log log t: 0 (practical, Garivier & Cappé's
        experiments, the default) or 3 (their Theorem 2).
    sigma : float
        Noise standard deviation of the Gaussian form.
    horizon : int, optional
        Stop after this many pulls.
    reward_range : (lo, hi) or None, optional
        Defaults to (0, 1) for the Bernoulli form (required by it: other ranges are refused)
        and ``None`` (unbounded) for the Gaussian form.
    """

    def __init__(self, n_arms: int, *, divergence: str = "bernoulli", c: float = 0.0,
                 sigma: float = 1.0, horizon: int | None = None,
                 reward_range: tuple[float, float] | str | None = "default") -> None:
        if divergence not in ("bernoulli", "gaussian"):
            raise ValueError(f"divergence must be 'bernoulli' or 'gaussian', got {divergence!r}")
        if (isinstance(c, bool) or not isinstance(c, (int, float, np.integer, np.floating))
                or not (np.isfinite(c) and c >= 0)):
            raise ValueError(f"c must be a non-negative number (0 practical, 3 theory), got {c!r}")
        sigma = check_positive(sigma, "sigma")
        reward_range = bounded_reward_range(
            divergence == "bernoulli", reward_range,
            "divergence='bernoulli': the Bernoulli kl is defined for means in [0, 1]")
        super().__init__(n_arms, horizon=horizon, reward_range=reward_range)
        self.divergence = divergence
        self.c = float(c)
        self.sigma = sigma

    def scores(self, pulls: np.ndarray, sums: np.ndarray, t: int, xi: np.ndarray | None
               ) -> np.ndarray:
        level = exploration_level(t, self.c)
        means = sums / pulls
        if self.divergence == "gaussian":
            return means + self.sigma * np.sqrt(2 * level / pulls)
        return klucb_bernoulli_index(means, pulls, level)

    def indices(self) -> np.ndarray:
        """Current indices (``inf`` for arms never pulled)."""
        idx = np.full(self.n_arms, np.inf)
        seen = self.pulls > 0
        idx[seen] = self.scores(self.pulls[seen], self.sums[seen], self.t, None)
        return idx
