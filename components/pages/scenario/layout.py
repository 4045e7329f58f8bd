"""The scenario page's layout: facts, Run and downloads; save and what-if; summary and a timeline chart."""

from __future__ import annotations

from dash import dash_table, dcc, html

from ...services import brief as briefs
from ...services.downloads import download_href
from ...widgets.fields import graph
from . import ids

EXPORTS = ("brief.pdf", "brief.html", "scenario.json", "jobs.csv", "timeline.csv", "summary.csv", "report.html")


def layout(scenario_hash: str) -> html.Div:
    """The permalink's frame: its body (:func:`found` or :func:`not_found`) follows once the hash is looked up."""
    return html.Div([dcc.Store(id=ids.URL_HASH, data=scenario_hash), dcc.Store(id=ids.TITLE_SINK),
                     html.Div(html.P("Looking up the scenario…", className="hint"), id=ids.BODY)])


NOT_FOUND_TITLE = "No such scenario"
#: The browser tab's title on an unknown permalink (the served page's and, once routed, the document's).
NOT_FOUND_TAB = "Not found · schedscope"


def not_found(scenario_hash: str) -> html.Section:
    """What an unknown permalink shows: that nothing has this hash, and where to go instead; no Run."""
    return html.Section(
        [html.H2(NOT_FOUND_TITLE),
         html.P(f"No saved scenario or stored run has the hash {str(scenario_hash)[:80]}. The link may be mistyped, "
                "or its run was evicted from this server's results."),
         html.P([dcc.Link("Saved scenarios and runs (Workspace)", href="/workspace"), " · ",
                 dcc.Link("Start page", href="/")]),
         dcc.Store(id=ids.NOT_FOUND_TITLE, data=NOT_FOUND_TAB)],
        className="panel scenario-not-found",
    )


def found(scenario_hash: str) -> html.Div:
    """A known scenario's page: facts, Run, downloads, save, what-if, summary and chart."""
    return html.Div(
        [
            dcc.Store(id=ids.HASH, data=scenario_hash),
            dcc.Store(id=ids.VERSION, data=0),
            dcc.Download(id=ids.DOWNLOAD),
            html.Div([html.H2("Scenario", id=ids.TITLE)], className="page-head"),
            html.Div(
                [
                    html.Section(
                        [html.Div(id=ids.META), html.Div(id=ids.STATUS, className="message"),
                         html.Div([html.Button("Run", id=ids.RUN, className="primary"),
                                   html.Button("Cancel", id=ids.CANCEL, disabled=True)], className="button-row"),
                         html.Progress(id=ids.PROGRESS, value="0", max="100"),
                         html.Div([html.A(name, href=briefs.run_href(scenario_hash, name.split(".")[1]),
                                          id={"type": ids.BRIEF, "file": name}, className="button brief")
                                   for name in EXPORTS if name.startswith("brief.")]
                                  # The brief and the report are files from their routes (their HTML carries
                                  # plotly.js, 4.6 MB: over any callback response's cap).
                                  + [html.A("report.html", href=briefs.report_href(scenario_hash),
                                            id={"type": ids.BRIEF, "file": "report.html"}, className="button")]
                                  + [html.Button(name, id={"type": ids.EXPORT, "file": name}) for name in EXPORTS
                                     if name == "scenario.json"]
                                  # Frames are files from the download route, streamed: never a callback response.
                                  + [html.A(name, href=download_href(scenario_hash, name.removesuffix(".csv"),
                                                                     f"{scenario_hash[:12]}-{name}"),
                                            download=f"{scenario_hash[:12]}-{name}", className="button")
                                     for name in EXPORTS if name.endswith(".csv")],
                                  className="button-row export"),
                         html.Div(id=ids.EXPORT_MSG, className="message")],
                        className="panel",
                    ),
                    html.Section(
                        [html.H3("Save"),
                         html.Div([dcc.Input(id=ids.SAVE_NAME, type="text", placeholder="name"),
                                   html.Button("Save", id=ids.SAVE)], className="button-row"),
                         html.Div(id=ids.SAVE_MSG, className="message"),
                         html.H3("What if"),
                         html.Div([dcc.Dropdown(id=ids.WHATIF_POLICY, clearable=False, className="narrow"),
                                   dcc.Input(id=ids.WHATIF_SEED, type="number", min=0, step=1, value=0),
                                   html.Button("Run what-if", id=ids.WHATIF_RUN, className="primary")],
                                  className="button-row"),
                         html.Div(id=ids.WHATIF_MSG, className="message"),
                         dash_table.DataTable(id=ids.WHATIF_TABLE, data=[], columns=[], style_cell={"fontFamily": "inherit"},
                                              style_table={"overflowX": "auto"})],
                        className="panel",
                    ),
                ],
                className="two-graphs",
            ),
            html.Section(
                [html.Div(id=ids.AXIS_TIPS, hidden=True, className="axis-tooltips"),
                 dash_table.DataTable(id=ids.SUMMARY, data=[], columns=[], style_cell={"fontFamily": "inherit"},
                                      style_cell_conditional=[{"if": {"column_id": "Value"}, "textAlign": "right"}],
                                      tooltip_delay=200, tooltip_duration=None),
                 html.Div([dcc.Dropdown(id=ids.METRIC, placeholder="timeline metric", className="narrow"),
                           dcc.Dropdown(id=ids.ENTITY, placeholder="entity", className="narrow")], className="button-row"),
                 graph(ids.CHART)],
                className="panel",
            ),
            html.Details([html.Summary("Scenario JSON"), html.Pre(id=ids.JSON_VIEW)], className="panel"),
        ],
        className="scenario-page",
    )
