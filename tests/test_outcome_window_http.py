"""The outcome window over HTTP and on the command line: a real ``banditkit serve`` on
127.0.0.1 (SQLite folder and PostgreSQL), a real one-second window (the server's own clock),
and the CLI in process."""

from __future__ import annotations

import csv
import io
import json
import time

import pytest

from banditkit.cli import main
from service_support import Server, call
from test_service import Store, _store

TOKEN = "s3cret-long-enough"
#: A real window on the server's clock: long enough for a loaded machine to assign and record
#: the README experiment's first batch (13,824 units) inside it.
WINDOW = 5.0
# overflow off: these tests watch the algorithm's own batch wait and resolve
README = {"name": "ab", "algorithm": "ReplicableElimination", "arms": ["a", "b", "c"],
          "seed": 7, "horizon": 30000, "params": {"rho": 0.2}, "overflow": "off"}


@pytest.fixture(params=["sqlite", "postgres"])
def server(request, tmp_path):
    store: Store = _store(request.param, request, tmp_path)
    served = Server(store.db, token=TOKEN)
    try:
        yield served
    finally:
        served.stop()


def _post(port, path, body):
    return call(port, "POST", path, body, token=TOKEN)


def _get(port, path, **kw):
    return call(port, "GET", path, token=TOKEN, **kw)


def test_the_readme_curl_flow_with_one_unit_never_answered_goes_on_after_the_window(server):
    """Units 1 and 2 answered, 3 never: while its window (a real WINDOW seconds on the
    server's clock) is open, the batch (once all out) stops assign, and status and the page
    warn with the unit and when it resolves; after it, missing='zero' records its 0 and the
    next batch goes out."""
    port = server.port
    code, created = _post(port, "/experiments", {**README, "outcome_window": WINDOW})
    assert code == 201, created
    start = time.time()
    code, first = _post(port, "/experiments/ab/assign", {"n": 3})
    assert [u["unit"] for u in first["units"]] == [1, 2, 3]
    assert _post(port, "/experiments/ab/record", {"units": [1, 2], "rewards": [1, 0]})[1] == \
        {"recorded": 2}
    _, rest = _post(port, "/experiments/ab/assign", {"n": 20000})
    ids = [u["unit"] for u in rest["units"]]
    assert _post(port, "/experiments/ab/record",
                 {"units": ids, "rewards": [0] * len(ids)})[1] == {"recorded": len(ids)}
    _, stalled = _post(port, "/experiments/ab/assign", {"n": 10})
    _, status = _get(port, "/experiments/ab/status")
    _, page = _get(port, "/experiments/ab")
    _, waiting = _get(port, "/experiments/ab/units?unanswered=true")
    if time.time() < start + WINDOW:  # all read while unit 3's window was open
        assert stalled["units"] == [] and "1 still waiting" in stalled["reason"]
        assert status["outcome_window"] == WINDOW and status["missing"] == "zero"
        warning = next(w for w in status["warnings"] if w.startswith("assign hands out"))
        assert "unit 3" in warning and status["waiting_units"]["resolves_at"] in warning
        assert "unit 3" in page and "resolves at" in page
        assert [u["unit"] for u in waiting["units"]] == [3]
    time.sleep(max(0.0, start + WINDOW + 0.1 - time.time()))
    _, more = _post(port, "/experiments/ab/assign", {"n": 10})
    assert len(more["units"]) == 10 and {u["batch"] for u in more["units"]} == {1}
    _, status = _get(port, "/experiments/ab/status")
    assert status["batches_observed"] == 1
    assert not [w for w in status["warnings"] if w.startswith("assign hands out")]
    _, three = _get(port, "/experiments/ab/units?after=2&limit=1")
    assert three["units"][0]["unit"] == 3 and three["units"][0]["imputed"] is True
    assert three["units"][0]["reward"] == 0


def test_an_assign_whose_client_timed_out_leaves_units_that_resolve_by_the_window(server):
    """The client gives up before the answer (a 1 ms socket timeout): the units it never
    learns are committed, listed by ?unanswered=true, and resolve when their window closes."""
    import http.client

    port = server.port
    assert _post(port, "/experiments", {**README, "outcome_window": WINDOW})[0] == 201
    start = time.time()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=0.001)
    try:
        conn.request("POST", "/experiments/ab/assign", body=json.dumps({"n": 5}),
                     headers={"Content-Type": "application/json",
                              "Authorization": f"Bearer {TOKEN}"})
        try:
            conn.getresponse().read()
        except (TimeoutError, OSError):
            pass  # the client timed out: it never learns its units
    finally:
        conn.close()
    deadline = time.time() + 30
    while True:  # the server still commits the call
        _, waiting = _get(port, "/experiments/ab/units?unanswered=true")
        if waiting["units"] or time.time() > deadline:
            break
        time.sleep(0.05)
    lost = [u["unit"] for u in waiting["units"]]
    assert lost == [1, 2, 3, 4, 5] or lost == []  # [] only if the window already closed
    time.sleep(max(0.0, start + WINDOW + 0.1 - time.time()))
    # reads run in read-only reader processes: they say the units are overdue, and the next
    # call that writes (here an expire of nothing: units older than 30 years) resolves them
    _, status = _get(port, "/experiments/ab/status")
    assert status["waiting_units"]["overdue"] == 5
    assert _post(port, "/experiments/ab/expire", {"older_than": 1e9}) == (200, {"expired": 0})
    _, after = _get(port, "/experiments/ab/units?unanswered=true")
    assert after["units"] == []
    _, units = _get(port, "/experiments/ab/units")
    assert all(u["imputed"] for u in units["units"])


def test_units_filters_pages_and_exports_csv(server):
    port = server.port
    assert _post(port, "/experiments", {**README, "outcome_window": 3600})[0] == 201
    _post(port, "/experiments/ab/assign", {"n": 25})
    answered = list(range(1, 26, 2))
    _post(port, "/experiments/ab/record", {"units": answered, "rewards": [1] * len(answered)})
    waiting = [u for u in range(1, 26) if u not in answered]
    _, page = _get(port, "/experiments/ab/units?unanswered=true&limit=5")
    assert [u["unit"] for u in page["units"]] == waiting[:5] and page["next_after"] == waiting[4]
    _, page2 = _get(port, f"/experiments/ab/units?unanswered=true&limit=5&after="
                                 f"{page['next_after']}")
    assert [u["unit"] for u in page2["units"]] == waiting[5:10]
    _, everything = _get(port, "/experiments/ab/units?unanswered=false")
    assert len(everything["units"]) == 25 and everything["next_after"] is None
    code, text = _get(port, "/experiments/ab/units?unanswered=true&format=csv")
    assert code == 200
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [int(r["unit"]) for r in rows] == waiting and "propensity" in rows[0]
    code, text = _get(port, "/experiments/ab/units?limit=3",
                      headers={"Accept": "text/csv"})
    assert [int(r["unit"]) for r in csv.DictReader(io.StringIO(text))] == [1, 2, 3]
    for query, message in (("unanswered=maybe", "unanswered must be true or false"),
                           ("limit=0", "limit must be an integer >= 1"),
                           ("after=x", "after must be an integer"),
                           ("format=xml", "format must be json or csv"),
                           ("unanswerd=true", "unknown query parameter")):
        code, answer = _get(port, f"/experiments/ab/units?{query}")
        assert code == 400 and message in answer["error"], (query, answer)


def test_create_refuses_a_bad_window_or_rule_by_name_and_creates_nothing(server):
    port = server.port
    for field, value, message in (("outcome_window", -1, "outcome_window must be"),
                                  ("outcome_window", 0, "outcome_window must be"),
                                  ("outcome_window", "1d", "outcome_window must be"),
                                  ("missing", "drop", "missing must be 'zero'")):
        code, answer = _post(port, "/experiments", {**README, field: value})
        assert code == 400 and message in answer["error"], answer
    assert _get(port, "/experiments")[1] == {"experiments": []}


def test_the_cli_creates_with_a_window_shows_it_and_refuses_a_bad_one(tmp_path, capsys):
    path = tmp_path / "ab.sqlite"
    base = ["experiment", "create", str(path), "--algorithm", "ReplicableElimination",
            "--arms", "a,b,c", "--seed", "7", "--horizon", "30000", "--param", "rho=0.2"]
    for flags, message in ((["--outcome-window", "-5"], "outcome_window must be"),
                           (["--outcome-window", "nan"], "outcome_window must be"),
                           (["--outcome-window", "inf"], "outcome_window must be"),
                           (["--missing", "never"], "missing must be 'zero'")):
        assert main([*base, *flags]) == 2
        assert message in capsys.readouterr().err
        assert not path.exists()
    assert main([*base, "--outcome-window", "7200", "--missing", "expire"]) == 0
    capsys.readouterr()
    assert main(["experiment", "assign", str(path), "3"]) == 0
    capsys.readouterr()
    assert main(["experiment", "status", str(path)]) == 0
    out = capsys.readouterr().out
    assert "outcome window: 7200 s (2 h); a unit unanswered when it closes: " \
           "missing='expire' (withdrawn" in out
    assert "waiting for an outcome: 3 unit(s); the oldest, unit 1" in out
    assert main(["experiment", "status", str(path), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["outcome_window"], summary["missing"]) == (7200.0, "expire")
    assert summary["waiting_units"]["units"] == 3
    assert main(["experiment", "units", str(path), "--unanswered", "--after", "1",
                 "--limit", "1"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["unit"] for r in rows] == ["2"] and "imputed" in rows[0]


def test_a_read_that_finds_overdue_units_has_the_writer_resolve_them(server):
    """Reads run in read-only reader processes, which resolve nothing: a read that finds units
    past their window answers at once (it names them overdue, without waiting for the writer)
    and has the server's writer resolve them in the background, so a dashboard that only
    reads sees them resolved without any write from a client."""
    port = server.port
    assert _post(port, "/experiments", {**README, "outcome_window": 1.0})[0] == 201
    code, assigned = _post(port, "/experiments/ab/assign", {"n": 4})
    assert code == 200 and len(assigned["units"]) == 4
    time.sleep(1.3)  # the four windows close; no client writes from here on
    _, status = _get(port, "/experiments/ab/status")
    assert status["waiting_units"]["overdue"] == 4  # answered before the writer resolved
    deadline = time.time() + 30
    while status["waiting_units"]["overdue"] and time.time() < deadline:
        time.sleep(0.1)
        _, status = _get(port, "/experiments/ab/status")
    assert status["waiting_units"]["overdue"] == 0 and status["waiting_units"]["units"] == 0
    _, units = _get(port, "/experiments/ab/units")
    assert [u["reward"] for u in units["units"]] == [0.0] * 4  # missing="zero": imputed
    assert all(u["imputed"] for u in units["units"])
