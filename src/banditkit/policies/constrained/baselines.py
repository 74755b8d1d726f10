"""Non-replicable baselines for constrained K-armed bandits (Bollini et al., "Replicable
Constrained Bandits", Sections 2, 4 and 5): the optimistic soft-constraint algorithm and its
hard-constraint variant that mixes with a strictly safe strategy by DEBORA-H's own rule.

* :class:`OptimisticConstrained` — the optimistic algorithm of Efroni et al. (2020, "Exploration-
  exploitation in constrained MDPs", bandit case), the non-replicable counterpart of DEBORA-S
  (Algorithm 3): empirical means r̂(a), ĝ_i(a) with Hoeffding widths w(a), the optimistic safe
  set {x ∈ Δ_K : (ĝ_i − w)ᵀx ≤ α_i ∀i} (Eq. (2) with empirical estimates) and
  x = argmax (r̂ + w)ᵀx over it.
* :class:`OptimisticMixingConstrained` — the non-replicable counterpart of DEBORA-H
  (Algorithm 4): play x = σ x◇ + (1 − σ) x̃, x̃ the optimistic strategy above and σ from
  Bollini et al.'s Eq. (4) with Hoeffding widths. It is DEBORA-H's mixing rule without
  replicability, *not* Pacchiano, Ghavamzadeh, Bartlett & Jiang (2021)'s OPLB (a pessimistic
  safe set with extra optimism on the rewards), which it was once named after;
  ``SafeOptimisticConstrained`` is its deprecated old name.

Hoeffding widths (the union-bound form used here). A [0, 1]-valued empirical mean of n samples
deviates by more than sqrt(ln(2/δ')/(2n)) with probability at most δ'. Union over the m + 1
quantities (reward and m costs), the K arms and the at most T values of n an arm's sample count
can take (the "stack of rewards" argument: the n-th estimate of an arm is the mean of its first
n samples whatever the schedule) gives δ' = δ / ((m + 1) K T), i.e.

    w(a) = width_scale · sqrt( ln(2 (m + 1) K T / δ) / (2 max(N(a), 1)) ),

valid for every arm, every quantity and every round simultaneously with probability ≥ 1 − δ.
An arm never pulled has estimates 1/2 (the paper's r̂_0(a) = 1/2, Algorithms 2–4 line 4); with
width_scale = 1 its width is ≥ sqrt(ln 8 / 2) > 1/2, so its interval covers [0, 1].

Schedules. ``"every"`` recomputes the strategy every round (one LP per round, T LPs in all: a
Python loop per round with a canonical LP of a few milliseconds: T = 2000 takes ~5 s; use it
for T ≲ 10^4).
``"doubling"`` recomputes when some arm's count has doubled since the last update — the epoch
rule of DEBORA-S (Algorithm 3, line 7): a new epoch starts at round t when
∃a: N_t(a) ≥ max{2 Ñ_h(a), 1} — so at most K(⌊log₂T⌋ + 1) + 1 LPs are solved (Lemma 4.2's
count plus the first epoch) and the two algorithms are directly comparable. An epoch is one
:class:`~banditkit.protocol.Batch` carrying its strategy.

Internal randomness ξ. Each epoch's pulls are i.i.d. draws from the strategy, sampled from ξ
as exact per-arm counts at the epoch's end (:func:`.epoch_sampler.epoch_batch`, shared with
DEBORA-S/H: O(K) per epoch whatever its length, arms in index order within the epoch). These
baselines are *not* replicable: the strategies are functions of real-valued empirical means, so
two executions with the same ξ and independent rewards play different strategies (hence
different pulls) almost surely after the first few epochs.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ...envs.base import Environment
from ...protocol import Algorithm, Batch
from ...registry import need_horizon, register_policy
from ...rng import SeedLike, as_generator
from ...validation import (
    as_numbers,
    check_distribution,
    check_in_unit_interval,
    check_integer,
    check_positive,
    check_positive_int,
    check_probability,
)
from ..epoch_sampler import epoch_batch
from .safe_lp import optimistic_strategy

__all__ = [
    "SCHEDULES",
    "OptimisticConstrained",
    "OptimisticMixingConstrained",
    "SafeOptimisticConstrained",
    "check_safe_strategy",
    "check_thresholds",
    "constrained_problem",
    "hoeffding_widths",
    "mixing_coefficient",
    "optimistic_constrained",
    "optimistic_mixing_constrained",
    "safe_optimistic_constrained",
    "safe_side",
]

#: Update schedules: every round, or when some arm's count has doubled (DEBORA-S's epochs).
SCHEDULES = ("doubling", "every")

#: Most σ values reported in :attr:`OptimisticMixingConstrained.info` (trial records stay small).
_MAX_SIGMAS_IN_INFO = 200


def hoeffding_widths(counts: np.ndarray, log_term: float, width_scale: float = 1.0
                     ) -> np.ndarray:
    """w(a) = width_scale · sqrt(log_term / (2 max(N(a), 1))) (see the module docstring).

    Parameters
    ----------
    counts : array of int, shape (K,)
        N(a), the number of samples of each arm.
    log_term : float
        ln(2 (m + 1) K T / δ).
    width_scale : float
        Multiplier of the theoretical width (1 is the union-bound value).
    """
    n = np.maximum(np.asarray(counts, dtype=float), 1.0)
    return width_scale * np.sqrt(log_term / (2.0 * n))


def mixing_coefficient(pessimistic_costs: np.ndarray, thresholds: np.ndarray,
                       margins: np.ndarray) -> float:
    """σ of DEBORA-H's Eq. (4) (Algorithm 4, lines 19–24).

    With c_i = min{(ĝ_i + w)ᵀx̃, 1} and V = {i : (ĝ_i + w)ᵀx̃ > α_i},
    σ = max_{i ∈ V} (c_i − α_i) / (c_i − α_i + λ_i), and σ = 0 when V is empty.

    σ is the smallest mixing weight for which the pessimistic bound on the mixture's cost,
    σ (α_i − λ_i) + (1 − σ) c_i, is at most α_i for every i; it needs λ_i to be the margin
    α_i − g_iᵀx◇ of the strictly safe strategy x◇ (whose true cost is then α_i − λ_i).
    """
    raw = np.asarray(pessimistic_costs, dtype=float)
    risky = raw > thresholds
    if not np.any(risky):
        return 0.0
    excess = np.minimum(raw, 1.0)[risky] - thresholds[risky]
    return float(np.max(excess / (excess + margins[risky])))


def _clean_strategy(x: np.ndarray, n_arms: int) -> np.ndarray:
    """A strategy from the LP with rounding noise removed: clipped at 0 and renormalised."""
    x = np.clip(np.asarray(x, dtype=float).reshape(-1), 0.0, None)
    if x.shape != (n_arms,) or not x.sum() > 0:
        raise RuntimeError(f"optimistic_strategy returned an invalid strategy {x!r}")
    return x / x.sum()


class OptimisticConstrained(Algorithm):
    """Optimistic soft-constraint baseline (Efroni et al. 2020, bandit case): the non-replicable
    counterpart of DEBORA-S (Bollini et al., Algorithm 3).

    At each update: estimates r̂(a), ĝ_i(a) (empirical means; 1/2 for an arm never pulled),
    Hoeffding widths w(a) (:func:`hoeffding_widths`), and
    x = argmax_{x ∈ Δ_K} (r̂ + w)ᵀx s.t. (ĝ_i − w)ᵀx ≤ α_i ∀i, by
    :func:`banditkit.policies.constrained.safe_lp.optimistic_strategy` (which documents what it
    returns
    when that set is empty). The pulls until the next update are drawn from x with ξ.

    Parameters
    ----------
    n_arms : int
        K ≥ 2.
    horizon : int
        T ≥ 1; the algorithm stops (``next_batch`` returns ``None``) after T pulls.
    thresholds : array in [0, 1], shape (m,)
        α; constraint i requires g_iᵀx ≤ α_i.
    delta : float in (0, 1)
        Confidence: the widths hold for all arms, quantities and rounds with probability ≥ 1 − δ.
    schedule : {"doubling", "every"}
        When the strategy is recomputed (module docstring). ``"every"`` solves one LP per round
        in a Python loop: for small T only.
    width_scale : float > 0
        Multiplier of the Hoeffding widths (1 = the union-bound value).
    rng : Generator or seed
        The internal randomness ξ (the epochs' draws).

    Attributes
    ----------
    n_updates : int
        Number of strategy updates (LPs solved) so far.
    pulls, reward_sums, cost_sums : arrays
        N(a), Σ rewards per arm, Σ costs per constraint and arm (shape (m, K)).
    """

    kind = "regret"
    # rewards and costs in [0, 1]: observe() refuses run sums such values cannot produce,
    # before anything is recorded
    reward_range = (0.0, 1.0)
    cost_range = (0.0, 1.0)

    def __init__(self, n_arms: int, horizon: int, thresholds: np.ndarray, *, delta: float,
                 schedule: str = "doubling", width_scale: float = 1.0,
                 rng: SeedLike = None) -> None:
        n_arms = check_integer(n_arms, "n_arms", low=2)
        self.horizon = check_positive_int(horizon, "horizon")
        self.alpha = check_thresholds(thresholds)
        self.delta = check_probability(delta, "delta")
        if schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {SCHEDULES}, got {schedule!r}")
        self.schedule = schedule
        self.width_scale = check_positive(width_scale, "width_scale")
        super().__init__(n_arms)
        self.n_costs = int(self.alpha.size)
        self.xi = as_generator(rng)
        # ln(2 (m+1) K T / δ): the union bound of the module docstring
        self.log_term = math.log(2.0 * (self.n_costs + 1) * self.n_arms * self.horizon
                                 / self.delta)
        self.pulls = np.zeros(self.n_arms, dtype=np.int64)
        self.reward_sums = np.zeros(self.n_arms)
        self.cost_sums = np.zeros((self.n_costs, self.n_arms))
        self.n_updates = 0
        self.strategy: np.ndarray | None = None  # the strategy of the current epoch

    # -- estimates ----------------------------------------------------------------------------

    def widths(self) -> np.ndarray:
        """w(a) for the current counts."""
        return hoeffding_widths(self.pulls, self.log_term, self.width_scale)

    def estimates(self) -> tuple[np.ndarray, np.ndarray]:
        """(r̂, Ĝ): empirical means, shape (K,) and (m, K); 1/2 for an arm never pulled."""
        seen = self.pulls > 0
        n = np.maximum(self.pulls, 1)
        r_hat = np.where(seen, self.reward_sums / n, 0.5)
        g_hat = np.where(seen, self.cost_sums / n, 0.5)
        return r_hat, g_hat

    def optimistic_values(self) -> np.ndarray:
        """The optimistic rewards r̂ + w the LP maximises."""
        r_hat, _ = self.estimates()
        return r_hat + self.widths()

    def optimistic_costs(self) -> np.ndarray:
        """The optimistic costs Ĝ − w (shape (m, K)): the optimistic safe set of Eq. (2) is
        {x ∈ Δ_K : (Ĝ − w) x ≤ α}."""
        _, g_hat = self.estimates()
        return g_hat - self.widths()[None, :]

    def optimistic(self) -> np.ndarray:
        """x̃ = argmax (r̂ + w)ᵀx over the optimistic safe set {(ĝ_i − w)ᵀx ≤ α_i} (Eq. (2))."""
        x = optimistic_strategy(self.optimistic_values(), self.optimistic_costs(), self.alpha)
        return _clean_strategy(x, self.n_arms)

    def _choose_strategy(self) -> np.ndarray:
        return self.optimistic()

    # -- the epoch ----------------------------------------------------------------------------

    def _epoch(self, x: np.ndarray, remaining: int) -> Batch:
        """The pulls of one epoch under strategy x, at most ``remaining`` of them, drawn with ξ
        by :func:`.epoch_sampler.epoch_batch` (exact per-arm counts, arms in index order).

        The epoch ends with the first pull after which some arm a has been pulled
        max{N(a), 1} times within the epoch, i.e. its count reaches max{2Ñ(a), 1} (DEBORA-S's
        line 7, with Ñ the counts at the update); the ``"every"`` schedule's epochs are one
        round.
        """
        horizon = 1 if self.schedule == "every" else remaining
        return epoch_batch(x, np.maximum(self.pulls, 1), horizon, self.xi)

    # -- the protocol -----------------------------------------------------------------------------

    def _next_batch(self) -> Batch | None:
        remaining = self.horizon - self.t
        if remaining <= 0:
            return None
        # every batch is one epoch: each call starts a new one, so the strategy is recomputed
        x = self._choose_strategy()
        self.strategy = x
        self.n_updates += 1
        return self._epoch(x, remaining)

    def _observe(self, batch: Batch, rewards: np.ndarray, costs: np.ndarray | None) -> None:
        assert costs is not None  # observe() refuses a missing costs array (n_costs > 0)
        self.pulls += batch.allocation(self.n_arms)
        self.reward_sums += batch.arm_sums(rewards, self.n_arms)
        for i in range(self.n_costs):
            self.cost_sums[i] += batch.arm_sums(costs[:, i], self.n_arms)

    @property
    def info(self) -> dict:
        return {"n_updates": self.n_updates, "schedule": self.schedule}


class OptimisticMixingConstrained(OptimisticConstrained):
    """Hard-constraint baseline: the optimistic strategy mixed with x◇ by Bollini et al.'s
    Eq. (4) — DEBORA-H's own mixing rule (Algorithm 4, lines 5 and 19–24) with real-valued
    empirical means and Hoeffding widths, hence not replicable: the non-replicable counterpart
    of DEBORA-H, isolating what replicability costs.

    It is not the OPLB algorithm of Pacchiano, Ghavamzadeh, Bartlett & Jiang (2021), which
    restricts play to a pessimistic safe set and inflates the reward optimism to make up for it;
    it was called ``SafeOptimisticConstrained`` ("Pacchiano et al. 2021 style") until that was
    found misleading (issue 17, §3).

    At each update, x̃ is the optimistic strategy of :class:`OptimisticConstrained` and the
    played strategy is x = σ x◇ + (1 − σ) x̃, with σ from Eq. (4) (:func:`mixing_coefficient`)
    computed with empirical means and Hoeffding widths: the smallest σ ∈ [0, 1) such that the
    pessimistic cost bound σ(α_i − λ_i) + (1 − σ) min{(ĝ_i + w)ᵀx̃, 1} ≤ α_i for every i. When the
    widths are valid (probability ≥ 1 − δ) every strategy played is safe.

    Before any sample the widths exceed 1/2 around estimates 1/2, so the first σ is
    max_i (1 − α_i)/(1 − α_i + λ_i), Algorithm 4's σ_0 (line 5).

    Parameters
    ----------
    safe_strategy : array, shape (K,)
        The strictly safe strategy x◇ (a probability vector).
    safe_margins : array > 0, shape (m,)
        λ_i = α_i − g_iᵀx◇, the margin of x◇ on each constraint, taken as known (as
        DEBORA-H takes them, Algorithm 4 line 5). Eq. (4) keeps the mixture safe only with
        these margins; each must lie in (0, α_i] (costs are non-negative).
    n_arms, horizon, thresholds, delta, schedule, width_scale, rng
        As in :class:`OptimisticConstrained`.

    Attributes
    ----------
    sigmas : list of float
        σ of every update, in order.
    """

    def __init__(self, n_arms: int, horizon: int, thresholds: np.ndarray,
                 safe_strategy: np.ndarray, *, safe_margins: np.ndarray, delta: float,
                 schedule: str = "doubling", width_scale: float = 1.0,
                 rng: SeedLike = None) -> None:
        super().__init__(n_arms, horizon, thresholds, delta=delta, schedule=schedule,
                         width_scale=width_scale, rng=rng)
        x_safe, lam = check_safe_strategy(safe_strategy, safe_margins, self.n_arms, self.alpha)
        self.safe_strategy = x_safe / x_safe.sum()
        self.safe_margins = lam
        self.sigmas: list[float] = []
        self.last_optimistic: np.ndarray | None = None  # x̃ of the latest update

    def pessimistic_costs(self, x: np.ndarray) -> np.ndarray:
        """(ĝ_i + w)ᵀx for every constraint i (uncapped)."""
        _, g_hat = self.estimates()
        return (g_hat + self.widths()[None, :]) @ x

    def _choose_strategy(self) -> np.ndarray:
        x_tilde = self.optimistic()
        sigma = mixing_coefficient(self.pessimistic_costs(x_tilde), self.alpha,
                                   self.safe_margins)
        self.sigmas.append(sigma)
        self.last_optimistic = x_tilde
        x = sigma * self.safe_strategy + (1.0 - sigma) * x_tilde
        return x / x.sum()

    @property
    def info(self) -> dict:
        info = {**super().info, "sigma_max": max(self.sigmas, default=0.0),
                "sigma_last": self.sigmas[-1] if self.sigmas else 0.0}
        if len(self.sigmas) <= _MAX_SIGMAS_IN_INFO:
            info["sigmas"] = [float(s) for s in self.sigmas]
        return info


# ---------------------------------------------------------------------------------------------
# Registry factories (module listed in registry.PROVIDERS)

def constrained_problem(env: Environment, name: str) -> tuple[np.ndarray, np.ndarray | None]:
    """The thresholds α and cost means G (``None`` where unknown) of a constrained
    environment, for the registry's factories (DEBORA-S/H's and the baselines'), refusing any
    other environment.

    The policies need α alone; a simulation's :class:`~banditkit.envs.ConstrainedBandit` also
    knows G, a live experiment (:class:`banditkit.live.problem.LiveArms`) does not."""
    alpha = getattr(env, "alpha", None)
    G = getattr(env, "G", None)
    if alpha is None:
        raise ValueError(f"policy {name!r} needs a constrained problem: thresholds α "
                         "(a ConstrainedBandit, or an Experiment created with thresholds)")
    return np.asarray(alpha, float), None if G is None else np.asarray(G, float)


def check_thresholds(thresholds: object) -> np.ndarray:
    """The cost thresholds α of a constrained policy: a 1-D array of m ≥ 1 values in [0, 1]
    (a single number is m = 1)."""
    alpha = np.atleast_1d(check_in_unit_interval(thresholds, "thresholds"))
    if alpha.ndim != 1:
        raise ValueError(f"thresholds must be a 1-D array of m >= 1 values in [0, 1], got "
                         f"shape {alpha.shape}")
    return alpha


def check_safe_strategy(safe_strategy: object, safe_margins: object, n_arms: int,
                        thresholds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x◇ and its Slater margins λ as DEBORA-H and the safe baseline take them (Bollini et al.,
    Assumption 2.1; Algorithm 4, line 5): x◇ a probability vector over the ``n_arms`` arms and
    0 < λ_i ≤ α_i, one margin per threshold α_i."""
    x = check_distribution(safe_strategy, n_arms, "safe_strategy")
    if safe_margins is None:
        raise ValueError("safe_margins must be given: x◇'s Slater margins α − G x◇, one per "
                         "threshold")
    lam = np.atleast_1d(as_numbers(safe_margins, "safe_margins"))
    if lam.shape != thresholds.shape:
        raise ValueError(f"safe_margins must have one entry per threshold (shape "
                         f"{thresholds.shape}), got shape {lam.shape}")
    if not np.all(np.isfinite(lam)) or np.any(lam <= 0):
        raise ValueError("safe_margins must be > 0: x◇ must be strictly safe, "
                         "λ_i = α_i − g_iᵀx◇ > 0 (Assumption 2.1)")
    if np.any(lam > thresholds):
        raise ValueError("safe_margins must be <= thresholds: λ_i = α_i − g_iᵀx◇ with costs "
                         "in [0, 1] cannot exceed α_i (are these the costs g_iᵀx◇ rather "
                         "than the margins?)")
    return x, lam


def safe_side(env: Environment, name: str, safe_strategy: object = None,
              safe_margins: object = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """α, x◇ and x◇'s Slater margins λ for the hard-constraint factories (DEBORA-H, the safe
    baseline).

    x◇ is ``safe_strategy`` if given, else the environment's. The margins are
    ``safe_margins`` if given, else α − G x◇ from the environment's cost means. A live
    experiment knows neither G nor x◇: it gives both, the margins as lower bounds on the true
    ones (the guarantee of Lemma 5.1 holds with any 0 < λ_i ≤ α_i − g_iᵀx◇; smaller margins
    only mix in more of x◇). Where G is known, margins above the true ones are refused: they
    would make the mixture unsafe.
    """
    alpha, G = constrained_problem(env, name)
    if safe_strategy is None:
        safe_strategy = getattr(env, "safe_strategy", None)
    if safe_strategy is None:
        raise ValueError(f"policy {name!r} needs a strictly safe strategy x◇: pass "
                         "safe_strategy=[...] (with safe_margins=[...] where the cost means "
                         "are unknown, as in a live experiment), or simulate a "
                         "ConstrainedBandit(..., safe_strategy=...)")
    x = check_distribution(safe_strategy, env.n_arms, "safe_strategy")
    true = None if G is None else alpha - G @ x
    if safe_margins is None:
        if true is None:
            raise ValueError(f"policy {name!r} needs x◇'s Slater margins α − G x◇: pass "
                             "safe_margins=[...], lower bounds on them (one per threshold), "
                             "where the cost means G are unknown, as in a live experiment")
        if not np.all(true > 0):
            raise ValueError(f"safe_strategy must be strictly safe (α − G x◇ > 0 for every "
                             f"constraint), got margins α − G x◇ = "
                             f"{np.round(true, 6).tolist()}")
        safe_margins = true
    x, lam = check_safe_strategy(x, safe_margins, env.n_arms, alpha)
    if true is not None and np.any(lam > true + 1e-12):
        raise ValueError(f"safe_margins must not exceed x◇'s true margins α − G x◇ = "
                         f"{np.round(true, 6).tolist()}: larger ones make the mixture unsafe")
    return alpha, x, lam


@register_policy("OptimisticConstrained")
def optimistic_constrained(env: Environment, rng: np.random.Generator, *,
                           horizon: int | None = None, delta: float = 0.05,
                           schedule: str = "doubling", width_scale: float = 1.0
                           ) -> OptimisticConstrained:
    """Optimistic soft-constraint baseline (Efroni et al. 2020); not replicable."""
    alpha, _ = constrained_problem(env, "OptimisticConstrained")
    return OptimisticConstrained(env.n_arms, need_horizon("OptimisticConstrained", horizon),
                                 alpha, delta=delta, schedule=schedule,
                                 width_scale=width_scale, rng=rng)


@register_policy("OptimisticMixingConstrained")
def optimistic_mixing_constrained(env: Environment, rng: np.random.Generator, *,
                                  horizon: int | None = None, delta: float = 0.05,
                                  schedule: str = "doubling", width_scale: float = 1.0,
                                  safe_strategy: list[float] | None = None,
                                  safe_margins: list[float] | None = None
                                  ) -> OptimisticMixingConstrained:
    """Optimistic strategy mixed with x◇ by DEBORA-H's Eq. (4); not replicable.

    x◇ and its Slater margins as in :func:`safe_side` (the environment's, or given).
    """
    return _mixing(env, rng, "OptimisticMixingConstrained", horizon, delta, schedule,
                   width_scale, safe_strategy, safe_margins)


def _mixing(env: Environment, rng: np.random.Generator, name: str, horizon: int | None,
            delta: float, schedule: str, width_scale: float, safe_strategy: object,
            safe_margins: object) -> OptimisticMixingConstrained:
    alpha, x_safe, margins = safe_side(env, name, safe_strategy, safe_margins)
    return OptimisticMixingConstrained(env.n_arms, need_horizon(name, horizon), alpha, x_safe,
                                       safe_margins=margins, delta=delta, schedule=schedule,
                                       width_scale=width_scale, rng=rng)


# The old names keep working, with a DeprecationWarning, rather than being refused: a live
# experiment's journal stores its algorithm's registry name and rebuilds the policy from it on
# every open (live/experiment.py, Experiment._build), so refusing the name would make existing
# experiments impossible to open. The object built is the renamed class, the same numbers.
_DEPRECATED = ("'SafeOptimisticConstrained' is the old name of OptimisticMixingConstrained "
               "(Bollini et al.'s Eq. (4) mixing with Hoeffding widths); it is not Pacchiano "
               "et al. (2021)'s algorithm. Use 'OptimisticMixingConstrained'.")


class SafeOptimisticConstrained(OptimisticMixingConstrained):
    """Deprecated name of :class:`OptimisticMixingConstrained` (it warns, then behaves
    identically)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        warnings.warn(_DEPRECATED, DeprecationWarning, stacklevel=2)
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]


@register_policy("SafeOptimisticConstrained",
                 description="deprecated name of OptimisticMixingConstrained (not Pacchiano "
                             "et al. 2021's algorithm)")
def safe_optimistic_constrained(env: Environment, rng: np.random.Generator, *,
                                horizon: int | None = None, delta: float = 0.05,
                                schedule: str = "doubling", width_scale: float = 1.0,
                                safe_strategy: list[float] | None = None,
                                safe_margins: list[float] | None = None
                                ) -> OptimisticMixingConstrained:
    """Deprecated registry name of ``OptimisticMixingConstrained`` (warns, builds it)."""
    warnings.warn(_DEPRECATED, DeprecationWarning, stacklevel=2)
    return _mixing(env, rng, "SafeOptimisticConstrained", horizon, delta, schedule,
                   width_scale, safe_strategy, safe_margins)
