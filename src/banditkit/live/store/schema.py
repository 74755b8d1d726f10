"""The stored form of a live experiment, whatever holds it (an SQLite file,
:mod:`banditkit.live.store.sqlite`, or a schema of a PostgreSQL database,
:mod:`banditkit.live.store.postgres`): its definition, the batches the algorithm asked for, and
every unit (user, session) assigned to an arm with its reward.

Both backends hold the same tables (:func:`schema` writes them in either dialect's types), so
the experiment's SQL is one text (:mod:`banditkit.live.store` names the few differences).
Every public call of :class:`banditkit.Experiment` is one write transaction that takes the
experiment's write lock first, so two processes on one experiment are serialised, and a process
killed at any point leaves either the whole call or nothing.

Tables
------
``meta``
    ``key → JSON value``: format version, algorithm, parameters, seed, arms, horizon.
``batches``
    One row per batch the algorithm asked for, in order (``id`` 0, 1, ...): the SHA-256
    ``digest`` of its runs, ``handed`` (slots handed out so far: the cursor of the batch's slot
    order), and once every unit of it has a reward, the run sums the algorithm observed (JSON).
``runs``
    Each batch's runs, ``arms`` and ``counts`` as little-endian int64 arrays
    (:func:`pack_runs`); a table of their own, so that reading or updating a batch's small
    columns never walks the megabytes of an i.i.d. batch's runs.
``draws``
    Instead of runs, for a batch drawn i.i.d. from a design (G-BAI, P1-RAGE, P1-Peace,
    Mixed-Peace: :class:`banditkit.protocol.IIDBatch`): the design's ``cdf`` (little-endian
    float64), ξ's PCG64 ``state`` at its first pull (JSON) and ``n_pulls`` — O(arms) however
    many pulls, and the digest is that of this description (:func:`pack_draws`).
``units``
    One row per assignment: its batch, its ``slot`` (position in the batch's pull order), the
    arm, the reward and costs once recorded, or the time it expired, its ``segment`` label
    (format 11; NULL without one); ``imputed`` 1 when the
    reward is the 0 the outcome window's rule ``missing="zero"`` recorded
    (:mod:`banditkit.live.outcomes.window`). A slot holds at most one unit that has not expired
    (a partial unique index); ``units_arm`` indexes each arm's units in assignment order.
``totals``
    Running sums per (batch, arm) over the units that have not expired — ``assigned``,
    ``recorded``, ``reward``, ``reward_sq``, ``non_binary`` (rewards other than 0 and 1) — and
    the same per arm over all batches in the rows of batch −1, updated in the transaction that
    changes the units: a call reads O(arms) of them instead of every unit of the batch.
``metric_totals``
    The same for the guardrail metrics (:mod:`banditkit.live.readout.guardrails`): per (batch, arm,
    guardrail index) the values recorded and their sum (a unit's own values are in
    ``units.metrics``, a JSON list in the guardrails' order), batch −1 summing all batches.
``pauses``
    One row per (guardrail, arm) breach: when it was found, what the interval was, and when a
    person resumed the experiment (``resumed_at``; NULL while it pauses the experiment).
``prefix``
    Per arm, the **resolved prefix** (:mod:`banditkit.live.outcomes.resolved_prefix`): ``cursor``,
    the one cursor G — the first unit of any arm (in assignment order, ``units.id``) still waiting
    for an outcome — when the arm was last advanced (the largest cursor is G now; the arm has
    no unit between its own cursor and G), and over the arm's units before it the outcomes
    counted (``n``, the
    imputed zeros among them, ``reward``, ``reward_sq``, ``non_binary``) and the units expired
    (``expired``), and the predictable plug-in's sums (``plugin_*``, format 8): what
    ``status`` reads its intervals and verdicts from, O(arms).
``prefix_metrics``
    The same per (arm, guardrail): the metric values of the prefix's units and their sum.
``keys``
    External unit keys (user ids, as text) given to ``assign(keys=...)``: one row per unit
    that has a key. A key points to at most one unit at a time (a partial unique index over
    the rows not ``superseded_at``); when its unit expired and the key came back, the old row
    is marked superseded and a new one names the new unit, so the log keeps both.
``audit``
    One row per operator action (create, pause, resume, stop, archive, expire): when, who (a
    service's token id, or ``"local"``), what, and its detail (JSON).
``edge_versions``, ``edge_units``, ``edge_slots``, ``edge_outcomes``, ``edge_flags``
    Assignment at the edge (format 10, :func:`edge_tables`): the allocation versions
    published (:mod:`banditkit.live.assignment.allocation`), each exposed unit's version,
    weight and exposure time, the slots taken per (batch, arm), the outcomes waiting for their
    exposure, and the exposures refused as a broken client's, by reason
    (:mod:`banditkit.live.outcomes.ingest`).

Overflow and rollout units (:mod:`banditkit.live.assignment.overflow`) are rows of ``units`` too,
with ``kind`` 1 (overflow: beyond the algorithm's pending slots) or 2 (rollout: after the
experiment finished or was stopped), slot −1, the ``propensity`` with which the rule drew
their arm, and their running sums in the ``totals`` rows of batch −2 only
(:data:`OVERFLOW_TOTALS`): the algorithm's per-batch and all-batch totals never see them.
"""

from __future__ import annotations

__all__ = ["ALGORITHM", "ALL_BATCHES", "EDGE_NOT_OFFERED", "EDGE_TWO_ARMS", "FORMAT", "KINDS",
           "OVERFLOW", "OVERFLOW_TOTALS", "ROLLOUT", "edge_tables", "schema", "upgrade_5_to_6",
           "upgrade_6_to_7", "upgrade_7_to_8", "upgrade_9_to_10",
           "upgrade_10_to_11"]

#: Version of the stored layout (the same on both backends); a file of another version is
#: refused, never guessed at.
#: 2: runs stored as int64 arrays with a digest, per-(batch, arm) running totals.
#: 3: i.i.d. batches stored as their description (``draws``), observed from per-arm sums.
#: 4: the ``keys`` table (sticky units: external keys → units).
#: 5: guardrail metrics (``units.metrics``, ``metric_totals``) and their breaches (``pauses``).
#: 6: the outcome window (``units.imputed``, meta ``outcome_window``/``missing``), the
#:    resolved prefix (``prefix``, ``prefix_metrics``, index ``units_arm``), overflow and
#:    rollout units (``units.kind``, ``units.propensity``) and the ``audit`` table. A writable
#:    open of a format 5 experiment brings it to 6 (:func:`upgrade_5_to_6`).
#: 7: per-unit ``covariate`` (CUPED) and ``denominator`` (ratio metrics) in ``units``, their
#:    sums in ``prefix``, and ``total_sq`` in ``prefix_metrics`` (continuous guardrails);
#:    a writable open of a format 6 experiment brings it to 7 (:func:`upgrade_6_to_7`).
#: 8: the predictable plug-in's per-arm sums in ``prefix`` (:data:`PREFIX_8`: the exact
#:    default sequence, :mod:`banditkit.live.readout.sequences`); a writable open of a format 5, 6
#:    or 7 experiment brings it to 8 and rebuilds the prefix from its units
#:    (:func:`upgrade_7_to_8`).
#: 9: one cursor for all arms (issue 23): ``prefix`` holds, per arm, the sums of its units
#:    before G, the first unit of *any* arm still waiting (format 8 summed each arm's units
#:    before its own first waiting unit). The tables are unchanged; a writable open of a
#:    format 5 to 8 experiment brings it to 9 and rebuilds the prefix from its units.
#: 10: the edge's tables (:func:`edge_tables`, issue 38); a writable open of a format 5 to 9
#:    experiment creates them (:func:`upgrade_9_to_10`; an experiment fed from the edge before
#:    they were in the schema created them on its first use: ``IF NOT EXISTS`` keeps those).
#: 11: the unit's ``segment`` label in ``units`` (``assign(segments=...)``, the metric family
#:    per segment: :mod:`banditkit.live.readout.segments`); a writable open of a format 5 to 10
#:    experiment adds the column, NULL for every old unit (:func:`upgrade_10_to_11`).
FORMAT = 11

#: The ``batch`` of the ``totals`` rows that sum the overflow and rollout units (per arm).
OVERFLOW_TOTALS = -2

#: ``units.kind``: a unit of the algorithm's batch, an overflow unit, a rollout unit.
ALGORITHM, OVERFLOW, ROLLOUT = 0, 1, 2
KINDS = {ALGORITHM: "algorithm", OVERFLOW: "overflow", ROLLOUT: "rollout"}

#: The ``batch`` of the ``totals`` rows that sum every batch (per arm).
ALL_BATCHES = -1

#: What format 6 added to format 5 (the new experiment's tables hold them too).
_PREFIX_TEMPLATE = """CREATE INDEX units_arm ON units(arm, id);
CREATE TABLE prefix (
    arm {int} PRIMARY KEY,
    cursor {int} NOT NULL DEFAULT 0,
    n {int} NOT NULL DEFAULT 0,
    imputed {int} NOT NULL DEFAULT 0,
    expired {int} NOT NULL DEFAULT 0,
    reward {real} NOT NULL DEFAULT 0,
    reward_sq {real} NOT NULL DEFAULT 0,
    non_binary {int} NOT NULL DEFAULT 0{prefix7}
);
CREATE TABLE prefix_metrics (
    arm {int} NOT NULL,
    guardrail {int} NOT NULL,
    n {int} NOT NULL DEFAULT 0,
    total {real} NOT NULL DEFAULT 0,{metrics7}
    PRIMARY KEY (arm, guardrail)
);
"""

#: The sums format 7 adds to ``prefix`` (covariate x and denominator d of the counted units:
#: Σx, Σx², Σxy, Σd, Σd², Σdy) and to ``prefix_metrics`` (Σ value²).
PREFIX_7 = ("covariate", "covariate_sq", "covariate_reward", "denominator", "denominator_sq",
            "denominator_reward")
_PREFIX_7 = "".join(f",\n    {c} {{real}} NOT NULL DEFAULT 0" for c in PREFIX_7)
_METRICS_7 = "\n    total_sq {real} NOT NULL DEFAULT 0,"

#: The sums format 8 adds to ``prefix``: the predictable plug-in's Λ = Σλ_i, Σλ_i·x_i and its
#: two penalties (:data:`banditkit.live.readout.plugin.PLUGIN_SUMS`, rewards rescaled to [0, 1]),
#: over the arm's counted rewards in assignment order before ``plugin_cursor`` (a unit id:
#: they follow the prefix's ``cursor`` one call behind,
#:mod:`banditkit.live.outcomes.resolved_prefix`).
PREFIX_8 = ("plugin_lam", "plugin_lam_x", "plugin_pen_low", "plugin_pen_high")
_PREFIX_8 = ("".join(f",\n    {c} {{real}} NOT NULL DEFAULT 0" for c in PREFIX_8)
             + ",\n    plugin_cursor {int} NOT NULL DEFAULT 0")

_SCHEMA_TEMPLATE = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE batches (
    id {int} PRIMARY KEY,
    digest TEXT NOT NULL,
    strategy TEXT,
    n_pulls {int} NOT NULL,
    handed {int} NOT NULL DEFAULT 0,
    asked_at TEXT NOT NULL,
    reward_sums TEXT,
    cost_sums TEXT,
    observed_at TEXT
);
CREATE TABLE runs (
    batch {int} PRIMARY KEY REFERENCES batches(id),
    arms {blob} NOT NULL,
    counts {blob} NOT NULL
);
CREATE TABLE draws (
    batch {int} PRIMARY KEY REFERENCES batches(id),
    cdf {blob} NOT NULL,
    state TEXT NOT NULL,
    n_pulls {int} NOT NULL
);
CREATE TABLE units (
    id {serial},
    batch {int} NOT NULL REFERENCES batches(id),
    slot {int} NOT NULL,
    arm {int} NOT NULL,
    assigned_at TEXT NOT NULL,
    reward {real},
    costs TEXT,
    metrics TEXT,
    recorded_at TEXT,
    expired_at TEXT,
    imputed {int} NOT NULL DEFAULT 0,
    kind {int} NOT NULL DEFAULT 0,
    propensity {real},
    covariate {real},
    denominator {real},
    segment TEXT
);
CREATE UNIQUE INDEX units_live_slot ON units(batch, slot) WHERE expired_at IS NULL AND kind = 0;
CREATE INDEX units_expired_slot ON units(batch, slot) WHERE expired_at IS NOT NULL;
CREATE INDEX units_waiting ON units(assigned_at) WHERE reward IS NULL AND expired_at IS NULL;
{prefix}CREATE TABLE totals (
    batch {int} NOT NULL,
    arm {int} NOT NULL,
    assigned {int} NOT NULL DEFAULT 0,
    recorded {int} NOT NULL DEFAULT 0,
    reward {real} NOT NULL DEFAULT 0,
    reward_sq {real} NOT NULL DEFAULT 0,
    non_binary {int} NOT NULL DEFAULT 0,
    PRIMARY KEY (batch, arm)
);
CREATE TABLE metric_totals (
    batch {int} NOT NULL,
    arm {int} NOT NULL,
    guardrail {int} NOT NULL,
    n {int} NOT NULL DEFAULT 0,
    total {real} NOT NULL DEFAULT 0,
    PRIMARY KEY (batch, arm, guardrail)
);
CREATE TABLE pauses (
    id {serial},
    guardrail {int} NOT NULL,
    arm {int} NOT NULL,
    breached_at TEXT NOT NULL,
    detail TEXT NOT NULL,
    resumed_at TEXT,
    UNIQUE (guardrail, arm)
);
CREATE TABLE keys (
    unit {int} PRIMARY KEY REFERENCES units(id),
    key TEXT NOT NULL,
    superseded_at TEXT
);
CREATE UNIQUE INDEX keys_current ON keys(key) WHERE superseded_at IS NULL;
{audit}"""

_AUDIT = """
CREATE TABLE audit (
    id {serial},
    at TEXT NOT NULL,
    who TEXT NOT NULL,
    action TEXT NOT NULL,
    detail TEXT
);
"""

#: What turns a format-5 experiment into format 6 (one transaction, either dialect): the
#: units' kind and propensity (every old unit is an algorithm unit), the live-slot index
#: restricted to algorithm units, and the audit table.
_UPGRADE_TEMPLATE = """
ALTER TABLE units ADD COLUMN kind {int} NOT NULL DEFAULT 0;
ALTER TABLE units ADD COLUMN propensity {real};
DROP INDEX units_live_slot;
CREATE UNIQUE INDEX units_live_slot ON units(batch, slot) WHERE expired_at IS NULL AND kind = 0;
"""

#: Column types per dialect: SQLite's (the text of every FORMAT 5 file, unchanged) and
#: PostgreSQL's (64-bit integers, as SQLite's INTEGER is; doubles; bytes).
SQLITE_TYPES = {"int": "INTEGER", "real": "REAL", "blob": "BLOB",
                "serial": "INTEGER PRIMARY KEY AUTOINCREMENT"}
POSTGRES_TYPES = {"int": "BIGINT", "real": "DOUBLE PRECISION", "blob": "BYTEA",
                  "serial": "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"}


def _prefix_tables(types: dict[str, str]) -> str:
    return _PREFIX_TEMPLATE.format(**types, prefix7=_PREFIX_7.format(**types)
                                   + _PREFIX_8.format(**types),
                                   metrics7=_METRICS_7.format(**types))


def schema(types: dict[str, str]) -> str:
    """The tables and indexes (the module docstring) in one dialect's column types."""
    return _SCHEMA_TEMPLATE.format(**types, prefix=_prefix_tables(types),
                                   audit=_AUDIT.format(**types)) + "".join(
        f"{statement};\n" for statement in edge_tables(types))


def upgrade_5_to_6(types: dict[str, str]) -> list[str]:
    """The statements that bring a format 5 experiment's tables to format 6 (run in one
    transaction; the prefix's sums are then built from the units by the experiment): the
    outcome window's column and the prefix tables, the units' kind and propensity (every old
    unit is an algorithm unit), the live-slot index restricted to algorithm units, the audit
    table."""
    statements = [f"ALTER TABLE units ADD COLUMN imputed {types['int']} NOT NULL DEFAULT 0"]
    statements += [s.strip() for s in _prefix_tables(types).split(";") if s.strip()]
    statements += [s.strip() for s in (_UPGRADE_TEMPLATE.format(**types)
                                       + _AUDIT.format(**types)).split(";") if s.strip()]
    return statements


def upgrade_6_to_7(types: dict[str, str], *, prefix_tables: bool = True) -> list[str]:
    """The statements that bring a format 6 experiment's tables to format 7 (one transaction;
    the experiment then rebuilds the prefix's sums from its units): the units' ``covariate``
    and ``denominator`` (NULL for every old unit), and the prefix's new sums. With
    ``prefix_tables=False`` (a format 5 file, whose prefix tables :func:`upgrade_5_to_6` just
    created at format 7) only the units' columns."""
    out = [f"ALTER TABLE units ADD COLUMN {c} {types['real']}" for c in ("covariate",
                                                                         "denominator")]
    if prefix_tables:
        out += [f"ALTER TABLE prefix ADD COLUMN {c} {types['real']} NOT NULL DEFAULT 0"
                for c in PREFIX_7]
        out.append(f"ALTER TABLE prefix_metrics ADD COLUMN total_sq {types['real']} NOT NULL "
                   "DEFAULT 0")
    return out


def upgrade_7_to_8(types: dict[str, str]) -> list[str]:
    """The statements that bring a format 6 or 7 experiment's ``prefix`` to format 8 (one
    transaction; the experiment then rebuilds the prefix, plug-in sums included, from its
    units): the plug-in's four sums (:data:`PREFIX_8`)."""
    return [f"ALTER TABLE prefix ADD COLUMN {c} {types['real']} NOT NULL DEFAULT 0"
            for c in PREFIX_8] + [f"ALTER TABLE prefix ADD COLUMN plugin_cursor {types['int']} "
                                  "NOT NULL DEFAULT 0"]


#: The tables of an experiment fed from the edge (:mod:`banditkit.live.assignment.allocation`,
#: :mod:`banditkit.live.outcomes.ingest`), format 10: the allocation versions published, each
#: exposed unit's version, weight and exposure time (µs since the epoch), the slots taken per
#: (batch, arm), the outcomes waiting for their exposure, and the exposures refused as a broken
#: client's, by reason.
_EDGE_TABLES = (
    "CREATE TABLE IF NOT EXISTS edge_versions (version TEXT PRIMARY KEY, batch {int} NOT NULL, "
    "mode TEXT NOT NULL, weights TEXT NOT NULL, published_at TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS edge_units (unit {int} PRIMARY KEY, version TEXT NOT NULL, "
    "weight {real} NOT NULL, exposed_at {int} NOT NULL)",
    "CREATE TABLE IF NOT EXISTS edge_slots (batch {int} NOT NULL, arm {int} NOT NULL, "
    "taken {int} NOT NULL, PRIMARY KEY (batch, arm))",
    "CREATE TABLE IF NOT EXISTS edge_outcomes (key TEXT PRIMARY KEY, value {real} NOT NULL, "
    "at TEXT NOT NULL, extra TEXT)",
    "CREATE TABLE IF NOT EXISTS edge_flags (reason TEXT PRIMARY KEY, count {int} NOT NULL)",
)

#: ``edge_flags`` reasons: an exposure to an arm its version did not offer; a key exposed on
#: two arms (signs of a broken client, shown by ``status``).
EDGE_NOT_OFFERED, EDGE_TWO_ARMS = "arm_not_offered", "key_on_two_arms"


def edge_tables(types: dict[str, str]) -> list[str]:
    """The edge's ``CREATE TABLE IF NOT EXISTS`` statements in one dialect's column types."""
    return [s.format(**types) for s in _EDGE_TABLES]


def upgrade_9_to_10(types: dict[str, str]) -> list[str]:
    """The statements that bring a format 5 to 9 experiment's tables to format 10 (after the
    older upgrades, one transaction): the edge's tables, unless a first use of the edge before
    format 10 created them already."""
    return edge_tables(types)


def upgrade_10_to_11(types: dict[str, str]) -> list[str]:
    """The statement that brings a format 5 to 10 experiment's ``units`` to format 11 (after
    the older upgrades, one transaction): the ``segment`` label, NULL (no segment) for every
    old unit."""
    return ["ALTER TABLE units ADD COLUMN segment TEXT"]
