"""The Network isolation page's layout: machines, applications and schemes side by side, the summary, the charts."""

from __future__ import annotations

from dash import dash_table, dcc, html

from sched_engine.network import APP_COLUMNS, APP_TEXT_COLUMNS, PATTERNS
from sched_engine.registry import REGISTRY

from ...widgets import run_panel
from ...widgets.fields import field, graph, upload_box
from . import ids
from .charts import FRAMES
from .run import PLACEMENTS
from .setups import (
    APP_GEN_FIELDS,
    FIG1,
    FIG6,
    FIG6_PAGE_APPS,
    MACHINE_COLUMNS,
    MACHINE_GEN_FIELDS,
    initial_draft,
    preset,
)


def editable_table(component_id, columns, text_columns):
    return dash_table.DataTable(
        id=component_id, data=[], editable=True, row_deletable=True, page_size=10,
        columns=[{"name": c, "id": c, "type": "text" if c in text_columns else "numeric"} for c in columns],
        style_table={"overflowX": "auto"}, style_cell={"fontFamily": "inherit", "padding": "3px", "minWidth": "48px"},
    )


def layout() -> html.Div:
    """The page as it opens: the Fig. 1 preset, no runs yet."""
    start = preset(FIG1)
    return html.Div(
        [
            dcc.Store(id=ids.DRAFT, storage_type="local", data=initial_draft()),
            run_panel.store(ids.PANEL),
            dcc.Store(id=ids.WINDOW, data=None),
            run_panel.download(ids.PANEL),
            html.Div(
                [
                    html.H2("Network isolation"),
                    html.P("Container placement and access-link bandwidth allocation: Libra against per-flow "
                           "fairness, DRF and HUG (Ma et al.). Isolation guarantee = the least progress any "
                           "container of an application makes (Eq. 1)."),
                    html.Button(FIG1, id=ids.PRESET_FIG1, className="preset"),
                    html.Button(FIG6, id=ids.PRESET_FIG6, className="preset",
                                title=f"{FIG6_PAGE_APPS} applications instead of the paper's 100, to run in seconds"),
                    html.Div([*run_panel.controls(ids.PANEL), run_panel.headline(ids.PANEL)], className="page-run")
                ],
                className="page-head",
            ),
            run_panel.inputs(ids.PANEL, [html.Div(
                [
                    html.Section(
                        [
                            html.H3("Machines"),
                            dcc.RadioItems(id=ids.MACHINE_MODE, value=start["machine_mode"], persistence=True,
                                           options=[{"label": "N identical machines", "value": "generate"},
                                                    {"label": "table", "value": "table"}],
                                           className="checklist inline"),
                            html.Div([field(label, dcc.Input(id={"type": ids.MACHINE_GEN, "name": name}, type="number",
                                                              value=start["machine_gen"][name], persistence=True))
                                      for name, label in MACHINE_GEN_FIELDS],
                                     id=ids.MACHINE_GEN_BOX, className="field-grid"),
                            html.Div([editable_table(ids.MACHINES, MACHINE_COLUMNS, ("name",)),
                                      html.Div([html.Button("Add machine group", id=ids.ADD_MACHINE)],
                                               className="button-row"),
                                      html.P("A group of count > 1 is named name1 … nameN. Bandwidth in Gbps.",
                                             className="hint")],
                                     id=ids.MACHINES_BOX),
                            html.Div(id=ids.MACHINES_MSG, className="message"),
                        ],
                        className="panel",
                    ),
                    html.Section(
                        [
                            html.H3("Applications"),
                            dcc.RadioItems(id=ids.APP_MODE, value=start["app_mode"], persistence=True,
                                           options=[{"label": "generate", "value": "generate"},
                                                    {"label": "table", "value": "table"},
                                                    {"label": "uploaded list", "value": "upload"}],
                                           className="checklist inline"),
                            html.Div(
                                [field("Arrival process", dcc.RadioItems(
                                    id=ids.ARRIVALS, value=start["arrivals"], persistence=True, className="checklist inline",
                                    options=[{"label": "Poisson", "value": "poisson"},
                                             {"label": "periodic", "value": "periodic"}])),
                                 field("Communication pattern", dcc.Dropdown(
                                     id=ids.PATTERN, options=[{"label": k, "value": k, "title": v} for k, v in PATTERNS.items()],
                                     value=start["pattern"], clearable=False, persistence=True))]
                                + [field(label, dcc.Input(id={"type": ids.APP_GEN, "name": name}, type="number",
                                                           value=start["app_gen"][name], persistence=True))
                                   for name, label in APP_GEN_FIELDS],
                                id=ids.APP_GEN_BOX, className="field-grid",
                            ),
                            html.Div([editable_table(ids.APPS, APP_COLUMNS, APP_TEXT_COLUMNS),
                                      html.Div([html.Button("Add application", id=ids.ADD_APP)], className="button-row"),
                                      html.P("Rows with the same name are one application's container groups. "
                                             f"Patterns: {', '.join(PATTERNS)}.", className="hint")],
                                     id=ids.APPS_BOX),
                            html.Div([upload_box(ids.APPS_UPLOAD, "Upload an application list: CSV (the table's "
                                                                  "columns) or JSON"),
                                      dcc.Dropdown(id=ids.APPS_CHOICE, options=[], value=None,
                                                   placeholder="or open a list uploaded earlier")],
                                     id=ids.UPLOAD_BOX),
                            html.Div(id=ids.APPS_MSG, className="message"),
                        ],
                        className="panel",
                    ),
                    html.Section(
                        [
                            html.H3("Schemes"),
                            dcc.Checklist(id=ids.SCHEMES, options=REGISTRY.options(ids.ENGINE), value=start["schemes"],
                                          className="checklist", persistence=True),
                            field("Placement", dcc.RadioItems(
                                id=ids.PLACEMENT, value="paper", persistence=True, className="checklist",
                                options=[{"label": v, "value": k} for k, v in PLACEMENTS.items()])),
                            field("Seed (Poisson arrivals, round-robin start)",
                                   dcc.Input(id=ids.SEED, type="number", min=0, step=1, value=start["seed"],
                                             persistence=True)),
                            html.P(f"The Fig. 6 preset generates {FIG6_PAGE_APPS} applications (the paper: 100) so "
                                   "it runs in seconds here; raise the count for the full set-up.", className="hint"),
                        ],
                        className="panel",
                    ),
                ],
                className="editor-grid",
            )]),
            html.Section(
                [
                    html.H3("Schemes compared"),
                    run_panel.summary_table(ids.PANEL, sort_action="native", style_table={"overflowX": "auto"}),
                    run_panel.export_row(ids.PANEL, (*FRAMES, "schemes"),
                                         before=[html.Span("Export the scheme shown below:", className="hint")]),
                ],
                className="panel",
            ),
            html.Section(
                [
                    html.Div(
                        [field("Scheme (heatmap, placement)", dcc.Dropdown(id=ids.DETAIL_SCHEME, clearable=False,
                                                                           className="narrow")),
                         field("Application (click any chart)", dcc.Dropdown(id=ids.APP, className="narrow",
                                                                              placeholder="none selected")),
                         field("Instant (s)", dcc.Input(id=ids.INSTANT, type="number", value=None, debounce=True, style={"width": "8rem"})),
                         html.Span(id=ids.WINDOW_MSG, className="hint"),
                         html.Button("Whole run", id=ids.RESET_WINDOW)],
                        className="button-row",
                    ),
                    html.P("Zoom a time axis to set the window for every chart; click an application to select it "
                           "everywhere; a click on the isolation chart also sets the instant of the placement view.",
                           className="hint"),
                    graph(ids.ISOLATION),
                    html.Div([graph(ids.CDF), graph(ids.DURATIONS)], className="two-graphs"),
                    html.Div([graph(ids.HEATMAP), graph(ids.PLACEMENT_VIEW)], className="two-graphs"),
                ],
                className="panel",
            ),
        ],
        className="network-page",
    )
