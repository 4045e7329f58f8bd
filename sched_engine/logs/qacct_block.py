"""Many ``qacct -j`` records read at once: Arrow splits the lines and pairs names with values, NumPy reads the columns.

:mod:`.qacct` hands a text of whole records here (it starts at a line of
``=``, or is the file's head). Every record whose values are in the usual
forms (times as qacct prints them, plain numbers, ``K``/``M``/``G``/``T``
sizes) is read as a column; any other record comes back as a list of its
lines, for :func:`.qacct._record` to read as before (it names the field at
fault). A text with white space Python and Arrow would trim differently (a
vertical tab, a no-break space) comes back whole as None.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .jobs_table import Memo, Names, as_objects, job_ids, key_hash, line_numbers
from .sge import FAILED_LIMIT

#: Fields a record is read from (what :func:`.qacct._record` gets).
WANTED = ("qname", "hostname", "group", "owner", "project", "jobnumber", "taskid", "account", "qsub_time", "start_time",
          "end_time", "slots", "failed", "exit_status", "cpu", "maxvmem", "category", "pe_taskid")
ABSENT = ("", "-/-", "undefined", "NONE")
#: The fields a record's job takes as text.
TEXTS = ("hostname", "jobnumber", "taskid", "owner", "group", "qname", "project", "account", "category")
#: White space ``str.strip``/``str.split`` see and Arrow's trims of " \t\r" do not.
_ASCII_ODD_SPACE = (b"\x0b", b"\x0c", b"\x1c", b"\x1d", b"\x1e", b"\x1f")
#: (Trimming " \t\r\n" byte by byte is right for UTF-8 too: no byte of a longer character is ASCII.)
_ODD_SPACE = re.compile("[\x0b\x0c\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")
_MONTHS = "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec"
_CLOCK = r"(?P<h>\d{1,2}):(?P<mi>\d{1,2}):(?P<s>\d{1,2})(?:\.(?P<f>\d{1,6}))?"
#: qacct's two time forms: ``Wed Nov 15 10:00:00 2023`` (SGE, OGS) and ``11/15/2023 10:00:00.250`` (UGE).
_ASCTIME = rf"^[^ \t]+[ \t]+(?P<mon>{_MONTHS})[ \t]+(?P<d>\d{{1,2}})[ \t]+{_CLOCK}[ \t]+(?P<y>\d{{4}})$"
_NUMERIC = rf"^(?P<mon>\d{{1,2}})/(?P<d>\d{{1,2}})/(?P<y>\d{{4}})[ \t]+{_CLOCK}$"
_DAYS = np.array([31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31])
_UNIT = {"": 1.0, "K": 2.0**10, "M": 2.0**20, "G": 2.0**30, "T": 2.0**40}


_MONTH_CODES = np.array(sorted(_MONTHS.encode().split(b"|")), dtype="S3")
_MONTH_CODES_ORDER = np.array([_MONTHS.split("|").index(code.decode()) for code in _MONTH_CODES])


def _fixed_width(values: pa.Array, width: int) -> tuple[np.ndarray, np.ndarray]:
    """The values of exactly ``width`` bytes: their rows and their bytes, one row each."""
    values = values.cast(pa.large_string())
    _, offsets, data = values.buffers()
    offsets = np.frombuffer(offsets, dtype=np.int64)[values.offset:values.offset + len(values) + 1]
    rows = np.flatnonzero((np.diff(offsets) == width) & values.is_valid().to_numpy(zero_copy_only=False))
    if not rows.size:
        return rows, np.zeros((0, width), dtype=np.uint8)
    return rows, np.frombuffer(data, dtype=np.uint8)[offsets[rows, None] + np.arange(width)]


def _numbers(strings: pa.Array) -> np.ndarray:
    return pc.cast(strings, pa.float64()).to_numpy(zero_copy_only=False)


def _digits(strings: pa.Array) -> np.ndarray:
    """Strings of ASCII digits (or empty: 0) as floats."""
    return _numbers(pc.if_else(pc.equal(strings, ""), "0", strings))


def _days_from_civil(year: np.ndarray, month: np.ndarray, day: np.ndarray) -> np.ndarray:
    """Days since 1970-01-01 of proleptic Gregorian dates (whole-number arrays)."""
    year = year - (month <= 2)
    era = year // 400
    of_era = year - era * 400
    of_year = (153 * (month + np.where(month > 2, -3, 9)) + 2) // 5 + day - 1
    return era * 146097 + of_era * 365 + of_era // 4 - of_era // 100 + of_year - 719468


class Times:
    """Local times qacct prints, as seconds since 1970 (UTC), as ``datetime(..., tzinfo=zone).timestamp()`` gives."""

    def __init__(self, zone):
        self.zone = zone
        self.offsets = Memo(self._offset)   # seconds east of UTC in a local hour; None when it changes in the hour

    def _offset(self, hour: int) -> float | None:
        start = datetime(1970, 1, 1) + timedelta(hours=hour)
        first = start.replace(tzinfo=self.zone).utcoffset()
        last = start.replace(minute=59, second=59, microsecond=999999, tzinfo=self.zone).utcoffset()
        return first.total_seconds() if first == last else None

    def read(self, values: pa.Array) -> tuple[np.ndarray, np.ndarray]:
        """Seconds (NaN when absent) and which values were read (the others are for ``clock_time`` alone).

        ``Wed Nov 15 10:00:00 2023`` (the day may be padded with a blank) is read by position; other values
        of qacct's two forms by a pattern.
        """
        size = len(values)
        seconds = np.full(size, np.nan)
        read = pc.is_in(values, pa.array(ABSENT)).to_numpy(zero_copy_only=False).copy()
        rows, fixed = _fixed_width(values, 24)
        if rows.size:
            digits = fixed[:, [9, 11, 12, 14, 15, 17, 18, 20, 21, 22, 23]].astype(np.int64) - 48
            tens = fixed[:, 8].astype(np.int64)
            month = _MONTH_CODES.searchsorted(fixed[:, 4:7].copy().view("S3").ravel())
            ok = ((digits >= 0) & (digits <= 9)).all(axis=1) & ((tens == 32) | ((tens >= 48) & (tens <= 57)))
            ok &= (fixed[:, [3, 7, 10, 19]] == 32).all(axis=1) & (fixed[:, [13, 16]] == 58).all(axis=1)
            ok &= (fixed[:, :3] > 32).all(axis=1) & (month < 12)
            ok[ok] = _MONTH_CODES[month[ok]] == fixed[ok, 4:7].copy().view("S3").ravel()
            rows, digits, tens, month = rows[ok], digits[ok], np.where(tens[ok] == 32, 0, tens[ok] - 48), month[ok]
            day = tens * 10 + digits[:, 0]
            clock = digits[:, 1:7].reshape(-1, 3, 2) @ np.array([10, 1])
            year = digits[:, 7:] @ np.array([1000, 100, 10, 1])
            month = _MONTH_CODES_ORDER[month] + 1
            taken = self._put(seconds, rows, year, month, day, clock[:, 0], clock[:, 1], clock[:, 2], 0)
            read[taken] = True
        for pattern in (_ASCTIME, _NUMERIC):
            unread = np.flatnonzero(~read)
            if not unread.size:
                break
            parts = pc.extract_regex(values.take(pa.array(unread)), pattern)
            valid = parts.is_valid().to_numpy(zero_copy_only=False)
            rows, parts = unread[valid], parts.filter(pa.array(valid))
            month = _digits(parts.field("mon")) if pattern is _NUMERIC else (
                pc.index_in(parts.field("mon"), pa.array(_MONTHS.split("|"))).to_numpy(zero_copy_only=False) + 1.0)
            year, day = _digits(parts.field("y")), _digits(parts.field("d"))
            hour, minute, second = (_digits(parts.field(name)) for name in ("h", "mi", "s"))
            micro = _digits(pc.utf8_rpad(parts.field("f"), 6, "0"))
            taken = self._put(seconds, rows, *(values.astype(np.int64) for values in (
                year, month, day, hour, minute, second, micro)))
            read[taken] = True
        return seconds, read

    def _put(self, seconds, rows, year, month, day, hour, minute, second, micro) -> np.ndarray:
        """Seconds of the dates and times that exist into ``seconds[rows]``; the rows taken."""
        leap = ((year % 4 == 0) & (year % 100 != 0)) | (year % 400 == 0)
        days = _DAYS[np.clip(month, 1, 12) - 1] + (leap & (month == 2))
        ok = (month >= 1) & (month <= 12) & (year >= 1) & (day >= 1) & (day <= days) & (hour <= 23) \
            & (minute <= 59) & (second <= 59)   # else datetime refuses it: read alone, it names the field
        local = _days_from_civil(year[ok], month[ok], day[ok]) * 86400 + hour[ok] * 3600 + minute[ok] * 60 + second[ok]
        offset = self._offsets_of(local)
        known = ~np.isnan(offset)
        micro_seconds = (local - np.nan_to_num(offset).astype(np.int64)) * 10**6 + np.broadcast_to(micro, ok.shape)[ok]
        taken = rows[ok][known]
        seconds[taken] = micro_seconds[known] / 1e6   # as timedelta.total_seconds divides
        return taken

    def _offsets_of(self, local: np.ndarray) -> np.ndarray:
        if not local.size:
            return np.zeros(0)
        hours, which = np.unique(local // 3600, return_inverse=True)
        table = np.array([np.nan if (value := self.offsets[hour]) is None else value for hour in hours.tolist()])
        return table[which]


def _matched(values: pa.Array, pattern: str) -> tuple[pa.StructArray, np.ndarray]:
    matched = pc.extract_regex(values, pattern)
    return matched, matched.is_valid().to_numpy(zero_copy_only=False)


def _whole_numbers(values: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """``_whole`` of :mod:`.qacct` (the number leading ``37  : reason``; empty is 0) where plain, and which were."""
    plain = pc.and_(pc.ascii_is_decimal(values), pc.less_equal(pc.binary_length(values), 15)).to_numpy(
        zero_copy_only=False).copy()
    empty = pc.equal(values, "").to_numpy(zero_copy_only=False)
    number = np.zeros(len(values))
    number[plain] = _numbers(values.filter(pa.array(plain)))
    other = np.flatnonzero(~plain & ~empty)
    if other.size:   # a number and its reason, such as 37  : qmaster enforced h_rt limit
        matched, valid = _matched(values.take(pa.array(other)), r"^(?P<n>\d{1,15})(?:[ \t:].*)?$")
        number[other[valid]] = _numbers(matched.field("n").filter(pa.array(valid)))
        plain[other[valid]] = True
    return number, plain | empty


def _decimals(values: pa.Array, suffixes: str) -> tuple[np.ndarray, np.ndarray, pa.Array]:
    """Values of digits with a point (``12.500``) and at most one of ``suffixes`` after them, as floats; which
    were such; and the suffix of each (empty when none)."""
    suffix = pc.utf8_slice_codeunits(values, -1)
    has = pc.is_in(suffix, pa.array(list(suffixes))) if suffixes else pc.equal(suffix, "\0")
    number = pc.if_else(has, pc.utf8_slice_codeunits(values, 0, -1), values)
    plain = pc.match_substring_regex(number, r"^[0-9]+(\.[0-9]+)?$").to_numpy(zero_copy_only=False)
    values = np.full(len(values), np.nan)
    values[plain] = _numbers(number.filter(pa.array(plain)))
    return values, plain, pc.if_else(has, suffix, "")


def _seconds(values: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """``seconds`` of :mod:`.qacct` (``400.000s``; NaN when absent) where plain, and which were read."""
    number, plain, _ = _decimals(values, "s")
    absent = pc.is_in(values, pa.array(ABSENT)).to_numpy(zero_copy_only=False)
    return np.where(absent, np.nan, number), plain | absent


def _sizes(values: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """``size_bytes`` of :mod:`.qacct` (``4.000G``: powers of 1024; NaN when absent) where plain, and which were."""
    number, plain, suffix = _decimals(values, "KMGTkmgt")
    unit = pc.index_in(pc.utf8_upper(suffix), pa.array(list(_UNIT))).fill_null(0).to_numpy(zero_copy_only=False)
    absent = pc.is_in(values, pa.array(ABSENT)).to_numpy(zero_copy_only=False)
    return np.where(absent, np.nan, number * np.array(list(_UNIT.values()))[unit]), plain | absent


def read_block(text: str, first_line: int, started: bool, times: Times, limits: Memo, names: Names):
    """The records of ``text`` (whole records; ``started``: a line of ``=`` came before it in the file).

    Returns None when Arrow cannot be trusted to split it as Python does, else
    ``(columns, alone, records, tasks, orphans, started)``: the
    :data:`~.jobs_table.ROW` columns of the records read, the records to read
    alone (first line, then ``(number, line)`` of each of its lines), how many
    records and parallel tasks there were, the lines before the file's first
    line of ``=``, and whether one has been seen.
    """
    data = text.encode()
    b = np.frombuffer(data, dtype=np.uint8)
    if any(space in data for space in _ASCII_ODD_SPACE) or (not text.isascii() and _ODD_SPACE.search(text)):
        return None
    breaks = np.flatnonzero(b == 10)
    offsets = np.concatenate(([0], breaks + 1, [len(data)] if len(data) > (breaks[-1] + 1 if breaks.size else 0)
                              else []))
    lines = pa.LargeStringArray.from_buffers(offsets.size - 1, pa.py_buffer(offsets.astype(np.int64)),
                                             pa.py_buffer(data))   # each with its line break, as str.split("\n")
    rule = pc.starts_with(lines, "=" * 20).to_numpy(zero_copy_only=False)
    candidates = np.flatnonzero(rule)
    rule[candidates] = pc.match_substring_regex(lines.take(pa.array(candidates)), r"^=+[ \t\r\n]*$").to_numpy(
        zero_copy_only=False)
    stripped = pc.ascii_trim(lines, " \t\r\n")
    filled = pc.not_equal(stripped, "").to_numpy(zero_copy_only=False) & ~rule
    record = np.cumsum(rule)   # 0: before the block's first line of "=", which it starts with once one was seen
    orphans = (first_line + np.flatnonzero(filled & (record == 0))).tolist()
    rows = np.flatnonzero(filled & (record > 0))
    rules = np.flatnonzero(rule)
    pairs = pc.split_pattern(stripped.take(pa.array(rows)), " ", max_splits=1)   # as str.partition(" ")
    starts, words = pairs.offsets.to_numpy()[:-1], pairs.flatten()
    name = words.take(pa.array(starts))
    paired = np.diff(pairs.offsets.to_numpy()) == 2
    value = pc.ascii_trim(words.take(pa.array(starts + 1, mask=~paired)), " \t\r").fill_null("")
    owner = record[rows]   # the record of each field line, never decreasing
    new = np.empty(owner.size, dtype=bool)
    new[:1], new[1:] = True, owner[1:] != owner[:-1]
    ids, where = owner[new], np.cumsum(new) - 1   # the records with a field, in order; each line's among them
    first = first_line + rules[ids - 1] + 1   # each record's first line: the one after its line of "="
    fields = {}
    code = pc.index_in(name, pa.array(WANTED)).fill_null(-1).to_numpy(zero_copy_only=False)
    for number, wanted in enumerate(WANTED):
        at = np.flatnonzero(code == number)
        at = at[np.append(where[at][1:] != where[at][:-1], True)] if at.size else at   # the last counts, as in a dict
        last = np.full(ids.size, -1)
        last[where[at]] = at
        default = "NONE" if wanted in ("pe_taskid", "project") else ""
        fields[wanted] = pc.fill_null(value.take(pa.array(last, mask=last < 0)), default)
    task = ~pc.is_in(fields["pe_taskid"], pa.array(ABSENT)).to_numpy(zero_copy_only=False)
    read = {}
    plain = ~task
    for wanted in ("qsub_time", "start_time", "end_time"):
        read[wanted], ok = times.read(fields[wanted])
        plain &= ok
    for wanted in ("slots", "failed", "exit_status"):
        read[wanted], ok = _whole_numbers(fields[wanted])
        plain &= ok
    read["cpu"], ok = _seconds(fields["cpu"])
    plain &= ok
    read["maxvmem"], ok = _sizes(fields["maxvmem"])
    plain &= ok & pc.ascii_is_decimal(fields["jobnumber"]).to_numpy(zero_copy_only=False)
    alone = []
    for record_at in np.flatnonzero(~plain & ~task).tolist():   # first line, then each field line of the record
        numbers = rows[where == record_at]
        alone.append((int(first[record_at]),
                      [(first_line + int(i), lines[int(i)].as_py().removesuffix("\n")) for i in numbers]))
    texts = {key: fields[key] for key in TEXTS}
    if not plain.all():
        keep = np.flatnonzero(plain)
        read, texts, first = ({key: values[keep] for key, values in read.items()},
                              {key: column.take(pa.array(keep)) for key, column in texts.items()}, first[keep])
    columns = _columns(read, texts, first, limits, names)
    return columns, alone, int(ids.size), int(task.sum()), orphans, started or bool(rules.size)


def _columns(read: dict, fields: dict, lines: np.ndarray, limits: Memo, names: Names) -> dict:
    """The :data:`~.jobs_table.ROW` columns of records read, as :func:`.jobs_table.compact` makes them of rows."""
    text = {key: as_objects(column.to_pylist()) for key, column in fields.items()}
    task = np.where(np.isin(text["taskid"], ABSENT), "", text["taskid"]).astype(object)
    job = text["jobnumber"]
    failed, code = read["failed"], read["exit_status"]
    submit, start, end, slots = read["qsub_time"], read["start_time"], read["end_time"], read["slots"]
    per_slot = np.maximum(slots, 1.0)
    h_rt, h_vmem = np.array([limits[category] for category in text["category"]], dtype=float).reshape(-1, 2).T
    status = np.where((failed == 0) & (code == 0), "completed", np.where(
        (failed == FAILED_LIMIT) | ((h_rt > 0) & (end - start >= h_rt)), "timeout", "failed")).astype(object)
    project, account = text["project"], text["account"]
    account = np.where(~np.isin(project, ABSENT), project, np.where(account == "sge", "", account)).astype(object)
    return {
        "line": line_numbers(lines), "key": key_hash(text["hostname"], job, task, failed.astype(np.int64).astype(object)),
        "job_id": job_ids([f"{j}.{t}" if t else j for j, t in zip(job.tolist(), task.tolist())]),
        "submit": submit, "start": np.where(start > 0, start, np.nan), "end": end, "procs": slots,
        "requested_time": h_rt, "memory_per_cpu_mb": h_vmem, "used_memory_per_cpu_mb": read["maxvmem"] / per_slot / 2**20,
        "avg_cpu_time": read["cpu"] / per_slot, "status": names.encode(status), "user": names.encode(text["owner"]),
        "group": names.encode(text["group"]), "queue": names.encode(text["qname"]),
        "partition": np.zeros(job.size, dtype=np.uint16), "account": names.encode(account),
    }
