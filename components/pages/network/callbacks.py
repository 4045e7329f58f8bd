"""The Network isolation page's callbacks: module-level functions, the app's stores passed in (see :func:`register`)."""

from __future__ import annotations

from functools import partial

import pandas as pd
from dash import ALL, Input, Output, State, ctx, no_update

from ...figures import headlines
from ...services.csv_export import send_csv
from ...services.runs import loaded_runs
from ...widgets import run_panel, time_window
from . import charts, draft, ids, run
from .setups import APP_GEN_FIELDS, MACHINE_GEN_FIELDS

RUNS = ids.PANEL.runs
# The draft's one callback, its inputs in three groups (presets, tables, uploaded list). It stays one
# callback: a second callback setting the draft would set it with allow_duplicate, and the browser does not
# hold back a Run pressed while such an edit is on its way, so a run could miss the edit.
PRESET_INPUTS = {"fig1": Input(ids.PRESET_FIG1, "n_clicks"), "fig6": Input(ids.PRESET_FIG6, "n_clicks")}
TABLE_INPUTS = {"add_machine": Input(ids.ADD_MACHINE, "n_clicks"), "add_app": Input(ids.ADD_APP, "n_clicks"),
                "machines_edited": Input(ids.MACHINES, "data_timestamp"),
                "apps_edited": Input(ids.APPS, "data_timestamp")}
UPLOAD_INPUTS = {"contents": Input(ids.APPS_UPLOAD, "contents"), "choice": Input(ids.APPS_CHOICE, "value")}
EDIT_STATES = {"filename": State(ids.APPS_UPLOAD, "filename"), "machines": State(ids.MACHINES, "data"),
               "apps": State(ids.APPS, "data"), "model": State(ids.DRAFT, "data")}
#: What an edit may change, by the names :func:`draft.edit_draft` gives them; then what a preset sets.
EDIT_OUTPUTS = {"draft": Output(ids.DRAFT, "data"), "machines": Output(ids.MACHINES, "data"),
                "apps": Output(ids.APPS, "data"), "machines_msg": Output(ids.MACHINES_MSG, "children"),
                "apps_msg": Output(ids.APPS_MSG, "children"),
                **{name: Output(component, "value") for name, component in (
                    ("machine_mode", ids.MACHINE_MODE), ("app_mode", ids.APP_MODE), ("arrivals", ids.ARRIVALS),
                    ("pattern", ids.PATTERN), ("schemes", ids.SCHEMES), ("placement", ids.PLACEMENT),
                    ("seed", ids.SEED))},
                "machine_gen": Output({"type": ids.MACHINE_GEN, "name": ALL}, "value"),
                "app_gen": Output({"type": ids.APP_GEN, "name": ALL}, "value")}
#: The controls a preset sets.
PRESET_CONTROLS = ("machine_mode", "app_mode", "arrivals", "pattern", "schemes", "placement", "seed")


def edit(uploads, contents, choice, filename, machines, apps, model, **_clicks) -> dict:
    """One input action on the draft (see :func:`draft.edit_draft`): what it changes, by output name.

    A preset also sets the form's controls and generator fields.
    """
    payload = {"contents": contents, "filename": filename, "machines": machines or [], "apps": apps or [],
               "choice": choice}
    out = draft.edit_draft(ctx.triggered_id, model, payload, uploads)
    changes = {name: out[name] for name in ("draft", "machines", "apps", "machines_msg", "apps_msg") if name in out}
    settings = out.get("settings")
    if settings:
        changes.update({name: settings[name] for name in PRESET_CONTROLS},
                       machine_gen=[settings["machine_gen"][k] for k, _ in MACHINE_GEN_FIELDS],
                       app_gen=[settings["app_gen"][k] for k, _ in APP_GEN_FIELDS])
    return {**dict.fromkeys(EDIT_OUTPUTS, no_update), "machine_gen": [no_update] * len(MACHINE_GEN_FIELDS),
            "app_gen": [no_update] * len(APP_GEN_FIELDS), **changes}


def list_choices(uploads, _, __):
    return draft.app_list_choices(uploads)


def table_rows(_, model):
    return model["machines"], model["apps"]


def shown_boxes(machine_mode, app_mode):
    """Which set-up boxes show: the generator, table or upload of machines and of applications."""
    def shown(flag):
        return {} if flag else {"display": "none"}
    return (shown(machine_mode == "generate"), shown(machine_mode == "table"), shown(app_mode == "generate"),
            shown(app_mode == "table"), shown(app_mode == "upload"))


def summary(results, records, chosen):
    return charts.summary_outputs(loaded_runs(results, records), chosen)


def selected_app(*_clicks):
    return charts.clicked_app(ctx.triggered[0]["value"] if ctx.triggered else None)


def clicked_instant(click):
    points = (click or {}).get("points") or []
    return round(float(points[0]["x"]), 4) if points else no_update


def comparison(results, records, selected, window):
    return charts.compare_outputs(loaded_runs(results, records), selected, window)


def heatmap(results, label, selected, window, records):
    return charts.heatmap_figure(loaded_runs(results, records), label, selected, window)


def placement(results, label, selected, instant, records):
    return charts.placement_figure(loaded_runs(results, records), label, selected, instant)


def export(results, clicks, label, records):
    """``network-schemes.csv`` (the summary) or one frame of the scheme shown below."""
    if not any(clicks or []) or not records:
        return no_update
    loaded = loaded_runs(results, records)
    frame = ctx.triggered_id["frame"]
    if frame == "schemes":
        return send_csv(pd.DataFrame(charts.summary_rows(loaded)), "network-schemes.csv")
    chosen = next(((r, res) for r, res in loaded if r["label"] == label), None)
    if chosen is None:
        return no_update
    record, result = chosen
    return send_csv(result.frames()[frame], f"network-{record['policy']}-{frame}.csv")


def register(app, services) -> None:
    """Wire the page to ``services.results`` (the ResultCache) and ``services.uploads`` (the UploadStore)."""
    results, uploads = services.results, services.uploads
    run_panel.register(app, ids.PANEL, results, partial(run.plan, uploads), [
        State(ids.DRAFT, "data"), State(ids.MACHINE_MODE, "value"), State(ids.APP_MODE, "value"),
        State(ids.ARRIVALS, "value"), State(ids.PATTERN, "value"), State({"type": ids.MACHINE_GEN, "name": ALL}, "value"),
        State({"type": ids.APP_GEN, "name": ALL}, "value"), State(ids.SCHEMES, "value"),
        State(ids.PLACEMENT, "value"), State(ids.SEED, "value")],
        refused_note=". Earlier results stay.", **run.MESSAGE)
    # runs of seconds: the window to 0.1 ms
    time_window.register(app, ids.WINDOW, (ids.ISOLATION, ids.HEATMAP), ids.RESET_WINDOW, decimals=4)
    app.callback(output=EDIT_OUTPUTS, inputs={**PRESET_INPUTS, **TABLE_INPUTS, **UPLOAD_INPUTS},
                 state=EDIT_STATES, prevent_initial_call=True)(partial(edit, uploads))
    app.callback(Output(ids.APPS_CHOICE, "options"), Input(ids.APPS_CHOICE, "id"),
                 Input(ids.DRAFT, "data"))(partial(list_choices, uploads))
    app.callback(Output(ids.MACHINES, "data", allow_duplicate=True), Output(ids.APPS, "data", allow_duplicate=True),
                 Input(ids.MACHINES, "id"), State(ids.DRAFT, "data"),
                 prevent_initial_call="initial_duplicate")(table_rows)
    app.callback(Output(ids.MACHINE_GEN_BOX, "style"), Output(ids.MACHINES_BOX, "style"),
                 Output(ids.APP_GEN_BOX, "style"), Output(ids.APPS_BOX, "style"), Output(ids.UPLOAD_BOX, "style"),
                 Input(ids.MACHINE_MODE, "value"), Input(ids.APP_MODE, "value"))(shown_boxes)
    app.callback(
        Output(ids.PANEL.summary, "data"), Output(ids.PANEL.summary, "columns"), Output(ids.DETAIL_SCHEME, "options"),
        Output(ids.DETAIL_SCHEME, "value"), Output(ids.APP, "options"), Output(ids.INSTANT, "value"),
        Input(RUNS, "data"), State(ids.DETAIL_SCHEME, "value"),
    )(partial(summary, results))
    app.callback(
        Output(ids.APP, "value"),
        Input(ids.ISOLATION, "clickData"), Input(ids.CDF, "clickData"), Input(ids.DURATIONS, "clickData"),
        Input(ids.PLACEMENT_VIEW, "clickData"), prevent_initial_call=True,
    )(selected_app)
    app.callback(Output(ids.INSTANT, "value", allow_duplicate=True), Input(ids.ISOLATION, "clickData"),
                 prevent_initial_call=True)(clicked_instant)
    app.callback(
        Output(ids.ISOLATION, "figure"), Output(ids.CDF, "figure"), Output(ids.DURATIONS, "figure"),
        Output(ids.WINDOW_MSG, "children"),
        Input(RUNS, "data"), Input(ids.APP, "value"), Input(ids.WINDOW, "data"),
    )(partial(comparison, results))
    app.callback(
        Output(ids.HEATMAP, "figure"),
        Input(ids.DETAIL_SCHEME, "value"), Input(ids.APP, "value"), Input(ids.WINDOW, "data"), State(RUNS, "data"),
    )(partial(heatmap, results))
    app.callback(
        Output(ids.PLACEMENT_VIEW, "figure"),
        Input(ids.DETAIL_SCHEME, "value"), Input(ids.APP, "value"), Input(ids.INSTANT, "value"), State(RUNS, "data"),
    )(partial(placement, results))
    app.callback(
        Output(ids.PANEL.download, "data"), Input({"type": ids.PANEL.export, "frame": ALL}, "n_clicks"),
        State(ids.DETAIL_SCHEME, "value"), State(RUNS, "data"), prevent_initial_call=True,
    )(partial(export, results))
    run_panel.register_headline(app, ids.PANEL, services.results, headlines.network)
