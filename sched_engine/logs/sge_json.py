"""Grid Engine accounting written as one JSON object a line (``$SGE_ROOT/$SGE_CELL/common/accounting.jsonl``).

Open Cluster Scheduler and Gridware Cluster Scheduler 9 write it by default
(``old_accounting=true`` in ``reporting_params`` brings back the colon format
of :mod:`.sge`). A record names its fields as accounting(5) does:
``job_number``, ``task_number``, ``submission_time``, ``start_time``,
``end_time``, ``owner``, ``group``, ``account``, ``qname``, ``hostname``,
``slots``, ``category``, ``failed``, ``exit_status``, ``pe_task_id`` (a task of a
tightly integrated parallel job) and the usage objects, where ``cpu`` and
``maxvmem`` are found at whatever depth they are nested. The rules are those
of the colon format, with these differences:

* Times are in microseconds (milliseconds or seconds are recognised too,
  by their size); ``start_time`` 0 is a job that never started.
* A ``project``, when a record has one, is the account, as in the colon format.
"""

from __future__ import annotations

import json

from ..batch.traces import TraceError, Workload
from .entry import entry_points
from .jobs_table import NAN, Columns, Memo, Names, Skips, build_workload
from .jobs_table import compact as compact_rows
from .sge import FAILED_LIMIT, category_limits
from .sge_json_block import read_block
from .stream import line_blocks

KIND = "sge-json"
FIELDS = {"submit": "submission_time", "start": "start_time", "end": "end_time", "procs": "slots"}
NONE = frozenset({"", "NONE", None})
BLOCK = 16384   # lines read together by Arrow


def sniff(name: str, head: str) -> bool:
    """The first non-empty line is a JSON object naming a ``job_number``."""
    for line in head.split("\n", 50)[:50]:
        if line.strip():
            return line.lstrip().startswith("{") and '"job_number"' in line
    return False


def epoch_seconds(value) -> float:
    """A time as written (microseconds, milliseconds or seconds since 1970) in seconds; 0 and absent are NaN."""
    number = float(value) if value is not None else 0.0
    if number <= 0:
        return NAN
    return number / (1e6 if number > 1e14 else 1e3 if number > 1e11 else 1.0)


def _search(record: dict, name: str) -> tuple | None:
    """The keys leading to ``name`` in the record or in an object nested in it (the usage objects); None if nowhere."""
    if name in record:
        return (name,)
    for key, value in record.items():
        if isinstance(value, dict):
            path = _search(value, name)
            if path is not None:
                return (key, *path)
    return None


class _Found:
    """A usage value (``cpu``, ``maxvmem``) where the last record had it, else searched for."""

    def __init__(self, name: str):
        self.name, self.path = name, (name,)

    def __call__(self, record: dict):
        value = record
        try:
            for key in self.path:
                value = value[key]
            return value
        except (KeyError, TypeError):
            path = _search(record, self.name)
            if path is None:
                return None
            self.path = path
            return self(record)


def _number(record: dict, name: str, line: int, default=None) -> float:
    value = record.get(name, default)
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TraceError(name, f"{value!r} is not a number", line=line) from None


def _row(record: dict, line: int, limits: Memo, usage: dict) -> tuple | None:
    """The :data:`~.jobs_table.ROW` of one record; None for a parallel task's."""
    if record.get("pe_task_id", record.get("pe_taskid")) not in NONE:
        return None
    job = _number(record, "job_number", line)
    task = _number(record, "task_number", line, 0)
    times = {}
    for name in ("submission_time", "start_time", "end_time"):
        _number(record, name, line, 0)
        times[name] = epoch_seconds(record.get(name))
    slots = _number(record, "slots", line, 1)
    failed, code = _number(record, "failed", line, 0), _number(record, "exit_status", line, 0)
    category = record.get("category") or ""
    h_rt, h_vmem = limits[category if isinstance(category, str) else ""]
    cpu, maxvmem = usage["cpu"](record), usage["maxvmem"](record)
    per_slot = max(slots, 1.0)
    start, end = times["start_time"], times["end_time"]
    status = "completed" if failed == 0 and code == 0 else "timeout" if failed == FAILED_LIMIT or (
        h_rt > 0 and end - start >= h_rt) else "failed"
    job_id = f"{int(job)}.{int(task)}" if task > 0 else str(int(job))
    project, account = record.get("project"), record.get("account") or ""
    return (line, (record.get("hostname", ""), job, task, failed), job_id, times["submission_time"], start, end,
            slots, h_rt, h_vmem, float(maxvmem) / per_slot / 2**20 if maxvmem is not None else NAN,
            float(cpu) / per_slot if cpu is not None else NAN, status, str(record.get("owner", "")),
            str(record.get("group", "")), str(record.get("qname", "")), "",
            str(project) if project not in NONE else ("" if account == "sge" else str(account)))


def _read(pieces, *, source: str, timezone: str, skip_malformed: bool, compact: bool) -> Workload:
    """The body of :func:`read`: lines by the thousand through Arrow, one by one where it cannot read them."""
    skips, names, limits = Skips(source, skip_malformed), Names(), Memo(category_limits)
    rows, tasks, records = [], 0, 0
    columns = Columns()
    usage = {"cpu": _Found("cpu"), "maxvmem": _Found("maxvmem")}
    block: list[str] = []
    numbers: list[int] = []

    def one_by_one() -> None:
        nonlocal records, tasks
        for number, line in zip(numbers, block):
            records += 1
            try:
                record = json.loads(line)
                if not isinstance(record, dict):
                    raise ValueError("not an object")
                row = _row(record, number, limits, usage)
            except TraceError as exc:
                skips.error(exc.field, exc.message, number)
                continue
            except ValueError as exc:
                skips.error("record", f"not a JSON accounting record ({exc})", number)
                continue
            if row is None:
                tasks += 1
            else:
                rows.append(row)

    def flush() -> None:
        nonlocal records, tasks, rows
        read = read_block(block, numbers, names, limits) if block else None
        if read is None:
            one_by_one()
        else:
            if rows:   # records read one by one before these: in the order of the file
                columns.append(compact_rows(rows, names), len(rows))
                rows = []
            columns.append(read[0], len(read[0]["line"]))
            records, tasks = records + len(block), tasks + read[1]
        block.clear()
        numbers.clear()

    for first, lines in line_blocks(pieces):
        for number, line in enumerate(lines, start=first):
            if line.strip():
                block.append(line)
                numbers.append(number)
        if len(block) >= BLOCK:
            flush()
    flush()
    if rows or not columns.arrays:
        columns.append(compact_rows(rows, names), len(rows))
    notes = (f"{tasks:,} record(s) of parallel tasks (pe_task_id) read as part of their job",) if tasks else ()
    return build_workload(columns.result(), kind=KIND, fields=FIELDS, skips=skips, timezone=timezone,
                          names=names, records=records, notes=notes, compact=compact)


parse, read = entry_points(_read, what="a Grid Engine JSON accounting file")
