"""Grid Engine's ``qacct -j`` report: the accounting records printed one field a line, for a site without the raw file.

Each record opens with a line of ``=`` and has one ``name value`` line per
field (``qname``, ``hostname``, ``group``, ``owner``, ``project``, ``jobnumber``,
``taskid``, ``account``, ``qsub_time``, ``start_time``, ``end_time``, ``slots``,
``failed``, ``exit_status``, ``cpu``, ``maxvmem``, ``category``...). It reads as
the raw file does (:mod:`.sge`), with these differences:

* Times are printed in the qmaster's local time, ``Wed Nov 15 10:00:00 2023``
  (SGE, OGS) or ``11/15/2023 10:00:00.123`` (UGE): read in ``timezone``;
  ``-/-`` and ``undefined`` are absent (a job that never started).
* ``failed`` may carry its reason (``37  : qmaster enforced h_rt limit``);
  ``cpu`` and ``ru_wallclock`` may end in ``s``; ``maxvmem`` has a ``K``/``M``/``G``/``T``
  suffix (powers of 1024) or none (bytes).
* ``taskid`` ``undefined`` is a job without array tasks; ``pe_taskid``, when
  printed and not ``NONE``, is a parallel task's record, part of its job's.
"""

from __future__ import annotations

import re
from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..batch.traces import TraceError, Workload
from .entry import entry_points
from .jobs_table import NAN, Memo, Names, Skips, build_workload
from .jobs_table import compact as compact_rows
from .sge import FAILED_LIMIT, category_limits
from .stream import line_blocks

KIND = "qacct"
FIELDS = {"submit": "qsub_time", "start": "start_time", "end": "end_time", "procs": "slots"}
SEPARATOR = re.compile(r"={20,}\s*")
ABSENT = frozenset({"", "-/-", "undefined", "NONE"})
TIME_FORMATS = ("%a %b %d %H:%M:%S %Y", "%m/%d/%Y %H:%M:%S.%f", "%m/%d/%Y %H:%M:%S", "%Y-%m-%d %H:%M:%S.%f",
                "%Y-%m-%d %H:%M:%S")
_SIZE = re.compile(r"([0-9.]+)\s*([KMGT]?)B?", re.IGNORECASE)
_UNIT = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def sniff(name: str, head: str) -> bool:
    """A line of ``=`` first, and ``qname`` among the field names that follow."""
    lines = [line for line in head.split("\n", 60)[:60] if line.strip()]
    return bool(lines) and SEPARATOR.fullmatch(lines[0]) is not None and any(
        line.split(None, 1)[0] in ("qname", "jobnumber") for line in lines[1:])


def _zone(timezone: str, source: str):
    try:
        return ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError):
        raise TraceError("timezone", f"unknown time zone {timezone!r} (a tz database name such as Europe/Prague)",
                         source=source) from None


MONTHS = {name: number for number, name in enumerate(
    ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), start=1)}


def _fields(text: str) -> tuple | None:
    """``(year, month, day, hour, minute, second, microsecond)`` of qacct's two usual forms, else None."""
    parts = text.split(" ")
    if len(parts) == 5 and parts[1] in MONTHS:                      # Wed Nov 15 10:00:00 2023
        clock, year, month, day = parts[3], parts[4], MONTHS[parts[1]], parts[2]
    elif len(parts) == 2 and parts[0].count("/") == 2:               # 11/15/2023 10:00:00.250
        month, day, year = parts[0].split("/")
        clock = parts[1]
    else:
        return None
    hms, _, fraction = clock.partition(".")
    hour, minute, second = hms.split(":")
    if not (fraction.isdigit() or not fraction) or len(fraction) > 6:
        return None
    return int(year), int(month), int(day), int(hour), int(minute), int(second), int(fraction.ljust(6, "0") or 0)


def clock_time(text: str, zone) -> float:
    """Seconds since 1970 of a time qacct prints (NaN when absent); ``ValueError`` for anything else."""
    text = " ".join(text.split())
    if text in ABSENT:
        return NAN
    try:
        fields = _fields(text)
    except ValueError:
        fields = None
    if fields is not None:
        return datetime(*fields, tzinfo=zone).timestamp()   # ValueError for a day or hour that does not exist
    for layout in TIME_FORMATS:
        try:
            moment = datetime.strptime(text, layout)
        except ValueError:
            continue
        return moment.replace(tzinfo=zone).timestamp()
    raise ValueError(text)


def seconds(text: str) -> float:
    """``400.000s`` or ``400`` -> 400.0; NaN when absent."""
    text = text.strip().removesuffix("s")
    return NAN if text in ABSENT else float(text)


def size_bytes(text: str) -> float:
    """``4.000G`` -> 4 * 2**30; no suffix is bytes; NaN when absent."""
    text = text.strip()
    if text in ABSENT:
        return NAN
    match = _SIZE.fullmatch(text)
    if match is None:
        raise ValueError(text)
    return float(match.group(1)) * _UNIT[match.group(2).upper()]


def _whole(text: str) -> int:
    """The number leading ``failed`` (``37  : qmaster enforced h_rt limit``) or another count."""
    return int(text.split(":", 1)[0].split()[0]) if text.strip() else 0


def _record(fields: dict[str, str], lines: dict[str, int], line: int, zone, limits: Memo) -> tuple | None:
    """The :data:`~.jobs_table.ROW` of one record (``line`` its first, ``lines`` each field's); None for a parallel
    task's; ``TraceError`` naming the field and its line."""
    if fields.get("pe_taskid", "NONE") not in ABSENT:
        return None
    get = fields.get
    values = {}
    for name, read in (("qsub_time", clock_time), ("start_time", clock_time), ("end_time", clock_time),
                       ("slots", lambda t: float(_whole(t))), ("failed", _whole), ("exit_status", _whole),
                       ("cpu", seconds), ("maxvmem", size_bytes)):
        try:
            values[name] = read(get(name, ""), zone) if read is clock_time else read(get(name, ""))
        except (ValueError, IndexError):
            raise TraceError(name, f"{get(name, '')!r} cannot be read", line=lines.get(name, line)) from None
    job, task = get("jobnumber", "").strip(), get("taskid", "").strip()
    if not job.isdigit():
        raise TraceError("jobnumber", f"{job!r} is not a job number", line=lines.get("jobnumber", line))
    task = "" if task in ABSENT else task
    h_rt, h_vmem = limits[get("category", "")]
    submit, start, end = values["qsub_time"], values["start_time"], values["end_time"]
    slots = values["slots"]
    per_slot = max(slots, 1.0)
    failed, code = values["failed"], values["exit_status"]
    status = "completed" if failed == 0 and code == 0 else "timeout" if failed == FAILED_LIMIT or (
        h_rt > 0 and end - start >= h_rt) else "failed"
    project, account = get("project", "NONE"), get("account", "")
    return (line, (get("hostname", ""), job, task, failed), f"{job}.{task}" if task else job, submit,
            start if start > 0 else NAN, end, slots, h_rt, h_vmem, values["maxvmem"] / per_slot / 2**20,
            values["cpu"] / per_slot, status, get("owner", ""), get("group", ""), get("qname", ""), "",
            project if project not in ABSENT else ("" if account == "sge" else account))


def _read(pieces, *, source: str, timezone: str, skip_malformed: bool, compact: bool) -> Workload:
    """The body of :func:`read`: a record closed at each line of ``=``."""
    skips, names, zone, limits = Skips(source, skip_malformed), Names(), _zone(timezone, source), Memo(category_limits)
    rows, tasks, records = [], 0, 0
    fields: dict[str, str] = {}
    lines_of: dict[str, int] = {}
    first = None

    def close() -> None:
        nonlocal tasks, records
        if first is None or not fields:
            return
        records += 1
        try:
            row = _record(fields, lines_of, first, zone, limits)
        except TraceError as exc:
            skips.error(exc.field, exc.message, exc.line or first)
            return
        if row is None:
            tasks += 1
        else:
            rows.append(row)

    for start, lines in line_blocks(pieces):
        for number, line in enumerate(lines, start=start):
            if SEPARATOR.fullmatch(line):
                close()
                fields, lines_of, first = {}, {}, number + 1
            elif line.strip():
                name, _, value = line.strip().partition(" ")
                if first is None:
                    skips.error("record", "qacct -j output starts with a line of '='", number)
                    continue
                fields[name], lines_of[name] = value.strip(), number
    close()
    notes = (f"{tasks:,} record(s) of parallel tasks (pe_taskid) read as part of their job",) if tasks else ()
    return build_workload(compact_rows(rows, names), kind=KIND, fields=FIELDS, skips=skips, timezone=timezone,
                          names=names, records=records, notes=notes, compact=compact)


parse, read = entry_points(_read, what="``qacct -j`` output")
