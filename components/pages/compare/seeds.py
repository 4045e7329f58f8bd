"""Intervals across seeds on the Compare page: the job-by-job comparison of the first two runs, over N seeds.

When a compared run has random parts -- synthetic failures or requirements,
a generated workload, a randomised policy such as Local Search -- one pair
of runs is one draw, and the paired bootstrap interval (one seed) says
nothing of how much another seed would move the result. A button runs both
scenarios at seeds ``1..N`` in the background (through the result cache,
so a seed run before comes back at once; progress and Cancel as any run),
takes the relative change of the mean wait of each seed's pair
(:func:`sched_engine.analysis.paired.bootstrap`'s estimate, over the jobs
that started in both runs) and shows the Student-t 95% interval across the
seeds (:func:`sched_engine.analysis.paired.across_seeds`) under the paired
headline. Both runs take the same seed each time, so a seed's synthetic
failures hit both policies alike (common random numbers). Cancel stops the
runs and says so; the interval shown before stays, and the seeds that
finished are in the result cache for the next try.

The result is a small record in a browser Store: the pair's hashes, the
seeds' changes and the interval.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np
from dash import Input, Output, State, dcc, html, no_update

from sched_engine import ScenarioError
from sched_engine.analysis.paired import across_seeds, bootstrap, paired_jobs
from sched_engine.registry import REGISTRY

from ...figures import catalogue
from ...services.progress import throttled
from ...widgets import run_panel
from ...widgets.fields import error, ok
from . import ids, table

#: Seeds a click may ask for, at most (each is two runs).
MAX_SEEDS = 20
HIDDEN = {"display": "none"}


def random_parts(scenario: dict) -> list[str]:
    """What the seed changes in ``scenario``, readable (empty when the run is deterministic)."""
    model = scenario.get("model") or {}
    parts = []
    if scenario.get("engine") == "batch":
        if (model.get("failures") or {}).get("kind") == "synthetic":
            parts.append("synthetic failures")
        if model.get("synthetic_requirements"):
            parts.append("synthetic requirements")
    if scenario.get("engine") == "network" and model.get("generate"):
        parts.append("generated applications")
    if scenario.get("engine") == "elastic" and (model.get("trace") or {}).get("kind") == "generated":
        parts.append("a generated trace")
    try:
        if REGISTRY.policy(scenario["engine"], scenario["policy"]).randomised:
            parts.append(catalogue.policy_label(scenario["engine"], scenario["policy"]))
    except (KeyError, ScenarioError):   # a policy this build lacks: nothing known of it
        pass
    return parts


def offer(results, hashes):
    """``(style, hint)`` of the seeds controls: shown when the first two runs share jobs and have random parts."""
    runs = table.loaded(results, hashes)[0][:2]
    if len(runs) < 2:
        return HIDDEN, ""
    parts = list(dict.fromkeys(part for _, result in runs for part in random_parts(result.scenario)))
    if not parts:
        return HIDDEN, ""
    return {}, (f"These runs have random parts ({', '.join(parts)}): one seed is one draw. Run both at several "
                "seeds for an interval across seeds.")


def seed_plan(scenario_a: dict, scenario_b: dict, seeds: int) -> list[run_panel.Planned]:
    """Both scenarios at seeds ``1..seeds``, A then B for each seed."""
    return [run_panel.Planned({**scenario, "seed": seed}, {"side": side, "seed": seed})
            for seed in range(1, seeds + 1) for side, scenario in (("A", scenario_a), ("B", scenario_b))]


def mean_change(results, record_a: dict, record_b: dict) -> float:
    """The relative change of the mean wait from run A to run B, over the jobs that started in both."""
    jobs, _ = paired_jobs(results.get(record_a["hash"]).jobs, results.get(record_b["hash"]).jobs)
    return bootstrap(jobs["wait_a"].to_numpy(float), jobs["wait_b"].to_numpy(float), np.random.default_rng(0),
                     resamples=0)[2].estimate


def run_seeds(results, set_progress, _clicks, count, hashes):
    """Run the first two runs' scenarios at seeds 1..N (the background callback); ``(record, message)``."""
    runs = table.loaded(results, hashes)[0][:2]
    if len(runs) < 2:
        return no_update, error("Not run: pick two runs of one workload first.")
    try:
        seeds = int(count)
    except (TypeError, ValueError):
        seeds = 0
    if not 2 <= seeds <= MAX_SEEDS:
        return no_update, error(f"Not run: seeds must be a whole number from 2 to {MAX_SEEDS}.")
    (_, first), (_, second) = runs
    try:
        records, message = run_panel.run_many(results, seed_plan(first.scenario, second.scenario, seeds),
                                              throttled(set_progress))
    except ScenarioError as exc:
        return no_update, error(f"Not run: {exc}. The previous interval stays.")
    changes = [mean_change(results, a, b) for a, b in zip(records[::2], records[1::2])]
    interval = across_seeds([c for c in changes if math.isfinite(c)])
    return ({"pair": list(hashes[:2]), "changes": [c if math.isfinite(c) else None for c in changes],
             "estimate": interval.estimate, "low": interval.low, "high": interval.high}, ok(message))


CANCELLED = ("Cancelled: no interval from this run. The previous interval stays; the seeds already run are in the "
             "result cache, so Run seeds takes them from there.")


def cancelled(_clicks):
    """Cancel: say that the seeds run stopped and what is kept (the background run itself is stopped by Dash)."""
    return html.Span(CANCELLED, className="hint")


def percent(value) -> str:
    """A relative change as the headline writes it: ``−12%`` (a true minus sign), ``0%``, ``n/a``."""
    if value is None or not math.isfinite(value):
        return "n/a"
    text = f"{value * 100:+.0f}%"
    return "0%" if text in ("+0%", "-0%") else text.replace("-", "\u2212")


def sentence(record, hashes) -> str:
    """The across-seeds line under the paired headline, when ``record`` is of the first two runs chosen."""
    if not record or list((hashes or [])[:2]) != record.get("pair"):
        return ""
    kept = [c for c in record["changes"] if c is not None]
    per_seed = ", ".join(percent(c) for c in record["changes"])
    return (f"Across {len(kept)} seeds: mean wait {percent(record['estimate'])} [{percent(record['low'])}, "
            f"{percent(record['high'])}] (95%, Student t over the seeds; per seed {per_seed}).")


def controls() -> html.Div:
    """The seeds row under the paired headline (hidden until two runs with random parts are chosen)."""
    return html.Div(
        [
            html.P(id=ids.SEEDS_HINT, className="hint"),
            html.Div([html.Label([html.Span("Seeds"), dcc.Input(id=ids.SEEDS_COUNT, type="number", min=2,
                                                                max=MAX_SEEDS, step=1, value=5, persistence=True)],
                                 className="field"),
                      html.Button("Run seeds", id=ids.SEEDS_RUN),
                      html.Button("Cancel", id=ids.SEEDS_CANCEL, disabled=True)], className="button-row"),
            html.Progress(id=ids.SEEDS_PROGRESS, value="0", max="100"),
            html.Div(id=ids.SEEDS_MESSAGE, className="message"),
        ],
        id=ids.SEEDS_BOX, style=HIDDEN,
    )


def register(app, results) -> None:
    app.callback(Output(ids.SEEDS_BOX, "style"), Output(ids.SEEDS_HINT, "children"),
                 Input(ids.RUNS, "value"))(partial(offer, results))
    app.callback(Output(ids.SEEDS_TEXT, "children"), Input(ids.SEEDS_STORE, "data"), Input(ids.RUNS, "value"))(sentence)

    @app.callback(Output(ids.SEEDS_STORE, "data"), Output(ids.SEEDS_MESSAGE, "children"),
                  Input(ids.SEEDS_RUN, "n_clicks"), State(ids.SEEDS_COUNT, "value"), State(ids.RUNS, "value"),
                  **run_panel.background_run(ids.SEEDS_RUN, ids.SEEDS_CANCEL, ids.SEEDS_PROGRESS))
    def _run_seeds(set_progress, clicks, count, hashes):
        # A function of its own: Dash names a background job by its source.
        return run_seeds(results, set_progress, clicks, count, hashes)

    app.callback(Output(ids.SEEDS_MESSAGE, "children", allow_duplicate=True), Input(ids.SEEDS_CANCEL, "n_clicks"),
                 prevent_initial_call=True)(cancelled)
