"""Sampling rules of K-armed best-arm identification, to combine with a stopping rule and a
recommendation rule in :class:`~.composed.ComposedIdentifier` (issue 36 §2; the decomposition of
Garivier & Kaufmann 2016, Section 3, and of LinBAI.jl / the top-two papers' codes).

A rule sees the identifier (its counts ``pulls``, sums ``sums``, μ̂ ``means()``, the round ``t``,
the model and σ, and ξ ``rng`` when it draws) after every arm's first pull, and names the next
arm. Each rule computes with the very functions of the registered identifier it comes from, so
their combination with the Chernoff stop is that identifier, bit for bit:

* :class:`Tracking` — D- or C-tracking of w*(μ̂) (Track-and-Stop, GK16), w* solved every round
  or lazily (:func:`~.track_and_stop.track`);
* :class:`TopTwo` — a leader (the empirical best "EB", or a posterior draw's argmax "TS"), a
  challenger ("TC": the transportation cost with slack ε₀, Jourdan et al. 2022/2023; "TCI": the
  GLR W_{B,j} plus log N_j, Jourdan et al. 2022; "TS": Russo's redraws, with the bounded-redraw
  fallback of :func:`~banditkit.identification.top_two.redraw_challenger`; "KKT": the smallest
  pairwise GLR, You et al. 2023), and the leader played with probability β ("coin", Russo's)
  or by tracking β per leader ("tracking", Jourdan et al.'s), β fixed or the
  information-directed share of You et al. 2023 (``beta="ids"``). EB-TCε₀ is (EB, TC,
  tracking); TTTS is (TS, TS, coin);
* :class:`BestChallengerSampling` — GK16 Table 1's "best challenger" (the empirical best or its
  closest challenger in the Chernoff statistic);
* :class:`LUCBSampling` — LUCB's two arms a round, the empirical best h and the other arm of
  largest upper bound (Kalyanakrishnan et al. 2012; KL bounds: Kaufmann & Kalyanakrishnan
  2013); with :class:`~.stopping.LUCBStopping` it is :class:`~.lucb.KLLUCB` or
  :class:`~.lucb.LUCB`, bit for bit;
* :class:`~.fw_rule.FrankWolfe` — Frank-Wolfe sampling (Wang, Tzeng & Proutière 2021), in its
  own module;
* :class:`Uniform` — round robin (the least pulled arm), the baseline every paper plots.

A rule's :meth:`~SamplingRule.choose` names one arm, or several (LUCB's pair), pulled in one
batch.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from ...estimation.posteriors import check_prior
from ...validation import check_positive_int
from ..top_two import _kl, posterior_draws, redraw_challenger
from .eb_tc import tc_challenger
from .solvers import bounds_solver, weights_solver
from .stopping import check_bounds, lucb_bounds
from .track_and_stop import TRACKINGS, check_lazy_ratio, track

if TYPE_CHECKING:
    # the identifier a rule chooses for: typed by its base, so that composed (which imports
    # the rules) is not imported back, even for type checkers
    from .base import KArmedIdentifier as ComposedIdentifier

__all__ = ["CHALLENGERS", "LEADERS", "SELECTIONS", "BestChallengerSampling", "LUCBSampling",
           "SamplingRule", "TopTwo", "Tracking", "Uniform", "ids_share", "kkt_challenger",
           "tci_challenger"]

LEADERS = ("EB", "TS")
CHALLENGERS = ("TC", "TCI", "KKT", "TS")
SELECTIONS = ("tracking", "coin")


class SamplingRule:
    """A sampling rule: :meth:`choose` names the arm of round t (every arm pulled once), or a
    tuple of arms pulled in one batch."""

    #: Whether the rule draws from ξ (the identifier then needs ``rng``).
    uses_rng: ClassVar[bool] = False
    #: Whether the rule reads every arm's mean (the identifier then pulls each arm first).
    needs_each_arm: ClassVar[bool] = True

    def start(self, n_arms: int) -> None:
        """Allocate the rule's state for K arms (called once, by the identifier)."""

    def choose(self, alg: ComposedIdentifier) -> int | tuple[int, ...]:
        raise NotImplementedError

    @property
    def info(self) -> dict:
        return {}


class Tracking(SamplingRule):
    """D- or C-tracking of the plug-in optimal proportions w*(μ̂) (GK16, Section 3.1).

    Parameters
    ----------
    tracking : {"D", "C"}
    lazy_ratio : float, optional
        Solve w* on the geometric grid of this ratio and when the empirical best changes
        (:class:`~.track_and_stop.KArmedTrackAndStop`); ``None``: every round.
    """

    def __init__(self, tracking: str = "D", lazy_ratio: float | None = None) -> None:
        if tracking not in TRACKINGS:
            raise ValueError(f"tracking must be one of {TRACKINGS}, got {tracking!r}")
        self.tracking = tracking
        self.lazy_ratio = check_lazy_ratio(lazy_ratio)

    def start(self, n_arms: int) -> None:
        self.weights = np.full(n_arms, 1.0 / n_arms)
        self._cum = np.ones(n_arms)
        self._solve = weights_solver()
        self.forced = self.solves = 0
        self._next_solve, self._solved_for = 0, -1

    def choose(self, alg: ComposedIdentifier) -> int:
        return track(self, alg.t, alg.pulls, alg.means(), alg.gaussian, alg.sigma)

    @property
    def info(self) -> dict:
        return {"forced": self.forced, "solves": self.solves}


class TopTwo(SamplingRule):
    """A top-two rule: a leader B, a challenger C ≠ B, and B played with share β.

    Parameters
    ----------
    leader : {"EB", "TS"}
        The empirical best (ties to the lowest index), or the argmax of one posterior draw.
    challenger : {"TC", "TCI", "KKT", "TS"}
        argmin_j (μ̂_B − μ̂_j + ε₀)/√(1/N_B + 1/N_j); argmin_j W_{B,j} + log N_j with W the
        Chernoff GLR of the pair (0 when μ̂_j ≥ μ̂_B); argmin_j W_{B,j} (:func:`kkt_challenger`);
        or Russo's redraws until another arm leads, at most ``max_redraws``, then
        J ∝ P(θ_j > θ_B).
    beta : float or "ids"
        The leader's target share, in (0, 1); or ``"ids"``, the information-directed share of
        You, Qin, Wang & Yang (2023) recomputed every round (:func:`ids_share`).
    selection : {"tracking", "coin"}
        Per-leader tracking of β (pull B if N^B_B ≤ β T(B); with ``beta="ids"``, if N^B_B is at
        most the sum of the shares of the rounds B led, Jourdan, Degenne & Kaufmann 2023's
        tracking of IDS), deterministic; or a β-coin from ξ (You et al.'s randomised IDS).
    epsilon0 : float
        TC's slack ε₀ ≥ 0.
    prior : (a0, b0)
        The Beta prior of TS draws (Bernoulli model).
    max_redraws : int
        TS challenger's cap on redraws (1,000, as :class:`TopTwoThompson`; a small cap is the
        lazy variant: each round costs at most that many draws, and the fallback gives every
        arm a chance in proportion to how plausibly it beats the leader, so none starves).
    """

    def __init__(self, leader: str = "EB", challenger: str = "TC", *, beta: float | str = 0.5,
                 selection: str = "tracking", epsilon0: float = 0.0,
                 prior: tuple[float, float] = (1.0, 1.0), max_redraws: int = 1_000) -> None:
        for what, value, allowed in (("leader", leader, LEADERS),
                                     ("challenger", challenger, CHALLENGERS),
                                     ("selection", selection, SELECTIONS)):
            if value not in allowed:
                raise ValueError(f"{what} must be one of {allowed}, got {value!r}")
        if beta != "ids" and not (isinstance(beta, (int, float)) and 0 < beta < 1):
            raise ValueError(f"beta must be a number in (0, 1) or 'ids', got {beta!r}")
        if not (isinstance(epsilon0, (int, float)) and math.isfinite(epsilon0)
                and epsilon0 >= 0):
            raise ValueError(f"epsilon0 must be a finite number >= 0, got {epsilon0!r}")
        self.leader, self.challenger, self.selection = leader, challenger, selection
        self.beta = beta if beta == "ids" else float(beta)
        self.epsilon0 = float(epsilon0)
        self.prior = check_prior(prior)
        self.max_redraws = check_positive_int(max_redraws, "max_redraws")

    @property
    def uses_rng(self) -> bool:  # type: ignore[override]
        return "TS" in (self.leader, self.challenger) or self.selection == "coin"

    @property
    def needs_each_arm(self) -> bool:  # type: ignore[override]
        return not (self.leader == "TS" and self.challenger == "TS")

    def start(self, n_arms: int) -> None:
        self.leader_rounds = np.zeros(n_arms, dtype=np.int64)  # T(i)
        self.leader_pulls = np.zeros(n_arms, dtype=np.int64)  # N^i_i
        self.leader_share = np.zeros(n_arms)  # Σ of IDS's shares over the rounds i led
        self.fallbacks = 0

    @staticmethod
    def _posterior(alg: ComposedIdentifier) -> str:
        return "gaussian" if alg.gaussian else "beta"

    def choose(self, alg: ComposedIdentifier) -> int:
        a = alg
        if self.leader == "EB":
            leader = int(np.argmax(a.means()))
        else:
            draw = posterior_draws(a.rng, self._posterior(a), a.pulls, a.sums, self.prior,
                                   a.sigma, 1)[0]
            leader = int(np.argmax(draw))
        if self.beta == "ids":
            return self._ids_choice(a, leader)
        if self.selection == "coin":
            play_leader = bool(a.rng.random() < self.beta)
        else:
            self.leader_rounds[leader] += 1
            share = self.beta * self.leader_rounds[leader]
            play_leader = bool(self.leader_pulls[leader] <= share)
            if play_leader:
                self.leader_pulls[leader] += 1
        if play_leader:
            return leader
        return self._challenger(a, leader)

    def _ids_choice(self, a: ComposedIdentifier, leader: int) -> int:
        """IDS: the challenger first, then the leader with its information-directed share."""
        challenger = self._challenger(a, leader)
        share = ids_share(a.means(), a.pulls, leader, challenger, a.gaussian, a.sigma)
        if self.selection == "coin":
            return leader if a.rng.random() < share else challenger
        self.leader_share[leader] += share
        if self.leader_pulls[leader] <= self.leader_share[leader]:
            self.leader_pulls[leader] += 1
            return leader
        return challenger

    def _challenger(self, a: ComposedIdentifier, leader: int) -> int:
        if self.challenger == "TC":
            return tc_challenger(a.means(), a.pulls, leader, self.epsilon0)
        if self.challenger in ("TCI", "KKT"):
            return tci_challenger(a.means(), a.pulls, leader, a.gaussian, a.sigma,
                                  penalty=self.challenger == "TCI")
        arm, fell_back = redraw_challenger(a.rng, self._posterior(a), a.pulls, a.sums,
                                           self.prior, a.sigma, leader, self.max_redraws)
        self.fallbacks += fell_back
        return arm

    @property
    def info(self) -> dict:
        return {"fallbacks": self.fallbacks}


def tci_challenger(means: np.ndarray, pulls: np.ndarray, leader: int, gaussian: bool,
                   sigma: float, penalty: bool = True) -> int:
    """argmin_{j ≠ B} W_{B,j} + log N_j (Jourdan et al. 2022's TCI), W the pair's Chernoff
    GLR: (μ̂_B − μ̂_j)²/(2σ²(1/N_B + 1/N_j)) (Gaussian) or N_B kl(μ̂_B, m) + N_j kl(μ̂_j, m)
    (Bernoulli), 0 when μ̂_j ≥ μ̂_B. Ties to the lowest index. ``penalty=False`` drops the
    log N_j: the KKT challenger (:func:`kkt_challenger`)."""
    best, arm = math.inf, -1
    n_b, mu_b = float(pulls[leader]), float(means[leader])
    for j in range(means.shape[0]):
        if j == leader:
            continue
        n_j, mu_j = float(pulls[j]), float(means[j])
        if mu_j >= mu_b:
            w = 0.0
        elif gaussian:
            w = (mu_b - mu_j) ** 2 / (2.0 * sigma * sigma * (1.0 / n_b + 1.0 / n_j))
        else:
            m = (n_b * mu_b + n_j * mu_j) / (n_b + n_j)
            w = n_b * _kl(mu_b, m) + n_j * _kl(mu_j, m)
        cost = w + math.log(n_j) if penalty else w
        if cost < best:
            best, arm = cost, j
    return arm


def kkt_challenger(means: np.ndarray, pulls: np.ndarray, leader: int, gaussian: bool,
                   sigma: float) -> int:
    """argmin_{j ≠ B} W_{B,j}, W the pair's Chernoff GLR (the model's divergence): the
    challenger of the optimality (KKT) conditions of the allocation problem (You, Qin, Wang &
    Yang 2023, "Information-directed selection for top-two algorithms", COLT; Qin & You 2023,
    "Dual-directed algorithm design for efficient pure exploration"). At the optimal allocation
    every pair's information C_{B,j}(p) is equal ("information balance"), so the arm whose
    pairwise GLR is smallest is the one whose condition is violated, and it is sampled. It is
    TCI without the log N_j penalty; for Gaussian arms and the empirical-best leader, the TC
    challenger with ε₀ = 0 (W is TC's cost squared over 2σ²). Ties to the lowest index."""
    return tci_challenger(means, pulls, leader, gaussian, sigma, penalty=False)


def ids_share(means: np.ndarray, pulls: np.ndarray, leader: int, challenger: int,
              gaussian: bool, sigma: float) -> float:
    """The information-directed share of the leader B against the challenger C (You, Qin, Wang
    & Yang 2023): h = ∂C_{B,C}/∂p_B ÷ (∂C_{B,C}/∂p_B + ∂C_{B,C}/∂p_C), with C_{B,C}(p) the pair's
    Chernoff information at the empirical proportions, whose partial derivatives are
    d(μ̂_B, m) and d(μ̂_C, m), m = (N_B μ̂_B + N_C μ̂_C)/(N_B + N_C). Gaussian arms (one σ):
    h = N_C²/(N_B² + N_C²), independent of the means; it is also the Bernoulli share's limit as
    μ̂_C → μ̂_B, used when both divergences vanish; ½ before either arm is pulled (a rule that
    starts from the prior). Summed over the challengers, these shares
    are 1 exactly at the optimal allocation (the KKT "overall balance" condition)."""
    n_b, n_c = float(pulls[leader]), float(pulls[challenger])
    if n_b + n_c == 0.0:  # neither pulled yet (TTTS from the prior): no information, ½
        return 0.5
    gaussian_share = n_c * n_c / (n_b * n_b + n_c * n_c)
    if gaussian:
        return gaussian_share
    mu_b, mu_c = float(means[leader]), float(means[challenger])
    m = (n_b * mu_b + n_c * mu_c) / (n_b + n_c)
    d_b = _kl(mu_b, m) if 0.0 < m < 1.0 else 0.0
    d_c = _kl(mu_c, m) if 0.0 < m < 1.0 else 0.0
    if not d_b + d_c > 0.0:
        return gaussian_share
    return d_b / (d_b + d_c)


class BestChallengerSampling(SamplingRule):
    """The "best challenger" rule of GK16's Table 1 ("T-a-S (BC)"), as the authors' code
    (EmilieKaufmann/BAI_epsBAI_code, ``ChernoffBC``) has it: forced exploration as D-tracking's
    (the least pulled arm while some N_a < √t − K/2); otherwise, with B the empirical best,
    c = argmin_{b ≠ B} Z_{B,b} its closest challenger in the Chernoff statistic and m their
    pooled mean, pull B if d(μ̂_B, m) > d(μ̂_c, m), else c: the arm whose term of Z_{B,c} grows
    the least per pull. Ties to the lowest index (the code draws among tied empirical bests at
    random; the paper's own tie-breaking, which the code's comment says differs, is not in the
    text we could read)."""

    def start(self, n_arms: int) -> None:
        self.forced = 0

    def choose(self, alg: ComposedIdentifier) -> int:
        t, pulls, K = alg.t, alg.pulls, alg.n_arms
        under = np.flatnonzero(pulls < math.sqrt(t) - K / 2)
        if under.size:
            self.forced += 1
            return int(under[np.argmin(pulls[under])])
        mu = alg.means()
        best = int(np.argmax(mu))
        n_b = float(pulls[best])
        challenger, score, d_b, d_c = -1, math.inf, 0.0, 0.0
        for j in range(K):
            if j == best:
                continue
            n_j = float(pulls[j])
            m = (n_b * mu[best] + n_j * mu[j]) / (n_b + n_j)
            db, dj = _divergence(mu[best], m, alg), _divergence(mu[j], m, alg)
            z = n_b * db + n_j * dj
            if z < score:
                challenger, score, d_b, d_c = j, z, db, dj
        return best if d_b > d_c else challenger

    @property
    def info(self) -> dict:
        return {"forced": self.forced}


def _divergence(p: float, q: float, alg: ComposedIdentifier) -> float:
    if alg.gaussian:
        return (p - q) ** 2 / (2.0 * alg.sigma * alg.sigma)
    return _kl(p, q) if 0.0 < q < 1.0 else 0.0


class Uniform(SamplingRule):
    """Round robin: the least pulled arm (ties to the lowest index)."""

    def choose(self, alg: ComposedIdentifier) -> int:
        return int(np.argmin(alg.pulls))


class LUCBSampling(SamplingRule):
    """LUCB's sampling (Kalyanakrishnan et al. 2012, Algorithm LUCB; Kaufmann & Kalyanakrishnan
    2013, KL-LUCB): at round t (the batches observed), h = the empirical best (ties to the
    lowest index) and l = argmax_{a ≠ h} U_a(t), both pulled in one batch.

    Parameters
    ----------
    bounds : {"kl", "hoeffding"}
        KL-LUCB's KL bounds at β(t, δ) = log(k₁ K t^α/δ) (default), or LUCB1's
        μ̂ ± √(log(k₁ K t⁴/δ)/(2N)) (:func:`~.stopping.lucb_bounds`).
    k1 : float, optional
        405.5 (KL) or 5/4 (Hoeffding), the papers'.
    alpha : float
        α of the KL level; 1.1.
    threshold : {"paper", "heuristic"}
        The KL level: the paper's, or log((log t + 1)/δ).
    """

    def __init__(self, bounds: str = "kl", *, k1: float | None = None, alpha: float = 1.1,
                 threshold: str = "paper") -> None:
        self.bounds, self.k1, self.alpha, self.threshold = check_bounds(bounds, k1, alpha,
                                                                        threshold)

    def start(self, n_arms: int) -> None:
        self._solver = bounds_solver() if self.bounds == "kl" else None

    def choose(self, alg: ComposedIdentifier) -> tuple[int, int]:
        _, upper = lucb_bounds(alg, self.bounds, self.k1, self.alpha, self.threshold,
                               self._solver)
        h = int(np.argmax(alg.means()))
        upper[h] = -math.inf
        return h, int(np.argmax(upper))
