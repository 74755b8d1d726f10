"""The C reference loops of the K-armed identifiers (benchmarks/c_reference/identification.c,
the speed reference of benchmarks/bench_k_armed_c.py) run the same algorithms as banditkit: on
an easy instance the C loop's mean sample count agrees with the registered identifier's within
3 standard errors, and neither errs. The full check on GK16's μ₁ is the benchmark's."""

from __future__ import annotations

import math
import shutil
import subprocess
from functools import partial
from pathlib import Path

import numpy as np
import pytest

from banditkit import simulate_trials
from banditkit.envs.multi_armed import BernoulliBandit
from banditkit.registry import make_policy
from banditkit.rng import derive_seed, stream

SOURCE = Path(__file__).parent.parent / "benchmarks" / "c_reference" / "identification.c"
MEANS = (0.9, 0.6, 0.5, 0.4)


@pytest.fixture(scope="module")
def c_loops(tmp_path_factory) -> Path:
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("gcc not found")
    exe = tmp_path_factory.mktemp("c") / "identification"
    subprocess.run([gcc, "-O2", f"-DMEANS={', '.join(map(str, MEANS))}", "-o", str(exe),
                    str(SOURCE), "-lm"], check=True)
    return exe


def _factory(name: str, env: BernoulliBandit, rng: np.random.Generator):
    return make_policy(name, env, rng, delta=0.1)


@pytest.mark.parametrize(("key", "name"), [("cracing", "ChernoffRacing"),
                                           ("bc", "BestChallenger")])
def test_the_c_loop_takes_as_many_pulls_as_banditkit(c_loops, key, name):
    out = subprocess.run([str(c_loops), "400", key], check=True, capture_output=True,
                         text=True).stdout.split()
    c_trials, c_mean, c_sd, c_errors = int(out[1]), float(out[3]), float(out[4]), int(out[5])
    env = BernoulliBandit(np.array(MEANS))
    n = 40
    trials = simulate_trials(partial(_factory, name), env, n_trials=n, horizon=100_000,
                             rngs=[stream(3, "c-ref", key, i, "algorithm") for i in range(n)],
                             seeds=[derive_seed(3, "c-ref", key, i, 1) for i in range(n)])
    pulls = np.array([t.n_pulls for t in trials], dtype=float)
    assert all(t.stopped and t.correct for t in trials)
    assert c_trials == 400 and c_errors == 0
    se = math.sqrt(c_sd ** 2 / c_trials + pulls.var(ddof=1) / n)
    assert abs(pulls.mean() - c_mean) <= 3 * se, (pulls.mean(), c_mean, se)
