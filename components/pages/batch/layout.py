"""The Batch & failures page's layout: workload, clusters, failures and the matrix side by side, then the charts."""

from __future__ import annotations

from dash import dash_table, dcc, html

from sched_engine.batch import SYNTHETIC_DEFAULTS, TRACE_FORMATS
from sched_engine.registry import REGISTRY

from ...figures.batch import SIZES_HEIGHT
from ...services import prepared
from ...widgets import audit_panel, run_panel
from ...widgets.fields import field, graph, upload_box
from . import ids, sizing, trust
from .charts import FRAMES
from .clusters import CLUSTER_COLUMNS
from .draft import PRESET_SETTINGS, initial_draft
from .run import FAILURE_PARAMS, SCENARIO_KINDS


def layout() -> html.Div:
    """The page as it opens: the "Complete data sets" preset's settings, no runs yet."""
    settings = PRESET_SETTINGS["complete"]
    return html.Div(
        [
            dcc.Store(id=ids.DRAFT, storage_type="local", data=initial_draft()),
            run_panel.store(ids.PANEL),
            dcc.Store(id=ids.WINDOW, data=None),
            dcc.Store(id=ids.DRAWN, data=None),   # what the detail charts show now (FigureMemo.key)
            run_panel.download(ids.PANEL),
            html.Div(
                [
                    html.H2("Batch & failures"),
                    html.P("Multi-cluster FCFS, FCFS-LB, EASY and Conservative backfilling and Local Search on your "
                           "workload, with machine failures and job requirements (Klusáček & Rudová)."),
                    html.Button("Complete data sets (MetaCentrum clusters and failures)", id=ids.PRESET_COMPLETE,
                                className="preset"),
                    html.Button("CERIT-SC 2013 with real requirements", id=ids.PRESET_CERIT, className="preset"),
                    html.Div([*run_panel.controls(ids.PANEL), run_panel.headline(ids.PANEL)], className="page-run")
                ],
                className="page-head",
            ),
            run_panel.inputs(ids.PANEL, [html.Div(
                [
                    html.Section(
                        [
                            html.H3("Workload"),
                            field("Sample or earlier upload",
                                   dcc.Dropdown(id=ids.SAMPLE, options=[], value=None, clearable=False,
                                                placeholder="switch to a sample or an uploaded trace")),
                            upload_box(ids.TRACE_UPLOAD, "Upload a trace: SWF, GWF, CSV, or Slurm sacct, PBS, SGE, "
                                                         "LSF accounting (.gz too)"),
                            html.Div(
                                [dcc.Dropdown(id=ids.FORMAT, options=list(TRACE_FORMATS), value="auto", clearable=False,
                                              className="narrow", persistence=True),
                                 dcc.Checklist(id=ids.SKIP_MALFORMED, options=[{"label": "skip malformed lines",
                                                                            "value": "skip"}], value=[],
                                               persistence=True),
                                 # The zone of a resource manager log's local times (sacct, LSF); SWF and GWF
                                 # times are relative to the log's start and need none.
                                 html.Label(["log time zone ",
                                             dcc.Input(id=ids.TIMEZONE, type="text", value="UTC", debounce=True,
                                                       className="narrow", placeholder="UTC")]),
                                 # Names replaced by salted hashes as the upload is stored (kept as SWF).
                                 dcc.Checklist(id=ids.ANONYMISE, value=[], options=[
                                     {"label": "anonymise names of the next upload", "value": "on"}])],
                                className="button-row",
                            ),
                            html.Div(id=ids.TRACE_MSG, className="message"),
                            html.Div(id=ids.TRACE_INFO),
                            graph(ids.SIZES, height=SIZES_HEIGHT),
                            field("Jobs to simulate (first N by submission; empty = all)",
                                   dcc.Input(id=ids.MAX_JOBS, type="number", min=1, step=1, value=settings["max_jobs"],
                                             persistence=True)),
                        ],
                        className="panel",
                    ),
                    html.Section(
                        [
                            html.H3("Clusters"),
                            dash_table.DataTable(
                                id=ids.CLUSTERS,
                                columns=[{"name": c, "id": c, "type": "numeric" if c in ("machines", "speed") else "text"}
                                         for c in CLUSTER_COLUMNS],
                                data=[], editable=True, row_deletable=True, page_size=12,
                                style_table={"overflowX": "auto"},
                                style_cell={"fontFamily": "inherit", "padding": "3px", "maxWidth": "160px",
                                            "overflow": "hidden", "textOverflow": "ellipsis"},
                                tooltip_duration=None,
                            ),
                            html.Div([html.Button("Add cluster", id=ids.ADD_CLUSTER)], className="button-row"),
                            field("Open a definition: sample, saved or uploaded earlier",
                                   dcc.Dropdown(id=ids.CLUSTER_CHOICE, options=[], value=None,
                                                placeholder="open a cluster definition")),
                            html.Div([dcc.Input(id=ids.CLUSTERS_NAME, type="text", placeholder="name for the workspace",
                                                debounce=False),
                                      html.Button("Save clusters", id=ids.SAVE_CLUSTERS)], className="button-row"),
                            upload_box(ids.MACHINES_UPLOAD,
                                       "Load the hardware: an Alea .machines file, slurm.conf or sinfo output"),
                            html.Div(id=ids.CLUSTERS_MSG, className="message"),
                            html.Div(id=ids.HARDWARE, className="message hardware"),
                            html.P("An empty table: the trace header's MaxNodes/MaxProcs define one cluster.",
                                   className="hint"),
                        ],
                        className="panel",
                    ),
                    html.Section(
                        [
                            html.H3("Failures and requirements"),
                            dcc.RadioItems(id=ids.FAILURE_KIND, persistence=True, value=settings["failure_kind"],
                                           options=[{"label": "none", "value": "none"},
                                                    {"label": "failure trace", "value": "trace"},
                                                    {"label": "synthetic (Weibull)", "value": "synthetic"}],
                                           className="checklist inline"),
                            field("Failure trace: sample or uploaded earlier",
                                   dcc.Dropdown(id=ids.FAILURE_CHOICE, options=[], value=None,
                                                placeholder="switch the failure trace")),
                            upload_box(ids.FAILURE_UPLOAD, "Upload a .failures trace"),
                            dcc.RadioItems(id=ids.FAILURE_ALIGN, persistence=True, value="start",
                                           options=[{"label": "first failure at first submission", "value": "start"},
                                                    {"label": "absolute times", "value": "absolute"}],
                                           className="checklist"),
                            html.Details(
                                [html.Summary("Synthetic failure parameters (F = N · D · AFC)")]
                                + [field(label, dcc.Input(id={"type": ids.FAILURE_PARAM, "name": name}, type="number",
                                                           value=SYNTHETIC_DEFAULTS[name], persistence=True))
                                   for name, label in FAILURE_PARAMS],
                            ),
                            html.Div(id=ids.FAILURE_MSG, className="message"),
                            field("Synthetic requirements: share of jobs without one that get a cluster property",
                                   dcc.Input(id=ids.REQ_SHARE, type="number", min=0, max=1, step=0.05,
                                             value=settings["req_share"], persistence=True),
                                   "for traces that record no requirements (0 = only the trace's own)"),
                            field("Load factor", dcc.Input(id=ids.LOAD_FACTOR, type="number", min=0.01, max=100,
                                                            step="any", value=1, persistence=True),
                                   "submit the jobs this many times as fast (1 = as logged)"),
                            field("Run-time estimates", dcc.RadioItems(
                                id=ids.ESTIMATES, value="perfect", persistence=True, className="checklist inline",
                                options=[{"label": "perfect", "value": "perfect"},
                                         {"label": "from the trace", "value": "trace"}])),
                        ],
                        className="panel",
                    ),
                    html.Section(
                        [
                            html.H3("Matrix"),
                            dcc.Checklist(id=ids.POLICIES, options=REGISTRY.options(ids.ENGINE), value=settings["policies"],
                                          className="checklist", persistence=True),
                            dcc.Checklist(id=ids.SCENARIOS, options=list(SCENARIO_KINDS), value=settings["scenarios"],
                                          className="checklist inline", persistence=True),
                            field("Seeds (FCFS-LB, LS and synthetic inputs)",
                                   dcc.Input(id=ids.SEEDS, type="number", min=1, max=20, step=1, value=settings["seeds"],
                                             persistence=True)),
                        ],
                        className="panel",
                    ),
                ],
                className="editor-grid four",
            )]),
            # After a run the inputs fold away and the results follow Run: headline (beside Run), runs, objectives,
            # over time, the log vs the simulation, why jobs waited, sizing; then the log's audit.
            _runs_table(),
            html.Section(
                [html.H3("Objectives per policy and scenario (Klusáček & Rudová, Fig. 2 layout)"),
                 graph(ids.OBJECTIVES)],
                className="panel",
            ),
            html.Section(
                [
                    html.Div(
                        [html.H3("Over time"),
                         field("Scenario", dcc.Dropdown(id=ids.DETAIL_SCENARIO, clearable=False, className="narrow")),
                         field("Policy (utilisation, machines)", dcc.Dropdown(id=ids.DETAIL_POLICY, clearable=False,
                                                                               className="narrow")),
                         html.Span(id=ids.WINDOW_MSG, className="hint"),
                         html.Button("Whole run", id=ids.RESET_WINDOW)],
                        className="button-row",
                    ),
                    html.P("Zoom the time axis of any chart to set the window for all of them.", className="hint"),
                    html.Div([graph(ids.UTILISATION),
                              graph(ids.QUEUE)], className="two-graphs"),
                    html.Div([graph(ids.KILLED),
                              graph(ids.WAITS)], className="two-graphs"),
                    graph(ids.GANTT),
                ],
                className="panel",
            ),
            trust.section(),
            sizing.section(),
            audit_panel.section(audit_panel.Ids(ids.PAGE)),
        ],
        className="batch-page",
    )


def _runs_table() -> html.Section:
    """The runs, one row per policy, scenario and seed, with the exports."""
    return html.Section(
        [
            html.H3("Runs"),
            run_panel.summary_table(ids.PANEL, sort_action="native", style_table={"overflowX": "auto"}),
            run_panel.export_row(
                ids.PANEL, ("matrix", "report"), {"report": "report.html"},
                before=[html.Span("Export the run shown in 'Over time':", className="hint"),
                        *[html.A(f"{name}.csv", id={"type": ids.FRAME_LINKS, "frame": name}, className="button",
                                 download=f"{name}.csv") for name in FRAMES]]),
            prepared.link(ids.REPORT_LINK),   # report.html, fetched once prepared (or why it could not be)
        ],
        className="panel",
    )
