"""The scenario page's callbacks: module-level functions, the results cache and scenario store passed in."""

from __future__ import annotations

import json
from functools import partial

from dash import ALL, Input, Output, State, dcc, html, no_update
from flask import request

from sched_engine import ScenarioError
from sched_engine.registry import REGISTRY

from ...figures import catalogue
from ...figures.common import empty_figure
from ...figures.compare import overlay_figure
from ...services import brief as briefs
from ...services.progress import POLL_MS, throttled
from ...services.runs import ResultStoreUnreachable
from ...services.workspace import permalink
from ...widgets.fields import error
from ...widgets.run_panel import background_run
from ..compare import table as compare_table
from . import content, ids, layout

PREFIX = "/scenario/"


def permalink_hash(path: str, args) -> str | None:
    """The scenario hash a permalink URL names (``/scenario/<hash>`` or ``/?scenario=<hash>``), else ``None``."""
    if args.get("scenario"):
        return args.get("scenario")
    return path[len(PREFIX):] if path.startswith(PREFIX) else None


def known(results, store, scenario_hash) -> bool:
    """Whether a permalink names a saved scenario or a stored run (nothing is read but the store's listing)."""
    return bool(isinstance(scenario_hash, str) and (store.get(scenario_hash) or results.has(scenario_hash)))


def body(results, store, scenario_hash):
    """The permalink's page for a known hash; for an unknown one, a page that says so and offers no Run."""
    return layout.found(scenario_hash) if known(results, store, scenario_hash) else layout.not_found(scenario_hash)


def answer_not_found(results, store, response):
    """An unknown permalink's page answers HTTP 404 (the page itself says why, through :func:`body`)."""
    scenario_hash = permalink_hash(request.path, request.args)
    if scenario_hash is None or response.status_code != 200 or response.mimetype != "text/html":
        return response
    try:
        if not known(results, store, scenario_hash):
            response.status_code = 404
            # The tab says so from the first paint (the routed page then keeps it: see register).
            response.set_data(response.get_data().replace(
                b"<title>schedscope</title>", f"<title>{layout.NOT_FOUND_TAB}</title>".encode()))
    except ResultStoreUnreachable:   # the page reports the store; the URL may well be right
        pass
    return response


def show(results, store, scenario_hash, _version):
    """Everything the page shows of the scenario: title, facts, status, JSON, summary, chart and what-if choices.

    The summary reads as the catalogue names it (a definition on each name); the axis definitions follow the
    scenario's engine.
    """
    scenario = content.find_scenario(scenario_hash, store, results)
    if scenario is None:
        message = error(f"No saved scenario or cached run has the hash {scenario_hash}.")
        return "Scenario not found", [], message, "", [], [], [], [], None, [], None, 0, "", no_update
    saved = store.get(scenario_hash)
    result = results.get(scenario_hash)
    if result is None:
        status = html.Span("Not run yet on this server: Run computes it.", className="hint")
        rows, tips, metrics = [], [], []
    else:
        status = html.Span(f"Result from the cache (simulated in {result.wall_seconds:.2f} s).", className="ok")
        (rows, tips), metrics = content.summary_rows(result), compare_table.metric_options([("run", result)])
    name = scenario.get("name") or f"{scenario['engine']} · {scenario['policy']}"
    metric_options = [{"label": catalogue.label(m, scenario["engine"]), "value": m} for m in metrics]
    return (name, content.describe(scenario, scenario_hash, saved["name"] if saved else None), status,
            json.dumps(scenario, indent=2, sort_keys=True), rows,
            [{"name": c, "id": c} for c in ("Metric", "Value")] if rows else [], tips,
            metric_options, metrics[0] if metrics else None, REGISTRY.options(scenario["engine"]), scenario["policy"],
            scenario.get("seed", 0), saved["name"] if saved else name,
            json.dumps(catalogue.axis_tooltips(scenario["engine"]), ensure_ascii=False))


def run(results, store, set_progress, scenario_hash, version):
    """Run the scenario (unless cached); a new version makes :func:`show` draw the result."""
    scenario = content.find_scenario(scenario_hash, store, results)
    if scenario is None:
        return no_update, no_update
    try:
        results.run(scenario, progress=throttled(set_progress).fraction)
    except ScenarioError as exc:
        return no_update, error(f"Not run: {exc}")
    return (version or 0) + 1, no_update


def entities(results, metric, scenario_hash):
    result = results.get(scenario_hash)
    options = compare_table.entity_options([("run", result)], metric) if result is not None else []
    return options, options[0]["value"] if options else None


def chart(results, entity, metric, scenario_hash):
    result = results.get(scenario_hash)
    if result is None:
        return empty_figure("Not run on this server yet: nothing to draw.", 420)
    return overlay_figure([(result.scenario.get("name") or "run", result)], metric, entity)


def save(results, store, _, name, scenario_hash):
    scenario = content.find_scenario(scenario_hash, store, results)
    if scenario is None:
        return error(f"Not saved: no saved scenario or stored run has the hash {str(scenario_hash)[:80]}.")
    try:
        entry = store.save(scenario, name)
    except ScenarioError as exc:
        return error(f"Not saved: {exc}")
    return html.Span(["Saved as ", html.B(entry["name"]), ": ", dcc.Link(permalink(entry["hash"]),
                                                                        href=permalink(entry["hash"]))],
                     className="ok")


def what_if(results, store, policy, seed, scenario_hash):
    """The scenario and its what-if side by side, metric by metric, with the what-if's permalink."""
    scenario = content.find_scenario(scenario_hash, store, results)
    try:
        original, _ = results.run(scenario)
        changed, cached = results.run(content.what_if(scenario, policy, seed))
    except ScenarioError as exc:
        return no_update, no_update, no_update, error(f"Not run: {exc}")
    table, deltas = compare_table.comparison_table([("original", original), ("what-if", changed)])
    table = content.readable_comparison(table, scenario["engine"])
    link = permalink(changed.scenario_hash)
    message = html.Span([f"What-if {'from the cache' if cached else 'simulated'}: ", dcc.Link(link, href=link)],
                        className="ok")
    return (table.to_dict("records"), [{"name": c, "id": c} for c in table.columns],
            compare_table.delta_styles(deltas), message)


def export(results, store, clicks, scenario_hash):
    """The scenario's JSON, or a message when there is none.

    The CSV frames, the report and the brief are links to their routes, never a callback response.
    """
    if not any(clicks or []):
        return no_update, no_update
    scenario = content.find_scenario(scenario_hash, store, results)
    if scenario is None:
        return no_update, error(f"Not exported: no saved scenario or stored run has the hash {str(scenario_hash)[:80]}.")
    return dcc.send_string(json.dumps(scenario, indent=2, sort_keys=True) + "\n", f"{scenario_hash[:12]}.json"), ""


def register(app, services) -> None:
    """Wire the page to ``services.results`` (the ResultCache) and ``services.scenarios`` (the ScenarioStore)."""
    results, store = services.results, services.scenarios
    app.server.after_request(partial(answer_not_found, results, store))
    briefs.register(app.server, results)   # the brief's routes (the engine pages' run panels share them)
    app.callback(Output(ids.BODY, "children"), Input(ids.URL_HASH, "data"))(partial(body, results, store))
    # An unknown permalink's tab says "Not found" (the shell titles every /scenario/ URL "Scenario" before the
    # lookup answers; this runs once the not-found body is in the page, so after it).
    app.clientside_callback(
        "function(title) { if (title) { document.title = title; } return window.dash_clientside.no_update; }",
        Output(ids.TITLE_SINK, "data"), Input(ids.NOT_FOUND_TITLE, "data"))
    app.callback(
        Output(ids.TITLE, "children"), Output(ids.META, "children"), Output(ids.STATUS, "children"),
        Output(ids.JSON_VIEW, "children"), Output(ids.SUMMARY, "data"), Output(ids.SUMMARY, "columns"),
        Output(ids.SUMMARY, "tooltip_data"),
        Output(ids.METRIC, "options"), Output(ids.METRIC, "value"), Output(ids.WHATIF_POLICY, "options"),
        Output(ids.WHATIF_POLICY, "value"), Output(ids.WHATIF_SEED, "value"), Output(ids.SAVE_NAME, "value"),
        Output(ids.AXIS_TIPS, "data-tooltips"),
        Input(ids.HASH, "data"), Input(ids.VERSION, "data"),
    )(partial(show, results, store))

    @app.callback(Output(ids.VERSION, "data"), Output(ids.STATUS, "children", allow_duplicate=True),
                  Input(ids.RUN, "n_clicks"), State(ids.HASH, "data"), State(ids.VERSION, "data"),
                  **background_run(ids.RUN, ids.CANCEL, ids.PROGRESS))
    def _run(set_progress, _, scenario_hash, version):   # a function of its own: Dash names a background job by its source
        return run(results, store, set_progress, scenario_hash, version)

    app.callback(Output(ids.ENTITY, "options"), Output(ids.ENTITY, "value"), Input(ids.METRIC, "value"),
                 State(ids.HASH, "data"))(partial(entities, results))
    app.callback(Output(ids.CHART, "figure"), Input(ids.ENTITY, "value"), State(ids.METRIC, "value"),
                 State(ids.HASH, "data"))(partial(chart, results))
    app.callback(Output(ids.SAVE_MSG, "children"), Input(ids.SAVE, "n_clicks"), State(ids.SAVE_NAME, "value"),
                 State(ids.HASH, "data"), prevent_initial_call=True)(partial(save, results, store))

    @app.callback(
        Output(ids.WHATIF_TABLE, "data"), Output(ids.WHATIF_TABLE, "columns"),
        Output(ids.WHATIF_TABLE, "style_data_conditional"), Output(ids.WHATIF_MSG, "children"),
        Input(ids.WHATIF_RUN, "n_clicks"), State(ids.WHATIF_POLICY, "value"), State(ids.WHATIF_SEED, "value"),
        State(ids.HASH, "data"),
        background=True, interval=POLL_MS, running=[(Output(ids.WHATIF_RUN, "disabled"), True, False)],
        prevent_initial_call=True,
    )
    def _what_if(_, policy, seed, scenario_hash):   # a function of its own: Dash names a background job by its source
        return what_if(results, store, policy, seed, scenario_hash)

    app.callback(Output(ids.DOWNLOAD, "data"), Output(ids.EXPORT_MSG, "children"),
                 Input({"type": ids.EXPORT, "file": ALL}, "n_clicks"),
                 State(ids.HASH, "data"), prevent_initial_call=True)(partial(export, results, store))
