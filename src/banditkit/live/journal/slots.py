"""The order in which a live batch's slots go to units, computed slot by slot.

``order="shuffled"`` hands a batch's pulls out in a random order, so that whatever drifts
during a batch (time of day, traffic source) does not line up with the arms. Drawing a whole
permutation of the batch on every :meth:`banditkit.Experiment.assign` costs O(batch) per call
(a batch of 10⁷ pulls: a 80 MB permutation per call). :func:`slot_order` instead evaluates a
keyed pseudo-random permutation of ``range(n)`` at the positions wanted: a balanced Feistel
network on the smallest even number of bits that covers n, with cycle walking back into
``range(n)`` (Black and Rogaway, "Ciphers with arbitrary finite domains", CT-RSA 2002). Its
round keys come from ``banditkit.rng.stream(seed, "live-order", batch)``, so position i of a
batch gets the same slot whatever the sizes of the calls before it, in any process: O(units
in the call) work, none of it proportional to the batch.

The round function is SplitMix64's finaliser of (value xor key), a 64-bit mixer with full
avalanche; six rounds of it make the permutation indistinguishable from a random one for the
purpose here (randomising the order of units), though it is no cryptographic cipher.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ...rng import stream

__all__ = ["slot_order"]

_ROUNDS = 6
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def _mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser (Steele, Lea and Flood 2014), elementwise on uint64."""
    x = x ^ (x >> np.uint64(30))
    x = x * _M1
    x = x ^ (x >> np.uint64(27))
    x = x * _M2
    return x ^ (x >> np.uint64(31))


def _feistel(x: np.ndarray, keys: np.ndarray, half: int) -> np.ndarray:
    mask = np.uint64((1 << half) - 1)
    shift = np.uint64(half)
    left, right = x >> shift, x & mask
    for key in keys:
        left, right = right, left ^ (_mix(right ^ key) & mask)
    return (left << shift) | right


#: Calls of at most this many positions go through Python integers: numpy's per-call
#: overhead (about 20 array operations per round) cost 0.5 ms for the one slot of an
#: ``assign(1)``, the largest part of the call; the two give the same slots (tested).
_SCALAR_MAX = 16
_MASK64 = (1 << 64) - 1


def _mix_int(x: int) -> int:
    """:func:`_mix` on one Python integer (uint64 arithmetic, modulo 2⁶⁴)."""
    x ^= x >> 30
    x = (x * 0xBF58476D1CE4E5B9) & _MASK64
    x ^= x >> 27
    x = (x * 0x94D049BB133111EB) & _MASK64
    return x ^ (x >> 31)


def _feistel_int(x: int, keys: tuple[int, ...], half: int) -> int:
    """:func:`_feistel` on one Python integer."""
    mask = (1 << half) - 1
    left, right = x >> half, x & mask
    for key in keys:
        left, right = right, left ^ (_mix_int(right ^ key) & mask)
    return (left << half) | right


@lru_cache(maxsize=256)
def _round_keys(seed: int, batch_id: int) -> tuple[int, ...]:
    """The round keys of batch ``batch_id`` (from ``stream(seed, "live-order", batch)``),
    derived once per batch and process rather than on every call."""
    keys = stream(seed, "live-order", batch_id).integers(
        0, np.iinfo(np.uint64).max, size=_ROUNDS, dtype=np.uint64, endpoint=True)
    return tuple(int(k) for k in keys)


def slot_order(seed: int, batch_id: int, n: int, start: int, count: int) -> np.ndarray:
    """Slots ``π(start), ..., π(start + count − 1)`` of the keyed permutation π of
    ``range(n)`` for batch ``batch_id`` of an experiment seeded ``seed`` (int64).

    Parameters
    ----------
    seed, batch_id : int
        Key the permutation (its round keys come from ``stream(seed, "live-order", batch)``).
    n : int
        The batch's number of pulls (the permutation's domain), ≥ 1.
    start, count : int
        Positions ``start .. start + count − 1`` of the order, within ``range(n)``.
    """
    round_keys = _round_keys(int(seed), int(batch_id))
    half = max(1, (max(int(n) - 1, 1).bit_length() + 1) // 2)
    if count <= _SCALAR_MAX:
        slots = []
        for position in range(int(start), int(start) + int(count)):
            slot = _feistel_int(position, round_keys, half)
            while slot >= n:  # cycle walking, as below
                slot = _feistel_int(slot, round_keys, half)
            slots.append(slot)
        return np.asarray(slots, dtype=np.int64)
    keys = np.asarray(round_keys, dtype=np.uint64)
    with np.errstate(over="ignore"):  # uint64 products wrap modulo 2⁶⁴ by design
        x = np.arange(start, start + count, dtype=np.uint64)
        out = _feistel(x, keys, half)
        # cycle walking: a value outside range(n) is enciphered again until it falls inside;
        # the domain 2^(2·half) < 4n, so about four rounds at most on average
        bad = np.flatnonzero(out >= np.uint64(n))
        while bad.size:
            out[bad] = _feistel(out[bad], keys, half)
            bad = bad[out[bad] >= np.uint64(n)]
    return out.astype(np.int64)
