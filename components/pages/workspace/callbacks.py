"""The Workspace page's callbacks: module-level functions, the app's stores passed in (see :func:`register`)."""

from __future__ import annotations

from functools import partial

from dash import Input, Output, State, dcc, html

from sched_engine import ScenarioError

from ...services.access import RUN, SCENARIO, SWEEP, UPLOAD
from ...services.workspace import permalink
from ...widgets.fields import error
from . import ids, lists, sharing


def listed(services, _, __, contents, filename):
    """The four lists, the unreadable files and the sharing panel, after saving an uploaded scenario (if one came)
    or sharing an item."""
    message = ""
    if contents:
        try:
            entry = lists.save_uploaded_scenario(contents, filename, services.scenarios)
            link = permalink(entry["hash"])
            message = html.Span(["Saved ", html.B(entry["name"]), ": ", dcc.Link(link, href=link)], className="ok")
        except ScenarioError as exc:
            message = error(f"Not saved: {exc}")
    scenarios, runs, uploads = services.scenarios.listing(), services.results.listing(), services.uploads.listing()
    sweeps = services.sweeps.listing() if services.sweeps is not None else []
    before, *panel = sharing.state(services, scenarios, runs, uploads, sweeps)
    return (lists.scenario_rows(scenarios, before[SCENARIO]), lists.run_rows(runs, before[RUN]),
            lists.upload_rows(uploads, before[UPLOAD]), lists.sweep_rows(sweeps, before[SWEEP]), message,
            lists.skipped_section(services.skipped() if services.skipped else []), *panel)


def register(app, services) -> None:
    """Wire the page to the ResultCache, UploadStore, ScenarioStore and SweepStore; ``services.skipped()`` lists
    unreadable files."""
    app.callback(
        Output(ids.SCENARIOS, "data"), Output(ids.RUNS, "data"), Output(ids.UPLOADS, "data"), Output(ids.SWEEPS, "data"),
        Output(ids.UPLOAD_MSG, "children"), Output(ids.SKIPPED, "children"),
        Output(ids.SHARE_ITEM, "options"), Output(ids.SHARED, "children"), Output(ids.SHARE_PANEL, "style"),
        Input(ids.REFRESH, "n_clicks"), Input(ids.SHARE_MSG, "children"), Input(ids.SCENARIO_UPLOAD, "contents"),
        State(ids.SCENARIO_UPLOAD, "filename"),
    )(partial(listed, services))
    app.callback(Output(ids.SHARE_WITH, "value"), Output(ids.SHARE_EVERYONE, "value"),
                 Input(ids.SHARE_ITEM, "value"))(partial(sharing.chosen, services))
    app.callback(Output(ids.SHARE_MSG, "children"), Input(ids.SHARE, "n_clicks"), State(ids.SHARE_ITEM, "value"),
                 State(ids.SHARE_WITH, "value"), State(ids.SHARE_EVERYONE, "value"),
                 prevent_initial_call=True)(partial(sharing.share, services))
