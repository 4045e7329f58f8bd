"""Two sites side by side: their workloads' characteristics and the same policies' results, differences marked.

Pure functions of workload frames (the batch engine's ``jobs`` columns:
``submit_time``, ``run_time``, ``procs``, ``requested_time``, ``user``,
``group``/``queue``/``partition``) and their SWF headers, and of run
summaries. Everything is binned here, on the server: a profile is a few
dozen numbers whatever the trace's length.

Arrivals by hour and weekday are in the log's own time zone: the header's
``UnixStartTime`` plus each submission, read in ``TimeZoneString`` (else the
``TimeZone`` offset, else UTC); a log without ``UnixStartTime`` is binned by
hours and days since its start, and the figure says so.

What counts as a difference (marked ◆):

* a distribution (arrivals, sizes, run times, estimate accuracy) differs
  when the total variation distance between the two sites' shares,
  ``½ Σ |p_i − q_i|``, is at least :data:`DIFFERS_TV`;
* a number (jobs per day, users, median run time, a policy's mean wait...)
  differs when one site's value is more than :data:`DIFFERS_RATIO` times
  the other's (or the other's is 0 and it is not).
"""

from __future__ import annotations

import math
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from . import catalogue
from .common import ONE_LINE, empty_figure

DIFFERS_TV = 0.2
DIFFERS_RATIO = 1.25
MARK = "◆"
SITE_COLOURS = ("#1f77b4", "#ff7f0e")
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
RUNTIME_EDGES = (0, 60, 600, 3600, 4 * 3600, 12 * 3600, 24 * 3600, 72 * 3600, math.inf)
RUNTIME_LABELS = ("< 1 min", "1–10 min", "10 min–1 h", "1–4 h", "4–12 h", "12–24 h", "1–3 d", "> 3 d")
ACCURACY_EDGES = tuple(np.round(np.linspace(0.0, 1.0, 11), 1)) + (math.inf,)
ACCURACY_LABELS = tuple(f"{a:.1f}–{b:.1f}" for a, b in zip(ACCURACY_EDGES[:-2], ACCURACY_EDGES[1:-1])) + ("> 1",)
GROUPINGS = ("group", "queue", "partition")
#: Run summaries compared, in the table's order.
RESULT_METRICS = ("mean_wait_s", "mean_bounded_slowdown_tau10", "utilisation", "memory_utilisation",
                  "mean_min_isolation", "finished", "killed", "cancelled")


def _recorded(values: pd.Series) -> pd.Series:
    text = values.astype("string").fillna("").str.strip()
    return values[~text.isin(["", "-1", "nan", "<NA>"])]


def grouping(jobs: pd.DataFrame) -> str | None:
    """The column that groups a log's users: the first of group, queue, partition with two values or more.

    A log whose group ids are all one value (the HPC2N and CERIT-SC samples)
    says nothing about groups; its queues may. With no column of two
    values, the first recorded one (the site engine's own rule), else None.
    """
    recorded = [c for c in GROUPINGS if c in jobs.columns and len(_recorded(jobs[c]))]
    return next((c for c in recorded if _recorded(jobs[c]).nunique() > 1), recorded[0] if recorded else None)


def _zone(header: dict) -> tuple[object | None, str]:
    """The log's time zone and its name, or ``(None, why)`` when the header has no start time."""
    if not isinstance(header.get("UnixStartTime"), (int, float)):
        return None, "no UnixStartTime in the header: hours and days since the log's start"
    name = header.get("TimeZoneString")
    if isinstance(name, str) and name.strip():
        try:
            return ZoneInfo(name.strip()), name.strip()
        except (ZoneInfoNotFoundError, ValueError):
            pass
    offset = header.get("TimeZone")
    if isinstance(offset, (int, float)):
        return f"{'+' if offset >= 0 else '-'}{int(abs(offset)) // 3600:02d}:{int(abs(offset)) % 3600 // 60:02d}", \
            f"UTC{offset / 3600:+g} h"
    return "UTC", "UTC (the header names no time zone)"


def _shares(codes: np.ndarray, size: int) -> list[float]:
    counts = np.bincount(codes[(codes >= 0) & (codes < size)], minlength=size)[:size].astype(float)
    total = counts.sum()
    return (counts / total).round(4).tolist() if total else [0.0] * size


def _size_edges(largest: int) -> list[int]:
    edges = [1, 2]
    while edges[-1] < largest:
        edges.append(edges[-1] * 2)
    return edges


def profile(jobs: pd.DataFrame, header: dict | None, label: str) -> dict:
    """A workload's characteristics, binned: arrivals by hour and weekday, sizes, run times, estimate accuracy."""
    header = header or {}
    zone, zone_text = _zone(header)
    submit = jobs["submit_time"].to_numpy(float)
    if zone is None:
        hours = ((submit - submit.min()) // 3600 % 24).astype(int) if len(submit) else np.zeros(0, int)
        days = ((submit - submit.min()) // 86400 % 7).astype(int) if len(submit) else np.zeros(0, int)
    else:
        stamps = pd.to_datetime(header["UnixStartTime"] + submit, unit="s", utc=True).tz_convert(zone)
        hours, days = stamps.hour.to_numpy(int), stamps.dayofweek.to_numpy(int)
    procs = jobs["procs"].to_numpy(float)
    run = jobs["run_time"].to_numpy(float)
    largest = int(procs.max()) if len(procs) else 1
    size_edges = _size_edges(max(largest, 1))
    size_codes = np.searchsorted(size_edges, procs, side="left")
    size_labels = ["1"] + [f"{a + 1}" if b == a + 1 else f"{a + 1}–{b}" for a, b in zip(size_edges, size_edges[1:])]
    requested = jobs["requested_time"].to_numpy(float) if "requested_time" in jobs.columns else np.full(len(jobs), np.nan)
    valid = requested > 0
    accuracy = run[valid] / requested[valid]
    accuracy_codes = np.searchsorted(ACCURACY_EDGES, accuracy, side="right") - 1
    # Bins are [a, b) but for 0.9–1.0, which holds a job that ran exactly its requested time (killed at its limit,
    # common in real logs); "> 1" is a job that ran over it.
    accuracy_codes[accuracy == 1.0] = len(ACCURACY_LABELS) - 2
    span = float(submit.max() - submit.min()) if len(submit) else 0.0
    column = grouping(jobs)
    cpu_seconds = float((procs * run).sum())
    return {
        "label": label, "zone": zone_text,
        "hours": _shares(hours, 24), "weekdays": _shares(days, 7),
        "sizes": _shares(size_codes, len(size_labels)), "size_labels": size_labels,
        "runtimes": _shares(np.searchsorted(RUNTIME_EDGES, run, side="right") - 1, len(RUNTIME_LABELS)),
        "accuracy": _shares(accuracy_codes, len(ACCURACY_LABELS)),
        "numbers": {
            "jobs": len(jobs), "days": span / 86400.0,
            "jobs per day": len(jobs) / (span / 86400.0) if span > 0 else float(len(jobs)),
            "users": int(_recorded(jobs["user"]).nunique()) if "user" in jobs.columns else 0,
            "groups": int(_recorded(jobs[column]).nunique()) if column else 1,
            "groups from": f"{column} ids" if column else "none recorded",
            "median CPUs per job": float(np.median(procs)) if len(procs) else 0.0,
            "median run time (s)": float(np.median(run)) if len(run) else 0.0,
            "CPU-hours per day": cpu_seconds / 3600.0 / (span / 86400.0) if span > 0 else cpu_seconds / 3600.0,
            "median estimate accuracy": float(np.median(accuracy)) if len(accuracy) else float("nan"),
            "jobs with a requested time": f"{valid.mean():.0%}" if len(valid) else "0%",
        },
    }


def total_variation(p, q) -> float:
    """½ Σ |p_i − q_i| over two share vectors (padded with zeros to one length)."""
    size = max(len(p), len(q))
    a, b = np.zeros(size), np.zeros(size)
    a[:len(p)], b[:len(q)] = p, q
    return float(0.5 * np.abs(a - b).sum())


def differs(a, b) -> bool:
    """Two numbers differ when one is more than :data:`DIFFERS_RATIO` times the other (a zero against a non-zero)."""
    try:
        a, b = float(a), float(b)
    except (TypeError, ValueError):
        return a != b
    if math.isnan(a) or math.isnan(b) or a == b:
        return False
    if min(abs(a), abs(b)) == 0:
        return True
    return max(abs(a), abs(b)) / min(abs(a), abs(b)) > DIFFERS_RATIO


def _ratio(a, b) -> str:
    try:
        a, b = float(a), float(b)
    except (TypeError, ValueError):
        return ""
    return f"×{b / a:.2f}" if a and not (math.isnan(a) or math.isnan(b)) else ""


def _number(value) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, float) and math.isnan(value):
        return "n/a"
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:,.2f}".rstrip("0").rstrip(".")


def profile_rows(a: dict, b: dict) -> list[dict]:
    """The characteristics table: one row per number, the two sites, B over A, and ◆ where they differ."""
    rows = []
    for (name, value_a), (_, value_b) in zip(a["numbers"].items(), b["numbers"].items()):
        rows.append({"characteristic": name, a["label"]: _number(value_a), b["label"]: _number(value_b),
                     "B vs A": _ratio(value_a, value_b), "differs": MARK if differs(value_a, value_b) else ""})
    return rows


PANELS = (("hours", "Arrivals by hour of day", None), ("weekdays", "Arrivals by weekday", WEEKDAYS),
          ("sizes", "Job size (CPUs)", "size_labels"), ("runtimes", "Run time", RUNTIME_LABELS),
          ("accuracy", "Estimate accuracy (run time / requested time)", ACCURACY_LABELS))


def profile_figure(a: dict | None, b: dict | None) -> go.Figure:
    """Five panels of shares of jobs, the two sites' bars side by side; a panel's title says ◆ when they differ."""
    if a is None or b is None:
        return empty_figure("Choose a second trace to compare the two workloads", height=ONE_LINE)
    titles = []
    for key, title, _ in PANELS:
        distance = total_variation(a[key], b[key])
        titles.append(f"{title}: TV {distance:.2f}{' ' + MARK if distance >= DIFFERS_TV else ''}")
    figure = make_subplots(rows=3, cols=2, subplot_titles=titles, vertical_spacing=0.12, horizontal_spacing=0.08)
    for index, (key, _, categories) in enumerate(PANELS):
        row, col = index // 2 + 1, index % 2 + 1
        for site, colour in zip((a, b), SITE_COLOURS):
            labels = (list(range(24)) if categories is None else
                      site["size_labels"] if categories == "size_labels" else list(categories))
            figure.add_trace(go.Bar(x=[str(x) for x in labels], y=site[key], name=site["label"],
                                    marker_color=colour, legendgroup=site["label"], showlegend=index == 0,
                                    hovertemplate=f"{site['label']}<br>%{{x}}: %{{y:.1%}}<extra></extra>"),
                             row=row, col=col)
        figure.update_yaxes(tickformat=".0%", row=row, col=col)
    figure.update_layout(barmode="group", height=820, template="plotly_white",
                         title=f"Two workloads, shares of jobs (times: {a['zone']} / {b['zone']}; "
                               f"{MARK}: total variation ≥ {DIFFERS_TV})",
                         margin={"l": 50, "r": 20, "t": 80, "b": 40}, legend={"orientation": "h", "y": -0.05})
    figure.update_annotations(font_size=12)
    return figure


def result_rows(pairs, engine: str = "site") -> list[dict]:
    """The same policies on both sites: ``pairs`` are ``(policy label, summary value A, summary value B)``.

    One row per policy and metric: the two values as the catalogue writes
    them, which site does better, and ◆ where they differ (as rounded for
    reading: 0.01% against 0.00% is no difference). Counts of jobs name no
    better site: the two sites run different workloads, so 400 finished
    jobs against 300 says how many each had, not which did better.
    """
    rows = []
    for policy, value_a, value_b in pairs:
        for metric in RESULT_METRICS:
            a, b = float(value_a(metric)), float(value_b(metric))
            shown = [catalogue.rounded(metric, value, engine) for value in (a, b)]
            apart = differs(*(float("nan") if v is None else float(v) for v in shown))
            counted = catalogue.describe(metric, engine).kind == "count"
            better = None if counted else catalogue.better(metric, a, b, engine)
            rows.append({"policy": policy, "metric": catalogue.label(metric, engine),
                         "site A": catalogue.formatted(metric, a, engine),
                         "site B": catalogue.formatted(metric, b, engine),
                         "better": "" if better is None or not apart else ("B" if better else "A"),
                         "differs": MARK if apart else ""})
    return rows
