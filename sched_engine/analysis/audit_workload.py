"""What a log's audit reads from the workload itself, with no schedule: queues, partitions, the header's queue
descriptions, requested times, zero-length jobs.

SWF headers describe queues in comment lines (Chapin et al. 1999, the
Standard Workload Format's header fields): ``; Queue: <number> <text>`` once
per queue (RICC ``; Queue:  2 0``, HPC2N ``; Queue:  1 [fque:1]``) and
``; Queues: <text>``, a verbal description of them. The reader keeps one
value per header key (:func:`~sched_engine.batch.traces.parse_swf_header`),
so the lines themselves are read here: from the text already in memory, or
from the head of the file alone (:func:`read_header_lines`).
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path
from typing import Iterable

import numpy as np
import pandas as pd

from ..core.io import GZIP_MAGIC, FileError

#: Words in a queue's description that name a kind of queue a run must treat apart (lower case).
QUEUE_KINDS = {"preemptible": ("preempt",), "best-effort": ("best-effort", "best effort", "besteffort"),
               "interactive": ("interactive",)}
_QUEUE_LINE = re.compile(r"^;\s*(Queues?)\s*:\s*(.*?)\s*$", re.IGNORECASE)
#: Header lines read at most, and the longest line kept (a header is a few dozen short lines).
HEADER_LINES_MAX = 10_000
#: Rows of one group column (queue, partition) listed one by one; the rest become one row.
GROUPS_LISTED = 20
#: A run within 1% of its requested time, or over it, ended at its limit (schedulers kill at the limit,
#: a little after it when they poll).
LIMIT_SLACK = 1.01


def read_header_lines(path: str | Path, *, source: str | None = None) -> list[str]:
    """The comment lines before a workload file's first job (gzip read as a stream), never the whole file."""
    name = source or Path(path).name
    try:
        with open(path, "rb") as raw:
            gzipped = raw.read(2) == GZIP_MAGIC
        opener = gzip.open if gzipped else open
        with opener(path, "rt", encoding="utf-8", errors="replace") as stream:
            return leading_comments(stream)
    except (OSError, EOFError) as exc:
        raise FileError("", f"cannot read the header ({exc})", source=name) from None


def header_lines(text: str) -> list[str]:
    """The comment lines before the first job of workload text already read."""
    return leading_comments(text.splitlines())


def leading_comments(lines: Iterable[str]) -> list[str]:
    """The stripped lines up to the first job line (at most :data:`HEADER_LINES_MAX`), read no further."""
    found = []
    for line in lines:
        stripped = line.strip()
        if stripped and not stripped.startswith(";"):
            break
        found.append(stripped)
        if len(found) >= HEADER_LINES_MAX:
            break
    return found


def queue_kinds(text: str) -> list[str]:
    """The kinds of :data:`QUEUE_KINDS` a description names."""
    lower = text.lower()
    return [kind for kind, words in QUEUE_KINDS.items() if any(word in lower for word in words)]


def described_queues(lines) -> pd.DataFrame:
    """The header's queues: ``queue`` (its number, empty for a ``Queues:`` line), ``description``, ``kinds``."""
    rows = []
    for line in lines:
        match = _QUEUE_LINE.match(line)
        if not match:
            continue
        key, text = match.groups()
        number, _, rest = text.partition(" ") if key.lower() == "queue" else ("", "", text)
        rows.append((number.strip(), rest.strip(), ", ".join(queue_kinds(rest))))
    return pd.DataFrame(rows, columns=["queue", "description", "kinds"])


def group_table(jobs: pd.DataFrame, known_wait: np.ndarray, column: str) -> pd.DataFrame:
    """Per value of ``column``: ``jobs``, ``cpu_hours``, ``cpu_hour_share``, ``recorded_mean_wait_s`` (NaN: no
    recorded wait), most CPU-hours first; empty when the log leaves the column empty."""
    if column not in jobs.columns or not jobs[column].fillna("").astype(str).str.strip().ne("").any():
        return pd.DataFrame({"name": [], "jobs": [], "cpu_hours": [], "cpu_hour_share": [], "recorded_mean_wait_s": []})
    run = jobs["run_time"].to_numpy(float)
    hours = np.where(run > 0, run, 0.0) * jobs["procs"].to_numpy(float) / 3600.0
    wait = pd.to_numeric(jobs["recorded_wait"], errors="coerce").to_numpy(float) if "recorded_wait" in jobs else \
        np.full(len(jobs), np.nan)
    frame = pd.DataFrame({"name": jobs[column].fillna("").astype(str).str.strip().replace("", "(none)").to_numpy(),
                          "hours": hours, "wait": np.where(known_wait, wait, np.nan)})
    table = frame.groupby("name", sort=True).agg(jobs=("hours", "size"), cpu_hours=("hours", "sum"),
                                                 recorded_mean_wait_s=("wait", "mean")).reset_index()
    total = table["cpu_hours"].sum()
    table.insert(3, "cpu_hour_share", table["cpu_hours"] / total if total > 0 else 0.0)
    return table.sort_values(["cpu_hours", "jobs", "name"], ascending=[False, False, True],
                             kind="stable").reset_index(drop=True)


def group_rows(row, table: pd.DataFrame, column: str, described: pd.DataFrame | None = None) -> None:
    """One row per queue (or partition): jobs, CPU-hours, recorded mean wait, and what the header says of it."""
    notes = {} if described is None else {q: (d, k) for q, d, k in described.itertuples(index=False) if q}
    listed, rest = table.iloc[:GROUPS_LISTED], table.iloc[GROUPS_LISTED:]
    for name, jobs, hours, share, wait in listed.itertuples(index=False):
        waited = "no recorded wait" if np.isnan(wait) else f"recorded mean wait {wait:,.0f} s"
        detail = f"{hours:,.0f} CPU-hours ({share:.1%} of all), {waited}"
        description, kinds = notes.get(name, ("", ""))
        if description:
            detail += f"; the header calls it {description!r}"
        if kinds:
            detail += f": {kinds}, which a run treats like any other queue unless the model's queues say so"
        row(f"{column}:{name}", jobs, "jobs", detail, warning=bool(kinds))
    if len(rest):
        row(f"{column}:(other {len(rest)})", int(rest["jobs"].sum()), "jobs",
            f"{rest['cpu_hours'].sum():,.0f} CPU-hours in {len(rest):,} smaller {column}s")


def header_queue_row(row, described: pd.DataFrame, log_queues: set[str]) -> None:
    """What the header's ``Queue:``/``Queues:`` lines describe, and the kinds a run must know of."""
    if described.empty:
        return
    texts = [f"{q} {d}".strip() if q else d for q, d, _ in described.itertuples(index=False)]
    kinds = sorted({k for value in described["kinds"] for k in value.split(", ") if k})
    unused = [q for q in described["queue"] if q and q not in log_queues]
    detail = "the header describes " + "; ".join(repr(t) for t in texts)
    if kinds:
        detail += f"; it names {', '.join(kinds)} queues: a run on one FCFS/EASY queue ignores what they change"
    if not log_queues:
        detail += "; the log records no queue per job"
    elif unused:
        detail += f"; no job of the log is in queue {', '.join(unused)}"
    row("header_queues", len(described), "queues", detail, warning=bool(kinds))


def estimate_rows(row, jobs: pd.DataFrame) -> None:
    """Estimate accuracy (run time over requested time), jobs at their limit, zero-length jobs."""
    run = jobs["run_time"].to_numpy(float)
    requested = jobs["requested_time"].to_numpy(float) if "requested_time" in jobs else np.full(len(jobs), -1.0)
    asked = (requested > 0) & np.isfinite(run) & (run >= 0)
    if asked.any():
        accuracy = run[asked] / requested[asked]
        median = float(np.median(accuracy))
        row("estimate_accuracy_median", median, "ratio",
            f"median run time over requested time of {int(asked.sum()):,} jobs with a request (mean "
            f"{accuracy.mean():.2f}); a run with the log's estimates backfills on these, with perfect ones on the "
            "run times")
        at_limit = int((run[asked] * LIMIT_SLACK >= requested[asked]).sum())
        row("jobs_killed_at_limit", at_limit, "jobs",
            f"{at_limit:,} jobs ({at_limit / asked.sum():.1%}) ran their whole requested time or longer: likely "
            "killed at their limit")
    else:
        nan = float("nan")
        row("estimate_accuracy_median", nan, "ratio", "no job records a requested time: a run can only use perfect "
            "estimates", warning=True)
        row("jobs_killed_at_limit", nan, "jobs", "needs requested times, which this log does not record", warning=True)
    zero = int((run == 0).sum())
    share = zero / len(jobs) if len(jobs) else 0.0
    row("zero_length_jobs", zero, "jobs", f"{zero:,} jobs ({share:.1%}) ran for 0 s: they add waits to the mean but no "
        "load" if zero else "no job ran for 0 s", warning=share > 0.01)
