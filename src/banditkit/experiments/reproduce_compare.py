"""Our number beside each reference, with a 95% interval and a verdict.

For every :class:`~.reference.Reference` of a figure, :func:`compare_figure` finds the run's
sweep point that is the reference's (same parameters; same horizon, unless the horizon is only a
budget cap of a fixed-confidence identifier), computes ours with its 95% interval and trial
count, and judges:

* ``within noise``: the reference is compatible with our interval (``=``: the reference's range
  ``value ± tolerance`` meets our interval; ``<=``: our interval's lower end is at most
  ``value + tolerance``, i.e. ours is not significantly above the bound; ``>=`` likewise);
* ``differs, explained``: not within noise, and the reference links the docs paragraph that
  explains why (``Reference.explained``);
* ``differs, unexplained``: not within noise, no explanation;
* ``not compared``: the run has no counterpart (a quick run's points are not the paper's, the
  figure was skipped, no successful trial).

Intervals: Student t for means, Wilson for proportions (error rates, ``any_*`` facts), Newcombe
for a difference of two error rates, the delta method for a ratio of means, Clopper–Pearson for
the non-replication of pairs; ``differing_rounds`` is the min–max over pairs (the paper gives a
range over its pairs).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .reference import Reference
from .results import error_difference
from .spec import FigureSpec, _point_key

__all__ = ["VERDICTS", "Comparison", "Ours", "compare_figure", "judge", "run_point_of"]

#: The verdicts, in the order the summary counts them.
VERDICTS = ("within noise", "differs, explained", "differs, unexplained", "not compared")
#: z of a two-sided 95% normal interval (differences and ratios of means).
Z95 = 1.959963984540054


@dataclass(frozen=True)
class Ours:
    """Our number: ``value`` with its interval ``[lo, hi]`` (of kind ``interval``) over ``n``
    trials (pairs for replicability metrics; ``n_versus`` those of the other algorithm)."""

    value: float
    lo: float
    hi: float
    n: int
    interval: str
    n_versus: int | None = None

    @property
    def trials(self) -> str:
        """The trial count as the report prints it."""
        unit = "pairs" if self.interval in ("Clopper–Pearson", "min–max over pairs") else ""
        text = f"{self.n}" if self.n_versus is None else f"{self.n} vs {self.n_versus}"
        return f"{text} {unit}".strip()


@dataclass(frozen=True)
class Comparison:
    """A reference, the run point it was compared at (``None``: none), ours and the verdict
    (``reason`` says why a reference was not compared)."""

    reference: Reference
    run_point: int | None
    ours: Ours | None
    verdict: str
    reason: str = ""


def judge(ref: Reference, ours: Ours | None) -> str:
    """The verdict for ``ref`` against ``ours`` (see the module docstring)."""
    if ours is None or not _finite(ours.value):
        return "not compared"
    lo = ours.lo if _finite(ours.lo) else ours.value
    hi = ours.hi if _finite(ours.hi) else ours.value
    low, high = ref.value - ref.tolerance, ref.value + ref.tolerance
    if ref.relation == "=":
        within = lo <= high and hi >= low
    elif ref.relation == "<=":
        within = lo <= high
    else:
        within = hi >= low
    if within:
        return "within noise"
    return "differs, explained" if ref.explained else "differs, unexplained"


def run_point_of(full: FigureSpec, run: FigureSpec, point: int) -> int | None:
    """Index in ``run``'s points of ``full``'s point ``point``: the same parameters and the
    same horizon (a fixed-confidence figure's horizon is only a budget cap, so it may differ);
    ``None`` when the run does not include it."""
    target = full.points[point]
    key = _point_key(target)
    cap = _horizon_is_cap(full)
    for j, p in enumerate(run.points):
        if _point_key(p) == key and (cap or run.horizon_at(p) == full.horizon_at(target)):
            return j
    return None


def compare_figure(full: FigureSpec, run: FigureSpec | None, refs: Sequence[Reference],
                   result: Any | None, why_not_run: str = "") -> list[Comparison]:
    """One :class:`Comparison` per reference of a figure.

    Parameters
    ----------
    full : FigureSpec
        The figure at the paper's settings (references index its points).
    run : FigureSpec or None
        The spec that was run (``full`` or its quick version); ``None`` when not run.
    refs : sequence of Reference
    result : RunResult or None
        The run's results (:class:`~.runner.RunResult`).
    why_not_run : str
        Reason printed when the figure was not run (skipped for a missing data set).
    """
    out = []
    for ref in refs:
        if run is None or result is None:
            out.append(Comparison(ref, None, None, "not compared",
                                  why_not_run or "figure not run"))
            continue
        if ref.metric == "failure_rate_spread":
            every = [run_point_of(full, run, p) for p in range(len(full.points))]
            ours = None if None in every else _spread(ref, every, result)  # type: ignore[arg-type]
            out.append(Comparison(ref, 0, ours, judge(ref, ours),
                                  *(() if ours else ("not every point in this run",))))
            continue
        j = run_point_of(full, run, ref.point)
        if j is None:
            out.append(Comparison(ref, None, None, "not compared",
                                  "point not in this run"))
            continue
        ours = ours_for(ref, j, result)
        if ours is None:
            out.append(Comparison(ref, j, None, "not compared",
                                  "no successful trial"))
            continue
        out.append(Comparison(ref, j, ours, judge(ref, ours)))
    return out


def ours_for(ref: Reference, point: int, result: Any) -> Ours | None:
    """Our value of ``ref``'s quantity at run point ``point`` (``None``: not measured)."""
    if ref.metric in ("non_replication", "differing_rounds"):
        return _pairs(ref, point, getattr(result, "pairs", None))
    a = _row(result.summary, point, ref.algorithm)
    if a is None or f"{ref.metric}_mean" not in a or not _finite(a[f"{ref.metric}_mean"]):
        return None
    if ref.versus is None:
        kind = ("Wilson" if ref.metric == "failure_rate" or ref.metric.startswith("any_")
                else "Student t")
        return Ours(float(a[f"{ref.metric}_mean"]), float(a[f"{ref.metric}_lo"]),
                    float(a[f"{ref.metric}_hi"]), int(a["n_ok"]), kind)
    b = _row(result.summary, point, ref.versus)
    if b is None or not _finite(b.get(f"{ref.metric}_mean")):
        return None
    if ref.metric == "failure_rate" and ref.by == "difference":
        ka, na = _errors(result.trials, point, ref.algorithm)
        kb, nb = _errors(result.trials, point, ref.versus)
        if not na or not nb:
            return None
        diff, lo, hi = error_difference(ka, na, kb, nb)
        return Ours(diff, lo, hi, na, "Newcombe", nb)
    ma, mb = float(a[f"{ref.metric}_mean"]), float(b[f"{ref.metric}_mean"])
    sa, sb = _se(a, ref.metric), _se(b, ref.metric)
    if ref.by == "difference":
        half = Z95 * math.hypot(sa, sb)
        return Ours(ma - mb, ma - mb - half, ma - mb + half, int(a["n_ok"]), "normal",
                    int(b["n_ok"]))
    if mb == 0:
        return None
    r = ma / mb
    rel = math.hypot(sa / ma if ma else 0.0, sb / mb)
    half = Z95 * abs(r) * rel
    return Ours(r, r - half, r + half, int(a["n_ok"]), "delta method", int(b["n_ok"]))


def _spread(ref: Reference, points: list[int], result: Any) -> Ours | None:
    """The algorithm's highest error rate over ``points`` minus its lowest, with the Newcombe
    interval of those two rates' difference (the two points are chosen after looking, so the
    interval is optimistic, and says so); with ``versus``, the difference of the two spreads
    with a normal interval from the four rates (Agresti–Coull variances: finite at 0 and 1)."""
    def ends(algorithm: str) -> tuple[tuple[int, int], tuple[int, int]] | None:
        counts = [_errors(result.trials, j, algorithm) for j in points]
        counts = [(k, n) for k, n in counts if n]
        if len(counts) < 2:
            return None
        rates = [k / n for k, n in counts]
        return counts[int(np.argmax(rates))], counts[int(np.argmin(rates))]

    a = ends(ref.algorithm)
    if a is None:
        return None
    (ka, na), (kb, nb) = a
    if ref.versus is None:
        diff, lo, hi = error_difference(ka, na, kb, nb)
        return Ours(diff, lo, hi, na, "Newcombe, highest − lowest point", nb)
    b = ends(ref.versus)
    if b is None:
        return None

    def variance(k: int, n: int) -> float:
        p = (k + 2) / (n + 4)
        return p * (1 - p) / (n + 4)

    (kc, nc), (kd, nd) = b
    value = (ka / na - kb / nb) - (kc / nc - kd / nd)
    half = Z95 * math.sqrt(sum(variance(k, n) for k, n in ((ka, na), (kb, nb), (kc, nc),
                                                            (kd, nd))))
    return Ours(value, value - half, value + half, na, "normal, spreads", nc)


def _pairs(ref: Reference, point: int, pairs: pd.DataFrame | None) -> Ours | None:
    if pairs is None or pairs.empty:
        return None
    sel = pairs[(pairs["point"] == point) & (pairs["algorithm"] == ref.algorithm)]
    if sel.empty:
        return None
    r = sel.iloc[0]
    if ref.metric == "non_replication":
        return Ours(float(r["non_replication"]), float(r["ci_lo"]), float(r["ci_hi"]),
                    int(r["pairs"]), "Clopper–Pearson")
    return Ours(float(r["diff_mean"]), float(r["diff_min"]), float(r["diff_max"]),
                int(r["pairs"]), "min–max over pairs")


def _row(summary: pd.DataFrame, point: int, algorithm: str) -> dict[str, Any] | None:
    if summary.empty:
        return None
    sel = summary[(summary["point"] == point) & (summary["algorithm"] == algorithm)]
    return None if sel.empty else sel.iloc[0].to_dict()


def _errors(trials: pd.DataFrame, point: int, algorithm: str) -> tuple[int, int]:
    """(wrong, judged) over the successful identification trials of a point and algorithm."""
    sel = trials[(trials["point"] == point) & (trials["algorithm"] == algorithm)
                 & (trials["status"] == "ok") & trials["correct"].notna()]
    correct = sel["correct"].astype(bool).to_numpy()
    return int(correct.size - correct.sum()), int(correct.size)


def _se(row: dict[str, Any], metric: str) -> float:
    se = row.get(f"{metric}_se")
    return float(se) if _finite(se) else 0.0


def _horizon_is_cap(spec: FigureSpec) -> bool:
    """A fixed-confidence figure (sample complexity until the identifier stops): its horizon
    is a safety cap that a correct run never reaches, not part of the experiment."""
    return spec.plot.metric == "n_pulls"


def _finite(x: Any) -> bool:
    try:
        return bool(np.isfinite(float(x)))
    except (TypeError, ValueError):
        return False
