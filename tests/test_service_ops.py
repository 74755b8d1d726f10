"""The operator's side of ``banditkit serve`` through a real server on 127.0.0.1 (SQLite folder
and PostgreSQL database): overflow and rollout over HTTP (n units every call, sticky keys kept,
the algorithm's decisions those of ``simulate`` on the same rewards), stop / pause / resume /
archive / delete with their audit rows naming the token's id, CSV exports, Prometheus metrics,
and the HTML list at ``/`` and the API page at ``/docs`` in headless Chromium."""

from __future__ import annotations

import csv
import hashlib
import io
import re
from pathlib import Path

import numpy as np
import pytest

from banditkit import simulate
from banditkit.live.journal.defaults import params_in_force
from banditkit.registry import make_policy
from banditkit.rng import as_generator
from browser_support import chromium
from live_support import TableBandit, Where, check_consistent, reward_table, unit_rewards
from service_support import Server, call

TOKEN = "s3cret-long-enough"
WHO = "token:" + hashlib.sha256(TOKEN.encode()).hexdigest()[:12]
MEANS = [0.2, 0.5, 0.8]
DEFINITION = {"algorithm": "ReplicableElimination", "arms": ["a", "b", "c"], "seed": 3,
              "horizon": 3000, "params": {"rho": 0.3, "beta": 3}}


class Store:
    def __init__(self, db: str, backend: str) -> None:
        self.db, self.backend = db, backend

    def where(self, name: str) -> Where:
        if self.backend == "sqlite":
            return Where(str(Path(self.db) / f"{name}.sqlite"))
        return Where(self.db, name)


@pytest.fixture(params=["sqlite", "postgres"])
def served(request, tmp_path):
    if request.param == "sqlite":
        store = Store(str(tmp_path), "sqlite")
    else:
        store = Store(request.getfixturevalue("postgres_server").create_database(), "postgres")
    server = Server(store.db, token=TOKEN)
    try:
        yield server.port, store
    finally:
        server.stop()


def _post(port, path, body=None):
    return call(port, "POST", path, body if body is not None else {}, token=TOKEN)


def _get(port, path, **kw):
    return call(port, "GET", path, **{"token": TOKEN, **kw})


def _simulated():
    table = reward_table(MEANS)
    env = TableBandit(table)
    params = params_in_force(DEFINITION["algorithm"], DEFINITION["params"])[0]
    algo = make_policy(DEFINITION["algorithm"], env, as_generator(DEFINITION["seed"]),
                       horizon=DEFINITION["horizon"], **params)
    return simulate(algo, env, horizon=DEFINITION["horizon"], seed=0), table


def test_overflow_and_rollout_over_http_give_n_units_and_keep_the_decisions(served):
    port, store = served
    trial, table = _simulated()
    assert _post(port, "/experiments", {"name": "ab", **DEFINITION})[0] == 201
    rng = np.random.default_rng(5)
    keyed: dict[str, tuple[int, str]] = {}
    after_end, visitors = 0, 0
    while after_end < 3:
        # new visitors, and a few who come back (their key: their unit and arm again)
        fresh_keys = int(rng.integers(1, 60))
        seen = list(keyed)
        back = ([str(k) for k in rng.choice(seen, size=min(5, len(seen)), replace=False)]
                if seen else [])
        keys = [f"user{visitors + i}" for i in range(fresh_keys)] + back
        visitors += fresh_keys
        n = len(keys)
        status, answer = _post(port, "/experiments/ab/assign", {"keys": keys})
        assert status == 200 and len(answer["units"]) == n, answer  # exactly n, every call
        for unit in answer["units"]:
            if unit["key"] in keyed:  # a key keeps its unit and arm, overflow and rollout too
                assert (unit["unit"], unit["arm"]) == keyed[unit["key"]] and unit["repeated"]
            keyed[unit["key"]] = (unit["unit"], unit["arm"])
        extra = set(answer["overflow_units"])
        fresh = [u["unit"] for u in answer["units"] if not u["repeated"]]
        mine = [u for u in fresh if u not in extra]
        if mine:
            assert _post(port, "/experiments/ab/record", {
                "units": mine, "rewards": unit_rewards(store.where("ab"), mine, table)}
            ) == (200, {"recorded": len(mine)})
        others = [u for u in fresh if u in extra]
        if others:  # rewards far from the arms' means: shown to the algorithm, it would differ
            assert _post(port, "/experiments/ab/record", {
                "units": others, "rewards": [1.0] * len(others)})[0] == 200
        _, state = _get(port, "/experiments/ab/status")
        after_end += state["finished"]
    with store.where("ab").open() as exp:
        assert exp.decisions().same_as(trial.decisions)
    check_consistent(store.where("ab"))
    assert state["decision"]["winner"] == state["leader"]
    # rollout: new keys all get the winner
    _, answer = _post(port, "/experiments/ab/assign", {"keys": ["late1", "late2", "late3"]})
    assert [u["arm"] for u in answer["units"]] == [state["leader"]] * 3
    assert "rollout" in answer["reason"]
    # the units' CSV: kind and propensity of each
    status, text = _get(port, "/experiments/ab/units.csv")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert status == 200 and {r["kind"] for r in rows} == {"algorithm", "overflow", "rollout"}
    assert sum(r["kind"] == "algorithm" for r in rows) == trial.n_pulls
    assert all(r["propensity"] == "1.0" for r in rows if r["kind"] == "rollout")
    _, state = _get(port, "/experiments/ab/status")  # the 3 late units counted
    status, text = _get(port, "/experiments/ab/status.csv")
    table_rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["arm"] for r in table_rows] == ["a", "b", "c"]
    assert [int(r["recorded"]) for r in table_rows] == [a["recorded"] for a in state["arms"]]
    assert [int(r["overflow"]) for r in table_rows] == [a["overflow"] for a in state["arms"]]


def test_stop_pause_archive_delete_over_http_are_audited_by_token_id(served):
    port, _ = served
    assert _post(port, "/experiments", {"name": "op", **DEFINITION})[0] == 201
    # writes need the token, the new routes too
    assert call(port, "POST", "/experiments/op/stop", {})[0] == 401
    assert _post(port, "/experiments/op/pause", {"reason": "tracking broke"}) == (
        200, {"paused": True})
    status, answer = _post(port, "/experiments/op/assign", {"n": 4})
    assert answer["units"] == [] and "tracking broke" in answer["reason"]
    assert _post(port, "/experiments/op/resume") == (200, {"resumed": 1})
    _, answer = _post(port, "/experiments/op/assign", {"n": 4})
    assert len(answer["units"]) == 4
    status, error = _post(port, "/experiments/op/stop", {"arm": "nope"})
    assert status == 400 and "arm must be one of" in error["error"]
    status, stopped = _post(port, "/experiments/op/stop", {"arm": "c"})
    assert status == 200 and stopped["stopped"]["arm"] == "c"
    _, answer = _post(port, "/experiments/op/assign", {"n": 6})
    assert [u["arm"] for u in answer["units"]] == ["c"] * 6
    assert answer["overflow_units"] == [u["unit"] for u in answer["units"]]
    # delete refuses a running experiment, and changes nothing
    status, error = call(port, "DELETE", "/experiments/op", token=TOKEN)
    assert status == 400 and "not archived" in error["error"]
    assert _post(port, "/experiments/op/archive") == (200, {"archived": True})
    _, answer = _post(port, "/experiments/op/assign", {"n": 6})
    assert answer["units"] == []
    status, log = _get(port, "/experiments/op/audit")
    assert [r["action"] for r in log["audit"]] == ["create", "pause", "resume", "stop",
                                                    "archive"]
    assert {r["who"] for r in log["audit"]} == {WHO}  # the token's id, never the token
    assert TOKEN not in str(log)
    _, state = _get(port, "/experiments/op/status")
    assert state["archived"] and state["decision"]["winner"] == "c"
    assert call(port, "DELETE", "/experiments/op", token=TOKEN) == (200, {"deleted": "op"})
    assert _get(port, "/experiments") == (200, {"experiments": []})
    assert _get(port, "/experiments/op/status")[0] == 404


def test_metrics_count_requests_and_show_the_queue_and_open_experiments(served):
    port, _ = served
    assert _post(port, "/experiments", {"name": "m", **DEFINITION})[0] == 201
    for _ in range(3):
        _post(port, "/experiments/m/assign", {"n": 2})
    _get(port, "/experiments/nosuch/status")
    status, text = _get(port, "/metrics")
    assert status == 200
    counts = dict(re.findall(r'^banditkit_requests_total\{(.*)\} (\d+)$', text, re.M))
    assert counts['method="POST",route="/experiments/{name}/assign",code="200"'] == "3"
    assert counts['method="GET",route="/experiments/{name}/status",code="404"'] == "1"
    assert re.search(r'^banditkit_request_seconds_count\{route="/experiments/\{name\}/assign"\}'
                     r' 3$', text, re.M)
    inf = re.search(r'banditkit_request_seconds_bucket\{route="/experiments/\{name\}/assign",'
                    r'le="\+Inf"\} (\d+)', text)
    assert inf and inf.group(1) == "3"
    assert re.search(r"^banditkit_queue_depth \d+$", text, re.M)
    assert re.search(r"^banditkit_open_experiments 1$", text, re.M)


def test_the_list_and_the_api_page_in_a_browser(tmp_path):
    server = Server(tmp_path)
    try:
        port = server.port
        for name in ("checkout", "pricing"):
            assert call(port, "POST", "/experiments", {"name": name, **DEFINITION})[0] == 201
        units = call(port, "POST", "/experiments/pricing/assign", {"n": 18})[1]["units"]
        call(port, "POST", "/experiments/pricing/record",
             {"units": [u["unit"] for u in units], "rewards": [1.0] * 18})
        call(port, "POST", "/experiments/pricing/stop", {"arm": "b"})
        dom = chromium(tmp_path, "--dump-dom", f"http://127.0.0.1:{port}/")
        text = " ".join(re.sub(r"<[^>]+>", " ", dom).split())
        assert "checkout running ReplicableElimination leader:" in text
        assert "pricing stopped (rollout: b) ReplicableElimination STOPPED: winner b" in text
        assert "href=\"/experiments/checkout\"" in dom
        # the stopped experiment's own page starts with its decision
        page = chromium(tmp_path, "--dump-dom", f"http://127.0.0.1:{port}/experiments/pricing")
        assert re.search(r"id=\"decision\".*STOPPED: winner b", page)
        assert page.index("id=\"decision\"") < page.index("id=\"state\"")
        shot = tmp_path / "list.png"
        chromium(tmp_path, "--window-size=1000,500", f"--screenshot={shot}",
                  f"http://127.0.0.1:{port}/")
        import matplotlib.image

        pixels = matplotlib.image.imread(shot)[..., :3]
        assert (pixels < 0.9).any(axis=2).mean() > 0.01  # text and table, not a blank page
        # the API page: built in the browser from /openapi.json, no other origin named
        status, page = _get(port, "/docs")
        assert status == 200 and "http://" not in page and "https://" not in page
        dom = chromium(tmp_path, "--virtual-time-budget=5000", "--dump-dom",
                        f"http://127.0.0.1:{port}/docs")
        assert dom.count("class=\"op\"") == sum(
            len(item) - ("parameters" in item)
            for item in _get(port, "/openapi.json")[1]["paths"].values())
        assert "/experiments/{name}/stop" in dom and "banditkit live experiments" in dom
    finally:
        server.stop()
