"""The probability with which a live experiment's design gave each unit its arm (its
*propensity*), so that the log of units can be re-analysed off-policy: an inverse-propensity
(IPS, Horvitz & Thompson 1952) estimate of arm a's mean is (1/N) Σ_i 1{A_i = a} R_i / p_i over
units whose batch gave arm a a positive probability.

A batch that carries a sampling ``strategy`` (DEBORA's epochs and the constrained baselines draw
their pulls i.i.d. from it, :mod:`banditkit.policies.epoch_sampler`) gives a unit of arm a the
propensity ``strategy[a]``; so does a batch drawn i.i.d. from a design (G-BAI, P1-RAGE,
P1-Peace, Mixed-Peace: :class:`banditkit.protocol.IIDBatch`), whose design probabilities
:meth:`banditkit.Experiment.units` passes as its strategy. Any other batch gives its share of
the arm, counts[a] / n_pulls: the design's allocation of the batch (an elimination round's
equal shares of the active arms, Peace's rounded design). With ``order="shuffled"`` this is
exactly the probability that a unit, handed a uniformly random slot of the batch, gets arm a;
with ``order="batch"`` the slots go out in pull order and the share is the design's allocation,
not a randomisation probability. A slot handed out again after its unit expired keeps its arm.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

import numpy as np

__all__ = ["batch_propensities"]


def batch_propensities(batches: Iterable[tuple[int, np.ndarray, np.ndarray, str | None]],
                       n_arms: int) -> np.ndarray:
    """Per batch, each arm's assignment probability: rows of a (batches, K) array.

    Parameters
    ----------
    batches : iterable of (id, arms, counts, strategy)
        Ids 0, 1, ..., the batch's runs (arm of each run and its pull count, as
        :func:`banditkit.live.store.codec.unpack_runs` reads them) and its strategy (JSON, or
        ``None``).
    n_arms : int
        K.
    """
    rows = sorted(batches)
    table = np.zeros((len(rows), n_arms))
    for i, (batch_id, arms, counts, strategy) in enumerate(rows):
        if batch_id != i:
            raise ValueError(f"batch ids must run 0, 1, ...; found {batch_id} at {i}")
        if strategy is not None:
            table[i] = np.asarray(json.loads(strategy), dtype=float)
        else:
            pulls = np.bincount(np.asarray(arms, dtype=np.int64),
                                weights=np.asarray(counts, dtype=float),
                                minlength=n_arms)
            table[i] = pulls / pulls.sum()
    return table
