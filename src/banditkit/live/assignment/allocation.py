"""The published allocation: what an application downloads to assign its visitors itself.

A live experiment's algorithm asks for batches of per-arm slots. An application that assigns
each visitor *inside its own process* (:mod:`banditkit.client`, ``clients/js/``) needs only a
small document: the arms, a weight per arm, a salt for the hash and a **version**. This module
computes it (:meth:`Allocator.current`) and keeps every version published
(:meth:`Allocator.remember`, in the store's ``edge_versions``), so that
:mod:`banditkit.live.outcomes.ingest` can check each exposure against the allocation it was made
under and log its propensity.

The weights, by the experiment's state:

- **batch** (the algorithm waits for slots): each arm's remaining slots of the pending batch
  (its pulls less the live units already on it), so the exposures that arrive fill the batch
  in the design's proportions;
- **sampling**: a Thompson-type policy (it exposes ``last_shares``, e.g.
  :class:`banditkit.policies.BatchedThompson`) publishes its own sampling probabilities (the
  control floor and minimum shares included), as GrowthBook's bandits publish theirs;
- **overflow**: every slot of the pending batch is taken and the algorithm waits for rewards:
  the overflow rule's shares (:func:`banditkit.live.assignment.overflow.design_shares`);
- **rollout**: finished, or stopped with a rollout arm: that arm alone;
- **control**: paused (by hand or by a guardrail), or stopped without rollout: the control
  alone. An application always gets something to do, never nothing.

An algorithm whose batch is drawn i.i.d. from a design (:class:`banditkit.protocol.IIDBatch`:
G-BAI, P1-RAGE, ...) is refused while such a batch waits: its pulls come from the experiment's
internal randomness ξ, on which its replicability rests, and a hash of the application's keys
would replace them; it is served by ``assign``/``record``.

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

from ...protocol import Batch, IIDBatch
from ..definition import Definition, LiveClock
from ..errors import ExperimentError
from ..journal.replay import Journal
from ..store import Connection, Store
from .operations import Operations
from .overflow import arms_in_play, design_shares

__all__ = ["DEFAULT_CACHE_SECONDS", "MODES", "Allocation", "Allocator", "check_publish"]

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


def check_publish(name: object, cache_seconds: object, default_name: str) -> tuple[str, float]:
    """:meth:`banditkit.Experiment.allocation`'s arguments checked: (name, cache_seconds)."""
    if (isinstance(cache_seconds, bool)
            or not isinstance(cache_seconds, (int, float, np.integer, np.floating))
            or not np.isfinite(cache_seconds) or not 0 < cache_seconds <= 86400):
        raise ExperimentError(f"cache_seconds must be a number of seconds in (0, 86400], got "
                              f"{cache_seconds!r}")
    if name is None:
        return default_name, float(cache_seconds)
    if not isinstance(name, str) or not name:
        raise ExperimentError(f"name must be a non-empty text, got {name!r}")
    return name, float(cache_seconds)


class Allocator:
    """One experiment's published allocations (see the module docstring): computed from the
    operator's state (:class:`.operations.Operations`) and the journal's pending batch, kept
    in the store's edge tables (:func:`banditkit.live.store.schema.edge_tables`). Every method
    but :meth:`committed` runs in the caller's transaction."""

    def __init__(self, definition: Definition, store: Store, clock: LiveClock,
                 journal: Journal, operations: Operations) -> None:
        self._def = definition
        self._store = store
        self._clock = clock
        self._journal = journal
        self._operations = operations
        #: the version this process last kept (set once its call committed: :meth:`committed`)
        self._kept: str | None = None

    def committed(self, kept: Allocation) -> None:
        """The call that kept ``kept`` committed: this process does not keep it again."""
        self._kept = kept.version

    # -- the allocation ------------------------------------------------------------------------
    def publish(self, conn: Connection, name: str, cache_seconds: float, writable: bool
                ) -> Allocation:
        """``Experiment.allocation`` in the caller's transaction (arguments checked, units
        resolved): the allocation now, kept when ``writable`` and new to this process (the
        caller then calls :meth:`committed` with it)."""
        allocation = self.current(conn, name, cache_seconds, store_batch=writable)
        if writable and self._kept != allocation.version:
            self.remember(conn, allocation)
        return allocation

    def current(self, conn: Connection, name: str,
                cache_seconds: float = DEFAULT_CACHE_SECONDS, *, store_batch: bool = True
                ) -> Allocation:
        """The allocation now (the journal brought up to date by the caller's transaction).
        ``store_batch``: the pending batch is stored if new (as ``assign`` does); a read-only
        call asks the algorithm without storing it."""
        d = self._def
        K, control = d.n_arms, d.control_index
        operations, journal = self._operations, self._journal
        state = operations.state(conn)
        stopped = state.get("stopped")
        paused = operations.paused(conn, state)
        batch_id = max(journal.observed - 1, 0)
        weights = np.zeros(K)
        if paused or (stopped is not None and not stopped.get("rollout", True)):
            weights[control] = 1.0
            mode = "control"
            reason = (paused or "the experiment was stopped without rollout") + \
                ": the control only"
        else:
            pending = None if stopped is not None else self._pending(conn, store_batch)
            if pending is None:
                arm, why = operations.rollout_arm(conn)
                weights[arm] = 1.0
                mode, reason = "rollout", f"rollout of {d.arm_names[arm]!r} ({why})"
            else:
                batch_id, batch = pending
                weights, mode, reason = self._live_weights(conn, batch_id, batch)
                weights = _floored(weights, control, float(
                    getattr(journal.algorithm, "control_floor", 0.0)))
        published = _normalised(weights)
        return Allocation(name=name, version=version_of(batch_id, mode, published),
                          salt=salt_of(d.meta), arms=list(d.arm_names), weights=published,
                          mode=mode, batch=int(batch_id), cache_seconds=float(cache_seconds),
                          reason=reason)

    def _pending(self, conn: Connection, store_batch: bool) -> tuple[int, Batch] | None:
        """(id, batch) of the algorithm's pending batch, stored if new with ``store_batch``."""
        if store_batch:
            return self._journal.pending(conn)
        batch = self._journal.ask()
        return None if batch is None else (self._journal.observed, batch)

    def _live_weights(self, conn: Connection, batch_id: int, batch: Batch
                      ) -> tuple[np.ndarray, str, str]:
        """The weights while the algorithm's batch ``batch_id`` waits: (weights, mode,
        reason)."""
        d = self._def
        K = d.n_arms
        algorithm = self._journal.algorithm
        shares = getattr(algorithm, "last_shares", None)
        if shares is not None and np.asarray(shares).shape == (K,):
            return (np.asarray(shares, dtype=float), "sampling",
                    f"{d.algorithm_name}'s sampling probabilities for batch {batch_id + 1}")
        if isinstance(batch, IIDBatch):
            raise ExperimentError(
                f"allocation: {d.algorithm_name} draws each batch's pulls i.i.d. from its "
                "design with the experiment's internal randomness (its replicability rests on "
                "those draws), so an application cannot assign its arms by a hash; serve it "
                "with assign/record")
        remaining = batch.allocation(K).astype(float)
        for arm, assigned in conn.execute("SELECT arm, assigned FROM totals WHERE batch = ?",
                                          (batch_id,)):
            d.check_arm(arm)
            remaining[arm] = max(remaining[arm] - assigned, 0.0)
        if remaining.sum() > 0:
            return (remaining, "batch",
                    f"the remaining slots of batch {batch_id + 1} ({int(remaining.sum())} of "
                    f"{batch.n_pulls})")
        rule = "design" if d.overflow == "off" else d.overflow
        overflow = design_shares(rule, batch, K, d.control_index,
                                 arms_in_play(algorithm, batch))
        return (overflow, "overflow",
                f"every slot of batch {batch_id + 1} is taken and the algorithm waits for "
                f"their rewards: overflow by the rule {rule!r}")

    # -- the versions kept ---------------------------------------------------------------------
    def remember(self, conn: Connection, allocation: Allocation) -> None:
        """Keep ``allocation``'s version, so that exposures made under
        it are checked and logged with their weight; a version kept already is left as is."""
        conn.execute("INSERT INTO edge_versions (version, batch, mode, weights, published_at) "
                     "VALUES (?, ?, ?, ?, ?) ON CONFLICT (version) DO NOTHING",
                     (allocation.version, allocation.batch, allocation.mode,
                      json.dumps(allocation.weights), self._clock.stamp()))

    @staticmethod
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
