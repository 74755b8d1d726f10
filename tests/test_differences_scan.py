"""``Differences.scan``: the pruned top-k scan of pairwise forms equals brute force.

The reference materialises every difference, evaluates ``yᵀMy`` directly and orders the pairs
``i < j`` by (form descending, flat index ascending), the order the scan documents.
"""

from __future__ import annotations

import numpy as np
import pytest

from banditkit.design import Differences
from banditkit.design import differences as differences_module
from banditkit.rng import stream


def brute_top(D: Differences, M: np.ndarray, k_top: int) -> tuple[np.ndarray, np.ndarray]:
    """Top-k forms over pairs i < j by direct evaluation of every difference."""
    k = D.subset.size
    i, j = np.divmod(np.arange(k * k), k)
    flat = (i * k + j)[i != j]  # materialize() is in flat-index order without i == j
    Y = D.materialize()
    v = np.einsum("ij,ij->i", Y @ M, Y)
    upper = flat // k < flat % k
    v, flat = v[upper], flat[upper]
    order = np.lexsort((flat, -v))[:k_top]
    return v[order], flat[order]


def random_psd(rng: np.random.Generator, d: int, rank: int | None = None) -> np.ndarray:
    B = rng.standard_normal((d, d if rank is None else rank))
    return B @ B.T


def forms_of(D: Differences, M: np.ndarray, flat: np.ndarray) -> np.ndarray:
    Y = D.rows(flat)
    return np.einsum("ij,ij->i", Y @ M, Y)


def assert_matches_brute(D: Differences, M: np.ndarray, k_top: int) -> None:
    """Same values (to round-off of the Gram identity) and the same pairs; the pairs' direct
    forms equal the returned values; every pair is i < j in subset positions."""
    vals, flat = D.scan(M, k_top)
    ref_v, ref_f = brute_top(D, M, k_top)
    assert vals.shape == ref_v.shape == flat.shape
    assert np.all(np.diff(vals) <= 0)
    scale = max(float(np.abs(ref_v).max()), 1e-300)
    np.testing.assert_allclose(vals, ref_v, rtol=0, atol=1e-10 * scale)
    np.testing.assert_array_equal(flat, ref_f)
    np.testing.assert_allclose(forms_of(D, M, flat), vals, rtol=0, atol=1e-10 * scale)
    k = D.subset.size
    assert np.all(flat // k < flat % k)


@pytest.mark.parametrize("k_top", [1, 7, 300])
def test_gaussian_items(k_top: int) -> None:
    rng = stream(11, "gaussian", k_top)
    for d in (1, 3, 6):
        Z = rng.standard_normal((180, d))
        assert_matches_brute(Differences(Z), random_psd(rng, d), k_top)


def test_far_outliers_prune_most_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    # A tight cloud with a few far items: the top forms all involve an outlier, and the scan
    # must find them while computing only a small fraction of the ~500k pairs.
    rng = stream(11, "outliers")
    Z = rng.standard_normal((1000, 3))
    Z[:5] += 40.0 * rng.standard_normal((5, 3))
    M = random_psd(rng, 3)
    entries = []
    real_blocks = differences_module._row_blocks

    def counting_blocks(ends: np.ndarray):
        for s, e, end in real_blocks(ends):
            entries.append((e - s) * (end - s))
            yield s, e, end

    monkeypatch.setattr(differences_module, "_row_blocks", counting_blocks)
    for k_top in (1, 64, 2000):
        entries.clear()
        assert_matches_brute(Differences(Z), M, k_top)
        assert sum(entries) < 0.02 * len(Differences(Z)) / 2


def test_points_on_circle_and_sphere_nothing_to_prune() -> None:
    rng = stream(11, "sphere")
    angles = np.sort(rng.uniform(0, 2 * np.pi, 200))
    circle = np.column_stack([np.cos(angles), np.sin(angles)])
    assert_matches_brute(Differences(circle), np.eye(2), 500)
    S = rng.standard_normal((250, 5))
    S /= np.linalg.norm(S, axis=1, keepdims=True)
    for k_top in (1, 2000):
        assert_matches_brute(Differences(S), np.eye(5), k_top)
        assert_matches_brute(Differences(S), random_psd(rng, 5), k_top)


def test_duplicates_and_exact_ties_on_integer_data() -> None:
    # Integer items and an integer M: every form is exact, so values must agree bit for bit
    # and ties (many, from duplicate items and a lattice) are broken by the smaller flat index.
    rng = stream(11, "ties")
    Z = rng.integers(-2, 3, size=(60, 3)).astype(float)
    Z[30:40] = Z[:10]
    B = rng.integers(-2, 3, size=(3, 3)).astype(float)
    for M in (np.eye(3), B @ B.T):
        for k_top in (1, 5, 97, 1000):
            vals, flat = Differences(Z).scan(M, k_top)
            ref_v, ref_f = brute_top(Differences(Z), M, k_top)
            np.testing.assert_array_equal(vals, ref_v)
            np.testing.assert_array_equal(flat, ref_f)
            np.testing.assert_array_equal(forms_of(Differences(Z), M, flat), vals)
        # The tie at the k-th value really crosses the cut-off, so the tie-break is exercised.
        assert np.sum(ref_v == ref_v[-1]) < np.sum(brute_top(Differences(Z), M, 1830)[0]
                                                   == ref_v[-1])


def test_restricted_subset_indexes_subset_positions() -> None:
    rng = stream(11, "subset")
    Z = rng.standard_normal((300, 4))
    Z[7] += 30.0
    sub = rng.choice(300, size=120, replace=False)
    D = Differences(Z).restrict(sub)
    M = random_psd(rng, 4)
    assert_matches_brute(D, M, 50)
    _, flat = D.scan(M, 50)
    i, j = D.pairs(flat)
    assert np.isin(i, sub).all() and np.isin(j, sub).all()
    np.testing.assert_allclose(np.einsum("ij,ij->i", (Z[i] - Z[j]) @ M, Z[i] - Z[j]),
                               D.scan(M, 50)[0], rtol=1e-10)


def test_k_top_beyond_the_number_of_pairs_returns_all() -> None:
    rng = stream(11, "all")
    Z = rng.standard_normal((12, 2))
    M = random_psd(rng, 2)
    vals, flat = Differences(Z).scan(M, 10_000)
    assert vals.size == 66 and np.unique(flat).size == 66
    # Also just below the 4 k_top pairs at which the lower bound τ is used, on few items.
    for k_top in (10_000, 66, 16, 3, 1):
        assert_matches_brute(Differences(Z), M, k_top)
    one = Differences(Z, subset=np.array([3]))
    assert one.scan(M, 5)[0].size == 0 and one.scan(M, 5)[1].size == 0
    with pytest.raises(ValueError, match="k_top"):
        Differences(Z).scan(M, 0)


def test_singular_and_indefinite_matrices() -> None:
    # Rank one: most differences have tiny forms, radii of items along the null space are
    # zero; indefinite: the bound is taken under M + ηI and must still be valid.
    rng = stream(11, "singular")
    Z = rng.standard_normal((200, 4))
    Z[:3] *= 20.0
    for k_top in (1, 40, 3000):
        assert_matches_brute(Differences(Z), random_psd(rng, 4, rank=1), k_top)
        A = rng.standard_normal((4, 4))
        assert_matches_brute(Differences(Z), A + A.T, k_top)


def test_items_far_from_the_origin_keep_their_precision() -> None:
    # Differences of size 1e-3 on items of norm 1e4: the Gram identity on raw items would
    # lose ~1e-4 relative accuracy to cancellation; on centred items it keeps ~1e-9.
    rng = stream(11, "offset")
    Z = 1e4 + 1e-3 * rng.standard_normal((150, 3))
    M = random_psd(rng, 3)
    vals, flat = Differences(Z).scan(M, 100)
    ref_v, ref_f = brute_top(Differences(Z), M, 100)
    np.testing.assert_allclose(vals, ref_v, rtol=1e-8)
    np.testing.assert_array_equal(flat, ref_f)
