"""The app's frame: header, navigation and routing between pages."""

from __future__ import annotations

from urllib.parse import parse_qs

from dash import Input, Output, dcc, html

from . import (
    batch_page, compare_page, elastic_page, fairshare_page, gallery_page, network_page, scenario_page, workspace_page,
)
from . import sweep_page

LOCATION = "shell-location"
CONTENT = "shell-page-content"

PAGES = [
    ("/", "Fair sharing", fairshare_page),
    ("/batch", "Batch & failures", batch_page),
    ("/network", "Network isolation", network_page),
    ("/memory", "Memory elasticity", elastic_page),
    ("/compare", "Compare", compare_page),
    ("/gallery", "Gallery", gallery_page),
    ("/workspace", "Workspace", workspace_page),
    ("/sweeps", "Sweeps", sweep_page),
]
SCENARIO_PREFIX = "/scenario/"


def layout() -> html.Div:
    return html.Div(
        [
            dcc.Location(id=LOCATION),
            html.Header(
                [
                    html.Span("schedscope", className="brand"),
                    html.Nav([dcc.Link(label, href=path, className="nav-link") for path, label, _ in PAGES]),
                ],
                className="app-header",
            ),
            html.Main(id=CONTENT, className="app-main"),
        ]
    )


def page_for(path: str | None, search: str | None = None):
    """The layout for a URL: a page, or a scenario's permalink (``/scenario/<hash>`` or ``/?scenario=<hash>``)."""
    wanted = parse_qs((search or "").lstrip("?")).get("scenario")
    if wanted:
        return scenario_page.layout(wanted[0])
    if path and path.startswith(SCENARIO_PREFIX):
        return scenario_page.layout(path[len(SCENARIO_PREFIX):])
    pages = {route: page for route, _, page in PAGES}
    page = pages.get(path or "/")
    if page is None:
        return html.Section([html.H2("Not found"), html.P(f"No page at {path}.")], className="panel")
    return page.layout()


def register_callbacks(app) -> None:
    app.callback(Output(CONTENT, "children"), Input(LOCATION, "pathname"), Input(LOCATION, "search"))(page_for)
