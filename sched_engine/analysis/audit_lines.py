"""Where an audited SWF log's rows are in its file: the line of every job read, and the rows the reader left out.

The SWF reader (:mod:`sched_engine.batch.traces`) keeps a job when its run
time is known (>= 0), it used at least one CPU (allocated, else requested)
and its submission time is >= 0, in the file's order, and counts the rest
as ``dropped``. :func:`swf_lines` reads the same text again to name them:
each left-out row with its file line, job id and why (a job ending before
it starts: a negative run time), and the file line of each job kept, so the
audit's problem rows say ``line N`` rather than a position in a frame.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

#: The SWF fields read here (0-based): job id, submit time, run time, allocated and requested CPUs.
JOB_ID, SUBMIT, RUN, ALLOCATED, REQUESTED = 0, 1, 3, 4, 7
UNREAD_COLUMNS = ("line", "job_id", "problem")
#: How a problem that is only an unknown value (SWF ``-1``: a job that never ran, a cancelled one) starts: such a
#: row is listed but is no impossible schedule.
UNKNOWN = "records no "


@dataclass(frozen=True)
class SwfLines:
    """``kept``: the file line (1-based) of each job the reader kept, in its order (None when the text does not
    match the jobs read, e.g. malformed lines were skipped); ``unread``: :data:`UNREAD_COLUMNS`, one row per
    problem of a row the reader left out."""

    kept: np.ndarray | None
    unread: pd.DataFrame


def _number(token: str) -> float:
    try:
        return float(token)
    except ValueError:
        return float("nan")


def swf_lines(text: str, jobs_read: int) -> SwfLines:
    """The lines of an SWF (or Alea's extended SWF) text as its reader kept or left them (module docstring)."""
    kept, unread = [], []
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields or fields[0].startswith(";"):
            continue
        if len(fields) <= REQUESTED:
            return SwfLines(None, pd.DataFrame(columns=list(UNREAD_COLUMNS)))   # not the reader's text: no lines
        submit, run = _number(fields[SUBMIT]), _number(fields[RUN])
        allocated = _number(fields[ALLOCATED])
        procs = allocated if allocated > 0 else _number(fields[REQUESTED])
        if run >= 0 and procs > 0 and submit >= 0:
            kept.append(number)
            continue
        if submit == -1:
            unread.append((number, fields[JOB_ID], f"{UNKNOWN}submission time (-1)"))
        elif not submit >= 0:
            unread.append((number, fields[JOB_ID], f"is submitted before the log starts ({fields[SUBMIT]} s)"))
        if run == -1:
            unread.append((number, fields[JOB_ID], f"{UNKNOWN}run time (-1)"))
        elif not run >= 0:
            unread.append((number, fields[JOB_ID], f"ends before it starts (run time {fields[RUN]} s)"))
        if procs == -1:
            unread.append((number, fields[JOB_ID], f"{UNKNOWN}CPU count (-1)"))
        elif not procs > 0:
            unread.append((number, fields[JOB_ID], f"uses {fields[REQUESTED]} CPUs"))
    lines = np.asarray(kept, dtype=np.int64) if len(kept) == jobs_read else None
    return SwfLines(lines, pd.DataFrame(unread, columns=list(UNREAD_COLUMNS)))
