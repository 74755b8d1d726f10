"""Track-and-Stop for (transductive) linear bandits with lazy updates (Jedra & Proutière,
"Optimal best-arm identification in linear bandits", NeurIPS 2020, Algorithm 1).

* Initialisation: one pull of each of d spanning arms (A_t invertible from then on).
* Sampling rule: with forced exploration, if λ_min(A_t) < f(t) = c₀ √t, pull the next arm of
  the spanning set (round robin); otherwise track the plug-in optimal allocation
  w(t) ∈ argmax_w min_{z ≠ ẑ} ((ẑ − z)ᵀθ̂)² / (2‖ẑ − z‖²_{A(w)⁻¹}), A(w) = Σ_a w_a x_a x_aᵀ,
  by C-tracking (a_t = argmin_a N_a(t) − Σ_{s ≤ t} w_a(s)) or D-tracking
  (a_t = argmin_a N_a(t) − t w_a(t)); ties to the lowest index.
* Lazy updates: w(t) is recomputed only at the times of a geometric schedule
  t_k = ⌈t_{k−1} · ratio⌉ (and kept in between), which Jedra & Proutière allow for any schedule
  whose number of updates grows without bound; asymptotic optimality is kept.
* Stopping rule: the GLR statistic Z(t) against β(t, δ) (:mod:`.linear_glr`; the paper's
  threshold by default, the experiments' heuristic as ``threshold="heuristic"``); recommend
  ẑ = argmax_z zᵀθ̂_t.

The allocation is the XY-optimal design on the gap-normalised directions (ẑ − z)/Δ̂_z — the
program of Fiez et al.'s oracle allocation (eq. (1)) at θ̂ instead of θ* — solved by
:func:`~banditkit.design.xy_optimal` to a certified relative gap ``design_tol``.

Transductive use (items Z ≠ arms X) is the same algorithm with the alternatives ranging over Z
(as in Jedra & Proutière's Section 6 discussion and Degenne et al. 2020); with Z = X it is the
paper's.
"""

from __future__ import annotations

import math

import numpy as np

from ...design import xy_optimal
from ...validation import check_positive
from ..glr import GLRIdentifier

__all__ = ["TRACKINGS", "LinearTrackAndStop", "make_track_and_stop", "plug_in_allocation"]

TRACKINGS = ("C", "D")


def plug_in_allocation(X: np.ndarray, Z: np.ndarray, est: np.ndarray, tol: float) -> np.ndarray:
    """w(θ̂) = argmax_w min_{z ≠ ẑ} Δ̂_z² / (2‖ẑ − z‖²_{A(w)⁻¹}) with Δ̂ = est[ẑ] − est.

    Equivalently argmin_w max_{z ≠ ẑ} ‖(ẑ − z)/Δ̂_z‖²_{A(w)⁻¹}: the XY design on the
    gap-normalised directions. Gaps at round-off level (an exact tie) are floored so the
    direction stays finite.
    """
    best = int(est.argmax())
    others = np.flatnonzero(np.arange(Z.shape[0]) != best)
    gaps = est[best] - est[others]
    floor = 1e-12 * max(1.0, float(np.abs(est).max()))
    directions = (Z[best] - Z[others]) / np.maximum(gaps, floor)[:, None]
    return np.asarray(xy_optimal(X, directions, tol=tol).weights)


def make_track_and_stop(env: object, rng: np.random.Generator | None = None, *, delta: float,
                        **params: object) -> LinearTrackAndStop:
    """Track-and-Stop on a linear environment's arms ``env.X`` and items ``env.Z`` (a figure
    factory; ``rng`` is unused: the algorithm has no internal randomness)."""
    return LinearTrackAndStop(env.X, env.Z, delta, **params)  # type: ignore[attr-defined]


class LinearTrackAndStop(GLRIdentifier):
    """Lazy Track-and-Stop for linear bandits (Jedra & Proutière 2020, Algorithm 1).

    Parameters
    ----------
    X : array, shape (K, d)
        Arms; must span R^d.
    Z : array, shape (M, d) or None
        Items (distinct rows); ``None`` means Z = X.
    delta : float
        Confidence δ ∈ (0, 1).
    threshold : {"paper", "heuristic"}
        β(t, δ): ``"paper"`` (default) the δ-correct threshold of Jedra & Proutière's
        Proposition 2, ``"heuristic"`` log((1 + log t)/δ) of their experiments
        (:mod:`~banditkit.identification.linear_glr`).
    tracking : {"C", "D"}
        C-tracking (default) or D-tracking of the lazily updated allocation.
    lazy_ratio : float
        The allocation is recomputed after the spanning pulls and then whenever t reaches
        ⌈previous update time · lazy_ratio⌉ (> 1).
    forced_scale : float, optional
        c₀ of the forced exploration f(t) = c₀ √t; default λ_min(A₀)/√d with A₀ the Gram matrix
        of the spanning set (so that f(d) ≤ λ_min(A₀)).
    u : float
        u > 0 of the paper threshold.
    c : float, optional
        c of the paper threshold (stopping also needs λ_min(A_t) ≥ c); default λ_min(A₀).
    sigma : float
        Sub-Gaussian noise level σ (1 for N(0, 1) noise).
    design_tol : float
        Certified relative gap of each allocation solve.
    refresh_every : int
        Recompute A⁻¹ and the forms from scratch every this many pulls.

    Notes
    -----
    Fully sequential: the spanning pulls are one batch (they depend on no reward), then one pull
    per batch. No internal randomness (ties go to the lowest index), so ``rng`` is not taken.
    :func:`~banditkit.identification.track_and_stop_blocks.simulate_track_and_stop` runs a trial
    with the same decisions in blocks.
    """

    #: The compiled kernel, or the block driver without numba (:mod:`banditkit.engines`).
    engines = "banditkit.identification.track_and_stop.blocks:track_and_stop_engine"

    def __init__(self, X: np.ndarray, Z: np.ndarray | None, delta: float, *,
                 threshold: str = "paper", tracking: str = "C", lazy_ratio: float = 2.0,
                 forced_scale: float | None = None, u: float = 1.0, c: float | None = None,
                 sigma: float = 1.0, design_tol: float = 0.01,
                 refresh_every: int = 10_000) -> None:
        if tracking not in TRACKINGS:
            raise ValueError(f"tracking must be one of {TRACKINGS}, got {tracking!r}")
        self.lazy_ratio = check_positive(lazy_ratio, "lazy_ratio", above=1.0)
        self.design_tol = check_positive(design_tol, "design_tol")
        if forced_scale is not None:
            forced_scale = check_positive(forced_scale, "forced_scale")
        super().__init__(X, Z, delta, threshold=threshold, u=u, c=c, sigma=sigma,
                         refresh_every=refresh_every)
        self.tracking = tracking
        self.forced_scale = (self.lambda0 / math.sqrt(self.d) if forced_scale is None
                             else forced_scale)
        self.weights = np.zeros(self.n_arms)
        self._cum = np.zeros(self.n_arms)  # Σ_s w(s) of C-tracking
        self._next_update = 0
        self.updates = 0
        self.forced = 0

    def _choose(self) -> int:
        """The next arm: forced exploration, else tracking of the (lazily updated) allocation."""
        st = self.state
        t = st.t
        if t >= self._next_update:
            # From a fresh state, so that every driver (sequential or in blocks) computes the
            # allocation from the same bits.
            st.refresh()
            self.weights = plug_in_allocation(self.X, self.Z, st.est, self.design_tol)
            self.updates += 1
            self._next_update = max(t + 1, math.ceil(t * self.lazy_ratio))
        self._cum += self.weights
        f = self.forced_scale * math.sqrt(t)
        if self._lam_lb < f and self._lambda_min() < f:
            arm = int(self.basis[self.forced % self.d])
            self.forced += 1
            return arm
        if self.tracking == "C":
            return int((st.counts - self._cum).argmin())
        return int((st.counts - t * self.weights).argmin())

    @property
    def info(self) -> dict:
        return {"allocation_updates": self.updates, "forced_pulls": self.forced,
                "glr": self.glr, "beta": self.beta, "threshold": self.threshold}
