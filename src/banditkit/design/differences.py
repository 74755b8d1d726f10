"""Direction sets Y for XY designs: explicit arrays, or lazy pairwise differences of items.

Transductive designs (RAGE, Fiez et al. 2019) need ``Y(S) = {z - z' : z, z' ∈ S, z ≠ z'}``,
which has ``|S|²`` elements; with ``|S| = 2000`` that is four million vectors.
``Differences`` never builds them: the quadratic forms ``(z_i - z_j)ᵀ M (z_i - z_j)`` are
``a_i + a_j - 2 z_iᵀ M z_j`` with ``a_i = z_iᵀ M z_i``, so one scan over Y is a chunked Gram
matrix product (only ``i < j``, since the form is symmetric in the pair).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..validation import check_arms

__all__ = ["Differences"]

# Entries of a chunk of quadratic forms held in memory at once (8 bytes each).
_CHUNK_ENTRIES = 1 << 20


@dataclass(frozen=True, eq=False)
class Differences:
    """The set ``{z - z' : z, z' ∈ Z[subset], z ≠ z'}`` of ordered pairwise differences.

    Parameters
    ----------
    Z : array_like, shape (m, d)
        Items (rows). Must be finite.
    subset : array_like of int, optional
        Indices into ``Z`` restricting the pairs to those items (e.g. RAGE's surviving set
        ``S_t``); default all of ``Z``. Pairs are of distinct positions, so duplicate rows
        give zero differences, which never matter for a maximum of non-negative forms.

    Notes
    -----
    ``len(Differences)`` counts ordered pairs, ``k (k - 1)`` with ``k = len(subset)``; the
    maximisation only ever visits ``i < j`` because ``z - z'`` and ``z' - z`` give the same
    quadratic form. Flat indices returned by scans are ``i * k + j`` in subset positions.
    """

    Z: np.ndarray
    subset: np.ndarray | None = None

    def __post_init__(self) -> None:
        Z = check_arms(self.Z, "Z")
        if self.subset is None:
            idx = np.arange(Z.shape[0])
        else:
            idx = np.asarray(self.subset)
            if idx.ndim != 1 or not np.issubdtype(idx.dtype, np.integer):
                raise ValueError("subset must be a 1-D array of integer indices into Z")
            if idx.size and (idx.min() < 0 or idx.max() >= Z.shape[0]):
                raise ValueError(f"subset indices must lie in [0, {Z.shape[0]})")
        object.__setattr__(self, "Z", Z)
        object.__setattr__(self, "subset", idx)

    @property
    def items(self) -> np.ndarray:
        """The items whose differences are taken, ``Z[subset]``."""
        return self.Z[self.subset]

    @property
    def dim(self) -> int:
        return int(self.Z.shape[1])

    def __len__(self) -> int:
        k = self.subset.size
        return int(k * (k - 1))

    def restrict(self, subset: object) -> Differences:
        """Differences over ``Z[subset]`` (indices into the full ``Z``)."""
        return Differences(self.Z, np.asarray(subset))

    def pairs(self, flat: object) -> tuple[np.ndarray, np.ndarray]:
        """Indices ``(i, j)`` into the full ``Z`` of flat pair indices from a scan."""
        flat = np.asarray(flat)
        k = self.subset.size
        return self.subset[flat // k], self.subset[flat % k]

    def rows(self, flat: object) -> np.ndarray:
        """The difference vectors ``Z[i] - Z[j]`` for flat pair indices."""
        i, j = self.pairs(flat)
        return self.Z[i] - self.Z[j]

    def materialize(self) -> np.ndarray:
        """All ``k (k - 1)`` differences as an array, in flat-index order (small sets only)."""
        k = self.subset.size
        i, j = np.divmod(np.arange(k * k), k)
        keep = i != j
        W = self.items
        return W[i[keep]] - W[j[keep]]

    def scan(self, M: np.ndarray, k_top: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``k_top`` largest forms ``yᵀ M y`` over the set (descending) and their indices."""
        W = self.items
        k = W.shape[0]
        P = W @ M
        a = np.einsum("ij,ij->i", P, W)
        rows = max(1, _CHUNK_ENTRIES // max(k, 1))
        best_v = np.empty(0)
        best_i = np.empty(0, dtype=np.int64)
        for s in range(0, k - 1, rows):
            e = min(s + rows, k)
            # Columns j >= s only; inside the diagonal block keep j > i.
            block = P[s:e] @ W[s:].T
            block *= -2.0
            block += a[s:e, None]
            block += a[None, s:]
            tri = np.arange(e - s)
            block[:, : e - s][tri[:, None] >= tri[None, :]] = -np.inf
            flat, part = _top_positions(block.ravel(), k_top)
            r, c = np.divmod(part, block.shape[1])
            best_v, best_i = _merge_top(best_v, best_i, flat[part], (r + s) * k + (c + s), k_top)
        return best_v, best_i


def _top_positions(flat: np.ndarray, k_top: int) -> tuple[np.ndarray, np.ndarray]:
    take = min(k_top, flat.size)
    return flat, np.argpartition(flat, flat.size - take)[flat.size - take:]


def _merge_top(best_v: np.ndarray, best_i: np.ndarray, new_v: np.ndarray, idx: np.ndarray,
               k_top: int) -> tuple[np.ndarray, np.ndarray]:
    vals = np.concatenate([best_v, new_v])
    idxs = np.concatenate([best_i, idx])
    keep = np.isfinite(vals)
    vals, idxs = vals[keep], idxs[keep]
    order = np.argsort(-vals, kind="stable")[:k_top]
    return vals[order], idxs[order]


@dataclass(frozen=True, eq=False)
class _ArrayDirections:
    """An explicit (n_y, d) array of directions, scanned in row chunks."""

    Y: np.ndarray

    @property
    def dim(self) -> int:
        return int(self.Y.shape[1])

    def __len__(self) -> int:
        return int(self.Y.shape[0])

    def rows(self, flat: object) -> np.ndarray:
        return self.Y[np.asarray(flat)]

    def scan(self, M: np.ndarray, k_top: int) -> tuple[np.ndarray, np.ndarray]:
        n, d = self.Y.shape
        rows = max(1, _CHUNK_ENTRIES // max(d, 1))
        best_v = np.empty(0)
        best_i = np.empty(0, dtype=np.int64)
        for s in range(0, n, rows):
            Yc = self.Y[s:s + rows]
            v, part = _top_positions(np.einsum("ij,ij->i", Yc @ M, Yc), k_top)
            best_v, best_i = _merge_top(best_v, best_i, v[part], part + s, k_top)
        return best_v, best_i


def as_directions(Y: object, d: int) -> Differences | _ArrayDirections:
    """Validate ``Y`` (array or ``Differences``) against dimension ``d``; refuse empty sets."""
    if isinstance(Y, Differences):
        if Y.dim != d:
            raise ValueError(f"Y must have dimension d={d} (the columns of X), got {Y.dim}")
        if len(Y) == 0:
            raise ValueError("Y must not be empty: Differences needs at least 2 items")
        if not np.ptp(Y.items, axis=0).any():
            raise ValueError("Y must contain a non-zero direction (all items are equal)")
        return Y
    arr = np.asarray(Y, dtype=float)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] != d:
        raise ValueError(f"Y must be an array of shape (n_y, {d}) or Differences(Z), got shape "
                         f"{arr.shape}")
    if arr.shape[0] == 0:
        raise ValueError("Y must not be empty")
    if not np.all(np.isfinite(arr)):
        raise ValueError("Y must contain only finite numbers (found NaN or inf)")
    if not np.any(arr):
        raise ValueError("Y must contain a non-zero direction (all rows are zero)")
    return _ArrayDirections(arr)
