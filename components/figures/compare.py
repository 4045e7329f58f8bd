"""The Compare page's overlay: one timeline metric of several runs on one time axis."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from . import catalogue
from .batch import HOUR, PALETTE
from .common import empty_figure
from .downsample import step_points

#: The entity choice that sums a metric over every entity.
SUM = "__sum__"
#: The overlay's height in pixels (the Compare page's box for it is as tall).
OVERLAY_HEIGHT = 420

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
                            else "Choose a metric and an entity to draw.", OVERLAY_HEIGHT)
    figure = go.Figure()
    drawn = []
    for label, result in runs:
        series = step_series(result.timeline, metric, entity)
        drawn.append((label, *step_points(series["time"], series["value"])))   # bounded, extremes kept
    # Hours for runs of hours or more (as the pages draw them), seconds for short ones.
    span = max((float(times.max()) for _, times, _ in drawn if len(times)), default=0.0)
    scale, unit, axis = (HOUR, "h", "hours since first submission") if span >= 2 * HOUR else (1.0, "s", "time (s)")
    for index, (label, times, values) in enumerate(drawn):
        if not len(times):
            continue   # no such series in this run: no legend entry for a line nobody sees (named below)
        figure.add_trace(go.Scatter(
            x=times / scale, y=values, mode="lines", line={"shape": "hv", "width": 1.5},
            name=label, marker_color=PALETTE[index % len(PALETTE)],
            hovertemplate=f"{label}<br>%{{x:.{2 if scale == HOUR else 1}f}} {unit}: %{{y:.4g}}<extra></extra>",
        ))
    visible_lines(figure)
    engine = getattr(runs[0][1], "scenario", {}).get("engine")
    title = f"{catalogue.label(metric, engine)} · {'all together' if entity == SUM else entity}"
    absent = [label for label, times, _ in drawn if not len(times)]
    if absent:
        title += f" (not in {', '.join(absent)})"
    figure.update_layout(title=title, height=OVERLAY_HEIGHT, template="plotly_white", xaxis={"title": axis},
                         yaxis={"title": catalogue.axis_title(metric, engine)},
                         margin={"l": 60, "r": 20, "t": 40, "b": 40}, legend={"orientation": "h", "y": -0.2},
                         showlegend=True)   # one merged line still names its runs
    return figure


#: The widest and the narrowest line of an overlay (pixels): each run drawn narrower than the one before.
LINE_WIDEST, LINE_NARROWEST = 6.0, 1.5


def visible_lines(figure: go.Figure) -> go.Figure:
    """``figure`` with as many legend entries as lines one can see.

    Runs whose lines are the same (every point alike) are drawn once, named
    by all of them ("EASY = CONS"). The others are drawn widest first, each
    narrower than the one below it, so a line that follows another for
    hours still shows along its edges instead of hiding under it.
    """
    merged: list = []
    for trace in figure.data:
        same = next((kept for kept in merged if _same_line(kept, trace)), None)
        if same is None:
            merged.append(trace)
            continue
        name, template = f"{same.name} = {trace.name}", same.hovertemplate or ""
        same.update(name=name, hovertemplate=name + template[len(same.name):] if template.startswith(same.name)
                    else template or None)
    step = (LINE_WIDEST - LINE_NARROWEST) / max(len(merged) - 1, 1)
    for index, trace in enumerate(merged):
        width = LINE_NARROWEST if len(merged) == 1 else LINE_WIDEST - index * step
        trace.update(line={**trace.line.to_plotly_json(), "width": width})
    figure.data = merged
    return figure


def _same_line(a, b) -> bool:
    ax, ay, bx, by = (list(v) if v is not None else [] for v in (a.x, a.y, b.x, b.y))
    return len(ax) == len(bx) and ax == bx and ay == by
