"""Recorded corrections: the right value for a reward recorded wrong, kept beside it, never an
edit. Of the outcomes part (:meth:`banditkit.live.outcomes.recorder.Outcomes.correct` finds
what changes, :meth:`~banditkit.live.outcomes.recorder.Outcomes.counted_prefix` counts it);
:meth:`banditkit.Experiment.correct` checks the call, asks the outcomes part, and has the
operator's part (:class:`~banditkit.live.assignment.operations.Operations`) write the audit
row and count the call.

What a correction is
--------------------
``correct(units, rewards, reason=...)`` writes one row of the audit log (action ``correct``:
who, when, why, each unit's arm, the reward recorded and the value that replaces it) and marks
the experiment as corrected (``meta`` key ``corrections``, read with the operator's state,
so an experiment without corrections pays nothing). The unit's recorded reward stays in
``units`` as it was: the algorithm observed it (its allocations, replayed from the stored
batches, do not change), :meth:`~banditkit.Experiment.units` and ``verify()`` still see it,
and the audit log says what replaced it, when, by whom and why. A unit corrected twice
counts its latest correction.

What the readout does with it
-----------------------------
``status()`` (each arm's resolved prefix, :mod:`banditkit.live.outcomes.resolved_prefix`) counts the
corrected value instead of the recorded one: every arm that has a corrected unit below its
cursor has its sums (count, Σy, Σy², the covariates' Σx·y and the denominators' Σd·y) and
the predictable plug-in's sums summed afresh from its units, the corrected values in place
(O(units of those arms) per status; subtracting the wrong value from the running sums
instead would lose every digit of the other rewards' squares to one large wrong value, the
case a correction exists for). Not corrected: ``status(count="recorded")``, winsorised
statuses and guardrail metrics (they read the recorded values).

Why the guarantees still hold
-----------------------------
A confidence sequence holds, with probability 1 − α, at *every* prefix of the true rewards
in assignment order at once. After a correction the readout is exactly that sequence
computed on the rewards as corrected: the sum-based sequences (asymptotic, mSPRT, the
λ-mixture) depend only on the counted values, and the plug-in's λ_i and centre μ̂_{i−1} are
recomputed from the corrected values before unit i, so they are predictable in the true
rewards' own filtration (:mod:`banditkit.live.readout.sequences`). So once every wrong value is
corrected, every look from then on is a look at the one valid sequence of the true rewards,
all covered together at level α — however the wrong values were recorded, however the
algorithm allocated on them (the sequences hold under any predictable allocation, and the
wrong values were observed before the units that followed were allocated). What is *not*
covered: looks taken while a wrong value was still counted (they were computed on other
data), and a correction chosen after looking at the intervals (correct values because they
are wrong, never because of where the interval lies: a correction is a statement about one
unit's value, and the audit log keeps its reason).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ExperimentError
from ..inputs import as_ids, check_summable, numbers
from ..store import CHUNK, Connection
from ..store.reads import CORRECTED
from .resolved_prefix import PluginTuning, ResolvedPrefix

__all__ = ["CORRECTED", "check_correction", "corrected_prefix", "corrections_frame",
           "counted_rewards", "latest_corrections", "what_changes"]


def check_correction(units: Sequence[int], rewards: Sequence[float], reason: object
                     ) -> tuple[np.ndarray, np.ndarray, str]:
    """``correct``'s arguments checked before any work (the rewards' ranges are checked by
    the outcomes part in the call's transaction, as ``record`` checks them): ids, rewards,
    reason."""
    if not isinstance(reason, str) or not reason.strip() or len(reason) > 500:
        raise ExperimentError(f"reason must be a non-empty text of at most 500 characters "
                              f"(why the recorded rewards are wrong), got {reason!r}")
    ids = as_ids(units)
    values = numbers(rewards)
    if values is None or values.ndim != 1 or values.size != ids.size:
        raise ExperimentError(f"rewards must be numbers, one per unit ({ids.size})")
    values = values.astype(float)
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        raise ExperimentError(f"rewards must be finite: unit {int(ids[bad[0]])} got "
                              f"{values[bad[0]]}")
    check_summable("rewards", values, ids)
    return ids, values, reason


def latest_corrections(conn: Connection) -> dict[int, tuple[int, float]]:
    """unit → (arm, corrected reward), the latest correction of each unit, from the audit
    log."""
    out: dict[int, tuple[int, float]] = {}
    for (detail,) in conn.execute("SELECT detail FROM audit WHERE action = 'correct' "
                                  "ORDER BY id"):
        d = json.loads(detail)
        for unit, arm, value in zip(d["units"], d["arms"], d["rewards"], strict=True):
            out[int(unit)] = (int(arm), float(value))
    return out


def corrected_prefix(conn: Connection, prefix: ResolvedPrefix,
                     tuning: PluginTuning | None) -> ResolvedPrefix:
    """``prefix`` with every corrected unit's latest value in place of its recorded reward
    (module docstring): the arms with a corrected unit below their cursor re-summed."""
    fixes = latest_corrections(conn)
    arms = sorted({a for u, (a, _) in fixes.items()
                   if 0 <= a < prefix.n.size and u < prefix.cursor[a]})
    if not arms:
        return prefix
    total, total_sq = prefix.total.copy(), prefix.total_sq.copy()
    non_binary = prefix.non_binary.copy()
    covariate_reward = prefix.covariate_reward.copy()
    denominator_reward = prefix.denominator_reward.copy()
    plugin = prefix.plugin.copy()
    for a in arms:
        rows = conn.execute(
            "SELECT id, reward, COALESCE(covariate, 0), COALESCE(denominator, 0) FROM units "
            "WHERE arm = ? AND id < ? AND reward IS NOT NULL ORDER BY id",
            (a, int(prefix.cursor[a]))).fetchall()
        if not rows:
            continue
        ids = np.array([r[0] for r in rows], dtype=np.int64)
        y = np.array([fixes[u][1] if u in fixes else r for u, r, _, _ in rows], dtype=float)
        x = np.array([r[2] for r in rows], dtype=float)
        d = np.array([r[3] for r in rows], dtype=float)
        total[a], total_sq[a] = y.sum(), (y * y).sum()
        non_binary[a] = int(((y != 0) & (y != 1)).sum())
        covariate_reward[a], denominator_reward[a] = (x * y).sum(), (d * y).sum()
        if tuning is not None:
            before = y[ids < prefix.plugin_cursor[a]]
            plugin[a] = (tuning.terms(before, 0.0, 0.0, 0.0) if before.size
                         else np.zeros(plugin.shape[-1]))
    return replace(prefix, total=total, total_sq=total_sq, non_binary=non_binary,
                   covariate_reward=covariate_reward, denominator_reward=denominator_reward,
                   plugin=plugin)


def counted_rewards(conn: Connection, cursor: np.ndarray, corrected: bool
                    ) -> list[np.ndarray]:
    """Each arm's rewards below its cursor (the resolved prefix, in assignment order), with
    ``corrected`` the corrections' values in place of the recorded ones: O(counted units)."""
    fixes = latest_corrections(conn) if corrected else {}
    values = []
    for a in range(cursor.size):
        rows = conn.execute("SELECT id, reward FROM units WHERE arm = ? AND id < ? AND "
                            "reward IS NOT NULL ORDER BY id", (a, int(cursor[a]))).fetchall()
        values.append(np.array([fixes[u][1] if u in fixes else r for u, r in rows],
                               dtype=float))
    return values


def what_changes(conn: Connection, ids: np.ndarray, values: np.ndarray
                 ) -> dict[str, list[Any]] | None:
    """What a correction of units ``ids`` to ``values`` changes, as its audit row keeps it
    (``units``, ``arms``, ``recorded``, ``previous``, ``rewards``), or ``None`` when it changes
    nothing (a retry); a unit never assigned, without a reward, or whose 0 the outcome window
    recorded is refused."""
    fixes = latest_corrections(conn)
    known: dict[int, tuple] = {}
    for start in range(0, ids.size, CHUNK):
        chunk = ids[start: start + CHUNK].tolist()
        for row in conn.execute("SELECT id, arm, reward, imputed, expired_at FROM units "
                                f"WHERE id IN ({','.join('?' * len(chunk))})", chunk):
            known[int(row[0])] = row[1:]
    changed: dict[str, list[Any]] = {"units": [], "arms": [], "recorded": [],
                                     "previous": [], "rewards": []}
    for unit, value in zip(ids.tolist(), values.tolist(), strict=True):
        row = known.get(unit)
        if row is None:
            raise ExperimentError(f"units: unit {unit} was never assigned")
        arm, reward, imputed, expired_at = row
        if reward is None:
            raise ExperimentError(
                f"units: unit {unit} has no reward recorded (expired at {expired_at})"
                if expired_at is not None else
                f"units: unit {unit} has no reward recorded yet; record it (a correction "
                "replaces a recorded reward)")
        if imputed:
            raise ExperimentError(f"units: unit {unit}'s 0 was recorded by the outcome "
                                  "window's rule (missing='zero'), not reported; an "
                                  "outcome after the window is not counted")
        previous = fixes.get(unit, (arm, float(reward)))[1]
        if previous == value:
            continue
        for key, item in zip(changed, (unit, int(arm), float(reward), previous, value),
                             strict=True):
            changed[key].append(item)
    return changed if changed["units"] else None


def corrections_frame(conn: Connection, names: Sequence[str]) -> pd.DataFrame:
    """Every correction, oldest first (``Experiment.corrections``): ``at``, ``who``, ``unit``,
    ``arm`` (name), ``recorded`` (the reward recorded), ``previous`` (what was counted before
    this correction), ``reward`` (what is counted after it) and ``reason``."""
    rows = conn.execute("SELECT at, who, detail FROM audit WHERE action = 'correct' "
                        "ORDER BY id").fetchall()
    out = []
    for at, who, detail in rows:
        d: Mapping[str, Any] = json.loads(detail)
        out += [(at, who, u, names[a], r, p, v, d["reason"]) for u, a, r, p, v in zip(
            d["units"], d["arms"], d["recorded"], d["previous"], d["rewards"], strict=True)]
    return pd.DataFrame(out, columns=["at", "who", "unit", "arm", "recorded", "previous",
                                      "reward", "reason"])
