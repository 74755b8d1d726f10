"""Figures of Esfandiari et al., "Replicable Bandits", ICLR 2023, Appendix H.

The paper's experiment: K = 6 Bernoulli arms with means (0.44, 0.47, 0.50, 0.53, 0.56, 0.59),
T = 45000 rounds, 20 executions of each algorithm, average cumulative regret plotted against
time (Figure 1: UCB vs. the replicable batched algorithm with ρ = 0.3). Our ``fig1`` runs it
with every commit rule of Algorithms 1 and 2 (:mod:`banditkit.policies.commit`) and UCB1 at two
exploration constants; ``rho-sweep`` measures regret and non-replication against ρ and K.
"""

from __future__ import annotations

import numpy as np

from ...envs.base import Environment
from ...envs.instances import make_instance
from ...policies import (
    KLUCB,
    UCB1,
    BatchedElimination,
    ReplicableBatchedElimination,
    ReplicableElimination,
    ThompsonSampling,
)
from ...policies.commit import COMMIT_RULES
from ..spec import AlgorithmSpec, FigureSpec, PlotSpec

__all__ = [
    "APPENDIX_H_MEANS",
    "FIG1",
    "FIGURES",
    "PAPER",
    "REGRET",
    "RHO_SWEEP",
    "UCB_CONSTANTS",
    "make_alg1",
    "make_alg2",
    "make_batched",
    "make_bernoulli",
    "make_ucb1",
]

PAPER = "Esfandiari et al., Replicable Bandits, ICLR 2023, Appendix H (Figure 1)"

#: Arm means of the paper's experiment (Appendix H, "Experimental Setup").
APPENDIX_H_MEANS = (0.44, 0.47, 0.50, 0.53, 0.56, 0.59)


def make_bernoulli(rng: np.random.Generator, *, means: tuple[float, ...]) -> Environment:
    """Bernoulli arms with the given means (the instance is fixed, so ``rng`` is unused)."""
    return make_instance("bernoulli", means=tuple(means))


def make_ucb1(env: Environment, rng: np.random.Generator, *, exploration: float = 2.0
              ) -> UCB1:
    """UCB1 of Auer et al. (2002) with the paper's exploration constant 2 (no internal
    randomness: ties go to the lowest index, so ``rng`` is unused)."""
    return UCB1(env.n_arms, exploration=exploration)


UCB_BASELINE = FigureSpec(
    name="replicable-bandits:ucb-baseline",
    full_minutes=0.01,  # reproduce all --workers 2, 2026-11-26 (docs/reproduction.md)
    title="UCB1 cumulative regret on the 6-armed Bernoulli instance of Appendix H",
    paper=PAPER,
    make_env=make_bernoulli,
    points=({"means": APPENDIX_H_MEANS},),
    algorithms=(AlgorithmSpec("UCB1", make_ucb1, {"exploration": 2.0}),),
    trials=20,
    horizon=45_000,
    checkpoints=100,
    plot=PlotSpec(kind="curve", metric="regret", xlabel="round t",
                  ylabel="cumulative pseudo-regret"),
    quick={"trials": 4, "horizon": 5_000},
    notes=(
        "The UCB baseline of the paper's Figure 1 (the replicable batched algorithm is added "
        "by its own figure). The paper states no number for UCB's regret, only its polylog(T) "
        "shape in a plot, so there is no paper value to compare with. The paper reports that "
        "two consecutive UCB executions choose differently in 26208 to 28002 of the 45000 "
        "rounds; that is measured by a replicability audit, not by this figure. Regret here is "
        "pseudo-regret (sum of gaps of the pulled arms), UCB1 with exploration constant 2 "
        "(Auer et al., 2002); the paper does not state its UCB variant."
    ),
)

FIGURES: list[FigureSpec] = [UCB_BASELINE]


# ---------------------------------------------------------------------------------------------
# Figure 1 of Appendix H: UCB1 vs the replicable batched algorithm, run as replicability pairs

def horizon_of(point: dict) -> int:
    """A point's horizon T (carried in its algorithm parameters, where the batched policies
    read it)."""
    return int(point["algorithm_params"]["T"])


def make_ucb1_T(env: Environment, rng: np.random.Generator, *, T: int,
                exploration: float = 2.0) -> UCB1:
    """UCB1 (exploration constant ``exploration``, Auer's 2 by default) for a point that
    carries its horizon ``T``."""
    return UCB1(env.n_arms, exploration=exploration)


def make_alg2(env: Environment, rng: np.random.Generator, *, T: int, rho: float,
              **params: object) -> ReplicableElimination:
    """Algorithm 2 with the paper's constants unless ``params`` say otherwise
    (``beta_floor=False`` drops the 2304 floor of β; ``commit`` picks the final commit)."""
    return ReplicableElimination(env.n_arms, T, rho, rng, **params)  # type: ignore[arg-type]


def make_alg1(env: Environment, rng: np.random.Generator, *, T: int, rho: float,
              **params: object) -> ReplicableBatchedElimination:
    """Algorithm 1 with the paper's constants unless ``params`` say otherwise."""
    return ReplicableBatchedElimination(env.n_arms, T, rho, rng, **params)  # type: ignore[arg-type]


def make_batched(env: Environment, rng: np.random.Generator, *, T: int, **params: object
                 ) -> BatchedElimination:
    """Non-replicable batched elimination (Esfandiari et al. 2021) on the same batches."""
    return BatchedElimination(env.n_arms, T, **params)  # type: ignore[arg-type]


#: UCB1's exploration constants in fig1: Auer et al.'s c = 2, and c = 4.5, the constant whose
#: differing rounds between pairs match the paper's 26208-28002 (see the notes).
UCB_CONSTANTS = (2.0, 4.5)


def _ucb_name(c: float) -> str:
    return f"UCB1 (c = {c:g})"


def _fig1_algorithms() -> tuple[AlgorithmSpec, ...]:
    """UCB1 at both constants, Algorithms 2 (with and without the 2304 floor of β) and 1 with
    every commit rule, and the non-replicable baseline. The paper's versions keep their
    names; the others are "Alg. 2, <rule>" and so on."""
    algs = [AlgorithmSpec(_ucb_name(c), make_ucb1_T, {"exploration": c}) for c in UCB_CONSTANTS]
    paper_rule = COMMIT_RULES[0]
    for rule in COMMIT_RULES:
        name = "ReplicableElimination (Alg. 2)" if rule == paper_rule else f"Alg. 2, {rule}"
        algs.append(AlgorithmSpec(name, make_alg2, {"rho": 0.3, "commit": rule}))
    for rule in COMMIT_RULES:
        algs.append(AlgorithmSpec(f"Alg. 2 (beta = K^2/rho^2), {rule}", make_alg2,
                                  {"rho": 0.3, "beta_floor": False, "commit": rule}))
    for rule in COMMIT_RULES:
        name = ("ReplicableBatchedElimination (Alg. 1)" if rule == paper_rule
                else f"Alg. 1, {rule}")
        algs.append(AlgorithmSpec(name, make_alg1, {"rho": 0.3, "commit": rule}))
    algs.append(AlgorithmSpec("BatchedElimination", make_batched, {}))
    return tuple(algs)


_FIG1_ALGORITHMS = _fig1_algorithms()
#: The reference of fig1's ratios: Auer et al.'s UCB1 (c = 2).
FIG1_REFERENCE = _ucb_name(2.0)


def _fig1_families() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """fig1's panels: the 15 curves by family, each with the UCB1 reference (c = 2), so that
    every panel holds at most six curves and those that coincide are named together."""
    names = [a.name for a in _FIG1_ALGORITHMS]
    ucb = tuple(n for n in names if n.startswith("UCB1"))
    alg2 = tuple(n for n in names if n == "ReplicableElimination (Alg. 2)"
                 or (n.startswith("Alg. 2, ")))
    alg2_nofloor = tuple(n for n in names if n.startswith("Alg. 2 (beta"))
    alg1 = tuple(n for n in names if n == "ReplicableBatchedElimination (Alg. 1)"
                 or n.startswith("Alg. 1, ") or n == "BatchedElimination")
    return (("UCB1, c = 2 and 4.5", ucb),
            ("Alg. 2, beta = max(K^2/rho^2, 2304) (paper)", (FIG1_REFERENCE, *alg2)),
            ("Alg. 2, beta = K^2/rho^2 (no floor)", (FIG1_REFERENCE, *alg2_nofloor)),
            ("Alg. 1 and non-replicable batched elimination", (FIG1_REFERENCE, *alg1)))


FIG1 = FigureSpec(
    name="replicable-bandits:fig1",
    full_minutes=0.05,  # reproduce all --workers 2, 2026-11-26 (docs/reproduction.md)
    title="Cumulative regret, T = {T}: UCB1 (c = 2) and UCB1 (c = 4.5) vs replicable "
          "batched elimination (rho = 0.3), every commit rule",
    paper=PAPER,
    make_env=make_bernoulli,
    points=({"means": APPENDIX_H_MEANS, "algorithm_params": {"T": 45_000}},),
    algorithms=_FIG1_ALGORITHMS,
    trials=20,
    horizon=horizon_of,
    checkpoints=100,
    paired=True,
    plot=PlotSpec(kind="curve", metric="regret", xlabel="round t",
                  ylabel="cumulative pseudo-regret", families=_fig1_families()),
    quick={"trials": 4, "points": ({"means": APPENDIX_H_MEANS,
                                    "algorithm_params": {"T": 5_000}},)},
    ratios=tuple((a.name, FIG1_REFERENCE) for a in _FIG1_ALGORITHMS
                 if a.name != FIG1_REFERENCE),
    notes=(
        "This run: T = {T}, {trials} executions of each algorithm ({pairs} pairs). "
        "Appendix H: K = 6 Bernoulli arms (0.44, ..., 0.59), T = 45000, 20 executions, "
        "rho = 0.3; the executions of each algorithm form pairs of consecutive executions "
        "(trials 2j, 2j+1) sharing the internal randomness xi and seeing independent rewards, as "
        "the paper's 'pairs of consecutive executions' (the full run's 10 pairs bound "
        "non-replication only by 0.31: `banditkit audit` with 100 pairs in "
        "docs/replicable.md). Curves that coincide exactly are drawn once, labelled with all "
        "their names. The paper reports 10/10 "
        "identical pairs for its replicable algorithm, UCB choosing differently in 26208-28002 "
        "of the 45000 rounds, and a regret about 2.5x UCB's (Table 1's overhead is "
        "K^2/rho^2 = 400x, constants aside); it "
        "names neither which of its Algorithms 1 and 2 it ran, nor its constants, nor its UCB. "
        "UCB1 is Auer et al.'s index mean + sqrt(c ln t / n) with c = 2 (the ratios are to it) "
        "and with c = 4.5, whose rounds differing within pairs match the paper's count best "
        "(100 audit pairs, seed 0: mean 26809 at c = 4.5, 26090 at c = 4, 27638 at c = 5; "
        "19763, range 16678-23930, at c = 2, wholly below the paper's); both run in lock-step "
        "over trials (identical to simulate). "
        "The numbers below are those of the full run, T = 45000 (they depend on T). "
        "Algorithm 2 with the paper's constants: beta = max(floor(K^2/rho^2), 2304) = 2304, "
        "B = ceil(ln T) = 11, q = T^(1/B), delta = 1/(2KTB). At T = 45000 only the first batch "
        "(beta*floor(q) = 4608 pulls per arm, regret 4608*0.45 = 2073.6) fits and no arm can be "
        "eliminated (U_1 > 1), so the commit rule decides the rest (17352 rounds): "
        "lowest-index (the paper's) plays arm 0, the worst (4676.4 in every run); round-robin "
        "3375.0; argmax (empirical best, not covered by Theorem 4) 2073.6 when it finds arm 5; "
        "replicable-argmax spends half of rho on rounding the six means (rho/12 each) and, with "
        "4608 samples per arm, its grid cells (width 4.9) are wider than [0, 1]: the arm it "
        "plays depends almost only on where xi puts a cell boundary (regret between 2073.6 and "
        "4676.4, ties to the lowest index when no boundary falls among the means). Without "
        "the 2304 floor, beta = floor(K^2/rho^2) = 400 and two batches fit (3600 pulls per arm, "
        "regret 1620) before the commit; replicable-argmax's eliminations get rho/2, so its "
        "beta is 1600 and one batch fits (3200 pulls per arm, regret 1440). Algorithm 1 "
        "with its theory constants needs about 2K^2B^2/rho^2 samples per "
        "arm before its first decision, far beyond T: no batch, so every rule without data "
        "plays arm 0 throughout (regret 0.15*T = 6750) except round-robin (0.075*T = 3375). "
        "BatchedElimination is Algorithm 1's batches (floor(q^i) pulls) with plain means and "
        "margin 2*tau_i, committing to the lowest index."
    ),
)


RHO_SWEEP_RHOS = (0.05, 0.1, 0.2, 0.3, 0.5)
RHO_SWEEP_KS = (2, 4, 6, 10)


def make_linspace(rng: np.random.Generator, *, K: int) -> Environment:
    """K Bernoulli arms evenly spaced in [0.3, 0.7]."""
    return make_instance("bernoulli-linspace", K=int(K), low=0.3, high=0.7)


def _rho_sweep_points(T: int, ks: tuple[int, ...], rhos: tuple[float, ...]) -> tuple:
    return tuple({"K": K, "algorithm_params": {"rho": rho, "T": T}} for K in ks for rho in rhos)


RHO_SWEEP = FigureSpec(
    name="replicable-bandits:rho-sweep",
    full_minutes=0.56,  # reproduce all --workers 2, 2026-11-26 (docs/reproduction.md)
    title="Cost of replicability: regret and measured non-replication against rho and K",
    paper=PAPER + "; a figure of ours (no paper plots it)",
    make_env=make_linspace,
    points=_rho_sweep_points(10_000_000, RHO_SWEEP_KS, RHO_SWEEP_RHOS),
    algorithms=(
        AlgorithmSpec("ReplicableElimination (Alg. 2)", make_alg2, {"beta_floor": True}),
        AlgorithmSpec("Alg. 2, beta = K^2/rho^2", make_alg2, {"beta_floor": False}),
    ),
    trials=160,
    horizon=horizon_of,
    checkpoints=20,
    paired=True,
    plot=PlotSpec(kind="sweep", metric="final_regret", x="rho", xlabel="rho",
                  ylabel="regret at T = {T}", xscale="log"),
    quick={"trials": 8, "points": _rho_sweep_points(100_000, (2, 6), (0.1, 0.3))},
    notes=(
        "Bernoulli arms evenly spaced in [0.3, 0.7], K = {K}, T = {T}, {pairs} pairs per point "
        "(trials 2j, 2j+1 share xi). At Appendix H's T = 45000 Algorithm 2 takes no data-dependent "
        "decision (see fig1), so every pair replicates trivially; at T = 10^7 with these gaps "
        "it eliminates arms, which is where replicability can fail. Algorithm 2 with the "
        "paper's constants (beta = max(floor(K^2/rho^2), 2304)) and without the 2304 floor "
        "(beta = floor(K^2/rho^2)). Neither is large enough for the constants of the "
        "replicability proof (Appendix B: beta >= 9216 K^2/rho^2, where the floor caps how "
        "often an arm meets the bad event), so replicability is measured here, not implied "
        "(docs/replicable.md). "
        "In the full run (T = 10^7, 80 pairs) a point with no differing pair has a "
        "Clopper-Pearson upper bound of 0.045 < 0.05, so the smallest rho can be confirmed. "
        "See the replicability table for the measured "
        "non-replication rates."
    ),
)

FIGURES.extend([FIG1, RHO_SWEEP])


# ---------------------------------------------------------------------------------------------
# Regret figure (ours, issue 16 §5 and issue 18 §2): KL-UCB and Thompson sampling beside UCB1
# and the replicable policies on the Appendix H instance

def make_klucb_T(env: Environment, rng: np.random.Generator, *, T: int, **params: object
                 ) -> KLUCB:
    """KL-UCB (Garivier & Cappé 2011) for a point that carries its horizon ``T``."""
    return KLUCB(env.n_arms, **params)  # type: ignore[arg-type]


def make_thompson_T(env: Environment, rng: np.random.Generator, *, T: int, **params: object
                    ) -> ThompsonSampling:
    """Thompson sampling (ξ = ``rng``) for a point that carries its horizon ``T``."""
    return ThompsonSampling(env.n_arms, rng, **params)  # type: ignore[arg-type]


_REGRET_ALGORITHMS = (
    AlgorithmSpec("UCB1", make_ucb1_T, {"exploration": 2.0}),
    AlgorithmSpec("KL-UCB", make_klucb_T, {"c": 0.0}),
    AlgorithmSpec("KL-UCB (c = 3)", make_klucb_T, {"c": 3.0}),
    AlgorithmSpec("Thompson sampling (Beta)", make_thompson_T, {"posterior": "beta"}),
    AlgorithmSpec("Thompson sampling (Gaussian)", make_thompson_T, {"posterior": "gaussian"}),
    AlgorithmSpec("Alg. 2 (beta = K^2/rho^2), argmax", make_alg2,
                  {"rho": 0.3, "beta_floor": False, "commit": "argmax"}),
    AlgorithmSpec("Alg. 2, round-robin", make_alg2, {"rho": 0.3, "commit": "round-robin"}),
    AlgorithmSpec("Alg. 1, round-robin", make_alg1, {"rho": 0.3, "commit": "round-robin"}),
)

REGRET = FigureSpec(
    name="replicable-bandits:regret",
    full_minutes=0.33,  # reproduce all --workers 2, 2026-11-26 (docs/reproduction.md)
    title="Cumulative regret: KL-UCB and Thompson sampling vs UCB1 and replicable elimination "
          "(rho = 0.3), 6 Bernoulli arms",
    paper=PAPER + "; a figure of ours (the paper has no KL-UCB or Thompson sampling)",
    make_env=make_bernoulli,
    points=({"means": APPENDIX_H_MEANS, "algorithm_params": {"T": 45_000}},),
    algorithms=_REGRET_ALGORITHMS,
    trials=200,
    horizon=horizon_of,
    checkpoints=100,
    plot=PlotSpec(kind="curve", metric="regret", xlabel="round t",
                  ylabel="cumulative pseudo-regret"),
    quick={"trials": 20, "points": ({"means": APPENDIX_H_MEANS,
                                     "algorithm_params": {"T": 5_000}},)},
    ratios=tuple((a.name, "UCB1") for a in _REGRET_ALGORITHMS if a.name != "UCB1"),
    notes=(
        "Appendix H's instance (K = 6 Bernoulli arms 0.44, ..., 0.59, T = 45000), 200 trials "
        "(20 with --quick at T = 5000), each trial with its own noise and internal randomness. "
        "UCB1: mean + sqrt(2 ln t / n) (Auer et al. 2002). KL-UCB: Bernoulli kl, f(t) = log t "
        "(c = 0, Garivier & Cappe's practical choice) and log t + 3 log log t (c = 3, their "
        "theorem). Thompson sampling: Beta(1, 1) prior (Agrawal & Goyal 2012) and Gaussian "
        "N(S/(n+1), 1/(n+1)) (Agrawal & Goyal 2013). The sequential policies run in lock-step "
        "over trials, identical to simulate trial by trial. Replicable policies (Esfandiari et "
        "al. 2023), rho = 0.3, in the configurations docs/replicable.md documents: Algorithm 2 "
        "with beta = floor(K^2/rho^2) = 400 and the empirical argmax commit (the lowest regret "
        "whose measured non-replication stays below rho; outside Theorem 4's argument), "
        "Algorithm 2 with the paper's beta and round-robin commit (the best within the "
        "argument), Algorithm 1 with round-robin (no batch fits at T = 45000 with its theory "
        "constants). None of the non-replicable policies is replicable: `banditkit audit "
        "ThompsonSampling --instance bernoulli --pairs 100 --horizon 45000` measures it."
    ),
)

FIGURES.append(REGRET)
