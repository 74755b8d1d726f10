"""Per-arm sums, the readout's input: what the resolved prefix, the running totals or a
simulation hand to :func:`banditkit.live.readout.statistics.compare`. A module of its own so
that every estimator (the adjusted ones of :mod:`.adjusted` among them) reads the type without
importing the statistics that use them."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ArmSums"]


@dataclass(frozen=True)
class ArmSums:
    """Per-arm aggregates of the units table: arrays whose last axis is the K arms (leading
    axes, if any, index looks or runs: :func:`compare` is elementwise over them).

    Attributes
    ----------
    assigned : ndarray of int
        Units assigned (expired ones excluded).
    n : ndarray of int
        Rewards recorded.
    total, total_sq : ndarray of float
        Sum and sum of squares of the rewards.
    binary : ndarray of bool
        Every reward of the arm is 0 or 1.
    extra : ndarray, optional
        Shape (..., K, 6): Σx, Σx², Σxy of the units' covariates x (CUPED) and Σd, Σd², Σdy
        of their denominators d (ratio metrics), y the reward
        (:mod:`banditkit.live.readout.adjusted`); ``None`` when not kept.
    plugin : ndarray, optional
        Shape (..., K, 4): the predictable plug-in's sums Λ, Σλx, P^L, P^U of each arm's
        rewards rescaled to [0, 1], in assignment order, tuned at the spec's ``tune_n`` and
        :func:`~banditkit.live.readout.plugin.plugin_level` (K)
        (:func:`banditkit.live.readout.plugin.plugin_terms`;
        :func:`~banditkit.live.readout.statistics.plugin_sums` computes them). With them the
        ``"exact"`` sequence is the plug-in; without (sums that lost the rewards' order: every
        recorded outcome, a dashboard's past points), the λ-mixture, which needs only
        (n, Σ, Σ²).
    """

    assigned: np.ndarray
    n: np.ndarray
    total: np.ndarray
    total_sq: np.ndarray
    binary: np.ndarray
    extra: np.ndarray | None = None
    plugin: np.ndarray | None = None
