"""Pukelsheim's efficient rounding (Fiez et al. 2019, Appendix B, Proposition 2)."""

from __future__ import annotations

import numpy as np
import pytest

from banditkit.design import (
    design_value,
    g_optimal,
    round_allocation,
    rounding_min_samples,
    xy_optimal,
)


def _random_weights(rng: np.random.Generator, K: int) -> np.ndarray:
    w = rng.exponential(size=K) * (rng.random(K) < 0.6)
    if not w.any():
        w[rng.integers(K)] = 1.0
    return w / w.sum()


def test_sums_to_n_and_respects_support() -> None:
    rng = np.random.default_rng(0)
    for _ in range(500):
        K = int(rng.integers(1, 40))
        w = _random_weights(rng, K)
        n = int(rng.integers(0, 300))
        s = round_allocation(w, n)
        assert s.dtype.kind == "i" and s.shape == (K,)
        assert s.sum() == n and np.all(s >= 0)
        assert np.all(s[w == 0] == 0)


def test_efficiency_bound_min_likelihood_ratio() -> None:
    # Pukelsheim Lemma 12.8 as used in Proposition 2: min_i (s_i/n)/λ_i >= 1 - p/n for n >= p.
    rng = np.random.default_rng(1)
    for _ in range(500):
        w = _random_weights(rng, int(rng.integers(1, 30)))
        p = int(np.count_nonzero(w))
        n = int(rng.integers(p, 20 * p + 2))
        s = round_allocation(w, n)
        sup = w > 0
        assert np.min(s[sup] / n / w[sup]) >= 1 - p / n - 1e-12


def test_exact_when_weights_are_multiples() -> None:
    w = np.array([0.5, 0.25, 0.0, 0.25])
    np.testing.assert_array_equal(round_allocation(w, 8), [4, 2, 0, 2])
    np.testing.assert_array_equal(round_allocation(w, 400), [200, 100, 0, 100])
    np.testing.assert_array_equal(round_allocation([1.0], 7), [7])


def test_proposition_2_value_bound() -> None:
    # For n >= 2p the rounded fractional design loses at most a factor 1 + 2p/n, for any Y.
    rng = np.random.default_rng(2)
    for trial in range(12):
        d = int(rng.integers(2, 6))
        X = rng.normal(size=(int(rng.integers(d + 2, 25)), d))
        Y = rng.normal(size=(10, d))
        designs = [g_optimal(X).weights, xy_optimal(X, Y).weights]
        # A random spanning design too (the bound does not need optimality).
        w = rng.random(X.shape[0]) + 0.01
        designs.append(w / w.sum())
        for lam in designs:
            p = int(np.count_nonzero(lam))
            for n in (2 * p, 2 * p + 3 + trial, 10 * p):
                s = round_allocation(lam, n)
                for target in (None, Y):
                    rounded = design_value(X, s / n, target)
                    assert rounded <= (1 + 2 * p / n) * design_value(X, lam, target) * (1 + 1e-9)


def test_small_n_still_sums() -> None:
    # Fewer pulls than support points (outside the paper's n >= p): sums to n, no negatives.
    w = np.full(10, 0.1)
    for n in range(0, 12):
        s = round_allocation(w, n)
        assert s.sum() == n and np.all(s >= 0)


def test_min_samples() -> None:
    assert rounding_min_samples(10, 0.5) == 40
    assert rounding_min_samples(3, 1 / 3) == 18
    assert rounding_min_samples(3, 4.0) == 6  # at least 2p (Proposition 2 needs n >= 2p)
    with pytest.raises(ValueError, match="epsilon"):
        rounding_min_samples(3, 0.0)
    with pytest.raises(ValueError, match="p must"):
        rounding_min_samples(0, 0.5)


@pytest.mark.parametrize(
    ("weights", "n", "exc", "match"),
    [
        ([0.5, -0.1, 0.6], 10, ValueError, "non-negative"),
        ([0.5, 0.4], 10, ValueError, "sum to 1"),
        ([0.5, float("nan"), 0.5], 10, ValueError, "finite"),
        ([], 10, ValueError, "non-empty"),
        ([[0.5, 0.5]], 10, ValueError, "1-D"),
        ([0.5, 0.5], -1, ValueError, "n must"),
        ([0.5, 0.5], 2.5, TypeError, "n must"),
        ([0.5, 0.5], True, TypeError, "n must"),
    ],
)
def test_refusals(weights, n, exc, match: str) -> None:
    with pytest.raises(exc, match=match):
        round_allocation(weights, n)
