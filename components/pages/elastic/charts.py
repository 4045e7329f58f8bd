"""What the page's charts and tables show of loaded runs (``[(run record, result)]``), built from cached frames."""

from __future__ import annotations

import math

import pandas as pd

from ...figures import catalogue
from ...figures import elastic as figures
from ...figures.common import empty_figure

FRAMES = ("jobs", "timeline", "summary")
#: Rows per page of the job table (pages are cut on the server).
JOB_PAGE_SIZE = 10
#: Choices the job dropdown holds at once; type to search the others.
JOB_OPTIONS = 200


#: The summary table's metrics, in its order (the ratio to YARN after the first four).
SUMMARY = ("jobs", "tasks", "mean_job_runtime_s", "makespan_s", "memory_utilisation", "elastic_tasks",
           "scheduler_cpu_s")


def summary_rows(loaded) -> list[dict]:
    """One row per scheduler; ``avg runtime / YARN`` is the ratio of average job runtimes to YARN's."""
    base = next((res.summary_value("mean_job_runtime_s") for rec, res in loaded if rec["policy"] == "yarn"), None)
    rows = []
    for record, result in loaded:
        value = result.summary_value
        rows.append({
            "scheduler": record["label"], **catalogue.cells(value, SUMMARY[:4], "elastic"),
            "avg runtime / YARN": round(value("mean_job_runtime_s") / base, 3) if base else None,
            **catalogue.cells(value, SUMMARY[4:], "elastic"),
            "source": "cached" if record["cached"] else "simulated",
        })
    return rows


def ratio_text(loaded) -> str:
    """The headline: YARN-ME / YARN average job runtime (paper Fig. 6's y axis)."""
    values = {rec["policy"]: res.summary_value("mean_job_runtime_s") for rec, res in loaded}
    if "yarn" not in values or "yarn-me" not in values:
        return "Run YARN and YARN-ME to get the YARN-ME / YARN ratio."
    return (f"YARN-ME / YARN average job runtime: {values['yarn-me'] / values['yarn']:.3f} "
            f"({values['yarn-me']:,.1f} s vs {values['yarn']:,.1f} s).")


def results_outputs(loaded, chosen: str | None) -> tuple:
    """Summary rows and columns, the ratio headline, runtime scatter and CDF, and the job to show per node."""
    rows = summary_rows(loaded)
    by_policy = {rec["policy"]: (rec["label"], res.jobs) for rec, res in loaded}
    scatter = (figures.runtime_scatter(*by_policy["yarn"], *by_policy["yarn-me"])
               if "yarn" in by_policy and "yarn-me" in by_policy
               else empty_figure("Run YARN and YARN-ME to compare job runtimes.", 360))
    return (rows, [{"name": k, "id": k} for k in (rows[0] if rows else {})], ratio_text(loaded) if loaded else "",
            scatter, figures.runtime_cdf([(rec["label"], res.jobs) for rec, res in loaded]),
            default_job(loaded, chosen))


def over_time_outputs(loaded, window) -> tuple:
    """Memory utilisation and running tasks over time (the window only) and the window's note."""
    runs = [(rec["label"], res.timeline) for rec, res in loaded]
    note = f"window {window[0]:,.0f}–{window[1]:,.0f} s" if window else "whole run"
    return figures.memory_utilisation(runs, window), figures.running_tasks(runs, window), note


def job_frame(loaded) -> pd.DataFrame:
    """Per job: arrival and, per scheduler, its runtime (completion after arrival) and elastic tasks."""
    table = None
    for record, result in loaded:
        jobs = result.jobs.set_index("job_id")
        part = pd.DataFrame({f"{record['label']} runtime (s)": jobs["runtime_s"].round(1)})
        if (jobs["elastic_tasks"] > 0).any():
            part[f"{record['label']} elastic tasks"] = jobs["elastic_tasks"]
        if table is None:
            table = jobs[["submit_time", "tasks"]].rename(columns={"submit_time": "arrival (s)"}).round(1)
        table = table.join(part)
    return table.reset_index().rename(columns={"job_id": "job"})


def job_rows(loaded, sort_by=None, page: int = 0, size: int | None = None) -> list[dict]:
    """Rows of the job table (:func:`job_frame`), ordered by ``sort_by`` (a DataTable's ``sort_by``).

    With ``size``, only page ``page`` (from 0) of ``size`` rows.
    """
    if not loaded:
        return []
    frame = job_frame(loaded)
    for order in reversed(sort_by or []):
        if order.get("column_id") in frame.columns:
            frame = frame.sort_values(order["column_id"], ascending=order.get("direction") != "desc",
                                      kind="stable", na_position="last")
    if size is not None:
        frame = frame.iloc[page * size:(page + 1) * size]
    return frame.to_dict("records")


def job_table(loaded, page, sort_by) -> tuple[list[dict], list[dict], int]:
    """One page of the job table: ``(rows, columns, page count)``; a page past the end shows the last one."""
    count = len(loaded[0][1].jobs) if loaded else 0
    pages = max(1, math.ceil(count / JOB_PAGE_SIZE))
    rows = job_rows(loaded, sort_by, min(max(int(page or 0), 0), pages - 1), JOB_PAGE_SIZE)
    return rows, [{"name": key, "id": key} for key in (rows[0] if rows else {})], pages


def job_ids(loaded) -> list[str]:
    """The run's job ids, in trace order."""
    return list(loaded[0][1].jobs["job_id"]) if loaded else []


def job_options(ids: list[str], search: str | None, chosen: str | None) -> list[str]:
    """Choices of the job dropdown: every job of a small run; else at most :data:`JOB_OPTIONS` matching ``search``.

    The chosen job is always among them (a job picked in the scatter shows
    in the dropdown).
    """
    if len(ids) <= JOB_OPTIONS:
        return list(ids)
    needle = (search or "").strip().lower()
    matches = [job for job in ids if needle in str(job).lower()][:JOB_OPTIONS]
    return matches if chosen is None or chosen in matches else [chosen, *matches[:JOB_OPTIONS - 1]]


def default_job(loaded, current: str | None) -> str | None:
    """Keep the chosen job if the run has it, else the job with the most elastic tasks (first on ties)."""
    if not loaded:
        return None
    jobs = loaded[0][1].jobs
    if current is not None and current in set(jobs["job_id"]):
        return current
    elastic = sum(res.jobs.set_index("job_id")["elastic_tasks"] for _, res in loaded)
    return str(elastic.reindex(jobs["job_id"]).idxmax()) if len(jobs) else None


def export_frame(loaded, frame: str) -> pd.DataFrame:
    """One frame of every scheduler of the run, stacked with a ``scheduler`` column first."""
    parts = []
    for record, result in loaded:
        part = result.frames()[frame]
        parts.append(part.assign(scheduler=record["policy"])[["scheduler", *part.columns]])
    return pd.concat(parts, ignore_index=True)
