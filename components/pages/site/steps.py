"""The Site study page's baseline steps: the Batch page's widget (:mod:`components.widgets.baseline_steps`) on
an EASY batch replay of the site's trace and clusters.

The steps replay a batch model; a site run's model holds one (its
``trace``, ``clusters``, ``failures``, ``requirements``, ``estimates``,
``load_factor``, ``capacity``: :data:`sched_engine.site.model.BATCH_FIELDS`)
beside what only the site engine models (memory, the organisation's fair
share). So the steps start from that batch model under EASY, run through
the result cache like every step, and the sentence says so: they explain
the gap between the log and a plain batch replay of the same workload on
the same machines, not the fair-share runs above.
"""

from __future__ import annotations

from functools import partial

from dash import State, html

from sched_engine.site.model import BATCH_FIELDS

from ...services.runs import loaded_runs
from ...widgets import baseline_steps
from . import ids

STEPS_IDS = baseline_steps.Ids(ids.PAGE)
#: The batch policy the steps replay the site's workload under.
POLICY = "easy"


def batch_replay(results, records):
    """``(statement, result)`` of the EASY batch replay of the first shown run's trace and clusters (run through
    the cache), or ``(None, None)`` while no run is shown."""
    loaded = loaded_runs(results, records[:1] if records else [])
    if not loaded:
        return None, None
    record, site_run = loaded[0]
    model = {key: value for key, value in site_run.scenario["model"].items() if key in BATCH_FIELDS}
    name = site_run.scenario.get("name") or record.get("label") or ""
    replay, _ = results.run({"engine": "batch", "policy": POLICY, "seed": site_run.scenario.get("seed", 0),
                             "name": f"batch replay · {name}".rstrip(" ·"), "model": model})
    return (f"Baseline: an EASY batch replay of this site's trace and clusters (the runs above add fair share and "
            f"memory), seed {replay.scenario.get('seed', 0)}"), replay


def section() -> html.Section:
    return html.Section([html.H3("Your log vs the simulation"), baseline_steps.section(STEPS_IDS)], className="panel")


def register(app, services) -> None:
    baseline_steps.register(app, STEPS_IDS, services.results, services.uploads, [State(ids.PANEL.runs, "data")],
                            partial(batch_replay, services.results))
