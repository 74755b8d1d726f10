"""The ``banditkit`` command line: list, run (with --json), plot, report and refusals."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
import pytest

from banditkit.cli import main
from banditkit.experiments.runner import default_out

FIGURE = "replicable-bandits:ucb-baseline"


def _call(argv, capsys):
    """Run the CLI in-process: (exit status, stdout, stderr)."""
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exit_:  # argparse refusals
        code = exit_.code
    out = capsys.readouterr()
    return code, out.out, out.err


def test_list_shows_figures_with_titles(capsys):
    code, out, _ = _call(["list"], capsys)
    assert code == 0
    line = next(line for line in out.splitlines() if line.startswith(FIGURE))
    assert "UCB1 cumulative regret" in line


def test_list_marks_figures_needing_data_and_long_full_runs(capsys):
    code, out, _ = _call(["list"], capsys)
    assert code == 0
    lines = {line.split()[0]: line for line in out.splitlines() if line and ":" in line.split()[0]}
    assert "[data]" in lines["rage:fig2b"] and "[data]" in lines["p1-rage:fig2b"]
    assert "[data]" not in lines["rage:fig1a"]
    assert "[~5 min]" in lines["rage:fig2b"] and "[~10 min]" in lines["p1-rage:fig2a"]
    assert "[~11 min]" in lines["rage:fig1a"] and "[~3 min]" in lines["rage:fig1b"]
    # every figure of the four papers shows its measured full run, seconds under a minute
    assert "[~1 s]" in lines["replicable-bandits:ucb-baseline"]
    assert "[~16 s]" in lines["p1-rage:fig4"]
    papers = ("rage:", "p1-rage:", "replicable-bandits:", "replicable-constrained:")
    assert all(re.search(r"\[~\d+ (min|s)\]", line)
               for name, line in lines.items() if name.startswith(papers)), lines
    # titles quote the full run's own numbers (placeholders filled), never a brace
    assert "T = 21000" in lines["p1-rage:fig2b"] and "40 arms" in lines["rage:fig2b"]
    assert "{" not in out
    assert "make data" in out.splitlines()[-1]


def test_module_entry_point_runs():
    done = subprocess.run([sys.executable, "-m", "banditkit", "list"], capture_output=True,
                          text=True, check=True)
    assert FIGURE in done.stdout


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    """``banditkit run FIGURE --quick --json`` into a fresh folder: (folder, parsed JSON)."""
    out = tmp_path_factory.mktemp("cli") / "run"
    import contextlib
    import io

    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(["run", FIGURE, "--quick", "--json", "--workers", "2", "--out", str(out)])
    assert code == 0, stderr.getvalue()
    return out, json.loads(stdout.getvalue()), stderr.getvalue()


def test_run_quick_json_summary(quick_run):
    out, doc, err = quick_run
    assert doc["figure"] == FIGURE and doc["quick"] is True and doc["trials"] == 4
    assert doc["n_trials"] == 4 and doc["n_failed"] == 0 and doc["ran"] == 4
    [row] = doc["summary"]
    assert row["algorithm"] == "UCB1" and row["n_ok"] == 4 and row["n_failed"] == 0
    assert row["means"] == [0.44, 0.47, 0.5, 0.53, 0.56, 0.59]
    assert row["n_pulls_mean"] == 5000
    assert row["final_regret_lo"] < row["final_regret_mean"] < row["final_regret_hi"]
    # UCB1's regret on this instance is far below that of uniform play, far above zero.
    uniform = 5000 * np.mean(0.59 - np.array([0.44, 0.47, 0.5, 0.53, 0.56, 0.59]))
    assert 20 < row["final_regret_mean"] < uniform
    assert str(out) in err  # where the files are, on stderr when --json holds stdout


def test_run_writes_database_plots_and_report(quick_run):
    out, doc, _ = quick_run
    stem = "replicable-bandits_ucb-baseline"
    for name in ("results.sqlite", f"{stem}.png", f"{stem}.pdf", "report.md"):
        assert (out / name).stat().st_size > 0, name
    assert doc["plots"] == [str(out / f"{stem}.png"), str(out / f"{stem}.pdf")]
    report = (out / "report.md").read_text()
    for text in ("# UCB1 cumulative regret", "Esfandiari et al., Replicable Bandits",
                 "## Comparison with the paper", "## Failures", "No trial failed",
                 f"banditkit run {FIGURE} --quick --trials 4 --seed 0 --out {out}",
                 f"]({stem}.png)", "26208"):
        assert text in report, text


def test_plot_and_report_regenerate_from_the_database(quick_run, capsys):
    out, _, _ = quick_run
    stem = "replicable-bandits_ucb-baseline"
    for name in (f"{stem}.png", f"{stem}.pdf", "report.md"):
        (out / name).unlink()
    code, printed, _ = _call(["plot", out], capsys)
    assert code == 0 and str(out / f"{stem}.png") in printed
    code, printed, _ = _call(["report", out], capsys)
    assert code == 0 and printed.strip() == str(out / "report.md")
    for name in (f"{stem}.png", f"{stem}.pdf", "report.md"):
        assert (out / name).exists()


def test_plot_and_report_write_elsewhere_with_out(quick_run, capsys, tmp_path, monkeypatch):
    out, _, _ = quick_run
    elsewhere = tmp_path / "figs"
    code, printed, _ = _call(["plot", out, "--out", elsewhere], capsys)
    assert code == 0 and str(elsewhere / "replicable-bandits_ucb-baseline.png") in printed
    code, printed, _ = _call(["report", out, "--out", elsewhere], capsys)
    assert code == 0 and (elsewhere / "report.md").exists()
    code, _, err = _call(["report", out, "--out", out / "results.sqlite"], capsys)
    assert code == 2 and "not a folder" in err

    def read_only(*args, **kwargs):  # what a read-only run folder gives (root ignores chmod)
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("pathlib.Path.mkdir", read_only)
    for command in ("plot", "report"):
        code, _, err = _call([command, out], capsys)
        assert code == 2 and "Permission denied" in err and "--out DIR" in err
        assert "Traceback" not in err


def test_run_again_resumes_and_changed_configuration_is_refused(quick_run, capsys):
    out, _, _ = quick_run
    code, printed, _ = _call(["run", FIGURE, "--quick", "--json", "--backend", "serial",
                              "--out", out], capsys)
    assert code == 0 and json.loads(printed)["ran"] == 0
    code, _, err = _call(["run", FIGURE, "--quick", "--seed", "3", "--out", out], capsys)
    assert code == 2 and "different configuration" in err and "seed" in err


@pytest.mark.parametrize(("argv", "expected"), [
    (["run", "nope"], "argument figure: unknown figure 'nope'; known figures: .*" + FIGURE),
    (["run", FIGURE, "--backend", "threads"], "argument --backend: invalid choice"),
    (["run", FIGURE, "--trials", "0"], "argument --trials: must be an integer >= 1, got 0"),
    (["run", FIGURE, "--workers", "0"], "argument --workers: must be an integer >= 1, got 0"),
    (["run", FIGURE, "--workers", "two"], "argument --workers: must be an integer >= 1"),
    (["run", FIGURE, "--seed", "-1"], "argument --seed: must be a non-negative integer"),
    (["run", FIGURE, "--scheduler", "tcp://x:1"], "argument --scheduler: only used with"),
    (["plot", "no/such/dir"], "argument RUN_DIR: no results.sqlite in no/such/dir"),
    (["report", "no/such/dir"], "argument RUN_DIR: no results.sqlite"),
])
def test_bad_input_is_refused_naming_the_parameter(argv, expected, capsys, tmp_path,
                                                   monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = _call(argv, capsys)
    assert code == 2 and re.search(expected, err), err
    assert not (tmp_path / "runs").exists()  # refused before any work


def test_default_run_folder():
    assert str(default_out(FIGURE, True)) == "runs/replicable-bandits_ucb-baseline-quick"
    assert str(default_out(FIGURE, False)) == "runs/replicable-bandits_ucb-baseline"


@pytest.mark.parametrize("figure", ["p1-rage:fig2b", "rage:fig2b"])
def test_click_through_without_movielens_is_refused_naming_make_data(figure, capsys, tmp_path,
                                                                     monkeypatch):
    import importlib.metadata

    from banditkit.envs import datasets

    monkeypatch.delenv(datasets.DATA_ENV, raising=False)
    monkeypatch.setattr(importlib.metadata, "distribution",
                        lambda name: (_ for _ in ()).throw(
                            importlib.metadata.PackageNotFoundError(name)))
    out = tmp_path / "run"
    assert main(["run", figure, "--quick", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "make data" in err and "Traceback" not in err
    assert not (out / "results.sqlite").exists()  # refused before any work


def test_broken_or_misplaced_run_databases_are_refused_without_traceback(tmp_path, capsys):
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "results.sqlite").write_text("not a database")
    for argv in (["report", str(broken)], ["plot", str(broken)],
                 ["run", "replicable-bandits:ucb-baseline", "--quick", "--out", str(broken)]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "not a banditkit run database" in err and "Traceback" not in err
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    assert main(["run", "replicable-bandits:ucb-baseline", "--quick", "--out", str(a_file)]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "replicable-bandits:ucb-baseline", "--quick", "--out", ""])
    assert exit_info.value.code == 2
    assert "non-empty path" in capsys.readouterr().err


def test_audit_help_lists_policies_and_instances(capsys):
    with pytest.raises(SystemExit):
        main(["audit", "--help"])
    out = capsys.readouterr().out
    assert "policies:" in out and "DEBORAS" in out and "P1RAGE" in out
    assert "instances:" in out and "click-through-periodic" in out


def test_audit_says_when_identifiers_were_cut_and_names_nan(capsys):
    assert main(["audit", "RAGE", "--instance", "soare", "--horizon", "1000",
                 "--pairs", "2"]) == 0
    assert "4 of 4 executions were cut at the horizon" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["audit", "UCB1", "--instance", "bernoulli", "--instance-param",
              "means=[0.1,nan]", "--horizon", "100", "--pairs", "2"])
    assert "NaN and infinity are not valid values" in capsys.readouterr().err


def test_absurd_worker_counts_are_refused(capsys, tmp_path):
    assert main(["run", "replicable-bandits:ucb-baseline", "--quick", "--workers", "100000",
                 "--out", str(tmp_path / "w")]) == 2
    assert "argument --workers" in capsys.readouterr().err
    assert not (tmp_path / "w").exists()


def test_unreachable_dask_scheduler_is_refused_without_traceback(capsys, tmp_path, monkeypatch):
    from banditkit.experiments import backends

    monkeypatch.setattr(backends, "SCHEDULER_TIMEOUT", 1.0)
    assert main(["run", "replicable-bandits:ucb-baseline", "--quick", "--backend", "dask",
                 "--scheduler", "tcp://127.0.0.1:1", "--no-progress",
                 "--out", str(tmp_path / "d")]) == 2
    err = capsys.readouterr().err
    assert "cannot reach the Dask scheduler" in err and "Traceback" not in err


def test_param_true_and_false_in_any_case_are_booleans(capsys):
    """``--param beta_floor=false`` is the boolean, as ``beta_floor=False`` is (it was refused:
    the text 'false' is not a bool)."""
    from banditkit.cli import key_value

    for raw, value in [("false", False), ("False", False), ("FALSE", False), ("true", True),
                       ("True", True), ("tRuE", True)]:
        key, got = key_value(f"beta_floor={raw}")
        assert key == "beta_floor" and got is value
    assert key_value("name=falsey") == ("name", "falsey")
    outs = []
    for raw in ("false", "False"):
        code, out, err = _call(["audit", "ReplicableElimination", "--instance", "bernoulli",
                                "--pairs", "2", "--horizon", "45000", "--param", "rho=0.3",
                                "--param", f"beta_floor={raw}", "--json"], capsys)
        assert code == 0, err
        outs.append(json.loads(out))
    assert outs[0]["regret"] == outs[1]["regret"]
    assert outs[0]["regret"]["mean"] == pytest.approx(5130.0)  # β = 400: docs/replicable.md
