"""Batched phased elimination for linear bandits with a finite arm set (non-replicable baseline).

Esfandiari, Karbasi, Mehrabian and Mirrokni, "Regret bounds for batched bandits", AAAI 2021
(linear-bandit algorithm, Section 5), which is the non-replicable counterpart of Algorithm 3 of
Esfandiari et al., "Replicable Bandits", ICLR 2023; the per-phase G-optimal design and
least-squares estimate are those of phased elimination (Lattimore & Szepesvári 2020,
Chapter 22). :class:`PhasedLinearElimination` holds the machinery shared with the replicable
Algorithms 3 and 4 (``banditkit.policies.linear.replicable``): the batch schedule, the active
set, the deterministic design of the active arms, the final commitment.
"""

from __future__ import annotations

import math
from abc import abstractmethod

import numpy as np

from ...design import g_optimal, round_allocation
from ...envs.base import Environment
from ...estimation.least_squares import LeastSquares
from ...protocol import Algorithm, Batch
from ...registry import need_horizon, register_policy
from ...validation import (
    check_arms,
    check_positive,
    check_positive_int,
    check_probability,
    check_spans,
)

__all__ = ["LinearElimination", "PhasedLinearElimination", "linear_arms", "linear_elimination"]

_RANK_RTOL = 1e-10


class PhasedLinearElimination(Algorithm):
    """Shared machinery of batched linear elimination (not used directly).

    Phase i = 1, ..., B − 1 pulls a multiset of the active arms fixed before its rewards are
    seen (a rounded G-optimal design of the active arms), estimates ⟨a, θ*⟩ for the active arms
    from that phase's data alone, and eliminates; when the next phase no longer fits in the
    remaining budget (or after B − 1 phases, or when one arm is left) the rest of the horizon
    goes to one arm. Subclasses set the phase sizes (:meth:`_phase_size`), the estimate
    (:meth:`_estimate`), the elimination rule (:meth:`_keep`) and the final arm.

    When the active arms no longer span R^d, designs and estimates are computed in the
    coordinates of their span (an orthonormal basis from the SVD), where the model is still
    linear and identifiable; ⟨a, θ*⟩ for active a only depends on θ*'s projection on the span.
    """

    kind = "regret"

    def __init__(self, X: np.ndarray, horizon: int, *, n_batches: int | None = None,
                 q: float | None = None, design_tol: float = 0.01) -> None:
        X = check_arms(X, "X")
        check_spans(X, "X")
        horizon = check_positive_int(horizon, "horizon")
        K, d = X.shape
        if horizon < K:
            raise ValueError(f"horizon must be at least the number of arms K = {K}, got "
                             f"{horizon}")
        super().__init__(K)
        self.X, self.d, self.horizon = X, d, horizon
        default_b = max(2, math.ceil(math.log(horizon)))
        self.n_batches = (default_b if n_batches is None
                          else check_positive_int(n_batches, "n_batches"))
        if self.n_batches < 2:  # batches i = 1..B−1 explore, batch B commits: B = 1 never looks
            raise ValueError(f"n_batches must be >= 2, got {self.n_batches}")
        self.design_tol = check_positive(design_tol, "design_tol")
        unit = self._unit()
        # A given q must make the batches grow (q > 1, as for the K-armed policies). The
        # default (T/c)^(1/B) is below 1 only when T < c, where no batch fits at all.
        self.q = ((horizon / unit) ** (1.0 / self.n_batches) if q is None
                  else check_positive(q, "q", above=1.0))
        self.active = np.arange(K)
        self.remaining = horizon
        self.phase = 0  # phases completed
        self.final_arm: int | None = None
        self.eliminated_at = np.full(K, -1, dtype=np.int64)
        self.phase_sizes: list[int] = []
        self._plan: np.ndarray | None = None
        self._coords_cache: tuple[tuple[int, ...], np.ndarray] | None = None
        self._design_cache: dict[tuple[int, ...], np.ndarray] = {}
        self.theta_hat: np.ndarray | None = None  # last phase's estimate (span coordinates)
        self.last_estimates = np.full(K, np.nan)  # ⟨a, θ̂⟩ of the last phase, active arms

    # ---- schedule -------------------------------------------------------------------------
    @abstractmethod
    def _unit(self) -> float:
        """c with phase sizes ≈ c q^i; q defaults to (T / c)^(1/B) so the phases fill T."""

    def _phase_size(self, i: int) -> int:
        """Number of pulls n_i of phase i (1-based): ⌈c q^i⌉, and at least the support size p
        of the active design, so that the rounded multiset spans (the "+ d log log d" term of
        Lemma 5's multiset size)."""
        p = int(np.count_nonzero(self._active_design()))
        return max(p, math.ceil(self._unit() * self.q**i))

    # ---- geometry of the active set -------------------------------------------------------
    def _coords(self) -> np.ndarray:
        """Coordinates of the active arms in an orthonormal basis of their span (rows)."""
        key = tuple(self.active.tolist())
        if self._coords_cache is not None and self._coords_cache[0] == key:
            return self._coords_cache[1]
        Xa = self.X[self.active]
        _, s, vt = np.linalg.svd(Xa, full_matrices=False)
        r = int(np.sum(s > _RANK_RTOL * max(s[0], 1.0) * max(Xa.shape)))
        Y = Xa if r == self.d else Xa @ vt[:r].T
        self._coords_cache = (key, Y)
        return Y

    def _active_design(self) -> np.ndarray:
        """G-optimal design weights on the active arms (deterministic; cached per active set)."""
        key = tuple(self.active.tolist())
        w = self._design_cache.get(key)
        if w is None:
            w = np.asarray(g_optimal(self._coords(), tol=self.design_tol).weights, dtype=float)
            w = w / w.sum()
            self._design_cache = {key: w}  # the active set only shrinks: keep the last one
        return w

    def _allocate(self, n: int) -> np.ndarray:
        """Pulls per arm (length K) of a phase of n pulls: the rounded design (Lemma 5)."""
        alloc = np.zeros(self.n_arms, dtype=np.int64)
        alloc[self.active] = round_allocation(self._active_design(), n)
        return alloc

    # ---- protocol ---------------------------------------------------------------------------
    def _next_batch(self) -> Batch | None:
        if self.remaining <= 0:
            return None
        if self.final_arm is None:
            if self.phase < self.n_batches - 1 and self.active.size > 1:
                n = self._phase_size(self.phase + 1)
                if n <= self.remaining:
                    self._plan = self._allocate(n)
                    return Batch.from_allocation(self._plan)
            self.final_arm = self._choose_final()
        return Batch(np.array([self.final_arm]), np.array([self.remaining]))

    def _observe(self, batch: Batch, rewards: np.ndarray, costs: np.ndarray | None) -> None:
        self.remaining -= batch.n_pulls
        if self.final_arm is not None or self._cut:
            # a cut phase ends the run (Algorithm.observe): its pulls need not span R^d, and
            # no later decision would use an elimination made on them
            return
        counts = batch.allocation(self.n_arms)
        sums = batch.arm_sums(rewards, self.n_arms)
        self.phase += 1
        self.phase_sizes.append(batch.n_pulls)
        est = self._estimate(counts[self.active], sums[self.active])
        self.last_estimates = np.full(self.n_arms, np.nan)
        self.last_estimates[self.active] = est
        keep = self._keep(est)
        self.eliminated_at[self.active[~keep]] = self.phase
        self.active = self.active[keep]

    def _estimate(self, counts: np.ndarray, sums: np.ndarray) -> np.ndarray:
        """⟨a, θ̂⟩ for every active arm from this phase's counts and sums (active order)."""
        Y = self._coords()
        theta = LeastSquares.from_sums(Y, counts, sums).theta
        self.theta_hat = theta
        return Y @ theta

    @abstractmethod
    def _keep(self, estimates: np.ndarray) -> np.ndarray:
        """Which active arms survive this phase, given their estimates (active order)."""

    @abstractmethod
    def _choose_final(self) -> int:
        """The arm that plays the rest of the horizon."""

    @property
    def info(self) -> dict:
        return {"phases": self.phase, "phase_sizes": list(self.phase_sizes),
                "n_active": int(self.active.size), "final_arm": self.final_arm,
                "q": self.q, "n_batches": self.n_batches}


class LinearElimination(PhasedLinearElimination):
    """Batched linear elimination of Esfandiari et al. (AAAI 2021), the non-replicable
    counterpart of Algorithm 3 of Esfandiari et al. (ICLR 2023).

    B = ⌈ln T⌉ batches; in batch i the multiset of Lemma 5 (the active arms' G-optimal design,
    rounded) of size n_i = 10 d ln(1/δ)/ε_i² = 10 q^i with ε_i = sqrt(d ln(1/δ)/q^i) and
    δ = 1/(K T²); the least-squares estimate θ̂_i from batch i; arm a is eliminated when
    ⟨a, θ̂_i⟩ < max_b ⟨b, θ̂_i⟩ − 2ε_i. The last batch plays argmax_a ⟨a, θ̂⟩ over the active
    arms. This is Algorithm 3 with β = 1 and the threshold ε̄_i fixed at ε_i.

    Parameters
    ----------
    X : array, shape (K, d)
        Arms; must span R^d.
    horizon : int
        T ≥ K.
    n_batches : int, optional
        B ≥ 2; default ⌈ln T⌉ (at least 2).
    q : float > 1, optional
        Growth of the batches; default (T / size_constant)^(1/B), so the batches fill T.
    size_constant : float
        The 10 of n_i = 10 d ln(1/δ)/ε_i².
    delta : float, optional
        Confidence δ; default 1/(K T²).
    confidence_scale : float
        Multiplies ε_i in the elimination rule (1 = the paper). Smaller values eliminate sooner
        (practical, at the risk of eliminating the best arm).
    design_tol : float
        Relative tolerance of the G-optimal design (g ≤ d (1 + tol)).

    Notes
    -----
    The confidence ε_i assumes 1-sub-Gaussian noise (bounded rewards in an interval of length
    2 qualify). With the rounding guarantee max_a ‖a‖²_{V^-1} ≤ d (1 + tol)(1 + 2p/n_i)/n_i the
    actual least-squares width sqrt(2 ‖a‖²_{V^-1} ln(2K B/δ)) is about 0.45 ε_i.
    """

    def __init__(self, X: np.ndarray, horizon: int, *, n_batches: int | None = None,
                 q: float | None = None, size_constant: float = 10.0,
                 delta: float | None = None, confidence_scale: float = 1.0,
                 design_tol: float = 0.01) -> None:
        Xc = check_arms(X, "X")
        K = Xc.shape[0]
        h = check_positive_int(horizon, "horizon")
        self.size_constant = check_positive(size_constant, "size_constant")
        self.delta = (1.0 / (K * float(h) ** 2) if delta is None
                      else check_probability(delta, "delta"))
        self.confidence_scale = check_positive(confidence_scale, "confidence_scale")
        super().__init__(Xc, h, n_batches=n_batches, q=q, design_tol=design_tol)

    def _unit(self) -> float:
        return self.size_constant

    def epsilon(self, i: int) -> float:
        """ε_i = sqrt(d ln(1/δ) / q^i)."""
        return math.sqrt(self.d * math.log(1.0 / self.delta) / self.q**i)

    def _keep(self, estimates: np.ndarray) -> np.ndarray:
        eps = self.confidence_scale * self.epsilon(self.phase)
        return estimates >= estimates.max() - 2.0 * eps

    def _choose_final(self) -> int:
        if self.phase == 0:
            return int(self.active[0])
        return int(self.active[int(np.argmax(self.last_estimates[self.active]))])


def linear_arms(env: Environment) -> np.ndarray:
    """The arm matrix of a linear environment (for factories building linear policies)."""
    X = getattr(env, "X", None)
    if X is None:
        raise ValueError(f"a linear policy needs a linear environment with arms X, got "
                         f"{type(env).__name__}")
    return np.asarray(X, dtype=float)


@register_policy("LinearElimination")
def linear_elimination(env: Environment, rng: np.random.Generator, *,
                       horizon: int | None = None, n_batches: int | None = None,
                       q: float | None = None, size_constant: float = 10.0,
                       delta: float | None = None, confidence_scale: float = 1.0,
                       design_tol: float = 0.01) -> LinearElimination:
    """Non-replicable batched linear elimination (Esfandiari et al. 2021); no randomness."""
    return LinearElimination(linear_arms(env), need_horizon("LinearElimination", horizon),
                             n_batches=n_batches, q=q, size_constant=size_constant,
                             delta=delta, confidence_scale=confidence_scale,
                             design_tol=design_tol)
