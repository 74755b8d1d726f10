"""Where Thompson sampling's Beta kernel spends its time against the C loop
(benchmarks/c_reference/sequential.c): the kernel of
:func:`banditkit.policies.index.kernels.thompson_trial` rebuilt with one cost removed at a
time, on the Appendix H instance (6 Bernoulli arms, T = 45,000), best of 5 CPU timings.

    .venv/bin/python benchmarks/profile_thompson_beta.py

Variants: ``as is`` (the kernel's arithmetic: the cube of Marsaglia–Tsang as two products
y·y·y, as the C loop does), ``pow`` (the cube as ``pow(y, 3)``, what the kernel and the numpy
path computed before issue 28: numpy's ``** 3`` is ``pow``, numpy's SIMD pow on AVX-512
machines and the C library's elsewhere, so it was neither faster nor the same bits on every
machine), ``no ndtri`` (the normal from a cheap affine map of the uniform instead of scipy's
inverse normal CDF), ``no xi draws`` (the 5K uniforms of a round not drawn from ξ). Only ``as
is`` gives banditkit's numbers: the last two show what each exactness constraint costs (the
numpy path draws its normals by inversion so that ξ holds a fixed number of uniforms per
round).
"""

from __future__ import annotations

import math
import time

import numba
import numpy as np

from banditkit.policies.index.kernels import _reward, scipy_functions
from banditkit.policies.index.lockstep import _bernoulli_rule

T = 45_000
MEANS = np.array([0.44, 0.47, 0.5, 0.53, 0.56, 0.59])


def make(variant: int):
    @numba.njit
    def attempt(alpha, u_normal, u_accept, ndtri):
        d = alpha - 1.0 / 3.0
        c = 1.0 / math.sqrt(9.0 * d)
        x = ndtri(u_normal, 0) if variant != 2 else (u_normal - 0.5) * 3.0
        y = 1.0 + c * x
        v = y * y * y if variant != 1 else math.pow(y, 3.0)
        if not v > 0:
            return d * v, False
        return d * v, math.log(u_accept) < 0.5 * x * x + d - d * v + d * math.log(v)

    @numba.njit
    def trial(noise, xi, means, thresholds, below, horizon, ndtri, betaincinv, arms, pulls,
              sums, draws):
        K = means.shape[0]
        for t in range(horizon):
            for j in range(draws.shape[0]):
                draws[j] = 0.3 + 0.4 * (j % 7) / 7 if variant == 3 else xi.random()
            arm, best = 0, 0.0
            for k in range(K):
                a, b = sums[k] + 1.0, (pulls[k] - sums[k]) + 1.0
                ga, ok_a = attempt(a, draws[k], draws[K + k], ndtri)
                gb, ok_b = attempt(b, draws[2 * K + k], draws[3 * K + k], ndtri)
                theta = ga / (ga + gb) if ok_a and ok_b else betaincinv(a, b, draws[4 * K + k],
                                                                         0)
                if k == 0 or theta > best:
                    best, arm = theta, k
            r = _reward(noise, False, arm, means, thresholds, below, 1.0)
            pulls[arm] += 1.0
            sums[arm] += r
            arms[t] = arm
    return trial


def main() -> None:
    ndtri, betaincinv = scipy_functions()
    K = MEANS.size
    thresholds, below = np.zeros(K), np.zeros(K, dtype=np.bool_)
    for k, mu in enumerate(MEANS):
        thresholds[k], above = _bernoulli_rule(float(mu))
        below[k] = not above
    for variant, name in enumerate(("as is", "pow", "no ndtri", "no xi draws")):
        kernel = make(variant)

        def run(kernel=kernel):
            kernel(np.random.default_rng(1), np.random.default_rng(2), MEANS, thresholds,
                   below, T, ndtri, betaincinv, np.empty(T, np.int64), np.zeros(K),
                   np.zeros(K), np.empty(5 * K))
        run()  # compile
        best = math.inf
        for _ in range(5):
            t0 = time.process_time()
            run()
            best = min(best, time.process_time() - t0)
        print(f"{name:12s} {best / T * 1e9:5.0f} ns a pull")


if __name__ == "__main__":
    main()
