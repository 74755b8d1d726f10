"""The readout practitioners compare us with (issue 37): widths across base rates, the planner's
bias, and side-by-side numbers with statsmodels / gbstats on identical data.

    .venv/bin/python benchmarks/bench_readout.py widths [--runs 40] [--seed 0]
    .venv/bin/python benchmarks/bench_readout.py plan [--runs 300] [--seed 0]
    /tmp/venv/bin/python benchmarks/bench_readout.py compare [--seed 0]
    .venv/bin/python benchmarks/bench_readout.py attribution [--runs 40] [--seed 0]
    .venv/bin/python benchmarks/bench_readout.py plan-live [--runs 200] [--seed 0]
    .venv/bin/python benchmarks/bench_readout.py looks [--runs 200] [--seed 0] [--look-every 200]
    .venv/bin/python benchmarks/bench_readout.py segments [--runs 200] [--seed 0]

**widths**: the exact default's difference width ÷ the fixed-n (Newcombe) width at 20,000 units
per arm, through :func:`banditkit.live.readout.statistics.compare` with the plug-in's sums from each
arm's 0/1 rewards in order (what status computes), ``tune_n`` 10,000, for base rates 0.01,
0.02, 0.05, 0.10, 0.20, 0.30, 0.50 with a 15% relative lift on the treatment; median over runs.

**attribution**: where the widths' excess over 1.6 goes, on the same data as ``widths``: the
difference's width with the control's mean known (the nuisance term gone: an attribution, not a
valid interval), and with each arm's λ tuned on both arms' variances (``k = 1 + σ_c²/σ_a²``
from the *true* variances: what a λ common to the pair would reach, not a predictable one).

**plan**: :func:`banditkit.live.readout.plan.plan` on 0.05 vs 0.0575 (a look every 1,000
units per arm)
against an independent simulation of the same scenario written run by run (its own reward
stream per run, each arm's plug-in sums from its rewards, ``compare`` at each look).

**plan-live**: the same scenario through :class:`banditkit.Experiment` (``FixedAllocation``,
batches of 2,000 split exactly, 0/1 rewards drawn per unit, ``status()`` after each batch,
stopping at the first ``better``): what a user running the experiment would see, against
``plan()``.

**compare** (needs statsmodels and gbstats, which are not dependencies of banditkit: install
them into a throwaway venv, e.g. ``python -m venv /tmp/venv && /tmp/venv/bin/pip install -e .
statsmodels gbstats``): on one seeded data set, banditkit's fixed-n difference interval against
statsmodels' ``confint_proportions_2indep`` (Newcombe) and ``ttest_ind`` (Welch), its relative
lift against gbstats' delta-method relative interval (frequentist, fixed-n) — ours is
anytime-valid, so it should be wider, by the factor reported —, its Bayesian summaries against
gbstats' chance to win and risk, and its group-sequential bounds against the published
Lan-DeMets Pocock values. Only what computes the same thing is compared for equality.

**looks** and **segments**: null experiments through :class:`banditkit.Experiment` under adaptive
allocation (BatchedThompson, control floor 0.2, three arms), the longer runs of the fast tests
in ``tests/test_planned_looks.py`` and ``tests/test_segments.py``: the share of runs with a
verdict anywhere at any look — for ``looks`` the planned looks' verdicts (five looks of 200
units, status read every 100) beside the fixed-n 1.96 at each look on the same data; for
``segments`` the family's Holm verdicts (overall and three segments at base rates 0.05, 0.2,
0.5; four looks of 400 units, sequences tuned at 150) beside the raw anytime p-values ≤ α.

Numbers on a shared, loaded machine; seeded (numpy ``default_rng``); timings not reported.
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from banditkit.live.outcomes.resolved_prefix import PluginTuning
from banditkit.live.readout.plugin import plugin_terms
from banditkit.live.readout.statistics import ArmSums, compare
from banditkit.live.readout.verdict_spec import check_verdicts

BASE_RATES = (0.01, 0.02, 0.05, 0.10, 0.20, 0.30, 0.50)


def _plugin_sums(x: np.ndarray, tuning: PluginTuning, chunk: int = 5000) -> np.ndarray:
    """Plug-in sums of rewards x (runs, arms, n) in order, in chunks (bounded memory)."""
    runs, arms, n = x.shape
    out = np.zeros((runs, arms, 4))
    N, S, Q = np.zeros((runs, arms)), np.zeros((runs, arms)), np.zeros((runs, arms))
    for start in range(0, n, chunk):
        part = x[..., start: start + chunk]
        out += np.stack([t.sum(-1) for t in plugin_terms(
            part, n_tune=tuning.n_tune, level=tuning.level, prior=(N, S, Q))], axis=-1)
        N, S, Q = N + part.shape[-1], S + part.sum(-1), Q + (part * part).sum(-1)
    return out


def widths(runs: int, seed: int, n: int = 20_000, lift: float = 0.15) -> dict:
    spec = check_verdicts("binary", None, {"tune_n": 10_000}, None)
    tuning = PluginTuning.of(spec, 2)
    out = {}
    for p in BASE_RATES:
        rng = np.random.default_rng([seed, int(p * 1000)])
        means = np.array([p, min(p * (1 + lift), 0.99)])
        x = (rng.random((runs, 2, n)) < means[None, :, None]).astype(float)
        N = np.full((runs, 2), float(n))
        S = x.sum(-1)
        sums = ArmSums(N, N, S, S, np.ones((runs, 2), bool), plugin=_plugin_sums(x, tuning))
        exact = compare(sums, (0.0, 1.0), intervals="anytime", alpha=0.05, control=0,
                        spec=spec)
        fixed = compare(sums, (0.0, 1.0), intervals="fixed", alpha=0.05, control=0,
                        spec=spec)
        ratio = (exact.diff_high - exact.diff_low)[:, 1] / (fixed.diff_high
                                                           - fixed.diff_low)[:, 1]
        out[str(p)] = {"median_ratio": round(float(np.median(ratio)), 4),
                       "p10": round(float(np.percentile(ratio, 10)), 4),
                       "p90": round(float(np.percentile(ratio, 90)), 4)}
    return {"runs": runs, "seed": seed, "units_per_arm": n, "relative_lift": lift,
            "width_over_fixed_n": out}


def attribution(runs: int, seed: int, n: int = 20_000, lift: float = 0.15) -> dict:
    """The widths' excess split (module docstring): current, nuisance known, shared λ."""
    from banditkit.live.readout.plugin import (
        PluginSums,
        plugin_difference,
        plugin_level,
        plugin_sequence,
    )

    spec = check_verdicts("binary", None, {"tune_n": 10_000}, None)
    tuning = PluginTuning.of(spec, 2)
    level, a_diff = plugin_level(2), 0.05 * (1 - spec.control_share)
    out = {}
    for p in BASE_RATES:
        rng = np.random.default_rng([seed, int(p * 1000)])
        means = np.array([p, min(p * (1 + lift), 0.99)])
        x = (rng.random((runs, 2, n)) < means[None, :, None]).astype(float)
        N, S = np.full((runs, 2), float(n)), x.sum(-1)
        sums = ArmSums(N, N, S, S, np.ones((runs, 2), bool), plugin=_plugin_sums(x, tuning))
        fixed = compare(sums, (0.0, 1.0), intervals="fixed", alpha=0.05, control=0, spec=spec)
        exact = compare(sums, (0.0, 1.0), intervals="anytime", alpha=0.05, control=0,
                        spec=spec)
        fw = (fixed.diff_high - fixed.diff_low)[:, 1]
        known = np.full(runs, means[0])
        low, high = plugin_difference(N, PluginSums.from_array(sums.plugin), 0, known, known,
                                      a_diff)
        v = means * (1 - means)
        terms = [[t.sum(-1) for t in plugin_terms(x[:, a], n_tune=10_000, level=level,
                                                  k=1 + v[1 - a] / v[a])] for a in range(2)]
        shared = PluginSums(*(np.stack([terms[0][j], terms[1][j]], -1) for j in range(4)))
        c_low, c_high = plugin_sequence(N[:, 0], PluginSums(*(t[:, 0] for t in (
            shared.lam, shared.lam_x, shared.pen_low, shared.pen_high))),
            0.05 * spec.control_share)
        s_low, s_high = plugin_difference(N, shared, 0, c_low, c_high, a_diff)
        out[str(p)] = {name: round(float(np.median(w / fw)), 4) for name, w in (
            ("current", (exact.diff_high - exact.diff_low)[:, 1]),
            ("control_mean_known", (high - low)[:, 1]),
            ("shared_lambda_true_variances", (s_high - s_low)[:, 1]))}
    return {"runs": runs, "seed": seed, "units_per_arm": n, "relative_lift": lift,
            "width_over_fixed_n": out}


def plan_check(runs: int, seed: int, p: float = 0.05, mde: float = 0.0075,
               step: int = 1000) -> dict:
    """The planner against an independent run-by-run simulation of its scenario."""
    from banditkit.live.readout.plan import plan

    predicted = plan(base_rate=p, mde=mde, daily_units=2 * step, runs=max(runs, 1000),
                     seed=seed)
    spec = check_verdicts("binary", None, {"tune_n": 10_000}, None)
    tuning = PluginTuning.of(spec, 2)
    cap = int(20 * predicted.fixed_n_units) + step
    units = []
    for r in range(runs):
        rng = np.random.default_rng([seed, 7, r])
        n, S, P = np.zeros(2), np.zeros(2), np.zeros((2, 4))
        while n[0] < cap:
            for a, m in enumerate((p, p + mde)):
                x = (rng.random(step) < m) * 1.0
                P[a] += tuning.terms(x, n[a], S[a], S[a])
                n[a] += step
                S[a] += x.sum()
            c = compare(ArmSums(n, n, S, S, np.ones(2, bool), plugin=P), (0.0, 1.0),
                        intervals="anytime", alpha=0.05, control=0, spec=spec)
            if c.verdict[1] == "better":
                break
        units.append(n[0])
    u = np.array(units)
    return {"runs": runs, "seed": seed, "independent_mean": float(u.mean()),
            "independent_se": float(u.std(ddof=1) / np.sqrt(runs)),
            "plan": predicted.as_json(),
            "plan_over_independent": float(predicted.expected_units / u.mean())}


def _null_runs(runs: int, seed: int, verdicts: dict, looks: int, units: int, look,
               ) -> tuple[np.ndarray, np.ndarray]:
    """Per null run (three arms, BatchedThompson), whether ``look(exp, rng)`` (assigning and
    recording one look's units, returning two flags: the shipped verdicts', the comparison's)
    ever flagged: two boolean arrays over the runs."""
    import tempfile
    from pathlib import Path

    from banditkit import Experiment
    from banditkit.rng import stream

    flags = np.zeros((runs, 2), dtype=bool)
    where = "/dev/shm" if Path("/dev/shm").is_dir() else None  # no fsync per call
    with tempfile.TemporaryDirectory(dir=where) as tmp:
        for r in range(runs):
            rng = stream(seed, "bench-readout-null", r)
            with Experiment.create(Path(tmp) / f"{r}.sqlite", algorithm="BatchedThompson",
                                   arms=["c", "a", "b"], seed=r, horizon=looks * units,
                                   reward_type="binary", verdicts=verdicts,
                                   params={"batch_size": units, "draws": 100,
                                           "control_floor": 0.2}) as exp:
                for _ in range(looks):
                    flags[r] |= look(exp, rng)
            (Path(tmp) / f"{r}.sqlite").unlink()
    return flags[:, 0], flags[:, 1]


def looks_null(runs: int, seed: int, look_every: int = 200) -> dict:
    """Planned looks' false verdicts (module docstring); ``look_every`` units a look."""
    from statistics import NormalDist

    z = NormalDist().inv_cdf(1 - 0.05 / 4)  # fixed-n, Bonferroni over the two differences

    def look(exp, rng) -> np.ndarray:
        out = np.zeros(2, dtype=bool)
        for _ in range(2):
            got = exp.assign(look_every // 2)
            exp.record(got["unit"], (rng.random(len(got)) < 0.3) * 1.0)
            a = exp.status().planned.arms
            if len(a):
                se = (a["diff_high"] - a["diff"]) / exp.status().planned.bound
                out |= [(a["verdict"] != "undecided").any(),
                        (np.abs(a["diff"]) > z * se).any()]
        return out

    planned, naive = _null_runs(runs, seed, {"looks": 5, "look_every": look_every}, 5,
                                look_every, look)
    return {"runs": runs, "seed": seed, "look_every": look_every,
            "planned_false": int(planned.sum()),
            "fixed_n_each_look_false": int(naive.sum())}


def segments_null(runs: int, seed: int) -> dict:
    """The family's false verdicts across segments (module docstring)."""
    labels, base = np.array(["low", "mid", "high"]), np.array([0.05, 0.2, 0.5])

    def look(exp, rng) -> np.ndarray:
        seg = rng.integers(0, 3, 400)
        got = exp.assign(400, segments=labels[seg].tolist())
        exp.record(got["unit"], (rng.random(400) < base[seg]) * 1.0)
        frame = exp.family()
        return np.array([(frame["verdict"] != "undecided").any(), (frame["p"] <= 0.05).any()])

    holm, raw = _null_runs(runs, seed, {"segments": labels.tolist(), "sequence": "asymptotic",
                                        "tune_n": 150}, 4, 400, look)
    return {"runs": runs, "seed": seed, "family_size": 8, "holm_false": int(holm.sum()),
            "raw_p_false": int(raw.sum())}


def plan_live(runs: int, seed: int, p: float = 0.05, mde: float = 0.0075,
              step: int = 1000) -> dict:
    """The planner against its scenario run through Experiment (module docstring)."""
    import tempfile
    from pathlib import Path

    from banditkit import Experiment
    from banditkit.live.readout.plan import plan

    predicted = plan(base_rate=p, mde=mde, daily_units=2 * step, runs=2000, seed=seed)
    cap = int(20 * predicted.fixed_n_units) + step
    units = []
    # in memory where the machine has it: a commit per call is what a run costs on disk
    where = "/dev/shm" if Path("/dev/shm").is_dir() else None
    with tempfile.TemporaryDirectory(dir=where) as tmp:
        for r in range(runs):
            rng = np.random.default_rng([seed, 11, r])
            path = Path(tmp) / f"{r}.sqlite"
            with Experiment.create(path, algorithm="FixedAllocation",
                                   arms=["control", "treatment"], seed=r,
                                   reward_type="binary",
                                   params={"batch_size": 2 * step}) as exp:
                n = 0
                while n < cap:
                    got = exp.assign(2 * step)
                    rate = np.where(got["arm_index"].to_numpy() == 1, p + mde, p)
                    exp.record(got["unit"], (rng.random(len(got)) < rate) * 1.0)
                    n += step
                    if exp.status().arms.loc["treatment", "verdict"] == "better":
                        break
            units.append(n)
            path.unlink()
    u = np.array(units, dtype=float)
    return {"runs": runs, "seed": seed, "experiment_mean": float(u.mean()),
            "experiment_se": float(u.std(ddof=1) / np.sqrt(runs)),
            "plan_expected": predicted.expected_units,
            "plan_expected_se": getattr(predicted, "expected_units_se", None),
            "plan_over_experiment": float(predicted.expected_units / u.mean())}


def compare_all(seed: int) -> dict:
    """Side by side on one seeded data set (module docstring): statsmodels and gbstats are
    imported here only (``compare`` runs in a throwaway venv that has them)."""
    import gbstats.bayesian.main as gb
    import statsmodels.api as sm
    from statsmodels.stats.proportion import confint_proportions_2indep
    from statsmodels.stats.weightstats import CompareMeans, DescrStatsW

    from banditkit.live.readout.bayes import bayesian_summaries
    from banditkit.live.readout.regression import adjusted_difference, sums_of
    from banditkit.live.readout.relative import relative_lift

    rng = np.random.default_rng(seed)
    out: dict = {"seed": seed}
    # 0/1 rewards: 20,000 per arm at 0.10 vs 0.11
    n = 20_000
    y = [(rng.random(n) < m) * 1.0 for m in (0.10, 0.11)]
    N, S = np.array([n, n], float), np.array([v.sum() for v in y])
    spec = check_verdicts("binary", None, None, None)
    sums = ArmSums(N, N, S, S, np.ones(2, bool))
    fixed = compare(sums, (0.0, 1.0), intervals="fixed", alpha=0.05, control=0, spec=spec)
    sm_lo, sm_hi = confint_proportions_2indep(S[1], n, S[0], n, method="newcomb")
    out["difference_fixed_n"] = {"banditkit": [fixed.diff_low[1], fixed.diff_high[1]],
                                 "statsmodels_newcomb": [float(sm_lo), float(sm_hi)]}
    tuning = PluginTuning.of(spec, 2)
    plugin = np.stack([tuning.terms(v, 0, 0, 0) for v in y])
    anytime = compare(ArmSums(N, N, S, S, np.ones(2, bool), plugin=plugin), (0.0, 1.0),
                      intervals="anytime", alpha=0.05, control=0, spec=spec)
    lift, lift_lo, lift_hi = relative_lift(anytime.mean, anytime.low, anytime.high,
                                           anytime.diff, anytime.diff_low,
                                           anytime.diff_high, 0)
    r_lo, r_hi = confint_proportions_2indep(S[1], n, S[0], n, method="log-adjusted",
                                            compare="ratio")
    g = gb.binomial_ab_test(S[0], n, S[1], n)
    out["relative_lift"] = {
        "banditkit_anytime": [float(lift[1]), float(lift_lo[1]), float(lift_hi[1])],
        "statsmodels_ratio_fixed_n": [float(S[1] / S[0] - 1), float(r_lo - 1), float(r_hi - 1)],
        "gbstats_bayesian_relative": [float(g["expected"]), *map(float, g["ci"])],
        "width_ratio_to_statsmodels": float((lift_hi[1] - lift_lo[1]) / (r_hi - r_lo))}
    chance, lose, keep = bayesian_summaries(N, S, S, 0)
    out["bayesian"] = {"banditkit": {"chance_to_beat_control": float(chance[1]),
                                     "expected_loss_choosing_arm": float(lose[1]),
                                     "expected_loss_keeping_control": float(keep[1])},
                       "gbstats_binomial": {"chance_to_win": float(g["chance_to_win"]),
                                            "risk": [float(v) for v in g["risk"]]}}
    # continuous: Welch's t-test interval against banditkit's fixed-n difference
    x = [rng.lognormal(0, 1, 5000), rng.lognormal(0.05, 1, 4000)]
    Nc = np.array([v.size for v in x], float)
    Sc = np.array([v.sum() for v in x])
    Qc = np.array([(v * v).sum() for v in x])
    cspec = check_verdicts("continuous", None, None, None)
    cf = compare(ArmSums(Nc, Nc, Sc, Qc, np.zeros(2, bool)), None, intervals="fixed",
                 alpha=0.05, control=0, spec=cspec)
    welch = CompareMeans(DescrStatsW(x[1]), DescrStatsW(x[0])).tconfint_diff(usevar="unequal")
    out["difference_continuous_fixed_n"] = {"banditkit": [cf.diff_low[1], cf.diff_high[1]],
                                            "statsmodels_welch": [float(v) for v in welch]}
    # several covariates: the adjusted difference against OLS y ~ 1 + T + X
    Xv = rng.normal(0, 1, (6000, 3))
    arm = rng.integers(0, 2, 6000)
    yv = Xv @ [0.8, 0.5, 1.5] + rng.normal(0, 1, 6000) + 0.1 * arm
    d, lo, hi = adjusted_difference(sums_of(yv, Xv, arm, 2), 0)
    ols = sm.OLS(yv, sm.add_constant(np.column_stack([arm, Xv]))).fit()
    out["regression_adjusted"] = {
        "banditkit": [float(d[1]), float(lo[1]), float(hi[1])],
        "statsmodels_ols": [float(ols.params[1]), *map(float, ols.conf_int()[1])]}
    return json.loads(json.dumps(out, default=float))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=["widths", "attribution", "plan", "plan-live", "compare",
                                           "looks", "segments"])
    parser.add_argument("--runs", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--look-every", type=int, default=200,
                        help="looks: units assigned per planned look")
    args = parser.parse_args()
    if args.what == "widths":
        result = widths(args.runs or 40, args.seed)
    elif args.what == "plan":
        result = plan_check(args.runs or 300, args.seed)
    elif args.what == "attribution":
        result = attribution(args.runs or 40, args.seed)
    elif args.what == "plan-live":
        result = plan_live(args.runs or 200, args.seed)
    elif args.what == "looks":
        result = looks_null(args.runs or 200, args.seed, args.look_every)
    elif args.what == "segments":
        result = segments_null(args.runs or 200, args.seed)
    else:
        result = compare_all(args.seed)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
