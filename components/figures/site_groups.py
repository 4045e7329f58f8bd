"""Many groups, few lines: the heaviest groups of a site's runs drawn by name, the rest as one "other" group.

A site such as RICC has over a hundred groups; a line per group and policy
would neither read nor fit the 3 MB budget of a callback response. The
charts and the stakeholder summary therefore show the :data:`GROUP_LIMIT`
groups that held the most CPU time over all runs on the page, and merge
the others into ``other (k groups)`` and say so in the title. Merging is
per metric, on the union of the merged groups' sample times (a series
holds its value until its next sample, 0 before its first):

* ``dominant_share``, ``entitled_share``, ``waiting_jobs``, ``killed_jobs``
  -- summed (shares of one site add up);
* ``isolation_guarantee`` -- the minimum over the merged groups (the worst
  protected of them), as the engine's ``minimum`` entity is over all;
* ``wait_s`` -- the median wait of the merged groups' jobs that started in
  each sample interval, from the ``jobs`` frame (medians do not merge).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

#: Groups drawn by name; the others are merged.
GROUP_LIMIT = 8
SUMMED = ("dominant_share", "entitled_share", "waiting_jobs", "killed_jobs")
#: The engine samples its timeline every ``span / SAMPLES`` seconds (``sched_engine.site``).
SAMPLES = 2000


def other_label(count: int) -> str:
    return f"other ({count} groups)"


def reading_order(group: str) -> tuple:
    """Sort key of group names as a person reads them: numbers by value ("group 2" before "group 16"), the merged
    ``other (k groups)`` last. Split on digit runs, even places are text and odd places numbers, so two keys
    compare text with text and numbers with numbers."""
    parts = re.split(r"(\d+)", group)
    return (group.startswith("other ("), [int(part) if index % 2 else part for index, part in enumerate(parts)])


def group_names(jobs: pd.DataFrame) -> set[str]:
    """The names of the groups in a run's ``jobs``: each distinct value once, as text (a full log's 447,794 jobs
    read one by one took about half a second; their distinct values are a hundred)."""
    return {str(group) for group in jobs["group"].dropna().unique().tolist()}


def held_cpu_time(jobs: pd.DataFrame) -> pd.Series:
    """CPU-seconds each group's jobs held (finished or killed), by group name."""
    ran = jobs[jobs["status"].isin(["finished", "killed"])]
    held = ran["procs"].astype(float) * (ran["end_time"] - ran["start_time"])
    return held.groupby(ran["group"].astype(str)).sum()


def top_groups(runs, limit: int = GROUP_LIMIT) -> tuple[list[str], list[str]]:
    """``(shown, merged)``: the ``limit`` groups holding the most CPU time over all runs (ties by name), the rest."""
    total: pd.Series = pd.Series(dtype=float)
    names: set[str] = set()
    for _, jobs, _ in runs:
        total = total.add(held_cpu_time(jobs), fill_value=0.0)
        names |= group_names(jobs)
    ranked = sorted(names, key=lambda group: (-float(total.get(group, 0.0)), group))
    if len(ranked) <= limit + 1:   # merging one group into "other" would only rename it
        return sorted(ranked, key=reading_order), []
    return sorted(ranked[:limit], key=reading_order), sorted(ranked[limit:], key=reading_order)


def _merged_series(rows: pd.DataFrame, how: str) -> tuple[np.ndarray, np.ndarray]:
    """One step series from several entities' step series: their sum or minimum at every sample time."""
    rows = rows.drop_duplicates(["time", "entity"], keep="last")
    wide = rows.pivot(index="time", columns="entity", values="value").sort_index().ffill()
    if how == "sum":
        return wide.index.to_numpy(float), wide.fillna(0.0).sum(axis=1).to_numpy(float)
    return wide.index.to_numpy(float), wide.min(axis=1, skipna=True).to_numpy(float)


def _merged_waits(jobs: pd.DataFrame, merged: set[str], step: float) -> tuple[np.ndarray, np.ndarray]:
    started = jobs[jobs["start_time"].notna() & jobs["group"].astype(str).isin(merged)]
    if started.empty:
        return np.zeros(0), np.zeros(0)
    bins = np.floor(started["start_time"].to_numpy(float) / step) * step
    medians = started["wait_time"].groupby(bins).median()
    return medians.index.to_numpy(float), medians.to_numpy(float)


def capped_run(jobs: pd.DataFrame, timeline: pd.DataFrame, merged: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A run's ``jobs`` and ``timeline`` with the ``merged`` groups as one group ``other (k groups)``."""
    if not merged:
        return jobs, timeline
    names, label = set(merged), other_label(len(merged))
    jobs = jobs.assign(group=jobs["group"].astype(str).where(~jobs["group"].astype(str).isin(names), label))
    inside = timeline["entity"].isin(names)
    parts = [timeline[~inside]]
    step = max(float(timeline["time"].max()) / SAMPLES, 1.0) if len(timeline) else 1.0
    for metric, rows in timeline[inside].groupby("metric", sort=False):
        if metric == "wait_s":
            times, values = _merged_waits(jobs, {label}, step)
        else:
            times, values = _merged_series(rows, "sum" if metric in SUMMED else "min")
        parts.append(pd.DataFrame({"time": times, "entity": label, "metric": metric, "value": values}))
    return jobs, pd.concat(parts, ignore_index=True)


def capped(runs, limit: int = GROUP_LIMIT) -> tuple[list, str]:
    """Runs ``(label, jobs, timeline)`` with at most ``limit`` groups by name plus "other", and the note saying so."""
    shown, merged = top_groups(runs, limit)
    if not merged:
        return list(runs), ""
    note = (f"the {len(shown)} groups holding the most CPU time of {len(shown) + len(merged)}; "
            f"the other {len(merged)} as one")
    return [(label, *capped_run(jobs, timeline, merged)) for label, jobs, timeline in runs], note
