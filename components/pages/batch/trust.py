"""The Batch page's trust panels: "Your log vs the simulation" and why jobs waited.

Both read the run shown in detail (the scenario and policy dropdowns, its
first seed) from the result cache and send figures only. The log's own
schedule comes from the run's ``jobs`` frame (``recorded_wait`` beside the
simulated ``wait_time``), the reasons from its ``pending`` frame. Under the
log's panel, the gap explained step by step from the same run
(:mod:`components.widgets.baseline_steps`).
"""

from __future__ import annotations

from functools import partial
from urllib.parse import urlencode

import pandas as pd
from dash import ALL, Input, Output, State, ctx, dcc, html, no_update

from sched_engine import sweeps
from sched_engine.analysis.baseline import compare_with_log, headline, recorded_timeline
from sched_engine.core.inputs import is_reference

from ...figures import trust as figures
from ...figures.common import ONE_LINE
from ...services.runs import loaded_runs
from ...widgets import baseline_steps
from ...widgets.fields import field, graph
from . import ids

#: Blocking jobs offered as links under a job's reasons, at most.
BLOCKING_LINKS = 20
#: The reasons of a run stored without them (an earlier version): none.
PENDING_COLUMNS = pd.DataFrame({"job_id": [], "from_time": [], "to_time": [], "reason": [], "blocking_job": []})


def shown_run(results, records, scenario, policy):
    """``(record, result)`` of the run the detail charts show (first seed), or ``(None, None)``."""
    for record in records or []:
        if record["scenario"] == scenario and record["label"] == policy:
            loaded = loaded_runs(results, [record])
            return loaded[0] if loaded else (None, None)
    return None, None


def baseline_statement(record) -> str:
    """Which run every figure of the panel is relative to."""
    return (f"Baseline: {record['scenario']} · {record['label']} · seed {record['seed']}"
            + (f" on {record['hardware']}" if record.get("hardware") else ""))


#: The baseline steps' widget on this page.
STEPS_IDS = baseline_steps.Ids(ids.PAGE)


def shown_for_steps(results, records, scenario, policy):
    """``(statement, result)`` of the run the steps start from: the run shown in detail."""
    record, result = shown_run(results, records, scenario, policy)
    return (baseline_statement(record), result) if result is not None else (None, None)


#: A chart with nothing to show where a sentence above it says why: Plotly's least height.
NOTHING_HEIGHT = 10


def records_waits(jobs) -> bool:
    """Whether the run's log recorded any wait time (else nothing can be checked or calibrated against it)."""
    return "recorded_wait" in jobs.columns and bool(jobs["recorded_wait"].notna().any())


def log_panel(results, records, scenario, policy, window):
    """The headline sentence, the baseline named, log vs simulation over time, the error breakdown, why jobs
    waited over time and per group."""
    record, result = shown_run(results, records, scenario, policy)
    if result is None:
        empty = figures.empty_figure("run the matrix to compare with your log")
        return "", "", empty, empty, empty, empty
    jobs = result.jobs
    pending = result.extra("pending")
    pending = pending if pending is not None else PENDING_COLUMNS
    why = figures.why_waited(pending, window), figures.why_waited_by_group(pending, jobs, window)
    if not records_waits(jobs):
        nothing = figures.empty_figure("", NOTHING_HEIGHT)   # the sentence says it all: no frames to look at
        return ("This log records no wait times, so the simulation cannot be checked against it.",
                baseline_statement(record), nothing, nothing, *why)
    check = compare_with_log(jobs, jobs)
    sentence = headline(check)
    return (sentence[0].upper() + sentence[1:] + ".", baseline_statement(record),
            figures.log_vs_simulation(recorded_timeline(jobs), result.timeline, window),
            figures.error_breakdown(check.by), *why)


#: The sweep kind that grids the model's knobs against the log (``/sweeps?kind=calibrate&trace=...``).
CALIBRATE = "calibrate"
HIDDEN = {"display": "none"}


def calibrate_link(results, records, scenario, policy):
    """``(href, style)`` of the Calibrate link: the Sweeps page on ``calibrate`` with the shown run's trace.

    Hidden while no run is shown, while the shown run's log records no wait
    times (nothing to fit), or while this build's sweep registry has no
    ``calibrate`` kind. The trace is named by its reference (``sample:``
    or ``upload:``), never by a path of this machine: a trace given by path
    (the command line's) is left out of the link.
    """
    _, result = shown_run(results, records, scenario, policy)
    if result is None or CALIBRATE not in sweeps.KINDS or not records_waits(result.jobs):
        return None, HIDDEN
    trace = str(result.scenario.get("model", {}).get("trace", {}).get("path") or "")
    query = {"kind": CALIBRATE, **({"trace": trace} if is_reference(trace) else {})}
    return f"/sweeps?{urlencode(query)}", {}


def chosen_job(click, clicks):
    """The job whose reasons are shown (the callback; see :func:`job_from`)."""
    return job_from(ctx.triggered_id, click, clicks)


def job_from(trigger, click, _clicks):
    """The job whose reasons are shown: one clicked in the machines × time chart, or a blocking job's link."""
    if isinstance(trigger, dict) and trigger.get("type") == ids.BLOCKING_LINK:
        if not any(_clicks or []):
            return no_update
        return trigger["job"]
    points = (click or {}).get("points") or []
    data = points[0].get("customdata") if points else None
    if isinstance(data, list) and data:
        return str(data[0])
    return no_update


def job_panel(results, job_id, records, scenario, policy):
    """One job's reasons over time; its blocking jobs and the longest waits of the run as links."""
    _, result = shown_run(results, records, scenario, policy)
    pending = result.extra("pending") if result is not None else None
    if pending is None:
        return figures.empty_figure("run the matrix to see why jobs waited", ONE_LINE), []
    longest = longest_waits(pending)
    job_id = str(job_id or "").strip()
    if not job_id:
        figure = figures.empty_figure("choose a job: type its id, click it in the machines × time chart "
                                      "or pick one of the longest waits", ONE_LINE)
        return figure, _links("Longest waits:", longest)
    rows = pending[pending["job_id"] == job_id]
    named = [job for job in dict.fromkeys(rows["blocking_job"].fillna("").astype(str)) if job][:BLOCKING_LINKS]
    return figures.job_reasons(pending, job_id), [*_links("Blocked by:", named), *_links("Longest waits:", longest)]


def longest_waits(pending, count: int = 5) -> list[str]:
    """The jobs that waited longest in all (their intervals summed)."""
    if pending.empty:
        return []
    waited = (pending["to_time"] - pending["from_time"]).groupby(pending["job_id"], sort=False).sum()
    return [str(job) for job in waited.sort_values(ascending=False, kind="stable").index[:count]]


def _links(title: str, jobs: list[str]) -> list:
    if not jobs:
        return []
    return [html.Span(title, className="hint"),
            *[html.Button(f"job {job}", id={"type": ids.BLOCKING_LINK, "job": job}, className="link-button")
              for job in jobs]]


def section() -> html.Section:
    """The panels, under the charts over time."""
    return html.Section(
        [
            html.H3("Your log vs the simulation"),
            html.P(id=ids.LOG_HEADLINE, className="headline"),
            html.P(id=ids.LOG_BASELINE, className="hint"),
            html.A("Calibrate: find the model settings that reproduce this log best (Sweeps)", id=ids.CALIBRATE,
                   className="button", style=HIDDEN),
            graph(ids.LOG_TIMELINE),
            graph(ids.LOG_BREAKDOWN),
            baseline_steps.section(STEPS_IDS),
            html.H3("Why jobs waited"),
            html.Div([graph(ids.WHY_WAITED), graph(ids.WHY_BY_GROUP)], className="two-graphs"),
            field("Job (or click one in the machines × time chart)",
                  dcc.Input(id=ids.JOB_CHOICE, type="text", debounce=True, placeholder="job id")),
            graph(ids.JOB_REASONS, placeholder_height=ONE_LINE),
            html.Div(id=ids.BLOCKING_LINKS, className="button-row"),
        ],
        className="panel",
    )


def register(app, results, uploads) -> None:
    app.callback(Output(ids.LOG_HEADLINE, "children"), Output(ids.LOG_BASELINE, "children"),
                 Output(ids.LOG_TIMELINE, "figure"), Output(ids.LOG_BREAKDOWN, "figure"),
                 Output(ids.WHY_WAITED, "figure"), Output(ids.WHY_BY_GROUP, "figure"),
                 Input(ids.PANEL.runs, "data"), Input(ids.DETAIL_SCENARIO, "value"), Input(ids.DETAIL_POLICY, "value"),
                 Input(ids.WINDOW, "data"))(partial(log_panel, results))
    app.callback(Output(ids.CALIBRATE, "href"), Output(ids.CALIBRATE, "style"),
                 Input(ids.PANEL.runs, "data"), Input(ids.DETAIL_SCENARIO, "value"),
                 Input(ids.DETAIL_POLICY, "value"))(partial(calibrate_link, results))
    baseline_steps.register(app, STEPS_IDS, results, uploads, [State(ids.PANEL.runs, "data"),
                            State(ids.DETAIL_SCENARIO, "value"), State(ids.DETAIL_POLICY, "value")],
                            partial(shown_for_steps, results))
    app.callback(Output(ids.JOB_CHOICE, "value"), Input(ids.GANTT, "clickData"),
                 Input({"type": ids.BLOCKING_LINK, "job": ALL}, "n_clicks"), prevent_initial_call=True)(chosen_job)
    app.callback(Output(ids.JOB_REASONS, "figure"), Output(ids.BLOCKING_LINKS, "children"),
                 Input(ids.JOB_CHOICE, "value"), Input(ids.PANEL.runs, "data"),
                 Input(ids.DETAIL_SCENARIO, "value"), Input(ids.DETAIL_POLICY, "value"))(partial(job_panel, results))
