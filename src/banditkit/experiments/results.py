"""The tidy tables built from trial records.

The store keeps :class:`~banditkit.experiments.records.TrialRecord` s; the functions here turn
them into pandas frames: one row per trial (:func:`trials_frame`), one row
per checkpoint (:func:`curves_frame`), and per (point, algorithm) means with 95% intervals
(:func:`summarise`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..intervals import mean_interval, newcombe_difference, wilson_interval
from .records import TrialRecord

__all__ = [
    "NONNEGATIVE",
    "SUMMARY_METRICS",
    "curves_frame",
    "error_difference",
    "mean_interval",
    "metric_names",
    "summarise",
    "trials_frame",
    "wilson_interval",
]

#: Per-trial metrics summarised per (point, algorithm), when present.
SUMMARY_METRICS = ("n_pulls", "final_regret", "final_violation", "n_batches", "failure_rate")
#: Metrics that cannot be negative: their intervals are clipped at 0 (a Student-t interval of a
#: sample count reached -3481). Regret is signed: against a constrained optimum, a policy that
#: violates the constraints can earn more than x*.
NONNEGATIVE = ("n_pulls", "final_violation", "n_batches", "violation")


# ---------------------------------------------------------------------------------------------
# Frames

TRIAL_COLUMNS = ("figure", "point", "algorithm", "trial", "status", "error", "n_pulls",
                 "final_regret", "final_violation", "correct", "recommendation", "stopped",
                 "n_batches", "seconds")


def trials_frame(figure: str, records: Sequence[TrialRecord],
                 point_params: Sequence[Mapping[str, Any]],
                 algorithm_order: Sequence[str]) -> pd.DataFrame:
    """One row per trial: the point's parameters as columns, then the metrics.

    Rows are sorted by (point, algorithm in the spec's order, trial), so the frame does not
    depend on the order in which trials finished.
    """
    param_names: list[str] = []
    for params in point_params:
        param_names += [k for k in params if k not in param_names and k not in TRIAL_COLUMNS]
    order = {name: i for i, name in enumerate(algorithm_order)}
    rows = []
    # instance and trial facts (FigureSpec.instance_facts, trial_facts), e.g. the minimum gap
    # of the trial's instance: one column each, after the metrics
    fact_names: list[str] = []
    trial_facts: list[str] = []  # per-trial outcomes (summarised as metrics, not parameters)
    for r in sorted(records, key=lambda r: (r.point, order.get(r.algorithm, len(order)),
                                            r.algorithm, r.trial)):
        params = point_params[r.point] if r.point < len(point_params) else {}
        row = {"figure": figure, "point": r.point}
        row.update({k: _cell(params.get(k)) for k in param_names})
        row.update({"algorithm": r.algorithm, "trial": r.trial, "status": r.status,
                    "error": r.error, "n_pulls": r.n_pulls, "final_regret": r.final_regret,
                    "final_violation": r.final_violation, "correct": r.correct,
                    "recommendation": r.recommendation, "stopped": r.stopped,
                    "n_batches": r.n_batches, "seconds": r.seconds})
        info = r.info or {}
        for k, v in {**(info.get("instance") or {}), **(info.get("facts") or {})}.items():
            if k not in fact_names:
                fact_names.append(k)
            row[k] = v
        for k in info.get("facts") or {}:
            if k not in trial_facts:
                trial_facts.append(k)
        rows.append(row)
    columns = ["figure", "point", *param_names, *TRIAL_COLUMNS[2:], *fact_names]
    frame = pd.DataFrame(rows, columns=columns)
    for col in fact_names:
        frame[col] = frame[col].astype("float64")
    for col in ("n_pulls", "recommendation", "n_batches"):
        frame[col] = frame[col].astype("Int64")
    for col in ("final_regret", "final_violation", "seconds"):
        frame[col] = frame[col].astype("float64")
    for col in ("correct", "stopped"):
        frame[col] = frame[col].astype("boolean")
    frame.attrs["trial_facts"] = trial_facts
    return frame


def _cell(value: Any) -> Any:
    """A point parameter as a frame cell: arrays and lists become tuples (hashable, printable)."""
    if isinstance(value, np.ndarray):
        return tuple(value.tolist())
    if isinstance(value, list):
        return tuple(value)
    return value


def curves_frame(records: Sequence[TrialRecord], algorithm_order: Sequence[str]
                 ) -> pd.DataFrame:
    """Long format: one row per (point, algorithm, trial, checkpoint t) with regret, violation."""
    order = {name: i for i, name in enumerate(algorithm_order)}
    parts = []
    for r in sorted(records, key=lambda r: (r.point, order.get(r.algorithm, len(order)),
                                            r.algorithm, r.trial)):
        if r.status != "ok" or r.checkpoints is None:
            continue
        if r.regret is None and r.violation is None:
            continue
        n = len(r.checkpoints)
        parts.append(pd.DataFrame({
            "point": np.full(n, r.point, dtype=np.int64),
            "algorithm": [r.algorithm] * n,
            "trial": np.full(n, r.trial, dtype=np.int64),
            "t": np.asarray(r.checkpoints, dtype=np.int64),
            "regret": (np.asarray(r.regret, dtype=float) if r.regret is not None
                       else np.full(n, np.nan)),
            "violation": (np.asarray(r.violation, dtype=float) if r.violation is not None
                          else np.full(n, np.nan)),
        }))
    if not parts:
        return pd.DataFrame({"point": pd.Series(dtype="int64"),
                             "algorithm": pd.Series(dtype="object"),
                             "trial": pd.Series(dtype="int64"), "t": pd.Series(dtype="int64"),
                             "regret": pd.Series(dtype="float64"),
                             "violation": pd.Series(dtype="float64")})
    return pd.concat(parts, ignore_index=True)


# ---------------------------------------------------------------------------------------------
# Summaries

def error_difference(k1: int, n1: int, k2: int, n2: int, level: float = 0.95
                     ) -> tuple[float, float, float]:
    """``p1 − p2`` for proportions ``k1/n1`` and ``k2/n2`` with Newcombe's ``level`` interval
    (his method 10: built from the two Wilson intervals; sensible at 0 and 1, unlike
    ``diff ± z·se``). Returns ``(diff, lo, hi)``; NaNs when a sample is empty.

    Newcombe, "Interval estimation for the difference between independent proportions",
    Statistics in Medicine 17 (1998).
    """
    diff, lo, hi = newcombe_difference(k1, n1, k2, n2, level)
    return float(diff), float(lo), float(hi)


def _fact_summary(name: str, values: np.ndarray) -> dict[str, float]:
    """Mean, se and 95% interval of a trial fact: Wilson for a proportion (a fact named
    ``any_*``, each trial 0 or 1), Student t otherwise, clipped at 0 when no value is negative
    (a count). Proportions are told by name, not by their values: a count that happens to be
    0 in every trial is still a count."""
    values = values[np.isfinite(values)]
    if name.startswith("any_") and np.all((values == 0) | (values == 1)):
        k, n = int(values.sum()), int(values.size)
        lo, hi = wilson_interval(k, n)
        mean = k / n
        se = float(np.sqrt(mean * (1 - mean) / n))
    else:
        mean, se, lo, hi = mean_interval(values)
        if values.size and np.all(values >= 0) and np.isfinite(lo):
            lo = max(lo, 0.0)
    return {f"{name}_mean": mean, f"{name}_se": se, f"{name}_lo": lo, f"{name}_hi": hi}


def metric_names(summary: pd.DataFrame) -> list[str]:
    """The summarised metrics of a summary frame (those with ``_mean``, ``_lo`` and ``_hi``
    columns), in column order: every other column but the counts is a point parameter."""
    return [c[:-5] for c in summary.columns if c.endswith("_mean")
            and f"{c[:-5]}_lo" in summary and f"{c[:-5]}_hi" in summary]


def summarise(trials: pd.DataFrame) -> pd.DataFrame:
    """Per (point, algorithm): trial counts and, for each metric, mean, se and 95% interval.

    Columns ``n_ok``, ``n_failed``, then ``{metric}_mean``, ``_se``, ``_lo``, ``_hi`` for
    ``n_pulls``, ``final_regret``, ``final_violation`` and ``n_batches`` over successful trials
    (Student-t interval), and ``failure_rate`` = 1 − mean(correct) for identifiers (Wilson
    interval; its ``_se`` is the binomial standard error). Metrics no trial has are left out.
    Trial facts (``FigureSpec.trial_facts``, listed in ``trials.attrs["trial_facts"]``, e.g. a
    constrained policy's unsafe rounds) are per-trial outcomes, summarised the same way after
    the metrics: an ``any_*`` fact (0 or 1 per trial) as a proportion with its Wilson interval,
    a non-negative one with its interval clipped at 0. The point's parameters (and instance
    facts) are carried as columns.
    """
    if trials.empty:
        return pd.DataFrame(columns=["point", "algorithm", "n_ok", "n_failed"])
    outcomes = [c for c in trials.attrs.get("trial_facts", ()) if c in trials]
    param_cols = [c for c in trials.columns
                  if c not in TRIAL_COLUMNS and c not in ("figure", "point")
                  and c not in outcomes]
    algo_order = list(dict.fromkeys(trials["algorithm"]))
    present = [m for m in ("n_pulls", "final_regret", "final_violation", "n_batches")
               if trials[m].notna().any()]
    has_correct = bool(trials["correct"].notna().any())
    rows = []
    for (point, algorithm), group in trials.groupby(["point", "algorithm"], sort=False):
        ok = group[group["status"] == "ok"]
        row: dict[str, Any] = {"point": int(point)}
        # point parameters are constant in a group; instance facts of per-trial instances
        # (e.g. each trial's minimum gap) vary, and are averaged
        row.update({c: (group[c].mean() if group[c].nunique() > 1 else group[c].iloc[0])
                    for c in param_cols})
        row.update({"algorithm": algorithm, "n_ok": len(ok),
                    "n_failed": int((group["status"] == "failed").sum())})
        for metric in present:
            mean, se, lo, hi = mean_interval(ok[metric].to_numpy(dtype=float, na_value=np.nan))
            if metric in NONNEGATIVE and np.isfinite(lo):
                lo = max(lo, 0.0)
            row.update({f"{metric}_mean": mean, f"{metric}_se": se,
                        f"{metric}_lo": lo, f"{metric}_hi": hi})
        if has_correct:
            correct = ok["correct"].dropna().astype(bool).to_numpy()
            n = correct.size
            wrong = int(n - correct.sum())
            rate = wrong / n if n else np.nan
            lo, hi = wilson_interval(wrong, n)
            se = float(np.sqrt(rate * (1 - rate) / n)) if n else np.nan
            row.update({"failure_rate_mean": rate, "failure_rate_se": se,
                        "failure_rate_lo": lo, "failure_rate_hi": hi})
        for fact in outcomes:
            row.update(_fact_summary(fact, ok[fact].to_numpy(dtype=float, na_value=np.nan)))
        rows.append(row)
    frame = pd.DataFrame(rows)
    frame["_order"] = frame["algorithm"].map({a: i for i, a in enumerate(algo_order)})
    return (frame.sort_values(["point", "_order"], kind="stable").drop(columns="_order")
            .reset_index(drop=True))
