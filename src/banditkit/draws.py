"""I.i.d. draws of arms from a design, computable at any position of the stream.

An i.i.d.-sampling identifier (G-BAI, P1-RAGE, P1-Peace, Mixed-Peace: Xiong et al., Sections
4–5 and Appendix A) draws pull t of an epoch as ``searchsorted(cdf, u_t, side="right")`` — the
arm ``ξ.choice(K, p=λ)`` gives — with ``u_t`` the t-th double of ξ. With a PCG64 generator each
double is one 64-bit output of the stream (``Generator.random``: ``next_uint64 >> 11``), and
``bit_generator.advance(k)`` jumps k outputs in O(log k). So an epoch of n pulls is fully
described by the design's cdf, n, and ξ's state at its start (:class:`banditkit.protocol.IIDBatch`):
pulls ``[h, h + m)`` cost O(m), whatever n, and the whole sequence is the same numbers as
drawing it at once.

Only numpy here: :mod:`banditkit.protocol` builds on it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["ADVANCEABLE", "advance_like_random", "arms_of_uniforms", "design_cdf",
           "uniforms_at"]

_CELLS = 2048  # cells of [0, 1) in the table sampler (a power of two: u·G is exact)
_TABLE_FROM = 1024  # fewest pulls for which building the table pays off (measured)

#: Bit generators whose doubles are one 64-bit output each and that jump ahead exactly
#: (``advance(k)`` = k outputs): PCG64 (every ``banditkit.rng`` generator) and PCG64DXSM.
ADVANCEABLE = (np.random.PCG64, np.random.PCG64DXSM)


def design_cdf(weights: np.ndarray) -> np.ndarray:
    """``cumsum(p) / cumsum(p)[-1]``: the cdf numpy's ``Generator.choice`` searches."""
    cdf = np.cumsum(np.asarray(weights, dtype=float))
    cdf /= cdf[-1]
    return cdf


def arms_of_uniforms(cdf: np.ndarray, u: np.ndarray) -> np.ndarray:
    """``searchsorted(cdf, u, side="right")`` as int64: the arm of each uniform.

    A binary search per pull costs about 20 ns; here ``[0, 1)`` is cut into 2048 cells
    (``j = ⌊2048 u⌋`` is exact, 2048 being a power of two) and the count is read from a table
    for every pull whose cell holds no cdf value, by binary search only for the others (at most
    K − 1 cells of 2048) — from about a thousand pulls on, where building the table pays
    off. The arms are the same numbers as the binary search's, bit for bit.
    """
    if u.size < _TABLE_FROM:
        return cdf.searchsorted(u, side="right").astype(np.int64, copy=False)
    inner = cdf[cdf < 1.0]  # values of 1.0 are above every u
    scaled = inner * _CELLS
    # table[j] = #{c ≤ j / G} (c counts from cell ⌈c G⌉ on), or −1 where a cdf value lies
    # strictly inside cell j, where the count depends on u itself
    table = np.cumsum(np.bincount(np.ceil(scaled).astype(np.int64), minlength=_CELLS + 1))
    cells = np.floor(scaled)
    table[cells[cells != scaled].astype(np.int64)] = -1
    arms = table[(u * _CELLS).astype(np.int64)]
    fix = np.flatnonzero(arms < 0)
    if fix.size:
        arms[fix] = cdf.searchsorted(u[fix], side="right")
    return arms


def advance_like_random(bit_generator: Any, n: int) -> None:
    """Move ``bit_generator`` past ``n`` doubles, to the state ``Generator.random(n)`` leaves.

    ``advance`` also drops a buffered 32-bit half-output (numpy resets it so that the jump is
    reproducible), which ``random`` would have kept for a later 32-bit draw (a permutation of
    fewer than 2³² items uses them): it is put back, so every later draw is unchanged.
    """
    state = bit_generator.state
    bit_generator.advance(n)
    if state["has_uint32"]:
        after = bit_generator.state
        after["has_uint32"], after["uinteger"] = state["has_uint32"], state["uinteger"]
        bit_generator.state = after


def uniforms_at(state: dict, start: int, count: int) -> np.ndarray:
    """Doubles ``start .. start + count − 1`` of the stream that starts at ``state`` (a PCG64
    or PCG64DXSM state dict): O(log start + count)."""
    kind = {cls.__name__: cls for cls in ADVANCEABLE}[state["bit_generator"]]
    bit_generator = kind()
    bit_generator.state = state
    if start:
        bit_generator.advance(start)
    return np.random.Generator(bit_generator).random(count)
