"""What the Site study page shows of its runs: the stakeholder summary, the linked charts, the two sites compared.

Runs come as ``[(run record, result)]`` (:func:`components.services.runs.loaded_runs`);
a record's ``site`` says whether it ran on the page's site (``A``) or the
second one (``B``). The linked charts and the summary show site A's runs;
the comparison pairs each policy's run on A with its run on B.
"""

from __future__ import annotations

import pandas as pd
from dash import html

from ...figures import site as figures
from ...figures import site_compare, trust
from ...figures.common import empty_figure
from ...figures.site_groups import capped, group_names
from ..batch.sources import parse_trace, trace_choice_ref
from .organisation import simulated_jobs


def _site_runs(loaded, site: str = "A") -> list[tuple[str, pd.DataFrame, pd.DataFrame]]:
    return [(record["label"], result.jobs, result.timeline) for record, result in loaded
            if record.get("site", "A") == site]


def entitlement(loaded) -> dict[str, float]:
    """Each first-level group's weight over all groups' weights, from the organisation site A's runs used.

    The page always runs with the tree on screen, so the runs' scenario
    holds it; a run without one (derived by the engine) counts every group
    in its jobs equally.
    """
    for record, result in loaded:
        if record.get("site", "A") != "A":
            continue
        tree = result.scenario.get("model", {}).get("organisation", {}).get("tree")
        if tree:
            total = sum(child["weight"] for child in tree["children"])
            return {child["name"]: child["weight"] / total for child in tree["children"]}
        groups = sorted(group_names(result.jobs))
        return {group: 1 / len(groups) for group in groups}
    return {}


def stakeholder_block(loaded) -> list:
    """The summary on top: the verdict, then one line per policy and group (at most the heaviest groups + other)."""
    runs = _site_runs(loaded)
    if not runs:
        return [html.P("Run one or more policies to see what each group gets.")]
    lines, verdict = figures.stakeholder_summary(runs, entitlement(loaded))
    return [html.P(inputs_line(loaded[0][0]), className="hint"), html.Strong(verdict),
            html.Ul([html.Li(line) for line in lines])]


def inputs_line(record: dict) -> str:
    """What the results shown came from: the trace and its cut as they were when Run was pressed."""
    if not record.get("trace"):
        return "Results of an earlier run (its trace is not recorded)."
    cut = f"its first {record['max_jobs']:,} jobs" if record.get("max_jobs") else "the whole trace"
    return f"Results of {record['trace']}, {cut}."


def chart_figures(loaded, selected: str | None, window):
    """The five linked charts of site A's runs, the clicked group highlighted, over the time window (seconds)."""
    runs, note = capped(_site_runs(loaded))
    return (figures.group_metric_figure(runs, "dominant_share", "Dominant share per group (dotted: entitled)",
                                        "share of the site", selected, entitled=True, window=window, note=note),
            figures.isolation_figure(runs, selected, window=window, note=note),
            figures.utilisation_figure(runs, window=window),
            figures.group_metric_figure(runs, "wait_s", "Median wait per group", "wait (s)", selected,
                                        window=window, note=note),
            figures.group_metric_figure(runs, "killed_jobs", "Killed jobs by group (cumulative)", "jobs", selected,
                                        window=window, note=note,
                                        none="No job was killed in these runs: failures are off, or none hit a job"))


def why_waited_figures(loaded, label: str | None = None, window=None):
    """Why jobs waited in one of site A's runs (the policy ``label``, else the first): the batch page's two charts,
    the share of waiting time per reason over time and per group (the organisation's first level), from the run's
    ``pending`` frame (:mod:`sched_engine.site.reasons`)."""
    runs = [(record, result) for record, result in loaded if record.get("site", "A") == "A"]
    chosen = next((run for run in runs if run[0]["label"] == label), runs[0] if runs else None)
    if chosen is None:
        message = "run a policy to see why jobs waited"
        return empty_figure(message, 320), empty_figure(message, 320)
    record, result = chosen
    pending = result.extra("pending")
    if pending is None:
        message = f"{record['label']}: this run was stored without its reasons; run it again to see them"
        return empty_figure(message, 320), empty_figure(message, 320)
    over_time = trust.why_waited(pending, window)
    if over_time.data:
        over_time.update_layout(title=f"Why jobs waited, {record['label']}: share of the waiting time per reason")
    return over_time, trust.why_waited_by_group(pending, result.jobs, window)


def clicked_group(click) -> str | None:
    """The group of a clicked line (its customdata), or None."""
    points = (click or {}).get("points") or []
    return points[0].get("customdata") if points else None


def workload_profile(uploads, trace: str | None, max_jobs) -> dict:
    """The binned characteristics of the jobs a run of ``trace`` simulates (:func:`site_compare.profile`)."""
    jobs, label = simulated_jobs(uploads, trace, max_jobs)
    header = parse_trace(trace_choice_ref(trace, uploads), uploads).header
    return site_compare.profile(jobs, header, label)


def comparison(uploads, trace, second, max_jobs, loaded) -> tuple:
    """The comparison section: the profiles' figure, the characteristics table and the results table (rows, columns)."""
    if not second:
        return site_compare.profile_figure(None, None), [], [], [], []
    a = workload_profile(uploads, trace, max_jobs)
    b = workload_profile(uploads, second, max_jobs)
    if a["label"] == b["label"]:
        b = {**b, "label": f"{b['label']} (B)"}
    rows = site_compare.profile_rows(a, b)
    by_policy = {}
    for record, result in loaded:
        by_policy.setdefault(record["label"], {})[record.get("site", "A")] = result
    pairs = [(label, sites["A"].summary_value, sites["B"].summary_value)
             for label, sites in by_policy.items() if {"A", "B"} <= set(sites)]
    results = site_compare.result_rows(pairs)
    return (site_compare.profile_figure(a, b), rows, _columns(rows), results, _columns(results))


def _columns(rows: list[dict]) -> list[dict]:
    return [{"name": key, "id": key} for key in (rows[0] if rows else {})]

