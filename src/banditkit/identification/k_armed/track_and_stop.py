"""Track-and-Stop for K-armed best-arm identification (Garivier & Kaufmann 2016, "Optimal best
arm identification with fixed confidence", COLT, Section 3), asymptotically optimal:
lim E[τ_δ]/log(1/δ) = T*(μ).

* Every arm is pulled once (one batch), then one pull per round.
* Sampling rule: the plug-in optimal proportions w*(μ̂(t)) (:mod:`.oracle`, Theorem 5) tracked by
  - **D-tracking** (GK16, eq. (9)–(10)): if U_t = {a : N_a(t) < √t − K/2} is not empty, pull
    argmin_{a ∈ U_t} N_a(t) (forced exploration); else argmax_a t w*_a(μ̂(t)) − N_a(t);
  - **C-tracking** (Lemma 7): argmax_a Σ_{s ≤ t} w^{ε_s}_a(μ̂(s)) − N_a(t), where w^ε is the L∞
    projection of w* onto {w ∈ Σ_K : w_a ≥ ε} and ε_t = (K² + t)^{−1/2}/2. We take
    w^ε = max(w* − η, ε) with η such that it sums to 1, an L∞ projection (its distance to w*,
    max(η, max_a ε − w*_a), is the least possible). The sum starts at the first round's pulls
    (one per arm), as if the uniform allocation had been tracked during it.
  Ties go to the lowest index. While the empirical best is tied, w* is the uniform allocation.
* **Lazy w*** (``lazy_ratio``, an option; the paper's every-round solve is the default): w* is
  recomputed only when t reaches the next time of a geometric grid t_{k+1} = ⌈ρ t_k⌉ (ρ =
  ``lazy_ratio`` > 1) or when the empirical best arm changes (the tracked w* then drifts from
  the plug-in one the most), and kept in between. Lazy updates keep asymptotic optimality as
  long as the number of updates grows without bound (Jedra & Proutière 2020, Section 4,
  "lazy updates"; Degenne, Koolen & Ménard 2019), and the Chernoff stopping rule is δ-correct
  whatever the sampling rule (GK16, Theorem 10), so δ-correctness is untouched. The forced
  exploration of D-tracking is checked every round as in the paper.
* Stopping: the Chernoff rule (:mod:`.base`), β(t, δ) = log(2t(K − 1)/δ) (GK16, Theorem 10) by
  default, their experiments' log((log t + 1)/δ) as ``threshold="heuristic"``.
* Recommendation: the empirical best arm.

Section 6 of GK16 runs D-tracking and C-tracking on μ₁ = (0.5, 0.45, 0.43, 0.4), w*(μ₁) =
(0.417, 0.390, 0.136, 0.057), and μ₂ = (0.3, 0.21, 0.2, 0.19, 0.18), w*(μ₂) = (0.336, 0.251,
0.177, 0.132, 0.104); :func:`~.oracle.characteristic_time` gives these weights to the third
decimal (tests/test_k_armed.py).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...protocol import Batch
from .base import KArmedIdentifier, check_threshold
from .solvers import weights_solver

__all__ = ["TRACKINGS", "KArmedTrackAndStop", "project_floor", "track"]

TRACKINGS = ("D", "C")


def project_floor(w: np.ndarray, eps: float) -> np.ndarray:
    """max(w − η, ε) with η such that the result sums to 1 (ε ≤ 1/K): the L∞ projection of
    the distribution w onto {v ∈ Σ_K : v_a ≥ ε} that takes the excess equally from the arms
    above the floor."""
    K = w.size
    order = np.sort(w)[::-1]
    eta = 0.0
    for k in range(K, 0, -1):  # k arms above the floor: the largest k
        eta = (order[:k].sum() - (1.0 - (K - k) * eps)) / k
        if order[k - 1] - eta > eps or k == 1:
            break
    return np.maximum(w - eta, eps)


def track(state: object, t: int, pulls: np.ndarray, means: np.ndarray, gaussian: bool,
          sigma: float) -> int:
    """The arm D- or C-tracking pulls at round t (module docstring), with the tracking state
    read from and written to ``state``: ``tracking``, ``lazy_ratio``, ``weights``, ``_cum``,
    ``_solve``, ``forced``, ``solves``, ``_next_solve``, ``_solved_for`` (the attributes of
    :class:`KArmedTrackAndStop`, and of the composable identifier's tracking rule)."""
    st: Any = state
    K = pulls.shape[0]
    if st.lazy_ratio is None:
        st._solve(means, gaussian, sigma, st.weights)
        st.solves += 1
    else:
        best = int(np.argmax(means))
        if t >= st._next_solve or best != st._solved_for:
            st._solve(means, gaussian, sigma, st.weights)
            st.solves += 1
            st._solved_for = best
            if t >= st._next_solve:
                st._next_solve = max(t + 1, math.ceil(t * st.lazy_ratio))
    if st.tracking == "D":
        under = np.flatnonzero(pulls < math.sqrt(t) - K / 2)
        if under.size:
            st.forced += 1
            return int(under[np.argmin(pulls[under])])
        return int(np.argmax(t * st.weights - pulls))
    eps = 0.5 / math.sqrt(K * K + t)
    st._cum += project_floor(st.weights, eps)
    return int(np.argmax(st._cum - pulls))


def check_lazy_ratio(lazy_ratio: float | None) -> float | None:
    if lazy_ratio is not None and not (isinstance(lazy_ratio, (int, float))
                                       and math.isfinite(lazy_ratio) and lazy_ratio > 1):
        raise ValueError(f"lazy_ratio must be a finite number > 1 (or None), got "
                         f"{lazy_ratio!r}")
    return None if lazy_ratio is None else float(lazy_ratio)


class KArmedTrackAndStop(KArmedIdentifier):
    """Track-and-Stop (Garivier & Kaufmann 2016) for K arms.

    Parameters
    ----------
    n_arms : int
        K ≥ 2.
    delta : float
        Confidence δ ∈ (0, 1).
    tracking : {"D", "C"}
        D-tracking (default, as GK16's experiments) or C-tracking.
    model : {"bernoulli", "gaussian"}
        The exponential family of w* and of the GLR (:mod:`.base`).
    sigma : float
        σ of the Gaussian model.
    threshold : {"theory", "heuristic"}
        β(t, δ) of the Chernoff stopping rule.
    horizon : int, optional
        Budget cap.
    lazy_ratio : float, optional
        Recompute w* on the geometric grid of this ratio (> 1) and when the empirical best
        changes, instead of every round (module docstring). ``None`` (default): every round,
        as the paper.

    Notes
    -----
    Deterministic (no internal randomness). w* is solved at every round
    (:func:`~.solvers.weights_solver`, compiled when numba is available), or lazily.
    """

    #: The compiled kernel (:mod:`banditkit.engines`; :mod:`.tas_kernel`).
    engines = "banditkit.identification.k_armed.tas_kernel:tas_engine"

    def __init__(self, n_arms: int, delta: float = 0.05, *, tracking: str = "D",
                 model: str = "bernoulli", sigma: float = 1.0, threshold: str = "theory",
                 horizon: int | None = None, lazy_ratio: float | None = None) -> None:
        if tracking not in TRACKINGS:
            raise ValueError(f"tracking must be one of {TRACKINGS}, got {tracking!r}")
        super().__init__(n_arms, delta=delta, model=model, sigma=sigma,
                         threshold=check_threshold(threshold), horizon=horizon)
        self.tracking = tracking
        self.weights = np.full(self.n_arms, 1.0 / self.n_arms)
        self._cum = np.ones(self.n_arms)  # Σ_s w^{ε_s}(s) of C-tracking
        self._solve = weights_solver()
        self.forced = 0
        self.lazy_ratio = check_lazy_ratio(lazy_ratio)
        self.solves = 0  # w* solves so far
        self._next_solve = 0  # the grid's next time (lazy)
        self._solved_for = -1  # the empirical best of the last solve (lazy)

    def _choose(self) -> Batch:
        return Batch.single(track(self, self.t, self.pulls, self.means(), self.gaussian,
                                  self.sigma))

    @property
    def info(self) -> dict:
        return {**super().info, "forced": self.forced, "solves": self.solves}
