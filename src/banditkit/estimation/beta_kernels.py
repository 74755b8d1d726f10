"""The Beta sampler of :mod:`.beta_draws` one arm at a time, for compiled kernels (Thompson
sampling's :mod:`banditkit.policies.index.kernels`, top-two Thompson sampling's
:mod:`banditkit.identification.top_two_kernel`).

The normal quantile and the inverse Beta CDF are scipy's own compiled functions
(``scipy.special.cython_special``), passed to the kernels as C function pointers, so a scalar draw
is bit for bit the one :func:`~.beta_draws.beta_from_uniforms` makes (tests check it).

This module imports numba (through :func:`banditkit.jit.njit`) when imported: only kernel
modules import it, never the CLI's start-up path.
"""

from __future__ import annotations

import ctypes
import math
from collections.abc import Callable
from functools import cache

from ..jit import njit

__all__ = ["beta_draw_scalar", "gamma_attempt_scalar", "scipy_functions"]


@njit
def gamma_attempt_scalar(alpha: float, u_normal: float, u_accept: float,
                         ndtri: Callable) -> tuple[float, bool]:
    """:func:`~.beta_draws.gamma_attempt` for one shape α (never accepted for α < 1)."""
    valid = alpha >= 1.0
    d = (alpha if valid else 1.0) - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    x = ndtri(u_normal, 0)
    y = 1.0 + c * x
    v = y * y * y  # two IEEE products, as beta_draws.gamma_attempt: the same bits everywhere
    if not (valid and v > 0):
        return d * v, False
    return d * v, math.log(u_accept) < 0.5 * x * x + d - d * v + d * math.log(v)


@njit
def beta_draw_scalar(a: float, b: float, u0: float, u1: float, u2: float, u3: float, u4: float,
                     ndtri: Callable, betaincinv: Callable) -> float:
    """One Beta(a, b) draw from its five uniforms, as :func:`~.beta_draws.beta_from_uniforms`."""
    ga, ok_a = gamma_attempt_scalar(a, u0, u1, ndtri)
    gb, ok_b = gamma_attempt_scalar(b, u2, u3, ndtri)
    if ok_a and ok_b:
        return ga / (ga + gb)
    return betaincinv(a, b, u4, 0)


def _cython_special(name: str, signature: bytes, restype: type, *argtypes: type) -> Callable:
    """scipy's compiled ``name`` from ``scipy.special.cython_special`` (the C function its ufunc
    calls) as a ctypes function, after checking its C signature."""
    from scipy.special import cython_special

    capsule = cython_special.__pyx_capi__[name]  # type: ignore[attr-defined]
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    found = get_name(capsule)
    if found != signature:
        raise RuntimeError(f"scipy.special.cython_special.{name} has signature {found!r}, "
                           f"expected {signature!r}")
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object,
                                                                 ctypes.c_char_p]
    return ctypes.CFUNCTYPE(restype, *argtypes)(get_pointer(capsule, found))


@cache
def scipy_functions() -> tuple[Callable, Callable]:
    """(ndtri, betaincinv) of scipy as C function pointers ``f(..., 0)`` (the trailing 0 is
    Cython's skip-dispatch flag), callable from the kernels compiled or not."""
    d, i = ctypes.c_double, ctypes.c_int
    return (_cython_special("ndtri", b"double (double, int __pyx_skip_dispatch)", d, d, i),
            _cython_special("__pyx_fuse_0betaincinv",
                            b"double (double, double, double, int __pyx_skip_dispatch)",
                            d, d, d, d, i))
