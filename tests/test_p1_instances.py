"""The instances of Xiong et al. (P1-RAGE), Section 6 and Appendix D, and the periodic schedules
of NonStationaryLinearBandit: closed forms, exact equivalences and refusals."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest

from banditkit.envs import LinearBandit, NonStationaryLinearBandit, datasets
from banditkit.envs.instances import make_instance
from banditkit.envs.instances.p1_rage import click_through_periods
from banditkit.envs.instances.rage import layout_features
from banditkit.protocol import Batch

# --- NonStationaryLinearBandit: periodic tables, arm means, Δ(1) -----------------------------


def _periodic_pair(rows=3, repeat=4, d=2, T=50, seed=0):
    """A periodic environment and the same schedule written out as an explicit table."""
    rng = np.random.default_rng(seed)
    table = rng.standard_normal((rows, d))
    X = rng.standard_normal((5, d))
    per = NonStationaryLinearBandit(X, table, horizon=T, periodic=True, repeat=repeat)
    explicit = np.tile(np.repeat(table, repeat, axis=0), (T // (rows * repeat) + 1, 1))[:T]
    return per, NonStationaryLinearBandit(X, explicit), table, X


def test_periodic_table_is_the_explicit_schedule():
    per, exp, table, _ = _periodic_pair()
    assert per.period == 12 and exp.period is None
    t = np.arange(50)
    np.testing.assert_array_equal(per.theta_at(t), table[(t // 4) % 3])
    np.testing.assert_array_equal(per.theta_at(t), exp.theta_at(t))
    np.testing.assert_array_equal(per.arm_means_table(), exp.arm_means_table())
    # θ̄_T over T = 50 (not a multiple of the period 12): 12 blocks of 4 pulls, then 2 pulls
    # of row 0, so the rows are used 18, 16, 16 times.
    np.testing.assert_allclose(per.mean_theta(), (np.array([18, 16, 16]) @ table) / 50,
                               rtol=1e-13)
    np.testing.assert_allclose(per.mean_theta(), exp.mean_theta(), rtol=1e-13)
    for T in (1, 5, 12, 13, 37):
        np.testing.assert_allclose(per.mean_theta(T), exp.mean_theta(T), rtol=1e-13)
    # The same batch and noise stream give exactly the same rewards and regret.
    batch = Batch(np.array([0, 3, 1, 4, 2]), np.array([7, 1, 11, 5, 6]))
    a = per.pull(batch, np.random.default_rng(9), t0=3).rewards
    b = exp.pull(batch, np.random.default_rng(9), t0=3).rewards
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(per.regret(batch, t0=3), exp.regret(batch, t0=3))
    # Beyond any horizon the periodic schedule keeps cycling.
    np.testing.assert_array_equal(per.theta_at(np.array([1000, 1012])), table[[250 % 3] * 2])


def test_batch_rewards_follow_the_per_pull_definition():
    _, _, table, X = _periodic_pair(rows=5, repeat=3, d=3, T=200, seed=1)
    batch = Batch(np.array([2, 0, 2, 4]), np.array([4, 9, 1, 6]))
    t0, sigma = 17, 0.5
    env = NonStationaryLinearBandit(X, table, horizon=200, periodic=True, repeat=3, sigma=sigma)
    out = env.pull(batch, np.random.default_rng(4), t0=t0).rewards
    arms = np.repeat(batch.arms, batch.counts)
    times = t0 + np.arange(arms.size)
    # r_t = x_tᵀθ_t + σ ε_t, pull by pull, with the pulls' noise drawn in order.
    eps = np.random.default_rng(4).standard_normal(arms.size)
    per_pull = np.array([X[a] @ table[(t // 3) % 5] for a, t in zip(arms, times, strict=True)])
    expected = np.add.reduceat(per_pull + sigma * eps, np.r_[0, np.cumsum(batch.counts)[:-1]])
    np.testing.assert_allclose(out, expected, rtol=0, atol=1e-12)


def test_arm_means_table_and_means_at():
    per, exp, table, X = _periodic_pair(rows=4, repeat=2, d=3, T=30, seed=2)
    full = per.arm_means_table()
    assert full.shape == (30, 5)
    np.testing.assert_allclose(full, per.theta_at(np.arange(30)) @ X.T, rtol=1e-13, atol=1e-14)
    one = per.arm_means_table(one_period=True)
    assert one.shape == (8, 5)
    t = np.arange(100)
    np.testing.assert_array_equal(one[t % 8], per.arm_means_table(100))
    arms = np.arange(30) % 5
    np.testing.assert_array_equal(per.arm_means_at(arms, np.arange(30)), full[np.arange(30), arms])
    # A function schedule (no cached table) computes the same floats as the table path.
    fn = NonStationaryLinearBandit(X, lambda s: table[(s // 2) % 4], horizon=30)
    np.testing.assert_array_equal(fn.arm_means_table(), full)
    np.testing.assert_array_equal(exp.arm_means_table(), full)
    with pytest.raises(ValueError, match="one_period needs a periodic schedule"):
        exp.arm_means_table(one_period=True)
    with pytest.raises(ValueError, match="arms must lie"):
        per.arm_means_at(np.array([5]), np.array([0]))


def test_min_gap_is_the_top_two_difference_under_the_average():
    # θ_t = e_1 for t < 6, 3 e_2 after; T = 10: θ̄ = (0.6, 1.2); X = e_1, e_2, (e_1 + e_2)/2.
    schedule = np.zeros((10, 2))
    schedule[:6, 0], schedule[6:, 1] = 1.0, 3.0
    env = NonStationaryLinearBandit(np.array([[1.0, 0], [0, 1.0], [0.5, 0.5]]), schedule)
    assert env.best_item() == 1
    assert env.min_gap() == pytest.approx(1.2 - 0.9)
    np.testing.assert_allclose(env.gaps(), [0.6, 0.0, 0.3])
    assert env.min_gap(horizon=6) == pytest.approx(0.5)  # θ̄_6 = e_1: e_1 vs the middle arm
    lin = make_instance("soare", d=10, omega=0.1)  # the stationary figure's instance
    assert isinstance(lin, LinearBandit)
    assert lin.min_gap() == pytest.approx(2 * (1 - np.cos(0.1)))
    np.testing.assert_array_equal(lin.mean_theta(), lin.theta)


def test_nonstationary_bad_inputs():
    X = np.eye(2)
    with pytest.raises(ValueError, match=r"schedule must be an array of shape \(T, 2\)"):
        NonStationaryLinearBandit(X, np.ones((5, 3)))
    with pytest.raises(ValueError, match="schedule must be finite"):
        NonStationaryLinearBandit(X, np.array([[1.0, np.nan], [0, 1]]))
    with pytest.raises(ValueError, match="schedule must be finite"):
        NonStationaryLinearBandit(X, np.array([[1.0, np.inf]]), periodic=True, horizon=3)
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="horizon must be an integer >= 1"):
            NonStationaryLinearBandit(X, np.ones((5, 2)), horizon=bad)
    with pytest.raises(ValueError, match="horizon is required"):
        NonStationaryLinearBandit(X, np.ones((5, 2)), periodic=True)
    with pytest.raises(ValueError, match="repeat applies to a periodic schedule"):
        NonStationaryLinearBandit(X, np.ones((5, 2)), repeat=2)
    with pytest.raises(ValueError, match="repeat must be an integer >= 1"):
        NonStationaryLinearBandit(X, np.ones((5, 2)), periodic=True, horizon=9, repeat=0)
    with pytest.raises(ValueError, match="schedule function returned NaN"):
        NonStationaryLinearBandit(X, lambda t: np.full((t.size, 2), np.nan),
                                  horizon=4).theta_at(np.arange(2))
    # An integral float horizon is an integer.
    assert NonStationaryLinearBandit(X, np.ones((5, 2)), horizon=4.0).horizon == 4


# --- Soare-based instances -------------------------------------------------------------------


def test_oscillating_soare_closed_form():
    s, L, T, d, omega = 1.5, 200, 10_000, 10, 0.5
    env = make_instance("oscillating-soare", s=s, L=L, T=T)
    assert (env.n_arms, env.d, env.horizon, env.period) == (11, 10, T, L)
    np.testing.assert_allclose(env.X[:d], np.eye(d))
    np.testing.assert_allclose(env.X[d], [np.cos(omega), np.sin(omega)] + [0] * (d - 2))
    assert env.sigma == 1.0 and env.noise == "gaussian"
    t = np.array([0, 1, 50, 57, 199, 200, 4321, 9999])
    expected = np.zeros((t.size, d))
    expected[:, 0] = 0.3
    expected[:, -1] = -s * np.sin(2 * np.pi * t / L) + 0.5
    np.testing.assert_allclose(env.theta_at(t), expected, rtol=0, atol=1e-12)
    # L divides T: the sine averages out, θ̄ = (0.3, 0, ..., 0.5); best e_d, Δ(1) = 0.2.
    np.testing.assert_allclose(env.mean_theta(), [0.3] + [0] * (d - 2) + [0.5], atol=1e-12)
    assert env.best_item() == d - 1
    assert env.min_gap() == pytest.approx(0.2, abs=1e-12)
    # L = 3000 does not divide T = 10⁴: the left-over third of a period shifts θ̄.
    env = make_instance("oscillating-soare", s=2.5, L=3000, T=T)
    tt = np.arange(T)
    last = np.mean(-2.5 * np.sin(2 * np.pi * tt / 3000) + 0.5)
    assert env.min_gap() == pytest.approx(last - 0.3, rel=1e-9)
    # Instances whose θ̄_T changes the best arm are refused (the paper's all keep e_d).
    with pytest.raises(ValueError, match="best arm under theta_bar_T"):
        make_instance("oscillating-soare", s=9, L=3000, T=T)


def test_malicious():
    T, d, omega = 10_000, 10, 0.5
    env = make_instance("malicious", T=T)
    first = T // 3
    theta1 = np.r_[0.0, np.ones(d - 1)]
    theta2 = np.r_[2.0, np.zeros(d - 1)]
    thetas = env.theta_at(np.arange(T))
    np.testing.assert_array_equal(thetas[:first], np.tile(theta1, (first, 1)))
    np.testing.assert_array_equal(thetas[first:], np.tile(theta2, (T - first, 1)))
    assert env.best_item() == 0  # e_1
    bar = (first * theta1 + (T - first) * theta2) / T
    np.testing.assert_allclose(env.mean_theta(), bar, rtol=1e-12)
    competitor = np.cos(omega) * bar[0] + np.sin(omega) * bar[1]
    assert env.min_gap() == pytest.approx(bar[0] - competitor, rel=1e-9)
    assert 0.003 < env.min_gap() < 0.004
    # The first third alone prefers every e_j, j ≥ 2, over e_1.
    assert env.best_item(horizon=first) != 0
    with pytest.raises(ValueError, match="omega"):
        make_instance("malicious", T=T, omega=0.1)


# --- multivariate testing --------------------------------------------------------------------


def test_p1_multivariate_testing_parameters():
    env = make_instance("p1-multivariate-testing", D=4, rng=np.random.default_rng(0))
    assert isinstance(env, LinearBandit) and env.sigma == 0.3
    np.testing.assert_array_equal(env.X, layout_features(4))
    # α1 = 1 on the 4 slot weights, α2 = 0.5 on all 6 interactions; raw weights on the 0.01
    # grid of [−0.1, 0.1].
    raw = env.theta / np.r_[1.0, np.ones(4), np.full(6, 0.5)]
    assert np.all(np.abs(raw) <= 0.1 + 1e-12)
    np.testing.assert_allclose(raw * 100, np.round(raw * 100), atol=1e-9)
    assert env.min_gap() >= 1e-5


def test_oscillating_multivariate_structure():
    s, L, T, D = 3.0, 900, 10_000, 4
    n_on = 0
    for seed in range(12):
        theta = make_instance("p1-multivariate-testing", D=D,
                              rng=np.random.default_rng(seed)).theta
        env = make_instance("oscillating-multivariate", D=D, s=s, L=L, T=T,
                            rng=np.random.default_rng(seed))
        assert env.period == L and env.sigma == 0.3
        # θ_t − θ* = s·I_i·‖θ*‖_∞·sin(2πt/L + φ_i): zero, or a unit sinusoid once scaled,
        # so c_t² + c_{t+L/4}² = 1 (L = 900 is a multiple of 4).
        c = (env.theta_at(np.arange(L + L // 4)) - theta) / (s * np.abs(theta).max())
        on = np.abs(c).max(axis=0) > 1e-12
        np.testing.assert_allclose(c[:L, on] ** 2 + c[L // 4:, on] ** 2, 1.0, atol=1e-9)
        np.testing.assert_array_equal(c[:, ~on], 0.0)
        n_on += on.sum()
    assert 0.3 < n_on / (12 * 11) < 0.7  # I_i ~ U{0, 1}
    env = make_instance("oscillating-multivariate", D=D, s=s, L=L, T=T, oscillate_prob=1.0,
                        rng=np.random.default_rng(0))
    theta = make_instance("p1-multivariate-testing", D=D, rng=np.random.default_rng(0)).theta
    assert np.all(np.ptp(env.theta_at(np.arange(L)) - theta, axis=0) > 0)


def test_oscillating_multivariate_keeps_the_best_layout():
    s, L, T, D = 9.0, 3000, 10_000, 4
    redrawn = 0
    for seed in range(30):
        theta = make_instance("p1-multivariate-testing", D=D,
                              rng=np.random.default_rng(seed)).theta
        env = make_instance("oscillating-multivariate", D=D, s=s, L=L, T=T,
                            rng=np.random.default_rng(seed))
        assert env.best_item() == int(np.argmax(env.X @ theta))
        # Recompute θ̄_T by brute force over the explicit times.
        bar = env.theta_at(np.arange(T)).mean(axis=0)
        assert int(np.argmax(env.X @ bar)) == int(np.argmax(env.X @ theta))
        try:
            make_instance("oscillating-multivariate", D=D, s=s, L=L, T=T, max_tries=1,
                          rng=np.random.default_rng(seed))
        except RuntimeError:
            redrawn += 1
    assert redrawn > 0  # the redraw was exercised: a first draw did move the best layout


def test_oscillating_multivariate_stationary_when_s_is_zero():
    env = make_instance("oscillating-multivariate", D=3, s=0.0, L=1, T=500,
                        rng=np.random.default_rng(5))
    theta = make_instance("p1-multivariate-testing", D=3, rng=np.random.default_rng(5)).theta
    np.testing.assert_array_equal(env.theta_at(np.arange(7)), np.tile(theta, (7, 1)))


def test_instance_parameters_refused():
    rng = np.random.default_rng(0)
    cases = [
        ("oscillating-soare", {"L": 0}, "L must be"),
        ("oscillating-soare", {"L": 2.5}, "L must be"),
        ("oscillating-soare", {"s": -1.0}, "s .oscillation scale. must be"),
        ("oscillating-soare", {"s": float("nan")}, "s .oscillation scale. must be"),
        ("oscillating-soare", {"s": float("inf")}, "s .oscillation scale. must be"),
        ("oscillating-soare", {"T": 0}, "T must be"),
        ("oscillating-soare", {"T": 100.5}, "T must be"),
        ("oscillating-soare", {"sigma": 0.0}, "sigma must be"),
        ("malicious", {"T": 0}, "T must be"),
        ("malicious", {"T": 1.5}, "T must be"),
        ("oscillating-multivariate", {"D": 1}, "D must be an integer >= 2"),
        ("oscillating-multivariate", {"L": -5}, "L must be"),
        ("oscillating-multivariate", {"s": -0.5}, "s .oscillation scale. must be"),
        ("oscillating-multivariate", {"T": 0}, "T must be"),
        ("oscillating-multivariate", {"oscillate_prob": 1.5}, "oscillate_prob"),
        ("p1-multivariate-testing", {"D": 1}, "D must be an integer >= 2"),
    ]
    for name, params, message in cases:
        kwargs = {"rng": rng} if "multivariate" in name else {}
        with pytest.raises(ValueError, match=message):
            make_instance(name, **kwargs, **params)


# --- click-through: a synthetic MovieLens-like week ------------------------------------------

_OCCUPATIONS = ["student", "engineer", "programmer", "artist", "writer", "lawyer", "doctor",
                "retired"]
_MONDAY = int(datetime(1997, 9, 22, tzinfo=UTC).timestamp())


def _write_week(folder, rng, n=12_000):
    """40 users, 60 movies of 1–3 genres (one "unknown"), ratings over ten weeks; the
    preferences depend on the weekday."""
    ages = rng.choice([16, 22, 28, 33, 41, 47, 55, 63], 40)
    female = rng.random(40) < 0.5
    jobs = rng.choice(_OCCUPATIONS, 40)
    with open(folder / "ml-100k.user", "w") as f:
        f.write("user_id:token\tage:token\tgender:token\toccupation:token\tzip_code:token\n")
        for u in range(40):
            f.write(f"{u + 1}\t{ages[u]}\t{'MF'[int(female[u])]}\t{jobs[u]}\t00000\n")
    genres = [" ".join(rng.choice(datasets.GENRES, rng.integers(1, 4), replace=False))
              for _ in range(59)] + ["unknown"]
    with open(folder / "ml-100k.item", "w") as f:
        f.write("item_id:token\tmovie_title:token_seq\trelease_year:token\tclass:token_seq\n")
        for m, g in enumerate(genres):
            f.write(f"{m + 1}\tMovie {m}\t1995\t{g}\n")
    users = rng.integers(1, 41, n)
    movies = rng.integers(1, 61, n)
    stamps = _MONDAY + rng.integers(0, 70, n) * 86_400 + rng.integers(0, 86_400, n)
    weekday = (stamps - _MONDAY) // 86_400 % 7
    g = np.array(genres)[movies - 1]
    p = (0.3 + 0.4 * (female[users - 1] & (np.char.find(g, "Drama") >= 0))
         + 0.3 * ((weekday >= 5) & (np.char.find(g, "Comedy") >= 0)))
    ratings = np.where(rng.random(n) < p, 5, 2)
    with open(folder / "ml-100k.inter", "w") as f:
        f.write("user_id:token\titem_id:token\trating:float\ttimestamp:float\n")
        for row in zip(users, movies, ratings, stamps, strict=True):
            f.write("{}\t{}\t{}\t{}\n".format(*row))
    return (ages, female, jobs, genres), (users, movies, ratings, stamps)


def _record_vectors(people, users, movies):
    """vec(u gᵀ) of each record, encoded here independently of the library's reader."""
    ages, female, jobs, genres = people
    u = np.zeros((users.size, 10))
    rows = np.arange(users.size)
    u[rows, np.searchsorted(datasets.AGE_BUCKETS, ages[users - 1], side="right")] = 1
    u[rows, 4 + female[users - 1]] = 1
    u[rows, 6 + np.array([datasets.OCCUPATION_GROUPS.get(j, 3) for j in jobs[users - 1]])] = 1
    g = np.zeros((movies.size, len(datasets.GENRES)))
    for i, m in enumerate(movies):
        listed = [datasets.GENRES.index(x) for x in genres[m - 1].split()]
        g[i, listed] = 1 / len(listed)
    return np.einsum("ni,nj->nij", u, g).reshape(users.size, -1)


def test_click_through_periodic_from_synthetic_files(tmp_path, monkeypatch):
    monkeypatch.delenv(datasets.DATA_ENV, raising=False)
    people, (users, movies, ratings, stamps) = _write_week(tmp_path, np.random.default_rng(0))
    data = click_through_periods(tmp_path, min_records=5)
    # The seven fits are ridge regressions (λ = 0.01) of rating ≥ 4 on each UTC weekday's
    # records, in the top-24 uncentred principal directions of all records.
    known = movies != 60  # the "unknown" movie is dropped
    raw = _record_vectors(people, users[known], movies[known])
    second = raw.T @ raw
    np.testing.assert_allclose(data.basis.T @ data.basis, np.eye(24), atol=1e-10)
    np.testing.assert_allclose(np.diag(data.basis.T @ second @ data.basis),
                               np.sort(np.linalg.eigvalsh(second))[::-1][:24], rtol=1e-8)
    weekday = np.array([datetime.fromtimestamp(int(s), UTC).weekday()
                        for s in stamps[known]])
    y = (ratings[known] >= 4).astype(float)
    for p in range(7):
        R = raw[weekday == p] @ data.basis
        theta = np.linalg.solve(R.T @ R + 0.01 * np.eye(24), R.T @ y[weekday == p])
        np.testing.assert_allclose(data.thetas[p], theta, rtol=1e-7, atol=1e-9)
    np.testing.assert_array_equal(data.records, np.bincount(weekday, minlength=7))

    L, T = 30, 2100
    env = make_instance("click-through-periodic", L=L, T=T, rng=np.random.default_rng(1),
                        data_dir=tmp_path, min_records=5)
    assert (env.n_arms, env.d, env.period, env.horizon) == (24, 24, 7 * L, T)
    assert np.linalg.matrix_rank(env.X) == 24  # spans R^24
    assert env.noise == "gaussian" and env.sigma == 1.0
    t = np.arange(0, 3 * 7 * L, 7)
    np.testing.assert_array_equal(env.theta_at(t), data.thetas[(t // L) % 7])
    # Arm 0 is the best candidate under θ̄_T; the others have gaps in [0.05, 1): unique best.
    bar = env.mean_theta()
    np.testing.assert_allclose(bar, data.thetas.mean(axis=0), rtol=1e-12)  # 7L divides T
    assert env.best_item() == 0
    assert np.max(data.candidates @ bar) == pytest.approx(env.X[0] @ bar)
    gaps = env.gaps()
    assert np.all((gaps[1:] >= 0.05) & (gaps[1:] < 1.0)) and env.min_gap() >= 0.05
    assert all(any(np.allclose(x, c) for c in data.candidates) for x in env.X)
    # Same generator, same instance; another generator, another arm set.
    again = make_instance("click-through-periodic", L=L, T=T, rng=np.random.default_rng(1),
                          data_dir=tmp_path, min_records=5)
    np.testing.assert_array_equal(again.X, env.X)
    other = make_instance("click-through-periodic", L=L, T=T, rng=np.random.default_rng(2),
                          data_dir=tmp_path, min_records=5)
    assert not np.array_equal(other.X, env.X)
    # The time split cuts the records into 7 equal-count chunks.
    chunks = click_through_periods(tmp_path, min_records=5, split="time")
    assert chunks.records.max() - chunks.records.min() <= 1


def test_click_through_periodic_refusals(tmp_path, monkeypatch):
    monkeypatch.delenv(datasets.DATA_ENV, raising=False)
    rng = np.random.default_rng(0)
    missing = tmp_path / "nowhere"
    # Parameters are refused before the data are looked for.
    for params, message in (({"L": 0}, "L must be"), ({"L": 1.5}, "L must be"),
                            ({"T": 0}, "T must be"), ({"n_arms": 10}, "n_arms must be"),
                            ({"min_gap": 0.0}, "min_gap"), ({"sigma": -1.0}, "sigma must be")):
        with pytest.raises(ValueError, match=message):
            make_instance("click-through-periodic", rng=rng, data_dir=missing, **params)
    with pytest.raises(ValueError, match="split must be one of"):
        click_through_periods(missing, split="month")
    # Without the data the error names the command that installs them.
    monkeypatch.setattr(datasets.importlib.metadata, "distribution",
                        lambda name: (_ for _ in ()).throw(
                            datasets.importlib.metadata.PackageNotFoundError(name)))
    with pytest.raises(FileNotFoundError, match="make data"):
        make_instance("click-through-periodic", rng=rng, data_dir=missing)
    # Every period needs records: all ratings on one day leave six periods empty.
    _write_week(tmp_path, np.random.default_rng(0), n=300)
    text = (tmp_path / "ml-100k.inter").read_text().splitlines()
    rows = [r.split("\t") for r in text[1:]]
    (tmp_path / "ml-100k.inter").write_text(
        text[0] + "\n" + "".join(f"{u}\t{m}\t{r}\t{_MONDAY}\n" for u, m, r, _ in rows))
    with pytest.raises(ValueError, match="without rating records"):
        click_through_periods(tmp_path, min_records=1)
