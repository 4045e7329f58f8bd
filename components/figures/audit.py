"""Pure builders of a log's audit (sched_engine/analysis/audit.py): its table, warnings first, and the log's
recorded CPUs in use over time against the hardware.

Frames in, plain table rows or a ``go.Figure`` out. The CPUs in use are a
step function with one point per change (RICC: 800,000), reduced by
:func:`~.downsample.step_points` to at most ``4 * TIME_BINS`` points, so the
figure stays near 100 KB whatever the log.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .common import empty_figure
from .downsample import step_points

DAY = 86400.0
#: The table's columns as shown (the ``value`` column as text, formatted by unit).
COLUMNS = ("check", "value", "unit", "verdict", "detail")
#: Warning rows stand out: the DataTable's conditional style.
WARNING_STYLE = [{"if": {"filter_query": '{verdict} = "warning"'}, "backgroundColor": "#fff1e0", "fontWeight": "600"}]
USED, HARDWARE, CAPACITY = "#1f77b4", "#d62728", "#7f7f7f"


#: The audit's checks as the panel names them (``audit.csv`` keeps the keys); any other check (an idle period,
#: a queue) is named from its key.
CHECK_NAMES = {
    "hardware_cpus": "Hardware CPUs", "jobs": "Jobs", "dropped_rows": "Rows left out", "recorded_waits": "Recorded waits",
    "impossible_rows": "Impossible rows", "jobs_larger_than_hardware": "Jobs larger than the hardware",
    "recorded_peak_cpus": "Peak CPUs in use (log)", "recorded_p99_cpus": "99th percentile of CPUs in use (log)",
    "time_over_hardware_share": "Time over the hardware", "recorded_utilisation": "Utilisation (log)",
    "recorded_capacity_cpus": "Capacity the log used", "recorded_mean_wait_s": "Mean wait (log)",
    "idle_while_waiting_s": "Idle CPUs while jobs waited", "user_max_running_jobs": "Most running jobs of one user",
    "user_max_cpus": "Most CPUs of one user", "longest_submission_gap_s": "Longest gap between submissions",
    "header_queues": "Queues in the header", "estimate_accuracy_median": "Estimate accuracy (median)",
    "jobs_killed_at_limit": "Jobs killed at their limit", "zero_length_jobs": "Zero-length jobs",
}
UNIT_SUFFIXES = ("_s", "_cpus", "_share")


def check_name(check: str) -> str:
    """A check's name on the panel: :data:`CHECK_NAMES`, else its key in words (``idle_period_2``: Idle period 2)."""
    if check in CHECK_NAMES:
        return CHECK_NAMES[check]
    key = next((check[: -len(end)] for end in UNIT_SUFFIXES if check.endswith(end)), check)
    words = key.replace("_", " ").strip()
    return words[:1].upper() + words[1:]


def value_text(value: float, unit: str) -> str:
    """A check's value as read: ``—`` when unknown, shares as percentages, whole numbers with separators."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if unit == "share":
        return f"{value:.2%}"
    if float(value).is_integer():
        return f"{value:,.0f}"
    return f"{value:,.4g}" if abs(value) < 1000 else f"{value:,.0f}"


def table_rows(table: pd.DataFrame) -> list[dict]:
    """The audit's rows for a DataTable, warnings first, otherwise in the audit's order."""
    ordered = pd.concat([table[table["verdict"] == "warning"], table[table["verdict"] != "warning"]])
    return [{"check": check_name(check), "value": value_text(value, unit), "unit": unit, "verdict": verdict, "detail": detail}
            for check, value, unit, verdict, detail in ordered.itertuples(index=False)]


def summary_sentence(table: pd.DataFrame, label: str) -> str:
    """One line over the table: how many checks warn, and the first of them."""
    warnings = table[table["verdict"] == "warning"]
    if warnings.empty:
        return f"{label}: {len(table)} checks, none warns: the recorded schedule fits the hardware."
    first = warnings.iloc[0]
    return (f"{label}: {len(warnings)} of {len(table)} checks warn, first {check_name(first['check'])}: "
            f"{first['detail'][0].upper()}{first['detail'][1:]}.")


def usage_figure(usage: pd.DataFrame, hardware_cpus: float, capacity_cpus: float, height: int = 320) -> go.Figure:
    """The log's CPUs in use over time (days since its time 0) against the hardware, and the capacity it used."""
    if usage.empty:
        return empty_figure("the log records no wait times: its schedule cannot be drawn", height)
    times, values = step_points(usage["time"].to_numpy(float), usage["cpus"].to_numpy(float))
    figure = go.Figure(go.Scattergl(x=times / DAY, y=values, mode="lines", line={"shape": "hv", "color": USED},
                                    name="CPUs in use (the log)"))
    span = [float(times[0] / DAY), float(times[-1] / DAY)]
    if np.isfinite(hardware_cpus):
        figure.add_trace(go.Scatter(x=span, y=[hardware_cpus] * 2, mode="lines", name=f"hardware ({hardware_cpus:,.0f})",
                                    line={"color": HARDWARE, "width": 2}))
    if np.isfinite(capacity_cpus) and capacity_cpus != hardware_cpus:
        figure.add_trace(go.Scatter(x=span, y=[capacity_cpus] * 2, mode="lines",
                                    name=f"capacity the log used ({capacity_cpus:,.0f})",
                                    line={"color": CAPACITY, "dash": "dash"}))
    figure.update_layout(height=height, margin={"l": 60, "r": 20, "t": 40, "b": 40}, template="plotly_white",
                         title="CPUs in use as the log recorded them", legend={"orientation": "h", "y": -0.2},
                         xaxis_title="days", yaxis_title="CPUs")
    return figure
