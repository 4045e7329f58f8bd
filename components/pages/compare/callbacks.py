"""The Compare page's callbacks: module-level functions, the results cache passed in (see :func:`register`)."""

from __future__ import annotations

from datetime import datetime, timezone
from functools import partial

from dash import Input, Output, State, ctx, html, no_update

from ...figures import catalogue
from ...figures.compare import overlay_figure
from ...services import prepared as prepared_files
from ...services.csv_export import send_csv
from ...services.report import html_report
from . import ids, paired, seeds, table


def run_choices(results, _, __):
    return table.run_options(results.listing())


def compared(results, hashes, metric):
    """The summary table with its highlighted differences, the metric choices, and the chosen runs' full labels."""
    runs, full = table.loaded(results, hashes)
    missing = len(hashes or []) - len(runs)
    note = [html.Div(label) for label in full]
    if missing:
        note.append(html.Div(f"{missing} chosen run(s) are no longer in the cache.", className="error"))
    warning = table.setting_warning(runs)
    if warning:
        note.append(html.Div(warning, className="warning compare-setting-warning"))
    frame, deltas = table.comparison_table(runs)
    metrics = table.metric_options(runs)
    engine = runs[0][1].scenario["engine"] if runs else None
    styles = table.direction_styles(frame, deltas, engine)
    frame = table.shown(frame, [label for label, _ in runs], engine)
    if not runs:   # no run chosen: no table at all, not a lone "metric" header
        frame = frame.iloc[:0, :0]
    choices = [{"label": catalogue.label(name, engine), "value": name} for name in metrics]   # named, not keyed
    return (frame.to_dict("records"), [{"name": c, "id": c} for c in frame.columns], styles,
            choices, metric if metric in metrics else (metrics[0] if metrics else None), note)


def entities(results, metric, hashes, entity):
    options = table.entity_options(table.loaded(results, hashes)[0], metric)
    values = [o["value"] for o in options]
    return options, entity if entity in values else (values[0] if values else None)


def overlay(results, entity, metric, hashes):
    return overlay_figure(table.loaded(results, hashes)[0], metric, entity)


def paired_view(results, hashes):
    """The job-by-job sentence and charts of the first two chosen runs."""
    return paired.paired_view(table.loaded(results, hashes)[0])


def export(results, prepared, csv_clicks, report_clicks, hashes, metric, entity):
    """``comparison.csv`` (the table) or ``comparison-report.html`` (table and overlay)."""
    runs = table.loaded(results, hashes)[0]
    if not runs:
        return no_update, no_update
    if ctx.triggered_id == ids.EXPORT_CSV:
        frame, _ = table.comparison_table(runs)
        return send_csv(frame, "comparison.csv"), no_update
    generated = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    text = html_report("Comparison", runs, [overlay_figure(runs, metric, entity)], generated)
    return no_update, prepared.put(text, "comparison-report.html")   # it inlines plotly.js: over 3 MB


def register(app, services) -> None:
    """Wire the page to ``services.results`` (the ResultCache, whose index lists every finished run)."""
    results = services.results
    app.callback(Output(ids.RUNS, "options"), Input(ids.REFRESH, "n_clicks"),
                 Input(ids.RUNS, "id"))(partial(run_choices, results))
    app.callback(
        Output(ids.TABLE, "data"), Output(ids.TABLE, "columns"), Output(ids.TABLE, "style_data_conditional"),
        Output(ids.METRIC, "options"), Output(ids.METRIC, "value"), Output(ids.MESSAGE, "children"),
        Input(ids.RUNS, "value"), State(ids.METRIC, "value"),
    )(partial(compared, results))
    app.callback(Output(ids.ENTITY, "options"), Output(ids.ENTITY, "value"), Input(ids.METRIC, "value"),
                 State(ids.RUNS, "value"), State(ids.ENTITY, "value"))(partial(entities, results))
    app.callback(Output(ids.OVERLAY, "figure"), Input(ids.ENTITY, "value"), State(ids.METRIC, "value"),
                 State(ids.RUNS, "value"))(partial(overlay, results))
    app.callback(Output(ids.PAIRED_TEXT, "children"), Output(ids.PAIRED_HISTOGRAM, "figure"),
                 Output(ids.PAIRED_USERS, "figure"), Input(ids.RUNS, "value"))(partial(paired_view, results))
    seeds.register(app, results)
    app.callback(Output(ids.DOWNLOAD, "data"), Output(ids.REPORT_LINK, "href"), Input(ids.EXPORT_CSV, "n_clicks"),
                 Input(ids.EXPORT_REPORT, "n_clicks"), State(ids.RUNS, "value"), State(ids.METRIC, "value"),
                 State(ids.ENTITY, "value"), prevent_initial_call=True)(partial(export, results, services.prepared))
    prepared_files.register_link(app, ids.REPORT_LINK)
