"""Figures of Xiong, Camilleri, Fazel, Jain & Jamieson, "A/B Testing and Best-arm
Identification for Linear Bandits with Robustness to Non-stationarity" (Section 6 and
Appendix D): the error probability P(recommendation ≠ argmax_z zᵀθ̄_T) of six fixed-budget
identifiers — G-BAI (Algorithm 1), P1-RAGE (Algorithms 2–3), P1-Peace (Algorithms 4–5),
Mixed-Peace (Algorithm 6), Peace (Katz-Samuels et al. 2020) and OD-LinBAI (Yang & Tan 2022) —
on stationary and non-stationary instances, with a Wilson 95% interval on a log axis, and the
minimum gap Δ(1) of each point's instance below the non-stationary sweeps.

Trial counts are the paper's (2·10⁴ per point for Fig. 2a, 10⁴ for Fig. 5, 1000 otherwise).
At this scale a trial keeps its scalar results and pulls per arm but not its decision log
(``store_decisions=False``: a fixed-budget trial's log is thousands of one-pull runs), and
trials run in chunks of :data:`CHUNK` per task.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ...envs.base import Environment
from ...envs.datasets import movielens_100k_dir
from ...envs.instances import make_instance
from ...envs.instances.p1_rage import AUTHORS_THETA
from ...identification.g_bai import GBAI
from ...identification.od_linbai import ODLinBAI
from ...identification.p1 import P1RAGE, P1Peace
from ...identification.peace import MixedPeace, Peace
from ..spec import AlgorithmSpec, FigureSpec, PlotSpec

__all__ = [
    "FIGURES",
    "make_authors_multivariate",
    "make_click_through_periodic",
    "make_g_bai",
    "make_malicious",
    "make_mixed_peace",
    "make_od_linbai",
    "make_oscillating_multivariate",
    "make_oscillating_soare",
    "make_p1_peace",
    "make_p1_rage",
    "make_peace",
    "make_stationary_soare",
    "min_gap",
]

PAPER = ("Xiong, Camilleri, Fazel, Jain & Jamieson, A/B Testing and Best-arm Identification "
         "for Linear Bandits with Robustness to Non-stationarity")
#: Trials per task: a trial costs milliseconds, a task's pickling and transaction about as much.
CHUNK = 250
#: P1-RAGE's number of virtual phases in the paper's experiments (Appendix D).
M_VIRTUAL = 15


# --- environments -----------------------------------------------------------------------
# Every factory takes the budget T (the horizon over which θ̄_T, hence the target, is defined).

def make_stationary_soare(rng: np.random.Generator, *, T: int, d: int = 10,
                          omega: float = 0.1) -> Environment:
    """Soare et al.'s benchmark, θ* = 2e₁ (Section 6, Fig. 2a; fixed instance)."""
    return make_instance("soare", d=d, omega=omega)


def make_oscillating_soare(rng: np.random.Generator, *, T: int, s: float, L: int
                           ) -> Environment:
    """θ_t = [0.3, 0, ..., −s sin(2πt/L) + 0.5] on the Soare arms with ω = 0.5 (App. D)."""
    return make_instance("oscillating-soare", s=s, L=L, T=T)


def make_malicious(rng: np.random.Generator, *, T: int) -> Environment:
    """θ_t = [0, 1, ..., 1] for the first T/3 pulls, then [2, 0, ..., 0] (App. D, Fig. 4)."""
    return make_instance("malicious", T=T)


def make_oscillating_multivariate(rng: np.random.Generator, *, T: int, s: float, L: int,
                                  D: int) -> Environment:
    """Multivariate testing with randomly oscillating weights (Section 6, Fig. 3)."""
    return make_instance("oscillating-multivariate", rng=rng, D=D, s=s, L=L, T=T)


def make_authors_multivariate(rng: np.random.Generator, *, T: int, D: int) -> Environment:
    """Multivariate testing without oscillation on the authors' own draw of θ* (App. D,
    Fig. 5: :data:`~banditkit.envs.instances.p1_rage.AUTHORS_THETA`), so that their stored
    trials compare with ours on one instance."""
    return make_instance("p1-multivariate-testing", rng=rng, D=D, theta=AUTHORS_THETA)


def make_click_through_periodic(rng: np.random.Generator, *, T: int, L: int) -> Environment:
    """MovieLens-100k stand-in for the Yahoo! week (Section 6, Fig. 2b)."""
    return make_instance("click-through-periodic", rng=rng, L=L, T=T)


def min_gap(env: Environment) -> dict[str, float]:
    """The instance fact plotted under the sweeps: Δ(1), the gap between the best and the
    second-best item under θ̄_T."""
    return {"min_gap": float(env.min_gap())}


# --- algorithms -------------------------------------------------------------------------

def make_g_bai(env: Environment, rng: np.random.Generator, *, budget: int) -> GBAI:
    """G-BAI (Algorithm 1)."""
    return GBAI(env.X, env.Z, budget, rng=rng)


def make_p1_rage(env: Environment, rng: np.random.Generator, *, budget: int,
                 m: int = M_VIRTUAL) -> P1RAGE:
    """P1-RAGE (Algorithms 2–3) with the paper's m = 15 (Appendix D)."""
    return P1RAGE(env.X, env.Z, budget, m=m, rng=rng)


def make_p1_peace(env: Environment, rng: np.random.Generator, *, budget: int) -> P1Peace:
    """P1-Peace (Algorithms 4–5)."""
    return P1Peace(env.X, env.Z, budget, rng=rng)


def make_mixed_peace(env: Environment, rng: np.random.Generator, *, budget: int
                     ) -> MixedPeace:
    """Mixed-Peace (Algorithm 6)."""
    return MixedPeace(env.X, env.Z, budget, rng=rng)


def make_peace(env: Environment, rng: np.random.Generator, *, budget: int) -> Peace:
    """Peace (Katz-Samuels et al. 2020, fixed budget, as in Appendix D)."""
    return Peace(env.X, env.Z, budget, rng=rng)


def make_od_linbai(env: Environment, rng: np.random.Generator, *, budget: int) -> ODLinBAI:
    """OD-LinBAI (Yang & Tan 2022)."""
    return ODLinBAI(env.X, env.Z, budget, rng=rng)


ALGORITHMS = (
    AlgorithmSpec("P1-RAGE", make_p1_rage),
    AlgorithmSpec("P1-Peace", make_p1_peace),
    AlgorithmSpec("G-BAI", make_g_bai),
    AlgorithmSpec("Mixed-Peace", make_mixed_peace),
    AlgorithmSpec("Peace", make_peace),
    AlgorithmSpec("OD-LinBAI", make_od_linbai),
)


def budget_of(point: Mapping[str, Any]) -> int:
    """A point's budget T (its horizon: the algorithms stop by themselves at T)."""
    return int(point["T"])


def _point(**params: Any) -> dict[str, Any]:
    return {**params, "algorithm_params": {"budget": int(params["T"])}}


def _series(x: str, values: Any, fixed: Mapping[str, Any], **common: Any
            ) -> list[dict[str, Any]]:
    return [_point(**common, **fixed, **{x: v}) for v in values]


def _union(*series: list[dict[str, Any]]) -> tuple[dict[str, Any], ...]:
    """Points of several series, each point once (two series may share one)."""
    out: list[dict[str, Any]] = []
    for s in series:
        out += [p for p in s if p not in out]
    return tuple(out)


def _error_plot(x: str, xlabel: str, panels: tuple = (), facts: tuple[str, ...] = (),
                xscale: str = "linear") -> PlotSpec:
    return PlotSpec(kind="error", metric="failure_rate", x=x, xlabel=xlabel,
                    ylabel="error probability", xscale=xscale, yscale="log", panels=panels,
                    facts=facts)


#: The paper's claims, as comparisons of error rates at every point (Section 6): P1-RAGE and
#: P1-Peace never worse than G-BAI and Mixed-Peace; Peace and OD-LinBAI unstable under
#: non-stationarity (against G-BAI, robust by Theorem 1); P1-RAGE close to Peace when
#: stationary.
COMPARISONS = (("P1-RAGE", "G-BAI"), ("P1-RAGE", "Mixed-Peace"), ("P1-Peace", "G-BAI"),
               ("P1-Peace", "Mixed-Peace"), ("Peace", "G-BAI"), ("OD-LinBAI", "G-BAI"),
               ("P1-RAGE", "Peace"))


def _figure(**kw: Any) -> FigureSpec:
    kw.setdefault("algorithms", ALGORITHMS)
    kw.setdefault("comparisons", COMPARISONS)
    kw.setdefault("horizon", budget_of)
    kw.setdefault("chunk", CHUNK)
    kw.setdefault("store_decisions", False)
    kw.setdefault("instance_facts", min_gap)
    return FigureSpec(**kw)


_COMMON = (" Stationary algorithms (Peace, OD-LinBAI) pull each epoch's batch in a random order "
           "drawn from their internal randomness (Appendix D). Error rates carry a Wilson 95% "
           "interval; the paper's plots are images missing from its text, so the comparison "
           "with the paper is qualitative (docs/p1-rage.md).")

FIG2A_T = (11, 1010, 2010, 3010, 4010, 5010)
FIG2A = _figure(
    name="p1-rage:fig2a",
    full_minutes=10.12,  # reproduce all --workers 2, 2026-11-26 (docs/reproduction.md)
    title="Stationary Soare benchmark (d = 10, ω = 0.1): error probability against the budget T",
    paper=f"{PAPER}, Section 6, Figure 2(a)",
    make_env=make_stationary_soare,
    points=tuple(_point(T=T) for T in FIG2A_T),
    trials=20_000,
    plot=_error_plot("T", "budget T"),
    quick={"trials": 40, "points": tuple(_point(T=T) for T in (110, 1010))},
    notes=("X = {e_1..e_10, cos(0.1)e_1 + sin(0.1)e_2}, θ* = 2e_1; budgets T = {T}. The "
           "paper's smallest budget T = 10 is below the 11 arms, which every algorithm here "
           "refuses (a budget must allow one pull per arm), so the full sweep starts at "
           "T = 11." + _COMMON),
)

FIG2B_L = (100, 200, 500, 1000, 1500, 3000)
FIG2B = _figure(
    name="p1-rage:fig2b",
    full_minutes=2.55,  # reproduce all --workers 2, 2026-11-26 (docs/reproduction.md)
    title="Click-through, weekly periodic (MovieLens-100k stand-in for Yahoo! R6A), T = {T}",
    paper=f"{PAPER}, Section 6, Figure 2(b)",
    requires=movielens_100k_dir,
    make_env=make_click_through_periodic,
    points=tuple(_point(T=21_000, L=L) for L in FIG2B_L),
    trials=1000,
    plot=_error_plot("L", "visits per day L", facts=("min_gap",)),
    shared_instance=True,
    quick={"trials": 20, "points": (_point(T=2100, L=100),)},
    notes=("The Yahoo! Webscope R6A log cannot be obtained here; MovieLens-100k (`make data`) "
           "stands in: seven periods of the ratings, one ridge fit (λ = 0.01) each, cycled "
           "every L pulls (see the instance's docstring and docs/p1-rage.md)." + _COMMON),
)

FIG3_S = tuple(range(10))
FIG3_L = tuple(range(300, 3001, 300))
FIG3_D = 4  # the authors' code (D = 4 slots: 16 layouts in R^11)
FIG3 = _figure(
    name="p1-rage:fig3",
    full_minutes=2.70,  # reproduce all --workers 2, 2026-11-26 (docs/reproduction.md)
    title="Oscillating multivariate testing, T = {T}: error probability against s and L",
    paper=f"{PAPER}, Section 6, Figure 3",
    make_env=make_oscillating_multivariate,
    points=_union(_series("s", FIG3_S, {"L": 900}, T=10_000, D=FIG3_D),
                  _series("L", FIG3_L, {"s": 2}, T=10_000, D=FIG3_D)),
    trials=1000,
    plot=_error_plot("s", "oscillation", panels=(("s", {"L": 900}), ("L", {"s": 2})),
                     facts=("min_gap",)),
    shared_instance=True,
    quick={"trials": 20, "points": (_point(T=2000, D=FIG3_D, s=0, L=900),
                                    _point(T=2000, D=FIG3_D, s=4, L=900))},
    notes=("θ_{t,i} = θ*_i + s·I_i·‖θ*‖_∞·sin(2πt/L + φ_i), I_i ~ U{0, 1}, φ_i ~ U[0, 2π], "
           "redrawn until θ̄_T keeps θ*'s best layout; θ*, I and φ come from one "
           "stream shared by all points (the authors' code draws them once per sweep); D = 4 "
           "as in the authors' code. In the full sweep the two series (s at L = 900, L at "
           "s = 2) share the point (s = 2, L = 900), run once; this run's points: s = {s}, "
           "L = {L}." + _COMMON),
)

FIG4 = _figure(
    name="p1-rage:fig4",
    full_minutes=0.27,  # reproduce all --workers 2, 2026-11-26 (docs/reproduction.md)
    title="Malicious non-stationary Soare (ω = 0.5), T = {T}",
    paper=f"{PAPER}, Appendix D, Figure 4",
    make_env=make_malicious,
    points=(_point(T=10_000),),
    trials=1000,
    plot=_error_plot("T", "budget T"),
    quick={"trials": 40, "points": (_point(T=3000),)},
    notes=("θ_t = [0, 1, ..., 1] for the first T/3 pulls and [2, 0, ..., 0] after; the best arm "
           "under θ̄_T is e_1, which the first third hides." + _COMMON),
)

FIG5 = _figure(
    name="p1-rage:fig5",
    full_minutes=1.14,  # reproduce all --workers 2, 2026-11-26 (docs/reproduction.md)
    title="Stationary multivariate testing, T = {T}",
    paper=f"{PAPER}, Appendix D, Figure 5",
    make_env=make_authors_multivariate,
    points=(_point(T=10_000, D=FIG3_D),),
    trials=10_000,
    plot=_error_plot("T", "budget T"),
    quick={"trials": 40, "points": (_point(T=2000, D=FIG3_D),)},
    notes=("θ_t = θ* for every t (s = 0) on one instance: the authors' own draw of θ* (their "
           "seed 6; top gap 0.03), so that their stored trials compare with ours. A draw of "
           "our own (seed 0) had a gap so large that no algorithm erred in 10,000 trials, "
           "and the paper's claim tested nothing." + _COMMON),
)

FIG6_S = tuple(range(10))
FIG6_L = tuple(range(300, 3001, 300))
FIG6 = _figure(
    name="p1-rage:fig6",
    full_minutes=2.80,  # reproduce all --workers 2, 2026-11-26 (docs/reproduction.md)
    title="Oscillating Soare benchmark (ω = 0.5), T = {T}: error probability against s and L",
    paper=f"{PAPER}, Appendix D, Figure 6",
    make_env=make_oscillating_soare,
    points=_union(_series("s", FIG6_S, {"L": 200}, T=10_000),
                  _series("L", FIG6_L, {"s": 2.5}, T=10_000)),
    trials=1000,
    plot=_error_plot("s", "oscillation", panels=(("s", {"L": 200}), ("L", {"s": 2.5})),
                     facts=("min_gap",)),
    quick={"trials": 20, "points": (_point(T=2000, s=0, L=200), _point(T=2000, s=5, L=200))},
    notes=("θ_t = [0.3, 0, ..., 0, −s·sin(2πt/L) + 0.5]; this run's points: s = {s}, "
           "L = {L}. The paper's text fixes 'm = 1' for the L series; the full sweep uses "
           "s = 2.5 there, as issue 11 states." + _COMMON),
)

FIGURES = [FIG2A, FIG2B, FIG3, FIG4, FIG5, FIG6]
