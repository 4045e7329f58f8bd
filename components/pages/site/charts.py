"""What the Site study page shows of its runs: the organisation, the stakeholder summary and the linked charts."""

from __future__ import annotations

import pandas as pd
from dash import html

from ...figures import site as figures
from ..batch.sources import parse_trace, trace_choice_ref

SAMPLE_ORGANISATION_ROWS = 40


def organisation_rows(uploads, trace: str | None, weighting: str) -> tuple[list[dict], str]:
    """The organisation derived from the chosen trace (one row per group) and its hardware in words."""
    from sched_engine.site.organisation import organisation_from_jobs

    if not trace:
        return [], "Choose a trace to see its organisation and hardware."
    workload = parse_trace(trace_choice_ref(trace, uploads), uploads)
    tree = organisation_from_jobs(workload.jobs, weighting or "equal")
    total = sum(group["weight"] for group in tree["children"])
    rows = [{"group": group["name"], "users": len(group["children"]), "weight": group["weight"],
             "entitlement": f"{group['weight'] / total:.0%}"} for group in tree["children"]]
    header = workload.header
    procs, nodes = header.get("MaxProcs"), header.get("MaxNodes")
    hardware = (f"{len(workload.jobs):,} jobs. Hardware from the trace header: {nodes or procs} machines, "
                f"{procs} CPUs; memory not given, 2,048 MB per CPU assumed." if procs else
                f"{len(workload.jobs):,} jobs. The trace header gives no CPUs: choose another trace.")
    return rows[:SAMPLE_ORGANISATION_ROWS], hardware


def _site_runs(loaded) -> list[tuple[str, pd.DataFrame, pd.DataFrame]]:
    return [(record["label"], result.jobs, result.timeline) for record, result in loaded]


def _in_window(runs, window):
    if not window:
        return runs
    start, end = window[0] * 3600.0, window[1] * 3600.0
    return [(label, jobs, timeline[(timeline["time"] >= start) & (timeline["time"] <= end)])
            for label, jobs, timeline in runs]


def stakeholder_block(loaded, organisation: list[dict] | None) -> list:
    """The summary on top: one line per policy and group (entitlement: weight over all groups' weights), the verdict."""
    runs = _site_runs(loaded)
    if not runs:
        return [html.P("Run one or more policies to see what each group gets.")]
    total = sum(row["weight"] for row in organisation or [])
    entitlement = {row["group"]: row["weight"] / total for row in organisation or []} if total else {}
    lines, verdict = figures.stakeholder_summary(runs, entitlement)
    return [html.Strong(verdict), html.Ul([html.Li(line) for line in lines])]


def chart_figures(loaded, selected: str | None, window):
    """The five linked charts for the runs, the clicked group highlighted, over the time window."""
    runs = _in_window(_site_runs(loaded), window)
    return (figures.group_metric_figure(runs, "dominant_share", "Dominant share per group (dotted: entitled)",
                                        "share of the site", selected, entitled=True),
            figures.isolation_figure(runs, selected),
            figures.utilisation_figure(runs),
            figures.group_metric_figure(runs, "wait_s", "Median wait per group", "wait (s)", selected),
            figures.group_metric_figure(runs, "killed_jobs", "Killed jobs by group (cumulative)", "jobs", selected))


def clicked_group(click) -> str | None:
    """The group of a clicked line (its customdata), or None."""
    points = (click or {}).get("points") or []
    return points[0].get("customdata") if points else None
