"""Figures of a paired comparison (:mod:`sched_engine.analysis.paired`): per-job wait differences, who wins and loses.

Both are drawn from a few dozen bars computed here, so a 450,000-job
comparison sends the browser kilobytes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .common import empty_figure

BINS = 60
TOP = 10
BETTER, WORSE = "#2e7d32", "#c62828"


def difference_histogram(jobs: pd.DataFrame, name_a: str, name_b: str) -> go.Figure:
    """Histogram of ``wait_b - wait_a`` per job (s), the unchanged jobs left out and counted in the title."""
    if jobs.empty:
        return empty_figure("No job started in both runs.")
    difference = jobs["difference"].to_numpy(float)
    changed = difference[np.abs(difference) > 1.0]
    figure = go.Figure()
    if changed.size:
        counts, edges = np.histogram(changed, bins=BINS)
        centres = (edges[:-1] + edges[1:]) / 2
        figure.add_bar(x=centres, y=counts, width=np.diff(edges), marker_color=np.where(centres < 0, BETTER, WORSE),
                       hovertemplate="wait change %{x:,.0f} s: %{y:,} jobs<extra></extra>")
    figure.update_layout(
        title=f"Per-job wait change, {name_b} − {name_a} ({len(difference) - changed.size:,} jobs unchanged, not drawn)",
        xaxis_title="wait under B minus wait under A (s); left of 0: sooner", yaxis_title="jobs",
        template="plotly_white", height=320, margin={"l": 60, "r": 20, "t": 50, "b": 50}, bargap=0)
    return figure


def group_bars(table: pd.DataFrame, column: str) -> go.Figure:
    """The ``TOP`` values of ``column`` (users, groups, size classes) that lose most and win most, total wait change.

    Values whose total changes by a second or less are left out.
    """
    changed = table[table["total_difference"].abs() > 1.0]
    if changed.empty:
        return empty_figure(f"No {column.replace('_', ' ')} waits longer or shorter in total.")
    shown = pd.concat([changed.head(TOP), changed.tail(TOP)]).drop_duplicates(subset=column)
    shown = shown.sort_values("total_difference")
    hours = shown["total_difference"].to_numpy(float) / 3600.0
    figure = go.Figure(go.Bar(
        x=hours, y=shown[column].astype(str), orientation="h", marker_color=np.where(hours < 0, BETTER, WORSE),
        customdata=np.stack([shown["jobs"], shown["mean_difference"]], axis=1),
        hovertemplate="%{y}: %{x:,.1f} h in all, %{customdata[0]:,} jobs, %{customdata[1]:,.0f} s per job"
                      "<extra></extra>"))
    figure.update_layout(title=f"Total wait change by {column.replace('_', ' ')} (hours; right: lose)",
                         template="plotly_white", height=max(260, 22 * len(shown) + 90),
                         margin={"l": 110, "r": 20, "t": 50, "b": 40}, xaxis_title="hours of wait")
    return figure
