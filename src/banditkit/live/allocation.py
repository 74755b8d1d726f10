"""The published allocation: what an application downloads to assign its visitors itself.

A live experiment's algorithm asks for batches of per-arm slots. An application that assigns
each visitor *inside its own process* (:mod:`banditkit.client`, ``clients/js/``) needs only a
small document: the arms, a weight per arm, a salt for the hash and a **version**. This module
computes it (:func:`current`) and keeps every version published (:func:`remember`), so that
:mod:`banditkit.live.ingest` can check each exposure against the allocation it was made under
and log its propensity.

The weights, by the experiment's state:

- **batch** (the algorithm waits for slots): each arm's remaining slots of the pending batch
  (its pulls less the live units already on it), so the exposures that arrive fill the batch
  in the design's proportions;
- **sampling**: a Thompson-type policy (it exposes ``last_shares``, e.g.
  :class:`banditkit.policies.BatchedThompson`) publishes its own sampling probabilities (the
  control floor and minimum shares included), as GrowthBook's bandits publish theirs;
- **overflow**: every slot of the pending batch is taken and the algorithm waits for rewards:
  the overflow rule's shares (:func:`banditkit.live.overflow.design_shares`);
- **rollout**: finished, or stopped with a rollout arm: that arm alone;
- **control**: paused (by hand or by a guardrail), or stopped without rollout: the control
  alone. An application always gets something to do, never nothing.

A ``control_floor`` of the algorithm (its attribute, e.g. BatchedThompson's live default 0.2)
is applied to the weights of every mode but rollout and control.

The **version** is the first 16 hex digits of the SHA-256 of the canonical JSON of (batch, mode,
weights): it changes exactly when the weights (or the batch) change, and any process computes
the same version for the same state. The **salt** is fixed for the experiment's life (from its
creation time and seed), so a key's uniform number never changes; only the weights move.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ..protocol import IIDBatch
from .journal import ExperimentError
from .overflow import arms_in_play, design_shares
from .store import Connection

__all__ = ["DEFAULT_CACHE_SECONDS", "MODES", "Allocation", "current", "ensure_tables",
           "remember", "stored_versions"]

#: How long an application may use an allocation before asking again (seconds).
DEFAULT_CACHE_SECONDS = 5.0

#: The modes an allocation may be in (see the module docstring).
MODES = ("batch", "sampling", "overflow", "rollout", "control")

#: Digits of the weights kept in the version's hash (the weights themselves are published in
#: full): a change below 1e-12 is no change of the allocation.
_DIGITS = 12


@dataclass(frozen=True)
class Allocation:
    """One published allocation (JSON-able with :meth:`as_json`).

    Attributes
    ----------
    name : str
        The experiment's name.
    version : str
        16 hex digits; changes whenever ``weights``, ``mode`` or ``batch`` change.
    salt : str
        Hashed with each key (:mod:`banditkit.client`); fixed for the experiment's life.
    arms : list of str
        Every arm, in the experiment's order.
    weights : list of float
        One per arm, ≥ 0, summing to 1; an arm of weight 0 is not offered.
    mode : str
        One of :data:`MODES`.
    batch : int
        The algorithm's batch the allocation serves (the last one once finished).
    cache_seconds : float
        How long the application may keep it before asking again.
    reason : str
        One line: why these weights.
    """

    name: str
    version: str
    salt: str
    arms: list[str]
    weights: list[float]
    mode: str
    batch: int
    cache_seconds: float = DEFAULT_CACHE_SECONDS
    reason: str = ""

    def as_json(self) -> dict[str, Any]:
        """The document applications download (plain JSON values)."""
        return asdict(self)

    def offered(self, arm: int) -> bool:
        """Whether arm index ``arm`` has a positive weight."""
        return 0 <= arm < len(self.weights) and self.weights[arm] > 0


def version_of(batch: int, mode: str, weights: list[float]) -> str:
    """The version of an allocation (see the module docstring)."""
    text = json.dumps({"batch": int(batch), "mode": mode,
                       "weights": [round(float(w), _DIGITS) for w in weights]},
                      sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def salt_of(meta: dict[str, Any]) -> str:
    """The experiment's salt: 16 hex digits of the SHA-256 of its creation time and seed."""
    text = f"banditkit:{meta.get('created', '')}:{meta.get('seed', '')}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _floored(weights: np.ndarray, control: int, floor: float) -> np.ndarray:
    """``weights`` with the control raised to ``floor`` (the others scaled to 1 − floor)."""
    if floor <= 0 or weights[control] >= floor or weights.size < 2:
        return weights
    rest = 1.0 - weights[control]
    out = weights * ((1.0 - floor) / rest) if rest > 0 else np.zeros_like(weights)
    out[control] = floor
    return out


def _normalised(weights: np.ndarray) -> list[float]:
    weights = np.clip(np.asarray(weights, dtype=float), 0.0, None)
    total = float(weights.sum())
    if not np.isfinite(total) or total <= 0:
        raise ExperimentError("the allocation has no arm with a positive weight (a banditkit "
                              "bug: please report it)")
    return [float(w) for w in weights / total]


def current(experiment: Any, conn: Connection, name: str,
            cache_seconds: float = DEFAULT_CACHE_SECONDS) -> Allocation:
    """The allocation of ``experiment`` now, in the caller's transaction (the algorithm
    brought up to date by it).

    Parameters
    ----------
    experiment : Experiment
        The coordinator (its state, algorithm, pending batch and overflow rule are read).
    conn : Connection
        Its transaction.
    name : str
        The name published with it.
    cache_seconds : float
        Published as is.
    """
    K = len(experiment.arm_names)
    control = experiment.arm_names.index(experiment.control)
    state = experiment._ops_state(conn)
    stopped = state.get("stopped")
    paused = experiment._paused(conn, state)
    batch_id = max(experiment._observed - 1, 0)
    weights = np.zeros(K)
    if paused or (stopped is not None and not stopped.get("rollout", True)):
        weights[control] = 1.0
        mode = "control"
        reason = (paused or "the experiment was stopped without rollout") + \
            ": the control only"
    else:
        pending = None if stopped is not None else _pending(experiment, conn)
        if pending is None:
            arm, why = experiment._rollout_arm(conn)
            weights[arm] = 1.0
            mode, reason = "rollout", f"rollout of {experiment.arm_names[arm]!r} ({why})"
        else:
            batch_id, batch = pending
            weights, mode, reason = _live_weights(experiment, conn, batch_id, batch)
            weights = _floored(weights, control,
                               float(getattr(experiment._algorithm, "control_floor", 0.0)))
    published = _normalised(weights)
    return Allocation(name=name, version=version_of(batch_id, mode, published),
                      salt=salt_of(experiment._verdict_meta), arms=list(experiment.arm_names),
                      weights=published, mode=mode, batch=int(batch_id),
                      cache_seconds=float(cache_seconds), reason=reason)


def _pending(experiment: Any, conn: Connection) -> tuple[int, Any] | None:
    """(id, batch) of the algorithm's pending batch; a read-only experiment asks the algorithm
    without storing the batch (a writable one stores it, as ``assign`` does)."""
    if not experiment.readonly:
        return experiment._pending(conn)
    batch = experiment._ask()
    return None if batch is None else (experiment._observed, batch)


def _live_weights(experiment: Any, conn: Connection, batch_id: int, batch: Any
                  ) -> tuple[np.ndarray, str, str]:
    """The weights while the algorithm's batch ``batch_id`` waits: (weights, mode, reason)."""
    K = len(experiment.arm_names)
    shares = getattr(experiment._algorithm, "last_shares", None)
    if shares is not None and np.asarray(shares).shape == (K,):
        return (np.asarray(shares, dtype=float), "sampling",
                f"{experiment.algorithm_name}'s sampling probabilities for batch "
                f"{batch_id + 1}")
    if isinstance(batch, IIDBatch):  # drawn i.i.d. from a design: its probabilities, O(arms)
        return (np.diff(np.asarray(batch.cdf, dtype=float), prepend=0.0)[:K], "sampling",
                f"{experiment.algorithm_name}'s design probabilities for batch {batch_id + 1}")
    remaining = batch.allocation(K).astype(float)
    for arm, assigned in conn.execute("SELECT arm, assigned FROM totals WHERE batch = ?",
                                      (batch_id,)):
        experiment._check_arm_index(arm)
        remaining[arm] = max(remaining[arm] - assigned, 0.0)
    if remaining.sum() > 0:
        return (remaining, "batch",
                f"the remaining slots of batch {batch_id + 1} ({int(remaining.sum())} of "
                f"{batch.n_pulls})")
    rule = "design" if experiment.overflow == "off" else experiment.overflow
    overflow = design_shares(rule, batch, K, experiment.arm_names.index(experiment.control),
                             arms_in_play(experiment._algorithm, batch))
    return (overflow, "overflow",
            f"every slot of batch {batch_id + 1} is taken and the algorithm waits for their "
            f"rewards: overflow by the rule {rule!r}")


#: The tables of the edge (created by the first call that needs them, in either dialect).
_TABLES = (
    "CREATE TABLE IF NOT EXISTS edge_versions (version TEXT PRIMARY KEY, batch {int} NOT NULL, "
    "mode TEXT NOT NULL, weights TEXT NOT NULL, published_at TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS edge_units (unit {int} PRIMARY KEY, version TEXT NOT NULL, "
    "weight {real} NOT NULL, exposed_at {int} NOT NULL)",  # µs since the epoch
    "CREATE TABLE IF NOT EXISTS edge_slots (batch {int} NOT NULL, arm {int} NOT NULL, "
    "taken {int} NOT NULL, PRIMARY KEY (batch, arm))",
    "CREATE TABLE IF NOT EXISTS edge_outcomes (key TEXT PRIMARY KEY, value {real} NOT NULL, "
    "at TEXT NOT NULL, extra TEXT)",
    "CREATE TABLE IF NOT EXISTS edge_flags (reason TEXT PRIMARY KEY, count {int} NOT NULL)",
)


def ensure_tables(conn: Connection, types: dict[str, str]) -> None:
    """Create the edge's tables if they are not there (in the caller's transaction)."""
    for statement in _TABLES:
        conn.execute(statement.format(int=types.get("int", "INTEGER"),
                                      real=types.get("real", "REAL")))


def remember(conn: Connection, allocation: Allocation, at: str) -> None:
    """Keep ``allocation``'s version (in the caller's transaction), so that exposures made
    under it are checked and logged with their weight; a version kept already is left as is."""
    conn.execute("INSERT INTO edge_versions (version, batch, mode, weights, published_at) "
                 "VALUES (?, ?, ?, ?, ?) ON CONFLICT (version) DO NOTHING",
                 (allocation.version, allocation.batch, allocation.mode,
                  json.dumps(allocation.weights), at))


def stored_versions(conn: Connection, versions: list[str]
                    ) -> dict[str, tuple[int, str, list[float]]]:
    """The kept versions among ``versions``: version → (batch, mode, weights)."""
    found: dict[str, tuple[int, str, list[float]]] = {}
    for start in range(0, len(versions), 500):
        chunk = versions[start:start + 500]
        for version, batch, mode, weights in conn.execute(
                "SELECT version, batch, mode, weights FROM edge_versions WHERE version IN "
                f"({','.join('?' * len(chunk))})", tuple(chunk)):
            found[version] = (int(batch), mode, json.loads(weights))
    return found


def publish(experiment: Any, name: str | None = None,
            cache_seconds: float = DEFAULT_CACHE_SECONDS) -> Allocation:
    """:meth:`banditkit.Experiment.allocation`: the allocation now, kept (writable
    experiments) so that the exposures made under it are accepted by ``ingest``."""
    if (isinstance(cache_seconds, bool)
            or not isinstance(cache_seconds, (int, float, np.integer, np.floating))
            or not np.isfinite(cache_seconds) or not 0 < cache_seconds <= 86400):
        raise ExperimentError(f"cache_seconds must be a number of seconds in (0, 86400], got "
                              f"{cache_seconds!r}")
    if name is None:
        name = experiment.name if experiment.name is not None else (
            experiment.path.stem if experiment.path is not None else "experiment")
    elif not isinstance(name, str) or not name:
        raise ExperimentError(f"name must be a non-empty text, got {name!r}")
    writable = not experiment.readonly
    with experiment._transaction(resolve=writable) as conn:
        if writable:
            experiment._resolve(conn)
        allocation = current(experiment, conn, name, cache_seconds)
        if writable and getattr(experiment, "_edge_kept", None) != allocation.version:
            ensure_tables(conn, experiment._journal.types)
            remember(conn, allocation, experiment._stamp())
    if writable:
        experiment._edge_kept = allocation.version  # committed: not asked again
    return allocation
