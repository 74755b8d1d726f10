"""Estimators: replicable mean / statistical query (and, beside them, least squares)."""

from .replicable_lse import CoreSet, ReplicableLSEResult, core_set, replicable_lse  # noqa: F401
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
