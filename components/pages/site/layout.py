"""The Site study page's layout: the site (trace, organisation, hardware), the policies, the charts, a second site."""

from __future__ import annotations

from dash import dash_table, dcc, html

from sched_engine.registry import REGISTRY

from ...figures.common import ONE_LINE
from ...widgets import audit_panel, run_panel, tree_editor
from ...widgets.fields import field, graph, upload_box
from . import ids, steps
from .run import backfilling_choices

WEIGHTINGS = [{"label": "equal", "value": "equal"}, {"label": "by CPU-hours in the log", "value": "cpu_hours"}]
FAILURES = [{"label": "none", "value": "none"}, {"label": "synthetic", "value": "synthetic"}]
ORG_COLUMNS = ("node", "kind", "in", "users", "weight", "share")
HW_COLUMNS = [{"name": "cluster", "id": "name"}, {"name": "machines", "id": "machines"},
              {"name": "CPUs per machine", "id": "cpus_per_machine"},
              {"name": "memory per machine (MB, empty: default)", "id": "memory_per_machine_mb"},
              {"name": "partitions (from the file)", "id": "partitions", "editable": False}]
DIFFERS = [{"if": {"filter_query": '{differs} = "◆"'}, "backgroundColor": "#fff3cd", "fontWeight": "bold"}]


def upload_options(timezone: str, anonymise: str, skip: str) -> html.Div:
    """The zone of a log's local times, skipping malformed lines and the anonymising of names, as the next upload
    is read (ticking the skip box also reads a refused upload again)."""
    return html.Div([
        html.Label(["log time zone ", dcc.Input(id=timezone, type="text", value="UTC", debounce=True,
                                                className="narrow", placeholder="UTC")]),
        dcc.Checklist(id=skip, options=[{"label": "skip malformed lines", "value": "skip"}], value=[]),
        dcc.Checklist(id=anonymise, options=[{"label": "anonymise names", "value": "on"}], value=[]),
        html.Span("for the next upload: a log's times without a zone (sacct) are read in it; anonymised, it is kept "
                  "as SWF, its users, groups and accounts numbered, their names only as salted hashes",
                  className="hint"),
    ], className="button-row")


def _organisation() -> html.Section:
    editor = ids.EDITOR
    return html.Section(className="panel", children=[
        html.H3("Organisation"),
        html.P(id=ids.ORG_ORIGIN, className="hint"),
        field("Weights", dcc.RadioItems(id=ids.WEIGHTING, options=WEIGHTINGS, value="equal", inline=True),
              "sets the weights of every node of the tree on screen"),
        html.Div(className="form-row", children=[
            html.Div(className="form-column", children=[
                tree_editor.tree_view(editor, height="300px"),
                tree_editor.tree_buttons(editor, department="Add group", leaf=None),
            ]),
            html.Div(className="form-column", children=[
                html.H4("Select a group or user", id=editor.form_title),
                *tree_editor.name_weight_fields(editor),
                html.Div(field("Group", dcc.Dropdown(id=ids.GROUP_FIELD, clearable=False)), id=ids.GROUP_FIELD_BOX,
                         style={"display": "none"}),
                html.Button("Apply", id=editor.apply, className="primary"),
                tree_editor.workspace_box(editor, "organisation",
                                          "Upload an organisation (JSON: a tree of groups over users, "
                                          "a site scenario, or Slurm's sshare -a -P / sacctmgr output)"),
            ]),
        ]),
        dash_table.DataTable(id=ids.ORGANISATION, page_size=10, sort_action="native", filter_action="native",
                             style_table={"maxWidth": "720px"}, style_cell={"fontFamily": "inherit", "padding": "3px"},
                             columns=[{"name": c, "id": c} for c in ORG_COLUMNS]),
    ])


def _hardware() -> html.Section:
    return html.Section(className="panel", children=[
        html.H3("Hardware"),
        dash_table.DataTable(id=ids.HW_TABLE, columns=HW_COLUMNS, data=[], editable=True, row_deletable=True,
                             style_table={"maxWidth": "720px"}, style_cell={"fontFamily": "inherit", "padding": "3px"}),
        html.Div([html.Button("Add cluster", id=ids.HW_ADD), html.Button("From the trace header", id=ids.HW_HEADER)],
                 className="button-row"),
        upload_box(ids.HW_UPLOAD, "Upload the hardware (slurm.conf, sinfo -N -o \"%N %c %m %P\", or .machines)"),
        field("Default memory per CPU (MB)", dcc.Input(id=ids.DEFAULT_MEMORY, type="number", min=1, value=2048,
                                                       debounce=True),
              "used for a cluster whose memory per machine is empty"),
        html.Div(id=ids.HW_MSG),
        html.Div(id=ids.HARDWARE),
    ])


def _policies() -> html.Section:
    return html.Section(className="panel", children=[
        html.H3("Policies"),
        field("Queue order", dcc.Checklist(id=ids.POLICIES, value=["fcfs", "hdrf"], options=[
            {"label": entry.label, "value": entry.name} for entry in REGISTRY.policies(ids.ENGINE)])),
        field("Backfilling", dcc.RadioItems(id=ids.BACKFILL, value="easy", options=backfilling_choices())),
        field("Half-life of past usage (s)", dcc.Input(id=ids.HALF_LIFE, type="number", min=0, value=0),
              "0: shares of the running jobs only"),
        field("Failures", dcc.RadioItems(id=ids.FAILURES, options=FAILURES, value="none")),
        dcc.Checklist(id=ids.ELASTIC, value=[], options=[
            {"label": "memory-elastic starts (spill penalty, at least half the memory)", "value": "on"}]),
    ])


def _comparison() -> html.Section:
    return html.Section(className="panel", children=[
        html.H3("Compare with a second site"),
        html.P("Its workload beside this one, and the same policies run on it (its header's hardware, the "
               "organisation derived from it with the same weights, the same first jobs). ◆ marks a difference.",
               className="hint"),
        html.Div(className="form-row", children=[
            field("Second trace", dcc.Dropdown(id=ids.SECOND, value=None, placeholder="none: one site")),
            html.Div([upload_box(ids.SECOND_UPLOAD, "Upload the second site's trace"), html.Div(id=ids.SECOND_MSG)]),
        ]),
        dash_table.DataTable(id=ids.WORKLOAD_TABLE, data=[], columns=[], style_data_conditional=DIFFERS,
                             style_table={"maxWidth": "900px"}, style_cell={"fontFamily": "inherit", "padding": "3px"}),
        graph(ids.WORKLOADS, "Choose a second trace to compare the two workloads", placeholder_height=ONE_LINE),
        html.H4("The same policies on both sites"),
        dash_table.DataTable(id=ids.RESULTS_TABLE, data=[], columns=[], style_data_conditional=DIFFERS,
                             sort_action="native", page_size=21,
                             style_table={"maxWidth": "900px"}, style_cell={"fontFamily": "inherit", "padding": "3px"}),
    ])


def layout() -> html.Div:
    return html.Div(className="page", children=[
        run_panel.store(ids.PANEL),
        dcc.Store(id=ids.WINDOW, data=None),
        dcc.Store(id=ids.GROUP, data=None),
        dcc.Store(id=ids.REJECTED, data=False),
        # The site chosen (trace, cut), its organisation and hardware stay in the browser across reloads and
        # visits, as the Batch page's draft does.
        dcc.Store(id=ids.CHOICE, storage_type="local", data=None),
        dcc.Store(id=ids.ORG, storage_type="local", data=None),
        dcc.Store(id=ids.HW, storage_type="local", data=None),
        dcc.Store(id=ids.EDITOR.selected, data=None),
        run_panel.download(ids.PANEL),
        html.H2("Site study"),
        html.P("One site's trace through its organisation's fair share, backfilling, failures and memory: "
               "which policy gives each group its share?"),
        # Run, its message and what the runs mean, on the first screen; the inputs fold away after a run and the
        # results follow: runs, charts over time, the log's audit, a second site.
        html.Div([*run_panel.controls(ids.PANEL), html.Div(id=ids.STAKEHOLDERS, className="stakeholders")],
                 className="page-run"),
        run_panel.inputs(ids.PANEL, [html.Div(className="form-row", children=[
            html.Div(className="form-column", children=[
                html.H3("The site"),
                field("Trace", dcc.Dropdown(id=ids.TRACE, value="hpc2n-excerpt.swf", clearable=False)),
                upload_box(ids.UPLOAD, "Upload a trace: SWF, GWF, CSV, or Slurm sacct, PBS, SGE, LSF accounting (.gz too)"),
                upload_options(ids.TIMEZONE, ids.ANONYMISE, ids.SKIP_MALFORMED),
                html.Div(id=ids.UPLOAD_MSG),
                field("First jobs only", dcc.Input(id=ids.MAX_JOBS, type="number", min=1, step=1, value=2000,
                                                   debounce=True), "empty: the whole trace"),
            ]),
            html.Div(className="form-column", children=[_policies()]),
        ]),
        _organisation(),
        _hardware()]),
        html.Section(className="panel", children=[
            html.H3("Runs"),
            run_panel.summary_table(ids.PANEL, style_table={"overflowX": "auto"}),
            run_panel.export_row(ids.PANEL, ("jobs", "timeline", "summary"))]),
        html.Div([html.Span(id=ids.GROUP_MSG), html.Button("Whole run", id=ids.RESET_WINDOW)]),
        graph(ids.SHARES), graph(ids.ISOLATION), graph(ids.UTILISATION), graph(ids.WAITS), graph(ids.KILLED),
        graph(ids.WHY_WAITED), graph(ids.WHY_WAITED_GROUPS),
        audit_panel.section(audit_panel.Ids(ids.PAGE)),
        steps.section(),
        _comparison(),
    ])
