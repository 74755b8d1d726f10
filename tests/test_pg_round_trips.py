"""Round trips to PostgreSQL per call (issue 26 §5: at most 4 per assign and per record; they
were 9 and 7 statements, 12 to 15 round trips on the wire), counted on the wire by a relay
between the experiment and a real server (tests/roundtrip_proxy.py), with the experiment's own
connection and with the service's pool; and what the read-ahead and the pipeline must never
change: what a call reads after its own writes, and the call's all-or-nothing."""

from __future__ import annotations

import pytest

import banditkit.live.store.postgres as ps
from banditkit import Experiment, ExperimentError
from roundtrip_proxy import RoundTripProxy

LIMIT = 4


@pytest.fixture
def proxy(postgres_server):
    with RoundTripProxy("127.0.0.1", postgres_server.port) as relay:
        yield relay


def _calls(e: Experiment, proxy: RoundTripProxy, n: int, keyed: bool, i: int
           ) -> tuple[int, int]:
    before = proxy.count
    units = (e.assign(keys=[f"u{i}_{n}_{j}" for j in range(n)]) if keyed else e.assign(n))
    assigned = proxy.count - before
    assert len(units) == n
    before = proxy.count
    assert e.record(units["unit"].tolist(), [float((i + j) % 2) for j in range(n)]) == n
    return assigned, proxy.count - before


@pytest.mark.parametrize("pooled", [False, True], ids=["own", "pool"])
@pytest.mark.parametrize("algorithm,params", [
    ("ReplicableElimination", {"rho": 0.3, "beta": 3}),  # long batches: slots
    ("UCB1", {}),  # a batch per pull: a new batch stored by most assigns, then overflow
])
def test_assign_and_record_take_at_most_four_round_trips(postgres_server, proxy, pooled,
                                                         algorithm, params):
    url = proxy.url(postgres_server.url())
    name = postgres_server.new_name("rt")
    if pooled:
        ps.use_pool(url, 2)
    try:
        Experiment.create(url, name=name, algorithm=algorithm, arms=["a", "b", "c"], seed=3,
                          horizon=100_000, params=params).close()
        with Experiment.open(url, name=name) as e:
            _calls(e, proxy, 1, False, 0)  # the first call replays and checks the batch
            seen = []
            for i in range(1, 9):
                for n, keyed in ((1, False), (1, True), (50, False), (20, True)):
                    assigned, recorded = _calls(e, proxy, n, keyed, i)
                    seen.append((n, keyed, assigned, recorded))
            e.verify()  # the running totals and the resolved prefix agree with the units
        worst = max(max(a, r) for *_, a, r in seen)
        assert worst <= LIMIT, seen
        # the plain steady-state call is the one the service makes most: 3 each (the
        # plug-in's sums catch up from a read sent with the first round trip)
        assert {(a, r) for n, keyed, a, r in seen if n == 1 and not keyed} == {(3, 3)}, seen
    finally:
        if pooled:
            ps._POOLS.pop(url).close()


def _expire_and_reassign(location: str, name: str | None) -> tuple[list, list, list]:
    clock = [1_000.0]
    Experiment.create(location, name=name, algorithm="ReplicableElimination", arms=["a", "b"],
                      seed=5, horizon=10_000, params={"rho": 0.3, "beta": 3},
                      outcome_window=60, missing="expire", clock=lambda: clock[0]).close()
    with Experiment.open(location, name=name, clock=lambda: clock[0]) as e:
        first = e.assign(4)["unit"].tolist()
        e.assign(1)  # a call that reads ahead, with nothing to expire yet
        clock[0] += 61  # the 5 units' windows close: the next call expires them first
        again = e.assign(4)
        units = e.units().set_index("unit")
        assert units.loc[first, "expired_at"].notna().all()
        e.verify()  # the running totals and the prefix agree with the units (or it raises)
        return (sorted(units.loc[first, "slot"]), units.loc[again["unit"], "slot"].tolist(),
                again["arm"].tolist())


def test_a_read_ahead_never_answers_after_the_call_wrote_its_table(postgres_server, proxy,
                                                                     tmp_path):
    """assign reads the pending batch's re-offered slots ahead, with the lock; the outcome
    window's rule ``missing="expire"`` then expires units in the same call, which frees their
    slots: the answer read ahead is stale and must not be used. The expired units' slots go
    out again at once, in slot order, exactly as on SQLite (which reads nothing ahead)."""
    url = proxy.url(postgres_server.url())
    expired, reoffered, arms = _expire_and_reassign(url, postgres_server.new_name("rt"))
    assert reoffered == expired
    assert (expired, reoffered, arms) == _expire_and_reassign(str(tmp_path / "e.sqlite"), None)


def test_a_refused_record_changes_nothing_and_the_next_call_goes_on(postgres_server, proxy):
    """A record the experiment refuses inside its pipelined transaction (a unit never
    assigned among good ones): nothing of it stays, and the connection serves the next
    call."""
    url = proxy.url(postgres_server.url())
    name = postgres_server.new_name("rt")
    Experiment.create(url, name=name, algorithm="ReplicableElimination", arms=["a", "b"],
                      seed=5, horizon=10_000, params={"rho": 0.3, "beta": 3}).close()
    with Experiment.open(url, name=name) as e:
        units = e.assign(3)["unit"].tolist()
        with pytest.raises(ExperimentError, match="never assigned"):
            e.record([*units, 10**9], [1.0, 0.0, 1.0, 1.0])
        assert e.units()["reward"].isna().all()
        assert e.record(units, [1.0, 0.0, 1.0]) == 3
        e.verify()
    with Experiment.open(postgres_server.url(), name=name, readonly=True) as r:
        assert r.units()["reward"].tolist() == [1.0, 0.0, 1.0]


def _refuse_half_rewards(url: str, name: str) -> None:
    """Triggers that fail the UPDATE of a unit given reward 0.5 (a write followed by reads in
    its call) and the INSERT of the key 'refused' (among the last writes of an assign, after
    its last read): writes the server refuses after the pipeline sent them on without waiting
    (as a full disk or a constraint would)."""
    import psycopg

    schema = ps._quoted(ps.schema_name(name))
    with psycopg.connect(url, autocommit=True) as conn:
        for table, condition in (("units", "NEW.reward = 0.5"), ("keys", "NEW.key = 'refused'")):
            conn.execute(f"CREATE FUNCTION {schema}.refuse_{table}() RETURNS trigger AS $$ "
                         f"BEGIN IF {condition} THEN RAISE EXCEPTION 'refused by the test'; "
                         "END IF; RETURN NEW; END $$ LANGUAGE plpgsql")
            event = "UPDATE" if table == "units" else "INSERT"
            conn.execute(f"CREATE TRIGGER refuse BEFORE {event} ON {schema}.{table} FOR EACH "
                         f"ROW EXECUTE FUNCTION {schema}.refuse_{table}()")


def test_a_write_refused_by_the_server_fails_its_call_alone(postgres_server):
    """The pipeline sends writes without waiting: an error of one is found at the call's next
    read or at its COMMIT. The call fails and keeps nothing; in a group (the service's group
    commit) the calls before and after it keep theirs — each call's statements are confirmed
    before it counts as done, so a later call never rolls back an earlier one."""
    url, name = postgres_server.url(), postgres_server.new_name("rt")
    Experiment.create(url, name=name, algorithm="ReplicableElimination", arms=["a", "b"],
                      seed=5, horizon=10_000, params={"rho": 0.3, "beta": 3}).close()
    _refuse_half_rewards(url, name)
    with Experiment.open(url, name=name) as e:
        u = e.assign(5)["unit"].tolist()
        with pytest.raises(ExperimentError, match="refused by the test"):
            e.record([u[0]], [0.5])
        assert e.record([u[0]], [1.0]) == 1
        with e.group_commit():
            assert e.record([u[1]], [0.0]) == 1
            with pytest.raises(ExperimentError, match="refused by the test"):
                e.record([u[2]], [0.5])
            assert e.record([u[3]], [1.0]) == 1
        # the last writes of a call (its keys), refused: alone, then between two calls of
        # a group
        with pytest.raises(ExperimentError, match="refused by the test"):
            e.assign(keys=["refused"])
        with e.group_commit():
            assert e.assign(keys=["k1"])["key"].tolist() == ["k1"]
            with pytest.raises(ExperimentError, match="refused by the test"):
                e.assign(keys=["refused"])
            assert e.assign(keys=["k3"])["key"].tolist() == ["k3"]
        e.verify()
    with Experiment.open(url, name=name, readonly=True) as r:
        rewards = r.units().set_index("unit")["reward"]
        assert rewards.loc[[u[0], u[1], u[3]]].tolist() == [1.0, 0.0, 1.0]
        assert rewards.loc[[u[2], u[4]]].isna().all()
        keys = r.units()["key"].dropna().tolist()
        assert sorted(keys) == ["k1", "k3"]
