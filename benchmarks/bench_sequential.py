"""Speed of the sequential regret policies (UCB1, KL-UCB, Thompson sampling) against a plain C
loop, per trial on the Appendix H instance (6 Bernoulli arms 0.44...0.59, T = 45,000).

    .venv/bin/python benchmarks/bench_sequential.py [--trials 20 200] [--c-trials 200]

The C reference (benchmarks/c_reference/sequential.c) is compiled with gcc -O2 at benchmark time
if gcc is found; otherwise the comparison with C is skipped and only banditkit's times are
printed. banditkit runs its trials in lock-step (``index_lockstep``: one vectorised round across
all trials, each trial with its own noise and ξ streams, identical to ``simulate`` trial by
trial) with the figures' trial counts (20 for replicable-bandits:fig1, 200 for
replicable-bandits:regret), and one trial through ``simulate`` (the sequential class, one
Python step per pull) at T = 5,000 scaled to T = 45,000. Times are CPU seconds
(``time.process_time``; ``CLOCK_PROCESS_CPUTIME_ID`` in C).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from banditkit import simulate
from banditkit.envs.instances import make_instance
from banditkit.policies import KLUCB, UCB1, ThompsonSampling
from banditkit.policies.named import klucb_lockstep, thompson_lockstep
from banditkit.policies.ucb_lockstep import ucb1_lockstep
from banditkit.rng import derive_seed, stream

T = 45_000
HERE = Path(__file__).parent

#: name in the C output -> (label, lock-step runner, params, sequential class builder)
POLICIES = {
    "ucb1": ("UCB1", ucb1_lockstep, {}, lambda K, r: UCB1(K)),
    "klucb": ("KL-UCB (Bernoulli, c = 0)", klucb_lockstep, {}, lambda K, r: KLUCB(K)),
    "ts": ("Thompson sampling (Beta)", thompson_lockstep, {},
           lambda K, r: ThompsonSampling(K, r)),
    "tsg": ("Thompson sampling (Gaussian)", thompson_lockstep, {"posterior": "gaussian"},
            lambda K, r: ThompsonSampling(K, r, posterior="gaussian")),
}


def c_reference(trials: int) -> dict[str, tuple[float, float]] | None:
    """{policy: (ms per trial, mean final regret)} from the compiled C loop, or None."""
    gcc = shutil.which("gcc")
    if gcc is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / "sequential"
        subprocess.run([gcc, "-O2", "-o", str(exe), str(HERE / "c_reference" / "sequential.c"),
                        "-lm"], check=True)
        out = subprocess.run([str(exe), str(trials)], check=True, capture_output=True,
                             text=True).stdout
    result = {}
    for line in out.splitlines():
        name, _, ms, regret = line.split()
        result[name] = (float(ms), float(regret))
    return result


def lockstep_ms(runner, params: dict, n: int) -> tuple[float, float]:
    env = make_instance("bernoulli")
    seeds = [derive_seed(0, "bench", i, 1) for i in range(n)]
    rngs = [stream(0, "bench", i, "algorithm") for i in range(n)]
    start = time.process_time()
    trials = runner([env] * n, rngs, seeds, T, None, **params)
    ms = (time.process_time() - start) / n * 1e3
    return ms, sum(t.regret[-1] for t in trials) / n


def simulate_ms(build, horizon: int = 5_000) -> float:
    env = make_instance("bernoulli")
    start = time.process_time()
    simulate(build(env.n_arms, stream(0, "bench", "algorithm")), env, horizon=horizon,
             seed=derive_seed(0, "bench", 1))
    return (time.process_time() - start) * 1e3 * T / horizon


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, nargs="+", default=[20, 200],
                        help="lock-step group sizes (the figures' trial counts)")
    parser.add_argument("--c-trials", type=int, default=200)
    parser.add_argument("--skip-simulate", action="store_true")
    args = parser.parse_args()
    c = c_reference(args.c_trials)
    if c is None:
        print("gcc not found: the comparison with C is skipped")
    print(f"CPU ms per trial, 6 Bernoulli arms, T = {T}")
    for key, (label, runner, params, build) in POLICIES.items():
        print(label)
        if c is not None:
            print(f"  C loop ({args.c_trials} trials)            {c[key][0]:9.2f} ms"
                  f"   regret {c[key][1]:7.1f}")
        for n in args.trials:
            ms, regret = lockstep_ms(runner, params, n)
            ratio = f"  {ms / c[key][0]:5.1f}x C" if c is not None else ""
            print(f"  lock-step, {n:4d} trials together   {ms:9.2f} ms{ratio}   regret "
                  f"{regret:7.1f}")
        if not args.skip_simulate:
            ms = simulate_ms(build)
            ratio = f"  {ms / c[key][0]:5.1f}x C" if c is not None else ""
            print(f"  simulate, 1 trial (T = 5000 scaled) {ms:9.2f} ms{ratio}")


if __name__ == "__main__":
    main()
