"""Replicable linear bandits: Algorithms 3 and 4 of Esfandiari, Kalavasis, Karbasi, Krause,
Mirrokni and Velegkas, "Replicable Bandits", ICLR 2023 (Section 5).

A policy is ρ-replicable if two executions sharing the internal randomness ξ (the ``rng``
argument) and seeing independent rewards pull the same sequence of arms with probability
≥ 1 − ρ. Both algorithms are batched eliminations whose batches are fixed multisets computed
deterministically from the active set (so agreeing executions pull the same arms), and whose
eliminations are made replicable either by a random threshold (Algorithm 3) or by a replicable
estimate (Algorithm 4).
"""

from __future__ import annotations

import math

import numpy as np

from ...envs.base import Environment
from ...estimation.least_squares import LeastSquares
from ...estimation.replicable_lse import CoreSet, check_range, core_set, replicable_lse
from ...estimation.replicable_mean import repmean_precision
from ...protocol import Batch
from ...registry import need_horizon, register_policy
from ...rng import SeedLike, as_generator
from ...validation import check_arms, check_positive, check_positive_int, check_probability
from ..commit import check_commit, commit_batch, linear_commit_values, split_rho
from .elimination import LinearElimination, PhasedLinearElimination, linear_arms

__all__ = ["ReplicableLinearElimination", "ReplicableLinearLSE", "replicable_linear_elimination",
           "replicable_linear_lse"]

def _check_rho(rho: object) -> float:
    return check_probability(rho, "rho", open_high=False)


class ReplicableLinearElimination(LinearElimination):
    """Algorithm 3 of Esfandiari et al. (ICLR 2023): replicable batched elimination for linear
    bandits with K arms (Theorem 6: ρ-replicable, regret O(K²/ρ² · sqrt(d T log(KT)))).

    B = ⌈ln T⌉ batches, β = ⌊max(K²/ρ², 2304)⌋, and for batch i:
    ε̃_i = sqrt(d ln(KT²)/(β q^i)) (the confidence of the blown-up batch),
    ε_i = sqrt(d ln(KT²)/q^i) (the confidence without the blow-up), the multiset of Lemma 5 for
    δ = 1/(KT²) and ε = ε̃_i — the active arms' G-optimal design (deterministic Frank–Wolfe, so
    both executions pull the same multiset) rounded to n_i = 10 d ln(KT²)/ε̃_i² = 10 β q^i
    pulls — the least-squares estimate θ̂_i of that batch, a threshold ε̄_i ~ Uni[ε_i/2, ε_i]
    drawn from ξ, and arm a is eliminated when ⟨a, θ̂_i⟩ + ε̃_i < max_b ⟨b, θ̂_i⟩ − ε̄_i.
    q = (T/c)^(1/B) with c = 10 β, so that n_i = c q^i and the batches fill the horizon.

    Parameters
    ----------
    X : array, shape (K, d)
        Arms; must span R^d.
    horizon : int
        T ≥ K.
    rho : float in (0, 1]
        Target replicability ρ.
    rng : Generator or seed
        The internal randomness ξ (the thresholds ε̄_i and the K offsets of a
        ``"replicable-argmax"`` commit, all drawn at construction).
    n_batches, q, size_constant, delta, confidence_scale, design_tol
        As in :class:`~banditkit.policies.linear.elimination.LinearElimination`
        (``confidence_scale`` multiplies ε_i and ε̃_i alike).
    beta : float ≥ 1, optional
        The replicability blow-up β; default ⌊max(K²/ρ_e², 2304)⌋ (the paper, with ρ_e = ρ − ρ_c
        the eliminations' share of ρ: all of ρ unless ``commit="replicable-argmax"``). The bad
        event of the proof has probability ≤ 16/sqrt(β) per arm and batch, in at most 5
        batches per arm (Appendix C, which uses β ≥ 2304 for that count), so the proof's
        constants give ρ only for β ≥ 6400 K²/ρ²; smaller β (the default included) trades
        replicability for regret, and the audit (``banditkit audit``) measures what a choice
        achieves.
    commit : {"lowest-index", "round-robin", "replicable-argmax", "argmax"}
        What the rest of the horizon plays after the last batch
        (:mod:`banditkit.policies.commit`). The paper's line 18 plays argmax_a ⟨a, θ̂_{B−1}⟩
        (``"argmax"``), a function of the rewards: two executions that agree on every
        elimination still differ whenever two surviving arms are close, so Algorithm 3 as
        printed is not covered by Theorem 6's replicability argument. The default is Algorithm
        2's rule (the lowest-index surviving arm); it and ``"round-robin"`` (an even split) are
        functions of the active set, covered by the proof. ``"replicable-argmax"`` rounds each
        surviving arm's ⟨a, θ̂_{B−1}⟩ on a grid of width set by its sub-Gaussian deviation
        ‖a‖_{V⁻¹} with offsets from ξ (:func:`~banditkit.policies.commit.linear_commit_values`;
        1-sub-Gaussian noise assumed, as for ε_i), at ρ_c/|A| per arm. Every rule keeps the
        regret proof (each surviving arm has gap ≤ 4ε_{B−1}).
    commit_share : float in (0, 1), optional
        With ``commit="replicable-argmax"``: ρ_c/ρ (default 1/2). Refused for other rules.

    Notes
    -----
    Deviations from the paper: (1) line 7 writes n_i = 10 d log(KT²)/ε_i², which equals 10 q^i
    and contradicts the size Θ(d log(1/δ)/ε̃_i²) of the multiset it asks for on line 8 and the
    proof of Theorem 6 (batch regret 4 n_i ε_{i−1} with n_i ≤ C β q^i); we use ε̃_i, i.e.
    n_i = 10 β q^i. (2) ``commit`` above. (3) The paper's c in q = (T/c)^(1/B) is the
    unspecified constant of Lemma 5's size; we take c = 10 β, the constant of (1). (4) When the
    active arms stop spanning R^d, designs and estimates live in their span. (5) A batch has at
    least as many pulls as the design's support (the d log log d term of Lemma 5). (6) With
    one arm left the rest of the horizon goes to it at once (the same pulls as further
    batches of that arm).

    With the paper's constants β ≥ 2304 and 10 β q ≥ 23040 q pulls in the first batch: at
    T = 45000 and K = 20 there is one batch (q < 1.03) followed by a commitment. Practical runs
    set ``beta`` and ``size_constant`` explicitly (see the ``replicable-bandits:linear``
    figure).
    """

    def __init__(self, X: np.ndarray, horizon: int, rho: float, *, rng: SeedLike = None,
                 n_batches: int | None = None, q: float | None = None,
                 beta: float | None = None, size_constant: float = 10.0,
                 delta: float | None = None, confidence_scale: float = 1.0,
                 commit: str = "lowest-index", commit_share: float | None = None,
                 design_tol: float = 0.01) -> None:
        Xc = check_arms(X, "X")
        self.rho = _check_rho(rho)
        K = Xc.shape[0]
        self.commit = check_commit(commit)
        self.rho_elimination, self.rho_commit = split_rho(self.rho, self.commit, commit_share)
        self.beta = (float(math.floor(max(K**2 / self.rho_elimination**2, 2304.0)))
                     if beta is None else check_positive(beta, "beta"))
        if self.beta < 1:  # as Algorithm 2's β: a blow-up, never fewer pulls than ε_i asks for
            raise ValueError(f"beta must be >= 1 (the blow-up of the batch sizes; beta < 1 "
                             f"would make eps_tilde_i > eps_i), got {beta!r}")
        super().__init__(Xc, horizon, n_batches=n_batches, q=q, size_constant=size_constant,
                         delta=delta, confidence_scale=confidence_scale, design_tol=design_tol)
        # ξ: one uniform per batch for ε̄_i, then the commit grid's offset, drawn up front so
        # both executions use the same ones (the thresholds come first, as before the commit
        # offset existed).
        gen = as_generator(rng)
        self._uniforms = gen.random(self.n_batches)
        self._commit_offset = float(gen.random())
        self._norms2 = np.full(K, np.nan)  # ‖a‖²_{V⁻¹} of the last phase (replicable-argmax)
        self.commit_scores: np.ndarray | None = None

    def _unit(self) -> float:
        return self.size_constant * self.beta

    def epsilon_tilde(self, i: int) -> float:
        """ε̃_i = sqrt(d ln(1/δ) / (β q^i))."""
        return self.epsilon(i) / math.sqrt(self.beta)

    def threshold(self, i: int) -> float:
        """ε̄_i = ε_i/2 + U_i ε_i/2 with U_i ~ Uni[0, 1] from ξ (line 13)."""
        eps = self.epsilon(i)
        return eps / 2.0 + self._uniforms[i - 1] * eps / 2.0

    def _keep(self, estimates: np.ndarray) -> np.ndarray:
        i, s = self.phase, self.confidence_scale
        return (estimates + s * self.epsilon_tilde(i)
                >= estimates.max() - s * self.threshold(i))

    def _estimate(self, counts: np.ndarray, sums: np.ndarray) -> np.ndarray:
        est = super()._estimate(counts, sums)
        if self.commit == "replicable-argmax":
            # the grid of the commit's rounding needs this phase's ‖a‖²_{V⁻¹} (same coordinates)
            Y = self._coords()
            self._norms2[:] = np.nan
            self._norms2[self.active] = LeastSquares.from_sums(Y, counts, sums).norms2(Y)
        return est

    def _commit_scores(self) -> np.ndarray | None:
        """What an argmax commit maximises over the surviving arms (active order); ``None``
        for the other rules or before any phase (no estimate)."""
        a = self.active
        if self.phase == 0 or self.commit in ("lowest-index", "round-robin"):
            return None
        if self.commit == "argmax":
            return self.last_estimates[a]
        return linear_commit_values(self.last_estimates[a], self._norms2[a], self.rho_commit,
                                    self._commit_offset)

    def _choose_final(self) -> int:
        self.commit_scores = self._commit_scores()
        batch = commit_batch(self.commit, self.active, self.remaining, self.n_arms,
                             self.commit_scores)
        return int(batch.arms[0])  # round-robin: its first arm (the split is _next_batch's)

    def _next_batch(self) -> Batch | None:
        batch = super()._next_batch()
        if batch is not None and self.final_arm is not None and self.commit == "round-robin":
            # the base class commits to one arm; the split goes over every surviving arm
            return commit_batch(self.commit, self.active, self.remaining, self.n_arms)
        return batch

    @property
    def info(self) -> dict:
        return {**super().info, "beta": self.beta, "commit": self.commit,
                "rho_commit": self.rho_commit,
                "commit_scores": (None if self.commit_scores is None
                                  else self.commit_scores.tolist())}


def _log1(x: float) -> float:
    """max(1, ln x): the paper's iterated logarithms of d are ≤ 0 or undefined for small d."""
    return max(1.0, math.log(x)) if x > 0 else 1.0


class ReplicableLinearLSE(PhasedLinearElimination):
    """Algorithm 4 of Esfandiari et al. (ICLR 2023): replicable batched elimination with a
    replicable least-squares estimator, for an infinite action set given by a finite net
    (Theorem 10: ρ-replicable, regret O(d⁴ log d (log log d)² log log log d / ρ² · sqrt(T)
    log^{3/2} T)).

    For batch i = 1, ..., B − 1 (B = ⌈ln T⌉): ε_i = c d sqrt(ln T / q^i); the blown-up size
    M_i = q^i d³ log d (log log d)² log log log d ln² T / ρ²; the core set C_i of the active
    arms' approximate G-optimal design (Lemma 7) with the effective-support fix (Lemma 8);
    every core arm pulled N_i = ⌈M_i/|C_i|⌉ times; θ̂_i = ReplicableLSE(S_i, ρ' = ρ/(dB),
    δ = 1/(2|A'|T²), τ = min(ε_i, 1)) (Lemma 9: one replicable statistical query per core arm);
    arm a eliminated when ⟨a, θ̂_i⟩ < max_b ⟨b, θ̂_i⟩ − 2ε_i (line 15; here 2 max(ε_i, γ_i),
    see ``confidence``). The last batch plays argmax_a ⟨a, θ̂_{B−1}⟩, replicable because θ̂
    is. q = (T/c_M)^(1/B) with c_M = M_i/q^i, so the batches fill the horizon.

    Parameters
    ----------
    X : array, shape (N, d)
        The net A' of the action set (e.g. :func:`banditkit.envs.instances.grid_net`); must
        span R^d. The paper asks for a 1/T-net (up to (3T)^d points); the resolution is the
        user's choice here.
    horizon : int
        T ≥ N.
    rho : float in (0, 1]
        Target replicability ρ.
    rng : Generator or seed
        The internal randomness ξ (the offsets of the replicable statistical queries).
    c : float
        The constant of ε_i = c d sqrt(ln T/q^i), unspecified in the paper; default 1.
    blowup : float, optional
        M_i / q^i; default d³ L(d) L(L(d))² L(L(L(d))) ln² T / ρ² with L(x) = max(1, ln x).
    lse_rho : float, optional
        Replicability ρ' of each batch's ReplicableLSE; default ρ/(d B) (line 12). Theorem 10's
        proof only needs ρ/B; each of the |C_i| queries gets ρ'/|C_i| (Lemma 9's proof).
    delta : float, optional
        δ of ReplicableLSE; default 1/(2 N T²).
    reward_range : (lo, hi)
        Known range of one reward (default (−1, 1): ‖a‖, ‖θ*‖ ≤ 1 bound the means by 1, and
        Rademacher rewards lie there); rewards are mapped to [0, 1] for the queries.
    confidence : {"paper", "computed"}
        "paper": query precision τ = min(ε_i, 1) (widened, see Notes), and eliminate at
        2 max(ε_i, γ_i), where γ_i = max over active a of the certified error bound of θ̂_i at
        a (:meth:`~banditkit.estimation.replicable_lse.ReplicableLSEResult.error_bound` of the
        queries as run). Line 15's 2ε_i is sound only on Appendix E's good event
        sup_a |⟨a, θ̂_i − θ*⟩| ≤ ε_i; where the queries certify that (γ_i ≤ ε_i) the rule is
        line 15's exactly, elsewhere it eliminates at the precision actually guaranteed.
        "computed" (practical): queries at the precision Lemma 2.5 gives for their counts, and
        ε_i = max over active a of the certified error bound of θ̂_i at a (rounding cell plus
        Hoeffding radius propagated through V^-1, see
        :meth:`~banditkit.estimation.replicable_lse.ReplicableLSEResult.error_bound`). It is a
        deterministic function of the active set, so replicability is unchanged, and the best
        arm survives with probability ≥ 1 − δ per batch.
    allocation : {"uniform", "design"}
        "uniform": N_i pulls of every core arm (line 11). "design": ⌈M_i⌉ pulls rounded from
        the fixed design π̂ (the n_a ∝ π̂(a) of Lemma 9's proof).
    min_mass : float, optional
        Lemma 8's mixing mass (see :func:`~banditkit.estimation.replicable_lse.core_set`).
    n_batches, q, design_tol
        As in :class:`~banditkit.policies.linear.elimination.LinearElimination`.

    Notes
    -----
    Deviations: (1) the iterated logarithms of d in M_i are floored at 1 (they are ≤ 0 for
    d < 16); (2) ``c`` (unspecified) defaults to 1 and ``q``'s constant is M_i/q^i; (3) the
    replicable query is run at precision max(τ, the precision Lemma 2.5 certifies for the
    samples), since line 12's τ may ask for more precision than the batch's samples support
    (the paper's Ω(·) sample sizes have unspecified constants), and (3') the elimination
    margin is 2 max(ε_i, γ_i), not 2ε_i. Even a query error τ = ε_i reaches θ̂_i multiplied
    by Σ_a n_a |xᵀV⁻¹a| (up to 1 + 4d in Appendix F.2's proof, which its Ω(·) absorbs; 1.4
    on the disc grid): with τ = ε_i, γ_i > ε_i, and line 15 is sound (γ_i ≤ ε_i) only in
    batches where the cap τ = 1 < ε_i leaves room; with the widened queries γ_i was 4.5 to
    16 times ε_i (c = 1, disc grid), and eliminating at 2ε_i removed the best arm in 5 of 6
    runs at T = 10^8; (4) the net is the user's, not a 1/T-net; (5) when the active arms stop
    spanning R^d, the design and the estimate are computed in their span; (6) with one arm
    left the rest of the horizon goes to it.
    With the paper's constants (d = 2, ρ = 0.3) M_1 ≈ 10^4, each query runs at ρ/(dB|C|) ≈ 0.005
    and its rounding cell is wider than the reward range until ~10^8 pulls: on the unit-disc
    grid nothing is eliminated before T ≈ 10^9, the batches pull the core set (there (−1, 0)
    and (0, −1), gaps 1.54 and 1.84) and the final argmax of an uninformative θ̂ costs more
    than a uniform choice; regret/T falls only from T ≈ 10^9 on (figure
    ``replicable-bandits:infinite``).
    The practical setting of that figure is ``confidence="computed"``, ``lse_rho=ρ``,
    ``delta=0.01``, ``blowup=100`` (replicability then measured by the audit, not proved).
    """

    kind = "regret"

    def __init__(self, X: np.ndarray, horizon: int, rho: float, *, rng: SeedLike = None,
                 n_batches: int | None = None, q: float | None = None, c: float = 1.0,
                 blowup: float | None = None, lse_rho: float | None = None,
                 delta: float | None = None, reward_range: tuple[float, float] = (-1.0, 1.0),
                 confidence: str = "paper", allocation: str = "uniform",
                 min_mass: float | None = None, design_tol: float = 0.01) -> None:
        Xc = check_arms(X, "X")
        N, d = Xc.shape
        h = check_positive_int(horizon, "horizon")
        self.rho = _check_rho(rho)
        self.c = check_positive(c, "c")
        if confidence not in ("paper", "computed"):
            raise ValueError(f"confidence must be 'paper' or 'computed', got {confidence!r}")
        if allocation not in ("uniform", "design"):
            raise ValueError(f"allocation must be 'uniform' or 'design', got {allocation!r}")
        self.confidence, self.allocation = confidence, allocation
        self.reward_range = check_range(reward_range, "reward_range")
        self.min_mass = None if min_mass is None else check_probability(min_mass, "min_mass")
        L = _log1
        self.blowup = (d**3 * L(d) * L(L(d)) ** 2 * L(L(L(d))) * math.log(h) ** 2 / self.rho**2
                       if blowup is None else check_positive(blowup, "blowup"))
        self.delta = (1.0 / (2.0 * N * float(h) ** 2) if delta is None
                      else check_probability(delta, "delta"))
        super().__init__(Xc, h, n_batches=n_batches, q=q, design_tol=design_tol)
        self.lse_rho = (self.rho / (d * self.n_batches) if lse_rho is None
                        else check_probability(lse_rho, "lse_rho", open_high=False))
        if not self.lse_rho > self.delta:
            if lse_rho is None and delta is None:
                raise ValueError(
                    f"horizon T={h} is too short for rho={self.rho:g}: the replicable LSE runs "
                    f"at lse_rho = rho/(dB) = {self.lse_rho:.3g} with delta = 1/(2NT^2) = "
                    f"{self.delta:.3g} (N={N}, d={d}, B={self.n_batches}), and needs "
                    f"lse_rho > delta")
            raise ValueError(f"lse_rho must exceed delta, got lse_rho={self.lse_rho:g}"
                             f"{'' if lse_rho is not None else ' (rho/(dB))'}, "
                             f"delta={self.delta:g}{'' if delta is not None else ' (1/(2NT^2))'}")
        self._xi = as_generator(rng)
        self._core: tuple[tuple[int, ...], CoreSet] | None = None
        self.epsilons: list[float] = []  # half the elimination margin of each batch
        self.guaranteed: list[float] = []  # γ_i: certified max error of θ̂_i on the active arms

    def _unit(self) -> float:
        return self.blowup

    def epsilon(self, i: int) -> float:
        """The paper's ε_i = c d sqrt(ln T / q^i)."""
        return self.c * self.d * math.sqrt(math.log(self.horizon) / self.q**i)

    def core(self) -> CoreSet:
        """Core set (Lemmas 7 and 8) of the active arms, in active-set order; cached."""
        key = tuple(self.active.tolist())
        if self._core is None or self._core[0] != key:
            self._core = (key, core_set(self._coords(), tol=self.design_tol,
                                        min_mass=self.min_mass))
        return self._core[1]

    def _active_design(self) -> np.ndarray:
        cs = self.core()
        w = np.zeros(self.active.size)
        w[cs.indices] = cs.weights
        return w

    def _phase_size(self, i: int) -> int:
        m_i = math.ceil(self.blowup * self.q**i)
        if self.allocation == "uniform":
            size = self.core().size
            return size * max(1, math.ceil(m_i / size))
        return max(self.core().size, m_i)

    def _allocate(self, n: int) -> np.ndarray:
        if self.allocation == "design":
            return super()._allocate(n)
        cs = self.core()
        alloc = np.zeros(self.n_arms, dtype=np.int64)
        alloc[self.active[cs.indices]] = n // cs.size
        return alloc

    def _estimate(self, counts: np.ndarray, sums: np.ndarray) -> np.ndarray:
        Y = self._coords()
        used = np.flatnonzero(counts > 0)
        i = self.phase
        lo, hi = self.reward_range
        m = used.size
        rho_a, delta_a = self.lse_rho / m, self.delta / (2 * m)
        if self.confidence == "paper":
            # τ in reward units, widened to what the samples certify (Lemma 2.5).
            certified = (hi - lo) * (1.0 + 1e-9) * np.asarray(
                repmean_precision(counts[used], delta_a, rho_a))  # 1e-9: float round-trip
            precision = np.maximum(min(self.epsilon(i), 1.0), certified)
        else:
            precision = None
        offsets = self._xi.random(m)  # ξ: one offset per core arm, in core order
        res = replicable_lse(Y[used], counts[used], sums[used], rho=self.lse_rho,
                             delta=self.delta, xi=offsets, bounds=self.reward_range,
                             precision=precision)
        self.theta_hat = res.theta
        est = Y @ res.theta
        # γ_i: the error of θ̂_i on the active arms that the queries as actually run certify
        # (w.p. ≥ 1 − δ). A deterministic function of the active set: replicability unchanged.
        guaranteed = float(res.error_bound(Y).max())
        self.guaranteed.append(guaranteed)
        if self.confidence == "computed":
            self.epsilons.append(guaranteed)
        else:
            # Line 15's 2ε_i keeps the best arm only if sup_a |⟨a, θ̂_i − θ*⟩| ≤ ε_i (Appendix
            # E's good event). When the widened queries certify only γ_i > ε_i, eliminating at
            # 2ε_i removes the best arm (5 of 6 runs on the disc at T = 10^8): use 2γ_i then.
            self.epsilons.append(max(self.epsilon(i), guaranteed))
        return est

    def _keep(self, estimates: np.ndarray) -> np.ndarray:
        return estimates >= estimates.max() - 2.0 * self.epsilons[-1]

    def _choose_final(self) -> int:
        if self.phase == 0:
            return int(self.active[0])
        return int(self.active[int(np.argmax(self.last_estimates[self.active]))])

    @property
    def info(self) -> dict:
        return {**super().info, "blowup": self.blowup, "lse_rho": self.lse_rho,
                "epsilons": list(self.epsilons), "guaranteed": list(self.guaranteed)}


@register_policy("ReplicableLinearElimination")
def replicable_linear_elimination(
        env: Environment, rng: np.random.Generator, *, horizon: int | None = None,
        rho: float = 0.3, n_batches: int | None = None, q: float | None = None,
        beta: float | None = None, size_constant: float = 10.0, delta: float | None = None,
        confidence_scale: float = 1.0, commit: str = "lowest-index",
        commit_share: float | None = None, design_tol: float = 0.01
        ) -> ReplicableLinearElimination:
    """Algorithm 3 of Esfandiari et al. (2023): replicable linear elimination, K arms."""
    return ReplicableLinearElimination(
        linear_arms(env), need_horizon("ReplicableLinearElimination", horizon), rho, rng=rng,
        n_batches=n_batches, q=q, beta=beta, size_constant=size_constant, delta=delta,
        confidence_scale=confidence_scale, commit=commit, commit_share=commit_share,
        design_tol=design_tol)


@register_policy("ReplicableLinearLSE")
def replicable_linear_lse(
        env: Environment, rng: np.random.Generator, *, horizon: int | None = None,
        rho: float = 0.3, n_batches: int | None = None, q: float | None = None,
        c: float = 1.0, blowup: float | None = None, lse_rho: float | None = None,
        delta: float | None = None, reward_range: tuple[float, float] = (-1.0, 1.0),
        confidence: str = "paper", allocation: str = "uniform",
        min_mass: float | None = None, design_tol: float = 0.01) -> ReplicableLinearLSE:
    """Algorithm 4 of Esfandiari et al. (2023): replicable LSE on a net of the action set."""
    return ReplicableLinearLSE(
        linear_arms(env), need_horizon("ReplicableLinearLSE", horizon), rho, rng=rng,
        n_batches=n_batches, q=q, c=c, blowup=blowup, lse_rho=lse_rho, delta=delta,
        reward_range=reward_range, confidence=confidence, allocation=allocation,
        min_mass=min_mass, design_tol=design_tol)
