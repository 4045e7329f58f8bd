"""The metric catalogue: every summary and timeline metric's readable name, unit, direction and definition.

One place for what a metric is called on screen. Summary tables, axis
titles, tooltips, headline sentences, Compare's colours and the Gallery read
it; ``sched_engine/core/records.py`` (``docs/results.md``) stays the source of
the metric *names*, and ``tests/test_demo_catalogue.py`` fails on any name
there that has no entry here.

A metric's ``kind`` says how its numbers read:

* ``seconds``: a duration, "3,489 s" (to the second from 100 s, one decimal
  below, three significant digits under a second);
* ``count``: a whole number, "2,000";
* ``percent``: a share of capacity shown as a percentage, "63.5%";
* ``share``: a share kept on its 0-1 scale (isolation guarantees), "0.63";
* ``ratio``: a dimensionless ratio, "1.84";
* ``rate``: per second, "12,400/s".
"""

from __future__ import annotations

import math
from typing import NamedTuple

from sched_engine import ScenarioError
from sched_engine.core.records import SUMMARY_METRICS, TIMELINE_METRICS
from sched_engine.registry import REGISTRY

LOWER = "lower is better"
HIGHER = "higher is better"


class Metric(NamedTuple):
    """What a metric is, for a reader: its name, unit, kind of number, direction and definition."""

    label: str
    unit: str
    kind: str
    direction: str | None     #: :data:`LOWER`, :data:`HIGHER` or ``None`` (a fact of the run, neither)
    definition: str


def _m(label, unit, kind, direction, definition) -> Metric:
    return Metric(label, unit, kind, direction, definition)


#: Metrics that read the same in every engine.
COMMON: dict[str, Metric] = {
    "makespan_s": _m("Makespan", "s", "seconds", LOWER,
                     "time from the first submission to the last job's end, max(end) - min(submit)"),
    "scheduler_cpu_s": _m("Scheduler CPU time", "s", "seconds", LOWER,
                          "CPU time spent inside the policy (process time); measures the computer, not the cluster"),
    "mean_wait_s": _m("Mean wait", "s", "seconds", LOWER, "mean of start - submit over the jobs that started"),
    "jobs": _m("Jobs", "jobs", "count", None, "jobs in the workload"),
    "tasks": _m("Tasks", "tasks", "count", None, "tasks run"),
    "finished": _m("Finished", "jobs", "count", HIGHER, "jobs that ran to their end"),
    "elastic_tasks": _m("Under-sized tasks", "tasks", "count", None,
                        "tasks started with less memory than their ideal (YARN-ME, §3)"),
    "utilisation": _m("Utilisation", "%", "percent", HIGHER, "share of capacity in use, time-weighted"),
    "memory_utilisation": _m("Memory utilisation", "%", "percent", HIGHER,
                             "time-weighted mean share of all memory held by running tasks"),
}

#: Each engine's own metrics, and where a common name means something narrower there.
ENGINES: dict[str, dict[str, Metric]] = {
    "fairshare": {
        "decisions": _m("Scheduling decisions", "tasks", "count", None, "tasks handed out by the policy"),
        "decisions_per_second": _m("Decisions per second", "1/s", "rate", HIGHER,
                                   "decisions / scheduler CPU time: how fast the policy allocates (MCH §5)"),
        "weight_recomputations": _m("Weight recomputations", "count", "count", LOWER,
                                    "times the policy recomputed its flattened weights (collapsed hierarchies)"),
        "tasks_completed": _m("Tasks completed", "tasks", "count", HIGHER, "tasks that ran to their end"),
        "tasks_killed": _m("Tasks killed", "tasks", "count", LOWER, "tasks killed when their job departed"),
        "utilisation_<resource>": _m("{resource} utilisation", "%", "percent", HIGHER,
                                     "time-weighted mean share of the resource in use over [0, makespan]"),
        "makespan_s": _m("Makespan", "s", "seconds", None, "time of the last event (or the horizon)"),
        "dominant_share": _m("Dominant share", "", "share", None,
                             "max over resources of used / capacity (DRF §4; a department: its subtree's)"),
        "running_tasks": _m("Running tasks", "tasks", "count", None, "a leaf's running tasks"),
        "flat_weight": _m("Flattened weight", "", "ratio", None,
                          "an active leaf's weight after collapsing the hierarchy"),
    },
    "batch": {
        "clusters": _m("Clusters", "clusters", "count", None, "clusters of the hardware"),
        "cpus": _m("CPUs", "CPUs", "count", None, "CPUs of all machines, up or down"),
        "killed": _m("Killed jobs", "jobs", "count", LOWER, "jobs killed by machine failures or preempted"),
        "preempted": _m("Preempted jobs", "jobs", "count", LOWER,
                        "best-effort jobs killed to free CPUs for a job of another queue"),
        "cancelled": _m("Cancelled jobs", "jobs", "count", LOWER,
                        "jobs dropped before starting: no suitable cluster or no possible reservation"),
        "mean_response_s": _m("Mean response time", "s", "seconds", LOWER, "mean of end - submit, finished jobs"),
        "mean_slowdown": _m("Mean slowdown", "×", "ratio", LOWER,
                            "mean of (wait + run) / run over the finished jobs"),
        "mean_bounded_slowdown_tau10": _m(
            "Mean bounded slowdown", "×", "ratio", LOWER,
            "mean of max(1, (wait + run) / max(run, 10 s)), finished jobs (Feitelson's bounded slowdown, τ = 10 s)"),
        "mean_wait_s": _m("Mean wait", "s", "seconds", LOWER, "mean of start - submit over the finished jobs"),
        "makespan_s": _m("Makespan", "s", "seconds", LOWER,
                         "last end of a job that ran (finished or killed), from the first submission"),
        "utilisation": _m("CPU utilisation", "%", "percent", HIGHER,
                          "CPU time of the jobs that ran / (all CPUs × makespan)"),
        "scheduler_cpu_s_per_day": _m("Scheduler CPU per simulated day", "s/day", "seconds", LOWER,
                                      "scheduler CPU time / simulated days of makespan"),
        "failures": _m("Machine failures", "failures", "count", None, "machine failures during the run"),
        "dropped_jobs": _m("Dropped trace jobs", "jobs", "count", None, "trace jobs with no run time or processors"),
        "skipped_lines": _m("Skipped trace lines", "lines", "count", None, "unreadable trace lines skipped"),
        "delayed_starts": _m("Starts later than recorded", "jobs", "count", None,
                             "'As recorded' only: jobs this hardware could not start at their recorded start"),
        "jobs_with_ignored_properties": _m("Jobs with ignored requirements", "jobs", "count", None,
                                           "jobs requiring properties no cluster declares"),
        "used_cpus": _m("CPUs in use", "CPUs", "count", None, "CPUs held by running jobs"),
        "up_cpus": _m("CPUs up", "CPUs", "count", None, "CPUs of the machines that are up"),
        "queue_length": _m("Queue length", "jobs", "count", LOWER, "jobs waiting to start"),
        "killed_jobs": _m("Jobs killed so far", "jobs", "count", LOWER, "jobs killed by failures up to this time"),
        "machine_down": _m("Machine down", "", "count", None, "1 while a machine is down"),
    },
    "network": {
        "applications": _m("Applications", "apps", "count", None, "applications in the run"),
        "finished": _m("Finished applications", "apps", "count", HIGHER, "applications that finished"),
        "waiting": _m("Never placed", "apps", "count", LOWER, "applications never placed"),
        "mean_isolation": _m("Mean isolation", "", "share", HIGHER,
                             "mean over placed applications of their time-averaged isolation guarantee (Libra Eq. 1)"),
        "min_isolation": _m("Worst-off isolation", "", "share", HIGHER,
                            "the lowest isolation guarantee any application saw (Libra Eq. 1)"),
        "mean_duration_s": _m("Mean duration", "s", "seconds", LOWER, "mean of end - start, finished applications"),
        "mean_wait_s": _m("Mean wait", "s", "seconds", LOWER, "mean of start - submit, placed applications"),
        "link_utilisation": _m("Link utilisation", "%", "percent", HIGHER,
                               "data carried / (capacity × busy time), over links that carried traffic"),
        "makespan_s": _m("Makespan", "s", "seconds", LOWER, "time of the last event (or the horizon)"),
        "isolation": _m("Isolation guarantee", "", "share", HIGHER, "an application's isolation (Libra Eq. 1)"),
        "utilisation": _m("Link utilisation", "%", "percent", HIGHER, "a link's bandwidth in use"),
        "running_apps": _m("Running applications", "apps", "count", None, "placed applications"),
        "waiting_apps": _m("Waiting applications", "apps", "count", LOWER, "applications waiting for room"),
        "bottleneck": _m("Bottleneck load", "", "share", LOWER, "the most loaded link's demand-based load"),
    },
    "elastic": {
        "jobs": _m("Jobs", "jobs", "count", None, "jobs in the trace"),
        "mean_job_runtime_s": _m("Mean job runtime", "s", "seconds", LOWER,
                                 "mean of end - submit over the finished jobs (YARN-ME Fig. 6's y axis)"),
        "makespan_s": _m("Makespan", "s", "seconds", LOWER, "last end of any job from the first submission"),
        "mean_map_phase_s": _m("Mean map phase", "s", "seconds", LOWER,
                               "first map request to the last map task's end, mean over jobs with maps"),
        "mean_reduce_phase_s": _m("Mean reduce phase", "s", "seconds", LOWER,
                                  "first reduce request to the last reduce task's end, mean over jobs with reduces"),
        "elastic_share": _m("Under-sized share", "%", "percent", None, "under-sized tasks / tasks"),
        "estimates": _m("Timeline estimates", "runs", "count", None, "runs of the timeline generator"),
        "scheduler_cpu_s": _m("Simulation CPU time", "s", "seconds", LOWER, "CPU time of the whole simulation"),
        "memory_used_mb": _m("Memory in use", "MB", "count", None, "memory held by running tasks"),
        "regular_tasks": _m("Regular tasks", "tasks", "count", None, "tasks running with their ideal memory"),
        "job_memory_mb": _m("Job memory", "MB", "count", None, "memory a job holds on a node"),
    },
    "site": {
        "groups": _m("Groups", "groups", "count", None, "first-level nodes of the organisation"),
        "users": _m("Users", "users", "count", None, "leaves of the organisation (one per user of the log)"),
        "memory_mb": _m("Memory", "MB", "count", None, "memory of all machines"),
        "memory_assumed": _m("Clusters with assumed memory", "clusters", "count", None,
                             "clusters whose memory the machines file did not give (a default per CPU was used)"),
        "elastic_starts": _m("Memory-elastic starts", "jobs", "count", None,
                             "jobs started with less memory than they asked, running longer by the penalty model"),
        "jobs_without_memory": _m("Jobs without memory", "jobs", "count", None,
                                  "jobs whose log records no memory (they asked the model's default)"),
        "other_users_jobs": _m("Jobs of unlisted users", "jobs", "count", None,
                               "jobs of users the organisation does not name (its 'other users' leaf)"),
        "mean_min_isolation": _m("Mean minimum isolation", "", "share", HIGHER,
                                 "time-weighted mean over the run of min over groups of received / entitled share "
                                 "(capped at 1; HUG / Libra's isolation guarantee applied to groups)"),
        "dominant_share": _m("Dominant share", "", "share", None,
                             "a group's max over CPUs and memory of used / capacity (DRF)"),
        "entitled_share": _m("Entitled share", "", "share", None,
                             "a group's weight over the weights of the groups with jobs running or waiting"),
        "isolation_guarantee": _m("Isolation guarantee", "", "share", HIGHER,
                                  "received / entitled share while the group has jobs waiting, capped at 1"),
        "waiting_jobs": _m("Waiting jobs", "jobs", "count", LOWER, "a group's jobs waiting to start"),
        "wait_s": _m("Median wait", "s", "seconds", LOWER,
                     "median wait of a group's jobs that started in a sample interval"),
    },
}

RESOURCE_PREFIX = "utilisation_"


def entry(metric: str, engine: str | None = None) -> Metric | None:
    """The catalogue entry of ``metric`` (in ``engine``, when it means something narrower there), or ``None``."""
    own = ENGINES.get(engine or "", {})
    if metric in own:
        return own[metric]
    if metric.startswith(RESOURCE_PREFIX) and engine == "fairshare":
        pattern = own[RESOURCE_PREFIX + "<resource>"]
        resource = metric[len(RESOURCE_PREFIX):]
        return pattern._replace(label=pattern.label.format(resource=resource.upper() if len(resource) <= 3
                                                           else resource.capitalize()))
    if metric in COMMON:
        return COMMON[metric]
    for table in ENGINES.values():   # an engine not named: the first engine that knows the name
        if metric in table:
            return table[metric]
    return None


def describe(metric: str, engine: str | None = None) -> Metric:
    """:func:`entry`, or for a name the catalogue lacks a readable stand-in (never a raw snake_case name)."""
    found = entry(metric, engine)
    if found is not None:
        return found
    return Metric(metric.replace("_", " ").capitalize(), "", "ratio", None, "")


def label(metric: str, engine: str | None = None) -> str:
    return describe(metric, engine).label


def column(metric: str, engine: str | None = None) -> str:
    """A table header or axis title: the label with its unit, e.g. ``Mean wait (s)``; counts stand alone."""
    found = describe(metric, engine)
    return found.label if found.kind == "count" or not found.unit else f"{found.label} ({found.unit})"


def axis_title(metric: str, engine: str | None = None) -> str:
    """An axis over raw values: like :func:`column`, but a percent metric's values stay shares (0-1) on a chart."""
    found = describe(metric, engine)
    return f"{found.label} (share, 0–1)" if found.kind == "percent" else column(metric, engine)


def tooltip(metric: str, engine: str | None = None) -> str:
    """The definition and the direction, for a header's tooltip: ``mean of … ; lower is better``."""
    found = describe(metric, engine)
    return "; ".join(part for part in (found.definition, found.direction) if part)


def rounded(metric: str, value, engine: str | None = None):
    """``value`` as a table shows it, still a number: percent shares ×100, sensible decimals by kind."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    kind = describe(metric, engine).kind
    value = float(value)
    if kind == "percent":
        return round(100 * value, 1)
    if kind == "count":
        return int(round(value)) if float(value).is_integer() or abs(value) >= 100 else round(value, 2)
    if kind == "seconds":
        return round(value) if abs(value) >= 100 else (round(value, 1) if abs(value) >= 1 else _significant(value, 3))
    if kind == "rate":
        return round(value) if abs(value) >= 100 else _significant(value, 3)
    return round(value, 2) if abs(value) >= 1 else _significant(value, 3)


def _significant(value: float, digits: int) -> float:
    return 0.0 if value == 0 else round(value, digits - 1 - int(math.floor(math.log10(abs(value)))))


def formatted(metric: str, value, engine: str | None = None) -> str:
    """``value`` as a sentence says it, with its unit: ``3,489 s``, ``63.5%``, ``0.63``, ``2,000 jobs``."""
    number = rounded(metric, value, engine)
    if number is None:
        return "n/a"
    found = describe(metric, engine)
    if found.kind == "percent":
        return f"{number:.1f}%"
    if found.kind == "count":
        text = f"{number:,}" if isinstance(number, int) else f"{number:,.2f}"
        unit = found.unit[:-1] if number == 1 and found.unit.endswith("s") else found.unit
        return f"{text} {unit}".strip() if found.unit not in ("count", "") else text
    if found.kind == "seconds":
        text = f"{number:,.0f}" if abs(number) >= 100 else f"{number:g}"
        return f"{text} {found.unit}"
    if found.kind == "rate":
        return f"{number:,.0f}/s" if abs(number) >= 100 else f"{number:g}/s"
    if found.kind == "share":   # half up, as people round: 0.625 reads 0.63
        return f"{math.floor(number * 100 + 0.5) / 100:.2f}"
    return f"{number:,.2f}{found.unit if found.unit == '×' else ''}"


def better(metric: str, before: float, after: float, engine: str | None = None) -> bool | None:
    """Whether going from ``before`` to ``after`` is an improvement (``None``: no direction, or no change)."""
    direction = describe(metric, engine).direction
    if direction is None or before == after or any(math.isnan(float(v)) for v in (before, after)):
        return None
    return (after < before) if direction == LOWER else (after > before)


def cells(value, metrics, engine: str) -> dict:
    """Table cells for ``metrics`` of one run: ``{column header: rounded value}``; ``value(name)`` reads one."""
    return {column(metric, engine): rounded(metric, value(metric), engine) for metric in metrics}


def header_tooltips(metrics, engine: str) -> dict:
    """A DataTable's ``tooltip_header``: each metric column's definition and direction."""
    return {column(metric, engine): tooltip(metric, engine) for metric in metrics}


#: Resources a fair-sharing model usually names; their ``utilisation_<resource>`` metrics get tooltips.
COMMON_RESOURCES = ("cpu", "cpus", "mem", "memory", "gpu", "disk", "net")


def metrics_of(engine: str) -> list[str]:
    """Every metric name of ``engine``: its summary metrics (``records.py``) first, then the rest it may show."""
    declared = [*SUMMARY_METRICS.get(engine, {}), *TIMELINE_METRICS.get(engine, {}), *ENGINES.get(engine, {}), *COMMON]
    names = []
    for metric in declared:
        names += ([RESOURCE_PREFIX + resource for resource in COMMON_RESOURCES] if metric.endswith("<resource>")
                  else [metric])
    return list(dict.fromkeys(names))


def engine_header_tooltips(engine: str) -> dict:
    """:func:`header_tooltips` for every metric of ``engine`` (a summary table whose columns vary by run).

    Where a summary metric and a timeline metric share a header (network's link utilisation), the one listed
    first in the engine's table -- its summary metric -- gives the tooltip.
    """
    tips: dict[str, str] = {}
    for metric in metrics_of(engine):
        tips.setdefault(column(metric, engine), tooltip(metric, engine))
    return tips


def axis_tooltips(engine: str | None = None) -> dict:
    """Chart axis title (lower case, with or without its unit) -> ``Label: definition; direction``.

    For ``engine``'s metrics, or every engine's (the first that defines a
    name wins) when ``engine`` is None. ``assets/axis_tooltips.js`` shows them
    on hovering an axis title that names a metric.
    """
    engines = [engine] if engine else list(ENGINES)
    tips: dict[str, str] = {}
    for name in engines:
        for metric in metrics_of(name):
            found = describe(metric, name)
            text = f"{found.label}: {tooltip(metric, name)}"
            for title in (found.label, column(metric, name), axis_title(metric, name)):
                tips.setdefault(title.lower(), text)
    return tips


def policy_label(engine: str, policy: str) -> str:
    """The policy's name as the registry spells it (``EASY``, ``H-DRF``), else its identifier."""
    try:
        return REGISTRY.policy(engine, policy).label
    except ScenarioError:   # a policy of an older build, or of an engine this build lacks
        return str(policy)


def engine_label(engine: str) -> str:
    try:
        return REGISTRY.engine(engine).label
    except ScenarioError:
        return str(engine)


def run_label(engine: str, policy: str, workload: str | None = None, jobs=None, cpus=None) -> str:
    """``EASY · HPC2N 2,000 jobs · 240 CPUs``: policy, workload and its size, hardware, as far as known."""
    parts = [policy_label(engine, policy)]
    size = f"{int(jobs):,} jobs" if jobs is not None and not (isinstance(jobs, float) and math.isnan(jobs)) else ""
    described = " ".join(part for part in (workload or "", size) if part)
    if described:
        parts.append(described)
    if cpus is not None and not (isinstance(cpus, float) and math.isnan(cpus)):
        parts.append(f"{int(cpus):,} CPUs")
    return " · ".join(parts)
