"""Guardrails: metrics recorded beside the reward that pause a live experiment when an arm
harms them, with confidence, compared with the control arm.

A guardrail is ``{"metric": "latency", "rule": "max_increase", "margin": 50,
"range": [0, 2000]}``: every unit's reward is recorded with its ``latency``, and an arm
breaches the guardrail when its mean latency exceeds the control's by more than ``margin``
*with confidence*: the anytime-valid **one-sided** lower end of the difference
``arm − control`` lies above ``margin``. ``"max_decrease"`` is the mirror rule (the arm's mean
must not fall below the control's by more than ``margin``: the one-sided upper end lies below
−``margin``). ``range`` is optional: with it the metric is bounded and gets exact sequences;
without it (latency, revenue: unbounded) it is continuous and gets the asymptotic one.

Sequences — the verdicts' own (:mod:`banditkit.live.readout.sequences`), on each difference
directly,
one-sided (only harm pauses), α = ``guardrail_alpha`` split over the G guardrails × (K − 1)
differences:

- **bounded** (``range`` given): values rescaled to [0, 1]; the control's own
  empirical-Bernstein sequence at α·s/G (s = 0.1) bounds the
  nuisance, and each difference's exact sequence
  (:func:`~banditkit.live.readout.sequences.difference_sequence`, ``side="lower"``; the mirror rule
  on values hi + lo − x) at α(1 − s)/(G(K − 1)). This is the λ-mixture
  (``sequence="mixture"`` of the verdicts), not the verdicts' plug-in default: the plug-in's
  sums follow each arm's values in assignment order, and the guardrails' prefix keeps only
  the count, sum and sum of squares of each metric (G × K more running sums, advanced unit by
  unit, would be needed); a guardrail also watches for a harm of unknown size over the whole
  experiment, where the mixture's robustness far from ``tune_n`` is what counts;
- **continuous** (no ``range``): the one-sided asymptotic sequence
  (:func:`~banditkit.live.readout.sequences.one_sided_from`, Waudby-Smith et al. 2024 with a
  half-normal
  mixture) on d = mean_a − mean_c with v = s²_a/n_a + s²_c/n_c, at α/(G(K − 1)); a normal
  approximation, no bound below 100 values per arm.

By a union bound, however often the guardrails are evaluated (every record and status), the
chance that a guardrail which holds in truth ever pauses the experiment is at most α (exactly
for bounded metrics, asymptotically for continuous ones). Until issue 23 the differences were
the subtraction of two per-arm beta-binomial intervals at α/(G·K), two-sided: 51,800 units per
arm to see a latency +10% that a fixed-n test sees in 390 (docs/experiment.md has the rerun).

What is counted: each arm's **resolved prefix** (:mod:`banditkit.live.outcomes.resolved_prefix`),
the metric values of its units before the one cursor G, the first unit of *any* arm still waiting
for an outcome, as for the rewards: the two arms compared are a prefix of their joint
assignment order, so values recorded quickly (or slowly) because of what they are cannot bias
the comparison. A harm that makes outcomes *disappear* (an arm that crashes the
page, so its units never report anything) leaves no metric value to compare: it is seen by the
missing-outcome check (:func:`banditkit.live.readout.statistics.missing_outcome_warnings`; under
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

from ..errors import ExperimentError
from ..inputs import check_summable
from .sequences import bernstein_sequence, difference_sequence, one_sided_from

#: Bounded guardrails: the share of each guardrail's α spent on the control's own sequence
#: (0.1: the verdicts' ``control_share`` was 0.1 when guardrails were measured; it is 0.05 now).
CONTROL_SHARE = 0.1

__all__ = ["RULES", "Guardrail", "check_guardrails", "check_metrics", "evaluate"]

#: ``max_increase``: arm mean − control mean must not exceed ``margin``;
#: ``max_decrease``: control mean − arm mean must not exceed ``margin``.
RULES = ("max_increase", "max_decrease")

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Guardrail:
    """One guardrail: ``metric`` (a name), ``rule`` (:data:`RULES`), ``margin`` ≥ 0 in the
    metric's units, and the metric's declared ``low`` < ``high`` range (both ``None``: a
    continuous metric)."""

    metric: str
    rule: str
    margin: float
    low: float | None
    high: float | None

    @property
    def bounded(self) -> bool:
        return self.low is not None

    def as_json(self) -> dict[str, Any]:
        return {"metric": self.metric, "rule": self.rule, "margin": self.margin,
                "range": None if self.low is None else [self.low, self.high]}

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
        missing = [k for k in ("metric", "rule", "margin") if k not in g]
        if unknown or missing:
            raise ExperimentError(f"{where} takes metric, rule, margin and (optional) range"
                                  + (f"; unknown: {unknown}" if unknown else "")
                                  + (f"; missing: {missing}" if missing else ""))
        metric = g["metric"]
        if not isinstance(metric, str) or not _NAME.fullmatch(metric):
            raise ExperimentError(f"{where}.metric must be a name (letters, digits, _; not "
                                  f"starting with a digit), got {metric!r}")
        if g["rule"] not in RULES:
            raise ExperimentError(f"{where}.rule must be one of {list(RULES)}, got "
                                  f"{g['rule']!r}")
        bounds = g.get("range")
        low = high = None
        if bounds is not None:
            pair = (None, None) if isinstance(bounds, (str, bytes, Mapping)) or not isinstance(
                bounds, Sequence) or len(bounds) != 2 else tuple(_real(b) for b in bounds)
            low, high = pair
            if low is None or high is None or not low < high:
                raise ExperimentError(f"{where}.range must be two finite numbers lo < hi (the "
                                      f"metric's bounds; omit it for an unbounded metric), "
                                      f"got {bounds!r}")
        margin = _real(g["margin"])
        if low is None:
            if margin is None or not margin >= 0:
                raise ExperimentError(f"{where}.margin must be a number >= 0 (in the metric's "
                                      f"units), got {g['margin']!r}")
        elif margin is None or not 0 <= margin < high - low:
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
        outside = ~np.isfinite(values)
        if g.bounded:
            outside |= (values < g.low) | (values > g.high)
        bad = np.flatnonzero(outside)
        if bad.size:
            where = (f" and in its declared range [{g.low:g}, {g.high:g}]" if g.bounded
                     else "")
            raise ExperimentError(f"metrics[{g.metric!r}] must be finite{where}: value "
                                  f"{int(bad[0])} is {values[bad[0]]}")
        check_summable(f"metrics[{g.metric!r}]", values)
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


def evaluate(guardrails: Sequence[Guardrail], n: np.ndarray, total: np.ndarray,
             total_sq: np.ndarray, control: int, alpha: float, *, n_tune: float = 10_000,
             control_share: float = CONTROL_SHARE) -> Evaluation:
    """Anytime-valid one-sided bounds on the differences ``arm − control`` of each guardrail
    metric's mean, and which (guardrail, arm) pairs breach their rule with confidence (module
    docstring).

    Parameters
    ----------
    n, total, total_sq : array (G, K)
        Per guardrail and arm: values recorded, their sum and their sum of squares.
    control : int
        The control arm's index.
    alpha : float
        The error probability over all guardrails, arms and looks, split over the G
        guardrails × (K − 1) differences.
    n_tune : float
        Units per arm where the sequences are narrowest (the verdicts' ``tune_n``).
    control_share : float
        Bounded metrics: the share of each guardrail's α spent on the control's own sequence.

    Returns
    -------
    Evaluation
        ``diff_low`` is the one-sided lower end for ``max_increase`` (``diff_high`` +inf),
        ``diff_high`` the upper end for ``max_decrease`` (``diff_low`` −inf).
    """
    G, K = n.shape
    n, total, total_sq = (np.asarray(a, dtype=float) for a in (n, total, total_sq))
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n > 0, total / np.maximum(n, 1), np.nan)
    diff = mean - mean[:, control, None]
    per = alpha / (G * max(K - 1, 1))
    diff_low, diff_high = np.full((G, K), -np.inf), np.full((G, K), np.inf)
    for j, g in enumerate(guardrails):
        up = g.rule == "max_increase"
        # the harm's direction made "greater": mirror the values for max_decrease
        if g.bounded:
            span = g.high - g.low
            S = (total[j] - n[j] * g.low) / span
            Q = (total_sq[j] - 2 * g.low * total[j] + n[j] * g.low ** 2) / span ** 2
            if not up:
                S, Q = n[j] - S, Q - 2 * S + n[j]  # x' = 1 − x
            S = np.clip(S, 0.0, n[j])
            Q = np.clip(Q, np.divide(S * S, np.maximum(n[j], 1)), S)
            c_low, c_high = bernstein_sequence(n[j, control], S[control], Q[control],
                                               alpha * control_share / G, n_tune=n_tune)
            low, _ = difference_sequence(n[j], S, Q, control, c_low, c_high,
                                         per * (1 - control_share), n_tune=n_tune,
                                         side="lower")
            low = span * low
        else:
            sign = 1.0 if up else -1.0
            with np.errstate(invalid="ignore", divide="ignore"):
                var = np.maximum(total_sq[j] - n[j] * np.nan_to_num(mean[j]) ** 2, 0.0) / (
                    n[j] - 1)
                v = var / n[j] + var[control] / n[j, control]
            low = one_sided_from(sign * diff[j], v, n[j], control, per, n_tune=n_tune)
        if up:
            diff_low[j] = low
        else:
            diff_high[j] = -low
    margin = np.array([[g.margin] for g in guardrails], dtype=float)
    up = np.array([[g.rule == "max_increase"] for g in guardrails])
    breached = np.where(up, diff_low > margin, diff_high < -margin)
    breached[:, control] = False
    for a in (diff, diff_low, diff_high):
        a[:, control] = np.nan
    return Evaluation(diff, diff_low, diff_high, breached)
