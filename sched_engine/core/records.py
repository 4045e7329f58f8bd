"""What the result frames hold: columns and dtypes, one status vocabulary, metric names with units.

Every engine's ``jobs``, ``timeline`` and ``summary`` frames (:mod:`.result`)
use only the names declared here; ``docs/results.md`` documents them field
by field and ``tests/test_records.py`` holds every engine to them.

Names read the same in every engine: a status word means one thing, a
summary metric ends in its unit when it has one (``_s`` seconds, ``_mb``
megabytes), means are ``mean_*``, shares of capacity ``*utilisation*``,
the scheduler's time is CPU time (``scheduler_cpu_s``, see
:mod:`.loop`).

:data:`LEGACY_NAMES` maps the names results carried before this vocabulary
to the new ones, in one place; ``tests/golden/rename_legacy.py`` applied it
to the golden files once.
"""

from __future__ import annotations

from typing import NamedTuple

import pandas as pd


class Field(NamedTuple):
    """One column of a frame, or one metric: its dtype or unit, and what it means."""

    kind: str
    meaning: str


STATUSES: dict[str, str] = {
    "finished": "ran to its end: every task completed",
    "killed": "stopped while running by a machine failure, or preempted for a job of another queue (a batch "
              "best-effort queue); not resubmitted (batch)",
    "cancelled": "dropped before it started: no suitable cluster, or no reservation possible on the machines "
                 "that are up (batch)",
    "departed": "left at its departure time: pending tasks dropped, running ones killed (fair sharing)",
    "running": "started, not finished when the run stopped at its horizon",
    "waiting": "never started by the time the run stopped",
}
"""The one status vocabulary: every job ends a run with one of these words."""

JOBS_COMMON: dict[str, Field] = {
    "job_id": Field("string", "stable identifier from the input"),
    "submit_time": Field("float64", "arrival into the system, s"),
    "start_time": Field("float64", "first task or process started, s (NaN: never)"),
    "end_time": Field("float64", "last task ended, the job was killed, cancelled or left, s (NaN: never)"),
    "status": Field("string", "one word of STATUSES"),
}

JOBS_COLUMNS: dict[str, dict[str, Field]] = {
    "fairshare": {
        "path": Field("string", "the leaf's path from the root, /-separated"),
        "parent": Field("string", "the department it belongs to"),
        "weight": Field("float64", "its own weight among its siblings"),
        "demand": Field("string", "per-task demand, e.g. cpu=2, mem=4"),
        "tasks": Field("int64", "tasks it brings"),
        "tasks_completed": Field("int64", "tasks that ran to their end"),
        "tasks_killed": Field("int64", "tasks running when the job departed"),
        "tasks_not_run": Field("int64", "tasks never started"),
    },
    "batch": {
        "cluster": Field("string", "cluster it ran on (empty: never started)"),
        "procs": Field("int64", "CPUs it holds"),
        "run_time": Field("float64", "its run time in the trace, s"),
        "estimate": Field("float64", "the run time the scheduler plans with, s"),
        "wait_time": Field("float64", "start_time - submit_time, s"),
        "user": Field("str", "user from the trace"),
        "reason": Field("string", "why it was killed or cancelled (empty otherwise)"),
        "machines": Field("string", "indices of the cluster's machines it held, comma-separated"),
        "recorded_wait": Field("float64", "the wait the log itself records (SWF/GWF field 3, a CSV recorded_wait "
                                          "column), s; NaN where unknown"),
        "queue": Field("str", "queue (or partition) the log names, empty where unknown"),
        "group": Field("str", "group the log names, empty where unknown"),
    },
    "network": {
        "wait_time": Field("float64", "start_time - submit_time, s"),
        "duration": Field("float64", "end_time - start_time, s"),
        "width": Field("int64", "containers"),
        "pattern": Field("string", "communication pattern of its flows"),
        "weight": Field("float64", "weight in the bandwidth allocation"),
        "mean_isolation": Field("float64", "time-averaged isolation guarantee (Libra Eq. 1), share"),
        "min_isolation": Field("float64", "lowest isolation guarantee it saw, share"),
        "placement": Field("string", "machines of its containers"),
    },
    "elastic": {
        "runtime_s": Field("float64", "end_time - submit_time, s"),
        "tasks": Field("int64", "tasks of all its phases"),
        "elastic_tasks": Field("int64", "tasks run under-sized"),
        "map_phase_s": Field("float64", "first request of a map task to the end of the last one, s"),
        "reduce_phase_s": Field("float64", "first request of a reduce task to the end of the last one, s"),
    },
    "site": {
        "cluster": Field("string", "cluster it ran on (empty: never started)"),
        "procs": Field("int64", "CPUs it holds"),
        "run_time": Field("float64", "the run time it had, s: the trace's, times elastic_penalty"),
        "estimate": Field("float64", "the run time the scheduler plans with, s"),
        "wait_time": Field("float64", "start_time - submit_time, s"),
        "user": Field("str", "user from the trace"),
        "group": Field("string", "the organisation's first-level node it belongs to"),
        "leaf": Field("string", "its user's leaf, the path from the root, /-separated"),
        "memory_mb": Field("float64", "memory it held on all its machines, MB"),
        "memory_fraction": Field("float64", "share of its asked memory it got (below 1: a memory-elastic start)"),
        "elastic_penalty": Field("float64", "its run time over the trace's (1 unless started memory-elastic)"),
        "reason": Field("string", "why it was killed or cancelled (empty otherwise)"),
    },
}
"""Each engine's columns beyond :data:`JOBS_COMMON`."""

TIMELINE_METRICS: dict[str, dict[str, Field]] = {
    "fairshare": {
        "dominant_share": Field("share", "a node's dominant share max_j U_j / c_j (departments: their subtree's)"),
        "running_tasks": Field("tasks", "a leaf's running tasks"),
        "utilisation": Field("share", "a resource's share in use (entity: the resource)"),
        "flat_weight": Field("weight", "an active leaf's flattened weight, when the policy recomputes it"),
    },
    "batch": {
        "used_cpus": Field("CPUs", "CPUs held by running jobs (entity: the cluster)"),
        "up_cpus": Field("CPUs", "CPUs of the machines that are up (entity: the cluster)"),
        "queue_length": Field("jobs", "waiting jobs (entity: queue)"),
        "killed_jobs": Field("jobs", "jobs killed so far (entity: all)"),
        "machine_down": Field("flag", "1 while a machine is down, 0 once it is up (entity: cluster/machine)"),
    },
    "network": {
        "isolation": Field("share", "an application's isolation guarantee (Libra Eq. 1)"),
        "utilisation": Field("share", "a link's bandwidth in use (entity: the link)"),
        "running_apps": Field("apps", "placed applications (entity: cluster)"),
        "waiting_apps": Field("apps", "applications waiting for room (entity: cluster)"),
        "bottleneck": Field("share", "the most loaded link's demand-based load (entity: cluster)"),
    },
    "elastic": {
        "memory_used_mb": Field("MB", "memory held by running tasks (entity: cluster)"),
        "memory_utilisation": Field("share", "memory_used_mb over all memory (entity: cluster)"),
        "regular_tasks": Field("tasks", "tasks running with their ideal memory (entity: cluster)"),
        "elastic_tasks": Field("tasks", "tasks running under-sized (entity: cluster)"),
        "job_memory_mb": Field("MB", "memory a job holds on a node (entity: node-<n>/<job>)"),
    },
    "site": {
        "dominant_share": Field("share", "a group's dominant share of the site's CPUs and memory held by its jobs"),
        "entitled_share": Field("share", "a group's weight over the weights of the groups with jobs (0: none)"),
        "isolation_guarantee": Field("share", "a group's received over entitled share, capped at 1, 1 when "
                                              "nothing waits (entity minimum: the lowest over groups)"),
        "utilisation": Field("share", "CPUs or memory in use over those up (entity: cpu or memory)"),
        "waiting_jobs": Field("jobs", "a group's waiting jobs"),
        "wait_s": Field("s", "median wait of a group's jobs that started in a sample interval"),
        "killed_jobs": Field("jobs", "jobs killed so far (entity: a group, or all)"),
    },
}

SUMMARY_METRICS: dict[str, dict[str, Field]] = {
    "fairshare": {
        "makespan_s": Field("s", "time of the last event (or the horizon)"),
        "decisions": Field("tasks", "tasks handed out"),
        "scheduler_cpu_s": Field("s", "CPU time inside the policy and its bookkeeping"),
        "decisions_per_second": Field("1/s", "decisions / scheduler_cpu_s"),
        "weight_recomputations": Field("count", "times the policy recomputed its weights"),
        "tasks_completed": Field("tasks", "tasks that ran to their end"),
        "tasks_killed": Field("tasks", "tasks killed by their job's departure"),
        "utilisation_<resource>": Field("share", "time-weighted mean share of the resource in use over "
                                                 "[0, makespan_s]"),
    },
    "batch": {
        "clusters": Field("clusters", "clusters of the hardware"),
        "cpus": Field("CPUs", "CPUs of all machines, up or down"),
        "jobs": Field("jobs", "jobs in the workload"),
        "finished": Field("jobs", "jobs that finished"),
        "killed": Field("jobs", "jobs killed by machine failures or preempted"),
        "preempted": Field("jobs", "best-effort jobs killed for a job of another queue (only with best-effort "
                                   "queues)"),
        "cancelled": Field("jobs", "jobs cancelled"),
        "mean_response_s": Field("s", "mean response time of the finished jobs"),
        "mean_slowdown": Field("ratio", "mean slowdown of the finished jobs"),
        "mean_bounded_slowdown_tau10": Field("ratio", "mean bounded slowdown (tau = 10 s) of the finished jobs"),
        "mean_wait_s": Field("s", "mean wait time of the finished jobs"),
        "makespan_s": Field("s", "last end of a job that ran (finished or killed) from the first submission"),
        "utilisation": Field("share", "CPU time of the jobs that ran over all CPUs x makespan_s"),
        "scheduler_cpu_s": Field("s", "CPU time inside the policy"),
        "scheduler_cpu_s_per_day": Field("s/day", "scheduler_cpu_s per simulated day of makespan_s"),
        "failures": Field("machine failures", "machine failures in the run"),
        "dropped_jobs": Field("jobs", "trace jobs with no run time or processors"),
        "skipped_lines": Field("lines", "unreadable trace lines skipped"),
        "jobs_with_ignored_properties": Field("jobs", "jobs requiring properties no cluster declares"),
        "delayed_starts": Field("jobs", "the 'recorded' policy only: jobs that could not start at their recorded "
                                        "start on this hardware and started as soon after as they fit"),
    },
    "network": {
        "applications": Field("apps", "applications in the run"),
        "finished": Field("apps", "applications that finished"),
        "waiting": Field("apps", "applications never placed"),
        "mean_isolation": Field("share", "mean over placed applications of their time-averaged isolation"),
        "min_isolation": Field("share", "the lowest isolation any application saw"),
        "mean_duration_s": Field("s", "mean duration of the finished applications"),
        "mean_wait_s": Field("s", "mean wait of the placed applications"),
        "link_utilisation": Field("share", "data carried over capacity x busy time, links that carried traffic"),
        "makespan_s": Field("s", "time of the last event (or the horizon)"),
    },
    "elastic": {
        "jobs": Field("jobs", "jobs in the trace"),
        "tasks": Field("tasks", "tasks run"),
        "mean_job_runtime_s": Field("s", "mean runtime (response time) of the finished jobs"),
        "makespan_s": Field("s", "last end of any job from the first submission"),
        "mean_map_phase_s": Field("s", "mean map phase of the jobs that have one"),
        "mean_reduce_phase_s": Field("s", "mean reduce phase of the jobs that have one"),
        "memory_utilisation": Field("share", "time-weighted mean share of all memory in use"),
        "elastic_tasks": Field("tasks", "tasks run under-sized"),
        "elastic_share": Field("share", "elastic_tasks / tasks"),
        "estimates": Field("runs", "runs of the timeline generator"),
        "scheduler_cpu_s": Field("s", "CPU time of the whole simulation"),
    },
    "site": {
        "groups": Field("groups", "first-level nodes of the organisation"),
        "users": Field("users", "leaves of the organisation"),
        "clusters": Field("clusters", "clusters of the hardware"),
        "cpus": Field("CPUs", "CPUs of all machines, up or down"),
        "memory_mb": Field("MB", "memory of all machines"),
        "memory_assumed": Field("clusters", "clusters whose memory was not given (default per CPU assumed)"),
        "jobs": Field("jobs", "jobs in the workload"),
        "finished": Field("jobs", "jobs that finished"),
        "killed": Field("jobs", "jobs killed by machine failures"),
        "cancelled": Field("jobs", "jobs cancelled"),
        "elastic_starts": Field("jobs", "jobs started with less memory than they asked"),
        "jobs_without_memory": Field("jobs", "jobs whose log records no memory (asked the model's default)"),
        "other_users_jobs": Field("jobs", "jobs of users the organisation does not name (its other users leaf)"),
        "mean_wait_s": Field("s", "mean wait time of the finished jobs"),
        "mean_response_s": Field("s", "mean response time of the finished jobs"),
        "mean_bounded_slowdown_tau10": Field("ratio", "mean bounded slowdown (tau = 10 s) of the finished jobs"),
        "makespan_s": Field("s", "last end of a job that ran (finished or killed) from the first submission"),
        "utilisation": Field("share", "CPU time of the jobs that ran over all CPUs x makespan_s"),
        "memory_utilisation": Field("share", "memory x time held by the jobs that ran over all memory x makespan_s"),
        "mean_min_isolation": Field("share", "time-weighted mean of the minimum isolation guarantee over groups"),
        "failures": Field("machine failures", "machine failures in the run"),
        "scheduler_cpu_s": Field("s", "CPU time inside the scheduling passes"),
        "delayed_starts": Field("jobs", "the 'recorded' policy only: jobs that could not start at their recorded "
                                        "start on these machines (CPUs and memory) and started as soon after as they fit"),
    },
}
"""Each engine's summary metrics; ``<resource>`` stands for each resource's name."""

LEGACY_NAMES: dict[str, dict[str, str]] = {
    "status": {"completed": "finished"},
    "timeline": {"utilization": "utilisation"},
    "summary": {
        "makespan": "makespan_s",
        "scheduler_seconds": "scheduler_cpu_s",
        "completed": "finished",
        "avg_response_s": "mean_response_s",
        "avg_slowdown": "mean_slowdown",
        "avg_bounded_slowdown_tau10": "mean_bounded_slowdown_tau10",
        "avg_wait_s": "mean_wait_s",
        "avg_job_runtime_s": "mean_job_runtime_s",
        "avg_map_phase_s": "mean_map_phase_s",
        "avg_reduce_phase_s": "mean_reduce_phase_s",
    },
    "summary_prefix": {"mean_utilization_": "utilisation_"},
    "unit": {"fraction": "share"},
}
"""Old name -> new name, per kind of name. A status ``unfinished`` (fair sharing,
elasticity) became ``running`` when the job had started and ``waiting`` when
it had not (:func:`migrate_jobs`)."""


def new_status(status: str, started: bool) -> str:
    """The current word for a job's former ``status`` (``started``: it has a start time)."""
    if status == "unfinished":
        return "running" if started else "waiting"
    return LEGACY_NAMES["status"].get(status, status)


def new_timeline_metric(name: str) -> str:
    """The current name of a timeline metric named ``name`` before."""
    return LEGACY_NAMES["timeline"].get(name, name)


def new_summary_name(name: str) -> str:
    """The current name of a summary metric named ``name`` before (itself when unchanged)."""
    if name in LEGACY_NAMES["summary"]:
        return LEGACY_NAMES["summary"][name]
    for old, new in LEGACY_NAMES["summary_prefix"].items():
        if name.startswith(old):
            return new + name[len(old):]
    return name


def migrate_jobs(jobs: pd.DataFrame) -> pd.DataFrame:
    """A ``jobs`` frame with its statuses in the current vocabulary."""
    status = jobs["status"].astype("string").replace(LEGACY_NAMES["status"])
    unfinished = status == "unfinished"
    started = jobs["start_time"].notna()
    status = status.mask(unfinished & started, "running").mask(unfinished & ~started, "waiting")
    return jobs.assign(status=status.astype(jobs["status"].dtype))


def migrate_timeline(timeline: pd.DataFrame) -> pd.DataFrame:
    """A ``timeline`` frame with its metric names in the current vocabulary."""
    metric = timeline["metric"].replace(LEGACY_NAMES["timeline"])
    return timeline.assign(metric=metric.astype(timeline["metric"].dtype))


def migrate_summary(summary: pd.DataFrame) -> pd.DataFrame:
    """A ``summary`` frame with its metric names and units in the current vocabulary."""
    metric = summary["metric"].map(new_summary_name)
    unit = summary["unit"].replace(LEGACY_NAMES["unit"])
    return summary.assign(metric=metric.astype(summary["metric"].dtype), unit=unit.astype(summary["unit"].dtype))
