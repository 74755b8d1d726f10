"""``banditkit serve``: a real server on 127.0.0.1 driven by real HTTP requests, on a folder of
SQLite files and on a PostgreSQL database (the suite's own server, tests/postgres_support.py).
The API's round trip ends with the decisions of ``simulate`` on the same rewards (through two
server processes on one store); every bad request gets the same one-line JSON error with its
status code on both backends and changes nothing; servers killed with SIGKILL mid-load (one on
SQLite, two on one PostgreSQL database) lose no call that returned and count none twice."""

from __future__ import annotations

import dataclasses
import json
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from banditkit import simulate
from banditkit.live import ExperimentStatus
from banditkit.live.journal.defaults import params_in_force
from banditkit.registry import make_policy
from banditkit.rng import as_generator
from live_support import TableBandit, Where, check_consistent, reward_table, unit_rewards
from service_support import Server, call

TOKEN = "s3cret-long-enough"
MEANS = [0.2, 0.5, 0.8]
DEFINITION = {"algorithm": "ReplicableElimination", "arms": ["a", "b", "c"], "seed": 3,
              "horizon": 3000, "params": {"rho": 0.3, "beta": 3},
              # these tests drive the algorithm's slots alone (with overflow:
              # tests/test_service_ops.py)
              "overflow": "off"}


@dataclass(frozen=True)
class Store:
    """Where a server keeps its experiments: ``db`` is what ``banditkit serve --db`` takes (a
    folder, or a ``postgresql://`` URL of a database of this test's own)."""

    db: str
    backend: str

    def where(self, name: str) -> Where:
        if self.backend == "sqlite":
            return Where(str(Path(self.db) / f"{name}.sqlite"))
        return Where(self.db, name)

    def names(self) -> list[str]:
        """The experiments stored, read behind the server's back (for SQLite: every file of
        the folder, so a leftover temporary file shows too)."""
        if self.backend == "sqlite":
            return sorted(p.name for p in Path(self.db).iterdir())
        from banditkit.live.store import list_experiments

        return list_experiments(self.db)


def _store(backend: str, request: pytest.FixtureRequest, folder: Path) -> Store:
    if backend == "sqlite":
        return Store(str(folder), "sqlite")
    # a fresh database: GET /experiments lists this test's experiments only
    return Store(request.getfixturevalue("postgres_server").create_database(), "postgres")


@pytest.fixture(params=["sqlite", "postgres"])
def store(request, tmp_path) -> Store:
    return _store(request.param, request, tmp_path)


def _simulated():
    table = reward_table(MEANS)
    env = TableBandit(table)
    # the experiment runs with every parameter in force, live defaults included
    params = params_in_force(DEFINITION["algorithm"], DEFINITION["params"])[0]
    algo = make_policy(DEFINITION["algorithm"], env, as_generator(DEFINITION["seed"]),
                       horizon=DEFINITION["horizon"], **params)
    return simulate(algo, env, horizon=DEFINITION["horizon"], seed=0), table


def _drive(ports: list[int], path: Where, name: str, table: np.ndarray, seed: int,
           max_calls: int = 100_000, log: list[int] | None = None, token: str = TOKEN,
           adopt: bool = True) -> None:
    """Assign and record over HTTP in small random steps, each call to a random server, until
    the experiment finishes; units whose record call returned go to ``log``. ``adopt``: first
    answer every unit waiting for a reward (those of clients that died); clients started side
    by side must not, or two would answer one unit."""
    rng = np.random.default_rng(seed)
    waiting = []
    if adopt:
        status, units = call(ports[0], "GET", f"/experiments/{name}/units?limit=100000",
                             token=token)
        assert status == 200
        waiting = [u["unit"] for u in units["units"]
                   if u["reward"] is None and u["expired_at"] is None]
    stalled = 0
    for _ in range(max_calls):
        port = ports[int(rng.integers(len(ports)))]
        if rng.random() < 0.6 or not waiting:
            status, answer = call(port, "POST", f"/experiments/{name}/assign",
                                  {"n": int(rng.integers(1, 40))}, token=token)
            assert status == 200, answer
            new = [u["unit"] for u in answer["units"]]
            if not new and not waiting:
                status, state = call(port, "GET", f"/experiments/{name}/status", token=token)
                if state["finished"]:
                    return
                stalled += 1  # another client holds the batch's last units: let it answer
                assert stalled < 500, f"no unit to assign for 500 calls: {state}"
                time.sleep(0.01)
            else:
                stalled = 0
            waiting += new
        else:
            rng.shuffle(waiting)
            k = int(rng.integers(1, len(waiting) + 1))
            take, waiting = waiting[:k], waiting[k:]
            status, answer = call(port, "POST", f"/experiments/{name}/record",
                                  {"units": take, "rewards": unit_rewards(path, take, table)},
                                  token=token)
            assert answer == {"recorded": len(take)}, answer  # each unit new, counted once
            if log is not None:
                log.extend(take)
    raise AssertionError("the experiment did not finish")


def test_the_api_round_trip_through_two_servers_makes_the_decisions_of_simulate(store):
    trial, table = _simulated()
    servers = [Server(store.db, token=TOKEN, wait=False) for _ in range(2)]
    servers = [server.wait() for server in servers]
    try:
        ports = [s.port for s in servers]
        assert call(ports[0], "GET", "/health") == (200, {"status": "ok",
                                                          "banditkit": "0.1.0"})
        status, created = call(ports[0], "POST", "/experiments",
                               {"name": "ab", **DEFINITION}, token=TOKEN)
        assert (status, created) == (201, {"name": "ab", "algorithm": "ReplicableElimination",
                                           "arms": ["a", "b", "c"]})
        assert call(ports[1], "GET", "/experiments", token=TOKEN) == (200, {"experiments": ["ab"]})
        _drive(ports, store.where("ab"), "ab", table, seed=1)
        status, state = call(ports[1], "GET", "/experiments/ab/status", token=TOKEN)
        assert status == 200 and state["finished"]
        assert state["pulls_observed"] == trial.n_pulls
        assert sum(a["recorded"] for a in state["arms"]) == trial.n_pulls
        assert [a["arm"] for a in state["arms"]] == ["a", "b", "c"]
        # every field of ExperimentStatus is there, whatever others add to it
        assert {f.name for f in dataclasses.fields(ExperimentStatus)} <= set(state)
        _, units = call(ports[0], "GET", "/experiments/ab/units?limit=100000", token=TOKEN)
        assert len(units["units"]) == trial.n_pulls
        with store.where("ab").open() as exp:
            assert exp.decisions().same_as(trial.decisions)
        # once finished: no units, and why if the library says
        status, answer = call(ports[0], "POST", "/experiments/ab/assign", {"n": 5},
                              token=TOKEN)
        assert status == 200 and answer["units"] == []
        # the page to watch it, from either store (its content is checked in a browser by
        # tests/test_service_page.py)
        status, page = call(ports[1], "GET", "/experiments/ab", token=TOKEN)
        assert status == 200 and page.startswith("<!DOCTYPE html>") and "<svg" in page
        _, description = call(ports[0], "GET", "/openapi.json", token=TOKEN)
        assert description["openapi"].startswith("3.")
        assert {"/experiments", "/experiments/{name}/assign", "/experiments/{name}/record",
                "/experiments/{name}/status", "/health"} <= set(description["paths"])
        # the name rule it states is the one the server applies (1 to 60 characters)
        status_route = description["paths"]["/experiments/{name}/status"]
        pattern = status_route["parameters"][0]["schema"]["pattern"]
        assert re.fullmatch(pattern, "a" * 60) and not re.fullmatch(pattern, "a" * 61)
        assert not re.fullmatch(pattern, ".hidden") and "503" in status_route["get"]["responses"]
    finally:
        for server in servers:
            server.stop()
    check_consistent(store.where("ab"))


def test_a_linear_experiment_takes_features_as_a_list_of_lists(store):
    server = Server(store.db)
    try:
        status, created = call(server.port, "POST", "/experiments", {
            "name": "lin", "algorithm": "GBAI", "arms": ["x", "y", "z"], "seed": 1,
            "horizon": 150, "features": np.eye(3).tolist()})
        assert status == 201 and created["arms"] == ["x", "y", "z"], created
        status, answer = call(server.port, "POST", "/experiments/lin/assign", {"n": 4})
        assert status == 200 and {u["arm"] for u in answer["units"]} <= {"x", "y", "z"}
        # nothing recorded yet: means and intervals are null (JSON has no NaN)
        status, state = call(server.port, "GET", "/experiments/lin/status", token=TOKEN)
        assert status == 200 and all(a["mean"] is None and a["low"] is None
                                     for a in state["arms"])
        assert sum(a["assigned"] for a in state["arms"]) == len(answer["units"])
    finally:
        server.stop()
    with store.where("lin").open() as exp:
        assert exp.arm_names == ["x", "y", "z"]
        np.testing.assert_array_equal(exp._problem.X, np.eye(3))


@dataclass
class Served:
    port: int
    store: Store


@pytest.fixture(scope="module")
def served(request, tmp_path_factory):
    """On each backend, one server with a token and a small body limit, and one experiment with
    6 units assigned (units 1-3 recorded)."""
    started, servers = {}, []
    try:
        for backend in ("sqlite", "postgres"):
            store = _store(backend, request, tmp_path_factory.mktemp("served"))
            servers.append(Server(store.db, token=TOKEN, max_body=50_000))
            port = servers[-1].port
            assert call(port, "POST", "/experiments", {"name": "ab", **DEFINITION},
                        token=TOKEN)[0] == 201
            _, answer = call(port, "POST", "/experiments/ab/assign", {"n": 6}, token=TOKEN)
            assert len(answer["units"]) == 6
            assert call(port, "POST", "/experiments/ab/record",
                        {"units": [1, 2, 3], "rewards": [1, 0, 1]}, token=TOKEN) == (
                            200, {"recorded": 3})
            started[backend] = Served(port, store)
        yield started
    finally:
        for server in servers:
            server.stop()


def _snapshot(store: Store) -> tuple:
    """Everything a call could change, read behind the server's back."""
    conn = store.where("ab").connect()
    try:
        return (conn.execute("SELECT * FROM units ORDER BY id").fetchall(),
                conn.execute("SELECT * FROM batches ORDER BY id").fetchall(),
                conn.execute("SELECT * FROM keys ORDER BY unit").fetchall(),
                store.names())
    finally:
        conn.close()


NEW = {"name": "new", **DEFINITION}
# (what is wrong, method, path, JSON body or raw bytes, token, status, part of the message)
BAD = [
    ("malformed JSON", "POST", "/experiments/ab/record", b'{"units": [4', TOKEN, 400,
     "not valid JSON"),
    ("a JSON list, not an object", "POST", "/experiments/ab/assign", b"[1]", TOKEN, 400,
     "must be a JSON object"),
    ("NaN is not JSON", "POST", "/experiments/ab/record", b'{"units": [4], "rewards": [NaN]}',
     TOKEN, 400, "NaN is not a JSON number"),
    ("n as text", "POST", "/experiments/ab/assign", {"n": "3"}, TOKEN, 400,
     "n must be an integer >= 1"),
    ("n = 0", "POST", "/experiments/ab/assign", {"n": 0}, TOKEN, 400,
     "n must be an integer >= 1"),
    ("an unknown field", "POST", "/experiments/ab/assign", {"n": 1, "m": 2}, TOKEN, 400,
     "unknown field(s) ['m']"),
    ("rewards as text", "POST", "/experiments/ab/record", {"units": [4], "rewards": ["x"]},
     TOKEN, 400, "rewards must be numbers"),
    ("rewards a string", "POST", "/experiments/ab/record", {"units": [4], "rewards": "1"},
     TOKEN, 400, "rewards must be a list"),
    ("a unit as true", "POST", "/experiments/ab/record", {"units": [True], "rewards": [1]},
     TOKEN, 400, "not true/false"),
    ("a reward for an unknown unit", "POST", "/experiments/ab/record",
     {"units": [4, 999], "rewards": [1, 1]}, TOKEN, 400, "unit 999 was never assigned"),
    ("a reward outside [0, 1]", "POST", "/experiments/ab/record",
     {"units": [4], "rewards": [2]}, TOKEN, 400, "must lie in [0, 1]"),
    ("a second, different reward", "POST", "/experiments/ab/record",
     {"units": [1], "rewards": [0]}, TOKEN, 400, "already has reward"),
    ("expire a recorded unit", "POST", "/experiments/ab/expire", {"units": [1]}, TOKEN, 400,
     "already has a reward"),
    ("expire with both rules", "POST", "/experiments/ab/expire",
     {"units": [4], "older_than": 1}, TOKEN, 400, "exactly one of"),
    ("seed as text", "POST", "/experiments", {**NEW, "seed": "7"}, TOKEN, 400,
     "seed must be a non-negative integer"),
    ("an unknown algorithm", "POST", "/experiments", {**NEW, "algorithm": "Nope"}, TOKEN,
     400, "Nope"),
    ("a path as the name", "POST", "/experiments", {**NEW, "name": "../x"}, TOKEN, 400,
     "name must be"),
    ("a name of 61 characters", "POST", "/experiments", {**NEW, "name": "x" * 61}, TOKEN, 400,
     "name must be 1 to 60 letters"),
    ("a bad name in the path", "GET", "/experiments/.hidden/status", None, TOKEN, 400,
     "name must be"),
    ("an arm name that is not a string", "POST", "/experiments",
     {**NEW, "arms": ["a", ["b"], "c"]}, TOKEN, 400, "arms must be a list of names"),
    ("a missing field", "POST", "/experiments", {"name": "new", "seed": 1}, TOKEN, 400,
     "missing field(s) ['algorithm']"),
    ("an existing name", "POST", "/experiments", {**DEFINITION, "name": "ab"}, TOKEN, 409,
     "exists already"),
    ("an unknown experiment (assign)", "POST", "/experiments/nope/assign", {"n": 1}, TOKEN,
     404, "no experiment named 'nope'"),
    ("an unknown experiment (status)", "GET", "/experiments/nope/status", None, TOKEN, 404,
     "no experiment named 'nope'"),
    ("an unknown experiment (page)", "GET", "/experiments/nope", None, TOKEN, 404,
     "no experiment named 'nope'"),
    ("an unknown route", "GET", "/nothing", None, TOKEN, 404, "Not Found"),
    ("a wrong method", "DELETE", "/experiments/ab/status", None, TOKEN, 405, "Not Allowed"),
    ("no token: create", "POST", "/experiments", NEW, None, 401, "Bearer"),
    ("no token: assign", "POST", "/experiments/ab/assign", {"n": 1}, None, 401, "Bearer"),
    ("no token: record", "POST", "/experiments/ab/record", {"units": [4], "rewards": [1]},
     None, 401, "Bearer"),
    ("no token: expire", "POST", "/experiments/ab/expire", {"units": [4]}, None, 401,
     "Bearer"),
    ("a wrong token", "POST", "/experiments/ab/record", {"units": [4], "rewards": [1]},
     "guess", 401, "the token given is wrong"),
    ("a huge body", "POST", "/experiments/ab/record",
     {"units": list(range(4, 20_000)), "rewards": [1] * 19_996}, TOKEN, 413,
     "above this server's limit of 50000 bytes"),
    # sticky units: keys refused by name, nothing assigned
    ("keys a string", "POST", "/experiments/ab/assign", {"keys": "u1"}, TOKEN, 400,
     "keys must be a list"),
    ("a float key", "POST", "/experiments/ab/assign", {"keys": ["u1", 1.5]}, TOKEN, 400,
     "keys: key 1 is 1.5"),
    ("a null key", "POST", "/experiments/ab/assign", {"keys": [None]}, TOKEN, 400,
     "keys: key 0 is None"),
    ("a boolean key", "POST", "/experiments/ab/assign", {"keys": [True]}, TOKEN, 400,
     "keys: key 0 is True"),
    ("a nested key", "POST", "/experiments/ab/assign", {"keys": [["u1"]]}, TOKEN, 400,
     "keys: key 0 is list"),
    ("an empty key", "POST", "/experiments/ab/assign", {"keys": ["u1", ""]}, TOKEN, 400,
     "keys: key 1 has 0 characters"),
    ("a too long key", "POST", "/experiments/ab/assign", {"keys": ["x" * 300]}, TOKEN, 400,
     "a key has 1 to 256"),
    ("a repeated key", "POST", "/experiments/ab/assign", {"keys": ["u1", "u2", "u1"]}, TOKEN,
     400, "'u1' appears more than once"),
    ("n other than the keys", "POST", "/experiments/ab/assign", {"n": 3, "keys": ["u1"]},
     TOKEN, 400, "n must equal the number of keys (1)"),
    ("neither n nor keys", "POST", "/experiments/ab/assign", {}, TOKEN, 400,
     "missing field(s) ['n']"),
]


@pytest.mark.parametrize(("what", "method", "path", "body", "token", "code", "message"), BAD,
                         ids=[b[0] for b in BAD])
def test_a_bad_request_gets_a_json_error_and_changes_nothing(served, what, method, path, body,
                                                             token, code, message):
    """On both backends: the status code, one JSON line, the library's message, the very same
    answer on SQLite and on PostgreSQL, and nothing changed."""
    answers = {}
    for backend, server in served.items():
        before = _snapshot(server.store)
        raw = body if isinstance(body, bytes) else None
        status, answer = call(server.port, method, path, None if raw else body, raw=raw,
                              token=token)
        assert status == code, (backend, answer)
        assert isinstance(answer, dict) and list(answer) == ["error"], answer
        assert message in answer["error"] and "\n" not in answer["error"]
        assert "Traceback" not in answer["error"]
        assert _snapshot(server.store) == before, backend
        answers[backend] = answer
    assert answers["postgres"] == answers["sqlite"]


def test_a_huge_body_without_a_length_is_cut_at_the_limit(served):
    """A chunked body declares no length: reading stops at the limit (413)."""
    import http.client

    for server in served.values():
        before = _snapshot(server.store)
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        try:
            payload = json.dumps({"units": list(range(4, 30_000)), "rewards": [1] * 29_996})
            conn.request("POST", "/experiments/ab/record", body=iter([payload.encode()]),
                         headers={"Authorization": f"Bearer {TOKEN}",
                                  "Content-Type": "application/json"}, encode_chunked=True)
            response = conn.getresponse()
            assert response.status == 413
            assert "limit of 50000 bytes" in json.loads(response.read())["error"]
        finally:
            conn.close()
        assert _snapshot(server.store) == before


def test_reads_need_the_token_too_and_the_token_can_come_from_the_environment(tmp_path):
    server = Server(tmp_path, env={"BANDITKIT_TOKEN": "from-env-long-enough"})
    try:
        assert call(server.port, "POST", "/experiments", {"name": "e", **DEFINITION},
                    token=TOKEN)[0] == 401
        assert call(server.port, "POST", "/experiments", {"name": "e", **DEFINITION},
                    token="from-env-long-enough")[0] == 201
        assert call(server.port, "GET", "/experiments/e/status")[0] == 401
        assert call(server.port, "GET", "/experiments/e/status",
                    token="from-env-long-enough")[0] == 200
    finally:
        server.stop()


def test_servers_killed_mid_load_lose_no_returned_call_and_count_none_twice(store):
    """SIGKILL in the middle of a load (4 clients a server): on SQLite one server; on PostgreSQL
    two servers on one database, killed one after the other while the other goes on (so a
    transaction cut by the first kill must not hold up the second). Every record call that
    returned is stored, none twice, no slot holds two units, and servers started again finish
    the experiment with the decisions of ``simulate``."""
    trial, table = _simulated()
    where = store.where("ab")
    n_servers = 1 if store.backend == "sqlite" else 2
    servers = [Server(store.db, token=TOKEN, wait=False) for _ in range(n_servers)]
    servers = [server.wait() for server in servers]
    assert call(servers[0].port, "POST", "/experiments", {"name": "ab", **DEFINITION},
                token=TOKEN)[0] == 201
    returned: list[int] = []  # units whose record call returned 200
    faults: list[str] = []  # a client's failure that a dead server does not explain
    lock = threading.Lock()

    def client(server: Server, seed: int) -> None:
        log: list[int] = []
        try:
            _drive([server.port], where, "ab", table, seed, log=log, adopt=False)
        except OSError:  # its server died under it
            pass
        except AssertionError as error:
            # a live server answered something other than 200 (a bug), unless the batch's
            # last units went down with the other server (no unit left to assign)
            if server.process.poll() is None and "no unit to assign" not in str(error):
                with lock:
                    faults.append(str(error))
        with lock:
            returned.extend(log)

    threads = [threading.Thread(target=client, args=(servers[i % n_servers], i))
               for i in range(4 * n_servers)]
    conn = where.connect()
    try:
        for thread in threads:
            thread.start()
        def recorded_until(target: int, seconds: float) -> int:
            n, deadline = 0, time.monotonic() + seconds
            while n < target and time.monotonic() < deadline and any(
                    t.is_alive() for t in threads):
                (n,) = conn.execute("SELECT COUNT(reward) FROM units").fetchone()
                conn.commit()
                threads[0].join(0.01)
            return n

        n = recorded_until(300, 120)  # kill once calls returned
        servers[0].kill()
        assert n >= 300, "the clients stopped before the kill"
        if n_servers == 2:
            # the survivor writes at once: the transaction the kill cut holds no lock
            start = time.monotonic()
            status, answer = call(servers[1].port, "POST", "/experiments/ab/assign", {"n": 1},
                                  token=TOKEN)
            assert status == 200 and time.monotonic() - start < 10, answer
            # and goes on (until the batch's last units, held by dead clients, stop it)
            recorded_until(n + 30, 5)
            servers[1].kill()
        for thread in threads:
            thread.join(60)
        assert returned and not any(t.is_alive() for t in threads) and not faults, faults
        recorded = dict(conn.execute("SELECT id, reward FROM units WHERE reward IS NOT NULL"
                                     ).fetchall())
        (batches,) = conn.execute("SELECT COUNT(*) FROM batches").fetchone()
    finally:
        for server in servers:  # also when the test fails: no server left behind
            server.kill()
        conn.close()
    assert set(returned) <= set(recorded)  # every call that returned is stored
    assert len(returned) == len(set(returned))
    assert batches < len(trial.decisions.batch_sizes())  # killed mid-experiment
    check_consistent(where)
    restarted = [Server(store.db, token=TOKEN, wait=False) for _ in range(n_servers)]
    try:
        restarted = [server.wait() for server in restarted]
        _drive([server.port for server in restarted], where, "ab", table, seed=9)
    finally:
        for server in restarted:
            server.stop()
    check_consistent(where)
    with where.open() as exp:
        assert exp.decisions().same_as(trial.decisions)
        assert exp.status().arms["recorded"].sum() == trial.n_pulls


def test_serve_refuses_a_missing_folder_an_unreachable_database_and_a_blank_token(tmp_path,
                                                                                  capsys):
    from banditkit.cli import main

    for extra, message in (
            (["--db", str(tmp_path / "none")], "does not exist"),
            (["--db", str(tmp_path), "--token", " "], "must not be empty"),
            (["--db", "postgresql://nobody:hunter2@127.0.0.1:1/none"], "cannot connect")):
        assert main(["serve", *extra, "--port", "0"]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1 and "Traceback" not in err
        assert "hunter2" not in err  # a password is never printed


def test_sticky_units_over_http(served):
    """``{"keys": [...]}``: each unit carries its key; a key sent again gets its unit and arm
    without a slot; ``GET units`` lists the keys."""
    for server in served.values():
        _sticky(server.port)


def _sticky(port: int) -> None:
    assert call(port, "POST", "/experiments", {"name": "keyed", **DEFINITION},
                token=TOKEN)[0] == 201
    status, first = call(port, "POST", "/experiments/keyed/assign",
                         {"keys": ["alice", 42, "bob"]}, token=TOKEN)
    assert status == 200, first
    assert [(u["key"], u["repeated"]) for u in first["units"]] == [
        ("alice", False), ("42", False), ("bob", False)]
    status, again = call(port, "POST", "/experiments/keyed/assign",
                         {"n": 2, "keys": ["bob", "carol"]}, token=TOKEN)
    assert status == 200, again
    bob = next(u for u in first["units"] if u["key"] == "bob")
    assert again["units"][0] == {**bob, "repeated": True}
    assert again["units"][1]["key"] == "carol" and not again["units"][1]["repeated"]
    _, state = call(port, "GET", "/experiments/keyed/status", token=TOKEN)
    assert sum(arm["assigned"] for arm in state["arms"]) == 4  # bob took no second slot
    _, listed = call(port, "GET", "/experiments/keyed/units", token=TOKEN)
    assert [u["key"] for u in listed["units"]] == ["alice", "42", "bob", "carol"]


def test_a_database_that_goes_away_is_503_and_the_server_recovers_when_it_is_back():
    """PostgreSQL stopped under a running server: calls get 503 with one line that does not say
    where the database is, and change nothing; once it is back, the same server answers again
    (it opens the experiment afresh rather than keep a dead connection)."""
    import subprocess

    from postgres_support import _as_server_user, postgres_bin, start_server

    cluster, stop = start_server()  # its own cluster: stopping it disturbs no other test
    server = None
    try:
        server = Server(cluster.url(), token=TOKEN)
        assert call(server.port, "POST", "/experiments", {"name": "ab", **DEFINITION},
                    token=TOKEN)[0] == 201
        assert len(call(server.port, "POST", "/experiments/ab/assign", {"n": 3},
                        token=TOKEN)[1]["units"]) == 3
        pg_ctl = [*_as_server_user()[0], str(postgres_bin() / "pg_ctl"), "-D",
                  str(cluster.socket_dir / "data"), "-w", "-m", "immediate"]
        subprocess.run([*pg_ctl, "stop"], check=True, capture_output=True)
        for method, path, body in (("POST", "/experiments/ab/assign", {"n": 1}),
                                   ("GET", "/experiments/ab/status", None),
                                   ("GET", "/experiments", None)):
            status, answer = call(server.port, method, path, body, token=TOKEN)
            assert status == 503, answer
            assert list(answer) == ["error"] and "cannot be reached" in answer["error"]
            assert str(cluster.port) not in answer["error"]
        status, answer = call(server.port, "GET", "/ready")  # no traffic for it now
        assert status == 503 and answer["ready"] is False, answer
        assert str(cluster.port) not in answer["reason"]
        # pg_ctl restart starts a stopped server with the options it last ran with
        subprocess.run([*pg_ctl, "-l", str(cluster.socket_dir / "log"), "restart"],
                       check=True, capture_output=True)
        status, answer = call(server.port, "POST", "/experiments/ab/assign", {"n": 1},
                              token=TOKEN)
        assert status == 200 and len(answer["units"]) == 1, answer
        # nothing was written while it was down: 4 units in all (PostgreSQL's sequences may
        # skip ids after a crash, so the new unit's id is not checked)
        _, state = call(server.port, "GET", "/experiments/ab/status", token=TOKEN)
        assert sum(arm["assigned"] for arm in state["arms"]) == 4
        assert call(server.port, "GET", "/experiments", token=TOKEN)[1] == {"experiments": ["ab"]}
        assert call(server.port, "GET", "/ready") == (200, {"ready": True})
        # a restart while the server idles leaves its pooled connections dead: the first
        # create once answered 400 with the database's user, host, port and name
        subprocess.run([*pg_ctl, "-l", str(cluster.socket_dir / "log"), "restart"],
                       check=True, capture_output=True)
        status, answer = call(server.port, "POST", "/experiments", {"name": "cd", **DEFINITION},
                              token=TOKEN)
        assert status == 201, answer
    finally:
        if server is not None:
            server.kill()
        stop()


def test_two_servers_creating_one_name_at_once_leave_one_experiment(store):
    """The same POST /experiments to two servers at the same moment (eight names, to make the
    race likely): for each name one server answers 201 and the other 409, and the experiment
    is whole (it opens and assigns)."""
    servers = [Server(store.db, token=TOKEN, wait=False) for _ in range(2)]
    try:
        servers = [server.wait() for server in servers]
        names = [f"race{i}" for i in range(8)]
        answers: dict[tuple[str, int], int] = {}
        barrier = threading.Barrier(2)

        def create(k: int) -> None:
            for name in names:
                barrier.wait()
                answers[name, k] = call(servers[k].port, "POST", "/experiments",
                                        {"name": name, **DEFINITION}, token=TOKEN)[0]

        threads = [threading.Thread(target=create, args=(k,)) for k in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        for name in names:
            assert sorted((answers[name, 0], answers[name, 1])) == [201, 409], answers
        listed = call(servers[1].port, "GET", "/experiments", token=TOKEN)[1]
        assert listed == {"experiments": names}
    finally:
        for server in servers:
            server.stop()
    assert store.names() == (names if store.backend == "postgres"
                             else [f"{name}.sqlite" for name in names])
    for name in names:
        with store.where(name).open() as exp:
            assert len(exp.assign(2)) == 2


def test_keep_alive_answers_are_not_held_back_by_delayed_acks(tmp_path):
    """The server's sockets send at once (TCP_NODELAY): bound with proto 0, asyncio left Nagle's
    algorithm on, and every answer on a kept-alive connection waited for the client's delayed
    ACK, 40 ms a request whatever its work (a /health included). 25 answers take ~20 ms; with
    the delay at least 25 x 40 ms = 1 s."""
    import http.client

    server = Server(tmp_path)
    try:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        call(server.port, "GET", "/health", connection=conn)  # connected, warmed up
        start = time.perf_counter()
        for _ in range(25):
            assert call(server.port, "GET", "/health", connection=conn)[0] == 200
        assert time.perf_counter() - start < 0.6
        conn.close()
    finally:
        server.stop()
