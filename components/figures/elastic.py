"""Pure figure builders for the memory-elasticity page: frames in, ``go.Figure`` out.

Time axes are in seconds since time 0 of the trace; a time window is a pair
of seconds ``(start, end)`` or ``None`` for the whole run. ``runs`` are
``[(scheduler label, frame)]`` in display order; every scheduler keeps one
colour on every chart.

Sizes stay bounded whatever the run: time series are cut to the window and
M4-reduced (:func:`~.downsample.step_points`), runtime CDFs drawn as at most
1,000 exact quantiles (:func:`~.downsample.ecdf_points`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from sched_engine.elastic import runtime

from .common import empty_figure
from .downsample import ecdf_points, step_points

COLORS = {"YARN": "#1f77b4", "YARN-ME": "#d62728", "Meganode": "#2ca02c"}
OTHER_COLOR = "#7f7f7f"
MIN_FRACTION = 0.1  # YARN-ME never grants less than 10% of the ideal memory
PROFILE_POINTS = 1801
TIME_AXIS = "seconds since the first possible arrival (t = 0)"


def color(label: str) -> str:
    return COLORS.get(label, OTHER_COLOR)


def _time_layout(figure: go.Figure, title: str, ytitle: str, window, height: int = 320, **yaxis) -> go.Figure:
    figure.update_layout(title=title, height=height, template="plotly_white", uirevision="elastic-time",
                         xaxis={"title": TIME_AXIS, "range": list(window) if window else None},
                         yaxis={"title": ytitle, **yaxis}, margin={"l": 60, "r": 20, "t": 40, "b": 40},
                         legend={"orientation": "h", "y": -0.25})
    return figure


def profile_points(penalty: dict, ideal_runtime: float = 100.0) -> tuple[np.ndarray, np.ndarray]:
    """``(fraction, runtime)`` from 10% to 100% of the ideal memory on a fine grid.

    The grid holds every 1/k for k = 1..10 and points just past each, so a
    sawtooth's jumps and a step's edge show as jumps.
    """
    grid = np.linspace(MIN_FRACTION, 1.0, PROFILE_POINTS)
    edges = 1.0 / np.arange(1, 11)
    fractions = np.unique(np.concatenate([grid, edges, edges - 1e-6]))
    fractions = fractions[(fractions >= MIN_FRACTION) & (fractions <= 1.0)]
    return fractions, np.array([runtime(penalty, float(f), ideal_runtime) for f in fractions])


def penalty_profile(penalty: dict, ideal_runtime: float = 100.0) -> go.Figure:
    """Runtime of a task of ``ideal_runtime`` seconds against the share of its ideal memory it is granted."""
    fractions, runtimes = profile_points(penalty, ideal_runtime)
    figure = go.Figure(go.Scatter(
        x=fractions, y=runtimes, mode="lines", line={"color": "#1f6fb2", "width": 2}, name="runtime",
        hovertemplate="%{x:.1%} of ideal memory: %{y:.1f} s<extra></extra>",
    ))
    if penalty["kind"] == "fitted":
        f0 = penalty["profile_fraction"]
        figure.add_trace(go.Scatter(
            x=[f0, 1.0], y=[runtime(penalty, f0, ideal_runtime), ideal_runtime], mode="markers",
            marker={"size": 10, "color": "#c98a3d", "symbol": "diamond"}, name="profiling runs",
            hovertemplate="profiling run at %{x:.0%}: %{y:.1f} s<extra></extra>",
        ))
    figure.update_layout(
        title=f"Penalty profile: a {ideal_runtime:g} s task", height=260, template="plotly_white",
        xaxis={"title": "memory granted / ideal", "tickformat": ".0%", "range": [MIN_FRACTION - 0.02, 1.02]},
        yaxis={"title": "runtime (s)", "rangemode": "tozero"}, showlegend=penalty["kind"] == "fitted",
        margin={"l": 55, "r": 15, "t": 35, "b": 40}, legend={"orientation": "h", "y": -0.35},
    )
    return figure


def _series(timeline: pd.DataFrame, metric: str, window=None) -> tuple[np.ndarray, np.ndarray]:
    """The cluster's step series of ``metric`` in the window, reduced for drawing: ``(times, values)``."""
    rows = timeline[(timeline["entity"] == "cluster") & (timeline["metric"] == metric)]
    rows = rows.sort_values("time", kind="stable")
    return step_points(rows["time"], rows["value"], window)


def memory_utilisation(runs: list[tuple[str, pd.DataFrame]], window=None) -> go.Figure:
    """Share of all node memory in use over time, a step line per scheduler."""
    if not runs:
        return empty_figure("Run schedulers to see memory utilisation over time.")
    figure = go.Figure()
    for label, timeline in runs:
        times, values = _series(timeline, "memory_utilisation", window)
        figure.add_trace(go.Scatter(
            x=times, y=values, mode="lines", line={"shape": "hv", "width": 1.5, "color": color(label)},
            name=label, hovertemplate=f"{label}<br>%{{x:.0f}} s: %{{y:.1%}}<extra></extra>",
        ))
    return _time_layout(figure, "Memory utilisation", "memory in use / all memory", window,
                        tickformat=".0%", range=[0, 1.05])


def running_tasks(runs: list[tuple[str, pd.DataFrame]], window=None) -> go.Figure:
    """Running regular (solid) and elastic (dotted) tasks over time per scheduler."""
    if not runs:
        return empty_figure("Run schedulers to see running tasks over time.")
    figure = go.Figure()
    for label, timeline in runs:
        for metric, kind, dash in (("regular_tasks", "regular", "solid"), ("elastic_tasks", "elastic", "dot")):
            times, values = _series(timeline, metric, window)
            if kind == "elastic" and not (values > 0).any():
                continue
            figure.add_trace(go.Scatter(
                x=times, y=values, mode="lines", name=f"{label} {kind}",
                line={"shape": "hv", "width": 1.5, "color": color(label), "dash": dash},
                hovertemplate=f"{label}<br>%{{x:.0f}} s: %{{y:.0f}} {kind} tasks<extra></extra>",
            ))
    return _time_layout(figure, "Running tasks (dotted: elastic)", "tasks", window,
                        rangemode="tozero")


def runtime_pairs(x_jobs: pd.DataFrame, y_jobs: pd.DataFrame) -> pd.DataFrame:
    """``job_id, x, y``: each finished job's runtime (end - submit) under two schedulers."""
    left = x_jobs.loc[x_jobs["status"] == "finished", ["job_id", "runtime_s"]]
    right = y_jobs.loc[y_jobs["status"] == "finished", ["job_id", "runtime_s"]]
    pairs = left.merge(right, on="job_id", suffixes=("_x", "_y"))
    return pairs.rename(columns={"runtime_s_x": "x", "runtime_s_y": "y"})


def runtime_scatter(x_label: str, x_jobs: pd.DataFrame, y_label: str, y_jobs: pd.DataFrame) -> go.Figure:
    """Per-job runtime under ``y_label`` against ``x_label`` with the line y = x (below it: faster).

    Points carry the job id in ``customdata`` so a click can select the job.
    """
    pairs = runtime_pairs(x_jobs, y_jobs)
    if pairs.empty:
        return empty_figure(f"Run {x_label} and {y_label} to compare job runtimes.", 360)
    top = float(max(pairs["x"].max(), pairs["y"].max())) * 1.05
    faster = int((pairs["y"] < pairs["x"]).sum())
    figure = go.Figure([
        go.Scatter(x=[0, top], y=[0, top], mode="lines", name="y = x", hoverinfo="skip",
                   line={"color": "#9aa9b8", "dash": "dash", "width": 1}),
        go.Scatter(x=pairs["x"], y=pairs["y"], mode="markers", name="job", customdata=pairs["job_id"],
                   marker={"color": color(y_label), "size": 7, "opacity": 0.75},
                   hovertemplate=f"job %{{customdata}}<br>{x_label}: %{{x:.1f}} s<br>{y_label}: %{{y:.1f}} s"
                                 "<extra></extra>"),
    ])
    figure.update_layout(
        title=f"{y_label} vs {x_label}: {faster} of {len(pairs)} jobs faster",
        height=360, template="plotly_white", showlegend=False,
        xaxis={"title": f"{x_label} runtime (s)", "range": [0, top]},
        yaxis={"title": f"{y_label} runtime (s)", "range": [0, top]},
        margin={"l": 60, "r": 20, "t": 40, "b": 40},
    )
    return figure


def runtime_cdf(runs: list[tuple[str, pd.DataFrame]]) -> go.Figure:
    """Empirical CDF of job runtime (end - submit) per scheduler (at most 1,000 exact quantiles each)."""
    if not runs:
        return empty_figure("Run schedulers to compare job runtime distributions.", 360)
    figure = go.Figure()
    for label, jobs in runs:
        values, shares = ecdf_points(jobs.loc[jobs["status"] == "finished", "runtime_s"])
        if values.size == 0:
            continue
        figure.add_trace(go.Scatter(
            x=values, y=shares, mode="lines", line={"shape": "hv", "color": color(label)},
            name=label, hovertemplate=f"{label}<br>runtime ≤ %{{x:.0f}} s: %{{y:.1%}}<extra></extra>",
        ))
    figure.update_layout(title="Job runtime distribution", height=360, template="plotly_white",
                         xaxis={"title": "job runtime, end − arrival (s)", "rangemode": "tozero"},
                         yaxis={"title": "share of jobs", "tickformat": ".0%", "range": [0, 1.02]},
                         margin={"l": 60, "r": 20, "t": 40, "b": 40}, legend={"orientation": "h", "y": -0.2})
    return figure


def job_intervals(timeline: pd.DataFrame, job_id: str) -> pd.DataFrame:
    """``node, start, end, memory_mb``: each interval a job held memory on a node (from ``job_memory_mb``)."""
    rows = timeline[timeline["metric"] == "job_memory_mb"]
    split = rows["entity"].astype(str).str.split("/", n=1)
    mine = rows[split.str[1] == str(job_id)].assign(node=split.str[0])
    mine = mine.sort_values(["node", "time"], kind="stable")
    parts = []
    for name, changes in mine.groupby("node", sort=False):
        times, values = changes["time"].to_numpy(float), changes["value"].to_numpy(float)
        held = values[:-1] > 0
        parts.append(pd.DataFrame({"node": name, "start": times[:-1][held], "end": times[1:][held],
                                   "memory_mb": values[:-1][held]}))
    if not parts:
        return pd.DataFrame({"node": pd.Series(dtype=str), "start": pd.Series(dtype=float),
                             "end": pd.Series(dtype=float), "memory_mb": pd.Series(dtype=float)})
    frame = pd.concat(parts, ignore_index=True)
    order = frame["node"].str.removeprefix("node-").astype(int)
    return frame.assign(_order=order).sort_values(["_order", "start"], kind="stable").drop(columns="_order") \
        .reset_index(drop=True)


def job_node_timeline(runs: list[tuple[str, pd.DataFrame]], job_id: str | None, window=None) -> go.Figure:
    """Memory a job held on each node over time, one panel per scheduler.

    A bar's shade runs from pale (little) to the scheduler's colour (the most
    the job held on one node under that scheduler); the hover gives MB.
    """
    if not runs or job_id is None:
        return empty_figure("Pick a job (or click one in the runtime scatter) to see where it ran.", 360)
    held = [(label, job_intervals(timeline, job_id)) for label, timeline in runs]
    held = [(label, frame) for label, frame in held if not frame.empty]
    if not held:
        return empty_figure(f"No per-node record for job {job_id} (kept for runs of at most 20,000 tasks).", 360)
    figure = make_subplots(rows=len(held), cols=1, shared_xaxes=True, vertical_spacing=0.08,
                           subplot_titles=[label for label, _ in held])
    heights = []
    for row, (label, frame) in enumerate(held, start=1):
        nodes = list(dict.fromkeys(frame["node"]))
        heights.append(len(nodes))
        marker = {"color": frame["memory_mb"], "colorscale": [[0, "#e3e9f0"], [1, color(label)]], "cmin": 0,
                  "cmax": float(frame["memory_mb"].max()), "showscale": False, "line": {"width": 0}}
        figure.add_trace(go.Bar(
            base=frame["start"], x=frame["end"] - frame["start"], y=frame["node"], orientation="h", name=label,
            marker=marker,
            customdata=np.stack([frame["memory_mb"], frame["start"], frame["end"]], axis=1),
            hovertemplate=f"{label} %{{y}}<br>%{{customdata[0]:.0f}} MB of job {job_id}<br>"
                          "%{customdata[1]:.1f} s → %{customdata[2]:.1f} s<extra></extra>",
            showlegend=False,
        ), row=row, col=1)
        figure.update_yaxes(categoryorder="array", categoryarray=nodes[::-1], row=row, col=1)
    figure.update_xaxes(range=list(window) if window else None)
    figure.update_xaxes(title_text=TIME_AXIS, row=len(held), col=1)
    figure.update_layout(
        title=f"Job {job_id}: memory held per node (darker: more)", template="plotly_white", barmode="overlay",
        height=max(300, min(900, 120 + sum(18 * h + 60 for h in heights))), uirevision="elastic-time",
        margin={"l": 80, "r": 20, "t": 60, "b": 40},
    )
    return figure
