"""ρ-replicable batched elimination for K-armed stochastic bandits: Algorithms 1 and 2 of
Esfandiari, Kalavasis, Karbasi, Krause, Mirrokni and Velegkas (ICLR 2023, "Replicable bandits").

A policy is ρ-replicable when two executions sharing the internal randomness ξ (the ``rng``
argument) and seeing independent rewards pull exactly the same sequence of arms with probability
≥ 1 − ρ. Both algorithms decide only at the ends of B = O(log T) batches, and make each decision
replicable:

* Algorithm 1 (Theorem 3) feeds every estimate through the replicable mean estimator
  (Proposition 2; :func:`banditkit.estimation.replicable_means`) at level ρ' = ρ/(KB), so that all
  K·B estimates coincide across executions with probability ≥ 1 − ρ.
* Algorithm 2 (Theorem 4) pulls β times more than needed (β = max(⌊K²/ρ²⌋, 2304)), so the
  estimates of two executions are within 2Ũ_i of each other, and compares them with a random
  threshold Ū_i ~ Uni[U_i/2, U_i] drawn from ξ, so that a decision flips only if the threshold
  lands in a window of relative size O(1/√β).

ξ is consumed in a data-independent way (Algorithm 1: K offsets per batch; Algorithm 2: one
uniform per batch; K offsets for a ``"replicable-argmax"`` commit), so two executions read the
same numbers from ξ as long as their decisions agree.

After the last batch that fits, the rest of the horizon plays the ``commit`` rule
(:mod:`.commit`): the paper's lowest surviving index (default) and ``"round-robin"`` are
functions of the active set, so they replicate whenever the eliminations do (the arguments of
Theorems 3 and 4 as they stand); ``"replicable-argmax"`` spends ρ_c = ``commit_share`` · ρ
(default ρ/2) on a replicable rounding of the surviving arms' means and runs the eliminations at
ρ − ρ_c, so the budgets add up to ρ; ``"argmax"`` (the empirical best surviving arm) is not
covered and its replicability is only measured.

Algorithm 1's guarantee holds with explicit constants (Lemma 2.5, union bound over K·B
estimates). Algorithm 2's does not at the printed β: Appendix B bounds the bad event by 16/√β per
arm and batch, at most 6 batches per arm, i.e. 96K/√β (+ 2δ) ≤ ρ only for β ≥ 9216 K²/ρ², and
concludes "β = Θ(K²/ρ²)"; the printed β = ⌊max{K²/ρ², 2304}⌋, which we use, is far below that
(K = 6, ρ = 0.3: 2304 against 3.7·10⁶). Its replicability at these β is measured by the audits
(``banditkit audit``), not implied by the proof's constants.
"""

from __future__ import annotations

import math

import numpy as np

from ...estimation.replicable_mean import replicable_means, repmean_precision, repmean_samples
from ...rng import SeedLike, as_generator
from ...validation import check_probability
from ..commit import split_rho
from .batched import BatchedEliminationBase

__all__ = ["ReplicableBatchedElimination", "ReplicableElimination", "paper_beta"]

_SAMPLE_RULES = ("lemma", "literal")


def paper_beta(n_arms: int, rho: float, *, floor: bool = True) -> int:
    """β = ⌊max{K²/ρ², 2304}⌋ (Algorithm 2, line 3); ``floor=False``: ⌊K²/ρ²⌋ (at least 1),
    the K²/ρ² part alone. Neither is what Appendix B's constants ask for replicability
    (β ≥ 9216 K²/ρ², and β ≥ 2304 for its bound on how often an arm is in the bad event); the
    audits measure what they achieve."""
    # relative slack so that e.g. K = 10, ρ = 0.1 gives 10000, not 9999 from 0.1² > 1/100
    return max(1, math.floor(max(n_arms**2 / rho**2 * (1 + 1e-12), 2304.0 if floor else 0.0)))


def _check_rho(rho: float) -> float:
    return check_probability(rho, "rho", open_high=False)


class ReplicableBatchedElimination(BatchedEliminationBase):
    """Algorithm 1 of Esfandiari et al. (2023): batched elimination with replicable means.

    For i = 1, …, B − 1 (while the budget allows): pull every active arm, set
    c_i = c_{i−1} + ⌊q^i⌋ and τ_i = min{1, sqrt(ln(2KTB)/c_i)} (line 9; ``confidence``
    multiplies the square root, the cap stays 1), estimate every active arm's mean with
    ``ReprMeanEstimation`` at δ = 1/(2KTB), precision τ_i and replicability ρ' = ρ/(KB), and
    eliminate arm a when μ̂_a < max μ̂ − 2τ_i. The rest of the horizon plays the active arm with
    the smallest index (``commit``).

    Parameters
    ----------
    n_arms, horizon : int
        K ≥ 2 and T ≥ K.
    rho : float in (0, 1]
        Target replicability ρ.
    rng : Generator or seed
        The internal randomness ξ (grid offsets of the replicable estimator).
    rho_per_estimate : float, optional
        ρ'; default ρ_e/(KB), ρ_e = ρ − ρ_c the eliminations' share of ρ (all of ρ unless
        ``commit="replicable-argmax"``). Must exceed 2δ.
    sample_rule : {"lemma", "literal"}
        How many pulls a batch takes. ``"lemma"`` (default, what the proof of Theorem 3 uses:
        "we need to pull an arm c_i/ρ_1² times"): after batch i every active arm has the
        Lemma 2.5 number of samples for a ρ'-replicable estimate of precision τ_i, so the batch
        tops the arm up to that count (while line 9's cap holds τ_i at 1 the count does not
        grow, and such a batch pulls each active arm once). ``"literal"``: ⌊q^i⌋ pulls per
        batch as in the pseudo-code; the estimate then only has the precision ε_i that Lemma
        2.5 gives for c_i samples (larger than τ_i), and the elimination margin is 2ε_i so that
        the best arm is still kept with high probability.
    n_batches, q, delta, confidence, commit
        See :class:`~banditkit.policies.elimination.batched.BatchedEliminationBase`.
    commit_share : float in (0, 1), optional
        With ``commit="replicable-argmax"``: ρ_c/ρ, the share of ρ spent on the commit's
        rounding (default 1/2; see :mod:`banditkit.policies.commit`). Refused for other rules.

    Notes
    -----
    Replicability (Theorem 3): all K·B estimates agree with probability ≥ 1 − KBρ' = 1 − ρ_e.
    ``"lowest-index"`` and ``"round-robin"`` commits are functions of the active set, so they
    replicate whenever the estimates do; ``"replicable-argmax"`` adds at most ρ_c (K rounded
    means at ρ_c/|A| each), for ρ_e + ρ_c = ρ in all; ``"argmax"`` is not covered.

    Deviations, all documented parameters: B = ⌈ln T⌉ for the paper's "log(T)"; the estimator
    is the explicit rounding of :mod:`banditkit.estimation.replicable_mean` (Lemma 2.5 rather
    than the Ω(·) of Proposition 2). With the theory constants the ``"lemma"`` rule needs
    2 ln(2/δ) K²B²/ρ² ≫ T samples per arm for moderate T (the count for precision τ_1 = 1),
    so no batch fits and the policy plays arm 0 throughout: replicable, with linear regret —
    the paper's experiment did not run Algorithm 1.
    """

    xi_commit = True

    def __init__(self, n_arms: int, horizon: int, rho: float = 0.3, rng: SeedLike = None, *,
                 rho_per_estimate: float | None = None, sample_rule: str = "lemma",
                 n_batches: int | None = None, q: float | None = None,
                 delta: float | None = None, confidence: float = 1.0,
                 commit: str = "lowest-index", commit_share: float | None = None) -> None:
        self.rho = _check_rho(rho)
        super().__init__(n_arms, horizon, n_batches=n_batches, q=q, delta=delta,
                         confidence=confidence, commit=commit)
        self.rho_elimination, self.rho_commit = split_rho(self.rho, self.commit, commit_share)
        self.rho_per_estimate = (self.rho_elimination / (self.n_arms * self.n_batches)
                                 if rho_per_estimate is None
                                 else check_probability(rho_per_estimate, "rho_per_estimate",
                                                        open_high=False))
        if not self.rho_per_estimate > 2 * self.delta:
            raise ValueError(self._lemma25_refusal(rho_per_estimate is None, delta is None))
        if sample_rule not in _SAMPLE_RULES:
            raise ValueError(f"sample_rule must be one of {_SAMPLE_RULES}, got {sample_rule!r}")
        self.sample_rule = sample_rule
        self.xi = as_generator(rng)
        self.estimates = np.zeros(self.n_arms)

    def _lemma25_refusal(self, default_rho_e: bool, default_delta: bool) -> str:
        """Why ρ' ≤ 2δ, in terms of what the user set (Lemma 2.5 needs ρ' > 2δ)."""
        K, B, T = self.n_arms, self.n_batches, self.horizon
        rpe, two_delta = self.rho_per_estimate, 2 * self.delta
        split = self.rho_commit > 0  # commit="replicable-argmax": eliminations get ρ_e = ρ − ρ_c
        r = "rho_e" if split else "rho"
        rho_text = f"rho={self.rho:g}" + (
            f" (rho_e = rho - rho_c = {self.rho_elimination:g} for the eliminations)"
            if split else "")
        if default_rho_e and default_delta:
            # ρ_e/(KB) > 2/(2KTB)  ⟺  T > 1/ρ_e, whatever K and B
            return (f"horizon T={T} is too short for {rho_text}: each estimate of Algorithm 1 "
                    f"runs at rho' = {r}/(KB) = {rpe:.3g} with delta = 1/(2KTB) = "
                    f"{self.delta:.3g}, and Lemma 2.5 needs rho' > 2*delta, i.e. "
                    f"T > 1/{r} = {1 / self.rho_elimination:.4g}")
        if default_delta:
            return (f"rho_per_estimate={rpe:g} must exceed 2*delta = 1/(KTB) = {two_delta:.3g} "
                    f"(Lemma 2.5; delta defaults to 1/(2KTB), here K={K}, T={T}, B={B}): "
                    f"raise rho_per_estimate or the horizon (T > {1 / (K * B * rpe):.4g} at this "
                    f"B; a longer T also raises B, so somewhat less suffices)")
        if default_rho_e:
            return (f"delta={self.delta:g} is too large for {rho_text}: each estimate runs at "
                    f"rho' = {r}/(KB) = {rpe:.3g} (K={K}, B={B}), and Lemma 2.5 needs "
                    f"rho' > 2*delta = {two_delta:.3g}: give delta < {rpe / 2:.3g}")
        return (f"rho_per_estimate={rpe:g} must exceed 2*delta = {two_delta:.3g} "
                f"(delta={self.delta:g}; Lemma 2.5)")

    def tau(self, c: int) -> float:
        """τ_i = min{1, confidence · sqrt(ln(2KTB)/c_i)} (line 9), the precision asked of the
        estimator. The cap: rewards lie in [0, 1], so a precision of 1 already says nothing."""
        return min(1.0, self.confidence * math.sqrt(self.log_term / c))

    def _samples_after(self, c: int) -> int:
        """Samples per active arm once c_i = c (the cumulative count the batch tops up to)."""
        if self.sample_rule == "literal":
            return c
        return repmean_samples(self.tau(c), self.delta, self.rho_per_estimate)

    def _pulls_per_arm(self, i: int, floor_qi: int) -> int:
        # every active arm has been pulled equally often so far (pulls of active arm 0)
        done = int(self.pulls[self.active[0]])
        return max(self._samples_after(self.c + floor_qi) - done, 1)

    def precision(self, n: int) -> float:
        """Half the elimination margin after n samples per arm: τ_i ("lemma"), ε_i ("literal")."""
        if self.sample_rule == "lemma":
            return self.tau(self.c)  # the paper's 2τ_i; the samples guarantee precision τ_i
        return float(repmean_precision(n, self.delta, self.rho_per_estimate))

    def _to_eliminate(self, i: int) -> np.ndarray:
        a = self.active
        # one offset per arm and batch whatever the active set, so ξ is read identically
        offsets = self.xi.random(self.n_arms)[a]
        n = self.pulls[a]
        self.estimates[a] = replicable_means(self.sums[a], n, self.rho_per_estimate,
                                             self.delta, offsets)
        margin = 2 * self.precision(int(n.min()))
        return self.estimates[a] < self.estimates[a].max() - margin


class ReplicableElimination(BatchedEliminationBase):
    """Algorithm 2 of Esfandiari et al. (2023, Theorem 4): replicable elimination with a β
    blow-up and a random threshold.

    For i = 1, …, B − 1, while β⌊q^i⌋|A| ≤ r: pull every active arm β⌊q^i⌋ times; with
    c_i = c_{i−1} + ⌊q^i⌋ and c̃_i = βc_i set Ũ_i = sqrt(2 ln(1/δ)/c̃_i) (the real confidence
    radius), U_i = sqrt(2 ln(1/δ)/c_i) (the radius without the blow-up) and draw
    Ū_i ~ Uni[U_i/2, U_i] from ξ; eliminate a when μ̂_a + Ũ_i < max_{a'} μ̂_{a'} − Ū_i. The rest
    of the horizon plays the active arm with the smallest index (``commit``).

    Parameters
    ----------
    n_arms, horizon : int
        K ≥ 2 and T ≥ K.
    rho : float in (0, 1]
        Target replicability ρ (enters through β).
    rng : Generator or seed
        The internal randomness ξ (the thresholds Ū_i, and the commit's offsets).
    beta : int, optional
        The blow-up β; default :func:`paper_beta` = ⌊max{K²/ρ_e², 2304}⌋ with ρ_e = ρ − ρ_c the
        eliminations' share of ρ (all of ρ unless ``commit="replicable-argmax"``). The proof of
        Theorem 4 uses β ≥ 2304 (12Ũ_t ≤ U_t/4) to show an arm is in the bad event in at most
        6 batches, and then needs 96K/√β ≤ ρ, i.e. β ≥ 9216 K²/ρ² (see Notes).
    beta_floor : bool
        ``False`` drops the 2304 floor of the default β (β = ⌊K²/ρ_e²⌋), which takes the
        policy outside the proof's argument (β ≥ 2304 bounds how often an arm's decision can
        hang on the threshold); replicability is then only measured. Refused together with an
        explicit ``beta``.
    n_batches, q, delta, confidence, commit
        See :class:`~banditkit.policies.elimination.batched.BatchedEliminationBase`; δ defaults
        to 1/(2KTB), the ln(2KTB) of lines 13–14.
    commit_share : float in (0, 1), optional
        With ``commit="replicable-argmax"``: ρ_c/ρ (default 1/2; see
        :mod:`banditkit.policies.commit`). Refused for other rules.

    Notes
    -----
    Replicability: Theorem 4's proof conditions on two executions having the same active set
    and bounds the chance that a threshold Ū_i separates their decisions by 16/√β per arm and
    batch, at most 6 batches per arm: 96K/√β + 2δ, which is ≤ ρ only for β ≥ 9216 K²/ρ². The
    printed β (the default) is far smaller, so its replicability is measured by the audits,
    not implied by the proof's constants. The ``"lowest-index"`` and ``"round-robin"`` commits
    are functions of the active set, so they replicate whenever the eliminations do.
    ``"replicable-argmax"`` rounds the surviving arms' means at ρ_c/|A| each (ρ_c in all) after
    eliminations run with β from ρ_e = ρ − ρ_c, so the budgets add up to ρ. ``"argmax"``
    compares noisy means of close arms and is not covered.

    Lines 13–14 of the pseudo-code print sqrt(2 ln(2KTB))/c̃_i; the proof (Appendix B) and the
    text use sqrt(2 ln(1/δ)/c̃_i), which we implement.
    """

    xi_commit = True

    def __init__(self, n_arms: int, horizon: int, rho: float = 0.3, rng: SeedLike = None, *,
                 beta: int | None = None, beta_floor: bool = True, n_batches: int | None = None,
                 q: float | None = None, delta: float | None = None, confidence: float = 1.0,
                 commit: str = "lowest-index", commit_share: float | None = None) -> None:
        self.rho = _check_rho(rho)
        super().__init__(n_arms, horizon, n_batches=n_batches, q=q, delta=delta,
                         confidence=confidence, commit=commit)
        self.rho_elimination, self.rho_commit = split_rho(self.rho, self.commit, commit_share)
        if not isinstance(beta_floor, (bool, np.bool_)):
            raise TypeError(f"beta_floor must be True or False, got {beta_floor!r}")
        if beta is None:
            beta = paper_beta(self.n_arms, self.rho_elimination, floor=bool(beta_floor))
        elif not beta_floor:
            raise ValueError("beta_floor=False only changes the default beta: give beta or "
                             "beta_floor=False, not both")
        if isinstance(beta, bool) or not isinstance(beta, (int, np.integer)) or beta < 1:
            raise ValueError(f"beta must be an integer >= 1, got {beta!r}")
        self.beta = int(beta)
        self.xi = as_generator(rng)
        self.thresholds: list[float] = []

    def _pulls_per_arm(self, i: int, floor_qi: int) -> int:
        return self.beta * floor_qi

    def radii(self) -> tuple[float, float]:
        """(Ũ_i, U_i) after the current batch."""
        two_log = 2.0 * self.log_term
        u_tilde = self.confidence * math.sqrt(two_log / (self.beta * self.c))
        u = self.confidence * math.sqrt(two_log / self.c)
        return u_tilde, u

    def _to_eliminate(self, i: int) -> np.ndarray:
        u_tilde, u = self.radii()
        u_bar = u * (0.5 + 0.5 * self.xi.random())  # Ū_i ~ Uni[U_i/2, U_i]
        self.thresholds.append(u_bar)
        a = self.active
        means = self.sums[a] / self.pulls[a]
        return means + u_tilde < means.max() - u_bar

    @property
    def info(self) -> dict:
        return {**super().info, "beta": self.beta}
