"""Stochastic K-armed bandits with m cost constraints (Bollini et al., "Replicable Constrained
Bandits", Section 2).

Pulling arm a gives a reward with mean r_a ∈ [0, 1] and m costs with means G[i, a] ∈ [0, 1].
A strategy x in the simplex is safe when G x ≤ α. The optimal safe strategy
x* ∈ argmax_x r^T x s.t. G x ≤ α is a linear programme, solved with ``scipy.optimize.linprog``.

Regret and violation follow the paper: R_T = Σ_t r^T (x* − x_t) and
V_T = max_i Σ_t [g_i^T x_t − α_i]^+, with x_t the strategy of round t (the batch's
``strategy``; a pull with no strategy counts as the point mass on its arm).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linprog

from ..protocol import Batch
from ..validation import check_distribution, check_in_unit_interval, check_positive
from .base import Environment, Outcome

__all__ = ["ConstrainedBandit", "optimal_safe_strategy", "slater_strategy"]

NOISES = ("bernoulli", "beta")
#: Most pulls one batch may hold under Beta noise, which is drawn pull by pull (Bernoulli sums
#: are one Binomial per run, O(runs) for any batch size).
MAX_BETA_PULLS = 10**8


def optimal_safe_strategy(r: np.ndarray, G: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """argmax_{x ∈ Δ_K} r^T x s.t. G x ≤ α, by linear programming (HiGHS).

    Raises
    ------
    ValueError
        If no strategy in the simplex satisfies the constraints.
    """
    K = r.size
    res = linprog(-r, A_ub=G, b_ub=alpha, A_eq=np.ones((1, K)), b_eq=[1.0],
                  bounds=[(0, None)] * K, method="highs")
    if res.status != 0:
        raise ValueError("thresholds alpha admit no safe strategy: no x in the simplex has "
                         "G x <= alpha")
    x = np.clip(res.x, 0.0, None)
    return x / x.sum()


def slater_strategy(G: np.ndarray, alpha: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The most strictly safe strategy ``x◇ = argmax_x min_i (α_i − g_iᵀx)`` (Bollini et al.,
    Assumption 2.2) and its margins ``α − G x◇`` (their minimum is λ_min), by linear
    programming (HiGHS): maximise t subject to ``G x + t ≤ α``, x in the simplex.

    Raises
    ------
    ValueError
        If no strategy is strictly safe (Slater's condition, Assumption 2.1, fails).
    """
    G = np.atleast_2d(np.asarray(G, dtype=float))
    alpha = np.asarray(alpha, dtype=float).reshape(-1)
    m, K = G.shape
    c = np.r_[np.zeros(K), -1.0]
    res = linprog(c, A_ub=np.c_[G, np.ones(m)], b_ub=alpha,
                  A_eq=np.r_[np.ones(K), 0.0][None, :], b_eq=[1.0],
                  bounds=[(0, None)] * K + [(None, None)], method="highs")
    if res.status != 0 or -res.fun <= 0:
        raise ValueError("thresholds alpha admit no strictly safe strategy (Slater's condition "
                         "fails): every x in the simplex has g_i^T x >= alpha_i for some i")
    x = np.clip(res.x[:K], 0.0, None)
    x /= x.sum()
    return x, alpha - G @ x


class ConstrainedBandit(Environment):
    """Constrained K-armed bandit.

    Parameters
    ----------
    rewards : array in [0, 1], shape (K,)
        Reward means r.
    costs : array in [0, 1], shape (m, K)
        Cost means G (row i is constraint i).
    thresholds : array in [0, 1], shape (m,)
        α; constraint i requires g_i^T x ≤ α_i.
    noise : {"bernoulli", "beta"}
        Bernoulli samples, or bounded Beta samples with the given means and concentration
        (a + b = ``concentration``). Bernoulli sums are one Binomial draw per run, so a batch
        of 10¹⁵ pulls costs O(runs); Beta sums have no closed form and are drawn pull by pull
        (at most ``MAX_BETA_PULLS`` a batch).
    safe_strategy : array, shape (K,), optional
        A strictly safe strategy x° (G x° < α), needed by hard-constraint algorithms.
    """

    n_costs: int

    def __init__(self, rewards: np.ndarray, costs: np.ndarray, thresholds: np.ndarray, *,
                 noise: str = "bernoulli", concentration: float = 10.0,
                 safe_strategy: np.ndarray | None = None) -> None:
        r = check_in_unit_interval(rewards, "rewards")
        if r.ndim != 1 or r.size < 2:
            raise ValueError(f"rewards must be a 1-D array of K >= 2 means, got shape {r.shape}")
        G = np.atleast_2d(check_in_unit_interval(costs, "costs"))
        if G.shape[1] != r.size:
            raise ValueError(f"costs must have shape (m, K={r.size}), got {G.shape}")
        alpha = check_in_unit_interval(np.atleast_1d(thresholds), "thresholds",
                                       shape=(G.shape[0],))
        if noise not in NOISES:
            raise ValueError(f"noise must be one of {NOISES}, got {noise!r}")
        concentration = check_positive(concentration, "concentration")
        self.r, self.G, self.alpha = r, G, alpha
        self.noise, self.concentration = noise, float(concentration)
        self.n_arms = self.n_items = r.size
        self.n_costs = G.shape[0]
        self.optimal_strategy = optimal_safe_strategy(r, G, alpha)
        self.optimal_value = float(r @ self.optimal_strategy)
        if safe_strategy is not None:
            x = check_distribution(safe_strategy, r.size, "safe_strategy")
            if not np.all(G @ x < alpha):
                raise ValueError(f"safe_strategy must be strictly safe: G x < alpha for every "
                                 f"constraint, got margins alpha - G x = "
                                 f"{np.round(alpha - G @ x, 6).tolist()}")
            self.safe_strategy: np.ndarray | None = x
        else:
            self.safe_strategy = None

    def best_item(self, horizon: int | None = None) -> int:
        """The arm with most weight in the optimal safe strategy."""
        return int(np.argmax(self.optimal_strategy))

    def _strategy_rows(self, batch: Batch) -> np.ndarray:
        if batch.strategy is not None:
            return np.broadcast_to(np.asarray(batch.strategy, float), (batch.n_runs, self.n_arms))
        return np.eye(self.n_arms)[batch.arms]

    def regret(self, batch: Batch, t0: int = 0) -> np.ndarray:
        return batch.counts * (self.optimal_value - self._strategy_rows(batch) @ self.r)

    def violation(self, batch: Batch, t0: int = 0) -> np.ndarray:
        excess = self._strategy_rows(batch) @ self.G.T - self.alpha
        return batch.counts[:, None] * np.maximum(excess, 0.0)

    def _sample_sums(self, n: np.ndarray, mu: np.ndarray, rng: np.random.Generator
                     ) -> np.ndarray:
        if self.noise == "bernoulli":
            return rng.binomial(n, mu).astype(float)
        # Beta samples have no closed-form sum: draw per pull (vectorised) and add per run.
        c = self.concentration
        eps = 1e-12
        a = np.clip(mu, eps, 1 - eps) * c
        b = np.clip(1 - mu, eps, 1 - eps) * c
        reps = np.repeat(np.arange(n.size), n)
        draws = rng.beta(np.repeat(a, n), np.repeat(b, n))
        return np.bincount(reps, weights=draws, minlength=n.size)

    def pull(self, batch: Batch, rng: np.random.Generator, t0: int = 0) -> Outcome:
        self._check_batch(batch)
        n = batch.counts
        if self.noise == "beta" and batch.n_pulls > MAX_BETA_PULLS:
            raise ValueError(f"noise='beta' draws every pull: a batch must hold at most "
                             f"{MAX_BETA_PULLS} pulls, got {batch.n_pulls} (use "
                             f"noise='bernoulli', whose sums are one Binomial per run)")
        rewards = self._sample_sums(n, self.r[batch.arms], rng)
        costs = np.column_stack([self._sample_sums(n, self.G[i, batch.arms], rng)
                                 for i in range(self.n_costs)])
        return Outcome(rewards, costs)

    def __repr__(self) -> str:
        return f"ConstrainedBandit(K={self.n_arms}, m={self.n_costs})"
