"""The Compare page's layout: the runs and their summary table, then the overlaid timelines."""

from __future__ import annotations

from dash import dash_table, dcc, html

from ...figures.compare import OVERLAY_HEIGHT
from ...services import prepared
from ...widgets.fields import graph
from . import ids, seeds


def layout() -> html.Div:
    return html.Div(
        [
            dcc.Download(id=ids.DOWNLOAD),
            dcc.Store(id=ids.SEEDS_STORE, storage_type="local", data=None),
            html.Div([html.H2("Compare"),
                      html.P("Pick finished runs from any page: the first is the reference.")],
                     className="page-head"),
            html.Section(
                [
                    html.Div([dcc.Dropdown(id=ids.RUNS, multi=True, placeholder="finished runs, newest first",
                                           persistence=True, className="wide"),
                              html.Button("Refresh list", id=ids.REFRESH)], className="button-row"),
                    html.Div(id=ids.MESSAGE, className="message"),
                    dash_table.DataTable(id=ids.TABLE, data=[], columns=[], sort_action="native",
                                         style_cell={"fontFamily": "inherit"}, style_table={"overflowX": "auto"}),
                    # The report's hidden link sits beside its button: why a report was not saved shows there.
                    html.Div([html.Button("comparison.csv", id=ids.EXPORT_CSV),
                              html.Button("report.html", id=ids.EXPORT_REPORT), prepared.link(ids.REPORT_LINK)],
                             className="button-row export"),
                ],
                className="panel",
            ),
            html.Section(
                [
                    html.Div([dcc.Dropdown(id=ids.METRIC, placeholder="timeline metric", className="narrow"),
                              dcc.Dropdown(id=ids.ENTITY, placeholder="entity", className="narrow")],
                             className="button-row"),
                    overlay_graph(),
                ],
                className="panel",
            ),
            html.Section(
                [
                    html.H3("Job by job: the first two runs"),
                    html.P(id=ids.PAIRED_TEXT, className="headline"),
                    html.P(id=ids.SEEDS_TEXT, className="headline"),
                    seeds.controls(),
                    graph(ids.PAIRED_HISTOGRAM),
                    graph(ids.PAIRED_USERS),
                ],
                className="panel",
            ),
        ],
        className="compare-page",
    )


def overlay_graph():
    """The overlay chart in a box as tall as its figure that clips it: however a window resize lays the chart out
    meanwhile, it never spills over the Seeds box and its buttons below. It follows the window's width."""
    overlay = graph(ids.OVERLAY, height=OVERLAY_HEIGHT)
    overlay.responsive = True
    return overlay
