"""DEBORA, DEBORA-S and DEBORA-H: replicable UCB-style policies for K-armed bandits without and
with cost constraints (Bollini, Genalti, Stradi, Castiglioni and Marchesi, "Replicable
Constrained Bandits", Algorithms 2, 3 and 4).

All three share the dynamic epoch scheme of DEBORA: an epoch h keeps one decision (an arm a_h,
or a strategy x_h over the arms) until some arm's count doubles since the epoch began
(N_t(a) ≥ max{2Ñ_h(a), 1}, Algorithm 2 line 7, Algorithm 3 line 7); only then are the
estimates refreshed with the replicable mean estimator RepMean (Algorithm 1,
:func:`banditkit.estimation.replicable_means`) and a new decision taken. An arm's count at the
epoch ends it triggers goes 1, 2, 4, …, so there are at most K⌈log₂T⌉ epoch changes
(Lemmas 3.1, 4.2, 5.2) and therefore at most (m + 1)K²⌈log₂T⌉ estimates, each ρ'-replicable:
a union bound makes the whole decision sequence ρ-replicable.

The confidence width of an arm at epoch h is Eq. (1),

    ζ_h(a) = sqrt(2 ln(2/δ') / (max{Ñ_h(a), 1} (ρ' − 2δ')²)),

which is exactly the precision Lemma 2.5 gives RepMean for Ñ_h(a) samples
(:func:`~banditkit.estimation.repmean_precision`).

* :class:`DEBORA` (Algorithm 2): a_h = argmax_a r̂_h(a) + ζ_h(a) (ties to the lowest index),
  played for max{Ñ_h(a_h), 1} rounds; only the previous epoch's arm is re-estimated.
* :class:`DEBORAS` (Algorithm 3, soft constraints): every reward and cost mean is re-estimated
  at each epoch, and x_h = argmax (r̂_h + ζ_h)ᵀx over the optimistic safe set
  {x ∈ Δ_K : (ĝ_{h,i} − ζ_h)ᵀx ≤ α_i ∀i} of Eq. (2), by the canonical LP of
  :func:`banditkit.policies.constrained.safe_lp.optimistic_strategy`.
* :class:`DEBORAH` (Algorithm 4, hard constraints): the DEBORA-S strategy x̃_h is mixed with a
  strictly safe x◇, x_h = σ_h x◇ + (1 − σ_h) x̃_h, with σ_h of Eq. (4) (line 5 for h = 0).

Batches. A DEBORA epoch is one run of one arm (its length is known in advance). A DEBORA-S/H
epoch draws each round's arm from x_h with the internal randomness ξ; the pulls do not depend on
rewards, so the whole epoch — its end is the first round at which *any* arm reaches
max{2Ñ_h(a), 1} — is drawn at once from one stream of ξ (the action stream):
:func:`~banditkit.policies.epoch_sampler.epoch_counts` samples the epoch's per-arm counts at
that round exactly, in O(K) whatever the epoch's length. The epoch is one batch of per-arm runs
in arm order, carrying x_h as its ``strategy``: the counts have exactly the law of the per-round
loop of the pseudo-code, but the order of the pulls within an epoch is not the per-round order
(nothing in the paper depends on it: the rounds of an epoch are exchangeable and the
environment stationary; see that module). With the environment's sufficient statistics an epoch
of 10¹³ pulls costs what one of ten does: horizons up to 9·10¹⁵ run in seconds.

Randomness. ξ (``rng``) is used in a data-independent way: DEBORA draws one grid offset per
epoch; DEBORA-S/H first derive the action stream from ξ, then draw (m + 1)K offsets per epoch,
whichever arms were pulled. Two executions with the same ξ therefore read the same numbers as
long as their decisions agree.

Choices where the paper is silent or inconsistent (all documented parameters):

* ρ', δ' (line 2). DEBORA: ρ/(2K⌈ln T⌉), δ/(2K⌈ln T⌉) as printed ("log" read as ln; since
  2⌈ln T⌉ ≥ ⌈log₂T⌉ for T ≥ 2 this satisfies the proof of Lemma 3.1, which needs
  ρ' ≤ ρ/(K⌈log₂T⌉)). DEBORA-S: ρ/(2(m+1)K²⌈log₂T⌉) as printed. DEBORA-H: the pseudo-code
  prints ρ/(2(m+1)K⌈log₂T⌉), but Lemma 5.2's union bound over (m+1)K estimates per epoch and
  K⌈log₂T⌉ epochs needs K², and the proof of Theorem 5.3 states "Algorithm 4 sets
  δ' = δ/(2(m+1)K²⌈log₂T⌉)"; we default to K² (pass ``rho_per_estimate``/``delta_per_estimate``
  for the printed values). ⌈·⌉ of a logarithm is taken as at least 1 (T = 1).
* Arms never pulled keep the initial estimate 1/2 (line 4 sets r̂_0 = 1/2; the paper gives no
  initial ĝ, we use 1/2 too). With the paper's constants ζ ≫ 1 for such arms, so the value
  does not matter; with a small ``width_scale`` it is the prior guess.
* ``width_scale`` = c multiplies every width ζ_h. To keep ζ_h the precision of the estimate it
  goes with (as in the paper, where both are Lemma 2.5's ε), the estimates are computed by
  RepMean at ρ'_c = 2δ' + (ρ' − 2δ')/c, the replicability level for which Lemma 2.5's precision
  is c·ζ_h: c = 1 is the paper; c < 1 gives narrower widths and finer RepMean grids, i.e. each
  estimate is only ρ'_c-replicable (the union bound then guarantees ≈ ρ/c). c must keep
  ρ'_c ≤ 1.
* The Slater margins λ (DEBORA-H). Assumption 2.2 defines λ_i = g_iᵀx◇ (a *cost*), but the
  proof of Lemma 5.1 uses "g_iᵀx◇ ≤ α_i − λ_i", and Lemma E.1 uses λ_i ≥ λ_min > 0 — both hold
  only for the *margin* λ_i = α_i − g_iᵀx◇, which is what Eq. (4) needs to make x_h safe. We take
  the margins (``safe_margins``), as :func:`banditkit.envs.constrained.slater_strategy` returns.
* A batch answered only in part (a prefix, when a live experiment ends part-way) ends the
  policy: the next ``next_batch`` returns ``None``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...envs.base import Environment
from ...estimation.replicable_mean import replicable_means, repmean_precision
from ...protocol import Algorithm, Batch
from ...registry import need_horizon, register_policy
from ...rng import SeedLike, as_generator
from ...validation import (
    check_positive,
    check_positive_int,
    check_probability,
)
from ..epoch_sampler import epoch_batch
from .baselines import (
    check_safe_strategy,
    check_thresholds,
    constrained_problem,
    mixing_coefficient,
    safe_side,
)
from .safe_lp import OUTPUT_GRID, optimistic_strategy, snap_strategy

__all__ = [
    "DEBORA",
    "DEBORAH",
    "DEBORAS",
    "EpochRecord",
    "debora",
    "debora_h",
    "debora_parameters",
    "debora_s",
]

_ALGORITHMS = ("DEBORA", "DEBORA-S", "DEBORA-H")

#: The largest width ζ(1) (an arm pulled once) that DEBORA-S/H accept: the LP's coefficients
#: r̂ + ζ and ĝ − ζ must stay where HiGHS computes (it fails near 10¹⁵). The paper's constants
#: stay far below (ζ(1) ≈ 7.5·10¹⁰ at K = 20, m = 4, T = 2⁶², ρ = 0.01, δ = 0.00499).
MAX_WIDTH = 1e13


def debora_parameters(algorithm: str, n_arms: int, horizon: int, n_costs: int, rho: float,
                      delta: float) -> tuple[float, float]:
    """(ρ', δ') of line 2 of Algorithm 2, 3 or 4 (see the module notes for DEBORA-H).

    ``algorithm`` is ``"DEBORA"`` (ρ/(2K⌈ln T⌉)), ``"DEBORA-S"`` or ``"DEBORA-H"``
    (ρ/(2(m+1)K²⌈log₂T⌉)); δ' alike.
    """
    if algorithm not in _ALGORITHMS:
        raise ValueError(f"algorithm must be one of {_ALGORITHMS}, got {algorithm!r}")
    if algorithm == "DEBORA":
        divisor = 2 * n_arms * max(1, math.ceil(math.log(horizon)))
    else:
        # ⌈log₂T⌉ in integers: math.log2 rounds 2⁵³ + 1 down to 53
        divisor = 2 * (n_costs + 1) * n_arms**2 * max(1, (int(horizon) - 1).bit_length())
    return rho / divisor, delta / divisor


@dataclass(frozen=True)
class EpochRecord:
    """What a constrained DEBORA decided at the start of one epoch (kept for inspection/tests).

    Attributes
    ----------
    start : int
        Pulls made before the epoch (t_h − 1).
    counts : int array (K,)
        Ñ_h, the counts at the start of the epoch.
    rewards, costs : arrays (K,), (m, K)
        The replicable estimates r̂_h, ĝ_h.
    widths : array (K,)
        ζ_h (times ``width_scale``).
    optimistic : array (K,)
        x̃_h, the LP solution over the optimistic safe set (x_0: over the simplex).
    sigma : float
        σ_h (DEBORA-H; 0 for DEBORA-S).
    strategy : array (K,)
        x_h, the strategy played.
    """

    start: int
    counts: np.ndarray
    rewards: np.ndarray
    costs: np.ndarray
    widths: np.ndarray
    optimistic: np.ndarray
    sigma: float
    strategy: np.ndarray


def _check_rho_delta(rho: float, delta: float) -> tuple[float, float]:
    rho = check_probability(rho, "rho")
    delta = check_probability(delta, "delta")
    if not rho > 2 * delta:
        raise ValueError(f"rho must exceed 2*delta (0 < 2δ < ρ < 1), got rho={rho}, "
                         f"delta={delta}")
    return rho, delta


def _check_n_arms(n_arms: int) -> int:
    K = check_positive_int(n_arms, "n_arms")
    if K < 2:
        raise ValueError(f"n_arms must be >= 2 (K > 1), got {K}")
    return K


class _DeboraBase(Algorithm):
    """Constants, widths and the batch bookkeeping shared by the three algorithms."""

    kind = "regret"
    _name = "DEBORA"
    # rewards and costs in [0, 1] (RepMean's inputs): observe() refuses run sums such values
    # cannot produce, before any state changes
    reward_range = (0.0, 1.0)
    cost_range = (0.0, 1.0)

    def __init__(self, n_arms: int, horizon: int, n_costs: int, *, rho: float, delta: float,
                 rng: SeedLike, width_scale: float, rho_per_estimate: float | None,
                 delta_per_estimate: float | None) -> None:
        K = _check_n_arms(n_arms)
        T = check_positive_int(horizon, "horizon")
        rho, delta = _check_rho_delta(rho, delta)
        rho_p, delta_p = debora_parameters(self._name, K, T, n_costs, rho, delta)
        if rho_per_estimate is not None:
            rho_p = check_probability(rho_per_estimate, "rho_per_estimate")
        if delta_per_estimate is not None:
            delta_p = check_probability(delta_per_estimate, "delta_per_estimate")
        if not rho_p > 2 * delta_p:
            raise ValueError(f"rho_per_estimate = {rho_p:.3g} must exceed 2*delta_per_estimate "
                             f"= {2 * delta_p:.3g} (Lemma 2.5)")
        c = check_positive(width_scale, "width_scale")
        rho_c = 2 * delta_p + (rho_p - 2 * delta_p) / c
        if rho_c > 1:
            raise ValueError(f"width_scale must be >= (rho' - 2 delta')/(1 - 2 delta') = "
                             f"{(rho_p - 2 * delta_p) / (1 - 2 * delta_p):.3g} (the estimates "
                             f"run at rho'_c = 2 delta' + (rho' - 2 delta')/width_scale, which "
                             f"must stay <= 1), got {c}")
        if not rho_c > 2 * delta_p:  # a huge width_scale: rho'_c rounds to 2 delta'
            raise ValueError(f"width_scale = {c:.3g} is too large: rho'_c = 2 delta' + "
                             f"(rho' - 2 delta')/width_scale must exceed 2 delta' = "
                             f"{2 * delta_p:.3g} in floating point")
        super().__init__(K)
        self.horizon = T
        self.rho, self.delta = rho, delta
        self.rho_per_estimate, self.delta_per_estimate = rho_p, delta_p
        self.width_scale = c
        self._rho_estimator = rho_c
        self.xi = as_generator(rng)
        self.counts = np.zeros(K, dtype=np.int64)   # N_t(a)
        self.reward_sums = np.zeros(K)
        self.epoch = -1                              # h of the epoch being played
        self._planned: Batch | None = None           # the epoch's batch, until observed
        self._epoch_left = 0                         # pulls of the current epoch not yet asked
        self._stopped = False

    def widths(self, counts: np.ndarray) -> np.ndarray:
        """ζ(a) of Eq. (1) for counts Ñ(a), times ``width_scale`` (Lemma 2.5 at ρ'_c)."""
        n = np.maximum(np.asarray(counts, dtype=np.int64), 1)
        return np.asarray(repmean_precision(n, self.delta_per_estimate, self._rho_estimator),
                          dtype=float).reshape(-1)

    def _estimate(self, sums: np.ndarray, counts: np.ndarray, offsets: np.ndarray
                  ) -> np.ndarray:
        """RepMean (Algorithm 1) of several means, one unit offset each."""
        return replicable_means(sums, counts, self._rho_estimator, self.delta_per_estimate,
                                offsets)

    def _complete(self, batch: Batch) -> bool:
        """Whether ``batch`` is the whole planned epoch (``observe`` has already checked that
        it is the epoch or a prefix of it)."""
        return batch.n_pulls == self._planned.n_pulls

    def _check_observation(self, batch: Batch, rewards: np.ndarray, costs: np.ndarray | None
                           ) -> None:
        if batch.n_runs == 0:
            raise ValueError("batch is not the batch that was asked for (nor a prefix of it): "
                             "an answer needs at least one pull")
        super()._check_observation(batch, rewards, costs)

    def _observe_rewards(self, batch: Batch, rewards: np.ndarray) -> None:
        self.counts += batch.allocation(self.n_arms)
        self.reward_sums += batch.arm_sums(rewards, self.n_arms)

    @property
    def info(self) -> dict:
        """``epochs``: epochs played (h = 0..H, so H + 1; Lemmas 3.1/4.2/5.2 bound the H epoch
        changes by K⌈log₂T⌉), the constants ρ', δ' and ``width_scale``; DEBORA-S/H add
        ``n_costs``, DEBORA-H the σ_h of every epoch (``sigmas``)."""
        return {"epochs": self.epoch + 1, "rho_per_estimate": self.rho_per_estimate,
                "delta_per_estimate": self.delta_per_estimate, "width_scale": self.width_scale}


class DEBORA(_DeboraBase):
    """DEBORA (Algorithm 2 of Bollini et al.): replicable UCB with dynamic epochs.

    Epoch 0 plays a_0 = argmax r̂_0 + ζ_0 = arm 0 (all tie at r̂_0 = 1/2) once. At the start of
    epoch h ≥ 1, Ñ_h = N_t, the previous epoch's arm a_{h−1} is re-estimated with RepMean from
    all its rewards so far, and a_h = argmax_a r̂_h(a) + ζ_h(a) (ties to the lowest index) is
    played until its count reaches max{2Ñ_h(a_h), 1}, i.e. for max{Ñ_h(a_h), 1} rounds (one
    batch), or until the horizon.

    Parameters
    ----------
    n_arms : int
        K ≥ 2.
    horizon : int
        T ≥ 1 (the policy stops after T pulls).
    rho, delta : float
        0 < 2δ < ρ < 1: target replicability and failure probability.
    rng : Generator or seed
        The internal randomness ξ (one RepMean grid offset per epoch).
    width_scale : float
        Multiplier c on the widths ζ (1 = the paper's); see the module notes.
    rho_per_estimate, delta_per_estimate : float, optional
        ρ', δ'; default line 2, ρ/(2K⌈ln T⌉) and δ/(2K⌈ln T⌉).

    Attributes
    ----------
    estimates : array (K,)
        r̂_h (1/2 for arms never pulled).
    arms : list of int
        a_h of every epoch so far.
    """

    _name = "DEBORA"

    def __init__(self, n_arms: int, horizon: int, *, rho: float, delta: float,
                 rng: SeedLike = None, width_scale: float = 1.0,
                 rho_per_estimate: float | None = None,
                 delta_per_estimate: float | None = None) -> None:
        super().__init__(n_arms, horizon, 0, rho=rho, delta=delta, rng=rng,
                         width_scale=width_scale, rho_per_estimate=rho_per_estimate,
                         delta_per_estimate=delta_per_estimate)
        self.estimates = np.full(self.n_arms, 0.5)   # r̂_0 (line 4)
        self.epoch_counts = np.zeros(self.n_arms, dtype=np.int64)  # Ñ_h
        self.arms: list[int] = []

    def _choose(self) -> int:
        """a_h = argmax r̂_h + ζ_h, ties to the lowest index (lines 5 and 12)."""
        return int(np.argmax(self.estimates + self.widths(self.epoch_counts)))

    def _new_epoch(self) -> None:
        if self.epoch >= 0:
            prev = self.arms[-1]
            u = self.xi.random()  # one offset per epoch, read whatever the data
            self.epoch_counts = self.counts.copy()
            self.estimates[prev] = self._estimate(self.reward_sums[prev: prev + 1],
                                                  self.counts[prev: prev + 1],
                                                  np.array([u]))[0]
        self.epoch += 1
        arm = self._choose()
        self.arms.append(arm)
        n = int(self.epoch_counts[arm])
        self._epoch_left = max(2 * n, 1) - n

    def _next_batch(self) -> Batch | None:
        if self._stopped or self.t >= self.horizon:
            return None
        if self._epoch_left == 0:
            self._new_epoch()
        n = min(self._epoch_left, self.horizon - self.t)
        self._planned = Batch(np.array([self.arms[-1]]), np.array([n]))
        return self._planned

    def _observe(self, batch: Batch, rewards: np.ndarray, costs: np.ndarray | None) -> None:
        complete = self._complete(batch)
        self._observe_rewards(batch, rewards)
        self._planned = None
        self._epoch_left -= batch.n_pulls
        if not complete:
            self._stopped = True


class _ConstrainedDebora(_DeboraBase):
    """Epochs of DEBORA-S/H: every mean re-estimated, a strategy from the LP, pulls from ξ."""

    def __init__(self, n_arms: int, horizon: int, thresholds: np.ndarray, *, rho: float,
                 delta: float, rng: SeedLike, width_scale: float,
                 rho_per_estimate: float | None, delta_per_estimate: float | None) -> None:
        alpha = check_thresholds(thresholds)
        super().__init__(n_arms, horizon, alpha.size, rho=rho, delta=delta, rng=rng,
                         width_scale=width_scale, rho_per_estimate=rho_per_estimate,
                         delta_per_estimate=delta_per_estimate)
        zeta_1 = float(self.widths(np.ones(1, dtype=np.int64))[0])
        if not zeta_1 <= MAX_WIDTH:
            raise ValueError(
                f"the confidence width of an arm pulled once, zeta(1) = {zeta_1:.3g}, exceeds "
                f"{MAX_WIDTH:.0e}, beyond which the LP solver loses the estimates (HiGHS "
                f"fails near 1e15): lower width_scale (got {self.width_scale:.3g}) or widen "
                f"rho - 2*delta (got rho={self.rho}, delta={self.delta})")
        K, m = self.n_arms, alpha.size
        self.thresholds = alpha
        self.n_costs = m
        self.cost_sums = np.zeros((m, K))
        self.reward_estimates = np.full(K, 0.5)
        self.cost_estimates = np.full((m, K), 0.5)
        self.epochs: list[EpochRecord] = []
        # The action stream is derived from ξ first, so that the grid offsets (drawn from ξ
        # afterwards, (m + 1)K per epoch) and the epochs' draws never interleave.
        self._actions = np.random.default_rng(self.xi.integers(0, 2**63, size=4))
        self._targets = np.ones(K, dtype=np.int64)  # max{2Ñ_h(a), 1}

    # -- one epoch -------------------------------------------------------------------------
    def _strategy(self, x_tilde: np.ndarray, widths: np.ndarray, first: bool
                  ) -> tuple[float, np.ndarray]:
        """(σ_h, x_h) from x̃_h and ζ_h; DEBORA-S plays x̃_h."""
        return 0.0, x_tilde

    def _new_epoch(self) -> None:
        K, m = self.n_arms, self.n_costs
        first = self.epoch < 0
        N = self.counts.copy()  # Ñ_h
        if not first:
            offsets = self.xi.random((m + 1) * K).reshape(m + 1, K)  # data-independent
            seen = N > 0
            sums = np.vstack([self.reward_sums[None, :], self.cost_sums])[:, seen]
            n = np.broadcast_to(N[seen], sums.shape)
            est = self._estimate(sums.ravel(), n.ravel(), offsets[:, seen].ravel())
            est = est.reshape(m + 1, -1)
            self.reward_estimates[seen] = est[0]
            self.cost_estimates[:, seen] = est[1:]
        zeta = self.widths(N)
        values = self.reward_estimates + zeta
        if first:  # line 5: argmax over the whole simplex
            x_tilde = optimistic_strategy(values, np.zeros((0, K)), np.zeros(0))
        else:      # lines 15-16 (Eq. (2)): over the optimistic safe set
            x_tilde = optimistic_strategy(values, self.cost_estimates - zeta[None, :],
                                          self.thresholds)
        sigma, x = self._strategy(x_tilde, zeta, first)
        self.epoch += 1
        self._targets = np.maximum(2 * N, 1)
        self.epochs.append(EpochRecord(self.t, N, self.reward_estimates.copy(),
                                       self.cost_estimates.copy(), zeta, x_tilde, sigma, x))

    def _next_batch(self) -> Batch | None:
        if self._stopped or self.t >= self.horizon:
            return None
        if self._planned is None:  # the previous epoch is over: lines 7-16 (and 19-25)
            self._new_epoch()
        rec = self.epochs[-1]
        self._planned = epoch_batch(rec.strategy, self._targets - self.counts,
                                    self.horizon - self.t, self._actions)
        return self._planned

    def _observe(self, batch: Batch, rewards: np.ndarray, costs: np.ndarray | None) -> None:
        complete = self._complete(batch)
        self._observe_rewards(batch, rewards)
        for i in range(self.n_costs):
            self.cost_sums[i] += batch.arm_sums(costs[:, i], self.n_arms)
        self._planned = None
        if not complete:
            self._stopped = True

    @property
    def info(self) -> dict:
        return {**super().info, "n_costs": self.n_costs}


class DEBORAS(_ConstrainedDebora):
    """DEBORA-S (Algorithm 3 of Bollini et al.): replicable UCB for soft constraints.

    At the start of every epoch h ≥ 1 (the first round at which some arm's count reaches
    max{2Ñ_{h−1}(a), 1}), every reward and cost mean is re-estimated with RepMean at (ρ', δ'),
    and x_h = argmax_{x ∈ X̲_h} (r̂_h + ζ_h)ᵀx over the optimistic safe set
    X̲_h = {x ∈ Δ_K : (ĝ_{h,i} − ζ_h)ᵀx ≤ α_i ∀i} (Eq. (2)); each round plays a_t ∼ x_h drawn
    with ξ. x_0 maximises r̂_0 + ζ_0 over the simplex: arm 0. The LP is solved canonically by
    :func:`~banditkit.policies.constrained.safe_lp.optimistic_strategy` (if X̲_h is empty, its
    documented
    fallback: the strategies of least largest violation).

    Parameters
    ----------
    n_arms : int
        K ≥ 2.
    horizon : int
        T ≥ 1.
    thresholds : array in [0, 1], shape (m,)
        α (m ≥ 1 constraints g_iᵀx ≤ α_i).
    rho, delta : float
        0 < 2δ < ρ < 1.
    rng : Generator or seed
        The internal randomness ξ (grid offsets and the draws a_t ∼ x_h).
    width_scale : float
        Multiplier on ζ (1 = the paper's); see the module notes.
    rho_per_estimate, delta_per_estimate : float, optional
        ρ', δ'; default line 2, ρ/(2(m+1)K²⌈log₂T⌉) and δ/(2(m+1)K²⌈log₂T⌉).

    Attributes
    ----------
    epochs : list of EpochRecord
        Estimates, widths and strategies of every epoch.
    """

    _name = "DEBORA-S"

    def __init__(self, n_arms: int, horizon: int, thresholds: np.ndarray, *, rho: float,
                 delta: float, rng: SeedLike = None, width_scale: float = 1.0,
                 rho_per_estimate: float | None = None,
                 delta_per_estimate: float | None = None) -> None:
        super().__init__(n_arms, horizon, thresholds, rho=rho, delta=delta, rng=rng,
                         width_scale=width_scale, rho_per_estimate=rho_per_estimate,
                         delta_per_estimate=delta_per_estimate)


class DEBORAH(_ConstrainedDebora):
    """DEBORA-H (Algorithm 4 of Bollini et al.): replicable UCB for hard constraints.

    As :class:`DEBORAS`, with the LP solution x̃_h mixed with the strictly safe strategy x◇:
    x_h = σ_h x◇ + (1 − σ_h) x̃_h, where, with w_i = (ĝ_{h,i} + ζ_h)ᵀx̃_h (the pessimistic
    cost of x̃_h) and V_h = {i : w_i > α_i} (Eq. (3)),

        σ_h = max_{i ∈ V_h} (min{w_i, 1} − α_i) / (min{w_i, 1} − α_i + λ_i)   (Eq. (4)),

    σ_h = 0 if V_h is empty, and σ_0 = max_i (1 − α_i)/(1 − α_i + λ_i) (line 5: the worst case
    w_i = 1, so x_0 is safe whatever the costs). Then σ_h(α_i − λ_i) + (1 − σ_h) min{w_i, 1}
    ≤ α_i for every i: x_h is safe whenever x̃_h's costs are below their pessimistic bound
    (Lemma 5.1).

    Parameters
    ----------
    n_arms, horizon, thresholds, rho, delta, rng, width_scale
        As :class:`DEBORAS`.
    safe_strategy : array, shape (K,)
        x◇, a strictly safe strategy (Assumption 2.2).
    safe_margins : array, shape (m,)
        Its Slater margins λ_i = α_i − g_iᵀx◇ > 0 (see the module notes: the margin, not the
        cost, is what the proof of Lemma 5.1 uses). The policy does not know the costs G, so it
        checks only what it can: 0 < λ_i ≤ α_i (costs lie in [0, 1]); that x◇ is strictly safe
        for the true G is checked by the environment
        (:class:`~banditkit.envs.ConstrainedBandit` with ``safe_strategy``) and by whoever
        computes the margins (:func:`~banditkit.envs.constrained.slater_strategy`).
    rho_per_estimate, delta_per_estimate : float, optional
        ρ', δ'; default ρ/(2(m+1)K²⌈log₂T⌉) and δ/(2(m+1)K²⌈log₂T⌉) — the proof's K², where
        the pseudo-code prints K (module notes).

    Attributes
    ----------
    epochs : list of EpochRecord
        Estimates, widths, x̃_h, σ_h and x_h of every epoch.
    """

    _name = "DEBORA-H"

    def __init__(self, n_arms: int, horizon: int, thresholds: np.ndarray,
                 safe_strategy: np.ndarray, *, rho: float, delta: float, safe_margins: np.ndarray,
                 rng: SeedLike = None, width_scale: float = 1.0,
                 rho_per_estimate: float | None = None,
                 delta_per_estimate: float | None = None) -> None:
        K = _check_n_arms(n_arms)
        alpha = check_thresholds(thresholds)
        x, lam = check_safe_strategy(safe_strategy, safe_margins, K, alpha)
        # The strategies played are rounded to the 2⁻³² grid (snap_strategy, for replicable
        # LPs): each rounding moves a cost g_iᵀx by at most K·2⁻³², and x_h is rounded twice
        # (x◇, then the mixture). σ_h is computed against α − r and λ − r, r = 2K·2⁻³², so the
        # rounded x_h keeps the pessimistic guarantee of Lemma 5.1 for α itself.
        rounding = 2 * K * OUTPUT_GRID
        if np.any(lam <= rounding):
            raise ValueError(f"safe_margins must exceed 2K·2⁻³² = {rounding:.3g}: DEBORA-H plays "
                             f"strategies rounded to a 2⁻³² grid (replicable LPs) and keeps that "
                             f"rounding inside x◇'s margin, got {lam.tolist()}")
        super().__init__(K, horizon, alpha, rho=rho, delta=delta, rng=rng,
                         width_scale=width_scale, rho_per_estimate=rho_per_estimate,
                         delta_per_estimate=delta_per_estimate)
        self.safe_strategy = snap_strategy(x)
        self.safe_margins = lam
        self.rounding = rounding
        self.sigmas: list[float] = []

    def sigma(self, x_tilde: np.ndarray, cost_estimates: np.ndarray, widths: np.ndarray
              ) -> float:
        """σ_h of Eqs. (3)-(4) for x̃_h, ĝ_h and ζ_h, against α − r and λ − r (r the
        rounding of the played strategy, see ``__init__``)."""
        return mixing_coefficient((cost_estimates + widths[None, :]) @ x_tilde,
                                  self.thresholds - self.rounding,
                                  self.safe_margins - self.rounding)

    def _strategy(self, x_tilde: np.ndarray, widths: np.ndarray, first: bool
                  ) -> tuple[float, np.ndarray]:
        if first:  # line 5: the worst costs, w = 1 on every constraint
            sigma = mixing_coefficient(np.ones(self.n_costs), self.thresholds - self.rounding,
                                       self.safe_margins - self.rounding)
        else:      # lines 19-24
            sigma = self.sigma(x_tilde, self.cost_estimates, widths)
        self.sigmas.append(sigma)
        x = snap_strategy(sigma * self.safe_strategy + (1.0 - sigma) * x_tilde)  # line 25
        return sigma, x

    @property
    def info(self) -> dict:
        return {**super().info, "sigmas": list(self.sigmas)}


# --- the registry's factories (module listed in registry.PROVIDERS), for `banditkit audit` ---

@register_policy("DEBORA")
def debora(env: Environment, rng: np.random.Generator, *, horizon: int | None = None,
           rho: float = 0.3, delta: float = 0.05, width_scale: float = 1.0) -> DEBORA:
    """DEBORA (Bollini et al., Algorithm 2): a ρ-replicable epoch-based UCB."""
    return DEBORA(env.n_arms, need_horizon("DEBORA", horizon), rho=rho, delta=delta,
                  width_scale=width_scale, rng=rng)


@register_policy("DEBORAS")
def debora_s(env: Environment, rng: np.random.Generator, *, horizon: int | None = None,
             rho: float = 0.3, delta: float = 0.05, width_scale: float = 1.0) -> DEBORAS:
    """DEBORA-S (Bollini et al., Algorithm 3): soft constraints, ρ-replicable."""
    alpha, _ = constrained_problem(env, "DEBORAS")
    return DEBORAS(env.n_arms, need_horizon("DEBORAS", horizon), alpha, rho=rho, delta=delta,
                   width_scale=width_scale, rng=rng)


@register_policy("DEBORAH")
def debora_h(env: Environment, rng: np.random.Generator, *, horizon: int | None = None,
             rho: float = 0.3, delta: float = 0.05, width_scale: float = 1.0,
             safe_strategy: list[float] | None = None,
             safe_margins: list[float] | None = None) -> DEBORAH:
    """DEBORA-H (Bollini et al., Algorithm 4): hard constraints, ρ-replicable; x◇ and its
    Slater margins as in :func:`~.constrained_baselines.safe_side` (the environment's, or
    given: a live experiment gives both)."""
    alpha, x_safe, margins = safe_side(env, "DEBORAH", safe_strategy, safe_margins)
    return DEBORAH(env.n_arms, need_horizon("DEBORAH", horizon), alpha, x_safe, rho=rho,
                   delta=delta, safe_margins=margins, width_scale=width_scale, rng=rng)
