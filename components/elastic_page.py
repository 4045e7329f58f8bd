"""The "Memory elasticity" page: YARN, YARN-ME and Meganode on a generated or uploaded trace.

Data flow: the form (cluster, Table 2 generator parameters, penalty model,
schedulers) builds one elasticity model; a loaded trace (an upload, stored
content-addressed as ``<sha256>.trace``, or a preset's listed jobs) lives in
a browser-local Store and is referred to by stored name, never by a path the
browser could choose. An upload is parsed before it replaces anything: a bad
file gets a message naming its line and field and the previous trace stays.
Run validates every scheduler's scenario first, then runs them in a
background callback (results cached by scenario hash) and keeps small run
records; an error keeps the previous records and so the previous charts.
Zooming the time axis of any time chart sets the shared window.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from dash import ALL, Input, Output, State, ctx, dash_table, dcc, html, no_update

from sched_engine import ScenarioError, normalize_scenario
from sched_engine.elastic.model import load_inputs, normalize_model
from sched_engine.elastic.penalty import normalize_penalty
from sched_engine.elastic.presets import paper_model, two_job_model
from sched_engine.elastic.traces import DISTRIBUTIONS, MB_PER_GB, read_trace
from sched_engine.registry import REGISTRY

from .chart_config import GRAPH_CONFIG
from .figures import elastic as figures
from .figures.common import empty_figure
from .run_feedback import EMPTY_PROGRESS
from .run_feedback import register as register_run_feedback
from .services.csv_export import send_csv
from .services.progress import POLL_MS, throttled
from .services.runs import loaded_runs
from .services.uploads import UploadError, upload_choices
from .widgets.time_window import window_from_relayout

ENGINE = "elastic"
LOADED = "elastic-loaded-store"
RUNS = "elastic-runs-store"
WINDOW = "elastic-window-store"
PRESET_PAPER = "elastic-preset-paper-button"
PRESET_TWO_JOB = "elastic-preset-two-job-button"
NODES = "elastic-cluster-nodes-input"
CORES = "elastic-cluster-cores-input"
MEMORY = "elastic-cluster-memory-input"
SOURCE = "elastic-trace-source-radio"
JOBS = "elastic-trace-jobs-input"
DISTRIBUTION = "elastic-trace-distribution-radio"
RANGE = "elastic-trace-range-input"  # pattern-matching type, keyed by parameter and end (0 = min, 1 = max)
SEED = "elastic-trace-seed-input"
TRACE_UPLOAD = "elastic-trace-upload"
TRACE_CHOICE = "elastic-trace-choice-dropdown"
TRACE_MSG = "elastic-trace-message"
TRACE_INFO = "elastic-trace-info"
PENALTY_KIND = "elastic-penalty-kind-radio"
FACTOR = "elastic-penalty-factor-input"
SHAPE = "elastic-penalty-shape-radio"
PROFILE_FRACTION = "elastic-penalty-fraction-input"
PROFILE_RATIO = "elastic-penalty-ratio-input"
FITTED_BOX = "elastic-penalty-fitted-box"
FACTOR_BOX = "elastic-penalty-factor-box"
PENALTY_MSG = "elastic-penalty-message"
PROFILE = "elastic-penalty-profile-graph"
POLICIES = "elastic-run-policies-checklist"
RUN = "elastic-run-button"
CANCEL = "elastic-cancel-button"
PROGRESS = "elastic-run-progress"
RUN_MSG = "elastic-run-message"
SUMMARY = "elastic-summary-table"
RATIO = "elastic-summary-ratio"
JOB_TABLE = "elastic-jobs-table"
EXPORT_BUTTONS = "elastic-export-button"  # pattern-matching type, keyed by frame
DOWNLOAD = "elastic-download"
WINDOW_MSG = "elastic-window-message"
RESET_WINDOW = "elastic-reset-window-button"
MEMORY_GRAPH = "elastic-memory-graph"
TASKS_GRAPH = "elastic-tasks-graph"
SCATTER = "elastic-scatter-graph"
CDF = "elastic-cdf-graph"
JOB = "elastic-node-job-dropdown"
NODE_GRAPH = "elastic-node-graph"

RANGES = (
    # parameter, label, step, whole numbers
    ("tasks_per_job", "Tasks per job", 1, True),
    ("memory_gb", "Memory per task (GB)", 0.1, False),
    ("duration_s", "Task duration (s)", 1, False),
)
FRAMES = ("jobs", "timeline", "summary")
#: Rows per page of the job table (pages are cut on the server).
JOB_PAGE_SIZE = 10
#: Choices the job dropdown holds at once; type to search the others.
JOB_OPTIONS = 200


def _error(text) -> html.Span:
    return html.Span(str(text), className="error")


def _number(value, label: str, *, integer=False, minimum=None, above=None):
    """A form value as a number; a :class:`ScenarioError` naming the form field otherwise."""
    if value is None or value == "":
        raise ScenarioError(label, "enter a number")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ScenarioError(label, f"must be a number, got {value!r}")
    if integer and value != int(value):
        raise ScenarioError(label, f"must be a whole number, got {value!r}")
    if minimum is not None and value < minimum:
        raise ScenarioError(label, f"must be at least {minimum:g}, got {value:g}")
    if above is not None and value <= above:
        raise ScenarioError(label, f"must be greater than {above:g}, got {value:g}")
    return int(value) if integer else float(value)


def controls_from_model(model: dict) -> dict:
    """Form values that reproduce an engine model (used by the presets).

    A generated trace fills the generator fields; listed jobs become the
    loaded trace (``loaded``).
    """
    group = model["nodes"][0]
    trace = model["trace"]
    penalty = model["penalty"]
    controls = {
        "nodes": group["count"], "cores": group["cores"], "node_memory_gb": group["memory_mb"] / MB_PER_GB,
        "penalty_kind": penalty["kind"], "factor": penalty.get("factor", 1.5),
        "policies": [option["value"] for option in REGISTRY.options(ENGINE)],
    }
    if trace["kind"] == "generated":
        controls.update({"source": "generated", "jobs": trace["jobs"], "distribution": trace["distribution"],
                         **{name: trace[name] for name, *_ in RANGES}, "loaded": None})
    else:
        controls.update({"source": "loaded", "loaded": trace})
    return controls


PRESETS = {
    PRESET_PAPER: ("YARN-ME paper, 100 nodes", paper_model),
    PRESET_TWO_JOB: ("Two-job example", two_job_model),
}


def preset_controls(button: str) -> dict:
    label, factory = PRESETS[button]
    model = factory()
    controls = controls_from_model(model)
    if controls["loaded"] is not None:
        controls["loaded"] = {**controls["loaded"], "label": label.lower()}
    return controls


def penalty_from_form(kind: str, factor, shape: str, fraction, ratio) -> dict:
    """A checked penalty model from the form; raises :class:`ScenarioError` naming the input."""
    if kind == "fitted":
        model = {"kind": "fitted", "shape": shape,
                 "profile_fraction": _number(fraction, "Profiling run: memory fraction"),
                 "profile_ratio": _number(ratio, "Profiling run: runtime / ideal")}
    else:
        model = {"kind": kind, "factor": _number(factor, "Penalty factor")}
    try:
        return normalize_penalty(model)
    except ScenarioError as exc:
        label = {"penalty.factor": "Penalty factor", "penalty.profile_fraction": "Profiling run: memory fraction",
                 "penalty.profile_ratio": "Profiling run: runtime / ideal"}.get(exc.field, exc.field)
        raise ScenarioError(label, exc.message) from None


def trace_spec(form: dict, loaded: dict | None, uploads) -> dict:
    """The model's ``trace``: generated from the form, or the loaded one (an upload resolved to its file)."""
    if form["source"] == "generated":
        ranges = {}
        for name, label, _, integer in RANGES:
            low, high = form["ranges"].get(name, (None, None))
            ranges[name] = [_number(low, f"{label} min", integer=integer, above=0),
                            _number(high, f"{label} max", integer=integer, above=0)]
            if ranges[name][1] < ranges[name][0]:
                raise ScenarioError(label, f"max {ranges[name][1]:g} is below min {ranges[name][0]:g}")
        return {"kind": "generated", "distribution": form["distribution"],
                "jobs": _number(form["jobs"], "Jobs", integer=True, minimum=1), **ranges}
    if not loaded:
        raise ScenarioError("Trace", "no trace loaded: upload an SLS JSON or CSV trace, or generate one")
    if loaded["kind"] == "jobs":
        return {"kind": "jobs", "jobs": loaded["jobs"]}
    try:
        path = uploads.path_of(loaded["name"])
    except UploadError as exc:
        raise ScenarioError("Trace", f"{loaded['label']}: {exc}") from None
    return {"kind": "file", "path": str(path), "format": "auto", "label": loaded["label"]}


def build_model(form: dict, loaded: dict | None, uploads) -> dict:
    """The normalised elasticity model the form describes.

    ``form``: ``nodes``, ``cores``, ``node_memory_gb``, ``source``
    (generated|loaded), ``jobs``, ``distribution``, ``ranges`` ({parameter:
    [min, max]}), ``penalty`` (the form's penalty fields). Raises
    :class:`ScenarioError` naming the form field or the trace's file, line
    and field (e.g. a task needing more memory than any node).
    """
    nodes = [{"count": _number(form["nodes"], "Nodes", integer=True, minimum=1),
              "cores": _number(form["cores"], "Cores per node", integer=True, minimum=1),
              "memory_mb": int(round(_number(form["node_memory_gb"], "Memory per node (GB)", above=0) * MB_PER_GB))}]
    penalty = penalty_from_form(**form["penalty"])
    return normalize_model({"nodes": nodes, "memory_step_mb": 100, "penalty": penalty,
                            "trace": trace_spec(form, loaded, uploads)})


def trace_facts(model: dict, seed: int) -> list[tuple[str, str]]:
    """What a person checks before running: the jobs exactly as the engine will draw or read them."""
    jobs = load_inputs(model, np.random.default_rng(seed)).jobs
    groups = [g for job in jobs for g in job.groups]
    arrivals = [job.arrival for job in jobs]
    tasks = sum(g.count for g in groups)
    reduces = sum(g.count for g in groups if g.phase)
    trace = model["trace"]
    source = {"generated": f"generated ({trace.get('distribution')}, seed {seed})",
              "file": trace.get("label"), "jobs": "listed jobs"}[trace["kind"]]
    return [
        ("Trace", str(source)),
        ("Jobs", f"{len(jobs):,}"),
        ("Tasks", f"{tasks:,} ({tasks - reduces:,} map, {reduces:,} reduce)"),
        ("Arrivals", f"{min(arrivals):,.0f} – {max(arrivals):,.0f} s"),
        ("Task memory", f"{min(g.memory_mb for g in groups):,} – {max(g.memory_mb for g in groups):,} MB"),
        ("Task duration", f"{min(g.duration for g in groups):,.1f} – {max(g.duration for g in groups):,.1f} s"),
        ("Cluster", f"{sum(n['count'] for n in model['nodes'])} nodes × {model['nodes'][0]['cores']} cores, "
                    f"{model['nodes'][0]['memory_mb']:,} MB"),
    ]


def facts_list(facts: list[tuple[str, str]]) -> html.Dl:
    return html.Dl([item for key, value in facts for item in (html.Dt(key), html.Dd(value))], className="facts")


def apply_upload(contents: str, filename: str, uploads) -> tuple[dict, str]:
    """Store an uploaded trace and check it parses; returns ``(loaded trace ref, message)``.

    Raises :class:`ScenarioError` (file, line, field) or :class:`UploadError`.
    """
    path = uploads.save_data_url(contents, "trace", filename)
    return stored_trace(path, filename or path.name)


def stored_trace(path, label: str) -> tuple[dict, str]:
    """Check a stored trace file parses; returns ``(loaded trace ref, message)``; raises :class:`ScenarioError`."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ScenarioError("", "not a text file (expected SLS/DSS JSON or CSV)", source=label) from None
    jobs = read_trace(text, label)
    tasks = sum(g.count for job in jobs for g in job.groups)
    return ({"kind": "upload", "name": path.name, "label": label},
            f"Loaded {label}: {len(jobs):,} jobs, {tasks:,} tasks.")


def trace_choices(uploads) -> list[dict]:
    """Traces uploaded earlier in this page's formats (SLS/DSS JSON or CSV), newest first."""
    return upload_choices(uploads, "trace", suffixes=(".json", ".csv"))


def open_stored_trace(name: str, uploads) -> tuple[dict, str]:
    """``(loaded trace ref, message)`` for a trace uploaded earlier; raises ScenarioError or UploadError."""
    label = next((e["label"] for e in uploads.listing() if e["name"] == name), "upload")
    return stored_trace(uploads.path_of(name), label)


def scenarios(model: dict, policies: list[str], seed: int) -> list[dict]:
    """One checked scenario per scheduler (all with the same seed, so the same generated trace)."""
    if not policies:
        raise ScenarioError("Schedulers", "choose at least one scheduler")
    plans = [{"engine": ENGINE, "policy": policy, "model": model, "seed": seed} for policy in policies]
    for plan in plans:
        normalize_scenario(plan)
    return plans


def run_all(results, plans: list[dict], report) -> tuple[list[dict], str]:
    """Run every scenario through the cache; returns ``(run records, message)``.

    ``report(done, total)`` gets progress in percent units.
    """
    records = []
    total = 100 * len(plans)
    for index, plan in enumerate(plans):
        result, cached = results.run(plan, progress=lambda f, i=index: report(int(100 * (i + f)), total))
        records.append({"policy": plan["policy"], "label": REGISTRY.policy(ENGINE, plan["policy"]).label,
                        "hash": result.scenario_hash, "cached": cached, "wall_seconds": result.wall_seconds})
        report(100 * (index + 1), total)
    fresh = sum(not r["cached"] for r in records)
    wall = sum(r["wall_seconds"] for r in records if not r["cached"])
    return records, f"{len(records)} run(s): {fresh} simulated in {wall:.1f} s, {len(records) - fresh} from the cache."


def summary_rows(loaded) -> list[dict]:
    """One row per scheduler; ``avg runtime / YARN`` is the ratio of average job runtimes to YARN's."""
    base = next((res.summary_value("mean_job_runtime_s") for rec, res in loaded if rec["policy"] == "yarn"), None)
    rows = []
    for record, result in loaded:
        value = result.summary_value
        rows.append({
            "scheduler": record["label"], "jobs": int(value("jobs")), "tasks": int(value("tasks")),
            "avg job runtime (s)": round(value("mean_job_runtime_s"), 1), "makespan (s)": round(value("makespan_s"), 1),
            "avg runtime / YARN": round(value("mean_job_runtime_s") / base, 3) if base else None,
            "memory utilisation": round(value("memory_utilisation"), 3),
            "elastic tasks": int(value("elastic_tasks")), "scheduler CPU (s)": round(value("scheduler_cpu_s"), 3),
            "source": "cached" if record["cached"] else "simulated",
        })
    return rows


def ratio_text(loaded) -> str:
    """The headline: YARN-ME / YARN average job runtime (paper Fig. 6's y axis)."""
    values = {rec["policy"]: res.summary_value("mean_job_runtime_s") for rec, res in loaded}
    if "yarn" not in values or "yarn-me" not in values:
        return "Run YARN and YARN-ME to get the YARN-ME / YARN ratio."
    return (f"YARN-ME / YARN average job runtime: {values['yarn-me'] / values['yarn']:.3f} "
            f"({values['yarn-me']:,.1f} s vs {values['yarn']:,.1f} s).")


def results_outputs(loaded, chosen: str | None) -> tuple:
    """Summary rows and columns, the ratio headline, runtime scatter and CDF, and the job to show per node."""
    rows = summary_rows(loaded)
    by_policy = {rec["policy"]: (rec["label"], res.jobs) for rec, res in loaded}
    scatter = (figures.runtime_scatter(*by_policy["yarn"], *by_policy["yarn-me"])
               if "yarn" in by_policy and "yarn-me" in by_policy
               else empty_figure("Run YARN and YARN-ME to compare job runtimes.", 360))
    return (rows, [{"name": k, "id": k} for k in (rows[0] if rows else {})], ratio_text(loaded) if loaded else "",
            scatter, figures.runtime_cdf([(rec["label"], res.jobs) for rec, res in loaded]),
            default_job(loaded, chosen))


def over_time_outputs(loaded, window) -> tuple:
    """Memory utilisation and running tasks over time (the window only) and the window's note."""
    runs = [(rec["label"], res.timeline) for rec, res in loaded]
    note = f"window {window[0]:,.0f}–{window[1]:,.0f} s" if window else "whole run"
    return figures.memory_utilisation(runs, window), figures.running_tasks(runs, window), note


def job_frame(loaded) -> pd.DataFrame:
    """Per job: arrival and, per scheduler, its runtime (completion after arrival) and elastic tasks."""
    table = None
    for record, result in loaded:
        jobs = result.jobs.set_index("job_id")
        part = pd.DataFrame({f"{record['label']} runtime (s)": jobs["runtime_s"].round(1)})
        if (jobs["elastic_tasks"] > 0).any():
            part[f"{record['label']} elastic tasks"] = jobs["elastic_tasks"]
        if table is None:
            table = jobs[["submit_time", "tasks"]].rename(columns={"submit_time": "arrival (s)"}).round(1)
        table = table.join(part)
    return table.reset_index().rename(columns={"job_id": "job"})


def job_rows(loaded, sort_by=None, page: int = 0, size: int | None = None) -> list[dict]:
    """Rows of the job table (:func:`job_frame`), ordered by ``sort_by`` (a DataTable's ``sort_by``).

    With ``size``, only page ``page`` (from 0) of ``size`` rows.
    """
    if not loaded:
        return []
    frame = job_frame(loaded)
    for order in reversed(sort_by or []):
        if order.get("column_id") in frame.columns:
            frame = frame.sort_values(order["column_id"], ascending=order.get("direction") != "desc",
                                      kind="stable", na_position="last")
    if size is not None:
        frame = frame.iloc[page * size:(page + 1) * size]
    return frame.to_dict("records")


def job_table(loaded, page, sort_by) -> tuple[list[dict], list[dict], int]:
    """One page of the job table: ``(rows, columns, page count)``; a page past the end shows the last one."""
    count = len(loaded[0][1].jobs) if loaded else 0
    pages = max(1, math.ceil(count / JOB_PAGE_SIZE))
    rows = job_rows(loaded, sort_by, min(max(int(page or 0), 0), pages - 1), JOB_PAGE_SIZE)
    return rows, [{"name": key, "id": key} for key in (rows[0] if rows else {})], pages


def job_ids(loaded) -> list[str]:
    """The run's job ids, in trace order."""
    return list(loaded[0][1].jobs["job_id"]) if loaded else []


def job_options(ids: list[str], search: str | None, chosen: str | None) -> list[str]:
    """Choices of the job dropdown: every job of a small run; else at most :data:`JOB_OPTIONS` matching ``search``.

    The chosen job is always among them (a job picked in the scatter shows
    in the dropdown).
    """
    if len(ids) <= JOB_OPTIONS:
        return list(ids)
    needle = (search or "").strip().lower()
    matches = [job for job in ids if needle in str(job).lower()][:JOB_OPTIONS]
    return matches if chosen is None or chosen in matches else [chosen, *matches[:JOB_OPTIONS - 1]]


def default_job(loaded, current: str | None) -> str | None:
    """Keep the chosen job if the run has it, else the job with the most elastic tasks (first on ties)."""
    if not loaded:
        return None
    jobs = loaded[0][1].jobs
    if current is not None and current in set(jobs["job_id"]):
        return current
    elastic = sum(res.jobs.set_index("job_id")["elastic_tasks"] for _, res in loaded)
    return str(elastic.reindex(jobs["job_id"]).idxmax()) if len(jobs) else None


def export_frame(loaded, frame: str) -> pd.DataFrame:
    """One frame of every scheduler of the run, stacked with a ``scheduler`` column first."""
    parts = []
    for record, result in loaded:
        part = result.frames()[frame]
        parts.append(part.assign(scheduler=record["policy"])[["scheduler", *part.columns]])
    return pd.concat(parts, ignore_index=True)


def _field(label, component, hint=None):
    children = [html.Span(label), component]
    if hint:
        children.append(html.Small(hint, className="hint"))
    return html.Label(children, className="field")


def _number_input(component_id, value, **kwargs):
    return dcc.Input(id=component_id, type="number", value=value, persistence=True, debounce=True, **kwargs)


def _range_row(name, label, step, values):
    return html.Div(
        [html.Span(label, className="range-label")]
        + [_number_input({"type": RANGE, "name": name, "end": end}, values[end], min=0, step=step,
                         placeholder="min" if end == 0 else "max")
           for end in (0, 1)],
        className="range-row",
    )


def _graph(component_id):
    return dcc.Graph(id=component_id, config=GRAPH_CONFIG)


def layout() -> html.Div:
    start = preset_controls(PRESET_PAPER)
    return html.Div(
        [
            dcc.Store(id=LOADED, storage_type="local", data=None),
            dcc.Store(id=RUNS, storage_type="local", data=[]),
            dcc.Store(id=WINDOW, data=None),
            dcc.Download(id=DOWNLOAD),
            html.Div(
                [
                    html.H2("Memory elasticity"),
                    html.P("YARN against YARN-ME, which runs a task with less than its ideal memory when the "
                           "penalty does not delay its job, and the pooled Meganode bound (Iorgulescu et al., "
                           "ATC'17)."),
                    html.Button(PRESETS[PRESET_PAPER][0], id=PRESET_PAPER, className="preset"),
                    html.Button(PRESETS[PRESET_TWO_JOB][0], id=PRESET_TWO_JOB, className="preset"),
                ],
                className="page-head",
            ),
            html.Div(
                [
                    html.Section(
                        [
                            html.H3("Cluster"),
                            html.Div([
                                _field("Nodes", _number_input(NODES, start["nodes"], step=1)),
                                _field("Cores per node", _number_input(CORES, start["cores"], step=1)),
                                _field("Memory per node (GB)", _number_input(MEMORY, start["node_memory_gb"], min=0.1,
                                                                              step=0.1)),
                            ], className="inline-fields"),
                            html.P("Each task takes one core; memory is granted in 100 MB steps (1 GB = 1000 MB).",
                                   className="hint"),
                            html.H3("Penalty model"),
                            dcc.RadioItems(id=PENALTY_KIND, value=start["penalty_kind"], persistence=True,
                                           className="checklist inline",
                                           options=[{"label": "step (mappers)", "value": "step"},
                                                    {"label": "spill sawtooth (reducers)", "value": "spill"},
                                                    {"label": "fitted from two profiling runs", "value": "fitted"}]),
                            html.Div(_field("Penalty factor", _number_input(FACTOR, start["factor"], min=1, step=0.1),
                                            "step: runtime × factor when under-sized; spill: runtime × factor "
                                            "when the whole input spills"), id=FACTOR_BOX),
                            html.Div([
                                dcc.RadioItems(id=SHAPE, value="spill", persistence=True, className="checklist inline",
                                               options=[{"label": "step shape", "value": "step"},
                                                        {"label": "spill shape", "value": "spill"}]),
                                html.Div([
                                    _field("Profiling run: memory fraction",
                                           _number_input(PROFILE_FRACTION, 0.5, min=0.1, max=0.99, step=0.05)),
                                    _field("Profiling run: runtime / ideal",
                                           _number_input(PROFILE_RATIO, 1.5, min=1, step=0.1)),
                                ], className="inline-fields"),
                            ], id=FITTED_BOX),
                            html.Div(id=PENALTY_MSG, className="message"),
                            _graph(PROFILE),
                        ],
                        className="panel",
                    ),
                    html.Section(
                        [
                            html.H3("Trace"),
                            dcc.RadioItems(id=SOURCE, value=start["source"], persistence=True,
                                           className="checklist inline",
                                           options=[{"label": "generate (Table 2 sweep)", "value": "generated"},
                                                    {"label": "loaded trace (upload or preset)", "value": "loaded"}]),
                            html.Div([
                                _field("Jobs", _number_input(JOBS, start["jobs"], min=1, step=1)),
                                _field("Distribution", dcc.RadioItems(
                                    id=DISTRIBUTION, value=start["distribution"], options=list(DISTRIBUTIONS),
                                    persistence=True, className="checklist inline")),
                                _field("Seed", _number_input(SEED, 1, min=0, step=1)),
                            ], className="inline-fields"),
                            html.Div([_range_row(name, label, step, start[name]) for name, label, step, _ in RANGES]),
                            html.P("Per job, drawn between min and max; arrivals uniform in 0–1000 s (§6.1).",
                                   className="hint"),
                            dcc.Upload(id=TRACE_UPLOAD, multiple=False, className="upload-box",
                                       children=html.Div(["Upload a trace: SLS / DSS JSON or CSV "
                                                          "(job_id, arrival_s, tasks, memory_mb, duration_s[, phase])",
                                                          html.Br(), html.Small("drag and drop or click")])),
                            dcc.Dropdown(id=TRACE_CHOICE, options=[], value=None,
                                         placeholder="or open a trace uploaded earlier"),
                            html.Div(id=TRACE_MSG, className="message"),
                            html.Div(id=TRACE_INFO),
                        ],
                        className="panel",
                    ),
                ],
                className="editor-grid four",
            ),
            html.Section(
                [
                    html.H3("Run"),
                    html.Div([
                        dcc.Checklist(id=POLICIES, options=REGISTRY.options(ENGINE), value=start["policies"],
                                      className="checklist inline", persistence=True),
                        html.Button("Run", id=RUN, className="primary"),
                        html.Button("Cancel", id=CANCEL, disabled=True),
                    ], className="button-row"),
                    html.Progress(id=PROGRESS, value="0", max="100"),
                    html.Div(id=RUN_MSG, className="message"),
                    html.Div(id=RATIO, className="headline"),
                    dash_table.DataTable(id=SUMMARY, data=[], columns=[], sort_action="native",
                                         style_cell={"fontFamily": "inherit"}, style_table={"overflowX": "auto"}),
                    html.Div([html.Span("Export every scheduler of the run:", className="hint")]
                             + [html.Button(f"{name}.csv", id={"type": EXPORT_BUTTONS, "frame": name})
                                for name in FRAMES],
                             className="button-row export"),
                ],
                className="panel run-panel",
            ),
            html.Section(
                [
                    html.Div([html.H3("Over time"), html.Span(id=WINDOW_MSG, className="hint"),
                              html.Button("Whole run", id=RESET_WINDOW)], className="button-row"),
                    html.P("Zoom the time axis of any time chart to set the window for all of them.", className="hint"),
                    html.Div([_graph(MEMORY_GRAPH), _graph(TASKS_GRAPH)], className="two-graphs"),
                ],
                className="panel",
            ),
            html.Section(
                [
                    html.H3("Job runtimes"),
                    html.Div([_graph(SCATTER), _graph(CDF)], className="two-graphs"),
                    html.P("Below the dashed line a job finished sooner under YARN-ME; click one to see where it "
                           "ran.", className="hint"),
                    dash_table.DataTable(id=JOB_TABLE, data=[], columns=[], sort_action="custom", sort_mode="single",
                                         sort_by=[], page_action="custom", page_current=0, page_size=JOB_PAGE_SIZE,
                                         page_count=1, style_cell={"fontFamily": "inherit"},
                                         style_table={"overflowX": "auto"}),
                ],
                className="panel",
            ),
            html.Section(
                [
                    html.Div([html.H3("Where a job ran"),
                              _field("Job", dcc.Dropdown(id=JOB, clearable=False, searchable=True, className="narrow",
                                                        placeholder="type to search jobs"))],
                             className="button-row"),
                    _graph(NODE_GRAPH),
                ],
                className="panel",
            ),
        ],
        className="elastic-page",
    )


def _form(nodes, cores, memory, source, jobs, distribution, range_values, range_ids, kind, factor, shape,
          fraction, ratio) -> dict:
    ranges: dict[str, list] = {}
    for component_id, value in zip(range_ids, range_values):
        ranges.setdefault(component_id["name"], [None, None])[component_id["end"]] = value
    return {"nodes": nodes, "cores": cores, "node_memory_gb": memory, "source": source, "jobs": jobs,
            "distribution": distribution, "ranges": ranges,
            "penalty": {"kind": kind, "factor": factor, "shape": shape, "fraction": fraction, "ratio": ratio}}


def register_callbacks(app, results, uploads) -> None:
    """Wire the page; ``results`` is the app's ResultCache, ``uploads`` its UploadStore."""
    register_run_feedback(app, RUN, CANCEL, PROGRESS, RUN_MSG)

    def form(dependency):
        """The form's values as ``dependency`` (Input or State), in :func:`_form`'s argument order."""
        ranges = {"type": RANGE, "name": ALL, "end": ALL}
        return [dependency(NODES, "value"), dependency(CORES, "value"), dependency(MEMORY, "value"),
                dependency(SOURCE, "value"), dependency(JOBS, "value"), dependency(DISTRIBUTION, "value"),
                dependency(ranges, "value"), State(ranges, "id"), dependency(PENALTY_KIND, "value"),
                dependency(FACTOR, "value"), dependency(SHAPE, "value"), dependency(PROFILE_FRACTION, "value"),
                dependency(PROFILE_RATIO, "value")]

    @app.callback(
        Output(NODES, "value"), Output(CORES, "value"), Output(MEMORY, "value"), Output(SOURCE, "value"),
        Output(JOBS, "value"), Output(DISTRIBUTION, "value"),
        Output({"type": RANGE, "name": ALL, "end": ALL}, "value"), Output(PENALTY_KIND, "value"),
        Output(FACTOR, "value"), Output(POLICIES, "value"), Output(LOADED, "data"), Output(TRACE_MSG, "children"),
        Input(PRESET_PAPER, "n_clicks"), Input(PRESET_TWO_JOB, "n_clicks"),
        State({"type": RANGE, "name": ALL, "end": ALL}, "id"), prevent_initial_call=True,
    )
    def _preset(_p, _t, range_ids):
        c = preset_controls(ctx.triggered_id)
        generated = c["source"] == "generated"
        ranges = [c[i["name"]][i["end"]] if generated else no_update for i in range_ids]
        keep = no_update
        return (c["nodes"], c["cores"], c["node_memory_gb"], c["source"], c["jobs"] if generated else keep,
                c["distribution"] if generated else keep, ranges, c["penalty_kind"], c["factor"], c["policies"],
                c["loaded"] if not generated else keep, f"Preset: {PRESETS[ctx.triggered_id][0]}.")

    @app.callback(Output(LOADED, "data", allow_duplicate=True), Output(SOURCE, "value", allow_duplicate=True),
                  Output(TRACE_MSG, "children", allow_duplicate=True),
                  Input(TRACE_UPLOAD, "contents"), State(TRACE_UPLOAD, "filename"), prevent_initial_call=True)
    def _upload(contents, filename):
        if not contents:
            return no_update, no_update, no_update
        try:
            ref, message = apply_upload(contents, filename, uploads)
        except (ScenarioError, UploadError) as exc:
            return no_update, no_update, _error(f"{filename} not loaded: {exc}. The previous trace stays in use.")
        return ref, "loaded", html.Span(message, className="ok")

    @app.callback(Output(LOADED, "data", allow_duplicate=True), Output(SOURCE, "value", allow_duplicate=True),
                  Output(TRACE_MSG, "children", allow_duplicate=True),
                  Input(TRACE_CHOICE, "value"), prevent_initial_call=True)
    def _open_stored(name):
        if not name:
            return no_update, no_update, no_update
        try:
            ref, message = open_stored_trace(name, uploads)
        except (ScenarioError, UploadError) as exc:
            return no_update, no_update, _error(f"Not loaded: {str(exc).rstrip('.')}. The previous trace stays in use.")
        return ref, "loaded", html.Span(message, className="ok")

    @app.callback(Output(TRACE_CHOICE, "options"), Input(TRACE_CHOICE, "id"), Input(LOADED, "data"))
    def _trace_choices(_, __):
        return trace_choices(uploads)

    @app.callback(Output(PROFILE, "figure"), Output(PENALTY_MSG, "children"), Output(FACTOR_BOX, "hidden"),
                  Output(FITTED_BOX, "hidden"),
                  Input(PENALTY_KIND, "value"), Input(FACTOR, "value"), Input(SHAPE, "value"),
                  Input(PROFILE_FRACTION, "value"), Input(PROFILE_RATIO, "value"))
    def _profile(kind, factor, shape, fraction, ratio):
        boxes = (kind == "fitted", kind != "fitted")
        try:
            penalty = penalty_from_form(kind, factor, shape, fraction, ratio)
        except ScenarioError as exc:
            return no_update, _error(exc), *boxes
        return figures.penalty_profile(penalty), "", *boxes

    @app.callback(Output(TRACE_INFO, "children"), *form(Input), Input(SEED, "value"), Input(LOADED, "data"))
    def _trace_info(*args):
        *values, seed, loaded = args
        try:
            return facts_list(trace_facts(build_model(_form(*values), loaded, uploads),
                                          _number(seed, "Seed", integer=True, minimum=0)))
        except ScenarioError as exc:
            return _error(exc)

    @app.callback(
        Output(RUNS, "data"), Output(RUN_MSG, "children"),
        Input(RUN, "n_clicks"), *form(State), State(SEED, "value"), State(LOADED, "data"), State(POLICIES, "value"),
        background=True, interval=POLL_MS,
        running=[(Output(RUN, "disabled"), True, False), (Output(CANCEL, "disabled"), False, True)],
        cancel=[Input(CANCEL, "n_clicks")],
        progress=[Output(PROGRESS, "value"), Output(PROGRESS, "max")],
        progress_default=EMPTY_PROGRESS,
        prevent_initial_call=True,
    )
    def _run(set_progress, _, *args):
        *values, seed, loaded, policies = args
        try:
            model = build_model(_form(*values), loaded, uploads)
            plans = scenarios(model, policies or [], _number(seed, "Seed", integer=True, minimum=0))
            records, message = run_all(results, plans, throttled(set_progress))
        except ScenarioError as exc:
            return no_update, _error(f"Not run: {exc}. The previous results stay.")
        return records, html.Span(message, className="ok")

    @app.callback(
        Output(SUMMARY, "data"), Output(SUMMARY, "columns"), Output(RATIO, "children"), Output(SCATTER, "figure"),
        Output(CDF, "figure"), Output(JOB, "value"), Output(JOB, "options"), Output(JOB_TABLE, "page_current"),
        Input(RUNS, "data"), State(JOB, "value"),
    )
    def _results(records, chosen):
        loaded = loaded_runs(results, records)
        *outputs, job = results_outputs(loaded, chosen)
        return (*outputs, job, job_options(job_ids(loaded), None, job), 0)

    @app.callback(
        Output(JOB_TABLE, "data"), Output(JOB_TABLE, "columns"), Output(JOB_TABLE, "page_count"),
        Input(RUNS, "data"), Input(JOB_TABLE, "page_current"), Input(JOB_TABLE, "sort_by"),
    )
    def _job_table(records, page, sort_by):
        return job_table(loaded_runs(results, records), page, sort_by)

    @app.callback(Output(JOB, "options", allow_duplicate=True), Input(JOB, "search_value"), State(RUNS, "data"),
                  State(JOB, "value"), prevent_initial_call=True)
    def _job_search(search, records, chosen):
        return job_options(job_ids(loaded_runs(results, records)), search, chosen) if search else no_update

    @app.callback(Output(JOB, "value", allow_duplicate=True), Output(JOB, "options", allow_duplicate=True),
                  Input(SCATTER, "clickData"), State(RUNS, "data"), prevent_initial_call=True)
    def _pick_job(click, records):
        if not (click and click.get("points")):
            return no_update, no_update
        job = click["points"][0]["customdata"]
        return job, job_options(job_ids(loaded_runs(results, records)), None, job)

    @app.callback(
        Output(WINDOW, "data"),
        Input(MEMORY_GRAPH, "relayoutData"), Input(TASKS_GRAPH, "relayoutData"), Input(NODE_GRAPH, "relayoutData"),
        Input(RESET_WINDOW, "n_clicks"), State(WINDOW, "data"), prevent_initial_call=True,
    )
    def _window(_m, _t, _n, _reset, current):
        if ctx.triggered_id == RESET_WINDOW:
            return None
        return window_from_relayout(ctx.triggered[0]["value"] if ctx.triggered else None, current)

    @app.callback(Output(MEMORY_GRAPH, "figure"), Output(TASKS_GRAPH, "figure"), Output(WINDOW_MSG, "children"),
                  Input(RUNS, "data"), Input(WINDOW, "data"))
    def _over_time(records, window):
        return over_time_outputs(loaded_runs(results, records), window)

    @app.callback(Output(NODE_GRAPH, "figure"), Input(JOB, "value"), Input(WINDOW, "data"), State(RUNS, "data"))
    def _node_timeline(job_id, window, records):
        runs = [(rec["label"], res.timeline) for rec, res in loaded_runs(results, records)]
        return figures.job_node_timeline(runs, job_id, window)

    @app.callback(Output(DOWNLOAD, "data"), Input({"type": EXPORT_BUTTONS, "frame": ALL}, "n_clicks"),
                  State(RUNS, "data"), prevent_initial_call=True)
    def _export(clicks, records):
        loaded = loaded_runs(results, records)
        if not any(clicks or []) or not loaded:
            return no_update
        frame = ctx.triggered_id["frame"]
        return send_csv(export_frame(loaded, frame), f"elastic-{frame}.csv")
