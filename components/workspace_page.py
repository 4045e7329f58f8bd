"""The "Workspace" page: saved scenarios, finished runs and uploads kept in the data directory.

Everything listed here is on disk (content-addressed, written atomically)
and survives a server restart. Scenarios and runs link to their permalink
page; a scenario JSON file can be uploaded to save it (it is validated
first; a bad file is reported with its line and field and nothing changes).
"""

from __future__ import annotations

import base64
import binascii

from dash import Input, Output, State, dash_table, dcc, html

from sched_engine import ScenarioError

from .services.workspace import parse_scenario_upload, permalink

SCENARIOS = "workspace-scenarios-table"
RUNS = "workspace-runs-table"
UPLOADS = "workspace-uploads-table"
REFRESH = "workspace-refresh-button"
SCENARIO_UPLOAD = "workspace-scenario-upload"
UPLOAD_MSG = "workspace-upload-message"
SKIPPED = "workspace-skipped-list"


def _link(text: str, scenario_hash: str) -> str:
    return f"[{text.replace('[', '(').replace(']', ')')}]({permalink(scenario_hash)})"


def scenario_rows(entries: list[dict]) -> list[dict]:
    return [{"name": _link(e["name"], e["hash"]), "engine": e["engine"], "policy": e["policy"],
             "saved": e["saved"].replace("T", " ")[:16], "size (bytes)": e["size"]} for e in entries]


def run_rows(entries: list[dict]) -> list[dict]:
    return [{"run": _link(e.get("name") or e["hash"][:12], e["hash"]), "engine": e["engine"], "policy": e["policy"],
             "seed": e["seed"], "jobs": e["jobs"], "wall (s)": round(e["wall_seconds"], 3),
             "finished": e["finished"].replace("T", " ")[:16]} for e in entries]


def upload_rows(entries: list[dict]) -> list[dict]:
    return [{"file": e["label"], "kind": e["kind"], "size (bytes)": e["size"],
             "uploaded": e["uploaded"].replace("T", " ")[:16], "stored as": e["name"][:16] + "…"} for e in entries]


def save_uploaded_scenario(contents: str, filename: str, store) -> dict:
    """Validate an uploaded scenario file and save it (named by its ``name`` field, else the file name)."""
    _, _, encoded = (contents or "").partition(",")
    try:
        data = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise ScenarioError("", "the upload did not arrive as base64 data", source=filename) from None
    scenario = parse_scenario_upload(data, filename)
    name = scenario.get("name") or (filename or "uploaded scenario").rsplit(".", 1)[0]
    return store.save(scenario, name, source=filename)


def _table(component_id: str, columns: list[str], markdown: str) -> dash_table.DataTable:
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
                      html.P("Saved scenarios, finished runs and uploaded files, kept on disk across restarts."),
                      html.Button("Refresh", id=REFRESH)], className="page-head"),
            html.Section(
                [html.H3("Saved scenarios"),
                 dcc.Upload(id=SCENARIO_UPLOAD, className="upload-box",
                            children=html.Div(["Upload a scenario JSON file", html.Br(),
                                               html.Small("drag and drop or click")])),
                 html.Div(id=UPLOAD_MSG, className="message"),
                 _table(SCENARIOS, ["name", "engine", "policy", "saved", "size (bytes)"], "name")],
                className="panel",
            ),
            html.Section([html.H3("Finished runs"),
                          _table(RUNS, ["run", "engine", "policy", "seed", "jobs", "wall (s)", "finished"], "run")],
                         className="panel"),
            html.Section([html.H3("Uploaded files"),
                          _table(UPLOADS, ["file", "kind", "size (bytes)", "uploaded", "stored as"], "")],
                         className="panel"),
            html.Div(id=SKIPPED),
        ],
        className="workspace-page",
    )


def skipped_section(entries: list[dict]):
    """The data directory's unreadable files, one line each ("skipped: file, reason"); nothing when there are none."""
    if not entries:
        return []
    return html.Section([html.H3("Files skipped"),
                         html.P("These files in the data directory could not be read; the app goes on without them.",
                                className="hint"),
                         html.Ul([html.Li(f"skipped: {e['file']}, {e['reason']}") for e in entries])],
                        className="panel")


def register_callbacks(app, results, uploads, store, skipped=None) -> None:
    """Wire the page to the ResultCache, UploadStore and ScenarioStore; ``skipped()`` lists unreadable files."""

    @app.callback(
        Output(SCENARIOS, "data"), Output(RUNS, "data"), Output(UPLOADS, "data"), Output(UPLOAD_MSG, "children"),
        Output(SKIPPED, "children"),
        Input(REFRESH, "n_clicks"), Input(SCENARIO_UPLOAD, "contents"), State(SCENARIO_UPLOAD, "filename"),
    )
    def _lists(_, contents, filename):
        message = ""
        if contents:
            try:
                entry = save_uploaded_scenario(contents, filename, store)
                link = permalink(entry["hash"])
                message = html.Span(["Saved ", html.B(entry["name"]), ": ", dcc.Link(link, href=link)], className="ok")
            except ScenarioError as exc:
                message = html.Span(f"Not saved: {exc}", className="error")
        return (scenario_rows(store.listing()), run_rows(results.listing()), upload_rows(uploads.listing()),
                message, skipped_section(skipped() if skipped else []))
