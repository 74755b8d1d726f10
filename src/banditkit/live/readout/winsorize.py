"""Winsorisation of a continuous metric at a stated quantile, for ``status``
(``verdicts={"winsorize": q}``, :mod:`banditkit.live.readout.verdict_spec`), alone or under CUPED.

At each look the cap c is the q-quantile of every counted reward, all arms pooled (the
order statistic ⌈qN⌉ of the N counted rewards); each arm's sums are then those of
min(reward, c). Pooling keeps the cap the same for every arm, so under the null of equal
reward distributions the capped means are equal too, and a heavy upper tail (revenue, latency)
no longer dominates the variance. The verdicts are about the capped means. The cap moves from
look to look (GrowthBook and Eppo cap the same way at each analysis); the measured null
false-verdict rate is in docs/experiment.md. Upper tail only: the metrics that need it are
non-negative with a long right tail.

With CUPED (``{"winsorize": q, "cuped": True}``; Deng, Xu, Kohavi & Walker 2013, eq. (3)–(4),
:func:`banditkit.live.readout.adjusted.cuped`) the adjustment runs on the capped rewards: θ is the
pooled within-arm slope of min(y, c) on the covariate, so the estimand stays the difference
of the capped means and the variance falls by 1 − ρ² with ρ the within-arm correlation of
the capped reward and the covariate. Of the two variants — the covariate as given, or the
covariate capped too — this module **caps the covariate as well**, at its own pooled
q-quantile c_x over the same counted units, re-estimated at each look like c:

* Deng et al. (2013, §3.3) allow any function of pre-experiment data as the control variate;
  min(x, c_x) with a cap pooled over all arms is one (x is fixed before assignment, so its
  capped mean has the same expectation in every arm and the adjusted difference still
  estimates the capped means' difference).
* A pre-experiment covariate of a heavy-tailed metric is usually that metric's own earlier
  value, just as heavy-tailed: a few huge x values then decide θ̂ and the variance sums
  (Σx², Σxy), the very instability that winsorising y removes, and the capped reward is more
  nearly linear in the capped covariate. Measured on ``benchmarks/bench_continuous.py``'s
  revenue model (400,000 visitors, q = 0.99): ρ(min(y, c), x) = 0.413 against
  ρ(min(y, c), min(x, c_x)) = 0.469 (and 0.457 for the raw pair), so capping both keeps the
  variance reduction that capping y alone loses.

Cost: one pass over the counted units per status (a quantile cannot come from running sums),
against O(arms) for a plain mean; with CUPED a second order statistic over the same units.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..store.base import Connection, Store

__all__ = ["Capped", "winsorized_sums"]


@dataclass(frozen=True)
class Capped:
    """What :func:`winsorized_sums` returns: the caps and each arm's capped sums.

    Attributes
    ----------
    cap : float or None
        The pooled quantile of the counted rewards (``None`` when none is counted).
    total, total_sq : ndarray
        Per arm, Σmin(y, c) and Σmin(y, c)².
    covariate_cap : float or None
        With CUPED: the pooled quantile of the counted units' covariates.
    covariate, covariate_sq, covariate_reward : ndarray or None
        With CUPED, per arm: Σx', Σx'², Σx'·min(y, c), x' = min(x, covariate_cap).
    """

    cap: float | None
    total: np.ndarray
    total_sq: np.ndarray
    covariate_cap: float | None = None
    covariate: np.ndarray | None = None
    covariate_sq: np.ndarray | None = None
    covariate_reward: np.ndarray | None = None


def counted_units(count: str, algorithm_units_only: bool = False) -> str:
    """The ``FROM ... WHERE`` clause of the units a status counts (alias ``u``): each arm's
    resolved prefix (``count="resolved"``; a table ``prefix p``), or every recorded reward
    (``"recorded"``; with ``algorithm_units_only``, the algorithm's units alone, as fixed-n
    intervals count)."""
    if count == "resolved":
        return ("FROM units u JOIN prefix p ON u.arm = p.arm WHERE u.id < p.cursor AND "
                "u.reward IS NOT NULL")
    return ("FROM units u WHERE u.reward IS NOT NULL"
            + (" AND u.kind = 0" if algorithm_units_only else ""))


def _quantile(conn: Connection, where: str, value: str, n: int, quantile: float) -> float:
    """The order statistic ⌈qN⌉ of ``value`` over the ``n`` units of ``where``."""
    rank = max(math.ceil(quantile * int(n)), 1) - 1
    (cap,) = conn.execute(f"SELECT {value} {where} ORDER BY {value} LIMIT 1 OFFSET ?",
                          (rank,)).fetchone()
    return float(cap)


def winsorized_sums(conn: Connection, store: Store, n_arms: int, quantile: float,
                    count: str, *, algorithm_units_only: bool = False,
                    covariates: bool = False) -> Capped:
    """The cap and each arm's Σmin(y, c), Σmin(y, c)² over the counted units
    (:func:`counted_units`); with ``covariates`` (CUPED) also the covariate's cap and the
    capped covariate's sums (module docstring: both capped, each at its pooled quantile).

    Returns
    -------
    Capped
        The caps (``None`` when no unit is counted) and the per-arm capped sums.
    """
    where = counted_units(count, algorithm_units_only)
    (n,) = conn.execute(f"SELECT COUNT(*) {where}").fetchone()
    sums = np.zeros((5 if covariates else 2, n_arms))
    if not n:
        return Capped(None, *sums[:2], *((None, *sums[2:]) if covariates else ()))
    cap = _quantile(conn, where, "u.reward", int(n), quantile)
    y = "(CASE WHEN u.reward > ? THEN ? ELSE u.reward END)"
    columns, params = [store.total(y), store.total(f"{y} * {y}")], [cap] * 6
    x_cap = None
    if covariates:
        # a counted unit without a covariate counts x = 0, as the resolved prefix's sums do
        raw = "COALESCE(u.covariate, 0)"
        x_cap = _quantile(conn, where, raw, int(n), quantile)
        x = f"(CASE WHEN {raw} > ? THEN ? ELSE {raw} END)"
        columns += [store.total(x), store.total(f"{x} * {x}"), store.total(f"{x} * {y}")]
        params += [x_cap] * 8 + [cap] * 2  # x's two per use, then y's in x·y
    for arm, *values in conn.execute(f"SELECT u.arm, {', '.join(columns)} {where} "
                                     "GROUP BY u.arm", params):
        if 0 <= arm < n_arms:
            sums[:, arm] = values
    return Capped(cap, *sums[:2], *((x_cap, *sums[2:]) if covariates else ()))
