"""``banditkit experiment``: a whole experiment from the shell with CSV files, and one-line
refusals (exit 2, no traceback) for a user's mistakes and broken files."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from banditkit import Experiment
from banditkit.cli import main


def _create(path, *extra: str) -> int:
    return main(["experiment", "create", str(path), "--algorithm", "ReplicableElimination",
                 "--arms", "control,blue,green", "--horizon", "3000", "--seed", "7",
                 "--param", "rho=0.3", "--param", "beta=3",
                 "--overflow", "off",  # the algorithm's slots alone (test_cli_ops: with it)
                 *extra])


def test_a_whole_batch_through_csv_files(tmp_path, capsys):
    path = tmp_path / "ab.sqlite"
    assert _create(path) == 0
    out = tmp_path / "day1.csv"
    assert main(["experiment", "assign", str(path), "100", "--out", str(out)]) == 0
    units = pd.read_csv(out)
    assert list(units.columns) == ["unit", "arm", "arm_index", "batch"]
    assert len(units) == 18 and set(units["arm"]) == {"control", "blue", "green"}
    answers = units.assign(reward=(units["arm"] == "green"))[["unit", "reward"]]
    answers.to_csv(tmp_path / "answers.csv", index=False)  # true/false: read as 1/0
    assert main(["experiment", "record", str(path), str(tmp_path / "answers.csv")]) == 0
    capsys.readouterr()
    assert main(["experiment", "status", str(path), "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["batches_observed"] == 1 and status["pulls_observed"] == 18
    means = {row["arm"]: row["mean"] for row in status["arms"]}
    assert means == {"control": 0.0, "blue": 0.0, "green": 1.0}
    # a retried record counts nothing twice
    assert main(["experiment", "record", str(path), str(tmp_path / "answers.csv")]) == 0
    assert "recorded 0 new" in capsys.readouterr().out
    assert main(["experiment", "assign", str(path), "2"]) == 0
    printed = pd.read_csv(pd.io.common.StringIO(capsys.readouterr().out))
    assert len(printed) == 2 and (printed["batch"] == 1).all()
    assert main(["experiment", "expire", str(path), "--units",
                 ",".join(map(str, printed["unit"]))]) == 0
    with Experiment.open(path) as exp:
        assert exp.units()["expired_at"].notna().sum() == 2


@pytest.mark.parametrize("argv, match", [
    (["status", "{missing}"], "no experiment at"),
    (["status", "{junk}"], "not a banditkit experiment"),
    (["record", "{exp}", "{missing}"], "no file"),
    (["record", "{exp}", "{nocol}"], "lacks column"),
    (["record", "{exp}", "{text}"], "numbers only"),
    (["record", "{exp}", "{unknown}"], "never assigned"),
    (["record", "{exp}", "{empty}"], "not a readable CSV"),
    (["record", "{exp}", "{header}"], "no rows"),
    (["assign", "{exp}", "3", "--out", "{exp}"], "exists"),
    (["expire", "{exp}", "--units", "a,b"], "unit ids"),
    (["create", "{new}", "--algorithm", "Nope", "--arms", "a,b", "--seed", "0"],
     "unknown policy"),
    (["create", "{exp}", "--algorithm", "UCB1", "--arms", "a,b", "--seed", "0"],
     "already exists"),
    (["create", "{new}", "--algorithm", "RAGE", "--features", "{feat_text}", "--seed", "0"],
     "numbers only"),
    (["create", "{new}", "--algorithm", "RAGE", "--features", "{feat_noname}", "--seed", "0"],
     "must be 'arm'"),
    (["record", "{exp}", "{gapcost}"], "cost_1, ..., cost_m"),
    (["create", "{new}", "--algorithm", "UCB1", "--arms", "a,b", "--seed", "0",
      "--param", "exploration=2", "--param", "exploration=3"], "given more than once"),
])
def test_mistakes_and_broken_files_are_refused_in_one_line(tmp_path, capsys, argv, match):
    exp = tmp_path / "ab.sqlite"
    assert _create(exp) == 0
    files = {"exp": exp, "missing": tmp_path / "missing.csv", "junk": tmp_path / "junk.sqlite",
             "nocol": tmp_path / "nocol.csv", "text": tmp_path / "text.csv",
             "unknown": tmp_path / "unknown.csv", "empty": tmp_path / "empty.csv",
             "header": tmp_path / "header.csv", "new": tmp_path / "new.sqlite",
             "feat_text": tmp_path / "ft.csv", "feat_noname": tmp_path / "fn.csv",
             "gapcost": tmp_path / "gapcost.csv"}
    files["junk"].write_bytes(b"\x00garbage" * 200)
    files["nocol"].write_text("unit,value\n1,0.5\n")
    files["text"].write_text("unit,reward\n1,high\n")
    files["unknown"].write_text("unit,reward\n4242,1\n")
    files["empty"].write_text("")
    files["header"].write_text("unit,reward\n")
    files["feat_text"].write_text("arm,x1,x2\na,1,zero\nb,0,1\n")
    files["feat_noname"].write_text("x1,x2\n1,0\n0,1\n")
    files["gapcost"].write_text("unit,reward,cost_1,cost_3\n1,1,0,0\n")
    capsys.readouterr()
    code = main(["experiment", *[a.format(**files) for a in argv]])
    err = capsys.readouterr().err
    assert code == 2
    assert match in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_columns_that_are_not_numbered_costs_are_ignored(tmp_path, capsys):
    path = tmp_path / "ab.sqlite"
    assert _create(path) == 0
    out = tmp_path / "day.csv"
    assert main(["experiment", "assign", str(path), "3", "--out", str(out)]) == 0
    units = pd.read_csv(out)
    units.assign(reward=1, cost_center="marketing")[["unit", "reward", "cost_center"]].to_csv(
        tmp_path / "answers.csv", index=False)
    assert main(["experiment", "record", str(path), str(tmp_path / "answers.csv")]) == 0
    assert "recorded 3 new" in capsys.readouterr().out


def test_arm_names_with_commas_come_from_a_file(tmp_path, capsys):
    names = tmp_path / "names.txt"
    names.write_text("red, large\n\n  blue, small \ngreen\n", encoding="utf-8")
    path = tmp_path / "ab.sqlite"
    assert main(["experiment", "create", str(path), "--algorithm", "UCB1", "--arms-file",
                 str(names), "--horizon", "10", "--seed", "1"]) == 0
    with Experiment.open(path) as exp:
        assert exp.arm_names == ["red, large", "blue, small", "green"]
    capsys.readouterr()
    for bad, match in [(tmp_path / "missing.txt", "no file"), (tmp_path, "not a readable")]:
        assert main(["experiment", "create", str(tmp_path / "x.sqlite"), "--algorithm", "UCB1",
                     "--arms-file", str(bad), "--horizon", "10", "--seed", "1"]) == 2
        err = capsys.readouterr().err
        assert match in err and "--arms-file" in err and len(err.strip().splitlines()) == 1


def test_a_live_debora_h_takes_its_safe_strategy_and_margins(tmp_path, capsys):
    """A live experiment does not know the cost means: x◇ and lower bounds on its margins are
    given as parameters (docs/experiment.md), and checked against the thresholds."""
    base = ["experiment", "create", "--algorithm", "DEBORAH", "--arms", "control,b,c",
            "--horizon", "1000", "--seed", "1", "--threshold", "0.5",
            "--param", "safe_strategy=[1,0,0]"]
    ok = tmp_path / "h.sqlite"
    assert main([*base[:2], str(ok), *base[2:], "--param", "safe_margins=[0.2]"]) == 0
    assert main(["experiment", "assign", str(ok), "1"]) == 0
    assert ",control,0,0" in capsys.readouterr().out  # the first epoch plays x◇
    for extra, match in [([], "Slater margins"), (["--param", "safe_margins=[0.7]"],
                                                  "safe_margins must be <= thresholds")]:
        assert main([*base[:2], str(tmp_path / "x.sqlite"), *base[2:], *extra]) == 2
        assert match in capsys.readouterr().err


def test_a_bom_and_true_false_mixed_with_numbers_are_read(tmp_path, capsys):
    names = tmp_path / "names.txt"
    names.write_bytes("\ufeffcontrol\nblue\n".encode())
    assert main(["experiment", "create", str(tmp_path / "u.sqlite"), "--algorithm", "UCB1",
                 "--arms-file", str(names), "--horizon", "10", "--seed", "1"]) == 0
    with Experiment.open(tmp_path / "u.sqlite") as exp:
        assert exp.arm_names == ["control", "blue"]
    path = tmp_path / "ab.sqlite"
    assert _create(path) == 0
    out = tmp_path / "day.csv"
    assert main(["experiment", "assign", str(path), "4", "--out", str(out)]) == 0
    units = pd.read_csv(out)["unit"].tolist()
    answers = tmp_path / "a.csv"
    answers.write_text("unit,reward\n" + "".join(
        f"{u},{r}\n" for u, r in zip(units, ["TRUE", "1", "0", "false"], strict=True)),
        encoding="utf-8")
    assert main(["experiment", "record", str(path), str(answers)]) == 0
    with Experiment.open(path) as exp:
        got = exp.units().set_index("unit")["reward"]
    assert [got[u] for u in units] == [1.0, 1.0, 0.0, 0.0]
    capsys.readouterr()
    answers.write_text(f"unit,reward\n{units[0]},1\n{units[1]},maybe\n", encoding="utf-8")
    assert main(["experiment", "record", str(path), str(answers)]) == 2
    assert "must hold numbers only" in capsys.readouterr().err


def test_gbai_at_a_budget_of_a_billion_through_the_cli(tmp_path, capsys):
    """An i.i.d. identifier's batch is stored as its description: the CLI creates, assigns,
    records and reports at T = 10⁹ (refused before, 37 GiB), each call reading O(units)."""
    features = tmp_path / "arms.csv"
    pd.DataFrame({"arm": ["a", "b", "c"], "x1": [1, 0, 0], "x2": [0, 1, 0], "x3": [0, 0, 1]}
                 ).to_csv(features, index=False)
    path = tmp_path / "g.sqlite"
    assert main(["experiment", "create", str(path), "--algorithm", "GBAI", "--features",
                 str(features), "--horizon", "1000000000", "--seed", "3"]) == 0
    out = tmp_path / "day1.csv"
    assert main(["experiment", "assign", str(path), "3000", "--out", str(out)]) == 0
    units = pd.read_csv(out)
    assert len(units) == 3000 and set(units["arm"]) == {"a", "b", "c"}
    units.assign(reward=(units["arm"] == "c"))[["unit", "reward"]].to_csv(
        tmp_path / "answers.csv", index=False)
    assert main(["experiment", "record", str(path), str(tmp_path / "answers.csv")]) == 0
    capsys.readouterr()
    assert main(["experiment", "status", str(path), "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["batch_unassigned"] == 10**9 - 3000 and status["batch_pending"] == 10**9 - 3000
    assert {row["arm"]: row["mean"] for row in status["arms"]} == {"a": 0.0, "b": 0.0,
                                                                   "c": 1.0}
    assert path.stat().st_size < 2**21


def test_sticky_units_from_a_keys_file(tmp_path, capsys):
    path = tmp_path / "ab.sqlite"
    assert _create(path) == 0
    keys = tmp_path / "users.txt"
    keys.write_text("alice\nbob\n17\n")
    out = tmp_path / "day1.csv"
    assert main(["experiment", "assign", str(path), "--keys", str(keys), "--out", str(out)]) == 0
    first = pd.read_csv(out, dtype={"key": str})
    assert list(first.columns) == ["unit", "arm", "arm_index", "batch", "key", "repeated"]
    assert first["key"].tolist() == ["alice", "bob", "17"] and not first["repeated"].any()
    keys.write_text("bob\ncarol\n")
    capsys.readouterr()
    assert main(["experiment", "assign", str(path), "2", "--keys", str(keys)]) == 0
    again = pd.read_csv(__import__("io").StringIO(capsys.readouterr().out))
    assert again["repeated"].tolist() == [True, False]
    assert again.iloc[0][["unit", "arm"]].tolist() == \
        first.iloc[1][["unit", "arm"]].tolist()
    with Experiment.open(path) as exp:
        assert int(exp.status().arms["assigned"].sum()) == 4
    assert main(["experiment", "units", str(path)]) == 0
    listed = pd.read_csv(__import__("io").StringIO(capsys.readouterr().out), dtype={"key": str})
    assert listed["key"].tolist() == ["alice", "bob", "17", "carol"]


@pytest.mark.parametrize("lines, n, message", [
    ("a\n\nb\n", None, "argument --keys: line 2 of"),
    ("", None, "holds no keys"),
    ("a\nb\na\n", None, "'a' appears more than once"),
    ("a\nb\n", "3", "n must equal the number of keys (2)"),
    ("x" * 300 + "\n", None, "a key has 1 to 256"),
])
def test_a_bad_keys_file_is_refused_in_one_line(tmp_path, capsys, lines, n, message):
    path = tmp_path / "ab.sqlite"
    assert _create(path) == 0
    keys = tmp_path / "users.txt"
    keys.write_text(lines)
    capsys.readouterr()
    assert main(["experiment", "assign", str(path), *([n] if n else []),
                 "--keys", str(keys)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and err.count("\n") == 1
    with Experiment.open(path) as exp:
        assert exp.units().empty
