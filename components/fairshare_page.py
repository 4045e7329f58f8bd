"""The "Fair sharing" page: hierarchy editor, capacity, policies, linked charts.

Data flow: the draft model lives in a browser-local Store (a reload loses
nothing); Run validates it and runs one scenario per chosen policy in a
background callback (results cached by scenario hash, see
:mod:`components.services.runs`); the runs Store holds only small records (policy,
hash, cached, wall time) and every chart is rebuilt from cached frames.
"""

from __future__ import annotations

import json

import dash_cytoscape as cyto
from dash import ALL, Input, Output, State, ctx, dash_table, dcc, html, no_update

from sched_engine import ScenarioError
from sched_engine.core import content_hash
from sched_engine.fairshare.model import normalize_model
from sched_engine.fairshare.presets import (
    FIG4_AFTER_N12_AT,
    FIG4_ALL_ACTIVE_AT,
    FIG4_PAPER_SHARES,
    FIG4_PAPER_WEIGHTS,
    fig4_model,
    starter_model,
)
from sched_engine.registry import REGISTRY

from . import tree_edit
from .chart_config import GRAPH_CONFIG
from .figures import fairshare as figures
from .run_feedback import EMPTY_PROGRESS
from .run_feedback import register as register_run_feedback
from .services.csv_export import send_csv
from .services.progress import POLL_MS, throttled
from .services.runs import loaded_runs
from .services.saved_items import (
    HIERARCHY,
    clean_name,
    data_url_bytes,
    load_item,
    parse_item,
    save_item,
    saved_choices,
)
from .services.uploads import UploadError

ENGINE = "fairshare"
DRAFT = "fairshare-draft-store"
SELECTED = "fairshare-selected-store"
RUNS = "fairshare-runs-store"
HOVER = "fairshare-hover-store"
TREE = "fairshare-tree-cytoscape"
PRESET = "fairshare-preset-button"
RESET = "fairshare-reset-button"
ADD_DEPT = "fairshare-add-department-button"
ADD_JOB = "fairshare-add-job-button"
REMOVE = "fairshare-remove-button"
APPLY = "fairshare-apply-button"
FORM_TITLE = "fairshare-form-title"
NAME = "fairshare-form-name-input"
WEIGHT = "fairshare-form-weight-input"
TASKS = "fairshare-form-tasks-input"
DURATION = "fairshare-form-duration-input"
ARRIVAL = "fairshare-form-arrival-input"
DEPARTURE = "fairshare-form-departure-input"
JOB_FIELDS = "fairshare-form-job-fields"
DEMANDS = "fairshare-form-demands"
DEMAND = "fairshare-form-demand-input"  # pattern-matching type, keyed by resource
TREE_MSG = "fairshare-tree-message"
CAPACITY = "fairshare-capacity-table"
ADD_RESOURCE = "fairshare-add-resource-button"
CAPACITY_MSG = "fairshare-capacity-message"
POLICIES = "fairshare-policies-checklist"
RUN = "fairshare-run-button"
CANCEL = "fairshare-cancel-button"
PROGRESS = "fairshare-run-progress"
RUN_MSG = "fairshare-run-message"
SHARES = "fairshare-shares-graph"
INSTANT = "fairshare-instant-input"
TASKS_AT = "fairshare-tasks-graph"
COST = "fairshare-cost-graph"
SUMMARY = "fairshare-summary-table"
PAPER = "fairshare-paper-table"
PAPER_BOX = "fairshare-paper-box"
EXPORT_RUN = "fairshare-export-run-dropdown"
EXPORT_BUTTONS = "fairshare-export-button"  # pattern-matching type, keyed by frame
HIER_CHOICE = "fairshare-hierarchy-choice-dropdown"
HIER_NAME = "fairshare-hierarchy-name-input"
SAVE_HIER = "fairshare-save-hierarchy-button"
HIER_UPLOAD = "fairshare-hierarchy-upload"
EXPORT_HIER = "fairshare-export-hierarchy-button"
HIER_DOWNLOAD = "fairshare-hierarchy-download"
HIER_MSG = "fairshare-hierarchy-message"
DOWNLOAD = "fairshare-download"

DEFAULT_POLICIES = ["mch", "hdrf"]
# Measured by bench/mch_exactness.py (100 random trees per class); see docs/readings.md.
MCH_EXACTNESS = ("MCH gives H-DRF's allocation exactly (up to whole tasks) when every job asks for every "
                 "resource, and nearly always when some jobs ask for CPU only; where a department mixes such "
                 "jobs with jobs asking for CPU only and for memory only, MCH only approximates H-DRF "
                 "(per-leaf dominant shares up to 0.24 apart).")
FIG4_POLICIES = ["mch", "hdrf", "c-ch", "m-ch"]
FIG4_MODEL_HASH = content_hash(normalize_model(fig4_model()))
FRAMES = ("jobs", "timeline", "summary")
#: A tree with more jobs than this is drawn folded: each department shows how many jobs it holds.
TREE_MAX_JOBS = 64
#: Most rows of the share heatmaps of a large tree (a breadth of the tree; see :func:`share_nodes`).
SHARE_NODES = 64

TREE_STYLE = [
    {"selector": "node", "style": {"label": "data(label)", "font-size": 11, "text-wrap": "wrap",
                                   "text-valign": "center", "color": "#1b2733", "width": 70, "height": 34,
                                   "shape": "round-rectangle", "background-color": "#dbe7f3",
                                   "border-width": 1, "border-color": "#7a96b3"}},
    {"selector": ".job", "style": {"background-color": "#fbe3c8", "border-color": "#c98a3d", "shape": "ellipse"}},
    {"selector": "edge", "style": {"curve-style": "taxi", "taxi-direction": "downward", "line-color": "#9aa9b8",
                                   "width": 1.5}},
    {"selector": ":selected", "style": {"border-width": 3, "border-color": "#1f6fb2"}},
]


def _field(label, component):
    return html.Label([html.Span(label), component], className="field")


def layout() -> html.Div:
    return html.Div(
        [
            dcc.Store(id=DRAFT, storage_type="local", data=starter_model()),
            dcc.Store(id=SELECTED, data=None),
            dcc.Store(id=RUNS, storage_type="local", data=[]),
            dcc.Store(id=HOVER, data=None),
            dcc.Download(id=DOWNLOAD),
            html.Div(
                [
                    html.H2("Fair sharing"),
                    html.P("Draw the organisation, set the cluster, pick policies, compare dominant shares."),
                    html.Button("MCH paper, Fig. 4", id=PRESET, className="preset"),
                    html.Button("Example", id=RESET),
                ],
                className="page-head",
            ),
            html.Div(
                [
                    html.Section(
                        [
                            html.H3("Hierarchy"),
                            html.Div(
                                cyto.Cytoscape(
                                    id=TREE, elements=[], stylesheet=TREE_STYLE,
                                    layout={"name": "breadthfirst", "directed": True, "roots": "#root",
                                            "spacingFactor": 1.1},
                                    style={"width": "100%", "height": "340px"}, userZoomingEnabled=False,
                                ),
                                className="tree-box",
                            ),
                            html.Div(
                                [html.Button("Add department", id=ADD_DEPT), html.Button("Add job", id=ADD_JOB),
                                 html.Button("Remove", id=REMOVE, className="danger")],
                                className="button-row",
                            ),
                            html.Div(id=TREE_MSG, className="message"),
                            html.Details(
                                [
                                    html.Summary("Workspace: open, save, upload or download this hierarchy"),
                                    dcc.Dropdown(id=HIER_CHOICE, options=[], value=None,
                                                 placeholder="open a saved hierarchy"),
                                    html.Div([dcc.Input(id=HIER_NAME, type="text", placeholder="name"),
                                              html.Button("Save hierarchy", id=SAVE_HIER),
                                              html.Button("hierarchy.json", id=EXPORT_HIER)],
                                             className="button-row"),
                                    dcc.Upload(id=HIER_UPLOAD, multiple=False, className="upload-box",
                                               children=html.Div(["Upload a hierarchy (JSON: resources and tree, "
                                                                  "or a fair-sharing scenario)", html.Br(),
                                                                  html.Small("drag and drop or click")])),
                                    dcc.Download(id=HIER_DOWNLOAD),
                                    html.Div(id=HIER_MSG, className="message"),
                                ],
                                className="workspace-box",
                            ),
                        ],
                        className="panel tree-panel",
                    ),
                    html.Section(
                        [
                            html.H3("Selected node", id=FORM_TITLE),
                            _field("Name", dcc.Input(id=NAME, type="text", debounce=True)),
                            _field("Weight", dcc.Input(id=WEIGHT, type="text")),
                            html.Div(
                                [
                                    html.Div(id=DEMANDS),
                                    _field("Tasks", dcc.Input(id=TASKS, type="text")),
                                    _field("Task duration (s)", dcc.Input(id=DURATION, type="text")),
                                    _field("Arrival (s)", dcc.Input(id=ARRIVAL, type="text")),
                                    _field("Departure (s, empty = none)", dcc.Input(id=DEPARTURE, type="text")),
                                ],
                                id=JOB_FIELDS,
                            ),
                            html.Button("Apply", id=APPLY, className="primary"),
                            html.H3("Cluster capacity"),
                            dash_table.DataTable(
                                id=CAPACITY,
                                columns=[{"name": "resource", "id": "name"},
                                         {"name": "capacity", "id": "capacity", "type": "numeric"},
                                         {"name": "unit", "id": "unit"}],
                                data=[], editable=True, row_deletable=True,
                                style_cell={"fontFamily": "inherit", "padding": "4px"},
                            ),
                            html.Button("Add resource type", id=ADD_RESOURCE),
                            html.Div(id=CAPACITY_MSG, className="message"),
                        ],
                        className="panel form-panel",
                    ),
                    html.Section(
                        [
                            html.H3("Policies"),
                            dcc.Checklist(id=POLICIES, options=REGISTRY.options(ENGINE), value=DEFAULT_POLICIES,
                                          className="checklist"),
                            html.P(MCH_EXACTNESS, className="hint"),
                            html.Div(
                                [html.Button("Run", id=RUN, className="primary"),
                                 html.Button("Cancel", id=CANCEL, disabled=True)],
                                className="button-row",
                            ),
                            html.Progress(id=PROGRESS, value="0", max="100"),
                            html.Div(id=RUN_MSG, className="message"),
                            dash_table.DataTable(id=SUMMARY, data=[], columns=[], style_cell={"fontFamily": "inherit"},
                                                 style_table={"overflowX": "auto"}),
                            html.Div(
                                [dcc.Dropdown(id=EXPORT_RUN, placeholder="Run to export", clearable=False)]
                                + [html.Button(f"{name}.csv", id={"type": EXPORT_BUTTONS, "frame": name})
                                   for name in FRAMES],
                                className="button-row export",
                            ),
                        ],
                        className="panel run-panel",
                    ),
                ],
                className="editor-grid",
            ),
            html.Section(
                [
                    html.H3("Paper beside ours: MCH Fig. 4"),
                    html.P(f"Dominant shares at {FIG4_ALL_ACTIVE_AT:.0f} s (all six jobs active) and MCH at "
                           f"{FIG4_AFTER_N12_AT:.0f} s (after n12 left at 790 s; the paper: n23 rises to 1)."),
                    dash_table.DataTable(id=PAPER, data=[], columns=[], style_cell={"fontFamily": "inherit"}),
                ],
                id=PAPER_BOX, className="panel", style={"display": "none"},
            ),
            html.Section(
                [
                    html.H3("Dominant share over time"),
                    html.P("Zoom a time window in one panel to zoom all; hover a job to highlight it everywhere; "
                           "click to pick the instant below.", className="hint"),
                    html.Div(dcc.Graph(id=SHARES, config=GRAPH_CONFIG), className="graph-box"),
                    html.Div(
                        [_field("Instant (s)", dcc.Input(id=INSTANT, type="number", value=None, debounce=True))],
                        className="button-row",
                    ),
                    html.Div(
                        [dcc.Graph(id=TASKS_AT, config=GRAPH_CONFIG),
                         dcc.Graph(id=COST, config=GRAPH_CONFIG)],
                        className="two-graphs",
                    ),
                ],
                className="panel",
            ),
        ],
        className="fairshare-page",
    )


# ---- pure helpers (unit-tested without a browser) -------------------------------------------


def tree_elements(draft: dict) -> list[dict]:
    """Cytoscape nodes and edges for the draft's tree.

    Beyond :data:`TREE_MAX_JOBS` jobs the jobs are left out and each
    department's label counts the jobs directly below it.
    """
    elements = []
    fold = len(leaves_of(draft)) > TREE_MAX_JOBS

    def visit(node, parent):
        job = tree_edit.is_job(node)
        if fold and job:
            return
        label = node["name"] if node.get("weight", 1) == 1 else f"{node['name']}\nw={node['weight']:g}"
        jobs = sum(tree_edit.is_job(child) for child in node.get("children", ()))
        if fold and jobs:
            label += f"\n{jobs} jobs"
        elements.append({"data": {"id": node["name"], "label": label}, "classes": "job" if job else "department"})
        if parent is not None:
            elements.append({"data": {"source": parent, "target": node["name"]}})
        for child in node.get("children", ()):
            visit(child, node["name"])

    visit(draft["tree"], None)
    return elements


def share_nodes(model: dict) -> list[str]:
    """The tree nodes a large tree's share heatmaps show, in tree order.

    Starting below the root, a level is replaced by the next one down (jobs
    stay) while that has at most :data:`SHARE_NODES` nodes: for a full binary
    tree of 1,024 jobs below 32 bottom departments, those 32 departments.
    """
    level = model["tree"].get("children") or [model["tree"]]
    while any(node.get("children") for node in level):
        deeper = [child for node in level for child in (node.get("children") or [node])]
        if len(deeper) > SHARE_NODES:
            break
        level = deeper
    return [node["name"] for node in level]


def leaves_of(draft: dict) -> list[str]:
    names = []

    def visit(node):
        if tree_edit.is_job(node):
            names.append(node["name"])
        for child in node.get("children", ()):
            visit(child)

    visit(draft["tree"])
    return names


def hierarchy_from_document(document: dict, source: str) -> dict:
    """The model (resources and tree) in a saved or uploaded hierarchy, validated.

    Accepts the model itself or a whole fair-sharing scenario (its
    ``model``); raises :class:`ScenarioError` naming ``source`` and the field.
    """
    if "engine" in document:
        if document.get("engine") != ENGINE:
            raise ScenarioError("engine", f"a {document.get('engine')!r} scenario has no hierarchy", source=source)
        document = document.get("model")
        if not isinstance(document, dict):
            raise ScenarioError("model", "must be a JSON object with resources and tree", source=source)
    try:
        normalize_model(document, require_jobs=False)
    except ScenarioError as exc:
        raise ScenarioError(exc.field, exc.message, source=source, line=exc.line) from None
    return document


def hierarchy_action(trigger, draft: dict, payload: dict, uploads) -> dict:
    """Open, save, upload or download the hierarchy; returns the outputs that change, by name.

    Names: ``draft``, ``message``, ``download``. On any error the draft stays
    as it was and the message says why.
    """
    try:
        if trigger == HIER_CHOICE:
            if not payload["choice"]:
                return {}
            document, label = load_item(uploads, HIERARCHY, payload["choice"])
            model = hierarchy_from_document(document, label)
            return {"draft": model, "message": html.Span(f"Opened {label}.", className="ok")}
        if trigger == SAVE_HIER:
            label = clean_name(payload["name"], "hierarchy name")
            normalize_model(draft, require_jobs=False)
            save_item(uploads, HIERARCHY, draft, label)
            return {"message": html.Span(f"Saved the hierarchy as {label!r} in the workspace.", className="ok")}
        if trigger == HIER_UPLOAD:
            if not payload["contents"]:
                return {}
            filename = payload["filename"] or "hierarchy.json"
            data = data_url_bytes(payload["contents"], uploads.max_bytes, filename)
            model = hierarchy_from_document(parse_item(data, filename), filename)
            label = filename.rsplit(".", 1)[0]
            save_item(uploads, HIERARCHY, model, label)
            return {"draft": model, "message": html.Span(f"Loaded {filename} and saved it as {label!r}.",
                                                         className="ok")}
        if trigger == EXPORT_HIER:
            return {"download": {"content": json.dumps(draft, indent=2), "filename": "hierarchy.json",
                                 "type": "application/json"}}
    except (ScenarioError, UploadError) as exc:
        return {"message": html.Span(f"{str(exc).rstrip('.')}. The hierarchy on screen is unchanged.", className="error")}
    return {}


def edit_draft(trigger, draft, selected, form, rows):
    """Apply one editor action. Returns ``(draft, selected, rows, tree_msg, capacity_msg, policies)``.

    Invalid input leaves the draft as it was and explains why; ``no_update``
    marks outputs that do not change.
    """
    try:
        if trigger == PRESET:
            model = fig4_model()
            return model, None, model["resources"], "", "", FIG4_POLICIES
        if trigger == RESET:
            model = starter_model()
            return model, None, model["resources"], "", "", no_update
        if trigger == ADD_DEPT:
            new, name = tree_edit.add_department(draft, selected)
            return new, name, no_update, f"Added department {name}.", no_update, no_update
        if trigger == ADD_JOB:
            new, name = tree_edit.add_job(draft, selected)
            return new, name, no_update, f"Added job {name}: edit it on the right.", no_update, no_update
        if trigger == REMOVE:
            return tree_edit.remove(draft, selected), None, no_update, f"Removed {selected}.", no_update, no_update
        if trigger == APPLY:
            if not selected:
                raise ScenarioError("selection", "select a node in the tree first")
            new = tree_edit.apply_form(draft, selected, form)
            return new, form.get("name", selected), no_update, "Applied.", no_update, no_update
        if trigger == CAPACITY:
            try:
                new = tree_edit.set_resources(draft, rows)
            except ScenarioError as exc:
                return no_update, no_update, no_update, no_update, _error_text(exc), no_update
            return new, no_update, no_update, no_update, "", no_update
        if trigger == ADD_RESOURCE:
            return no_update, no_update, [*rows, {"name": "", "capacity": None, "unit": ""}], no_update, \
                "Name the new resource and give it a capacity.", no_update
    except ScenarioError as exc:
        return no_update, no_update, no_update, _error_text(exc), no_update, no_update
    return no_update, no_update, no_update, no_update, no_update, no_update


def _error_text(exc: ScenarioError) -> html.Span:
    return html.Span(str(exc), className="error")


def run_policies(results, draft, policies, report):
    """Run every chosen policy on the draft; returns ``(run records, message)``.

    ``report(done, total)`` is called with progress in percent units. A
    :class:`ScenarioError` stops before anything is replaced.
    """
    if not policies:
        raise ScenarioError("policy", "choose at least one policy")
    model = normalize_model(draft)
    model_hash = content_hash(model)
    records = []
    for index, policy in enumerate(policies):
        scenario = {"engine": ENGINE, "policy": policy, "model": model, "seed": 0}
        result, cached = results.run(
            scenario, progress=lambda fraction, i=index: report(int(100 * (i + fraction)), 100 * len(policies))
        )
        records.append({
            "policy": policy, "label": REGISTRY.policy(ENGINE, policy).label, "hash": result.scenario_hash,
            "model_hash": model_hash, "cached": cached, "wall_seconds": result.wall_seconds,
        })
        report(100 * (index + 1), 100 * len(policies))
    fresh = sum(not r["cached"] for r in records)
    return records, f"{len(records)} run(s): {fresh} simulated, {len(records) - fresh} from the cache."


def _share_inputs(loaded) -> tuple[list[tuple[str, object]], list[str], list[str]]:
    """``([(policy label, timeline)], leaves in tree order, heatmap nodes)`` of loaded runs."""
    first = loaded[0][1]
    return ([(r["label"], res.timeline) for r, res in loaded], list(first.jobs.job_id),
            share_nodes(first.scenario["model"]))


def chart_outputs(loaded, hovered: str | None) -> tuple:
    """The run charts and tables of ``[(run record, result)]``, in the ``_charts`` callback's output order.

    Shares figure (``hovered`` highlighted), decision cost, summary rows and
    columns, paper table rows, columns and style, export choices.
    """
    if not loaded:
        return (figures.share_timelines([], []), figures.decision_cost([]), [], [], [], [], {"display": "none"}, [])
    runs, leaves, nodes = _share_inputs(loaded)
    summary, summary_cols = _table(summary_rows(loaded))
    paper_rows, paper_cols, paper_style = [], [], {"display": "none"}
    if all(r["model_hash"] == FIG4_MODEL_HASH for r, _ in loaded):
        paper_rows, paper_cols = _table(figures.fig4_table(
            dict(runs), FIG4_PAPER_SHARES, FIG4_PAPER_WEIGHTS, FIG4_ALL_ACTIVE_AT, FIG4_AFTER_N12_AT))
        paper_style = {"display": "block"}
    return (figures.share_timelines(runs, leaves, hovered, nodes),
            figures.decision_cost([(r["label"], res.summary) for r, res in loaded]),
            summary, summary_cols, paper_rows, paper_cols, paper_style,
            [{"label": r["label"], "value": r["hash"]} for r, _ in loaded])


def tasks_figure(loaded, instant):
    """Running tasks per leaf at ``instant`` (default: half the longest makespan)."""
    if not loaded:
        return figures.tasks_at([], [], 0)
    runs, leaves, _ = _share_inputs(loaded)
    end = max(float(res.summary_value("makespan_s")) for _, res in loaded)
    return figures.tasks_at(runs, leaves, end / 2 if instant is None else float(instant))


def share_highlight(loaded, hovered: str | None):
    """The patch of the shares figure that highlights ``hovered`` instead (see :func:`figures.share_highlight`)."""
    runs, leaves, nodes = _share_inputs(loaded)
    return figures.share_highlight(runs, leaves, hovered, nodes)


def hovered_leaf(hover: dict | None) -> str | None:
    """The node under the pointer in the shares figure: a line's leaf (``customdata``), a heatmap row's label."""
    points = (hover or {}).get("points") or []
    if not points:
        return None
    name = points[0].get("customdata", points[0].get("y"))
    return name if isinstance(name, str) else None


def tree_stylesheet(leaf: str | None) -> list[dict]:
    """The tree's style, with ``leaf`` (any node name, dots included) outlined."""
    if not leaf:
        return TREE_STYLE
    return [*TREE_STYLE, {"selector": f"node[id = {json.dumps(leaf)}]",
                          "style": {"border-width": 4, "border-color": "#d62728"}}]


def summary_rows(loaded) -> list[dict]:
    """One row per ``(run record, result)`` pair for the summary table."""
    return [
        {
            "policy": record["label"],
            "makespan (s)": round(result.summary_value("makespan_s"), 1),
            "decisions": int(result.summary_value("decisions")),
            "scheduler (ms)": round(1000 * result.summary_value("scheduler_cpu_s"), 2),
            "wall (s)": round(record["wall_seconds"], 3),
            "source": "cached" if record["cached"] else "simulated",
        }
        for record, result in loaded
    ]


def _table(rows):
    return rows, [{"name": key, "id": key} for key in (rows[0] if rows else {})]


def register_callbacks(app, results, uploads) -> None:
    """Wire the page; ``results`` is the app's :class:`~components.services.runs.ResultCache`, ``uploads`` its UploadStore."""
    register_run_feedback(app, RUN, CANCEL, PROGRESS, RUN_MSG)

    @app.callback(Output(TREE, "elements"), Input(DRAFT, "data"))
    def _elements(draft):
        return tree_elements(draft)

    @app.callback(
        Output(CAPACITY, "data", allow_duplicate=True), Input(CAPACITY, "id"), State(DRAFT, "data"),
        prevent_initial_call="initial_duplicate",
    )
    def _capacity_rows(_, draft):
        return draft["resources"]

    @app.callback(Output(SELECTED, "data", allow_duplicate=True), Input(TREE, "tapNodeData"), prevent_initial_call=True)
    def _select(node):
        return node["id"] if node else None

    @app.callback(
        Output(FORM_TITLE, "children"), Output(NAME, "value"), Output(WEIGHT, "value"), Output(DEMANDS, "children"),
        Output(TASKS, "value"), Output(DURATION, "value"), Output(ARRIVAL, "value"), Output(DEPARTURE, "value"),
        Output(JOB_FIELDS, "style"),
        Input(SELECTED, "data"), Input(DRAFT, "data"),
    )
    def _form(selected, draft):
        values = tree_edit.form_values(draft, selected)
        if not values:
            return "Select a node in the tree", "", "", [], "", "", "", "", {"display": "none"}
        demands = [
            _field(f"Demand per task: {name}", dcc.Input(id={"type": DEMAND, "resource": name}, type="text",
                                                         value=amount))
            for name, amount in values.get("demand", {}).items()
        ]
        kind = "Job" if values["job"] else "Department"
        return (f"{kind} {values['name']}", values["name"], values["weight"], demands, values.get("tasks", ""),
                values.get("duration", ""), values.get("arrival", ""), values.get("departure") or "",
                {"display": "block"} if values["job"] else {"display": "none"})

    @app.callback(
        Output(DRAFT, "data"), Output(SELECTED, "data"), Output(CAPACITY, "data"), Output(TREE_MSG, "children"),
        Output(CAPACITY_MSG, "children"), Output(POLICIES, "value"),
        Input(PRESET, "n_clicks"), Input(RESET, "n_clicks"), Input(ADD_DEPT, "n_clicks"), Input(ADD_JOB, "n_clicks"),
        Input(REMOVE, "n_clicks"), Input(APPLY, "n_clicks"), Input(CAPACITY, "data_timestamp"),
        Input(ADD_RESOURCE, "n_clicks"),
        State(DRAFT, "data"), State(SELECTED, "data"), State(CAPACITY, "data"), State(NAME, "value"),
        State(WEIGHT, "value"), State(TASKS, "value"), State(DURATION, "value"), State(ARRIVAL, "value"),
        State(DEPARTURE, "value"), State({"type": DEMAND, "resource": ALL}, "value"),
        State({"type": DEMAND, "resource": ALL}, "id"),
        prevent_initial_call=True,
    )
    def _edit(*args):
        draft, selected, rows, name, weight, tasks, duration, arrival, departure, amounts, ids = args[8:]
        form = {"name": name, "weight": weight, "tasks": tasks, "duration": duration, "arrival": arrival,
                "departure": departure, "demand": {i["resource"]: a for i, a in zip(ids, amounts)}}
        return edit_draft(ctx.triggered_id, draft, selected, form, rows)

    @app.callback(
        Output(DRAFT, "data", allow_duplicate=True), Output(SELECTED, "data", allow_duplicate=True),
        Output(CAPACITY, "data", allow_duplicate=True), Output(HIER_MSG, "children"), Output(HIER_DOWNLOAD, "data"),
        Input(HIER_CHOICE, "value"), Input(SAVE_HIER, "n_clicks"), Input(HIER_UPLOAD, "contents"),
        Input(EXPORT_HIER, "n_clicks"),
        State(HIER_NAME, "value"), State(HIER_UPLOAD, "filename"), State(DRAFT, "data"),
        prevent_initial_call=True,
    )
    def _hierarchy(choice, _s, contents, _e, name, filename, draft):
        payload = {"choice": choice, "name": name, "contents": contents, "filename": filename}
        out = hierarchy_action(ctx.triggered_id, draft, payload, uploads)
        model = out.get("draft")
        return (model or no_update, None if model else no_update, model["resources"] if model else no_update,
                out.get("message", no_update), out.get("download", no_update))

    @app.callback(Output(HIER_CHOICE, "options"), Input(HIER_CHOICE, "id"), Input(HIER_MSG, "children"))
    def _hierarchy_choices(_, __):
        return saved_choices(uploads, HIERARCHY)

    @app.callback(
        Output(RUNS, "data"), Output(RUN_MSG, "children"),
        Input(RUN, "n_clicks"), State(DRAFT, "data"), State(POLICIES, "value"),
        background=True, interval=POLL_MS,
        running=[(Output(RUN, "disabled"), True, False), (Output(CANCEL, "disabled"), False, True)],
        cancel=[Input(CANCEL, "n_clicks")],
        progress=[Output(PROGRESS, "value"), Output(PROGRESS, "max")],
        progress_default=EMPTY_PROGRESS,
        prevent_initial_call=True,
    )
    def _run(set_progress, _, draft, policies):
        try:
            records, message = run_policies(results, draft, policies, throttled(set_progress))
        except ScenarioError as exc:
            return no_update, html.Span(f"Not run: {exc}", className="error")
        return records, html.Span(message, className="ok")

    @app.callback(
        Output(SHARES, "figure"), Output(COST, "figure"),
        Output(SUMMARY, "data"), Output(SUMMARY, "columns"), Output(PAPER, "data"), Output(PAPER, "columns"),
        Output(PAPER_BOX, "style"), Output(EXPORT_RUN, "options"),
        Input(RUNS, "data"), State(HOVER, "data"),
    )
    def _charts(records, hovered):
        return chart_outputs(loaded_runs(results, records), hovered)

    @app.callback(Output(TASKS_AT, "figure"), Input(RUNS, "data"), Input(INSTANT, "value"))
    def _tasks_at(records, instant):
        return tasks_figure(loaded_runs(results, records), instant)

    @app.callback(Output(SHARES, "figure", allow_duplicate=True), Input(HOVER, "data"), State(RUNS, "data"),
                  prevent_initial_call=True)
    def _share_highlight(hovered, records):
        loaded = loaded_runs(results, records)
        return share_highlight(loaded, hovered) if loaded else no_update

    @app.callback(Output(HOVER, "data"), Input(SHARES, "hoverData"), prevent_initial_call=True)
    def _hover(hover):
        return hovered_leaf(hover)

    @app.callback(Output(TREE, "stylesheet"), Input(HOVER, "data"))
    def _highlight(leaf):
        return tree_stylesheet(leaf)

    @app.callback(Output(INSTANT, "value"), Input(SHARES, "clickData"), prevent_initial_call=True)
    def _instant(click):
        return round(float(click["points"][0]["x"]), 1) if click else no_update

    @app.callback(
        Output(DOWNLOAD, "data"), Input({"type": EXPORT_BUTTONS, "frame": ALL}, "n_clicks"),
        State(EXPORT_RUN, "value"), prevent_initial_call=True,
    )
    def _export(clicks, run_hash):
        result = results.get(run_hash) if run_hash and any(clicks) else None
        if result is None:
            return no_update
        frame = ctx.triggered_id["frame"]
        policy = result.scenario["policy"]
        return send_csv(result.frames()[frame], f"{policy}-{frame}.csv")
