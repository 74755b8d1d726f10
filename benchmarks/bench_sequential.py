"""Speed of every registered K-armed sequential regret policy (UCB1, KL-UCB, Thompson sampling,
MOSS, Bayes-UCB, EXP3-IX) against a plain C loop, per trial on the Appendix H instance
(6 Bernoulli arms 0.44...0.59, T = 45,000).

    .venv/bin/python benchmarks/bench_sequential.py [--trials 20 200] [--c-trials 200]
        [--skip-before] [--skip-simulate] [--compile] [--markdown]

``--markdown`` prints the rows as the table of docs/simulate.md. The C loop's and the compiled
rows' times are the fastest of ``--repeats`` runs (3 by default): on a shared machine other jobs
only ever add time.

The C reference (benchmarks/c_reference/sequential.c) is compiled with gcc -O2 at benchmark time
if gcc is found; otherwise the comparison with C is skipped and only banditkit's times are
printed. banditkit runs each policy's trials through ``simulate_trials`` with the registered
factory (the public call, which takes the policy's engine), as the figures do (20 trials per
group for replicable-bandits:fig1 and :ucb-baseline, 200 for replicable-bandits:regret), each
trial with its own noise and xi streams:

* ``compiled``: the default path, one compiled loop per trial (numba through banditkit.jit,
  ``policies/index/kernels.py``), timed after a warm-up call so the one-off compilation or
  cache load is not counted (``--compile`` measures it);
* ``numpy``: the previous implementation, one vectorised numpy round across trials (the path
  ``BANDITKIT_JIT=0`` or an install without numba takes), for the before/after;
* ``simulate``: one trial through the sequential class (one Python step per pull) at
  T = 5,000, scaled to T = 45,000.

The compiled and numpy paths give the same trials from the same seeds: the script checks that
their mean final regrets agree exactly. Times are CPU seconds (``time.process_time``;
``CLOCK_PROCESS_CPUTIME_ID`` in C), per trial, with µs per pull = ms per trial / T · 1000.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from unittest import mock

from banditkit import jit, simulate, simulate_trials
from banditkit.envs.instances import make_instance
from banditkit.registry import make_policy
from banditkit.rng import derive_seed, stream

T = 45_000
HERE = Path(__file__).parent

#: name in the C output -> (label, registry name, params)
POLICIES = {
    "ucb1": ("UCB1 (c = 2)", "UCB1", {}),
    "klucb": ("KL-UCB (Bernoulli, c = 0)", "KLUCB", {}),
    "klucbg": ("KL-UCB (Gaussian, sigma = 1, c = 0)", "KLUCB", {"divergence": "gaussian"}),
    "ts": ("Thompson sampling (Beta(1, 1))", "ThompsonSampling", {}),
    "tsg": ("Thompson sampling (Gaussian)", "ThompsonSampling", {"posterior": "gaussian"}),
    "moss": ("MOSS", "MOSS", {}),
    "bayesucb": ("Bayes-UCB (c = 0)", "BayesUCB", {}),
    "exp3ix": ("EXP3-IX (Neu's eta, gamma)", "EXP3IX", {}),
}


def _factory(name: str, params: dict, horizon: int, env, rng):
    return make_policy(name, env, rng, horizon=horizon, **params)


def c_reference(trials: int, repeats: int = 1) -> dict[str, tuple[float, float]] | None:
    """{policy: (ms per trial, mean final regret)} from the compiled C loop (the fastest of
    ``repeats`` runs), or None."""
    gcc = shutil.which("gcc")
    if gcc is None:
        return None
    result: dict[str, tuple[float, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / "sequential"
        subprocess.run([gcc, "-O2", "-o", str(exe), str(HERE / "c_reference" / "sequential.c"),
                        "-lm"], check=True)
        for _ in range(repeats):
            out = subprocess.run([str(exe), str(trials)], check=True, capture_output=True,
                                 text=True).stdout
            for line in out.splitlines():
                name, _, ms, regret = line.split()
                if name not in result or float(ms) < result[name][0]:
                    result[name] = (float(ms), float(regret))
    return result


def lockstep_ms(name: str, params: dict, n: int, horizon: int = T, repeats: int = 1
                ) -> tuple[float, float]:
    """(CPU ms per trial, mean final regret) of ``n`` trials in one ``simulate_trials`` call
    (the fastest of ``repeats`` calls, each with fresh streams from the same seeds)."""
    env = make_instance("bernoulli")
    best = float("inf")
    for _ in range(repeats):
        seeds = [derive_seed(0, "bench", i, 1) for i in range(n)]
        rngs = [stream(0, "bench", i, "algorithm") for i in range(n)]
        start = time.process_time()
        trials = simulate_trials(partial(_factory, name, params, horizon), env, n_trials=n,
                                 horizon=horizon, rngs=rngs, seeds=seeds)
        best = min(best, (time.process_time() - start) / n * 1e3)
    return best, sum(t.regret[-1] for t in trials) / n


def simulate_ms(name: str, params: dict, horizon: int = 5_000) -> float:
    """CPU ms of one protocol-loop trial at ``horizon`` pulls, scaled to T (the policy is
    built for T, so MOSS's index and EXP3-IX's eta are the table's)."""
    env = make_instance("bernoulli")
    policy = _factory(name, params, T, env, stream(0, "bench", "algorithm"))
    start = time.process_time()
    simulate(policy, env, horizon=horizon, seed=derive_seed(0, "bench", 1),
             engine="reference")  # the protocol loop
    return (time.process_time() - start) * 1e3 * T / horizon


_FIRST_CALL = """
import time
from benchmarks_first_call import run  # banditkit, numpy and scipy: not counted
t0 = time.process_time()
import numba
t1 = time.process_time()
run()
t2 = time.process_time()
print(t1 - t0, t2 - t1)
"""


def first_call_seconds() -> list[tuple[str, float, float]]:
    """numba's import and the first call of every policy (one trial, T = 100) in a fresh
    interpreter: with an empty cache (compiling) and again (loading the cache)."""
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "benchmarks_first_call.py").write_text(
            "from banditkit import simulate\n"
            "from banditkit.envs.instances import make_instance\n"
            "from banditkit.registry import make_policy\n"
            "from banditkit.rng import stream\n"
            "def run():\n"
            "    env = make_instance('bernoulli')\n"
            f"    for name, p in {[(v[1], v[2]) for v in POLICIES.values()]!r}:\n"
            "        simulate(make_policy(name, env, stream(0, 'a'), horizon=100, **p), env,\n"
            "                 horizon=100, seed=0)\n")
        env = {**os.environ, "NUMBA_CACHE_DIR": str(Path(tmp) / "cache"),
               "PYTHONPATH": os.pathsep.join([tmp, *sys.path])}
        out = []
        for label in ("empty cache (compiles)", "cached"):
            done = subprocess.run([sys.executable, "-c", _FIRST_CALL], env=env, check=True,
                                  capture_output=True, text=True)
            imported, first = map(float, done.stdout.split())
            out.append((label, imported, first))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, nargs="+", default=[20, 200],
                        help="trials per simulate_trials call (the figures' trial counts)")
    parser.add_argument("--c-trials", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3,
                        help="C and compiled times are the fastest of this many runs (the "
                             "machine's other jobs only ever add time)")
    parser.add_argument("--skip-before", action="store_true",
                        help="skip the numpy lock-step path (what BANDITKIT_JIT=0 runs)")
    parser.add_argument("--skip-simulate", action="store_true")
    parser.add_argument("--compile", action="store_true",
                        help="also time numba's import and the first call (empty cache, cached)")
    parser.add_argument("--markdown", action="store_true",
                        help="print the rows as docs/simulate.md's table")
    parser.add_argument("--only", nargs="+", choices=sorted(POLICIES), default=None)
    args = parser.parse_args()
    if not jit.available():
        print("numba is not installed or BANDITKIT_JIT=0: the compiled rows run the numpy path")
    c = c_reference(args.c_trials, args.repeats)
    if c is None:
        print("gcc not found: the comparison with C is skipped")
    chosen = {k: v for k, v in POLICIES.items() if args.only is None or k in args.only}
    for _, name, params in chosen.values():  # compile or load the cache, untimed
        lockstep_ms(name, params, 1, horizon=100)
    print(f"CPU ms per trial (µs per pull), 6 Bernoulli arms, T = {T}; ratio to the C loop")
    table = []

    def row(label: str, ms: float, key: str, regret: float | None = None) -> str:
        ratio = f"{ms / c[key][0]:6.2f}x C" if c is not None else ""
        tail = f"   regret {regret:7.1f}" if regret is not None else ""
        print(f"  {label:34s} {ms:9.2f} ms {ms * 1e3 / T:7.3f} µs {ratio}{tail}")
        return f"{ms:.2f} ms, {ms / c[key][0]:.2f}×" if c is not None else f"{ms:.2f} ms"

    for key, (label, name, params) in chosen.items():
        print(label)
        cells = [label]
        if c is not None:
            print(f"  {'C loop, ' + str(args.c_trials) + ' trials':34s} {c[key][0]:9.2f} ms "
                  f"{c[key][0] * 1e3 / T:7.3f} µs    1.0x C   regret {c[key][1]:7.1f}")
            cells.append(f"{c[key][0]:.2f} ms ({c[key][0] * 1e3 / T:.3f} µs)")
        for n in args.trials:
            ms, regret = lockstep_ms(name, params, n, repeats=args.repeats)
            cells.append(row(f"compiled, {n} trials", ms, key, regret))
            if not args.skip_before:
                with mock.patch.object(jit, "available", lambda: False):
                    before, regret_before = lockstep_ms(name, params, n)
                cells.append(row(f"numpy lock-step, {n} trials", before, key, regret_before))
                if regret_before != regret:
                    raise SystemExit(f"{label}: the compiled and numpy paths differ "
                                     f"({regret} vs {regret_before})")
        if not args.skip_simulate:
            cells.append(row("simulate, 1 trial (T = 5000 scaled)", simulate_ms(name, params),
                             key))
        table.append(cells)
    if args.markdown:
        head = ["policy"] + (["C loop"] if c is not None else [])
        for n in args.trials:
            head.append(f"compiled, {n} trials")
            if not args.skip_before:
                head.append(f"numpy lock-step, {n} trials")
        if not args.skip_simulate:
            head.append("protocol loop")
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for cells in table:
            print("| " + " | ".join(cells) + " |")
    if args.compile:
        print("numba import and first call of every policy (fresh interpreter, CPU s)")
        for label, imported, first in first_call_seconds():
            print(f"  {label:24s} import numba {imported:5.2f} s   first calls {first:5.2f} s")


if __name__ == "__main__":
    main()
