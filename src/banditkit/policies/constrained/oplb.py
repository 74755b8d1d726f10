"""OPLB for K-armed bandits with a known safe arm: Pacchiano, Ghavamzadeh, Bartlett & Jiang
(2021, "Stochastic bandits with linear constraints", AISTATS; arXiv 2006.10185), the
multi-armed specialisation of their optimistic-pessimistic linear bandit: a **pessimistic safe
set** (upper confidence bounds on the costs) and **extra optimism on the rewards** (the reward
radius scaled by α_r > 1) to make up for the feasible policies the pessimistic set excludes.

Source. The paper's algorithm box could not be read here. The search tools gave only its
abstract (deepai.org, researchtrend.ai, sotaverified.org) and the abstract of its journal
version (Pacchiano, Ghavamzadeh & Bartlett, "Contextual bandits with stage-wise constraints",
JMLR; arXiv 2401.08016). The rule below is therefore the authors' own public implementation:
github.com/pacchiano/constrainedBandits, ``utilities.py``, class ``ConstrainedBandit``
(commit 457aa7e), with the constants of that repository's experiments
(``constrained_bandits.py`` and ``random_mab_problems.py``). At each round t:

* estimates: r̂(a) and ĉ(a) are the empirical means of the reward and of the cost, or 0 and 1
  for an arm never pulled (the code's initial means);
* radius: β(a) = sqrt(2 log(1/δ) / max(N(a), 1)) with δ = 1/T² (``confidence_interval(n,
  1/T**2)``);
* optimistic rewards: U_r(a) = min(r̂(a) + α_r β(a), 1), with α_r = 1 + 1/τ (the code's
  ``alpha_r = 1/threshold + 1``);
* pessimistic costs: U_c(a) = min(ĉ(a) + α_c β(a), 1), with α_c = 1. The known safe arm a₀ keeps
  its known cost c₀ instead (``fix_known_arms``); its reward is estimated like any other arm's;
* policy: π_t = argmax_{π ∈ Δ_K} U_rᵀπ s.t. U_cᵀπ ≤ τ, a linear programme (always feasible: the
  safe arm alone satisfies it because c₀ < τ). One arm is drawn from π_t.

Our additions, each one a choice the authors' code does not make:

* **m ≥ 1 constraints** (banditkit's constrained problems have m thresholds α_i). Every cost
  row gets its own pessimistic bound U_c,i ≤ α_i, the known arm keeps its known costs c₀,i, and
  α_r = 1 + 1/min_i α_i. For m = 1 this is the code's rule exactly.
* **Canonical LP.** The LP is solved by
  :func:`banditkit.policies.constrained.safe_lp.optimistic_strategy`:
  the lexicographic maximum among the optimal policies, output snapped to 2^-32.
* **Arm draws.** Pulls are drawn from π_t with ξ, as the other constrained baselines draw them
  (:func:`.epoch_sampler.epoch_batch`).
* **Schedule.** ``schedule="every"`` (the default) recomputes π_t every round, as the code does:
  one LP a round, for horizons up to about 10⁴. ``"doubling"`` recomputes when some arm's count
  has doubled (DEBORA-S's epochs), for long horizons such as the figures'.

The theory gives a regret of O(√(KT)/(τ − c₀)) (the abstract), which suggests that α_r should
grow like 1/(τ − c₀). The code's 1 + 1/τ equals 1 + 1/(τ − c₀) when c₀ = 0 (its first
experiment), but it keeps 1/τ when c₀ > 0 (the random problems). We keep the code's value as the
default and take ``alpha_r`` as a parameter.
"""

from __future__ import annotations

import math

import numpy as np

from ...envs.base import Environment
from ...registry import need_horizon, register_policy
from ...rng import SeedLike
from ...validation import as_numbers, check_integer, check_positive, check_probability
from .baselines import SCHEDULES, OptimisticConstrained, constrained_problem

__all__ = ["OPLB", "oplb"]


class OPLB(OptimisticConstrained):
    """OPLB, multi-armed (Pacchiano, Ghavamzadeh, Bartlett & Jiang 2021), as the authors' code
    states it (module docstring): the policy maximising the optimistic rewards over the
    pessimistic safe set, with a known safe arm.

    Parameters
    ----------
    n_arms : int
        K ≥ 2.
    horizon : int
        T ≥ 1; the algorithm stops after T pulls.
    thresholds : array in [0, 1], shape (m,)
        τ (α_i); constraint i requires c_iᵀπ ≤ τ_i.
    safe_arm : int
        a₀, the arm whose costs are known.
    safe_costs : array, shape (m,)
        c₀, the known costs of a₀, each strictly below its threshold.
    alpha_r : float, optional
        Reward-radius scale (> 0); default 1 + 1/min_i τ_i (the code's 1/τ + 1).
    alpha_c : float
        Cost-radius scale (> 0); 1 as in the code.
    delta : float, optional
        δ of the radius sqrt(2 log(1/δ)/max(N, 1)), in (0, 1); default 1/T².
    schedule : {"every", "doubling"}
        Recompute π every round (the code) or when some arm's count has doubled.
    rng : Generator or seed
        ξ, the draws of arms from π.

    Attributes
    ----------
    n_updates : int
        LPs solved so far.
    pulls, reward_sums, cost_sums : arrays
        N(a), Σ rewards per arm, Σ costs per constraint and arm (shape (m, K)).
    """

    def __init__(self, n_arms: int, horizon: int, thresholds: np.ndarray, *, safe_arm: int,
                 safe_costs: np.ndarray, alpha_r: float | None = None, alpha_c: float = 1.0,
                 delta: float | None = None, schedule: str = "every",
                 rng: SeedLike = None) -> None:
        n_arms = check_integer(n_arms, "n_arms", low=2)
        horizon = check_integer(horizon, "horizon", low=1)
        # δ = 1/T² by default; for T = 1 that is 1, outside (0, 1): the radius is then 0
        d = (1.0 / float(horizon) ** 2 if horizon > 1 else 0.5) if delta is None else delta
        super().__init__(n_arms, horizon, thresholds, delta=check_probability(d, "delta"),
                         schedule=schedule, rng=rng)
        self.safe_arm = check_integer(safe_arm, "safe_arm", low=0)
        if self.safe_arm >= self.n_arms:
            raise ValueError(f"safe_arm must be an arm index in [0, {self.n_arms - 1}], got "
                             f"{safe_arm!r}")
        c0 = np.atleast_1d(as_numbers(safe_costs, "safe_costs"))
        if c0.shape != self.alpha.shape:
            raise ValueError(f"safe_costs must have one entry per threshold (shape "
                             f"{self.alpha.shape}), got shape {c0.shape}")
        if not np.all(np.isfinite(c0)) or np.any(c0 < 0) or np.any(c0 >= self.alpha):
            raise ValueError("safe_costs must lie in [0, τ_i): the known arm must be strictly "
                             f"safe (c₀ < τ), got {c0.tolist()} against thresholds "
                             f"{self.alpha.tolist()}")
        self.safe_costs = c0
        if alpha_r is None:
            if np.any(self.alpha <= 0):
                raise ValueError("alpha_r must be given when a threshold is 0 (the default "
                                 "1 + 1/min τ is infinite)")
            alpha_r = 1.0 + 1.0 / float(np.min(self.alpha))
        self.alpha_r = check_positive(alpha_r, "alpha_r")
        self.alpha_c = check_positive(alpha_c, "alpha_c")
        # log(1/δ) of the radius (the code's 2 log(1/δ) under the square root)
        self.log_inv_delta = math.log(1.0 / self.delta)

    # -- the authors' confidence bounds -----------------------------------------------------

    def radius(self) -> np.ndarray:
        """β(a) = sqrt(2 log(1/δ) / max(N(a), 1))."""
        return np.sqrt(2.0 * self.log_inv_delta / np.maximum(self.pulls, 1).astype(float))

    def estimates(self) -> tuple[np.ndarray, np.ndarray]:
        """(r̂, Ĉ): empirical means, shape (K,) and (m, K); 0 and 1 for an arm never pulled
        (the code's initial means)."""
        seen = self.pulls > 0
        n = np.maximum(self.pulls, 1)
        return (np.where(seen, self.reward_sums / n, 0.0),
                np.where(seen, self.cost_sums / n, 1.0))

    def optimistic_values(self) -> np.ndarray:
        """U_r = min(r̂ + α_r β, 1)."""
        r_hat, _ = self.estimates()
        return np.minimum(r_hat + self.alpha_r * self.radius(), 1.0)

    def pessimistic_costs(self) -> np.ndarray:
        """U_c = min(Ĉ + α_c β, 1) (shape (m, K)), the known arm's column set to c₀."""
        _, c_hat = self.estimates()
        upper = np.minimum(c_hat + self.alpha_c * self.radius()[None, :], 1.0)
        upper[:, self.safe_arm] = self.safe_costs
        return upper

    def optimistic_costs(self) -> np.ndarray:
        """The LP's cost rows: OPLB's constraint uses the pessimistic costs."""
        return self.pessimistic_costs()

    @property
    def info(self) -> dict:
        return {**super().info, "alpha_r": self.alpha_r, "alpha_c": self.alpha_c,
                "delta": self.delta}


@register_policy("OPLB")
def oplb(env: Environment, rng: np.random.Generator, *, horizon: int | None = None,
         safe_arm: int | None = None, safe_costs: list[float] | None = None,
         alpha_r: float | None = None, alpha_c: float = 1.0, delta: float | None = None,
         schedule: str = "every") -> OPLB:
    """OPLB (Pacchiano et al. 2021), multi-armed, as the authors' code; not replicable.

    The known safe arm is ``safe_arm``, or else the environment's safe strategy when that is
    one arm. Its known costs are ``safe_costs``, or else its cost means in the environment.
    """
    alpha, G = constrained_problem(env, "OPLB")
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {SCHEDULES}, got {schedule!r}")
    if safe_arm is None:
        x = getattr(env, "safe_strategy", None)
        if x is None or np.count_nonzero(np.asarray(x) > 0) != 1:
            raise ValueError("policy 'OPLB' needs a known safe arm: pass safe_arm=k (with "
                             "safe_costs=[...] where the cost means are unknown), or simulate "
                             "a ConstrainedBandit whose safe_strategy is one arm")
        safe_arm = int(np.flatnonzero(np.asarray(x) > 0)[0])
    safe_arm = check_integer(safe_arm, "safe_arm", low=0)
    if safe_arm >= env.n_arms:
        raise ValueError(f"safe_arm must be an arm index in [0, {env.n_arms - 1}], got "
                         f"{safe_arm!r}")
    if safe_costs is None:
        if G is None:
            raise ValueError("policy 'OPLB' needs the known arm's costs: pass "
                             "safe_costs=[...], one per threshold")
        safe_costs = G[:, safe_arm].tolist()
    return OPLB(env.n_arms, need_horizon("OPLB", horizon), alpha, safe_arm=safe_arm,
                safe_costs=np.asarray(safe_costs, float), alpha_r=alpha_r, alpha_c=alpha_c,
                delta=delta, schedule=schedule, rng=rng)
