"""The resolved prefix: what a live experiment's ``status`` counts, so that its intervals and
verdicts stay valid however outcomes arrive.

Why a prefix
------------
Confidence sequences (:mod:`banditkit.live.readout.anytime`) hold at every sample size together for
the rewards of one arm *in an order that does not depend on their values*. Outcomes do not
arrive in such an order: a conversion is known at once, a non-conversion only when its outcome
window closes (:mod:`banditkit.live.outcomes.window`). Counting whatever has been recorded
favours the quick outcomes: in a null experiment with conversions recorded at once and zeros
at the window's end, 56.7% of 60 runs showed a false verdict (issue 23). So ``status`` counts,
for every arm, its units with id below **one cursor G**: the smallest id (assignment order,
``units.id``) of a unit of *any* arm not yet resolved — neither recorded nor expired (nor
resolved by the window's rule) — or one past the last unit when none waits. For any set of
arms (one arm, an arm and the control, all of them) the units counted are then a prefix of
the assignment order restricted to those arms, an order fixed when they were assigned; a
time-uniform confidence sequence holds at *every* prefix length at once, so it holds at this
one, however G came about (even though G depends on which outcomes have arrived). So each
arm's interval, each difference to the control, the verdicts and the guardrails are exact
however outcomes arrive. (A cursor per arm, format 8, made each arm's interval exact but not
the differences: two separately advanced prefixes are not in general a prefix of the pair's
joint order.) Units expired below G carry no reward and are skipped; the missing-outcome check
(:func:`banditkit.live.readout.statistics.missing_outcome_warnings`) counts them as lost, so a
variant that loses outcomes is seen there.

State (table ``prefix``, :mod:`banditkit.live.store.schema`): per arm, ``cursor`` — G when the arm
was last advanced — and the sums over the arm's units below it. The largest cursor is G's
stored value. A call that resolves units (``record``, ``expire``, the window's rule) moves G
from there to the next unit still waiting (a walk on the primary key that passes only the
units G passes over) and adds, to each arm with units in [old G, new G), those units, its
cursor becoming the new G. An arm with no unit there keeps its old cursor: none of its units
lies between that cursor and G, so "its units below its cursor" (what the plug-in's catch-up
and winsorisation read) are its units below G. Each unit is added once, so the work is in
proportion to the units resolved, and ``status`` reads O(arms) rows.

The predictable plug-in's sums (format 8: the exact default sequence,
:mod:`banditkit.live.readout.sequences`) follow each arm's units in the same order, but each
reward's
λ_i depends on the arm's rewards before it, so they are summed in Python, not by the set-based
SQL. To cost no round trip, they run one call behind: ``plugin_cursor`` says how far they go;
every call of the experiment reads, with its first round trip
(:data:`banditkit.live.store.reads.PLUGIN_BEHIND`), the rewards between ``plugin_cursor`` and
``cursor``, and :func:`plugin_catch_up` brings the sums to ``cursor`` (stored with the call's
writes; a read-only call uses them without storing). ``status`` catches up again after
resolving units by the window's rule.

What other modules use: :func:`read_prefix` (per-arm counts and sums, a
:class:`ResolvedPrefix`), :func:`advance` (after a call resolved units: G moves for all arms),
:func:`frontier` (G, computed from the units) and
:func:`rebuild` (every arm from the start: an upgraded file, or :meth:`verify`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ..errors import ExperimentError
from ..readout.plugin import plugin_level, plugin_terms
from ..readout.sums import ArmSums
from ..readout.verdict_spec import VerdictSpec
from ..store.base import Connection, Store
from ..store.schema import PREFIX_7, PREFIX_8

__all__ = ["PLUGIN_UPDATE", "PluginTuning", "ResolvedPrefix", "advance", "frontier",
           "plugin_catch_up", "plugin_state", "read_prefix", "rebuild", "scan"]


@dataclass(frozen=True)
class PluginTuning:
    """How an experiment's prefix accumulates the predictable plug-in's sums
    (:func:`banditkit.live.readout.plugin.plugin_terms`): rewards rescaled by ``(x − low)/span``,
    λ tuned at ``n_tune`` units per arm and ``level`` = log(1/α'). Fixed at create (the
    stored spec's range and ``tune_n``, the number of arms): a ``status(verdicts=...)`` with
    another ``tune_n`` still reads the sums accumulated at this one (valid at any α: any
    predictable λ is)."""

    low: float
    span: float
    n_tune: float
    level: float

    @classmethod
    def of(cls, spec: VerdictSpec, n_arms: int) -> PluginTuning | None:
        """The tuning of a spec's rewards (None for continuous rewards: no exact sequence)."""
        if spec.reward_range is None:
            return None
        lo, hi = spec.reward_range
        return cls(float(lo), float(hi - lo), float(spec.tune_n), plugin_level(n_arms))

    def terms(self, rewards: np.ndarray, n: float, total: float, total_sq: float
              ) -> np.ndarray:
        """The plug-in's sums over ``rewards`` (raw units, in assignment order) that follow
        ``n`` counted rewards of sum ``total`` and sum of squares ``total_sq`` (raw units)."""
        lo, span = self.low, self.span
        prior = (n, (total - n * lo) / span, (total_sq - 2 * lo * total + n * lo * lo) / span ** 2)
        x = (np.asarray(rewards, dtype=float) - lo) / span
        return np.stack(plugin_terms(x, n_tune=self.n_tune, level=self.level, prior=prior),
                        axis=-1).sum(axis=0)


@dataclass(frozen=True)
class ResolvedPrefix:
    """Per arm (arrays of length K; metrics (G, K)): the resolved prefix's state.

    Attributes
    ----------
    cursor : ndarray of int
        G (the first unit of any arm still waiting) when the arm was last advanced: the
        arm's units below it are counted, none of its units lies between it and G now (0
        before any; the largest is G).
    n : ndarray of int
        Outcomes counted: recorded rewards, the window's imputed zeros included.
    imputed : ndarray of int
        Of those, zeros recorded by the rule ``missing="zero"``.
    expired : ndarray of int
        Units of the prefix expired without an outcome (by hand or by ``missing="expire"``).
    total, total_sq : ndarray of float
        Sum and sum of squares of the counted rewards.
    non_binary : ndarray of int
        Counted rewards other than 0 and 1.
    metric_n, metric_total, metric_total_sq : ndarray, shape (G, K)
        Guardrail metrics of the prefix's units: values, their sum and sum of squares.
    covariate, covariate_sq, covariate_reward : ndarray
        Σx, Σx², Σx·reward over the counted units' covariates (CUPED; a unit without one
        counts x = 0: experiments that declare CUPED refuse rewards without one).
    denominator, denominator_sq, denominator_reward : ndarray
        Σd, Σd², Σd·reward over the counted units' denominators (ratio metrics; none = 0).
    plugin : ndarray, shape (K, 4)
        The predictable plug-in's sums Λ, Σλx, P^L, P^U over the counted rewards in
        assignment order (:class:`PluginTuning`; zeros for continuous rewards), up to
        ``plugin_cursor``.
    plugin_cursor : ndarray of int
        The unit id the plug-in sums run to (``cursor`` once caught up).
    """

    cursor: np.ndarray
    n: np.ndarray
    imputed: np.ndarray
    expired: np.ndarray
    total: np.ndarray
    total_sq: np.ndarray
    non_binary: np.ndarray
    metric_n: np.ndarray
    metric_total: np.ndarray
    metric_total_sq: np.ndarray
    covariate: np.ndarray
    covariate_sq: np.ndarray
    covariate_reward: np.ndarray
    denominator: np.ndarray
    denominator_sq: np.ndarray
    denominator_reward: np.ndarray
    plugin: np.ndarray
    plugin_cursor: np.ndarray

    def arm_sums(self, assigned: np.ndarray) -> ArmSums:
        """The :class:`banditkit.live.readout.statistics.ArmSums` of the counted outcomes (with the
        covariates' and denominators' sums)."""
        return ArmSums(np.asarray(assigned), self.n.copy(), self.total.copy(),
                       self.total_sq.copy(), self.non_binary == 0,
                       extra=np.stack([self.covariate, self.covariate_sq,
                                       self.covariate_reward, self.denominator,
                                       self.denominator_sq, self.denominator_reward], axis=-1),
                       plugin=self.plugin.copy())


def read_prefix(conn: Connection, n_arms: int, n_guardrails: int) -> ResolvedPrefix:
    """The stored prefix of every arm: O(arms × guardrails) rows."""
    K, G = n_arms, n_guardrails
    cursor, n, imputed, expired, non_binary = (np.zeros(K, dtype=np.int64) for _ in range(5))
    total, total_sq = np.zeros(K), np.zeros(K)
    extra = np.zeros((K, len(PREFIX_7)))
    plugin = np.zeros((K, len(PREFIX_8)))
    plugin_cursor = np.zeros(K, dtype=np.int64)
    for arm, c, m, i, e, t, q, o, pc, *x in conn.execute(
            "SELECT arm, cursor, n, imputed, expired, reward, reward_sq, non_binary, "
            f"plugin_cursor, {', '.join(PREFIX_7 + PREFIX_8)} FROM prefix"):
        _check(arm, K)
        cursor[arm], n[arm], imputed[arm], expired[arm] = c, m, i, e
        total[arm], total_sq[arm], non_binary[arm] = t, q, o
        extra[arm] = x[:len(PREFIX_7)]
        plugin[arm], plugin_cursor[arm] = x[len(PREFIX_7):], pc
    metric_n = np.zeros((G, K), dtype=np.int64)
    metric_total, metric_total_sq = np.zeros((G, K)), np.zeros((G, K))
    if G:
        for arm, j, m, t, q in conn.execute("SELECT arm, guardrail, n, total, total_sq FROM "
                                            "prefix_metrics"):
            _check(arm, K)
            if not 0 <= j < G:
                raise ExperimentError(f"the resolved prefix holds metrics of guardrail {j!r}, "
                                      f"not one of the {G} (a damaged experiment)")
            metric_n[j, arm], metric_total[j, arm], metric_total_sq[j, arm] = m, t, q
    return ResolvedPrefix(cursor, n, imputed, expired, total, total_sq, non_binary, metric_n,
                          metric_total, metric_total_sq, *extra.T.copy(), plugin,
                          plugin_cursor)


def _check(arm: object, K: int) -> None:
    if isinstance(arm, bool) or not isinstance(arm, (int, np.integer)) or not 0 <= arm < K:
        raise ExperimentError(f"the resolved prefix names arm {arm!r}, not one of the {K} "
                              "(a damaged experiment)")


def scan(conn: Connection, store: Store, arm: int, start: int, n_guardrails: int
         ) -> tuple[int, tuple, list[tuple[int, float, float]]]:
    """Where the one cursor G is now (counting from ``start``), and what arm ``arm``'s units
    from id ``start`` to there add.

    Returns
    -------
    end : int
        G: the first unit of *any* arm at or after ``start`` still waiting (no reward, not
        expired); when none waits, one past the experiment's last unit id (:func:`frontier`).
    sums : tuple
        Over the arm's units in [start, end): (counted rewards, imputed, expired, reward sum,
        reward² sum, non-binary rewards, then the sums :data:`PREFIX_7` names: Σx, Σx², Σxy of
        the covariates, Σd, Σd², Σdy of the denominators, over the units with a reward).
    metrics : list of (n, total, total of squares)
        Per guardrail, over the same units.
    """
    end = frontier(conn, start)
    if end == start:
        return (end, (0, 0, 0, 0.0, 0.0, 0) + (0.0,) * len(PREFIX_7),
                [(0, 0.0, 0.0)] * n_guardrails)
    metric_sql = "".join(f", {store.total(v)}, {store.total(f'({v}) * ({v})')}"
                         for j in range(n_guardrails)
                         for v in [store.json_item('metrics', j)])
    # a unit's covariate and denominator count with its reward (NULL reward: not counted)
    x, d = "(CASE WHEN reward IS NULL THEN 0 ELSE COALESCE(covariate, 0) END)", \
        "(CASE WHEN reward IS NULL THEN 0 ELSE COALESCE(denominator, 0) END)"
    extra_sql = ", ".join(store.total(e) for e in (
        x, f"{x} * {x}", f"{x} * reward", d, f"{d} * {d}", f"{d} * reward"))
    row = conn.execute(
        f"SELECT COUNT(reward), {store.total('imputed')}, COUNT(expired_at), "
        f"{store.total('reward')}, {store.total('reward * reward')}, "
        f"{store.count_if('reward <> 0 AND reward <> 1')}, {extra_sql}, "
        f"COUNT(metrics){metric_sql} "
        "FROM units WHERE arm = ? AND id >= ? AND id < ?", (arm, start, end)).fetchone()
    n, imputed, expired, total, total_sq, odd = row[:6]
    sums = (int(n), int(imputed), int(expired), float(total), float(total_sq), int(odd),
            *(float(v) for v in row[6:12]))
    with_metrics, values = int(row[12]), row[13:]
    return end, sums, [(with_metrics, float(values[2 * j]), float(values[2 * j + 1]))
                       for j in range(n_guardrails)]


def _spans(store: Store) -> str:
    """The CTEs ``span`` (``s``: the one cursor G as last stored — the largest of the arms'
    cursors, every one of which was G when last set — and ``e0``: the first unit of any arm
    still waiting at or after it) and ``moved`` (``e``: where G is now, never before ``s``):
    :func:`frontier`'s look-up inside the server. The walk from ``s`` reads the primary key
    from G's old value and stops at the first waiting unit: the units it passes are those
    G passes over, each once in the experiment's life."""
    return ("WITH base AS MATERIALIZED (SELECT COALESCE(MAX(cursor), 0) AS s FROM prefix), "
            "span AS MATERIALIZED (SELECT b.s AS s, COALESCE("
            "(SELECT w.id FROM units w WHERE w.id >= b.s AND w.reward IS NULL "
            "AND w.expired_at IS NULL ORDER BY w.id LIMIT 1), "
            "(SELECT COALESCE(MAX(x.id), 0) + 1 FROM units x)) AS e0 FROM base b), "
            # materialised: else SQLite re-evaluates the look-ups for each unit joined to them
            "moved AS MATERIALIZED (SELECT s, CASE WHEN e0 > s THEN e0 ELSE s END AS e "
            "FROM span) ")


def _advance_sql(store: Store, report: bool) -> str:
    """One upsert of ``prefix``: each arm with units in [G's old value, G's new one) gets the
    new G as its cursor and the sums of its units there (:func:`scan`'s counts, set-based).
    An arm with no unit there keeps its cursor: none of its units lies between that and G,
    so "the arm's units below its cursor" are still its units below G."""
    # a unit's covariate and denominator count with its reward (NULL reward: not counted),
    # the same sums as :func:`scan`'s
    x = "(CASE WHEN u.reward IS NULL THEN 0 ELSE COALESCE(u.covariate, 0) END)"
    d = "(CASE WHEN u.reward IS NULL THEN 0 ELSE COALESCE(u.denominator, 0) END)"
    extra = "".join(f", {store.total(v)}" for v in (
        x, f"{x} * {x}", f"{x} * u.reward", d, f"{d} * {d}", f"{d} * u.reward"))
    return (_spans(store)
            + "INSERT INTO prefix (arm, cursor, n, imputed, expired, reward, reward_sq, "
            f"non_binary, {', '.join(PREFIX_7)}) "
            "SELECT u.arm, m.e, COUNT(u.reward), COALESCE(SUM(u.imputed), 0), "
            f"COUNT(u.expired_at), {store.total('u.reward')}, "
            f"{store.total('u.reward * u.reward')}, "
            "COALESCE(SUM(CASE WHEN u.reward <> 0 AND u.reward <> 1 THEN 1 ELSE 0 END), 0)"
            f"{extra} "
            "FROM moved m JOIN units u ON u.id >= m.s AND u.id < m.e "
            "WHERE m.e > m.s GROUP BY u.arm, m.e "
            "ON CONFLICT (arm) DO UPDATE SET "
            "cursor = excluded.cursor, n = prefix.n + excluded.n, "
            "imputed = prefix.imputed + excluded.imputed, "
            "expired = prefix.expired + excluded.expired, "
            "reward = prefix.reward + excluded.reward, "
            "reward_sq = prefix.reward_sq + excluded.reward_sq, "
            "non_binary = prefix.non_binary + excluded.non_binary"
            + "".join(f", {c} = prefix.{c} + excluded.{c}" for c in PREFIX_7)
            + (" RETURNING arm" if report else ""))


def _advance_metrics_sql(store: Store, n_guardrails: int) -> str:
    """One upsert of ``prefix_metrics`` over the same spans (run before :func:`_advance_sql`
    moves the cursors): per (arm, guardrail), the metric values passed over and their sum."""
    sums = "".join(f", {store.total(v)} AS t{j}, {store.total(f'({v}) * ({v})')} AS q{j}"
                   for j in range(n_guardrails) for v in [store.json_item('u.metrics', j)])
    rows = " UNION ALL ".join(f"SELECT arm, {j} AS guardrail, n, t{j} AS total, q{j} AS "
                              "total_sq FROM msums WHERE n > 0" for j in range(n_guardrails))
    return (_spans(store)
            + f", msums AS (SELECT u.arm AS arm, COUNT(u.metrics) AS n{sums} "
            "FROM moved m JOIN units u ON u.id >= m.s AND u.id < m.e "
            "WHERE m.e > m.s GROUP BY u.arm) "
            "INSERT INTO prefix_metrics (arm, guardrail, n, total, total_sq) "
            f"SELECT arm, guardrail, n, total, total_sq FROM ({rows}) r WHERE true "
            "ON CONFLICT (arm, guardrail) DO UPDATE SET n = prefix_metrics.n + excluded.n, "
            "total = prefix_metrics.total + excluded.total, "
            "total_sq = prefix_metrics.total_sq + excluded.total_sq")


def plugin_catch_up(rows: list[tuple], plugin: PluginTuning) -> dict[int, tuple[int, np.ndarray]]:
    """The plug-in sums each arm's prefix should hold now, from the rows of
    :data:`banditkit.live.store.reads.PLUGIN_BEHIND` (the rewards between the arm's
    ``plugin_cursor``
    and ``cursor``, in assignment order, with its stored sums): arm → (``cursor``, sums).

    The rewards before them are the prefix's count and sums less theirs (the prefix's sums
    run to ``cursor``), which is the prior their λ_i and μ̂_{i−1} start from."""
    if not rows:
        return {}
    owner = np.array([int(r[0]) for r in rows])
    rewards = np.array([r[2] for r in rows], dtype=float)
    out = {}
    for a in np.unique(owner).tolist():
        mine = rewards[owner == a]
        first = rows[int(np.argmax(owner == a))]
        cursor = int(first[1])
        n, total, total_sq = (float(v) for v in first[3:6])
        sums = np.asarray(first[6:], dtype=float)
        prior = (n - mine.size, total - mine.sum(), total_sq - (mine * mine).sum())
        out[int(a)] = (cursor, sums + plugin.terms(mine, *prior))
    return out


#: The UPDATE that stores :func:`plugin_catch_up`'s sums: (Λ, Σλx, P^L, P^U, cursor, arm).
PLUGIN_UPDATE = (f"UPDATE prefix SET {' = ?, '.join(PREFIX_8)} = ?, plugin_cursor = ? "
                 "WHERE arm = ?")


def plugin_state(conn: Connection, arm: int, end: int, plugin: PluginTuning) -> np.ndarray:
    """The plug-in's sums of arm ``arm``'s rewards before unit id ``end``, from the first
    (O(units of the arm)): what :meth:`banditkit.Experiment.verify` checks the kept sums
    against."""
    rewards = [r for (r,) in conn.execute(
        "SELECT reward FROM units WHERE arm = ? AND id < ? AND reward IS NOT NULL ORDER BY id",
        (arm, end))]
    if not rewards:
        return np.zeros(len(PREFIX_8))
    return plugin.terms(np.array(rewards, dtype=float), 0.0, 0.0, 0.0)


def advance(conn: Connection, store: Store, arms: Iterable[int], n_guardrails: int,
            report: bool = True) -> bool:
    """Advance the one cursor G to the first unit of any arm still waiting, in the caller's
    transaction, after a call resolved units of ``arms`` (G moves only when a unit is
    resolved: with ``arms`` empty nothing is done). Every arm with units between G's old and
    new values gets the new G as its cursor and their sums. Returns whether any arm moved
    (with ``report``; without, ``True`` whenever ``arms`` is not empty: the caller needs no
    answer, and the statements are then writes only, which a pipelined connection sends
    without waiting — no round trip).

    One statement (two with guardrails), set-based: G's look-up (the largest stored cursor,
    the first waiting unit from there on the primary key) and the units passed over run
    inside the server, which is what keeps ``record`` within its round trips on PostgreSQL
    (issue 26). Cost: the units passed over (each once in the experiment's life) and
    O(arms) to read G's old value.

    The predictable plug-in's sums do not move here (they need the rewards passed over in
    order, in Python: a read that would cost ``record`` a round trip): the next call's
    first round trip reads them ahead (:func:`plugin_catch_up`).
    """
    if not {int(a) for a in arms}:
        return False
    if n_guardrails:
        conn.execute(_advance_metrics_sql(store, n_guardrails))
    cursor = conn.execute(_advance_sql(store, report))
    return bool(cursor.fetchall()) if report else True


def frontier(conn: Connection, start: int = 0) -> int:
    """The one cursor G: the smallest id at or after ``start`` of a unit of any arm still
    waiting (no reward, not expired), or one past the experiment's last unit id when none
    waits (units assigned later come after); never below ``start``. With ``start`` the
    stored G, the walk passes only the units G passes over."""
    row = conn.execute(
        "SELECT id FROM units WHERE id >= ? AND reward IS NULL AND expired_at IS NULL "
        "ORDER BY id LIMIT 1", (start,)).fetchone()
    if row is None:
        row = conn.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM units").fetchone()
    return max(int(row[0]), start)


def rebuild(conn: Connection, store: Store, n_arms: int, n_guardrails: int) -> None:
    """The prefix of every arm computed afresh from the units (O(units)): G from the first
    unit, every arm's units below it (a file brought from an older format, whose prefix
    followed another rule; its plug-in sums start from ``plugin_cursor`` 0: the caller
    catches them up)."""
    conn.execute("DELETE FROM prefix")
    conn.execute("DELETE FROM prefix_metrics")
    advance(conn, store, range(n_arms), n_guardrails)
