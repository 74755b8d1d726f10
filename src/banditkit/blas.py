"""One BLAS thread while trials run.

Multi-threaded BLAS changes the order of floating-point sums, so a design solved with two
threads can differ in its last bits from one solved with one thread, and an algorithm that
compares such numbers can then decide differently. The runner and the audit therefore run every
trial with one BLAS thread: the numbers never depend on the backend, the number of workers or
the machine's core count. (Parallelism comes from processes; the matrices here are small, and
BLAS threads made the XY design solves 10–30× slower on a 2-core machine.)
"""

from __future__ import annotations

from contextlib import AbstractContextManager

from threadpoolctl import threadpool_limits

__all__ = ["single_threaded_blas"]


def single_threaded_blas() -> AbstractContextManager:
    """Context manager limiting BLAS (OpenBLAS, MKL, BLIS) to one thread inside it."""
    return threadpool_limits(limits=1, user_api="blas")
