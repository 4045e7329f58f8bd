"""The Memory elasticity page's callbacks: module-level functions, the app's stores passed in (see :func:`register`)."""

from __future__ import annotations

from functools import partial

from dash import ALL, Input, Output, State, ctx, no_update

from sched_engine import ScenarioError

from ...figures import elastic as figures
from ...figures import headlines
from ...services.csv_export import send_csv
from ...services.runs import loaded_runs
from ...services.uploads import UploadError
from ...widgets import run_panel, time_window
from ...widgets.fields import error, ok
from . import charts, form, ids, run, trace

RUNS = ids.PANEL.runs
RANGE_INPUTS = {"type": ids.RANGE, "name": ALL, "end": ALL}


def form_dependencies(dependency) -> list:
    """The form's values as ``dependency`` (Input or State), in :func:`form.form_values`' argument order."""
    return [dependency(ids.NODES, "value"), dependency(ids.CORES, "value"), dependency(ids.MEMORY, "value"),
            dependency(ids.SOURCE, "value"), dependency(ids.JOBS, "value"), dependency(ids.DISTRIBUTION, "value"),
            dependency(RANGE_INPUTS, "value"), State(RANGE_INPUTS, "id"), dependency(ids.PENALTY_KIND, "value"),
            dependency(ids.FACTOR, "value"), dependency(ids.SHAPE, "value"), dependency(ids.PROFILE_FRACTION, "value"),
            dependency(ids.PROFILE_RATIO, "value")]


def apply_preset(_p, _t, range_ids):
    """A preset's form values; a preset with a listed trace leaves the generator fields as they are."""
    c = form.preset_controls(ctx.triggered_id)
    generated = c["source"] == "generated"
    ranges = [c[i["name"]][i["end"]] if generated else no_update for i in range_ids]
    keep = no_update
    return (c["nodes"], c["cores"], c["node_memory_gb"], c["source"], c["jobs"] if generated else keep,
            c["distribution"] if generated else keep, ranges, c["penalty_kind"], c["factor"], c["policies"],
            c["loaded"] if not generated else keep, f"Preset: {form.PRESETS[ctx.triggered_id][0]}.")


def upload(uploads, contents, filename):
    if not contents:
        return no_update, no_update, no_update
    try:
        ref, message = trace.apply_upload(contents, filename, uploads)
    except (ScenarioError, UploadError) as exc:
        return no_update, no_update, error(f"{filename} not loaded: {exc}. The previous trace stays in use.")
    return ref, "loaded", ok(message)


def open_stored(uploads, name):
    if not name:
        return no_update, no_update, no_update
    try:
        ref, message = trace.open_stored_trace(name, uploads)
    except (ScenarioError, UploadError) as exc:
        return no_update, no_update, error(f"Not loaded: {str(exc).rstrip('.')}. The previous trace stays in use.")
    return ref, "loaded", ok(message)


def stored_choices(uploads, _, __):
    return trace.trace_choices(uploads)


def penalty_profile(kind, factor, shape, fraction, ratio):
    """The penalty's runtime profile, its message and which of the two penalty boxes hide."""
    boxes = (kind == "fitted", kind != "fitted")
    try:
        penalty = form.penalty_from_form(kind, factor, shape, fraction, ratio)
    except ScenarioError as exc:
        return no_update, error(exc), *boxes
    return figures.penalty_profile(penalty), "", *boxes


def facts(uploads, *args):
    """The facts of the trace the next run uses, or why there is none."""
    *values, seed, loaded = args
    try:
        return trace.facts_list(trace.trace_facts(form.build_model(form.form_values(*values), loaded, uploads),
                                                  form.number(seed, "Seed", integer=True, minimum=0)))
    except ScenarioError as exc:
        return error(exc)


def run_results(results, records, chosen):
    loaded = loaded_runs(results, records)
    *outputs, job = charts.results_outputs(loaded, chosen)
    return (*outputs, job, charts.job_options(charts.job_ids(loaded), None, job), 0)


def job_table_page(results, records, page, sort_by):
    return charts.job_table(loaded_runs(results, records), page, sort_by)


def job_search(results, search, records, chosen):
    return charts.job_options(charts.job_ids(loaded_runs(results, records)), search, chosen) if search else no_update


def picked_job(results, click, records):
    if not (click and click.get("points")):
        return no_update, no_update
    job = click["points"][0]["customdata"]
    return job, charts.job_options(charts.job_ids(loaded_runs(results, records)), None, job)


def over_time(results, records, window):
    return charts.over_time_outputs(loaded_runs(results, records), window)


def node_timeline(results, job_id, window, records):
    runs = [(rec["label"], res.timeline) for rec, res in loaded_runs(results, records)]
    return figures.job_node_timeline(runs, job_id, window)


def export(results, clicks, records):
    """One frame of every scheduler of the run, as ``elastic-<frame>.csv``."""
    loaded = loaded_runs(results, records)
    if not any(clicks or []) or not loaded:
        return no_update
    frame = ctx.triggered_id["frame"]
    return send_csv(charts.export_frame(loaded, frame), f"elastic-{frame}.csv")


def register(app, services) -> None:
    """Wire the page to ``services.results`` (the ResultCache) and ``services.uploads`` (the UploadStore)."""
    results, uploads = services.results, services.uploads
    run_panel.register(app, ids.PANEL, results, partial(run.plan, uploads),
                       [*form_dependencies(State), State(ids.SEED, "value"), State(ids.LOADED, "data"),
                        State(ids.POLICIES, "value")],
                       refused_note=". The previous results stay.")
    time_window.register(app, ids.WINDOW, (ids.MEMORY_GRAPH, ids.TASKS_GRAPH, ids.NODE_GRAPH), ids.RESET_WINDOW)
    app.callback(
        Output(ids.NODES, "value"), Output(ids.CORES, "value"), Output(ids.MEMORY, "value"),
        Output(ids.SOURCE, "value"), Output(ids.JOBS, "value"), Output(ids.DISTRIBUTION, "value"),
        Output(RANGE_INPUTS, "value"), Output(ids.PENALTY_KIND, "value"), Output(ids.FACTOR, "value"),
        Output(ids.POLICIES, "value"), Output(ids.LOADED, "data"), Output(ids.TRACE_MSG, "children"),
        Input(ids.PRESET_PAPER, "n_clicks"), Input(ids.PRESET_TWO_JOB, "n_clicks"),
        State(RANGE_INPUTS, "id"), prevent_initial_call=True,
    )(apply_preset)
    app.callback(Output(ids.LOADED, "data", allow_duplicate=True), Output(ids.SOURCE, "value", allow_duplicate=True),
                 Output(ids.TRACE_MSG, "children", allow_duplicate=True),
                 Input(ids.TRACE_UPLOAD, "contents"), State(ids.TRACE_UPLOAD, "filename"),
                 prevent_initial_call=True)(partial(upload, uploads))
    app.callback(Output(ids.LOADED, "data", allow_duplicate=True), Output(ids.SOURCE, "value", allow_duplicate=True),
                 Output(ids.TRACE_MSG, "children", allow_duplicate=True),
                 Input(ids.TRACE_CHOICE, "value"), prevent_initial_call=True)(partial(open_stored, uploads))
    app.callback(Output(ids.TRACE_CHOICE, "options"), Input(ids.TRACE_CHOICE, "id"),
                 Input(ids.LOADED, "data"))(partial(stored_choices, uploads))
    app.callback(Output(ids.PROFILE, "figure"), Output(ids.PENALTY_MSG, "children"), Output(ids.FACTOR_BOX, "hidden"),
                 Output(ids.FITTED_BOX, "hidden"),
                 Input(ids.PENALTY_KIND, "value"), Input(ids.FACTOR, "value"), Input(ids.SHAPE, "value"),
                 Input(ids.PROFILE_FRACTION, "value"), Input(ids.PROFILE_RATIO, "value"))(penalty_profile)
    app.callback(Output(ids.TRACE_INFO, "children"), *form_dependencies(Input), Input(ids.SEED, "value"),
                 Input(ids.LOADED, "data"))(partial(facts, uploads))
    app.callback(
        Output(ids.PANEL.summary, "data"), Output(ids.PANEL.summary, "columns"), Output(ids.RATIO, "children"),
        Output(ids.SCATTER, "figure"), Output(ids.CDF, "figure"), Output(ids.JOB, "value"),
        Output(ids.JOB, "options"), Output(ids.JOB_TABLE, "page_current"),
        Input(RUNS, "data"), State(ids.JOB, "value"),
    )(partial(run_results, results))
    app.callback(
        Output(ids.JOB_TABLE, "data"), Output(ids.JOB_TABLE, "columns"), Output(ids.JOB_TABLE, "page_count"),
        Input(RUNS, "data"), Input(ids.JOB_TABLE, "page_current"), Input(ids.JOB_TABLE, "sort_by"),
    )(partial(job_table_page, results))
    app.callback(Output(ids.JOB, "options", allow_duplicate=True), Input(ids.JOB, "search_value"),
                 State(RUNS, "data"), State(ids.JOB, "value"), prevent_initial_call=True)(partial(job_search, results))
    app.callback(Output(ids.JOB, "value", allow_duplicate=True), Output(ids.JOB, "options", allow_duplicate=True),
                 Input(ids.SCATTER, "clickData"), State(RUNS, "data"),
                 prevent_initial_call=True)(partial(picked_job, results))
    app.callback(Output(ids.MEMORY_GRAPH, "figure"), Output(ids.TASKS_GRAPH, "figure"),
                 Output(ids.WINDOW_MSG, "children"),
                 Input(RUNS, "data"), Input(ids.WINDOW, "data"))(partial(over_time, results))
    app.callback(Output(ids.NODE_GRAPH, "figure"), Input(ids.JOB, "value"), Input(ids.WINDOW, "data"),
                 State(RUNS, "data"))(partial(node_timeline, results))
    app.callback(Output(ids.PANEL.download, "data"), Input({"type": ids.PANEL.export, "frame": ALL}, "n_clicks"),
                 State(RUNS, "data"), prevent_initial_call=True)(partial(export, results))
    run_panel.register_headline(app, ids.PANEL, services.results, headlines.elastic)
