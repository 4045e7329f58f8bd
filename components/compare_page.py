"""The "Compare" page: finished runs side by side, summaries with differences, overlaid timelines.

Runs come from the result cache's index (every run any page finished, kept
across restarts). The first chosen run is the reference: the table shows
each other run's relative difference from it and highlights differences
above :data:`HIGHLIGHT_PERCENT`. The overlay draws one chosen timeline metric
of every run on one time axis (one entity, or the sum over entities).
"""

from __future__ import annotations

from datetime import datetime, timezone

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from dash import Input, Output, State, ctx, dash_table, dcc, html, no_update

from .chart_config import GRAPH_CONFIG
from .figures.batch import PALETTE
from .figures.downsample import step_points
from .services.csv_export import send_csv
from .services.report import html_report, summary_table

RUNS = "compare-runs-dropdown"
REFRESH = "compare-refresh-button"
METRIC = "compare-metric-dropdown"
ENTITY = "compare-entity-dropdown"
TABLE = "compare-summary-table"
OVERLAY = "compare-overlay-graph"
MESSAGE = "compare-message"
EXPORT_CSV = "compare-export-csv-button"
EXPORT_REPORT = "compare-export-report-button"
DOWNLOAD = "compare-download"

SUM = "__sum__"
HIGHLIGHT_PERCENT = 1.0


def run_label(entry: dict) -> str:
    """A short unique label: engine · policy · name (or hash) · seed."""
    name = entry.get("name") or entry["hash"][:8]
    return f"{entry['engine']} · {entry['policy']} · {name} · seed {entry['seed']} [{entry['hash'][:6]}]"


def run_options(entries: list[dict]) -> list[dict]:
    return [{"label": f"{run_label(e)} — {e['finished'].replace('T', ' ')[:16]}", "value": e["hash"]}
            for e in entries]


def comparison_table(runs: list[tuple[str, object]]) -> tuple[pd.DataFrame, list[str]]:
    """Summary metrics side by side plus ``Δ% <label>`` columns against the first run.

    Returns the table and the names of its difference columns. The relative
    difference is ``100 · (value − reference) / |reference|``; it is empty
    where the reference is 0 or a run lacks the metric.
    """
    table = summary_table(runs)
    if not runs:
        return table, []
    reference = table[runs[0][0]].astype(float)
    columns, deltas = ["metric", "unit", runs[0][0]], []
    for label, _ in runs[1:]:
        delta = f"Δ% {label}"
        values = table[label].astype(float)
        with np.errstate(divide="ignore", invalid="ignore"):
            table[delta] = np.where(reference != 0, 100 * (values - reference) / reference.abs(), np.nan).round(2)
        columns += [label, delta]
        deltas.append(delta)
    return table[columns], deltas


def delta_styles(deltas: list[str]) -> list[dict]:
    """DataTable styles that highlight relative differences above :data:`HIGHLIGHT_PERCENT`."""
    return [{"if": {"filter_query": f"{{{d}}} > {HIGHLIGHT_PERCENT} || {{{d}}} < -{HIGHLIGHT_PERCENT}",
                    "column_id": d}, "backgroundColor": "#fde8d7", "fontWeight": 600} for d in deltas]


def metric_options(runs: list[tuple[str, object]]) -> list[str]:
    """Timeline metrics present in every run (in the first run's order)."""
    if not runs:
        return []
    common = None
    for _, result in runs:
        metrics = list(dict.fromkeys(result.timeline["metric"]))
        common = metrics if common is None else [m for m in common if m in set(metrics)]
    return common or []


def entity_options(runs: list[tuple[str, object]], metric: str | None) -> list[dict]:
    entities = []
    for _, result in runs:
        timeline = result.timeline
        entities += list(timeline.loc[timeline["metric"] == metric, "entity"])
    unique = list(dict.fromkeys(entities))
    options = [{"label": str(e), "value": str(e)} for e in unique]
    return ([{"label": "sum over all", "value": SUM}] if len(unique) > 1 else []) + options


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
    figure = go.Figure()
    if runs and metric and entity:
        for index, (label, result) in enumerate(runs):
            series = step_series(result.timeline, metric, entity)
            times, values = step_points(series["time"], series["value"])   # bounded, extremes kept
            figure.add_trace(go.Scatter(
                x=times, y=values, mode="lines", line={"shape": "hv", "width": 1.5},
                name=label, marker_color=PALETTE[index % len(PALETTE)],
                hovertemplate=f"{label}<br>%{{x:.1f}} s: %{{y:.4g}}<extra></extra>",
            ))
    title = f"{metric} · {'sum over all' if entity == SUM else entity}" if metric and entity else "Choose runs"
    figure.update_layout(title=title, height=420, template="plotly_white", xaxis={"title": "time (s)"},
                         margin={"l": 60, "r": 20, "t": 40, "b": 40}, legend={"orientation": "h", "y": -0.2})
    return figure


def short_label(position: int, entry: dict) -> str:
    """``#1 easy``: the run's place in the choice and its policy (full labels are listed above the table)."""
    return f"#{position} {entry['policy']}"


def _loaded(results, hashes) -> tuple[list[tuple[str, object]], list[str]]:
    """``(short label, result)`` of the chosen runs still cached, and their full labels."""
    entries = {e["hash"]: e for e in results.listing()}
    runs, full = [], []
    for value in hashes or []:
        result = results.get(value)
        if result is not None and value in entries:
            runs.append((short_label(len(runs) + 1, entries[value]), result))
            full.append(f"{runs[-1][0]}: {run_label(entries[value])}")
    return runs, full


def layout() -> html.Div:
    return html.Div(
        [
            dcc.Download(id=DOWNLOAD),
            html.Div([html.H2("Compare"),
                      html.P("Pick finished runs from any page: the first is the reference.")],
                     className="page-head"),
            html.Section(
                [
                    html.Div([dcc.Dropdown(id=RUNS, multi=True, placeholder="finished runs, newest first",
                                           persistence=True, className="wide"),
                              html.Button("Refresh list", id=REFRESH)], className="button-row"),
                    html.Div(id=MESSAGE, className="message"),
                    dash_table.DataTable(id=TABLE, data=[], columns=[], sort_action="native",
                                         style_cell={"fontFamily": "inherit"}, style_table={"overflowX": "auto"}),
                    html.Div([html.Button("comparison.csv", id=EXPORT_CSV),
                              html.Button("report.html", id=EXPORT_REPORT)], className="button-row export"),
                ],
                className="panel",
            ),
            html.Section(
                [
                    html.Div([dcc.Dropdown(id=METRIC, placeholder="timeline metric", className="narrow"),
                              dcc.Dropdown(id=ENTITY, placeholder="entity", className="narrow")],
                             className="button-row"),
                    dcc.Graph(id=OVERLAY, config=GRAPH_CONFIG),
                ],
                className="panel",
            ),
        ],
        className="compare-page",
    )


def register_callbacks(app, results) -> None:
    """Wire the page; ``results`` is the app's ResultCache."""

    @app.callback(Output(RUNS, "options"), Input(REFRESH, "n_clicks"), Input(RUNS, "id"))
    def _options(_, __):
        return run_options(results.listing())

    @app.callback(
        Output(TABLE, "data"), Output(TABLE, "columns"), Output(TABLE, "style_data_conditional"),
        Output(METRIC, "options"), Output(METRIC, "value"), Output(MESSAGE, "children"),
        Input(RUNS, "value"), State(METRIC, "value"),
    )
    def _table(hashes, metric):
        runs, full = _loaded(results, hashes)
        missing = len(hashes or []) - len(runs)
        note = [html.Div(label) for label in full]
        if missing:
            note.append(html.Div(f"{missing} chosen run(s) are no longer in the cache.", className="error"))
        table, deltas = comparison_table(runs)
        table = table.round(6)
        styles = delta_styles(deltas)
        metrics = metric_options(runs)
        return (table.to_dict("records"), [{"name": c, "id": c} for c in table.columns], styles, metrics,
                metric if metric in metrics else (metrics[0] if metrics else None), note)

    @app.callback(Output(ENTITY, "options"), Output(ENTITY, "value"), Input(METRIC, "value"),
                  State(RUNS, "value"), State(ENTITY, "value"))
    def _entities(metric, hashes, entity):
        options = entity_options(_loaded(results, hashes)[0], metric)
        values = [o["value"] for o in options]
        return options, entity if entity in values else (values[0] if values else None)

    @app.callback(Output(OVERLAY, "figure"), Input(ENTITY, "value"), State(METRIC, "value"), State(RUNS, "value"))
    def _overlay(entity, metric, hashes):
        return overlay_figure(_loaded(results, hashes)[0], metric, entity)

    @app.callback(Output(DOWNLOAD, "data"), Input(EXPORT_CSV, "n_clicks"), Input(EXPORT_REPORT, "n_clicks"),
                  State(RUNS, "value"), State(METRIC, "value"), State(ENTITY, "value"), prevent_initial_call=True)
    def _export(csv_clicks, report_clicks, hashes, metric, entity):
        runs = _loaded(results, hashes)[0]
        if not runs:
            return no_update
        if ctx.triggered_id == EXPORT_CSV:
            table, _ = comparison_table(runs)
            return send_csv(table, "comparison.csv")
        generated = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        return dcc.send_string(html_report("Comparison", runs, [overlay_figure(runs, metric, entity)], generated),
                               "comparison-report.html")
