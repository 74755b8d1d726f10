"""What an operator does to a live experiment besides traffic: pause it by hand, stop it (and roll
out a winner), archive it, and the audit log of every such action. The operations part of
:class:`banditkit.Experiment`: its methods run in the transaction the experiment opens for the
call (``conn``), and read the definition, the clock and (for the rollout arm) the journal's
algorithm.

State lives in the experiment's ``meta`` table, read in the transaction of each call (another
process may have stopped it): ``paused`` (a manual pause: when, who, why), ``stopped`` (when,
who, the rollout arm or none) and ``archived``. Every action writes one row of the ``audit``
table (:mod:`banditkit.live.store.schema`) in the same transaction: who (a service's token id, or
``"local"`` for a call in this process), what, when, and its detail.

- ``pause``: ``assign`` hands out nothing until ``resume`` (as a guardrail's breach does);
  units already assigned are still recorded.
- ``stop``: the algorithm is done (no more of its slots are handed out; units it is waiting
  for may still be recorded); with ``rollout=True`` (default) every later ``assign`` serves
  the rollout arm (:mod:`banditkit.live.assignment.overflow`), without it ``assign`` returns
  no units.
- ``archive``: stopped for good, no rollout; ``record`` still takes late outcomes; only an
  archived experiment can be deleted (:meth:`banditkit.Experiment.delete`).
- ``correct`` (:mod:`banditkit.live.outcomes.corrections`): its audit row keeps what each
  unit's counted reward becomes, and ``meta``'s ``corrections`` counts the calls, read with
  this state so that a readout knows at no cost whether it has corrections to count
  (:meth:`Operations.count_correction`).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

from ..definition import Definition, LiveClock
from ..errors import ExperimentError
from ..journal.replay import Journal
from ..readout.leader import leader
from ..store import Connection
from ..store.reads import CORRECTED, ops_state
from ..store.schema import ALL_BATCHES

__all__ = ["Operations", "check_reason", "check_stop", "check_who"]


def check_who(who: object) -> str:
    """Who acts, as the audit row stores it: a non-empty text of at most 200 characters."""
    if not isinstance(who, str) or not who.strip() or len(who) > 200:
        raise ExperimentError(f"who must be a non-empty text of at most 200 characters (a "
                              f"token id, a person), got {who!r}")
    return who


def check_reason(reason: object) -> str:
    """Why an operator pauses: a non-empty text of at most 500 characters."""
    if not isinstance(reason, str) or not reason.strip() or len(reason) > 500:
        raise ExperimentError(f"reason must be a non-empty text of at most 500 characters, "
                              f"got {reason!r}")
    return reason


def check_stop(arm: object, rollout: object, arm_names: list[str]) -> None:
    """``stop``'s arguments: an arm name or ``None``, and a boolean ``rollout``."""
    if not isinstance(rollout, bool):
        raise ExperimentError(f"rollout must be True or False, got {rollout!r}")
    if arm is not None and (not isinstance(arm, str) or arm not in arm_names):
        raise ExperimentError(f"arm must be one of the arm names {arm_names}, got {arm!r}")


class Operations:
    """The operator's state of one experiment and the actions on it (see the module
    docstring); every method runs in the caller's transaction ``conn``."""

    def __init__(self, definition: Definition, clock: LiveClock, journal: Journal) -> None:
        self._def = definition
        self._clock = clock
        self._journal = journal

    # -- state -------------------------------------------------------------------------------
    @staticmethod
    def state(conn: Connection) -> dict[str, Any]:
        """The operator's state: ``paused``, ``stopped``, ``archived``, ``corrections`` (the
        calls that recorded corrections), each absent when not set, and ``edge`` once the
        experiment is fed from the edge (:mod:`banditkit.live.outcomes.ingest`)."""
        return {k: json.loads(v) for k, v in conn.execute(*ops_state())}

    @staticmethod
    def _set_state(conn: Connection, key: str, value: Any) -> None:
        conn.execute("DELETE FROM meta WHERE key = ?", (key,))
        if value is not None:
            conn.execute("INSERT INTO meta (key, value) VALUES (?, ?)", (key, json.dumps(value)))

    def count_correction(self, conn: Connection) -> None:
        """One more call that recorded corrections (``state()["corrections"]``: the readout
        then counts the corrected values)."""
        self._set_state(conn, CORRECTED, int(self.state(conn).get(CORRECTED, 0)) + 1)

    def audit(self, conn: Connection, who: str, action: str, detail: Any = None) -> None:
        """One audit row (at the experiment's clock)."""
        conn.execute("INSERT INTO audit (at, who, action, detail) VALUES (?, ?, ?, ?)",
                     (self._clock.stamp(), who, action,
                      None if detail is None else json.dumps(detail)))

    @staticmethod
    def audit_log(conn: Connection) -> pd.DataFrame:
        """The audit table, oldest first (``Experiment.audit``)."""
        rows = conn.execute("SELECT id, at, who, action, detail FROM audit ORDER BY id"
                            ).fetchall()
        return pd.DataFrame(rows, columns=["id", "at", "who", "action", "detail"])

    def paused(self, conn: Connection, state: dict[str, Any] | None = None) -> str | None:
        """Why the experiment is paused (by hand: ``state["paused"]``, read from ``meta`` when
        not given; or by its guardrails' breaches not yet resumed), or ``None``."""
        manual = (self.state(conn) if state is None else state).get("paused")
        if manual is not None:
            return (f"the experiment is paused by {manual['by']} since {manual['at']} "
                    f"({manual['reason']}); no unit is assigned until it is resumed "
                    "(Experiment.resume, `banditkit experiment resume`, POST .../resume)")
        if not self._def.guardrails:
            return None
        rows = conn.execute("SELECT breached_at, detail FROM pauses WHERE resumed_at IS NULL "
                            "ORDER BY id").fetchall()
        if not rows:
            return None
        return ("the experiment is paused by its guardrails; no unit is assigned until a person "
                "resumes it (Experiment.resume, `banditkit experiment resume`) or ends it: "
                + "; ".join(f"{detail} (since {at})" for at, detail in rows))

    # -- actions -----------------------------------------------------------------------------
    def pause(self, conn: Connection, reason: str, who: str) -> bool:
        """``Experiment.pause`` (arguments checked): ``False`` when paused by hand already."""
        state = self.state(conn)
        if "archived" in state:
            raise ExperimentError("pause: the experiment is archived (nothing is assigned "
                                  "any more)")
        if "paused" in state:
            return False
        self._set_state(conn, "paused", {"at": self._clock.stamp(), "by": who,
                                         "reason": reason})
        self.audit(conn, who, "pause", {"reason": reason})
        return True

    def resume(self, conn: Connection, who: str) -> int:
        """``Experiment.resume``'s writes: the pauses lifted (breaches, plus 1 by hand)."""
        manual = "paused" in self.state(conn)
        if manual:
            self._set_state(conn, "paused", None)
        # the rows lifted, read back (a pipelined PostgreSQL cursor has no rowcount until its
        # answer is read)
        lifted = len(conn.execute("UPDATE pauses SET resumed_at = ? WHERE resumed_at IS "
                                  "NULL RETURNING id", (self._clock.stamp(),)).fetchall()
                     ) + int(manual)
        if lifted:
            self.audit(conn, who, "resume", {"lifted": lifted})
        return lifted

    def stop(self, conn: Connection, arm: str | None, rollout: bool, who: str
             ) -> dict[str, Any]:
        """``Experiment.stop`` (arguments checked)."""
        state = self.state(conn)
        if "archived" in state:
            raise ExperimentError("stop: the experiment is archived already")
        names = self._def.arm_names
        if arm is not None:
            index, why = names.index(arm), "the arm named at the stop"
        else:
            index, why = self.rollout_arm(conn)
        # the arm is the decision either way; ``rollout`` says whether units still get it
        stopped = {"at": self._clock.stamp(), "by": who, "arm": names[index], "why": why,
                   "rollout": rollout}
        self._set_state(conn, "stopped", stopped)
        self.audit(conn, who, "stop", {"arm": stopped["arm"], "why": why, "rollout": rollout})
        return {k: stopped[k] for k in ("arm", "why", "at", "rollout")}

    def archive(self, conn: Connection, who: str) -> bool:
        """``Experiment.archive``: ``False`` when archived already."""
        state = self.state(conn)
        if "archived" in state:
            return False
        stopped = state.get("stopped")
        if stopped is None:  # the decision at this moment, kept; no rollout
            index, why = self.rollout_arm(conn)
            stopped = {"at": self._clock.stamp(), "by": who,
                       "arm": self._def.arm_names[index], "why": why}
        self._set_state(conn, "stopped", {**stopped, "rollout": False})
        self._set_state(conn, "archived", {"at": self._clock.stamp(), "by": who})
        self.audit(conn, who, "archive")
        return True

    def rollout_arm(self, conn: Connection) -> tuple[int, str]:
        """(arm, why): the stopped arm, else the recommendation or committed arm, else the
        leader on the observed means, else the control."""
        names = self._def.arm_names
        stopped = self.state(conn).get("stopped")
        if stopped is not None and stopped.get("arm") in names:
            return (names.index(stopped["arm"]),
                    f"stopped by {stopped['by']}: {stopped.get('why', 'its choice')}")
        means = np.full(len(names), np.nan)
        for arm, n, total in conn.execute("SELECT arm, recorded, reward FROM totals WHERE "
                                          "batch = ?", (ALL_BATCHES,)):
            self._def.check_arm(arm)
            if n:
                means[arm] = total / n
        arm, reason = leader(self._journal.algorithm, means, names, finished=True)
        if arm is None:
            return self._def.control_index, f"the control ({reason})"
        return int(arm), reason
