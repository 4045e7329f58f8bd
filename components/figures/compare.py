"""The Compare page's overlay: one timeline metric of several runs on one time axis."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from . import catalogue
from .batch import PALETTE
from .common import empty_figure
from .downsample import step_points

#: The entity choice that sums a metric over every entity.
SUM = "__sum__"

def step_series(timeline: pd.DataFrame, metric: str, entity: str) -> pd.DataFrame:
    """``time, value`` of one entity's step function, or the sum of all entities' step functions."""
    rows = timeline[timeline["metric"] == metric]
    if entity != SUM:
        return rows[rows["entity"] == entity].sort_values("time", kind="stable")[["time", "value"]]
    # Sum of step functions: each row changes the sum by its value minus the entity's previous value (0
    # before its first row); the sum after an instant is the running total of those changes. Of several rows
    # of one entity at one instant the last counts, as in the entity's own series.
    ordered = rows.sort_values(["entity", "time"], kind="stable").drop_duplicates(["entity", "time"], keep="last")
    change = ordered["value"] - ordered.groupby("entity", sort=False)["value"].shift(fill_value=0.0)
    total = change.groupby(ordered["time"]).sum().sort_index().cumsum()
    return pd.DataFrame({"time": total.index.to_numpy(dtype=float), "value": total.to_numpy(dtype=float)})


def overlay_figure(runs: list[tuple[str, object]], metric: str | None, entity: str | None) -> go.Figure:
    if not (runs and metric and entity):
        return empty_figure("Choose runs (and a metric) to overlay their timelines here." if not runs
                            else "Choose a metric and an entity to draw.", 420)
    figure = go.Figure()
    for index, (label, result) in enumerate(runs):
        series = step_series(result.timeline, metric, entity)
        times, values = step_points(series["time"], series["value"])   # bounded, extremes kept
        figure.add_trace(go.Scatter(
            x=times, y=values, mode="lines", line={"shape": "hv", "width": 1.5},
            name=label, marker_color=PALETTE[index % len(PALETTE)],
            hovertemplate=f"{label}<br>%{{x:.1f}} s: %{{y:.4g}}<extra></extra>",
        ))
    engine = getattr(runs[0][1], "scenario", {}).get("engine")
    title = f"{catalogue.label(metric, engine)} · {'all together' if entity == SUM else entity}"
    figure.update_layout(title=title, height=420, template="plotly_white", xaxis={"title": "time (s)"},
                         yaxis={"title": catalogue.axis_title(metric, engine)},
                         margin={"l": 60, "r": 20, "t": 40, "b": 40}, legend={"orientation": "h", "y": -0.2})
    return figure
