"""Bayes-UCB for Bernoulli rewards (Kaufmann, Cappé and Garivier, 2012, "On Bayesian upper
confidence bounds for bandit problems", AISTATS, Algorithm 1 and Theorem 1).

At round t = 1, ..., n play the arm maximising the quantile of order

    1 − 1 / (t (log n)^c)

of its posterior Beta(S_k + 1, n_k − S_k + 1) (uniform prior; S_k the reward sum, n_k the
pulls), ties to the lowest index. Theorem 1 proves asymptotic optimality for c ≥ 5; the
authors' experiments (Section 5) use c = 0, "which performs best in practice", and so does our
default; ``c=5`` is the theorem's. With c = 0 the horizon is not needed; with c > 0 it is (the
quantile reads log n). There is no initial round-robin: the prior gives every arm a quantile
(at t = 1 every quantile of order 0 is 0 and arm 0 is played).

Rewards in [0, 1]: as :class:`~banditkit.policies.index.thompson.ThompsonSampling`, a fractional
reward r adds r to S_k and 1 − r to the failures; on Bernoulli instances this is the exact
posterior. The quantile is ``scipy.special.betaincinv``. Deterministic (no ξ); an index policy,
so :func:`banditkit.simulate_trials` runs it through the lock-step engine.
"""

from __future__ import annotations

import numpy as np

from ...validation import check_positive_int
from .base import IndexPolicy

__all__ = ["BayesUCB", "quantile_order"]


def quantile_order(t: int, c: float, horizon: int | None) -> float:
    """1 − 1 / (t (log n)^c) at round t ≥ 1 (Kaufmann et al. 2012, Algorithm 1)."""
    scale = 1.0 if c == 0 else float(np.log(horizon)) ** c  # type: ignore[arg-type]
    return 1.0 - 1.0 / (t * scale)


class BayesUCB(IndexPolicy):
    """Bayes-UCB of Kaufmann, Cappé & Garivier (2012), Beta-Bernoulli.

    Parameters
    ----------
    n_arms : int
        K ≥ 1.
    c : float
        The exponent of (log n)^c: 0 (their experiments, the default) or ≥ 5 (their
        Theorem 1). Any c > 0 needs ``horizon``.
    horizon : int, optional
        n: stop after this many pulls (needed when c > 0).
    """

    initial_rounds = False  # the prior gives every arm a quantile before its first pull

    def __init__(self, n_arms: int, *, c: float = 0.0, horizon: int | None = None) -> None:
        if (isinstance(c, bool) or not isinstance(c, (int, float, np.integer, np.floating))
                or not (np.isfinite(c) and c >= 0)):
            raise ValueError(f"c must be a non-negative number (0 practical, 5 theory), got "
                             f"{c!r}")
        if c > 0 and horizon is None:
            raise ValueError("horizon: Bayes-UCB with c > 0 needs the horizon n (its quantile "
                             "order is 1 - 1/(t (log n)^c))")
        if horizon is not None and c > 0 and check_positive_int(horizon, "horizon") < 2:
            raise ValueError("horizon must be >= 2 with c > 0 (log n > 0)")
        super().__init__(n_arms, horizon=horizon, reward_range=(0.0, 1.0))
        self.c = float(c)

    def scores(self, pulls: np.ndarray, sums: np.ndarray, t: int, xi: np.ndarray | None
               ) -> np.ndarray:
        """The posterior quantiles at round t + 1 (``t`` pulls made so far)."""
        from scipy.special import betaincinv  # here, not at import: the CLI starts light

        level = quantile_order(t + 1, self.c, self.horizon)
        return betaincinv(sums + 1.0, pulls - sums + 1.0, level)
