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
  Records of the file's own width go through pandas' C tokenizer at once;
  only the longer ones are split one by one.
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

import csv
import io
import re

import numpy as np
import pandas as pd

from ..batch.traces import Workload
from .entry import entry_points
from .jobs_table import (
    NAN,
    Columns,
    Memo,
    Names,
    Skips,
    build_workload,
    clock_seconds,
    job_ids,
    key_hash,
    line_numbers,
)
from .stream import line_blocks

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
#: Fields read, by their position in a record without a colon in ``category``.
READ = {name: NAMES.index(name) for name in (
    "qname", "hostname", "group", "owner", "account", "project", *NUMERIC, "category", "pe_taskid", "maxvmem")}
#: ``failed`` code of a job the master killed for passing a limit (h_rt, h_cpu, h_vmem).
FAILED_LIMIT = 37
MILLISECONDS_FROM = 1e11   # seconds past the year 5138: the clock is in milliseconds
BLOCK = 16384   # records read into a table at a time (its texts are bulky)
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


def _table(texts: list[str], columns: int, numbers: bool) -> pd.DataFrame:
    """The :data:`READ` fields at their usual places, through pandas' C tokenizer (numbers as floats if asked)."""
    names = [name for name, _ in sorted(READ.items(), key=lambda item: item[1])]
    if not texts:
        return pd.DataFrame({name: pd.Series([], dtype=float if name in NUMERIC and numbers else object)
                             for name in names})
    kinds = {index: float if name in NUMERIC and numbers else object for name, index in READ.items()}
    table = pd.read_csv(io.StringIO("\n".join(texts)), sep=":", header=None, names=range(columns),
                        usecols=list(READ.values()), dtype=kinds, quoting=csv.QUOTE_NONE, lineterminator="\n",
                        na_filter=False, engine="c")
    return table.set_axis(names, axis=1)


def _after_category(text: str, width: int) -> tuple[str, str, str]:
    """``category``, ``pe_taskid`` and ``maxvmem`` of a record longer than ``width``: its extra colons are ``category``'s."""
    rest = text.split(":", CATEGORY)[CATEGORY].rsplit(":", width - CATEGORY - 1)
    return rest[0], rest[2], rest[3]


def _is_record(line: str) -> bool:
    return bool(line) and line[0] != "#" and not line.isspace()


def _block(texts: list[str], numbers: list[int], width: int, problems: list) -> tuple[pd.DataFrame, np.ndarray]:
    """A block of records at least :data:`WIDTH` fields long: their :data:`READ` fields and line numbers.

    Numbers that are not numbers go to ``problems`` and their records are left out.
    """
    counts = np.fromiter((t.count(":") + 1 for t in texts), dtype=np.int64, count=len(texts))
    columns = int(counts.max()) if len(texts) else WIDTH
    bad = np.zeros(len(texts), dtype=bool)
    try:
        table = _table(texts, columns, numbers=True)
    except ValueError:   # a field that should be a number is not: find which, record by record
        table = _table(texts, columns, numbers=False)
        for name in NUMERIC:
            values = pd.to_numeric(table[name].astype(object), errors="coerce").to_numpy(dtype=float)
            wrong = ~np.isfinite(values) & ~bad
            problems += [(numbers[i], name, f"{table[name].iloc[i]!r} is not a number") for i in np.flatnonzero(wrong)]
            bad |= wrong
            table[name] = values
    longer = np.flatnonzero(counts > width)
    if longer.size:
        fixed = pd.DataFrame([_after_category(texts[i], width) for i in longer],
                             columns=["category", "pe_taskid", "maxvmem"], index=longer)
        for name in fixed.columns:
            table[name] = table[name].astype(object)
            table.loc[longer, name] = fixed[name]
    return table[~bad], np.asarray(numbers, dtype=np.int64)[~bad]


def _records(pieces, skips: Skips, names: Names) -> tuple[dict, int, int]:
    """The :data:`~.jobs_table.ROW` columns of every job record, how many records, and how many were parallel tasks.

    Two walks over the pieces (read again), neither keeping the text: the first finds
    the file's record width, the second reads blocks of :data:`BLOCK` records.
    """
    width, records = None, 0
    for _, lines in line_blocks(pieces):
        widths = [line.count(":") + 1 for line in lines if _is_record(line)]
        records += len(widths)
        shortest = min((w for w in widths if w >= WIDTH), default=None)
        if shortest is not None:
            width = shortest if width is None else min(width, shortest)
    width = width or WIDTH
    problems: list[tuple[int, str, str]] = []
    columns, limits, tasks = Columns(), Memo(category_limits), 0
    texts, numbers = [], []
    for first, lines in line_blocks(pieces):
        for number, line in enumerate(lines, start=first):
            if not _is_record(line):
                continue
            count = line.count(":") + 1
            if count < WIDTH:
                problems.append((number, NAMES[count], f"expected at least {WIDTH} fields, found {count}"))
                continue
            texts.append(line)
            numbers.append(number)
            if len(texts) == BLOCK:
                tasks += _take(*_block(texts, numbers, width, problems), columns, names, limits)
                texts, numbers = [], []
    tasks += _take(*_block(texts, numbers, width, problems), columns, names, limits)
    for number, field, message in sorted(problems):
        skips.error(field, message, number)   # raises the first, unless malformed records are skipped
    return columns.result(), records, tasks


def _text(values: np.ndarray) -> pd.Series:
    return pd.Series(values.astype(np.int64)).astype(str)


def _take(table: pd.DataFrame, line: np.ndarray, columns: Columns, names: Names, limits: Memo) -> int:
    """Add a block's job records to ``columns`` (names as codes of ``names``); how many parallel task records it had."""
    # Jobs only: a parallel task's record (pe_taskid set) belongs to its job's record.
    task_record = ~table["pe_taskid"].isin(["NONE", ""]).to_numpy(dtype=bool)
    table, line = table[~task_record].reset_index(drop=True), line[~task_record]
    number = {name: table[name].to_numpy(dtype=float) for name in NUMERIC}
    scale = np.where(number["submission_time"] > MILLISECONDS_FROM, 1000.0, 1.0)
    submit, start, end = (number[name] / scale for name in ("submission_time", "start_time", "end_time"))
    codes, categories = pd.factorize(table["category"].astype(object))
    found = np.array([limits[c] for c in categories], dtype=float).reshape(-1, 2)
    h_rt, h_vmem = (found[codes, i] if len(codes) else np.zeros(0) for i in (0, 1))
    slots = number["slots"]
    per_slot = np.maximum(slots, 1)
    failed, code = number["failed"], number["exit_status"]
    status = np.where((failed == 0) & (code == 0), "completed",
                      np.where((failed == FAILED_LIMIT) | ((h_rt > 0) & (end - start >= h_rt)), "timeout", "failed"))
    job, task = _text(number["job_number"]), _text(number["task_number"])
    has_task = number["task_number"] > 0
    project, account = table["project"].astype(object), table["account"].astype(object)
    maxvmem = pd.to_numeric(table["maxvmem"].astype(object), errors="coerce").to_numpy(dtype=float)
    columns.append({
        "line": line_numbers(line), "key": key_hash(table["hostname"].astype(object).to_numpy(),
                                                    number["job_number"], number["task_number"], failed),
        "job_id": job_ids(np.where(has_task, (job + "." + task).to_numpy(dtype=object), job.to_numpy(dtype=object))),
        "submit": submit, "start": start, "end": end, "procs": slots, "requested_time": h_rt, "memory_per_cpu_mb": h_vmem,
        "used_memory_per_cpu_mb": maxvmem / per_slot / 2**20,
        "avg_cpu_time": number["cpu"] / per_slot, "status": names.encode(status.astype(object)),
        "user": names.encode(table["owner"]), "group": names.encode(table["group"]),
        "queue": names.encode(table["qname"]), "partition": np.zeros(len(table), dtype=np.uint16),
        "account": names.encode(np.where(~project.isin(["NONE", ""]), project, np.where(account == "sge", "", account))),
    }, len(table))
    return int(task_record.sum())


def _read(pieces, *, source: str, timezone: str, skip_malformed: bool, compact: bool) -> Workload:
    """The body of :func:`read`: the records of both passes (:func:`_records`), as jobs."""
    skips, names = Skips(source, skip_malformed), Names()
    columns, records, tasks = _records(pieces, skips, names)
    notes = (f"{tasks:,} record(s) of parallel tasks (pe_taskid) read as part of their job",) if tasks else ()
    return build_workload(columns, kind=KIND, fields=FIELDS, skips=skips, timezone=timezone, names=names,
                          records=records, notes=notes, compact=compact)


parse, read = entry_points(_read, what="a Grid Engine accounting file", passes=2)
