"""Figures of the Site study: shares, isolation, utilisation, waits and kills per group, and the stakeholder summary.

Pure functions: ``runs`` are ``(label, jobs, timeline)`` of site results (the
label names the policy); ``selected`` is the group clicked on the page,
drawn bold while the other groups fade. Series come from the engine's
sampled timeline (at most about 2,000 rows per group and metric), so a
figure stays small whatever the trace's length.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .common import empty_figure

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#bcbd22",
           "#7f7f7f")
DASHES = ("solid", "dash", "dot", "dashdot")
#: A group "gets its share" under a policy when its time-weighted isolation guarantee is at least this.
SHARE_MET = 0.95


def group_colours(groups) -> dict[str, str]:
    """One colour per group, stable across charts (sorted names)."""
    return {group: PALETTE[i % len(PALETTE)] for i, group in enumerate(sorted(set(groups)))}


def _emphasis(group: str, selected: str | None) -> tuple[float, float]:
    """(opacity, line width) of a group's line when ``selected`` is the clicked group."""
    if selected is None:
        return 0.9, 1.6
    return (1.0, 3.0) if group == selected else (0.25, 1.0)


def _groups(runs) -> list[str]:
    found: set[str] = set()
    for _, jobs, _ in runs:
        found |= set(jobs["group"].dropna().astype(str))
    return sorted(found)


def group_metric_figure(runs, metric: str, title: str, y_title: str, selected: str | None = None,
                        entitled: bool = False, height: int = 320) -> go.Figure:
    """One line per group and run of a per-group timeline metric (with its entitled share, dotted, when asked)."""
    groups = _groups(runs)
    if not runs or not groups:
        return empty_figure("Run a policy to see its groups here", height)
    colours = group_colours(groups)
    figure = go.Figure()
    for index, (label, _, timeline) in enumerate(runs):
        rows = timeline[timeline["metric"] == metric]
        shares = timeline[timeline["metric"] == "entitled_share"] if entitled else None
        for group in groups:
            series = rows[rows["entity"] == group]
            if series.empty:
                continue
            opacity, width = _emphasis(group, selected)
            figure.add_trace(go.Scatter(
                x=series["time"] / 3600.0, y=series["value"], mode="lines", line_shape="hv",
                name=f"{group} · {label}", legendgroup=group, customdata=[group] * len(series),
                line={"color": colours[group], "width": width, "dash": DASHES[index % len(DASHES)]},
                opacity=opacity, hovertemplate=f"{group} · {label}<br>%{{x:.1f}} h: %{{y:.3f}}<extra></extra>"))
            if shares is not None and index == 0:
                owed = shares[shares["entity"] == group]
                if len(owed):
                    figure.add_trace(go.Scatter(
                        x=owed["time"] / 3600.0, y=owed["value"], mode="lines", line_shape="hv",
                        name=f"{group} entitled", legendgroup=group, customdata=[group] * len(owed),
                        line={"color": colours[group], "width": 1, "dash": "dot"}, opacity=opacity * 0.8,
                        hovertemplate=f"{group} entitled<br>%{{x:.1f}} h: %{{y:.3f}}<extra></extra>"))
    figure.update_layout(title=title, height=height, template="plotly_white", xaxis_title="time (h)",
                         yaxis_title=y_title, margin={"l": 50, "r": 20, "t": 40, "b": 40}, legend={"font": {"size": 10}})
    return figure


def isolation_figure(runs, selected: str | None = None) -> go.Figure:
    """Isolation guarantee per group, and the minimum over groups (black) per run."""
    figure = group_metric_figure(runs, "isolation_guarantee", "Isolation guarantee per group",
                                 "received / entitled (≤ 1)", selected)
    for index, (label, _, timeline) in enumerate(runs):
        rows = timeline[(timeline["metric"] == "isolation_guarantee") & (timeline["entity"] == "minimum")]
        if len(rows):
            figure.add_trace(go.Scatter(x=rows["time"] / 3600.0, y=rows["value"], mode="lines", line_shape="hv",
                                        name=f"minimum · {label}", line={"color": "#222", "width": 1.2,
                                                                         "dash": DASHES[index % len(DASHES)]}))
    return figure


def utilisation_figure(runs) -> go.Figure:
    """CPU and memory in use over the machines up, per run."""
    if not runs:
        return empty_figure("Run a policy to see CPU and memory use here")
    figure = go.Figure()
    for index, (label, _, timeline) in enumerate(runs):
        for resource, colour in (("cpu", "#1f77b4"), ("memory", "#ff7f0e")):
            rows = timeline[(timeline["metric"] == "utilisation") & (timeline["entity"] == resource)]
            figure.add_trace(go.Scatter(x=rows["time"] / 3600.0, y=rows["value"], mode="lines", line_shape="hv",
                                        name=f"{resource} · {label}",
                                        line={"color": colour, "dash": DASHES[index % len(DASHES)], "width": 1.4}))
    figure.update_layout(title="CPU and memory utilisation", height=320, template="plotly_white",
                         xaxis_title="time (h)", yaxis_title="in use / up", yaxis_range=[0, 1.05],
                         margin={"l": 50, "r": 20, "t": 40, "b": 40})
    return figure


def cpu_time_shares(jobs: pd.DataFrame) -> pd.Series:
    """Each group's share of the CPU time the jobs that ran held (killed jobs count what they held)."""
    ran = jobs[jobs["status"].isin(["finished", "killed"])]
    held = ran["procs"] * (ran["end_time"] - ran["start_time"])
    total = float(held.sum())
    by_group = held.groupby(ran["group"].astype(str)).sum()
    return by_group / total if total > 0 else by_group * 0.0


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


def _duration(seconds: float) -> str:
    if not np.isfinite(seconds):
        return "no job started"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def stakeholder_summary(runs, entitlement: dict[str, float]) -> tuple[list[str], str]:
    """One line per policy and group, and the sentence naming a policy that gives every group its share.

    ``entitlement``: each group's weight over the sum of the groups' weights.
    A line reads ``"research: 31% of CPU time for 25% entitlement, median
    wait 12 min"``. A group gets its share under a policy when its
    time-weighted isolation guarantee is at least :data:`SHARE_MET` (it
    received its entitled share whenever it had jobs waiting, or nearly).
    """
    lines, fair = [], []
    for label, jobs, timeline in runs:
        shares = cpu_time_shares(jobs)
        waits = jobs[jobs["start_time"].notna()].groupby(jobs["group"].astype(str))["wait_time"].median()
        isolation = group_isolation(timeline)
        for group in sorted(set(shares.index) | set(entitlement)):
            lines.append(f"{label} — {group}: {shares.get(group, 0.0):.0%} of CPU time for "
                         f"{entitlement.get(group, 0.0):.0%} entitlement, median wait "
                         f"{_duration(float(waits.get(group, np.nan)))}")
        if len(isolation) and (isolation >= SHARE_MET).all():
            fair.append(label)
    if not runs:
        return [], ""
    if fair:
        verdict = f"{', '.join(fair)} {'gives' if len(fair) == 1 else 'each give'} every group at least its share."
    else:
        verdict = "No policy run gives every group at least its share."
    return lines, verdict
