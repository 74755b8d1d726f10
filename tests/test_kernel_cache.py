"""The compiled kernels' on-disk cache never outlives a change to what they depend on
(DESIGN.md, "Engines"; banditkit.jit): a constant changed in another module a kernel reads
(``kl_ucb.NEWTON_STEPS``, frozen into the KL-UCB kernel at compile time) is seen by the next
process, on a copy of the package with its own cache directory."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import banditkit
from banditkit import jit

pytestmark = pytest.mark.skipif(not jit.available(), reason="numba not installed (extra 'speed')")

_SCRIPT = """
import json
from banditkit import jit, simulate
from banditkit.envs.multi_armed import BernoulliBandit
from banditkit.policies.index import kernels as sequential_kernels
from banditkit.policies.index.kl_ucb import KLUCB, NEWTON_STEPS

env = BernoulliBandit([0.5, 0.47, 0.3, 0.45])
fast = simulate(KLUCB(4), env, horizon=4000, seed=3)
slow = simulate(KLUCB(4), env, horizon=4000, seed=3, engine="reference")
print(json.dumps({"steps": NEWTON_STEPS, "compiled": fast.final_regret,
                  "loop": slow.final_regret, "cache": jit.cache_dir(),
                  "engine": KLUCB(4).engine(env, 4000).name,
                  "loaded": [sequential_kernels.index_trial.stats.cache_hits.total(),
                             sequential_kernels.index_trial.stats.cache_misses.total()]}))
"""


def _run(src: Path, cache: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(src), "NUMBA_CACHE_DIR": str(cache)}
    env.pop("BANDITKIT_JIT", None)
    run = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, capture_output=True,
                         text=True, timeout=300, check=True)
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_a_changed_constant_in_a_module_a_kernel_imports_is_seen(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(Path(banditkit.__file__).parent, src / "banditkit",
                    ignore=shutil.ignore_patterns("__pycache__"))
    cache = tmp_path / "cache"
    first = _run(src, cache)
    assert first["engine"] == "compiled kernel" and first["steps"] == 10
    assert first["compiled"] == first["loop"]
    assert first.pop("loaded") == [0, 1]  # compiled
    again = _run(src, cache)  # from the cache (nothing compiled): the same numbers
    assert again.pop("loaded") == [1, 0]
    assert again == first

    kl_ucb = src / "banditkit" / "policies" / "index" / "kl_ucb.py"
    text, n = re.subn(r"^NEWTON_STEPS = 10$", "NEWTON_STEPS = 1", kl_ucb.read_text(),
                      flags=re.M)
    assert n == 1
    kl_ucb.write_text(text)
    changed = _run(src, cache)
    assert changed.pop("loaded") == [0, 1]
    assert changed["steps"] == 1
    assert changed["loop"] != first["loop"]  # the constant matters on this instance
    # the kernel compiled afresh with the new constant, not read from the old cache
    assert changed["compiled"] == changed["loop"]
    assert changed["cache"] != first["cache"]
