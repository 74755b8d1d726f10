"""Segments in the metric family: each unit may carry a segment label given at ``assign``
(a country, a platform: known before the treatment), one of the labels declared at create
(``verdicts={"segments": [...]}``, :mod:`banditkit.live.readout.verdict_spec`), and
``Experiment.family()`` then compares the arms' rewards within each segment beside the whole.

Why declared at create: Holm's guarantee over the family (:mod:`.family`) needs the family
stated before the data — a segment added because it looked different would add a hypothesis
chosen by the data, and a family that grows over the looks loses the union bound the proof
uses. With S declared segments and G guardrails the family has (1 + G + S)·(K − 1) members from
the first look, empty segments included (their p-value is 1 until both arms have ``min_n``
units).

What is counted: in each segment, each arm's units of the resolved prefix (its units before
the one cursor G, :mod:`banditkit.live.outcomes.resolved_prefix`) that carry the label: a
prefix of the segment's own assignment order, so each segment's sequence is valid however
outcomes arrive, under any allocation predictable from the past. Corrections
(:mod:`banditkit.live.outcomes.corrections`) replace the values they correct. Units without a
label count in the whole only. Cost: one grouped SQL aggregate per arm, O(counted units).
"""

from __future__ import annotations

import numpy as np

from ..outcomes.corrections import latest_corrections
from ..store import CHUNK, Connection

__all__ = ["segment_sums"]


def segment_sums(conn: Connection, cursor: np.ndarray, labels: tuple[str, ...],
                 corrected: bool) -> dict[str, np.ndarray]:
    """label → per-arm (count, sum, sum of squares) as a (3, K) array, over each arm's units
    below its ``cursor`` carrying the label (module docstring); every declared label is
    present (zeros when no unit carries it)."""
    K = cursor.size
    out = {label: np.zeros((3, K)) for label in labels}
    for arm in range(K):
        for label, n, total, total_sq in conn.execute(
                "SELECT segment, COUNT(reward), SUM(reward), SUM(reward * reward) FROM units "
                "WHERE arm = ? AND id < ? AND reward IS NOT NULL AND segment IS NOT NULL "
                "GROUP BY segment", (arm, int(cursor[arm]))):
            if label in out:
                out[label][:, arm] = n, total or 0.0, total_sq or 0.0
    if corrected:
        fixes = latest_corrections(conn)
        mine = sorted(u for u, (a, _) in fixes.items() if 0 <= a < K and u < cursor[a])
        for start in range(0, len(mine), CHUNK):
            chunk = mine[start:start + CHUNK]
            for unit, label, reward in conn.execute(
                    "SELECT id, segment, reward FROM units WHERE segment IS NOT NULL AND id IN "
                    f"({','.join('?' * len(chunk))})", chunk):
                arm, value = fixes[int(unit)]
                if label in out:
                    out[label][1:, arm] += (value - reward, value * value - reward * reward)
    return out
