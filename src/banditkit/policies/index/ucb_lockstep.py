"""UCB1 for many trials at once (:func:`ucb1_lockstep`): the lock-step driver of
:mod:`banditkit.policies.index.lockstep` with UCB1's scores. It reproduces
:func:`banditkit.simulate` of ``UCB1`` exactly, trial by trial (``tests/test_ucb_lockstep.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

import numpy as np

from ...envs.base import Environment
from ...rng import SeedLike
from ...trial import Trial
from .lockstep import index_lockstep
from .ucb import UCB1

__all__ = ["ucb1_lockstep"]


def _make_ucb1(n_arms: int, rng: np.random.Generator | None, *, exploration: float,
               reward_range: tuple[float, float] | None) -> UCB1:
    return UCB1(n_arms, exploration=exploration, reward_range=reward_range)


def ucb1_lockstep(envs: Sequence[Environment], rngs: Sequence[np.random.Generator | None],
                  seeds: Sequence[SeedLike], horizon: int, checkpoints: np.ndarray | None,
                  *, exploration: float = 2.0,
                  reward_range: tuple[float, float] | None = (0.0, 1.0)) -> list[Trial]:
    """Run ``len(seeds)`` trials of UCB1 in lock-step.

    Matches :attr:`banditkit.experiments.spec.AlgorithmSpec.lockstep`; see
    :func:`~banditkit.policies.index.lockstep.index_lockstep`. ``rngs`` are unused (UCB1
    has no internal randomness) and accepted for the protocol.

    Returns
    -------
    list of Trial
        One per seed, equal to ``simulate(UCB1(K, exploration=c, reward_range=...), envs[i],
        horizon=horizon, seed=seeds[i], checkpoints=checkpoints)`` except that the decision
        log holds the whole pull sequence as one batch.
    """
    make = partial(_make_ucb1, exploration=exploration, reward_range=reward_range)
    return index_lockstep(make, envs, [None] * len(rngs), seeds, horizon, checkpoints)
