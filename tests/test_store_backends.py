"""The experiment's store on both backends (banditkit.live.store): the guarantees of
docs/experiment.md that rest on the backend — a killed writer leaves nothing half-written and
holds no lock, concurrent writers hand out every slot once, a read-only open cannot write —
and the PostgreSQL locations: URLs (TCP and libpq's socket form), ``name=``, listing.

The other guarantees run on both backends through the ``where`` fixture in
tests/test_experiment.py (decisions of a simulation, replay-checked reopen, kill -9 during
random calls, two processes driving one experiment) and the tests beside it."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from banditkit import Experiment, ExperimentError
from banditkit.live.errors import ExperimentExists, ExperimentNotFound
from banditkit.live.store import experiment_exists, list_experiments

HERE = Path(__file__).parent

_ARGS = dict(algorithm="ReplicableElimination", arms=["a", "b", "c"], seed=4, horizon=10**6,
             params={"rho": 0.05})


def _python(code: str, *args: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), *sys.path])}
    return subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


# A child that assigns units in calls of 1..9 until it has CALLS calls, printing each call's
# [unit, arm index] pairs as JSON once the call has returned.
_ASSIGNER = """
import json, sys
import numpy as np
from live_support import Where
where = Where(*json.loads(sys.argv[1]))
rng = np.random.default_rng(int(sys.argv[2]))
with where.open() as exp:
    for _ in range(int(sys.argv[3])):
        frame = exp.assign(int(rng.integers(1, 10)))
        print(json.dumps(frame[["unit", "arm_index"]].values.tolist()), flush=True)
"""


def test_concurrent_writers_hand_out_every_slot_once(where):
    """Two processes assign from one batch at the same time: no slot twice, none lost, and
    every unit a call returned is stored with the arm the call returned (the write lock
    serialises them)."""
    with where.create(**_ARGS) as exp:
        size = exp.status().batch_unassigned
    children = [_python(_ASSIGNER, json.dumps([where.target, where.name]), str(seed), "60")
                for seed in (1, 2)]
    returned: dict[int, int] = {}
    told = 0
    for child in children:
        out, err = child.communicate(timeout=300)
        assert child.returncode == 0, err
        pairs = [pair for line in out.splitlines() for pair in json.loads(line)]
        returned.update(pairs)
        told += len(pairs)
        assert len(pairs) > 60  # 60 calls of at least one unit
    assert told == len(returned)  # no unit told to both
    conn = where.connect()
    rows = conn.execute("SELECT id, batch, slot, arm FROM units").fetchall()
    conn.close()
    assert {r[0]: r[3] for r in rows} == returned  # nothing lost or extra, the arms told
    slots = [r[2] for r in rows]
    assert {r[1] for r in rows} == {0} and size > len(rows)  # all in the first batch
    assert len(slots) == len(set(slots))  # each slot once
    with where.open(readonly=True) as exp:  # the batch's cursor agrees with the units
        assert exp.status().batch_unassigned == size - len(rows)


# A child that records rewards for UNITS with the batch-completing observation held up: it
# prints "inside" from within the record's transaction (its rows written, not committed), then
# waits to be killed.
_STALLED_RECORD = """
import json, sys, time
from banditkit.live.experiment import Experiment
from live_support import Where
where = Where(*json.loads(sys.argv[1]))
def stall(self, conn):
    print("inside", flush=True)
    time.sleep(600)
Experiment._observe_if_complete = stall
with where.open() as exp:
    exp.record(json.loads(sys.argv[2]), [1.0] * len(json.loads(sys.argv[2])))
"""


def test_kill_9_inside_a_write_leaves_nothing_of_it_and_no_lock(where):
    with where.create(**{**_ARGS, "horizon": 1000, "params": {"rho": 0.3}}) as exp:
        units = exp.assign(6)["unit"].tolist()
        exp.record(units[:2], [0.0, 1.0])
    child = _python(_STALLED_RECORD, json.dumps([where.target, where.name]),
                    json.dumps(units[2:]))
    ready, _, _ = select.select([child.stdout], [], [], 120)
    assert ready and child.stdout.readline() == "inside\n", child.stderr.read()
    child.send_signal(signal.SIGKILL)  # mid-transaction, holding the write lock
    child.communicate()
    with where.open() as exp:  # the lock is gone with the process: this writes at once
        frame = exp.units()
        assert frame["reward"].notna().sum() == 2  # the killed call's rewards are not there
        assert exp.status().arms["recorded"].sum() == 2
        assert exp.record(units[2:], [1.0] * 4) == 4  # and the same call goes through now
        assert exp.verify() == 6


def test_a_read_only_open_cannot_write_even_behind_the_experiments_back(where):
    with where.create(**_ARGS) as exp:
        exp.assign(3)
    with where.open(readonly=True) as exp:
        for call in (lambda: exp.assign(1), lambda: exp.record([1], [1.0]),
                     lambda: exp.expire(older_than=0), exp.resume):
            with pytest.raises(ExperimentError, match="opened read-only"):
                call()
        assert len(exp.units()) == 3 and exp.verify() == 3
        # the backend itself refuses a write on the read-only connection
        with pytest.raises(exp._journal.errors), exp._journal.transaction() as conn:
            conn.execute("DELETE FROM units")
    with where.open() as exp:
        assert len(exp.units()) == 3


def test_urls_tcp_and_socket_forms_reach_one_experiment(postgres_server, pg_url):
    socket_url = pg_url.replace(f"@127.0.0.1:{postgres_server.port}/", "@/") + (
        f"?host={postgres_server.socket_dir}&port={postgres_server.port}")
    assert list_experiments(pg_url) == []
    with Experiment.create(socket_url, name="ab-test.1", **_ARGS) as exp:
        assert (exp.path, exp.name) == (None, "ab-test.1") and exp.url == socket_url
        first = exp.assign(4)
    with Experiment.open(pg_url, name="ab-test.1") as exp:
        assert exp.units()["unit"].tolist() == first["unit"].tolist()
        assert exp.assign(2)["unit"].tolist() == [5, 6]
        state = exp.status()  # counts are ints, as on SQLite (a sum of BIGINTs is NUMERIC)
        assert type(state.batch_pending) is int and type(state.batch_unassigned) is int
        assert state.batch_pending == state.batch_unassigned + 6
    Experiment.create(pg_url, name="other", **_ARGS).close()
    assert list_experiments(socket_url) == ["ab-test.1", "other"]
    assert experiment_exists(pg_url, "other") and not experiment_exists(pg_url, "nope")
    with pytest.raises(ExperimentExists, match="named 'other' already exists"):
        Experiment.create(pg_url, name="other", **_ARGS)
    with pytest.raises(ExperimentNotFound, match="no experiment named 'nope'"):
        Experiment.open(pg_url, name="nope")
    with pytest.raises(ExperimentError, match="cannot connect to 'postgresql://"):
        Experiment.open(pg_url.rsplit("/", 1)[0] + "/no_such_db", name="x")


@pytest.mark.parametrize("form", ["authority", "query"])
def test_a_password_never_reaches_a_message(postgres_server, form):
    url = (f"postgresql://postgres:s3cret@127.0.0.1:{postgres_server.port}/no_such_db"
           if form == "authority" else
           f"postgresql://postgres@127.0.0.1:{postgres_server.port}/no_such_db?password=s3cret")
    with pytest.raises(ExperimentError) as error:
        Experiment.open(url, name="x")
    assert "s3cret" not in str(error.value) and "***" in str(error.value)


@pytest.mark.parametrize("location, name, match", [
    ("URL", None, r"^name is required with a postgresql:// URL"),
    ("URL", "", r"^name must be 1 to 60 letters"),
    ("URL", "a/b", r"^name must be 1 to 60 letters"),
    ("URL", ".hidden", r"^name must be 1 to 60 letters"),
    ("URL", "x" * 61, r"^name must be 1 to 60 letters"),
    ("URL", 7, r"^name must be 1 to 60 letters"),
    ("PATH", "ab", r"^name chooses an experiment in a PostgreSQL database .* omit name"),
])
def test_name_is_required_with_a_url_and_refused_with_a_path(tmp_path, pg_url, location, name,
                                                             match):
    target = pg_url if location == "URL" else str(tmp_path / "e.sqlite")
    for call in (lambda: Experiment.create(target, name=name, **_ARGS),
                 lambda: Experiment.open(target, name=name)):
        with pytest.raises(ExperimentError, match=match):
            call()
    assert list_experiments(pg_url) == [] and list(tmp_path.iterdir()) == []


def test_an_experiment_dropped_while_open_is_refused(where):
    exp = where.create(**_ARGS)
    exp.assign(2)
    if where.name is None:
        os.remove(where.target)
    else:  # drop its schema, then create another experiment of that name
        conn = where.connect()
        conn.execute(f'DROP SCHEMA "bk_{where.name}" CASCADE')
        conn.commit()
        conn.close()
        with pytest.raises(ExperimentError, match="deleted"):
            exp.assign(2)
        where.create(**_ARGS).close()
    with pytest.raises(ExperimentError, match="deleted"):
        exp.assign(2)
    exp.close()


def test_psycopg_is_imported_only_for_a_url(tmp_path):
    code = ("import sys\nfrom banditkit import Experiment\n"
            f"Experiment.create({str(tmp_path / 'e.sqlite')!r}, algorithm='UCB1', "
            "arms=['a', 'b'], seed=0).assign(1)\n"
            "print('psycopg' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "False"


def test_a_connection_lost_between_calls_is_opened_again(pg_experiment, monkeypatch):
    """The server dropped the experiment's connection (a restart, an idle timeout): the next
    call, of which nothing had run, reconnects and goes on; the experiment is intact."""
    import psycopg

    from banditkit.live.store import postgres as postgres_store

    # the experiment's own connection, not a pool a service test of this process left for
    # the same URL (pooled connections are borrowed per call)
    monkeypatch.setattr(postgres_store, "_POOLS", {})
    url, name = pg_experiment
    with Experiment.create(url, name=name, **_ARGS) as exp:
        first = exp.assign(3)
        with psycopg.connect(url, autocommit=True) as admin:
            (gone,) = admin.execute("SELECT pg_terminate_backend(%s)",
                                    (exp._journal.conn.info.backend_pid,)).fetchone()
        assert gone
        again = exp.assign(2)
        assert again["unit"].tolist() == [int(first["unit"].max()) + 1,
                                          int(first["unit"].max()) + 2]
        assert exp.verify() == 5
