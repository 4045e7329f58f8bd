"""The Memory elasticity page's layout: cluster and penalty, the trace, the run panel, then the charts."""

from __future__ import annotations

from dash import dash_table, dcc, html

from sched_engine.elastic import DISTRIBUTIONS
from sched_engine.registry import REGISTRY

from ...widgets import run_panel
from ...widgets.fields import field, graph, upload_box
from . import ids
from .charts import FRAMES, JOB_PAGE_SIZE
from .form import PRESETS, RANGES, preset_controls


def number_input(component_id, value, **kwargs):
    return dcc.Input(id=component_id, type="number", value=value, persistence=True, debounce=True, **kwargs)


def range_row(name, label, step, values):
    return html.Div(
        [html.Span(label, className="range-label")]
        + [number_input({"type": ids.RANGE, "name": name, "end": end}, values[end], min=0, step=step,
                         placeholder="min" if end == 0 else "max")
           for end in (0, 1)],
        className="range-row",
    )


def layout() -> html.Div:
    """The page as it opens: the paper's preset, no runs yet."""
    start = preset_controls(ids.PRESET_PAPER)
    return html.Div(
        [
            dcc.Store(id=ids.LOADED, storage_type="local", data=None),
            run_panel.store(ids.PANEL),
            dcc.Store(id=ids.WINDOW, data=None),
            run_panel.download(ids.PANEL),
            html.Div(
                [
                    html.H2("Memory elasticity"),
                    html.P("YARN against YARN-ME, which runs a task with less than its ideal memory when the "
                           "penalty does not delay its job, and the pooled Meganode bound (Iorgulescu et al., "
                           "ATC'17)."),
                    html.Button(PRESETS[ids.PRESET_PAPER][0], id=ids.PRESET_PAPER, className="preset"),
                    html.Button(PRESETS[ids.PRESET_TWO_JOB][0], id=ids.PRESET_TWO_JOB, className="preset"),
                ],
                className="page-head",
            ),
            run_panel.inputs(ids.PANEL, [html.Div(
                [
                    html.Section(
                        [
                            html.H3("Cluster"),
                            html.Div([
                                field("Nodes", number_input(ids.NODES, start["nodes"], step=1)),
                                field("Cores per node", number_input(ids.CORES, start["cores"], step=1)),
                                field("Memory per node (GB)", number_input(ids.MEMORY, start["node_memory_gb"], min=0.1,
                                                                              step=0.1)),
                            ], className="inline-fields"),
                            html.P("Each task takes one core; memory is granted in 100 MB steps (1 GB = 1000 MB).",
                                   className="hint"),
                            html.H3("Penalty model"),
                            dcc.RadioItems(id=ids.PENALTY_KIND, value=start["penalty_kind"], persistence=True,
                                           className="checklist inline",
                                           options=[{"label": "step (mappers)", "value": "step"},
                                                    {"label": "spill sawtooth (reducers)", "value": "spill"},
                                                    {"label": "fitted from two profiling runs", "value": "fitted"}]),
                            html.Div(field("Penalty factor", number_input(ids.FACTOR, start["factor"], min=1, step=0.1),
                                            "step: runtime × factor when under-sized; spill: runtime × factor "
                                            "when the whole input spills"), id=ids.FACTOR_BOX),
                            html.Div([
                                dcc.RadioItems(id=ids.SHAPE, value="spill", persistence=True, className="checklist inline",
                                               options=[{"label": "step shape", "value": "step"},
                                                        {"label": "spill shape", "value": "spill"}]),
                                html.Div([
                                    field("Profiling run: memory fraction",
                                           number_input(ids.PROFILE_FRACTION, 0.5, min=0.1, max=0.99, step=0.05)),
                                    field("Profiling run: runtime / ideal",
                                           number_input(ids.PROFILE_RATIO, 1.5, min=1, step=0.1)),
                                ], className="inline-fields"),
                            ], id=ids.FITTED_BOX),
                            html.Div(id=ids.PENALTY_MSG, className="message"),
                            graph(ids.PROFILE),
                        ],
                        className="panel",
                    ),
                    html.Section(
                        [
                            html.H3("Trace"),
                            dcc.RadioItems(id=ids.SOURCE, value=start["source"], persistence=True,
                                           className="checklist inline",
                                           options=[{"label": "generate (Table 2 sweep)", "value": "generated"},
                                                    {"label": "loaded trace (upload or preset)", "value": "loaded"}]),
                            html.Div([
                                field("Jobs", number_input(ids.JOBS, start["jobs"], min=1, step=1)),
                                field("Distribution", dcc.RadioItems(
                                    id=ids.DISTRIBUTION, value=start["distribution"], options=list(DISTRIBUTIONS),
                                    persistence=True, className="checklist inline")),
                                field("Seed", number_input(ids.SEED, 1, min=0, step=1)),
                            ], className="inline-fields"),
                            html.Div([range_row(name, label, step, start[name]) for name, label, step, _ in RANGES]),
                            html.P("Per job, drawn between min and max; arrivals uniform in 0–1000 s (§6.1).",
                                   className="hint"),
                            upload_box(ids.TRACE_UPLOAD, "Upload a trace: SLS / DSS JSON or CSV "
                                                         "(job_id, arrival_s, tasks, memory_mb, duration_s[, phase])"),
                            dcc.Dropdown(id=ids.TRACE_CHOICE, options=[], value=None,
                                         placeholder="or open a trace uploaded earlier"),
                            html.Div(id=ids.TRACE_MSG, className="message"),
                            html.Div(id=ids.TRACE_INFO),
                        ],
                        className="panel",
                    ),
                ],
                className="editor-grid four",
            )]),
            html.Section(
                [
                    html.H3("Run"),
                    *run_panel.controls(ids.PANEL, before=[
                        dcc.Checklist(id=ids.POLICIES, options=REGISTRY.options(ids.ENGINE), value=start["policies"],
                                      className="checklist inline", persistence=True)]),
                    html.Div(id=ids.RATIO, className="headline"),
                    run_panel.headline(ids.PANEL),
                    run_panel.summary_table(ids.PANEL, sort_action="native", style_table={"overflowX": "auto"}),
                    run_panel.export_row(ids.PANEL, FRAMES,
                                         before=[html.Span("Export every scheduler of the run:", className="hint")]),
                ],
                className="panel run-panel",
            ),
            html.Section(
                [
                    html.Div([html.H3("Over time"), html.Span(id=ids.WINDOW_MSG, className="hint"),
                              html.Button("Whole run", id=ids.RESET_WINDOW)], className="button-row"),
                    html.P("Zoom the time axis of any time chart to set the window for all of them.", className="hint"),
                    html.Div([graph(ids.MEMORY_GRAPH), graph(ids.TASKS_GRAPH)], className="two-graphs"),
                ],
                className="panel",
            ),
            html.Section(
                [
                    html.H3("Job runtimes"),
                    html.Div([graph(ids.SCATTER), graph(ids.CDF)], className="two-graphs"),
                    html.P("Below the dashed line a job finished sooner under YARN-ME; click one to see where it "
                           "ran.", className="hint"),
                    dash_table.DataTable(id=ids.JOB_TABLE, data=[], columns=[], sort_action="custom", sort_mode="single",
                                         sort_by=[], page_action="custom", page_current=0, page_size=JOB_PAGE_SIZE,
                                         page_count=1, style_cell={"fontFamily": "inherit"},
                                         style_table={"overflowX": "auto"}),
                ],
                className="panel",
            ),
            html.Section(
                [
                    html.Div([html.H3("Where a job ran"),
                              field("Job", dcc.Dropdown(id=ids.JOB, clearable=False, searchable=True, className="narrow",
                                                        placeholder="type to search jobs"))],
                             className="button-row"),
                    graph(ids.NODE_GRAPH),
                ],
                className="panel",
            ),
        ],
        className="elastic-page",
    )
