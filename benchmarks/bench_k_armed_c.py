"""Speed of every registered K-armed sequential identifier against a plain C loop, with each C
loop checked against banditkit for correctness: on Garivier & Kaufmann's (COLT 2016, Table 1)
instance μ₁ = (0.5, 0.45, 0.43, 0.4), Bernoulli arms, δ = 0.1, each identifier with its
registered factory's defaults (:mod:`banditkit.identification.named`; EB-TC's σ = ½, the
proved thresholds).

    .venv/bin/python benchmarks/bench_k_armed_c.py [--trials 20] [--c-trials 20]
        [--only tas ttts] [--repeats 3] [--markdown]

banditkit runs ``simulate_trials`` with the registered factory (the public call, which takes
the identifier's compiled kernel where it has one, else the protocol loop), trial i with
ξ = stream(SEED, "bench-k-armed", name, i, "algorithm") and noise derive_seed(SEED,
"bench-k-armed", name, i, 1), with a cap of 10⁶ pulls that no trial reaches (LUCB1's kernel
needs a cap: without one it takes the protocol loop). One untimed trial first compiles or loads
the kernel. The C loop (``benchmarks/c_reference/identification.c``, compiled with gcc -O2 here)
runs the same algorithm with its own random numbers: its time is the fastest of ``--repeats``
runs (other jobs only ever add time); banditkit's is one run. Each ratio is given per trial
and per pull (µs per pull = ms per trial / mean pulls): the two sides' trials differ, and so do
their sample counts.

The check: for each identifier the mean number of pulls of the C loop and of banditkit must
agree within ``--tolerance`` (3 by default) standard errors of their difference, and each error
rate must be at most δ plus 3 standard errors (both are printed). This catches a C loop that
runs another algorithm (LUCB1's bounds for KL-LUCB's), not a small slip: a threshold off by
log 2 moves the mean by about 5%, under the noise of 20 trials. The exact check is
``tests/test_k_armed_c_reference.py``: given the same rewards (per-arm tables, the C loop's
``table`` mode), every deterministic identifier's C loop stops at banditkit's pull with its
recommendation; top-two Thompson sampling, which draws, has only this benchmark's check. Times
are CPU seconds (``time.process_time``; ``CLOCK_PROCESS_CPUTIME_ID`` in C), per trial.
"""

from __future__ import annotations

import argparse
import math
import shutil
import subprocess
import tempfile
import time
from functools import partial
from pathlib import Path

import numpy as np

from banditkit import simulate_trials
from banditkit.envs.multi_armed import BernoulliBandit
from banditkit.registry import make_policy
from banditkit.rng import derive_seed, stream

HERE = Path(__file__).parent
SOURCE = HERE / "c_reference" / "identification.c"
SEED = 0
MU1 = (0.5, 0.45, 0.43, 0.4)
DELTA = 0.1
CAP = 1_000_000

#: name in the C output -> (label, registry name)
IDENTIFIERS = {
    "tas": ("Track-and-Stop, D-tracking", "KArmedTrackAndStop"),
    "ttts": ("Top-two Thompson sampling (β = ½)", "TopTwoThompson"),
    "ebtc": ("EB-TCε₀ (ε₀ = 0.1, σ = ½)", "EBTC"),
    "lucb": ("LUCB1", "LUCB"),
    "kllucb": ("KL-LUCB", "KLLUCB"),
    "bc": ("Best challenger (T-a-S (BC))", "BestChallenger"),
    "cracing": ("Chernoff-Racing", "ChernoffRacing"),
    "klracing": ("KL-Racing", "KLRacing"),
}


def compile_c(tmp: Path) -> Path | None:
    """The C loops' executable in ``tmp`` (gcc -O2), or None without gcc."""
    gcc = shutil.which("gcc")
    if gcc is None:
        return None
    exe = tmp / "identification"
    subprocess.run([gcc, "-O2", "-o", str(exe), str(SOURCE), "-lm"], check=True)
    return exe


def c_loop(exe: Path, name: str, trials: int, repeats: int = 1) -> dict:
    """{ms, mean, sd, errors, trials} of ``trials`` C trials of ``name``; ms is the fastest of
    ``repeats`` runs (the same seed, so the same trials)."""
    best: dict | None = None
    for _ in range(repeats):
        out = subprocess.run([str(exe), str(trials), name], check=True, capture_output=True,
                             text=True).stdout.split()
        row = {"trials": int(out[1]), "ms": float(out[2]), "mean": float(out[3]),
               "sd": float(out[4]), "errors": int(out[5])}
        if best is None or row["ms"] < best["ms"]:
            best = row
    assert best is not None
    return best


def _factory(name: str, env: BernoulliBandit, rng: np.random.Generator):
    return make_policy(name, env, rng, delta=DELTA)


def banditkit_run(key: str, trials: int) -> dict:
    """{ms, mean, sd, errors, trials, engine} of ``trials`` trials through ``simulate_trials``."""
    name = IDENTIFIERS[key][1]
    env = BernoulliBandit(np.array(MU1))
    probe = _factory(name, env, stream(SEED, "probe"))
    engine = probe.engine(env, CAP)
    simulate_trials(partial(_factory, name), env, n_trials=1, horizon=CAP,
                    rngs=[stream(SEED, "warm-up", key)], seeds=[derive_seed(SEED, "warm-up")])
    rngs = [stream(SEED, "bench-k-armed", key, i, "algorithm") for i in range(trials)]
    seeds = [derive_seed(SEED, "bench-k-armed", key, i, 1) for i in range(trials)]
    start = time.process_time()
    done = simulate_trials(partial(_factory, name), env, n_trials=trials, horizon=CAP,
                           rngs=rngs, seeds=seeds)
    ms = (time.process_time() - start) / trials * 1e3
    pulls = np.array([t.n_pulls for t in done], dtype=float)
    if not all(t.stopped for t in done):
        raise SystemExit(f"{name}: a trial reached the cap of {CAP} pulls")
    return {"trials": trials, "ms": ms, "mean": float(pulls.mean()),
            "sd": float(pulls.std(ddof=1)) if trials > 1 else 0.0,
            "errors": sum(not t.correct for t in done),
            "engine": "protocol loop" if engine is None else engine.name}


def per_pull(row: dict) -> float:
    """CPU µs per pull: the trials' sample counts differ (their noise differs), so the ratio
    per trial mixes the cost of a pull with the luck of the draw."""
    return row["ms"] * 1e3 / row["mean"]


def agreement(c: dict, ours: dict) -> tuple[float, bool]:
    """(z, errors_ok): the difference of mean pulls in standard errors, and whether both error
    rates are within δ + 3 standard errors of a rate δ."""
    se = math.sqrt(c["sd"] ** 2 / c["trials"] + ours["sd"] ** 2 / ours["trials"])
    z = (ours["mean"] - c["mean"]) / se if se > 0 else 0.0
    ok = all(r["errors"] / r["trials"] <= DELTA + 3 * math.sqrt(DELTA * (1 - DELTA)
                                                                 / r["trials"])
             for r in (c, ours))
    return z, ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=20, help="banditkit's trials")
    parser.add_argument("--c-trials", type=int, default=20, help="the C loop's trials")
    parser.add_argument("--repeats", type=int, default=3, help="C time: fastest of these runs")
    parser.add_argument("--tolerance", type=float, default=3.0,
                        help="largest |difference of mean pulls| in standard errors")
    parser.add_argument("--only", nargs="+", choices=sorted(IDENTIFIERS), default=None)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    chosen = [k for k in IDENTIFIERS if args.only is None or k in args.only]
    print(f"mu1 = {MU1} Bernoulli, delta = {DELTA}; CPU ms per trial; banditkit "
          f"{args.trials} trials, C {args.c_trials} trials (fastest of {args.repeats})")
    rows, failed = [], []
    with tempfile.TemporaryDirectory() as tmp:
        exe = compile_c(Path(tmp))
        for key in chosen:
            label = IDENTIFIERS[key][0]
            ours = banditkit_run(key, args.trials)
            line = (f"{label:36s} banditkit ({ours['engine']}) {ours['ms']:9.2f} ms, pulls "
                    f"{ours['mean']:8.0f} ± {ours['sd'] / math.sqrt(ours['trials']):5.0f}, "
                    f"errors {ours['errors']}/{ours['trials']}")
            if exe is None:
                print(line + "   (gcc not found: no C loop)")
                rows.append((label, ours, None, None))
                continue
            c = c_loop(exe, key, args.c_trials, args.repeats)
            z, errors_ok = agreement(c, ours)
            print(line)
            print(f"{'':36s} C loop {c['ms']:9.2f} ms, pulls {c['mean']:8.0f} ± "
                  f"{c['sd'] / math.sqrt(c['trials']):5.0f}, errors {c['errors']}/{c['trials']}"
                  f"   ratio {ours['ms'] / c['ms']:7.2f}x ({per_pull(ours) / per_pull(c):.2f}x "
                  f"per pull)   pulls differ by {z:+.2f} SE")
            if abs(z) > args.tolerance or not errors_ok:
                failed.append(label)
            rows.append((label, ours, c, z))
    if args.markdown:
        print("| identifier | banditkit's engine | pulls, banditkit | pulls, C | difference "
              "(SE) | errors (banditkit, C) | banditkit ms/trial | C ms/trial | ratio | "
              "banditkit µs/pull | C µs/pull | ratio per pull |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for label, ours, c, z in rows:
            se = lambda r: r["sd"] / math.sqrt(r["trials"])  # noqa: E731
            cells = [label, ours["engine"], f"{ours['mean']:,.0f} ± {se(ours):,.0f}"]
            if c is None:
                cells += ["", "", f"{ours['errors']}/{ours['trials']}", f"{ours['ms']:.2f}",
                          "", "", f"{per_pull(ours):.3g}", "", ""]
            else:
                cells += [f"{c['mean']:,.0f} ± {se(c):,.0f}", f"{z:+.2f}",
                          f"{ours['errors']}/{ours['trials']}, {c['errors']}/{c['trials']}",
                          f"{ours['ms']:.2f}", f"{c['ms']:.2f}", f"{ours['ms'] / c['ms']:.2f}×",
                          f"{per_pull(ours):.3g}", f"{per_pull(c):.3g}",
                          f"{per_pull(ours) / per_pull(c):.2f}×"]
            print("| " + " | ".join(cells) + " |")
    if failed:
        raise SystemExit(f"the C loop disagrees with banditkit beyond {args.tolerance} SE or "
                         f"δ + 3 SE: {', '.join(failed)}")


if __name__ == "__main__":
    main()
