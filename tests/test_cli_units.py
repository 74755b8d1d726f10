"""No assigned unit is lost (issue 15 §2), and reading commands read only (§4): real
processes racing for one ``--out``, killed with SIGKILL mid-write, or writing into a pipe that
``head`` closes; ``experiment units`` is the way back to every unit; ``record --skip-expired``;
``status``/``units`` on a file and folder the process cannot write."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from banditkit import Experiment, ExperimentError
from banditkit.cli import main
from live_support import vm_steps

CLI = [sys.executable, "-m", "banditkit", "experiment"]


def _create(path: Path, rho: float = 0.2, horizon: int = 300_000) -> Path:
    with Experiment.create(path, algorithm="ReplicableElimination", arms=["a", "b", "c"],
                           seed=7, horizon=horizon, params={"rho": rho}):
        pass
    return path


def _cli(*argv: object, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *map(str, argv)], capture_output=True, text=True, **kwargs)


def _all_units(path: Path) -> pd.DataFrame:
    with Experiment.open(path, readonly=True) as exp:
        return exp.units()


def test_two_assigns_racing_for_one_out_file_one_wins_and_no_unit_is_lost(tmp_path):
    """Both processes are started together while the test holds the experiment's write lock,
    so both are past their start-up and reach the output file before either can assign: the
    reservation (O_EXCL) must refuse one of them before it assigns anything."""
    path = _create(tmp_path / "ab.sqlite")
    out = tmp_path / "same.csv"
    lock = sqlite3.connect(path, isolation_level=None)
    lock.execute("BEGIN IMMEDIATE")  # the assigns wait for this (SQLite busy timeout: 30 s)
    procs = [subprocess.Popen([*CLI, "assign", str(path), "3000", "--out", str(out)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and all(p.poll() is None for p in procs):
        time.sleep(0.05)  # the loser is refused at once, while the winner waits for the lock
    time.sleep(1.0)  # a second process past its reservation would now be waiting too
    lock.execute("ROLLBACK")
    lock.close()
    results = [(p.wait(60), *p.communicate()) for p in procs]
    codes = sorted(code for code, _, _ in results)
    assert codes == [0, 2], results
    loser = next(err for code, _, err in results if code == 2)
    assert "same.csv.partial' exists" in loser and "Traceback" not in loser
    written = pd.read_csv(out)
    assigned = _all_units(path)
    assert len(written) == 3000
    assert written["unit"].tolist() == assigned["unit"].tolist()  # no unit in no file
    assert not (tmp_path / "same.csv.partial").exists()
    # and the name is taken from now on: a third call is refused before it assigns anything
    again = _cli("assign", path, 10, "--out", out)
    assert again.returncode == 2 and "exists; name a new file" in again.stderr
    assert len(_all_units(path)) == 3000


def test_a_killed_assign_leaves_no_truncated_file_and_its_units_are_listed(tmp_path):
    """SIGKILL while the CSV of 135,000 units is being written: the database holds them
    all, ``OUT`` is absent (or, had the kill come after its name was given, complete), and
    ``experiment units --unanswered`` lists every one of them."""
    path = _create(tmp_path / "big.sqlite", rho=0.02, horizon=10**8)
    out = tmp_path / "big.csv"
    partial = tmp_path / "big.csv.partial"
    proc = subprocess.Popen([*CLI, "assign", str(path), "135000", "--out", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if partial.exists() and partial.stat().st_size > 0:  # writing has begun
            proc.send_signal(signal.SIGKILL)
            break
        time.sleep(0.002)
    assert proc.wait(60) == -signal.SIGKILL, "the assign finished before it could be killed"
    assigned = _all_units(path)
    assert len(assigned) == 135_000
    if out.exists():  # killed after the complete file was given its name
        assert pd.read_csv(out)["unit"].tolist() == assigned["unit"].tolist()
    else:  # what was written so far carries the .partial name, never OUT's
        assert partial.stat().st_size < 135_000 * len("1,a,0,0\n")
    listed = _cli("units", path, "--unanswered", "--out", tmp_path / "recovered.csv")
    assert listed.returncode == 0, listed.stderr
    recovered = pd.read_csv(tmp_path / "recovered.csv")
    assert recovered["unit"].tolist() == assigned["unit"].tolist()
    assert list(recovered.columns[:4]) == ["unit", "arm", "arm_index", "batch"]
    assert (recovered["arm"] == assigned["arm"]).all()
    # the stale reservation blocks the name (with the way back), and nothing more is assigned
    if partial.exists():
        blocked = _cli("assign", path, 10, "--out", out)
        assert blocked.returncode == 2 and "killed before it finished" in blocked.stderr
        assert f"experiment units {path} --unanswered" in blocked.stderr
        assert len(_all_units(path)) == 135_000


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace")
def test_the_output_is_on_disk_before_it_has_its_name(tmp_path):
    """The order of the system calls: fsync of OUT.partial, then link to OUT (a crash of the
    machine between them would otherwise leave a named, empty or partial file)."""
    path = _create(tmp_path / "ab.sqlite")
    out = tmp_path / "day.csv"
    trace = tmp_path / "trace.txt"
    done = subprocess.run(["strace", "-f", "-o", str(trace), "-e",
                           "trace=openat,fsync,fdatasync,link,rename,renameat,renameat2",
                           *CLI, "assign", str(path), "50", "--out", str(out)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    lines = trace.read_text().splitlines()
    opened = next(i for i, line in enumerate(lines) if "day.csv.partial" in line
                  and "O_EXCL" in line)
    fd = re.search(r"= (\d+)$", lines[opened]).group(1)
    synced = next(i for i, line in enumerate(lines) if i > opened
                  and re.search(rf"\b(fsync|fdatasync)\({fd}\)", line))
    named = next(i for i, line in enumerate(lines) if re.search(
        r"(link|rename\w*)\(.*day\.csv\.partial\".*day\.csv\"", line))
    assert opened < synced < named
    assert len(pd.read_csv(out)) == 50


def test_a_closed_pipe_ends_quietly_and_the_units_can_be_listed(tmp_path):
    path = _create(tmp_path / "ab.sqlite")  # a first batch of 13,824 pulls: 170 kB of CSV
    done = subprocess.run(f"{' '.join(CLI)} assign {path} 13824 | head -2", shell=True,
                          capture_output=True, text=True, executable="/bin/bash")
    assert done.stdout.splitlines() == ["unit,arm,arm_index,batch",
                                        done.stdout.splitlines()[1]]
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr
    [line] = done.stderr.strip().splitlines()
    assert "13824 unit(s) were assigned; they are units 1 to 13824" in line
    assert f"experiment units {path} --unanswered" in line
    listed = _cli("units", path, "--unanswered")
    assert listed.returncode == 0
    units = pd.read_csv(pd.io.common.StringIO(listed.stdout))
    assert units["unit"].tolist() == list(range(1, 13825))


def test_record_skip_expired_records_the_rest_and_lists_the_skipped(tmp_path, capsys):
    path = _create(tmp_path / "ab.sqlite")
    with Experiment.open(path) as exp:
        units = exp.assign(10)
        exp.expire(units["unit"].iloc[[2, 7]].tolist())
    answers = tmp_path / "answers.csv"
    units.assign(reward=1)[["unit", "reward"]].to_csv(answers, index=False)
    capsys.readouterr()
    assert main(["experiment", "record", str(path), str(answers)]) == 2  # all or nothing
    assert "expired" in capsys.readouterr().err
    assert _all_units(path)["reward"].isna().all()
    assert main(["experiment", "record", str(path), str(answers), "--skip-expired"]) == 0
    captured = capsys.readouterr()
    assert "recorded 8 new reward(s)" in captured.out
    skipped = units["unit"].iloc[[2, 7]].tolist()
    assert captured.err.strip().endswith(f": {skipped[0]},{skipped[1]}")
    table = _all_units(path).set_index("unit")
    assert table["reward"].notna().sum() == 8
    assert table.loc[skipped, "reward"].isna().all()
    # a retry skips the same units and counts nothing twice
    assert main(["experiment", "record", str(path), str(answers), "--skip-expired"]) == 0
    assert "recorded 0 new reward(s) (8 already recorded)" in capsys.readouterr().out


def test_units_by_id_and_unanswered_are_the_rows_of_the_full_list(tmp_path):
    path = _create(tmp_path / "ab.sqlite")
    with Experiment.open(path) as exp:
        units = exp.assign(40)["unit"].tolist()
        exp.record(units[:10], [1.0] * 10)
        exp.expire(units[10:15])
        full = exp.units()
        key = ["unit", "batch", "slot", "arm", "arm_index"]

        def rows(frame: pd.DataFrame) -> list[tuple]:
            return list(frame[key].itertuples(index=False, name=None))

        unanswered = full[full["reward"].isna() & full["expired_at"].isna()]
        assert len(unanswered) == 25
        assert rows(exp.units(unanswered=True)) == rows(unanswered)
        wanted = [units[30], units[3], units[12], 10**9]  # any order; unknown ids: no row
        by_id = exp.units(ids=wanted)
        assert rows(by_id) == rows(full[full["unit"].isin(wanted)])
        assert by_id["reward"].tolist()[0] == 1.0 and by_id["expired_at"].notna().tolist() == [
            False, True, False]
        assert exp.units(ids=wanted, unanswered=True)["unit"].tolist() == [units[30]]
        assert exp.units(ids=[]).empty
        with pytest.raises(ExperimentError, match=r"got a Series \(1000 values"):
            exp.units(ids=pd.Series([f"user-{i}" for i in range(1000)]))


def test_units_by_id_cost_does_not_grow_with_the_units_assigned(tmp_path):
    path = _create(tmp_path / "ab.sqlite", rho=0.02, horizon=10**8)
    with Experiment.open(path) as exp:
        exp.assign(5_000)
        small = vm_steps(exp, lambda: exp.units(ids=[5, 17, 4000]))
        full_small = vm_steps(exp, exp.units)
        exp.assign(50_000)
        large = vm_steps(exp, lambda: exp.units(ids=[5, 17, 4000]))
        full_large = vm_steps(exp, exp.units)
    assert full_large > 5 * full_small  # the full list grows with the units...
    assert large <= small + 2  # ...a lookup by id does not


# ---------------------------------------------------------------------------------------------
# read-only files and folders

def _as_unprivileged() -> list[str]:
    """A prefix running a command without the capabilities that let root ignore file modes
    (tests run as root in CI containers, where chmod alone stops nothing)."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: a read-only file cannot be made")
    return ["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner,"
            "-linux_immutable"]


@pytest.mark.parametrize("folder_writable", [False, True])
def test_reading_commands_work_on_a_read_only_file(tmp_path, folder_writable):
    folder = tmp_path / "ro"
    folder.mkdir()
    path = _create(folder / "ab.sqlite")
    with Experiment.open(path) as exp:
        exp.assign(5)
    before = path.read_bytes()
    path.chmod(0o444)
    if not folder_writable:
        folder.chmod(0o555)
    prefix = _as_unprivileged()
    try:
        # the setting is real: this process cannot write the file (nor, when so, the folder)
        probe = subprocess.run([*prefix, "sh", "-c", f"echo x >> {path}"], capture_output=True)
        assert probe.returncode != 0
        status = subprocess.run([*prefix, *CLI, "status", str(path), "--json"],
                                capture_output=True, text=True)
        assert status.returncode == 0, status.stderr
        state = json.loads(status.stdout)
        assert state["batch_pending"] == 13824 and sum(a["assigned"] for a in state["arms"]) == 5
        units = subprocess.run([*prefix, *CLI, "units", str(path)], capture_output=True,
                               text=True)
        assert units.returncode == 0, units.stderr
        assert len(pd.read_csv(pd.io.common.StringIO(units.stdout))) == 5
        assign = subprocess.run([*prefix, *CLI, "assign", str(path), "3"],
                                capture_output=True, text=True)
        assert assign.returncode == 2
        assert re.search(r"cannot be (read or )?written", assign.stderr), assign.stderr
        assert len(assign.stderr.strip().splitlines()) == 1
    finally:
        folder.chmod(0o755)
        path.chmod(0o644)
    assert path.read_bytes() == before


def test_a_read_only_experiment_refuses_writing_calls_by_name(tmp_path):
    path = _create(tmp_path / "ab.sqlite")
    with Experiment.open(path) as exp:
        unit = int(exp.assign(1)["unit"].iloc[0])
    with Experiment.open(path, readonly=True) as exp:
        assert exp.readonly and exp.status().arms["assigned"].sum() == 1
        for call, name in [(lambda: exp.assign(1), "assign"),
                           (lambda: exp.record([unit], [1.0]), "record"),
                           (lambda: exp.expire([unit]), "expire")]:
            with pytest.raises(ExperimentError, match=f"^{name} writes to the experiment, "
                               "which was opened read-only"):
                call()
    with Experiment.open(path) as exp:
        assert not exp.readonly
        assert exp.units()["reward"].isna().all() and exp.units()["expired_at"].isna().all()


def test_units_of_a_constrained_policy_carry_their_costs(tmp_path, capsys):
    path = tmp_path / "c.sqlite"
    assert main(["experiment", "create", str(path), "--algorithm", "DEBORAS", "--arms",
                 "a,b,c", "--horizon", "1000", "--seed", "1", "--threshold", "0.5"]) == 0
    with Experiment.open(path) as exp:
        first = exp.assign(4)["unit"].tolist()  # DEBORA-S's first epoch may be short
        exp.record(first[:1], [1.0], [[0.25]])
        later = exp.assign(1)["unit"].tolist()
    capsys.readouterr()
    assert main(["experiment", "units", str(path)]) == 0
    listed = pd.read_csv(pd.io.common.StringIO(capsys.readouterr().out))
    assert list(listed.columns) == ["unit", "arm", "arm_index", "batch", "slot", "reward",
                                    "cost_1", "assigned_at", "recorded_at", "expired_at",
                                    "imputed", "key", "kind", "propensity"]  # key: none here
    assert listed["key"].isna().all()
    assert listed["unit"].tolist() == first + later
    assert listed["cost_1"].iloc[0] == 0.25 and listed["cost_1"].iloc[1:].isna().all()
