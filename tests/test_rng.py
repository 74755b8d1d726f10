"""Seed derivation: reproducible, independent streams; no dependence on process or order."""

import subprocess
import sys

import numpy as np
import pytest

from banditkit.rng import as_generator, derive_seed, key_to_int, stream


def test_same_key_same_numbers_different_keys_different_numbers():
    a = stream(7, "fig", 0, 3, "algorithm").random(5)
    b = stream(7, "fig", 0, 3, "algorithm").random(5)
    c = stream(7, "fig", 0, 3, "environment").random(5)
    d = stream(8, "fig", 0, 3, "algorithm").random(5)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)
    assert not np.array_equal(a, d)


def test_string_keys_are_stable_across_processes():
    code = "from banditkit.rng import key_to_int; print(key_to_int('rage:fig1a'))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert int(out.stdout) == key_to_int("rage:fig1a")


def test_derive_seed_spawn_key():
    s = derive_seed(3, 1, "x")
    assert s.entropy == 3 and s.spawn_key == (1, key_to_int("x"))


@pytest.mark.parametrize("bad", [-1, 1.5, "a", True])
def test_bad_seeds_refused(bad):
    with pytest.raises((TypeError, ValueError), match="seed"):
        as_generator(bad) if not isinstance(bad, str) else derive_seed(bad)


def test_generator_passes_through():
    g = np.random.default_rng(0)
    assert as_generator(g) is g
