"""CUPED covariates on the command line (issue 23 §3), typed as a user would: real
``banditkit experiment`` processes. ``assign --covariates FILE`` (one number per line; with
``--keys``, line i is key i's) and ``record``'s CSV column ``covariate``; each refusal one line
naming ``covariates`` and the rule (the Python API's message), exit status 2, no traceback,
nothing assigned, recorded or written."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from banditkit import Experiment
from banditkit.live.readout.adjusted import cuped

CLI = [sys.executable, "-m", "banditkit", "experiment"]


def _cli(*argv: object, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *map(str, argv)], capture_output=True, text=True, cwd=cwd)


def _units(path: Path) -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT id, arm, reward, covariate FROM units ORDER BY id")\
            .fetchall()
    finally:
        conn.close()


def _refused(done: subprocess.CompletedProcess, message: str) -> None:
    assert done.returncode == 2, done
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("banditkit experiment: error: "), lines
    assert message in lines[0], lines[0]
    assert done.stdout == ""


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    done = _cli("create", "e.sqlite", "--algorithm", "FixedAllocation", "--arms",
                "control,new", "--seed", "0", "--reward-type", "continuous", "--cuped",
                "--param", "batch_size=8", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return tmp_path


def test_assign_stores_the_covariates_of_a_file_and_refuses_bad_ones_by_name(folder):
    path = folder / "e.sqlite"
    (folder / "three.txt").write_text("1\n2\n3\n")
    (folder / "nan.txt").write_text("1\nnan\n3\n4\n")
    (folder / "text.txt").write_text("1\n2\nabc\n4\n")
    (folder / "blank.txt").write_text("1\n\n3\n4\n")
    for argv, message in [
        (("three.txt",), "covariates must be numbers, one per unit (4), got shape (3,)"),
        (("nan.txt",), "covariates must be finite: value 1 is nan"),
        (("text.txt",), "argument --covariates: line 3 of 'text.txt' is not a number "
                        "('abc')"),
        (("blank.txt",), "argument --covariates: line 2 of 'blank.txt' is not a number"),
        (("missing.txt",), "argument --covariates: 'missing.txt' cannot be read"),
    ]:
        _refused(_cli("assign", "e.sqlite", "4", "--covariates", *argv, "--out", "o.csv",
                      cwd=folder), message)
        assert _units(path) == [] and not (folder / "o.csv").exists()
        assert not (folder / "o.csv.partial").exists()
    (folder / "four.txt").write_text(" 1.5\n-2\n3e2\n4\n")
    done = _cli("assign", "e.sqlite", "4", "--covariates", "four.txt", cwd=folder)
    assert done.returncode == 0, done.stderr
    assert [u[3] for u in _units(path)] == [1.5, -2.0, 300.0, 4.0]
    # with --keys: line i is key i's; a repeated key keeps the covariate it has
    (folder / "keys.txt").write_text("ann\nbob\n")
    (folder / "kx.txt").write_text("7\n8\n")
    assert _cli("assign", "e.sqlite", "--keys", "keys.txt", "--covariates", "kx.txt",
                cwd=folder).returncode == 0
    (folder / "keys2.txt").write_text("bob\ncid\n")
    (folder / "kx2.txt").write_text("99\n9\n")
    assert _cli("assign", "e.sqlite", "--keys", "keys2.txt", "--covariates", "kx2.txt",
                cwd=folder).returncode == 0
    assert [u[3] for u in _units(path)][4:] == [7.0, 8.0, 9.0]


def test_covariates_on_an_experiment_without_cuped_and_without_them_where_required(tmp_path):
    plain = _cli("create", "p.sqlite", "--algorithm", "FixedAllocation", "--arms", "a,b",
                 "--seed", "0", "--reward-type", "continuous", cwd=tmp_path)
    zero = _cli("create", "z.sqlite", "--algorithm", "FixedAllocation", "--arms", "a,b",
                "--seed", "0", "--reward-type", "binary", "--sequence", "asymptotic",
                "--cuped", "--missing", "zero", cwd=tmp_path)
    assert plain.returncode == 0 and zero.returncode == 0, (plain.stderr, zero.stderr)
    (tmp_path / "two.txt").write_text("1\n2\n")
    _refused(_cli("assign", "p.sqlite", "2", "--covariates", "two.txt", cwd=tmp_path),
             "covariates: this experiment was not created with verdicts={'cuped': True}")
    # the window may score a unit 0 before any record: its covariate comes at assign
    _refused(_cli("assign", "z.sqlite", "2", cwd=tmp_path), "covariates are required")
    assert _units(tmp_path / "p.sqlite") == _units(tmp_path / "z.sqlite") == []


def test_record_takes_a_covariate_column_and_refuses_bad_values_recording_nothing(folder):
    path = folder / "e.sqlite"
    assert _cli("assign", "e.sqlite", "8", "--out", "a.csv", cwd=folder).returncode == 0
    units = [u[0] for u in _units(path)]
    rng = np.random.default_rng(3)
    x = rng.normal(10, 3, 8)
    y = 2 * x + rng.normal(0, 1, 8)

    def csv(name: str, covariates: list[str]) -> str:
        (folder / name).write_text("unit,reward,covariate\n" + "".join(
            f"{u},{float(r)!r},{c}\n" for u, r, c in zip(units, y, covariates, strict=True)))
        return name

    good = [repr(float(v)) for v in x]
    for name, column, message in [
        ("nan.csv", [*good[:3], "nan", *good[4:]], "covariates must be finite: value 3 is nan"),
        ("empty.csv", [*good[:3], "", *good[4:]], "covariates must be finite: value 3 is nan"),
        ("text.csv", [*good[:3], "abc", *good[4:]],
         "column 'covariate' must hold numbers only"),
    ]:
        _refused(_cli("record", "e.sqlite", csv(name, column), cwd=folder), message)
        assert all(u[2] is None and u[3] is None for u in _units(path))
    done = _cli("record", "e.sqlite", csv("good.csv", good), cwd=folder)
    assert done.returncode == 0, done.stderr
    stored = _units(path)
    # a covariate is given once: another value for a recorded unit is refused
    _refused(_cli("record", "e.sqlite", csv("changed.csv", ["1", *good[1:]]), cwd=folder),
             f"covariates: unit {units[0]} already has covariate")
    assert _units(path) == stored
    arm = np.array([u[1] for u in stored])
    est = cuped(*(np.bincount(arm, w) for w in (np.ones(8), y, y * y, x, x * x, x * y)))
    with Experiment.open(path, readonly=True) as exp:
        assert exp.status().arms["mean"].to_numpy() == pytest.approx(est.mean)
