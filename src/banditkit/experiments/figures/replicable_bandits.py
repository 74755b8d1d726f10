"""Figures of Esfandiari et al., "Replicable Bandits", ICLR 2023, Appendix H.

The paper's experiment: K = 6 Bernoulli arms with means (0.44, 0.47, 0.50, 0.53, 0.56, 0.59),
T = 45000 rounds, 20 executions of each algorithm, average cumulative regret plotted against
time (Figure 1: UCB vs. the replicable batched algorithm with ρ = 0.3).
"""

from __future__ import annotations

import numpy as np

from ...envs.base import Environment
from ...envs.instances import make_instance
from ...policies import UCB1
from ..spec import AlgorithmSpec, FigureSpec, PlotSpec

__all__ = ["APPENDIX_H_MEANS", "FIGURES", "PAPER", "make_bernoulli", "make_ucb1"]

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
