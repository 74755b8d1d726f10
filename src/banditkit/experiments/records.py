"""What a worker sends back for one trial: a :class:`TrialRecord` of plain numbers and numpy
arrays, picklable and independent of the algorithm that produced it.

Kept apart from the pandas frames (:mod:`.results`) so worker processes import only numpy.
"""

from __future__ import annotations

import json
import traceback as tb
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..trial import Trial

__all__ = ["TrialRecord", "failed_record", "record_from_trial"]


@dataclass
class TrialRecord:
    """The result of one trial (or of a trial that raised), as plain data.

    ``status`` is ``"ok"`` or ``"failed"``; a failed trial keeps its ``error`` message and
    ``traceback`` and has no metrics.
    """

    point: int
    algorithm: str
    trial: int
    status: str = "ok"
    error: str | None = None
    traceback: str | None = None
    n_pulls: int | None = None
    final_regret: float | None = None
    final_violation: float | None = None
    correct: bool | None = None
    recommendation: int | None = None
    stopped: bool | None = None
    n_batches: int | None = None
    seconds: float | None = None
    checkpoints: np.ndarray | None = None
    regret: np.ndarray | None = None
    violation: np.ndarray | None = None
    counts: np.ndarray | None = None
    decision_arms: np.ndarray | None = None
    decision_counts: np.ndarray | None = None
    batch_sizes: np.ndarray | None = None
    info: dict[str, Any] = field(default_factory=dict)


def record_from_trial(point: int, algorithm: str, trial: int, result: Trial, *,
                      decisions: bool = True) -> TrialRecord:
    """Flatten a :class:`~banditkit.trial.Trial` into a record; ``decisions=False`` leaves out
    the decision log (runs of pulls and batch sizes), keeping the pulls per arm."""
    arms, counts = result.decisions.runs() if decisions else (None, None)
    final_violation = (None if result.violation is None or result.violation.size == 0
                       else float(result.violation[-1]))
    return TrialRecord(
        point=point, algorithm=algorithm, trial=trial, status="ok",
        n_pulls=int(result.n_pulls), final_regret=result.final_regret,
        final_violation=final_violation,
        correct=None if result.correct is None else bool(result.correct),
        recommendation=None if result.recommendation is None else int(result.recommendation),
        stopped=bool(result.stopped), n_batches=int(result.n_batches),
        seconds=float(result.seconds),
        # checkpoints only index curves: an identifier's 100 of them per trial would be most
        # of a 10^6-trial database
        checkpoints=(result.checkpoints if result.regret is not None
                     or result.violation is not None else None),
        regret=result.regret,
        violation=result.violation, counts=np.asarray(result.counts, dtype=np.int64),
        decision_arms=arms, decision_counts=counts,
        batch_sizes=result.decisions.batch_sizes() if decisions else None,
        info=_plain(result.info))


def failed_record(point: int, algorithm: str, trial: int, error: BaseException,
                  seconds: float | None = None) -> TrialRecord:
    """A record for a trial that raised ``error`` (kept, never dropped)."""
    return TrialRecord(
        point=point, algorithm=algorithm, trial=trial, status="failed",
        error=f"{type(error).__name__}: {error}",
        traceback="".join(tb.format_exception(error)), seconds=seconds)


def _plain(value: Any) -> Any:
    """``value`` as JSON-serialisable data (numpy scalars and arrays become Python values)."""
    return json.loads(json.dumps(value, default=_json_default))


def _json_default(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return repr(value)


