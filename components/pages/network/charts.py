"""What the page's charts and table show of loaded runs (``[(run record, result)]``), built from cached frames."""

from __future__ import annotations

import numpy as np
import pandas as pd
from dash import no_update

from sched_engine.network import machine_names

from ...figures import catalogue
from ...figures import network as figures

FRAMES = ("jobs", "timeline", "summary")


#: The summary table's metrics, in its order: the paper's quantities first.
SUMMARY = ("applications", "finished", "waiting", "mean_isolation", "min_isolation", "mean_duration_s", "mean_wait_s",
           "link_utilisation", "makespan_s")


def summary_rows(loaded) -> list[dict]:
    """One row per ``(run record, result)``: the paper's quantities (isolation, duration, utilisation)."""
    rows = []
    for record, result in loaded:
        value = result.summary_value
        rows.append({"scheme": record["label"], **catalogue.cells(value, SUMMARY, "network"),
                     "wall (s)": round(record["wall_seconds"], 2),
                     "source": "cached" if record["cached"] else "simulated"})
    return rows


def busiest_instant(timeline: pd.DataFrame) -> float:
    """The first time the most applications were running (the placement view's default instant)."""
    running = timeline[(timeline["entity"] == "cluster") & (timeline["metric"] == "running_apps")]
    if running.empty:
        return 0.0
    return float(running["time"].to_numpy()[int(np.argmax(running["value"].to_numpy()))])


def clicked_app(click: dict | None):
    """The application a chart click landed on (its ``customdata``), or ``no_update``."""
    points = (click or {}).get("points") or []
    name = points[0].get("customdata") if points else None
    return name if isinstance(name, str) else no_update


def cluster_machines(result) -> list[str]:
    """Machine names of a result's cluster, in index order (the heatmap's and placement view's rows)."""
    return machine_names(result.scenario["model"]["machines"])


def summary_outputs(loaded, chosen: str | None) -> tuple:
    """Summary rows and columns, scheme choices and the chosen one, application choices, default instant."""
    rows = summary_rows(loaded)
    labels = [r["label"] for r, _ in loaded]
    value = chosen if chosen in labels else (labels[-1] if labels else None)
    apps = list(loaded[0][1].jobs["job_id"]) if loaded else []
    instant = busiest_instant(scheme_result(loaded, value).timeline) if loaded else None
    return rows, [{"name": k, "id": k} for k in (rows[0] if rows else {})], labels, value, apps, instant


def compare_outputs(loaded, selected: str | None, window) -> tuple:
    """The charts comparing schemes (isolation over time, its CDF, durations) and the window's note."""
    note = "whole run" if not window else f"window {window[0]:.3f}–{window[1]:.3f} s"
    return (figures.isolation_over_time([(r["label"], res.jobs, res.timeline) for r, res in loaded], selected,
                                        window),
            figures.isolation_cdf([(r["label"], res.jobs) for r, res in loaded], selected, window),
            figures.durations([(r["label"], res.jobs) for r, res in loaded], selected, window), note)


def scheme_result(loaded, label: str | None):
    """The result of the scheme labelled ``label`` (None if it is not loaded)."""
    return {r["label"]: res for r, res in loaded}.get(label)


def heatmap_figure(loaded, label: str | None, selected: str | None, window):
    """Link utilisation of the scheme ``label`` (an empty figure when it is not loaded)."""
    result = scheme_result(loaded, label)
    if result is None:
        empty = pd.DataFrame({"time": [], "entity": [], "metric": [], "value": []})
        return figures.utilisation_heatmap(empty, pd.DataFrame(), [])
    return figures.utilisation_heatmap(result.timeline, result.jobs, cluster_machines(result), label, selected,
                                       window)


def placement_figure(loaded, label: str | None, selected: str | None, instant):
    """Containers per machine of the scheme ``label`` at ``instant`` (default: the busiest instant)."""
    result = scheme_result(loaded, label)
    if result is None:
        return figures.placement_at(pd.DataFrame({"start_time": [], "end_time": []}), [], 0.0)
    at = busiest_instant(result.timeline) if instant is None else float(instant)
    return figures.placement_at(result.jobs, cluster_machines(result), at, label, selected)
