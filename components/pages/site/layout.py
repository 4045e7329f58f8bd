"""The Site study page's layout: the site (trace, organisation, hardware), the policies, the run, the charts."""

from __future__ import annotations

from dash import dash_table, dcc, html

from sched_engine.registry import REGISTRY

from ...widgets import run_panel
from ...widgets.fields import field, graph, upload_box
from . import ids

WEIGHTINGS = [{"label": "equal", "value": "equal"}, {"label": "by CPU-hours in the log", "value": "cpu_hours"}]
FAILURES = [{"label": "none", "value": "none"}, {"label": "synthetic", "value": "synthetic"}]


def layout() -> html.Div:
    return html.Div(className="page", children=[
        run_panel.store(ids.PANEL),
        dcc.Store(id=ids.WINDOW, data=None),
        dcc.Store(id=ids.GROUP, data=None),
        run_panel.download(ids.PANEL),
        html.H2("Site study"),
        html.P("One site's trace through its organisation's fair share, backfilling, failures and memory: "
               "which policy gives each group its share?"),
        html.Div(id=ids.STAKEHOLDERS, className="stakeholders"),
        html.Div(className="form-row", children=[
            html.Div(className="form-column", children=[
                html.H3("The site"),
                field("Trace", dcc.Dropdown(id=ids.TRACE, value="hpc2n-excerpt.swf", clearable=False)),
                upload_box(ids.UPLOAD, "Upload a trace (SWF, GWF or CSV, .gz too)"),
                html.Div(id=ids.UPLOAD_MSG),
                field("First jobs only", dcc.Input(id=ids.MAX_JOBS, type="number", min=1, step=1, value=2000),
                      "empty: the whole trace"),
                field("Group weights", dcc.RadioItems(id=ids.WEIGHTING, options=WEIGHTINGS, value="equal")),
                html.Div(id=ids.HARDWARE),
                dash_table.DataTable(id=ids.ORGANISATION, page_size=10, style_table={"maxWidth": "480px"},
                                     columns=[{"name": c, "id": c} for c in ("group", "users", "weight",
                                                                             "entitlement")]),
            ]),
            html.Div(className="form-column", children=[
                html.H3("Policies"),
                field("Queue order", dcc.Checklist(id=ids.POLICIES, value=["fcfs", "hdrf"], options=[
                    {"label": entry.label, "value": entry.name} for entry in REGISTRY.policies(ids.ENGINE)])),
                field("Backfilling", dcc.RadioItems(id=ids.BACKFILL, value="easy", options=[
                    {"label": "none", "value": "none"}, {"label": "EASY", "value": "easy"}])),
                field("Half-life of past usage (s)", dcc.Input(id=ids.HALF_LIFE, type="number", min=0, value=0),
                      "0: shares of the running jobs only"),
                field("Failures", dcc.RadioItems(id=ids.FAILURES, options=FAILURES, value="none")),
                dcc.Checklist(id=ids.ELASTIC, value=[], options=[
                    {"label": "memory-elastic starts (spill penalty, at least half the memory)", "value": "on"}]),
                *run_panel.controls(ids.PANEL),
            ]),
        ]),
        run_panel.summary_table(ids.PANEL),
        run_panel.export_row(ids.PANEL, ("jobs", "timeline", "summary")),
        html.Div([html.Span(id=ids.GROUP_MSG), html.Button("Whole run", id=ids.RESET_WINDOW)]),
        graph(ids.SHARES), graph(ids.ISOLATION), graph(ids.UTILISATION), graph(ids.WAITS), graph(ids.KILLED),
    ])
