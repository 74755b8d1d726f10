"""Assignment at the edge through a real ``banditkit serve`` on 127.0.0.1 (SQLite folder and
PostgreSQL database): GET allocation with ETag and 304 (the read token may read it), POST
events (JSON and NDJSON; idempotent, per-event refusals), the same decisions as assign/record
on the same rewards, the client polling in the background and assigning on while the service
is down, and a server killed mid-feed with the feed retried (nothing lost, nothing twice)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from banditkit import Experiment
from banditkit.client import Assigner
from edge_support import MEANS_DEFAULT, feed_assign, feed_edge
from live_support import Where
from service_support import Server, call

TOKEN, READ = "s3cret-long-enough", "r3ad-only-long-enough"
DEFINITION = {"algorithm": "ReplicableElimination", "arms": ["a", "b", "c"], "seed": 4,
              "horizon": 1500, "params": {"rho": 0.3, "beta_floor": False}}


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def served(request, tmp_path_factory):
    """One server per backend for the module's tests (each starts its own experiments)."""
    if request.param == "sqlite":
        folder = tmp_path_factory.mktemp("edge")
        db, where = str(folder), lambda name: Where(str(folder / f"{name}.sqlite"))
    else:
        db = request.getfixturevalue("postgres_server").create_database()
        where = lambda name: Where(db, name)  # noqa: E731
    server = Server(db, token=TOKEN, options=("--read-token", READ))
    try:
        yield server, where, db
    finally:
        server.stop()


def _events(port, name, exposures=(), outcomes=(), token=TOKEN):
    status, answer = call(port, "POST", f"/experiments/{name}/events",
                          {"exposures": list(exposures), "outcomes": list(outcomes)},
                          token=token)
    assert status == 200, answer
    return answer


def _allocation(port, name, token=TOKEN, etag=None):
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"Authorization": f"Bearer {token}"}
    if etag:
        headers["If-None-Match"] = etag
    conn.request("GET", f"/experiments/{name}/allocation", headers=headers)
    response = conn.getresponse()
    body = response.read()
    conn.close()
    return response.status, response.getheader("etag"), (json.loads(body) if body else None)


def test_allocation_events_and_the_same_decisions_as_assign_record(served, tmp_path):
    server, where, _ = served
    port = server.port
    assert call(port, "POST", "/experiments", {"name": "shop", **DEFINITION},
                token=TOKEN)[0] == 201
    status, etag, first = _allocation(port, "shop", token=READ)  # the read token reads it
    assert status == 200 and etag == f'"{first["version"]}"' and first["name"] == "shop"
    assert _allocation(port, "shop", etag=etag)[0] == 304
    assert _allocation(port, "shop", token=READ, etag=etag)[0] == 304  # answered before
    assert _allocation(port, "shop", token="wrong", etag=etag)[0] == 401  # Starlette, guarded
    assert _allocation(port, "shop", etag='"other"')[0] == 200
    refused = call(port, "POST", "/experiments/shop/events", {"exposures": []}, token=READ)
    assert refused[0] == 403  # the read token never writes
    bad = call(port, "POST", "/experiments/shop/events", {"exposure": []}, token=TOKEN)
    assert bad[0] == 400 and "unknown field" in bad[1]["error"]
    assert call(port, "GET", "/experiments/nope/allocation", token=TOKEN)[0] == 404
    # events move the weights: the next GET answers the new version at once (not the copy
    # kept in memory for a second)
    assert call(port, "POST", "/experiments", {"name": "moving", **DEFINITION},
                token=TOKEN)[0] == 201
    moving = _allocation(port, "moving")[2]
    assigner = Assigner(moving)
    _events(port, "moving", [assigner.exposure(k, assigner.assign(k)) for k in ("p1", "p2")])
    assert _allocation(port, "moving")[2]["version"] != moving["version"]
    # the whole experiment from the edge, over HTTP
    with Experiment.open(where("shop").target, name=where("shop").name, readonly=True) as e:
        feed_edge(e, MEANS_DEFAULT, ingest=lambda x, o: _events(port, "shop", x, o),
                  allocation=lambda: _allocation(port, "shop")[2])
        edge = e.decisions()
        final = e.status()
    with Experiment.create(tmp_path / "served.db", **DEFINITION) as local:
        feed_assign(local, MEANS_DEFAULT)
        assert local.decisions().same_as(edge) and edge.n_batches >= 2
        assert local.status().recommendation == final.recommendation
    status, _, last = _allocation(port, "shop")
    assert status == 200 and last["version"] != first["version"]


def test_ndjson_idempotence_and_refusals(served):
    server, where, _ = served
    port = server.port
    assert call(port, "POST", "/experiments", {"name": "feed", **DEFINITION},
                token=TOKEN)[0] == 201
    assigner = Assigner(_allocation(port, "feed")[2])
    bodies = []
    for b in range(1):
        keys = [f"v{b}-{i}" for i in range(50)]
        exposures = [assigner.exposure(k, assigner.assign(k)) for k in keys]
        outcomes = [{"key": k, "value": i % 2} for i, k in enumerate(keys)]
        bodies.append((exposures, outcomes))
    # NDJSON: one event a line; a bad line is refused alone
    lines = [json.dumps({"type": "exposure", **x}) for x in bodies[0][0]]
    lines += [json.dumps({"type": "outcome", **o}) for o in bodies[0][1]] + ["{not json"]
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request("POST", "/experiments/feed/events", body="\n".join(lines).encode(),
                 headers={"Authorization": f"Bearer {TOKEN}",
                          "Content-Type": "application/x-ndjson"})
    answer = json.loads(conn.getresponse().read())
    conn.close()
    assert answer["new"] == 100 and answer["refused"] == 1, answer
    assert "not an event" in answer["refusals"][0]["reason"] or \
        "an exposure is an object" in answer["refusals"][0]["reason"]
    again = _events(port, "feed", *bodies[0])
    assert again["new"] == 0 and again["repeated"] == 100
    with Experiment.open(where("feed").target, name=where("feed").name, readonly=True) as e:
        assert len(e.units()) == 50 and e.status().warnings == []


def test_costs_through_the_events_route_and_iid_designs_refused(served):
    """A constrained policy's outcomes carry their costs through ``POST .../events`` (one
    without them refused alone, by rule); an i.i.d.-design algorithm publishes no allocation
    (400, naming the rule)."""
    server, where, _ = served
    assert call(server.port, "POST", "/experiments",
                {"name": "costly", "algorithm": "DEBORAS", "arms": ["a", "b"], "seed": 1,
                 "horizon": 3000, "thresholds": [0.5]}, token=TOKEN)[0] == 201
    assigner = Assigner(_allocation(server.port, "costly")[2])
    keys = ["u1", "u2", "u3"]
    answer = _events(server.port, "costly", [assigner.exposure(k, assigner.assign(k))
                                             for k in keys],
                     [{"key": "u1", "value": 1, "costs": [0.25]},
                      {"key": "u2", "value": 0, "costs": 0.75}, {"key": "u3", "value": 1}])
    assert answer["outcomes"]["recorded"] == 2, answer
    assert [(r["key"], "1 cost(s) with each outcome" in r["reason"])
            for r in answer["refusals"]] == [("u3", True)]
    with Experiment.open(where("costly").target, name=where("costly").name,
                         readonly=True) as e:
        units = e.units().set_index("key")
        assert json.loads(units.loc["u2", "costs"]) == [0.75]
    # linear arms (features) are created by the library; the service serves them
    where("design").create(algorithm="GBAI", arms=[[1, 0], [0, 1], [1, 1]], seed=1,
                           horizon=3000).close()
    status, answer = call(server.port, "GET", "/experiments/design/allocation", token=TOKEN)
    assert status == 400 and "i.i.d." in answer["error"] and "assign/record" in answer["error"]


def test_a_killed_server_loses_nothing_and_the_client_assigns_on(tmp_path):
    """The client polls (304s), takes new weights by itself, and assigns on while the server is
    down; the feed retried from the start after a kill counts every event once."""
    server = Server(str(tmp_path), token=TOKEN, options=("--read-token", READ))
    url = f"http://127.0.0.1:{server.port}"
    try:
        assert call(server.port, "POST", "/experiments", {"name": "x", **DEFINITION},
                    token=TOKEN)[0] == 201
        assigner = Assigner.from_service(url, "x", READ, interval=0.05)
        try:
            _wait(lambda: assigner.poller.not_modified >= 2)  # polling costs 304s
            bodies = []
            for b in range(6):
                keys = [f"v{b}-{i}" for i in range(50)]
                bodies.append(([assigner.exposure(k, assigner.assign(k)) for k in keys],
                               [{"key": k, "value": i % 2} for i, k in enumerate(keys)]))
            version = assigner.version
            _events(server.port, "x", *bodies[0])
            _events(server.port, "x", *bodies[1])
            _wait(lambda: assigner.version != version)  # the new weights came by themselves
            server.kill()
            failures = assigner.poller.failures
            _wait(lambda: assigner.poller.failures > failures)
            assert len(assigner.assign_many(range(1000))) == 1000  # never blocked, still on
            assert assigner.poller.last_error
        finally:
            assigner.poller.stop()
        with pytest.raises(ConnectionError, match="cannot fetch the allocation"):
            Assigner.from_service(url, "x", TOKEN, timeout=0.5)
        server = Server(str(tmp_path), token=TOKEN)
        for exposures, outcomes in bodies:  # the whole feed again
            answer = _events(server.port, "x", exposures, outcomes)
            assert answer["refused"] == 0
        with Experiment.open(tmp_path / "x.sqlite", readonly=True) as e:
            units = e.units()
            assert len(units) == 300 and units["key"].nunique() == 300
            assert units["reward"].notna().sum() == 300
    finally:
        server.stop()


def _wait(condition, seconds=30.0):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_the_example_shop_assigns_locally_and_feeds_the_experiment(served):
    """examples/edge_shop.py as docs/serving.md runs it: simulated visitors, every page view an
    exposure and every visit an outcome, all reaching the experiment in bulk."""
    import subprocess
    import sys

    server, where, _ = served
    definition = {**DEFINITION, "algorithm": "BatchedThompson", "horizon": 6000,
                  "arms": ["control", "new-button", "new-copy"],
                  "params": {"batch_size": 300}}
    assert call(server.port, "POST", "/experiments", {"name": "shopex", **definition},
                token=TOKEN)[0] == 201
    example = Path(__file__).resolve().parent.parent / "examples" / "edge_shop.py"
    run = subprocess.run([sys.executable, str(example), "--service",
                          f"http://127.0.0.1:{server.port}", "--name", "shopex", "--token",
                          TOKEN,
                          "--port", "0", "--load", "150"], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    assert "150 visitors; assigning took" in run.stdout and "300 events sent" in run.stdout
    with Experiment.open(where("shopex").target, name=where("shopex").name,
                         readonly=True) as e:
        units = e.units()
        assert len(units) == 150 and units["reward"].notna().all()
        assert e.status().warnings == []
