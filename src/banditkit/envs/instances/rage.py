"""The problem instances of Fiez et al., NeurIPS 2019 ("Sequential Experimental Design for
Transductive Linear Bandits"), Section 5: the Soare et al. benchmark, many arms with moderate
gaps, uniform on a sphere, the transductive example, multivariate testing, and a click-through
instance (a MovieLens-100k stand-in for the paper's Yahoo! data, built in
:mod:`banditkit.envs.datasets`).

Every factory returns a :class:`~banditkit.envs.linear.LinearBandit` with attributes ``X``
(arms), ``Z`` (items; ``X`` itself when the problem is not transductive) and ``theta`` (θ*).
Noise is N(0, 1) unless stated.
"""

from __future__ import annotations

import itertools
import os

import numpy as np

from ...validation import check_positive_int
from ..linear import LinearBandit
from .registry import register_instance

__all__ = [
    "click_through",
    "layout_features",
    "many_arms",
    "multivariate_testing",
    "soare",
    "sphere",
    "transductive",
]


@register_instance("soare")
def soare(d: int = 5, omega: float = 0.01) -> LinearBandit:
    """Soare et al. (2014) benchmark (Fiez et al. 2019, Section 5, Fig. 1a).

    ``X = Z = {e_1, ..., e_d, cos(ω) e_1 + sin(ω) e_2}`` and ``θ* = 2 e_1``; the best arm is
    ``e_1`` (index 0), the hardest competitor the last arm, with gap ``2 (1 − cos ω)``.
    """
    d = check_positive_int(d, "d")
    if d < 2:
        raise ValueError(f"d must be >= 2 for the Soare benchmark, got {d}")
    if not (np.isfinite(omega) and 0 < omega < np.pi / 2):
        raise ValueError(f"omega must lie in (0, pi/2), got {omega}")
    X = np.vstack([np.eye(d), np.zeros(d)])
    X[d, 0], X[d, 1] = np.cos(omega), np.sin(omega)
    theta = np.zeros(d)
    theta[0] = 2.0
    return LinearBandit(X, theta)


@register_instance("many-arms")
def many_arms(n: int = 1000, *, rng: np.random.Generator, phi_std: float = 0.09
              ) -> LinearBandit:
    """Many arms with moderate gaps (Fiez et al. 2019, Section 5, Fig. 1b).

    In R², ``x_1 = e_1``, ``x_2 = (cos 3π/4, sin 3π/4)`` and ``n − 2`` arms at angles
    ``π/4 + φ_i``; ``θ* = e_1``, so ``x_1`` is best, ``x_2`` is the informative arm, and the
    others have gaps near ``1 − cos(π/4) ≈ 0.29``.

    Deviation, documented: the paper writes ``φ_i ~ N(0, .09)``. Read as a *variance* (standard
    deviation 0.3), about 0.4% of the arms fall below angle 0 and, with ``n = 10⁴``, the
    closest one sits within ~10⁻³ rad of ``e_1`` — a gap of order 10⁻⁷ that no algorithm could
    resolve and that contradicts the paper's "expected gap Δ ≈ 0.3, arms roughly pointing in the
    same direction". We therefore take 0.09 as the *standard deviation* (``phi_std``); the
    authors' released code draws ``φ_i ~ U(0, 0.1)`` instead.
    """
    n = check_positive_int(n, "n")
    if n < 3:
        raise ValueError(f"n must be >= 3, got {n}")
    if not (np.isfinite(phi_std) and phi_std >= 0):
        raise ValueError(f"phi_std must be a non-negative number, got {phi_std}")
    angles = np.pi / 4 + phi_std * rng.standard_normal(n - 2)
    X = np.vstack([[1.0, 0.0], [np.cos(3 * np.pi / 4), np.sin(3 * np.pi / 4)],
                   np.column_stack([np.cos(angles), np.sin(angles)])])
    return LinearBandit(X, np.array([1.0, 0.0]))


@register_instance("sphere")
def sphere(n: int = 250, d: int = 9, *, rng: np.random.Generator) -> LinearBandit:
    """Arms uniform on the unit sphere of R^d (Fiez et al. 2019, Section 5, Fig. 1c).

    Following Tao et al. (2018) and the paper, the two closest arms ``x, x'`` are found and
    ``θ* = x`` (the one of lower index), so ``x`` is best and ``x'`` has the smallest gap
    ``1 − xᵀx'``.
    """
    n = check_positive_int(n, "n")
    d = check_positive_int(d, "d")
    if n < max(2, d):
        raise ValueError(f"n must be >= max(2, d) = {max(2, d)} so the arms span R^d, got {n}")
    X = rng.standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    # Unit vectors: the closest pair is the pair of largest inner product.
    gram = X @ X.T
    np.fill_diagonal(gram, -np.inf)
    i, j = np.unravel_index(int(np.argmax(gram)), gram.shape)
    return LinearBandit(X, X[min(i, j)].copy())


@register_instance("transductive")
def transductive(d: int = 20) -> LinearBandit:
    """The transductive example of Fiez et al. 2019 (Section 5, Fig. 1d; Proposition 1).

    ``X = {e_1, ..., e_d}``; ``Z = {e_1, ..., e_{d/2}} ∪ {cos(.1) e_j + sin(.1) e_{j+d/2}}``;
    ``θ* = e_1``, so ``z_1 = e_1`` is best and ``z_{d/2+1}`` is its close competitor.
    """
    d = check_positive_int(d, "d")
    if d < 2 or d % 2:
        raise ValueError(f"d must be an even integer >= 2, got {d}")
    h = d // 2
    X = np.eye(d)
    Z = np.zeros((d, d))
    Z[np.arange(h), np.arange(h)] = 1.0
    Z[h + np.arange(h), np.arange(h)] = np.cos(0.1)
    Z[h + np.arange(h), h + np.arange(h)] = np.sin(0.1)
    theta = np.zeros(d)
    theta[0] = 1.0
    return LinearBandit(X, theta, Z=Z)


def layout_features(D: int) -> np.ndarray:
    """Factorial features ``(1, w, (w_k w_l)_{k<l})`` of the ``2^D`` layouts ``w ∈ {−1, 1}^D``."""
    D = check_positive_int(D, "D")
    W = np.array(list(itertools.product([-1.0, 1.0], repeat=D)))
    pairs = list(itertools.combinations(range(D), 2))
    inter = (np.column_stack([W[:, k] * W[:, l] for k, l in pairs]) if pairs
             else np.zeros((W.shape[0], 0)))
    return np.hstack([np.ones((W.shape[0], 1)), W, inter])


@register_instance("multivariate-testing")
def multivariate_testing(D: int = 3, *, rng: np.random.Generator, alpha1: float = 1.0,
                         alpha2: float = 0.5, weight_range: float = 0.3, step: float = 0.01,
                         min_gap: float = 1e-6) -> LinearBandit:
    """Multivariate (factorial) testing of web layouts (Fiez et al. 2019, Section 5, Fig. 2a).

    ``X = Z`` are the ``2^D`` layouts' features ``(1, w, (w_k w_l)_{k<l})`` and
    ``xᵀθ* = θ_0 + α1 Σ_j θ_j w_j + α2 Σ_{k<l} θ_kl w_k w_l``: the raw weights are drawn from
    the discrete uniform distribution on ``[−0.3, 0.3]`` with step 0.01 and the returned θ*
    folds ``α1`` and ``α2`` in. Weights are redrawn until the best layout is unique (top gap at
    least ``min_gap``; the authors' code uses 10⁻⁵).
    """
    X = layout_features(D)
    D = int(D)
    levels = np.round(np.arange(-weight_range, weight_range + step / 2, step), 10)
    scale = np.concatenate([[1.0], np.full(D, alpha1), np.full(X.shape[1] - 1 - D, alpha2)])
    for _ in range(10_000):
        theta = scale * rng.choice(levels, size=X.shape[1])
        values = np.sort(X @ theta)
        if values[-1] - values[-2] >= min_gap:
            return LinearBandit(X, theta)
    raise RuntimeError("could not draw weights with a unique best layout in 10000 tries")


@register_instance("click-through")
def click_through(n: int = 40, *, rng: np.random.Generator, min_gap: float = 0.01,
                  ridge: float = 0.01, min_records: int = 20,
                  data_dir: str | os.PathLike | None = None) -> LinearBandit:
    """Click-through instance from MovieLens-100k, a stand-in for the paper's Yahoo! R6A data
    (Fiez et al. 2019, Section 5, Fig. 2b); see :func:`banditkit.envs.datasets.movielens_arms`.

    The best arm plus ``n − 1`` arms drawn at random among those with gap ≥ ``min_gap``;
    The chosen arms are expressed in an orthonormal basis of their span (dimension ``r`` ≤ n,
    their rank), so they span ``R^r`` and every ``xᵀθ*`` is unchanged. Bernoulli rewards with
    mean ``xᵀθ*``, clipped to [0, 1] (a ridge fit can leave a mean slightly outside; the truth —
    best item, gaps — stays that of the linear model).
    """
    from ..datasets import click_through_arms  # the data layer is only needed here

    X, theta = click_through_arms(data_dir=data_dir, ridge=ridge, min_records=min_records)
    n = check_positive_int(n, "n")
    values = X @ theta
    best = int(np.argmax(values))
    far = np.flatnonzero(values <= values[best] - min_gap)
    if far.size < n - 1:
        raise ValueError(f"only {far.size} arms have gap >= {min_gap}; cannot pick n - 1 = "
                         f"{n - 1}")
    chosen = np.concatenate([[best], rng.choice(far, size=n - 1, replace=False)])
    arms = X[chosen]
    # Express the arms in an orthonormal basis of their span so they span R^r (the designs
    # need full rank); inner products with θ* are unchanged because the arms lie in the span.
    _, s, Vt = np.linalg.svd(arms, full_matrices=False)
    basis = Vt[: int(np.sum(s > 1e-10 * s[0]))]
    return LinearBandit(arms @ basis.T, basis @ theta, noise="bernoulli", clip=True)
