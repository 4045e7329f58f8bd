"""The Site study page's callbacks: module-level functions, the app's stores passed in (see :func:`register`)."""

from __future__ import annotations

from functools import partial

import pandas as pd
from dash import ALL, Input, Output, State, ctx, no_update

from sched_engine import ScenarioError

from ...services.csv_export import send_csv
from ...services.runs import loaded_runs
from ...services.uploads import UploadError
from ...widgets import run_panel, time_window
from ...widgets.fields import error, ok
from ..batch.sources import UPLOADED, parse_trace, trace_choice_ref, trace_choices
from . import charts, ids, run

RUNS = ids.PANEL.runs


def upload(uploads, contents, filename):
    """Store an uploaded trace and choose it; the dropdown lists it (and every earlier upload)."""
    if not contents:
        return no_update, no_update, no_update
    try:
        path = uploads.save_data_url(contents, "trace", filename)
        value = UPLOADED + path.name
        workload = parse_trace(trace_choice_ref(value, uploads), uploads)
    except (UploadError, ScenarioError) as exc:
        return no_update, no_update, error(f"{filename}: {exc}")
    return trace_choices(uploads), value, ok(f"{filename}: {len(workload.jobs):,} jobs")


def organisation(uploads, trace, weighting):
    try:
        return charts.organisation_rows(uploads, trace, weighting)
    except (ScenarioError, ValueError) as exc:
        return [], error(exc)


def summary(results, records, organisation_rows):
    loaded = loaded_runs(results, records)
    rows = [{"policy": record["label"], **{m: round(v, 3) for m, v in zip(result.summary["metric"],
                                                                           result.summary["value"])
                                            if m in ("finished", "killed", "mean_wait_s", "utilisation",
                                                     "memory_utilisation", "mean_min_isolation")}}
            for record, result in loaded]
    return rows, run_panel.summary_columns(rows), charts.stakeholder_block(loaded, organisation_rows)


def select_group(*clicks):
    group = charts.clicked_group(ctx.triggered[0]["value"] if ctx.triggered else None)
    return group, (f"Highlighted: {group} (click another line to change)" if group else "")


def figures(results, records, selected, window):
    return charts.chart_figures(loaded_runs(results, records), selected, window)


def export(results, clicks, records):
    if not any(clicks or []) or not records:
        return no_update
    frame = ctx.triggered_id["frame"]
    loaded = loaded_runs(results, records)
    parts = [getattr(result, frame).assign(policy=record["label"]) for record, result in loaded]
    return send_csv(pd.concat(parts, ignore_index=True), f"site-{frame}.csv")


def register(app, services) -> None:
    """Wire the page to ``services.results`` (the ResultCache) and ``services.uploads`` (the UploadStore)."""
    results, uploads = services.results, services.uploads
    run_panel.register(app, ids.PANEL, results, partial(run.plan, uploads), [
        State(ids.TRACE, "value"), State(ids.MAX_JOBS, "value"), State(ids.WEIGHTING, "value"),
        State(ids.FAILURES, "value"), State(ids.ELASTIC, "value"), State(ids.POLICIES, "value"),
        State(ids.BACKFILL, "value"), State(ids.HALF_LIFE, "value")], **run.MESSAGE)
    time_window.register(app, ids.WINDOW, ids.GRAPHS, ids.RESET_WINDOW, unit_seconds=3600.0)
    app.callback(Output(ids.TRACE, "options"), Input(ids.TRACE, "id"))(lambda _: trace_choices(uploads))
    app.callback(Output(ids.TRACE, "options", allow_duplicate=True), Output(ids.TRACE, "value"),
                 Output(ids.UPLOAD_MSG, "children"), Input(ids.UPLOAD, "contents"), State(ids.UPLOAD, "filename"),
                 prevent_initial_call=True)(partial(upload, uploads))
    app.callback(Output(ids.ORGANISATION, "data"), Output(ids.HARDWARE, "children"), Input(ids.TRACE, "value"),
                 Input(ids.WEIGHTING, "value"))(partial(organisation, uploads))
    app.callback(Output(ids.PANEL.summary, "data"), Output(ids.PANEL.summary, "columns"),
                 Output(ids.STAKEHOLDERS, "children"), Input(RUNS, "data"),
                 State(ids.ORGANISATION, "data"))(partial(summary, results))
    app.callback(Output(ids.GROUP, "data"), Output(ids.GROUP_MSG, "children"),
                 [Input(graph, "clickData") for graph in (ids.SHARES, ids.ISOLATION, ids.WAITS, ids.KILLED)],
                 prevent_initial_call=True)(select_group)
    app.callback([Output(graph, "figure") for graph in ids.GRAPHS], Input(RUNS, "data"), Input(ids.GROUP, "data"),
                 Input(ids.WINDOW, "data"))(partial(figures, results))
    app.callback(Output(ids.PANEL.download, "data"), Input({"type": ids.PANEL.export, "frame": ALL}, "n_clicks"),
                 State(RUNS, "data"), prevent_initial_call=True)(partial(export, results))
