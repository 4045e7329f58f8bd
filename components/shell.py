"""The app's frame: header, navigation and routing between pages."""

from __future__ import annotations

from dash import Input, Output, dcc, html

from . import batch_page, elastic_page, fairshare_page, network_page

LOCATION = "shell-location"
CONTENT = "shell-page-content"

PAGES = [
    ("/", "Fair sharing"),
    ("/batch", "Batch & failures"),
    ("/network", "Network isolation"),
    ("/memory", "Memory elasticity"),
    ("/compare", "Compare"),
]

UPCOMING = {
    "/compare": "Finished runs side by side: summary tables and overlaid timelines on one time axis.",
}


def layout() -> html.Div:
    return html.Div(
        [
            dcc.Location(id=LOCATION),
            html.Header(
                [
                    html.Span("schedscope", className="brand"),
                    html.Nav([dcc.Link(label, href=path, className="nav-link") for path, label in PAGES]),
                ],
                className="app-header",
            ),
            html.Main(id=CONTENT, className="app-main"),
        ]
    )


def page_for(path: str | None):
    """The layout for a URL path (unknown paths say so)."""
    if path in (None, "", "/"):
        return fairshare_page.layout()
    if path == "/batch":
        return batch_page.layout()
    if path == "/network":
        return network_page.layout()
    if path == "/memory":
        return elastic_page.layout()
    if path in UPCOMING:
        title = dict(PAGES)[path]
        return html.Section(
            [html.H2(title), html.P("This page is not built yet. It will offer:"), html.P(UPCOMING[path])],
            className="panel upcoming",
        )
    return html.Section([html.H2("Not found"), html.P(f"No page at {path}.")], className="panel")


def register_callbacks(app) -> None:
    app.callback(Output(CONTENT, "children"), Input(LOCATION, "pathname"))(page_for)
