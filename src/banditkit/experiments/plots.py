"""Figures of a run (matplotlib, Agg backend): PNG and PDF written into the run folder.

``kind="curve"``: the mean of a per-checkpoint metric (cumulative regret or violation) against
time, one line per algorithm with a 95% band (Student t over trials), one panel per sweep point.
``kind="sweep"``: a per-trial metric (mean with a 95% interval) against the swept parameter
``plot.x``, one line per algorithm; when another point parameter varies too (K in a sweep over
ρ and K), one colour per value of it and one line style and marker per algorithm. For figures
run as replicability pairs, a second panel shows the measured non-replication rate (identical
pairs, Clopper–Pearson 95% interval) against the same x, with the target ρ.

Legends go outside the axes, so they never cover a curve; every algorithm has its own colour,
line style and marker (markers staggered along overlapping curves), so no curve hides another.
``kind="error"``: the error probability (failure rate, Wilson 95% interval) of identifiers
against a swept parameter, one panel per series (``plot.panels``), on a log axis as in Xiong
et al.; below each, the instance facts (``plot.facts``, e.g. the minimum gap Δ(1)).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from .describe import run_line
from .results import NONNEGATIVE, SUMMARY_METRICS, metric_names

__all__ = ["curve_band", "plot_file_stem", "point_label", "write_plots"]

_LABELS = {"regret": "cumulative regret", "violation": "cumulative violation",
           "n_pulls": "samples (pulls)", "final_regret": "final regret",
           "final_violation": "final violation", "failure_rate": "failure rate",
           "n_batches": "batches", "min_gap": "minimum gap Δ(1)"}


def plot_file_stem(figure: str) -> str:
    """File name stem of a figure's plots (the name with unsafe characters replaced)."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in figure)


def curve_band(curves: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Per (point, algorithm, t): mean of ``metric`` over trials and its 95% band."""
    grouped = curves.groupby(["point", "algorithm", "t"], sort=False)[metric]
    out = grouped.agg(["mean", "std", "count"]).reset_index()
    n = out["count"].to_numpy()
    with np.errstate(invalid="ignore", divide="ignore"):
        half = (stats.t.ppf(0.975, np.maximum(n - 1, 1)) * out["std"].to_numpy()
                / np.sqrt(n))
    half = np.where(n > 1, half, np.nan)
    out["lo"] = out["mean"] - half
    out["hi"] = out["mean"] + half
    return out


def write_plots(result: Any, out: str | Path | None = None) -> list[Path]:
    """Draw ``result`` (a :class:`~banditkit.experiments.runner.RunResult`) per its plot spec
    into ``out`` (default: the run folder). Returns the PNG and PDF paths; none when there is
    nothing to draw or no folder."""
    folder = Path(out) if out is not None else result.out
    if folder is None:
        return []
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    config = result.config
    plot = config["plot"]
    if plot["kind"] == "curve":
        fig = _curve_figure(plt, result, plot)
    elif plot["kind"] == "sweep":
        fig = _sweep_figure(plt, result, plot)
    elif plot["kind"] == "error":
        fig = _error_figure(plt, result, plot)
    else:
        raise ValueError(f"plot kind must be 'curve', 'sweep' or 'error', got "
                         f"{plot['kind']!r}")
    if fig is None:
        return []
    folder.mkdir(parents=True, exist_ok=True)
    stem = plot_file_stem(result.figure)
    paths = [folder / f"{stem}.png", folder / f"{stem}.pdf"]
    fig.savefig(paths[0], dpi=150, bbox_inches="tight")
    fig.savefig(paths[1], bbox_inches="tight")
    plt.close(fig)
    return paths


def _title(config: Mapping[str, Any]) -> str:
    """The figure's title (filled from the run's configuration when it was stored) and a
    generated line saying what was run: mode, trials, points, horizon."""
    return f"{config['title']}\n{run_line(config)}"


def _coinciding(curves: list[tuple[str, pd.DataFrame]]) -> list[list[int]]:
    """Groups of curves (indices into ``curves``) with identical mean curves: drawn once with
    all their names, since one line would hide the others whatever its style."""
    groups: list[list[int]] = []
    for i, (_, sel) in enumerate(curves):
        for g in groups:
            ref = curves[g[0]][1]
            if (len(ref) == len(sel) and np.array_equal(ref["t"].to_numpy(), sel["t"].to_numpy())
                    and np.allclose(ref["mean"].to_numpy(dtype=float),
                                    sel["mean"].to_numpy(dtype=float), rtol=0, atol=1e-9)):
                g.append(i)
                break
        else:
            groups.append([i])
    return groups


def _log_floor(values: np.ndarray) -> float:
    """Bottom of a log axis: half the smallest positive value drawn (lower ends of intervals
    that reach 0 or below are cut there, and the plot says so)."""
    positive = values[np.isfinite(values) & (values > 0)]
    return float(positive.min()) / 2 if positive.size else 1e-3


def _curve_figure(plt: Any, result: Any, plot: Mapping[str, Any]) -> Any:
    curves = result.curves
    metrics = [m for m in (plot.get("metrics") or [plot["metric"]])
               if m in curves and not curves[m].isna().all()]
    if curves.empty or not metrics:
        return None
    bands = {m: curve_band(curves.dropna(subset=[m]), m) for m in metrics}
    log_y = plot["yscale"] == "log"
    algorithms = list(result.config["algorithms"])
    families = [(name, [a for a in members if a in algorithms])
                for name, members in plot.get("families") or []] or [("", algorithms)]
    families = [(name, members) for name, members in families if members]
    points = sorted(curves["point"].unique())
    panels, empty = [], []
    for p in points:
        for m in metrics:
            for family, members in families:
                band = bands[m]
                sel = band[(band["point"] == p) & band["algorithm"].isin(members)]
                if log_y:
                    sel = sel[sel["mean"] > 0]
                # a panel with no data is not drawn (a log axis cannot show 0)
                (panels if not sel.empty else empty).append((p, m, family, members))
    if not panels:
        return None
    summaries = [name for name in plot.get("summaries") or []
                 if _summary_frame(result, name) is not None]
    # families: two panels a row (four in a row leave each too narrow to read)
    cols = (min(len(families), 2) if len(families) > 1 else len(metrics) if len(metrics) > 1
            else min(len(points), 3))
    cols = max(cols, len(summaries))
    rows = int(np.ceil(len(panels) / cols)) + (1 if summaries else 0)
    wide = 1.5 if len(algorithms) > 8 and len(families) == 1 else 1.0
    fig, axes = plt.subplots(rows, cols, figsize=(5.5 * cols * wide, 4 * rows * wide),
                             squeeze=False)
    colours = _colours(len(algorithms))
    cut_total = 0
    for ax, (point, metric, family, members) in zip(axes.flat, panels, strict=False):
        band = bands[metric]
        drawn = []
        for algorithm in members:
            sel = band[(band["point"] == point) & (band["algorithm"] == algorithm)]
            if log_y:  # a log axis cannot show 0 (no regret or violation yet)
                sel = sel[sel["mean"] > 0]
            if not sel.empty:
                drawn.append((algorithm, sel))
        floor = _log_floor(np.concatenate([np.r_[s["mean"].to_numpy(dtype=float),
                                                 s["lo"].to_numpy(dtype=float)]
                                           for _, s in drawn])) if log_y else None
        for group in _coinciding(drawn):
            algorithm, sel = drawn[group[0]]
            k = algorithms.index(algorithm)
            label = " ≡ ".join(drawn[i][0] for i in group)  # names hold "=" already
            if len(group) > 1:
                label += " (identical curves)"
            # markers start at a different place on each curve, so curves that nearly
            # coincide still show every algorithm's marker
            line, = ax.plot(sel["t"], sel["mean"], label=label, color=colours[k],
                            linestyle=_STYLES[k % len(_STYLES)],
                            marker=_MARKERS[k % len(_MARKERS)],
                            markevery=(0.1 * (k % 7) / 7, 0.1), markersize=4)
            lo = sel["lo"].to_numpy(dtype=float)
            if metric in NONNEGATIVE or plot.get("nonnegative"):  # the metric's range
                lo = np.maximum(lo, 0.0)
            if log_y:  # an interval reaching 0 is cut at the axis bottom (said in the title)
                cut = np.isfinite(lo) & (lo <= 0)
                cut_total += int(cut.any())
                lo = np.where(cut, floor, lo)
            ax.fill_between(sel["t"], lo, sel["hi"], color=line.get_color(),
                            alpha=0.2, linewidth=0)
        ax.set_xscale(plot["xscale"])
        if plot["yscale"] == "symlog":  # signed curves (a regret that optimism makes negative)
            ax.set_yscale("symlog", linthresh=10.0)
            if metric in NONNEGATIVE:  # autoscaling would pad a violation axis below zero
                ax.set_ylim(bottom=0.0)
        else:
            ax.set_yscale(plot["yscale"])
            if log_y:
                ax.set_ylim(bottom=floor)
        ax.set_xlabel(plot.get("xlabel") or "t (pulls)")
        ax.set_ylabel((plot.get("ylabel") if len(metrics) == 1 else None)
                      or _LABELS.get(metric, metric))
        title = [point_label(result.config["points"][point])] if len(points) > 1 else []
        title += [family] if family else []
        if title:
            ax.set_title("; ".join(title), fontsize=9)
        ax.grid(alpha=0.3)
    used = len(panels)
    for ax in list(axes.flat)[used:]:
        ax.set_visible(False)
    if summaries:
        for ax, name in zip(axes[-1], summaries, strict=False):
            ax.set_visible(True)
            _summary_panel(ax, result, plot, name, algorithms, colours)
    suffix = " (mean, 95% band"
    if cut_total:
        suffix += "; bands reaching 0 are cut at the log axis' bottom"
    suffix += ")"
    if empty:
        suffix += "\nnot drawn (no data): " + ", ".join(
            "; ".join(x for x in (point_label(result.config["points"][p]) if len(points) > 1
                                  else "", _LABELS.get(m, m), f) if x)
            for p, m, f, _ in empty)
    fig.suptitle(_title(result.config) + suffix, fontsize=10)
    _tight_under_title(fig)
    _legend_outside(fig, axes.flat)
    return fig


def _summary_frame(result: Any, name: str) -> pd.DataFrame | None:
    """Per (point, algorithm) centre and 95% interval of a per-trial outcome, as columns
    ``centre``, ``lo``, ``hi`` with the point parameters: ``"non_replication"`` from the
    replicability pairs, any other name from the summary (``{name}_mean/_lo/_hi``). ``None``
    when the run has no such outcome."""
    summary = result.summary
    if name == "non_replication":
        pairs = getattr(result, "pairs", None)
        if pairs is None or len(pairs) == 0:
            return None
        params = summary.drop_duplicates(["point", "algorithm"])
        frame = pairs.rename(columns={"rho": "target_rho", "non_replication": "centre",
                                      "ci_lo": "lo", "ci_hi": "hi"})
        keep = [c for c in params.columns if c not in frame.columns or c in ("point",
                                                                             "algorithm")]
        return frame.merge(params[keep], on=["point", "algorithm"], how="inner")
    if f"{name}_mean" not in summary or summary[f"{name}_mean"].isna().all():
        return None
    return summary.assign(centre=summary[f"{name}_mean"], lo=summary[f"{name}_lo"],
                          hi=summary[f"{name}_hi"])


_SUMMARY_LABELS = {"non_replication": "non-replication (pairs that differ, Clopper-Pearson)",
                   "unsafe_rounds": "rounds with an unsafe strategy",
                   "any_unsafe": "trials with an unsafe round (Wilson)"}


def _summary_panel(ax: Any, result: Any, plot: Mapping[str, Any], name: str,
                   algorithms: list[str], colours: list[Any]) -> None:
    """A per-trial outcome (mean and 95% interval per algorithm) against the swept point
    parameter ``plot.x`` (or the point index), under a curve figure."""
    frame = _summary_frame(result, name)
    x = plot.get("summary_x")
    if x is None or x not in frame:
        frame = frame.assign(point_index=frame["point"])
        x = "point_index"
    xs_all = np.unique(frame[x].to_numpy(dtype=float))
    dodge = _Dodge(xs_all, False, len(algorithms))
    _errorbar_series(ax, frame, x, ("centre", "lo", "hi"), algorithms, [], [()], colours,
                     dodge)
    if xs_all.size <= 8:
        ax.set_xticks(xs_all, [f"{v:g}" for v in xs_all])
    if xs_all.size == 1:  # room around the dodged bars of a single point
        ax.set_xlim(xs_all[0] - 0.1 * dodge.span, xs_all[0] + 0.1 * dodge.span)
    ax.set_xlabel("point" if x == "point_index" else x)
    ax.set_ylabel(_SUMMARY_LABELS.get(name, name), fontsize=8)
    top = float(np.nanmax(frame["hi"].to_numpy(dtype=float))) if len(frame) else 1.0
    # every one of these outcomes is >= 0; an all-zero outcome still gets a visible axis
    ax.set_ylim(-0.02 * max(top, 1e-9) if top > 0 else -0.05, 1.1 * top if top > 0 else 1.0)
    if name == "non_replication":
        n = int(result.pairs["pairs"].min())
        ax.set_title(f"measured non-replication, {n} pairs per point", fontsize=9)
    else:
        ax.set_title(f"{name}: mean, 95% interval", fontsize=9)
    ax.grid(alpha=0.3)


def _sweep_figure(plt: Any, result: Any, plot: Mapping[str, Any]) -> Any:
    metric = plot["metric"]
    x = plot["x"]
    summary = result.summary
    if metric not in SUMMARY_METRICS:
        raise ValueError(f"sweep plot metric must be one of {SUMMARY_METRICS}, got {metric!r}")
    if summary.empty or f"{metric}_mean" not in summary:
        return None
    if x is None or x not in summary:
        raise ValueError(f"sweep plot needs plot.x naming a point parameter; got {x!r}, "
                         f"parameters are {[c for c in summary.columns if '_' not in c]}")
    # other point parameters that vary (e.g. K in a sweep over rho and K): one colour per value
    derived = {f"{m}_{s}" for m in metric_names(summary) for s in ("mean", "se", "lo", "hi")}
    params = [c for c in summary.columns if c not in ("point", "algorithm", "n_ok", "n_failed")
              and c not in derived]
    others = [c for c in params if c != x and summary[c].astype(str).nunique() > 1]
    pairs = _pairs_against_x(result, summary, x, others)
    fig, axes = plt.subplots(1, 2 if pairs is not None else 1,
                             figsize=(11.5 if pairs is not None else 6, 4.2), squeeze=False)
    ax = axes[0, 0]
    algorithms = list(result.config["algorithms"])
    groups = _sweep_groups(summary, others)
    colours = _colours(len(groups) if others else len(algorithms))
    xs_all = np.unique(summary[x].to_numpy(dtype=float))
    log_x = plot["xscale"] == "log"
    dodge = _Dodge(xs_all, log_x, len(algorithms) * len(groups))
    log_y = plot["yscale"] == "log"
    floor = (_log_floor(summary[[f"{metric}_mean", f"{metric}_lo"]].to_numpy(dtype=float)
                        .ravel()) if log_y else None)
    cut = _errorbar_series(ax, summary, x, (f"{metric}_mean", f"{metric}_lo", f"{metric}_hi"),
                           algorithms, others, groups, colours, dodge, floor=floor)
    _sweep_axes(ax, plot, x, xs_all)
    ax.set_yscale(plot["yscale"])
    if log_y:
        ax.set_ylim(bottom=floor)
    ax.set_ylabel(plot.get("ylabel") or _LABELS.get(metric, metric))
    ax.set_title("mean, 95% interval" + (f"\n{cut} interval(s) reach 0 or below: cut at the "
                                         "log axis' bottom (open end)" if cut else ""),
                 fontsize=9)
    if pairs is not None:
        _non_replication_panel(axes[0, 1], pairs, plot, x, xs_all, algorithms, others, groups,
                               colours, dodge)
    fig.suptitle(_title(result.config), fontsize=10)
    _tight_under_title(fig)
    _legend_outside(fig, axes.flat)
    return fig


def _sweep_groups(summary: pd.DataFrame, others: list[str]) -> list[tuple[str, ...]]:
    """The values (as strings) of the other varying parameters, in order of appearance."""
    if not others:
        return [()]
    keys = summary[others].astype(str).drop_duplicates()
    return [tuple(row) for row in keys.itertuples(index=False)]


def _group_rows(rows: pd.DataFrame, others: list[str], key: tuple[str, ...]) -> pd.DataFrame:
    sel = rows
    for c, v in zip(others, key, strict=True):
        sel = sel[sel[c].astype(str) == v]
    return sel


def _series_label(algorithm: str, others: list[str], key: tuple[str, ...]) -> str:
    return algorithm + ("" if not others else " (" + ", ".join(
        f"{c}={v}" for c, v in zip(others, key, strict=True)) + ")")


def _series_style(k: int, g: int, colours: list[Any], by_group: bool) -> dict[str, Any]:
    """Colour per value of the other parameter (per algorithm when there is none), line style
    and marker per algorithm."""
    return {"color": colours[g] if by_group else colours[k],
            "marker": _MARKERS[k % len(_MARKERS)], "linestyle": _STYLES[k % len(_STYLES)]}


class _Dodge:
    """A small horizontal offset per series, so error bars at one x do not pile up."""

    def __init__(self, xs_all: np.ndarray, log_x: bool, n: int) -> None:
        self.log_x, self.n = log_x, n
        # all offsets together span a tenth of a decade (log axis) or 4% of the range
        self.step = (0.1 if log_x else 0.04) / max(n, 1)
        self.span = (float(np.ptp(xs_all)) if xs_all.size > 1
                     else max(abs(float(xs_all[0])), 1.0) if xs_all.size else 1.0)

    def __call__(self, xs: np.ndarray, i: int) -> np.ndarray:
        shift = (i - (self.n - 1) / 2) * self.step
        return xs * 10.0 ** shift if self.log_x else xs + shift * self.span


def _sweep_axes(ax: Any, plot: Mapping[str, Any], x: str, xs_all: np.ndarray) -> None:
    """x axis of a sweep: on a log axis spanning less than two decades, ticks at the swept
    values only (matplotlib's minor labels 2×10⁻¹, 3×10⁻¹, ... collide there)."""
    ax.set_xscale(plot["xscale"])
    if xs_all.size == 1:  # one swept value: its tick alone, not an axis of dodge offsets
        ax.set_xticks(xs_all, [f"{v:g}" for v in xs_all])
        span = max(abs(float(xs_all[0])), 1.0)  # the dodge's span for one value
        if plot["xscale"] != "log":
            ax.set_xlim(xs_all[0] - 0.1 * span, xs_all[0] + 0.1 * span)
    elif plot["xscale"] == "log" and xs_all.size and xs_all.max() / xs_all.min() < 100:
        from matplotlib.ticker import NullFormatter, NullLocator

        ax.xaxis.set_minor_locator(NullLocator())
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xticks(xs_all, [f"{v:g}" for v in xs_all])
    ax.set_xlabel(plot.get("xlabel") or x)
    ax.grid(alpha=0.3)


def _pairs_against_x(result: Any, summary: pd.DataFrame, x: str, others: list[str]
                     ) -> pd.DataFrame | None:
    """The replicability pairs of a paired figure with each point's x and other parameters
    (``None`` for figures not run as pairs)."""
    pairs = getattr(result, "pairs", None)
    if pairs is None or len(pairs) == 0:
        return None
    cols = ["point", "algorithm", x, *others]
    facts = summary[cols].drop_duplicates(["point", "algorithm"])
    # the pairs' own "rho" is the target; x may be called "rho" too
    pairs = pairs.rename(columns={"rho": "target_rho"})
    return pairs.merge(facts, on=["point", "algorithm"], how="inner")


def _errorbar_series(ax: Any, frame: pd.DataFrame, x: str, columns: tuple[str, str, str],
                     algorithms: list[str], others: list[str], groups: list[tuple[str, ...]],
                     colours: list[Any], dodge: _Dodge, floor: float | None = None) -> int:
    """One dodged error-bar series per (algorithm, group) of a sweep: ``columns`` name the
    centre and the interval's low and high ends in ``frame``. On a log axis (``floor``, its
    bottom) a lower end ≤ 0 cannot be drawn: it is cut at ``floor`` without its cap, and the
    number of intervals so cut is returned (the caller says so on the plot)."""
    centre_col, lo_col, hi_col = columns
    n_cut = 0
    for k, algorithm in enumerate(algorithms):
        rows = frame[frame["algorithm"] == algorithm]
        for g, key in enumerate(groups):
            sel = _group_rows(rows, others, key).sort_values(x)
            if sel.empty:
                continue
            centre = sel[centre_col].to_numpy(dtype=float)
            lo = sel[lo_col].to_numpy(dtype=float)
            hi = sel[hi_col].to_numpy(dtype=float)
            # clipped: a zero-width interval can come out a rounding error below zero
            xs = dodge(sel[x].to_numpy(dtype=float), k * len(groups) + g)
            cut = np.zeros(centre.size, dtype=bool)
            if floor is not None:
                cut = np.isfinite(lo) & (lo <= 0)
                n_cut += int(cut.sum())
                lo = np.where(cut, floor, lo)
                keep = centre > 0  # a mean of 0 has no place on a log axis either
                xs, centre, lo, hi, cut = xs[keep], centre[keep], lo[keep], hi[keep], cut[keep]
            yerr = np.clip(np.vstack([np.nan_to_num(centre - lo), np.nan_to_num(hi - centre)]),
                           0, None)
            style = _series_style(k, g, colours, bool(others))
            ax.errorbar(xs, centre, yerr=yerr, capsize=3, markersize=5,
                        label=_series_label(algorithm, others, key), **style)
            if cut.any():  # the cut ends: an open triangle at the axis bottom
                ax.plot(xs[cut], lo[cut], linestyle="none", marker="v", markersize=6,
                        markerfacecolor="none", color=style["color"])
    return n_cut


def _non_replication_panel(ax: Any, pairs: pd.DataFrame, plot: Mapping[str, Any], x: str,
                           xs_all: np.ndarray, algorithms: list[str], others: list[str],
                           groups: list[tuple[str, ...]], colours: list[Any],
                           dodge: _Dodge) -> None:
    """Measured non-replication (fraction of pairs that differ, Clopper–Pearson 95% interval)
    against x, with the target ρ (the pairs' ρ, or x itself when x is ρ)."""
    _errorbar_series(ax, pairs, x, ("non_replication", "ci_lo", "ci_hi"), algorithms, others,
                     groups, colours, dodge)
    target = pairs.drop_duplicates(x).sort_values(x)
    rho = pd.to_numeric(target["target_rho"], errors="coerce").to_numpy(dtype=float)
    xs = target[x].to_numpy(dtype=float)
    if np.all(np.isnan(rho)) and x == "rho":
        rho = xs
    if not np.all(np.isnan(rho)):
        ax.plot(xs, rho, color="black", linestyle="--", linewidth=1, label="target rho")
    _sweep_axes(ax, plot, x, xs_all)
    n = int(pairs["pairs"].min())
    ax.set_ylim(-0.02, min(1.02, max(0.1, 1.15 * float(np.nanmax(
        np.r_[pairs["ci_hi"].to_numpy(dtype=float), rho])))))
    ax.set_ylabel("non-replication (pairs that differ)")
    ax.set_title(f"measured non-replication, {n} pairs per point (Clopper-Pearson 95%)",
                 fontsize=9)


def _colours(n: int) -> list[Any]:
    """n distinguishable colours: matplotlib's 10-colour cycle, or for more, the 20 of tab20
    with its dark shades first (neighbours in the list differ in hue)."""
    import matplotlib

    if n <= 10:
        return [matplotlib.colormaps["tab10"](i) for i in range(max(n, 1))]
    cmap = matplotlib.colormaps["tab20"]
    order = [*range(0, 20, 2), *range(1, 20, 2)]
    return [cmap(order[i % 20]) for i in range(n)]


def _legend_outside(fig: Any, axes: Any) -> None:
    """One legend for the figure, to the right of the axes (it never covers a curve); entries
    from every panel, each label once."""
    handles: dict[str, Any] = {}
    for ax in axes:
        for h, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, h)
    if handles:
        fig.legend(list(handles.values()), list(handles), loc="center left",
                   bbox_to_anchor=(1.0, 0.5), fontsize=8, frameon=False)


#: Distinct marker and line style per algorithm, so curves stay apart in print and overlap.
_MARKERS = ("o", "s", "^", "D", "P", "X", "*", "h", "v", "<", ">", "p", "d", "H", "8", "1")
_STYLES = ("-", "--", "-.", ":", (0, (5, 1)), (0, (3, 1, 1, 1, 1, 1)))


def _panel_rows(summary: pd.DataFrame, x: str, fixed: Mapping[str, Any]) -> pd.DataFrame:
    """The summary rows of one series: points whose parameters match ``fixed``."""
    sel = summary
    for k, v in fixed.items():
        if k not in sel:
            raise ValueError(f"plot panel fixes {k!r}, which is not a point parameter")
        sel = sel[np.isclose(sel[k].to_numpy(dtype=float), float(v))]
    if x not in sel:
        raise ValueError(f"plot panel's x {x!r} is not a point parameter")
    return sel.sort_values(x)


def _error_figure(plt: Any, result: Any, plot: Mapping[str, Any]) -> Any:
    """Error probability per algorithm against each series' parameter (log axis), with the
    Wilson 95% interval; a rate of 0 has no place on a log axis, so it is drawn as an open
    down-triangle at 1/(2n), n the trials, its interval reaching the Wilson upper bound."""
    summary = result.summary
    if summary.empty or "failure_rate_mean" not in summary:
        return None
    panels = [(x, dict(fixed)) for x, fixed in plot.get("panels") or []] or [(plot["x"], {})]
    # a series the run has no point of (a --quick run of one series) is not drawn
    empty = [(x, fixed) for x, fixed in panels if _panel_rows(summary, x, fixed).empty]
    panels = [p for p in panels if p not in empty]
    if not panels:
        return None
    facts = [f for f in plot.get("facts") or [] if f in summary]
    rows = 2 if facts else 1
    fig, axes = plt.subplots(rows, len(panels),
                             figsize=(max(6.5, 5.2 * len(panels)), 4.6 + 1.6 * (rows - 1)),
                             squeeze=False,
                             gridspec_kw={"height_ratios": [3, 1][:rows]} if rows > 1 else None)
    n_trials = int(result.config["trials"])
    floor = 1.0 / (2 * n_trials)
    # the axis reaches below every Wilson lower end (> 0 whenever an error was seen), so no
    # interval is cut by the frame
    lows = summary["failure_rate_lo"].to_numpy(dtype=float)
    lows = lows[np.isfinite(lows) & (lows > 0)]
    bottom = 0.5 * min(floor, float(lows.min()) if lows.size else floor)
    algorithms = result.config["algorithms"]
    for col, (x, fixed) in enumerate(panels):
        ax = axes[0, col]
        sel = _panel_rows(summary, x, fixed)
        values = np.unique(sel[x].to_numpy(dtype=float))
        single = values.size == 1  # one point: the algorithms side by side, as bars would be
        # a small horizontal offset per algorithm, so equal rates do not hide each other
        span = (np.ptp(values) if values.size > 1 else 1.0) * 0.012
        for k, algorithm in enumerate(algorithms):
            a = sel[sel["algorithm"] == algorithm]
            if a.empty:
                continue
            xs = a[x].to_numpy(dtype=float)
            if single:
                xs = np.full(xs.size, float(k))
            elif (plot.get("xscale") or "linear") == "linear":
                xs = xs + (k - (len(algorithms) - 1) / 2) * span
            mean = a["failure_rate_mean"].to_numpy(dtype=float)
            hi = a["failure_rate_hi"].to_numpy(dtype=float)
            lo = a["failure_rate_lo"].to_numpy(dtype=float)
            shown = np.where(mean > 0, mean, floor)
            lo_shown = np.where(mean > 0, np.maximum(lo, bottom), floor)
            marker, style = _MARKERS[k % len(_MARKERS)], _STYLES[k % len(_STYLES)]
            line = ax.errorbar(xs, shown, yerr=np.clip(np.vstack([shown - lo_shown, hi - shown]),
                                                       0, None),
                               marker=marker, linestyle=style, capsize=3, markersize=5,
                               label=algorithm)
            zero = mean == 0
            if zero.any():
                ax.plot(xs[zero], shown[zero], linestyle="none", marker="v", markersize=8,
                        markerfacecolor="none", color=line[0].get_color())
        if single:
            ax.set_xticks(range(len(algorithms)), algorithms, rotation=30, ha="right",
                          fontsize=8)
            ax.set_xlim(-0.6, len(algorithms) - 0.4)
        else:
            ax.set_xscale(plot.get("xscale") or "linear")
        ax.set_yscale("log")
        ax.set_ylim(bottom, 1.5)
        name = (plot.get("xlabel") or x) if len(panels) == 1 else x
        where = f"{name} = {values[0]:g}" if single else name
        ax.set_xlabel(where if not fixed else f"{where}  ({point_label(fixed)})")
        ax.set_ylabel(plot.get("ylabel") or "error probability")
        ax.grid(alpha=0.3, which="both")
        for f in facts:
            fax = axes[1, col]
            per_point = sel.groupby(x, sort=True)[f].mean()
            fax.plot(per_point.index.to_numpy(dtype=float), per_point.to_numpy(dtype=float),
                     marker="o", color="black")
            fax.set_xscale(plot.get("xscale") or "linear")
            if single:  # one point: its value as the only tick, not an axis of nothing
                fax.set_xticks(values, [f"{v:g}" for v in values])
            top = float(np.nanmax(per_point.to_numpy(dtype=float))) if len(per_point) else 1.0
            # a gap is ≥ 0: show it from 0, no offset (and no axis below 0 for a zero gap)
            fax.set_ylim(0, 1.15 * top if np.isfinite(top) and top > 0 else 1.0)
            fax.ticklabel_format(axis="y", useOffset=False)
            fax.set_xlabel(x)
            fax.set_ylabel(_LABELS.get(f, f))
            fax.grid(alpha=0.3)
    missing = ("\nnot drawn (no point in this run): " + ", ".join(
        f"{x} series ({point_label(fixed)})" if fixed else f"{x} series"
        for x, fixed in empty)) if empty else ""
    fig.suptitle(_title(result.config) + "\nerror rate, Wilson 95% interval; ▽: no error, "
                 f"drawn at 1/(2n) = {floor:.1e}" + missing, fontsize=10)
    _tight_under_title(fig)
    _legend_outside(fig, axes.flat)  # outside the axes: it never covers a point
    return fig


def _tight_under_title(fig: Any) -> None:
    """``tight_layout`` under the suptitle, wrapped first to the figure's width (a generated
    title line is long; unwrapped it ran past a one-panel figure's edges)."""
    import textwrap

    title = fig._suptitle
    if title is not None:
        width = max(40, int(fig.get_figwidth() * 15))  # about 15 characters an inch at 10 pt
        lines = [w for line in title.get_text().split("\n")
                 for w in (textwrap.wrap(line, width) or [""])]
        title.set_text("\n".join(lines))
    # matplotlib >= 3.4 lays the suptitle out itself; 0.1 in more keeps panel titles off it
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.1 / fig.get_figheight()))


_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def _number(v: Any) -> str:
    """An integer of a million or more as a·10ᵏ (``10¹⁸``, ``9·10¹⁵``): a long digit string
    does not fit a panel title and is hard to read."""
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool) and abs(v) >= 10**6:
        k = len(str(abs(int(v)))) - 1
        a, rest = divmod(abs(int(v)), 10**k)
        if rest == 0:
            sign = "-" if v < 0 else ""
            power = "10" + str(k).translate(_SUPERSCRIPT)
            return f"{sign}{power}" if a == 1 else f"{sign}{a}·{power}"
    return str(v)


def point_label(params: Mapping[str, Any]) -> str:
    """A sweep point's parameters as ``k=v, ...`` (panel titles, report tables)."""
    parts = []
    for k, v in params.items():
        text = _number(v)
        parts.append(f"{k}={text if len(text) <= 30 else text[:27] + '...'}")
    return ", ".join(parts)
