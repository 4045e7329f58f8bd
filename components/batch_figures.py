"""Pure figure builders for the batch page: result frames in, ``go.Figure`` out.

Time axes are in hours since the first submission; a time window is a pair
of seconds ``(start, end)`` or ``None`` for the whole run.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pyarrow as pa
import pyarrow.compute as pc
from plotly.subplots import make_subplots

from .downsample import ecdf_points, step_points

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
#: (job, machine) bars at most; beyond, the Gantt is a density picture.
GANTT_MAX_BARS = 6000
#: Rows (binned machines) and columns (time bins) of the density picture.
DENSITY_ROWS = 240
DENSITY_COLUMNS = 480


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
    """Per cluster, used CPUs over the CPUs of its machines (up or down) -- a step line each, M4-reduced."""
    clusters = [e for e in dict.fromkeys(timeline.loc[timeline["metric"] == "used_cpus", "entity"])]
    if not clusters:
        return _empty("No run selected.")
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
                         xaxis={"title": "hours since first submission", "range": _window_range(window)},
                         yaxis={"title": "used / all CPUs", "tickformat": ".0%", "range": [0, 1.05]},
                         margin={"l": 60, "r": 20, "t": 40, "b": 40}, uirevision="batch-time")
    return figure


def series_by_run(runs: list[tuple[str, pd.DataFrame]], entity: str, metric: str, title: str, ytitle: str,
                  window=None) -> go.Figure:
    """One step line per run for one timeline series (queue length, killed jobs...).

    Each line is reduced to the window's M4 points (:func:`.downsample.step_points`):
    every bin's first, last, lowest and highest value, so peaks survive.
    """
    if not runs:
        return _empty("No run selected.")
    figure = go.Figure()
    for index, (label, timeline) in enumerate(runs):
        rows = _steps(timeline, entity, metric)
        if rows.empty:
            continue
        times, values = step_points(rows["time"], rows["value"], window)
        figure.add_trace(go.Scatter(
            x=times / HOUR, y=values, mode="lines", line={"shape": "hv", "width": 1.5},
            name=label, marker_color=PALETTE[index % len(PALETTE)],
            hovertemplate=f"{label}<br>%{{x:.2f}} h: %{{y:.0f}}<extra></extra>",
        ))
    figure.update_layout(title=title, height=300, template="plotly_white",
                         xaxis={"title": "hours since first submission", "range": _window_range(window)},
                         yaxis={"title": ytitle, "rangemode": "tozero"},
                         margin={"l": 60, "r": 20, "t": 40, "b": 40}, uirevision="batch-time")
    return figure


def wait_distribution(runs: list[tuple[str, pd.DataFrame]], window=None) -> go.Figure:
    """Empirical CDF of wait times of completed jobs submitted in the window, one line per run.

    Drawn through at most :data:`.downsample.ECDF_POINTS` exact quantiles per run.
    """
    if not runs:
        return _empty("No run selected.")
    figure = go.Figure()
    for index, (label, jobs) in enumerate(runs):
        done = jobs[jobs["status"] == "completed"]
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


def _arrow(texts: pd.Series) -> pa.Array:
    """A string column as an Arrow array (no copy when pandas already keeps it in Arrow)."""
    return pa.array(texts.astype("string").array)


def held_machines(machines: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """``(machine index per entry, entries per job)`` of ``machines`` strings (``"0,1,2,7"``, none empty).

    Vectorised: one joined text parsed by numpy, the comma counts by Arrow;
    ~7 million entries (a 450,000-job trace) take a fraction of a second.
    """
    if machines.empty:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    counts = pc.count_substring(_arrow(machines), ",").to_numpy(zero_copy_only=False).astype(np.int64) + 1
    flat = np.fromstring(",".join(machines.tolist()), dtype=np.int64, sep=",")
    return flat, counts


def cluster_machines(jobs: pd.DataFrame, timeline: pd.DataFrame) -> dict[str, int]:
    """Per cluster, in order of appearance, the machines the run shows: one more than the highest index used.

    Used by any job or failure of the run. A job lists its machines in
    ascending order, so its last one is its highest.
    """
    used = jobs[jobs["machines"].fillna("") != ""]
    last = pc.struct_field(pc.extract_regex(_arrow(used["machines"]), r"(?P<last>[0-9]+)$"), [0])
    last = pd.Series(pc.cast(last, pa.int64()).to_numpy(zero_copy_only=False), index=used.index)
    highest = {str(cluster): int(top) for cluster, top in last.groupby(used["cluster"], sort=False).max().items()}
    for entity in timeline.loc[timeline["metric"] == "machine_down", "entity"].unique():
        cluster, _, machine = str(entity).rpartition("/")
        highest[cluster] = max(highest.get(cluster, 0), int(machine))
    order = dict.fromkeys([*used["cluster"].unique().tolist(), *highest])
    return {cluster: highest[cluster] + 1 for cluster in order if cluster in highest}


def machine_rows(jobs: pd.DataFrame, timeline: pd.DataFrame) -> dict[str, int]:
    """First y row of each cluster's machines: clusters stacked in order of appearance, a gap between."""
    return _first_rows(cluster_machines(jobs, timeline))


def _first_rows(sizes: dict[str, int]) -> dict[str, int]:
    offsets, offset = {}, 0
    for cluster, machines in sizes.items():
        offsets[cluster] = offset
        offset += machines + 1
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
    """Machines × time for the window: each job, or the machines' busy share when it holds too many.

    Up to :data:`GANTT_MAX_JOBS` jobs holding up to :data:`GANTT_MAX_BARS`
    (job, machine) pairs: a bar per job on every machine it held, killed
    jobs red with a cross, ``highlight`` outlined. Beyond that, a density
    picture (:func:`occupancy`): a heatmap of the share of CPU time in use,
    machines binned to at most :data:`DENSITY_ROWS` rows and the window to
    :data:`DENSITY_COLUMNS` columns -- zooming in brings back each job.
    Down machines are shaded in both.
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
    sizes = cluster_machines(jobs, timeline)
    offsets = _first_rows(sizes)
    machines, counts = held_machines(ran["machines"])
    dense = len(ran) > GANTT_MAX_JOBS or len(machines) > GANTT_MAX_BARS
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
    if dense:
        _add_density(figure, ran, machines, counts, sizes, timeline,
                     (max(low, 0.0), max(min(high, end), max(low, 0.0) + 1.0)))
        title = (f"Machines × time: share of CPU time in use ({len(ran):,} jobs; zoom in to see each job)")
    else:
        _add_job_bars(figure, ran, machines, counts, offsets, highlight)
        title = "Machines × time"
    figure.update_layout(
        title=title + ("; shaded: machine down" if not down.empty else ""),
        height=460, template="plotly_white", barmode="overlay", uirevision="batch-time",
        xaxis={"title": "hours since first submission", "range": _window_range(window)},
        yaxis={"tickvals": list(offsets.values()), "ticktext": list(offsets), "title": "cluster, machine",
               "autorange": "reversed"},
        margin={"l": 90, "r": 20, "t": 40, "b": 40}, legend={"orientation": "h", "y": -0.2},
    )
    return figure


def _first_row_of(clusters: pd.Series, offsets: dict[str, int]) -> np.ndarray:
    """``offsets[cluster]`` for each entry of ``clusters`` (vectorised through category codes)."""
    codes = pd.Categorical(clusters, categories=list(offsets)).codes
    return np.asarray(list(offsets.values()), dtype=np.int64)[codes]


def _add_job_bars(figure: go.Figure, ran: pd.DataFrame, machines, counts, offsets, highlight) -> None:
    """One bar per (job, machine) it held; killed jobs red with a cross at their end; the highlight outlined."""
    held = ran.iloc[np.repeat(np.arange(len(ran)), counts)].reset_index(drop=True).assign(machine=machines)
    y = held["cluster"].map(offsets) + held["machine"]
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


def occupancy(rows: np.ndarray, starts: np.ndarray, ends: np.ndarray, cpus: np.ndarray, row_count: int,
              low: float, high: float, columns: int) -> np.ndarray:
    """Busy CPU-seconds per (row, time bin): ``sum over entries of cpus × |[start, end) ∩ bin|``.

    The window ``[low, high)`` is cut into ``columns`` equal bins. An entry
    adds its partial first and last bins directly and its whole bins in
    between through a difference array along time, so the cost is linear in
    the entries, whatever their length.
    """
    width = (high - low) / columns
    start = np.clip(starts, low, high)
    end = np.clip(ends, low, high)
    keep = end > start
    rows, start, end, cpus = rows[keep], start[keep], end[keep], cpus[keep]
    first = np.minimum(((start - low) / width).astype(np.int64), columns - 1)
    last = np.minimum(((end - low) / width).astype(np.int64), columns - 1)
    cells = row_count * columns
    one_bin = first == last
    busy = np.bincount(rows[one_bin] * columns + first[one_bin], cpus[one_bin] * (end - start)[one_bin], cells)
    spans = ~one_bin
    r, f, la, c = rows[spans], first[spans], last[spans], cpus[spans]
    busy += np.bincount(r * columns + f, c * (low + (f + 1) * width - start[spans]), cells)
    busy += np.bincount(r * columns + la, c * (end[spans] - (low + la * width)), cells)
    whole = np.bincount(r * (columns + 1) + f + 1, c * width, row_count * (columns + 1))
    whole -= np.bincount(r * (columns + 1) + la, c * width, row_count * (columns + 1))
    busy += np.cumsum(whole.reshape(row_count, columns + 1), axis=1)[:, :columns].ravel()
    return busy.reshape(row_count, columns)


def _add_density(figure: go.Figure, ran: pd.DataFrame, machines, counts, sizes: dict[str, int],
                 timeline: pd.DataFrame, span: tuple[float, float]) -> None:
    """The heatmap of busy shares: machines binned to rows, the window to columns (see :func:`gantt`).

    A job on several machines counts ``procs / machines`` CPUs on each; a
    machine has its cluster's CPUs (largest ``up_cpus``) over its machines.
    """
    offsets = _first_rows(sizes)
    total_rows = sum(sizes.values()) + len(sizes) - 1
    bins = min(total_rows, DENSITY_ROWS)
    # CPUs of each machine row (the gap rows between clusters have none).
    up = timeline[timeline["metric"] == "up_cpus"].groupby("entity")["value"].max()
    capacity = np.zeros(total_rows)
    for cluster, first in offsets.items():
        capacity[first:first + sizes[cluster]] = float(up.get(cluster, sizes[cluster])) / sizes[cluster]
    machine_row = np.repeat(_first_row_of(ran["cluster"], offsets), counts) + machines
    low, high = span
    busy = occupancy(machine_row * bins // total_rows,
                     np.repeat(ran["start_time"].to_numpy(dtype=float), counts),
                     np.repeat(ran["end_time"].to_numpy(dtype=float), counts),
                     np.repeat(ran["procs"].to_numpy(dtype=float) / counts, counts), bins, low, high, DENSITY_COLUMNS)
    capacity_bins = np.bincount(np.arange(total_rows) * bins // total_rows, capacity, bins)
    width = (high - low) / DENSITY_COLUMNS
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(capacity_bins[:, None] > 0, busy / (capacity_bins[:, None] * width), np.nan)
    edges = np.arange(bins + 1) * total_rows / bins
    figure.add_trace(go.Heatmap(
        x=(low + (np.arange(DENSITY_COLUMNS) + 0.5) * width) / HOUR, y=(edges[:-1] + edges[1:]) / 2 - 0.5,
        z=np.minimum(share, 1.0).astype(np.float32), zmin=0, zmax=1, colorscale="Blues", name="busy share",
        colorbar={"title": {"text": "busy"}, "tickformat": ".0%", "len": 0.8},
        hovertemplate="%{x:.1f} h, machine rows around %{y:.0f}: %{z:.0%} of CPU time in use<extra></extra>",
    ))


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
