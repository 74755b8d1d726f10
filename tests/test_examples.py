"""The scripts in examples/ run as documented (a user copies them first)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from banditkit import Experiment

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def test_ab_test_example_runs_to_the_end_and_finds_the_best_arm(tmp_path):
    path = tmp_path / "ab.sqlite"
    done = subprocess.run([sys.executable, str(EXAMPLES / "ab_test.py"), "--path", str(path)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "most visitors went to: new-copy" in done.stdout
    with Experiment.open(path) as exp:  # the file it left is a finished, intact experiment
        state = exp.status()
        units = exp.units()
    assert state.finished and state.pulls_observed == 30_000
    assert units["reward"].notna().all() and len(units) == 30_000
