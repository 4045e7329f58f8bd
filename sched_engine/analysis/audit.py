"""Does the log look like the machine? Checks of a log's own recorded schedule against the hardware a run uses.

The recorded schedule: start = submit + recorded wait, end = start + run
time, CPUs allocated (else requested, as the readers give them); only jobs
with a wait ≥ 0, a run time ≥ 0 and CPUs > 0 count (a job ending before it
starts cannot be recorded that way: such rows are counted, not audited).
Every check is one row of the audit frame, :data:`AUDIT_COLUMNS`:
``check, value, unit, verdict, detail``; ``verdict`` is ``ok`` or
``warning``, ``detail`` one sentence. The checks that need recorded waits
say so on a log without them (SWF ``-1``) instead of failing.

Why: a run on hardware smaller than what the log used cannot reproduce the
log's waits (RICC's header says 8,192 CPUs; its recorded schedule has up to
28,416 in use at once), and a site deciding from a what-if must see that
before it compares.
"""

from __future__ import annotations

import heapq

import numpy as np
import pandas as pd

from .baseline import recorded_timeline

AUDIT_COLUMNS = ("check", "value", "unit", "verdict", "detail")
OVER_HARDWARE_WARNING = 0.001      # share of the recorded span over the hardware that earns a warning
IDLE_WARNING = 0.01                # share of the span with a waiting job that fit in the idle CPUs
GAP_WARNING_S = 86400.0            # no submission for a day: a likely outage or a cut in the log
LIMIT_SLACK = 1.01                 # a run within 1% of its requested time (or over it) ended at its limit
LONGEST_PERIODS = 3


def recorded_jobs(jobs: pd.DataFrame) -> tuple[pd.DataFrame, int, int]:
    """``(sound jobs with start and end, jobs without a recorded wait, impossible rows)``.

    Impossible: a negative run time or wait, or no CPU, in a row that has a
    recorded wait (a job ending before it starts).
    """
    wait = pd.to_numeric(jobs.get("recorded_wait", pd.Series(np.nan, index=jobs.index)), errors="coerce")
    run, procs = jobs["run_time"].astype(float), jobs["procs"].astype(float)
    known = wait.notna() & (wait >= 0)
    recorded = wait.notna() & (wait != -1)
    sound = known & (run >= 0) & (procs > 0)
    impossible = int((recorded & ~sound).sum())
    frame = jobs.loc[sound].copy()
    frame["start"] = frame["submit_time"].astype(float) + wait[sound]
    frame["end"] = frame["start"] + frame["run_time"].astype(float)
    frame["wait"] = wait[sound]
    return frame, int((~recorded).sum()), impossible


def usage_steps(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """CPUs in use as a step function: ``(times, value from each time to the next)`` (the log's timeline)."""
    timeline = recorded_timeline(frame.assign(recorded_wait=frame["wait"]))
    used = timeline[timeline["metric"] == "used_cpus"]
    return used["time"].to_numpy(float), used["value"].to_numpy(float)


def time_weighted_quantile(times: np.ndarray, values: np.ndarray, q: float) -> float:
    """The ``q`` quantile of a step function over ``[times[0], times[-1])``, each value weighted by how long it holds."""
    if len(times) < 2:
        return float(values[0]) if len(values) else 0.0
    durations, held = np.diff(times), values[:-1]
    order = np.argsort(held, kind="stable")
    cumulative = np.cumsum(durations[order])
    at = np.searchsorted(cumulative, q * cumulative[-1], side="left")
    return float(held[order][min(at, len(order) - 1)])


def idle_while_waiting(frame: pd.DataFrame, hardware: int) -> list[tuple[float, float]]:
    """The periods ``(from, to)`` when some job waited although the idle CPUs could hold it, longest first.

    At every instant: the idle CPUs (hardware minus CPUs in use) against the
    smallest waiting job. Ends free CPUs before starts take them; a period
    is kept while the condition holds without a break.
    """
    events = []   # (time, order at the instant: end 0, start 1, submit 2, kind, procs, job)
    for job, (submit, start, end, procs) in enumerate(frame[["submit_time", "start", "end", "procs"]]
                                                       .itertuples(index=False, name=None)):
        if start > submit:
            events += [(submit, 2, job, procs), (start, 1, job, procs)]
        else:
            events.append((start, 1, job, procs))
        events.append((end, 0, job, procs))
    events.sort()
    used, waiting, left, periods, since = 0.0, [], set(), [], None
    for index, (time, kind, job, procs) in enumerate(events):
        if kind == 0:
            used -= procs
        elif kind == 1:
            used += procs
            left.add(job)
        else:
            heapq.heappush(waiting, (procs, job))
        if index + 1 < len(events) and events[index + 1][0] == time:
            continue   # judged once the instant's events are all in
        while waiting and waiting[0][1] in left:
            heapq.heappop(waiting)
        idle = bool(waiting) and hardware - used >= waiting[0][0]
        if idle and since is None:
            since = time
        elif not idle and since is not None:
            periods.append((since, time))
            since = None
    return sorted(periods, key=lambda period: period[0] - period[1])


def user_peaks(frame: pd.DataFrame) -> pd.DataFrame:
    """Per user, the most jobs and the most CPUs it had running at once (ends before starts at one instant)."""
    user = frame["user"].astype("string").fillna("")
    parts = [pd.DataFrame({"user": user, "time": frame["start"], "order": 1, "jobs": 1, "cpus": frame["procs"]}),
             pd.DataFrame({"user": user, "time": frame["end"], "order": 0, "jobs": -1, "cpus": -frame["procs"]})]
    events = pd.concat(parts, ignore_index=True).sort_values(["user", "time", "order"], kind="stable")
    running = events.groupby("user", sort=False)[["jobs", "cpus"]].cumsum()
    return running.assign(user=events["user"]).groupby("user")[["jobs", "cpus"]].max().sort_values(
        ["jobs", "cpus"], ascending=False)


def audit(jobs: pd.DataFrame, hardware_cpus: int, header: dict | None = None) -> pd.DataFrame:
    """Every check of the module docstring on a workload's jobs frame, one row each."""
    rows: list[tuple] = []

    def row(check, value, unit, detail, warning=False):
        rows.append((check, value, unit, "warning" if warning else "ok", detail))

    frame, unrecorded, impossible = recorded_jobs(jobs)
    row("hardware_cpus", hardware_cpus, "CPUs", "the CPUs a run uses (the header's or the clusters given)")
    row("jobs", len(jobs), "jobs", f"{len(frame):,} with a recorded schedule")
    if impossible:
        row("impossible_rows", impossible, "jobs", f"{impossible:,} rows record a schedule that cannot be (a "
            "negative wait or run time, or no CPU); they are left out of every check below", warning=True)
    if frame.empty:
        row("recorded_schedule", 0, "jobs", f"no job records its wait ({unrecorded:,} without): the checks of "
            "CPUs in use, utilisation, waits, idle periods and per-user peaks need recorded waits", warning=True)
    else:
        _schedule_rows(row, frame, hardware_cpus, unrecorded)
    _workload_rows(row, jobs, header or {})
    return pd.DataFrame(rows, columns=list(AUDIT_COLUMNS))


def _schedule_rows(row, frame: pd.DataFrame, hardware: int, unrecorded: int) -> None:
    times, values = usage_steps(frame)
    span = float(times[-1] - times[0]) if len(times) > 1 else 0.0
    peak, p99 = float(values.max()), time_weighted_quantile(times, values, 0.99)
    over = float(np.diff(times)[values[:-1] > hardware].sum()) / span if span > 0 else 0.0
    row("recorded_peak_cpus", peak, "CPUs", f"the most CPUs the log had in use at once ({peak / hardware:.2f}× the "
        "hardware)", warning=peak > hardware)
    row("recorded_p99_cpus", p99, "CPUs", "the CPUs in use that 99% of the recorded time stays at or under")
    suggestion = f"{int(p99):,} (its time-weighted 99th percentile) or {int(peak):,} (its peak)"
    row("time_over_hardware_share", over, "share", (
        f"the log has more than {hardware:,} CPUs in use for {over:.1%} of its time, up to {int(peak):,}: it ran on "
        f"a larger machine than this; a run on the capacity the log used would take {suggestion} CPUs")
        if over > OVER_HARDWARE_WARNING else "the recorded schedule fits the hardware", warning=over > OVER_HARDWARE_WARNING)
    busy = float((frame["procs"] * frame["run_time"]).sum())
    utilisation = busy / (hardware * span) if span > 0 else 0.0
    row("recorded_utilisation", utilisation, "share", "CPU-seconds run over the hardware's CPU-seconds from the "
        "first start to the last end", warning=utilisation > 1.0)
    note = f"; {unrecorded:,} jobs without a recorded wait left out" if unrecorded else ""
    row("recorded_mean_wait_s", float(frame["wait"].mean()), "s", f"mean recorded wait of {len(frame):,} jobs{note}")
    larger = int((frame["procs"] > hardware).sum())
    row("jobs_larger_than_hardware", larger, "jobs", f"{larger:,} jobs used more CPUs than the hardware has: a run "
        "cancels them" if larger else "every job fits the hardware", warning=larger > 0)
    periods = idle_while_waiting(frame, hardware)
    idle = sum(end - start for start, end in periods)
    share = idle / span if span > 0 else 0.0
    longest = "; ".join(f"{_duration(end - start)} from t={start:,.0f} s" for start, end in periods[:LONGEST_PERIODS])
    row("idle_while_waiting_share", share, "share", (
        f"for {share:.1%} of the time ({len(periods):,} periods) a job waited although enough CPUs were idle: a "
        f"likely down time, reservation or limit; longest: {longest}") if periods else
        "no job waited while enough CPUs were idle", warning=share > IDLE_WARNING)
    peaks = user_peaks(frame)
    if len(peaks):
        user, top = peaks.index[0], peaks.iloc[0]
        most_cpus = peaks["cpus"].max()
        row("user_max_running_jobs", int(top["jobs"]), "jobs", f"user {user or '(unknown)'} had {int(top['jobs']):,} "
            f"jobs running at once, the most of any user; the most CPUs any user held at once: {int(most_cpus):,}; "
            "a round number here is a likely per-user limit")
    _groups(row, frame, "queue")
    _groups(row, frame, "partition")


def _groups(row, frame: pd.DataFrame, column: str) -> None:
    if column not in frame or frame[column].fillna("").eq("").all():
        return
    cpu_hours = frame["procs"] * frame["run_time"] / 3600.0
    table = pd.DataFrame({"name": frame[column].fillna("").astype(str), "wait": frame["wait"], "hours": cpu_hours})
    for name, group in table.groupby("name", sort=True):
        row(f"{column}:{name or '(none)'}", len(group), "jobs", f"{group['hours'].sum():,.0f} CPU-hours, recorded mean "
            f"wait {group['wait'].mean():,.0f} s")


def _workload_rows(row, jobs: pd.DataFrame, header: dict) -> None:
    queues = [f"{key}: {value}" for key, value in header.items() if str(key).lower().startswith(("queue", "partition"))]
    if queues:
        row("header_queues", len(queues), "lines", "the header describes " + "; ".join(queues))
    run, requested = jobs["run_time"].astype(float), jobs["requested_time"].astype(float)
    asked = requested > 0
    if asked.any():
        accuracy = float((run[asked] / requested[asked]).median())
        at_limit = int((run[asked] >= requested[asked] / LIMIT_SLACK).sum())
        row("estimate_accuracy_median", accuracy, "ratio", f"median of run time over requested time ({int(asked.sum()):,}"
            " jobs with a request)")
        row("jobs_killed_at_limit", at_limit, "jobs", f"{at_limit:,} jobs ran their whole requested time (or over): "
            "likely killed at their limit")
    else:
        row("estimate_accuracy_median", float("nan"), "ratio", "no job records a requested time: runs need perfect "
            "estimates", warning=True)
    zero = int((run == 0).sum())
    row("zero_length_jobs", zero, "jobs", f"{zero:,} jobs ran for 0 s" if zero else "no job ran for 0 s")
    submit = np.sort(jobs["submit_time"].to_numpy(float))
    gaps = np.diff(submit)
    if len(gaps):
        at = int(gaps.argmax())
        long = int((gaps > GAP_WARNING_S).sum())
        row("longest_submission_gap_s", float(gaps[at]), "s", f"no job was submitted for {_duration(gaps[at])} from "
            f"t={submit[at]:,.0f} s; {long:,} gaps over a day (an outage, or a cut in the log)", warning=long > 0)


def _duration(seconds: float) -> str:
    """``45 s`` under an hour, else ``2.5 h``."""
    return f"{seconds:,.0f} s" if seconds < 3600 else f"{seconds / 3600:,.1f} h"
