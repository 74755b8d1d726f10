"""Guardrails: metrics recorded beside the reward that pause a live experiment when an arm
harms them, with confidence, compared with the control arm.

A guardrail is ``{"metric": "latency", "rule": "max_increase", "margin": 50,
"range": [0, 2000]}``: every unit's reward is recorded with its ``latency`` (in the declared
range; the confidence sequences need bounded values), and an arm breaches the guardrail when
its mean latency exceeds the control's by more than ``margin`` *with confidence*: the whole
anytime-valid interval of the difference lies above ``margin``. ``"max_decrease"`` is the
mirror rule (the arm's mean must not fall below the control's by more than ``margin``: the
whole interval lies below −``margin``).

Intervals (:mod:`banditkit.live.anytime`, Howard et al. 2021 §3, the beta-binomial mixture):
each arm's mean of each guardrail metric gets a confidence sequence at level 1 − α/(G·K) (G
guardrails, K arms, α the experiment's ``guardrail_alpha``): by a union bound, all G·K
sequences hold at every look together with probability ≥ 1 − α, and on that event every
difference ``arm − control`` lies in ``[low_arm − high_control, high_arm − low_control]``.
So however often the guardrails are evaluated (every record and status), the chance that a
guardrail which holds in truth ever pauses the experiment is at most α.

What is counted: each arm's **resolved prefix** (:mod:`banditkit.live.resolved_prefix`), the
metric values of its units in assignment order up to its first unit still waiting for an
outcome, as for the rewards: values recorded quickly (or slowly) because of what they are
cannot bias the comparison. A harm that makes outcomes *disappear* (an arm that crashes the
page, so its units never report anything) leaves no metric value to compare: it is seen by the
missing-outcome check (:func:`banditkit.live.statistics.missing_outcome_warnings`; under
``missing="zero"`` also in the reward itself), not by the guardrails.

This is a circuit breaker *outside* the algorithm: it only stops traffic (``assign`` hands out
nothing); the algorithm never sees the metrics and its state is untouched. A constrained
policy's costs (DEBORA-H's hard constraints) are the opposite: known to the algorithm and used
in every decision it makes.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .anytime import bounded_sequence, difference_bounds
from .journal import ExperimentError

__all__ = ["RULES", "Guardrail", "check_guardrails", "check_metrics", "evaluate"]

#: ``max_increase``: arm mean − control mean must not exceed ``margin``;
#: ``max_decrease``: control mean − arm mean must not exceed ``margin``.
RULES = ("max_increase", "max_decrease")

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Guardrail:
    """One guardrail: ``metric`` (a name), ``rule`` (:data:`RULES`), ``margin`` ≥ 0 in the
    metric's units, and the metric's declared ``low`` < ``high`` range."""

    metric: str
    rule: str
    margin: float
    low: float
    high: float

    def as_json(self) -> dict[str, Any]:
        return {"metric": self.metric, "rule": self.rule, "margin": self.margin,
                "range": [self.low, self.high]}

    def describe(self) -> str:
        verb = "exceed" if self.rule == "max_increase" else "fall below"
        return (f"{self.metric}: an arm's mean must not {verb} the control's by more than "
                f"{self.margin:g}")


def _real(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def check_guardrails(guardrails: object) -> list[Guardrail]:
    """The guardrails of ``Experiment.create(..., guardrails=...)``, checked; one
    :class:`ExperimentError` naming the parameter and the rule otherwise."""
    if guardrails is None:
        return []
    if isinstance(guardrails, (str, bytes, Mapping)) or not isinstance(guardrails, Sequence):
        raise ExperimentError(f"guardrails must be a list of dicts (metric, rule, margin, "
                              f"range), got {type(guardrails).__name__}")
    out: list[Guardrail] = []
    for i, g in enumerate(guardrails):
        where = f"guardrails[{i}]"
        if not isinstance(g, Mapping):
            raise ExperimentError(f"{where} must be a dict with metric, rule, margin and range, "
                                  f"got {type(g).__name__}")
        unknown = sorted(set(map(str, g)) - {"metric", "rule", "margin", "range"})
        missing = [k for k in ("metric", "rule", "margin", "range") if k not in g]
        if unknown or missing:
            raise ExperimentError(f"{where} takes exactly metric, rule, margin and range"
                                  + (f"; unknown: {unknown}" if unknown else "")
                                  + (f"; missing: {missing}" if missing else ""))
        metric = g["metric"]
        if not isinstance(metric, str) or not _NAME.fullmatch(metric):
            raise ExperimentError(f"{where}.metric must be a name (letters, digits, _; not "
                                  f"starting with a digit), got {metric!r}")
        if g["rule"] not in RULES:
            raise ExperimentError(f"{where}.rule must be one of {list(RULES)}, got "
                                  f"{g['rule']!r}")
        bounds = g["range"]
        pair = (None, None) if isinstance(bounds, (str, bytes, Mapping)) or not isinstance(
            bounds, Sequence) or len(bounds) != 2 else tuple(_real(b) for b in bounds)
        low, high = pair
        if low is None or high is None or not low < high:
            raise ExperimentError(f"{where}.range must be two finite numbers lo < hi (the "
                                  f"metric's bounds), got {bounds!r}")
        margin = _real(g["margin"])
        if margin is None or not 0 <= margin < high - low:
            raise ExperimentError(f"{where}.margin must be a number in [0, hi − lo) = [0, "
                                  f"{high - low:g}) (a difference of means in the range), got "
                                  f"{g['margin']!r}")
        if metric in {o.metric for o in out}:
            raise ExperimentError(f"{where}.metric {metric!r} has a guardrail already (one "
                                  "guardrail per metric)")
        out.append(Guardrail(metric, g["rule"], margin, low, high))
    return out


def check_metrics(guardrails: Sequence[Guardrail], metrics: object, n_units: int
                  ) -> np.ndarray | None:
    """``record(..., metrics=...)`` checked against the guardrails: an array of shape
    (units, G) in the guardrails' order, or ``None`` when the experiment has none."""
    if not guardrails:
        if metrics is not None and not (isinstance(metrics, Mapping) and not metrics):
            raise ExperimentError("metrics: this experiment has no guardrails (create it with "
                                  "guardrails=[...] to record metrics)")
        return None
    if not isinstance(metrics, Mapping):
        raise ExperimentError(f"metrics are required: a dict metric → one value per unit for "
                              f"{[g.metric for g in guardrails]}, got {type(metrics).__name__}")
    names = [g.metric for g in guardrails]
    unknown = sorted(map(str, set(metrics) - set(names)))
    if unknown:
        raise ExperimentError(f"metrics: no guardrail on {unknown} (the guardrails are on "
                              f"{names})")
    missing = [m for m in names if m not in metrics]
    if missing:
        raise ExperimentError(f"metrics: {missing} missing (every guardrail's metric is "
                              "recorded with each reward)")
    out = np.empty((n_units, len(guardrails)))
    for j, g in enumerate(guardrails):
        try:
            values = np.asarray(metrics[g.metric])
        except (TypeError, ValueError):
            values = np.asarray(None)
        if values.dtype.kind not in "iuf" or values.ndim != 1 or values.size != n_units:
            raise ExperimentError(f"metrics[{g.metric!r}] must be numbers, one per unit "
                                  f"({n_units}), got "
                                  + (f"shape {values.shape}" if values.dtype.kind in "iuf"
                                     else "something that is not a list of numbers"))
        values = values.astype(float)
        bad = np.flatnonzero(~np.isfinite(values) | (values < g.low) | (values > g.high))
        if bad.size:
            raise ExperimentError(f"metrics[{g.metric!r}] must be finite and in its declared "
                                  f"range [{g.low:g}, {g.high:g}]: value {int(bad[0])} is "
                                  f"{values[bad[0]]}")
        out[:, j] = values
    return out


@dataclass(frozen=True)
class Evaluation:
    """Every guardrail against every arm: arrays of shape (G, K); the control's column NaN /
    False."""

    diff: np.ndarray
    diff_low: np.ndarray
    diff_high: np.ndarray
    breached: np.ndarray


def evaluate(guardrails: Sequence[Guardrail], n: np.ndarray, total: np.ndarray, control: int,
             alpha: float) -> Evaluation:
    """Anytime-valid differences ``arm − control`` of each guardrail metric's mean, and which
    (guardrail, arm) pairs breach their rule with confidence (module docstring).

    Parameters
    ----------
    n, total : array (G, K)
        Per guardrail and arm: values recorded and their sum.
    control : int
        The control arm's index.
    alpha : float
        The error probability over all guardrails, arms and looks: each arm's sequence is at
        level 1 − alpha / (G·K).
    """
    G, K = n.shape
    lo = np.array([[g.low] for g in guardrails], dtype=float)
    hi = np.array([[g.high] for g in guardrails], dtype=float)
    n = n.astype(float)
    low, high = bounded_sequence(total, n, lo, hi, alpha / (G * K))
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n > 0, total / np.maximum(n, 1), np.nan)
    diff = mean - mean[:, control, None]
    # on the event that every arm's sequence holds, the difference lies between these
    diff_low, diff_high = difference_bounds(low, high, control)
    margin = np.array([[g.margin] for g in guardrails], dtype=float)
    up = np.array([[g.rule == "max_increase"] for g in guardrails])
    breached = np.where(up, diff_low > margin, diff_high < -margin)
    breached[:, control] = False
    for a in (diff, diff_low, diff_high):
        a[:, control] = np.nan
    return Evaluation(diff, diff_low, diff_high, breached)
