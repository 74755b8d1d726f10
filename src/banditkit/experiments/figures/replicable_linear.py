"""Figures for the replicable linear bandits of Esfandiari et al., "Replicable Bandits", ICLR 2023,
Section 5 (Algorithms 3 and 4). The paper has no linear experiment; these figures are ours.

* ``replicable-bandits:linear`` — Algorithm 3 against its non-replicable counterpart (batched
  linear elimination, Esfandiari et al. 2021) on K = 20 random unit arms in R^5: cumulative
  regret, and identical pairs of executions (trials run as replicability pairs).
* ``replicable-bandits:infinite`` — Algorithm 4 on a grid net of the unit disc: regret against
  the horizon T, 10^5 to 10^12 (regret/T falls where the log–log slope is below 1).
* ``replicable-bandits:linear-regret`` — the sequential regret minimisers OFUL
  (Abbasi-Yadkori et al. 2011) and linear Thompson sampling (Agrawal & Goyal 2013) beside
  Algorithm 3 and its non-replicable counterpart on instances built like
  ``replicable-bandits:linear``'s (issue 18 §2), at a horizon a sequential policy can run.

The first two cost O(batches) per trial whatever T (batches are answered from sufficient
statistics), so the horizons are the ones where the algorithms' theory constants start to
matter (10^8 to 10^12). A sequential policy costs O(T) per trial, so the third stops at 10^6.
"""

from __future__ import annotations

import numpy as np

from ...envs.base import Environment
from ...envs.instances import make_instance
from ...policies.linear.elimination import LinearElimination
from ...policies.linear.oful import OFUL
from ...policies.linear.replicable import ReplicableLinearElimination, ReplicableLinearLSE
from ...policies.linear.thompson import LinearThompson
from ..spec import AlgorithmSpec, FigureSpec, PlotSpec
from .replicable_bandits import horizon_of

__all__ = ["FIGURES", "make_alg3", "make_alg4", "make_disc",
           "make_linear_elimination", "make_lints_T", "make_oful_T", "make_random_unit"]

PAPER = "Esfandiari et al., Replicable Bandits, ICLR 2023, Section 5 (no experiment in the paper)"

#: Practical constants of Algorithm 4 used by ``replicable-bandits:infinite`` (see its notes).
ALG4_PRACTICAL = {"confidence": "computed", "lse_rho": 0.3, "delta": 0.01, "blowup": 100.0}


def make_random_unit(rng: np.random.Generator, *, K: int, d: int) -> Environment:
    """K uniform unit arms in R^d, θ* uniform on the unit sphere, Rademacher (±1) rewards."""
    return make_instance("linear-random-unit", rng=rng, K=int(K), d=int(d))


def make_disc(rng: np.random.Generator, *, resolution: float, angle: float) -> Environment:
    """Grid net (spacing ``resolution``) of the unit disc, θ* = (cos angle, sin angle) (the same
    instance at every horizon of the sweep), Rademacher (±1) rewards."""
    theta = (float(np.cos(angle)), float(np.sin(angle)))
    return make_instance("linear-grid", rng=rng, resolution=float(resolution), d=2,
                         theta=theta)


def make_linear_elimination(env: Environment, rng: np.random.Generator, *, T: int,
                            **params: object) -> LinearElimination:
    """Non-replicable batched linear elimination (no internal randomness)."""
    return LinearElimination(env.X, T, **params)  # type: ignore[attr-defined]


def make_alg3(env: Environment, rng: np.random.Generator, *, T: int, rho: float,
              **params: object) -> ReplicableLinearElimination:
    """Algorithm 3 (paper constants unless ``params`` override them)."""
    return ReplicableLinearElimination(env.X, T, rho, rng=rng, **params)  # type: ignore


def make_alg4(env: Environment, rng: np.random.Generator, *, T: int, rho: float,
              **params: object) -> ReplicableLinearLSE:
    """Algorithm 4 on the environment's arms as the net (paper constants unless overridden)."""
    return ReplicableLinearLSE(env.X, T, rho, rng=rng, **params)  # type: ignore


LINEAR = FigureSpec(
    name="replicable-bandits:linear",
    full_minutes=0.02,  # reproduce all --workers 2, 2026-11-26 (docs/reproduction.md)
    title="Replicable linear elimination (Alg. 3) vs batched linear elimination, K = {K}, "
          "d = {d}, T = {T}",
    paper=PAPER,
    make_env=make_random_unit,
    points=({"K": 20, "d": 5, "algorithm_params": {"T": 10**8}},),
    algorithms=(
        AlgorithmSpec("LinearElimination (non-replicable)", make_linear_elimination, {}),
        AlgorithmSpec("ReplicableLinearElimination (Alg. 3)", make_alg3, {"rho": 0.3}),
        AlgorithmSpec("Alg. 3, last batch argmax (as printed)", make_alg3,
                      {"rho": 0.3, "commit": "argmax"}),
    ),
    trials=40,
    horizon=horizon_of,
    checkpoints=100,
    paired=True,
    plot=PlotSpec(kind="curve", metric="regret", xlabel="round t",
                  ylabel="cumulative pseudo-regret"),
    quick={"trials": 8, "points": ({"K": 20, "d": 5, "algorithm_params": {"T": 10**7}},)},
    notes=(
        "No linear experiment in the paper. Instance: K = 20 arms uniform on the unit sphere "
        "of R^5 and theta* uniform on the unit sphere (drawn once from the instance stream), "
        "rewards Rademacher (+-1) with mean x^T theta* (1-sub-Gaussian, the paper's noise "
        "model). T = 10^8 (10^7 in --quick): a trial costs O(batches), and at T = 45000 "
        "Algorithm 3 with its constants runs a single batch (10 beta q = 44440 pulls with "
        "beta = floor(K^2/rho^2) = 4444) and then commits. Constants are the paper's: "
        "B = ceil(ln T), delta = 1/(KT^2), n_i = 10 beta q^i (line 7 read with eps-tilde_i, "
        "as the proof of Theorem 6 requires), q = (T/(10 beta))^(1/B); the baseline is the "
        "same algorithm with beta = 1 and a fixed threshold (Esfandiari et al. 2021). "
        "Algorithm 3's last batch plays the lowest-index surviving arm (Algorithm 2's rule): "
        "the printed argmax of the LSE is a function of the rewards, hence not replicable; "
        "the third line runs the printed rule. The {trials} trials form {pairs} pairs sharing "
        "xi."
    ),
)

#: Direction of θ* on the disc: 1 radian, not aligned with the grid.
DISC_ANGLE = 1.0
#: Up to 10^12: a trial costs O(batches), and with the paper's constants the replicable LSE
#: certifies too little to eliminate anything before T ≈ 10^9 on this instance.
_T_SWEEP = tuple(10**k for k in range(5, 13))


def _t_points(ts: tuple[int, ...]) -> tuple:
    return tuple({"resolution": 0.1, "angle": DISC_ANGLE, "algorithm_params": {"T": T}}
                 for T in ts)


INFINITE = FigureSpec(
    name="replicable-bandits:infinite",
    full_minutes=0.04,  # reproduce all --workers 2, 2026-11-26 (docs/reproduction.md)
    title="Replicable LSE elimination (Alg. 4) on a grid of the unit disc: regret vs T = {T}",
    paper=PAPER,
    make_env=make_disc,
    points=_t_points(_T_SWEEP),
    algorithms=(
        AlgorithmSpec("ReplicableLinearLSE (Alg. 4)", make_alg4, {"rho": 0.3}),
        AlgorithmSpec("Alg. 4, practical constants", make_alg4, {"rho": 0.3, **ALG4_PRACTICAL}),
    ),
    trials=20,
    horizon=horizon_of,
    checkpoints=20,
    paired=True,
    plot=PlotSpec(kind="sweep", metric="final_regret", x="T", xlabel="horizon T",
                  ylabel="regret at T", xscale="log", yscale="log"),
    quick={"trials": 4, "points": _t_points((10**6, 10**9, 10**12))},
    notes=(
        "No linear experiment in the paper. Action set: the unit disc, as its grid net of "
        "spacing 0.1 (317 points, an 0.14-net; the paper's 1/T-net would have up to (3T)^2 "
        "points); theta* = (cos 1, sin 1), the same at every T; Rademacher (+-1) rewards with mean "
        "x^T theta*, rescaled to [0, 1] for the replicable statistical queries; regret against "
        "the best grid point (the paper's R'_T). Alg. 4 with the paper's constants "
        "(B = ceil(ln T), M_i = q^i d^3 log d ... ln^2 T / rho^2 with the iterated logs floored "
        "at 1, rho' = rho/(dB), delta = 1/(2|A'|T^2), eps_i = d sqrt(ln T/q^i), c = 1) "
        "eliminates at twice the precision its replicable LSE certifies, max(eps_i, gamma_i) "
        "(gamma_i is 4.5-16 eps_i here, so line 15's 2 eps_i alone removed the best arm): it "
        "eliminates nothing before T ~ 10^9 and its regret/T falls only from there. The "
        "practical line keeps the algorithm and changes constants: rho' = rho per batch (not "
        "rho/(dB)), delta = 0.01, M_i = 100 q^i, and eliminates at twice the certified error "
        "bound gamma_i of the replicable LSE (rounding cell + Hoeffding radius propagated "
        "through V^-1) alone. Its replicability is not covered by the paper's union bound; "
        "it is measured ({trials} trials = {pairs} pairs sharing xi per point; `banditkit "
        "audit` for more pairs)."
    ),
)

FIGURES: list[FigureSpec] = [LINEAR, INFINITE]


# ---------------------------------------------------------------------------------------------
# Regret figure (ours, issue 18 §2): OFUL and linear Thompson sampling beside Algorithm 3

def make_oful_T(env: Environment, rng: np.random.Generator, *, T: int, **params: object
                ) -> OFUL:
    """OFUL (Abbasi-Yadkori et al. 2011) for a point that carries its horizon ``T``."""
    return OFUL(env.X, horizon=T, **params)  # type: ignore[attr-defined, arg-type]


def make_lints_T(env: Environment, rng: np.random.Generator, *, T: int, **params: object
                 ) -> LinearThompson:
    """Linear Thompson sampling (ξ = ``rng``) for a point that carries its horizon ``T``."""
    return LinearThompson(env.X, rng, horizon=T, **params)  # type: ignore[attr-defined, arg-type]


#: Horizons of ``replicable-bandits:linear-regret`` (full, quick).
REGRET_T, REGRET_T_QUICK = 1_000_000, 10_000

_LINEAR_REGRET_ALGORITHMS = (
    AlgorithmSpec("OFUL (Theorem 2 radius)", make_oful_T, {}),
    AlgorithmSpec("LinUCB (constant radius alpha = 1)", make_oful_T,
                  {"radius": "constant", "alpha": 1.0}),
    AlgorithmSpec("LinTS (paper v)", make_lints_T, {}),
    AlgorithmSpec("LinTS (v = R = 1)", make_lints_T, {"v": 1.0}),
    AlgorithmSpec("LinearElimination (non-replicable)", make_linear_elimination, {}),
    AlgorithmSpec("ReplicableLinearElimination (Alg. 3)", make_alg3, {"rho": 0.3}),
    AlgorithmSpec("Alg. 3, last batch argmax (as printed)", make_alg3,
                  {"rho": 0.3, "commit": "argmax"}),
)


def _linear_regret_families() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Two panels of comparable scales: the policies whose regret flattens by T (OFUL, LinUCB,
    LinTS with v = 1), and those whose theory constants keep them exploring at this horizon
    (LinTS with the paper's v, Alg. 3, LinearElimination), with OFUL for reference."""
    names = [a.name for a in _LINEAR_REGRET_ALGORITHMS]
    learning = tuple(n for n in names if n.startswith(("OFUL", "LinUCB", "LinTS (v")))
    theory = tuple(n for n in names if n not in learning)
    return (("OFUL, LinUCB and LinTS (v = 1)", learning),
            ("Theory constants: LinTS (paper v), Alg. 3 (rho = 0.3), LinearElimination",
             (names[0], *theory)))


LINEAR_REGRET = FigureSpec(
    name="replicable-bandits:linear-regret",
    full_minutes=0.63,  # reproduce all --workers 2, 2026-11-26 (docs/reproduction.md)
    title="OFUL and linear Thompson sampling beside Alg. 3, K = {K}, d = {d}, T = {T}",
    paper=PAPER + "; a figure of ours (the paper has no OFUL or linear Thompson sampling)",
    make_env=make_random_unit,
    points=({"K": 20, "d": 5, "algorithm_params": {"T": REGRET_T}},),
    instance_of=LINEAR.name,
    algorithms=_LINEAR_REGRET_ALGORITHMS,
    trials=40,
    horizon=horizon_of,
    checkpoints=100,
    plot=PlotSpec(kind="curve", metric="regret", xlabel="round t",
                  ylabel="cumulative pseudo-regret", families=_linear_regret_families(),
                  yscale="log", nonnegative=True),
    quick={"trials": 8, "points": ({"K": 20, "d": 5,
                                    "algorithm_params": {"T": REGRET_T_QUICK}},)},
    ratios=tuple((a.name, "OFUL (Theorem 2 radius)") for a in _LINEAR_REGRET_ALGORITHMS[1:]),
    notes=(
        "The instance of replicable-bandits:linear for the same seed (K = {K} arms uniform "
        "on the unit sphere of R^{d}, theta* uniform on the unit sphere, Rademacher (+-1) "
        "rewards with mean x^T theta*). T = {T}, not 10^8: OFUL and LinTS choose one pull at "
        "a time, so a trial costs O(T) (they run in lock-step over the {trials} trials, "
        "compiled with numba when it is installed, each trial identical to simulate), while "
        "the batched eliminations cost O(batches) and run at 10^8 in "
        "replicable-bandits:linear. OFUL: Algorithm 1 of "
        "Abbasi-Yadkori et al. (2011) with Theorem 2's self-normalized radius, lambda = 1, "
        "delta = 0.01, R = 1 (rewards in [-1, 1]), S = 1; LinUCB: the same with the constant "
        "radius alpha = 1 (Li et al. 2010). LinTS: Agrawal & Goyal (2013), theta ~ "
        "N(theta_hat, v^2 V^-1) with the paper's v = R sqrt(24/eps d ln(1/delta)), eps = "
        "1/ln T, delta = 0.01, and with the practical v = R = 1. Alg. 3 (rho = 0.3) and "
        "LinearElimination with the paper's constants (B = ceil(ln T), delta = 1/(KT^2), "
        "beta = floor(K^2/rho^2) = 4444 for K = {K}): Alg. 3's exploration batches (n_i = "
        "10 beta q^i, q = (T/(10 beta))^(1/B)) are tens of thousands of pulls each, and with "
        "root seed 0 it eliminates no arm of this instance before T = 10^6 (measured), so its "
        "regret grows linearly (replicable-bandits:linear runs it at T = 10^8); the printed "
        "argmax commit is the "
        "third batched line. Mean pseudo-regret with 95% bands "
        "over {trials} trials."
    ),
)

FIGURES.append(LINEAR_REGRET)

