"""The store part's own pieces alone (banditkit.live.store: totals, codec, the location's
checks, delete_store): running totals per (batch, arm) and over all batches, overflow units
kept apart, exact times, batches stored and read back (and refused when edited), a store
deleted whole. A real SQLite store; the backends' guarantees are test_store_backends.py's."""

from __future__ import annotations

import numpy as np
import pytest

from banditkit.live.errors import ExperimentError
from banditkit.live.store import check_location, delete_store
from banditkit.live.store.codec import micros, pack_runs, parse_stamp, stamp, unpack_runs
from banditkit.live.store.schema import ALL_BATCHES, OVERFLOW_TOTALS
from banditkit.live.store.totals import add_metric_totals, add_totals
from parts_support import Setup


def test_running_totals(tmp_path):
    s = Setup(tmp_path)
    try:
        with s.store.transaction([]) as conn:
            add_totals(conn, 0, {0: (2, 1, 1.0, 1.0, 0), 2: (1, 1, 0.5, 0.25, 1)})
            add_totals(conn, 1, {0: (1, 1, 1.0, 1.0, 0)})
            add_totals(conn, OVERFLOW_TOTALS, {1: (3, 2, 2.0, 2.0, 0)})
            add_totals(conn, 0, {0: (-1, 0, 0.0, 0.0, 0)})  # a unit withdrawn
            add_metric_totals(conn, [(0, 1, np.array([0.5, 2.0])),
                                     (1, 1, np.array([0.25, 1.0]))])
            rows = conn.execute("SELECT batch, arm, assigned, recorded, reward, non_binary "
                                "FROM totals ORDER BY batch, arm").fetchall()
            metrics = conn.execute("SELECT batch, arm, guardrail, n, total FROM metric_totals "
                                   "ORDER BY batch, arm, guardrail").fetchall()
        assert rows == [
            (OVERFLOW_TOTALS, 1, 3, 2, 2.0, 0),  # overflow units: their own row, nothing else
            (ALL_BATCHES, 0, 2, 2, 2.0, 0), (ALL_BATCHES, 2, 1, 1, 0.5, 1),
            (0, 0, 1, 1, 1.0, 0), (0, 2, 1, 1, 0.5, 1), (1, 0, 1, 1, 1.0, 0)]
        assert metrics == [(ALL_BATCHES, 1, 0, 2, 0.75), (ALL_BATCHES, 1, 1, 2, 3.0),
                           (0, 1, 0, 1, 0.5), (0, 1, 1, 1, 2.0),
                           (1, 1, 0, 1, 0.25), (1, 1, 1, 1, 1.0)]
    finally:
        s.close()


def test_times_and_runs_round_trip_exactly():
    for us in (0, 1, 1_798_761_600_000_001, 4_102_444_800_999_999):
        assert parse_stamp(stamp(us)) == us
    assert stamp(1_798_761_600_000_001) == "2027-01-01T00:00:00.000001+00:00"
    assert stamp(10) < stamp(9_999_999)  # text order is time order
    assert micros(sum([1e-6] * 6)) == 6  # to whole microseconds, rounded (not cut)
    arms, counts, digest = pack_runs(np.array([2, 0, 1]), np.array([5, 1, 3]))
    a, c = unpack_runs(arms, counts)
    assert a.tolist() == [2, 0, 1] and c.tolist() == [5, 1, 3]
    assert digest != pack_runs(np.array([2, 0, 1]), np.array([5, 1, 4]))[2]
    with pytest.raises(ValueError, match="counts >= 1"):
        unpack_runs(arms, np.array([5, 0, 3], dtype="<i8").tobytes())


def test_the_location_is_checked_and_a_store_deleted_whole(tmp_path):
    with pytest.raises(ExperimentError, match="name"):
        check_location(tmp_path / "x.sqlite", "x")  # a file holds one experiment
    s = Setup(tmp_path)
    path = s.store.path
    s.close()
    leftovers = [path.with_name(path.name + suffix) for suffix in ("-wal", "-shm")]
    for leftover in leftovers:
        leftover.touch()
    delete_store(path, None)
    assert not path.exists() and not any(p.exists() for p in leftovers)
