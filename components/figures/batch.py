"""Pure figure builders for the batch page: result frames in, ``go.Figure`` out.

Time axes are in hours since the first submission; a time window is a pair
of seconds ``(start, end)`` or ``None`` for the whole run. Every figure's
data is bounded whatever the run's size (series M4-reduced, CDFs as
quantiles; the machines × time chart, in :mod:`.gantt`, a density picture
beyond a few thousand bars); the page asks again with the narrower window on
zoom, which brings back full detail.
Lines stay SVG ``Scatter``: a few thousand points per trace draw as one path
each, and WebGL (``Scattergl``) would cost a GL context per chart for no gain.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from . import catalogue
from .common import ONE_LINE, empty_figure
from .downsample import ecdf_points, step_points

HOUR = 3600.0
SIZES_HEIGHT = 220   # the job-sizes chart, pixels (its box on the page is as tall)
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")
#: The objectives of Klusáček & Rudová's Fig. 2, each titled as the metric catalogue names it (as the runs table).
OBJECTIVES = tuple((metric, catalogue.column(metric, "batch"))
                   for metric in ("mean_slowdown", "mean_response_s", "mean_wait_s", "killed"))
SCENARIO_ORDER = ("BASIC", "EXT-FAIL", "EXT-REQ", "EXT-ALL")


def objective_table(runs: list[tuple[str, str, pd.DataFrame]]) -> pd.DataFrame:
    """Mean and standard deviation of each objective per (scenario, policy) over seeds.

    ``runs``: ``(scenario, policy label, summary frame)`` per run (several
    seeds of one pair give several entries). Standard deviation is the
    sample one (``ddof=1``), 0 for a single run.
    """
    rows = []
    for scenario, policy, summary in runs:
        values = summary.set_index("metric")["value"]
        for metric, _ in OBJECTIVES:
            rows.append({"scenario": scenario, "policy": policy, "metric": metric, "value": float(values[metric])})
    frame = pd.DataFrame(rows, columns=["scenario", "policy", "metric", "value"])
    grouped = frame.groupby(["scenario", "policy", "metric"], sort=False)["value"]
    table = grouped.agg(["mean", "std", "count"]).reset_index()
    table["std"] = table["std"].fillna(0.0)
    return table


def objective_bars(table: pd.DataFrame) -> go.Figure:
    """Klusáček & Rudová Fig. 2 layout: one panel per objective, scenarios on x, a bar per policy."""
    if table.empty:
        return empty_figure("Run a policy × scenario matrix to compare objectives.", 420)
    figure = make_subplots(rows=1, cols=len(OBJECTIVES), subplot_titles=[t for _, t in OBJECTIVES],
                           horizontal_spacing=0.06)
    scenarios = [s for s in SCENARIO_ORDER if s in set(table["scenario"])]
    policies = list(dict.fromkeys(table["policy"]))
    for column, (metric, _) in enumerate(OBJECTIVES, start=1):
        part = table[table["metric"] == metric]
        for index, policy in enumerate(policies):
            rows = part[part["policy"] == policy].set_index("scenario").reindex(scenarios)
            figure.add_trace(
                go.Bar(
                    x=scenarios, y=rows["mean"], name=policy, legendgroup=policy, showlegend=column == 1,
                    marker_color=PALETTE[index % len(PALETTE)],
                    error_y={"type": "data", "array": rows["std"], "visible": bool((rows["std"] > 0).any())},
                    customdata=rows["count"],
                    hovertemplate=f"{policy}<br>%{{x}}: %{{y:.4g}}<br>runs: %{{customdata}}<extra></extra>",
                ),
                row=1, col=column,
            )
        if not part["mean"].abs().gt(0).any():   # e.g. no job killed: one sentence, not bare axes from -1 to 1
            figure.update_yaxes(range=[0, 1], visible=False, row=1, col=column)   # no grid lines around nothing
            figure.update_xaxes(visible=False, row=1, col=column)
            axis = "" if column == 1 else str(column)
            figure.add_annotation(text="none in any run", x=0.5, y=0.5, xref=f"x{axis} domain",
                                  yref=f"y{axis} domain", showarrow=False, font={"color": "#5b6b7b"})
    figure.update_layout(barmode="group", height=420, template="plotly_white",
                         margin={"l": 50, "r": 20, "t": 50, "b": 40}, legend={"orientation": "h", "y": -0.15})
    return figure


def window_range(window) -> list[float] | None:
    """The x-axis range in hours of a window given in seconds (``None``: the whole run)."""
    return None if not window else [window[0] / HOUR, window[1] / HOUR]


def _steps(timeline: pd.DataFrame, entity: str, metric: str) -> pd.DataFrame:
    rows = timeline[(timeline["entity"] == entity) & (timeline["metric"] == metric)]
    return rows.sort_values("time", kind="stable")


def utilisation_over_time(timeline: pd.DataFrame, window=None) -> go.Figure:
    """Per cluster, used CPUs over the CPUs of its machines (up or down) -- a step line each, M4-reduced."""
    clusters = timeline.loc[timeline["metric"] == "used_cpus", "entity"].unique().tolist()
    if not clusters:
        return empty_figure("No run selected.")
    figure = go.Figure()
    for index, cluster in enumerate(clusters):
        used = _steps(timeline, cluster, "used_cpus")
        total = float(_steps(timeline, cluster, "up_cpus")["value"].max())
        times, values = step_points(used["time"], used["value"] / max(total, 1.0), window)
        figure.add_trace(go.Scatter(
            x=times / HOUR, y=values, mode="lines", line={"shape": "hv", "width": 1},
            name=cluster, marker_color=PALETTE[index % len(PALETTE)],
            hovertemplate=f"{cluster}<br>%{{x:.2f}} h: %{{y:.0%}}<extra></extra>",
        ))
    figure.update_layout(title="CPU utilisation per cluster", height=320, template="plotly_white",
                         xaxis={"title": "hours since first submission", "range": window_range(window)},
                         yaxis={"title": "used / all CPUs", "tickformat": ".0%", "range": [0, 1.05]},
                         margin={"l": 60, "r": 20, "t": 40, "b": 40}, uirevision="batch-time")
    return figure


def series_by_run(runs: list[tuple[str, pd.DataFrame]], entity: str, metric: str, title: str, ytitle: str,
                  window=None, *, none: str | None = None) -> go.Figure:
    """One step line per run for one timeline series (queue length, killed jobs...).

    Each line is reduced to the window's M4 points (:func:`.downsample.step_points`):
    every bin's first, last, lowest and highest value, so peaks survive. With
    ``none``, a series that is zero throughout in every run is that sentence
    instead of a flat line on bare axes.
    """
    if not runs:
        return empty_figure("No run selected.")
    figure = go.Figure()
    drawn = False
    for index, (label, timeline) in enumerate(runs):
        rows = _steps(timeline, entity, metric)
        if rows.empty:
            continue
        drawn |= none is None or bool((rows["value"] != 0).any())
        times, values = step_points(rows["time"], rows["value"], window)
        figure.add_trace(go.Scatter(
            x=times / HOUR, y=values, mode="lines", line={"shape": "hv", "width": 1.5},
            name=label, marker_color=PALETTE[index % len(PALETTE)],
            hovertemplate=f"{label}<br>%{{x:.2f}} h: %{{y:.0f}}<extra></extra>",
        ))
    if none is not None and not drawn:
        return empty_figure(f"{title}: {none}", height=ONE_LINE)
    figure.update_layout(title=title, height=300, template="plotly_white",
                         xaxis={"title": "hours since first submission", "range": window_range(window)},
                         yaxis={"title": ytitle, "rangemode": "tozero"},
                         margin={"l": 60, "r": 20, "t": 40, "b": 40}, uirevision="batch-time")
    return figure


def wait_distribution(runs: list[tuple[str, pd.DataFrame]], window=None) -> go.Figure:
    """Empirical CDF of wait times of completed jobs submitted in the window, one line per run.

    Drawn through at most :data:`.downsample.ECDF_POINTS` exact quantiles per run.
    """
    if not runs:
        return empty_figure("No run selected.")
    figure = go.Figure()
    for index, (label, jobs) in enumerate(runs):
        done = jobs[jobs["status"] == "finished"]
        if window:
            done = done[(done["submit_time"] >= window[0]) & (done["submit_time"] <= window[1])]
        waits, share = ecdf_points(done["wait_time"].to_numpy(dtype=float))
        if waits.size == 0:
            continue
        figure.add_trace(go.Scatter(
            x=np.maximum(waits, 1.0), y=share, mode="lines", name=label, line={"shape": "hv"},
            marker_color=PALETTE[index % len(PALETTE)],
            hovertemplate=f"{label}<br>wait ≤ %{{x:.0f}} s: %{{y:.1%}}<extra></extra>",
        ))
    figure.update_layout(title="Wait time distribution (completed jobs" + (", submitted in window)" if window else ")"),
                         height=300, template="plotly_white",
                         xaxis={"title": "wait time (s, log; 0 shown as 1)", "type": "log"},
                         yaxis={"title": "share of jobs", "tickformat": ".0%"},
                         margin={"l": 60, "r": 20, "t": 40, "b": 40})
    return figure


def size_histogram(jobs: pd.DataFrame) -> go.Figure:
    """Jobs per processor-count bucket (powers of two) of an uploaded trace."""
    if jobs.empty:
        return empty_figure("No jobs.", SIZES_HEIGHT)
    buckets = 2 ** np.ceil(np.log2(np.maximum(jobs["procs"].to_numpy(dtype=float), 1)))
    counts = pd.Series(buckets).value_counts().sort_index()
    labels = [f"≤{int(b)}" for b in counts.index]
    figure = go.Figure(go.Bar(x=labels, y=counts.values, marker_color="#4c78a8",
                              hovertemplate="%{x} CPUs: %{y} jobs<extra></extra>"))
    figure.update_layout(title="Job sizes (CPUs)", height=SIZES_HEIGHT, template="plotly_white",
                         margin={"l": 50, "r": 10, "t": 35, "b": 30}, yaxis={"title": "jobs"})
    return figure
