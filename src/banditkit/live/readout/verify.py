"""The full check of a live experiment's stored units against what it observed
(``Experiment.verify``, O(units), read only), in the caller's transaction: the readout's
audit of what the other parts kept (running totals, metric sums, resolved prefix, the
observed batches' sums)."""

from __future__ import annotations

import json

import numpy as np

from ...protocol import Batch
from ..definition import Definition
from ..errors import ExperimentError
from ..outcomes.resolved_prefix import PluginTuning, plugin_state, read_prefix, scan
from ..store import Connection, Store
from ..store.codec import unpack_draws, unpack_runs
from ..store.schema import ALL_BATCHES, OVERFLOW_TOTALS, PREFIX_7

__all__ = ["verify"]


def verify(conn: Connection, d: Definition, store: Store, tuning: PluginTuning | None) -> int:
    """Check every unit against what the store says was observed: O(units), read only.

    ``Experiment.open`` checks in O(arms) per batch that each observed batch's stored run sums
    match the running totals kept with its units (an edit of ``batches.reward_sums`` or of
    ``totals`` is refused there); an edit of the units themselves (``UPDATE units SET
    reward = ...``) changes neither, so only this full pass finds it: it recomputes the
    totals of every (batch, arm), the guardrails' sums, the resolved prefix and every
    observed batch's sums from the units. ``tuning``: the plug-in's, when the prefix keeps its
    sums. Returns the units checked; raises :class:`ExperimentError` naming the first
    discrepancy.
    """
    units = _verify_totals(conn, d, store)
    _verify_metrics(conn, d)
    _verify_prefix(conn, d, store, tuning)
    _verify_runs(conn, d)
    _verify_draws(conn, d)
    return units


def _verify_totals(conn: Connection, d: Definition, store: Store) -> int:
    """The running totals of every (batch, arm) against the units': the units counted."""
    K = d.n_arms
    stored: dict[tuple[int, int], tuple] = {
        (b, a): (n, r, t, q, o) for b, a, n, r, t, q, o in conn.execute(
            "SELECT batch, arm, assigned, recorded, reward, reward_sq, non_binary "
            "FROM totals WHERE assigned <> 0 OR recorded <> 0")}
    fresh: dict[tuple[int, int], tuple] = {}
    overall = np.zeros((K, 5))
    units = 0
    # overflow and rollout units: their own totals (batch -2), never a batch's or all's
    for b, a, n, r, t, q, o in conn.execute(
            f"SELECT CASE WHEN kind = 0 THEN batch ELSE {OVERFLOW_TOTALS} END AS b, "
            f"arm, COUNT(*), COUNT(reward), {store.total('reward')}, "
            f"{store.total('reward * reward')}, "
            f"{store.count_if('reward <> 0 AND reward <> 1')} FROM units "
            "WHERE expired_at IS NULL GROUP BY 1, arm"):
        d.check_arm(a)
        fresh[(b, a)] = (n, r, t, q, int(o))
        if b != OVERFLOW_TOTALS:
            overall[a] += (n, r, t, q, o)
        units += n
    for a in range(K):
        if overall[a, 0] or overall[a, 1]:
            fresh[(ALL_BATCHES, a)] = (int(overall[a, 0]), int(overall[a, 1]),
                                       *overall[a, 2:4], int(overall[a, 4]))
    for key in sorted(set(stored) | set(fresh), key=lambda k: (k[0] == ALL_BATCHES, k)):
        want, got = fresh.get(key, (0, 0, 0.0, 0.0, 0)), stored.get(key)
        if got is None or got[0::4] + got[1:2] != want[0::4] + want[1:2] or not \
                np.allclose(got[2:4], want[2:4], rtol=1e-9, atol=1e-9):
            where = "all batches" if key[0] == ALL_BATCHES else f"batch {key[0]}"
            raise ExperimentError(
                f"{d.label} is damaged: the units of {where}, arm "
                f"{d.arm_names[key[1]]!r} (assigned, recorded, reward sum) are "
                f"{want[0]}, {want[1]}, {want[2]:g} but the totals the experiment "
                f"kept say {(got or (0, 0, 0.0))[:3]} (edited by hand?)")
    return units


def _verify_runs(conn: Connection, d: Definition) -> None:
    """Every observed batch's run sums against its units' rewards in slot order."""
    rows = conn.execute("SELECT id, arms, counts, reward_sums FROM batches JOIN runs ON "
                        "runs.batch = batches.id WHERE reward_sums IS NOT NULL "
                        "ORDER BY id").fetchall()
    for batch_id, arms, counts, sums in rows:
        batch = Batch(*unpack_runs(arms, counts))
        rewards = np.array([r for (r,) in conn.execute(
            "SELECT reward FROM units WHERE batch = ? AND expired_at IS NULL AND "
            "kind = 0 ORDER BY slot", (batch_id,))], dtype=float)
        if rewards.size != batch.n_pulls or not np.allclose(
                batch.sum_runs(rewards), json.loads(sums), rtol=1e-9, atol=1e-9):
            raise ExperimentError(
                f"{d.label} is damaged: the rewards of batch {batch_id}'s units do not sum to "
                "the run sums the algorithm observed (edited by hand?)")


def _verify_draws(conn: Connection, d: Definition) -> None:
    """i.i.d. batches: every unit's arm is the draw at its slot (O(units), one jump per range
    of consecutive slots), and an observed batch's per-arm sums its units'."""
    for batch_id, cdf, state, n_pulls, sums in conn.execute(
            "SELECT d.batch, d.cdf, d.state, d.n_pulls, b.reward_sums FROM draws d "
            "JOIN batches b ON b.id = d.batch ORDER BY d.batch").fetchall():
        try:
            batch = unpack_draws(cdf, state, n_pulls)
        except ValueError as error:
            raise ExperimentError(f"{d.label} is damaged: stored batch {batch_id} cannot be "
                                  f"read ({error})") from None
        found = conn.execute(
            "SELECT slot, arm, COALESCE(reward, 0) FROM units WHERE batch = ? "
            "AND expired_at IS NULL AND kind = 0", (batch_id,)).fetchall()
        slots, arms, rewards = (np.array(c, dtype=float)
                                for c in zip(*found or [(), (), ()], strict=True))
        if slots.size and (slots.max() >= batch.n_pulls or not np.array_equal(
                batch.arms_at(slots.astype(np.int64)), arms)):
            raise ExperimentError(
                f"{d.label} is damaged: a unit of batch {batch_id} has an arm (or slot) other "
                "than the draw of its slot (edited by hand?)")
        if sums is not None and (slots.size != batch.n_pulls or not np.allclose(
                np.bincount(arms.astype(np.int64), weights=rewards, minlength=d.n_arms),
                json.loads(sums), rtol=1e-9, atol=1e-9)):
            raise ExperimentError(
                f"{d.label} is damaged: the rewards of batch {batch_id}'s units do not sum to "
                "the per-arm sums the algorithm observed (edited by hand?)")


def _verify_metrics(conn: Connection, d: Definition) -> None:
    """The guardrails' running sums (``metric_totals``) against the units' own metrics:
    an edit of either is refused by :meth:`verify`, naming the guardrail and arm."""
    if not d.guardrails:
        return
    fresh: dict[tuple[int, int, int], list] = {}
    for b, a, metrics in conn.execute(
            f"SELECT CASE WHEN kind = 0 THEN batch ELSE {OVERFLOW_TOTALS} END, arm, metrics "
            "FROM units WHERE metrics IS NOT NULL AND expired_at IS NULL"):
        d.check_arm(a)
        for j, v in enumerate(json.loads(metrics)):
            for key in ((b, a, j), (ALL_BATCHES, a, j)):
                acc = fresh.setdefault(key, [0, 0.0])
                acc[0] += 1
                acc[1] += v
    stored = {(b, a, j): (n, t) for b, a, j, n, t in conn.execute(
        "SELECT batch, arm, guardrail, n, total FROM metric_totals WHERE n <> 0")}
    for key in sorted(set(fresh) | set(stored)):
        want, got = fresh.get(key, (0, 0.0)), stored.get(key, (0, 0.0))
        if want[0] != got[0] or not np.isclose(want[1], got[1], rtol=1e-9, atol=1e-9):
            b, a, j = key
            where = "all batches" if b == ALL_BATCHES else f"batch {b}"
            raise ExperimentError(
                f"{d.label} is damaged: the units of {where}, arm "
                f"{d.arm_names[a]!r} hold {want[0]} value(s) of "
                f"{d.guardrails[j].metric!r} summing to {want[1]:g}, but the totals "
                f"the experiment kept say {got[0]}, {got[1]:g} (edited by hand?)")


def _verify_prefix(conn: Connection, d: Definition, store: Store,
                   tuning: PluginTuning | None) -> None:
    """Each arm's resolved prefix (:mod:`banditkit.live.outcomes.resolved_prefix`) recomputed from
    its units from the first: the counts and sums status reads must be those of the arm's
    units before G, the first unit of any arm still waiting."""
    K, G = len(d.arm_names), len(d.guardrails)
    stored = read_prefix(conn, K, G)
    for a in range(K):
        _, sums, metrics = scan(conn, store, a, 0, G)
        n, imputed, expired, total, total_sq, odd = sums[:6]
        kept = (int(stored.n[a]), int(stored.imputed[a]), int(stored.expired[a]),
                int(stored.non_binary[a]))
        kept_metrics = list(zip(stored.metric_n[:, a].tolist(),
                                stored.metric_total[:, a].tolist(), strict=True))
        kept_squares = stored.metric_total_sq[:, a].tolist()
        kept_extra = [float(getattr(stored, c)[a]) for c in PREFIX_7]
        if kept != (n, imputed, expired, odd) or not np.allclose(
                [stored.total[a], stored.total_sq[a], *kept_extra],
                [total, total_sq, *sums[6:]], rtol=1e-9, atol=1e-9) \
                or [m for m, _ in kept_metrics] != [m for m, _, _ in metrics] \
                or not np.allclose([t for _, t in kept_metrics] + kept_squares or [0.0],
                                   [t for _, t, _ in metrics]
                                   + [q for _, _, q in metrics] or [0.0], rtol=1e-9,
                                   atol=1e-9):
            raise ExperimentError(
                f"{d.label} is damaged: the resolved prefix of arm "
                f"{d.arm_names[a]!r} (counted, imputed, expired, non-binary) is "
                f"{kept} but its units before the first unit still waiting give "
                f"{(n, imputed, expired, odd)} (edited by hand?)")
        if tuning is not None:
            fresh = plugin_state(conn, a, int(stored.plugin_cursor[a]), tuning)
            if not np.allclose(stored.plugin[a], fresh, rtol=1e-9, atol=1e-12):
                raise ExperimentError(
                    f"{d.label} is damaged: the resolved prefix's plug-in sums "
                    f"of arm {d.arm_names[a]!r} are {stored.plugin[a].tolist()} but its "
                    f"rewards before unit {int(stored.plugin_cursor[a])} give "
                    f"{fresh.tolist()} "
                    "(edited by hand?)")
