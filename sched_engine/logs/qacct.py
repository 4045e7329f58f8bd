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
from itertools import chain
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np

from ..batch.traces import TraceError, Workload
from .entry import entry_points
from .jobs_table import NAN, Columns, Memo, Names, Skips, build_workload
from .jobs_table import compact as compact_rows
from .qacct_block import Times, read_block
from .sge import FAILED_LIMIT, category_limits

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


PIECE = 1 << 22   # text read at a time: a few thousand records read as columns together


class _Reading:
    """What reading gathers: the jobs' columns block by block, the counts, and whether a line of ``=`` was seen."""

    def __init__(self, source: str, skip_malformed: bool, timezone: str):
        self.skips, self.names, self.zone = Skips(source, skip_malformed), Names(), _zone(timezone, source)
        self.limits, self.times = Memo(category_limits), Times(self.zone)
        self.columns = Columns()
        self.records = self.tasks = 0
        self.started = False

    def block(self, text: str, first_line: int, by_block: bool) -> None:
        """The whole records of ``text`` (it starts at a line of ``=`` once one was seen), as columns."""
        read = read_block(text, first_line, self.started, self.times, self.limits, self.names) if by_block else None
        if read is None:
            return self.by_lines(text, first_line)
        columns, alone, records, tasks, orphans, self.started = read
        for number in orphans:
            self.skips.error("record", "qacct -j output starts with a line of '='", number)
        rows = [row for first, lines in alone if (row := self.record(first, lines)) is not None]
        self.records, self.tasks = self.records + records - len(alone), self.tasks + tasks   # alone: counted there
        self.add(columns, rows)

    def by_lines(self, text: str, first_line: int) -> None:
        """The records of ``text`` read line by line, each closed at a line of ``=`` or at the end."""
        rows, lines, first = [], [], None
        for number, line in enumerate(text.split("\n"), start=first_line):
            if SEPARATOR.fullmatch(line):
                if first is not None and (row := self.record(first, lines)) is not None:
                    rows.append(row)
                lines, first, self.started = [], number + 1, True
            elif line.strip():
                if not self.started:
                    self.skips.error("record", "qacct -j output starts with a line of '='", number)
                    continue
                lines.append((number, line))
                first = first_line if first is None else first
        if first is not None and (row := self.record(first, lines)) is not None:
            rows.append(row)
        self.add(None, rows)

    def record(self, first: int, lines: list[tuple[int, str]]) -> tuple | None:
        """The row of one record (``first`` its first line; ``lines`` its lines with a field); None for a parallel
        task's, or a malformed record's (raised or counted)."""
        if not lines:
            return None
        fields, lines_of = {}, {}
        for number, line in lines:
            name, _, value = line.strip().partition(" ")
            fields[name], lines_of[name] = value.strip(), number
        self.records += 1
        try:
            row = _record(fields, lines_of, first, self.zone, self.limits)
        except TraceError as exc:
            self.skips.error(exc.field, exc.message, exc.line or first)
            return None
        self.tasks += row is None
        return row

    def add(self, columns: dict | None, rows: list[tuple]) -> None:
        """Columns read as such and rows read alone, in the order of the file."""
        parts = [part for part in (columns, compact_rows(rows, self.names) if rows else None) if part is not None]
        if len(parts) == 2:
            order = np.argsort(np.concatenate([parts[0]["line"], parts[1]["line"]]), kind="stable")
            parts = [{name: np.concatenate([parts[0][name], parts[1][name]])[order] for name in parts[0]}]
        for part in parts:
            self.columns.append(part, len(part["line"]))


def _read(pieces, *, source: str, timezone: str, skip_malformed: bool, compact: bool,
          by_block: bool = True) -> Workload:
    """The body of :func:`read`: whole records read as columns (:mod:`.qacct_block`), else line by line.

    ``by_block=False`` reads every record line by line (the reading checked against).
    """
    reading = _Reading(source, skip_malformed, timezone)
    carry, first_line = "", 1
    for piece in chain(pieces, [None]):
        text = carry + (piece or "")
        cut = len(text) if piece is None else max(_last_rule(text), 0 if reading.started else -1)
        if cut < 0:   # no line of "=" yet: all of it comes before the first
            cut = len(text)
        if cut:
            reading.block(text[:cut], first_line, by_block)
            first_line += text.count("\n", 0, cut)
        carry = text[cut:]
    if not reading.columns.arrays:
        reading.columns.append(compact_rows([], reading.names), 0)
    tasks = reading.tasks
    notes = (f"{tasks:,} record(s) of parallel tasks (pe_taskid) read as part of their job",) if tasks else ()
    return build_workload(reading.columns.result(), kind=KIND, fields=FIELDS, skips=reading.skips, timezone=timezone,
                          names=reading.names, records=reading.records, notes=notes, compact=compact)


def _last_rule(text: str) -> int:
    """Where the last line of ``=`` in ``text`` starts; -1 when there is none."""
    end = len(text)
    while (at := text.rfind("=" * 20, 0, end)) >= 0:
        start = text.rfind("\n", 0, at) + 1
        stop = text.find("\n", at)
        if SEPARATOR.fullmatch(text, start, len(text) if stop < 0 else stop):
            return start
        end = start
    return -1


parse, read = entry_points(_read, what="``qacct -j`` output", piece=PIECE)
