"""Pure figure builders for trusting a run: the log against the simulation, and why jobs waited.

Frames in, ``go.Figure`` out, every series bounded whatever the run's size
(steps M4-reduced through :mod:`.downsample`, shares per time bin, breakdowns
cut to their largest rows). Time axes are in hours since the first
submission; a window is ``(start, end)`` in seconds or ``None``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from sched_engine.batch.pending import job_positions

from .common import empty_figure
from .downsample import step_points

HOUR = 3600.0
#: Colours of the pending reasons, in the vocabulary's order (sched_engine/batch/pending.py).
REASON_COLOURS = {"resources": "#1f77b4", "reservation": "#ff7f0e", "priority": "#9467bd",
                  "failure": "#d62728", "requirements": "#2ca02c"}
LOG, SIMULATED = "#7f7f7f", "#1f77b4"
#: Rows of a breakdown chart: the values with the largest total error.
BREAKDOWN_ROWS = 12
#: Time bins of the "why jobs waited" chart.
SHARE_BINS = 120
#: Groups of the per-group "why jobs waited" chart: those that waited longest in all; the rest are one row.
TOP_GROUPS = 12


def total_series(timeline: pd.DataFrame, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """One step series summing ``metric`` over its entities (e.g. used CPUs of every cluster)."""
    rows = timeline[timeline["metric"] == metric]
    if rows.empty:
        return np.zeros(0), np.zeros(0)
    times, deltas = [], []
    for _, series in rows.groupby("entity", sort=False):
        values = series["value"].to_numpy(float)
        times.append(series["time"].to_numpy(float))
        deltas.append(np.diff(values, prepend=0.0))
    time, delta = np.concatenate(times), np.concatenate(deltas)
    order = np.argsort(time, kind="stable")
    time, total = time[order], np.cumsum(delta[order])
    last = np.r_[time[1:] != time[:-1], True]
    return time[last], total[last]


def log_vs_simulation(recorded: pd.DataFrame, simulated: pd.DataFrame, window=None) -> go.Figure:
    """Used CPUs and queue length over time: the log's own (``recorded_timeline``) and the run's, same axes."""
    if recorded.empty:
        return empty_figure("the log records no wait times: nothing to compare", height=420)
    figure = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08,
                           subplot_titles=("Used CPUs", "Queue length (waiting jobs)"))
    for row, metric in ((1, "used_cpus"), (2, "queue_length")):
        for name, frame, colour in (("your log", recorded, LOG), ("simulation", simulated, SIMULATED)):
            times, values = total_series(frame, metric)
            times, values = step_points(times, values, window)
            figure.add_trace(go.Scatter(x=times / HOUR, y=values, mode="lines", line={"shape": "hv", "color": colour},
                                        name=name, legendgroup=name, showlegend=row == 1), row=row, col=1)
    figure.update_xaxes(title_text="hours since the first submission", row=2, col=1)
    if window:
        figure.update_xaxes(range=[window[0] / HOUR, window[1] / HOUR])
    figure.update_layout(height=420, template="plotly_white", margin={"l": 50, "r": 20, "t": 40, "b": 40},
                         legend={"orientation": "h", "y": 1.12})
    return figure


def error_breakdown(by: dict[str, pd.DataFrame]) -> go.Figure:
    """Mean signed wait error (simulated − recorded) per queue, group and size class: where the gap comes from."""
    titles = {"queue": "by queue", "group": "by group", "size_class": "by job size"}
    if all(frame.empty for frame in by.values()):
        return empty_figure("no job with a recorded wait to compare", height=320)
    figure = make_subplots(rows=1, cols=len(titles), subplot_titles=[titles[k] for k in titles], horizontal_spacing=0.1)
    for column, key in enumerate(titles, start=1):
        frame = by.get(key, pd.DataFrame()).head(BREAKDOWN_ROWS)
        if frame.empty:
            continue
        labels = [str(v) if str(v) else "(none)" for v in frame[key]]
        figure.add_trace(go.Bar(
            x=frame["mean_error_s"], y=labels, orientation="h", showlegend=False,
            marker_color=np.where(frame["mean_error_s"] >= 0, SIMULATED, "#ff7f0e"),
            customdata=np.stack([frame["jobs"], frame["recorded_mean_wait_s"], frame["simulated_mean_wait_s"]], axis=1),
            hovertemplate="%{y}: %{customdata[0]} jobs<br>log %{customdata[1]:.0f} s, simulated "
                          "%{customdata[2]:.0f} s<br>mean error %{x:.0f} s<extra></extra>"), row=1, col=column)
        figure.update_yaxes(autorange="reversed", type="category", row=1, col=column)
        figure.update_xaxes(title_text="mean error (s)", row=1, col=column)
    figure.update_layout(height=320, template="plotly_white", margin={"l": 60, "r": 20, "t": 40, "b": 40})
    return figure


def waiting_shares(pending: pd.DataFrame, window=None, bins: int = SHARE_BINS) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Bin edges (s) and, per reason, its share of all the waiting time inside each bin.

    The number of jobs waiting for a reason is a step function (+1 at
    ``from_time``, −1 at ``to_time``); its integral over a bin is read off
    the cumulative area at the bin's edges, so the cost follows the
    intervals, not intervals × bins.
    """
    if pending.empty:
        return np.zeros(0), {}
    low = float(window[0]) if window else float(pending["from_time"].min())
    high = float(window[1]) if window else float(pending["to_time"].max())
    if high <= low:
        high = low + 1.0
    edges = np.linspace(low, high, bins + 1)
    areas = {}
    for reason, rows in pending.groupby("reason", sort=False, observed=True):
        times = np.concatenate([rows["from_time"].to_numpy(float), rows["to_time"].to_numpy(float)])
        steps = np.concatenate([np.ones(len(rows)), -np.ones(len(rows))])
        order = np.argsort(times, kind="stable")
        times, count = times[order], np.cumsum(steps[order])
        area = np.r_[0.0, np.cumsum(count[:-1] * np.diff(times))]   # waiting-job seconds up to each change
        at_edges = np.interp(edges, times, area, left=0.0, right=area[-1])
        areas[str(reason)] = np.diff(at_edges)
    total = sum(areas.values())
    with np.errstate(invalid="ignore", divide="ignore"):
        shares = {reason: np.where(total > 0, area / total, np.nan) for reason, area in areas.items()}
    return edges, shares


def why_waited(pending: pd.DataFrame, window=None) -> go.Figure:
    """Share of the total waiting time per reason over time (stacked to 100% where anyone waited)."""
    edges, shares = waiting_shares(pending, window)
    if not shares:
        return empty_figure("no job waited in this run", height=320)
    middle = (edges[:-1] + edges[1:]) / 2 / HOUR
    figure = go.Figure()
    for reason in REASON_COLOURS:
        if reason in shares:
            figure.add_trace(go.Scatter(x=middle, y=shares[reason] * 100, name=reason, stackgroup="share", mode="lines",
                                        line={"width": 0.5, "color": REASON_COLOURS[reason]},
                                        hovertemplate=f"{reason}: %{{y:.0f}}% of the waiting time<extra></extra>"))
    figure.update_layout(height=320, template="plotly_white", margin={"l": 50, "r": 20, "t": 40, "b": 40},
                         title="Share of the waiting time, over time",
                         xaxis_title="hours since the first submission", yaxis={"title": "%", "range": [0, 100]},
                         legend={"orientation": "h", "y": -0.25})
    return figure


def job_reasons(pending: pd.DataFrame, job_id: str) -> go.Figure:
    """One job's pending intervals as bars along time, coloured by reason, naming the blocking job."""
    rows = pending[pending["job_id"] == job_id]
    if rows.empty:
        return empty_figure(f"job {job_id} did not wait" if job_id else "choose a job", height=200)
    figure = go.Figure()
    for reason, part in rows.groupby("reason", sort=False, observed=True):
        # "blocking job <id>" only where one is known (waiting for resources in general names none)
        # (categorical, text or missing alike: a missing one is no job, never the word "nan")
        blocking = part["blocking_job"].astype("string").fillna("")
        blocked_by = np.where(blocking != "", "<br>blocking job " + blocking, "")
        figure.add_trace(go.Bar(
            base=part["from_time"] / HOUR, x=(part["to_time"] - part["from_time"]) / HOUR, y=[str(reason)] * len(part),
            orientation="h", name=str(reason), marker_color=REASON_COLOURS.get(str(reason), "#7f7f7f"),
            customdata=np.stack([part["from_time"], part["to_time"], blocked_by], axis=1),
            hovertemplate="%{y} %{customdata[0]:.0f} s → %{customdata[1]:.0f} s%{customdata[2]}<extra></extra>"))
    figure.update_layout(height=200, template="plotly_white", margin={"l": 90, "r": 20, "t": 40, "b": 40},
                         title=f"Job {job_id}: why it waited", xaxis_title="hours since the first submission",
                         showlegend=False, barmode="overlay")
    return figure


def waiting_by_group(pending: pd.DataFrame, jobs: pd.DataFrame, window=None, top: int = TOP_GROUPS) -> pd.DataFrame:
    """Waiting time per group and reason: ``group, reason, seconds, share`` (share of the group's waiting time).

    A job's group comes from the run's ``jobs`` frame (the log's group
    field; ``(none)`` when it records none). Intervals are clipped to
    ``window``. The ``top`` groups with the most waiting time are kept, in
    that order; the others are summed into one row, ``other (N groups)``,
    last. The result has at most ``(top + 1) × reasons`` rows whatever the
    run's size.
    """
    columns = ["group", "reason", "seconds", "share"]
    if pending.empty or "group" not in jobs.columns:
        return pd.DataFrame(columns=columns)
    start, end = pending["from_time"].to_numpy(float), pending["to_time"].to_numpy(float)
    if window:
        start, end = np.maximum(start, float(window[0])), np.minimum(end, float(window[1]))
    # Each interval's group through its job's position in ``jobs``: codes throughout, no string per interval.
    where = job_positions(jobs["job_id"], pending["job_id"])
    by_job = pd.Categorical(np.append(jobs["group"].astype(str).to_numpy(object), ""))
    by_job = by_job.rename_categories(lambda name: name or "(none)")
    seconds = end - start
    waited = seconds > 0
    if not waited.any():
        return pd.DataFrame(columns=columns)
    frame = pd.DataFrame({"group": pd.Categorical.from_codes(by_job.codes[where][waited], dtype=by_job.dtype),
                          "reason": pending["reason"].astype("category").array[waited],
                          "seconds": seconds[waited]})
    totals = frame.groupby("group", observed=True)["seconds"].sum().sort_values(ascending=False, kind="stable")
    kept = [str(name) for name in totals.index[:top]]
    rest = len(totals) - len(kept)
    if rest:
        other = f"other ({rest} groups)"
        position = {name: index for index, name in enumerate(kept)}
        recode = np.array([position.get(name, len(kept)) for name in by_job.categories])
        frame["group"] = pd.Categorical.from_codes(recode[frame["group"].cat.codes.to_numpy()], categories=[*kept, other])
        kept.append(other)
    table = frame.groupby(["group", "reason"], sort=False, observed=True)["seconds"].sum().reset_index()
    table = table.astype({"group": str, "reason": str})
    table["share"] = table["seconds"] / table.groupby("group")["seconds"].transform("sum")
    order = {name: index for index, name in enumerate(kept)}
    table = table.sort_values("group", key=lambda g: g.map(order), kind="stable").reset_index(drop=True)
    return table[columns]


def why_waited_by_group(pending: pd.DataFrame, jobs: pd.DataFrame, window=None) -> go.Figure:
    """Per group, the share of its waiting time per reason (stacked to 100%), groups that waited most on top."""
    table = waiting_by_group(pending, jobs, window)
    if table.empty:
        return empty_figure("no job waited in this run", height=320)
    totals = table.groupby("group", sort=False)["seconds"].sum()
    labels = {group: f"{group} · {seconds / HOUR:,.{0 if seconds >= 10 * HOUR else 1}f} h"
              for group, seconds in totals.items()}
    figure = go.Figure()
    for reason in REASON_COLOURS:
        rows = table[table["reason"] == reason]
        if rows.empty:
            continue
        figure.add_trace(go.Bar(
            x=rows["share"] * 100, y=rows["group"].map(labels), orientation="h", name=reason,
            marker_color=REASON_COLOURS[reason], customdata=rows["seconds"] / HOUR,
            hovertemplate=f"%{{y}}: {reason} %{{x:.0f}}% (%{{customdata:,.1f}} h)<extra></extra>"))
    figure.update_layout(height=max(320, 24 * len(totals) + 120), template="plotly_white", barmode="stack",
                         margin={"l": 130, "r": 20, "t": 40, "b": 40},
                         title="Share of each group's waiting time",
                         xaxis={"title": "% of the group's waiting time", "range": [0, 100]},
                         yaxis={"autorange": "reversed", "type": "category",
                                "categoryarray": [labels[group] for group in totals.index]},
                         legend={"orientation": "h", "y": -0.25})
    return figure


#: The baseline steps' table (:mod:`sched_engine.analysis.baseline_steps`) on a page: column id -> header.
STEP_TABLE = {"label": "Step", "mean_wait": "Mean wait", "ratio": "× recorded", "rho": "Spearman ρ",
              "change": "Change", "setting": "What the step sets"}
#: The band of the baseline goal around the recorded mean wait (issue 36: within ±25%).
GOAL_BAND = 0.25
STEPS_HEIGHT = 320


def _number(value) -> float | None:
    """A JSON-safe number (None for NaN, infinity or nothing)."""
    return None if value is None or not np.isfinite(float(value)) else float(value)


def steps_record(table: pd.DataFrame) -> list[dict]:
    """The steps' numbers a page keeps: one small dict per step (words, a flag, numbers with NaN as None)."""
    words, numbers = ("step", "label", "setting"), ("simulated_mean_wait_s", "recorded_mean_wait_s", "gap_share",
                                                   "change_s", "wait_rank_correlation", "compared_jobs", "cpus")
    return [{**{key: str(row[key]) for key in words}, "ran": bool(row["ran"]),
             **{key: _number(row[key]) for key in numbers}} for row in table.to_dict("records")]


def _seconds(value) -> str:
    return "–" if value is None else f"{value:,.0f} s"


def steps_rows(steps: list[dict]) -> list[dict]:
    """The steps as DataTable rows (:data:`STEP_TABLE`): each step a run and its numbers, in words and units."""
    rows = []
    for step in steps:
        simulated, recorded = step["simulated_mean_wait_s"], step["recorded_mean_wait_s"]
        ratio = simulated / recorded if simulated is not None and recorded else None
        rho, change = step["wait_rank_correlation"], step["change_s"]
        rows.append({"label": step["label"][0].upper() + step["label"][1:], "mean_wait": _seconds(simulated),
                     "ratio": "–" if ratio is None else f"{ratio:.2f}", "rho": "–" if rho is None else f"{rho:.2f}",
                     "change": "–" if change is None else f"{change:+,.0f} s",
                     "setting": step["setting"] if step["ran"] else f"(as the step before) {step['setting']}"})
    return rows


def steps_figure(steps: list[dict], empty_height: int = STEPS_HEIGHT) -> go.Figure:
    """The simulated mean wait after each step against the log's (a line, the ±25% goal band around it); each
    bar says its ratio to the log's and its rank correlation (no steps: one line, ``empty_height`` px)."""
    if not steps:
        return empty_figure("press Explain the gap to run the steps", empty_height)
    recorded = steps[0]["recorded_mean_wait_s"]
    labels = [step["step"].replace("_", " ") for step in steps]
    waits = [step["simulated_mean_wait_s"] or 0.0 for step in steps]
    texts = []
    for step, wait in zip(steps, waits):
        ratio = f"{wait / recorded:.2f}×" if recorded else ""
        rho = step["wait_rank_correlation"]
        texts.append(f"{ratio}, ρ {rho:.2f}" if rho is not None else ratio)
    figure = go.Figure(go.Bar(x=labels, y=waits, text=texts, textposition="outside", cliponaxis=False,
                              marker_color=[SIMULATED if step["ran"] else "#aec7e8" for step in steps],
                              name="simulated mean wait", hovertext=[step["setting"] for step in steps]))
    if recorded:
        figure.add_hrect(y0=recorded * (1 - GOAL_BAND), y1=recorded * (1 + GOAL_BAND), fillcolor=LOG, opacity=0.15,
                         line_width=0)
        figure.add_hline(y=recorded, line={"color": LOG, "dash": "dash"},
                         annotation_text=f"your log: {recorded:,.0f} s (±{GOAL_BAND:.0%} shaded)",
                         annotation_position="top left")
    figure.update_layout(height=STEPS_HEIGHT, template="plotly_white", showlegend=False,
                         margin={"l": 60, "r": 20, "t": 30, "b": 40}, yaxis_title="mean wait (s)")
    return figure
