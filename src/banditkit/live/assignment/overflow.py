"""Overflow and rollout: every visitor gets an arm.

An algorithm asks for a batch of pulls and needs their rewards before it asks for the next
one (UCB1 asks for one pull at a time, ReplicableElimination's first batch at ρ = 0.2 is
13,824 pulls), and after it has finished it asks for nothing. A website cannot turn a visitor
away, so :meth:`banditkit.Experiment.assign` serves the units beyond the algorithm's pending
slots by a documented rule instead of returning fewer units:

- **overflow** units (``kind`` 1), while the algorithm waits for rewards: ``rule="design"``
  (default) draws each one's arm from the current design's shares (the pending batch's
  allocation ``counts[a] / n_pulls``, or its sampling strategy, or an i.i.d. batch's design
  probabilities): the arms still in play (:func:`arms_in_play`: the committed arms once the
  algorithm has committed), in the proportions the algorithm itself chose; a batch that does
  not reach every arm still in play (UCB1 or Track-and-Stop ask one pull at a
  time) is no design over them, and its overflow is uniform over those arms;
  ``"uniform"``: uniform over the arms still in play (the algorithm's ``active`` set, else every
  arm); ``"control"``: the control arm (the conservative choice); ``"off"``: none (``assign``
  then returns fewer units, as before format 6);
- **rollout** units (``kind`` 2), once the experiment has finished or was stopped: every unit
  goes to the rollout arm with propensity 1 — the arm a person stopped it with, else the
  algorithm's recommendation or committed arm (:func:`banditkit.live.readout.leader.leader`), else
  the arm leading on the observed means, else the control.

What they never touch: the algorithm. They take no slot, are stored with ``slot = −1``, and
their running sums live in the ``totals`` rows of batch −2 only
(:data:`banditkit.live.store.schema.OVERFLOW_TOTALS`), so the algorithm observes exactly the rewards
of its own slots and decides exactly as a run without overflow on the same rewards.

Their randomness comes from a stream of its own, ``banditkit.rng.stream(seed,
"live-overflow", n)`` with ``n`` the overflow units drawn before the call (a counter kept in
``meta``), never from the algorithm's ξ: drawing an overflow arm cannot move the algorithm's
later draws, and the same calls give the same arms in any process.

What ``status`` counts: the anytime intervals (confidence sequences per arm, valid under any
allocation predictable from the past, which both rules are) include overflow and rollout
rewards; the fixed-n intervals (one look at the algorithm's planned sample), the counts
``assigned``/``recorded``, the batch progress and the missing-outcome check keep the algorithm's
units only. The columns ``overflow`` and ``overflow_recorded`` count the others per arm.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...protocol import Batch, IIDBatch
from ...rng import stream
from ..errors import ExperimentError
from ..store import Connection
from ..store.reads import OVERFLOW_DRAWN
from ..store.schema import OVERFLOW, ROLLOUT

__all__ = ["MAX_PER_CALL", "RULES", "arms_in_play", "check_rule", "design_shares",
           "draw_arms", "serve"]

#: The most overflow or rollout units one ``assign`` serves (each is a row written in the
#: call's transaction): a larger n is refused by name, not served for minutes.
MAX_PER_CALL = 1_000_000

#: The overflow rules :meth:`banditkit.Experiment.create` takes (``overflow=``).
RULES = ("design", "uniform", "control", "off")


def check_rule(rule: object) -> str:
    """``rule`` if it is one of :data:`RULES`, else refuse it by name."""
    if not isinstance(rule, str) or rule not in RULES:
        raise ExperimentError(f"overflow must be one of {list(RULES)}, got {rule!r}")
    return rule


def design_shares(rule: str, batch: Batch, n_arms: int, control: int,
                  active: Sequence[int] | None) -> np.ndarray:
    """Each arm's probability for an overflow unit under ``rule`` while ``batch`` waits.

    Parameters
    ----------
    rule : {"design", "uniform", "control"}
        See the module docstring.
    batch : Batch
        The algorithm's pending batch (every slot of it handed out).
    n_arms : int
        K.
    control : int
        The control arm's index.
    active : sequence of int, optional
        The algorithm's arms still in play (``None`` when it keeps no active set).
    """
    shares = np.zeros(n_arms)
    if rule == "control":
        shares[control] = 1.0
    elif rule == "uniform":
        arms = np.arange(n_arms) if active is None else np.asarray(active, dtype=np.int64)
        shares[arms] = 1.0 / arms.size
    elif batch.strategy is not None:  # a sampling strategy: the design itself
        shares[:] = np.asarray(batch.strategy, dtype=float)[:n_arms]
    elif isinstance(batch, IIDBatch):  # a design's probabilities, read off its cdf
        shares[:] = np.diff(np.asarray(batch.cdf, dtype=float), prepend=0.0)[:n_arms]
    else:
        # the batch's allocation (its share of each arm) when it reaches every arm still in
        # play (an elimination's round); a batch that does not (UCB1's or Track-and-Stop's
        # one pull, a batch cut by the horizon) is no design over them: uniform instead
        shares[:] = batch.allocation(n_arms) / batch.n_pulls
        arms = np.arange(n_arms) if active is None else np.asarray(active, dtype=np.int64)
        if not (shares[arms] > 0).all():
            shares[:] = 0.0
            shares[arms] = 1.0 / arms.size
    shares = np.clip(shares, 0.0, None)
    return shares / shares.sum()


def arms_in_play(algorithm: Any, batch: Batch) -> list[int] | None:
    """The arms still in play while ``batch`` waits: once the algorithm has **committed**
    (a batched elimination's commit batch, a phased elimination's ``final_arm``), the arms of
    its commit batch — it plays nothing else for the rest of the horizon, whatever its
    ``active`` set still lists (ReplicableElimination keeps the surviving arms there and plays
    the lowest index); else its ``active`` set; ``None`` when it keeps none (every arm).

    Why: the rule "the current design's shares among the arms still in play" (issue 26) sends
    overflow where the design goes. With the active set alone, a commit batch on one arm does
    not reach every active arm, and the uniform fallback sent overflow to arms the algorithm
    will never pull again (the README run: 1,000 of 3,000 overflow units on each arm).
    """
    committed = bool(getattr(algorithm, "committed", False)) or \
        getattr(algorithm, "final_arm", None) is not None
    if committed and not isinstance(batch, IIDBatch):
        return np.unique(batch.arms).tolist()
    active = getattr(algorithm, "active", None)
    return None if active is None else [int(a) for a in active]


def draw_arms(seed: int, drawn: int, shares: np.ndarray, count: int) -> np.ndarray:
    """``count`` arms drawn i.i.d. from ``shares`` by the overflow stream of an experiment
    seeded ``seed`` that has drawn ``drawn`` overflow units before (see the module
    docstring)."""
    uniforms = stream(seed, "live-overflow", drawn).random(count)
    cdf = np.cumsum(shares)
    arms = np.searchsorted(cdf, uniforms * cdf[-1], side="right")
    # a uniform at the very top, or a share of 0 at the end: the last arm with a share
    last = int(np.flatnonzero(shares > 0)[-1])
    return np.minimum(arms, last).astype(np.int64)


def serve(conn: Connection, last_id_sql: str, seed: int, batch_id: int, count: int, *,
          now: str, shares: np.ndarray | None = None, rollout_arm: int | None = None
          ) -> tuple[list[int], np.ndarray, np.ndarray]:
    """Insert ``count`` overflow units (arms drawn from ``shares``) or rollout units (all on
    ``rollout_arm``, propensity 1) under ``batch_id`` (the batch in progress, or the last one),
    in the caller's transaction: their ids, arms and propensities.

    Parameters
    ----------
    conn : Connection
        The experiment's transaction (its write lock held).
    last_id_sql : str
        The store's query for the last unit id inserted.
    seed : int
        The experiment's seed (the overflow stream's root).
    batch_id : int
        The batch the units are filed under (they take none of its slots).
    count : int
        Units to serve (>= 1).
    now : str
        Their assignment time, as the tables store times (the experiment's clock: their
        outcome window runs from it).
    shares, rollout_arm
        Exactly one: overflow units' shares, or the rollout arm.
    """
    if rollout_arm is not None:
        kind = ROLLOUT
        arms = np.full(count, int(rollout_arm), dtype=np.int64)
        propensity = np.ones(count)
    else:
        assert shares is not None
        kind = OVERFLOW
        row = conn.execute(*OVERFLOW_DRAWN).fetchone()
        drawn = 0 if row is None else int(json.loads(row[0]))
        arms = draw_arms(seed, drawn, shares, count)
        propensity = shares[arms]
        conn.execute("INSERT INTO meta (key, value) VALUES ('overflow_drawn', ?) "
                     "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                     (json.dumps(drawn + count),))
    conn.executemany("INSERT INTO units (batch, slot, arm, assigned_at, kind, propensity) "
                     "VALUES (?, ?, ?, ?, ?, ?)",
                     [(batch_id, -1, int(a), now, kind, float(p))
                      for a, p in zip(arms, propensity, strict=True)])
    # the write lock is held: the new ids are consecutive and end at the last one
    (last,) = conn.execute(last_id_sql).fetchone()
    ids = list(range(last - count + 1, last + 1))
    return ids, arms, propensity

