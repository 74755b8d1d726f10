"""Planned looks: a group-sequential test for teams that look a few planned times, narrower at
those looks than a confidence sequence, and refused at a look beyond the plan.

The method (Lan & DeMets 1983; Jennison & Turnbull 2000, *Group Sequential Methods*, ch. 7 and
19): with K looks planned at information fractions t_1 < … < t_K = 1 (by default the units per
arm at look k over those at the last: equal steps, t_k = k/K), an α-spending function α(t)
says how much of the two-sided α the test may have spent by t. The critical values c_k solve,
under no difference, P(|Z_j| < c_j for j < k, |Z_k| ≥ c_k) = α(t_k) − α(t_{k−1}), where Z_k is
the difference over its standard error at look k; the Z_k of a difference of means are, to the
normal approximation, a Brownian motion at the times t_k (Cov(Z_i, Z_j) = √(t_i/t_j)). The
probabilities are computed by the recursive numerical integration of Armitage, McPherson & Rowe
(1969) (Jennison & Turnbull §19.2) on a grid of the continuation region, and each c_k by
bisection. Spending functions: ``"obrien-fleming"`` α(t) = 2 − 2Φ(z_{α/2}/√t) (little α early,
nearly the fixed-n critical value at the end) and ``"pocock"`` α(t) = α·log(1 + (e − 1)t).

At look k the **repeated confidence interval** diff ± c_k·se (Jennison & Turnbull ch. 9) covers
the true difference at all K planned looks together with probability 1 − α (to the normal
approximation, as the asymptotic sequence); its verdict is the test's. At the last planned look
c_K is close to z_{α/2} (2.024 for O'Brien-Fleming with 5 looks at α = 0.05, against 1.960),
where an anytime-valid sequence tuned there is about 1.5× wider: the cost of the plan is that a
look beyond it, or an unplanned extra look, is not covered — :func:`planned_interval` refuses it
by name. Under adaptive allocation the information fractions are random; the guarantee then
rests on taking t_k as the planned fractions (as here) and the normal approximation
(Jennison & Turnbull §7.2.2 on information-based designs).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from ..errors import ExperimentError

__all__ = ["SPENDING", "GroupSequential", "planned_interval"]

#: The α-spending functions offered.
SPENDING = ("obrien-fleming", "pocock")

_N = NormalDist()
# points of the integration grid over the continuation region (odd: Simpson's rule)
_GRID = 801


def _spent(t: np.ndarray, alpha: float, spending: str) -> np.ndarray:
    if spending == "pocock":
        return alpha * np.log1p((math.e - 1) * t)
    z = _N.inv_cdf(1 - alpha / 2)
    return np.array([2 - 2 * _N.cdf(z / math.sqrt(s)) for s in t])


def _phi(x: np.ndarray) -> np.ndarray:
    return np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)


def _simpson(grid: np.ndarray) -> np.ndarray:
    """Simpson's rule weights on an evenly spaced grid of an odd number of points."""
    w = np.ones(grid.size)
    w[1:-1:2], w[2:-1:2] = 4.0, 2.0
    return w * (grid[1] - grid[0]) / 3.0


def _cdf(x: np.ndarray) -> np.ndarray:
    from scipy.special import ndtr

    return ndtr(x)


@dataclass(frozen=True)
class GroupSequential:
    """A group-sequential design: ``looks`` planned, their information ``fractions``, the
    two-sided ``alpha``, the ``spending`` function and the critical values ``bounds`` (one per
    look, on the z scale)."""

    looks: int
    alpha: float
    spending: str
    fractions: tuple[float, ...]
    bounds: tuple[float, ...]

    @classmethod
    def plan(cls, looks: int, alpha: float = 0.05, spending: str = "obrien-fleming",
             fractions: tuple[float, ...] | None = None) -> GroupSequential:
        """The design's critical values (module docstring); refused by name unless ``looks``
        is an integer in [1, 50], ``alpha`` in (0, 1), ``spending`` one of :data:`SPENDING`
        and ``fractions`` (default k/K) increasing in (0, 1] ending at 1."""
        if isinstance(looks, bool) or not isinstance(looks, (int, np.integer)) \
                or not 1 <= looks <= 50:
            raise ExperimentError(f"looks must be an integer from 1 to 50 (the looks planned), "
                                  f"got {looks!r}")
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) \
                or not 0 < alpha < 1:
            raise ExperimentError(f"alpha must be a number in (0, 1), got {alpha!r}")
        if spending not in SPENDING:
            raise ExperimentError(f"spending must be one of {list(SPENDING)}, got {spending!r}")
        t = (np.arange(1, looks + 1) / looks if fractions is None
             else np.asarray(fractions, dtype=float))
        if t.shape != (looks,) or not np.all(np.diff(t) > 0) or not 0 < t[0] \
                or not math.isclose(t[-1], 1.0):
            raise ExperimentError(f"fractions must be {looks} increasing numbers in (0, 1] "
                                  f"ending at 1 (each look's share of the last look's units), "
                                  f"got {fractions!r}")
        spent = _spent(t, float(alpha), spending)
        return cls(int(looks), float(alpha), spending, tuple(map(float, t)),
                   tuple(_bounds(t, np.diff(spent, prepend=0.0))))

    def interval(self, diff: float | np.ndarray, se: float | np.ndarray, look: int
                 ) -> tuple[np.ndarray, np.ndarray]:
        """The repeated confidence interval diff ± c_look·se at planned look ``look``
        (1-based); a look beyond the plan is refused by name."""
        return planned_interval(self, diff, se, look)


def _bounds(t: np.ndarray, increments: np.ndarray) -> list[float]:
    """Critical values c_k with P(continue to k, cross at k) = increments[k] under the null:
    the density of the Brownian motion W(t_k) = Z_k·√t_k on the continuation region, carried
    from look to look by the normal transition kernel (Armitage, McPherson & Rowe 1969)."""
    bounds: list[float] = []
    grid = density = None
    prev_t = 0.0
    for k, (tk, spend) in enumerate(zip(t, increments, strict=True)):
        dt = tk - prev_t
        sd = math.sqrt(dt)

        def cross(c: float, grid=grid, density=density, sd=sd, tk=tk) -> float:
            b = c * math.sqrt(tk)  # the boundary on the W scale
            if grid is None:
                return 2 * (1 - _N.cdf(b / sd))
            w = density * _simpson(grid)
            return float(np.sum(w * (_cdf((-b - grid) / sd) + 1 - _cdf((b - grid) / sd))))

        lo, hi = 0.0, 40.0
        if spend <= 0:
            c = math.inf
        else:
            for _ in range(60):
                mid = (lo + hi) / 2
                lo, hi = (mid, hi) if cross(mid) > spend else (lo, mid)
            c = hi
        bounds.append(c)
        if k == len(t) - 1:
            break
        b = (c if math.isfinite(c) else 40.0) * math.sqrt(tk)
        new = np.linspace(-b, b, _GRID)
        if grid is None:
            density = _phi(new / sd) / sd
        else:
            w = density * _simpson(grid)
            density = (_phi((new[:, None] - grid[None, :]) / sd) / sd) @ w
        grid = new
        prev_t = tk
    return bounds


def planned_interval(design: GroupSequential, diff: float | np.ndarray,
                     se: float | np.ndarray, look: int) -> tuple[np.ndarray, np.ndarray]:
    """diff ± c_look·se (module docstring), elementwise; ``look`` is 1-based and at most
    ``design.looks`` (a look beyond the plan is not covered: refused by name)."""
    if isinstance(look, bool) or not isinstance(look, (int, np.integer)) or look < 1:
        raise ExperimentError(f"look must be a positive integer (1 for the first planned look), "
                              f"got {look!r}")
    if look > design.looks:
        raise ExperimentError(f"look {look} is beyond the plan of {design.looks} looks: a "
                              "group-sequential test spends its alpha over the planned looks "
                              "only; use the anytime-valid sequences (the default) to look "
                              "more often")
    c = design.bounds[look - 1]
    d, s = np.asarray(diff, dtype=float), np.asarray(se, dtype=float)
    return d - c * s, d + c * s
