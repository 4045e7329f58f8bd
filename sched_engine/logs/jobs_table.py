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

from ..batch.traces import TraceError, Workload, _jobs_frame

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


#: Columns of :data:`ROW` holding numbers, and names (one copy of each kept by :func:`compact`).
NUMBER_COLUMNS = frozenset(("submit", "start", "end", "procs", "requested_time", "memory_per_cpu_mb",
                            "used_memory_per_cpu_mb", "avg_cpu_time"))
NAME_COLUMNS = frozenset(("status", "user", "group", "queue", "partition", "account"))
#: Records a reader keeps as tuples before :func:`compact` turns them into columns.
BLOCK = 65536


def text_lines(text: str, *, keep_ends: bool = False):
    """The lines of ``text`` split at ``\\n`` only (a carriage return inside a field stays), one at a time.

    Unlike ``text.split("\\n")`` no list of every line is built: a large log
    costs its text and a line, not twice its text.
    """
    start = 0
    while start < len(text):
        end = text.find("\n", start)
        if end < 0:
            yield text[start:]
            return
        yield text[start:end + 1] if keep_ends else text[start:end]
        start = end + 1


def compact(rows: list[tuple], names: dict[str, str]) -> dict[str, np.ndarray]:
    """A block of rows (:data:`ROW` order) as arrays: numbers as floats, each name stored once in ``names``."""
    columns = {}
    for name, values in columns_of(rows).items():
        if name in NUMBER_COLUMNS:
            columns[name] = np.asarray(values, dtype=float)
        elif name == "line":
            columns[name] = np.asarray(values, dtype=np.int64)
        else:
            columns[name] = as_objects([names.setdefault(v, v) for v in values] if name in NAME_COLUMNS else values)
    return columns


def concatenated(blocks: list[dict]) -> dict[str, np.ndarray]:
    """Blocks of columns (from :func:`compact`, or lists) joined end to end."""
    return {name: np.concatenate([block[name] if isinstance(block[name], np.ndarray) else as_objects(block[name])
                                  for block in blocks]) for name in blocks[0]}


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


def as_objects(values) -> np.ndarray:
    """A column as a one-dimensional object array (a list of tuples stays a list of tuples)."""
    if isinstance(values, np.ndarray) and values.dtype == object:
        return values
    if isinstance(values, pd.Series):
        return values.to_numpy(dtype=object)
    array = np.empty(len(values), dtype=object)
    array[:] = values
    return array


def _known_or_minus_one(values: np.ndarray) -> np.ndarray:
    """Requested times as the trace model writes them: -1 where the log says none (as SWF does)."""
    return np.where(np.isfinite(values) & (values > 0), values, -1.0)


def build_workload(columns: dict, *, kind: str, fields: dict[str, str], skips: Skips, timezone: str,
                   records: int | None = None, never_started: int = 0, notes: tuple[str, ...] = ()) -> Workload:
    """The workload of the records in ``columns`` (one list, array or Series per name of :data:`ROW`).

    ``fields`` names the log's own field for ``submit``, ``start``, ``end``
    and ``procs`` (errors quote it); ``records`` is how many records of the
    kind were read (default: the rows plus the malformed ones),
    ``never_started`` jobs the reader knows never started without a row
    (PBS ``D`` records), ``notes`` extra sentences (jobs still queued or running).
    """
    lines = np.asarray(columns["line"], dtype=np.int64)
    submit, start, end = (np.asarray(columns[name], dtype=float) for name in ("submit", "start", "end"))
    procs = np.asarray(columns["procs"], dtype=float)
    keep = np.ones(len(lines), dtype=bool)
    parsed_skips = skips.count
    _check(~(submit >= 0), keep, lines, skips, fields["submit"], "the submission time is missing or negative")
    started = start > 0
    never = int((~started & keep).sum()) + never_started
    keep &= started
    _check(~(end >= start), keep, lines, skips, fields["end"], "the job ends before it starts (or has no end)")
    _check(~(procs >= 1), keep, lines, skips, fields["procs"], "the job ran on no CPU (a CPU count of 0)")
    _check(procs > 2**53, keep, lines, skips, fields["procs"], "the CPU count is too large")
    index = np.flatnonzero(keep)
    repeated = pd.Series(as_objects(columns["key"])[index]).duplicated(keep="last").to_numpy(dtype=bool)
    duplicates = int(repeated.sum())
    index = index[~repeated]
    index = index[np.argsort(submit[index], kind="stable")]
    base = float(np.floor(submit[index].min())) if index.size else 0.0

    def pick(name: str) -> np.ndarray:
        return as_objects(columns[name])[index]

    def numbers(name: str) -> np.ndarray:
        return np.asarray(columns[name], dtype=float)[index] if index.size else np.zeros(0)

    jobs = _jobs_frame(
        pick("job_id"), submit[index] - base, end[index] - start[index], procs[index].astype(np.int64),
        _known_or_minus_one(numbers("requested_time")), pick("user"), pick("queue"), [""] * index.size, [""] * index.size,
        {"recorded_wait": np.maximum(start[index] - submit[index], 0.0), "group": pick("group"),
         "partition": pick("partition"), "memory_per_cpu_mb": numbers("memory_per_cpu_mb")},
    )
    jobs["status"] = pd.Series(pick("status"), dtype="string")
    jobs["account"] = pd.Series(pick("account"), dtype="string")
    jobs["used_memory_per_cpu_mb"] = numbers("used_memory_per_cpu_mb")
    jobs["avg_cpu_time"] = numbers("avg_cpu_time")
    total = len(lines) + parsed_skips if records is None else records
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
