"""Compiled inner loops of the GLR-stopped linear identifiers (Track-and-Stop, Jedra & Proutière
2020; Frank-Wolfe Sampling, Wang, Tzeng & Proutière 2021): the pulls between two decisions that
need more than arithmetic, one at a time, at compiled speed.

Each kernel runs the algorithm's own steps — the GLR stopping check
Z(t) = min_{z ≠ ẑ} ((ẑ − z)ᵀθ̂)² / (2σ²‖ẑ − z‖²_{A⁻¹}) (:mod:`.linear_glr`), the sampling rule,
the reward draw ``means[a] + σ·N(0, 1)`` from the run's own ``numpy.random.Generator`` (one
standard normal per pull, as :func:`banditkit.simulate` draws it), and the Sherman–Morrison
update of A⁻¹, θ̂, Zθ̂ and diag(ZA⁻¹Zᵀ) — and hands back to its Python driver, with an event
code, whenever the next step needs what only the algorithm's class computes: an allocation
update, a λ_min(A_t) for the forced-exploration test, the paper threshold's log-determinant, a
Frank-Wolfe matrix game, a periodic refresh of the state. The driver then takes that one step
through the class's own code (so those decisions are the class's to the bit) and resumes.

Arithmetic is written as explicit loops in a fixed order (no BLAS), so the compiled kernel and
the same function run by Python give the same numbers to the bit (tests check it); it differs
from the numpy path of :class:`~banditkit.identification.linear_glr.GLRState` only by round-off
in the GLR statistic and the FW gradients, which can change a decision only at a floating-point
tie (tests check the decisions of both paths agree).

This module imports numba (through :func:`banditkit.jit.njit`) when imported: only the
simulation drivers import it, on first use, never the CLI's start-up.
"""

from __future__ import annotations

import math

import numpy as np

from ...jit import njit

__all__ = ["DUE", "FULL", "NEED_BETA", "NEED_CHOOSE", "REFRESH", "STOP", "fws_steps",
           "glr_scan", "sm_update", "tas_steps"]

# Event codes a kernel returns with.
DUE = 0  # the step cap was reached (an allocation update or the horizon is next)
STOP = 1  # the heuristic stopping check fired (the state is that of the stopping time)
NEED_BETA = 2  # paper threshold: Z(t) exceeds the last β computed; the driver checks β(t, δ)
NEED_CHOOSE = 3  # the sampling rule needs the class (λ_min, a matrix game, a forced round...)
REFRESH = 4  # refresh_every pulls since the last refresh: the driver recomputes the state
FULL = 5  # the arm buffer is full


@njit
def sm_update(X: np.ndarray, Z: np.ndarray, Ainv: np.ndarray, theta: np.ndarray,
              est: np.ndarray, q: np.ndarray, a: int, r: float) -> None:
    """One pull of arm ``a`` with reward ``r``: Sherman–Morrison on A⁻¹ and recursive least
    squares on θ̂, Zθ̂ and the forms q = diag(ZA⁻¹Zᵀ), in place (the formulas of
    :meth:`GLRState.update <banditkit.identification.linear_glr.GLRState.update>`)."""
    d = X.shape[1]
    u = np.empty(d)
    for i in range(d):
        s = 0.0
        for k in range(d):
            s += Ainv[i, k] * X[a, k]
        u[i] = s
    xu = 0.0
    xt = 0.0
    for k in range(d):
        xu += X[a, k] * u[k]
        xt += X[a, k] * theta[k]
    denom = 1.0 + xu
    resid = r - xt
    for i in range(d):
        g = u[i] / denom
        theta[i] += g * resid
        for k in range(d):
            Ainv[k, i] -= u[k] * g  # (A + xxᵀ)⁻¹ = A⁻¹ − A⁻¹xxᵀA⁻¹/(1 + xᵀA⁻¹x)
    for j in range(Z.shape[0]):
        zu = 0.0
        for k in range(d):
            zu += Z[j, k] * u[k]
        q[j] -= zu * (zu / denom)
        est[j] += zu * (resid / denom)


@njit
def glr_scan(Z: np.ndarray, Ainv: np.ndarray, est: np.ndarray, q: np.ndarray, sigma: float
             ) -> tuple[int, float, int]:
    """(ẑ, Z(t), the closest alternative): ‖ẑ − z_j‖²_{A⁻¹} = q_ẑ + q_j − 2 z_jᵀA⁻¹z_ẑ, as
    :func:`~banditkit.identification.linear_glr.glr_statistic` (ties to the lowest index)."""
    M, d = Z.shape
    best = 0
    for j in range(1, M):
        if est[j] > est[best]:
            best = j
    w = np.empty(d)
    for i in range(d):
        s = 0.0
        for k in range(d):
            s += Ainv[i, k] * Z[best, k]
        w[i] = s
    stat = math.inf
    arg = -1
    for j in range(M):
        if j == best:
            continue
        cross = 0.0
        for k in range(d):
            cross += Z[j, k] * w[k]
        norm = q[j] + (q[best] - 2.0 * cross)
        gap = est[best] - est[j]
        ratio = gap * gap / max(norm, 1e-300)
        if ratio < stat:
            stat = ratio
            arg = j
    return best, stat / (2.0 * sigma * sigma), arg


@njit
def _pull(X: np.ndarray, Z: np.ndarray, Ainv: np.ndarray, theta: np.ndarray, est: np.ndarray,
          q: np.ndarray, counts: np.ndarray, sums: np.ndarray, means: np.ndarray,
          noise_sigma: float, rng: np.random.Generator, a: int, update: bool) -> None:
    """Draw arm ``a``'s reward as ``simulate`` does and add it to the state."""
    r = means[a] + noise_sigma * rng.standard_normal()
    counts[a] += 1
    sums[a] += r
    if update:
        sm_update(X, Z, Ainv, theta, est, q, a, r)


@njit
def most_behind(counts: np.ndarray, target: np.ndarray, scale: float) -> int:
    """The arm whose count is furthest below ``scale * target`` (the first on ties): the
    tracking rule of Track-and-Stop (C: cumulated weights, scale 1; D: t times the weights),
    Frank-Wolfe Sampling and LinGame. ``1.0 * x`` is ``x`` exactly, so one rule serves both."""
    arm = 0
    low = counts[0] - scale * target[0]
    for a in range(1, counts.size):
        v = counts[a] - scale * target[a]
        if v < low:
            low = v
            arm = a
    return arm


@njit
def _is_square(n: int) -> bool:
    """Whether n is a perfect square (math.isqrt's test, in integers)."""
    r = int(math.sqrt(n))
    while r * r > n:
        r -= 1
    while (r + 1) * (r + 1) <= n:
        r += 1
    return r * r == n


@njit
def tas_steps(X: np.ndarray, Z: np.ndarray, Ainv: np.ndarray, theta: np.ndarray,
              est: np.ndarray, q: np.ndarray, counts: np.ndarray, sums: np.ndarray,
              cum: np.ndarray, weights: np.ndarray, means: np.ndarray, noise_sigma: float,
              rng: np.random.Generator, t: int, cap: int, since: int, refresh_every: int,
              c_tracking: bool, forced_scale: float, lam_lb: float, heuristic: bool,
              delta: float, sigma: float, beta_lb: float, first_arm: int, check: bool,
              out: np.ndarray, n_out: int) -> tuple[int, int, int, int, float, int]:
    """Track-and-Stop steps (:meth:`LinearTrackAndStop.step` — stopping check, then
    :meth:`~LinearTrackAndStop._choose` without an allocation update or forced pull — and the
    pull) from pull count ``t`` until an event.

    ``first_arm`` ≥ 0 is an arm the driver already chose (pulled first, without a check);
    ``check`` False skips the first step's stopping check (the driver just made it). Arms
    pulled are appended to ``out`` from ``n_out``. Returns (event, t, since, n_out, Z(t), ẑ),
    the statistic of the last check (NaN if the call made none).
    """
    K = X.shape[0]
    stat = math.nan  # no check made yet (the driver keeps the last statistic)
    best = 0
    arm = first_arm
    while True:
        if arm < 0:
            if check:
                best, stat, _ = glr_scan(Z, Ainv, est, q, sigma)
                if heuristic:
                    if stat > math.log((1.0 + math.log(t)) / delta):
                        return STOP, t, since, n_out, stat, best
                elif stat > beta_lb:
                    return NEED_BETA, t, since, n_out, stat, best
            check = True
            if t >= cap:
                return DUE, t, since, n_out, stat, best
            if lam_lb < forced_scale * math.sqrt(t):  # the class computes λ_min(A_t)
                return NEED_CHOOSE, t, since, n_out, stat, best
            for a in range(K):  # the class advances Σ w(s) on every step, D-tracking too
                cum[a] += weights[a]
            arm = (most_behind(counts, cum, 1.0) if c_tracking
                   else most_behind(counts, weights, float(t)))
        since += 1
        _pull(X, Z, Ainv, theta, est, q, counts, sums, means, noise_sigma, rng, arm,
              since < refresh_every)
        t += 1
        out[n_out] = arm
        n_out += 1
        arm = -1
        if since >= refresh_every:
            return REFRESH, t, since, n_out, stat, best
        if n_out >= out.size:
            return FULL, t, since, n_out, stat, best


@njit
def fws_steps(X: np.ndarray, Z: np.ndarray, Ainv: np.ndarray, theta: np.ndarray,
              est: np.ndarray, q: np.ndarray, counts: np.ndarray, sums: np.ndarray,
              x: np.ndarray, B: np.ndarray, sumz: np.ndarray, means: np.ndarray,
              noise_sigma: float, rng: np.random.Generator, t: int, cap: int, since: int,
              refresh_every: int, fw_since: int, r_scale: float, r_exponent: float,
              force_tied: bool, heuristic: bool, delta: float, sigma: float, beta_lb: float,
              first_arm: int,
              check: bool, out: np.ndarray, n_out: int
              ) -> tuple[int, int, int, int, int, float, int]:
    """Frank-Wolfe Sampling steps (:meth:`FrankWolfeSampling.step`: stopping check, then the FW
    step of :meth:`~FrankWolfeSampling._choose` when it is a single-gradient vertex step with a
    Sherman–Morrison update of A(x)⁻¹, and C-tracking of Σ z(s)) from pull count ``t`` until an
    event: a forced round (on the √(t/K) schedule, or — ``force_tied`` — when the best item of
    θ̂ is tied), a matrix game (|H| > 1) or an A(x)⁻¹ refresh is the class's step
    (NEED_CHOOSE). Returns (event, t, since, fw_since, n_out, Z(t), ẑ)."""
    K, d = X.shape
    M = Z.shape[0]
    stat = math.nan  # no check made yet (the driver keeps the last statistic)
    best = 0
    arm = first_arm
    V = np.empty(d)
    f = np.empty(M)  # f_z(x) of every item, kept for the near count
    while True:
        if arm < 0:
            if check:
                best, stat, _ = glr_scan(Z, Ainv, est, q, sigma)
                if heuristic:
                    if stat > math.log((1.0 + math.log(t)) / delta):
                        return STOP, t, since, fw_since, n_out, stat, best
                elif stat > beta_lb:
                    return NEED_BETA, t, since, fw_since, n_out, stat, best
            check = True
            if t >= cap:
                return DUE, t, since, fw_since, n_out, stat, best
            if (t % K == 0 and _is_square(t // K)) or fw_since >= refresh_every:
                return NEED_CHOOSE, t, since, fw_since, n_out, stat, best
            # f_z(x) = Δ̂_z² / (2 yᵀA(x)⁻¹y), y = ẑ − z; the minimiser and how many are near.
            top = 0
            for j in range(1, M):
                if est[j] > est[top]:
                    top = j
            if force_tied:  # θ̂ ∉ Λ: the class takes the forced round
                for j in range(M):
                    if j != top and est[j] == est[top]:
                        return NEED_CHOOSE, t, since, fw_since, n_out, stat, best
            fmin = math.inf
            jmin = -1
            for j in range(M):
                if j == top:
                    continue
                norm = 0.0
                for i in range(d):
                    s = 0.0
                    for k in range(d):
                        s += B[i, k] * (Z[top, k] - Z[j, k])
                    norm += (Z[top, i] - Z[j, i]) * s
                gap = est[top] - est[j]
                f[j] = gap * gap / (2.0 * max(norm, 1e-300))
                if f[j] < fmin:
                    fmin = f[j]
                    jmin = j
            r = r_scale * t ** (-r_exponent)
            n_near = 0
            for j in range(M):
                if j != top and f[j] < fmin + r:
                    n_near += 1
            if n_near > 1:  # the matrix game: the class solves it
                return NEED_CHOOSE, t, since, fw_since, n_out, stat, best
            # One gradient: the vertex is the arm of the largest (x_aᵀA(x)⁻¹y)².
            for i in range(d):
                s = 0.0
                for k in range(d):
                    s += B[i, k] * (Z[top, k] - Z[jmin, k])
                V[i] = s
            z = 0
            big = -1.0
            for a in range(K):
                xv = 0.0
                for k in range(d):
                    xv += X[a, k] * V[k]
                if xv * xv > big:
                    big = xv * xv
                    z = a
            gamma = 1.0 / (t + 1)
            for a in range(K):
                x[a] *= 1.0 - gamma
            x[z] += gamma
            sumz[z] += 1.0
            # A(x') = (1 − γ)(A(x) + γ/(1 − γ) x_z x_zᵀ): Sherman–Morrison, then rescale.
            s_ = gamma / (1.0 - gamma)
            for i in range(d):
                s = 0.0
                for k in range(d):
                    s += B[i, k] * X[z, k]
                V[i] = s
            xBx = 0.0
            for k in range(d):
                xBx += X[z, k] * V[k]
            scale = math.sqrt(s_ / (1.0 + s_ * xBx))
            for i in range(d):
                V[i] *= scale
            for i in range(d):
                for k in range(d):
                    B[i, k] = (B[i, k] - V[i] * V[k]) / (1.0 - gamma)
            fw_since += 1
            arm = most_behind(counts, sumz, 1.0)
        since += 1
        _pull(X, Z, Ainv, theta, est, q, counts, sums, means, noise_sigma, rng, arm,
              since < refresh_every)
        t += 1
        out[n_out] = arm
        n_out += 1
        arm = -1
        if since >= refresh_every:
            return REFRESH, t, since, fw_since, n_out, stat, best
        if n_out >= out.size:
            return FULL, t, since, fw_since, n_out, stat, best
