"""The Fair sharing page's callbacks: module-level functions, the app's stores passed in (see :func:`register`)."""

from __future__ import annotations

from functools import partial

from dash import ALL, Input, Output, State, ctx, dcc, no_update

from ...figures import headlines
from ...services.csv_export import send_csv
from ...services.runs import loaded_runs
from ...services.saved_items import HIERARCHY, saved_choices
from ...widgets import run_panel
from ...widgets.fields import field
from . import charts, draft, ids, run, tree, tree_edit

RUNS = ids.PANEL.runs


def capacity_rows(_, model):
    return model["resources"]


def selected_node(node):
    return node["id"] if node else None


def node_form(selected, model):
    """The form of the selected node: title, name, weight, demands, tasks, duration, arrival, departure, job fields' style."""
    values = tree_edit.form_values(model, selected)
    if not values:
        return "Select a node in the tree", "", "", [], "", "", "", "", {"display": "none"}
    demands = [
        field(f"Demand per task: {name}", dcc.Input(id={"type": ids.DEMAND, "resource": name}, type="text",
                                                    value=amount))
        for name, amount in values.get("demand", {}).items()
    ]
    kind = "Job" if values["job"] else "Department"
    return (f"{kind} {values['name']}", values["name"], values["weight"], demands, values.get("tasks", ""),
            values.get("duration", ""), values.get("arrival", ""), values.get("departure") or "",
            {"display": "block"} if values["job"] else {"display": "none"})


# The draft's one callback, its inputs in three groups (presets, tree editor, capacity table). It stays one
# callback: a second callback setting the draft would set it with allow_duplicate, and the browser does not
# hold back a Run pressed while such an edit is on its way, so a run could miss the edit.
PRESET_INPUTS = {"preset": Input(ids.PRESET, "n_clicks"), "reset": Input(ids.RESET, "n_clicks")}
TREE_INPUTS = {"add_department": Input(ids.ADD_DEPT, "n_clicks"), "add_job": Input(ids.ADD_JOB, "n_clicks"),
               "remove": Input(ids.REMOVE, "n_clicks"), "apply": Input(ids.APPLY, "n_clicks")}
CAPACITY_INPUTS = {"edited": Input(ids.CAPACITY, "data_timestamp"), "add_resource": Input(ids.ADD_RESOURCE, "n_clicks")}
EDIT_STATES = {"model": State(ids.DRAFT, "data"), "selected": State(ids.SELECTED, "data"),
               "rows": State(ids.CAPACITY, "data"), "name": State(ids.NAME, "value"),
               "weight": State(ids.WEIGHT, "value"), "tasks": State(ids.TASKS, "value"),
               "duration": State(ids.DURATION, "value"), "arrival": State(ids.ARRIVAL, "value"),
               "departure": State(ids.DEPARTURE, "value"),
               "amounts": State({"type": ids.DEMAND, "resource": ALL}, "value"),
               "demand_ids": State({"type": ids.DEMAND, "resource": ALL}, "id")}
#: What an edit may change, in the order :func:`draft.edit_draft` returns it.
EDIT_OUTPUTS = {"draft": Output(ids.DRAFT, "data"), "selected": Output(ids.SELECTED, "data"),
                "rows": Output(ids.CAPACITY, "data"), "tree_msg": Output(ids.TREE_MSG, "children"),
                "capacity_msg": Output(ids.CAPACITY_MSG, "children"), "policies": Output(ids.POLICIES, "value")}


def edit(model, selected, rows, name, weight, tasks, duration, arrival, departure, amounts, demand_ids,
         **_clicks) -> dict:
    """An editor action (the button or table that fired) applied to the draft, by output name (see :func:`draft.edit_draft`)."""
    form = {"name": name, "weight": weight, "tasks": tasks, "duration": duration, "arrival": arrival,
            "departure": departure, "demand": {i["resource"]: a for i, a in zip(demand_ids, amounts)}}
    return dict(zip(EDIT_OUTPUTS, draft.edit_draft(ctx.triggered_id, model, selected, form, rows)))


def hierarchy(uploads, choice, _save, contents, _export, name, filename, model):
    """Open, save, upload or download the hierarchy (see :func:`draft.hierarchy_action`)."""
    payload = {"choice": choice, "name": name, "contents": contents, "filename": filename}
    out = draft.hierarchy_action(ctx.triggered_id, model, payload, uploads)
    new = out.get("draft")
    return (new or no_update, None if new else no_update, new["resources"] if new else no_update,
            out.get("message", no_update), out.get("download", no_update))


def hierarchy_choices(uploads, _, __):
    return saved_choices(uploads, HIERARCHY)


def run_charts(results, records, hovered):
    return charts.chart_outputs(loaded_runs(results, records), hovered)


def tasks_at(results, records, instant):
    return charts.tasks_figure(loaded_runs(results, records), instant)


def highlight_shares(results, hovered, records):
    loaded = loaded_runs(results, records)
    return charts.share_highlight(loaded, hovered) if loaded else no_update


def instant_clicked(click):
    return round(float(click["points"][0]["x"]), 1) if click else no_update


def export(results, clicks, run_hash):
    """One frame of the chosen run as CSV (``<policy>-<frame>.csv``)."""
    result = results.get(run_hash) if run_hash and any(clicks) else None
    if result is None:
        return no_update
    frame = ctx.triggered_id["frame"]
    return send_csv(result.frames()[frame], f"{result.scenario['policy']}-{frame}.csv")


def register(app, services) -> None:
    """Wire the page to ``services.results`` (the ResultCache) and ``services.uploads`` (the UploadStore)."""
    results, uploads = services.results, services.uploads
    run_panel.register(app, ids.PANEL, results, run.plan, [State(ids.DRAFT, "data"), State(ids.POLICIES, "value")],
                       **run.MESSAGE)
    app.callback(Output(ids.TREE, "elements"), Input(ids.DRAFT, "data"))(tree.tree_elements)
    app.callback(Output(ids.CAPACITY, "data", allow_duplicate=True), Input(ids.CAPACITY, "id"),
                 State(ids.DRAFT, "data"), prevent_initial_call="initial_duplicate")(capacity_rows)
    app.callback(Output(ids.SELECTED, "data", allow_duplicate=True), Input(ids.TREE, "tapNodeData"),
                 prevent_initial_call=True)(selected_node)
    app.callback(
        Output(ids.FORM_TITLE, "children"), Output(ids.NAME, "value"), Output(ids.WEIGHT, "value"),
        Output(ids.DEMANDS, "children"), Output(ids.TASKS, "value"), Output(ids.DURATION, "value"),
        Output(ids.ARRIVAL, "value"), Output(ids.DEPARTURE, "value"), Output(ids.JOB_FIELDS, "style"),
        Input(ids.SELECTED, "data"), Input(ids.DRAFT, "data"),
    )(node_form)
    app.callback(output=EDIT_OUTPUTS, inputs={**PRESET_INPUTS, **TREE_INPUTS, **CAPACITY_INPUTS},
                 state=EDIT_STATES, prevent_initial_call=True)(edit)
    app.callback(
        Output(ids.DRAFT, "data", allow_duplicate=True), Output(ids.SELECTED, "data", allow_duplicate=True),
        Output(ids.CAPACITY, "data", allow_duplicate=True), Output(ids.HIER_MSG, "children"),
        Output(ids.HIER_DOWNLOAD, "data"),
        Input(ids.HIER_CHOICE, "value"), Input(ids.SAVE_HIER, "n_clicks"), Input(ids.HIER_UPLOAD, "contents"),
        Input(ids.EXPORT_HIER, "n_clicks"),
        State(ids.HIER_NAME, "value"), State(ids.HIER_UPLOAD, "filename"), State(ids.DRAFT, "data"),
        prevent_initial_call=True,
    )(partial(hierarchy, uploads))
    app.callback(Output(ids.HIER_CHOICE, "options"), Input(ids.HIER_CHOICE, "id"),
                 Input(ids.HIER_MSG, "children"))(partial(hierarchy_choices, uploads))
    app.callback(
        Output(ids.SHARES, "figure"), Output(ids.COST, "figure"),
        Output(ids.PANEL.summary, "data"), Output(ids.PANEL.summary, "columns"), Output(ids.PAPER, "data"),
        Output(ids.PAPER, "columns"), Output(ids.PAPER_BOX, "style"), Output(ids.EXPORT_RUN, "options"),
        Input(RUNS, "data"), State(ids.HOVER, "data"),
    )(partial(run_charts, results))
    app.callback(Output(ids.TASKS_AT, "figure"), Input(RUNS, "data"),
                 Input(ids.INSTANT, "value"))(partial(tasks_at, results))
    app.callback(Output(ids.SHARES, "figure", allow_duplicate=True), Input(ids.HOVER, "data"), State(RUNS, "data"),
                 prevent_initial_call=True)(partial(highlight_shares, results))
    app.callback(Output(ids.HOVER, "data"), Input(ids.SHARES, "hoverData"),
                 prevent_initial_call=True)(charts.hovered_leaf)
    app.callback(Output(ids.TREE, "stylesheet"), Input(ids.HOVER, "data"))(tree.tree_stylesheet)
    app.callback(Output(ids.INSTANT, "value"), Input(ids.SHARES, "clickData"),
                 prevent_initial_call=True)(instant_clicked)
    app.callback(Output(ids.PANEL.download, "data"), Input({"type": ids.PANEL.export, "frame": ALL}, "n_clicks"),
                 State(ids.EXPORT_RUN, "value"), prevent_initial_call=True)(partial(export, results))
    run_panel.register_headline(app, ids.PANEL, services.results, headlines.fairshare)
