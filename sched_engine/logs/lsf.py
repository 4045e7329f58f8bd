"""IBM Spectrum LSF job accounting (``$LSB_SHAREDIR/<cluster>/logdir/lsb.acct``): ``JOB_FINISH`` records.

Fields are separated by single blanks; strings are double-quoted with ``""``
standing for a quote inside one (a quoted string may even run over a line
break); lists are written as their length followed by their items
(``numAskedHosts`` hosts, ``numExHosts`` hosts, ...), so every field after a
list is found by counting. By position: 2 version, 3 event time (the job's
end), 4 ``jobId``, 7 ``numProcessors``, 8 ``submitTime``, 11 ``startTime``,
12 ``userName``, 13 ``queue``, 14 ``resReq``; after the host lists
``jStatus`` (64 done, 32 exit), 19 resource-usage numbers, ``projectName``,
``exitStatus``, ``idx`` (the array index), ``maxRMem`` (KB), ``exitInfo``
(the termination reason), ``chargedSAAP`` (the fair-share path charged),
and, in LSF 9 and later after the ``submitEXT`` and host-usage lists, the
``runLimit`` (s).

* CPUs are ``numProcessors``; the requested time the ``runLimit``; memory
  per processor the ``rusage[mem=N]`` of ``resReq`` (MB, LSF's usual unit).
* A record with ``startTime`` 0 never started (killed while pending).
* ``jStatus`` 64 is completed; an exit with reason ``TERM_RUNLIMIT`` (5), or
  at or past the run limit, was killed at its limit; with a kill by its owner
  or an administrator or a preemption (1, 8, 9, 14, 15, 23) it was cancelled;
  any other exit failed.
* The account is ``projectName`` (unless LSF's ``default``), the group the
  parent of ``chargedSAAP`` (``/physics/alice`` -> ``physics``). A job of an
  array is ``jobId[idx]``; a record repeated for one job, index and
  submission counts once.
"""

from __future__ import annotations

import csv
import io
import re

from ..batch.traces import TraceError, Workload
from .jobs_table import NAN, Skips, build_workload, columns_of, paused_gc

KIND = "lsf"
EVENT = "JOB_FINISH"
FIELDS = {"submit": "submitTime", "start": "startTime", "end": "eventTime", "procs": "numProcessors"}
#: Fixed positions (0-based) before the first list.
FIXED = {"eventTime": 2, "jobId": 3, "numProcessors": 6, "submitTime": 7, "startTime": 10, "userName": 11,
         "queue": 12, "resReq": 13, "numAskedHosts": 22}
#: Positions after ``jStatus`` (0 here).
AFTER_STATUS = {"jStatus": 0, "rusage": 4, "projectName": 24, "exitStatus": 25, "idx": 29, "maxRMem": 30,
                "exitInfo": 38, "chargedSAAP": 41, "numSubmitEXT": 52}
RUN_LIMIT_EXIT = 5
CANCEL_EXITS = frozenset({1, 8, 9, 14, 15, 23})
DONE = 64
_MEMORY = re.compile(r"rusage\[[^\]]*?\bmem=([0-9.]+)")


def sniff(name: str, head: str) -> bool:
    """A record of the first lines is a quoted ``"JOB_FINISH"`` event."""
    return any(line.startswith(f'"{EVENT}" "') for line in head.split("\n", 20)[:20])


def _whole(row: list[str], index: int, field: str, line: int) -> int:
    try:
        return int(row[index])
    except IndexError:
        raise TraceError(field, f"the record ends before this field ({len(row)} fields)", line=line) from None
    except ValueError:
        raise TraceError(field, f"{row[index]!r} is not a whole number", line=line) from None


def _number(row: list[str], index: int) -> float:
    try:
        value = float(row[index])
    except (IndexError, ValueError):
        return NAN
    return value if value >= 0 else NAN


def run_limit(row: list[str], status_at: int) -> float:
    """The ``runLimit`` after the ``submitEXT`` and host-usage lists (LSF 9+), NaN when absent or not a limit."""
    try:
        at = status_at + AFTER_STATUS["numSubmitEXT"]
        at += 1 + 2 * int(row[at])          # submitEXT: count, then key/value pairs
        at += 1 + 5 * int(row[at])          # host usage: count, then host, mem, swap, utime, stime
        limit = float(row[at + 1])          # options3, then runLimit
    except (IndexError, ValueError):
        return NAN
    return limit if limit > 0 else NAN


def status(j_status: int, reason: float, run: float, limit: float) -> str:
    if j_status == DONE:
        return "completed"
    if reason == RUN_LIMIT_EXIT or (limit > 0 and run >= limit):
        return "timeout"
    return "cancelled" if reason in CANCEL_EXITS else "failed"


def _record(row: list[str], line: int) -> tuple:
    end = float(_whole(row, FIXED["eventTime"], "eventTime", line))
    job = _whole(row, FIXED["jobId"], "jobId", line)
    cpus = _whole(row, FIXED["numProcessors"], "numProcessors", line)
    submit = float(_whole(row, FIXED["submitTime"], "submitTime", line))
    start = float(_whole(row, FIXED["startTime"], "startTime", line))
    exec_at = FIXED["numAskedHosts"] + 1 + _whole(row, FIXED["numAskedHosts"], "numAskedHosts", line)
    at = exec_at + 1 + _whole(row, exec_at, "numExHosts", line)
    j_status = _whole(row, at, "jStatus", line)
    index = _whole(row, at + AFTER_STATUS["idx"], "idx", line)
    limit = run_limit(row, at)
    memory = _MEMORY.search(row[FIXED["resReq"]])
    used_kb = _number(row, at + AFTER_STATUS["maxRMem"])
    rusage = at + AFTER_STATUS["rusage"]
    cpu_time = sum(max(_number(row, rusage + i), 0.0) for i in (0, 1))
    saap = row[at + AFTER_STATUS["chargedSAAP"]].strip("/").split("/") if len(row) > at + 41 else []
    project = row[at + AFTER_STATUS["projectName"]]
    job_id = f"{job}[{index}]" if index > 0 else str(job)
    per_cpu = max(cpus, 1)
    return (
        line, (job, index, submit), job_id, submit, start, end, cpus, limit,
        float(memory.group(1)) if memory else NAN, used_kb / 1024 / per_cpu, cpu_time / per_cpu,
        status(j_status, _number(row, at + AFTER_STATUS["exitInfo"]), end - start, limit),
        row[FIXED["userName"]], saap[-2] if len(saap) >= 2 else "", row[FIXED["queue"]], "",
        "" if project == "default" else project,
    )


def parse(text: str, *, source: str, timezone: str = "UTC", skip_malformed: bool = False) -> Workload:
    """The jobs of an ``lsb.acct`` file (see the module docstring)."""
    with paused_gc():
        return _parse(text, source=source, timezone=timezone, skip_malformed=skip_malformed)


def _parse(text: str, *, source: str, timezone: str, skip_malformed: bool) -> Workload:
    """The body of :func:`parse`."""
    skips = Skips(source, skip_malformed)
    rows, records, other = [], 0, 0
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=" ", quotechar='"', doublequote=True, strict=True)
    first_line = 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            skips.error("record", f"not an lsb.acct record ({exc})", first_line)
            break   # the quoting is broken: nothing after it can be trusted
        line, first_line = first_line, reader.line_num + 1
        if not row or row == [""]:
            continue
        if row[0] != EVENT:
            other += 1
            continue
        records += 1
        try:
            rows.append(_record(row, line))
        except TraceError as exc:
            skips.error(exc.field, exc.message, line)
    notes = (f"{other:,} record(s) of other events (not JOB_FINISH) left out",) if other else ()
    return build_workload(columns_of(rows), kind=KIND, fields=FIELDS, skips=skips, timezone=timezone,
                          records=records, notes=notes)
