"""Does the log look like the machine? Checks of a log's own recorded schedule against the hardware a run uses.

The recorded schedule: start = submit + recorded wait, end = start + run
time, CPUs allocated (else requested, as the readers give them); only jobs
with a wait >= 0, a run time >= 0 and CPUs > 0 count
(:func:`~.audit_schedule.recorded_schedule`). Every check is one row of the
audit frame, :data:`AUDIT_COLUMNS`: ``check, value, unit, verdict,
detail``; ``verdict`` is ``ok`` or ``warning``, ``detail`` one sentence.
The checks that need recorded waits (:data:`NEEDS_WAITS`), the hardware
(:data:`NEEDS_HARDWARE`) or requested times stay in the table with no value
and say what they need, on a log without them (SWF ``-1``), instead of
failing; one row (:data:`LEADS`: ``recorded_waits``, ``hardware_cpus``,
``estimate_accuracy_median``) names them all, and :attr:`Audit.grouped`, the
table as the panel and the command show it, folds them into that row
(``audit.csv`` keeps one row per check). Rows that
cannot be a schedule (no CPU, a negative run time: a job ending before it
starts, more CPUs than the largest cluster) are listed row by row in
:attr:`Audit.problems`, with their line in the file where it is known
(:mod:`.audit_lines`: also the rows the reader left out); the rest is
audited.

Why: a run on hardware smaller than what the log used cannot reproduce the
log's waits (RICC's header says 8,192 CPUs; its recorded schedule has up to
28,416 in use at once), and a site deciding from a what-if must see that
before it compares.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone

import numpy as np
import pandas as pd

from . import audit_periods, audit_schedule, audit_workload
from .audit_lines import UNKNOWN, SwfLines

AUDIT_COLUMNS = ("check", "value", "unit", "verdict", "detail")
#: Share of the recorded span over the hardware that earns a warning; also the share the suggested capacity
#: (``recorded_capacity_cpus``, the time-weighted quantile 1 - this) leaves over it.
OVER_HARDWARE_WARNING = 0.001
#: Idle periods listed one by one (longest first).
IDLE_LISTED = 5
#: Problem rows named in the ``impossible_rows`` sentence (all of them are in :attr:`Audit.problems`).
PROBLEMS_NAMED = 5
#: :attr:`Audit.problems`: the file line (where known), the row in the jobs frame (1-based; none for a row the
#: reader left out), the job's id and the problem.
PROBLEM_COLUMNS = ("line", "row", "job_id", "problem")
NEEDS_WAITS = ("recorded_peak_cpus", "recorded_p99_cpus", "time_over_hardware_share", "recorded_capacity_cpus",
               "recorded_utilisation", "recorded_mean_wait_s", "idle_while_waiting_s", "user_max_running_jobs",
               "user_max_cpus")
NEEDS_HARDWARE = ("time_over_hardware_share", "recorded_utilisation", "jobs_larger_than_hardware",
                  "idle_while_waiting_s")
#: What a check without a value needs (its ``detail`` starts so) -> the row that says it once for all of them.
LEADS = {"needs recorded waits": ("recorded_waits", "need recorded waits"),
         "needs the hardware": ("hardware_cpus", "need the hardware"),
         "needs requested times": ("estimate_accuracy_median", "need requested times")}


@dataclass(frozen=True)
class Audit:
    """A log's audit: the table and the frames behind it (for charts and files)."""

    table: pd.DataFrame                 # AUDIT_COLUMNS, one row per check
    usage: pd.DataFrame                 # time, cpus: recorded CPUs in use, a step function
    hardware_cpus: float                # NaN: unknown
    capacity_cpus: float                # the hardware, or the capacity the log used where it used more
    idle: pd.DataFrame = field(default_factory=pd.DataFrame)         # audit_periods.IDLE_COLUMNS
    gaps: pd.DataFrame = field(default_factory=pd.DataFrame)         # start, end, duration_s
    users: pd.DataFrame = field(default_factory=pd.DataFrame)        # user, running_jobs, cpus
    queues: pd.DataFrame = field(default_factory=pd.DataFrame)       # audit_workload.group_table
    partitions: pd.DataFrame = field(default_factory=pd.DataFrame)
    problems: pd.DataFrame = field(default_factory=pd.DataFrame)     # PROBLEM_COLUMNS
    folded: tuple = ()                  # checks with no value whose need a lead row names (LEADS)

    @property
    def warnings(self) -> pd.DataFrame:
        return self.table[self.table["verdict"] == "warning"]

    @property
    def grouped(self) -> pd.DataFrame:
        """The table as read: the checks that only say what they need are left to the one row naming them."""
        return self.table[~self.table["check"].isin(self.folded)].reset_index(drop=True)


def log_clock(header: dict | None, submit: np.ndarray):
    """``t -> text``: a date when the log's clock is known (SWF ``UnixStartTime``, or epoch times), else log time."""
    start = (header or {}).get("UnixStartTime")
    offset = float(start) if isinstance(start, (int, float)) and start > 0 else None
    if offset is None and len(submit) and np.nanmin(submit) > 3e8:   # times after 1979: epoch seconds already
        offset = 0.0
    if offset is not None:
        return lambda t: datetime.fromtimestamp(offset + float(t), tz=timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return lambda t: f"day {int(t // 86400)} {int(t % 86400 // 3600):02d}:{int(t % 3600 // 60):02d} (log time)"


def duration_text(seconds: float) -> str:
    """``45 s``, ``2.5 h``, ``3.2 days``."""
    if seconds < 3600:
        return f"{seconds:,.0f} s"
    return f"{seconds / 3600:,.1f} h" if seconds < 2 * 86400 else f"{seconds / 86400:,.1f} days"


def problem_rows(jobs: pd.DataFrame, largest_cluster: float) -> pd.DataFrame:
    """Rows that cannot be a recorded schedule, one line per problem: ``row`` (1-based, in the jobs frame),
    ``job_id``, ``problem``. Jobs larger than the largest cluster did run in the log (they stay in its
    schedule) but no run on this hardware can start them."""
    run, procs = jobs["run_time"].to_numpy(float), jobs["procs"].to_numpy(float)
    submit = jobs["submit_time"].to_numpy(float)
    checks = [(~np.isfinite(submit), lambda i: "no submission time"),
              (~np.isfinite(run), lambda i: "no run time"),
              (np.isfinite(run) & (run < 0), lambda i: f"ends before it starts (run time {run[i]:,.0f} s)"),
              (~(procs > 0), lambda i: f"uses {procs[i]:,.0f} CPUs")]
    if np.isfinite(largest_cluster):
        checks.append((procs > largest_cluster,
                       lambda i: f"uses {procs[i]:,.0f} CPUs, more than any cluster has ({largest_cluster:,.0f})"))
    ids = jobs["job_id"].astype(str).to_numpy() if "job_id" in jobs.columns else np.arange(1, len(jobs) + 1).astype(str)
    rows = [(int(i) + 1, ids[i], describe(i)) for mask, describe in checks for i in np.flatnonzero(mask)]
    return pd.DataFrame(sorted(rows), columns=["row", "job_id", "problem"])


def audit(jobs: pd.DataFrame, hardware_cpus: float | None = None, *, largest_cluster_cpus: float | None = None,
          header: dict | None = None, header_lines=(), dropped: int = 0, lines: SwfLines | None = None) -> Audit:
    """Every check of the module docstring on a workload's jobs frame (:data:`~sched_engine.batch.traces.JOB_COLUMNS`).

    ``hardware_cpus``: the CPUs a run would use (None: unknown);
    ``largest_cluster_cpus``: its largest cluster (default: all of them);
    ``header`` and ``header_lines``: the SWF header as the reader keeps it and
    its comment lines (for the queues it describes); ``dropped``: rows the
    reader dropped (``Workload.dropped``); ``lines``: where the jobs are in the
    file and the rows the reader left out (:func:`~.audit_lines.swf_lines`).
    """
    rows: list[tuple] = []

    def row(check, value, unit, detail, warning=False):
        rows.append((check, float(value), unit, "warning" if warning else "ok", detail))

    hardware = float(hardware_cpus) if hardware_cpus and hardware_cpus > 0 else float("nan")
    largest = float(largest_cluster_cpus) if largest_cluster_cpus else hardware
    schedule, known = audit_schedule.recorded_schedule(jobs)
    clock = log_clock(header, jobs["submit_time"].to_numpy(float))
    problems = _located(problem_rows(jobs, largest), lines)
    row("hardware_cpus", hardware, "CPUs", "the CPUs a run of this log uses" if np.isfinite(hardware) else
        "no hardware given and no MaxProcs header line (--machines gives one)", warning=not np.isfinite(hardware))
    row("jobs", len(jobs), "jobs", f"{len(schedule):,} of them with a sound recorded schedule")
    if dropped:
        named = "; each is listed with its line (the command's audit_rows.csv)" if lines is not None and len(
            lines.unread) else ""
        row("dropped_rows", dropped, "rows", f"the reader dropped {dropped:,} rows with no usable run time or CPU "
            f"count (-1 or negative) or that it refused: they are in no run and in no check here{named}", warning=True)
    _problem_row(row, problems)
    missing = int((~known).sum())
    if not len(schedule):
        row("recorded_waits", 0, "jobs", f"no job records its wait (all {missing:,} without, SWF -1)", warning=True)
    else:
        row("recorded_waits", len(schedule), "jobs", f"{missing:,} jobs record no wait and are left out of the "
            "recorded schedule" if missing else "every job records its wait", warning=missing > 0)
    result = _schedule_rows(row, schedule, hardware, clock)
    _hardware_row(row, jobs, hardware)
    known_wait = np.zeros(len(jobs), dtype=bool)
    known_wait[schedule.row] = True
    queues = audit_workload.group_table(jobs, known_wait, "queue")
    described = audit_workload.described_queues(header_lines)
    audit_workload.group_rows(row, queues, "queue", described)
    audit_workload.header_queue_row(row, described, set(queues["name"]))
    partitions = audit_workload.group_table(jobs, known_wait, "partition")
    audit_workload.group_rows(row, partitions, "partition")
    audit_workload.estimate_rows(row, jobs)
    gaps = audit_periods.submission_gaps(jobs["submit_time"].to_numpy(float))
    _gap_row(row, gaps, jobs["submit_time"].to_numpy(float), clock)
    table, folded = _name_needs(pd.DataFrame(rows, columns=list(AUDIT_COLUMNS)))
    return Audit(table=table, hardware_cpus=hardware, gaps=gaps, queues=queues, partitions=partitions,
                 problems=problems, folded=folded, **result)


def _name_needs(table: pd.DataFrame) -> tuple[pd.DataFrame, tuple]:
    """``(table, folded)``: each lead row of :data:`LEADS` names the checks with no value that need what it
    lacks (their ``detail`` starts with the need); ``folded`` those checks."""
    checks = list(table["check"])
    named: dict[str, list[str]] = {}
    for check, value, detail in table[["check", "value", "detail"]].itertuples(index=False):
        need = next((LEADS[prefix] for prefix in LEADS if detail.startswith(prefix)), None)
        if need is not None and need[0] in checks and check != need[0] and value != value:
            named.setdefault(need[0], []).append(check)
    if not named:
        return table, ()
    table = table.copy()
    for lead, names in named.items():
        verb = next(words for check, words in LEADS.values() if check == lead)
        if len(names) == 1:
            verb = verb.replace("need ", "needs ", 1)
        at = checks.index(lead)
        table.loc[at, "detail"] = f"{table.loc[at, 'detail']}; {', '.join(names)} {verb}"
    return table, tuple(name for names in named.values() for name in names)


def _located(problems: pd.DataFrame, lines: SwfLines | None) -> pd.DataFrame:
    """``problems`` (row, job_id, problem) with each row's file ``line`` where ``lines`` knows it, and the rows the
    reader left out; :data:`PROBLEM_COLUMNS`, in the file's order."""
    rows = problems["row"].to_numpy(np.int64)
    known = lines is not None and lines.kept is not None
    found = problems.assign(line=pd.array(lines.kept[rows - 1] if known else [None] * len(rows), dtype="Int64"),
                            row=pd.array(rows, dtype="Int64"))
    if lines is not None and len(lines.unread):
        unread = lines.unread.assign(line=pd.array(lines.unread["line"], dtype="Int64"),
                                     row=pd.array([None] * len(lines.unread), dtype="Int64"))
        found = pd.concat([found, unread], ignore_index=True)
    return found.sort_values(["line", "row"], kind="stable", na_position="last")[list(PROBLEM_COLUMNS)].reset_index(
        drop=True)


def _problem_row(row, problems: pd.DataFrame) -> None:
    problems = problems[~problems["problem"].str.startswith(UNKNOWN)]   # unknown values (-1) are not impossible
    if problems.empty:
        row("impossible_rows", 0, "rows", "no row records an impossible schedule")
        return

    def where(line, at, job) -> str:
        if line is pd.NA:
            return f"job {job} (row {at} of the jobs read)"
        return f"line {line} (job {job})" if job else f"line {line}"

    named = "; ".join(f"{where(line, at, job)} {problem}" + (": left out of every run" if at is pd.NA else "")
                      for line, at, job, problem in problems.iloc[:PROBLEMS_NAMED].itertuples(index=False))
    more = f"; and {len(problems) - PROBLEMS_NAMED:,} more" if len(problems) > PROBLEMS_NAMED else ""
    places = problems["line"].astype("float").fillna(-problems["row"].astype("float"))
    row("impossible_rows", places.nunique(), "rows", f"{named}{more}; the rest is audited", warning=True)


def _hardware_row(row, jobs: pd.DataFrame, hardware: float) -> None:
    if not np.isfinite(hardware):
        row("jobs_larger_than_hardware", float("nan"), "jobs", "needs the hardware", warning=True)
        return
    larger = int((jobs["procs"].to_numpy(float) > hardware).sum())
    row("jobs_larger_than_hardware", larger, "jobs", f"{larger:,} jobs use more CPUs than the hardware's "
        f"{hardware:,.0f}: a run cancels them" if larger else "every job fits the hardware", warning=larger > 0)


def _missing(row, names, need: str) -> None:
    for name in names:
        row(name, float("nan"), "", f"needs {need}", warning=True)


def _schedule_rows(row, schedule, hardware: float, clock) -> dict:
    """The checks of the recorded schedule; returns the frames behind them for :class:`Audit`."""
    empty = {"usage": pd.DataFrame({"time": [], "cpus": []}), "capacity_cpus": hardware,
             "idle": pd.DataFrame({n: [] for n in audit_periods.IDLE_COLUMNS}),
             "users": pd.DataFrame({"user": [], "running_jobs": [], "cpus": []})}
    if not len(schedule):
        _missing(row, NEEDS_WAITS, "recorded waits, which this log does not have")
        return empty
    times, used = audit_schedule.cpus_in_use(schedule)
    span = float(times[-1] - times[0])
    peak = float(used.max())
    p99 = audit_schedule.time_weighted_quantile(times, used, 0.99)
    used_capacity = audit_schedule.time_weighted_quantile(times, used, 1 - OVER_HARDWARE_WARNING)
    row("recorded_peak_cpus", peak, "CPUs", "the most CPUs the log had in use at once" + (
        f" ({peak / hardware:.2f}× the hardware)" if np.isfinite(hardware) else ""),
        warning=np.isfinite(hardware) and peak > hardware)
    row("recorded_p99_cpus", p99, "CPUs", "the CPUs in use that the log stays at or under for 99% of its time")
    capacity = hardware
    if np.isfinite(hardware):
        over = audit_schedule.share_over(times, used, hardware)
        warn = over > OVER_HARDWARE_WARNING
        row("time_over_hardware_share", over, "share", (
            f"the log has more than {hardware:,.0f} CPUs in use for {over:.1%} of its time, up to {peak:,.0f} at "
            f"its peak: it ran on more than this hardware; run it on the capacity it used, {used_capacity:,.0f} CPUs "
            f"(over it for at most {OVER_HARDWARE_WARNING:.1%} of its time; its time-weighted p99 is {p99:,.0f})")
            if warn else "the recorded schedule fits the hardware", warning=warn)
        capacity = max(hardware, used_capacity) if warn else hardware
        busy = float(((schedule.end - schedule.start) * schedule.procs).sum())
        utilisation = busy / (hardware * span) if span > 0 else float("nan")
        row("recorded_utilisation", utilisation, "share", "CPU-seconds the log ran over the hardware's from its first "
            "start to its last end" + (": more than the hardware can give" if utilisation > 1 else ""),
            warning=utilisation > 1)
    else:
        _missing(row, ("time_over_hardware_share", "recorded_utilisation"), "the hardware")
    row("recorded_capacity_cpus", max(used_capacity, hardware) if np.isfinite(hardware) else used_capacity, "CPUs",
        f"the capacity to run this log on: the hardware, or where the log used more, the CPUs it stays at or under "
        f"for all but {OVER_HARDWARE_WARNING:.1%} of its time")
    waits = schedule.wait
    row("recorded_mean_wait_s", float(waits.mean()), "s", f"mean recorded wait of {len(schedule):,} jobs (median "
        f"{np.median(waits):,.0f} s; {np.mean(waits == 0):.0%} started at once)")
    idle = _idle_rows(row, schedule, capacity, hardware, span, clock)
    users = audit_schedule.user_peaks(schedule)
    _user_rows(row, users)
    return {"usage": pd.DataFrame({"time": times, "cpus": used}), "capacity_cpus": capacity, "idle": idle,
            "users": users}


def _idle_rows(row, schedule, capacity: float, hardware: float, span: float, clock) -> pd.DataFrame:
    if not np.isfinite(capacity):
        _missing(row, ("idle_while_waiting_s",), "the hardware")
        return pd.DataFrame({n: [] for n in audit_periods.IDLE_COLUMNS})
    idle = audit_periods.idle_periods(audit_schedule.segments(schedule), capacity)
    total = float(idle["duration_s"].sum())
    on = f"the {capacity:,.0f} CPUs" + (" the log used" if capacity != hardware else "")
    if idle.empty:
        row("idle_while_waiting_s", 0.0, "s", f"no period of {duration_text(audit_periods.IDLE_MIN_S)} or more when "
            f"a waiting job fit in the idle CPUs of {on} and none started")
        return idle
    first = idle.iloc[0]
    row("idle_while_waiting_s", total, "s", f"{len(idle):,} periods ({total / span:.1%} of the log's time) when a "
        f"waiting job fit in the idle CPUs of {on} and none started: likely down times, reservations or held jobs; the longest "
        f"{duration_text(first['duration_s'])} from {clock(first['start'])}", warning=True)
    for rank, period in enumerate(idle.iloc[:IDLE_LISTED].itertuples(index=False), start=1):
        free = f"{period.idle_cpus_min:,.0f}" + (f"–{period.idle_cpus_max:,.0f}"
                                                  if period.idle_cpus_max != period.idle_cpus_min else "")
        row(f"idle_period_{rank}", period.duration_s, "s", f"{clock(period.start)} to {clock(period.end)}: {free} of "
            f"{capacity:,.0f} CPUs idle while up to {period.waiting_jobs_max:,.0f} jobs waited, the smallest asking "
            f"{period.smallest_waiting_cpus:,.0f}", warning=True)
    return idle


def _user_rows(row, users: pd.DataFrame) -> None:
    top = users.iloc[0]
    jobs = int(top["running_jobs"])
    peers = users[users["running_jobs"] == jobs]
    busiest = ", ".join(f"{u or '(unknown)'} {j:,}" for u, j in users.iloc[:5][["user", "running_jobs"]].itertuples(
        index=False))
    limit = len(peers) >= 2 and jobs >= 2
    row("user_max_running_jobs", jobs, "jobs", (
        f"{len(peers):,} users each had at most {jobs:,} jobs running at once, the most of any user: a likely "
        f"per-user limit of {jobs:,} running jobs, which a run has only if the model's user limits say so")
        if limit else f"user {top['user'] or '(unknown)'} had {jobs:,} jobs running at once, the most of any user "
        f"(the busiest users: {busiest})", warning=limit)
    by_cpus = users.sort_values(["cpus", "user"], ascending=[False, True], kind="stable")
    cpus = float(by_cpus["cpus"].iloc[0])
    same = int((users["cpus"] == cpus).sum())
    row("user_max_cpus", cpus, "CPUs", f"{same:,} users each held at most {cpus:,.0f} CPUs at once: a likely per-user "
        "CPU limit" if same >= 2 else f"user {by_cpus['user'].iloc[0] or '(unknown)'} held {cpus:,.0f} CPUs at once, "
        "the most of any user", warning=same >= 2)


def _gap_row(row, gaps: pd.DataFrame, submit: np.ndarray, clock) -> None:
    ordered = np.sort(submit[np.isfinite(submit)])
    longest = float(np.diff(ordered).max()) if len(ordered) > 1 else 0.0
    if gaps.empty:
        row("longest_submission_gap_s", longest, "s", f"no day without a submission (the longest gap "
            f"{duration_text(longest)})")
        return
    listed = "; ".join(f"{duration_text(g.duration_s)} from {clock(g.start)}" for g in gaps.iloc[:3].itertuples())
    many = f"{len(gaps):,} gaps" if len(gaps) > 1 else "a gap"
    row("longest_submission_gap_s", longest, "s", f"{many} of a day or more with no submission (an outage, a holiday or "
        f"a cut in the log): {listed}", warning=True)
