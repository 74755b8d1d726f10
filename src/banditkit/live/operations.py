"""What an operator does to a live experiment besides traffic: pause it by hand, stop it (and roll
out a winner), archive it, and the audit log of every such action. A part of
:class:`banditkit.Experiment` (a mixin: the methods use its store, algorithm and arms).

State lives in the experiment's ``meta`` table, read in the transaction of each call (another
process may have stopped it): ``paused`` (a manual pause: when, who, why), ``stopped`` (when,
who, the rollout arm or none) and ``archived``. Every action writes one row of the ``audit``
table (:mod:`banditkit.live.journal`) in the same transaction: who (a service's token id, or
``"local"`` for a call in this process), what, when, and its detail.

- :meth:`pause`: ``assign`` hands out nothing until :meth:`resume` (as a guardrail's breach
  does); units already assigned are still recorded.
- :meth:`stop`: the algorithm is done (no more of its slots are handed out; units it is waiting
  for may still be recorded); with ``rollout=True`` (default) every later ``assign`` serves
  the rollout arm (:mod:`banditkit.live.overflow`), without it ``assign`` returns no units.
- :meth:`archive`: stopped for good, no rollout; ``record`` still takes late outcomes; only an
  archived experiment can be deleted (:func:`banditkit.live.store.delete_experiment`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from .journal import ExperimentError
from .reads import ops_state
from .store import Connection

__all__ = ["Operations", "check_who"]


def check_who(who: object) -> str:
    """Who acts, as the audit row stores it: a non-empty text of at most 200 characters."""
    if not isinstance(who, str) or not who.strip() or len(who) > 200:
        raise ExperimentError(f"who must be a non-empty text of at most 200 characters (a "
                              f"token id, a person), got {who!r}")
    return who


class Operations:
    """Methods of :class:`banditkit.Experiment` (see the module docstring)."""

    # -- state -------------------------------------------------------------------------------
    @staticmethod
    def _ops_state(conn: Connection) -> dict[str, Any]:
        """The operator's state: ``paused``, ``stopped``, ``archived`` (absent when not set)."""
        return {k: json.loads(v) for k, v in conn.execute(*ops_state())}

    @staticmethod
    def _set_state(conn: Connection, key: str, value: Any) -> None:
        conn.execute("DELETE FROM meta WHERE key = ?", (key,))
        if value is not None:
            conn.execute("INSERT INTO meta (key, value) VALUES (?, ?)", (key, json.dumps(value)))

    def _audit(self, conn: Connection, who: str, action: str, detail: Any = None) -> None:
        """One audit row in the caller's transaction (at the experiment's clock)."""
        conn.execute("INSERT INTO audit (at, who, action, detail) VALUES (?, ?, ?, ?)",
                     (self._stamp(), who, action,
                      None if detail is None else json.dumps(detail)))

    # -- actions -----------------------------------------------------------------------------
    def pause(self, reason: str = "paused by hand", *, who: str = "local") -> bool:
        """Pause the experiment by hand: ``assign`` hands out nothing until :meth:`resume`.

        Parameters
        ----------
        reason : str
            Why (shown by ``status`` and by ``assign``'s reason).
        who : str
            Who pauses it, for the audit log.

        Returns
        -------
        bool
            ``True`` when it was not paused by hand before.
        """
        self._check_writable("pause")
        who = check_who(who)
        if not isinstance(reason, str) or not reason.strip() or len(reason) > 500:
            raise ExperimentError(f"reason must be a non-empty text of at most 500 characters, "
                                  f"got {reason!r}")
        with self._transaction() as conn:
            state = self._ops_state(conn)
            if "archived" in state:
                raise ExperimentError("pause: the experiment is archived (nothing is assigned "
                                      "any more)")
            if "paused" in state:
                return False
            self._set_state(conn, "paused", {"at": self._stamp(), "by": who, "reason": reason})
            self._audit(conn, who, "pause", {"reason": reason})
            return True

    def stop(self, arm: str | None = None, *, rollout: bool = True, who: str = "local"
             ) -> dict[str, Any]:
        """Conclude the experiment: the algorithm hands out no more slots, and every later
        ``assign`` serves the rollout arm (``rollout=True``) or nothing.

        Parameters
        ----------
        arm : str, optional
            The arm to roll out; default: the algorithm's recommendation or committed arm,
            else the arm leading on the observed means, else the control
            (:mod:`banditkit.live.overflow`).
        rollout : bool
            Serve the rollout arm to every later unit (default), or no unit at all.
        who : str
            Who stops it, for the audit log.

        Returns
        -------
        dict
            ``{"arm": the decided arm, "why": how it was chosen, "at": time, "rollout": bool}``.
        """
        self._check_writable("stop")
        who = check_who(who)
        if not isinstance(rollout, bool):
            raise ExperimentError(f"rollout must be True or False, got {rollout!r}")
        if arm is not None and (not isinstance(arm, str) or arm not in self.arm_names):
            raise ExperimentError(f"arm must be one of the arm names {self.arm_names}, got "
                                  f"{arm!r}")
        with self._transaction() as conn:
            state = self._ops_state(conn)
            if "archived" in state:
                raise ExperimentError("stop: the experiment is archived already")
            if arm is not None:
                index, why = self.arm_names.index(arm), "the arm named at the stop"
            else:
                index, why = self._rollout_arm(conn)
            # the arm is the decision either way; ``rollout`` says whether units still get it
            stopped = {"at": self._stamp(), "by": who, "arm": self.arm_names[index], "why": why,
                       "rollout": rollout}
            self._set_state(conn, "stopped", stopped)
            self._audit(conn, who, "stop", {"arm": stopped["arm"], "why": why,
                                            "rollout": rollout})
            return {k: stopped[k] for k in ("arm", "why", "at", "rollout")}

    def archive(self, *, who: str = "local") -> bool:
        """Stop the experiment for good, without rollout: ``assign`` returns no units, ``record``
        still takes late outcomes, and it may then be deleted. Returns ``False`` when it was
        archived already."""
        self._check_writable("archive")
        who = check_who(who)
        with self._transaction() as conn:
            state = self._ops_state(conn)
            if "archived" in state:
                return False
            stopped = state.get("stopped")
            if stopped is None:  # the decision at this moment, kept; no rollout
                index, why = self._rollout_arm(conn)
                stopped = {"at": self._stamp(), "by": who, "arm": self.arm_names[index], "why": why}
            self._set_state(conn, "stopped", {**stopped, "rollout": False})
            self._set_state(conn, "archived", {"at": self._stamp(), "by": who})
            self._audit(conn, who, "archive")
            return True

    @classmethod
    def delete(cls, location: str | Path, *, name: str | None = None) -> None:
        """Delete the experiment at ``location`` (a file, or ``name`` in a PostgreSQL
        database), which must be archived (:meth:`archive`): its file (with ``-wal`` and
        ``-shm``) or its schema, whole. Close it everywhere first; an open handle refuses
        every later call (the file or schema is gone)."""
        from .store import check_location, is_url

        check_location(location, name)
        with cls.open(location, name=name, readonly=True) as experiment:  # type: ignore[attr-defined]
            if not experiment.status().archived:
                raise ExperimentError(f"delete: {experiment._journal.label} is not archived; "
                                      "archive it first (Experiment.archive), then delete it")
        if is_url(location):
            from .postgres_store import drop

            drop(str(location), str(name))
            return
        path = Path(location)
        for leftover in (path, *(path.with_name(path.name + s) for s in ("-wal", "-shm"))):
            leftover.unlink(missing_ok=True)

    def audit(self) -> pd.DataFrame:
        """The audit log: one row per operator action (``id``, ``at``, ``who``, ``action``,
        ``detail`` as JSON text), oldest first."""
        with self._transaction() as conn:
            rows = conn.execute("SELECT id, at, who, action, detail FROM audit ORDER BY id"
                                ).fetchall()
        return pd.DataFrame(rows, columns=["id", "at", "who", "action", "detail"])

    def _rollout_arm(self, conn: Connection) -> tuple[int, str]:
        """(arm, why): the stopped arm, else the recommendation or committed arm, else the
        leader on the observed means, else the control."""
        from .journal import ALL_BATCHES
        from .leader import leader

        stopped = self._ops_state(conn).get("stopped")
        if stopped is not None and stopped.get("arm") in self.arm_names:
            return (self.arm_names.index(stopped["arm"]),
                    f"stopped by {stopped['by']}: {stopped.get('why', 'its choice')}")
        K = len(self.arm_names)
        means = [float("nan")] * K
        for arm, n, total in conn.execute("SELECT arm, recorded, reward FROM totals WHERE "
                                          "batch = ?", (ALL_BATCHES,)):
            self._check_arm_index(arm)
            if n:
                means[arm] = total / n
        import numpy as np

        arm, reason = leader(self._algorithm, np.asarray(means), self.arm_names,
                             finished=True)
        if arm is None:
            return self.arm_names.index(self.control), f"the control ({reason})"
        return int(arm), reason
