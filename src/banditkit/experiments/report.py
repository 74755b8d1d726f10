"""The markdown report of a run (``<run folder>/report.md``): configuration, summary table,
comparison with the paper's numbers, failures, the spec's notes and links to the plots."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .numbers import short_number
from .plots import plot_file_stem, point_label
from .results import error_difference, metric_names

__all__ = ["REPORT_NAME", "markdown_table", "render_report", "write_report"]

REPORT_NAME = "report.md"


def write_report(result: Any, out: str | Path | None = None) -> Path | None:
    """Write the report of ``result`` (a :class:`~banditkit.experiments.runner.RunResult`) into
    ``out`` (default: the run folder) and return its path (``None`` without a folder)."""
    folder = Path(out) if out is not None else result.out
    if folder is None:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / REPORT_NAME
    path.write_text(render_report(result, folder), encoding="utf-8")
    return path


def render_report(result: Any, folder: Path | None = None) -> str:
    """The report as markdown text."""
    from .runner import reproduce_command

    config = result.config
    trials = result.trials
    sessions = result.sessions
    last = sessions[-1] if sessions else {}
    total_wall = sum(s["wall_seconds"] or 0.0 for s in sessions)
    expected = len(config["points"]) * len(config["algorithms"]) * int(config["trials"])
    lines = [f"# {config['title']}", "",
             f"Figure `{config['figure']}`. Paper: {config['paper']}.", ""]
    if len(trials) < expected:
        lines += [f"**Incomplete run: {len(trials)} of {expected} trials stored.** Run the "
                  "command below again to finish it.", ""]

    lines += ["## Configuration", ""]
    rows = [
        ("figure", f"`{config['figure']}`"),
        ("mode", "quick" if config["quick"] else "full"),
        ("trials per (point, algorithm)", config["trials"]),
        ("sweep points", len(config["points"])),
        ("horizons", ", ".join(str(h) for h in dict.fromkeys(config["horizons"]))),
        ("root seed", config["seed"]),
        ("backend (last run)", last.get("backend", "")),
        ("workers (last run)", last.get("workers", "")),
        ("wall time (last run)", _seconds(last.get("wall_seconds"))),
        ("wall time (all runs of this folder)", f"{_seconds(total_wall)} over "
                                                f"{len(sessions)} invocation(s)"),
        ("trials stored / failed", f"{len(trials)} / {result.n_failed}"),
        ("banditkit version", config["version"]),
        ("spec fingerprint", f"`{config['fingerprint'][:16]}`"),
        ("reproduce", f"`{reproduce_command(config, result.out)}`"),
    ]
    lines += [*markdown_table(["", ""], rows), ""]
    lines += ["Algorithm parameters:", ""]
    lines += [f"- {name}: {config['algorithm_params'].get(name, {})}"
              for name in config["algorithms"]]
    lines += [""]

    lines += ["## Results", "",
              "Mean over successful trials, with the 95% interval (Student t; Wilson for the "
              "failure rate of identifiers).", ""]
    lines += [*_summary_table(result.summary), ""]

    if getattr(result, "pairs", None) is not None:
        lines += ["## Replicability of the pairs", "",
                  "Trials 2j and 2j + 1 share the internal randomness ξ and see independent "
                  "rewards. A pair replicates when both pull exactly the same sequence; the "
                  "non-replication rate has a Clopper–Pearson 95% interval, judged against the "
                  "target ρ (replicable: interval ≤ ρ).", ""]
        lines += [*_pairs_table(result.pairs), ""]

    lines += ["## Comparison with the paper", ""]
    lines += [*_paper_table(config, result.summary), ""]

    if config.get("ratios"):
        lines += ["## Ratios", ""]
        lines += [*_ratio_table(config, result.summary), ""]

    plot = config["plot"]
    if plot["kind"] == "curve" and plot["xscale"] == "log" and plot["yscale"] in ("log",
                                                                                  "symlog"):
        lines += ["## Growth rates", ""]
        lines += [*_growth_table(config, result.curves), ""]

    if config.get("comparisons"):
        lines += ["## Error-rate comparisons", ""]
        lines += [*_comparison_table(config, trials), ""]

    lines += ["## Failures", ""]
    lines += [*_failures(trials, result), ""]

    lines += ["## Notes", "", config.get("notes") or "None.", ""]

    lines += ["## Plots", ""]
    stem = plot_file_stem(config["figure"])
    png = (folder / f"{stem}.png") if folder is not None else None
    if png is not None and png.exists():
        lines += [f"![{config['figure']}]({stem}.png)", "",
                  f"[PNG]({stem}.png) · [PDF]({stem}.pdf)", ""]
    else:
        lines += ["No plot was written (`banditkit plot RUN_DIR` draws it).", ""]
    return "\n".join(lines)


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    """A GitHub-flavoured markdown table as lines."""
    def cell(v: Any) -> str:
        return str(v).replace("|", "\\|").replace("\n", " ")
    out = ["| " + " | ".join(cell(h) for h in header) + " |",
           "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return out


def _summary_table(summary: pd.DataFrame) -> list[str]:
    if summary.empty:
        return ["No trials stored."]
    metrics = metric_names(summary)
    derived = {f"{m}_{s}" for m in metrics for s in ("mean", "se", "lo", "hi")}
    params = [c for c in summary.columns
              if c not in ("point", "algorithm", "n_ok", "n_failed") and c not in derived]
    header = ["point", *params, "algorithm", "ok", "failed", *metrics]
    rows = []
    for _, r in summary.iterrows():
        rows.append([r["point"], *[_short(r[p]) for p in params], r["algorithm"], r["n_ok"],
                     r["n_failed"],
                     *[_interval(r[f"{m}_mean"], r[f"{m}_lo"], r[f"{m}_hi"]) for m in metrics]])
    return markdown_table(header, rows)


def _pairs_table(pairs: pd.DataFrame) -> list[str]:
    rows = []
    for _, r in pairs.iterrows():
        rows.append([r["point"], _short(r["label"]), r["algorithm"],
                     f"{r['identical']}/{r['pairs']}",
                     _interval(r["non_replication"], r["ci_lo"], r["ci_hi"]),
                     _fmt(r["rho"]) if r["rho"] is not None else "–", r["verdict"],
                     f"{_fmt(r['diff_mean'])} ({r['diff_min']}–{r['diff_max']})"])
    return markdown_table(["point", "parameters", "algorithm", "identical pairs",
                           "non-replication (95% CI)", "target ρ", "verdict",
                           "differing pulls: mean (min–max)"], rows)


def _paper_table(config: dict[str, Any], summary: pd.DataFrame) -> list[str]:
    """The paper's numbers next to ours, one row per number this run measured; the others
    are counted in one sentence (a row per unmeasured number says nothing)."""
    values = config.get("paper_values") or []
    not_run = int(config.get("paper_values_not_run") or 0)
    if not values and not not_run:
        return ["The paper states no number this figure can be compared with (see the notes)."]
    rows, unmeasured = [], 0
    for v in values:
        sel = summary[(summary["point"] == v["point"]) & (summary["algorithm"] == v["algorithm"])]
        col = f"{v['metric']}_mean"
        if sel.empty or col not in sel or not _finite(sel.iloc[0][col]):
            unmeasured += 1  # no finished trial of that point and algorithm (yet)
            continue
        r = sel.iloc[0]
        ours = _interval(r[col], r[f"{v['metric']}_lo"], r[f"{v['metric']}_hi"])
        ratio = _fmt(r[col] / v["value"]) if v["value"] not in (0, 0.0) else ""
        rows.append([v["algorithm"], v["point"], v["metric"], _fmt(v["value"]), ours, ratio,
                     v["source"]])
    lines = (markdown_table(["algorithm", "point", "metric", "paper", "ours (95% interval)",
                             "ours / paper", "source"], rows) if rows else [])
    why = []
    if not_run:
        why.append(f"{not_run} of the paper's numbers belong to sweep points this "
                   f"{'quick ' if config.get('quick') else ''}run does not include (its points "
                   "differ from the paper's), so they have no measured counterpart")
    if unmeasured:
        why.append(f"{unmeasured} have no finished successful trial in this run yet")
    if why:
        lines = [*lines, *([""] if lines else []), "; ".join(why).capitalize() + "."]
    return lines


def _ratio_table(config: dict[str, Any], summary: pd.DataFrame) -> list[str]:
    """Ratio of the mean plotted metric of two algorithms at every point (ratio of means)."""
    metric = config["plot"]["metric"]
    if f"{metric}_mean" not in summary:  # a curve's metric is summarised by its final value
        metric = f"final_{metric}"
    col = f"{metric}_mean"
    if summary.empty or col not in summary:
        return ["No trials stored."]
    mean = summary.set_index(["point", "algorithm"])[col]
    rows = []
    for point in sorted(summary["point"].unique()):
        for num, den in config["ratios"]:
            a, b = mean.get((point, num)), mean.get((point, den))
            ratio = (_fmt(a / b) if a is not None and b is not None and _finite(a)
                     and _finite(b) and b != 0 else "not measured")
            rows.append([point, _short(config["points"][point]), f"{num} / {den}",
                         _fmt(a) if a is not None else "–", _fmt(b) if b is not None else "–",
                         ratio])
    return [f"Ratio of the mean `{metric}` over successful trials.", "",
            *markdown_table(["point", "parameters", "ratio", "numerator mean",
                             "denominator mean", "value"], rows)]


def _growth_table(config: dict[str, Any], curves: pd.DataFrame) -> list[str]:
    """Slope of log(mean curve) against log t over the last two decades of each run: about 1/2
    for a √T rate, 1 for linear growth."""
    metrics = config["plot"].get("metrics") or [config["plot"]["metric"]]
    rows = []
    for (point, algorithm), group in curves.groupby(["point", "algorithm"], sort=False):
        row: list[Any] = [point, _short(config["points"][point]), algorithm]
        for metric in metrics:
            if metric not in group or group[metric].isna().all():
                row.append("–")
                continue
            mean = group.groupby("t")[metric].mean()
            t = mean.index.to_numpy(dtype=float)
            values = mean.to_numpy()
            window = t >= t.max() / 100
            if (values[window] <= 0).any() and (values[window] > 0).any():
                row.append("– (changes sign)")  # a log-log slope means nothing there
                continue
            keep = window & (values > 0)
            if keep.sum() < 3:
                row.append("– (zero)" if (mean.to_numpy() == 0).all()
                           else "– (negative)" if (mean.to_numpy() < 0).any() else "–")
                continue
            slope = np.polyfit(np.log(t[keep]), np.log(mean.to_numpy()[keep]), 1)[0]
            row.append(f"{slope:.2f}")
        rows.append(row)
    return ["Slope of log(mean over trials) against log t for t in [T/100, T] (least squares "
            "over the checkpoints): 0.5 is a √T rate, 1 linear growth, 0 a curve that has "
            "stopped growing.", "",
            *markdown_table(["point", "parameters", "algorithm",
                             *[f"slope of {m}" for m in metrics]], rows)]


def _comparison_table(config: dict[str, Any], trials: pd.DataFrame) -> list[str]:
    """Error rate of a minus that of b at every point, with Newcombe's 95% interval."""
    ok = trials[(trials["status"] == "ok") & trials["correct"].notna()]
    if ok.empty:
        return ["No identification trials stored."]
    wrong = (~ok["correct"].astype(bool)).groupby([ok["point"], ok["algorithm"]]).agg(
        ["sum", "count"])
    rows, verdicts = [], {"worse": 0, "better": 0, "neither": 0}
    per_pair: dict[tuple[str, str], dict[str, list[int]]] = {
        (a, b): {"worse": [], "better": [], "neither": []} for a, b in config["comparisons"]}
    for point in sorted(ok["point"].unique()):
        for a, b in config["comparisons"]:
            if (point, a) not in wrong.index or (point, b) not in wrong.index:
                continue
            (ka, na), (kb, nb) = wrong.loc[(point, a)], wrong.loc[(point, b)]
            diff, lo, hi = error_difference(int(ka), int(na), int(kb), int(nb))
            verdict = ("worse" if lo > 0 else "better" if hi < 0 else "neither")
            verdicts[verdict] += 1
            per_pair[(a, b)][verdict].append(int(point))
            text = {"worse": f"{a} significantly worse", "better": f"{a} significantly better",
                    "neither": "no significant difference"}[verdict]
            rows.append([point, _short(config["points"][point]), f"{a} − {b}",
                         f"{ka / na:.4g} − {kb / nb:.4g}", _interval(diff, lo, hi), text])
    summary = []
    for (a, b), v in per_pair.items():
        n = sum(len(x) for x in v.values())
        summary.append([f"{a} − {b}", n, _points(v["worse"]), _points(v["better"]),
                        len(v["neither"])])
    return ["Per pair, the points (indices) where the first algorithm's error rate is "
            "significantly above or below the second's:", "",
            *markdown_table(["comparison", "points", "significantly worse at",
                             "significantly better at", "no significant difference"],
                            summary), "",
            f"Error rate of the first minus the second algorithm, with Newcombe's 95% "
            f"interval (from the Wilson intervals). Of {sum(verdicts.values())} comparisons: "
            f"{verdicts['worse']} significantly worse, {verdicts['better']} significantly "
            f"better, {verdicts['neither']} without significant difference (each at the 5% "
            "level, without correction for the number of comparisons).", "",
            *markdown_table(["point", "parameters", "comparison", "error rates",
                             "difference (95% interval)", "verdict"], rows)]


def _points(points: list[int]) -> str:
    return f"{len(points)}: {', '.join(map(str, points))}" if points else "0"


def _failures(trials: pd.DataFrame, result: Any) -> list[str]:
    failed = trials[trials["status"] == "failed"]
    if failed.empty:
        return ["No trial failed."]
    lines = [f"{len(failed)} trial(s) failed (kept in the database; `--retry-failed` runs them "
             "again):", ""]
    for _, r in failed.iterrows():
        lines.append(f"- point {r['point']}, {r['algorithm']}, trial {r['trial']}: "
                     f"`{r['error']}`")
    return lines


def _finite(x: Any) -> bool:
    try:
        return math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def _fmt(x: Any) -> str:
    # a run report has no one-sided intervals: an infinite value is no number there
    return short_number(x) if _finite(x) else "–"


def _interval(mean: Any, lo: Any, hi: Any) -> str:
    if not _finite(mean):
        return "–"
    if not (_finite(lo) and _finite(hi)):
        return _fmt(mean)
    return f"{_fmt(mean)} [{_fmt(lo)}, {_fmt(hi)}]"


def _short(value: Any) -> str:
    if isinstance(value, float) and np.isnan(value):
        return ""
    text = point_label(value) if isinstance(value, dict) else str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _seconds(value: Any) -> str:
    if value is None or not _finite(value):
        return "–"
    return f"{float(value):.1f} s"
