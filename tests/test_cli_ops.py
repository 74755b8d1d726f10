"""``banditkit experiment`` for an operator, on a file and (``--name``) on an experiment of a
PostgreSQL database: create, assign with overflow, pause / resume, stop with rollout, status as
CSV with the decision first, audit, archive, delete."""

from __future__ import annotations

import io

import pandas as pd
import pytest

from banditkit.cli import main


@pytest.fixture(params=["sqlite", "postgres"])
def location(request, tmp_path) -> list[str]:
    if request.param == "sqlite":
        return [str(tmp_path / "e.sqlite")]
    url, name = request.getfixturevalue("pg_experiment")
    return [url, f"--name={name}"]


def _run(capsys, action: str, *args: str) -> tuple[int, str, str]:
    # --name=... goes last: argparse takes an optional positional (assign's N) only before
    # the options
    named = [a for a in args if a.startswith("--name=")]
    code = main(["experiment", action, *[a for a in args if a not in named], *named])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_operator_commands_on_a_file_and_in_postgresql(location, capsys, tmp_path):
    code, out, _ = _run(capsys, "create", *location, "--algorithm", "ReplicableElimination",
                        "--arms", "a,b,c", "--seed", "3", "--horizon", "3000",
                        "--param", "rho=0.3", "--param", "beta=3", "--who", "dana")
    assert code == 0 and out.startswith("created ")
    code, out, _ = _run(capsys, "assign", *location, "30")
    units = pd.read_csv(io.StringIO(out))
    assert code == 0 and len(units) == 30  # 18 slots of the first round, 12 overflow units
    code, out, _ = _run(capsys, "units", *location)
    listed = pd.read_csv(io.StringIO(out))
    assert listed["kind"].value_counts().to_dict() == {"algorithm": 18, "overflow": 12}
    assert _run(capsys, "pause", *location, "--reason", "tracking", "--who", "dana")[0] == 0
    code, out, err = _run(capsys, "assign", *location, "5")
    assert code == 0 and "paused by dana" in err and pd.read_csv(io.StringIO(out)).empty
    assert _run(capsys, "resume", *location, "--who", "dana")[1].startswith("resumed")
    code, out, _ = _run(capsys, "stop", *location, "--arm", "b", "--who", "erin")
    assert code == 0 and "rolling out b" in out
    code, out, _ = _run(capsys, "assign", *location, "4")
    assert pd.read_csv(io.StringIO(out))["arm"].tolist() == ["b"] * 4
    code, out, _ = _run(capsys, "status", *location)
    assert out.splitlines()[0].startswith(
        "STOPPED: winner b (stopped by erin: the arm named at the stop)")
    code, out, _ = _run(capsys, "status", *location, "--csv")
    table = pd.read_csv(io.StringIO(out), index_col="arm")
    assert table["overflow"].sum() == 12 + 4 and table["assigned"].sum() == 18
    code, _, err = _run(capsys, "delete", *location)
    assert code != 0 and "not archived" in err
    assert _run(capsys, "archive", *location, "--who", "erin")[0] == 0
    code, out, _ = _run(capsys, "audit", *location)
    log = pd.read_csv(io.StringIO(out))
    assert log["action"].tolist() == ["create", "pause", "resume", "stop", "archive"]
    assert log["who"].tolist() == ["dana", "dana", "dana", "erin", "erin"]
    assert _run(capsys, "delete", *location)[0] == 0
    code, _, err = _run(capsys, "status", *location)
    assert code != 0 and "no experiment" in err


def test_name_is_refused_with_a_file_and_required_with_a_url(tmp_path, capsys):
    code, _, err = _run(capsys, "status", str(tmp_path / "e.sqlite"), "--name", "x")
    assert code != 0 and "--name: only with a postgresql:// URL" in err
    code, _, err = _run(capsys, "status", "postgresql://nobody@/nodb")
    assert code != 0 and "--name: required" in err
