"""The oracle's solvers the identifiers call at every round: compiled (:mod:`.oracle_kernels`)
when :func:`banditkit.jit.available`, else :mod:`.oracle`'s plain Python (the same numbers)."""

from __future__ import annotations

from collections.abc import Callable

from . import oracle

__all__ = ["bounds_solver", "weights_solver"]


def weights_solver() -> Callable[..., float]:
    """:func:`~.oracle.optimal_weights`, compiled when possible (about a thousand times
    faster: Track-and-Stop solves it at every pull)."""
    from ... import jit

    if not jit.available():
        return oracle.optimal_weights
    from .oracle_kernels import optimal_weights

    return optimal_weights  # type: ignore[no-any-return]


def bounds_solver() -> Callable[..., None]:
    """:func:`~.oracle.all_kl_bounds`, compiled when possible."""
    from ... import jit

    if not jit.available():
        return oracle.all_kl_bounds
    from .oracle_kernels import all_kl_bounds

    return all_kl_bounds  # type: ignore[no-any-return]
