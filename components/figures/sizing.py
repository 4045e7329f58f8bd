"""Pure figure and sentence builders of a capacity-planning search (:mod:`sched_engine.analysis.sizing`).

A search is held as a small record, the same while it runs (probes so far)
and once it ends::

    {"metric": "mean_wait_s", "bound": 600.0, "mode": "pool", "today": 8192.0,
     "answer": 13056.0 | None, "message": "...", "baseline": "BASIC · EASY · seed 1",
     "probes": [{"size": 8192.0, "metric": 36529.0, "holds": False, "non_monotone": False}, ...]}

``probes`` are in the order they were run (a search makes a few dozen at
most), so every figure here is a few dozen points whatever the trace's size.
The target is always an upper bound (``metric <= bound``) on a metric where
lower is better: more hardware lowers it, more load raises it.
"""

from __future__ import annotations

import math

import plotly.graph_objects as go

from . import catalogue
from .common import empty_figure

ENGINE = "batch"
MEETS, MISSES, ODD, ANSWER, TODAY = "#2e7d32", "#c62828", "#ff7f0e", "#1f2d3d", "#7f7f7f"
#: What the size means in each mode: the x axis title and how one size reads in a sentence.
MODES = {
    "pool": ("CPUs of one pool", lambda size: f"{size:,.0f} CPUs"),
    "scale": ("scale factor on every cluster's machine count", lambda size: f"{size:.3g}×"),
    "load": ("arrival-rate factor (1 = as logged)", lambda size: f"{size:.3g}×"),
}
#: Log x axis once the probes span more than this ratio (bracketing doubles and halves the size).
LOG_SPAN = 4.0
#: Log y axis once the metric (and the target) span more than this ratio.
LOG_METRIC_SPAN = 20.0


def target_text(metric: str, bound: float) -> str:
    """``mean wait ≤ 600 s``: the target as a sentence says it."""
    return f"{catalogue.label(metric, ENGINE).lower()} ≤ {catalogue.formatted(metric, bound, ENGINE)}"


def size_text(mode: str, size: float) -> str:
    return MODES[mode][1](size)


def sentence(record: dict | None) -> str:
    """One sentence for the search's answer, e.g. "A mean wait ≤ 600 s needs 13,056 CPUs (today 8,192)."."""
    if not record:
        return ""
    target, mode, answer, today = target_text(record["metric"], record["bound"]), record["mode"], \
        record.get("answer"), record.get("today")
    if answer is None:
        return f"No size tried meets {target}: {record.get('message', '')}."
    if mode == "load":
        text = (f"Today's machine keeps a {target} up to {size_text(mode, answer)} the logged arrival rate"
                f" (today {size_text(mode, today)})")
    else:
        today_text = f"{today:,.0f}" if mode == "pool" else size_text(mode, today)
        text = f"A {target} needs {size_text(mode, answer)} (today {today_text})"
    message = record.get("message", "")
    if message.startswith("the target holds already"):
        text += "; it holds already at the smallest size tried"
    elif message.startswith("the target holds up to"):
        text += ", the largest factor tried"
    odd = [probe for probe in record.get("probes", []) if probe.get("non_monotone")]
    if odd:
        text += (f"; not monotone near the answer: {', '.join(size_text(mode, p['size']) for p in odd)} "
                 "contradict the trend (marked ◇)")
    return text + "."


#: The height of the chart before any probe: a line of text.
NOTHING_YET_HEIGHT = 60


def probes_figure(record: dict | None, running: bool = False) -> go.Figure:
    """The probes as they finish: size against the metric, the target line, today's size and the answer marked.

    Probes meeting the target are green, the others red; those that
    contradict a monotone metric (see the engine's neighbourhood check) get
    an open diamond around them. ``running`` titles the figure as a search
    still going.
    """
    probes = (record or {}).get("probes") or []
    if not probes:
        # One line, not a 360-px frame of nothing: the chart takes its room once a probe is in.
        return empty_figure("the search's probes appear here as they finish" if running
                            else "choose a target and press Size", height=NOTHING_YET_HEIGHT)
    metric, mode = record["metric"], record["mode"]
    sizes = [p["size"] for p in probes]
    values = [p["metric"] for p in probes]
    figure = go.Figure()
    figure.add_trace(go.Scatter(
        x=sizes, y=values, mode="markers+text", name="probes", text=[str(i + 1) for i in range(len(probes))],
        textposition="top center", textfont={"size": 9, "color": "#5b6b7b"},
        marker={"size": 10, "color": [MEETS if p["holds"] else MISSES for p in probes]},
        customdata=[[size_text(mode, p["size"]), catalogue.formatted(metric, p["metric"], ENGINE),
                     "meets" if p["holds"] else "misses"] for p in probes],
        hovertemplate="probe %{text}: %{customdata[0]}<br>%{customdata[1]}: %{customdata[2]} the target"
                      "<extra></extra>"))
    odd = [p for p in probes if p.get("non_monotone")]
    if odd:
        figure.add_trace(go.Scatter(
            x=[p["size"] for p in odd], y=[p["metric"] for p in odd], mode="markers", name="not monotone",
            marker={"symbol": "diamond-open", "size": 20, "color": ODD, "line": {"width": 2}}, hoverinfo="skip"))
    answer = record.get("answer")
    if answer is not None and not running:
        at = next((p["metric"] for p in probes if p["size"] == answer), None)
        figure.add_trace(go.Scatter(
            x=[answer], y=[at], mode="markers", name=f"answer: {size_text(mode, answer)}",
            marker={"symbol": "star", "size": 18, "color": ANSWER}, hoverinfo="skip"))
        figure.add_vline(x=answer, line={"color": ANSWER, "width": 1})
    today = record.get("today")
    positive = [s for s in sizes + [today or 0] if s and s > 0]
    log_x = bool(positive) and max(positive) / min(positive) > LOG_SPAN
    # A log y axis once the metric spans more than LOG_METRIC_SPAN (a halved pool can wait 40× longer),
    # so the probes near the target stay apart; only for positive values.
    measured = [v for v in values + [record["bound"]] if v is not None]
    log_y = bool(measured) and min(measured) > 0 and max(measured) / min(measured) > LOG_METRIC_SPAN
    # Lines are shapes (data values on any axis type); their labels are annotations, which plotly places
    # on a log axis by the value's log10.
    figure.add_hline(y=record["bound"], line={"color": MISSES, "dash": "dash", "width": 1})
    figure.add_annotation(x=0, xref="paper", y=_on_axis(record["bound"], log_y), yref="y", showarrow=False,
                          xanchor="left", yanchor="bottom", font={"size": 11, "color": MISSES},
                          text=f"target: {target_text(metric, record['bound'])}")
    if today is not None:
        figure.add_vline(x=today, line={"color": TODAY, "dash": "dot", "width": 1})
        figure.add_annotation(x=_on_axis(today, log_x), xref="x", y=0, yref="paper", showarrow=False,
                              xanchor="left", yanchor="bottom", text="today", font={"size": 11, "color": TODAY})
    state = f"searching… {len(probes)} probe(s) so far" if running else f"{len(probes)} probes"
    figure.update_layout(
        title=f"{catalogue.label(metric, ENGINE)} against {MODES[mode][0]} ({state})",
        xaxis={"title": MODES[mode][0], "type": "log" if log_x else "linear"},
        yaxis={"title": catalogue.column(metric, ENGINE),
               **({"type": "log"} if log_y else {"rangemode": "tozero"})},
        template="plotly_white", height=360, margin={"l": 60, "r": 20, "t": 50, "b": 50},
        legend={"orientation": "h", "y": -0.25})
    return figure



def _on_axis(value: float, log: bool) -> float:
    """Where an annotation sits for ``value`` on an axis: the value, or its log10 on a log axis."""
    return math.log10(value) if log and value > 0 else value
