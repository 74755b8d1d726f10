"""A live experiment's history over time from its running totals, in a bounded number of
points: what the experiment page draws (issue 26: the page read every unit — 0.7–0.9 s at
30,000 units, and more with every unit).

The running totals (``totals``, one row per (batch, arm): units assigned, rewards recorded and
their sums, kept by every call) and the batches' times (``batches.asked_at``, ``observed_at``)
hold the experiment's course batch by batch. :func:`read_history` (``Experiment.history``)
groups the batches into at most ``points`` consecutive groups inside the database (``GROUP BY``
on ``id · points / batches``) and returns, per group, its first batch's time and the units
assigned, and for the
groups whose every batch was observed, the cumulative rewards counted up to its observation:
O(points × arms) rows out, whatever the number of units; the database reads the ``batches``
and ``totals`` rows (O(batches × arms), not O(units)). Overflow and rollout units have totals
rows of their own (batch −2) and are not in it, as they are in no batch of the algorithm.

What a point means: the cumulative counts are the algorithm's units of the batches up to and
including the group (assigned: when the group's first batch was asked; rewards: when its last
batch was observed, every unit of a batch then resolved). They are batch-boundary snapshots,
not the status' resolved prefix between boundaries; the page adds the status itself as the
last point ("now").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ExperimentError
from ..store import Connection

__all__ = ["History", "check_points", "read_history"]


@dataclass(frozen=True)
class History:
    """The experiment's course in at most ``points`` groups of consecutive batches.

    Attributes
    ----------
    first_batch, last_batch : ndarray of int, shape (G,)
        Each group's batches (0-based ids, inclusive).
    asked_at : list of str
        When each group's first batch was asked (the tables' time stamps).
    observed_at : list of str or None
        When each group's last batch was observed (``None``: not every batch of it was).
    assigned : ndarray, shape (G, K)
        Units assigned per arm in each group (expired units withdrawn).
    recorded, reward, reward_sq : ndarray, shape (G, K)
        Per group and arm: rewards recorded, their sum and sum of squares.
    non_binary : ndarray, shape (G, K)
        Rewards other than 0 and 1.
    """

    first_batch: np.ndarray
    last_batch: np.ndarray
    asked_at: list[str]
    observed_at: list[str | None]
    assigned: np.ndarray
    recorded: np.ndarray
    reward: np.ndarray
    reward_sq: np.ndarray
    non_binary: np.ndarray


def check_points(points: object) -> int:
    """``history``'s ``points``: an integer >= 1."""
    if isinstance(points, bool) or not isinstance(points, (int, np.integer)) or points < 1:
        raise ExperimentError(f"points must be an integer >= 1, got {points!r}")
    return int(points)


def read_history(conn: Connection, points: int, n_arms: int, label: str) -> History:
    """The experiment's course in at most ``points`` groups of consecutive batches, read in
    the caller's transaction (see the module docstring); ``label`` names the store in the
    message about a damaged one."""
    K = n_arms
    (n_batches,) = conn.execute("SELECT COALESCE(MAX(id), -1) + 1 FROM batches").fetchone()
    n_batches = int(n_batches)
    G = min(points, n_batches)
    empty = np.zeros((0, K))
    if G == 0:
        return History(np.zeros(0, np.int64), np.zeros(0, np.int64), [], [], empty,
                       empty, empty, empty, empty)
    # group g holds the batches b with b * G // n_batches == g: consecutive, none empty
    groups = conn.execute(
        "SELECT (id * ?) / ? AS g, MIN(id), MAX(id), MIN(asked_at), MAX(observed_at), "
        "COUNT(observed_at), COUNT(*) FROM batches GROUP BY g ORDER BY g",
        (G, n_batches)).fetchall()
    sums = conn.execute(
        "SELECT (batch * ?) / ? AS g, arm, SUM(assigned), SUM(recorded), SUM(reward), "
        "SUM(reward_sq), SUM(non_binary) FROM totals WHERE batch >= 0 "
        "GROUP BY g, arm", (G, n_batches)).fetchall()
    if len(groups) != G:
        raise ExperimentError(f"{label} is damaged: its batches are not numbered 0, 1, 2, ...")
    first = np.array([r[1] for r in groups], dtype=np.int64)
    last = np.array([r[2] for r in groups], dtype=np.int64)
    asked = [r[3] for r in groups]
    observed = [r[4] if r[5] == r[6] else None for r in groups]
    table = np.zeros((5, G, K))
    for g, arm, *values in sums:
        if not (0 <= g < G and 0 <= arm < K):
            raise ExperimentError(f"{label} is damaged: running totals of batch group "
                                  f"{g!r}, arm {arm!r}")
        table[:, g, arm] = [float(v or 0) for v in values]
    return History(first, last, asked, observed, *table)
