"""Test-session settings."""

from __future__ import annotations

import numpy  # noqa: F401  (loads numpy's BLAS, so that the limit below reaches it)
import scipy.linalg  # noqa: F401  (scipy's own BLAS)
from threadpoolctl import threadpool_limits

# The suite runs as two xdist workers on two cores: extra BLAS threads only contend (one large
# design test took 11-15 s multi-threaded, 0.8 s single-threaded). Trials already run this way.
_BLAS_LIMIT = threadpool_limits(1)
