"""Where a live experiment stands: :class:`ExperimentStatus`, what
:meth:`banditkit.Experiment.status` returns, and how it prints."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from ..outcomes.window import Waiting
from .looks import PlannedLook

__all__ = ["ExperimentStatus"]


@dataclass(frozen=True)
class ExperimentStatus:
    """Where an experiment stands.

    Attributes
    ----------
    arms : pandas.DataFrame
        One row per arm (index: the arm's name): ``assigned`` units (expired ones excluded),
        ``recorded`` rewards (the window's imputed zeros included), ``counted``: those the
        intervals use (:attr:`count`: by default the arm's resolved prefix), ``imputed``: zeros
        the rule ``missing="zero"`` recorded among the counted, their ``mean`` and interval
        ``low``/``high`` (of the kind :attr:`intervals` names), the difference to the control
        arm ``diff`` with its interval ``diff_low``/``diff_high`` and ``verdict`` (``better`` /
        ``worse`` / ``undecided``; ``control`` on the control's row;
        :mod:`banditkit.live.readout.statistics`), ``active`` (whether ``assign`` may still
        hand the arm units: ``False`` once the algorithm eliminated it, and for every arm but
        the winner once the experiment finished or was stopped; missing for algorithms that
        keep no active set) and ``cost_1``... (constrained policies).
    algorithm : str
        Registered name of the algorithm.
    batches_observed : int
        Batches the algorithm has observed (its phases or epochs so far).
    pulls_observed : int
        Pulls (units with rewards) the algorithm has observed.
    batch_pending : int
        Pulls of the algorithm's current batch still without a reward (assigned or not yet
        assigned); 0 once finished. Not the units waiting for an outcome, which
        :attr:`waiting_units` counts (overflow and rollout units included).
    batch_unassigned : int
        Pulls of the current batch not yet assigned to a unit.
    budget_left : int or None
        Horizon (or budget) minus the pulls observed; ``None`` without a horizon.
    finished : bool
        The algorithm asks for nothing more.
    recommendation : str or None
        The identified arm, for identifiers that have one.
    info : dict
        The algorithm's own facts (phases, eliminations...).
    intervals : {"anytime", "fixed"}
        Which intervals ``arms`` shows: confidence sequences valid at every look (default), or
        fixed-n intervals valid only for one look decided in advance.
    alpha : float
        Their error probability (anytime: over all arms, differences and looks together).
    control : str or None
        The control arm the differences are taken to.
    warnings : list of str
        Problems found in the data (outcomes missing more often on some arm), each naming the
        arms; printed first by ``str(status)``.
    leader : str or None
        The arm the algorithm recommends or is committed to; before it has decided, the arm
        leading on the observed means (among the active arms); ``None`` before any reward.
    reason : str
        Why ``leader`` is that arm: identified (eliminated the others, or the recommendation
        at the end of the budget), committed by a named rule, or only leading on the observed
        means (not a decision of the algorithm).
    params : dict
        Every parameter in force (given, live default, or the algorithm's default), as stored.
    live_defaults : list of str
        The parameters set by :data:`banditkit.live.journal.defaults.LIVE_DEFAULTS`, not by the
        user.
    guardrails : pandas.DataFrame
        One row per (guardrail, arm other than the control)
        (:mod:`banditkit.live.readout.guardrails`):
        ``metric``, ``rule``, ``margin``, ``arm``, the difference of the metric's means to the
        control ``diff`` with its anytime-valid one-sided bound (``diff_low`` for
        ``max_increase``, ``diff_high`` for ``max_decrease``, the other end infinite; level
        1 − ``guardrail_alpha`` over all guardrails and arms but the control, and looks),
        ``breached`` (the bound beyond the margin) and ``pausing`` (a breach not yet
        resumed). Empty without guardrails.
    paused : str or None
        Why ``assign`` hands out nothing (the breaches not yet resumed), or ``None``.
    reward_range : (float, float) or None
        The rewards' range the algorithm assumes (and the anytime intervals need); ``None``
        when it declares none.
    count : {"resolved", "recorded"}
        What ``arms`` and ``guardrails`` count (:meth:`banditkit.Experiment.status`).
    outcome_window : float or None
        Seconds a unit's outcome is awaited (:mod:`banditkit.live.outcomes.window`); ``None``
        for an experiment created before windows existed.
    missing : str or None
        What a unit unanswered when its window closes becomes: ``"zero"`` or ``"expire"``.
    window_note : str
        One line: the window and the rule, ``[default]`` where not given at create.
    uncounted : int
        Outcomes recorded but not counted yet (each follows a unit of its arm still waiting).
    counting_note : str
        One line: what is counted, and why ``uncounted`` outcomes are not.
    waiting_units : Waiting
        The units without an outcome: how many, the oldest, when it resolves
        (:class:`banditkit.live.outcomes.window.Waiting`).
    overflow : str
        The overflow rule (:mod:`banditkit.live.assignment.overflow`). The ``arms`` columns
        ``overflow``
        and ``overflow_recorded`` count overflow and rollout units per arm. The resolved prefix
        (``count="resolved"``, the default) counts every unit of an arm whatever its kind; with
        ``count="recorded"`` the anytime intervals include their rewards, the fixed ones do
        not. ``assigned``/``recorded`` never do.
    stopped : dict or None
        ``{"at", "by", "arm", "why"}`` once a person stopped it (:meth:`Experiment.stop`).
    archived : bool
        Archived (:meth:`Experiment.archive`): nothing more is assigned.
    decision : dict or None
        Once finished or stopped, what it decided, shown first: ``winner`` (the rollout arm)
        and ``why``, its ``diff`` to the ``control`` with ``diff_low``/``diff_high`` and
        ``verdict``, the arms ``eliminated``, and ``stopped_by``.
    verdicts : dict
        The declared reward type and range and the sequences the verdicts use
        (:class:`banditkit.live.readout.verdict_spec.VerdictSpec`, as stored).
    planned : PlannedLook or None
        With a plan of looks declared at create, the planned look shown (the latest complete
        one, or ``status(look=k)``): its repeated intervals and verdicts
        (:class:`banditkit.live.readout.looks.PlannedLook`); ``None`` without a plan.
    """

    arms: pd.DataFrame
    algorithm: str
    batches_observed: int
    pulls_observed: int
    batch_pending: int
    batch_unassigned: int
    budget_left: int | None
    finished: bool
    recommendation: str | None
    info: dict = field(default_factory=dict)
    intervals: str = "anytime"
    alpha: float = 0.05
    control: str | None = None
    warnings: list[str] = field(default_factory=list)
    interval_note: str = ""
    leader: str | None = None
    reason: str = ""
    reward_range: tuple[float, float] | None = None
    params: dict = field(default_factory=dict)
    live_defaults: list = field(default_factory=list)
    guardrails: pd.DataFrame = field(default_factory=pd.DataFrame)
    paused: str | None = None
    count: str = "resolved"
    outcome_window: float | None = None
    missing: str | None = None
    window_note: str = ""
    uncounted: int = 0
    counting_note: str = ""
    waiting_units: Waiting = field(default_factory=lambda: Waiting(0))
    overflow: str = "design"
    stopped: dict | None = None
    archived: bool = False
    decision: dict | None = None

    def decision_line(self) -> str | None:
        """The decision in one line (``None`` before the experiment finished or stopped)."""
        d = self.decision
        if d is None:
            return None
        head = "ARCHIVED" if self.archived else "STOPPED" if self.stopped else "FINISHED"
        if d["winner"] == d["control"]:
            diff = "the control itself"
        elif d["diff"] is None:
            diff = "no reward recorded on it yet"
        else:
            diff = (f"{d['diff']:+.4g} vs control {d['control']!r} in [{d['diff_low']:.4g}, "
                    f"{d['diff_high']:.4g}] ({d['verdict']})")
        gone = (f"; eliminated: {', '.join(d['eliminated'])}" if d["eliminated"] else "")
        return f"{head}: winner {d['winner']} ({d['why']}); {diff}{gone}"
    verdicts: dict = field(default_factory=dict)
    planned: PlannedLook | None = None

    def __str__(self) -> str:
        """Read top down (issue 34): the decision (or the leader), then per arm what counts,
        then what waits, each named once; how it is computed comes last."""
        lines = [] if self.decision is None else [self.decision_line()]
        lines += [f"WARNING: {warning}" for warning in self.warnings]
        if self.paused is not None:
            lines.insert(0, f"WARNING: PAUSED: {self.paused}")
        leader = (f"leader: {self.leader if self.leader is not None else '(none)'}"
                  + (f" ({self.reason})" if self.reason else ""))
        if self.decision is None:
            lines.append(("FINISHED; " if self.finished else "RUNNING; ") + leader)
        lines += self._arm_lines()
        if self.planned is not None:
            lines += self.planned.lines()
        lines += self._waiting_lines()
        if self.decision is not None:
            lines.append(leader)
        if self.recommendation is not None:
            lines.append(f"recommendation: {self.recommendation}")
        lines.append(f"pulls observed: {self.pulls_observed}"
                     + ("" if self.budget_left is None else f", budget left: {self.budget_left}"))
        if self.overflow != "design":
            lines.append(f"overflow rule: {self.overflow}")
        if self.params:
            shown = ", ".join(f"{k}={v!r}" + (" [live default]" if k in self.live_defaults
                                              else "") for k, v in self.params.items())
            lines.append(f"params: {shown}")
        lines.append(self.interval_note)
        if self.window_note:
            lines.append(self.window_note)
        if self.counting_note:
            lines.append(self.counting_note)
        if self.control is not None:
            lines.append(f"control arm: {self.control} (diff = arm mean - control mean; "
                         "lift = diff / control mean)")
        return "\n".join(lines)

    def _arm_lines(self) -> list[str]:
        """The per-arm table as printed: ``assigned`` and ``recorded`` with the arm's overflow
        and rollout units (so that none is below ``counted``, which counts every unit of the
        resolved prefix), ``overflow`` saying how many of them."""
        frame = self.arms.copy()
        if {"assigned", "overflow"} <= set(frame.columns):
            frame["assigned"] = frame["assigned"] + frame["overflow"]
        if {"recorded", "overflow_recorded"} <= set(frame.columns):
            frame["recorded"] = frame["recorded"] + frame["overflow_recorded"]
            frame = frame.drop(columns="overflow_recorded")
        lines = ["per arm: assigned and recorded count every unit (overflow: how many of them "
                 "the algorithm did not ask for); counted: the rewards the intervals use"]
        with pd.option_context("display.width", 120, "display.max_columns", 20):
            lines.append(frame.to_string(float_format=lambda v: f"{v:.4g}"))
            if len(self.guardrails):
                lines.append("guardrails (anytime-valid differences to the control):")
                lines.append(self.guardrails.to_string(index=False,
                                                       float_format=lambda v: f"{v:.4g}"))
        return lines

    def _waiting_lines(self) -> list[str]:
        """What waits: the units without an outcome, and the algorithm's current batch."""
        lines = []
        w = self.waiting_units
        if w.units:
            lines.append(f"waiting for an outcome: {w.units} unit(s); the oldest, unit "
                         f"{w.oldest_unit} (arm {w.oldest_arm!r}), assigned at "
                         f"{w.oldest_assigned_at}"
                         + (f", resolves at {w.resolves_at}" if w.resolves_at else ""))
        if not self.finished and self.decision is None:
            lines.append(f"{self.algorithm}, batch {self.batches_observed + 1}: "
                         f"{self.batch_unassigned} pull(s) not yet assigned, "
                         f"{self.batch_pending - self.batch_unassigned} assigned and waiting "
                         "for a reward (the algorithm updates when the batch is complete)")
        return lines
