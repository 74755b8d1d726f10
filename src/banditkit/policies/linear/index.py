"""Sequential linear index policies (OFUL, linear Thompson sampling): one pull per round, the arm
maximising a score computed from the ridge estimate of θ* and its Gram matrix
V_t = λI + Σ_s x_s x_sᵀ.

The state is kept in the per-arm form the scores need, updated by rank-one steps (no inverse,
no determinant recomputed):

* ``G = X V⁻¹`` (K × d; row k is V⁻¹x_k since V⁻¹ is symmetric), updated by Sherman–Morrison:
  with u = V⁻¹x (row a of G for the pulled arm a), c = X u and w = xᵀV⁻¹x = c_a,
  V'⁻¹ = V⁻¹ − u uᵀ/(1 + w), so G' = G − c uᵀ/(1 + w);
* ``m = X θ̂`` (the estimated means), by the recursive least-squares step
  θ̂' = θ̂ + u (r − xᵀθ̂)/(1 + w), so m' = m + c (r − m_a)/(1 + w);
* ``q_k = ‖x_k‖²_{V⁻¹}``, q' = q − c²/(1 + w) (OFUL's widths);
* ``logdet = log det V − d log λ``, by the matrix determinant lemma: + log(1 + w);
* optionally the lower Cholesky factor C of V (V = C Cᵀ), by the rank-one Cholesky update
  (linear Thompson sampling draws θ̃ = θ̂ + v C⁻ᵀz, whose covariance is v²V⁻¹: a Cholesky
  draw, as DESIGN.md asks, in O(d²) a round instead of a factorisation).

A round costs O(Kd + d²). Every array carries a leading axis of trials, and every operation is
element-wise with a fixed order of additions (no BLAS reduction, whose order depends on the
shapes), so one trial (:class:`LinearIndexPolicy`, leading axis of length 1) and many trials in
lock-step (:mod:`banditkit.policies.linear.lockstep`) compute the same doubles bit for bit.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from dataclasses import dataclass

import numpy as np

from ...protocol import Algorithm, Batch
from ...validation import check_arms, check_positive, check_positive_int
from ..index.base import check_reward_range, draw_xi

__all__ = ["LinearIndexPolicy", "LinearState", "check_sub_gaussian_range", "matvec_rows",
           "solve_upper_transpose"]


def matvec_rows(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """x_kᵀ y for every row k of ``X`` (K, d) and every trial's ``y`` (n, d): shape (n, K).

    Added in the order j = 0, 1, …, d − 1, element-wise, so the result for one trial does not
    depend on how many trials are computed together.
    """
    out = X[:, 0] * y[:, 0, None]
    for j in range(1, X.shape[1]):
        out = out + X[:, j] * y[:, j, None]
    return out


@dataclass
class LinearState:
    """Ridge-regression state of n trials (leading axis n) on the arms X (K, d).

    Attributes
    ----------
    G : array (n, K, d)
        X V⁻¹.
    m : array (n, K)
        X θ̂ (θ̂ = V⁻¹ Σ r_s x_s, the ridge estimate).
    q : array (n, K)
        ‖x_k‖²_{V⁻¹}.
    logdet : array (n,)
        log det V − d log λ = log(det V / det λI).
    chol : array (n, d, d) or None
        Lower Cholesky factor of V (kept only when a policy samples from N(θ̂, v²V⁻¹)).
    """

    G: np.ndarray
    m: np.ndarray
    q: np.ndarray
    logdet: np.ndarray
    chol: np.ndarray | None = None

    @classmethod
    def initial(cls, X: np.ndarray, lam: float, n: int, *, cholesky: bool = False
                ) -> LinearState:
        """V = λI for ``n`` trials: G = X/λ, m = 0, q = ‖x‖²/λ, log det ratio 0, C = √λ I."""
        K, d = X.shape
        sq = X[:, 0] * X[:, 0]
        for j in range(1, d):
            sq = sq + X[:, j] * X[:, j]
        chol = None
        if cholesky:
            chol = np.zeros((n, d, d))
            chol[:, np.arange(d), np.arange(d)] = np.sqrt(lam)
        return cls(G=np.repeat((X / lam)[None], n, axis=0), m=np.zeros((n, K)),
                   q=np.repeat((sq / lam)[None], n, axis=0), logdet=np.zeros(n), chol=chol)

    def update(self, X: np.ndarray, arms: np.ndarray, rewards: np.ndarray) -> None:
        """One observation per trial: arm ``arms[i]`` (int, (n,)) gave ``rewards[i]``."""
        n, _, d = self.G.shape
        rows = np.arange(n)
        x = X[arms]                                   # (n, d) the pulled arms
        u = self.G[rows, arms]                        # (n, d) = V⁻¹x, read before G changes
        c = self.G[:, :, 0] * x[:, 0, None]           # (n, K) = X V⁻¹ x
        for j in range(1, d):
            c = c + self.G[:, :, j] * x[:, j, None]
        w = c[rows, arms]                             # xᵀV⁻¹x
        denom = 1.0 + w
        err = (rewards - self.m[rows, arms]) / denom
        self.m = self.m + c * err[:, None]
        self.q = self.q - c * c / denom[:, None]
        self.G = self.G - c[:, :, None] * (u / denom[:, None])[:, None, :]
        # libm's log1p (math), not numpy's loop, which may be a SIMD variant differing in the
        # last bit: the compiled kernel (linear_kernel.py) calls libm too
        self.logdet = self.logdet + np.array([math.log1p(v) for v in w.tolist()])
        if self.chol is not None:
            _cholesky_rank_one(self.chol, x.copy())


def _cholesky_rank_one(C: np.ndarray, x: np.ndarray) -> None:
    """C ← the lower Cholesky factor of C Cᵀ + x xᵀ, in place, for each trial (Givens form:
    Golub & Van Loan, Matrix Computations, §6.5.4). ``x`` (n, d) is overwritten."""
    d = C.shape[-1]
    for k in range(d):
        ckk = C[:, k, k]
        r = np.sqrt(ckk * ckk + x[:, k] * x[:, k])
        cos = r / ckk
        sin = x[:, k] / ckk
        C[:, k, k] = r
        if k + 1 < d:
            col = (C[:, k + 1:, k] + sin[:, None] * x[:, k + 1:]) / cos[:, None]
            x[:, k + 1:] = cos[:, None] * x[:, k + 1:] - sin[:, None] * col
            C[:, k + 1:, k] = col


def solve_upper_transpose(C: np.ndarray, z: np.ndarray) -> np.ndarray:
    """y = C⁻ᵀ z for lower-triangular C (n, d, d) and z (n, d), by back substitution."""
    d = C.shape[-1]
    y = np.empty_like(z)
    for i in range(d - 1, -1, -1):
        acc = z[:, i]
        for j in range(i + 1, d):
            acc = acc - C[:, j, i] * y[:, j]
        y[:, i] = acc / C[:, i, i]
    return y


def check_sub_gaussian_range(reward_range: object, R: float
                             ) -> tuple[float, float] | None:
    """A reward range consistent with R-sub-Gaussian noise: rewards in [lo, hi] are
    (hi − lo)/2-sub-Gaussian about their mean (Hoeffding's lemma), so the confidence sets
    assume R at least that; ``None`` (unbounded, e.g. Gaussian noise of s.d. ≤ R) passes."""
    rr = check_reward_range(reward_range)
    if rr is not None and R < (rr[1] - rr[0]) / 2:
        raise ValueError(f"R must be at least (hi - lo)/2 = {(rr[1] - rr[0]) / 2:g} for rewards "
                         f"in reward_range = [{rr[0]:g}, {rr[1]:g}] (such rewards are only "
                         f"(hi - lo)/2-sub-Gaussian), got R = {R:g}; pass reward_range=None "
                         "for unbounded noise known to be R-sub-Gaussian")
    return rr


class LinearIndexPolicy(Algorithm):
    """A fully sequential linear policy playing ``argmax_k score_k`` (ties to the lowest index).

    Subclasses define :meth:`scores` (vectorised over the leading axis of trials), ``n_draws``
    (standard normals of ξ read per round; 0 for deterministic policies) and ``cholesky``
    (whether the state keeps the Cholesky factor of V).

    Parameters
    ----------
    X : array (K, d)
        The arms' feature vectors.
    lam : float
        The ridge regulariser λ > 0 (V₀ = λI).
    rng : Generator, optional
        Internal randomness ξ (needed when ``n_draws`` > 0).
    horizon : int, optional
        Stop after this many pulls; unbounded by default.
    reward_range : (lo, hi) or None
        Interval every reward lies in; observations outside it are refused before any state
        changes. ``None``: unbounded (sub-Gaussian) rewards.
    """

    kind = "regret"
    #: Decision-log runs per pull (:func:`banditkit.simulate.check_memory`): one pull a batch.
    runs_per_pull = 1.0
    #: The compiled trial and the lock-step runner (:mod:`banditkit.engines`).
    engines = "banditkit.policies.linear.lockstep:linear_engine"
    cholesky: bool = False

    def __init__(self, X: np.ndarray, *, lam: float = 1.0, rng: np.random.Generator | None = None,
                 horizon: int | None = None,
                 reward_range: tuple[float, float] | None = (-1.0, 1.0)) -> None:
        self.X = check_arms(X, "X")
        super().__init__(self.X.shape[0])
        self.d = self.X.shape[1]
        self.lam = check_positive(lam, "lam")
        self.horizon = None if horizon is None else check_positive_int(horizon, "horizon")
        self.reward_range = check_reward_range(reward_range)
        if self.n_draws and not isinstance(rng, np.random.Generator):
            raise ValueError(f"rng must be a numpy Generator (the internal randomness xi of "
                             f"{type(self).__name__}), got {type(rng).__name__}")
        self.rng = rng
        self.state = LinearState.initial(self.X, self.lam, 1, cholesky=self.cholesky)

    @property
    def n_draws(self) -> int:
        """Standard normals of ξ read per round."""
        return 0

    @abstractmethod
    def scores(self, state: LinearState, t: int, xi: np.ndarray | None) -> np.ndarray:
        """Scores (n, K) of the n trials of ``state`` after t pulls, from this round's standard
        normals ``xi`` (n, n_draws) (``None`` when ``n_draws`` is 0)."""

    def _next_batch(self) -> Batch | None:
        if self.horizon is not None and self.t >= self.horizon:
            return None
        xi = draw_xi(self.rng, "normal", (1, self.n_draws)) if self.n_draws else None
        return Batch.single(int(np.argmax(self.scores(self.state, self.t, xi)[0])))

    def _observe(self, batch: Batch, rewards: np.ndarray, costs: np.ndarray | None) -> None:
        # one pull per batch (a truncated batch of a sequential policy is still one pull)
        self.state.update(self.X, batch.arms[:1], rewards[:1])
