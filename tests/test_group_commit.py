"""Group commit (``Experiment.group_commit`` and the service's worker, service/catalog.py): the
calls waiting for one experiment run as savepoints of one transaction, committed once; each
call is still everything-or-nothing with its own answer, none is answered before the commit, and
a group that cannot commit leaves nothing. On both stores (the ``where`` fixture)."""

from __future__ import annotations

import threading
from concurrent.futures import Future
from pathlib import Path

import numpy as np
import pytest

from banditkit import ExperimentError

DEFINITION = {"algorithm": "ReplicableElimination", "arms": ["a", "b", "c"], "seed": 3,
              "horizon": 10_000, "params": {"rho": 0.3}}


class Abort(BaseException):
    """Not an Exception: the worker does not treat it as one call's own mistake."""


def _units(where) -> int:
    with where.open(readonly=True) as exp:
        return len(exp.units())


def test_a_failing_call_inside_a_group_is_rolled_back_alone(where):
    with where.create(**DEFINITION) as exp:
        with exp.group_commit():
            first = exp.assign(4)
            with pytest.raises(ExperimentError, match="never assigned"):
                exp.record([10_000], [1.0])
            store = exp._journal
            # a call that fails after writing: its savepoint is rolled back, the rest kept
            with pytest.raises(RuntimeError), store.transaction() as conn:
                conn.execute("INSERT INTO meta (key, value) VALUES ('half-written', '1')")
                raise RuntimeError("fails after a write")
            exp.record(first["unit"], [1.0, 0.0, 1.0, 0.0])
            second = exp.assign(2)
            assert _units(where) == 0  # nothing committed before the block ends
        assert _units(where) == 6
        assert list(exp.units()["unit"]) == [*first["unit"], *second["unit"]]
        assert "half-written" not in exp._journal.meta()


def test_a_group_that_does_not_commit_leaves_nothing_and_the_experiment_recovers(where):
    # overflow off: assign(10**6) is the first batch's slots alone
    with where.create(**DEFINITION, overflow="off") as exp:
        with pytest.raises(Abort), exp.group_commit():
            batch = exp.assign(10**6)  # the whole first batch, answered: the algorithm moves on
            exp.record(batch["unit"], np.ones(len(batch)))
            assert exp.status().pulls_observed == len(batch)
            raise Abort
        assert _units(where) == 0
        # the in-memory algorithm was rebuilt from the store: batch 0 again, nothing observed
        assert exp.status().pulls_observed == 0
        units = exp.assign(10**6)
        assert set(units["batch"]) == {0} and len(units) == len(batch)
        with where.open(readonly=True) as again:
            assert again.units()["unit"].tolist() == units["unit"].tolist()


def _catalog(where, tmp_path: Path):
    if where.name is None:
        from banditkit.service.folder import ExperimentFolder

        folder = ExperimentFolder(tmp_path / "exps")
        return folder, "e"
    from banditkit.service.database import ExperimentDatabase

    return ExperimentDatabase(where.target), where.name


def test_the_worker_commits_waiting_calls_together_and_answers_after_the_commit(where,
                                                                               tmp_path):
    (tmp_path / "exps").mkdir()
    catalog, name = _catalog(where, tmp_path)
    try:
        catalog.submit(lambda: catalog.create(name, **DEFINITION)).result()
        gate = threading.Event()
        blocker = catalog.submit(gate.wait)  # the worker is busy: the calls below queue up
        assigns = [catalog.submit_call(name, lambda e: e.assign(2)) for _ in range(3)]
        refused = catalog.submit_call(name, lambda e: e.record([999], [1.0]))

        def abort_later(e):
            raise Abort

        gate.set()
        blocker.result()
        units = [f.result(timeout=60) for f in assigns]
        with pytest.raises(ExperimentError, match="never assigned"):
            refused.result(timeout=60)
        ids = np.concatenate([u["unit"].to_numpy() for u in units])
        assert len(set(ids.tolist())) == 6

        # a group whose commit does not happen answers every call with that failure, and
        # none of its calls is stored, although each of the assigns succeeded on its own
        gate.clear()
        blocker = catalog.submit(gate.wait)
        doomed = [catalog.submit_call(name, lambda e: e.assign(1)) for _ in range(2)]
        doomed.append(catalog.submit_call(name, abort_later))
        gate.set()
        for future in doomed:
            with pytest.raises(Abort):
                future.result(timeout=60)
        after = catalog.submit_call(name, lambda e: e.units()).result(timeout=60)
        assert sorted(after["unit"].tolist()) == sorted(ids.tolist())
    finally:
        catalog.close()


def test_a_cancelled_request_is_not_run(tmp_path):
    from banditkit.service.folder import ExperimentFolder

    (tmp_path / "exps").mkdir()
    catalog = ExperimentFolder(tmp_path / "exps")
    try:
        catalog.submit(lambda: catalog.create("e", **DEFINITION)).result()
        gate = threading.Event()
        blocker = catalog.submit(gate.wait)
        kept = catalog.submit_call("e", lambda e: e.assign(2))
        dropped: Future = catalog.submit_call("e", lambda e: e.assign(5))
        assert dropped.cancel()  # a client that went away before its turn
        gate.set()
        blocker.result()
        assert len(kept.result(timeout=60)) == 2
        assert catalog.submit_call("e", lambda e: len(e.units())).result(timeout=60) == 2
    finally:
        catalog.close()
