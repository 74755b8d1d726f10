"""Seed derivation: every random number in banditkit comes from a ``numpy.random.Generator``
built from a ``SeedSequence`` keyed by (root seed, experiment, instance, trial, stream).

Two streams per trial (DESIGN.md, "Randomness"): the algorithm's internal randomness ξ and the
environment's noise. A third, ``"instance"``, draws random problem instances (random arm sets).
A replicability audit keys the noise stream additionally by the execution index, so the two
executions of a pair share ξ and have independent noise.
"""

from __future__ import annotations

import hashlib

import numpy as np

__all__ = ["STREAMS", "as_generator", "derive_seed", "key_to_int", "stream"]

#: Named streams, each a fixed integer in the spawn key so that adding streams never shifts others.
STREAMS: dict[str, int] = {"algorithm": 0, "environment": 1, "instance": 2}

SeedLike = int | np.random.SeedSequence | np.random.Generator | None


def key_to_int(key: int | str) -> int:
    """Map a key part to a non-negative integer, stably across processes and machines.

    Strings are hashed with SHA-256 (Python's ``hash`` is salted per process, so unusable here).
    """
    if isinstance(key, bool):
        raise TypeError("seed key parts must be int or str, not bool")
    if isinstance(key, (int, np.integer)):
        if key < 0:
            raise ValueError(f"seed key parts must be non-negative integers, got {key}")
        return int(key)
    if isinstance(key, str):
        return int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "little")
    raise TypeError(f"seed key parts must be int or str, got {type(key).__name__}")


def derive_seed(root: int, *key: int | str) -> np.random.SeedSequence:
    """The ``SeedSequence`` for ``key`` under the root seed ``root``.

    Parameters
    ----------
    root : int
        Root seed of an experiment (non-negative).
    *key : int or str
        Path identifying what the randomness is for, e.g. ``("rage:fig1a", 3, 17, "algorithm")``.
    """
    if not isinstance(root, (int, np.integer)) or isinstance(root, bool) or root < 0:
        raise ValueError(f"seed must be a non-negative integer, got {root!r}")
    return np.random.SeedSequence(int(root), spawn_key=tuple(key_to_int(k) for k in key))


def stream(root: int, *key: int | str) -> np.random.Generator:
    """A fresh ``Generator`` for ``key`` (see :func:`derive_seed`).

    A last key part naming a stream of :data:`STREAMS` maps to that stream's fixed integer.
    """
    if key and isinstance(key[-1], str) and key[-1] in STREAMS:
        key = (*key[:-1], STREAMS[key[-1]])
    return np.random.Generator(np.random.PCG64(derive_seed(root, *key)))


def as_generator(seed: SeedLike) -> np.random.Generator:
    """Turn a seed-like value into a ``Generator``; a ``Generator`` is returned unchanged.

    ``None`` gives fresh OS entropy (non-reproducible, for interactive use only).
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, np.random.SeedSequence):
        return np.random.Generator(np.random.PCG64(seed))
    if seed is None:
        return np.random.Generator(np.random.PCG64(np.random.SeedSequence()))
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and seed >= 0:
        return np.random.Generator(np.random.PCG64(np.random.SeedSequence(int(seed))))
    raise TypeError(
        f"seed must be a non-negative int, SeedSequence, Generator or None, got {seed!r}"
    )
