"""The result of an optimal-design computation: weights plus a certificate of their quality."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Design", "DesignConvergenceWarning"]


class DesignConvergenceWarning(RuntimeWarning):
    """The iteration cap was reached before the certified gap met the tolerance."""


@dataclass(frozen=True, eq=False)
class Design:
    """An approximate optimal design λ on the rows of ``X`` with a certified optimality gap.

    Attributes
    ----------
    weights : np.ndarray
        λ, shape ``(|X|,)``, non-negative, sums to 1 (read-only array).
    value : float
        The objective at ``weights``: ``max_y ||y||²_{A(λ)^-1}`` with ``A(λ) = Σ_x λ_x x xᵀ``
        (for a G-optimal design, ``Y = X``). Computed from ``weights`` afresh, not tracked.
    lower_bound : float
        A certified lower bound on the optimum over all of the simplex (``d`` for G-optimal
        designs by the Kiefer–Wolfowitz theorem; a duality bound for XY designs).
    iterations : int
        Frank–Wolfe iterations spent (inner iterations, summed over cutting-plane rounds).
    converged : bool
        Whether ``relative_gap`` reached the requested tolerance.

    Notes
    -----
    ``gap = value - lower_bound`` is a certified absolute gap: ``value - OPT <= gap``.
    ``relative_gap = gap / lower_bound``, so ``value <= (1 + relative_gap) * OPT``.
    """

    weights: np.ndarray
    value: float
    lower_bound: float
    iterations: int
    converged: bool = True
    support: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        w = np.array(self.weights, dtype=float)
        w.setflags(write=False)
        sup = np.flatnonzero(w > 0)
        sup.setflags(write=False)
        object.__setattr__(self, "weights", w)
        object.__setattr__(self, "support", sup)

    @property
    def gap(self) -> float:
        """Certified absolute gap ``value - lower_bound`` (≥ value − optimum)."""
        return float(self.value - self.lower_bound)

    @property
    def relative_gap(self) -> float:
        """Certified relative gap ``gap / lower_bound`` (so value ≤ (1 + relative_gap)·OPT)."""
        return float(self.gap / self.lower_bound)

    def __repr__(self) -> str:
        return (f"Design(|X|={self.weights.size}, support={self.support.size}, "
                f"value={self.value:.6g}, lower_bound={self.lower_bound:.6g}, "
                f"relative_gap={self.relative_gap:.3g}, iterations={self.iterations})")


def warn_unconverged(kind: str, relative_gap: float, tol: float, max_iter: int) -> None:
    """Emit the one warning used when a design hits its iteration cap."""
    warnings.warn(f"{kind} design stopped at max_iter={max_iter} with certified relative gap "
                  f"{relative_gap:.3g} > tol={tol:.3g}; the returned Design reports the true gap",
                  DesignConvergenceWarning, stacklevel=3)
