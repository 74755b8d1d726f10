"""Optimal experimental design: G-optimal and XY (transductive) designs, and rounding.

``g_optimal(X)`` and ``xy_optimal(X, Y)`` return a ``Design`` whose weights come with a
certified optimality gap; ``Y`` may be ``Differences(Z)``, the lazy set of pairwise
differences. ``round_allocation(weights, n)`` turns a design into ``n`` pulls (Pukelsheim's
efficient rounding, Fiez et al. 2019, Appendix B).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

__all__ = [
    "Design",
    "DesignConvergenceWarning",
    "Differences",
    "design_value",
    "g_optimal",
    "pairwise_design",
    "round_allocation",
    "round_allocations",
    "rounding_min_samples",
    "xy_optimal",
]

# imported on first use (PEP 562): importing one module of the package does not import them
# all (and scipy with them)
__getattr__, __dir__ = lazy_exports(__name__, {
    ".differences": ["Differences"],
    ".frank_wolfe": ["g_optimal"],
    ".information": ["design_value"],
    ".pairwise": ["pairwise_design"],
    ".result": ["Design", "DesignConvergenceWarning"],
    ".rounding": ["round_allocation", "round_allocations", "rounding_min_samples"],
    ".xy": ["xy_optimal"],
}, globals())

if TYPE_CHECKING:
    from .differences import Differences
    from .frank_wolfe import g_optimal
    from .information import design_value
    from .pairwise import pairwise_design
    from .result import Design, DesignConvergenceWarning
    from .rounding import round_allocation, round_allocations, rounding_min_samples
    from .xy import xy_optimal
