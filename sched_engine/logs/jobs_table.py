"""From the records a resource-manager log reader accepted to a :class:`~sched_engine.batch.traces.Workload`.

A reader walks its file and gathers, per accounting record, the values
named in :data:`ROW` (tuples, or columns), absolute times in seconds since 1970 (UTC). This module
does, vectorised and once for every reader, what is the same for all:

* a record whose ``start`` is unknown or not positive is a job that never
  started: counted in the notes, not a run;
* impossible values (negative times, an end before the start, no CPU) raise a
  :class:`~sched_engine.batch.traces.TraceError` naming the file, the line and
  the log's own field, or with ``skip_malformed`` drop that row and count it;
* records with one ``key`` appear once (the last one read);
* an unknown requested time is -1, as in SWF and the other readers;
* jobs sorted by submission, times relative to the first one, whose epoch is
  the header's ``UnixStartTime`` (as in SWF), the zone ``TimeZoneString``.

Besides :data:`~sched_engine.batch.traces.JOB_COLUMNS` the frame holds
:data:`LOG_COLUMNS`, which the SWF writer reads: ``status`` (``completed``,
``failed``, ``cancelled``, ``timeout``: killed at its time limit), ``account``,
``used_memory_per_cpu_mb`` and ``avg_cpu_time`` (CPU seconds per CPU).
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..batch.traces import TraceError, Workload
from .columns import SEGMENT, Columns, as_objects
from .keys import key_hash, keyed_twice, repeated_keys, second_hash  # noqa: F401 -- the readers' names

#: One record as a reader appends it.
ROW = ("line", "key", "job_id", "submit", "start", "end", "procs", "requested_time", "memory_per_cpu_mb",
       "used_memory_per_cpu_mb", "avg_cpu_time", "status", "user", "group", "queue", "partition", "account")
#: Columns of a log reader's frame beyond the trace model's.
LOG_COLUMNS = ("status", "account", "used_memory_per_cpu_mb", "avg_cpu_time")
STATUSES = ("completed", "failed", "cancelled", "timeout")
NAN = float("nan")


@dataclass
class Skips:
    """Malformed records met while reading: raised at once, or counted with ``skip_malformed``."""

    source: str
    skip_malformed: bool
    count: int = 0
    first: int | None = None

    def error(self, field: str, message: str, line: int) -> None:
        """Raise the error, or count the line when malformed records are skipped."""
        if not self.skip_malformed:
            raise TraceError(field, message, source=self.source, line=line)
        self.count += 1
        self.first = line if self.first is None else min(self.first, line)


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def _check(bad: np.ndarray, keep: np.ndarray, lines: np.ndarray, skips: Skips, field: str, why: str) -> None:
    """Drop the rows of ``bad`` from ``keep`` (counted as skipped), or raise for the first one."""
    rows = np.flatnonzero(bad & keep)
    if not rows.size:
        return
    if not skips.skip_malformed:
        raise TraceError(field, why, source=skips.source, line=int(lines[rows[0]]))
    keep[rows] = False
    skips.count += rows.size
    first = int(lines[rows].min())
    skips.first = first if skips.first is None else min(skips.first, first)


@contextmanager
def paused_gc():
    """The cyclic garbage collector paused while a reader builds millions of small objects, none cyclic.

    Without it Python rescans the growing lists of fields again and again:
    a reader runs about twice as fast.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def columns_of(rows: list[tuple]) -> dict[str, list]:
    """Rows in :data:`ROW` order as one list per column."""
    return dict(zip(ROW, map(list, zip(*rows)))) if rows else {name: [] for name in ROW}


#: Columns of :data:`ROW` holding numbers, and names (kept as codes of :class:`Names`).
NUMBER_COLUMNS = frozenset(("submit", "start", "end", "procs", "requested_time", "memory_per_cpu_mb",
                            "used_memory_per_cpu_mb", "avg_cpu_time"))
NAME_COLUMNS = frozenset(("status", "user", "group", "queue", "partition", "account"))
#: Records a reader keeps as tuples before :func:`compact` turns them into columns.
BLOCK = 65536


class Names:
    """The names of a log (users, groups, queues, states...) each kept once: a column holds their int32 codes.

    Code 0 is the empty name.
    """

    def __init__(self):
        self.code: dict[str, int] = {"": 0}
        self.names: list[str] = [""]

    def encode(self, values) -> np.ndarray:
        """Codes of a sequence of names, in the narrowest kind they fit (uint8, uint16, int32): a column of
        blocks of several kinds is widened to the widest (:class:`~.columns.Columns`)."""
        if not len(values):
            return np.zeros(0, dtype=np.int32)
        codes, uniques = pd.factorize(as_objects(values))
        table = np.fromiter(map(self.add, uniques.tolist()), dtype=np.int32, count=len(uniques))
        kind = np.uint8 if table.max() < 1 << 8 else np.uint16 if len(self.names) <= 1 << 16 else np.int32
        return table.astype(kind)[codes]

    def add(self, name: str) -> int:
        code = self.code.get(name)
        if code is None:
            code = self.code[name] = len(self.names)
            self.names.append(name)
        return code

    def decode(self, codes: np.ndarray) -> np.ndarray:
        """The names of codes, as an object array sharing one string per name."""
        return as_objects(self.names)[codes]


def row_numbers(rows: np.ndarray) -> np.ndarray:
    """Row numbers (indices into the columns) as int32 while they fit, half the memory of int64."""
    return rows.astype(np.int32) if rows.size and rows.max() < 2**31 else rows


def line_numbers(values) -> np.ndarray:
    """Line numbers as int32 while they fit (a file of fewer than 2**31 lines), else int64."""
    numbers = np.asarray(values, dtype=np.int64)
    return numbers.astype(np.int32) if not numbers.size or numbers.max() < 2**31 else numbers


def job_ids(values) -> np.ndarray:
    """Job ids as a bytes array (UTF-8): a tenth of the memory of as many Python strings."""
    try:
        return np.array(values, dtype="S") if len(values) else np.zeros(0, dtype="S1")
    except UnicodeEncodeError:
        return np.array([value.encode() for value in values], dtype="S")


def compact(rows: list[tuple], names: Names) -> dict[str, np.ndarray]:
    """A block of rows (:data:`ROW` order, ``key`` a tuple of the key's parts) as arrays, names as codes."""
    columns = {}
    for name, values in columns_of(rows).items():
        if name in NUMBER_COLUMNS:
            columns[name] = np.asarray(values, dtype=float)
        elif name == "line":
            columns[name] = line_numbers(values)
        elif name in NAME_COLUMNS:
            columns[name] = names.encode(values)
        elif name == "job_id":
            columns[name] = job_ids(values)
        else:
            columns[name] = key_hash(*zip(*values)) if values else np.zeros(0, dtype=np.uint64)
    return columns


def concatenated(blocks: list[dict], give_back: bool = True) -> dict[str, np.ndarray]:
    """Blocks of columns (from :func:`compact`) joined end to end; each block is emptied as it goes.
    ``give_back=False``: the memory freed is kept for the next blocks (small ones, joined often)."""
    columns = Columns()
    for block in blocks:
        columns.append(block, len(block["line"]))
    blocks.clear()
    return columns.result(give_back=give_back)


def clock_seconds(text: str) -> float:
    """``HH:MM:SS``, ``MM:SS``, ``D:HH:MM:SS`` or plain seconds -> seconds (``ValueError`` otherwise)."""
    parts = text.strip().split(":")
    if len(parts) > 4 or not parts[-1]:
        raise ValueError(text)
    seconds = 0.0
    for unit, part in zip((86400, 3600, 60, 1)[4 - len(parts):], parts):
        seconds += float(part) * unit
    return seconds


class Memo(dict):
    """``read(text)`` remembered per text: logs repeat their limits and requests on every record."""

    def __init__(self, read):
        super().__init__()
        self.read = read

    def __missing__(self, text):
        value = self[text] = self.read(text)
        return value


def _known_or_minus_one(values: np.ndarray) -> np.ndarray:
    """Requested times as the trace model writes them: -1 where the log says none (as SWF does)."""
    values = np.array(values, dtype=float)   # its own copy, changed in place
    values[~(np.isfinite(values) & (values > 0))] = -1.0
    return values


def _whole(values: np.ndarray, scale: float = 1.0) -> np.ndarray:
    """Whole numbers as SWF writes them (rounded, -1 where unknown or negative): int32 while they fit.

    Made a segment at a time, so what a column of millions of jobs needs beside its values is its result.
    """
    values = np.asarray(values)
    out = np.empty(values.size, dtype=np.int32)
    for begin in range(0, values.size, SEGMENT):
        numbers = values[begin:begin + SEGMENT].astype(float) * scale
        whole = np.where(np.isfinite(numbers) & (numbers >= 0), np.rint(np.nan_to_num(numbers)), -1)
        if whole.size and whole.max() >= 2**31 and out.dtype == np.int32:
            out = out.astype(np.int64)
        out[begin:begin + whole.size] = whole
    return out


def _names(codes: np.ndarray, names: Names, compact: bool):
    """A name column of the frame: strings, or a categorical over the log's names when ``compact``."""
    if compact:
        kind = np.int16 if len(names.names) < 2**15 else np.int32   # the codes pandas keeps for that many names
        return pd.Categorical.from_codes(codes.astype(kind), categories=pd.Index(names.names, dtype=object))
    return pd.Series(names.decode(codes), dtype="string")


def build_workload(columns: dict, *, kind: str, fields: dict[str, str], skips: Skips, timezone: str, names: Names,
                   records: int | None = None, never_started: int = 0, notes: tuple[str, ...] = (),
                   compact: bool = False) -> Workload:
    """The workload of the records in ``columns`` (one array per name of :data:`ROW`; the dict is emptied).

    Names are codes of ``names``; ``key`` a hash per record (:func:`key_hash`),
    ``job_id`` bytes (:func:`job_ids`). ``fields`` names the log's own field for
    ``submit``, ``start``, ``end`` and ``procs`` (errors quote it); ``records``
    is how many records of the kind were read (default: the rows plus the
    malformed ones), ``never_started`` jobs the reader knows never started
    without a row (PBS ``D`` records), ``notes`` extra sentences (jobs still
    queued or running); ``key`` None: every record is its own job. ``compact``
    (for a conversion): names as categoricals, numbers the whole numbers SWF
    writes (memory as ``*_kb``: KB per CPU) and no ``job_id``, a fraction of the memory.
    """
    lines = columns.pop("line")
    submit, start, end = (np.asarray(columns.pop(name), dtype=float) for name in ("submit", "start", "end"))
    procs = np.asarray(columns.pop("procs"))
    procs = procs if procs.dtype.kind == "f" else procs.astype(float)   # float32 stays (its CPU counts are exact)
    keep = np.ones(len(lines), dtype=bool)
    parsed_skips = skips.count
    _check(~(submit >= 0), keep, lines, skips, fields["submit"], "the submission time is missing or negative")
    started = start > 0
    never = int((~started & keep).sum()) + never_started
    keep &= started
    _check(~(end >= start), keep, lines, skips, fields["end"], "the job ends before it starts (or has no end)")
    _check(~(procs >= 1), keep, lines, skips, fields["procs"], "the job ran on no CPU (a CPU count of 0)")
    _check(procs > 2**53, keep, lines, skips, fields["procs"], "the CPU count is too large")
    total = len(lines) + parsed_skips if records is None else records
    del lines
    index = row_numbers(np.flatnonzero(keep))
    del keep
    ids = columns.pop("job_id")
    key = columns.pop("key")
    repeated = repeated_keys(key[index], ids, index) if key is not None else np.zeros(index.size, dtype=bool)
    del key
    duplicates = int(repeated.sum())
    if duplicates:
        index = index[~repeated]
    del repeated
    count = index.size
    submitted = submit[index]   # in submission order, the jobs submitted together in the order read
    if count and not (submitted[1:] >= submitted[:-1]).all():
        order = row_numbers(np.argsort(submitted, kind="stable"))
        index, submitted = index[order], submitted[order]
        del order
    elif count == len(submit):   # every row, in order: the columns are taken as they are (they are this call's)
        index, submitted = slice(None), submit
    base = float(np.floor(submitted.min())) if count else 0.0
    number = _whole if compact else (lambda values, scale=1.0: values)
    started_at = start[index]
    del start
    wait = started_at - submitted
    frame = {"recorded_wait": number(np.maximum(wait, 0.0, out=wait))}
    del wait
    submitted -= base
    if compact and count:
        submitted -= submitted.min()
    frame["submit_time"] = number(submitted)
    del submitted, submit
    frame["run_time"] = number(np.subtract(end[index], started_at, out=started_at))
    del started_at, end
    frame["procs"] = procs[index].astype(np.int64)
    del procs
    frame["requested_time"] = number(_known_or_minus_one(np.asarray(columns.pop("requested_time"), float)[index]))
    text = {name: _names(columns.pop(name)[index], names, compact) for name in sorted(NAME_COLUMNS)}
    blank = _names(np.zeros(count, np.uint16), names, compact)
    jobs = {} if compact else {"job_id": pd.Series([value.decode() for value in ids[index].tolist()], dtype="string")}
    del ids
    jobs.update({"submit_time": frame["submit_time"], "run_time": frame["run_time"], "procs": frame["procs"],
                 "requested_time": frame["requested_time"], "user": text["user"], "queue": text["queue"],
                 "requirement": blank, "site": blank, "recorded_wait": frame["recorded_wait"], "group": text["group"],
                 "partition": text["partition"]})
    for name in ("memory_per_cpu_mb", "status", "account", "used_memory_per_cpu_mb", "avg_cpu_time"):
        if name in text:
            jobs[name] = text[name]
        elif compact and name.endswith("_mb"):   # whole KB per CPU, as SWF writes them
            jobs[name.replace("_mb", "_kb")] = _whole(np.asarray(columns.pop(name))[index], 1024)
        else:
            values = np.asarray(columns.pop(name), dtype=float)[index]
            jobs[name] = number(values if compact or values.strides[0] else values.copy())   # a frame's own column
    jobs = pd.DataFrame(jobs, copy=False)
    said = [f"{kind}, {_plural(len(jobs), 'job')} from {_plural(total, 'record')}"]
    said.append(f"{never:,} never started (not runs)")
    if duplicates:
        said.append(f"{_plural(duplicates, 'repeated record')} read once")
    if skips.count:
        said.append(f"{_plural(skips.count, 'malformed record')} skipped (first at line {skips.first})")
    return Workload(
        jobs=jobs, format=kind, header={"UnixStartTime": int(base), "TimeZoneString": timezone},
        dropped=never, skipped_lines=skips.count, first_skipped_line=skips.first,
        notes=(": ".join((said[0], ", ".join(said[1:]))), *notes),
    )
