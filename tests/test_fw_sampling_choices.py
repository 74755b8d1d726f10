"""Frank-Wolfe Sampling's four choices where the authors' code differs from the defaults
(tracking, step size, forced exploration, first iterate): each rule checked step by step, the
defaults kept on the compiled kernel, the others on simulate's loop."""

from __future__ import annotations

import math

import numpy as np
import pytest
from banditkit.identification.linear_glr_run import kernel_eligible, simulate_fw_sampling

from banditkit.envs.instances.rage import soare
from banditkit.identification.fw_sampling import FrankWolfeSampling
from banditkit.rng import as_generator

ENV = soare(d=3, omega=0.1)


def _steps(n: int, **choices):
    """Run the class by hand: (t, x before, x after, counts before, arm, forced?) per step."""
    alg = FrankWolfeSampling(ENV.X, ENV.Z, 1e-12, threshold="heuristic", **choices)
    rng = as_generator(4)
    batch = alg.next_batch()
    alg.observe(batch, ENV.pull(batch, rng).rewards)
    rows = []
    for _ in range(n):
        t = alg.state.t
        before = None if alg._x is None else alg._x.copy()
        counts = alg.state.counts.copy()
        forced = alg.forced
        batch = alg.next_batch()
        rows.append((t, before, alg._x.copy(), counts, int(batch.arms[0]),
                     alg.forced > forced, alg._sumz.copy()))
        alg.observe(batch, ENV.pull(batch, rng).rewards)
    return alg, rows


def test_choices_are_refused_by_name():
    for name in ("tracking", "step", "forced", "start"):
        with pytest.raises(ValueError, match=f"{name} must be one of"):
            FrankWolfeSampling(ENV.X, ENV.Z, 0.1, **{name: "other"})


def test_default_tracking_follows_the_vertices_and_the_step_is_one_over_t_plus_1():
    _, rows = _steps(60)
    vertex_steps = 0
    for t, before, after, counts, arm, _, sumz in rows[1:]:
        np.testing.assert_allclose(after.sum(), 1.0)
        step = after - before * (1 - 1 / (t + 1))  # γ z(t), γ = 1/(t + 1)
        assert step.min() > -1e-12 and step.sum() == pytest.approx(1 / (t + 1))
        vertex_steps += int(np.count_nonzero(step > 1e-12) == 1)
        assert arm == int((counts - sumz).argmin())
    assert vertex_steps > 0.8 * len(rows)  # a vertex: x moves towards one arm only


def test_iterates_tracking_follows_the_sum_of_the_iterates():
    _, rows = _steps(60, tracking="iterates")
    total = np.zeros(ENV.n_arms)
    for _, _, after, counts, arm, _, _ in rows:
        total += after
        assert arm == int((counts - total).argmin())


def test_the_codes_choices_step_one_over_t_ratio_tracking_uniform_start():
    alg, rows = _steps(60, tracking="ratio", step="t", start="uniform")
    K = ENV.n_arms
    # the first iterate starts uniform, then takes the step 1/t
    vertex_steps = 0
    for t, before, after, counts, arm, _, _ in rows:
        if before is None:
            before = np.full(K, 1.0 / K)
        step = after - before * (1 - 1 / t)  # γ z(t), γ = 1/t
        assert step.min() > -1e-12 and step.sum() == pytest.approx(1 / t)
        vertex_steps += int(np.count_nonzero(step > 1e-12) == 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(counts > 0, after / (counts / t), np.where(after > 0, np.inf, 0))
        assert arm == int(ratio.argmax())
    assert vertex_steps > 0.8 * len(rows)
    assert not kernel_eligible(alg, ENV, None)


def test_forced_rounds_follow_the_rule():
    K = ENV.n_arms
    for rule, expected in (("sqrt", lambda t: t % K == 0 and math.isqrt(t // K) ** 2 == t // K),
                           ("code", lambda t: math.isqrt(t // K) ** 2 == t // K)):
        _, rows = _steps(150, forced=rule)
        for t, *_, forced, _ in rows:
            if expected(t):
                assert forced, (rule, t)
            elif rule == "sqrt":
                assert not forced, (rule, t)
    # the code's rule forces K rounds in a row: t = 25K ... 25K + K − 1
    _, rows = _steps(200, forced="code")
    hits = [t for t, *_, forced, _ in rows if forced]
    assert {t for t in hits if 25 * K <= t < 26 * K} == set(range(25 * K, 26 * K))


def test_non_default_choices_run_through_simulates_loop_with_the_same_numbers():
    from banditkit import simulate

    def build(**choices):
        return FrankWolfeSampling(ENV.X, ENV.Z, 1e-9, threshold="heuristic", **choices)

    t1 = simulate_fw_sampling(build(tracking="iterates"), ENV, seed=3, horizon=400)
    t2 = simulate(build(tracking="iterates"), ENV, seed=3, horizon=400)
    assert t1.decisions.same_as(t2.decisions)
    default = simulate(build(), ENV, seed=3, horizon=400)
    assert not default.decisions.same_as(t1.decisions)
    assert kernel_eligible(FrankWolfeSampling(ENV.X, ENV.Z, 0.1), ENV, None)
