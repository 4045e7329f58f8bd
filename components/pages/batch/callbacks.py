"""The Batch & failures page's callbacks: module-level functions, the app's stores passed in (see :func:`register`)."""

from __future__ import annotations

from datetime import datetime, timezone
from functools import partial

import pandas as pd
from dash import ALL, Input, Output, State, ctx, no_update
from dash.exceptions import PreventUpdate

from sched_engine import ScenarioError
from sched_engine.analysis.audit_workload import read_header_lines

from ...figures import batch as figures
from ...figures import headlines
from ...services import prepared as prepared_files
from ...services.csv_export import send_csv
from ...services.runs import loaded_runs
from ...widgets import audit_panel, run_panel, time_window
from ...widgets.fields import error
from . import charts, clusters, draft, ids, run, sizing, sources, trust

RUNS = ids.PANEL.runs
# The draft's one callback, its inputs in three groups. It stays one callback: a second callback setting
# the draft would set it with allow_duplicate, and the browser does not hold back a Run pressed while such
# an edit is on its way (it waits only for outputs set without it), so a run could miss the edit.
#: The inputs that change the trace in use; a preset replaces the trace too.
TRACE_INPUTS = {"complete": Input(ids.PRESET_COMPLETE, "n_clicks"), "cerit": Input(ids.PRESET_CERIT, "n_clicks"),
                "sample": Input(ids.SAMPLE, "value"), "format": Input(ids.FORMAT, "value"),
                "skip": Input(ids.SKIP_MALFORMED, "value"), "timezone": Input(ids.TIMEZONE, "value"),
                "trace_contents": Input(ids.TRACE_UPLOAD, "contents")}
#: The inputs that change the clusters.
CLUSTER_INPUTS = {"machines_contents": Input(ids.MACHINES_UPLOAD, "contents"),
                  "add_cluster": Input(ids.ADD_CLUSTER, "n_clicks"), "edited": Input(ids.CLUSTERS, "data_timestamp"),
                  "cluster_choice": Input(ids.CLUSTER_CHOICE, "value"),
                  "save_clusters": Input(ids.SAVE_CLUSTERS, "n_clicks")}
#: The inputs that change the failure trace.
FAILURE_INPUTS = {"failure_contents": Input(ids.FAILURE_UPLOAD, "contents"),
                  "failure_choice": Input(ids.FAILURE_CHOICE, "value")}
EDIT_STATES = {"trace_name": State(ids.TRACE_UPLOAD, "filename"), "anonymise": State(ids.ANONYMISE, "value"),
               "machines_name": State(ids.MACHINES_UPLOAD, "filename"),
               "failure_name": State(ids.FAILURE_UPLOAD, "filename"), "rows": State(ids.CLUSTERS, "data"),
               "clusters_name": State(ids.CLUSTERS_NAME, "value"), "model": State(ids.DRAFT, "data"),
               #: The form's settings as they stand: a new trace adapts those that belonged to the sample.
               "settings_now": {name: State(component, "value") for name, component in zip(draft.PRESET_FIELDS, (
                   ids.MAX_JOBS, ids.FAILURE_KIND, ids.REQ_SHARE, ids.LOAD_FACTOR, ids.POLICIES, ids.SCENARIOS,
                   ids.SEEDS))}}
#: What an edit may change, by the names :func:`draft.edit_draft` gives them; then the format controls and
#: the settings a preset sets (:data:`draft.PRESET_FIELDS`).
EDIT_OUTPUTS = {"draft": Output(ids.DRAFT, "data"), "trace_msg": Output(ids.TRACE_MSG, "children"),
                "clusters_msg": Output(ids.CLUSTERS_MSG, "children"),
                "failure_msg": Output(ids.FAILURE_MSG, "children"), "clusters": Output(ids.CLUSTERS, "data"),
                "format": Output(ids.FORMAT, "value"), "skip": Output(ids.SKIP_MALFORMED, "value"),
                "timezone": Output(ids.TIMEZONE, "value"),
                **{name: Output(component, "value") for name, component in zip(draft.PRESET_FIELDS, (
                    ids.MAX_JOBS, ids.FAILURE_KIND, ids.REQ_SHARE, ids.LOAD_FACTOR, ids.POLICIES, ids.SCENARIOS,
                    ids.SEEDS))}}


def edit(uploads, model, rows, settings_now=None, **form) -> dict:
    """One input action on the draft (see :func:`draft.edit_draft`): what it changes, by output name.

    ``form`` holds the callback's inputs and states by name; a preset also
    sets the form's settings, and a new trace the format controls.
    """
    payload = {"sample": form["sample"], "format": form["format"], "skip": bool(form["skip"]),
               "timezone": (form.get("timezone") or "UTC").strip() or "UTC", "anonymise": bool(form.get("anonymise")),
               "trace_contents": form["trace_contents"], "trace_name": form["trace_name"],
               "machines_contents": form["machines_contents"], "machines_name": form["machines_name"],
               "failure_contents": form["failure_contents"], "failure_name": form["failure_name"],
               "rows": rows or [], "cluster_choice": form["cluster_choice"], "clusters_name": form["clusters_name"],
               "failure_choice": form["failure_choice"], "settings": settings_now or {}}
    model = model if isinstance(model, dict) else draft.initial_draft()   # the page's own store, unless forged
    out = draft.edit_draft(ctx.triggered_id, model, payload, uploads)
    changes = {name: out[name] for name in ("draft", "trace_msg", "clusters_msg", "failure_msg", "clusters")
               if name in out}
    if out.get("settings"):
        changes.update({name: out["settings"][name] for name in draft.PRESET_FIELDS if name in out["settings"]})
    # The format controls follow the trace in use. They are set here, not from the draft by another
    # callback: that would close a loop of callbacks, and Dash then skips a re-run (an upload made while
    # the page loads was shown as loaded while the page kept describing the old trace).
    trace = out["draft"]["trace"] if "draft" in out else None
    if trace and trace != model["trace"]:
        changes.update(format=trace.get("format", "auto"), skip=["skip"] if trace.get("skip_malformed") else [],
                       timezone=trace.get("timezone", "UTC"))
    return {**dict.fromkeys(EDIT_OUTPUTS, no_update), **changes}


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


def log_audit(uploads, model):
    """The Audit panel's ``(audit, label)``: the trace in use on the hardware of the next run (none: unknown)."""
    model = model if isinstance(model, dict) else draft.initial_draft()   # the page's own store, unless forged
    workload = sources.parse_trace(model["trace"], uploads)
    try:
        hardware, _ = clusters.next_run_hardware(model, workload)
    except ScenarioError:
        hardware = None
    lines = read_header_lines(sources.ref_path(model["trace"], uploads), source=model["trace"]["label"])
    return audit_panel.audit_of(workload, hardware, lines), model["trace"]["label"]


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


def export(results, prepared, clicks, scenario, policy, records, window):
    """``batch-matrix.csv`` (the summary without its links) or ``batch-report.html``, a prepared file's address."""
    if not any(clicks or []) or not records:
        raise PreventUpdate
    if ctx.triggered_id["frame"] == "matrix":
        rows = pd.DataFrame(charts.summary_rows(loaded_runs(results, records))).drop(columns="open", errors="ignore")
        return send_csv(rows, "batch-matrix.csv"), no_update
    text = charts.batch_report(results, records, scenario, policy, window,
                               datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))
    return no_update, prepared.put(text, "batch-report.html")   # it inlines plotly.js: over 3 MB


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
    app.callback(output=EDIT_OUTPUTS, inputs={**TRACE_INPUTS, **CLUSTER_INPUTS, **FAILURE_INPUTS},
                 state=EDIT_STATES, prevent_initial_call=True)(partial(edit, uploads))
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
        Output(ids.PANEL.download, "data"), Output(ids.REPORT_LINK, "href"),
        Input({"type": ids.PANEL.export, "frame": ALL}, "n_clicks"),
        State(ids.DETAIL_SCENARIO, "value"), State(ids.DETAIL_POLICY, "value"), State(RUNS, "data"),
        State(ids.WINDOW, "data"), prevent_initial_call=True,
    )(partial(export, results, services.prepared))
    prepared_files.register_link(app, ids.REPORT_LINK)
    app.callback(Output({"type": ids.FRAME_LINKS, "frame": ALL}, "href"),
                 Output({"type": ids.FRAME_LINKS, "frame": ALL}, "download"),
                 Input(ids.DETAIL_POLICY, "value"), Input(RUNS, "data"),
                 State(ids.DETAIL_SCENARIO, "value"))(frame_link_targets)
    run_panel.register_headline(app, ids.PANEL, services.results, headlines.batch)
    trust.register(app, results, uploads)
    sizing.register(app, results)
    audit_panel.register(app, audit_panel.Ids(ids.PAGE), [Input(ids.DRAFT, "data")], partial(log_audit, uploads))
