"""The replicable-constrained:* figures in quick form, and the unsafe-round count."""

from __future__ import annotations

import numpy as np
import pytest

from banditkit.envs.instances import make_instance
from banditkit.experiments.figures.replicable_constrained import unsafe_rounds
from banditkit.experiments.plots import write_plots
from banditkit.experiments.report import write_report
from banditkit.experiments.runner import run_figure
from banditkit.protocol import Batch, DecisionLog
from banditkit.trial import Trial


@pytest.mark.parametrize("name", ["unconstrained", "soft", "soft-long", "hard", "width"])
def test_quick_figure_runs_as_pairs(name, tmp_path):
    result = run_figure(f"replicable-constrained:{name}", quick=True, trials=4,
                        backend="serial", progress=False, out=tmp_path)
    assert (result.trials["status"] == "ok").all(), result.trials["error"].dropna().tolist()
    assert result.pairs is not None and (result.pairs["pairs"] == 2).all()
    debora = result.pairs[result.pairs["algorithm"].str.startswith("DEBORA")
                          & (result.pairs["point"] == 0)]  # width: point 0 is the paper's
    assert len(debora) and (debora["identical"] == 2).all()  # same ξ: same decisions
    assert len(write_plots(result)) == 2
    text = write_report(result).read_text()
    assert "## Replicability of the pairs" in text and "## Growth rates" in text
    if name == "hard":
        assert (result.trials["unsafe_rounds"] == 0).all()
    if name == "soft-long":  # ten checkpoints a decade from 10³ to T = 10⁷, for both
        for _, curve in result.curves.groupby(["algorithm", "trial"]):
            t = np.sort(curve["t"].to_numpy())
            assert t[0] == 1000 and t[-1] == 10**7 and len(t) == 41
            assert np.allclose(np.diff(np.log10(t)), 0.1, atol=1e-3)


def test_unsafe_rounds_counts_rounds_of_unsafe_strategies():
    env = make_instance("constrained-hard", lambda_min=0.1)
    log = DecisionLog()
    safe = env.safe_strategy
    # barely unsafe: x◇ mixed with arm 0 until the first constraint is exceeded by 0.01
    unsafe = (1 - 0.1375) * safe + 0.1375 * np.eye(5)[0]
    assert (env.G @ unsafe - env.alpha).max() == pytest.approx(0.01)
    log.record(Batch(np.array([4]), np.array([7]), strategy=safe))
    log.record(Batch(np.array([0, 4]), np.array([2, 3]), strategy=unsafe))
    log.record(Batch(np.array([1]), np.array([4]), strategy=safe))
    trial = Trial(counts=np.zeros(5, dtype=int), n_pulls=16, decisions=log)
    assert unsafe_rounds(trial, env) == {"unsafe_rounds": 5.0, "any_unsafe": 1.0}
    log2 = DecisionLog()
    log2.record(Batch(np.array([4]), np.array([9]), strategy=safe))
    assert unsafe_rounds(Trial(counts=np.zeros(5, dtype=int), n_pulls=9, decisions=log2),
                         env) == {"unsafe_rounds": 0.0, "any_unsafe": 0.0}


def test_json_summary_of_a_paired_figure_gives_the_pairs(tmp_path, capsys):
    import json

    from banditkit.cli import main

    assert main(["run", "replicable-constrained:unconstrained", "--quick", "--trials", "4",
                 "--backend", "serial", "--json", "--no-progress", "--out",
                 str(tmp_path)]) == 0
    doc = json.loads(capsys.readouterr().out)
    pairs = {row["algorithm"]: row for row in doc["pairs"]}
    assert pairs["DEBORA"]["identical"] == 2 and pairs["DEBORA"]["pairs"] == 2
    assert 0 <= pairs["UCB1"]["ci_lo"] <= pairs["UCB1"]["non_replication"] <= pairs["UCB1"]["ci_hi"]
