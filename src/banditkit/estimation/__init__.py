"""Estimators: replicable mean / statistical query (and, beside them, least squares)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

__all__ = [
    "grid_width",
    "hoeffding_radius",
    "prop2_samples",
    "replicable_mean",
    "replicable_means",
    "replicable_sq",
    "repmean_precision",
    "repmean_samples",
]

# imported on first use (PEP 562): importing one module of the package does not import them
# all (and scipy with them)
__getattr__, __dir__ = lazy_exports(__name__, {
    ".replicable_lse": ["CoreSet", "ReplicableLSEResult", "core_set", "replicable_lse"],
    ".replicable_mean": ["grid_width", "hoeffding_radius", "prop2_samples", "replicable_mean",
                         "replicable_means", "replicable_sq", "repmean_precision",
                         "repmean_samples"],
}, globals())

if TYPE_CHECKING:
    from .replicable_lse import (  # noqa: F401  (public, outside __all__)
        CoreSet,
        ReplicableLSEResult,
        core_set,
        replicable_lse,
    )
    from .replicable_mean import (
        grid_width,
        hoeffding_radius,
        prop2_samples,
        replicable_mean,
        replicable_means,
        replicable_sq,
        repmean_precision,
        repmean_samples,
    )
