"""The Fair sharing page's layout: editor, capacity and run panel side by side, the paper's table, the charts."""

from __future__ import annotations

from dash import dash_table, dcc, html

from sched_engine.fairshare import FIG4_AFTER_N12_AT, FIG4_ALL_ACTIVE_AT, starter_model
from sched_engine.registry import REGISTRY

from ...widgets import run_panel, tree_editor
from ...widgets.fields import field, graph
from . import ids

DEFAULT_POLICIES = ["mch", "hdrf"]
# Measured by bench/mch_exactness.py (100 random trees per class); see docs/readings.md.
MCH_EXACTNESS = ("MCH gives H-DRF's allocation exactly (up to whole tasks) when every job asks for every "
                 "resource, and nearly always when some jobs ask for CPU only; where a department mixes such "
                 "jobs with jobs asking for CPU only and for memory only, MCH only approximates H-DRF "
                 "(per-leaf dominant shares up to 0.24 apart).")
FRAMES = ("jobs", "timeline", "summary")



def layout() -> html.Div:
    return html.Div(
        [
            dcc.Store(id=ids.DRAFT, storage_type="local", data=starter_model()),
            dcc.Store(id=ids.SELECTED, data=None),
            run_panel.store(ids.PANEL),
            dcc.Store(id=ids.HOVER, data=None),
            run_panel.download(ids.PANEL),
            html.Div(
                [
                    html.H2("Fair sharing"),
                    html.P("Draw the organisation, set the cluster, pick policies, compare dominant shares."),
                    html.Button("MCH paper, Fig. 4", id=ids.PRESET, className="preset"),
                    html.Button("Example", id=ids.RESET),
                    html.Div([*run_panel.controls(ids.PANEL), run_panel.headline(ids.PANEL)], className="page-run")
                ],
                className="page-head",
            ),
            run_panel.inputs(ids.PANEL, [html.Div(
                [
                    html.Section(
                        [
                            html.H3("Hierarchy"),
                            tree_editor.tree_view(ids.EDITOR),
                            tree_editor.tree_buttons(ids.EDITOR),
                            tree_editor.workspace_box(ids.EDITOR, "hierarchy",
                                                      "Upload a hierarchy (JSON: resources and tree, "
                                                      "or a fair-sharing scenario)"),
                        ],
                        className="panel tree-panel",
                    ),
                    html.Section(
                        [
                            html.H3("Selected node", id=ids.FORM_TITLE),
                            *tree_editor.name_weight_fields(ids.EDITOR),
                            html.Div(
                                [
                                    html.Div(id=ids.DEMANDS),
                                    field("Tasks", dcc.Input(id=ids.TASKS, type="text")),
                                    field("Task duration (s)", dcc.Input(id=ids.DURATION, type="text")),
                                    field("Arrival (s)", dcc.Input(id=ids.ARRIVAL, type="text")),
                                    field("Departure (s, empty = none)", dcc.Input(id=ids.DEPARTURE, type="text")),
                                ],
                                id=ids.JOB_FIELDS,
                            ),
                            html.Button("Apply", id=ids.APPLY, className="primary"),
                            html.H3("Cluster capacity"),
                            dash_table.DataTable(
                                id=ids.CAPACITY,
                                columns=[{"name": "resource", "id": "name"},
                                         {"name": "capacity", "id": "capacity", "type": "numeric"},
                                         {"name": "unit", "id": "unit"}],
                                data=[], editable=True, row_deletable=True,
                                style_cell={"fontFamily": "inherit", "padding": "4px"},
                            ),
                            html.Button("Add resource type", id=ids.ADD_RESOURCE),
                            html.Div(id=ids.CAPACITY_MSG, className="message"),
                        ],
                        className="panel form-panel",
                    ),
                    html.Section(
                        [
                            html.H3("Policies"),
                            dcc.Checklist(id=ids.POLICIES, options=REGISTRY.options(ids.ENGINE), value=DEFAULT_POLICIES,
                                          className="checklist"),
                            html.P(MCH_EXACTNESS, className="hint"),
                        ],
                        className="panel",
                    ),
                ],
                className="editor-grid",
            )]),
            html.Section(
                [
                    html.H3("Runs"),
                    run_panel.summary_table(ids.PANEL, style_table={"overflowX": "auto"}),
                    run_panel.export_row(ids.PANEL, FRAMES, before=[
                        dcc.Dropdown(id=ids.EXPORT_RUN, placeholder="Run to export", clearable=False)]),
                ],
                className="panel",
            ),
            html.Section(
                [
                    html.H3("Paper beside ours: MCH Fig. 4"),
                    html.P(f"Dominant shares at {FIG4_ALL_ACTIVE_AT:.0f} s (all six jobs active) and MCH at "
                           f"{FIG4_AFTER_N12_AT:.0f} s (after n12 left at 790 s; the paper: n23 rises to 1)."),
                    dash_table.DataTable(id=ids.PAPER, data=[], columns=[], style_cell={"fontFamily": "inherit"}),
                ],
                id=ids.PAPER_BOX, className="panel", style={"display": "none"},
            ),
            html.Section(
                [
                    html.H3("Dominant share over time"),
                    html.P("Zoom a time window in one panel to zoom all; hover a job to highlight it everywhere; "
                           "click to pick the instant below.", className="hint"),
                    html.Div(graph(ids.SHARES), className="graph-box"),
                    html.Div(
                        [field("Instant (s)", dcc.Input(id=ids.INSTANT, type="number", value=None, debounce=True))],
                        className="button-row",
                    ),
                    html.Div(
                        [graph(ids.TASKS_AT),
                         graph(ids.COST)],
                        className="two-graphs",
                    ),
                ],
                className="panel",
            ),
        ],
        className="fairshare-page",
    )
