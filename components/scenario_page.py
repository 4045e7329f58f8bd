"""A scenario's own page (its permalink ``/scenario/<hash>`` or ``/?scenario=<hash>``).

Shows the scenario (saved by name, or any run in the result cache), its
result when cached -- run it here otherwise --, the summary and a timeline
chart, downloads (scenario JSON, CSV frames, HTML report), "save as", and
"what if": the same scenario with another policy or seed, run beside it and
compared metric by metric.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone

from dash import ALL, Input, Output, State, ctx, dash_table, dcc, html, no_update

from sched_engine import ScenarioError
from sched_engine.batch.model import describe_hardware
from sched_engine.registry import REGISTRY

from .chart_config import GRAPH_CONFIG
from .figures.compare import overlay_figure
from .pages.compare import table as compare_table
from .services.downloads import download_href
from .services.progress import POLL_MS, throttled
from .services.report import html_report
from .services.workspace import permalink
from .widgets.run_panel import EMPTY_PROGRESS

HASH = "scenario-hash-store"
VERSION = "scenario-version-store"
TITLE = "scenario-title"
META = "scenario-meta"
STATUS = "scenario-status"
RUN = "scenario-run-button"
CANCEL = "scenario-cancel-button"
PROGRESS = "scenario-run-progress"
SUMMARY = "scenario-summary-table"
METRIC = "scenario-metric-dropdown"
ENTITY = "scenario-entity-dropdown"
CHART = "scenario-chart-graph"
JSON_VIEW = "scenario-json"
SAVE_NAME = "scenario-save-name-input"
SAVE = "scenario-save-button"
SAVE_MSG = "scenario-save-message"
WHATIF_POLICY = "scenario-whatif-policy-dropdown"
WHATIF_SEED = "scenario-whatif-seed-input"
WHATIF_RUN = "scenario-whatif-run-button"
WHATIF_MSG = "scenario-whatif-message"
WHATIF_TABLE = "scenario-whatif-table"
EXPORT = "scenario-export-button"  # pattern-matching type, keyed by file
DOWNLOAD = "scenario-download"

EXPORTS = ("scenario.json", "jobs.csv", "timeline.csv", "summary.csv", "report.html")


def find_scenario(scenario_hash: str, store, results) -> dict | None:
    """The scenario behind a permalink: a saved one, else the one a cached result was run from."""
    saved = store.get(scenario_hash)
    if saved:
        return saved["scenario"]
    result = results.get(scenario_hash) if isinstance(scenario_hash, str) else None
    return dict(result.scenario) if result is not None else None


def what_if(scenario: dict, policy: str, seed) -> dict:
    """The scenario with another policy (its default parameters) and/or seed, named after its origin."""
    if not policy:
        raise ScenarioError("policy", "choose the policy of the what-if")
    try:
        seed = int(seed)
    except (TypeError, ValueError):
        raise ScenarioError("seed", f"must be a whole number, got {seed!r}") from None
    params = scenario.get("policy_params", {}) if policy == scenario["policy"] else {}
    base = scenario.get("name") or scenario["policy"]
    return {**scenario, "policy": policy, "policy_params": params, "seed": seed,
            "name": f"{base} · what if {policy}, seed {seed}"}


def describe(scenario: dict, scenario_hash: str, saved_name: str | None) -> list:
    entry = REGISTRY.policy(scenario["engine"], scenario["policy"])
    facts = [("Engine", REGISTRY.engine(scenario["engine"]).label), ("Policy", f"{entry.label} ({entry.name})"),
             *([("Hardware", describe_hardware(scenario["model"].get("clusters") or []))]
               if scenario["engine"] == "batch" else []),
             ("Seed", str(scenario.get("seed", 0))), ("Content hash", scenario_hash),
             ("Permalink", permalink(scenario_hash)), ("Saved as", saved_name or "not saved")]
    return [html.Dl([item for key, value in facts for item in (html.Dt(key), html.Dd(value))], className="facts")]


def layout(scenario_hash: str) -> html.Div:
    return html.Div(
        [
            dcc.Store(id=HASH, data=scenario_hash),
            dcc.Store(id=VERSION, data=0),
            dcc.Download(id=DOWNLOAD),
            html.Div([html.H2("Scenario", id=TITLE)], className="page-head"),
            html.Div(
                [
                    html.Section(
                        [html.Div(id=META), html.Div(id=STATUS, className="message"),
                         html.Div([html.Button("Run", id=RUN, className="primary"),
                                   html.Button("Cancel", id=CANCEL, disabled=True)], className="button-row"),
                         html.Progress(id=PROGRESS, value="0", max="100"),
                         html.Div([html.Button(name, id={"type": EXPORT, "file": name}) for name in EXPORTS
                                   if not name.endswith(".csv")]
                                  # Frames are files from the download route, streamed: never a callback response.
                                  + [html.A(name, href=download_href(scenario_hash, name.removesuffix(".csv"),
                                                                     f"{scenario_hash[:12]}-{name}"),
                                            download=f"{scenario_hash[:12]}-{name}", className="button")
                                     for name in EXPORTS if name.endswith(".csv")],
                                  className="button-row export")],
                        className="panel",
                    ),
                    html.Section(
                        [html.H3("Save"),
                         html.Div([dcc.Input(id=SAVE_NAME, type="text", placeholder="name"),
                                   html.Button("Save", id=SAVE)], className="button-row"),
                         html.Div(id=SAVE_MSG, className="message"),
                         html.H3("What if"),
                         html.Div([dcc.Dropdown(id=WHATIF_POLICY, clearable=False, className="narrow"),
                                   dcc.Input(id=WHATIF_SEED, type="number", min=0, step=1, value=0),
                                   html.Button("Run what-if", id=WHATIF_RUN, className="primary")],
                                  className="button-row"),
                         html.Div(id=WHATIF_MSG, className="message"),
                         dash_table.DataTable(id=WHATIF_TABLE, data=[], columns=[], style_cell={"fontFamily": "inherit"},
                                              style_table={"overflowX": "auto"})],
                        className="panel",
                    ),
                ],
                className="two-graphs",
            ),
            html.Section(
                [dash_table.DataTable(id=SUMMARY, data=[], columns=[], style_cell={"fontFamily": "inherit"}),
                 html.Div([dcc.Dropdown(id=METRIC, placeholder="timeline metric", className="narrow"),
                           dcc.Dropdown(id=ENTITY, placeholder="entity", className="narrow")], className="button-row"),
                 dcc.Graph(id=CHART, config=GRAPH_CONFIG)],
                className="panel",
            ),
            html.Details([html.Summary("Scenario JSON"), html.Pre(id=JSON_VIEW)], className="panel"),
        ],
        className="scenario-page",
    )


def register_callbacks(app, results, store) -> None:
    """Wire the page; ``results`` is the ResultCache, ``store`` the ScenarioStore."""

    @app.callback(
        Output(TITLE, "children"), Output(META, "children"), Output(STATUS, "children"), Output(JSON_VIEW, "children"),
        Output(SUMMARY, "data"), Output(SUMMARY, "columns"), Output(METRIC, "options"), Output(METRIC, "value"),
        Output(WHATIF_POLICY, "options"), Output(WHATIF_POLICY, "value"), Output(WHATIF_SEED, "value"),
        Output(SAVE_NAME, "value"),
        Input(HASH, "data"), Input(VERSION, "data"),
    )
    def _show(scenario_hash, _):
        scenario = find_scenario(scenario_hash, store, results)
        if scenario is None:
            message = html.Span(f"No saved scenario or cached run has the hash {scenario_hash}.", className="error")
            return "Scenario not found", [], message, "", [], [], [], None, [], None, 0, ""
        saved = store.get(scenario_hash)
        result = results.get(scenario_hash)
        if result is None:
            status = html.Span("Not run yet on this server: Run computes it.", className="hint")
            rows, metrics = [], []
        else:
            status = html.Span(f"Result from the cache (simulated in {result.wall_seconds:.2f} s).", className="ok")
            rows, metrics = result.summary.to_dict("records"), compare_table.metric_options([("run", result)])
        name = scenario.get("name") or f"{scenario['engine']} · {scenario['policy']}"
        return (name, describe(scenario, scenario_hash, saved["name"] if saved else None), status,
                json.dumps(scenario, indent=2, sort_keys=True), rows,
                [{"name": c, "id": c} for c in ("metric", "value", "unit")] if rows else [],
                metrics, metrics[0] if metrics else None, REGISTRY.options(scenario["engine"]), scenario["policy"],
                scenario.get("seed", 0), saved["name"] if saved else name)

    @app.callback(
        Output(VERSION, "data"), Output(STATUS, "children", allow_duplicate=True),
        Input(RUN, "n_clicks"), State(HASH, "data"), State(VERSION, "data"),
        background=True, interval=POLL_MS,
        running=[(Output(RUN, "disabled"), True, False), (Output(CANCEL, "disabled"), False, True)],
        cancel=[Input(CANCEL, "n_clicks")],
        progress=[Output(PROGRESS, "value"), Output(PROGRESS, "max")],
        progress_default=EMPTY_PROGRESS,
        prevent_initial_call=True,
    )
    def _run(set_progress, _, scenario_hash, version):
        scenario = find_scenario(scenario_hash, store, results)
        if scenario is None:
            return no_update, no_update
        try:
            results.run(scenario, progress=throttled(set_progress).fraction)
        except ScenarioError as exc:
            return no_update, html.Span(f"Not run: {exc}", className="error")
        return (version or 0) + 1, no_update

    @app.callback(Output(ENTITY, "options"), Output(ENTITY, "value"), Input(METRIC, "value"), State(HASH, "data"))
    def _entities(metric, scenario_hash):
        result = results.get(scenario_hash)
        options = compare_table.entity_options([("run", result)], metric) if result is not None else []
        return options, options[0]["value"] if options else None

    @app.callback(Output(CHART, "figure"), Input(ENTITY, "value"), State(METRIC, "value"), State(HASH, "data"))
    def _chart(entity, metric, scenario_hash):
        result = results.get(scenario_hash)
        runs = [(result.scenario.get("name") or "run", result)] if result is not None else []
        return overlay_figure(runs, metric, entity)

    @app.callback(Output(SAVE_MSG, "children"), Input(SAVE, "n_clicks"), State(SAVE_NAME, "value"),
                  State(HASH, "data"), prevent_initial_call=True)
    def _save(_, name, scenario_hash):
        scenario = find_scenario(scenario_hash, store, results)
        try:
            entry = store.save(scenario, name)
        except ScenarioError as exc:
            return html.Span(f"Not saved: {exc}", className="error")
        return html.Span(["Saved as ", html.B(entry["name"]), ": ", dcc.Link(permalink(entry["hash"]),
                                                                            href=permalink(entry["hash"]))],
                         className="ok")

    @app.callback(
        Output(WHATIF_TABLE, "data"), Output(WHATIF_TABLE, "columns"), Output(WHATIF_TABLE, "style_data_conditional"),
        Output(WHATIF_MSG, "children"),
        Input(WHATIF_RUN, "n_clicks"), State(WHATIF_POLICY, "value"), State(WHATIF_SEED, "value"), State(HASH, "data"),
        background=True, interval=POLL_MS, running=[(Output(WHATIF_RUN, "disabled"), True, False)], prevent_initial_call=True,
    )
    def _what_if(_, policy, seed, scenario_hash):
        scenario = find_scenario(scenario_hash, store, results)
        try:
            original, _ = results.run(scenario)
            changed, cached = results.run(what_if(scenario, policy, seed))
        except ScenarioError as exc:
            return no_update, no_update, no_update, html.Span(f"Not run: {exc}", className="error")
        table, deltas = compare_table.comparison_table([("original", original), ("what-if", changed)])
        table = table.round(6)
        link = permalink(changed.scenario_hash)
        message = html.Span([f"What-if {'from the cache' if cached else 'simulated'}: ", dcc.Link(link, href=link)],
                            className="ok")
        return (table.to_dict("records"), [{"name": c, "id": c} for c in table.columns],
                compare_table.delta_styles(deltas), message)

    @app.callback(Output(DOWNLOAD, "data"), Input({"type": EXPORT, "file": ALL}, "n_clicks"), State(HASH, "data"),
                  prevent_initial_call=True)
    def _export(clicks, scenario_hash):
        if not any(clicks or []):
            return no_update
        name = ctx.triggered_id["file"]
        scenario = find_scenario(scenario_hash, store, results)
        if scenario is None:
            return no_update
        if name == "scenario.json":
            return dcc.send_string(json.dumps(scenario, indent=2, sort_keys=True) + "\n", f"{scenario_hash[:12]}.json")
        result = results.get(scenario_hash)
        if result is None:
            return no_update
        generated = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        label = scenario.get("name") or scenario["policy"]
        return dcc.send_string(html_report(label, [(label, result)], [], generated), f"{scenario_hash[:12]}.html")
