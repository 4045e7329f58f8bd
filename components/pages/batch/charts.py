"""What the page's charts, table and exports show of the runs, built from cached frames."""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict

import pandas as pd

from ...figures import batch as figures
from ...figures import catalogue, gantt
from ...services.downloads import download_href
from ...services.report import html_report
from ...services.runs import loaded_runs
from ...services.workspace import permalink

#: The frames of the run shown in detail offered as files: the three of every run, and ``pending`` (why each
#: job waited: ``job_id, from_time, to_time, reason, blocking_job``, the intervals tiling each wait).
FRAMES = ("jobs", "timeline", "summary", "pending")


def detail_choice(records, scenario, policy) -> tuple[str | None, str | None]:
    """The scenario kind and policy label the detail charts show for ``records``.

    The chosen ones while the runs have them, else the last scenario and its
    last policy -- what the two dropdowns settle on (they use this too).
    """
    scenarios = list(dict.fromkeys(r["scenario"] for r in records or []))
    scenario = scenario if scenario in scenarios else (scenarios[-1] if scenarios else None)
    labels = list(dict.fromkeys(r["label"] for r in records or [] if r["scenario"] == scenario))
    return scenario, policy if policy in labels else (labels[-1] if labels else None)


def detail_figures(results, records, scenario, policy, window) -> tuple:
    """Utilisation, queue, killed, waits and Gantt figures for one scenario kind.

    Series charts show every policy of the scenario (its first seed); the
    utilisation and Gantt charts show the chosen ``policy`` label.
    """
    first_seed: dict[str, dict] = {}
    for record in records or []:
        if record["scenario"] == scenario:
            first_seed.setdefault(record["label"], record)
    loaded = [(record["label"], result) for record, result in loaded_runs(results, first_seed.values())]
    detail = dict(loaded).get(policy)
    timelines = [(label, result.timeline) for label, result in loaded]
    empty_timeline = pd.DataFrame({"time": [], "entity": [], "metric": [], "value": []})
    empty_jobs = pd.DataFrame(columns=["job_id", "status", "start_time", "end_time", "cluster", "machines", "procs"])
    return (
        figures.utilisation_over_time(detail.timeline if detail else empty_timeline, window),
        figures.series_by_run(timelines, "queue", "queue_length", "Queue length", "waiting jobs", window),
        figures.series_by_run(timelines, "all", "killed_jobs", "Killed jobs (cumulative)", "jobs", window,
                              none="none in the runs shown<br>(no machine failed under a running job)."),
        figures.wait_distribution([(label, result.jobs) for label, result in loaded], window),
        gantt.gantt(detail.jobs if detail else empty_jobs, detail.timeline if detail else empty_timeline, window),
    )


class FigureMemo:
    """The detail figures last built in this process, keyed by what they are drawn from (bounded LRU).

    Results are immutable and addressed by content hash, so the same runs,
    scenario, policy and window always give the same figures: re-opening a
    page, or going back to a window seen before, costs a lookup instead of a
    rebuild (the Gantt of a 450,000-job run takes about a second to build).
    """

    def __init__(self, size: int = 8):
        self.size = size
        self._figures: OrderedDict[tuple, tuple] = OrderedDict()
        self._lock = threading.Lock()   # the server answers callbacks from several threads

    @staticmethod
    def key(records, scenario, policy, window) -> str:
        """What the detail figures are drawn from, as a short text (also kept by the page: see ``DRAWN``)."""
        parts = [sorted((r["scenario"], r["label"], r["hash"]) for r in records or []), scenario, policy,
                 list(window) if window else None]
        return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:32]

    def detail(self, results, records, scenario, policy, window) -> tuple:
        key = self.key(records, scenario, policy, window)
        with self._lock:
            if key in self._figures:
                self._figures.move_to_end(key)
                return self._figures[key]
        built = detail_figures(results, records, scenario, policy, window)
        with self._lock:
            self._figures[key] = built
            while len(self._figures) > self.size:
                self._figures.popitem(last=False)
        return built


def frame_links(records, scenario, policy) -> dict[str, tuple[str, str]]:
    """``frame -> (href, file name)`` of the run shown in detail; empty when none is.

    The files come from the download route (:mod:`.downloads`), streamed
    from the store: a large run's frames never pass through a callback.
    """
    record = next((r for r in records or [] if r["scenario"] == scenario and r["label"] == policy), None)
    if record is None:
        return {}
    names = {frame: f"batch-{scenario}-{record['policy']}-{frame}.csv" for frame in FRAMES}
    return {frame: (download_href(record["hash"], frame, name), name) for frame, name in names.items()}


def batch_report(results, records, scenario, policy, window, generated: str) -> str:
    """The self-contained HTML report of a matrix: objectives, the charts shown, every run's summary."""
    loaded = loaded_runs(results, records)
    table = figures.objective_table([(r["scenario"], r["label"], res.summary) for r, res in loaded])
    runs = [(f"{r['scenario']} · {r['label']} · seed {r['seed']}", res) for r, res in loaded]
    charts = [figures.objective_bars(table), *detail_figures(results, records, scenario, policy, window)]
    return html_report("Batch scheduling: policy × scenario matrix", runs, charts, generated)


#: The summary table's metrics, in its order.
SUMMARY = ("jobs", "killed", "cancelled", "mean_slowdown", "mean_bounded_slowdown_tau10", "mean_response_s",
           "mean_wait_s", "utilisation", "scheduler_cpu_s")


def summary_rows(loaded) -> list[dict]:
    """One row per ``(run record, result)``."""
    rows = []
    for record, result in loaded:
        value = result.summary_value
        rows.append({
            "scenario": record["scenario"], "policy": record["label"], "seed": record["seed"],
            "hardware": record.get("hardware", ""), **catalogue.cells(value, SUMMARY, "batch"),
            "wall (s)": round(record["wall_seconds"], 2), "source": "cached" if record["cached"] else "simulated",
            "open": f"[permalink]({permalink(record['hash'])})",
        })
    return rows
