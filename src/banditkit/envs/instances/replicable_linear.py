"""Linear instances for the replicable linear bandits of Esfandiari et al. (ICLR 2023, Section 5):
K random unit arms in R^d (finite action set, Algorithm 3) and a grid net of the unit ball or of
the box [−1, 1]^d in d ≤ 3 (a finite net of an infinite action set, Algorithm 4).

Rewards default to Rademacher signs in {−1, +1} with mean x^T θ*: bounded (so 1-sub-Gaussian, the
paper's noise model, and valid input for the replicable mean / statistical-query estimators after
the affine map r ↦ (r + 1)/2) and exactly linear on sets symmetric about 0, where rewards in
{0, 1} with a linear mean are impossible. ‖x‖₂ ≤ 1 and ‖θ*‖₂ ≤ 1, the paper's normalisation.
"""

from __future__ import annotations

import itertools

import numpy as np

from ..base import Environment
from ..linear import LinearBandit
from .registry import register_instance

__all__ = ["grid_net", "linear_grid", "linear_random_unit", "random_unit_vectors"]

SHAPES = ("ball", "box")


def random_unit_vectors(n: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` independent uniform points of the unit sphere S^{d−1} (normalised Gaussians)."""
    g = rng.standard_normal((int(n), int(d)))
    return g / np.linalg.norm(g, axis=1, keepdims=True)


def grid_net(resolution: float, d: int = 2, shape: str = "ball") -> np.ndarray:
    """The points of the grid ``resolution · Z^d`` inside the unit ball or the box [−1, 1]^d.

    Every point p of the set is within ``resolution · √d`` of a grid point of the set: the corner
    of p's grid cell whose coordinates are each the one nearer 0 has |c_j| ≤ |p_j|, so it lies in
    the ball (box) too. So this is an η-net with η = resolution · √d. Algorithm 4 asks for a
    1/T-net, of size up to (3T)^d, far too large at practical horizons, so the resolution is
    the user's choice.

    Parameters
    ----------
    resolution : float
        Grid spacing h, in (0, 1].
    d : int
        Dimension, 1 ≤ d ≤ 3 (the number of points grows like h^−d).
    shape : {"ball", "box"}
    """
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or not 1 <= d <= 3:
        raise ValueError(f"d must be an integer in [1, 3] for a grid net, got {d!r}")
    h = float(resolution)
    if not (np.isfinite(h) and 0 < h <= 1):
        raise ValueError(f"resolution must lie in (0, 1], got {resolution}")
    if shape not in SHAPES:
        raise ValueError(f"shape must be one of {SHAPES}, got {shape!r}")
    m = int(np.floor(1.0 / h + 1e-9))
    axis = h * np.arange(-m, m + 1)
    pts = np.array(list(itertools.product(axis, repeat=int(d))), dtype=float)
    if shape == "ball":
        pts = pts[np.einsum("ij,ij->i", pts, pts) <= 1.0 + 1e-12]
    return pts


def _theta(direction: np.ndarray, theta_norm: float) -> np.ndarray:
    if not (np.isfinite(theta_norm) and 0 < theta_norm <= 1):
        raise ValueError(f"theta_norm must lie in (0, 1], got {theta_norm}")
    return theta_norm * direction


@register_instance("linear-random-unit")
def linear_random_unit(rng: np.random.Generator, K: int = 20, d: int = 5,
                       theta_norm: float = 1.0, noise: str = "rademacher", sigma: float = 1.0
                       ) -> Environment:
    """K arms drawn uniformly on the unit sphere of R^d, θ* uniform on the sphere of radius
    ``theta_norm`` (Esfandiari et al. 2023, Section 5.1 setting: ‖x‖, ‖θ*‖ ≤ 1).

    Means x^T θ* lie in [−1, 1]; ``noise="rademacher"`` (default) gives ±1 rewards,
    ``noise="gaussian"`` adds N(0, σ²) noise.
    """
    X = random_unit_vectors(K, d, rng)
    theta = _theta(random_unit_vectors(1, d, rng)[0], theta_norm)
    return LinearBandit(X, theta, noise=noise, sigma=sigma)


@register_instance("linear-grid")
def linear_grid(rng: np.random.Generator, resolution: float = 0.1, d: int = 2,
                shape: str = "ball", theta: tuple[float, ...] | None = None,
                theta_norm: float = 1.0, noise: str = "rademacher", sigma: float = 1.0
                ) -> Environment:
    """The grid net :func:`grid_net` of the unit ball (or box [−1, 1]^d) as a finite arm set.

    θ* is ``theta`` if given, otherwise a uniform direction of norm ``theta_norm`` (for the box,
    scaled so that ‖θ*‖₁ = ``theta_norm``, which keeps every mean in [−1, 1]). Regret is measured
    against the best grid point (the paper's R'_T of Appendix E).
    """
    X = grid_net(resolution, d, shape)
    if theta is None:
        direction = random_unit_vectors(1, d, rng)[0]
        if shape == "box":
            direction = direction / np.abs(direction).sum()
        th = _theta(direction, theta_norm)
    else:
        th = np.asarray(theta, dtype=float)
    return LinearBandit(X, th, noise=noise, sigma=sigma)
