"""Test-session settings."""

from __future__ import annotations

import numpy  # noqa: F401  (loads numpy's BLAS, so that the limit below reaches it)

# A real PostgreSQL server per pytest process, for the store and service tests (see its docstring)
import pytest
import scipy.linalg  # noqa: F401  (scipy's own BLAS)
from threadpoolctl import threadpool_limits

from live_support import Where
from postgres_support import pg_experiment, pg_url, postgres_server  # noqa: F401


@pytest.fixture(params=["sqlite", "postgres"])
def where(request, tmp_path) -> Where:
    """A place for one experiment, on each backend: an SQLite path, or a PostgreSQL URL and a
    fresh name on the suite's own server (tests/postgres_support.py)."""
    if request.param == "sqlite":
        return Where(str(tmp_path / "e.sqlite"))
    url, name = request.getfixturevalue("pg_experiment")
    return Where(url, name)


# The suite runs as two xdist workers on two cores: extra BLAS threads only contend (one large
# design test took 11-15 s multi-threaded, 0.8 s single-threaded). Trials already run this way.
_BLAS_LIMIT = threadpool_limits(1)
