"""ALBA (Tao, Blanco and Zhou, ICML 2018, "Best arm identification in linear bandits with linear
dimension dependency") with the Y-ElimTil sub-procedure, as run by Fiez et al. (NeurIPS 2019,
"Sequential experimental design for transductive linear bandits", Section 5 and Appendix F),
in the batch protocol: each phase is one batch of a rounded optimal design.

Structure (rounds r = 0, 1, ... of ALBA; phases s = 1, 2, ... of Y-ElimTil_p):

* round r runs Y-ElimTil_p with p = ⌊d / 2^r⌋ and δ_r = 6δ / (π²(r + 1)²) on the active set S
  until |S| ≤ p; the algorithm stops when one item is left;
* phase s of Y-ElimTil: δ_s = 6δ_r / (π² s²), ε_s = γ^{-s} (γ = ``epsilon_decay``),
  l_s = c₀ (2 + (6 + 4ε_s) d) / (4ε_s²) with c₀ = max(4S², 3), and
  n_s = ⌈l_s log(5|S_r|² / (2δ_s))⌉ pulls (|S_r| = active items when round r began);
* the pulls follow a G-optimal design λ on the active items, computed on the arms of X that lie
  in the span of S (Tao et al.'s dimension reduction: once few items are left, the problem lives
  in their span), with ``banditkit.design.g_optimal`` in coordinates of that subspace, and
  rounded into n_s pulls by ``banditkit.design.round_allocation``;
* from the phase's own pulls (earlier phases are not reused, as in Tao et al.), the empirical best
  active item ẑ is found and every z ∈ S with (ẑ − z)ᵀθ̂ > W(ẑ − z) is eliminated (the "Y" form:
  differences are estimated directly).

Deviations from Tao et al., all forced by the batch protocol or made for validity:

* Tao et al.'s estimator, as implemented in the reference code below, draws the n_s arms i.i.d.
  from λ and estimates θ by M(λ)⁻¹(1/n)Σ x_t r_t, M(λ) = Σ_x λ_x x xᵀ, with a Bernstein bound
  that accounts for the random arm draws. Here the allocation is the rounded
  design (deterministic counts) and θ̂ is ordinary least squares on the phase's pulls, which
  equals Tao et al.'s estimator whenever the counts are exactly n_s λ. The width is then the
  fixed-design sub-Gaussian one, W(y) = σ ‖y‖_{A⁻¹} √(2 log(2|S|² / δ_s)) with
  A = Σ_x n_x x xᵀ, a union bound over the pairs of S; summed over phases and rounds the failure
  probability is at most Σ_r Σ_s δ_s ≤ δ, so the algorithm stays δ-PAC.
* The schedule (l_s, c₀, ε_s = 1.1^{-s}, the 5|S_r|²/(2δ_s) inside the log) is that of the
  reference code behind Fiez et al.'s figures (fiezt/Transductive-Linear-Bandit-Code,
  ALBA_YELIM.py), which is what their ALBA curves measure; Tao et al.'s paper text could not be
  consulted here, so ``epsilon_decay`` is exposed (2.0 gives a halving schedule).
* ALBA is defined for Z = X; a transductive Z ≠ X is refused (Fiez et al. do not run ALBA on
  transductive instances either).
"""

from __future__ import annotations

import math

import numpy as np

from ..design import g_optimal, round_allocation
from ..estimation.least_squares import LeastSquares
from ..protocol import Algorithm, Batch
from ..validation import check_arms, check_probability, check_spans

__all__ = ["ALBA"]


def _check_number(value: object, name: str, *, low: float, strict: bool) -> float:
    try:
        v = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(v) or v < low or (strict and v == low):
        rel = ">" if strict else ">="
        raise ValueError(f"{name} must be a finite number {rel} {low}, got {value!r}")
    return v


class ALBA(Algorithm):
    """ALBA with Y-ElimTil (Tao et al. 2018), batched, as baseline of Fiez et al. (2019).

    Parameters
    ----------
    X : array, shape (K, d)
        Arms; must span R^d.
    Z : array or None
        Items; must be ``None`` or equal to ``X`` (ALBA is not transductive).
    delta : float
        Confidence δ ∈ (0, 1).
    theta_bound : float
        S ≥ ‖θ*‖₂, entering the phase lengths through c₀ = max(4S², 3) (Fiez et al.'s code
        passes the true norm).
    sigma : float
        Sub-Gaussian noise level of the rewards (1 for N(0, 1) noise).
    epsilon_decay : float
        γ > 1 in ε_s = γ^{-s}; 1.1 as in Fiez et al.'s experiments.
    design_tol : float
        Relative optimality gap at which the G-optimal design stops (Fiez et al., Appendix F,
        stop their Frank–Wolfe at a 0.01 change).

    Notes
    -----
    See the module docstring for the algorithm and every deviation from Tao et al.
    """

    kind = "identification"

    def __init__(self, X: np.ndarray, Z: np.ndarray | None, delta: float, *, theta_bound: float,
                 sigma: float = 1.0, epsilon_decay: float = 1.1, design_tol: float = 0.01
                 ) -> None:
        X = check_arms(X, "X")
        if Z is not None:
            Zarr = check_arms(Z, "Z")
            if Zarr.shape[1] != X.shape[1]:
                raise ValueError(f"Z must have d = {X.shape[1]} columns like X, got "
                                 f"{Zarr.shape[1]}")
            if Zarr.shape != X.shape or not np.array_equal(Zarr, X):
                raise ValueError("ALBA (Tao et al. 2018) identifies the best arm of X: Z must be "
                                 "None or equal to X (transductive Z != X is not supported)")
        check_spans(X, "X")
        self.delta = check_probability(delta, "delta")
        self.theta_bound = _check_number(theta_bound, "theta_bound", low=0.0, strict=False)
        self.sigma = _check_number(sigma, "sigma", low=0.0, strict=True)
        self.epsilon_decay = _check_number(epsilon_decay, "epsilon_decay", low=1.0, strict=True)
        self.design_tol = _check_number(design_tol, "design_tol", low=0.0, strict=True)
        super().__init__(X.shape[0])
        self.X = self.Z = X
        self.d = X.shape[1]
        self.c0 = max(4.0 * self.theta_bound ** 2, 3.0)

        self.active = np.arange(self.n_arms)
        self.round = 0          # r
        self.phase = 1          # s, within the round
        self.phases = 0         # phases run, all rounds together
        self.p = self.d         # ⌊d / 2^r⌋
        self._round_size = self.n_arms  # |S_r|
        self._designs: dict[bytes, tuple[np.ndarray, int]] = {}
        # (n_s, δ_s, dim span S) of the pending phase
        self._current: tuple[int, float, int] | None = None
        self._last_best: int | None = None

    # -- schedule ------------------------------------------------------------------------------
    def delta_round(self, r: int) -> float:
        """δ_r = 6δ / (π² (r + 1)²)."""
        return 6.0 * self.delta / (math.pi ** 2 * (r + 1) ** 2)

    def delta_phase(self, r: int, s: int) -> float:
        """δ_s = 6δ_r / (π² s²)."""
        return 6.0 * self.delta_round(r) / (math.pi ** 2 * s ** 2)

    def phase_length(self, r: int, s: int, round_size: int) -> int:
        """n_s = ⌈l_s log(5|S_r|² / (2δ_s))⌉ with l_s = c₀(2 + (6 + 4ε_s)d) / (4ε_s²)."""
        eps = self.epsilon_decay ** (-s)
        l_s = self.c0 * (2.0 + (6.0 + 4.0 * eps) * self.d) / (4.0 * eps ** 2)
        log_term = math.log(5.0 * round_size ** 2 / (2.0 * self.delta_phase(r, s)))
        return math.ceil(l_s * log_term)

    def design(self, active: np.ndarray) -> tuple[np.ndarray, int]:
        """G-optimal weights over X for the items ``active``, on the arms in their span, and
        the dimension of that span."""
        key = np.asarray(active, dtype=np.int64).tobytes()
        hit = self._designs.get(key)
        if hit is not None:
            return hit
        S = self.Z[active]
        _, sv, Vt = np.linalg.svd(S, full_matrices=False)
        k = int(np.sum(sv > 1e-10 * sv[0] * max(S.shape)))
        U = Vt[:k].T  # orthonormal basis of span(S)
        coords = self.X @ U
        resid = np.linalg.norm(self.X - coords @ U.T, axis=1)
        in_span = np.flatnonzero(resid <= 1e-9 * np.maximum(np.linalg.norm(self.X, axis=1), 1.0))
        weights = np.zeros(self.n_arms)
        weights[in_span] = g_optimal(coords[in_span], tol=self.design_tol).weights
        weights /= weights.sum()
        self._designs[key] = (weights, k)
        return weights, k

    # -- protocol ------------------------------------------------------------------------------
    def _next_batch(self) -> Batch | None:
        if self.active.size <= 1:
            return None
        while self.active.size <= self.p:  # Y-ElimTil_p is done: next round
            self.round += 1
            self.phase = 1
            self.p = self.d // 2 ** self.round
            self._round_size = self.active.size
        n = self.phase_length(self.round, self.phase, self._round_size)
        weights, k = self.design(self.active)
        self._current = (n, self.delta_phase(self.round, self.phase), k)
        return Batch.from_allocation(round_allocation(weights, n))

    def _observe(self, batch: Batch, rewards: np.ndarray, costs: np.ndarray | None) -> None:
        if self._current is None:
            raise RuntimeError("ALBA.observe called without a pending phase")
        n_s, delta_s, span_dim = self._current
        self._current = None
        fit = LeastSquares.from_batch(self.X, batch, rewards)
        est = self.Z[self.active] @ fit.theta
        best = int(np.argmax(est))
        self._last_best = int(self.active[best])
        self.phase += 1
        self.phases += 1
        if batch.n_pulls < n_s or fit.rank < span_dim:
            return  # a phase cut short (budget cap) does not identify span(S): no elimination
        Y = self.Z[self._last_best] - self.Z[self.active]
        m = self.active.size
        width = self.sigma * np.sqrt(2.0 * math.log(2.0 * m * m / delta_s)
                                     * np.maximum(fit.norms2(Y), 0.0))
        keep = (est[best] - est) <= width
        keep[best] = True
        self.active = self.active[keep]

    # -- results -------------------------------------------------------------------------------
    @property
    def recommendation(self) -> int | None:
        """The last item standing (the last phase's empirical best if cut off before)."""
        if self.active.size == 1:
            return int(self.active[0])
        return self._last_best

    @property
    def info(self) -> dict:
        return {"rounds": self.round + 1, "phases": self.phases, "active": int(self.active.size),
                "designs": len(self._designs)}
