"""What :meth:`banditkit.Experiment.status` shows per arm: counts, means, intervals, differences to
the control arm with a verdict, and the missing-outcome check — all from per-arm SQL aggregates
(count, sum, sum of squares), so status costs O(K) in Python however many units there are.

Two kinds of interval (``intervals=``):

``"anytime"`` (default)
    Confidence sequences (:mod:`banditkit.live.anytime`), valid at every look at once. The
    error α is split evenly over the K arms: each arm's sequence has level 1 − α/K, so by the
    union bound the event E = "every arm's interval holds at every look" has probability
    ≥ 1 − α. On E, μ_a − μ_c ∈ [low_a − high_c, high_a − low_c] for every arm a and the control
    c at every look, so the differences' intervals and the verdicts hold on the same event:
    the chance that any interval shown at any look (arms or differences) misses its target,
    or that any verdict is wrong, is at most α, however often one looks and however the
    algorithm allocated its pulls. Rewards are rescaled from the algorithm's reward range to
    [0, 1]; an algorithm that declares none gets no anytime interval (NaN).
``"fixed"``
    Fixed-n intervals at level 1 − α each (Wilson's for 0/1 rewards, Student-t otherwise,
    clipped to the reward range; differences: mean difference ± z·√(s²_a/n_a + s²_c/n_c)).
    Each is valid for **one look decided in advance** only and nothing is split across arms:
    looking repeatedly, or at K intervals together, errs far more often than α.

Verdict (either kind): ``better`` when the whole difference interval is above 0 (the arm's mean
reward exceeds the control's), ``worse`` when it is below 0, ``undecided`` otherwise; the
control's own row says ``control``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .anytime import confidence_sequence
from .journal import ExperimentError

__all__ = [
    "INTERVALS",
    "ArmSums",
    "arm_table",
    "check_alpha",
    "check_intervals",
    "describe",
    "missing_outcome_warnings",
]

#: The kinds of interval status can show.
INTERVALS = ("anytime", "fixed")


@dataclass(frozen=True)
class ArmSums:
    """Per-arm aggregates of the units table (arrays of length K).

    Attributes
    ----------
    assigned : ndarray of int
        Units assigned (expired ones excluded).
    n : ndarray of int
        Rewards recorded.
    total, total_sq : ndarray of float
        Sum and sum of squares of the rewards.
    binary : ndarray of bool
        Every reward of the arm is 0 or 1.
    """

    assigned: np.ndarray
    n: np.ndarray
    total: np.ndarray
    total_sq: np.ndarray
    binary: np.ndarray


def check_intervals(intervals: object) -> str:
    if not isinstance(intervals, str) or intervals not in INTERVALS:
        raise ExperimentError(f"intervals must be 'anytime' or 'fixed', got {intervals!r}")
    return intervals


def check_alpha(alpha: object) -> float:
    if (isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.integer, np.floating))
            or not 0 < float(alpha) < 1):
        raise ExperimentError(f"alpha must be a number in (0, 1), got {alpha!r}")
    return float(alpha)


def describe(intervals: str, alpha: float, n_arms: int,
             reward_range: tuple[float, float] | None) -> str:
    """One line saying which intervals a status shows and what they are valid for."""
    level = f"{100 * (1 - alpha):g}%"
    if intervals == "fixed":
        return (f"intervals: fixed-n {level} (each valid only for ONE look decided in advance; "
                "repeated looks err far more often)")
    if reward_range is None:
        return ("intervals: anytime-valid unavailable (the algorithm declares no reward range, "
                "which confidence sequences for bounded rewards need): low/high are NaN")
    return (f"intervals: anytime-valid {level} (confidence sequences: every arm, difference and "
            f"verdict holds at every look together; alpha = {alpha:g} split over {n_arms} arms)")


def arm_table(names: list[str], sums: ArmSums, reward_range: tuple[float, float] | None,
              *, intervals: str, alpha: float, control: int) -> pd.DataFrame:
    """The ``arms`` frame of a status: assigned, recorded, mean, low, high, diff, diff_low,
    diff_high, verdict (see the module docstring for the intervals' meaning)."""
    n = sums.n.astype(float)
    has = n > 0
    mean = np.divide(sums.total, n, out=np.full(n.shape, np.nan), where=has)
    if intervals == "anytime":
        low, high = _anytime(sums, reward_range, alpha / len(names))
    else:
        low, high = _fixed(sums, mean, reward_range, alpha)
    low, high = np.where(has, low, np.nan), np.where(has, high, np.nan)
    diff = mean - mean[control]
    if intervals == "anytime":
        # on the event that every arm's sequence holds, the difference lies between these
        diff_low, diff_high = low - high[control], high - low[control]
    else:
        diff_low, diff_high = _fixed_difference(sums, mean, control, alpha)
    verdict = np.where(diff_low > 0, "better", np.where(diff_high < 0, "worse", "undecided"))
    verdict = verdict.astype(object)
    verdict[control] = "control"
    for column in (diff, diff_low, diff_high):
        column[control] = np.nan
    return pd.DataFrame({"assigned": sums.assigned.astype(np.int64),
                         "recorded": sums.n.astype(np.int64), "mean": mean, "low": low,
                         "high": high, "diff": diff, "diff_low": diff_low,
                         "diff_high": diff_high, "verdict": verdict},
                        index=pd.Index(names, name="arm"))


def _anytime(sums: ArmSums, reward_range: tuple[float, float] | None, alpha: float
             ) -> tuple[np.ndarray, np.ndarray]:
    K = sums.n.size
    if reward_range is None:
        return np.full(K, np.nan), np.full(K, np.nan)
    lo, hi = reward_range
    span = hi - lo
    successes = (sums.total - sums.n * lo) / span  # Σ (X − lo)/(hi − lo), in [0, n]
    low, high = confidence_sequence(np.clip(successes, 0.0, sums.n), sums.n, alpha)
    return lo + span * low, lo + span * high


def _fixed(sums: ArmSums, mean: np.ndarray, reward_range: tuple[float, float] | None,
           alpha: float) -> tuple[np.ndarray, np.ndarray]:
    from ..intervals import student_interval, wilson_interval  # scipy: import lazily

    K = sums.n.size
    low, high = np.full(K, np.nan), np.full(K, np.nan)
    for a in range(K):
        n = int(sums.n[a])
        if not n:
            continue
        if sums.binary[a]:  # every reward 0 or 1: a proportion
            low[a], high[a] = wilson_interval(round(float(sums.total[a])), n, 1 - alpha)
        elif n > 1:
            _, _, low[a], high[a] = student_interval(n, float(mean[a]),
                                                     float(np.sqrt(_variance(sums, mean)[a])),
                                                     1 - alpha)
            if reward_range is not None:
                low[a], high[a] = max(low[a], reward_range[0]), min(high[a], reward_range[1])
    return low, high


def _variance(sums: ArmSums, mean: np.ndarray) -> np.ndarray:
    """Sample variances (ddof 1) from the sums; NaN below two rewards."""
    n = sums.n.astype(float)
    squares = np.maximum(sums.total_sq - n * np.nan_to_num(mean) ** 2, 0.0)
    return np.divide(squares, n - 1, out=np.full(n.shape, np.nan), where=n > 1)


def _fixed_difference(sums: ArmSums, mean: np.ndarray, control: int, alpha: float
                      ) -> tuple[np.ndarray, np.ndarray]:
    from scipy.stats import norm

    var = _variance(sums, mean)
    n = sums.n.astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        se = np.sqrt(var / n + var[control] / n[control])
    half = float(norm.ppf(1 - alpha / 2)) * se
    diff = mean - mean[control]
    return diff - half, diff + half


def missing_outcome_warnings(names: list[str], resolved: np.ndarray, answered: np.ndarray,
                             alpha: float) -> list[str]:
    """Warnings when some arm's units go unanswered more often than another's.

    Parameters
    ----------
    names : list of str
        The arms.
    resolved : ndarray of int
        Per arm, the units whose fate is known — answered or expired — among the arm's units
        assigned before its oldest unit still waiting (neither answered nor expired).
    answered : ndarray of int
        How many of those have a reward.
    alpha : float
        The chance that an experiment whose arms all lose outcomes at one common rate ever
        warns, over all looks.

    Notes
    -----
    Null hypothesis: a unit's fate (answered or never) does not depend on its arm, so each
    arm's units in assignment order are independent Bernoulli(r) with one r for all arms. Only
    units assigned before the arm's oldest waiting unit count: a unit assigned an hour ago may
    simply not have answered yet, and counting every assigned unit would make an arm with
    recent traffic (an active arm of an elimination) look like one that loses outcomes. This
    prefix of the arm's sequence ends at a stopping time (whether a unit is still waiting
    depends only on it and the units before it, and on answer delays that do not depend on the
    arm), so each arm's beta-binomial confidence sequence for its answer rate at level
    1 − α/K (:mod:`banditkit.live.anytime`) covers r at every look, and under the null the
    chance that any two arms' sequences ever separate is at most α. A warning names the arms
    whose interval lies wholly below another's. Unanswered units count as lost once expired
    (:meth:`banditkit.Experiment.expire`); until then they keep the batch waiting.
    """
    resolved = np.asarray(resolved, dtype=float)
    answered = np.asarray(answered, dtype=float)
    low, high = confidence_sequence(answered, resolved, alpha / len(names))
    best = int(np.argmax(low))
    losing = [a for a in range(len(names)) if high[a] < low[best]]
    if not losing:
        return []

    def rate(a: int) -> str:
        return (f"{names[a]!r} answered {answered[a]:.0f} of {resolved[a]:.0f} "
                f"({answered[a] / resolved[a]:.1%}; rate in [{low[a]:.3f}, {high[a]:.3f}])")

    return [f"missing outcomes: arm(s) {', '.join(repr(names[a]) for a in losing)} lose "
            f"outcomes more often than {names[best]!r} ({'; '.join(rate(a) for a in losing)}"
            f"; {rate(best)}; units expired or never answered count as lost). A logging or "
            "delivery bug in one variant biases every result: find it before trusting the "
            "means."]
