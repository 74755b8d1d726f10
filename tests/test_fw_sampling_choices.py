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


# --- the matrix game (fw_game) against its definition ------------------------------------

def _brute_force_two(G: np.ndarray, x: np.ndarray) -> float:
    """max_p min(⟨p − x, g_0⟩, ⟨p − x, g_1⟩) by enumeration: with two gradients an optimal p
    is a pure arm or mixes two arms so that both payoffs are equal."""
    A = G - x @ G  # A[a, i] = g_i[a] − ⟨x, g_i⟩
    best = A.min(axis=1).max()
    K = A.shape[0]
    for a in range(K):
        for b in range(a + 1, K):
            # w A[a] + (1 − w) A[b] with equal coordinates: w (Da − Db) = −Db, D = A[:,0] − A[:,1]
            da, db = A[a, 0] - A[a, 1], A[b, 0] - A[b, 1]
            if da != db:
                w = -db / (da - db)
                if 0.0 <= w <= 1.0:
                    best = max(best, (w * A[a] + (1 - w) * A[b]).min())
    return float(best)


def test_game_solver_is_optimal_against_enumeration_and_highs():
    from banditkit.identification.fw_game import solve_fw_game
    from banditkit.identification.fw_sampling import fw_vertex

    rng = np.random.default_rng(11)
    for trial in range(300):
        K = int(rng.integers(2, 40))
        h = 2 if trial < 150 else int(rng.integers(3, 7))
        G = rng.random((K, h)) ** 3 * 10 ** rng.uniform(-6, 3)
        if trial % 4 == 0:
            G[:, -1] = G[:, 0]  # a repeated gradient: a degenerate game
        x = rng.dirichlet(np.ones(K))
        p, value = solve_fw_game(G, x)
        scale = np.abs(G - x @ G).max()
        assert p.min() >= 0.0 and p.sum() == pytest.approx(1.0, abs=1e-12)
        achieved = ((p - x) @ G).min()
        assert value == pytest.approx(achieved, abs=1e-12 * scale)
        if h == 2:
            assert achieved == pytest.approx(_brute_force_two(G, x), abs=1e-11 * scale)
        # never worse than HiGHS (which is optimal only to its own tolerances)
        assert achieved >= ((fw_vertex(G, x) - x) @ G).min() - 1e-12 * scale


def test_game_solver_closed_form_and_engine_bits():
    from banditkit.identification.fw_game import solve_fw_game

    # g_0 = e_0, g_1 = e_1: max min(p_0 − x_0, p_1 − x_1) puts p_0 − x_0 = p_1 − x_1, p_2 = 0
    x = np.array([0.5, 0.2, 0.3])
    G = np.eye(3)[:, :2]
    p, value = solve_fw_game(G, x)
    np.testing.assert_allclose(p, [0.65, 0.35, 0.0], atol=1e-15)
    assert value == pytest.approx(0.15, abs=1e-15)
    # compiled and Python runs: the same bits
    py = getattr(solve_fw_game, "py_func", None)
    if py is not None:
        rng = np.random.default_rng(2)
        for _ in range(20):
            G = rng.random((25, 4))
            x = rng.dirichlet(np.ones(25))
            a, b = solve_fw_game(G, x), py(G, x)
            np.testing.assert_array_equal(a[0], b[0])
            assert a[1] == b[1]


# --- forced exploration when the empirical best item is tied (θ̂ ∉ Λ) ----------------------

def _started(force_tied: bool | None, forced: str = "sqrt"):
    """A run past its spanning pulls and started iterate, at a round off the √(t/K) schedule
    (``force_tied=None``: the default)."""
    kw = {} if force_tied is None else {"force_tied": force_tied}
    alg = FrankWolfeSampling(ENV.X, ENV.Z, 1e-12, threshold="heuristic", forced=forced, **kw)
    rng = as_generator(5)
    while alg._x is None or alg.state.t < 9:  # t = 9: ⌊t/K⌋ = 2, off both schedules
        batch = alg.next_batch()
        alg.observe(batch, ENV.pull(batch, rng).rewards)
    est = alg.state.est
    top = int(est.argmax())
    other = (top + 1) % est.size
    est[other] = est[top]  # θ̂ outside Λ: two best items
    return alg, rng


@pytest.mark.parametrize("forced", ["sqrt", "code"])
def test_a_tied_leader_forces_a_uniform_round(forced):
    K = ENV.n_arms
    alg, _ = _started(None, forced)  # the default: the paper's Λ test is on
    t = alg.state.t
    assert math.isqrt(t // K) ** 2 != t // K  # off either schedule
    before, n_forced = alg._x.copy(), alg.forced
    alg.next_batch()
    assert alg.forced == n_forced + 1
    np.testing.assert_allclose(alg._x, before * (1 - 1 / (t + 1)) + 1 / ((t + 1) * K),
                               rtol=1e-13)
    alg, _ = _started(False, forced)
    n_forced = alg.forced
    alg.next_batch()
    assert alg.forced == n_forced  # without the Λ test, a tie is an ordinary FW step


@pytest.mark.parametrize("force_tied", [True, False])
def test_the_kernel_hands_a_tied_leader_to_the_class(force_tied):
    from banditkit.identification.glr import kernels as kern

    alg, rng = _started(force_tied)
    st = alg.state
    t = st.t
    out = np.empty(8, dtype=np.int64)
    ev, t2, *_rest = kern.fws_steps(
        ENV.X, ENV.Z, st.Ainv, st.theta, st.est, st.q, st.counts, st.sums, alg._x, alg._B,
        alg._sumz, np.ascontiguousarray(ENV.means), ENV.sigma, rng, t, t + 1, st._since,
        st.refresh_every, alg._since, alg.r_scale, alg.r_exponent, force_tied, True,
        alg.delta, alg.sigma, alg._beta_lb, -1, False, out, 0)
    if force_tied:
        assert (ev, t2) == (kern.NEED_CHOOSE, t)  # no pull: the class's forced round
    else:
        assert t2 == t + 1  # the kernel's own FW step and pull


def test_force_tied_is_refused_unless_boolean():
    with pytest.raises(ValueError, match="force_tied must be True or False"):
        FrankWolfeSampling(ENV.X, ENV.Z, 0.1, force_tied="yes")


def test_game_rounds_play_an_optimal_mixed_vertex_of_the_papers_game():
    """Every matrix-game round of a run: z(t) maximises min_{h ∈ H} ⟨p − x(t), h⟩, with H and
    the gradients recomputed here from θ̂ and x(t) (A(x)⁻¹ inverted afresh)."""
    from banditkit.identification.fw_sampling import fw_vertex

    alg = FrankWolfeSampling(ENV.X, ENV.Z, 1e-12, threshold="heuristic")
    played = []
    vertex = alg._vertex

    def spy(t):
        z = vertex(t)
        if not isinstance(z, int):
            played.append((t, alg._x.copy(), alg.state.est.copy(), z))
        return z

    alg._vertex = spy
    rng = as_generator(9)
    for _ in range(3000):
        batch = alg.next_batch()
        alg.observe(batch, ENV.pull(batch, rng).rewards)
    assert len(played) >= 5
    X, Z = ENV.X, ENV.Z
    for t, x, est, p in played:
        Ainv = np.linalg.inv((X.T * x) @ X)
        best = int(est.argmax())
        f, grads = {}, {}
        for j in range(Z.shape[0]):
            if j != best:
                y = Z[best] - Z[j]
                norm = y @ Ainv @ y
                gap = est[best] - est[j]
                f[j] = gap**2 / (2 * norm)
                grads[j] = gap**2 * (X @ Ainv @ y) ** 2 / (2 * norm**2)
        r = alg.r_scale * t ** (-alg.r_exponent)
        H = [j for j in f if f[j] < min(f.values()) + r]
        assert len(H) > 1
        G = np.column_stack([grads[j] for j in H])
        achieved = ((p - x) @ G).min()
        optimum = ((fw_vertex(G, x) - x) @ G).min()
        assert achieved >= optimum - 1e-9 * np.abs(G).max()
