"""The "Sweeps" page: one experiment over many parameter values, fanned out, gathered into one table and plot.

Data flow: the form (a sweep kind and its parameters) builds a sweep spec
(:mod:`sched_engine.sweeps`); the page shows how many points it has before
anything runs. Run checks the spec, then -- in a background callback --
runs every point on local processes (Celery workers when ``REDIS_URL`` is
set), reporting runs done / total. The gathered table is stored under the
spec's content hash (:class:`SweepStore`, one JSON file per sweep under the
data directory), so the same spec again comes back at once "from cache";
the browser keeps only that hash. The comparison table, the plot and the
CSV downloads are rebuilt from the stored table.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd
from dash import ALL, Input, Output, State, ctx, dash_table, dcc, html, no_update

from sched_engine import ScenarioError
from sched_engine.elastic.traces import DISTRIBUTIONS
from sched_engine.registry import REGISTRY
from sched_engine.sweeps import (
    KINDS,
    VARIANTS,
    mean_std_text,
    normalize_spec,
    point_count,
    spec_hash,
    summarise,
)

from .chart_config import GRAPH_CONFIG
from .figures import sweeps as figures
from .scaleout.sweep_executor import run_sweep
from .services.csv_export import csv_text
from .services.progress import POLL_MS
from .services.storage import atomic_write

KIND = "sweep-kind-radio"
KIND_HINT = "sweep-kind-hint"
PARAM = "sweep-param-input"        # pattern-matching type, keyed by kind and parameter name
PARAM_BOX = "sweep-param-box"      # pattern-matching type, keyed by kind
POINTS = "sweep-points-message"
RUN = "sweep-run-button"
CANCEL = "sweep-cancel-button"
PROGRESS = "sweep-run-progress"
PROGRESS_TEXT = "sweep-progress-text"
RUN_MSG = "sweep-run-message"
HEADING = "sweep-results-heading"
LAST = "sweep-last-store"
SUMMARY = "sweep-summary-table"
METRIC = "sweep-metric-dropdown"
GRAPH = "sweep-plot-graph"
TABLE = "sweep-points-table"
EXPORT_BUTTONS = "sweep-export-button"  # pattern-matching type, keyed by table (points, summary)
DOWNLOAD = "sweep-download"

STORE_KEY = re.compile(r"[0-9a-f]{64}")
STALL_S = 600   # with Celery: give up when no point has finished for this long (no worker running?)
SAMPLE_TRACES = ("hpc2n-excerpt.swf", "cerit-sc-2013-slice.swf")
SAMPLE_MACHINES = ("metacentrum-2009.machines", "hpc2n-excerpt.machines", "cerit-sc-2013.machines")


@dataclass(frozen=True)
class Param:
    """One form field: ``widget`` is number, integer, numbers (comma-separated text), checklist, radio or dropdown."""

    name: str
    label: str
    widget: str
    options: list = field(default_factory=list)
    hint: str | None = None


FORM = {
    "elastic-fig6": [
        Param("distributions", "Distributions", "checklist", list(DISTRIBUTIONS)),
        Param("maxima", "Maxima per parameter", "integer", hint="evenly spaced in each Table 2 interval"),
        Param("traces", "Traces per configuration", "integer"),
        Param("penalties", "Penalty factors", "numbers", hint="comma-separated, e.g. 1.5, 3"),
        Param("penalty_model", "Penalty model", "radio", [{"label": "spill (reducers)", "value": "spill"},
                                                          {"label": "step (mappers)", "value": "step"}]),
        Param("nodes", "Nodes", "integer"),
        Param("cores", "Cores per node", "integer"),
        Param("node_memory_gb", "Memory per node (GB)", "number"),
        Param("jobs", "Jobs per trace", "integer"),
        Param("seed", "Base seed", "integer", hint="trace t of configuration c: seed + 1000 c + t"),
    ],
    "batch-ls-seeds": [
        Param("trace", "Workload", "dropdown", list(SAMPLE_TRACES)),
        Param("jobs", "First N jobs", "integer"),
        Param("machines", "Clusters", "dropdown", list(SAMPLE_MACHINES)),
        Param("variant", "Scenario", "radio", list(VARIANTS),
              hint="EXT-FAIL / EXT-ALL: MetaCentrum 2009 failures; EXT-REQ / EXT-ALL: job requirements "
                   "(half of the jobs without one get a random cluster property)"),
        Param("policies", "Policies", "checklist", REGISTRY.options("batch")),
        Param("seeds", "Seeds", "integer", hint="seeds 0 .. N-1"),
    ],
    "libra-intervals": [
        Param("schemes", "Schemes", "checklist", REGISTRY.options("network")),
        Param("intervals", "Mean arrival intervals (s)", "numbers", hint="comma-separated, e.g. 0.1, 1, 10"),
        Param("width", "Containers per application", "integer"),
        Param("machines", "Machines (1 Gbps)", "integer"),
        Param("applications", "Applications", "integer"),
        Param("seeds", "Seeds", "integer", hint="seeds 0 .. N-1"),
    ],
    "libra-sensitivity": [
        Param("schemes", "Schemes", "checklist", REGISTRY.options("network")),
        Param("volumes", "Data per flow (Gb)", "numbers", hint="comma-separated, e.g. 0.01, 0.03, 0.1"),
        Param("slots", "Container slots per machine", "numbers", hint="whole numbers, e.g. 1, 2, 4, 32"),
        Param("interval", "Mean arrival interval (s)", "number"),
        Param("width", "Containers per application", "integer"),
        Param("machines", "Machines (1 Gbps)", "integer"),
        Param("applications", "Applications", "integer"),
        Param("seeds", "Seeds", "integer", hint="seeds 0 .. N-1"),
    ],
}
# Starting values: each finishes in well under a minute on two cores.
PAGE_DEFAULTS = {
    "elastic-fig6": {"distributions": ["uniform", "exponential"], "maxima": 2, "traces": 1, "penalties": [1.5, 3.0],
                     "penalty_model": "spill", "nodes": 100, "cores": 16, "node_memory_gb": 10.0, "jobs": 100,
                     "seed": 0},
    "batch-ls-seeds": {"trace": "hpc2n-excerpt.swf", "jobs": 1000, "machines": "metacentrum-2009.machines",
                       "variant": "EXT-ALL", "policies": ["ls", "cons"], "seeds": 5},
    "libra-intervals": {"schemes": ["baseline", "drf", "hug", "libra"], "intervals": [0.1, 0.5, 1.0, 5.0, 10.0],
                        "width": 128, "machines": 512, "applications": 30, "seeds": 2},
    "libra-sensitivity": {"schemes": ["drf", "libra"], "volumes": [0.03], "slots": [1, 2, 4, 32], "interval": 0.1,
                          "width": 128, "machines": 512, "applications": 30, "seeds": 1},
}
DESCRIPTIONS = {
    "elastic-fig6": "YARN-ME paper, Fig. 6: Table 2 traces (each parameter's max swept over its interval), every "
                    "trace under YARN, Meganode and YARN-ME at each penalty; ratio of average job runtimes.",
    "batch-ls-seeds": "Local Search's spread over random seeds on one batch scenario (Klusáček & Rudová), "
                      "beside any other policy; mean ± std per policy.",
    "libra-intervals": "Libra paper, Fig. 6: isolation, duration and link utilisation of the network schemes as "
                       "applications arrive more or less often (Poisson, many-to-many traffic).",
    "libra-sensitivity": "Libra paper, Fig. 6 at one arrival interval, over what the paper does not state: the "
                         "data each flow carries and how many containers (1 CPU, 1 GB each) a machine holds; an "
                         "application waits for free slots (§IV-A).",
}


# --- stored sweeps ----------------------------------------------------------------------------------------------

class SweepStore:
    """Gathered sweep tables on disk, one JSON file per spec hash, written atomically."""

    def __init__(self, directory: str | Path):
        self.directory = Path(directory)

    def _path(self, key: str) -> Path:
        if not isinstance(key, str) or not STORE_KEY.fullmatch(key):
            raise ValueError(f"not a sweep key: {key!r:.80}")
        return self.directory / f"{key}.json"

    def get(self, key: str) -> dict | None:
        """``{spec, table (DataFrame), executor, workers, wall_seconds, finished}``, or ``None``."""
        if not isinstance(key, str) or not STORE_KEY.fullmatch(key):
            return None
        try:
            record = json.loads(self._path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return {**record, "table": pd.DataFrame(record["table"]["rows"], columns=record["table"]["columns"])}

    def put(self, key: str, run) -> None:
        table = run.table
        rows = table.astype(object).where(table.notna(), None).to_numpy().tolist()
        record = {"spec": run.spec, "table": {"columns": list(table.columns), "rows": rows},
                  "executor": run.executor, "workers": run.workers, "wall_seconds": run.wall_seconds,
                  "finished": datetime.now(timezone.utc).isoformat(timespec="seconds")}
        atomic_write(self._path(key), json.dumps(record).encode())


# --- the form ---------------------------------------------------------------------------------------------------

def form_values(kind: str) -> dict:
    """The form's starting values for a kind (lists of numbers as text)."""
    return {p.name: ", ".join(f"{v:g}" for v in PAGE_DEFAULTS[kind][p.name]) if p.widget == "numbers"
            else PAGE_DEFAULTS[kind][p.name] for p in FORM[kind]}


def _parse(param: Param, value):
    if param.widget == "numbers":
        tokens = [t for t in re.split(r"[,\s;]+", str(value or "").strip()) if t]
        if not tokens:
            raise ScenarioError(param.name, "enter at least one number")
        numbers = []
        for token in tokens:
            try:
                numbers.append(float(token))
            except ValueError:
                raise ScenarioError(param.name, f"{token!r} is not a number") from None
        return numbers
    if param.widget in ("number", "integer"):
        if value is None or value == "":
            raise ScenarioError(param.name, "enter a number")
        return value
    # Choices come back from the browser: only the offered ones are accepted (a forged value
    # could otherwise name any file on the server as a workload).
    allowed = [option["value"] if isinstance(option, dict) else option for option in param.options]
    chosen = list(value or []) if param.widget == "checklist" else [value]
    unknown = [v for v in chosen if v not in allowed]
    if unknown:
        raise ScenarioError(param.name, f"{unknown[0]!r} is not one of the choices")
    return chosen if param.widget == "checklist" else value


def spec_from_form(kind: str, ids: list[dict], values: list) -> dict:
    """The sweep spec the form describes (only the chosen kind's fields); raises :class:`ScenarioError`."""
    if kind not in FORM:
        raise ScenarioError("kind", f"choose a sweep kind ({', '.join(FORM)})")
    params = {p.name: p for p in FORM[kind]}
    spec = {"kind": kind}
    for component_id, value in zip(ids, values):
        if component_id["kind"] == kind and component_id["name"] in params:
            spec[component_id["name"]] = _parse(params[component_id["name"]], value)
    return spec


def explain(kind: str, exc: ScenarioError) -> str:
    """An error as the form shows it: the field's label instead of the spec's parameter name."""
    if exc.source:
        return str(exc)
    match = re.match(r"(\w+)(?:\[(\d+)\])?", exc.field or "")
    labels = {p.name: p.label for p in FORM.get(kind, [])}
    if not match or match.group(1) not in labels:
        return str(exc)
    item = f" (item {int(match.group(2)) + 1})" if match.group(2) is not None else ""
    return f"{labels[match.group(1)]}{item}: {exc.message}"


def plan_text(spec: dict, count: int) -> str:
    """How many points a checked spec has, and what each one runs."""
    kind = spec["kind"]
    if kind == "elastic-fig6":
        configurations = spec["maxima"] ** 3
        sims = count * (2 + len(spec["penalties"]))
        return (f"{count} points: {len(spec['distributions'])} distribution(s) × {configurations} configurations × "
                f"{spec['traces']} trace(s); {sims} simulations (YARN, Meganode, YARN-ME at "
                f"{len(spec['penalties'])} penalties per trace).")
    if kind == "batch-ls-seeds":
        return (f"{count} points: {len(spec['policies'])} polic{'y' if len(spec['policies']) == 1 else 'ies'} × "
                f"{len(spec['seeds'])} seed(s), {spec['variant']}, first {spec['jobs']} jobs.")
    if kind == "libra-sensitivity":
        return (f"{count} points: {len(spec['schemes'])} scheme(s) × {len(spec['volumes'])} volume(s) × "
                f"{len(spec['slots'])} slot count(s) × {len(spec['seeds'])} seed(s), {spec['interval']:g} s apart.")
    return (f"{count} points: {len(spec['schemes'])} scheme(s) × {len(spec['intervals'])} interval(s) × "
            f"{len(spec['seeds'])} seed(s).")


def preview(kind: str, ids: list[dict], values: list) -> tuple[str, bool]:
    """``(text, ok)``: the point count of the form's sweep, or what is wrong with it."""
    try:
        spec = normalize_spec(spec_from_form(kind, ids, values))
        return plan_text(spec, point_count(spec)), True
    except ScenarioError as exc:
        return explain(kind, exc), False


def run_message(record: dict, cached: bool) -> str:
    runs = len(record["table"])
    if cached:
        return f"{runs} runs from cache (computed {record['finished']} in {record['wall_seconds']:.1f} s)."
    where = {"celery": "on Celery workers", "serial": "in one process",
             "processes": f"on {record['workers']} local processes"}[record["executor"]]
    return f"{runs} runs in {record['wall_seconds']:.1f} s {where}."


def run_form(store: SweepStore, kind: str, ids: list[dict], values: list, progress) -> tuple[str, str, bool]:
    """Run the form's sweep unless stored; ``(key, message, from cache)``. Raises :class:`ScenarioError`."""
    try:
        spec = normalize_spec(spec_from_form(kind, ids, values))
        key = spec_hash(spec)
    except ScenarioError as exc:
        raise ScenarioError("", explain(kind, exc)) from None
    record = store.get(key)
    if record is not None:
        return key, run_message(record, True), True
    store.put(key, run_sweep(spec, progress=progress, timeout=STALL_S))
    return key, run_message(store.get(key), False), False


# --- results ----------------------------------------------------------------------------------------------------

def summary_rows(kind: str, summary: pd.DataFrame) -> list[dict]:
    """The comparison table for display: ``mean ± std`` cells, shares in percent."""
    rows = []
    for record in summary.to_dict("records"):
        if kind == "elastic-fig6":
            rows.append({
                "distribution": record["distribution"], "penalty": f"{record['penalty']:g}×",
                "configurations": record["configurations"], "traces": record["traces"],
                "median YARN-ME / YARN": f"{record['median_ratio']:.3f}",
                "worst": f"{record['worst_ratio']:.3f}",
                "configurations ≤ 0.7": f"{record['share_le_0_7']:.0%}",
                "beats Meganode": f"{record['beats_meganode']:.0%}",
                "median YARN-ME / Meganode": f"{record['median_vs_meganode']:.3f}",
            })
            continue
        row = {}
        for column, value in record.items():
            if column.endswith("_std"):
                continue
            if column.endswith("_mean"):
                metric = column[: -len("_mean")]
                row[figures.METRIC_LABELS.get(metric, metric)] = mean_std_text(value, record.get(f"{metric}_std"))
            else:
                row[column] = value
        rows.append(row)
    return rows


def point_rows(table: pd.DataFrame) -> list[dict]:
    return table.round(4).to_dict("records")


def columns(rows: list[dict]) -> list[dict]:
    return [{"name": k, "id": k} for k in (rows[0] if rows else {})]


def results(store: SweepStore, last: dict | None, metric: str | None):
    """``(summary rows, point rows, figure, heading)`` of the last sweep, or empty ones."""
    record = store.get(last["key"]) if last and last.get("key") else None
    if record is None:
        return [], [], figures.sweep_figure("", pd.DataFrame()), "No sweep yet."
    kind = record["spec"]["kind"]
    table = record["table"]
    heading = f"{KINDS[kind].label}: {len(table)} points"
    return (summary_rows(kind, summarise(record["spec"], table)), point_rows(table),
            figures.sweep_figure(kind, table, metric), heading)


def export_csv(store: SweepStore, last: dict | None, which: str):
    """``(file name, CSV text)`` of the last sweep's points or comparison table, or ``None``."""
    record = store.get(last["key"]) if last and last.get("key") else None
    if record is None:
        return None
    kind = record["spec"]["kind"]
    frame = record["table"] if which == "points" else summarise(record["spec"], record["table"])
    return f"{kind}-{'sweep' if which == 'points' else 'summary'}.csv", csv_text(frame)


# --- layout -----------------------------------------------------------------------------------------------------

def _error(text) -> html.Span:
    return html.Span(str(text), className="error")


def _widget(kind: str, param: Param, value):
    component_id = {"type": PARAM, "kind": kind, "name": param.name}
    if param.widget in ("number", "integer"):
        return dcc.Input(id=component_id, type="number", value=value, debounce=True, persistence=True,
                         step=1 if param.widget == "integer" else "any", min=0)
    if param.widget == "numbers":
        return dcc.Input(id=component_id, type="text", value=value, debounce=True, persistence=True)
    if param.widget == "checklist":
        return dcc.Checklist(id=component_id, options=param.options, value=value, persistence=True,
                             className="checklist inline")
    if param.widget == "radio":
        return dcc.RadioItems(id=component_id, options=param.options, value=value, persistence=True,
                              className="checklist inline")
    return dcc.Dropdown(id=component_id, options=param.options, value=value, clearable=False, persistence=True,
                        className="narrow")


def _field(kind: str, param: Param, value):
    children = [html.Span(param.label), _widget(kind, param, value)]
    if param.hint:
        children.append(html.Small(param.hint, className="hint"))
    wide = {"gridColumn": "span 2"} if param.widget == "dropdown" else None
    return html.Label(children, className="field", style=wide)


def _shown(shown: bool) -> dict:
    """A parameter box's style: the grid's own display, or none (a class's display would beat ``hidden``)."""
    return {} if shown else {"display": "none"}


def _table(component_id, **kwargs):
    return dash_table.DataTable(id=component_id, data=[], columns=[], sort_action="native",
                                style_cell={"fontFamily": "inherit", "textAlign": "right"},
                                style_header={"whiteSpace": "normal", "fontWeight": "600"},
                                style_table={"overflowX": "auto"}, **kwargs)


def layout(kind: str | None = None) -> html.Div:
    """The page; ``kind`` (from ``/sweeps?kind=...``, e.g. a gallery card's link) is the sweep shown first."""
    first = kind if kind in FORM else next(iter(FORM))
    return html.Div(
        [
            dcc.Store(id=LAST, storage_type="local", data=None),
            dcc.Download(id=DOWNLOAD),
            html.Div(
                [
                    html.H2("Sweeps"),
                    html.P("Run one experiment over many parameter values -- the YARN-ME Table 2 sweep, Local "
                           "Search over seeds, Libra over arrival intervals or over data volume and slots -- on "
                           "local processes (Celery workers when REDIS_URL is set), then compare the runs in one "
                           "table and plot."),
                ],
                className="page-head",
            ),
            html.Section(
                [
                    html.H3("Sweep"),
                    dcc.RadioItems(id=KIND, value=first, persistence=True, className="checklist inline",
                                   options=[{"label": k.label, "value": k.name} for k in KINDS.values()]),
                    html.P(id=KIND_HINT, className="hint"),
                    *[html.Div([_field(kind, p, form_values(kind)[p.name]) for p in params],
                               id={"type": PARAM_BOX, "kind": kind}, className="inline-fields",
                               style=_shown(kind == first))
                      for kind, params in FORM.items()],
                    html.Div(id=POINTS, className="message"),
                    html.Div([html.Button("Run", id=RUN, className="primary"),
                              html.Button("Cancel", id=CANCEL, disabled=True)], className="button-row"),
                    html.Div([html.Progress(id=PROGRESS, value="0", max="1"),
                              html.Span(id=PROGRESS_TEXT, className="hint")], className="button-row"),
                    html.Div(id=RUN_MSG, className="message"),
                ],
                className="panel",
            ),
            html.Section(
                [
                    html.H3(id=HEADING, children="Comparison"),
                    _table(SUMMARY),
                    html.Div([html.Span("Plot:", className="hint"),
                              dcc.Dropdown(id=METRIC, clearable=False, className="wide")], className="button-row"),
                    html.Div(dcc.Graph(id=GRAPH, config=GRAPH_CONFIG), className="graph-box"),
                    html.Details([html.Summary("Every point"), _table(TABLE, page_size=15)]),
                    html.Div([html.Span("Export:", className="hint"),
                              html.Button("sweep.csv (points)", id={"type": EXPORT_BUTTONS, "table": "points"}),
                              html.Button("summary.csv (comparison)", id={"type": EXPORT_BUTTONS, "table": "summary"})],
                             className="button-row export"),
                ],
                className="panel",
            ),
        ],
        className="sweep-page",
    )


# --- callbacks --------------------------------------------------------------------------------------------------

def register_callbacks(app, store: SweepStore) -> None:
    """Wire the page; ``store`` keeps gathered sweeps by spec hash."""
    params = {"type": PARAM, "kind": ALL, "name": ALL}

    @app.callback(Output({"type": PARAM_BOX, "kind": ALL}, "style"), Output(KIND_HINT, "children"),
                  Input(KIND, "value"), State({"type": PARAM_BOX, "kind": ALL}, "id"))
    def _kind(kind, boxes):
        return [_shown(box["kind"] == kind) for box in boxes], DESCRIPTIONS.get(kind, "")

    @app.callback(Output(POINTS, "children"), Input(KIND, "value"), Input(params, "value"), State(params, "id"))
    def _preview(kind, values, ids):
        text, ok = preview(kind, ids, values)
        return html.Span(text, className="ok") if ok else _error(text)

    @app.callback(
        Output(LAST, "data"), Output(RUN_MSG, "children"),
        Input(RUN, "n_clicks"), State(KIND, "value"), State(params, "value"), State(params, "id"),
        background=True, interval=POLL_MS,
        running=[(Output(RUN, "disabled"), True, False), (Output(CANCEL, "disabled"), False, True)],
        cancel=[Input(CANCEL, "n_clicks")],
        progress=[Output(PROGRESS, "value"), Output(PROGRESS, "max"), Output(PROGRESS_TEXT, "children")],
        prevent_initial_call=True,
    )
    def _run(set_progress, clicks, kind, values, ids):
        def report(done, total):
            set_progress((str(done), str(max(total, 1)), f"{done} / {total} runs"))

        try:
            key, message, _ = run_form(store, kind, ids, values, report)
        except ScenarioError as exc:
            return no_update, _error(f"Not run: {exc}. The previous results stay.")
        return {"key": key, "run": clicks}, html.Span(message, className="ok")

    @app.callback(Output(PROGRESS, "value", allow_duplicate=True), Output(PROGRESS, "max", allow_duplicate=True),
                  Output(PROGRESS_TEXT, "children", allow_duplicate=True), Input(LAST, "data"),
                  prevent_initial_call="initial_duplicate")
    def _finished(last):
        record = store.get(last["key"]) if last and last.get("key") else None
        if record is None:
            return "0", "1", ""
        runs = len(record["table"])
        return str(runs), str(max(runs, 1)), f"{runs} / {runs} runs done"

    @app.callback(Output(METRIC, "options"), Output(METRIC, "value"), Input(LAST, "data"), State(METRIC, "value"))
    def _metrics(last, chosen):
        record = store.get(last["key"]) if last and last.get("key") else None
        options = figures.metric_options(record["spec"]["kind"]) if record else []
        values = [o["value"] for o in options]
        return options, chosen if chosen in values else (values[0] if values else None)

    @app.callback(Output(SUMMARY, "data"), Output(SUMMARY, "columns"), Output(TABLE, "data"),
                  Output(TABLE, "columns"), Output(GRAPH, "figure"), Output(HEADING, "children"),
                  Input(LAST, "data"), Input(METRIC, "value"))
    def _results(last, metric):
        summary, points, figure, heading = results(store, last, metric)
        return summary, columns(summary), points, columns(points), figure, heading

    @app.callback(Output(DOWNLOAD, "data"), Input({"type": EXPORT_BUTTONS, "table": ALL}, "n_clicks"),
                  State(LAST, "data"), prevent_initial_call=True)
    def _export(clicks, last):
        exported = export_csv(store, last, ctx.triggered_id["table"]) if any(clicks or []) else None
        if exported is None:
            return no_update
        name, text = exported
        return dcc.send_string(text, name)
