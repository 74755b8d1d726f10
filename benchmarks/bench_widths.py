"""Why is the exact default wider than fixed-n on Beta rewards? Three checks on sums (issue 23,
"widths at the end ≤ 1.6× fixed-n"):

    .venv/bin/python benchmarks/bench_widths.py [--runs 20] [--seed 0]
    .venv/bin/python benchmarks/bench_widths.py mixture [--runs 100] [--seed 1]
    .venv/bin/python benchmarks/bench_widths.py plugin [--runs 100] [--seed 1]

1. **The λ cap.** The exact sequences' λ grid stops at ``LAMBDA_MAX`` = 1/2 (each end a
   half-line for bisection). The difference's width ÷ the fixed-n (Student) width for Beta
   rewards with means 0.10 / 0.11 (concentration 10), at 5,000, 2,000 and 20,000 units per
   arm, with the cap at 0.5, 0.7, 0.8, 0.9 (the module constant patched for the run).
2. **The mixture's tuning variance.** The same width with the mixture tuned at variance 1/4
   (the default: any reward in [0, 1]), 0.05, and the rewards' true 0.0082.
3. **Betting** (``ville`` 0.1.0's ``BettingCS``, Waudby-Smith & Ramdas 2023's hedged capital,
   if installed: the test extra): one Beta(1, 9) mean at 5,000 values, its width ÷ fixed-n,
   beside :func:`banditkit.live.readout.sequences.bernstein_sequence` tuned at 1/4 and at the true
   variance. (Only 5 runs: a betting sequence over 5,000 values on a grid is slow.)

**mixture** (issue 23's widths, the choices of :mod:`banditkit.live.readout.sequences`): the
difference's width ÷ fixed-n through :func:`banditkit.live.readout.statistics.compare` (what status
computes), 0/1 rewards (0.10 vs 0.11) at 1,000 / 5,000 / 20,000 / 80,000 / 300,000 per arm and
Beta rewards (same means, concentration 10) at 1,000 / 5,000 / 20,000, ``tune_n`` 10,000, for:
the sequence before the scaling (every increment pays ψ_E(λ): :func:`psi_scaled` patched to
b = 1), the robust share ε = 0.25 over the whole grid, ε = 0.25 from ρ up, and the default
(ε = 0.15 from ρ up), each with the control's share of α at 0.1 and 0.05. Every configuration
sees the same sums.

**plugin** (the exact default since the predictable plug-in): the difference's width ÷ fixed-n
through :func:`banditkit.live.readout.statistics.compare` for the plug-in (``sequence="exact"``, its
sums from each arm's rewards in order) and the λ-mixture (``sequence="mixture"``) on the same
rewards: 0/1 rewards (0.10 vs 0.11) at 1,000 / 5,000 / 10,000 / 20,000 / 80,000 / 300,000 per
arm and Beta rewards (same means, concentration 10) at 1,000 ... 80,000, ``tune_n`` 10,000.

Numbers on a shared, loaded machine; seeded (numpy ``default_rng(seed)``).
"""

from __future__ import annotations

import argparse
import json

import numpy as np

import banditkit.live.readout.sequences as sq
from banditkit.live.readout.statistics import compare
from banditkit.live.readout.sums import ArmSums
from banditkit.live.readout.verdict_spec import check_verdicts


def _beta_sums(rng: np.random.Generator, n: int, runs: int) -> tuple[np.ndarray, ...]:
    mu = np.array([0.10, 0.11])
    x = rng.beta(mu * 10.0, (1.0 - mu) * 10.0, (runs, n, 2))
    return np.full((runs, 2), float(n)), x.sum(1), (x * x).sum(1)


def _fixed_width(N: np.ndarray, S: np.ndarray, Q: np.ndarray) -> np.ndarray:
    spec = check_verdicts("bounded", (0.0, 1.0), None, None)
    c = compare(ArmSums(N, N, S, Q, np.zeros(S.shape, bool)), (0.0, 1.0), intervals="fixed",
                alpha=0.05, control=0, spec=spec)
    return (c.diff_high - c.diff_low)[:, 1]


def lambda_cap(seed: int, runs: int) -> dict[str, list[float]]:
    rng = np.random.default_rng(seed)
    data = {n: _beta_sums(rng, n, runs) for n in (5000, 2000, 20000)}
    tune = {5000: 2000, 2000: 2000, 20000: 10000}
    out: dict[str, list[float]] = {}
    saved = sq.LAMBDA_MAX
    try:
        for cap in (0.5, 0.7, 0.8, 0.9):
            sq.LAMBDA_MAX = cap  # mixture() reads the module constant at each call
            row = []
            for n, (N, S, Q) in data.items():
                spec = check_verdicts("bounded", (0.0, 1.0), {"tune_n": tune[n],
                                                              "sequence": "mixture"}, None)
                c = compare(ArmSums(N, N, S, Q, np.zeros(S.shape, bool)), (0.0, 1.0),
                            intervals="anytime", alpha=0.05, control=0, spec=spec)
                row.append(float(np.median((c.diff_high - c.diff_low)[:, 1]
                                           / _fixed_width(N, S, Q))))
            out[f"cap {cap}"] = row
    finally:
        sq.LAMBDA_MAX = saved
    return out


def tuning_variance(seed: int, runs: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    out = {}
    for n, tune in ((5000, 2000), (2000, 2000), (5000, 5000)):
        N, S, Q = _beta_sums(rng, n, runs)
        fixed = _fixed_width(N, S, Q)
        for var in (0.25, 0.05, 0.0082):
            # the default's split: the control at α·0.1, the difference at α·0.9
            c_low, c_high = sq.bernstein_sequence(N[:, 0], S[:, 0], Q[:, 0], 0.005, n_tune=tune,
                                                  variance=var)
            low, high = sq.difference_sequence(N, S, Q, 0, c_low, c_high, 0.045, n_tune=tune,
                                               variance=var)
            out[f"n {n}, tune_n {tune}, variance {var}"] = float(
                np.median((high - low)[:, 1] / fixed))
    return out


def betting(seed: int, runs: int = 5) -> dict[str, float] | str:
    try:
        from ville import BettingCS
    except ImportError:
        return "ville not installed"
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(runs):
        x = rng.beta(1.0, 9.0, 5000)
        cs = BettingCS(bounds=(0, 1), alpha=0.05, grid=4000).fit(x)
        lo, hi = cs.interval()
        lo, hi = np.atleast_1d(lo)[-1], np.atleast_1d(hi)[-1]
        fixed = 2 * 1.96 * x.std(ddof=1) / np.sqrt(x.size)
        ours = [sq.bernstein_sequence(5000.0, x.sum(), (x * x).sum(), 0.05, n_tune=5000,
                                      variance=v) for v in (0.25, 0.0082)]
        rows.append([(hi - lo) / fixed, *((b - a) / fixed for a, b in ours)])
    med = np.median(np.array(rows), axis=0)
    return {"ville BettingCS": float(med[0]), "bernstein_sequence (variance 1/4)": float(med[1]),
            "bernstein_sequence (true variance)": float(med[2]), "runs": runs}


def mixture_choices(seed: int, runs: int) -> dict[str, dict[str, list[float]]]:
    """The ``mixture`` check (module docstring)."""
    import functools

    configs = {  # label: (scaled, robust share, robust from, control share)
        "before: unscaled, eps 0.25 whole grid, share 0.1": (False, 0.25, 0.0, 0.1),
        "scaled, eps 0.25 whole grid, share 0.1": (True, 0.25, 0.0, 0.1),
        "scaled, eps 0.25 from rho, share 0.05": (True, 0.25, 1.0, 0.05),
        "scaled, eps 0.15 from rho, share 0.1": (True, 0.15, 1.0, 0.1),
        "default: scaled, eps 0.15 from rho, share 0.05": (True, 0.15, 1.0, 0.05),
    }
    rng = np.random.default_rng(seed)
    mu = np.array([0.10, 0.11])
    saved = sq.mixture, sq.psi_scaled
    out: dict[str, dict[str, list[float]]] = {}
    try:
        for reward, sizes in (("binary", (1000, 5000, 20000, 80000, 300000)),
                              ("beta", (1000, 5000, 20000))):
            kind = "binary" if reward == "binary" else "bounded"
            rows: dict[str, list[float]] = {label: [] for label in configs}
            for n in sizes:
                N = np.full((runs, 2), float(n))
                if reward == "binary":
                    S = rng.binomial(n, mu, (runs, 2)).astype(float)
                    Q = S
                else:
                    _, S, Q = _beta_sums(rng, n, runs)
                sums = ArmSums(N, N, S, Q, np.full(N.shape, reward == "binary"))
                fixed = compare(sums, (0.0, 1.0), intervals="fixed", alpha=0.05, control=0,
                                spec=check_verdicts(kind, (0.0, 1.0), None, None))
                fixed_w = (fixed.diff_high - fixed.diff_low)[:, 1]
                for label, (scaled, eps, start, share) in configs.items():
                    sq.mixture = functools.partial(saved[0], robust=eps, robust_from=start)
                    sq.psi_scaled = saved[1] if scaled else (
                        lambda lam, b: saved[1](lam, np.ones_like(np.asarray(b, float))))
                    spec = check_verdicts(kind, (0.0, 1.0), {"tune_n": 10_000,
                                                             "control_share": share,
                                                             "sequence": "mixture"}, None)
                    c = compare(sums, (0.0, 1.0), intervals="anytime", alpha=0.05, control=0,
                                spec=spec)
                    rows[label].append(round(float(np.median(
                        (c.diff_high - c.diff_low)[:, 1] / fixed_w)), 3))
            out[f"{reward} at {list(sizes)} per arm"] = rows
    finally:
        sq.mixture, sq.psi_scaled = saved
    return out


def plugin_against_mixture(seed: int, runs: int) -> dict[str, dict[str, list[float]]]:
    """The ``plugin`` check (module docstring): both exact sequences on the same rewards."""
    from banditkit.live.readout.statistics import plugin_sums

    rng = np.random.default_rng(seed)
    mu = np.array([0.10, 0.11])
    out: dict[str, dict[str, list[float]]] = {}
    for reward, sizes in (("binary", (1000, 5000, 10000, 20000, 80000, 300000)),
                          ("beta", (1000, 5000, 10000, 20000, 80000))):
        kind = "binary" if reward == "binary" else "bounded"
        spec = check_verdicts(kind, (0.0, 1.0), {"tune_n": 10_000}, None)
        mix = check_verdicts(kind, (0.0, 1.0), {"tune_n": 10_000, "sequence": "mixture"},
                             None)
        ratios: dict[str, list[list[float]]] = {"plugin (exact default)": [], "mixture": []}
        for start in range(0, runs, 5):  # 5 runs at a time: every reward is kept in memory
            m = min(5, runs - start)
            shape = (m, sizes[-1])
            x = [(rng.random(shape) < p).astype(float) if reward == "binary"
                 else rng.beta(p * 10.0, (1.0 - p) * 10.0, shape) for p in mu]
            cum = plugin_sums(x, spec, cumulative=True)  # (m, n, 2, 4)
            idx = np.array(sizes) - 1
            N = np.broadcast_to(np.array(sizes, float)[None, :, None], (m, len(sizes), 2))
            S = np.stack([a.cumsum(axis=1)[:, idx] for a in x], axis=-1)
            Q = np.stack([(a * a).cumsum(axis=1)[:, idx] for a in x], axis=-1)
            binary = np.full(N.shape, reward == "binary")
            fixed = compare(ArmSums(N, N, S, Q, binary), (0.0, 1.0), intervals="fixed",
                            alpha=0.05, control=0, spec=spec)
            fixed_w = (fixed.diff_high - fixed.diff_low)[..., 1]
            for label, sp, plug in (("plugin (exact default)", spec, cum[:, idx]),
                                    ("mixture", mix, None)):
                c = compare(ArmSums(N, N, S, Q, binary, plugin=plug), (0.0, 1.0),
                            intervals="anytime", alpha=0.05, control=0, spec=sp)
                ratios[label].extend(((c.diff_high - c.diff_low)[..., 1] / fixed_w).tolist())
        out[f"{reward} at {list(sizes)} per arm"] = {
            label: [round(float(v), 3) for v in np.median(np.array(r), axis=0)]
            for label, r in ratios.items()}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("what", nargs="?", choices=["all", "mixture", "plugin"],
                        default="all")
    parser.add_argument("--runs", type=int, default=None)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    if args.what == "plugin":
        runs, seed = args.runs or 100, 1 if args.seed is None else args.seed
        print(json.dumps({"seed": seed, "runs": runs, **plugin_against_mixture(seed, runs)},
                         indent=1))
        return
    if args.what == "mixture":
        runs, seed = args.runs or 100, 1 if args.seed is None else args.seed
        print(json.dumps({"seed": seed, "runs": runs, **mixture_choices(seed, runs)},
                         indent=1))
        return
    args.runs = args.runs or 20
    args.seed = 0 if args.seed is None else args.seed
    print(json.dumps({"seed": args.seed, "runs": args.runs,
                      "lambda_cap (n 5000, 2000, 20000)": lambda_cap(args.seed, args.runs),
                      "tuning_variance": tuning_variance(args.seed, args.runs),
                      "betting": betting(args.seed)}, indent=1))


if __name__ == "__main__":
    main()
