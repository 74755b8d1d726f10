"""The SQLite run store: round trips, upsert rules, identity checks and spec fingerprints."""

from __future__ import annotations

import functools
import sqlite3
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest

import test_runner_support as support
from banditkit.experiments.records import TrialRecord, failed_record
from banditkit.experiments.spec import AlgorithmSpec
from banditkit.experiments.store import (
    IDENTITY_KEYS,
    ConfigurationMismatch,
    RunStore,
    spec_fingerprint,
)


def _record(trial: int, status: str = "ok", regret: float = 1.5) -> TrialRecord:
    return TrialRecord(
        point=1, algorithm="A", trial=trial, status=status, n_pulls=10, final_regret=regret,
        final_violation=None, correct=True, recommendation=2, stopped=False, n_batches=3,
        seconds=0.25, checkpoints=np.array([5, 10]), regret=np.array([0.7, regret]),
        violation=None, counts=np.array([4, 6]), decision_arms=np.array([0, 1, 0]),
        decision_counts=np.array([2, 6, 2]), batch_sizes=np.array([2, 4, 4]),
        info={"phases": 2, "eliminated": [1, 3]})


def test_records_round_trip_exactly(tmp_path):
    original = _record(0, regret=0.1 + 0.2)  # a float that does not print round
    with RunStore(tmp_path) as store:
        assert store.add([original]) == 1
    with RunStore(tmp_path, create=False) as store:
        [back] = store.records()
    for name in ("point", "algorithm", "trial", "status", "n_pulls", "final_regret",
                 "final_violation", "correct", "recommendation", "stopped", "n_batches",
                 "seconds", "info"):
        assert getattr(back, name) == getattr(original, name), name
    assert back.correct is True and back.stopped is False
    for name in ("checkpoints", "regret", "counts", "decision_arms", "decision_counts",
                 "batch_sizes"):
        np.testing.assert_array_equal(getattr(back, name), getattr(original, name))
        assert getattr(back, name).dtype == getattr(original, name).dtype
    assert back.violation is None


def test_database_is_in_wal_mode_and_readable_while_open(tmp_path):
    with RunStore(tmp_path) as store:
        store.add([_record(0)])
        with sqlite3.connect(tmp_path / "results.sqlite") as reader:
            assert reader.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
            assert reader.execute("SELECT COUNT(*) FROM trials").fetchone()[0] == 1


def test_successes_are_never_overwritten_and_failures_are_replaced(tmp_path):
    with RunStore(tmp_path) as store:
        store.add([_record(0, regret=1.0), failed_record(1, "A", 1, ValueError("bad"))])
        # Same keys again: the success stays, the failure is replaced by the retry.
        written = store.add([_record(0, regret=99.0), _record(1, regret=2.0)])
        assert written == 1
        records = {r.trial: r for r in store.records()}
        assert store.count() == 2
        assert store.keys() == {(1, "A", 0), (1, "A", 1)} and store.keys("failed") == set()
    assert records[0].final_regret == 1.0
    assert records[1].status == "ok" and records[1].final_regret == 2.0


def test_failed_record_keeps_error_and_traceback():
    def explode():
        raise ZeroDivisionError("no gap")
    try:
        explode()
    except ZeroDivisionError as error:
        record = failed_record(0, "A", 4, error)
    assert record.status == "failed" and record.error == "ZeroDivisionError: no gap"
    assert "explode" in record.traceback and record.final_regret is None


def test_claim_accepts_same_identity_and_refuses_another(tmp_path):
    config = {"figure": "f", "quick": True, "trials": 3, "seed": 0, "fingerprint": "abc",
              "version": "0.1.0", "notes": "first"}
    with RunStore(tmp_path) as store:
        store.claim(config)
        store.claim({**config, "notes": "second"})  # description may change
        assert store.config()["notes"] == "second"
        for key in IDENTITY_KEYS:
            changed = {**config, key: "other"}
            with pytest.raises(ConfigurationMismatch, match=key):
                store.claim(changed)
        assert store.config()["seed"] == 0


def test_missing_database_is_not_created_for_reading(tmp_path):
    with pytest.raises(FileNotFoundError, match="no run database"):
        RunStore(tmp_path / "nothing", create=False)
    assert not (tmp_path / "nothing").exists()


def test_fingerprint_is_stable_across_processes():
    code = ("import sys; sys.path.insert(0, sys.argv[1]);"
            "import test_runner_support as s;"
            "from banditkit.experiments.store import spec_fingerprint;"
            "print(spec_fingerprint(s.SMALL))")
    out = subprocess.run([sys.executable, "-c", code, str(support.__file__).rsplit("/", 1)[0]],
                         capture_output=True, text=True, check=True,
                         env={"PYTHONHASHSEED": "123"})
    assert out.stdout.strip() == spec_fingerprint(support.SMALL)


def test_fingerprint_sees_what_changes_numbers_and_ignores_presentation():
    base = spec_fingerprint(support.SMALL)
    eps = AlgorithmSpec("eps-greedy", support.make_eps_greedy, {"eps": 0.3, "batch": 10})
    changed = [
        replace(support.SMALL, horizon=401),
        replace(support.SMALL, points=support.POINTS[:1]),
        replace(support.SMALL, algorithms=(support.SMALL.algorithms[0], eps)),
        replace(support.SMALL, make_env=support.make_random_env),
        replace(support.SMALL, checkpoints=21),
        replace(support.SMALL, instance_per_trial=True),
        replace(support.SMALL, make_env=functools.partial(support.make_env)),
        support.SMALL.quick_version(),
    ]
    prints = [spec_fingerprint(s) for s in changed]
    assert base not in prints and len(set(prints)) == len(prints)
    same = [replace(support.SMALL, notes="x", title="y", trials=99),
            replace(support.SMALL, points=tuple(dict(p) for p in support.POINTS))]
    assert all(spec_fingerprint(s) == base for s in same)


def test_integer_arrays_are_stored_narrow_and_read_back_as_int64(tmp_path):
    arms = np.tile(np.array([0, 3, 1], dtype=np.int64), 100_000)  # a long one-pull decision log
    wide = replace(_record(0), decision_arms=arms, decision_counts=np.ones_like(arms),
                   counts=np.array([0, -5, 2**40]))
    with RunStore(tmp_path) as store:
        store.add([wide])
    size = (tmp_path / "results.sqlite").stat().st_size + sum(
        p.stat().st_size for p in tmp_path.glob("results.sqlite-wal"))
    assert size < 3 * arms.size  # one byte per arm and per count (plus pages), not sixteen
    with RunStore(tmp_path, create=False) as store:
        [back] = store.records()
    for name in ("decision_arms", "decision_counts", "counts"):
        np.testing.assert_array_equal(getattr(back, name), getattr(wide, name))
        assert getattr(back, name).dtype == np.int64


def test_stamps_are_stamp_of_each():
    """The times of many units at once (an ingest body's exposures) are written as one by one:
    text order is time order, and they read back exactly."""
    from banditkit.live.store.codec import parse_stamp, stamp, stamps

    us = np.random.default_rng(38).integers(0, 253_402_300_799_999_999, 20_000).tolist()
    us += [0, 1, 999_999, 1_000_000, 1_795_915_724_111_800, 253_402_300_799_999_999]
    assert stamps(us) == [stamp(u) for u in us]
    assert [parse_stamp(t) for t in stamps(us)] == us
