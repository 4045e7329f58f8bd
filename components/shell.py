"""The app's frame: header, navigation and routing between pages."""

from __future__ import annotations

import json
from functools import partial
from urllib.parse import parse_qs

from dash import Input, Output, dcc, html

from .pages import scenario
from .pages.home.layout import DEMOS

LOCATION = "shell-location"
CONTENT = "shell-page-content"
TITLE_SINK = "shell-title-sink"
DEMO_STEPS = "shell-demo-steps"   # the landing page's demos, for assets/demo.js (data-demos)

SCENARIO_PREFIX = scenario.PREFIX


def layout(pages) -> html.Div:
    """The frame around every page: the header with a link to each of ``pages`` that has a label."""
    return html.Div(
        [
            dcc.Location(id=LOCATION),
            dcc.Store(id=TITLE_SINK),
            html.Div(id=DEMO_STEPS, hidden=True, **{"data-demos": json.dumps(DEMOS)}),
            html.Header(
                [
                    dcc.Link("schedscope", href="/", className="brand"),
                    html.Nav([dcc.Link(page.label, href=page.route, className="nav-link") for page in pages if page.label]),
                ],
                className="app-header",
            ),
            html.Main(id=CONTENT, className="app-main"),
        ]
    )


def page_for(pages, path: str | None, search: str | None = None):
    """The layout for a URL: the page whose ``layout_for_url`` takes it, else the page at that route.

    So ``/scenario/<hash>`` and ``/?scenario=<hash>`` open a scenario's
    permalink and ``/sweeps?kind=<kind>`` the Sweeps page on that kind.
    """
    query = parse_qs((search or "").lstrip("?"))
    for page in pages:
        found = page.layout_for_url(path or "/", query) if page.layout_for_url else None
        if found is not None:
            return found
    page = {page.route: page for page in pages if page.layout}.get(path or "/")
    if page is None:
        return html.Section([html.H2("Not found"), html.P(f"No page at {path}.")], className="panel")
    return page.layout()


def page_title(pages, path: str | None, search: str | None = None) -> str:
    """The browser tab's title for a URL: the page's name, then the product's."""
    if (path or "").startswith(SCENARIO_PREFIX) or "scenario=" in (search or ""):
        return "Scenario · schedscope"
    names = {page.route: page.label for page in pages}
    if (path or "/") == "/":
        return "schedscope · scheduling what-ifs on your own cluster"
    return f"{names.get(path, 'Not found')} · schedscope"


def register_callbacks(app, pages) -> None:
    """Route the URL to one of ``pages`` and keep the tab's title and the navigation's current page in step."""
    app.callback(Output(CONTENT, "children"), Input(LOCATION, "pathname"),
                 Input(LOCATION, "search"))(partial(page_for, pages))
    titles = {page.route: page_title(pages, page.route) for page in pages if page.layout}
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
