"""Plain assigns served together (``Experiment.assign_many``, the catalog's groups) hand out
exactly the units the same calls would get one after another, or nothing; and the writer's
answers reach the event loop with the queue timeout kept (``service/answers.py``)."""

from __future__ import annotations

import asyncio
import threading
import time

import numpy as np
import pytest

from banditkit import Experiment, ExperimentError
from banditkit.service.answers import Answers
from banditkit.service.catalog import Busy, _Job
from banditkit.service.folder import ExperimentFolder

DEFINITION = {"algorithm": "ReplicableElimination", "arms": ["a", "b", "c"], "seed": 4,
              "horizon": 3000, "params": {"rho": 0.3, "beta": 3}}


def _units(assignments):
    return [(a.unit, a.arm_index, a.batch, a.reason, a.overflow_units) for a in assignments]


@pytest.mark.parametrize("order", ["shuffled", "batch"])
def test_assign_many_gives_each_call_the_units_it_gets_alone(tmp_path, order):
    counts = [1, 3, 2, 1, 4]
    with Experiment.create(tmp_path / "one.sqlite", order=order, **DEFINITION) as one, \
            Experiment.create(tmp_path / "many.sqlite", order=order, **DEFINITION) as many:
        for exp in (one, many):  # expired units first: their slots are offered again first
            first = exp.assign(5)
            exp.record(first["unit"][:2], [1.0, 0.0])
            exp.expire(first["unit"][2:4].tolist())
        alone = [one.assign_rows(n) for n in counts]
        together = many.assign_many(counts)
        assert together is not None
        assert _units(together) == _units(alone)
        assert [len(a) for a in together] == counts
        assert all(a.reason is None and a.overflow_units == [] for a in together)
        # the stores agree unit for unit, and the running totals with them
        columns = ["unit", "batch", "slot", "arm", "kind"]
        a, b = one.units(), many.units()
        assert a[columns].equals(b[columns])
        assert a["expired_at"].isna().equals(b["expired_at"].isna())
        assert one.status().arms.equals(many.status().arms)


def test_assign_many_assigns_nothing_when_a_call_would_not_get_slots_alone(tmp_path):
    with Experiment.create(tmp_path / "e.sqlite", **DEFINITION) as exp:
        size = len(exp.assign(1)) + exp.status().batch_unassigned  # the first batch's slots
        exp.assign(size - 4)  # 3 slots left
        before = len(exp.units())
        assert exp.assign_many([2, 2]) is None  # the second call would get overflow units
        assert len(exp.units()) == before
        assert _units(exp.assign_many([2, 1]) or []) != []  # exactly the slots left: served
        exp.pause("by hand for the test")
        assert exp.assign_many([1]) is None
        with pytest.raises(ExperimentError, match="n must be an integer >= 1"):
            exp.assign_many([1, 0])


def _catalog_group(catalog: ExperimentFolder, jobs: list[_Job]) -> list:
    """Run ``jobs`` as one group on the catalog's worker, as its queue would."""
    def group() -> list:
        for job in jobs:
            job.future.set_running_or_notify_cancel()
        catalog._run(jobs)
        return [job.future.exception() or job.future.result() for job in jobs]
    return catalog.submit(group).result()


def _plain(n):
    return _Job("e", lambda e, n=n: e.assign_rows(n).records(), assign=n,
                answer=lambda units: units.records())


def test_a_group_of_assigns_answers_each_as_alone_and_falls_back_at_a_batch_end(tmp_path):
    twin = Experiment.create(tmp_path / "twin.sqlite", **DEFINITION)
    (tmp_path / "folder").mkdir()
    catalog = ExperimentFolder(tmp_path / "folder")
    try:
        catalog.submit(lambda: catalog.create("e", **DEFINITION, who="test")).result()
        size = len(twin.assign(1)) + twin.status().batch_unassigned
        twin.record(twin.units()["unit"].tolist(), [1.0])
        catalog.submit_call("e", lambda e: e.record(e.assign(1)["unit"], [1.0])).result()
        # 5 groups of 7 calls: one of them crosses the end of the first batch (overflow units,
        # one call at a time then), and a call with n = 0 gets its own error in its group
        counts = [1, 2, 1, 3, 1, 1, 2] * 5
        overflow = 0
        for start in range(0, len(counts), 7):
            wanted = counts[start:start + 7]
            got = _catalog_group(catalog, [_plain(n) for n in wanted] + [_plain(0)])
            alone = [twin.assign_rows(n) for n in wanted]
            assert got[:-1] == [a.records() for a in alone]
            assert isinstance(got[-1], ExperimentError) and "n must be" in str(got[-1])
            overflow += sum(len(a.overflow_units) for a in alone)
        assert sum(counts) + 1 > size and overflow > 0  # the run did cross the batch's end
    finally:
        twin.close()
        catalog.close()


def test_answers_keep_the_queue_timeout_and_wait_for_a_started_call(tmp_path):
    catalog = ExperimentFolder(tmp_path)
    release, ran = threading.Event(), []
    try:
        async def scenario() -> tuple:
            answers = Answers()
            blocker = catalog.submit(lambda: (release.wait(5) and time.sleep(0.3)) or "slow")
            queued = catalog.submit(lambda: ran.append(1) or "ran")
            with pytest.raises(Busy, match="did not reach the call"):
                await answers.wait(queued, 0.2, lambda: Busy("did not reach the call"))
            release.set()  # the blocker started long ago: it is waited for past the timeout
            slow = await answers.wait(blocker, 0.05, lambda: Busy("wrongly refused"))
            many = [catalog.submit(lambda i=i: i * i) for i in range(20)]
            return slow, await asyncio.gather(*(answers.wait(f, 5, Busy) for f in many))

        slow, squares = asyncio.run(scenario())
        assert slow == "slow" and squares == [i * i for i in range(20)]
        catalog.submit(lambda: None).result()
        assert ran == []  # the cancelled call never ran
    finally:
        release.set()
        catalog.close()


def test_assign_many_refuses_a_read_only_experiment(tmp_path):
    Experiment.create(tmp_path / "e.sqlite", **DEFINITION).close()
    with Experiment.open(tmp_path / "e.sqlite", readonly=True) as exp, \
            pytest.raises(ExperimentError, match="read-only"):
        exp.assign_many([1])


def test_record_many_counts_each_call_as_alone_and_refuses_all_or_nothing(tmp_path):
    with Experiment.create(tmp_path / "one.sqlite", **DEFINITION) as one, \
            Experiment.create(tmp_path / "many.sqlite", **DEFINITION) as many:
        for exp in (one, many):
            exp.assign(30)  # the first batch (18 slots) and 12 overflow units
            exp.record([1, 2], [1.0, 0.0])
        # unit 2 again with its reward (a retried call: counts 0), the rest of the batch,
        # which completes it, and overflow units
        calls = [([2, 3], [0.0, 1.0]), ([4, 5, 6], [1.0, 1.0, 0.0]),
                 (list(range(7, 19)), [0.0] * 12), ([19, 25], [1.0, 0.0])]
        alone = [one.record(units, rewards) for units, rewards in calls]
        assert many.record_many(calls) == alone == [1, 3, 12, 2]
        assert one.status().batches_observed == many.status().batches_observed == 1
        assert one.status().arms.equals(many.status().arms)
        columns = ["unit", "batch", "arm", "reward"]
        assert one.units()[columns].equals(many.units()[columns])
        before = many.units()["reward"].notna().sum()
        for bad in ([([26], [1.0]), ([999], [1.0])],  # a unit never assigned
                    [([26], [1.0]), ([26, 27], [1.0, 0.0])],  # a unit in two calls
                    [([26], [1.0]), ([27], [2.0])],  # a reward out of range
                    # refused alone (not integer ids, text), though numpy would read them
                    # as integers joined with the others
                    [([26], [1.0]), ([True], [1.0])], [([26], [1.0]), ([27], ["1"])],
                    [([26], [1.0]), ([], [])]):  # no unit
            with pytest.raises(ExperimentError):
                many.record_many(bad)
            assert many.units()["reward"].notna().sum() == before  # nothing recorded
        # booleans and integers as rewards, numpy ids (checked call by call): as alone
        calls = [([26, 27], [True, 0]), (np.array([28, 29]), [1.0, 0.0]), ([30], [1])]
        alone = [one.record(units, rewards) for units, rewards in calls]
        assert many.record_many(calls) == alone == [2, 2, 1]
        assert one.units()[columns].equals(many.units()[columns])


def test_a_group_of_records_answers_each_and_a_refused_one_alone(tmp_path):
    (tmp_path / "folder").mkdir()
    catalog = ExperimentFolder(tmp_path / "folder")
    try:
        catalog.submit(lambda: catalog.create("e", **DEFINITION, who="test")).result()
        catalog.submit_call("e", lambda e: e.assign(10)).result()

        def plain(units, rewards):
            return _Job("e", lambda e: e.record(units, rewards), record=(units, rewards))

        got = _catalog_group(catalog, [plain([1, 2], [1.0, 0.0]), plain([3], [1.0]),
                                       plain([999], [1.0]), plain([2, 4], [0.0, 1.0])])
        assert got[:2] == [2, 1] and got[3] == 1
        assert isinstance(got[2], ExperimentError) and "999" in str(got[2])
        units = catalog.submit_call("e", lambda e: e.units()).result()
        assert units["reward"].notna().sum() == 4
    finally:
        catalog.close()


def test_the_service_answer_from_plain_lists_equals_the_frames_records(tmp_path):
    """``Assignment.records()`` (what ``POST .../assign`` answers) is the records of the
    DataFrame ``assign`` returns, field for field, with and without keys, and when closed."""
    from banditkit.service.jsonable import frame_records

    with Experiment.create(tmp_path / "e.sqlite", **DEFINITION) as exp:
        cases = [exp.assign_rows(3), exp.assign_rows(keys=["u1", 7, "u1x"]),
                 exp.assign_rows(keys=["u1", "new"]), exp.assign_rows(30)]
        exp.pause("by hand for the test")
        cases += [exp.assign_rows(2), exp.assign_rows(keys=["u2"])]
        for case in cases:
            frame = case.frame()
            assert case.records() == frame_records(frame)
            assert frame.attrs == {"reason": case.reason,
                                   "overflow_units": case.overflow_units}
        assert cases[2].records()[0]["repeated"] is True and cases[3].overflow_units
        assert cases[4].records() == [] and "paused" in cases[4].reason
