"""Pure figure builders for the batch page: result frames in, ``go.Figure`` out.

Time axes are in hours since the first submission; a time window is a pair
of seconds ``(start, end)`` or ``None`` for the whole run.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

HOUR = 3600.0
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")
OBJECTIVES = (
    ("avg_slowdown", "Avg. slowdown"),
    ("avg_response_s", "Avg. response time (s)"),
    ("avg_wait_s", "Avg. wait time (s)"),
    ("killed", "Killed jobs"),
)
SCENARIO_ORDER = ("BASIC", "EXT-FAIL", "EXT-REQ", "EXT-ALL")
GANTT_MAX_JOBS = 1500


def _empty(message: str, height: int = 300) -> go.Figure:
    figure = go.Figure()
    figure.add_annotation(text=message, showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper",
                          font={"color": "#5b6b7b"})
    figure.update_layout(height=height, xaxis={"visible": False}, yaxis={"visible": False},
                         margin={"l": 20, "r": 20, "t": 30, "b": 20}, template="plotly_white")
    return figure


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
        return _empty("Run a policy × scenario matrix to compare objectives.", 420)
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
    figure.update_layout(barmode="group", height=420, template="plotly_white",
                         margin={"l": 50, "r": 20, "t": 50, "b": 40}, legend={"orientation": "h", "y": -0.15})
    return figure


def _window_range(window) -> list[float] | None:
    return None if not window else [window[0] / HOUR, window[1] / HOUR]


def _steps(timeline: pd.DataFrame, entity: str, metric: str) -> pd.DataFrame:
    rows = timeline[(timeline["entity"] == entity) & (timeline["metric"] == metric)]
    return rows.sort_values("time", kind="stable")


def utilisation_over_time(timeline: pd.DataFrame, window=None) -> go.Figure:
    """Per cluster, used CPUs over the CPUs of its machines (up or down) -- a step line each."""
    clusters = [e for e in dict.fromkeys(timeline.loc[timeline["metric"] == "used_cpus", "entity"])]
    if not clusters:
        return _empty("No run selected.")
    figure = go.Figure()
    for index, cluster in enumerate(clusters):
        used = _steps(timeline, cluster, "used_cpus")
        total = float(_steps(timeline, cluster, "up_cpus")["value"].max())
        figure.add_trace(go.Scatter(
            x=used["time"] / HOUR, y=used["value"] / max(total, 1.0), mode="lines", line={"shape": "hv", "width": 1},
            name=cluster, marker_color=PALETTE[index % len(PALETTE)],
            hovertemplate=f"{cluster}<br>%{{x:.2f}} h: %{{y:.0%}}<extra></extra>",
        ))
    figure.update_layout(title="CPU utilisation per cluster", height=320, template="plotly_white",
                         xaxis={"title": "hours since first submission", "range": _window_range(window)},
                         yaxis={"title": "used / all CPUs", "tickformat": ".0%", "range": [0, 1.05]},
                         margin={"l": 60, "r": 20, "t": 40, "b": 40}, uirevision="batch-time")
    return figure


def series_by_run(runs: list[tuple[str, pd.DataFrame]], entity: str, metric: str, title: str, ytitle: str,
                  window=None) -> go.Figure:
    """One step line per run for one timeline series (queue length, killed jobs...)."""
    if not runs:
        return _empty("No run selected.")
    figure = go.Figure()
    for index, (label, timeline) in enumerate(runs):
        rows = _steps(timeline, entity, metric)
        if rows.empty:
            continue
        figure.add_trace(go.Scatter(
            x=rows["time"] / HOUR, y=rows["value"], mode="lines", line={"shape": "hv", "width": 1.5},
            name=label, marker_color=PALETTE[index % len(PALETTE)],
            hovertemplate=f"{label}<br>%{{x:.2f}} h: %{{y:.0f}}<extra></extra>",
        ))
    figure.update_layout(title=title, height=300, template="plotly_white",
                         xaxis={"title": "hours since first submission", "range": _window_range(window)},
                         yaxis={"title": ytitle, "rangemode": "tozero"},
                         margin={"l": 60, "r": 20, "t": 40, "b": 40}, uirevision="batch-time")
    return figure


def wait_distribution(runs: list[tuple[str, pd.DataFrame]], window=None) -> go.Figure:
    """Empirical CDF of wait times of completed jobs submitted in the window, one line per run."""
    if not runs:
        return _empty("No run selected.")
    figure = go.Figure()
    for index, (label, jobs) in enumerate(runs):
        done = jobs[jobs["status"] == "completed"]
        if window:
            done = done[(done["submit_time"] >= window[0]) & (done["submit_time"] <= window[1])]
        waits = np.sort(done["wait_time"].to_numpy(dtype=float))
        if waits.size == 0:
            continue
        share = np.arange(1, waits.size + 1) / waits.size
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


def machine_rows(jobs: pd.DataFrame, timeline: pd.DataFrame) -> dict[str, int]:
    """First y row of each cluster's machines: clusters stacked in order of appearance, a gap between.

    A cluster's height is one more than the highest machine index that any
    job or failure of the run used.
    """
    highest: dict[str, int] = {}
    used = jobs[jobs["machines"].fillna("") != ""]
    for cluster, machines in zip(used["cluster"], used["machines"]):
        top = max(int(m) for m in machines.split(","))
        highest[cluster] = max(highest.get(cluster, 0), top)
    for entity in timeline.loc[timeline["metric"] == "machine_down", "entity"].unique():
        cluster, _, machine = str(entity).rpartition("/")
        highest[cluster] = max(highest.get(cluster, 0), int(machine))
    offsets, offset = {}, 0
    for cluster in dict.fromkeys([*jobs["cluster"][jobs["cluster"].fillna("") != ""], *highest]):
        if cluster in highest:
            offsets[cluster] = offset
            offset += highest[cluster] + 2
    return offsets


def down_intervals(timeline: pd.DataFrame, end: float) -> pd.DataFrame:
    """``cluster, machine, start, end`` of every interval a machine was down (open ones end at ``end``)."""
    rows = []
    down = timeline[timeline["metric"] == "machine_down"].sort_values("time", kind="stable")
    for entity, changes in down.groupby("entity", sort=False):
        cluster, _, machine = str(entity).rpartition("/")
        since = None
        for time, value in zip(changes["time"], changes["value"]):
            if value > 0 and since is None:
                since = time
            elif value == 0 and since is not None:
                rows.append((cluster, int(machine), since, time))
                since = None
        if since is not None:
            rows.append((cluster, int(machine), since, max(end, since)))
    return pd.DataFrame(rows, columns=["cluster", "machine", "start", "end"])


def gantt(jobs: pd.DataFrame, timeline: pd.DataFrame, window=None, highlight: str | None = None) -> go.Figure:
    """Machines × time: a bar per job on every machine it held; killed jobs red with a cross; down machines shaded.

    At most :data:`GANTT_MAX_JOBS` jobs are drawn (the largest CPU-time
    first), so a long window stays responsive; zoom in to see every job.
    """
    ran = jobs[jobs["status"].isin(["completed", "killed"]) & (jobs["end_time"] > jobs["start_time"])]
    if window:
        ran = ran[(ran["end_time"] >= window[0]) & (ran["start_time"] <= window[1])]
    end = float(jobs["end_time"].max()) if len(jobs) else 0.0
    # Failures outside the run (the failure trace may be longer) are clipped to it.
    down = down_intervals(timeline, end)
    down = down.assign(start=down["start"].clip(lower=0.0), end=down["end"].clip(upper=end))
    low, high = window if window else (0.0, end)
    down = down[(down["end"] > max(low, 0.0)) & (down["start"] < min(high, end))]
    if ran.empty and down.empty:
        return _empty("No jobs ran in this window." if window else "No run selected.", 420)
    truncated = len(ran) > GANTT_MAX_JOBS
    if truncated:
        ran = ran.assign(_area=ran["procs"] * (ran["end_time"] - ran["start_time"])).nlargest(GANTT_MAX_JOBS, "_area")
    offsets = machine_rows(jobs, timeline)
    # One row per (job, machine) it held.
    held = ran.assign(machine=ran["machines"].str.split(",")).explode("machine")
    held = held[held["machine"].fillna("") != ""].reset_index(drop=True)
    y = held["cluster"].map(offsets) + held["machine"].astype(int)
    figure = go.Figure()
    if not down.empty:
        figure.add_trace(go.Bar(
            base=down["start"] / HOUR, x=(down["end"] - down["start"]) / HOUR,
            y=down["cluster"].map(offsets) + down["machine"], orientation="h", width=1.0, name="machine down",
            marker={"color": "rgba(214,39,40,0.18)", "line": {"width": 0}},
            customdata=np.stack([down["cluster"], down["machine"], down["start"], down["end"]], axis=1),
            hovertemplate="%{customdata[0]} machine %{customdata[1]} down<br>"
                          "%{customdata[2]:.0f} s → %{customdata[3]:.0f} s<extra></extra>",
        ))
    for status, color in (("completed", "#4c78a8"), ("killed", "#d62728")):
        part = held[held["status"] == status]
        if part.empty:
            continue
        figure.add_trace(go.Bar(
            base=part["start_time"] / HOUR, x=(part["end_time"] - part["start_time"]) / HOUR, y=y[part.index],
            orientation="h", width=0.8, name=status, marker={"color": color, "line": {"width": 0}},
            customdata=np.stack([part["job_id"], part["procs"], part["cluster"], part["machine"],
                                 part["start_time"], part["end_time"]], axis=1),
            hovertemplate="job %{customdata[0]} (%{customdata[1]} CPUs) on %{customdata[2]} machine "
                          "%{customdata[3]}<br>%{customdata[4]:.0f} s → %{customdata[5]:.0f} s<extra>"
                          + status + "</extra>",
        ))
    killed = held[held["status"] == "killed"]
    if not killed.empty:
        figure.add_trace(go.Scatter(
            x=killed["end_time"] / HOUR, y=y[killed.index], mode="markers", name="killed at",
            marker={"symbol": "x", "color": "#7f0000", "size": 9}, hoverinfo="skip",
        ))
    if highlight is not None and (held["job_id"] == highlight).any():
        rows = held[held["job_id"] == highlight]
        figure.add_trace(go.Bar(
            base=rows["start_time"] / HOUR, x=(rows["end_time"] - rows["start_time"]) / HOUR, y=y[rows.index],
            orientation="h", width=0.8, name=f"job {highlight}", hoverinfo="skip",
            marker={"color": "rgba(0,0,0,0)", "line": {"color": "#ffbf00", "width": 3}},
        ))
    figure.update_layout(
        title="Machines × time" + (f" (the {GANTT_MAX_JOBS} largest jobs)" if truncated else "")
        + "; shaded: machine down",
        height=460, template="plotly_white", barmode="overlay", uirevision="batch-time",
        xaxis={"title": "hours since first submission", "range": _window_range(window)},
        yaxis={"tickvals": list(offsets.values()), "ticktext": list(offsets), "title": "cluster, machine",
               "autorange": "reversed"},
        margin={"l": 90, "r": 20, "t": 40, "b": 40}, legend={"orientation": "h", "y": -0.2},
    )
    return figure


def size_histogram(jobs: pd.DataFrame) -> go.Figure:
    """Jobs per processor-count bucket (powers of two) of an uploaded trace."""
    if jobs.empty:
        return _empty("No jobs.", 220)
    buckets = 2 ** np.ceil(np.log2(np.maximum(jobs["procs"].to_numpy(dtype=float), 1)))
    counts = pd.Series(buckets).value_counts().sort_index()
    labels = [f"≤{int(b)}" for b in counts.index]
    figure = go.Figure(go.Bar(x=labels, y=counts.values, marker_color="#4c78a8",
                              hovertemplate="%{x} CPUs: %{y} jobs<extra></extra>"))
    figure.update_layout(title="Job sizes (CPUs)", height=220, template="plotly_white",
                         margin={"l": 50, "r": 10, "t": 35, "b": 30}, yaxis={"title": "jobs"})
    return figure
