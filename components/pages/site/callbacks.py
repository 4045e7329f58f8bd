"""The Site study page's callbacks: module-level functions, the app's stores passed in (see :func:`register`)."""

from __future__ import annotations

from functools import partial

import pandas as pd
from dash import ALL, Input, Output, State, ctx, html, no_update
from dash.exceptions import PreventUpdate

from sched_engine import ScenarioError
from sched_engine.analysis.audit_workload import read_header_lines
from sched_engine.batch import TraceError

from ...figures import catalogue
from ...figures.common import empty_figure
from ...services.csv_export import send_csv
from ...services.runs import loaded_runs
from ...services.saved_items import ORGANISATION, saved_choices
from ...services.uploads import UploadError
from ...widgets import audit_panel, run_panel, run_time, time_window, tree_editor
from ...widgets.fields import error, ok
from ..batch.sources import UPLOADED, parse_trace, ref_path, store_trace, trace_choice_ref, trace_choices
from . import charts, hardware, ids, organisation, run

RUNS = ids.PANEL.runs
EDITOR = ids.EDITOR
SUMMARY = ("finished", "killed", "mean_wait_s", "utilisation", "memory_utilisation", "mean_min_isolation")


def upload(uploads, contents, filename, timezone="UTC", anonymise=None, skip=None):
    """Store an uploaded trace and choose it; the dropdown lists it (and every earlier upload).

    Read in the page's time zone, skipping malformed lines when the box says so (both kept with the upload),
    anonymised if asked (:func:`store_trace`).
    """
    if not contents:
        return no_update, no_update, no_update
    try:
        path, label = store_trace(uploads, contents, filename, timezone=timezone, anonymise=bool(anonymise),
                                  skip_malformed=bool(skip))
        value = UPLOADED + path.name
        ref = trace_choice_ref(value, uploads)
        workload = parse_trace(ref, uploads)
    except (UploadError, ScenarioError) as exc:
        # A reader's error names the file already; an upload store's may not.
        said = str(exc) if filename and str(exc).startswith(str(filename)) else f"{filename}: {exc}"
        # Skipping rescues bad rows (a line and a field named), never a file that is no text at all.
        rescuable = isinstance(exc, TraceError) and exc.line and exc.field and not skip
        hint = " Tick 'skip malformed lines' to load the rest, or fix the file." if rescuable else ""
        return no_update, no_update, error(f"{said.rstrip('.')}.{hint} The previous trace stays.")
    # A resource manager's log says what it read in its notes (jobs from records, what was left out).
    read = f"{label}: " + ("; ".join(workload.notes) if workload.notes else f"{len(workload.jobs):,} jobs") + (
        f" (times read in {ref['timezone']})" if "timezone" in ref else "") + (
        f"; {workload.skipped_lines:,} malformed line(s) skipped (first: line {workload.first_skipped_line})"
        if workload.skipped_lines else "") + (
        f"; a whole run takes about {run_time.whole_run_seconds(len(workload.jobs), 'site'):,} s per policy"
        if len(workload.jobs) >= run_time.LARGE_TRACE else "")
    return trace_choices(uploads), value, ok(read)


def upload_site(uploads, contents, filename, timezone="UTC", anonymise=None, skip=None, rejected=False,
                ticked=False):
    """The site's own trace: stored and chosen as :func:`upload`, and run whole ("First jobs only" emptied).

    The 2,000-job cut belongs to the sample the page opens on; an own trace
    runs, and its organisation is derived from, every job it holds. The
    skip box changed (``ticked``) reads the upload again only when it was
    refused (``rejected``); otherwise the box is for the next upload.
    Returns the dropdown's options and value, the message, the cut and
    whether the upload was refused.
    """
    if ticked and not rejected:
        raise PreventUpdate
    options, value, message = upload(uploads, contents, filename, timezone, anonymise, skip)
    if value is no_update:
        return options, value, message, no_update, bool(contents)
    return options, value, html.Div([message, html.Div("Runs the whole trace: 'First jobs only' emptied.",
                                                       className="hint")]), None, False


def _upload_site(uploads, **values):
    return upload_site(uploads, **values, ticked=ctx.triggered_id == ids.SKIP_MALFORMED)


# The organisation's one callback (a second one setting the Store would race a Run pressed meanwhile).
ORG_INPUTS = {"trace": Input(ids.TRACE, "value"), "max_jobs": Input(ids.MAX_JOBS, "value"),
              "weighting": Input(ids.WEIGHTING, "value"), "add": Input(EDITOR.add_department, "n_clicks"),
              "remove": Input(EDITOR.remove, "n_clicks"), "apply": Input(EDITOR.apply, "n_clicks"),
              "choice": Input(EDITOR.choice, "value"), "save": Input(EDITOR.save, "n_clicks"),
              "contents": Input(EDITOR.upload, "contents"), "export": Input(EDITOR.export, "n_clicks")}
ORG_STATES = {"draft": State(ids.ORG, "data"), "selected": State(EDITOR.selected, "data"),
              "name": State(EDITOR.name, "value"), "weight": State(EDITOR.weight, "value"),
              "group": State(ids.GROUP_FIELD, "value"), "item_name": State(EDITOR.item_name, "value"),
              "filename": State(EDITOR.upload, "filename"), "anonymise": State(ids.ANONYMISE, "value")}
ORG_OUTPUTS = {"draft": Output(ids.ORG, "data"), "selected": Output(EDITOR.selected, "data", allow_duplicate=True),
               "tree_msg": Output(EDITOR.message, "children"), "item_msg": Output(EDITOR.item_message, "children"),
               "download": Output(EDITOR.download, "data")}


def organisation_edit(uploads, draft, selected, **payload) -> dict:
    """One action on the organisation (see :func:`organisation.edit`), every output named."""
    out = organisation.edit(ctx.triggered_id, draft, selected, payload, uploads)
    if "draft" in out:   # which site it belongs to (kept across a reload only while that site is chosen), and
        # the weighting chosen when it was made (a Run pressed before a new one's answer applies it: run.plan)
        out["draft"] = {**out["draft"], "for": [payload["trace"], payload["max_jobs"]],
                        "weighting": payload["weighting"] or "equal"}
    return {name: out.get(name, no_update) for name in ORG_OUTPUTS}


def restore_choice(_, kept):
    """The trace, cut and weighting chosen last (the page's layout opens on the sample): put back on every visit."""
    if not isinstance(kept, dict) or not kept.get("trace"):
        raise PreventUpdate
    return kept["trace"], kept.get("max_jobs"), kept.get("weighting") or no_update


def remember_choice(trace, max_jobs, weighting):
    return {"trace": trace, "max_jobs": max_jobs, "weighting": weighting}


def organisation_views(draft):
    """The drawn tree, the table of nodes and where the organisation comes from."""
    if not draft:
        return [], [], ""
    tree = draft["tree"]
    users = len(tree_editor.leaf_names(tree, organisation.is_user))
    groups = len(tree.get("children", ()))
    return (organisation.drawn(tree), organisation.node_rows(tree),
            f"{groups:,} group{'s' if groups != 1 else ''}, {users:,} user{'s' if users != 1 else ''}; "
            f"{draft['origin']}.")


def select_node(tap, cell):
    """The node clicked in the tree, or the row clicked in the table."""
    if ctx.triggered_id == ids.ORGANISATION:
        return (cell or {}).get("row_id") or no_update
    return (tap or {}).get("id") or no_update


def node_form(selected, draft):
    values = organisation.form_values((draft or {}).get("tree") or {"name": "root", "children": []}, selected)
    if not values:
        return "Select a group or user (in the tree or the table)", "", "", [], None, {"display": "none"}
    groups = values["groups"]
    return (values["title"], values["name"], values["weight"], [{"label": g, "value": g} for g in groups],
            values["group"], {"display": "block" if groups else "none"})


def hardware_edit(uploads, trace, _timestamp, _add, _header, contents, draft, rows, filename):
    out = hardware.edit(ctx.triggered_id, draft, rows, uploads, trace, upload=(contents, filename))
    return out.get("draft", no_update), out.get("rows", no_update), out.get("message", "")


def hardware_text(uploads, draft, default_memory, max_jobs, trace):
    try:
        model = hardware.hardware_model((draft or {}).get("rows"), default_memory)
        jobs, _ = organisation.simulated_jobs(uploads, trace, max_jobs)
    except ScenarioError as exc:
        return [error(f"Next run: {exc}")]
    return hardware.statement(model, (draft or {}).get("origin", "the table"), jobs, (draft or {}).get("rows"))


def log_audit(uploads, trace, draft):
    """The Audit panel's ``(audit, label)``: the whole trace chosen, on the hardware table (none: unknown)."""
    if not trace:
        return None
    ref = trace_choice_ref(trace, uploads)
    workload = parse_trace(ref, uploads)
    try:
        clusters = hardware.hardware_model((draft or {}).get("rows"), None)["clusters"]
    except ScenarioError:
        clusters = None
    return audit_panel.audit_of(workload, clusters, read_header_lines(ref_path(ref, uploads), source=ref["label"])), \
        ref["label"]


def summary(results, records):
    loaded = loaded_runs(results, records)
    compared = any(record.get("site", "A") != "A" for record, _ in loaded)
    # Headers and rounding from the metric catalogue, as on every other page (not the raw keys).
    rows = [{**({"site": record.get("site", "A")} if compared else {}), "policy": record["label"],
             **catalogue.cells(result.summary_value, SUMMARY, "site")}
            for record, result in loaded]
    return rows, run_panel.summary_columns(rows), charts.stakeholder_block(loaded)


def select_group(*clicks):
    group = charts.clicked_group(ctx.triggered[0]["value"] if ctx.triggered else None)
    return group, (f"Highlighted: {group} (click another line to change)" if group else "")


def figures(results, records, selected, window):
    return charts.chart_figures(loaded_runs(results, records), selected, window)


def why_waited(results, records, window):
    return charts.why_waited_figures(loaded_runs(results, records), None, window)


def comparison(uploads, results, trace, second, max_jobs, records):
    try:
        return charts.comparison(uploads, trace, second, max_jobs, loaded_runs(results, records))
    except ScenarioError as exc:
        return empty_figure(f"Cannot compare: {exc}"), [], [], [], []


def export(results, clicks, records):
    if not any(clicks or []) or not records:
        return no_update
    frame = ctx.triggered_id["frame"]
    loaded = loaded_runs(results, records)
    parts = [getattr(result, frame).assign(policy=record["label"], site=record.get("site", "A"))
             for record, result in loaded]
    return send_csv(pd.concat(parts, ignore_index=True), f"site-{frame}.csv")


def register(app, services) -> None:
    """Wire the page to ``services.results`` (the ResultCache) and ``services.uploads`` (the UploadStore)."""
    results, uploads = services.results, services.uploads
    run_panel.register(app, ids.PANEL, results, partial(run.plan, uploads), [
        State(ids.TRACE, "value"), State(ids.MAX_JOBS, "value"), State(ids.WEIGHTING, "value"),
        State(ids.FAILURES, "value"), State(ids.ELASTIC, "value"), State(ids.POLICIES, "value"),
        State(ids.BACKFILL, "value"), State(ids.HALF_LIFE, "value"), State(ids.ORG, "data"), State(ids.HW, "data"),
        State(ids.DEFAULT_MEMORY, "value"), State(ids.SECOND, "value")], **run.MESSAGE)
    time_window.register(app, ids.WINDOW, ids.GRAPHS, ids.RESET_WINDOW, unit_seconds=3600.0)
    app.callback(Output(ids.TRACE, "options"), Output(ids.SECOND, "options"),
                 Input(ids.TRACE, "id"))(lambda _: (trace_choices(uploads),) * 2)
    app.callback(output=[Output(ids.TRACE, "options", allow_duplicate=True), Output(ids.TRACE, "value"),
                         Output(ids.UPLOAD_MSG, "children"), Output(ids.MAX_JOBS, "value"), Output(ids.REJECTED, "data")],
                 inputs={"contents": Input(ids.UPLOAD, "contents"), "skip": Input(ids.SKIP_MALFORMED, "value")},
                 state={"filename": State(ids.UPLOAD, "filename"), "timezone": State(ids.TIMEZONE, "value"),
                        "anonymise": State(ids.ANONYMISE, "value"), "rejected": State(ids.REJECTED, "data")},
                 prevent_initial_call=True)(partial(_upload_site, uploads))
    app.callback(Output(ids.SECOND, "options", allow_duplicate=True), Output(ids.SECOND, "value"),
                 Output(ids.SECOND_MSG, "children"), Input(ids.SECOND_UPLOAD, "contents"),
                 State(ids.SECOND_UPLOAD, "filename"), State(ids.TIMEZONE, "value"), State(ids.ANONYMISE, "value"),
                 State(ids.SKIP_MALFORMED, "value"), prevent_initial_call=True)(partial(upload, uploads))
    app.callback(Output(ids.TRACE, "value", allow_duplicate=True), Output(ids.MAX_JOBS, "value", allow_duplicate=True),
                 Output(ids.WEIGHTING, "value"), Input(ids.TRACE, "id"), State(ids.CHOICE, "data"),
                 prevent_initial_call="initial_duplicate")(restore_choice)
    app.callback(Output(ids.CHOICE, "data"), Input(ids.TRACE, "value"), Input(ids.MAX_JOBS, "value"),
                 Input(ids.WEIGHTING, "value"), prevent_initial_call=True)(remember_choice)
    app.callback(output=ORG_OUTPUTS, inputs=ORG_INPUTS, state=ORG_STATES,
                 prevent_initial_call="initial_duplicate")(partial(organisation_edit, uploads))
    app.callback(Output(EDITOR.tree, "elements"), Output(ids.ORGANISATION, "data"), Output(ids.ORG_ORIGIN, "children"),
                 Input(ids.ORG, "data"))(organisation_views)
    app.callback(Output(EDITOR.selected, "data"), Input(EDITOR.tree, "tapNodeData"),
                 Input(ids.ORGANISATION, "active_cell"), prevent_initial_call=True)(select_node)
    app.callback(Output(EDITOR.tree, "stylesheet"), Input(EDITOR.selected, "data"),
                 Input(ids.GROUP, "data"))(lambda selected, group: tree_editor.tree_style("user", selected or group))
    app.callback(Output(EDITOR.form_title, "children"), Output(EDITOR.name, "value"), Output(EDITOR.weight, "value"),
                 Output(ids.GROUP_FIELD, "options"), Output(ids.GROUP_FIELD, "value"),
                 Output(ids.GROUP_FIELD_BOX, "style"), Input(EDITOR.selected, "data"), Input(ids.ORG, "data"))(node_form)
    app.callback(Output(EDITOR.choice, "options"), Input(EDITOR.choice, "id"), Input(EDITOR.item_message, "children"))(
        lambda _, __: saved_choices(uploads, ORGANISATION))
    app.callback(Output(ids.HW, "data"), Output(ids.HW_TABLE, "data"), Output(ids.HW_MSG, "children"),
                 Input(ids.TRACE, "value"), Input(ids.HW_TABLE, "data_timestamp"), Input(ids.HW_ADD, "n_clicks"),
                 Input(ids.HW_HEADER, "n_clicks"), Input(ids.HW_UPLOAD, "contents"), State(ids.HW, "data"),
                 State(ids.HW_TABLE, "data"), State(ids.HW_UPLOAD, "filename"))(partial(hardware_edit, uploads))
    app.callback(Output(ids.HARDWARE, "children"), Input(ids.HW, "data"), Input(ids.DEFAULT_MEMORY, "value"),
                 Input(ids.MAX_JOBS, "value"), Input(ids.TRACE, "value"))(partial(hardware_text, uploads))
    app.callback(Output(ids.PANEL.summary, "data"), Output(ids.PANEL.summary, "columns"),
                 Output(ids.STAKEHOLDERS, "children"), Input(RUNS, "data"))(partial(summary, results))
    audit_panel.register(app, audit_panel.Ids(ids.PAGE), [Input(ids.TRACE, "value"), Input(ids.HW, "data")],
                         partial(log_audit, uploads))
    app.callback(Output(ids.GROUP, "data"), Output(ids.GROUP_MSG, "children"),
                 [Input(graph, "clickData") for graph in (ids.SHARES, ids.ISOLATION, ids.WAITS, ids.KILLED)],
                 prevent_initial_call=True)(select_group)
    app.callback([Output(graph, "figure") for graph in ids.GRAPHS], Input(RUNS, "data"), Input(ids.GROUP, "data"),
                 Input(ids.WINDOW, "data"))(partial(figures, results))
    app.callback(Output(ids.WHY_WAITED, "figure"), Output(ids.WHY_WAITED_GROUPS, "figure"), Input(RUNS, "data"),
                 Input(ids.WINDOW, "data"))(partial(why_waited, results))
    app.callback(Output(ids.WORKLOADS, "figure"), Output(ids.WORKLOAD_TABLE, "data"),
                 Output(ids.WORKLOAD_TABLE, "columns"), Output(ids.RESULTS_TABLE, "data"),
                 Output(ids.RESULTS_TABLE, "columns"), Input(ids.TRACE, "value"), Input(ids.SECOND, "value"),
                 Input(ids.MAX_JOBS, "value"), Input(RUNS, "data"))(partial(comparison, uploads, results))
    app.callback(Output(ids.PANEL.download, "data"), Input({"type": ids.PANEL.export, "frame": ALL}, "n_clicks"),
                 State(RUNS, "data"), prevent_initial_call=True)(partial(export, results))
