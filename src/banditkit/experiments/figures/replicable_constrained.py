"""Figures for Bollini et al., "Replicable Constrained Bandits" (DEBORA, Algorithms 2-4). The
paper has no experiment; these figures are ours, each built from one of its claims:

* ``replicable-constrained:unconstrained`` — DEBORA (Algorithm 2) is a ρ-replicable UCB with
  regret of the order of the state of the art (Theorem 3.2): against Algorithm 2 of Replicable
  Bandits (Esfandiari et al.) and UCB1 on that paper's 6-arm instance, T = 10⁶.
* ``replicable-constrained:soft`` — DEBORA-S (Algorithm 3) keeps regret and violation sublinear
  (Theorem 4.3) while replicable: against the non-replicable optimistic baseline on a K = 5,
  m = 2 instance whose optimal safe strategy mixes two arms; R_T and V_T on log-log axes.
* ``replicable-constrained:hard`` — DEBORA-H (Algorithm 4) plays safe strategies with probability
  ≥ 1 − δ (Lemma 5.1) at a regret that grows as 1/λ_min (Theorem 5.3): against the optimistic
  strategy mixed with x◇ by the same Eq. (4) without replicability
  (:class:`~banditkit.policies.constrained.baselines.OptimisticMixingConstrained`) and the
  published safe baseline OPLB (Pacchiano et al. 2021,
  :class:`~banditkit.policies.constrained.oplb.OPLB`),
  for Slater margins λ_min ∈ {0.05, 0.1, 0.2}; below the regret curves, the rounds played
  with an unsafe strategy and the measured non-replication of the pairs.
* ``replicable-constrained:soft-long`` — Theorem 4.3's sublinear violation needs horizons where
  the paper's widths ζ_h fall below the instance's gaps (ζ ≈ 160 at T = 10⁶, ≈ 0.04 at 10¹⁴):
  the soft figure at T ∈ {10¹², 10¹³, …, 10¹⁸}, feasible because an epoch of
  DEBORA-S (and of the baseline's doubling schedule) is sampled exactly in O(K)
  (:mod:`banditkit.policies.epoch_sampler`) and the environment answers it with Binomial sums;
  checkpoints on a log grid (ten a decade from 10³), so each run's curve gives its slope per
  decade. Counts are int64 throughout (horizons up to 2⁶²).
* ``replicable-constrained:width`` — the paper's constants make the widths so large at practical
  T that exploration is nearly uniform; DEBORA-S with its widths scaled by
  ``width_scale ∈ {1, 10⁻³, 3·10⁻⁴, 10⁻⁴}`` (at T = 10⁶, K = 5, m = 2 the paper's ζ_h is about
  160 for an arm pulled T/K times, so only scales near 10⁻³ and below change a decision):
  regret, violation and measured replicability of each.

Every figure runs its trials as replicability pairs (trials 2j and 2j + 1 share ξ and see
independent rewards), so each report gives identical pairs with a Clopper–Pearson interval.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ...envs.base import Environment
from ...envs.instances import make_instance
from ...policies.constrained.baselines import OptimisticConstrained, OptimisticMixingConstrained
from ...policies.constrained.debora import DEBORA, DEBORAH, DEBORAS
from ...policies.constrained.oplb import OPLB
from ...simulate import simulate
from ...trial import Trial
from ..spec import AlgorithmSpec, FigureSpec, PlotSpec
from .replicable_bandits import (
    APPENDIX_H_MEANS,
    horizon_of,
    make_alg2,
    make_bernoulli,
    make_ucb1_T,
)

__all__ = ["FIGURES", "log_checkpoints", "make_debora", "make_debora_h", "make_debora_s",
           "make_hard", "make_oplb", "make_optimistic", "make_optimistic_mixing", "make_soft",
           "simulate_on_log_grid", "unsafe_rounds"]

PAPER = "Bollini et al., Replicable Constrained Bandits (no experiment in the paper; ours)"
RHO, DELTA = 0.3, 0.05
T_FULL, T_QUICK = 1_000_000, 20_000
TRIALS = 40  # 20 pairs per (point, algorithm)
WIDTH_SCALES = (1.0, 1e-3, 3e-4, 1e-4)
#: Horizons of soft-long, a point a decade (counts are exact int64 up to 2⁶² ≈ 4.6·10¹⁸).
T_LONG = tuple(10**e for e in range(12, 19))
T_LONG_QUICK = 10**7


# --- environments -----------------------------------------------------------------------

def make_soft(rng: np.random.Generator) -> Environment:
    """K = 5, m = 2, optimal safe strategy (0, ½, ½, 0, 0) (``constrained-soft``)."""
    return make_instance("constrained-soft")


def make_hard(rng: np.random.Generator, *, lambda_min: float) -> Environment:
    """The soft instance with thresholds giving x◇ the Slater margin ``lambda_min``."""
    return make_instance("constrained-hard", lambda_min=lambda_min)


# --- algorithms -------------------------------------------------------------------------

def make_debora(env: Environment, rng: np.random.Generator, *, T: int, rho: float,
                delta: float) -> DEBORA:
    """DEBORA (Algorithm 2) with the paper's constants."""
    return DEBORA(env.n_arms, T, rho=rho, delta=delta, rng=rng)


def make_debora_s(env: Environment, rng: np.random.Generator, *, T: int, rho: float,
                  delta: float, width_scale: float = 1.0) -> DEBORAS:
    """DEBORA-S (Algorithm 3); ``width_scale`` multiplies ζ (1: the paper's)."""
    return DEBORAS(env.n_arms, T, env.alpha, rho=rho, delta=delta, width_scale=width_scale,
                   rng=rng)


def make_debora_h(env: Environment, rng: np.random.Generator, *, T: int, rho: float,
                  delta: float) -> DEBORAH:
    """DEBORA-H (Algorithm 4), told x◇ and its Slater margins α − G x◇ (Assumption 2.2)."""
    x = env.safe_strategy
    return DEBORAH(env.n_arms, T, env.alpha, x, rho=rho, delta=delta,
                   safe_margins=env.alpha - env.G @ x, rng=rng)


def make_optimistic(env: Environment, rng: np.random.Generator, *, T: int, delta: float
                    ) -> OptimisticConstrained:
    """The non-replicable optimistic soft-constraint baseline, doubling schedule."""
    return OptimisticConstrained(env.n_arms, T, env.alpha, delta=delta, rng=rng)


def make_optimistic_mixing(env: Environment, rng: np.random.Generator, *, T: int,
                           delta: float) -> OptimisticMixingConstrained:
    """The optimistic strategy mixed with x◇ by DEBORA-H's Eq. (4), Hoeffding widths (not
    replicable; not Pacchiano et al. 2021's OPLB)."""
    x = env.safe_strategy
    return OptimisticMixingConstrained(env.n_arms, T, env.alpha, x,
                                       safe_margins=env.alpha - env.G @ x, delta=delta,
                                       rng=rng)


def make_oplb(env: Environment, rng: np.random.Generator, *, T: int) -> OPLB:
    """OPLB (Pacchiano, Ghavamzadeh, Bartlett & Jiang 2021), multi-armed, as the authors'
    code (policies/constrained/oplb.py): the published safe baseline. The known safe arm is
    x◇ = e_5 with
    its cost means; α_r = 1 + 1/min α, α_c = 1, δ = 1/T² (the code's constants); the doubling
    schedule (the code solves one LP a round, out of reach at T = 10⁶)."""
    arm = int(np.flatnonzero(env.safe_strategy > 0)[0])
    return OPLB(env.n_arms, T, env.alpha, safe_arm=arm, safe_costs=env.G[:, arm],
                schedule="doubling", rng=rng)


def unsafe_rounds(trial: Trial, env: Environment) -> dict[str, float]:
    """Rounds whose strategy violates a constraint under the true costs, and whether any did
    (a trial's share of the 1 − δ guarantee of Lemma 5.1)."""
    unsafe = 0
    for batch in trial.decisions.batches():
        x = (np.eye(env.n_arms)[batch.arms[0]] if batch.strategy is None
             else np.asarray(batch.strategy, dtype=float))
        if np.any(env.G @ x > env.alpha + 1e-12):
            unsafe += batch.n_pulls
    return {"unsafe_rounds": float(unsafe), "any_unsafe": float(unsafe > 0)}


def log_checkpoints(horizon: int, per_decade: int = 10, first: int = 1000) -> np.ndarray:
    """``per_decade`` checkpoints a decade from ``first`` (or 1) up to ``horizon``, always
    ending at ``horizon``: a curve over many decades gets its log-log slope decade by decade."""
    low = np.log10(max(1.0, min(first, horizon / 100)))
    high = np.log10(horizon)
    n = max(2, int(np.ceil((high - low) * per_decade)) + 1)
    grid = np.unique(np.round(np.logspace(low, high, n)).astype(np.int64))
    return np.unique(np.r_[grid[grid < horizon], horizon])


def simulate_on_log_grid(algorithm: Any, env: Environment, *, horizon: int, seed: Any,
                         checkpoints: np.ndarray | None = None) -> Trial:
    """:func:`banditkit.simulate` with :func:`log_checkpoints` instead of the runner's evenly
    spaced ones (which put 59 of 60 checkpoints in the last two decades of a 10¹⁵ run); the
    decisions and metrics are those of ``simulate``."""
    return simulate(algorithm, env, horizon=horizon, seed=seed,
                    checkpoints=log_checkpoints(horizon))


def _points(T: int, **params: Any) -> dict[str, Any]:
    return {**params, "algorithm_params": {"T": T}}


def _loglog(metrics: tuple[str, ...], yscale: str = "log") -> PlotSpec:
    """Log-log curves, so √T rates show as slope ½; ``"symlog"`` where a curve can be negative
    (an optimistic soft-constraint policy may earn more than x* by violating)."""
    return PlotSpec(kind="curve", metric=metrics[0], metrics=metrics, xlabel="round t",
                    xscale="log", yscale=yscale)


_COMMON = (" Trials run as replicability pairs (2j, 2j + 1 share ξ, independent rewards); "
           f"ρ = {RHO}, δ = {DELTA} for every replicable policy, the paper's constants "
           "otherwise. See docs/constrained.md.")

UNCONSTRAINED = FigureSpec(
    name="replicable-constrained:unconstrained",
    full_minutes=0.08,  # reproduce all --workers 2, 2026-11-26 (docs/reproduction.md)
    title="DEBORA vs replicable elimination vs UCB1, 6 Bernoulli arms, T = {T}",
    paper=f"{PAPER}: Algorithm 2, Theorem 3.2",
    make_env=make_bernoulli,
    points=({"means": APPENDIX_H_MEANS, "algorithm_params": {"T": T_FULL}},),
    algorithms=(
        AlgorithmSpec("DEBORA", make_debora, {"rho": RHO, "delta": DELTA}),
        AlgorithmSpec("ReplicableElimination (Esfandiari Alg. 2)", make_alg2, {"rho": RHO}),
        AlgorithmSpec("UCB1", make_ucb1_T, {"exploration": 2.0}),
    ),
    trials=TRIALS,
    horizon=horizon_of,
    checkpoints=60,
    paired=True,
    plot=_loglog(("regret",)),
    quick={"trials": 4, "points": ({"means": APPENDIX_H_MEANS,
                                    "algorithm_params": {"T": T_QUICK}},)},
    notes="The 6-arm instance of Esfandiari et al., Appendix H (means 0.44, ..., 0.59)." + _COMMON,
)

SOFT = FigureSpec(
    name="replicable-constrained:soft",
    full_minutes=0.14,  # reproduce all --workers 2, 2026-11-26 (docs/reproduction.md)
    title="Soft constraints: DEBORA-S vs the optimistic baseline, K = 5, m = 2, T = {T}",
    paper=f"{PAPER}: Algorithm 3, Theorem 4.3",
    make_env=make_soft,
    points=(_points(T_FULL),),
    algorithms=(
        AlgorithmSpec("DEBORA-S", make_debora_s, {"rho": RHO, "delta": DELTA}),
        AlgorithmSpec("Optimistic (non-replicable)", make_optimistic, {"delta": DELTA}),
    ),
    trials=TRIALS,
    horizon=horizon_of,
    checkpoints=60,
    paired=True,
    plot=_loglog(("regret", "violation"), "symlog"),
    quick={"trials": 4, "points": (_points(T_QUICK),)},
    notes=("constrained-soft: rewards (0.9, 0.7, 0.55, 0.4, 0.2), costs (0.9, 0.6, 0.4, 0.3, 0.1) "
           "and (0.2, 0.3, 0.65, 0.5, 0.1), thresholds 0.5; x* = (0, ½, ½, 0, 0). Bernoulli "
           "rewards and costs." + _COMMON),
)

# The soft figure's instance and algorithms, continued to horizons where ζ_h < 1.
SOFT_LONG = replace(
    SOFT,
    name="replicable-constrained:soft-long",
    full_minutes=2.10,  # reproduce all --workers 2, 2026-11-26 (docs/reproduction.md)
    title="Soft constraints at long horizons: DEBORA-S vs the optimistic baseline, K = 5, "
          "m = 2, T = {T}",
    paper=f"{PAPER}: Algorithm 3, Theorem 4.3 (violation sublinear in T)",
    points=tuple(_points(T) for T in T_LONG),
    algorithms=tuple(replace(a, simulator=simulate_on_log_grid) for a in SOFT.algorithms),
    # checkpoints stays 60 but is unused: both algorithms record on log_checkpoints
    quick={"trials": 4, "points": (_points(T_LONG_QUICK),)},
    notes=("The soft figure's instance and algorithms at T = {T} (10¹²–10¹⁸ in the full "
           "run), the paper's constants. An epoch's pulls are sampled exactly as per-arm counts "
           "in O(K) "
           "(policies/epoch_sampler.py): the law of the per-round process, arms in index order "
           "within an epoch. Curves on a log grid, ten checkpoints a decade from 10³; each "
           "point is a separate run of horizon T (ρ′, δ′ depend on ⌈log₂T⌉)." + _COMMON),
)

HARD = FigureSpec(
    name="replicable-constrained:hard",
    full_minutes=0.57,  # reproduce all --workers 2, 2026-11-26 (docs/reproduction.md)
    title="Hard constraints, T = {T}: DEBORA-H vs the optimistic strategy mixed with x◇ by "
          "Eq. (4) and OPLB (non-replicable), Slater margin λ_min = {lambda_min}",
    paper=f"{PAPER}: Algorithm 4, Lemma 5.1, Theorem 5.3",
    make_env=make_hard,
    points=tuple(_points(T_FULL, lambda_min=lam) for lam in (0.05, 0.1, 0.2)),
    algorithms=(
        AlgorithmSpec("DEBORA-H", make_debora_h, {"rho": RHO, "delta": DELTA}),
        AlgorithmSpec("Optimistic + Eq. (4) mixing (non-replicable)", make_optimistic_mixing,
                      {"delta": DELTA}),
        AlgorithmSpec("OPLB (Pacchiano et al. 2021; non-replicable)", make_oplb),
    ),
    trials=TRIALS,
    horizon=horizon_of,
    checkpoints=60,
    paired=True,
    plot=replace(_loglog(("regret",)), summaries=("unsafe_rounds", "non_replication"),
                 summary_x="lambda_min"),
    trial_facts=unsafe_rounds,
    quick={"trials": 4, "points": (_points(T_QUICK, lambda_min=0.1),)},
    notes=("constrained-hard: the soft instance's arms with both thresholds shifted so that "
           "x◇ = e_5 has margin λ_min on each constraint. The baseline is DEBORA-H's own "
           "mixing rule (Eq. (4): x = σx◇ + (1 − σ)x̃, x̃ the optimistic strategy) with "
           "empirical means and Hoeffding widths, hence not replicable. The published safe "
           "baseline is OPLB (Pacchiano, Ghavamzadeh, Bartlett & Jiang 2021), multi-armed, as "
           "the authors' public code states it (its paper's algorithm box could not be read): "
           "pessimistic costs, rewards with α_r = 1 + 1/min α, δ = 1/T², the known safe arm "
           "e_5, the doubling schedule (policies/constrained/oplb.py). unsafe_rounds counts "
           "the rounds whose "
           "strategy violates a constraint under the true costs (drawn below the regret, with "
           "the measured non-replication of the {pairs} pairs per point); any_unsafe averages "
           "to the fraction of trials with one." + _COMMON),
)

WIDTH = FigureSpec(
    name="replicable-constrained:width",
    full_minutes=0.38,  # reproduce all --workers 2, 2026-11-26 (docs/reproduction.md)
    title="DEBORA-S with scaled confidence widths: regret, violation and replicability",
    paper=f"{PAPER}: Algorithm 3 (constants below the paper's are ours)",
    make_env=make_soft,
    points=tuple({"algorithm_params": {"T": T_FULL, "width_scale": w}}
                 for w in WIDTH_SCALES),
    algorithms=(AlgorithmSpec("DEBORA-S", make_debora_s, {"rho": RHO, "delta": DELTA}),),
    trials=TRIALS,
    horizon=horizon_of,
    checkpoints=60,
    paired=True,
    plot=_loglog(("regret", "violation"), "symlog"),
    quick={"trials": 4, "points": tuple(
        {"algorithm_params": {"T": T_QUICK, "width_scale": w}} for w in (1.0, 1e-3))},
    notes=("width_scale multiplies ζ_h of Eq. (1); 1 is the paper. Smaller widths explore less "
           "and estimate with fewer samples per decision, which the audit measures as "
           "non-replication." + _COMMON),
)

FIGURES = [UNCONSTRAINED, SOFT, SOFT_LONG, HARD, WIDTH]
