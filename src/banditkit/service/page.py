"""A self-contained HTML page to watch a live experiment: where the algorithm stands, the
per-arm table with its intervals, warnings, and three plots over time (units per arm, means
with their intervals, the allocation of each batch), drawn with matplotlib as inline SVG so
the page needs nothing but itself (served at ``GET /experiments/{name}``; written offline by
``banditkit experiment report FILE --html OUT``)."""

from __future__ import annotations

import html
import io
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..live import Experiment, ExperimentError
from ..live.statistics import ArmSums, compare
from ..live.verdict_spec import spec_from_meta
from .jsonable import to_json

__all__ = ["render_page", "write_page"]

# distinct at a glance and in grey print: colour, line style and marker all change per arm
_COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2",
            "#17becf", "#7f7f7f", "#bcbd22"]
_STYLES = ["-", "--", "-.", ":"]
_MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "<", ">"]
_HATCHES = ["", "//", "..", "xx", "\\\\", "oo", "--", "++", "**", "||"]
_POINTS = 40  # evaluation times of the curves: enough to read a trend, small SVG
#: Arms drawn in the plots (those with the most units): 20,000 curves took 13 s to draw and
#: could not be read; the table lists more, and ``status`` all of them.
MAX_ARMS_DRAWN = 12
#: Rows of the arms table (those with the most units).
MAX_ARM_ROWS = 200


def _style(i: int) -> dict[str, Any]:
    return {"color": _COLOURS[i % len(_COLOURS)], "linestyle": _STYLES[i % len(_STYLES)],
            "marker": _MARKERS[i % len(_MARKERS)]}


def write_page(path: str | Path, out: str | Path) -> Path:
    """Write the page of the experiment file ``path`` to ``out`` (a new file)."""
    out = Path(out)
    if out.exists():
        raise ExperimentError(f"--html: {str(out)!r} exists; name a new file")
    if not out.parent.is_dir():
        raise ExperimentError(f"--html: folder {str(out.parent)!r} does not exist")
    with Experiment.open(path, readonly=True) as experiment:
        text = render_page(experiment, title=Path(path).stem)
    out.write_text(text, encoding="utf-8")
    return out


def render_page(experiment: Experiment, *, title: str, refresh: int | None = None,
                status: Any = None) -> str:
    """The page of ``experiment`` as one HTML string (``refresh``: reload every so many
    seconds, for a page served live; ``status``: its status, when the caller has it). The plots
    draw the :data:`MAX_ARMS_DRAWN` arms with the most units, the table lists
    :data:`MAX_ARM_ROWS`: the page's size and time stay bounded with thousands of arms."""
    status = experiment.status() if status is None else status
    units = experiment.units()
    # the algorithm's units: overflow and rollout units have no batch of their own to plot
    live = units[units["expired_at"].isna() & (units["kind"] == "algorithm")]
    names: list[Any] = list(experiment.arm_names)
    if len(names) > MAX_ARMS_DRAWN:
        counts = np.bincount(live["arm_index"].to_numpy(int), minlength=len(names))
        drawn = set(np.argsort(-counts, kind="stable")[:MAX_ARMS_DRAWN].tolist())
        names = [n if i in drawn else None for i, n in enumerate(names)]  # None: not drawn
    bounds = status.reward_range if status.reward_range is not None else _reward_range(live)
    now = datetime.now(UTC).isoformat(timespec="seconds")
    head = (f"<meta charset='utf-8'><title>{_e(title)} · banditkit</title>"
            + (f"<meta http-equiv='refresh' content='{int(refresh)}'>" if refresh else "")
            + f"<style>{_CSS}</style>")
    body = [f"<h1>{_e(title)}</h1>",
            f"<p class='sub'>{_e(status.algorithm)} · {len(names)} arms · seed "
            f"{experiment.seed} · page made {now}</p>",
            _decision(status), _state(status, names), _warnings(status), "<h2>Arms</h2>",
            _arm_table(status),
            (f"<p class='note'>The plots draw the {MAX_ARMS_DRAWN} arms with the most units "
             f"of {len(names)}.</p>" if None in names else ""),
            "<h2>Over time</h2>",
            _figure(_units_plot, live, names, "Units assigned per arm (cumulative)"),
            _figure(_means_plot, live, names, _means_title(status), bounds=bounds,
                    status=status, units=units),
            _figure(_allocation_plot, live, names, "Allocation of each batch between the arms"),
            f"<p class='note'>{_e(status.interval_note)}. The bands over time are the same "
            "intervals <code>status</code> would have shown at each time: with anytime-valid "
            "intervals they hold at every time together, so the whole band may be read; they "
            "are summaries for reading, not the algorithm's decision rule.</p>"]
    return (f"<!DOCTYPE html><html lang='en'><head>{head}</head><body>"
            + "\n".join(body) + "</body></html>\n")


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _number(value: Any) -> str:
    value = to_json(value)
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}"
    return _e(value)


def _state(status: Any, names: list[str]) -> str:
    arms = status.arms
    rows = [("state", "finished" if status.finished else
             f"batch {status.batches_observed + 1} running: {status.waiting} pull(s) waiting "
             f"for a reward, {status.unassigned} not yet assigned"),
            ("batches observed", status.batches_observed),
            ("pulls observed", status.pulls_observed),
            ("budget left", "no horizon" if status.budget_left is None else status.budget_left),
            ("recommendation", status.recommendation or "none yet"),
            ("leader", "none yet" if status.leader is None
             else f"{status.leader} ({status.reason})"),
            ("outcome window", getattr(status, "window_note", "") or "–"),
            ("waiting for an outcome", _waiting_line(status)),
            ("counted", getattr(status, "counting_note", "") or "–"),
            ("parameters in force", ", ".join(
                f"{k}={v!r}" + (" [live default]" if k in status.live_defaults else "")
                for k, v in status.params.items()) or "none")]
    if "active" in arms.columns:
        active = [str(a) for a in arms.index[arms["active"].to_numpy(bool)]]
        rows.append(("active arms", ", ".join(active) or "none"))
        rows.append(("eliminated arms",
                     ", ".join(str(a) for a in arms.index if a not in active) or "none"))
    cells = "".join(f"<tr><th>{_e(k)}</th><td>{_number(v) if not isinstance(v, str) else _e(v)}"
                    "</td></tr>" for k, v in rows)
    info = status.info or {}
    extra = "".join(f"<tr><th>{_e(k)}</th><td>{_e(to_json(v))}</td></tr>"
                    for k, v in info.items())
    return (f"<h2>Algorithm</h2><table class='kv' id='state'>{cells}</table>"
            + (f"<details><summary>the algorithm's own facts (info)</summary>"
               f"<table class='kv'>{extra}</table></details>" if extra else ""))


def _waiting_line(status: Any) -> str:
    w = getattr(status, "waiting_units", None)
    if w is None or not w.units:
        return "none"
    return (f"{w.units} unit(s); the oldest, unit {w.oldest_unit} (arm {w.oldest_arm}), "
            f"assigned at {w.oldest_assigned_at}"
            + (f", resolves at {w.resolves_at}" if w.resolves_at else
               ", never resolves by itself (no outcome window): expire it or record it"))


def _decision(status: Any) -> str:
    """A finished or stopped experiment's decision, first on the page (empty before)."""
    line = status.decision_line() if hasattr(status, "decision_line") else None
    if line is None:
        return ""
    return f"<p id='decision' class='decision'><strong>{_e(line)}</strong></p>"


def _warnings(status: Any) -> str:
    warnings = list(getattr(status, "warnings", None) or [])
    if status.paused is not None:  # a guardrail's breach: first, where nobody can miss it
        warnings.insert(0, f"PAUSED: {status.paused}")
    if not warnings:
        return "<p id='warnings' class='ok'>No warnings.</p>"
    items = "".join(f"<li>{_e(w if isinstance(w, str) else to_json(w))}</li>" for w in warnings)
    return f"<h2>Warnings</h2><ul id='warnings' class='warn'>{items}</ul>"


def _arm_table(status: Any) -> str:
    frame = status.arms
    more = ""
    if len(frame) > MAX_ARM_ROWS:
        by = frame["assigned"] if "assigned" in frame.columns else frame.iloc[:, 0]
        order = np.argsort(-by.to_numpy(float), kind="stable")[:MAX_ARM_ROWS]
        more = (f"<p class='note'>{len(frame) - MAX_ARM_ROWS} more arms: the table lists the "
                f"{MAX_ARM_ROWS} with the most units; GET status lists all.</p>")
        frame = frame.iloc[np.sort(order)]
    frame = frame.reset_index()
    head = "".join(f"<th>{_e(c)}</th>" for c in frame.columns)
    rows = "".join("<tr>" + "".join(f"<td>{_number(v)}</td>" for v in row) + "</tr>"
                   for row in frame.itertuples(index=False))
    return (f"<table id='arms'><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"
            + more)


def _reward_range(live: pd.DataFrame) -> tuple[float, float] | None:
    """The axis range of the means plot when the algorithm declares no reward range: [0, 1]
    when every reward so far is 0 or 1; otherwise none (the axis follows the data)."""
    rewards = live["reward"].dropna().to_numpy(float)
    if rewards.size == 0 or np.isin(rewards, (0.0, 1.0)).all():
        return (0.0, 1.0)
    return None


def _elapsed(times: pd.Series, start: pd.Timestamp) -> tuple[np.ndarray, str]:
    """Times as numbers since ``start`` in a unit that suits their span, with its name."""
    seconds = (times - start).dt.total_seconds().to_numpy(float)
    span = float(np.nanmax(seconds)) if seconds.size else 0.0
    for unit, size in (("days", 86400.0), ("hours", 3600.0), ("minutes", 60.0)):
        if span >= 2 * size:
            return seconds / size, unit
    return seconds, "seconds"


def _figure(draw: Any, live: pd.DataFrame, names: list[str], caption: str, **kw: Any) -> str:
    if live.empty or (draw is _means_plot and live["reward"].notna().sum() == 0):
        what = "units assigned" if live.empty else "rewards recorded"
        return (f"<figure><figcaption>{_e(caption)}</figcaption><p class='empty'>No {what} "
                "yet.</p></figure>")
    import matplotlib

    matplotlib.use("Agg")  # no display: this runs in a server
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8.0, 3.6), layout="constrained")
    try:
        draw(ax, live, names, **kw)
        buffer = io.StringIO()
        fig.savefig(buffer, format="svg")
    finally:
        plt.close(fig)
    svg = buffer.getvalue()
    svg = svg[svg.index("<svg"):]  # drop the XML prologue: the SVG is inline
    return f"<figure><figcaption>{_e(caption)}</figcaption>{svg}</figure>"


def _times(frame: pd.DataFrame, column: str) -> pd.Series:
    return pd.to_datetime(frame[column], utc=True, format="ISO8601")


def _units_plot(ax: Any, live: pd.DataFrame, names: list[str]) -> None:
    assigned = _times(live, "assigned_at")
    x, unit = _elapsed(assigned, assigned.min())
    grid = np.linspace(0.0, float(x.max()), _POINTS)
    arm = live["arm_index"].to_numpy()
    for i, name in enumerate(names):
        if name is None:
            continue
        mine = np.sort(x[arm == i])
        ax.plot(grid, np.searchsorted(mine, grid, side="right"), label=str(name),
                markevery=max(1, _POINTS // 8), **_style(i))
    ax.set_xlabel(f"time since the first unit ({unit})")
    ax.set_ylabel("units assigned (cumulative)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    _legend(ax, "arm")


def _legend(ax: Any, title: str) -> None:
    # outside the axes, on the right: a legend inside hides the curves it names
    ax.legend(title=title, fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))


def _means_title(status: Any) -> str:
    level = f"{100 * (1 - status.alpha):g}%"
    if status.intervals == "anytime":
        return f"Mean reward per arm with its anytime-valid {level} interval"
    return f"Mean reward per arm with its fixed-n {level} interval (valid for one look only)"


def _means_plot(ax: Any, live: pd.DataFrame, names: list[str],
                bounds: tuple[float, float] | None, status: Any, units: pd.DataFrame) -> None:
    """Each arm's mean over time with the interval ``status`` would have shown at that time
    (:func:`banditkit.live.statistics.compare` over a grid of times, one call for all): at
    time g, each arm's resolved prefix then — its units in id order up to the first assigned
    by g and not yet resolved (recorded or expired) by g (:mod:`banditkit.live.resolved_prefix`),
    or every outcome recorded by g when the status counts them all."""
    start = _times(units, "assigned_at").min()
    done = live[live["reward"].notna()]
    x, unit = _elapsed(_times(done, "recorded_at"), start)
    grid = np.linspace(float(x.min()), float(x.max()), _POINTS)
    assigned = _seconds(units, "assigned_at", start) / _scale(unit)
    resolved_at = np.where(units["reward"].notna(), _seconds(units, "recorded_at", start),
                           _seconds(units, "expired_at", start))
    resolved_at = np.where(np.isnan(resolved_at), np.inf, resolved_at) / _scale(unit)
    counted = (units["reward"].notna() & units["expired_at"].isna()).to_numpy()
    reward = units["reward"].fillna(0.0).to_numpy(float)
    arm = units["arm_index"].to_numpy()
    everything = getattr(status, "count", "resolved") == "recorded"
    K = len(names)
    n, total, total_sq = (np.zeros((grid.size, K)) for _ in range(3))
    binary = np.ones((grid.size, K), dtype=bool)
    for i in range(K):
        mine = arm == i  # units are in id order: assignment order
        a, r, c, v = assigned[mine], resolved_at[mine], counted[mine], reward[mine]
        for j, g in enumerate(grid):
            seen = c & (r <= g)
            if not everything:
                open_ = np.flatnonzero((a <= g) & (r > g))
                if open_.size:
                    seen = seen & (np.arange(a.size) < open_[0])
            n[j, i] = seen.sum()
            total[j, i] = v[seen].sum()
            total_sq[j, i] = (v[seen] ** 2).sum()
            binary[j, i] = np.isin(v[seen], (0.0, 1.0)).all()
    control = names.index(status.control) if status.control in names else 0
    spec = spec_from_meta({"verdicts": status.verdicts or None}, status.reward_range)
    # the plot shows each arm's plain mean over time (CUPED, ratios and the winsorised cap
    # need the covariates, denominators and quantiles of each past time: status has them now)
    spec = replace(spec, cuped=False, ratio=False, winsorize=None)
    c = compare(ArmSums(n, n, total, total_sq, binary), status.reward_range,
                intervals=status.intervals, alpha=status.alpha, control=control, spec=spec)
    for i, name in enumerate(names):
        if name is None or not n[-1, i]:
            continue
        low, high = c.low[:, i], c.high[:, i]
        if bounds is not None:
            low, high = np.clip(low, *bounds), np.clip(high, *bounds)
        style = _style(i)
        ax.plot(grid, c.mean[:, i], label=str(name), markevery=max(1, _POINTS // 8), **style)
        ax.fill_between(grid, low, high, color=style["color"], alpha=0.15, linewidth=0)
    ax.set_xlabel(f"time since the first unit ({unit})")
    ax.set_ylabel("mean reward (counted units)")
    # zoom on the bands (within the reward range): means of 0.1 on a 0..1 axis are unreadable
    shown = np.isfinite(c.low) & np.isfinite(c.high)
    if shown.any():
        low_end, high_end = float(c.low[shown].min()), float(c.high[shown].max())
        pad = 0.05 * max(high_end - low_end, 1e-9)
        if bounds is not None:
            low_end, high_end = max(low_end - pad, bounds[0]), min(high_end + pad, bounds[1])
        ax.set_ylim(low_end, high_end)
    elif bounds is not None:
        ax.set_ylim(*bounds)
    ax.grid(alpha=0.3)
    kind = "anytime-valid" if status.intervals == "anytime" else "fixed-n"
    _legend(ax, f"arm (band: {kind}\n{100 * (1 - status.alpha):g}% interval)")


_UNITS = {"days": 86400.0, "hours": 3600.0, "minutes": 60.0, "seconds": 1.0}


def _scale(unit: str) -> float:
    """Seconds per unit of the elapsed-time axis (:func:`_elapsed`)."""
    return _UNITS[unit]


def _seconds(frame: pd.DataFrame, column: str, start: pd.Timestamp) -> np.ndarray:
    """Seconds from ``start`` to each time of ``column`` (NaN where there is none)."""
    times = pd.to_datetime(frame[column], utc=True, format="ISO8601")
    return (times - start).dt.total_seconds().to_numpy(float)


def _allocation_plot(ax: Any, live: pd.DataFrame, names: list[str]) -> None:
    """Each batch's split between the arms, as shares (batches of an elimination grow
    geometrically: on a count axis the first ones would be invisible), its size on top."""
    counts = pd.crosstab(live["batch"], live["arm_index"]).reindex(
        columns=range(len(names)), fill_value=0)
    totals = counts.sum(axis=1).to_numpy(float)
    position = np.arange(len(counts))
    bottom = np.zeros(len(counts))
    drawn = [i for i, name in enumerate(names) if name is not None]
    if len(drawn) < len(names):  # the arms not drawn, as one grey segment
        counts = counts[drawn].assign(other=counts.drop(columns=drawn).sum(axis=1))
        names = [names[i] for i in drawn] + ["other arms"]
    for i, name in enumerate(names):
        share = 100.0 * counts.iloc[:, i].to_numpy(float) / totals
        ax.bar(position, share, bottom=bottom, label=str(name), color=_COLOURS[i % 10],
               hatch=_HATCHES[i % len(_HATCHES)], edgecolor="white", linewidth=0.5)
        bottom += share
    for p, total in zip(position, totals, strict=True):
        ax.annotate(f"{int(total)}", (p, 100.0), ha="center", va="bottom", fontsize="x-small",
                    xytext=(0, 2), textcoords="offset points")
    ax.set_xticks(position, [str(b + 1) for b in counts.index])
    ax.set_xlabel("batch (the last one may still be running); on top: units in the batch")
    ax.set_ylabel("share of the batch's units (%)")
    ax.set_ylim(0, 108)
    _legend(ax, "arm")


_CSS = """
body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:60em;color:#222}
h1{margin-bottom:0}.sub{color:#666;margin-top:.2em}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.2em .6em}
#arms td{text-align:right}#arms td:first-child{text-align:left;font-weight:bold}
.kv th{text-align:left;background:#f4f4f4}
.warn{color:#8a3b00;background:#fff4e5;padding:.5em 2em}.ok{color:#2a6b2a}
figure{margin:1em 0}figcaption{font-weight:bold}svg{max-width:100%;height:auto}
.note,.empty{color:#666;font-size:.9em}
.decision{background:#e8f3e8;border-left:4px solid #2a6b2a;padding:.6em 1em}
"""
