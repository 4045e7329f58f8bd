"""The Sweeps page's callbacks: module-level functions, the sweep store passed in (see :func:`register`)."""

from __future__ import annotations

from functools import partial

from dash import ALL, Input, Output, State, ctx, no_update

from sched_engine import ScenarioError

from ...figures import sweeps as figures
from ...services import prepared as prepared_files
from ...services.progress import POLL_MS
from ...widgets.fields import error, ok
from . import form, ids, results, store
from .layout import shown

PARAMS = {"type": ids.PARAM, "kind": ALL, "name": ALL}
#: The workload field of the kind that takes uploads (:data:`.form.UPLOADS_KIND`).
TRACE = {"type": ids.PARAM, "kind": form.UPLOADS_KIND, "name": "trace"}


def kind_chosen(kind, boxes):
    """Show the chosen kind's parameter box only, and say what the kind runs."""
    return [shown(box["kind"] == kind) for box in boxes], form.DESCRIPTIONS.get(kind, "")


def allowed_uploads(uploads) -> tuple[str, ...]:
    """The upload references the user may sweep: their own uploaded traces and those shared with them
    (``uploads`` is the user's view with a login on), never one named only by a guessed hash."""
    return tuple(option["value"] for option in form.upload_options(uploads))


def workload_choices(uploads, kind, chosen):
    """The uploading kind's workload choices: the samples, then the user's uploaded traces.

    A workload the user may not choose (a link's upload that is not theirs,
    or no longer stored -- the same words for both, so a guessed hash tells
    nothing) gives way to the kind's default sample, and the page says so.
    """
    del kind   # the trigger: the page opened, or another kind chosen and back
    options = form.workload_options(uploads)
    if chosen in [option["value"] for option in options]:
        return options, no_update, no_update
    default = form.PAGE_DEFAULTS[form.UPLOADS_KIND]["trace"]
    return options, default, error(f"The link's workload ({str(chosen)[:19]}…) is none of your uploaded traces, "
                                   f"or is no longer stored: upload it on the Batch page, or calibrate {default} "
                                   "meanwhile.")


def point_count(uploads, kind, values, param_ids):
    text, fine = form.preview(kind, param_ids, values, allowed_uploads(uploads))
    return ok(text) if fine else error(text)


def run(sweeps, uploads, set_progress, clicks, kind, values, param_ids):
    """Run the form's sweep (unless stored), reporting runs done / total; keeps the previous results on an error."""
    def report(done, total):
        set_progress((str(done), str(max(total, 1)), f"{done} / {total} runs"))

    try:
        key, message, _ = store.run_form(sweeps, kind, param_ids, values, report, allowed_uploads(uploads))
    except ScenarioError as exc:
        return no_update, error(f"Not run: {exc}. The previous results stay.")
    return {"key": key, "run": clicks}, ok(message)


def opened(sweeps, link):
    """Show the sweep a ``/sweeps?sweep=<key>`` link names, when the user sees it; else keep the last one."""
    key = link.get("key") if isinstance(link, dict) else None
    if not sweeps.has(key):
        return no_update, (error("No sweep of yours at this address (not run, or not shared with you).")
                           if key else no_update)
    return {"key": key, "run": 0}, ok("Opened a stored sweep.")


def finished(sweeps, last):
    """The progress bar of the last sweep: full when it is stored, empty otherwise."""
    record = sweeps.get(last["key"]) if last and last.get("key") else None
    if record is None:
        return "0", "1", ""
    runs = len(record["table"])
    return str(runs), str(max(runs, 1)), f"{runs} / {runs} runs done"


def metrics(sweeps, last, chosen):
    """The plot's metric choices for the last sweep's kind, keeping the chosen one while offered."""
    record = sweeps.get(last["key"]) if last and last.get("key") else None
    options = figures.metric_options(record["spec"]["kind"]) if record else []
    values = [o["value"] for o in options]
    return options, chosen if chosen in values else (values[0] if values else None)


def shown_results(sweeps, uploads, last, metric):
    summary, points, figure, heading = results.results(sweeps, last, metric)
    labels = form.upload_labels(uploads)
    return (summary, results.columns(summary), points, results.columns(points), figure, heading,
            results.verdict(sweeps, last, labels))


def export(sweeps, prepared, clicks, last):
    exported = results.export_csv(sweeps, last, ctx.triggered_id["table"]) if any(clicks or []) else None
    if exported is None:
        return no_update
    name, text = exported
    return prepared.put(text, name)   # a sweep's points grow with the sweep: a prepared file, never a response


def register(app, services) -> None:
    """Wire the page to ``services.sweeps`` (the :class:`~.store.SweepStore` of gathered sweeps)."""
    sweeps, uploads = services.sweeps, services.uploads
    app.callback(Output({"type": ids.PARAM_BOX, "kind": ALL}, "style"), Output(ids.KIND_HINT, "children"),
                 Input(ids.KIND, "value"), State({"type": ids.PARAM_BOX, "kind": ALL}, "id"))(kind_chosen)
    app.callback(Output(TRACE, "options"), Output(TRACE, "value"), Output(ids.LINK_MSG, "children"),
                 Input(ids.KIND, "value"), State(TRACE, "value"))(partial(workload_choices, uploads))
    app.callback(Output(ids.POINTS, "children"), Input(ids.KIND, "value"), Input(PARAMS, "value"),
                 State(PARAMS, "id"))(partial(point_count, uploads))

    @app.callback(
        Output(ids.LAST, "data"), Output(ids.RUN_MSG, "children"),
        Input(ids.RUN, "n_clicks"), State(ids.KIND, "value"), State(PARAMS, "value"), State(PARAMS, "id"),
        background=True, interval=POLL_MS,
        running=[(Output(ids.RUN, "disabled"), True, False), (Output(ids.CANCEL, "disabled"), False, True)],
        cancel=[Input(ids.CANCEL, "n_clicks")],
        progress=[Output(ids.PROGRESS, "value"), Output(ids.PROGRESS, "max"), Output(ids.PROGRESS_TEXT, "children")],
        prevent_initial_call=True,
    )
    def _run(set_progress, clicks, kind, values, param_ids):   # a function of its own: Dash names a background job by its source
        return run(sweeps, uploads, set_progress, clicks, kind, values, param_ids)

    app.callback(Output(ids.LAST, "data", allow_duplicate=True), Output(ids.RUN_MSG, "children", allow_duplicate=True),
                 Input(ids.OPEN, "data"), prevent_initial_call="initial_duplicate")(partial(opened, sweeps))
    app.callback(Output(ids.PROGRESS, "value", allow_duplicate=True), Output(ids.PROGRESS, "max", allow_duplicate=True),
                 Output(ids.PROGRESS_TEXT, "children", allow_duplicate=True), Input(ids.LAST, "data"),
                 prevent_initial_call="initial_duplicate")(partial(finished, sweeps))
    app.callback(Output(ids.METRIC, "options"), Output(ids.METRIC, "value"), Input(ids.LAST, "data"),
                 State(ids.METRIC, "value"))(partial(metrics, sweeps))
    app.callback(Output(ids.SUMMARY, "data"), Output(ids.SUMMARY, "columns"), Output(ids.TABLE, "data"),
                 Output(ids.TABLE, "columns"), Output(ids.GRAPH, "figure"), Output(ids.HEADING, "children"),
                 Output(ids.VERDICT, "children"),
                 Input(ids.LAST, "data"), Input(ids.METRIC, "value"))(partial(shown_results, sweeps, uploads))
    app.callback(Output(ids.DOWNLOAD, "href"), Input({"type": ids.EXPORT_BUTTONS, "table": ALL}, "n_clicks"),
                 State(ids.LAST, "data"), prevent_initial_call=True)(partial(export, sweeps, services.prepared))
    prepared_files.register_link(app, ids.DOWNLOAD)
