"""Pure figure builders for the network-isolation page: result frames in, ``go.Figure`` out.

Times are seconds since the first arrival; a time window is ``(start, end)``
in seconds or ``None`` for the whole run. Every chart colours an application
the same way (:func:`app_colours`) and carries its name in ``customdata`` so
a click selects it; the selected application is drawn bold, the others faded.

Sizes stay bounded whatever the run: isolation lines share a budget of
points (M4-reduced, :mod:`.downsample`, within the window), the utilisation
heatmap a budget of cells (machines beyond :data:`HEATMAP_MAX_ROWS` share
rows, time columns shrink as machines grow).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.colors import qualitative
from plotly.subplots import make_subplots

from .common import empty_figure
from .downsample import step_points

APP_PALETTE = tuple(qualitative.Dark24)
SCHEME_PALETTE = ("#7f7f7f", "#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b")
HEATMAP_MAX_COLUMNS = 400
#: Rows of the utilisation heatmap: one per machine up to this, then neighbouring machines share a row.
HEATMAP_MAX_ROWS = 512
#: Cells of one heatmap panel (rows x columns): the columns shrink when the rows grow.
HEATMAP_MAX_CELLS = 120_000
#: Points of all isolation lines of one figure together (each line gets an equal part).
ISOLATION_POINTS = 40_000
HIGHLIGHT = "#111111"
MARGIN = {"l": 60, "r": 20, "t": 40, "b": 40}


def app_colours(names) -> dict[str, str]:
    """One colour per application, by its position in ``names`` (cycling through 24)."""
    return {name: APP_PALETTE[i % len(APP_PALETTE)] for i, name in enumerate(dict.fromkeys(names))}


def _emphasis(name: str, selected: str | None) -> tuple[float, float]:
    """``(opacity, line width)`` of an application's mark given the selection."""
    if selected is None:
        return 0.9, 1.5
    return (1.0, 4.0) if name == selected else (0.25, 1.0)


def parse_placement(text) -> dict[str, int]:
    """``"M1:2;M3:1"`` -> ``{"M1": 2, "M3": 1}`` (empty for an application never placed)."""
    if not isinstance(text, str) or not text:
        return {}
    pairs = (part.rpartition(":") for part in text.split(";"))
    return {machine: int(count) for machine, _, count in pairs}


def in_window(jobs: pd.DataFrame, window) -> pd.DataFrame:
    """Applications that were placed and started inside the window (all placed ones without a window)."""
    placed = jobs[jobs["start_time"].notna()]
    if not window:
        return placed
    return placed[(placed["start_time"] >= window[0]) & (placed["start_time"] <= window[1])]


def _held_until(times: np.ndarray, values: np.ndarray, stop: float) -> tuple[np.ndarray, np.ndarray]:
    """A step series extended to ``stop`` with its last value (unchanged if it already reaches it)."""
    if times.size and stop > times[-1]:
        return np.append(times, stop), np.append(values, values[-1])
    return times, values


def _stop_times(jobs: pd.DataFrame, timeline: pd.DataFrame) -> tuple[dict[str, float], float]:
    """When isolation lines stop: ``({application: its end}, the last event)``; the last event for one not ended."""
    last = float(timeline["time"].max()) if len(timeline) else 0.0
    return dict(zip(jobs["job_id"], jobs["end_time"].astype(float).fillna(last))), last


def isolation_series(jobs: pd.DataFrame, timeline: pd.DataFrame) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Every application's isolation guarantee as a step series, held until it ends (or the last event)."""
    rows = timeline[timeline["metric"] == "isolation"].sort_values("time", kind="stable")
    ends, last = _stop_times(jobs, timeline)
    return {app: _held_until(group["time"].to_numpy(dtype=float), group["value"].to_numpy(dtype=float),
                             ends.get(app, last))
            for app, group in rows.groupby("entity", sort=False)}


def isolation_steps(jobs: pd.DataFrame, timeline: pd.DataFrame, app: str) -> tuple[np.ndarray, np.ndarray]:
    """One application's isolation guarantee as a step series (empty if it has none); see :func:`isolation_series`."""
    return isolation_series(jobs, timeline).get(app, (np.zeros(0), np.zeros(0)))


def isolation_over_time(runs: list[tuple[str, pd.DataFrame, pd.DataFrame]], selected: str | None = None,
                        window=None) -> go.Figure:
    """One panel per scheme: every application's isolation guarantee (Eq. 1) as a step line.

    Lines hold the window only (all of the run without one), M4-reduced so
    that all lines together keep at most about :data:`ISOLATION_POINTS` points.
    """
    if not runs:
        return empty_figure("Run at least one scheme to see isolation over time.", 420)
    figure = make_subplots(rows=len(runs), cols=1, shared_xaxes=True, vertical_spacing=0.06,
                           subplot_titles=[label for label, _, _ in runs])
    lines = sum(int(jobs["start_time"].notna().sum()) for _, jobs, _ in runs)
    bins = max(10, ISOLATION_POINTS // (4 * max(1, lines)))
    for row, (label, jobs, timeline) in enumerate(runs, start=1):
        colours = app_colours(jobs["job_id"])
        series = isolation_series(jobs, timeline)
        for app in jobs.loc[jobs["start_time"].notna(), "job_id"]:
            times, values = step_points(*series.get(app, (np.zeros(0), np.zeros(0))), window, bins)
            opacity, width = _emphasis(app, selected)
            figure.add_trace(go.Scatter(
                x=times, y=values, mode="lines", line={"shape": "hv", "width": width, "color": colours[app]},
                opacity=opacity, name=app, showlegend=False, customdata=[app] * len(times),
                hovertemplate=f"{app} ({label})<br>%{{x:.3f}} s: %{{y:.3f}}<extra></extra>",
            ), row=row, col=1)
        figure.update_yaxes(title_text="isolation", range=[0, 1.05], row=row, col=1)
    figure.update_xaxes(title_text="time (s)", row=len(runs), col=1)
    if window:
        figure.update_xaxes(range=list(window))
    figure.update_layout(height=140 + 170 * len(runs), template="plotly_white", margin=MARGIN,
                         uirevision="network-time", title="Isolation guarantee per application over time")
    return figure


def isolation_cdf(runs: list[tuple[str, pd.DataFrame]], selected: str | None = None, window=None) -> go.Figure:
    """Empirical CDF of applications' time-averaged isolation guarantee, one line per scheme."""
    if not runs:
        return empty_figure("No run yet.")
    figure = go.Figure()
    for index, (label, jobs) in enumerate(runs):
        placed = in_window(jobs, window).sort_values("mean_isolation", kind="stable")
        if placed.empty:
            continue
        share = np.arange(1, len(placed) + 1) / len(placed)
        colour = SCHEME_PALETTE[index % len(SCHEME_PALETTE)]
        figure.add_trace(go.Scatter(
            x=placed["mean_isolation"], y=share, mode="lines+markers", line={"shape": "hv", "color": colour},
            marker={"size": 5}, name=label, customdata=placed["job_id"],
            hovertemplate=f"{label}<br>%{{customdata}}: isolation %{{x:.3f}}<br>share ≤: %{{y:.0%}}<extra></extra>",
        ))
        chosen = placed["job_id"] == selected
        if chosen.any():
            figure.add_trace(go.Scatter(
                x=placed.loc[chosen, "mean_isolation"], y=share[chosen.to_numpy()], mode="markers",
                marker={"size": 14, "color": colour, "line": {"color": HIGHLIGHT, "width": 2}},
                name=f"{selected} ({label})", showlegend=False, customdata=[selected], hoverinfo="skip",
            ))
    figure.update_layout(title="Isolation CDF (per-app average" + (", started in window)" if window else ")"),
                         height=320, template="plotly_white", margin=MARGIN,
                         xaxis={"title": "isolation guarantee", "range": [0, 1.02]},
                         yaxis={"title": "share of applications", "tickformat": ".0%"},
                         legend={"orientation": "h", "y": -0.25})
    return figure


def durations(runs: list[tuple[str, pd.DataFrame]], selected: str | None = None, window=None) -> go.Figure:
    """Finished applications' durations per scheme (box with every point); the selected one joined across schemes."""
    if not runs:
        return empty_figure("No run yet.")
    figure = go.Figure()
    picked_x, picked_y = [], []
    for index, (label, jobs) in enumerate(runs):
        done = in_window(jobs, window)
        done = done[done["status"] == "finished"]
        figure.add_trace(go.Box(
            y=done["duration"], name=label, boxpoints="all", jitter=0.4, pointpos=0,
            marker={"color": SCHEME_PALETTE[index % len(SCHEME_PALETTE)], "size": 5}, customdata=done["job_id"],
            hovertemplate=f"{label}<br>%{{customdata}}: %{{y:.3f}} s<extra></extra>",
        ))
        hit = done[done["job_id"] == selected]
        if len(hit):
            picked_x.append(label)
            picked_y.append(float(hit["duration"].iloc[0]))
    if picked_x:
        figure.add_trace(go.Scatter(
            x=picked_x, y=picked_y, mode="lines+markers", name=selected, customdata=[selected] * len(picked_x),
            line={"color": HIGHLIGHT, "width": 2}, marker={"size": 12, "symbol": "diamond", "color": HIGHLIGHT},
            hovertemplate=f"{selected}<br>%{{x}}: %{{y:.3f}} s<extra></extra>",
        ))
    figure.update_layout(title="Application duration per scheme", height=320, template="plotly_white",
                         margin=MARGIN, showlegend=False, yaxis={"title": "duration (s)", "rangemode": "tozero"})
    return figure


def link_matrix(timeline: pd.DataFrame, links: list[str], times: np.ndarray) -> np.ndarray:
    """Utilisation of each link (rows) at each time (columns): the last value recorded at or before it (0 before any)."""
    matrix = np.zeros((len(links), len(times)))
    rows = timeline[timeline["metric"] == "utilisation"].sort_values("time", kind="stable")
    position = {link: i for i, link in enumerate(links)}
    for link, changes in rows.groupby("entity", sort=False):
        if link not in position:
            continue
        at = np.searchsorted(changes["time"].to_numpy(dtype=float), times, side="right") - 1
        values = changes["value"].to_numpy(dtype=float)
        matrix[position[link]] = np.where(at >= 0, values[np.maximum(at, 0)], 0.0)
    return matrix


def heatmap_edges(timeline: pd.DataFrame, window=None, columns: int = HEATMAP_MAX_COLUMNS) -> np.ndarray:
    """Column edges of the heatmap: the change times in the window, or an even grid of ``columns`` if there are more."""
    end = float(timeline["time"].max())
    low, high = (float(window[0]), float(window[1])) if window else (0.0, end)
    if high <= low:
        high = low + 1.0
    changes = np.unique(timeline["time"].to_numpy(dtype=float))
    inside = changes[(changes > low) & (changes < high)]
    if inside.size + 1 > columns:
        return np.linspace(low, high, columns + 1)
    return np.concatenate([[low], inside, [high]])


def machine_rows(machines: list[str]) -> tuple[list[str], list[np.ndarray]]:
    """Heatmap rows: ``(labels, machine indices per row)``.

    One row per machine up to :data:`HEATMAP_MAX_ROWS`; beyond, runs of
    neighbouring machines share a row labelled ``"first–last"``.
    """
    groups = np.array_split(np.arange(len(machines)), min(len(machines), HEATMAP_MAX_ROWS))
    labels = [machines[g[0]] if len(g) == 1 else f"{machines[g[0]]}–{machines[g[-1]]}" for g in groups]
    return labels, groups


def utilisation_heatmap(timeline: pd.DataFrame, jobs: pd.DataFrame, machines: list[str], label: str = "",
                        selected: str | None = None, window=None) -> go.Figure:
    """Machines × time utilisation of uplinks (top) and downlinks (bottom); the selected application's machines outlined.

    A cell is the utilisation in force when its column starts (a row of
    several machines: their mean); columns shrink so that a panel keeps at
    most :data:`HEATMAP_MAX_CELLS` cells.
    """
    if timeline.empty or not machines:
        return empty_figure("No run selected.", 420)
    labels, groups = machine_rows(machines)
    edges = heatmap_edges(timeline, window, min(HEATMAP_MAX_COLUMNS, max(1, HEATMAP_MAX_CELLS // len(labels))))
    figure = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08,
                           subplot_titles=["uplinks", "downlinks"])
    hosts = parse_placement(jobs.loc[jobs["job_id"] == selected, "placement"].iloc[0]) \
        if selected is not None and (jobs["job_id"] == selected).any() else {}
    row_of = {machines[i]: labels[row] for row, group in enumerate(groups) for i in group}
    for row, direction in enumerate(("up", "down"), start=1):
        matrix = link_matrix(timeline, [f"{m}/{direction}" for m in machines], edges[:-1])
        figure.add_trace(go.Heatmap(
            x=edges, y=labels, z=np.array([matrix[group].mean(axis=0) for group in groups], dtype=np.float32),
            zmin=0, zmax=1, colorscale="Blues",
            showscale=row == 1, colorbar={"title": "used", "tickformat": ".0%", "len": 0.9},
            hovertemplate=f"%{{y}}/{direction}<br>%{{x:.3f}} s: %{{z:.0%}}<extra></extra>",
        ), row=row, col=1)
        if hosts:
            start = float(jobs.loc[jobs["job_id"] == selected, "start_time"].iloc[0])
            stop = jobs.loc[jobs["job_id"] == selected, "end_time"].iloc[0]
            stop = float(stop) if pd.notna(stop) else float(edges[-1])
            xs, ys = [], []
            for machine in hosts:
                xs += [start, stop, None]
                ys += [row_of[machine], row_of[machine], None]
            figure.add_trace(go.Scatter(
                x=xs, y=ys, mode="lines", line={"color": "#ffbf00", "width": 3}, name=selected, showlegend=False,
                customdata=[selected] * len(xs), hovertemplate=f"{selected}<extra></extra>",
            ), row=row, col=1)
        ticks = labels[::max(1, len(labels) // 16)]
        figure.update_yaxes(type="category", tickvals=ticks, ticktext=ticks, autorange="reversed",
                            title_text="machine", row=row, col=1)
    figure.update_xaxes(title_text="time (s)", row=2, col=1)
    if window:
        figure.update_xaxes(range=list(window))
    figure.update_layout(title=f"Link utilisation ({label})", height=560,
                         template="plotly_white", margin=MARGIN, uirevision="network-time")
    return figure


def running_at(jobs: pd.DataFrame, instant: float) -> pd.DataFrame:
    """Applications holding containers at ``instant``: started at or before it and not yet finished."""
    start, end = jobs["start_time"], jobs["end_time"]
    return jobs[(start <= instant) & (end.isna() | (end > instant))]


def placement_at(jobs: pd.DataFrame, machines: list[str], instant: float, label: str = "",
                 selected: str | None = None) -> go.Figure:
    """Containers per machine at ``instant``, stacked and coloured by application (machines in use only).

    Each application's bars cover only the machines holding its containers.
    """
    running = running_at(jobs, instant)
    if running.empty:
        return empty_figure(f"No application holds containers at {instant:.3f} s.", 320)
    colours = app_colours(jobs["job_id"])
    held = {app: parse_placement(text) for app, text in zip(running["job_id"], running["placement"])}
    used = [m for m in machines if any(m in counts for counts in held.values())]
    figure = go.Figure()
    for app, counts in held.items():
        opacity, _ = _emphasis(app, selected)
        mine = [m for m in used if m in counts]
        figure.add_trace(go.Bar(
            x=mine, y=[counts[m] for m in mine], name=app, opacity=opacity,
            marker={"color": colours[app], "line": {"color": HIGHLIGHT, "width": 2 if app == selected else 0}},
            customdata=[app] * len(mine), hovertemplate=f"{app}<br>%{{x}}: %{{y}} container(s)<extra></extra>",
        ))
    figure.update_layout(title=f"Containers per machine at {instant:.3f} s ({label})",
                         barmode="stack", height=340, template="plotly_white", margin=MARGIN,
                         showlegend=len(held) <= 24, bargap=0.1,
                         xaxis={"title": f"machines in use ({len(used)} of {len(machines)}), {len(running)} applications",
                                "type": "category", "categoryorder": "array", "categoryarray": used},
                         yaxis={"title": "containers"})
    return figure
