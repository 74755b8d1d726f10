"""Planned looks in a live experiment's readout: which planned look ``status`` shows, its
group-sequential intervals and verdicts, and what is beyond the plan.

A plan is declared at create (``verdicts={"looks": K, "look_every": E, "spending": ...}``,
:mod:`banditkit.live.readout.verdict_spec`). **Look k is the first k·E units assigned** (every
arm, every kind, in assignment order), counted once none of them still waits for an outcome:
its data is a fixed prefix of the assignment order, so reading ``status`` any number of times
between two planned looks shows the same look on the same units — reading more often is not
looking more often. Its rewards (the window's zeros included, expired units out, corrections
applied) give each arm's mean and the plug-in standard error of its difference to the control,
and the repeated confidence interval diff ± c_k·se of the design
(:class:`banditkit.live.readout.planned_looks.GroupSequential`, Bonferroni over the arms:
α/(K − 1) each) gives the verdict. The information fractions are the planned k/K (units
assigned); under adaptive allocation the arms' shares of them are random, which the
repeated intervals allow to the normal approximation (Jennison & Turnbull 2000, §7.2.2).

The plan ends at look K: units assigned beyond K·E are outside it. ``status`` keeps showing
look K and warns; ``status(look=k)`` refuses a k beyond the plan, or a look not yet complete,
by name. Cost per ``status``: a count of the units assigned and one SQL aggregate over the
look's units (O(units) with an experiment's plan; nothing without one).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, fields
from functools import lru_cache

import numpy as np
import pandas as pd

from ..errors import ExperimentError
from ..outcomes.corrections import latest_corrections
from ..store import Connection
from .planned_looks import GroupSequential
from .verdict_spec import VerdictSpec

__all__ = ["PlannedLook", "check_look", "planned_look"]


@dataclass(frozen=True)
class PlannedLook:
    """The planned look ``status`` shows.

    Attributes
    ----------
    look : int
        The look shown (1-based); 0 before the first is complete.
    looks, look_every, spending :
        The plan (``verdicts`` at create).
    units : int
        Units of the look shown (look·look_every).
    assigned : int
        Units assigned so far (every arm).
    waiting : int
        Units of the next planned look (or of the first) still without an outcome.
    bound : float or None
        The look's critical value c_k (on the z scale); ``None`` before the first look.
    alpha : float
        The plan's error probability over all arms and all planned looks (α/(K − 1) each).
    beyond : bool
        Units were assigned beyond the plan's last look: they are outside the plan.
    arms : pandas.DataFrame
        One row per arm other than the control: ``arm``, ``n`` and ``n_control`` (the look's
        counted units), ``diff`` and its repeated interval ``diff_low``/``diff_high``, and
        ``verdict`` (``better`` / ``worse`` / ``undecided``).
    """

    look: int
    looks: int
    look_every: int
    spending: str
    units: int
    assigned: int
    waiting: int
    bound: float | None
    alpha: float
    beyond: bool
    arms: pd.DataFrame

    def as_json(self) -> dict:
        """The fields as JSON values (``arms`` as records; NaN as ``None``)."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "arms"}
        out["arms"] = json.loads(self.arms.to_json(orient="records"))
        return out

    def lines(self) -> list[str]:
        """As ``str(status)`` prints it."""
        plan = (f"planned looks ({self.looks}, one every {self.look_every:,} units assigned, "
                f"{self.spending} spending, alpha {self.alpha:g} over the arms and the planned "
                "looks)")
        if self.look == 0:
            return [f"{plan}: look 1 not complete yet ({self.assigned:,} of "
                    f"{self.look_every:,} units assigned, {self.waiting} of them waiting)"]
        head = (f"{plan}: look {self.look} of {self.looks} (the first {self.units:,} units; "
                f"bound {self.bound:.4g}):")
        with pd.option_context("display.width", 120, "display.max_columns", 20):
            return [head, self.arms.to_string(index=False, float_format=lambda v: f"{v:.4g}")]

    def warning(self) -> str | None:
        """The warning once units were assigned beyond the plan."""
        if not self.beyond:
            return None
        end = self.looks * self.look_every
        return (f"planned looks: the plan ended at look {self.looks} ({end:,} "
                f"units); the {self.assigned - end:,} units assigned "
                "since are outside it (its verdicts stand at look "
                f"{self.looks}); the anytime-valid intervals cover them")


def check_look(look: object, spec: VerdictSpec) -> int | None:
    """``status(look=...)`` checked before any work: a planned look of the declared plan."""
    if look is None:
        return None
    if isinstance(look, bool) or not isinstance(look, (int, np.integer)) or look < 1:
        raise ExperimentError(f"look must be a positive integer (1 for the first planned "
                              f"look), got {look!r}")
    if spec.looks is None:
        raise ExperimentError("look: this experiment declared no planned looks (create it "
                              "with verdicts={'looks': K, 'look_every': units})")
    if look > spec.looks:
        raise ExperimentError(f"look {look} is beyond the plan of {spec.looks} looks: a "
                              "group-sequential test spends its alpha over the planned looks "
                              "only; the anytime-valid intervals (status without look=) cover "
                              "every look")
    return int(look)


@lru_cache(maxsize=32)
def _design(looks: int, alpha: float, spending: str) -> GroupSequential:
    return GroupSequential.plan(looks, alpha, spending)


def _cutoff(conn: Connection, units: int) -> int | None:
    """The id of the ``units``-th unit assigned (``None`` when fewer were)."""
    row = conn.execute("SELECT id FROM units ORDER BY id LIMIT 1 OFFSET ?",
                       (units - 1,)).fetchone()
    return None if row is None else int(row[0])


def _waiting(conn: Connection, cutoff: int) -> int:
    return int(conn.execute("SELECT COUNT(*) FROM units WHERE id <= ? AND reward IS NULL AND "
                            "expired_at IS NULL", (cutoff,)).fetchone()[0])


def _sums(conn: Connection, cutoff: int, n_arms: int, corrected: bool) -> np.ndarray:
    """Per arm (count, sum, sum of squares) of the rewards of the units up to ``cutoff``,
    corrections in place of the recorded values."""
    sums = np.zeros((n_arms, 3))
    for arm, n, total, total_sq in conn.execute(
            "SELECT arm, COUNT(reward), SUM(reward), SUM(reward * reward) FROM units WHERE "
            "id <= ? AND reward IS NOT NULL GROUP BY arm", (cutoff,)):
        if 0 <= arm < n_arms:
            sums[arm] = n, total or 0.0, total_sq or 0.0
    if corrected:
        fixes = latest_corrections(conn)
        mine = sorted(u for u in fixes if u <= cutoff)
        for start in range(0, len(mine), 900):
            chunk = mine[start:start + 900]
            for unit, reward in conn.execute(
                    f"SELECT id, reward FROM units WHERE id IN ({','.join('?' * len(chunk))})",
                    chunk):
                arm, value = fixes[int(unit)]
                sums[arm, 1:] += (value - reward, value * value - reward * reward)
    return sums


def planned_look(conn: Connection, spec: VerdictSpec, names: list[str], control: int,
                 alpha: float, look: int | None, corrected: bool) -> PlannedLook | None:
    """The planned look ``status`` shows (module docstring): ``look`` (checked by
    :func:`check_look`; refused when not complete), else the latest complete one."""
    if spec.looks is None:
        return None
    K, E = spec.looks, spec.look_every
    assert E is not None and spec.spending is not None
    assigned = int(conn.execute("SELECT COUNT(*) FROM units").fetchone()[0])
    k = min(assigned // E, K)
    cutoffs: dict[int, int] = {}
    while k > 0:  # the latest complete look: every unit of it resolved
        cutoffs[k] = _cutoff(conn, k * E)  # type: ignore[assignment]
        if _waiting(conn, cutoffs[k]) == 0:
            break
        k -= 1
    nxt = min(k + 1, K)
    end = _cutoff(conn, nxt * E) if nxt * E <= assigned else None
    waiting = _waiting(conn, end if end is not None else 2**62) if k < K else 0
    if look is not None:
        if look > k:
            raise ExperimentError(
                f"look {look} is not complete: {min(assigned, look * E):,} of its "
                f"{look * E:,} units assigned, {waiting} waiting for an outcome; the latest "
                f"complete planned look is {k}")
        k = look
        cutoffs.setdefault(k, _cutoff(conn, k * E))  # type: ignore[arg-type]
    level = alpha / max(len(names) - 1, 1)
    design = _design(K, level, spec.spending)
    bound = design.bounds[k - 1] if k else None
    rows = []
    if k:
        n, total, total_sq = _sums(conn, cutoffs[k], len(names), corrected).T
        with np.errstate(divide="ignore", invalid="ignore"):
            mean = total / n
            var = np.maximum(total_sq - n * mean * mean, 0.0) / (n - 1)
            diff = mean - mean[control]
            se = np.sqrt(var / n + var[control] / n[control])
        for a, name in enumerate(names):
            if a == control:
                continue
            ok = n[a] >= 2 and n[control] >= 2 and math.isfinite(se[a])
            low, high = ((diff[a] - bound * se[a], diff[a] + bound * se[a]) if ok
                         else (math.nan, math.nan))
            verdict = ("better" if ok and low > 0 else "worse" if ok and high < 0
                       else "undecided")
            rows.append([name, int(n[a]), int(n[control]), diff[a] if ok else math.nan,
                         low, high, verdict])
    frame = pd.DataFrame(rows, columns=["arm", "n", "n_control", "diff", "diff_low",
                                        "diff_high", "verdict"])
    return PlannedLook(k, K, E, spec.spending, k * E, assigned, waiting, bound, alpha,
                       assigned > K * E, frame)
