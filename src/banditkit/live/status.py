"""Where a live experiment stands: :class:`ExperimentStatus`, what
:meth:`banditkit.Experiment.status` returns, and how it prints."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

__all__ = ["ExperimentStatus"]


@dataclass(frozen=True)
class ExperimentStatus:
    """Where an experiment stands.

    Attributes
    ----------
    arms : pandas.DataFrame
        One row per arm (index: the arm's name): ``assigned`` units (expired ones excluded),
        ``recorded`` rewards, their ``mean`` and interval ``low``/``high`` (of the kind
        :attr:`intervals` names), the difference to the control arm ``diff`` with its interval
        ``diff_low``/``diff_high`` and ``verdict`` (``better`` / ``worse`` / ``undecided``;
        ``control`` on the control's row; :mod:`banditkit.live.statistics`), ``active``
        (``False`` once the algorithm eliminated the arm; missing for algorithms that keep no
        active set) and ``cost_1``... (constrained policies).
    algorithm : str
        Registered name of the algorithm.
    batches_observed : int
        Batches the algorithm has observed (its phases or epochs so far).
    pulls_observed : int
        Pulls (units with rewards) the algorithm has observed.
    waiting : int
        Pulls of the current batch still without a reward (assigned or not yet assigned).
    unassigned : int
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
        The parameters set by :data:`banditkit.live.defaults.LIVE_DEFAULTS`, not by the user.
    guardrails : pandas.DataFrame
        One row per (guardrail, arm other than the control) (:mod:`banditkit.live.guardrails`):
        ``metric``, ``rule``, ``margin``, ``arm``, the difference of the metric's means to the
        control ``diff`` with its anytime-valid interval ``diff_low``/``diff_high`` (level
        1 − ``guardrail_alpha`` over all guardrails, arms and looks), ``breached`` (the whole
        interval beyond the margin) and ``pausing`` (a breach not yet resumed). Empty without
        guardrails.
    paused : str or None
        Why ``assign`` hands out nothing (the breaches not yet resumed), or ``None``.
    reward_range : (float, float) or None
        The rewards' range the algorithm assumes; ``None`` when it declares none.
    verdicts : dict
        The declared reward type and range and the sequences the verdicts use
        (:class:`banditkit.live.verdict_spec.VerdictSpec`, as stored).
    """

    arms: pd.DataFrame
    algorithm: str
    batches_observed: int
    pulls_observed: int
    waiting: int
    unassigned: int
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
    verdicts: dict = field(default_factory=dict)

    def __str__(self) -> str:
        state = ("finished" if self.finished else
                 f"batch {self.batches_observed + 1}: {self.waiting} pull(s) waiting for a "
                 f"reward, {self.unassigned} not yet assigned")
        lines = [f"WARNING: {warning}" for warning in self.warnings]
        if self.paused is not None:
            lines.insert(0, f"WARNING: PAUSED: {self.paused}")
        lines += [f"{self.algorithm}: {state}",
                 f"pulls observed: {self.pulls_observed}"
                 + ("" if self.budget_left is None else f", budget left: {self.budget_left}")]
        if self.recommendation is not None:
            lines.append(f"recommendation: {self.recommendation}")
        lines.append(f"leader: {self.leader if self.leader is not None else '(none)'}"
                     + (f" ({self.reason})" if self.reason else ""))
        if self.params:
            shown = ", ".join(f"{k}={v!r}" + (" [live default]" if k in self.live_defaults
                                              else "") for k, v in self.params.items())
            lines.append(f"params: {shown}")
        lines.append(self.interval_note)
        if self.control is not None:
            lines.append(f"control arm: {self.control} (diff = arm mean - control mean)")
        with pd.option_context("display.width", 120, "display.max_columns", 20):
            lines.append(self.arms.to_string(float_format=lambda v: f"{v:.4g}"))
            if len(self.guardrails):
                lines.append("guardrails (anytime-valid differences to the control):")
                lines.append(self.guardrails.to_string(index=False,
                                                       float_format=lambda v: f"{v:.4g}"))
        return "\n".join(lines)
