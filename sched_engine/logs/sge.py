"""SGE, Son of Grid Engine, OGS and Univa/Altair Grid Engine accounting (``$SGE_ROOT/<cell>/common/accounting``).

One record a line, fields separated by ``:`` (accounting(5)); ``#`` lines are
comments. Grid Engine writes at least 45 fields (UGE adds more at the end).
By position (1-based): 1 ``qname``, 2 ``hostname``, 3 ``group``, 4 ``owner``,
6 ``job_number``, 7 ``account``, 9 ``submission_time``, 10 ``start_time``,
11 ``end_time``, 12 ``failed``, 13 ``exit_status``, 32 ``project``,
35 ``slots``, 36 ``task_number``, 37 ``cpu``, 40 ``category``, 42
``pe_taskid``, 43 ``maxvmem``.

* ``category`` is free text (``-l h_rt=01:00:00,h_vmem=2G -pe mpi 8``) and
  may hold colons: a record longer than the file's shortest has its extra
  fields in ``category``, and the fields after it are read that far on.
* Univa Grid Engine 8.2 and later write the three times in milliseconds:
  a time past the year 5000 in seconds is read as milliseconds, record by record.
* CPUs are ``slots``; ``h_rt`` (the requested time) and ``h_vmem`` (memory
  per slot; ``K``/``M``/``G`` powers of 1024, ``k``/``m``/``g`` of 1000) come
  from ``category``; used memory from ``maxvmem`` (bytes).
* A record with ``start_time`` 0 never started. Records repeated with the
  same host, job, task and ``failed`` count once; the records of a parallel
  job's tasks (``pe_taskid`` other than ``NONE``) are part of their job's
  record and are not jobs of their own.
* ``failed`` and ``exit_status`` both 0 is completed; ``failed`` 37 (qmaster
  enforced a limit) or a failure at or past ``h_rt`` is a job killed at its
  limit; anything else failed. A job of an array is ``job.task``.
* The account is the ``project`` (Grid Engine's share-tree unit), else the
  ``-A`` account unless it is Grid Engine's default ``sge``.
"""

from __future__ import annotations

import re

import numpy as np

from ..batch.traces import Workload
from .jobs_table import NAN, Memo, Skips, build_workload, clock_seconds, paused_gc

KIND = "sge"
NAMES = (
    "qname", "hostname", "group", "owner", "job_name", "job_number", "account", "priority", "submission_time",
    "start_time", "end_time", "failed", "exit_status", "ru_wallclock", "ru_utime", "ru_stime", "ru_maxrss", "ru_ixrss",
    "ru_ismrss", "ru_idrss", "ru_isrss", "ru_minflt", "ru_majflt", "ru_nswap", "ru_inblock", "ru_oublock", "ru_msgsnd",
    "ru_msgrcv", "ru_nsignals", "ru_nvcsw", "ru_nivcsw", "project", "department", "granted_pe", "slots", "task_number",
    "cpu", "mem", "io", "category", "iow", "pe_taskid", "maxvmem", "arid", "ar_submission_time",
)
WIDTH = len(NAMES)
CATEGORY = NAMES.index("category")
#: Fields read as numbers, by 0-based position (all before ``category``).
NUMERIC = {name: NAMES.index(name) for name in (
    "job_number", "submission_time", "start_time", "end_time", "failed", "exit_status", "slots", "task_number", "cpu")}
#: ``failed`` code of a job the master killed for passing a limit (h_rt, h_cpu, h_vmem).
FAILED_LIMIT = 37
MILLISECONDS_FROM = 1e11   # seconds past the year 5138: the clock is in milliseconds
FIELDS = {"submit": "submission_time", "start": "start_time", "end": "end_time", "procs": "slots"}
_H_RT = re.compile(r"(?:^|[\s,])h_rt=([0-9:.]+)")
_H_VMEM = re.compile(r"(?:^|[\s,])h_vmem=([0-9.]+)([kKmMgGtT]?)")
_UNIT = {"": 1, "k": 1e3, "K": 2**10, "m": 1e6, "M": 2**20, "g": 1e9, "G": 2**30, "t": 1e12, "T": 2**40}


def sniff(name: str, head: str) -> bool:
    """The first record has 45 or more ``:`` fields and numbers where Grid Engine writes its job and times."""
    for line in head.split("\n", 200)[:200]:
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split(":")
        return len(parts) >= WIDTH and all(parts[NUMERIC[f]].strip().lstrip("-").isdigit()
                                            for f in ("job_number", "submission_time", "start_time", "end_time"))
    return False


def category_limits(category: str) -> tuple[float, float]:
    """``(h_rt seconds, h_vmem MB)`` of a category string, NaN where it does not say."""
    limit = _H_RT.search(category)
    memory = _H_VMEM.search(category)
    seconds = NAN
    if limit:
        try:
            seconds = clock_seconds(limit.group(1))
        except ValueError:
            seconds = NAN
    megabytes = float(memory.group(1)) * _UNIT[memory.group(2)] / 2**20 if memory else NAN
    return seconds, megabytes


def _width(lines: list[tuple[int, list[str]]]) -> int:
    """The file's record width: the shortest record of at least :data:`WIDTH` fields."""
    widths = [len(parts) for _, parts in lines if len(parts) >= WIDTH]
    return min(widths) if widths else WIDTH


def _numbers(records: list[tuple[int, list[str]]], skips: Skips) -> tuple[np.ndarray, list[bool]]:
    """The :data:`NUMERIC` fields as a float matrix; a row with a bad one is reported (or marked unusable)."""
    block = np.full((len(records), len(NUMERIC)), np.nan)
    usable = [True] * len(records)
    columns = list(NUMERIC.values())
    try:
        block = np.array([[parts[i] for i in columns] for _, parts in records], dtype=float).reshape(-1, len(columns))
        if np.isfinite(block).all():
            return block, usable
    except ValueError:
        pass
    for row, (number, parts) in enumerate(records):   # the careful pass: name the first bad field
        for column, (name, index) in enumerate(NUMERIC.items()):
            try:
                block[row, column] = float(parts[index])
                if not np.isfinite(block[row, column]):
                    raise ValueError
            except ValueError:
                skips.error(name, f"{parts[index]!r} is not a number", number)
                usable[row] = False
                break
    return block, usable


def _used_memory(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return NAN


def parse(text: str, *, source: str, timezone: str = "UTC", skip_malformed: bool = False) -> Workload:
    """The jobs of a Grid Engine accounting file (see the module docstring)."""
    with paused_gc():
        return _parse(text, source=source, timezone=timezone, skip_malformed=skip_malformed)


def _parse(text: str, *, source: str, timezone: str = "UTC", skip_malformed: bool = False) -> Workload:
    """The body of :func:`parse`."""
    skips = Skips(source, skip_malformed)
    records: list[tuple[int, list[str]]] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line or line[0] == "#" or not line.strip():
            continue
        parts = line.rstrip("\r").split(":")
        if len(parts) < WIDTH:
            skips.error(NAMES[len(parts)], f"expected at least {WIDTH} fields, found {len(parts)}", number)
            continue
        records.append((number, parts))
    short = skips.count
    width = _width(records)
    block, usable = _numbers(records, skips)
    # Jobs only: a parallel task's record (pe_taskid set) belongs to its job's record.
    tail = CATEGORY + 2 - width   # pe_taskid, counted from the end of each record
    chosen = [row for row, (_, parts) in enumerate(records)
              if usable[row] and parts[len(parts) + tail] in ("NONE", "")]
    tasks = sum(usable) - len(chosen)
    picked = [records[row] for row in chosen]
    block = block[chosen]
    number = {name: block[:, i] for i, name in enumerate(NUMERIC)}
    times = {name: number[name] / np.where(number["submission_time"] > MILLISECONDS_FROM, 1000.0, 1.0)
             for name in ("submission_time", "start_time", "end_time")}
    limits = Memo(category_limits)
    h_rt, h_vmem = np.array([limits[":".join(parts[CATEGORY:len(parts) + tail - 1])] for _, parts in picked],
                            dtype=float).reshape(-1, 2).T
    slots = number["slots"]
    per_slot = np.maximum(slots, 1)
    failed, code = number["failed"], number["exit_status"]
    run = times["end_time"] - times["start_time"]
    status = np.where((failed == 0) & (code == 0), "completed",
                      np.where((failed == FAILED_LIMIT) | ((h_rt > 0) & (run >= h_rt)), "timeout", "failed"))
    jobs = number["job_number"].astype(np.int64).tolist()
    tasks_of = number["task_number"].astype(np.int64).tolist()
    columns = {
        "line": [line for line, _ in picked],
        "key": [(parts[1], job, task, bad) for (_, parts), job, task, bad in zip(picked, jobs, tasks_of, failed.tolist())],
        "job_id": [f"{job}.{task}" if task > 0 else str(job) for job, task in zip(jobs, tasks_of)],
        "submit": times["submission_time"], "start": times["start_time"], "end": times["end_time"], "procs": slots,
        "requested_time": h_rt, "memory_per_cpu_mb": h_vmem,
        "used_memory_per_cpu_mb": np.array([_used_memory(parts[len(parts) + tail + 1]) for _, parts in picked],
                                           dtype=float) / per_slot / 2**20,
        "avg_cpu_time": number["cpu"] / per_slot, "status": status.tolist(),
        "user": [parts[3] for _, parts in picked], "group": [parts[2] for _, parts in picked],
        "queue": [parts[0] for _, parts in picked], "partition": [""] * len(picked),
        "account": [parts[31] if parts[31] not in ("NONE", "") else "" if parts[6] == "sge" else parts[6]
                    for _, parts in picked],
    }
    notes = (f"{tasks:,} record(s) of parallel tasks (pe_taskid) read as part of their job",) if tasks else ()
    return build_workload(columns, kind=KIND, fields=FIELDS, skips=skips, timezone=timezone,
                          records=len(records) + short, notes=notes)
