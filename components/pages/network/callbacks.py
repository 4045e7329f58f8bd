"""The Network isolation page's callbacks: module-level functions, the app's stores passed in (see :func:`register`)."""

from __future__ import annotations

from functools import partial

import pandas as pd
from dash import ALL, Input, Output, State, ctx, no_update

from ...services.csv_export import send_csv
from ...services.runs import loaded_runs
from ...widgets import run_panel, time_window
from . import charts, draft, ids, run
from .setups import APP_GEN_FIELDS, MACHINE_GEN_FIELDS

RUNS = ids.PANEL.runs
#: The controls a preset sets, in the order of :func:`apply_preset`'s outputs after the draft and its tables.
PRESET_CONTROLS = ("machine_mode", "app_mode", "arrivals", "pattern", "schemes", "placement", "seed")

# The draft changes through three callbacks, one per group of inputs: the presets, the two tables, the
# uploaded application list. Each applies draft.edit_draft to its trigger and sets what its group changes.


def edited(uploads, model, **given) -> dict:
    """The changes, by name, of the action that fired (see :func:`draft.edit_draft`)."""
    payload = {"contents": None, "filename": None, "choice": None, "machines": [], "apps": [],
               **{key: value for key, value in given.items() if value is not None}}
    return draft.edit_draft(ctx.triggered_id, model, payload, uploads)


def apply_preset(uploads, _fig1, _fig6, model):
    """A preset: the draft, its tables and messages, and the form's controls and generator fields."""
    out = edited(uploads, model)
    settings = out["settings"]
    return (*[out[name] for name in ("draft", "machines", "apps", "machines_msg", "apps_msg")],
            *[settings[k] for k in PRESET_CONTROLS],
            [settings["machine_gen"][k] for k, _ in MACHINE_GEN_FIELDS],
            [settings["app_gen"][k] for k, _ in APP_GEN_FIELDS])


def edit_tables(uploads, _add_machine, _add_app, _machines_edited, _apps_edited, machines, apps, model):
    """A row added or a table edited: the draft, the table rows and the tables' messages."""
    out = edited(uploads, model, machines=machines, apps=apps)
    return tuple(out.get(name, no_update) for name in ("draft", "machines", "apps", "machines_msg", "apps_msg"))


def edit_upload(uploads, contents, choice, filename, model):
    """An application list uploaded or opened: the draft and the applications' message."""
    out = edited(uploads, model, contents=contents, choice=choice, filename=filename)
    return out.get("draft", no_update), out.get("apps_msg", no_update)


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
    app.callback(
        Output(ids.DRAFT, "data", allow_duplicate=True), Output(ids.MACHINES, "data", allow_duplicate=True),
        Output(ids.APPS, "data", allow_duplicate=True), Output(ids.MACHINES_MSG, "children", allow_duplicate=True),
        Output(ids.APPS_MSG, "children", allow_duplicate=True),
        Output(ids.MACHINE_MODE, "value"), Output(ids.APP_MODE, "value"), Output(ids.ARRIVALS, "value"),
        Output(ids.PATTERN, "value"), Output(ids.SCHEMES, "value"), Output(ids.PLACEMENT, "value"),
        Output(ids.SEED, "value"),
        Output({"type": ids.MACHINE_GEN, "name": ALL}, "value"), Output({"type": ids.APP_GEN, "name": ALL}, "value"),
        Input(ids.PRESET_FIG1, "n_clicks"), Input(ids.PRESET_FIG6, "n_clicks"), State(ids.DRAFT, "data"),
        prevent_initial_call=True,
    )(partial(apply_preset, uploads))
    app.callback(
        Output(ids.DRAFT, "data", allow_duplicate=True), Output(ids.MACHINES, "data", allow_duplicate=True),
        Output(ids.APPS, "data", allow_duplicate=True), Output(ids.MACHINES_MSG, "children", allow_duplicate=True),
        Output(ids.APPS_MSG, "children", allow_duplicate=True),
        Input(ids.ADD_MACHINE, "n_clicks"), Input(ids.ADD_APP, "n_clicks"), Input(ids.MACHINES, "data_timestamp"),
        Input(ids.APPS, "data_timestamp"),
        State(ids.MACHINES, "data"), State(ids.APPS, "data"), State(ids.DRAFT, "data"),
        prevent_initial_call=True,
    )(partial(edit_tables, uploads))
    app.callback(
        Output(ids.DRAFT, "data", allow_duplicate=True), Output(ids.APPS_MSG, "children", allow_duplicate=True),
        Input(ids.APPS_UPLOAD, "contents"), Input(ids.APPS_CHOICE, "value"),
        State(ids.APPS_UPLOAD, "filename"), State(ids.DRAFT, "data"),
        prevent_initial_call=True,
    )(partial(edit_upload, uploads))
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
