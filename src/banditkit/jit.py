"""Optional compiled kernels through numba: one switch for every sequential kernel.

Sequential policies (one pull at a time) are slowest in a Python loop. Where a kernel is worth
compiling, its module writes it once as plain Python over numpy arrays and a
``numpy.random.Generator`` and wraps it with :func:`njit`. numba draws from a ``Generator`` with
NumPy's own algorithms, so a compiled kernel and the same kernel run by Python give the same
numbers from the same seed (each kernel's tests check this).

numba is the ``speed`` extra (``pip install banditkit[speed]``, installed by ``make test``):
about 210 MB installed (numba 35 MB, llvmlite 173 MB, numba 0.68), 0.35-0.6 s to import, and
for the sequential kernels (:mod:`banditkit.policies.index.kernels`) about 3.5 s of CPU to
compile on first use, then about 0.2 s per process to load them from the cache (measured by
``benchmarks/bench_sequential.py --compile`` on a shared machine).

The on-disk cache must never outlive a change to what a kernel depends on (DESIGN.md,
"Engines"). numba's own cache is keyed on the kernel's file alone, and a kernel freezes the
module-level constants it reads from other modules (``kl_ucb.NEWTON_STEPS`` in
:mod:`banditkit.policies.index.kernels`) at compile time, so a changed constant elsewhere
would go unseen. Kernels are therefore cached under a directory named after
:func:`source_digest` — a hash of every ``.py`` file of the package, with numpy's version — in
``NUMBA_CACHE_DIR`` if set, else in ``$XDG_CACHE_HOME/banditkit/numba`` (``~/.cache/...``):
any change to the package's source compiles the kernels afresh. With that directory not
writable the kernels are compiled in every process (never read from a cache that could be
stale). Without numba, or with ``BANDITKIT_JIT=0`` in the environment, :func:`njit` returns
the Python function unchanged and callers take their vectorised numpy path instead
(:func:`available` says which); both paths give the same numbers from the same seed.
"""

from __future__ import annotations

import hashlib
import os
import types
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

__all__ = ["available", "cache_dir", "njit", "njit_with", "source_digest"]

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


@cache
def source_digest() -> str:
    """A hash of the package's source: every ``.py`` file under the package (path and
    bytes, in sorted order) and numpy's version. Any edit anywhere in banditkit changes it."""
    import numpy

    root = Path(__file__).resolve().parent
    digest = hashlib.sha256(f"numpy {numpy.__version__}\n".encode())
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:20]


@cache
def cache_dir() -> str | None:
    """Where compiled kernels are cached: ``<base>/<source_digest()>`` with base
    ``NUMBA_CACHE_DIR`` or ``$XDG_CACHE_HOME/banditkit/numba``; ``None`` when it cannot be
    made writable (the kernels are then compiled in every process)."""
    base = os.environ.get("NUMBA_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "banditkit", "numba")
    path = os.path.join(base, source_digest())
    try:
        os.makedirs(path, exist_ok=True)
    except OSError:
        return None
    return path if os.access(path, os.W_OK) else None


def njit(function: F) -> F:
    """``numba.njit(cache=True)`` of ``function``, cached under :func:`cache_dir`, when
    :func:`available`; else ``function``.

    Compilation is lazy (on the first call), so decorating costs nothing at import; the numba
    import itself happens here, so modules holding kernels must not be imported by the CLI's
    start-up path (``tests/test_startup.py``).
    """
    if not available():
        return function
    import numba

    where = cache_dir()
    if where is None:  # no cache we can trust: compile in this process
        return numba.njit(cache=False)(function)  # type: ignore[no-any-return]
    # numba picks a function's cache locator when caching is enabled (at decoration): with
    # CACHE_DIR set, its user-provided locator keeps this path for the function for good
    saved = numba.config.CACHE_DIR
    numba.config.CACHE_DIR = where
    try:
        return numba.njit(cache=True)(function)  # type: ignore[no-any-return]
    finally:
        numba.config.CACHE_DIR = saved


def njit_with(function: F, **inner: Any) -> F:
    """:func:`njit` of a plain function whose calls to its module's other plain functions are
    bound to the compiled copies ``inner`` (numba resolves a function's globals when it
    compiles it): a class runs the Python source, a kernel the same source compiled."""
    code = function.__code__
    scope = {**function.__globals__, **inner}
    return njit(types.FunctionType(code, scope, code.co_name))  # type: ignore[arg-type]
