"""The instances of Fiez et al. 2019, Section 5: exact constructions and their truths."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from banditkit.envs.instances import make_instance
from banditkit.envs.instances.rage import layout_features


def test_soare():
    env = make_instance("soare", d=5, omega=0.01)
    assert env.X.shape == (6, 5) and env.Z is env.X
    np.testing.assert_allclose(env.X[:5], np.eye(5))
    np.testing.assert_allclose(env.X[5], [np.cos(0.01), np.sin(0.01), 0, 0, 0])
    np.testing.assert_allclose(env.theta, [2, 0, 0, 0, 0])
    assert env.best_item() == 0
    assert np.sort(env.gaps)[1] == pytest.approx(2 * (1 - np.cos(0.01)))
    with pytest.raises(ValueError):
        make_instance("soare", d=1)


def test_many_arms():
    env = make_instance("many-arms", n=500, rng=np.random.default_rng(0))
    assert env.X.shape == (500, 2)
    np.testing.assert_allclose(env.X[0], [1, 0])
    np.testing.assert_allclose(env.X[1], [np.cos(3 * np.pi / 4), np.sin(3 * np.pi / 4)])
    np.testing.assert_allclose(np.linalg.norm(env.X, axis=1), 1.0)
    angles = np.arctan2(env.X[2:, 1], env.X[2:, 0]) - np.pi / 4
    assert abs(angles.mean()) < 0.02 and angles.std() == pytest.approx(0.09, rel=0.1)
    assert env.best_item() == 0
    assert np.median(env.gaps[2:]) == pytest.approx(1 - np.cos(np.pi / 4), abs=0.02)
    a = make_instance("many-arms", n=50, rng=np.random.default_rng(1))
    b = make_instance("many-arms", n=50, rng=np.random.default_rng(1))
    np.testing.assert_array_equal(a.X, b.X)


def test_sphere_theta_is_one_of_closest_pair():
    env = make_instance("sphere", n=200, d=9, rng=np.random.default_rng(0))
    np.testing.assert_allclose(np.linalg.norm(env.X, axis=1), 1.0)
    dist = np.linalg.norm(env.X[:, None] - env.X[None], axis=2)
    np.fill_diagonal(dist, np.inf)
    i, j = np.unravel_index(np.argmin(dist), dist.shape)
    assert env.best_item() == min(i, j)
    np.testing.assert_allclose(env.theta, env.X[min(i, j)])
    assert np.argsort(env.gaps)[1] == max(i, j)  # the other one is the hardest competitor


def test_transductive():
    env = make_instance("transductive", d=6)
    np.testing.assert_allclose(env.X, np.eye(6))
    c, s = np.cos(0.1), np.sin(0.1)
    np.testing.assert_allclose(env.Z[:3], np.eye(6)[:3])
    np.testing.assert_allclose(env.Z[3], [c, 0, 0, s, 0, 0])
    np.testing.assert_allclose(env.Z[5], [0, 0, c, 0, 0, s])
    assert env.best_item() == 0 and np.argsort(env.gaps)[1] == 3
    with pytest.raises(ValueError, match="even"):
        make_instance("transductive", d=5)


def test_multivariate_testing_values_match_the_model():
    rng = np.random.default_rng(3)
    env = make_instance("multivariate-testing", D=4, rng=rng)
    X = layout_features(4)
    assert X.shape == (16, 1 + 4 + 6) and np.array_equal(env.X, X)
    assert np.linalg.matrix_rank(X) == X.shape[1]
    raw = env.theta / np.r_[1.0, np.ones(4), 0.5 * np.ones(6)]
    # Raw weights lie on the grid {-0.30, -0.29, ..., 0.30}.
    assert np.all(np.abs(raw) <= 0.3 + 1e-12)
    np.testing.assert_allclose(raw * 100, np.round(raw * 100), atol=1e-9)
    for row, w in enumerate(itertools.product([-1, 1], repeat=4)):
        expected = raw[0] + sum(raw[1 + j] * w[j] for j in range(4)) + 0.5 * sum(
            raw[5 + p] * w[k] * w[l]
            for p, (k, l) in enumerate(itertools.combinations(range(4), 2)))
        assert env.item_values[row] == pytest.approx(expected)
    assert np.sort(env.gaps)[1] > 0  # unique best layout
