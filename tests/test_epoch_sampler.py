"""The exact O(K) epoch sampler (banditkit.policies.epoch_sampler) against the per-round process
of DEBORA-S/H's epochs (Bollini et al., Algorithms 3-4, line 7): the law of the stopped counts
by exact enumeration, large-count laws in closed form, support, stopping rule and streams."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest
from scipy import stats

from banditkit.policies.epoch_sampler import epoch_batch, epoch_counts


def stopped_law(x: list[float], need: list[int], remaining: int) -> dict[tuple, float]:
    """Exact law of the counts when the per-round loop stops: draw a ∼ x each round until some
    arm's count reaches its need (that round included) or ``remaining`` rounds are drawn —
    by enumerating every path (dynamic programming over the counts)."""
    K = len(x)
    law: dict[tuple, float] = defaultdict(float)
    alive = {(0,) * K: 1.0}
    for t in range(1, remaining + 1):
        nxt: dict[tuple, float] = defaultdict(float)
        for state, p in alive.items():
            for a in range(K):
                if x[a] == 0:
                    continue
                c = list(state)
                c[a] += 1
                if c[a] >= need[a] or t == remaining:
                    law[tuple(c)] += p * x[a]
                else:
                    nxt[tuple(c)] += p * x[a]
        alive = nxt
    return dict(law)


CASES = [
    # (x, need, remaining): the horizon far, near, and cutting most epochs; a zero arm; need 1
    ([0.5, 0.3, 0.2], [3, 2, 4], 100),
    ([0.5, 0.3, 0.2], [3, 2, 4], 5),
    ([0.6, 0.0, 0.4], [2, 1, 3], 3),
    ([0.25, 0.25, 0.5], [1, 2, 6], 7),
    ([0.1, 0.9], [2, 9], 50),
]


@pytest.mark.parametrize(("x", "need", "remaining"), CASES)
def test_stopped_counts_have_the_law_of_the_per_round_loop(x, need, remaining):
    law = stopped_law(x, need, remaining)
    assert sum(law.values()) == pytest.approx(1.0)
    keys = sorted(law)
    index = {k: i for i, k in enumerate(keys)}
    rng = np.random.default_rng(2024)
    n = 10_000
    observed = np.zeros(len(keys))
    for _ in range(n):
        c = tuple(int(v) for v in epoch_counts(np.array(x), np.array(need), remaining, rng))
        assert c in index, f"counts {c} impossible for the per-round loop"
        observed[index[c]] += 1
    expected = np.array([law[k] for k in keys]) * n
    # pool the rare outcomes (expected < 5) into one cell, as the chi-square test needs
    rare = expected < 5
    obs = np.r_[observed[~rare], observed[rare].sum()] if rare.any() else observed
    exp = np.r_[expected[~rare], expected[rare].sum()] if rare.any() else expected
    assert stats.chisquare(obs, exp).pvalue > 1e-3


@pytest.mark.parametrize("other_need", [10**16, 3 * 10**12])
def test_huge_epochs_have_the_negative_binomial_law(other_need):
    """Arm 0 (probability 0.3) needs n = 10¹² pulls and arm 1 can never get its need first
    (10¹⁶: beyond the horizon's multinomial; 3·10¹²: reached within it, ~2·10⁵ sd beyond
    where arm 0 stops): arm 1's count at the stop is NegativeBinomial(n, 0.3), mean
    n·0.7/0.3 and variance n·0.7/0.3²; the horizon 10¹⁶ is never reached."""
    n, p = 10**12, 0.3
    rng = np.random.default_rng(7)
    draws = np.array([epoch_counts(np.array([p, 1 - p]), np.array([n, other_need]), 10**16,
                                   rng) for _ in range(4000)])
    assert np.all(draws[:, 0] == n)
    other = draws[:, 1].astype(float)
    mean, var = n * (1 - p) / p, n * (1 - p) / p**2
    z = (other.mean() - mean) / np.sqrt(var / other.size)
    assert abs(z) < 4
    assert other.var(ddof=1) / var == pytest.approx(1.0, abs=0.15)


def test_stopping_rule_support_and_horizon():
    """One arm exactly at its need and every other below it (or the horizon reached), no pull
    of an arm of probability 0 — also when the strategy's sum is not exactly 1 and the
    epoch is long enough for a rounding remainder of the multinomial to matter."""
    rng = np.random.default_rng(3)
    # numpy's multinomial over all 9 arms of the second strategy gives the last (probability
    # 0) arm pulls in ~1 draw of 5 at n = 10¹⁵: its sequential binomials leave a remainder
    for x in (np.array([0.0, 0.1, 0.0, 0.2, 0.3, 1e-17, 0.4, 0.0]) * (1 + 3e-16),
              np.r_[np.full(7, 1 / 7), 0.0, 0.0]):
        zero = x == 0
        for need_scale, remaining in [(1, 10**15), (10**14, 10**15), (10**15, 10**15)]:
            for _ in range(100):
                need = rng.integers(1, 4, size=x.size) * need_scale
                c = epoch_counts(x, need, remaining, rng)
                assert c.dtype == np.int64 and np.all(c[zero] == 0) and np.all(c >= 0)
                at = (c == need) & ~zero
                assert np.all(c[~zero] <= need[~zero]) and c.sum() <= remaining
                assert at.sum() == 1 or (c.sum() == remaining and at.sum() <= 1)


def test_same_stream_same_epoch_and_batch_in_arm_order():
    x, need = np.array([0.2, 0.0, 0.5, 0.3]), np.array([40, 1, 90, 60])
    a = [epoch_counts(x, need, 10**6, np.random.default_rng(11)) for _ in range(2)]
    np.testing.assert_array_equal(a[0], a[1])
    batch = epoch_batch(x, need, 10**6, np.random.default_rng(11))
    np.testing.assert_array_equal(batch.allocation(4), a[0])
    assert np.all(np.diff(batch.arms) > 0) and np.all(batch.counts > 0)
    np.testing.assert_array_equal(batch.strategy, x)


@pytest.mark.parametrize(("x", "need", "remaining"), [
    ([0.5, -0.1, 0.6], [1, 1, 1], 10),
    ([0.0, 0.0], [1, 1], 10),
    ([0.5, 0.5], [1, 1, 1], 10),
    ([0.5, 0.5], [0, 2], 10),
    ([0.5, 0.5], [1, 2], 0),
])
def test_bad_input_refused_before_drawing(x, need, remaining):
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    with pytest.raises(ValueError, match=r"x must be a 1-D strategy|need must be >= 1"):
        epoch_counts(np.array(x), np.array(need), remaining, rng)
    assert rng.bit_generator.state == state
