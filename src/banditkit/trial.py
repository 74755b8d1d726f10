"""The record of one trial: what was pulled, what it cost, what was decided."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .protocol import DecisionLog

__all__ = ["Trial"]


@dataclass
class Trial:
    """Outcome of :func:`banditkit.simulate`.

    Attributes
    ----------
    counts : array of int, shape (K,)
        Pulls per arm.
    n_pulls : int
        Total pulls (the sample complexity of an identifier).
    decisions : DecisionLog
        The decision sequence as (arm, count) runs, batch sizes and strategies.
    checkpoints : array of int or None
        Times (numbers of pulls) at which ``regret`` and ``violation`` are given.
    regret : array of float or None
        Cumulative pseudo-regret at ``checkpoints`` (regret policies).
    violation : array of float or None
        Cumulative positive constraint violation max_i Σ_t [g_i^T x_t − α_i]^+ at
        ``checkpoints`` (constrained environments).
    recommendation : int or None
        The identified item (identifiers).
    correct : bool or None
        Whether ``recommendation`` is the environment's best item (identifiers).
    stopped : bool
        Whether the algorithm stopped by itself (``next_batch`` returned ``None``) rather than
        at the horizon.
    n_batches : int
        Number of batches (rounds of the ask/tell exchange).
    seconds : float
        Wall-clock time of the trial.
    info : dict
        Algorithm-specific facts (phases, eliminations, ...).
    """

    counts: np.ndarray
    n_pulls: int
    decisions: DecisionLog
    checkpoints: np.ndarray | None = None
    regret: np.ndarray | None = None
    violation: np.ndarray | None = None
    recommendation: int | None = None
    correct: bool | None = None
    stopped: bool = False
    n_batches: int = 0
    seconds: float = 0.0
    info: dict = field(default_factory=dict)

    @property
    def final_regret(self) -> float | None:
        return None if self.regret is None or self.regret.size == 0 else float(self.regret[-1])
