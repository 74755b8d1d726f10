"""The inverse-propensity-score (IPS) estimate of the average parameter θ̄ (Xiong et al.,
"P1-RAGE", Algorithm 1 line 5 and Algorithm 2 line 5).

For pulls ``x_s ~ λ_s`` with rewards ``r_s = x_sᵀθ_s + ε_s``,

    θ̂_t = (1/t) Σ_{s≤t} A(λ_s)⁻¹ x_s r_s,    A(λ) = Σ_x λ_x x xᵀ,

is unbiased for ``θ̄_t = (1/t) Σ_s θ_s`` whatever the schedule θ_s, because
``E[A(λ)⁻¹ x xᵀ] = I`` for ``x ~ λ`` (Eq. (1) in the multi-armed case). While λ stays fixed
over an epoch the sum only needs each arm's reward total: ``A(λ)⁻¹ Xᵀ S`` with ``S[a]`` the
sum of the epoch's rewards of arm ``a`` — the sufficient statistic, never the pulls.
"""

from __future__ import annotations

import numpy as np

__all__ = ["IPSEstimate", "ips_information"]


def ips_information(X: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``A(λ) = Xᵀ diag(λ) X``, refusing a singular one (the estimate would be undefined).

    Raises
    ------
    ValueError
        If ``A(λ)`` is singular: an IPS sampling distribution must span R^d.
    """
    A = (X * weights[:, None]).T @ X
    eig = np.linalg.eigvalsh(A)
    if eig[0] <= 1e-12 * max(eig[-1], 1e-300):
        raise ValueError("the sampling distribution's A(λ) is singular: an IPS estimate needs "
                         "a distribution whose support spans R^d")
    return A


class IPSEstimate:
    """Running IPS estimate ``θ̂_t`` from epochs of pulls with a fixed distribution each.

    Parameters
    ----------
    X : array, shape (K, d)
        Arms.

    Attributes
    ----------
    n : int
        Pulls added so far (``t``).
    total : array, shape (d,)
        ``Σ_s A(λ_s)⁻¹ x_s r_s``.
    """

    def __init__(self, X: np.ndarray) -> None:
        self.X = X
        self.n = 0
        self.total = np.zeros(X.shape[1])

    def add(self, weights: np.ndarray, arm_sums: np.ndarray, n_pulls: int,
            information: np.ndarray | None = None) -> None:
        """Add an epoch of ``n_pulls`` pulls drawn from ``weights``.

        ``arm_sums[a]`` is the total reward of the epoch's pulls of arm ``a``;
        ``information`` is ``A(weights)`` when the caller already has it.
        """
        A = ips_information(self.X, weights) if information is None else information
        self.total = self.total + np.linalg.solve(A, self.X.T @ arm_sums)
        self.n += int(n_pulls)

    @property
    def theta(self) -> np.ndarray:
        """θ̂_t (zeros before any pull)."""
        return self.total / self.n if self.n else np.zeros_like(self.total)
