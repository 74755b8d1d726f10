"""The pulls of one epoch of a constrained policy: i.i.d. draws from its strategy x until some
arm's count reaches its target (DEBORA-S and DEBORA-H, Bollini et al., Algorithms 3–4, lines 7
and 18; the optimistic baselines' doubling schedule, :mod:`.constrained_baselines`).

The arm of round t is the inverse CDF of x at the t-th uniform of a stream:
a_t = min{a : u_t < F(a)}, F the cumulative sum of x (arms of probability 0 are never drawn).
The stream is read as one uniform per round: uniforms drawn ahead in a chunk but not used by the
epoch are kept for the next one, so the vectorised sampler gives exactly the pulls of a
per-round loop calling ``rng.random()`` once a round, and the chunk and refill sizes change only
the speed, never the pulls.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["EpochSampler", "inverse_cdf"]

#: Refill size of the buffer of uniforms (any value gives the same pulls).
_UNIFORM_BLOCK = 4096
#: First chunk of an epoch: _CHUNK_FACTOR × (expected length + 3 sd) + _CHUNK_MIN pulls, then
#: doubled until the epoch ends. Only speed depends on these, never the pulls.
_CHUNK_FACTOR = 1.0
_CHUNK_MIN = 16


def inverse_cdf(strategy: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
    """Arms a = min{a : u < F(a)}, F the cumulative sum of ``strategy``, for each uniform u.

    The CDF is set to exactly 1 from the last arm of positive probability on, so rounding in
    the cumulative sum can never select an arm of probability 0.
    """
    x = np.asarray(strategy, dtype=float)
    cdf = np.cumsum(x)
    last = int(np.flatnonzero(x > 0)[-1])
    cdf = cdf / cdf[last]
    cdf[last:] = 1.0
    return np.searchsorted(cdf, uniforms, side="right").astype(np.int64)


class EpochSampler:
    """Epochs of i.i.d. pulls from a stream of uniforms (one per round, kept when unused).

    Parameters
    ----------
    rng : numpy.random.Generator
        The stream the uniforms come from (the policy's internal randomness, or a stream
        derived from it); nothing else should draw from it.
    """

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self._uniforms = np.empty(0)  # drawn but not yet used
        self._pos = 0

    def _peek(self, n: int) -> np.ndarray:
        """The next n uniforms, without using them up."""
        available = self._uniforms.size - self._pos
        if available < n:
            fresh = self.rng.random(max(n - available, _UNIFORM_BLOCK))
            self._uniforms = np.concatenate([self._uniforms[self._pos:], fresh])
            self._pos = 0
        return self._uniforms[self._pos: self._pos + n]

    def draw(self, x: np.ndarray, need: np.ndarray, remaining: int) -> np.ndarray:
        """The arms of one epoch under strategy ``x``: drawn until, for some arm a with
        x[a] > 0, the epoch holds ``need[a]`` (≥ 1) pulls of a — that pull is the epoch's
        last — or until ``remaining`` rounds have been drawn.

        Drawn in vectorised chunks (a first guess of the epoch's length, doubled until the end
        is found), with a loop over arms, never over rounds.
        """
        need = np.asarray(need, dtype=np.int64)
        support = np.flatnonzero(x > 0)
        # expected rounds until the first arm reaches its need, plus slack; doubled if short
        expected = float(np.min(need[support] / x[support]))
        chunk = int(_CHUNK_FACTOR * (expected + 3.0 * math.sqrt(expected))) + _CHUNK_MIN
        got = np.zeros(x.size, dtype=np.int64)  # pulls of each arm so far in the epoch
        pieces: list[np.ndarray] = []
        drawn = 0
        while drawn < remaining:
            n = min(chunk, remaining - drawn)
            arms = inverse_cdf(x, self._peek(n))
            end, found = n, False  # end: one past the epoch's last pull within this chunk
            for a in support:
                k = int(need[a] - got[a])  # the k-th pull of a in this chunk ends the epoch
                hits = np.flatnonzero(arms == a)
                if hits.size >= k:
                    end, found = min(end, int(hits[k - 1]) + 1), True
            self._pos += end
            pieces.append(arms[:end])
            drawn += end
            if found:
                break
            got += np.bincount(arms, minlength=x.size)
            chunk *= 2
        return np.concatenate(pieces) if pieces else np.empty(0, dtype=np.int64)
