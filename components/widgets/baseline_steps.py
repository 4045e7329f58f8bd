"""The baseline explained on a page: the gap between a run and its log, step by step.

The steps are :func:`sched_engine.analysis.baseline_steps.explain` (the same
as ``python -m sched_engine baseline``) from the run a page shows: on the
hardware, on the capacity the log used, with its queues, each user's
limits, its down times, the users' estimates. They run as a background
callback: every step is one run through the result cache (keyed by the
scenario's content, so a step run before comes back at once and the shown
run is never run again), and the progress bar moves as each step and each
run goes. The down-time step's workload (the log's jobs and the
reservations) is stored as an upload, so its run names a file by content,
never a path of the server.

The finished steps are kept as a small record in a browser Store (the run's
hash, the capacity, one dict of numbers per step, the sentence): the page
draws the table and the chart from it, and Explain on the same run and
capacity shows it again without running anything.

A page places :func:`section` and calls :func:`register` with the states
that name its shown run and a ``resolve(*values) -> (statement, result)``
(``(None, None)`` while no run is shown).
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass

from dash import Input, Output, State, dash_table, dcc, html, no_update

from sched_engine import ScenarioError
from sched_engine.analysis.baseline_steps import CAPACITY_TEXT, STEPS, explain, sentence
from sched_engine.batch.capacity import LOG

from ..figures import trust as figures
from ..figures.common import ONE_LINE
from ..services.progress import POLL_MS, TRANSIENT_ERRORS
from .fields import error, field, graph, ok

CAPACITY_OPTIONS = [{"label": "its peak", "value": "log"},
                    {"label": "its time-weighted p99", "value": "log_p99"},
                    {"label": "its time-weighted p99.9 (the audit's)", "value": "log_p999"}]
#: The progress outputs once nothing runs: an empty bar (value, max), no status text.
IDLE = ["0", "100", ""]
#: At most one progress report per this many seconds while a run goes (each step's end is always sent).
REPORT_S = 0.5
#: How the steps' runs are named (the name is not part of a scenario's hash): ``baseline step: <step> · <run>``.
STEP_PREFIX = "baseline step: "


@dataclass(frozen=True)
class Ids:
    """The widget's component ids on one page: ``<page>-steps-<thing>``."""

    page: str

    def __getattr__(self, thing: str) -> str:
        if thing.startswith("_"):
            raise AttributeError(thing)
        return f"{self.page}-steps-{thing.replace('_', '-')}"


class Reporter:
    """The steps' progress (``set_progress`` takes bar value, bar max, status text) and their runs."""

    def __init__(self, set_progress, name: str, clock=time.monotonic):
        self.set_progress, self.name, self.clock = set_progress, name, clock
        self.done = 0           # steps finished
        self.simulated = 0      # runs not found in the cache
        self._last = None

    def run(self, results):
        """``run(scenario, inputs=)`` for :func:`explain`: through the result cache, named for its step."""
        def run(checked, inputs=None):
            data = {**checked.to_dict(), "name": f"{STEP_PREFIX}{STEPS[self.done].replace('_', ' ')} · {self.name}"}
            result, cached = results.run(data, progress=self.fraction)
            self.simulated += not cached
            return result
        return run

    def step(self, text: str) -> None:
        self.done += 1
        self._send(100 * self.done, f"step {self.done} of {len(STEPS)}: {text}", force=True)

    def fraction(self, done: float) -> None:
        self._send(int(100 * (self.done + min(max(done, 0.0), 1.0))), f"step {self.done + 1} of {len(STEPS)} running")

    def _send(self, value: int, text: str, force: bool = False) -> None:
        now = self.clock()
        if not force and self._last is not None and now - self._last < REPORT_S:
            return
        try:
            self.set_progress((str(value), str(100 * len(STEPS)), text))
        except TRANSIENT_ERRORS:   # progress is advisory: a busy job store only costs one report
            return
        self._last = now


def as_upload(uploads):
    """``reference(path, label)`` for :func:`explain`: the down-time workload stored as an upload, by content."""
    def reference(path, label: str) -> str:
        return uploads.reference_of(uploads.save(path.read_bytes(), "trace", label=label).name)
    return reference


def run_steps(results, uploads, resolve, set_progress, capacity, last, *values):
    """The background callback: ``(finished record, message)``; a refused or failed explanation keeps the last."""
    statement, result = resolve(*values)
    if result is None:
        return no_update, error("Not explained: run the matrix first; the steps start from the run shown above.")
    if "recorded_wait" not in result.jobs.columns or not result.jobs["recorded_wait"].notna().any():
        return no_update, error("Not explained: this log records no wait times, so there is no gap to explain.")
    capacity = capacity if capacity in CAPACITY_TEXT else LOG
    if last and last.get("run") == result.scenario_hash and last.get("capacity") == capacity:
        return no_update, ok("These are the steps of the run shown, on this capacity: nothing to run again.")
    reporter = Reporter(set_progress, result.scenario.get("name") or result.scenario.get("policy", ""))
    try:
        with tempfile.TemporaryDirectory(prefix="baseline-steps-") as folder:
            steps = explain(result.scenario, capacity=capacity, first=result, folder=folder,
                            run=reporter.run(results), progress=reporter.step, reference=as_upload(uploads))
    except (ScenarioError, ValueError) as exc:   # ValueError: an upload the store refused (e.g. a full disk)
        return no_update, error(f"Not explained: {exc}. The previous steps stay.")
    record = {"run": result.scenario_hash, "capacity": capacity, "baseline": statement,
              "steps": figures.steps_record(steps.table), "sentence": sentence(steps.table)}
    ran = sum(step["ran"] for step in record["steps"])
    return record, ok(f"{len(STEPS)} steps, {ran} runs: {reporter.simulated} simulated, {ran - reporter.simulated} "
                      f"from the cache.")


def drawn(record):
    """The table, the chart, the chart's box and the sentence (naming the run the steps started from) of the
    last steps."""
    if not record or not record.get("steps"):
        return [], figures.steps_figure([], ONE_LINE), _box(ONE_LINE), ""
    text = record["sentence"] + (f" {record['baseline']}." if record.get("baseline") else "")
    return (figures.steps_rows(record["steps"]), figures.steps_figure(record["steps"]),
            _box(figures.STEPS_HEIGHT), text)


def _box(height: int) -> dict:
    return {"height": f"{height}px", "overflow": "hidden"}


CANCELLED = "Cancelled. The previous steps stay; the runs already made are in the result cache."


def section(ids: Ids) -> html.Div:
    """Capacity, Explain / Cancel, progress, the sentence, the table and the chart."""
    return html.Div(
        [
            dcc.Store(id=ids.result, storage_type="local", data=None),
            html.H4("Why the gap: step by step"),
            html.P("Each step is a run of your log with one more thing the log itself says about the site: on the "
                   "hardware, on the capacity it used, with its queues, each user's limits found in it, its down "
                   "times, the users' estimates.", className="hint"),
            html.Div([field("The capacity the log used", dcc.RadioItems(
                id=ids.capacity, options=CAPACITY_OPTIONS, value=LOG, persistence=True, className="checklist"))],
                     className="inline-fields"),
            html.Div([html.Button("Explain the gap", id=ids.run, className="primary"),
                      html.Button("Cancel", id=ids.cancel, disabled=True)], className="button-row"),
            html.Div([html.Progress(id=ids.progress, value="0", max="100"),
                      html.Span(id=ids.status, className="hint")], className="button-row"),
            html.Div(id=ids.message, className="message"),
            html.P(id=ids.sentence, className="headline"),
            dash_table.DataTable(
                id=ids.table, columns=[{"name": name, "id": key} for key, name in figures.STEP_TABLE.items()],
                data=[], style_table={"overflowX": "auto"},
                style_cell={"fontFamily": "inherit", "padding": "3px", "textAlign": "left", "whiteSpace": "normal",
                            "height": "auto", "maxWidth": "520px"}),
            graph(ids.graph, "press Explain the gap to run the steps", height=ONE_LINE),
        ],
    )


def register(app, ids: Ids, results, uploads, states: list[State], resolve) -> None:
    """Wire the widget: ``states`` name the shown run, ``resolve(*their values) -> (statement, result)``."""
    @app.callback(
        Output(ids.result, "data"), Output(ids.message, "children"),
        Input(ids.run, "n_clicks"), State(ids.capacity, "value"), State(ids.result, "data"), *states,
        background=True, interval=POLL_MS, prevent_initial_call=True,
        running=[(Output(ids.run, "disabled"), True, False), (Output(ids.cancel, "disabled"), False, True)],
        cancel=[Input(ids.cancel, "n_clicks")],
        progress=[Output(ids.progress, "value"), Output(ids.progress, "max"), Output(ids.status, "children")],
        progress_default=IDLE,
    )
    def _explain(set_progress, _clicks, capacity, last, *values):
        # A function of its own: Dash names a background job by its source.
        return run_steps(results, uploads, resolve, set_progress, capacity, last, *values)

    app.callback(Output(ids.table, "data"), Output(ids.graph, "figure"), Output(ids.graph, "style"),
                 Output(ids.sentence, "children"), Input(ids.result, "data"))(drawn)
    app.callback(Output(ids.message, "children", allow_duplicate=True), Input(ids.cancel, "n_clicks"),
                 prevent_initial_call=True)(lambda _clicks: html.Span(CANCELLED, className="hint"))
