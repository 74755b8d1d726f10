"""Compiled copies of :mod:`.oracle`'s functions (numba, through :func:`banditkit.jit.njit_with`):
the same source, so the same numbers. Imported on first use by :mod:`.solvers`,
never on the CLI's start-up path (it imports numba)."""

from __future__ import annotations

from ...jit import njit_with
from . import oracle

__all__ = ["all_kl_bounds", "optimal_weights"]

_divergence = njit_with(oracle.divergence)
_g = njit_with(oracle._g, divergence=_divergence)
_x_of_y = njit_with(oracle._x_of_y, divergence=_divergence, _g=_g)
_ratio_sum = njit_with(oracle._ratio_sum, divergence=_divergence, _x_of_y=_x_of_y)
optimal_weights = njit_with(oracle.optimal_weights, divergence=_divergence,
                            _ratio_sum=_ratio_sum)
_kl_bounds = njit_with(oracle.kl_bounds, divergence=_divergence)
all_kl_bounds = njit_with(oracle.all_kl_bounds, kl_bounds=_kl_bounds)
