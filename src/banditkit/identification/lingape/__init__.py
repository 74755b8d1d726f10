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
  solved with ``scipy.optimize.linprog``/HiGHS by column generation — a restricted master LP
  over a few arms, priced against all arms at once — see :func:`solve_min_l1`; cached per pair
  because the same pair comes back many times).

Implementation: A⁻¹ is kept by Sherman–Morrison rank-one updates, together with θ̂, the item
estimates z_jᵀθ̂, the quadratic forms q_j = z_jᵀA⁻¹z_j of every item, and the cross terms
c_j = z_jᵀA⁻¹z_i of the current empirical best item i (recomputed only when i changes), so a
round costs O(|Z| d + d²) numpy work in about twenty numpy calls and no Python loop over arms or
items: ‖z_i − z_j‖²_{A⁻¹} = q_i + q_j − 2 c_j for all j at once. Every ``refresh_every`` pulls
the inverse and the forms are recomputed from A to stop rounding errors from accumulating.

A trial of a million one-pull rounds is run much faster, with the same decisions from the same
noise, by :func:`~banditkit.identification.lingape_blocks.simulate_lingape` (speculative blocks
of pulls with low-rank state updates).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.linalg import qr
from scipy.optimize import linprog

from ...envs.base import Environment
from ...protocol import Algorithm, Batch
from ...validation import check_arms, check_positive_int, check_probability, check_spans

__all__ = ["L1Representation", "LinGapE", "challenger", "empirical_best", "fresh_state",
           "make_lingape", "min_l1_representation", "pair_ratios", "radius", "solve_min_l1"]

SELECTIONS = ("ratio", "greedy")


LP_METHODS = ("column_generation", "full")


@dataclass(frozen=True)
class L1Representation:
    """Solution of min ‖w‖₁ s.t. Xᵀw = y, with its optimality certificate.

    Attributes
    ----------
    weights : array, shape (K,)
        w*, a basic (vertex) optimum: at most d non-zero entries.
    dual : array, shape (d,)
        u of the dual max yᵀu s.t. |x_aᵀu| ≤ 1 for every arm a; optimality of ``weights`` is
        certified by ‖w*‖₁ = yᵀu and max_a |x_aᵀu| ≤ 1 (up to round-off).
    objective : float
        ‖w*‖₁.
    columns : int
        Arms (of K) in the last linear program solved: K for ``"full"``, the restricted
        master's size for ``"column_generation"``.
    rounds : int
        Linear programs solved (1 for ``"full"``).
    """

    weights: np.ndarray
    dual: np.ndarray
    objective: float
    columns: int
    rounds: int


# HiGHS's default tolerances (1e-7) accept a vertex whose reduced costs are −4e-8: with many
# nearly parallel arms that is a different, slightly worse vertex. 1e-10 is HiGHS's tightest.
_HIGHS_OPTIONS = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}


def _solve_lp(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """min 1ᵀ(u + v) s.t. Xᵀ(u − v) = y, u, v ≥ 0 by HiGHS: (w = u − v, dual), None if infeasible.

    HiGHS's ``eqlin.marginals`` are ∂objective/∂y, i.e. the dual u of max yᵀu s.t. the reduced
    costs 1 ∓ x_aᵀu ≥ 0, which is |x_aᵀu| ≤ 1.
    """
    K = X.shape[0]
    A_eq = np.hstack([X.T, -X.T])
    res = linprog(np.ones(2 * K), A_eq=A_eq, b_eq=y, bounds=(0, None), method="highs",
                  options=_HIGHS_OPTIONS)
    if res.status == 2:
        return None
    if res.status != 0:
        raise RuntimeError(f"LinGapE's arm-selection linear program failed: {res.message}")
    return res.x[:K] - res.x[K:], np.asarray(res.eqlin.marginals, dtype=float)


def _polish(X: np.ndarray, y: np.ndarray, w: np.ndarray, dual: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray]:
    """Re-solve the vertex exactly from its support, so the weights depend only on the support.

    A vertex has at most d non-zero weights; with the support S (entries above 1e-12 of the
    largest), w_S solves X_Sᵀ w_S = y, and when |S| = d the dual solves x_aᵀu = sign(w_a),
    a ∈ S (complementary slackness). Both paths of :func:`solve_min_l1` polish, so they return
    the same bits whenever they find the same vertex. The solver's values are kept if the
    support is not a basis or the re-solve does not reproduce y.
    """
    K, d = X.shape
    support = np.flatnonzero(np.abs(w) > 1e-12 * max(np.abs(w).max(), 1e-300))
    if support.size == 0 or support.size > d:
        return w, dual
    B = X[support].T  # (d, |S|)
    if support.size == d:
        try:
            w_s = np.linalg.solve(B, y)
            u = np.linalg.solve(B.T, np.sign(w[support]))
        except np.linalg.LinAlgError:
            return w, dual
    else:
        w_s = np.linalg.lstsq(B, y, rcond=None)[0]
        u = dual
    if (np.abs(B @ w_s - y).max() > 1e-9 * max(np.abs(y).max(), 1.0)
            or np.any(np.sign(w_s) != np.sign(w[support]))):
        return w, dual
    out = np.zeros(K)
    out[support] = w_s
    return out, u


def _column_generation(X: np.ndarray, y: np.ndarray, tol: float, batch: int
                       ) -> L1Representation:
    """Delayed column generation: restricted master LPs over a growing set of arms."""
    K, d = X.shape
    # Start: d arms a pivoted QR finds independent (so the restricted LP is feasible), plus the
    # d arms best aligned with y (likely in the optimal support).
    pivots = qr(X.T, mode="r", pivoting=True)[1][:d]
    score = np.abs(X @ y) / np.maximum(np.linalg.norm(X, axis=1), 1e-300)
    aligned = np.argpartition(-score, d - 1)[:d] if K > d else np.arange(K)
    cols = np.unique(np.concatenate([pivots, aligned]))
    in_master = np.zeros(K, dtype=bool)
    in_master[cols] = True
    rounds = 0
    while True:
        rounds += 1
        sol = _solve_lp(X[cols], y)
        if sol is None:  # X spans R^d but the pivots did not (ill-conditioned X): solve it all
            return _full(X, y)
        w_s, u = sol
        w = np.zeros(K)
        w[cols] = w_s
        w, u = _polish(X, y, w, u)
        # Pricing: the reduced costs 1 ∓ x_aᵀu of every arm at once.
        viol = np.abs(X @ u)
        viol[in_master] = -np.inf  # arms in the master are priced by HiGHS itself
        n_bad = int(np.count_nonzero(viol > 1.0 + tol))
        if n_bad == 0:
            return L1Representation(w, u, float(np.abs(w).sum()), cols.size, rounds)
        take = min(batch, n_bad)
        new = np.argpartition(-viol, take - 1)[:take]
        in_master[new] = True
        cols = np.flatnonzero(in_master)


def _full(X: np.ndarray, y: np.ndarray) -> L1Representation:
    sol = _solve_lp(X, y)
    if sol is None:
        raise RuntimeError("LinGapE's arm-selection linear program is infeasible: X must span "
                           "R^d")
    w, u = _polish(X, y, *sol)
    return L1Representation(w, u, float(np.abs(w).sum()), X.shape[0], 1)


def solve_min_l1(X: np.ndarray, y: np.ndarray, *, lp: str = "column_generation",
                 tol: float = 1e-9, batch: int | None = None) -> L1Representation:
    """The minimum-ℓ1 representation w* of y in the arms, Σ_a w_a x_a = y (Xu et al. 2018).

    The linear program min ‖w‖₁ s.t. Xᵀw = y behind LinGapE's p* = |w*|/‖w*‖₁, written as
    min 1ᵀ(u + v) s.t. Xᵀ(u − v) = y, u, v ≥ 0 and solved with HiGHS
    (``scipy.optimize.linprog``). Its dual is max yᵀu s.t. |x_aᵀu| ≤ 1 for every arm a, and a
    vertex optimum has at most d non-zero weights.

    Parameters
    ----------
    X : array, shape (K, d)
        Arms (rows); must span R^d.
    y : array, shape (d,)
        Direction to represent.
    lp : {"column_generation", "full"}
        ``"full"``: one LP on all 2K columns (0.05–0.2 s at K = 10⁴–3·10⁴, d = 2).
        ``"column_generation"`` (default): delayed column generation. A restricted master LP
        over a few arms (d pivots of a column-pivoted QR of Xᵀ, which make it feasible, and the
        d arms most aligned with y) gives a dual u; all K arms are priced at once by |Xu|, the
        ``batch`` most violated arms (|x_aᵀu| > 1 + ``tol``) join the master, and this repeats
        until u is feasible for the full dual, which certifies that the restricted optimum is
        optimal for the full LP. Same optimum as ``"full"``; the same vertex when the optimum
        is unique (generic instances), checked in ``tests/test_lingape_lp.py``.
    tol : float
        Pricing tolerance of column generation.
    batch : int, optional
        Arms added per round of column generation (default 2d).

    Returns
    -------
    L1Representation
        Both paths re-solve the vertex from its support (see ``_polish``), so on the same
        vertex they return the same bits.
    """
    if lp not in LP_METHODS:
        raise ValueError(f"lp must be one of {LP_METHODS}, got {lp!r}")
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    if lp == "full":
        return _full(X, y)
    return _column_generation(X, y, float(tol), 2 * X.shape[1] if batch is None else int(batch))


def min_l1_representation(X: np.ndarray, y: np.ndarray, *, lp: str = "column_generation"
                          ) -> np.ndarray:
    """The weights w* of :func:`solve_min_l1` (the program behind LinGapE's p*).

    Parameters
    ----------
    X : array, shape (K, d)
        Arms (rows); must span R^d.
    y : array, shape (d,)
        Direction to represent.
    lp : {"column_generation", "full"}
        How the linear program is solved (see :func:`solve_min_l1`).

    Returns
    -------
    w : array, shape (K,)
    """
    return solve_min_l1(X, y, lp=lp).weights


def make_lingape(env: Environment, rng: np.random.Generator | None = None, *, delta: float,
                 theta_bound: float | None = None, **params: object) -> LinGapE:
    """LinGapE on a linear environment's arms ``env.X`` and items ``env.Z`` (a figure factory).

    Parameters
    ----------
    env : LinearBandit
        Any environment with ``X``, ``Z`` and ``theta`` attributes.
    rng : Generator, optional
        The algorithm stream ξ; LinGapE has no internal randomness, so it is unused.
    delta : float
        Confidence δ.
    theta_bound : float, optional
        S ≥ ‖θ*‖₂; by default ‖θ*‖₂ itself, as in Fiez et al.'s code.
    **params
        Other keyword arguments of :class:`LinGapE`.
    """
    if theta_bound is None:
        theta_bound = float(np.linalg.norm(env.theta))
    return LinGapE(env.X, env.Z, delta, theta_bound=theta_bound, **params)


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

    #: The block driver (:mod:`banditkit.engines`).
    engines = "banditkit.identification.lingape.blocks:lingape_engine"

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
        j, B = challenger(est, self._qz, self._m2c, i, self._radius)
        return i, j, B

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


# -- arithmetic shared with the block driver (lingape_blocks.py) ---------------------------------
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


def challenger(est: np.ndarray, qz: np.ndarray, m2c: np.ndarray, i: int, rad: float
               ) -> tuple[int, float]:
    """(j_t, B(t)) given the empirical best item i_t = i: the argmax over j ≠ i of
    (z_j − z_i)ᵀθ̂ + C_t ‖z_i − z_j‖_{A⁻¹}, and that maximum.

    ``est`` are the item estimates z_jᵀθ̂, ``qz`` the forms z_jᵀA⁻¹z_j, ``m2c`` the cross terms
    −2 z_jᵀA⁻¹z_i (so ‖z_i − z_j‖² = q_i + q_j + m2c_j), ``rad`` the radius C_t.
    """
    ucb = qz + (qz[i] + m2c)  # ‖z_i − z_j‖²_{A⁻¹}
    np.maximum(ucb, 0.0, out=ucb)
    np.sqrt(ucb, out=ucb)
    ucb *= rad
    ucb += est
    ucb -= est[i]
    ucb[i] = -np.inf
    j = int(ucb.argmax())
    return j, float(ucb[j])


def radius(log_const: float, logdet: float | np.ndarray, sigma: float, offset: float
           ) -> float | np.ndarray:
    """C_t = σ √(2 max(log_const + ½ log det A, 0)) + λ^{1/2} S, for one trial or an array."""
    if isinstance(logdet, np.ndarray):
        return sigma * np.sqrt(2.0 * np.maximum(log_const + 0.5 * logdet, 0.0)) + offset
    return sigma * math.sqrt(2.0 * max(log_const + 0.5 * logdet, 0.0)) + offset


def pair_ratios(X: np.ndarray, Z: np.ndarray, lo: int, hi: int, *, lp: str = "column_generation"
                ) -> tuple[np.ndarray, np.ndarray]:
    """(support, 1/p*_a on the support) of the direction z_lo − z_hi: the data of the ratio rule.

    ``lp`` chooses how the program is solved (:func:`solve_min_l1`); LinGapE and the block
    driver both use the default, so they share the same solutions.
    """
    w = np.abs(min_l1_representation(X, Z[lo] - Z[hi], lp=lp))
    # HiGHS returns a vertex; entries at round-off level are not part of the support.
    support = np.flatnonzero(w > 1e-9 * max(w.max(), 1e-300))
    if support.size == 0:
        raise ValueError(f"items {lo} and {hi} are equal: LinGapE cannot separate them")
    return support, w.sum() / w[support]


def empirical_best(Z: np.ndarray, theta: np.ndarray) -> int:
    """argmax_j z_jᵀθ (ties to the lowest index)."""
    return int(np.argmax(Z @ theta))
