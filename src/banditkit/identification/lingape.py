"""LinGapE (Xu, Honda and Sugiyama, AISTATS 2018, "A fully adaptive algorithm for pure
exploration in linear bandits", Algorithm 1), in the form that is analysed, as run by Fiez et al.
(NeurIPS 2019, "Sequential experimental design for transductive linear bandits", Section 5 and
Appendix F): ε = 0, least-squares regulariser λ = 1, arm selection by the ratio rule of the
analysis (not the greedy rule of Xu et al.'s own simulations).

Each round t, with the regularised estimate θ̂_t = A_t⁻¹ b_t, A_t = λI + Σ_s x_s x_sᵀ:

* i_t = argmax_i z_iᵀθ̂_t (empirical best item);
* j_t = argmax_{j ≠ i_t} (z_j − z_i_t)ᵀθ̂_t + β_t(i_t, j), with β_t(i, j) = ‖z_i − z_j‖_{A_t⁻¹} C_t
  and C_t = σ √(2 log(|Z|² det(A_t)^{1/2} det(λI)^{-1/2} / δ)) + λ^{1/2} S;
* B(t) = that maximum; stop and recommend i_t when B(t) ≤ ε;
* otherwise pull a_t = argmin_{a : p*_a > 0} T_a(t) / p*_a(i_t, j_t), where T_a(t) counts the pulls
  of arm a and p*(i, j) = |w*| / ‖w*‖₁ with w* the minimum-ℓ1 representation of the direction
  y = z_i − z_j in the arms: w* = argmin ‖w‖₁ subject to Σ_a w_a x_a = y (a linear program,
  solved with ``scipy.optimize.linprog``/HiGHS, cached per pair because the same pair comes back
  many times).

Implementation: A⁻¹ is kept by Sherman–Morrison rank-one updates, together with θ̂, the item
estimates z_jᵀθ̂, the quadratic forms q_j = z_jᵀA⁻¹z_j of every item, and the cross terms
c_j = z_jᵀA⁻¹z_i of the current empirical best item i (recomputed only when i changes), so a
round costs O(|Z| d + d²) numpy work in about twenty numpy calls and no Python loop over arms or
items: ‖z_i − z_j‖²_{A⁻¹} = q_i + q_j − 2 c_j for all j at once. Every ``refresh_every`` pulls
the inverse and the forms are recomputed from A to stop rounding errors from accumulating.

The step arithmetic is the same sequence of operations as
:func:`~banditkit.identification.lingape_lockstep.lingape_lockstep`, which advances many trials
at once with a leading trial axis and reproduces this class bit for bit: elementwise operations
are exact per element whatever the array's shape, and every product with a sum inside is a
C-contiguous matrix–vector (or vector–vector) product that numpy hands to the same BLAS routine
with the same sizes (``ndarray.dot`` here, ``np.matmul`` over the trial axis there: both reach
``cblas_dgemv``/``cblas_ddot``); ``tests/test_lingape_lockstep.py`` checks the equality.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import linprog

from ..protocol import Algorithm, Batch
from ..validation import check_arms, check_positive_int, check_probability, check_spans

__all__ = ["LinGapE", "empirical_best", "fresh_state", "min_l1_representation", "pair_ratios",
           "radius"]

SELECTIONS = ("ratio", "greedy")


def min_l1_representation(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The minimum-ℓ1 weights w with Σ_a w_a x_a = y (Xu et al. 2018, the program behind p*).

    Solved as the linear program min 1ᵀ(u + v) s.t. Xᵀ(u − v) = y, u, v ≥ 0, with HiGHS.

    Parameters
    ----------
    X : array, shape (K, d)
        Arms (rows); must span R^d.
    y : array, shape (d,)
        Direction to represent.

    Returns
    -------
    w : array, shape (K,)
    """
    K = X.shape[0]
    c = np.ones(2 * K)
    A_eq = np.hstack([X.T, -X.T])
    res = linprog(c, A_eq=A_eq, b_eq=y, bounds=(0, None), method="highs")
    if res.status != 0:
        raise RuntimeError(f"LinGapE's arm-selection linear program failed: {res.message}")
    return res.x[:K] - res.x[K:]


def _check_nonneg(value: object, name: str, *, positive: bool = False) -> float:
    try:
        v = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(v) or v < 0 or (positive and v == 0):
        rule = "a positive" if positive else "a non-negative"
        raise ValueError(f"{name} must be {rule} finite number, got {value!r}")
    return v


class LinGapE(Algorithm):
    """LinGapE of Xu et al. (2018, Algorithm 1), the analysed version, as in Fiez et al. (2019).

    Parameters
    ----------
    X : array, shape (K, d)
        Arms (measurement vectors); must span R^d.
    Z : array, shape (M, d) or None
        Items among which the best is identified; ``None`` means ``Z = X`` (Xu et al.'s setting).
    delta : float
        Confidence δ ∈ (0, 1).
    theta_bound : float
        S, a known bound ‖θ*‖₂ ≤ S, required by the confidence width (Xu et al.'s assumption;
        Fiez et al.'s code passes the true norm ‖θ*‖₂).
    epsilon : float
        Accuracy ε ≥ 0 of the ε-best item; Fiez et al. use ε = 0 (the default).
    regularizer : float
        λ > 0 of the regularised least squares; Fiez et al. use λ = 1 (the default).
    sigma : float
        R, the sub-Gaussian noise level (1 for N(0, 1) noise).
    selection : {"ratio", "greedy"}
        ``"ratio"`` (default): the analysed rule a_t = argmin T_a/p*_a(i_t, j_t).
        ``"greedy"``: the rule of Xu et al.'s simulations, a_t = argmin_a ‖y_t‖ in
        (A_t + x_a x_aᵀ)⁻¹, offered for comparison only.
    refresh_every : int
        Recompute A⁻¹ and the cached quadratic forms from A every this many pulls.

    Notes
    -----
    Deviations and choices, each documented here:

    * The initialisation (each arm pulled once, Xu et al.) is returned as one batch of |X| single
      pulls, since it does not depend on any reward; every later batch is one pull.
    * Transductive Z ≠ X (not in Xu et al.): items i_t, j_t range over Z, the arms over X, the
      direction z_i − z_j is represented in the arms by the same linear program, and the union
      bound of C_t counts |Z|² item pairs instead of K². With Z = X this is Xu et al.'s
      algorithm exactly.
    * Ties in argmax/argmin go to the lowest index; the algorithm has no internal randomness.
    """

    kind = "identification"

    def __init__(self, X: np.ndarray, Z: np.ndarray | None, delta: float, *, theta_bound: float,
                 epsilon: float = 0.0, regularizer: float = 1.0, sigma: float = 1.0,
                 selection: str = "ratio", refresh_every: int = 10_000) -> None:
        X = check_arms(X, "X")
        Zarr = X if Z is None else check_arms(Z, "Z")
        if Zarr.shape[1] != X.shape[1]:
            raise ValueError(f"Z must have d = {X.shape[1]} columns like X, got {Zarr.shape[1]}")
        check_spans(X, "X")
        self.delta = check_probability(delta, "delta")
        self.theta_bound = _check_nonneg(theta_bound, "theta_bound")
        self.epsilon = _check_nonneg(epsilon, "epsilon")
        self.regularizer = _check_nonneg(regularizer, "regularizer", positive=True)
        self.sigma = _check_nonneg(sigma, "sigma", positive=True)
        if selection not in SELECTIONS:
            raise ValueError(f"selection must be one of {SELECTIONS}, got {selection!r}")
        self.selection = selection
        self.refresh_every = check_positive_int(refresh_every, "refresh_every")
        super().__init__(X.shape[0])

        self.X, self.Z = X, Zarr
        self.d = X.shape[1]
        self.n_items = Zarr.shape[0]
        self.counts = np.zeros(self.n_arms, dtype=np.int64)
        self.reward_sums = np.zeros(self.n_arms)  # b = Σ_a x_a (sum of a's rewards)
        # log(|Z|² / (δ λ^{d/2})): the constant part of log of C_t's argument.
        self._log_const = (2.0 * math.log(max(self.n_items, 1)) - math.log(self.delta)
                           - 0.5 * self.d * math.log(self.regularizer))
        self._radius_offset = math.sqrt(self.regularizer) * self.theta_bound
        self._refresh()
        self._ratio_cache: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
        self.steps = 0  # adaptive rounds (one pull each) after the initialisation
        self.B = math.inf
        self._best = 0
        self._stopped = self.n_items == 1  # one item: nothing to learn
        # One immutable one-pull batch per arm, reused at every step (records copy them).
        self._singles = [Batch.single(a) for a in range(self.n_arms)]

    # -- state ---------------------------------------------------------------------------------
    def _refresh(self) -> None:
        """A⁻¹, θ̂, log det A, the item estimates and the quadratic forms, afresh from the counts."""
        self._S, self.logdet, self._est, self._qz = fresh_state(
            self.X, self.Z, self.counts, self.reward_sums, self.regularizer)
        self._radius = radius(self._log_const, self.logdet, self.sigma, self._radius_offset)
        # −2 z_jᵀA⁻¹z_i for i = self._ci (scaling by −2 is exact, so this is −2 c_j bit for bit)
        self._m2c = np.zeros(self.n_items)
        self._ci = -1  # no cached cross terms
        if self.selection == "greedy":
            self._qx = np.einsum("ij,jk,ik->i", self.X, self.A_inv, self.X)
        self._since_refresh = 0

    @property
    def A_inv(self) -> np.ndarray:
        """A⁻¹ as maintained by the rank-one updates (a view of the state)."""
        return self._S[: self.d]

    @property
    def A(self) -> np.ndarray:
        """The regularised design λI + Σ_s x_s x_sᵀ (rebuilt from the pull counts)."""
        return self.regularizer * np.eye(self.d) + (self.X * self.counts[:, None]).T @ self.X

    @property
    def theta_hat(self) -> np.ndarray:
        """The regularised least-squares estimate A⁻¹b."""
        return self._S[self.d].copy()

    def confidence_radius(self) -> float:
        """C_t = σ √(2 log(|Z|² det(A)^{1/2} / (δ det(λI)^{1/2}))) + λ^{1/2} S (Xu et al.)."""
        return self._radius

    def gap_index(self) -> tuple[int, int, float]:
        """(i_t, j_t, B(t)) for the current statistics."""
        est = self._est
        i = int(est.argmax())
        if i != self._ci:  # −2 z_jᵀA⁻¹z_i for the new empirical best item
            self._m2c = -2.0 * self.Z.dot(self.A_inv.dot(self.Z[i]))
            self._ci = i
        qz = self._qz
        ucb = qz + (qz[i] + self._m2c)  # ‖z_i − z_j‖²_{A⁻¹}
        np.maximum(ucb, 0.0, out=ucb)
        np.sqrt(ucb, out=ucb)
        ucb *= self._radius
        ucb += est
        ucb -= est[i]
        ucb[i] = -np.inf
        j = int(ucb.argmax())
        return i, j, float(ucb[j])

    def arm_ratios(self, i: int, j: int) -> tuple[np.ndarray, np.ndarray]:
        """(support, 1/p*_a on the support) for the pair (i, j); solved once per pair."""
        key = (i, j) if i < j else (j, i)  # p* is the same for y and −y
        hit = self._ratio_cache.get(key)
        if hit is None:
            hit = self._ratio_cache[key] = pair_ratios(self.X, self.Z, *key)
        return hit

    def _select(self, i: int, j: int) -> int:
        if self.selection == "ratio":
            support, inv_p = self.arm_ratios(i, j)
            return support[(self.counts[support] * inv_p).argmin()]
        # Greedy: maximise the decrease (yᵀA⁻¹x)² / (1 + xᵀA⁻¹x) of ‖y‖²_{A⁻¹}.
        v = self.A_inv @ (self.Z[i] - self.Z[j])
        return int(np.argmax((self.X @ v) ** 2 / (1.0 + self._qx)))

    # -- protocol ------------------------------------------------------------------------------
    def _next_batch(self) -> Batch | None:
        if self._stopped:
            return None
        if self.t == 0:
            return Batch(np.arange(self.n_arms), np.ones(self.n_arms, dtype=np.int64))
        i, j, B = self.gap_index()
        self._best, self.B = i, B
        if B <= self.epsilon:
            self._stopped = True
            return None
        self.steps += 1
        return self._singles[self._select(i, j)]

    def _observe(self, batch: Batch, rewards: np.ndarray, costs: np.ndarray | None) -> None:
        arms, counts = batch.arms, batch.counts
        if arms.size == 1 and counts[0] == 1 and self._since_refresh < self.refresh_every:
            # One pull: Sherman–Morrison on A⁻¹ and recursive least squares on θ̂, O(|Z|d + d²).
            # The same operations, in the same order, as the lock-step driver's update.
            a = int(arms[0])
            r = float(rewards[0])
            x = self.X[a]
            self.counts[a] += 1
            self.reward_sums[a] += r
            S = self._S
            ux = S.dot(x)  # (A⁻¹x, xᵀθ̂) in one product with the stacked state
            u = ux[: self.d]
            denom = 1.0 + x.dot(u)
            scaled = u / denom
            resid = r - ux[self.d]
            ux[self.d] = -resid
            S -= ux[:, None] * scaled  # A⁻¹ −= u uᵀ/denom and θ̂ += (u/denom) resid at once
            self.logdet += math.log(denom)
            self._radius = (self.sigma * math.sqrt(2.0 * max(self._log_const + 0.5 * self.logdet,
                                                             0.0)) + self._radius_offset)
            zu = self.Z.dot(u)
            zu_scaled = zu / denom
            self._qz -= zu * zu_scaled
            self._est += zu_scaled * resid
            if self._ci >= 0:
                self._m2c += zu * (2.0 * zu_scaled[self._ci])
            if self.selection == "greedy":
                xu = zu if self.Z is self.X else self.X.dot(u)
                self._qx -= xu * (xu / denom)
            self._since_refresh += 1
        else:
            np.add.at(self.counts, arms, counts)
            np.add.at(self.reward_sums, arms, rewards)
            self._refresh()

    # -- results -------------------------------------------------------------------------------
    @property
    def stopped(self) -> bool:
        return self._stopped

    @property
    def recommendation(self) -> int | None:
        """i_t at stopping (the empirical best item so far if cut off before stopping)."""
        if self.n_items == 1:
            return 0
        if self.t == 0:
            return None
        if not self._stopped:
            return empirical_best(self.Z, self.theta_hat)
        return self._best

    @property
    def info(self) -> dict:
        return {"steps": self.steps, "init_pulls": int(min(self.t, self.n_arms)),
                "pairs_solved": len(self._ratio_cache), "B": self.B,
                "confidence_radius": self.confidence_radius()}


# -- arithmetic shared with the lock-step driver (lingape_lockstep.py) --------------------------
def fresh_state(X: np.ndarray, Z: np.ndarray, counts: np.ndarray, reward_sums: np.ndarray,
                regularizer: float) -> tuple[np.ndarray, float, np.ndarray, np.ndarray]:
    """LinGapE's state computed from scratch from the pull counts and reward sums of one trial.

    Returns
    -------
    S : array, shape (d + 1, d)
        A⁻¹ (rows 0..d−1, symmetrised) stacked over θ̂ = A⁻¹b (row d), so that one reduction
        gives both A⁻¹x and xᵀθ̂.
    logdet : float
        log det A.
    est : array, shape (M,)
        z_jᵀθ̂ for every item.
    qz : array, shape (M,)
        z_jᵀA⁻¹z_j for every item.
    """
    d = X.shape[1]
    A = regularizer * np.eye(d) + (X * counts[:, None]).T @ X
    A_inv = np.linalg.inv(A)
    S = np.empty((d + 1, d))
    S[:d] = 0.5 * (A_inv + A_inv.T)
    S[d] = S[:d] @ (X.T @ reward_sums)
    logdet = float(np.linalg.slogdet(A)[1])
    est = Z @ S[d]
    qz = np.einsum("ij,jk,ik->i", Z, S[:d], Z)
    return S, logdet, est, qz


def radius(log_const: float, logdet: float | np.ndarray, sigma: float, offset: float
           ) -> float | np.ndarray:
    """C_t = σ √(2 max(log_const + ½ log det A, 0)) + λ^{1/2} S, for one trial or an array."""
    if isinstance(logdet, np.ndarray):
        return sigma * np.sqrt(2.0 * np.maximum(log_const + 0.5 * logdet, 0.0)) + offset
    return sigma * math.sqrt(2.0 * max(log_const + 0.5 * logdet, 0.0)) + offset


def pair_ratios(X: np.ndarray, Z: np.ndarray, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    """(support, 1/p*_a on the support) of the direction z_lo − z_hi: the data of the ratio rule."""
    w = np.abs(min_l1_representation(X, Z[lo] - Z[hi]))
    # HiGHS returns a vertex; entries at round-off level are not part of the support.
    support = np.flatnonzero(w > 1e-9 * max(w.max(), 1e-300))
    if support.size == 0:
        raise ValueError(f"items {lo} and {hi} are equal: LinGapE cannot separate them")
    return support, w.sum() / w[support]


def empirical_best(Z: np.ndarray, theta: np.ndarray) -> int:
    """argmax_j z_jᵀθ (ties to the lowest index)."""
    return int(np.argmax(Z @ theta))
