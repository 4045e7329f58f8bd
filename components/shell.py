"""The app's frame: header, navigation and routing between pages."""

from __future__ import annotations

import json
from urllib.parse import parse_qs

from dash import Input, Output, dcc, html

from . import (
    batch_page,
    compare_page,
    elastic_page,
    fairshare_page,
    gallery_page,
    home_page,
    network_page,
    scenario_page,
    sweep_page,
    workspace_page,
)

LOCATION = "shell-location"
CONTENT = "shell-page-content"
TITLE_SINK = "shell-title-sink"

HOME = ("/", "Home", home_page)
PAGES = [
    ("/fairshare", "Fair sharing", fairshare_page),
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
            dcc.Store(id=TITLE_SINK),
            html.Header(
                [
                    dcc.Link("schedscope", href="/", className="brand"),
                    html.Nav([dcc.Link(label, href=path, className="nav-link") for path, label, _ in PAGES]),
                ],
                className="app-header",
            ),
            html.Main(id=CONTENT, className="app-main"),
        ]
    )


def page_for(path: str | None, search: str | None = None):
    """The layout for a URL: a page, or a scenario's permalink (``/scenario/<hash>`` or ``/?scenario=<hash>``).

    ``/sweeps?kind=<kind>`` opens the Sweeps page on that kind.
    """
    wanted = parse_qs((search or "").lstrip("?")).get("scenario")
    if wanted:
        return scenario_page.layout(wanted[0])
    if path and path.startswith(SCENARIO_PREFIX):
        return scenario_page.layout(path[len(SCENARIO_PREFIX):])
    pages = {route: page for route, _, page in [HOME, *PAGES]}
    page = pages.get(path or "/")
    if page is None:
        return html.Section([html.H2("Not found"), html.P(f"No page at {path}.")], className="panel")
    if page is sweep_page:  # /sweeps?kind=<kind> opens that sweep (the gallery links there)
        return page.layout((parse_qs((search or "").lstrip("?")).get("kind") or [None])[0])
    return page.layout()


def page_title(path: str | None, search: str | None = None) -> str:
    """The browser tab's title for a URL: the page's name, then the product's."""
    if (path or "").startswith(SCENARIO_PREFIX) or "scenario=" in (search or ""):
        return "Scenario · schedscope"
    names = {route: label for route, label, _ in PAGES}
    if (path or "/") == "/":
        return "schedscope · scheduling what-ifs on your own cluster"
    return f"{names.get(path, 'Not found')} · schedscope"


def register_callbacks(app) -> None:
    app.callback(Output(CONTENT, "children"), Input(LOCATION, "pathname"), Input(LOCATION, "search"))(page_for)
    titles = {route: page_title(route) for route in ["/", *(route for route, _, _ in PAGES)]}
    # The tab title and the nav's current page follow the URL, in the browser (no round trip).
    app.clientside_callback(
        f"""function(path, search) {{
            const titles = {json.dumps(titles)};
            const scenario = (path || '').startsWith('{SCENARIO_PREFIX}') || (search || '').includes('scenario=');
            document.title = scenario ? 'Scenario · schedscope' : (titles[path || '/'] || 'Not found · schedscope');
            document.querySelectorAll('.app-header nav a').forEach(link => {{
                if (link.getAttribute('href') === path) {{ link.setAttribute('aria-current', 'page'); }}
                else {{ link.removeAttribute('aria-current'); }}
            }});
            return window.dash_clientside.no_update;
        }}""",
        Output(TITLE_SINK, "data"), Input(LOCATION, "pathname"), Input(LOCATION, "search"),
    )
