"""Ordinary least squares from per-arm sufficient statistics.

With ``n_x`` pulls of arm ``x`` whose rewards sum to ``s_x``, the least-squares estimate over
all those pulls is ``θ̂ = A⁺ b`` with ``A = Σ_x n_x x xᵀ`` and ``b = Σ_x s_x x`` — the same as
solving the expanded ``(pulls × d)`` problem, at O(K d²) cost whatever the number of pulls.
``A⁺`` (the Moore–Penrose inverse) gives the minimum-norm solution when the pulled arms do not
span R^d, like ``numpy.linalg.lstsq`` on the expanded pulls; then only directions in the span
of the pulled arms are estimable, and :meth:`LeastSquares.norms2` is meaningful only there.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..protocol import Batch

__all__ = ["LeastSquares"]

# Relative cutoff for eigenvalues of A treated as zero in the pseudo-inverse.
_RCOND = 1e-12


@dataclass(frozen=True, eq=False)
class LeastSquares:
    """A least-squares fit: ``theta`` and ``A_inv`` (``A⁺``, the covariance up to σ²).

    Build with :meth:`from_sums`.
    """

    theta: np.ndarray
    A_inv: np.ndarray
    rank: int

    @classmethod
    def from_sums(cls, X: np.ndarray, counts: np.ndarray, sums: np.ndarray, *,
                  reg: float = 0.0) -> LeastSquares:
        """Fit from pulls per arm and reward sums per arm.

        Parameters
        ----------
        X : array, shape (K, d)
            Arms.
        counts : array, shape (K,)
            Pulls of each arm.
        sums : array, shape (K,)
            Sum of the rewards of each arm's pulls.
        reg : float
            Ridge regulariser added to ``A`` (0 for ordinary least squares).
        """
        counts = np.asarray(counts, dtype=float)
        sums = np.asarray(sums, dtype=float)
        used = counts > 0
        Xu = X[used]
        A = (Xu.T * counts[used]) @ Xu
        if reg:
            A = A + reg * np.eye(X.shape[1])
        b = Xu.T @ sums[used]
        # Symmetric eigendecomposition: a stable inverse or pseudo-inverse of a PSD matrix.
        w, V = np.linalg.eigh(A)
        keep = w > _RCOND * max(float(w[-1]), 0.0) if w.size else w > 0
        inv_w = np.zeros_like(w)
        inv_w[keep] = 1.0 / w[keep]
        A_inv = (V * inv_w) @ V.T
        return cls(theta=A_inv @ b, A_inv=A_inv, rank=int(keep.sum()))

    @classmethod
    def from_batch(cls, X: np.ndarray, batch: Batch, rewards: np.ndarray, *,
                   reg: float = 0.0) -> LeastSquares:
        """Fit on one batch's pulls from its per-run reward sums (what ``observe`` receives)."""
        n_arms = X.shape[0]
        return cls.from_sums(X, batch.allocation(n_arms), batch.arm_sums(rewards, n_arms),
                             reg=reg)

    def norms2(self, Y: np.ndarray) -> np.ndarray:
        """``||y||²_{A⁺}`` for every row ``y`` of ``Y``."""
        Y = np.atleast_2d(Y)
        return np.einsum("ij,ij->i", Y @ self.A_inv, Y)
