"""The Batch & failures page's callbacks: module-level functions, the app's stores passed in (see :func:`register`)."""

from __future__ import annotations

from datetime import datetime, timezone
from functools import partial

import pandas as pd
from dash import ALL, Input, Output, State, ctx, dcc, no_update
from dash.exceptions import PreventUpdate

from sched_engine import ScenarioError

from ...figures import batch as figures
from ...services.csv_export import send_csv
from ...services.runs import loaded_runs
from ...widgets import run_panel, time_window
from ...widgets.fields import error
from . import charts, clusters, draft, ids, run, sources

RUNS = ids.PANEL.runs
#: What :func:`draft.edit_draft` reads of the form, each ``None`` unless the callback's inputs give it.
PAYLOAD = ("sample", "format", "skip", "trace_contents", "trace_name", "machines_contents", "machines_name",
           "failure_contents", "failure_name", "rows", "cluster_choice", "clusters_name", "failure_choice")

# The draft changes through three callbacks, one per group of inputs: the trace (with the presets, which
# replace it), the clusters and the failure trace. Each applies draft.edit_draft to its trigger and sets
# the outputs that group can change.


def edited(uploads, model, **given) -> tuple[dict, dict]:
    """``(changes by name, draft before)`` of the action that fired (see :func:`draft.edit_draft`)."""
    payload = {**dict.fromkeys(PAYLOAD), **given}
    payload["rows"] = payload["rows"] or []
    model = model if isinstance(model, dict) else draft.initial_draft()   # the page's own store, unless forged
    return draft.edit_draft(ctx.triggered_id, model, payload, uploads), model


def edit_trace(uploads, _complete, _cerit, sample, fmt, skip, contents, filename, model):
    """A preset, a sample or earlier upload, the trace's format, an uploaded trace: the draft and the form.

    Outputs: draft, trace, clusters and failure messages, cluster rows, the
    format controls, and the settings a preset sets (:data:`draft.PRESET_FIELDS`).
    """
    out, model = edited(uploads, model, sample=sample, format=fmt, skip=bool(skip), trace_contents=contents,
                        trace_name=filename)
    settings = out.get("settings")
    preset = [settings[k] for k in draft.PRESET_FIELDS] if settings else [no_update] * len(draft.PRESET_FIELDS)
    # The format controls follow the trace in use. They are set here, not from the draft by another
    # callback: that would close a loop of callbacks, and Dash then skips a re-run (an upload made while
    # the page loads was shown as loaded while the page kept describing the old trace).
    trace = out["draft"]["trace"] if "draft" in out else None
    controls = ((trace.get("format", "auto"), ["skip"] if trace.get("skip_malformed") else [])
                if trace and trace != model["trace"] else (no_update, no_update))
    changed = [out.get(name, no_update) for name in ("draft", "trace_msg", "clusters_msg", "failure_msg", "clusters")]
    return (*changed, *controls, *preset)


def edit_clusters(uploads, contents, _add, _edited, choice, _save, filename, rows, name, model):
    """A .machines upload, an added or edited row, a definition opened or saved: draft, messages, cluster rows."""
    out, _ = edited(uploads, model, machines_contents=contents, machines_name=filename, rows=rows,
                    cluster_choice=choice, clusters_name=name)
    return tuple(out.get(key, no_update) for key in ("draft", "trace_msg", "clusters_msg", "clusters"))


def edit_failures(uploads, contents, choice, filename, model):
    """An uploaded or chosen failure trace: draft and messages."""
    out, _ = edited(uploads, model, failure_contents=contents, failure_name=filename, failure_choice=choice)
    return tuple(out.get(key, no_update) for key in ("draft", "trace_msg", "failure_msg"))


def choices(uploads, _, __):
    """The workload, cluster-definition and failure-trace dropdowns' options."""
    return sources.trace_choices(uploads), sources.cluster_choices(uploads), sources.failure_choices(uploads)


def cluster_table(_, model):
    return model["clusters"]


def trace_facts(uploads, model, max_jobs):
    """What the page says of the trace in use: its facts, its job sizes and the hardware of the next run."""
    trace = model["trace"]
    try:
        workload = sources.parse_trace(trace, uploads)
    except ScenarioError as exc:
        return error(exc), figures.size_histogram(pd.DataFrame({"procs": []})), error(exc)
    return (draft.trace_info(workload, trace["label"]), figures.size_histogram(workload.jobs),
            clusters.hardware_statement(model, workload, max_jobs))


def objectives(results, records):
    """The objectives chart and the summary table of the runs."""
    loaded = loaded_runs(results, records)
    table = figures.objective_table([(r["scenario"], r["label"], res.summary) for r, res in loaded])
    rows = charts.summary_rows(loaded)
    return figures.objective_bars(table), rows, run_panel.summary_columns(rows, markdown=("open",))


def detail(results, memo, records, scenario, policy, window, drawn):
    """The detail charts, their window note and the two dropdowns, settled in one round trip.

    The charts follow the runs (page re-opened, run finished) at once, not
    one dropdown at a time; nothing is sent when they already show this.
    """
    loaded = [record for record, _ in loaded_runs(results, records)]
    scenario, policy = charts.detail_choice(loaded, scenario, policy)
    key = memo.key(records, scenario, policy, window)
    if key == drawn:
        raise PreventUpdate
    scenarios = list(dict.fromkeys(r["scenario"] for r in loaded))
    labels = list(dict.fromkeys(r["label"] for r in loaded if r["scenario"] == scenario))
    note = "whole run" if not window else f"window {window[0] / figures.HOUR:.1f}–{window[1] / figures.HOUR:.1f} h"
    return (*memo.detail(results, records, scenario, policy, window), f"{scenario or ''} · {note}", key,
            scenarios, scenario, labels, policy)


def export(results, clicks, scenario, policy, records, window):
    """``batch-matrix.csv`` (the summary without its links) or ``batch-report.html``."""
    if not any(clicks or []) or not records:
        return no_update
    if ctx.triggered_id["frame"] == "matrix":
        rows = pd.DataFrame(charts.summary_rows(loaded_runs(results, records))).drop(columns="open", errors="ignore")
        return send_csv(rows, "batch-matrix.csv")
    text = charts.batch_report(results, records, scenario, policy, window,
                               datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))
    return dcc.send_string(text, "batch-report.html")


def frame_link_targets(policy, records, scenario):
    """The ``href`` and ``download`` name of each frame's link, for the run shown in detail."""
    links = charts.frame_links(records, scenario, policy)
    return ([links.get(frame, (None, None))[0] for frame in charts.FRAMES],
            [links.get(frame, (None, f"{frame}.csv"))[1] for frame in charts.FRAMES])


def register(app, services) -> None:
    """Wire the page to ``services.results`` (the ResultCache) and ``services.uploads`` (the UploadStore)."""
    results, uploads = services.results, services.uploads
    run_panel.register(app, ids.PANEL, results, partial(run.plan, uploads), [
        State(ids.DRAFT, "data"), State(ids.MAX_JOBS, "value"), State(ids.FAILURE_KIND, "value"),
        State(ids.FAILURE_ALIGN, "value"), State({"type": ids.FAILURE_PARAM, "name": ALL}, "value"),
        State({"type": ids.FAILURE_PARAM, "name": ALL}, "id"), State(ids.REQ_SHARE, "value"),
        State(ids.ESTIMATES, "value"), State(ids.LOAD_FACTOR, "value"), State(ids.POLICIES, "value"),
        State(ids.SCENARIOS, "value"), State(ids.SEEDS, "value")])
    time_window.register(app, ids.WINDOW, (ids.UTILISATION, ids.QUEUE, ids.KILLED, ids.GANTT), ids.RESET_WINDOW,
                         unit_seconds=figures.HOUR)
    app.callback(
        Output(ids.DRAFT, "data", allow_duplicate=True), Output(ids.TRACE_MSG, "children", allow_duplicate=True),
        Output(ids.CLUSTERS_MSG, "children", allow_duplicate=True),
        Output(ids.FAILURE_MSG, "children", allow_duplicate=True), Output(ids.CLUSTERS, "data", allow_duplicate=True),
        Output(ids.FORMAT, "value"), Output(ids.SKIP_MALFORMED, "value"), Output(ids.MAX_JOBS, "value"),
        Output(ids.FAILURE_KIND, "value"), Output(ids.REQ_SHARE, "value"), Output(ids.LOAD_FACTOR, "value"),
        Output(ids.POLICIES, "value"), Output(ids.SCENARIOS, "value"), Output(ids.SEEDS, "value"),
        Input(ids.PRESET_COMPLETE, "n_clicks"), Input(ids.PRESET_CERIT, "n_clicks"), Input(ids.SAMPLE, "value"),
        Input(ids.FORMAT, "value"), Input(ids.SKIP_MALFORMED, "value"), Input(ids.TRACE_UPLOAD, "contents"),
        State(ids.TRACE_UPLOAD, "filename"), State(ids.DRAFT, "data"),
        prevent_initial_call=True,
    )(partial(edit_trace, uploads))
    app.callback(
        Output(ids.DRAFT, "data", allow_duplicate=True), Output(ids.TRACE_MSG, "children", allow_duplicate=True),
        Output(ids.CLUSTERS_MSG, "children", allow_duplicate=True), Output(ids.CLUSTERS, "data", allow_duplicate=True),
        Input(ids.MACHINES_UPLOAD, "contents"), Input(ids.ADD_CLUSTER, "n_clicks"),
        Input(ids.CLUSTERS, "data_timestamp"), Input(ids.CLUSTER_CHOICE, "value"), Input(ids.SAVE_CLUSTERS, "n_clicks"),
        State(ids.MACHINES_UPLOAD, "filename"), State(ids.CLUSTERS, "data"), State(ids.CLUSTERS_NAME, "value"),
        State(ids.DRAFT, "data"),
        prevent_initial_call=True,
    )(partial(edit_clusters, uploads))
    app.callback(
        Output(ids.DRAFT, "data", allow_duplicate=True), Output(ids.TRACE_MSG, "children", allow_duplicate=True),
        Output(ids.FAILURE_MSG, "children", allow_duplicate=True),
        Input(ids.FAILURE_UPLOAD, "contents"), Input(ids.FAILURE_CHOICE, "value"),
        State(ids.FAILURE_UPLOAD, "filename"), State(ids.DRAFT, "data"),
        prevent_initial_call=True,
    )(partial(edit_failures, uploads))
    app.callback(Output(ids.SAMPLE, "options"), Output(ids.CLUSTER_CHOICE, "options"),
                 Output(ids.FAILURE_CHOICE, "options"),
                 Input(ids.SAMPLE, "id"), Input(ids.DRAFT, "data"))(partial(choices, uploads))
    app.callback(Output(ids.CLUSTERS, "data", allow_duplicate=True), Input(ids.CLUSTERS, "id"),
                 State(ids.DRAFT, "data"), prevent_initial_call="initial_duplicate")(cluster_table)
    app.callback(Output(ids.TRACE_INFO, "children"), Output(ids.SIZES, "figure"), Output(ids.HARDWARE, "children"),
                 Input(ids.DRAFT, "data"), Input(ids.MAX_JOBS, "value"))(partial(trace_facts, uploads))
    app.callback(Output(ids.OBJECTIVES, "figure"), Output(ids.PANEL.summary, "data"),
                 Output(ids.PANEL.summary, "columns"), Input(RUNS, "data"))(partial(objectives, results))
    app.callback(
        Output(ids.UTILISATION, "figure"), Output(ids.QUEUE, "figure"), Output(ids.KILLED, "figure"),
        Output(ids.WAITS, "figure"), Output(ids.GANTT, "figure"), Output(ids.WINDOW_MSG, "children"),
        Output(ids.DRAWN, "data"), Output(ids.DETAIL_SCENARIO, "options"), Output(ids.DETAIL_SCENARIO, "value"),
        Output(ids.DETAIL_POLICY, "options"), Output(ids.DETAIL_POLICY, "value"),
        Input(RUNS, "data"), Input(ids.DETAIL_SCENARIO, "value"), Input(ids.DETAIL_POLICY, "value"),
        Input(ids.WINDOW, "data"), State(ids.DRAWN, "data"),
    )(partial(detail, results, charts.FigureMemo()))
    app.callback(
        Output(ids.PANEL.download, "data"), Input({"type": ids.PANEL.export, "frame": ALL}, "n_clicks"),
        State(ids.DETAIL_SCENARIO, "value"), State(ids.DETAIL_POLICY, "value"), State(RUNS, "data"),
        State(ids.WINDOW, "data"), prevent_initial_call=True,
    )(partial(export, results))
    app.callback(Output({"type": ids.FRAME_LINKS, "frame": ALL}, "href"),
                 Output({"type": ids.FRAME_LINKS, "frame": ALL}, "download"),
                 Input(ids.DETAIL_POLICY, "value"), Input(RUNS, "data"),
                 State(ids.DETAIL_SCENARIO, "value"))(frame_link_targets)
