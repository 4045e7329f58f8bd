"""Figures of the Site study: shares, isolation, utilisation, waits and kills per group, and the stakeholder summary.

Pure functions: ``runs`` are ``(label, jobs, timeline)`` of site results (the
label names the policy); ``selected`` is the group clicked on the page,
drawn bold while the other groups fade. Series come from the engine's
sampled timeline (at most about 2,000 rows per group and metric), capped
to the heaviest groups (:mod:`.site_groups`) and reduced by M4
(:mod:`.downsample`) to :data:`POINT_BUDGET` points a figure, so a figure
stays small whatever the trace's length and the site's number of groups.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .common import ONE_LINE, empty_figure
from .downsample import step_points
from .site_groups import GROUP_LIMIT, capped_run, group_names, held_cpu_time, other_label, reading_order, top_groups

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#bcbd22",
           "#7f7f7f")
DASHES = ("solid", "dash", "dot", "dashdot")
#: A group "gets its share" under a policy when its time-weighted isolation guarantee is at least this.
SHARE_MET = 0.95
#: Points (after M4 reduction) one figure holds at most, over all its lines: about 0.4 MB of JSON.
POINT_BUDGET = 12_000
#: M4 bins a line keeps at least, however many lines a figure has.
MIN_BINS = 25
#: Left and right margins (px) of every time chart, wide enough for its y axis ("0.85" and its title) and its legend
#: ("other (104 groups) · H-DRF"), so the linked charts' plot areas have one width and their time axes line up one
#: above the other.
AXIS_MARGIN, LEGEND_MARGIN = 64, 230


def group_colours(groups) -> dict[str, str]:
    """One colour per group, stable across charts (the palette in the groups' reading order)."""
    return {group: PALETTE[i % len(PALETTE)] for i, group in enumerate(sorted(set(groups), key=reading_order))}


def _emphasis(group: str, selected: str | None) -> tuple[float, float]:
    """(opacity, line width) of a group's line when ``selected`` is the clicked group."""
    if selected is None:
        return 0.9, 1.6
    return (1.0, 3.0) if group == selected else (0.25, 1.0)


def _groups(runs) -> list[str]:
    found: set[str] = set()
    for _, jobs, _ in runs:
        found |= group_names(jobs)
    return sorted(found, key=reading_order)


def _bins(traces: int) -> int:
    """M4 bins per trace so a figure of ``traces`` lines stays within :data:`POINT_BUDGET` points."""
    return max(MIN_BINS, POINT_BUDGET // (4 * max(traces, 1)))


def _step(series: pd.DataFrame, window, bins: int) -> tuple[np.ndarray, np.ndarray]:
    """A step series in hours, cut to ``window`` (seconds) and reduced to at most ``4 * bins + 2`` points."""
    times, values = step_points(series["time"].to_numpy(float), series["value"].to_numpy(float), window, bins)
    return np.round(times / 3600.0, 4), np.round(values, 4)


def _range(window, runs) -> list[float] | None:
    """The x axis range (hours): the window (seconds), else the runs' whole span, the same on every chart (a group
    whose series ends early does not shrink its chart's axis); None when the runs have no timeline."""
    if window:
        return [window[0] / 3600.0, window[1] / 3600.0]
    times = [timeline["time"] for _, _, timeline in runs if len(timeline)]
    if not times:
        return None
    return [min(float(t.min()) for t in times) / 3600.0, max(float(t.max()) for t in times) / 3600.0]


def one_entry_per_line(figure: go.Figure) -> go.Figure:
    """``figure`` with one legend entry per line one can see: runs whose line of one group (or resource) is the
    same, point for point, are drawn once and named by all (``group 1 · FCFS = H-DRF``), the first run's dash kept.

    Lines are named ``<what> · <run>``; only lines of the same ``<what>`` and colour are compared.
    """
    kept: list = []
    for trace in figure.data:
        what, _, run = (trace.name or "").rpartition(" · ")
        same = next((line for line in kept if what and line.name.rpartition(" · ")[0].split(" = ")[0] == what
                     and line.line.color == trace.line.color and _same_points(line, trace)), None)
        if same is None:
            kept.append(trace)
            continue
        old, name = same.name, f"{same.name} = {run}"
        template = same.hovertemplate
        same.update(name=name, hovertemplate=template.replace(old, name, 1) if template else None)
    figure.data = kept
    return figure


def _same_points(a, b) -> bool:
    ax, ay, bx, by = (np.asarray(v if v is not None else []) for v in (a.x, a.y, b.x, b.y))
    return ax.shape == bx.shape and ay.shape == by.shape and bool(np.array_equal(ax, bx) and np.array_equal(ay, by))


def _titled(title: str, note: str) -> str:
    return f"{title}<br><sup>{note}</sup>" if note else title


#: Height (px) of a per-group chart that has nothing to draw and says so in one sentence.


def group_metric_figure(runs, metric: str, title: str, y_title: str, selected: str | None = None,
                        entitled: bool = False, height: int = 320, window=None, note: str = "",
                        none: str = "") -> go.Figure:
    """One line per group and run of a per-group timeline metric (with its entitled share, dotted, when asked).

    ``runs`` should come capped (:func:`~.site_groups.capped`; ``note`` says
    how); every line is cut to ``window`` (seconds, or None) and reduced so
    the figure holds at most about :data:`POINT_BUDGET` points. When no group
    has the metric (no job was killed, say) the figure says ``none`` instead
    of drawing empty axes.
    """
    groups = _groups(runs)
    if not runs or not groups:
        return empty_figure("Run a policy to see its groups here", height)
    colours = group_colours(groups)
    bins = _bins(len(runs) * len(groups) * (2 if entitled else 1))
    figure = go.Figure()
    for index, (label, _, timeline) in enumerate(runs):
        rows = timeline[timeline["metric"] == metric]
        shares = timeline[timeline["metric"] == "entitled_share"] if entitled else None
        for group in groups:
            series = rows[rows["entity"] == group]
            if series.empty:
                continue
            opacity, width = _emphasis(group, selected)
            x, y = _step(series, window, bins)
            figure.add_trace(go.Scatter(
                x=x, y=y, mode="lines", line_shape="hv",
                name=f"{group} · {label}", legendgroup=group, customdata=[group] * len(x),
                line={"color": colours[group], "width": width, "dash": DASHES[index % len(DASHES)]},
                opacity=opacity, hovertemplate=f"{group} · {label}<br>%{{x:.1f}} h: %{{y:.3f}}<extra></extra>"))
            if shares is not None and index == 0:
                owed = shares[shares["entity"] == group]
                if len(owed):
                    x, y = _step(owed, window, bins)
                    figure.add_trace(go.Scatter(
                        x=x, y=y, mode="lines", line_shape="hv",
                        name=f"{group} entitled", legendgroup=group, customdata=[group] * len(x),
                        line={"color": colours[group], "width": 1, "dash": "dot"}, opacity=opacity * 0.8,
                        hovertemplate=f"{group} entitled<br>%{{x:.1f}} h: %{{y:.3f}}<extra></extra>"))
    if not figure.data and none:
        return empty_figure(none, ONE_LINE)   # one line, not a chart-sized empty frame
    one_entry_per_line(figure)
    figure.update_layout(title=_titled(title, note), height=height, template="plotly_white", xaxis_title="time (h)",
                         yaxis_title=y_title, margin={"l": AXIS_MARGIN, "r": LEGEND_MARGIN, "t": 50, "b": 40},
                         legend={"font": {"size": 10}},
                         xaxis_range=_range(window, runs))
    return figure


def isolation_figure(runs, selected: str | None = None, window=None, note: str = "") -> go.Figure:
    """Isolation guarantee per group, and the minimum over groups (black) per run."""
    figure = group_metric_figure(runs, "isolation_guarantee", "Isolation guarantee per group",
                                 "received / entitled (≤ 1)", selected, window=window, note=note)
    for index, (label, _, timeline) in enumerate(runs):
        rows = timeline[(timeline["metric"] == "isolation_guarantee") & (timeline["entity"] == "minimum")]
        if len(rows):
            x, y = _step(rows, window, MIN_BINS * 4)
            figure.add_trace(go.Scatter(x=x, y=y, mode="lines", line_shape="hv",
                                        name=f"minimum · {label}", line={"color": "#222", "width": 1.2,
                                                                         "dash": DASHES[index % len(DASHES)]}))
    return one_entry_per_line(figure)


def utilisation_figure(runs, window=None) -> go.Figure:
    """CPU and memory in use over the machines up, per run."""
    if not runs:
        return empty_figure("Run a policy to see CPU and memory use here")
    figure = go.Figure()
    bins = _bins(2 * len(runs))
    for index, (label, _, timeline) in enumerate(runs):
        for resource, colour in (("cpu", "#1f77b4"), ("memory", "#ff7f0e")):
            rows = timeline[(timeline["metric"] == "utilisation") & (timeline["entity"] == resource)]
            x, y = _step(rows, window, bins)
            figure.add_trace(go.Scatter(x=x, y=y, mode="lines", line_shape="hv", name=f"{resource} · {label}",
                                        line={"color": colour, "dash": DASHES[index % len(DASHES)], "width": 1.4}))
    figure.update_layout(title="CPU and memory utilisation", height=320, template="plotly_white",
                         xaxis_title="time (h)", yaxis_title="in use / up", yaxis_range=[0, 1.05],
                         margin={"l": AXIS_MARGIN, "r": LEGEND_MARGIN, "t": 40, "b": 40}, legend={"font": {"size": 10}},
                         xaxis_range=_range(window, runs))
    return one_entry_per_line(figure)


def cpu_time_shares(jobs: pd.DataFrame) -> pd.Series:
    """Each group's share of the CPU time the jobs that ran held (killed jobs count what they held)."""
    held = held_cpu_time(jobs)
    total = float(held.sum())
    return held / total if total > 0 else held * 0.0


def group_isolation(timeline: pd.DataFrame) -> pd.Series:
    """Each group's time-weighted mean isolation guarantee over the run."""
    rows = timeline[(timeline["metric"] == "isolation_guarantee") & (timeline["entity"] != "minimum")]
    end = float(timeline["time"].max()) if len(timeline) else 0.0
    means = {}
    for group, series in rows.groupby("entity"):
        times, values = series["time"].to_numpy(float), series["value"].to_numpy(float)
        spans = np.diff(np.append(times, max(end, times[-1])))
        means[str(group)] = float((values * spans).sum() / spans.sum()) if spans.sum() > 0 else float(values[-1])
    return pd.Series(means, dtype=float)


def _duration(seconds: float, seconds_below: float = 90, minute_digits: int = 0) -> str:
    """Seconds below ``seconds_below``, then minutes (``minute_digits`` decimals) below 1.5 h, then hours."""
    if not np.isfinite(seconds):
        return "no job started"
    if seconds < seconds_below:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.{minute_digits}f} min"
    return f"{seconds / 3600:.1f} h"


def _wait(seconds: float) -> str:
    """A mean wait as a stakeholder reads it: seconds below 10 minutes, then minutes to a tenth, then hours."""
    return _duration(seconds, seconds_below=600, minute_digits=1)


def mean_waits(runs) -> list[tuple[str, float]]:
    """``(policy label, mean wait of the jobs that started)`` per run, in the runs' order."""
    return [(label, float(jobs.loc[jobs["start_time"].notna(), "wait_time"].mean())) for label, jobs, _ in runs]


def wait_difference(runs) -> str:
    """The difference between the policies a stakeholder asks about first: the mean wait, first run against the
    best of the others (``"H-DRF cuts the mean wait from 235 s (FCFS) to 82 s."``)."""
    waits = [(label, wait) for label, wait in mean_waits(runs) if np.isfinite(wait)]
    if not waits:
        return ""
    (first, reference), others = waits[0], waits[1:]
    if not others:
        return f"Mean wait under {first}: {_wait(reference)}."
    best, lowest = min(others, key=lambda item: item[1])
    worst, highest = max(others, key=lambda item: item[1])
    if abs(lowest - reference) <= 0.01 * max(reference, 1.0) and abs(highest - reference) <= 0.01 * max(reference, 1.0):
        return f"The policies barely differ in mean wait ({_wait(reference)} under {first})."
    if lowest < reference:
        return f"{best} cuts the mean wait from {_wait(reference)} ({first}) to {_wait(lowest)}."
    return f"{first} keeps the lowest mean wait: {_wait(reference)} against {_wait(lowest)} under {best}."


def stakeholder_summary(runs, entitlement: dict[str, float], limit: int = GROUP_LIMIT) -> tuple[list[str], str]:
    """One line per policy and group, and the verdict: the difference in mean wait first, then which policies
    held no group below its share while it had jobs waiting.

    ``entitlement``: each group's weight over the sum of the groups' weights.
    A line reads ``"research: 31% of CPU time for 25% entitlement, median
    wait 12 min"``; beyond ``limit`` groups the lightest are one line
    ``other (k groups)`` (their CPU time and entitlement summed, the median
    wait of their jobs). A group gets its share under a policy when its
    time-weighted isolation guarantee is at least :data:`SHARE_MET` (it
    received its entitled share whenever it had jobs waiting, or nearly);
    the verdict looks at every group, merged or not, and when no policy
    does it names the one whose worst-off group comes closest.
    """
    if not runs:
        return [], ""
    shown, merged = top_groups(runs, limit)
    owed = {group: share for group, share in entitlement.items() if group not in set(merged)}
    if merged:
        owed[other_label(len(merged))] = sum(entitlement.get(group, 0.0) for group in merged)
    lines, fair, worst = [], [], []
    for (label, jobs, timeline), (_, capped_jobs, _) in zip(runs, [(label, *capped_run(jobs, timeline, merged))
                                                                     for label, jobs, timeline in runs]):
        shares = cpu_time_shares(capped_jobs)
        started = capped_jobs[capped_jobs["start_time"].notna()]
        waits = started.groupby(started["group"].astype(str))["wait_time"].median()
        means = started.groupby(started["group"].astype(str))["wait_time"].mean()
        for group in sorted(set(shares.index) | set(owed), key=reading_order):
            lines.append(f"{label} — {group}: {shares.get(group, 0.0):.0%} of CPU time for "
                         f"{owed.get(group, 0.0):.0%} entitlement, median wait "
                         f"{_duration(float(waits.get(group, np.nan)))} (mean {_wait(float(means.get(group, np.nan)))})")
        isolation = group_isolation(timeline)
        if len(isolation) and (isolation >= SHARE_MET).all():
            fair.append(label)
        elif len(isolation):
            worst.append((float(isolation.min()), str(isolation.idxmin()), label))
    difference = wait_difference(runs)
    if fair:
        named = fair[0] if len(fair) == 1 else f"{', '.join(fair[:-1])} and {fair[-1]}"
        share = f"Under {named} no group was held below its share while it had jobs waiting."
    else:
        share = "Every policy run held some group below its share while it had jobs waiting."
        if worst:
            value, group, label = max(worst, key=lambda item: item[0])
            share += f" Closest: {label}, whose worst-off group ({group}) got {value:.0%} of its share over time."
    return lines, " ".join(part for part in (difference, share) if part)
