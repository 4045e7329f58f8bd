"""The Batch page's "How much hardware do I need?": a capacity-planning search from the run shown in detail.

The search is :func:`sched_engine.analysis.batch_sizing.size_batch` (the
same as ``python -m sched_engine size``) on the stored scenario of the run
the detail dropdowns show. It runs as a background callback: every probe is
one run of the engine through the result cache (a probe run before comes
back at once, so a cancelled search resumes where it stopped), and each
probe that finishes is sent to the page as the callback's progress -- the
probes so far, a few dozen numbers -- and drawn at once. The finished
search is kept as a small record in a browser Store (see
:mod:`components.figures.sizing` for its fields); ``sizing.csv`` is built
from it with the command line's columns.
"""

from __future__ import annotations

import math
import multiprocessing
import time

from dash import Input, Output, State, dcc, html, no_update

from sched_engine import ScenarioError
from sched_engine.analysis import probe_pool
from sched_engine.analysis.batch_sizing import MODES, size_batch
from sched_engine.analysis.commands import sizing_frames
from sched_engine.analysis.sizing import Probe, SizingResult, Target

from ...figures import catalogue
from ...figures import sizing as figures
from ...services.csv_export import send_csv
from ...services.progress import POLL_MS, TRANSIENT_ERRORS
from ...services.runs import PROBE_PREFIX
from ...widgets.fields import error, field, graph, ok
from . import ids, trust

#: The metrics a target may bound: summary metrics where lower is better and that more hardware lowers
#: (the search assumes so; see sched_engine/analysis/sizing.py). Never the scheduler's own CPU time.
TARGETS = ("mean_wait_s", "mean_bounded_slowdown_tau10", "mean_slowdown", "mean_response_s", "makespan_s",
           "killed", "cancelled")
MODE_OPTIONS = [{"label": "CPUs of one pool", "value": "pool"},
                {"label": "scale every cluster", "value": "scale"},
                {"label": "more load on today's machine", "value": "load"}]
#: The progress outputs once no search runs: no live probes, an empty bar (value, max), no status text.
IDLE = [None, "0", "100", ""]
#: At most one progress report per this many seconds while a probe runs (each probe's end is always sent).
REPORT_S = 0.5


def finite(value) -> float | None:
    """A JSON-safe number: ``None`` for NaN or infinity (a probe whose metric is undefined)."""
    return None if value is None or not math.isfinite(float(value)) else float(value)


class Reporter:
    """The search's progress: the probes so far as the page's live record, the running probe's share done.

    ``set_progress`` is the background callback's; it takes ``(live record,
    bar value, bar max, status text)``.
    """

    def __init__(self, set_progress, record: dict, clock=time.monotonic):
        self.set_progress, self.record, self.clock = set_progress, record, clock
        self.probes: list[dict] = []
        # Fresh simulations, counted by the probes' processes too (shared memory, inherited when they fork).
        self._simulated = multiprocessing.Value("i", 0)
        self._last = None

    def run(self, results):
        """A ``scenario -> result`` function for the search, counting fresh simulations.

        Each probe's run is named for what it varies (the name is not part of
        the scenario's hash), so the Compare page and the Workspace list it
        as a probe, not as the run it started from.
        """
        def run(scenario):
            result, cached = results.run({**scenario, "name": probe_name(scenario, self.record["mode"])},
                                         progress=self.fraction)
            if not cached:
                with self._simulated.get_lock():
                    self._simulated.value += 1
            return result
        return run

    @property
    def simulated(self) -> int:
        return self._simulated.value

    def probe(self, probe: Probe) -> None:
        self.probes.append({"size": float(probe.size), "metric": finite(probe.metric), "holds": bool(probe.holds),
                            "non_monotone": False})
        mode = self.record["mode"]
        self._send(100, f"probe {len(self.probes)}: {figures.size_text(mode, probe.size)} → "
                        f"{catalogue.formatted(self.record['metric'], probe.metric, figures.ENGINE)} "
                        f"({'meets' if probe.holds else 'misses'} the target)", force=True)

    def fraction(self, done: float) -> None:
        self._send(int(100 * min(max(done, 0.0), 1.0)), f"probe {len(self.probes) + 1} running")

    def _send(self, percent: int, text: str, force: bool = False) -> None:
        now = self.clock()
        if not force and self._last is not None and now - self._last < REPORT_S:
            return
        try:
            self.set_progress(({**self.record, "probes": list(self.probes)}, str(percent), "100", text))
        except TRANSIENT_ERRORS:   # progress is advisory: a busy job store only costs one report
            return
        self._last = now

    def finished(self, outcome: SizingResult) -> dict:
        """The record of the finished search."""
        odd = {float(p.size) for p in outcome.non_monotone}
        probes = [{**p, "non_monotone": p["size"] in odd} for p in self.probes]
        return {**self.record, "answer": None if outcome.answer is None else float(outcome.answer),
                "message": outcome.message, "probes": probes}


def probe_name(scenario: dict, mode: str) -> str:
    """``sizing probe: pool of 349 CPUs · <the sized run's name>`` (or the load factor, or the CPUs scaled to)."""
    model = scenario["model"]
    if mode == "load":
        what = f"load ×{float(model.get('load_factor', 1.0)):.4g}"
    else:
        cpus = sum(sum(c["cpus_per_machine"]) if isinstance(c["cpus_per_machine"], list)
                   else c["machines"] * c["cpus_per_machine"] for c in model.get("clusters") or [])
        what = f"{'pool of' if mode == 'pool' else 'clusters scaled to'} {cpus:,} CPUs"
    return " · ".join(part for part in (f"{PROBE_PREFIX}{what}", scenario.get("name")) if part)


def today_size(result, mode: str) -> float:
    """Today's size of the sized run: its CPUs (pool), 1 (scale) or its load factor (load)."""
    if mode == "pool":
        return result.summary_value("cpus")
    if mode == "scale":
        return 1.0
    return float(result.scenario["model"].get("load_factor", 1.0))


def checked_target(metric, bound) -> Target:
    """The form's target; a :class:`ScenarioError` naming the field when it is not one the search can take."""
    if metric not in TARGETS:
        raise ScenarioError("target", f"choose one of {', '.join(catalogue.label(m, 'batch') for m in TARGETS)}")
    try:
        value = float(bound)
    except (TypeError, ValueError):
        raise ScenarioError("bound", "enter a number") from None
    if not math.isfinite(value) or value < 0:
        raise ScenarioError("bound", f"must be a number of at least 0, got {bound!r}")
    return Target(metric, "<=", value)


def search(results, set_progress, _clicks, metric, bound, mode, records, scenario, policy):
    """Size the run shown in detail (the background callback); ``(finished record, message)``.

    A refused or failed search leaves the previous answer as it was.
    """
    record, result = trust.shown_run(results, records, scenario, policy)
    if result is None:
        return no_update, error("Not sized: run the matrix first; the search starts from the run shown above.")
    try:
        if mode not in MODES:
            raise ScenarioError("mode", f"choose one of {', '.join(MODES)}")
        target = checked_target(metric, bound)
        reporter = Reporter(set_progress, {"metric": metric, "bound": target.value, "mode": mode,
                                           "today": today_size(result, mode),
                                           "baseline": trust.baseline_statement(record)})
        outcome = size_batch(result.scenario, target, mode, run=reporter.run(results), progress=reporter.probe,
                             workers=probe_pool.default_workers())
    except ScenarioError as exc:
        return no_update, error(f"Not sized: {exc}. The previous answer stays.")
    finished = reporter.finished(outcome)
    count = len(finished["probes"])
    return finished, ok(f"{count} probes: {reporter.simulated} simulated, {count - reporter.simulated} from the "
                        f"cache. {finished['baseline']}.")


def live_drawn(live):
    """The running search's probes so far (nothing to change once the search has ended: see :func:`drawn`)."""
    if not live:
        return no_update, no_update
    return figures.probes_figure(live, running=True), "Searching…"


def drawn(last):
    """The last finished search's probes and its sentence, naming the run it was sized from.

    The answer stays while another run is shown above (the charts follow
    the run shown, the search does not): the sentence carries its own
    baseline, so it is never read against the wrong run.
    """
    text = figures.sentence(last)
    if text and last.get("baseline"):
        text = f"{text} {last['baseline']}."
    return figures.probes_figure(last), text


CANCELLED = ("Cancelled. The previous answer stays; the probes already run are in the result cache, so Size "
             "takes them from there.")


def cancelled(_clicks, last):
    """Cancel: back to the last finished search, and a message saying the probes run so far are kept."""
    return (*drawn(last), html.Span(CANCELLED, className="hint"))


def export(clicks, last):
    """``sizing.csv``: one row per probe (size, metric, holds, non_monotone), as the ``size`` command writes it."""
    if not clicks or not last or not last.get("probes"):
        return no_update
    probes = [Probe(p["size"], math.nan if p["metric"] is None else p["metric"], p["holds"]) for p in last["probes"]]
    odd = [probe for probe, raw in zip(probes, last["probes"]) if raw["non_monotone"]]
    frame, _ = sizing_frames(SizingResult(last["answer"], probes, odd), last["mode"])
    return send_csv(frame.rename(columns={"metric": last["metric"]}), "sizing.csv")


def section() -> html.Section:
    """The panel: target, what to vary, Size / Cancel, progress, the probes chart, the answer."""
    return html.Section(
        [
            dcc.Store(id=ids.SIZE_LIVE, data=None),
            dcc.Store(id=ids.SIZE_RESULT, storage_type="local", data=None),
            dcc.Download(id=ids.SIZE_DOWNLOAD),
            html.H3("How much hardware do I need?"),
            html.P("Starts from the run shown above (its scenario and policy) and searches the smallest hardware, "
                   "or the largest load, that keeps the target: each probe is one run of the engine, drawn as "
                   "it finishes.", className="hint"),
            html.Div(
                [field("Target", dcc.Dropdown(id=ids.SIZE_METRIC, clearable=False, className="narrow",
                                              value=TARGETS[0], persistence=True,
                                              options=[{"label": catalogue.label(m, "batch"), "value": m}
                                                       for m in TARGETS])),
                 field("at most", dcc.Input(id=ids.SIZE_BOUND, type="number", min=0, step="any", value=600,
                                            persistence=True), "in the metric's unit (seconds for times)"),
                 field("Vary", dcc.RadioItems(id=ids.SIZE_MODE, options=MODE_OPTIONS, value="pool",
                                              persistence=True, className="checklist"))],
                className="inline-fields",
            ),
            html.Div([html.Button("Size", id=ids.SIZE_RUN, className="primary"),
                      html.Button("Cancel", id=ids.SIZE_CANCEL, disabled=True),
                      html.Button("sizing.csv", id=ids.SIZE_CSV)], className="button-row"),
            html.Div([html.Progress(id=ids.SIZE_PROGRESS, value="0", max="100"),
                      html.Span(id=ids.SIZE_STATUS, className="hint")], className="button-row"),
            html.Div(id=ids.SIZE_MESSAGE, className="message"),
            html.P(id=ids.SIZE_SENTENCE, className="headline"),
            graph(ids.SIZE_GRAPH, "choose a target and press Size", placeholder_height=figures.NOTHING_YET_HEIGHT),
        ],
        className="panel",
    )


def register(app, results) -> None:
    @app.callback(
        Output(ids.SIZE_RESULT, "data"), Output(ids.SIZE_MESSAGE, "children"),
        Input(ids.SIZE_RUN, "n_clicks"), State(ids.SIZE_METRIC, "value"), State(ids.SIZE_BOUND, "value"),
        State(ids.SIZE_MODE, "value"), State(ids.PANEL.runs, "data"), State(ids.DETAIL_SCENARIO, "value"),
        State(ids.DETAIL_POLICY, "value"),
        background=True, interval=POLL_MS, prevent_initial_call=True,
        running=[(Output(ids.SIZE_RUN, "disabled"), True, False), (Output(ids.SIZE_CANCEL, "disabled"), False, True)],
        cancel=[Input(ids.SIZE_CANCEL, "n_clicks")],
        progress=[Output(ids.SIZE_LIVE, "data"), Output(ids.SIZE_PROGRESS, "value"),
                  Output(ids.SIZE_PROGRESS, "max"), Output(ids.SIZE_STATUS, "children")],
        progress_default=IDLE,
    )
    def _search(set_progress, clicks, metric, bound, mode, records, scenario, policy):
        # A function of its own: Dash names a background job by its source.
        return search(results, set_progress, clicks, metric, bound, mode, records, scenario, policy)

    # Two callbacks draw the chart: one while the search runs, from its progress, and one from the finished
    # search. One callback on both would wait for the search to end: Dash holds back a callback while
    # another that sets one of its inputs (here the finished search) is running.
    app.callback(Output(ids.SIZE_GRAPH, "figure", allow_duplicate=True),
                 Output(ids.SIZE_SENTENCE, "children", allow_duplicate=True),
                 Input(ids.SIZE_LIVE, "data"), prevent_initial_call=True)(live_drawn)
    app.callback(Output(ids.SIZE_GRAPH, "figure"), Output(ids.SIZE_SENTENCE, "children"),
                 Input(ids.SIZE_RESULT, "data"))(drawn)
    app.callback(Output(ids.SIZE_GRAPH, "figure", allow_duplicate=True),
                 Output(ids.SIZE_SENTENCE, "children", allow_duplicate=True),
                 Output(ids.SIZE_MESSAGE, "children", allow_duplicate=True),
                 Input(ids.SIZE_CANCEL, "n_clicks"), State(ids.SIZE_RESULT, "data"),
                 prevent_initial_call=True)(cancelled)
    app.callback(Output(ids.SIZE_DOWNLOAD, "data"), Input(ids.SIZE_CSV, "n_clicks"), State(ids.SIZE_RESULT, "data"),
                 prevent_initial_call=True)(export)

