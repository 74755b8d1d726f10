"""Optional compiled kernels through numba: one switch for every sequential kernel.

Sequential policies (one pull at a time) are slowest in a Python loop. Where a kernel is worth
compiling, its module writes it once as plain Python over numpy arrays and a
``numpy.random.Generator`` and wraps it with :func:`njit`. numba draws from a ``Generator`` with
NumPy's own algorithms, so a compiled kernel and the same kernel run by Python give the same
numbers from the same seed (each kernel's tests check this).

numba is the ``speed`` extra (``pip install banditkit[speed]``, installed by ``make test``):
about 210 MB installed (numba 35 MB, llvmlite 173 MB, numba 0.68), 0.35-0.6 s to import, and
for the sequential kernels (:mod:`banditkit.policies.sequential_kernels`) about 3.5 s of CPU to
compile on first use, then about 0.2 s per process to load them from the cache (measured by
``benchmarks/bench_sequential.py --compile`` on a shared machine). The cache goes to
``NUMBA_CACHE_DIR`` if set, else to ``__pycache__`` beside the module if that is writable, else
to the user's cache directory (``~/.cache/numba``); with none writable numba compiles in every
process. Without numba, or with ``BANDITKIT_JIT=0`` in the environment, :func:`njit` returns
the Python function unchanged and callers take their vectorised numpy path instead
(:func:`available` says which); both paths give the same numbers from the same seed.
"""

from __future__ import annotations

import os
import types
from collections.abc import Callable
from functools import cache
from typing import Any, TypeVar

__all__ = ["available", "njit", "njit_with"]

F = TypeVar("F", bound=Callable[..., Any])


@cache
def available() -> bool:
    """Whether compiled kernels are in use: numba imports and ``BANDITKIT_JIT`` is not ``0``."""
    if os.environ.get("BANDITKIT_JIT", "1") == "0":
        return False
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def njit(function: F) -> F:
    """``numba.njit(cache=True)`` of ``function`` when :func:`available`, else ``function``.

    Compilation is lazy (on the first call), so decorating costs nothing at import; the numba
    import itself happens here, so modules holding kernels must not be imported by the CLI's
    start-up path (``tests/test_startup.py``).
    """
    if not available():
        return function
    import numba

    return numba.njit(cache=True)(function)  # type: ignore[no-any-return]


def njit_with(function: F, **inner: Any) -> F:
    """:func:`njit` of a plain function whose calls to its module's other plain functions are
    bound to the compiled copies ``inner`` (numba resolves a function's globals when it
    compiles it): a class runs the Python source, a kernel the same source compiled."""
    code = function.__code__
    scope = {**function.__globals__, **inner}
    return njit(types.FunctionType(code, scope, code.co_name))  # type: ignore[arg-type]
