"""Chance to beat the control and expected loss: **Bayesian summaries, not verdicts**.

Readers who come from GrowthBook or VWO ask for them. They describe the posterior of each
arm's difference to the control under a flat prior and the normal approximation of the
difference of means (the choice gbstats makes for its default Bayesian engine): D ~ N(d̂, v),
d̂ = x̄_a − x̄_c, v = s²_a/n_a + s²_c/n_c. Then

- chance to beat the control: P(D > 0) = Φ(d̂/√v);
- expected loss of choosing the arm: E[max(−D, 0)] = √v·φ(d̂/√v) − d̂·Φ(−d̂/√v) (what is lost, in
  the metric's units, if the arm is rolled out and the control was better), and of keeping
  the control: E[max(D, 0)] = √v·φ(d̂/√v) + d̂·Φ(d̂/√v).

What they are not: they carry no error guarantee. Stopping when the chance to beat the control
first passes 95% is a sequential test with no control of its error (a null experiment looked at
daily crosses 95% far more often than 5% of the time); the verdicts of ``status`` (confidence
sequences) keep theirs however often one looks. :func:`bayesian_frame` labels its frame so.
They use the same counted units as ``status`` (each arm's resolved prefix, corrections
included) and plain means (not CUPED-adjusted or ratio estimates).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

__all__ = ["LABEL", "bayesian_frame", "bayesian_summaries"]

#: What the frame says it is (``frame.attrs["label"]``).
LABEL = ("Bayesian summaries (flat prior, normal approximation): not verdicts; they carry no "
         "error guarantee if you stop on them; the verdicts of status() do")


def bayesian_summaries(n: np.ndarray, total: np.ndarray, total_sq: np.ndarray, control: int
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per arm (last axis): chance to beat the control, expected loss of choosing the arm,
    expected loss of keeping the control (module docstring); the control's row NaN, and NaN
    for arms (or a control) with fewer than 2 values."""
    n = np.asarray(n, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.asarray(total, dtype=float) / n
        var = (np.asarray(total_sq, dtype=float) - n * mean * mean) / (n - 1)
        per = np.where(n > 1, np.maximum(var, 0.0) / n, np.nan)
        d = mean - mean[..., control, None]
        sd = np.sqrt(per + per[..., control, None])
        z = d / sd
    from scipy.special import ndtr as cdf
    phi = np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)
    # sd = 0 (both arms constant): the difference is known
    chance = np.where(sd > 0, cdf(np.nan_to_num(z)), np.where(d > 0, 1.0, np.where(
        d < 0, 0.0, 0.5)))
    chance = np.where(np.isnan(sd), np.nan, chance)
    lose = np.where(sd > 0, sd * phi - d * cdf(np.nan_to_num(-z)), np.maximum(-d, 0.0))
    keep = np.where(sd > 0, sd * phi + d * cdf(np.nan_to_num(z)), np.maximum(d, 0.0))
    out = [np.where(np.isnan(sd), np.nan, v) for v in (chance, lose, keep)]
    for column in out:
        column[..., control] = np.nan
    return out[0], out[1], out[2]


def bayesian_frame(names: list[str], n: np.ndarray, total: np.ndarray,
                   total_sq: np.ndarray, control: int) -> pd.DataFrame:
    """Chance to beat the control and expected losses per arm (``Experiment.bayesian``), from
    each arm's counted units (n, Σy, Σy²): a frame labelled as Bayesian summaries, not
    verdicts (``attrs["label"]``)."""
    chance, lose, keep = bayesian_summaries(n, total, total_sq, control)
    frame = pd.DataFrame({"counted": np.asarray(n).astype(np.int64),
                          "chance_to_beat_control": chance,
                          "expected_loss_choosing_arm": lose,
                          "expected_loss_keeping_control": keep},
                         index=pd.Index(names, name="arm"))
    frame.attrs["label"] = LABEL
    return frame
