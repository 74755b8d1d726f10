"""Direction sets Y for XY designs: explicit arrays, or lazy pairwise differences of items.

Transductive designs (RAGE, Fiez et al. 2019) need ``Y(S) = {z - z' : z, z' ∈ S, z ≠ z'}``,
which has ``|S|²`` elements; with ``|S| = 2000`` that is four million vectors.
``Differences`` never builds them: the quadratic forms ``(z_i - z_j)ᵀ M (z_i - z_j)`` are
``a_i + a_j - 2 z_iᵀ M z_j`` with ``a_i = z_iᵀ M z_i``, so one scan over Y is a chunked Gram
matrix product (only ``i < j``, since the form is symmetric in the pair), restricted by the
triangle inequality to the pairs that can reach the top (see ``Differences.scan``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..validation import check_arms, check_positive_int

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
        """The ``k_top`` largest forms ``yᵀ M y`` over the set (descending) and their indices.

        Returns the first ``k_top`` pairs ``i < j`` in the order (form descending, flat index
        ``i * k + j`` ascending): exactly the pairs a scan of all ``k (k - 1) / 2`` forms
        would return, with ties broken by the smaller flat index.

        Notes
        -----
        Forms are ``a_i + a_j - 2 c_iᵀ M c_j`` on centred items ``c_i = z_i - o`` and
        ``a_i = c_iᵀ M c_i``; centring removes most of the cancellation of this identity
        when the items are far from the origin compared with their differences.

        *Pruning.* With ``w_i = M^{1/2} c_i`` the form is ``||w_i - w_j||²``, so the triangle
        inequality gives ``√v_ij <= r_i + r_j`` with ``r_i² = a_i`` (``M^{1/2}`` is never
        formed). The forms among the items of largest ``r`` give a lower bound ``τ`` on the
        ``k_top``-th largest form, and only pairs with ``(r_i + r_j)² >= τ`` are computed:
        with the items sorted by ``r`` descending, each row's partners are a prefix of the
        later items, and rows whose best partner falls short are skipped. Inside each block
        only entries ``>= τ`` (raised to the running ``k_top``-th best) are kept before any
        selection. When nothing can be pruned (items at equal M-distance from the centre) every
        block is still computed, as by a plain scan. The centre ``o`` is the item nearest the
        mean under M: most items are then near it, with small radii (on RAGE's many-arms
        items the midpoint of two far-apart items, also tried, computed 5-10× more pairs);
        and being an item it keeps integer data exact.

        ``M`` need not be positive semi-definite: the radii are taken under ``M + ηI ⪰ M``
        with ``η = max(0, -λ_min(M))``. The radii and ``τ`` carry absolute margins of order
        ``1e-9 ||M|| max ||c_i||²`` (far above round-off for ``d`` up to 10⁴), so no pair
        whose computed form belongs to the top ``k_top`` is skipped.
        """
        k_top = check_positive_int(k_top, "k_top")
        W = self.items
        k = W.shape[0]
        n_pairs = k * (k - 1) // 2
        if n_pairs == 0:
            return np.empty(0), np.empty(0, dtype=np.int64)
        M = np.asarray(M, dtype=float)
        Ms = 0.5 * (M + M.T)
        lam = np.linalg.eigvalsh(Ms)
        norm = max(abs(lam[0]), abs(lam[-1]))
        C = W - _centre(W, Ms)
        c2 = np.einsum("ij,ij->i", C, C)
        P2 = C @ (-2.0 * Ms)
        a = -0.5 * np.einsum("ij,ij->i", P2, C)
        # Radii under M + ηI, rounded up by the margin so they bound the exact ones.
        r = np.sqrt(np.maximum(a + (max(0.0, -lam[0]) + 1e-9 * norm) * c2, 0.0))
        slack = 4e-9 * norm * float(c2.max())
        order = np.argsort(-r, kind="stable")
        r, C, P2, a = r[order], C[order], P2[order], a[order]
        tau = _lower_bound(P2, C, a, k_top, n_pairs)
        top = _TopPairs(k_top, k)
        for s, e, end in _row_blocks(_partner_ends(r, tau - slack)):
            block = P2[s:e] @ C[s:end].T
            block += a[None, s:end]
            # Only pairs j > i (positions in sorted order); NaN fails every comparison.
            tri = np.arange(e - s)
            block[:, : e - s][tri[:, None] >= tri[None, :]] = np.nan
            floor = max(tau, top.kth) - slack
            hit = np.flatnonzero(block >= (floor - a[s:e])[:, None])
            if hit.size:
                i, j = np.divmod(hit, end - s)
                top.add(block.ravel()[hit] + a[s + i], order[s + i], order[s + j])
        return top.result()


def _centre(W: np.ndarray, M: np.ndarray) -> np.ndarray:
    """The item nearest the mean under M: central, and an item, so integer data stay exact."""
    C = W - W.mean(axis=0)
    return W[np.argmin(np.einsum("ij,ij->i", C @ M, C))]


def _lower_bound(P2: np.ndarray, C: np.ndarray, a: np.ndarray, k_top: int,
                 n_pairs: int) -> float:
    """The ``k_top``-th largest form over the pairs of the first m items (largest radii)
    with every later item, or -inf when the full scan is small anyway (``<= 4 k_top`` pairs).

    The largest forms tend to involve the items far from the centre, with partners anywhere.
    m gives ``4 k_top`` such pairs (at least ``k_top``, and at most about ``_CHUNK_ENTRIES``
    entries unless ``k_top`` needs more) and is at least 16 rows when that fits in a chunk.
    """
    k = C.shape[0]
    if n_pairs <= 4 * k_top:
        return -np.inf
    want = max(k_top, min(4 * k_top, _CHUNK_ENTRIES // 2))
    m = min(16, k - 1, max(1, _CHUNK_ENTRIES // k))
    while m * k - m * (m + 1) // 2 < want:
        m += 1
    block = P2[:m] @ C.T
    block += a[None, :]
    block += a[:m, None]
    vals = block[np.arange(m)[:, None] < np.arange(k)[None, :]]
    return float(np.partition(vals, vals.size - k_top)[vals.size - k_top])


def _partner_ends(r: np.ndarray, bound: float) -> np.ndarray:
    """For rows a (radii sorted descending), the end of the partners b > a with
    ``(r_a + r_b)² >= bound``; truncated to the rows that have any."""
    k = r.size
    if not bound > 0.0:
        return np.full(k - 1, k)
    ends = np.searchsorted(-r, r - np.sqrt(bound), side="right")
    # ends is non-increasing and a + 1 increasing, so the rows with partners are a prefix.
    return ends[: np.count_nonzero(ends > np.arange(1, k + 1))]


def _row_blocks(ends: np.ndarray):
    """Blocks (rows s:e, columns s:end) covering each row's partners, at most
    ``_CHUNK_ENTRIES`` entries, and at least half of each block's width used by its last
    row."""
    s, n_rows = 0, ends.size
    while s < n_rows:
        end = int(ends[s])
        width = end - s
        e = min(n_rows, s + max(1, _CHUNK_ENTRIES // width))
        short = int(np.searchsorted(-ends, -(s + 0.5 * width), side="right"))
        e = min(e, max(short, s + 1))
        yield s, e, end
        s = e


class _TopPairs:
    """The best pairs seen so far, in the order (value descending, flat index ascending)."""

    def __init__(self, k_top: int, k: int) -> None:
        self.k_top, self.k = k_top, k
        self.vals: list[np.ndarray] = []
        self.flats: list[np.ndarray] = []
        self.held = 0
        self.kth = -np.inf

    def add(self, vals: np.ndarray, i: np.ndarray, j: np.ndarray) -> None:
        self.vals.append(vals)
        self.flats.append(np.minimum(i, j).astype(np.int64) * self.k + np.maximum(i, j))
        self.held += vals.size
        if self.held > 2 * self.k_top + 1024:
            self._reduce()

    def _reduce(self) -> None:
        vals, flats = _select(np.concatenate(self.vals), np.concatenate(self.flats),
                              self.k_top)
        self.vals, self.flats, self.held = [vals], [flats], vals.size
        if vals.size == self.k_top:
            self.kth = float(vals.min())

    def result(self) -> tuple[np.ndarray, np.ndarray]:
        if not self.vals:
            return np.empty(0), np.empty(0, dtype=np.int64)
        self._reduce()
        vals, flats = self.vals[0], self.flats[0]
        order = np.lexsort((flats, -vals))
        return vals[order], flats[order]


def _select(vals: np.ndarray, flats: np.ndarray, k_top: int) -> tuple[np.ndarray, np.ndarray]:
    """The first ``k_top`` entries in the order (value descending, flat ascending), unsorted,
    in linear time."""
    if vals.size <= k_top:
        return vals, flats
    kth = np.partition(vals, vals.size - k_top)[vals.size - k_top]
    above = np.flatnonzero(vals > kth)
    tied = np.flatnonzero(vals == kth)
    need = k_top - above.size
    if need < tied.size:
        tied = tied[np.argpartition(flats[tied], need - 1)[:need]]
    keep = np.concatenate([above, tied])
    return vals[keep], flats[keep]


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
