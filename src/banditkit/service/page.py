"""A self-contained HTML page to watch a live experiment: where the algorithm stands, the
per-arm table with its intervals, warnings, and three plots over time (units per arm, means
with their intervals, the allocation of each batch), drawn with matplotlib as inline SVG so
the page needs nothing but itself (served at ``GET /experiments/{name}``; written offline by
``banditkit experiment report FILE --html OUT``).

Everything on it comes from the status (running totals, the resolved prefix: O(arms)) and the
history (:meth:`banditkit.Experiment.history`: the running totals per batch, grouped in the
database into at most :data:`_POINTS` points), never from the units: its cost does not grow
with the units (issue 26: 0.7–0.9 s at 30,000 units when it read them all), and it is bounded
in arms drawn (:data:`MAX_ARMS_DRAWN`) and rows (:data:`MAX_ARM_ROWS`). The curves are
snapshots at batch boundaries, the last point of each is the status now."""

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
from ..live.readout.history import History
from ..live.readout.statistics import compare
from ..live.readout.sums import ArmSums
from ..live.readout.verdict_spec import spec_from_meta
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
    :data:`MAX_ARM_ROWS`, the curves at most :data:`_POINTS` points: the page's size and time
    stay bounded with thousands of arms and any number of units."""
    status = experiment.status() if status is None else status
    history = experiment.history(_POINTS)
    names: list[Any] = list(experiment.arm_names)
    if len(names) > MAX_ARMS_DRAWN:
        counts = history.assigned.sum(axis=0)
        drawn = set(np.argsort(-counts, kind="stable")[:MAX_ARMS_DRAWN].tolist())
        names = [n if i in drawn else None for i, n in enumerate(names)]  # None: not drawn
    bounds = (status.reward_range if status.reward_range is not None
              else _reward_range(history, status))
    now = datetime.now(UTC).isoformat(timespec="seconds")
    head = (f"<meta charset='utf-8'><title>{_e(title)} · banditkit</title>"
            + (f"<meta http-equiv='refresh' content='{int(refresh)}'>" if refresh else "")
            + f"<style>{_CSS}</style>")
    no_units = None if history.assigned.sum() else "units assigned"
    counted = bool(np.nansum(status.arms["counted"].to_numpy(float))) \
        if "counted" in status.arms.columns else bool(history.recorded.sum())
    body = [f"<h1>{_e(title)}</h1>",
            f"<p class='sub'>{_e(status.algorithm)} · {len(names)} arms · seed "
            f"{experiment.seed} · page made {now}</p>",
            _decision(status), _state(status, names), _warnings(status), "<h2>Arms</h2>",
            _arm_table(status), _planned_table(status), _family_table(experiment),
            (f"<p class='note'>The plots draw the {MAX_ARMS_DRAWN} arms with the most units "
             f"of {len(names)}.</p>" if None in names else ""),
            "<h2>Over time</h2>",
            _figure(_units_plot, no_units, history, names, "Units assigned per arm "
                    "(cumulative, at the start of each batch; the last point: now)"),
            _figure(_means_plot, no_units or (None if counted else "rewards recorded"),
                    history, names, _means_title(status), bounds=bounds, status=status),
            _figure(_allocation_plot, no_units, history, names,
                    "Allocation of each batch between the arms"),
            f"<p class='note'>{_e(status.interval_note)}. The bands over time are the "
            "intervals of the rewards of the batches observed by then (batch-boundary "
            "snapshots of the running totals, the algorithm's units); the last point is the "
            "status now. With anytime-valid intervals they hold at every time together, so the "
            "whole band may be read; they are summaries for reading, not the algorithm's "
            "decision rule.</p>"]
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
             f"batch {status.batches_observed + 1} running: {status.batch_unassigned} pull(s) "
             f"not yet assigned, {status.batch_pending - status.batch_unassigned} assigned and "
             "waiting for a reward"),
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


def _planned_table(status: Any) -> str:
    """The planned look status shows (:mod:`banditkit.live.readout.looks`), with a plan of
    looks declared at create."""
    planned = getattr(status, "planned", None)
    if planned is None:
        return ""
    head, *table = planned.lines()
    frame = planned.arms
    cols = "".join(f"<th>{_e(c)}</th>" for c in frame.columns)
    rows = "".join("<tr>" + "".join(f"<td>{_number(v)}</td>" for v in row) + "</tr>"
                   for row in frame.itertuples(index=False))
    return (f"<h2>Planned looks</h2><p class='note'>{_e(head)}</p>"
            + (f"<table id='planned'><thead><tr>{cols}</tr></thead><tbody>{rows}</tbody>"
               "</table>" if table else ""))


def _family_table(experiment: Any) -> str:
    """The metric family (the reward and the guardrails' metrics, Holm across them), on a page
    of an experiment with guardrails or declared segments
    (:mod:`banditkit.live.readout.family`)."""
    if not experiment.guardrails and experiment.verdict_spec.segments is None:
        return ""
    family = experiment.family()
    head = "".join(f"<th>{_e(c)}</th>" for c in family.columns)
    rows = "".join("<tr>" + "".join(f"<td>{_number(v)}</td>" for v in row) + "</tr>"
                   for row in family.itertuples(index=False))
    return (f"<h2>Metric family</h2><p class='note'>{_e(family.attrs['note'])}</p>"
            f"<table id='family'><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>")


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
    # the decision first: each arm's verdict and difference before the counts, which a narrow
    # window scrolls to
    first = [c for c in (frame.columns[0], "verdict", "diff", "diff_low", "diff_high", "lift",
                         "lift_low", "lift_high", "mean", "low", "high") if c in frame.columns]
    frame = frame[first + [c for c in frame.columns if c not in first]]
    head = "".join(f"<th>{_e(c)}</th>" for c in frame.columns)
    rows = "".join("<tr>" + "".join(f"<td>{_number(v)}</td>" for v in row) + "</tr>"
                   for row in frame.itertuples(index=False))
    return (f"<table id='arms'><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"
            + more)


def _reward_range(history: History, status: Any) -> tuple[float, float] | None:
    """The axis range of the means plot when the algorithm declares no reward range: [0, 1]
    when every reward so far is 0 or 1; otherwise none (the axis follows the data)."""
    if history.non_binary.sum() == 0:
        return (0.0, 1.0)
    return None


def _stamps(values: list[str | None]) -> np.ndarray:
    """Time stamps as seconds since the epoch (NaN where there is none)."""
    times = pd.to_datetime(pd.Series(values, dtype="object"), utc=True, format="ISO8601")
    return (times - pd.Timestamp(0, tz="UTC")).dt.total_seconds().to_numpy(float)


def _elapsed(seconds: np.ndarray, start: float) -> tuple[np.ndarray, str]:
    """Times (seconds since the epoch) as numbers since ``start`` in a unit that suits their
    span, with its name."""
    seconds = seconds - start
    span = float(np.nanmax(seconds)) if seconds.size else 0.0
    for unit, size in (("days", 86400.0), ("hours", 3600.0), ("minutes", 60.0)):
        if span >= 2 * size:
            return seconds / size, unit
    return seconds, "seconds"


def _clock(history: History) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Each group's asked and observed times (seconds since the epoch; NaN: not observed),
    the first, and the last time the history knows (the curves' "now")."""
    asked, observed = _stamps(history.asked_at), _stamps(history.observed_at)
    end = float(np.nanmax(np.concatenate([asked, observed])))
    return asked, observed, float(asked[0]), end


def _figure(draw: Any, missing: str | None, history: History, names: list[str],
            caption: str, **kw: Any) -> str:
    """The figure ``draw`` makes, or (``missing``: what there is none of yet) a line saying
    so instead of an empty plot."""
    if missing is not None:
        return (f"<figure><figcaption>{_e(caption)}</figcaption><p class='empty'>No {missing} "
                "yet.</p></figure>")
    import matplotlib

    matplotlib.use("Agg")  # no display: this runs in a server
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8.0, 3.6), layout="constrained")
    try:
        draw(ax, history, names, **kw)
        buffer = io.StringIO()
        fig.savefig(buffer, format="svg")
    finally:
        plt.close(fig)
    svg = buffer.getvalue()
    svg = svg[svg.index("<svg"):]  # drop the XML prologue: the SVG is inline
    return f"<figure><figcaption>{_e(caption)}</figcaption>{svg}</figure>"


def _units_plot(ax: Any, history: History, names: list[str]) -> None:
    """Units assigned per arm, cumulative: before each group of batches (at its first batch's
    asking), and in all at the last time the history knows."""
    asked, _, start, end = _clock(history)
    x, unit = _elapsed(np.append(asked, end), start)
    before = np.cumsum(history.assigned, axis=0) - history.assigned
    y = np.vstack([before, history.assigned.sum(axis=0)])
    for i, name in enumerate(names):
        if name is None:
            continue
        ax.plot(x, y[:, i], label=_label(name), markevery=max(1, len(x) // 8), **_style(i))
    ax.set_xlabel(f"time since the first batch ({unit})")
    ax.set_ylabel("units assigned (cumulative)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    _legend(ax, "arm")


def _label(name: Any) -> str:
    """An arm's name as matplotlib draws it literally: a ``$`` would start mathematics (an
    arm named ``$x^{$`` failed every page with a parse error), and a leading ``_`` would hide
    the arm from the legend."""
    text = str(name).replace("$", r"\$")
    return " " + text if text.startswith("_") else text


def _legend(ax: Any, title: str) -> None:
    # outside the axes, on the right: a legend inside hides the curves it names
    ax.legend(title=title, fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))


def _means_title(status: Any) -> str:
    level = f"{100 * (1 - status.alpha):g}%"
    if status.intervals == "anytime":
        return f"Mean reward per arm with its anytime-valid {level} interval"
    return f"Mean reward per arm with its fixed-n {level} interval (valid for one look only)"


def _means_plot(ax: Any, history: History, names: list[str],
                bounds: tuple[float, float] | None, status: Any) -> None:
    """Each arm's mean with its interval (as ``status`` computes them:
    :func:`banditkit.live.readout.statistics.compare`) on the rewards of the batches observed by
    each group's observation, one call for all points; the last point is the status now (its
    counted outcomes, the interval it shows)."""
    _, observed, start, end = _clock(history)
    done = ~np.isnan(observed)
    n = np.cumsum(history.recorded, axis=0)[done]
    total = np.cumsum(history.reward, axis=0)[done]
    total_sq = np.cumsum(history.reward_sq, axis=0)[done]
    binary = (np.cumsum(history.non_binary, axis=0) == 0)[done]
    K = len(names)
    control = names.index(status.control) if status.control in names else 0
    spec = spec_from_meta({"verdicts": status.verdicts or None}, status.reward_range)
    # the past points show each arm's plain mean (CUPED, ratios and the winsorised cap need
    # the covariates, denominators and quantiles of each past time; the last point is status)
    spec = replace(spec, cuped=False, ratio=False, winsorize=None)
    past: tuple[np.ndarray, ...] = (np.zeros((0, K)),) * 3
    if done.any():
        c = compare(ArmSums(n, n, total, total_sq, binary), status.reward_range,
                    intervals=status.intervals, alpha=status.alpha, control=control, spec=spec)
        past = (c.mean, c.low, c.high)
    arms = status.arms
    now = (arms["mean"].to_numpy(float), arms["low"].to_numpy(float),
           arms["high"].to_numpy(float))
    x, unit = _elapsed(np.append(observed[done], end), start)
    mean, low, high = (np.vstack([np.asarray(part, float).reshape(-1, K), last[None, :]])
                       for part, last in zip(past, now, strict=True))
    for i, name in enumerate(names):
        if name is None or np.isnan(mean[:, i]).all():
            continue
        lo, hi = low[:, i], high[:, i]
        if bounds is not None:
            lo, hi = np.clip(lo, *bounds), np.clip(hi, *bounds)
        style = _style(i)
        ax.plot(x, mean[:, i], label=_label(name), markevery=max(1, len(x) // 8), **style)
        ax.fill_between(x, lo, hi, color=style["color"], alpha=0.15, linewidth=0)
    ax.set_xlabel(f"time since the first batch ({unit})")
    ax.set_ylabel("mean reward (counted units)")
    # zoom on the bands (within the reward range): means of 0.1 on a 0..1 axis are unreadable
    shown = np.isfinite(low) & np.isfinite(high)
    if shown.any():
        low_end, high_end = float(low[shown].min()), float(high[shown].max())
        pad = 0.05 * max(high_end - low_end, 1e-9)
        if bounds is not None:
            low_end, high_end = max(low_end - pad, bounds[0]), min(high_end + pad, bounds[1])
        ax.set_ylim(low_end, high_end)
    elif bounds is not None:
        ax.set_ylim(*bounds)
    ax.grid(alpha=0.3)
    kind = "anytime-valid" if status.intervals == "anytime" else "fixed-n"
    _legend(ax, f"arm (band: {kind}\n{100 * (1 - status.alpha):g}% interval)")


def _allocation_plot(ax: Any, history: History, names: list[str]) -> None:
    """Each group of batches' split between the arms, as shares (batches of an elimination
    grow geometrically: on a count axis the first ones would be invisible), its size on top."""
    counts = history.assigned
    totals = counts.sum(axis=1)
    position = np.arange(len(totals))
    bottom = np.zeros(len(totals))
    drawn = [i for i, name in enumerate(names) if name is not None]
    shown = [names[i] for i in drawn]
    columns = counts[:, drawn]
    if len(drawn) < len(names):  # the arms not drawn, as one grey segment
        columns = np.column_stack([columns, totals - columns.sum(axis=1)])
        shown.append("other arms")
    safe = np.where(totals > 0, totals, 1.0)
    for i, name in enumerate(shown):
        share = 100.0 * columns[:, i] / safe
        ax.bar(position, share, bottom=bottom, label=_label(name), color=_COLOURS[i % 10],
               hatch=_HATCHES[i % len(_HATCHES)], edgecolor="white", linewidth=0.5)
        bottom += share
    for p, total in zip(position, totals, strict=True):
        ax.annotate(f"{int(total)}", (p, 100.0), ha="center", va="bottom", fontsize="x-small",
                    xytext=(0, 2), textcoords="offset points")
    labels = [str(a + 1) if a == b else f"{a + 1}–{b + 1}"
              for a, b in zip(history.first_batch, history.last_batch, strict=True)]
    ax.set_xticks(position, labels)
    grouped = " (grouped)" if (history.last_batch > history.first_batch).any() else ""
    ax.set_xlabel(f"batch{grouped} (the last one may still be running); on top: units in it")
    ax.set_ylabel("share of the batch's units (%)")
    ax.set_ylim(0, 108)
    _legend(ax, "arm")


_CSS = """
body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:60em;color:#222}
h1{margin-bottom:0}.sub{color:#666;margin-top:.2em}
table{border-collapse:collapse;margin:.5em 0;display:block;max-width:100%;overflow-x:auto}
td,th{border:1px solid #ccc;padding:.2em .6em}
#arms td{text-align:right}#arms td:first-child{text-align:left;font-weight:bold}
.kv th{text-align:left;background:#f4f4f4}
.warn{color:#8a3b00;background:#fff4e5;padding:.5em 2em}.ok{color:#2a6b2a}
figure{margin:1em 0}figcaption{font-weight:bold}svg{max-width:100%;height:auto}
.note,.empty{color:#666;font-size:.9em}
.decision{background:#e8f3e8;border-left:4px solid #2a6b2a;padding:.6em 1em}
"""
