"""The Workspace page's layout: a table each of saved scenarios, finished runs, uploaded files and sweeps."""

from __future__ import annotations

from dash import dash_table, html

from ...widgets.fields import upload_box
from . import ids, sharing


def listing_table(component_id: str, columns: list[str], markdown: str) -> dash_table.DataTable:
    return dash_table.DataTable(
        id=component_id, data=[], sort_action="native", page_size=15,
        columns=[{"name": c, "id": c, "presentation": "markdown"} if c == markdown else {"name": c, "id": c}
                 for c in columns],
        style_cell={"fontFamily": "inherit", "textAlign": "left"}, style_table={"overflowX": "auto"},
    )


def layout() -> html.Div:
    return html.Div(
        [
            html.Div([html.H2("Workspace"),
                      html.P("Saved scenarios, finished runs, uploaded files and sweeps, kept on disk across restarts."),
                      html.Button("Refresh", id=ids.REFRESH)], className="page-head"),
            html.Section(
                [html.H3("Saved scenarios"),
                 upload_box(ids.SCENARIO_UPLOAD, "Upload a scenario JSON file"),
                 html.Div(id=ids.UPLOAD_MSG, className="message"),
                 listing_table(ids.SCENARIOS, ["name", "engine", "policy", "saved", "size (bytes)"], "name")],
                className="panel",
            ),
            html.Section([html.H3("Finished runs"),
                          listing_table(ids.RUNS, ["run", "engine", "policy", "seed", "jobs", "wall (s)", "finished"], "run")],
                         className="panel"),
            html.Section([html.H3("Uploaded files"),
                          listing_table(ids.UPLOADS, ["file", "kind", "size (bytes)", "uploaded", "stored as"], "")],
                         className="panel"),
            html.Section([html.H3("Sweeps"),
                          listing_table(ids.SWEEPS, ["sweep", "points", "finished"], "sweep")],
                         className="panel"),
            sharing.panel(),
            html.Div(id=ids.SKIPPED),
        ],
        className="workspace-page",
    )
