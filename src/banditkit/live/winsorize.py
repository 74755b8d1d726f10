"""Winsorisation of a continuous metric at a stated quantile, for ``status``
(``verdicts={"winsorize": q}``, :mod:`banditkit.live.verdict_spec`).

At each look the cap c is the q-quantile of every counted reward, all arms pooled (the
order statistic ⌈qN⌉ of the N counted rewards); each arm's sums are then those of
min(reward, c). Pooling keeps the cap the same for every arm, so under the null of equal
reward distributions the capped means are equal too, and a heavy upper tail (revenue, latency)
no longer dominates the variance. The verdicts are about the capped means. The cap moves from
look to look (GrowthBook and Eppo cap the same way at each analysis); the measured null
false-verdict rate is in docs/experiment.md. Upper tail only: the metrics that need it are
non-negative with a long right tail.

Cost: one pass over the counted units per status (the quantile cannot come from running
sums), against O(arms) for a plain mean.
"""

from __future__ import annotations

import math

import numpy as np

from .store_base import Connection, Store

__all__ = ["winsorized_sums"]


def winsorized_sums(conn: Connection, store: Store, n_arms: int, quantile: float,
                    count: str, *, algorithm_units_only: bool = False
                    ) -> tuple[float | None, np.ndarray, np.ndarray]:
    """The cap and each arm's Σmin(y, c), Σmin(y, c)² over the counted units: each arm's
    resolved prefix (``count="resolved"``) or every recorded reward (``"recorded"``; with
    ``algorithm_units_only``, the algorithm's units alone, as fixed-n intervals count).

    Returns
    -------
    cap : float or None
        The pooled ``quantile`` of the counted rewards (``None`` when none is counted).
    total, total_sq : ndarray
        Per arm, the capped sums.
    """
    where = ("FROM units u JOIN prefix p ON u.arm = p.arm WHERE u.id < p.cursor AND "
             "u.reward IS NOT NULL" if count == "resolved"
             else "FROM units u WHERE u.reward IS NOT NULL"
             + (" AND u.kind = 0" if algorithm_units_only else ""))
    (n,) = conn.execute(f"SELECT COUNT(*) {where}").fetchone()
    total, total_sq = np.zeros(n_arms), np.zeros(n_arms)
    if not n:
        return None, total, total_sq
    rank = max(math.ceil(quantile * int(n)), 1) - 1
    (cap,) = conn.execute(f"SELECT u.reward {where} ORDER BY u.reward LIMIT 1 OFFSET ?",
                          (rank,)).fetchone()
    capped = "(CASE WHEN u.reward > ? THEN ? ELSE u.reward END)"
    for arm, t, q in conn.execute(
            f"SELECT u.arm, {store.total(capped)}, {store.total(f'{capped} * {capped}')} "
            f"{where} GROUP BY u.arm", (cap, cap, cap, cap, cap, cap)):
        if 0 <= arm < n_arms:
            total[arm], total_sq[arm] = t, q
    return float(cap), total, total_sq
