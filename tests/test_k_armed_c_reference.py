"""The C reference loops of the K-armed identifiers (benchmarks/c_reference/identification.c,
the speed reference of benchmarks/bench_k_armed_c.py) run the same algorithms as banditkit's
registered identifiers: given the same rewards (arm a's k-th reward from a table, in C and in a
banditkit environment), each deterministic identifier's C loop stops at the same pull with the
same recommendation. Top-two Thompson sampling draws, so its C loop is checked by the benchmark
(mean pulls within 3 standard errors of banditkit's on GK16's μ₁)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from banditkit import simulate
from banditkit.envs.base import Outcome
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


class TableBandit(BernoulliBandit):
    """Arm a's k-th reward is ``tables[a, k]``, whatever the order of the pulls: the same
    rewards for the C loop and for banditkit (one trial: it keeps its place in each table)."""

    def __init__(self, means, tables: np.ndarray) -> None:
        super().__init__(means)
        self.tables, self.used = tables, np.zeros(len(means), dtype=np.int64)

    def pull(self, batch, rng, t0=0):
        self._check_batch(batch)
        out = np.empty(batch.arms.size)
        for i, (arm, count) in enumerate(zip(batch.arms, batch.counts, strict=True)):
            out[i] = self.tables[arm, self.used[arm]:self.used[arm] + count].sum()
            self.used[arm] += count
        return Outcome(out)


#: the deterministic identifiers: given the same rewards they must decide the same
DETERMINISTIC = [("tas", "KArmedTrackAndStop"), ("ebtc", "EBTC"), ("lucb", "LUCB"),
                 ("kllucb", "KLLUCB"), ("bc", "BestChallenger"), ("cracing", "ChernoffRacing"),
                 ("klracing", "KLRacing")]


@pytest.mark.parametrize(("key", "name"), DETERMINISTIC)
def test_given_the_same_rewards_the_c_loop_makes_banditkits_decisions(c_loops, tmp_path, key,
                                                                      name):
    trials, length = 4, 20_000
    rng = np.random.default_rng(derive_seed(5, "c-replay", key))
    tables = (rng.random((trials, len(MEANS), length)) < np.array(MEANS)[:, None]
              ).astype(np.uint8)
    path = tmp_path / "tables.bin"
    path.write_bytes(tables.tobytes())
    out = subprocess.run([str(c_loops), "table", key, str(length), str(path)], check=True,
                         capture_output=True, text=True).stdout.split("\n")
    c_rows = [tuple(map(int, line.split())) for line in out if line]
    ours = []
    for k in range(trials):
        env = TableBandit(MEANS, tables[k])
        trial = simulate(_factory(name, env, stream(5, "c-replay", k)), env, seed=0,
                         engine="reference")
        ours.append((trial.n_pulls, trial.recommendation))
    assert c_rows == ours
