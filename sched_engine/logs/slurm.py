"""Slurm accounting as ``sacct --parsable2`` prints it; ``docs/site-logs.md`` has the command and every rule.

* The header names the fields in any order (``--format=ALL`` too) and may come again or change; without one
  they are :data:`DEFAULT_FIELDS`. ``JobID``, ``Submit``, ``Start``, ``End`` and ``NCPUS`` (or ``AllocCPUS``,
  ``cpu=`` of ``AllocTRES``) are needed. A line whose ``JobID`` field is a job id starts a record; other lines
  go on with it (newlines in a job name); surplus ``|`` go to free text (:func:`mend`). A record that cannot be
  made whole, or a bad value, is skipped and counted with ``skip_malformed``, else a ``TraceError`` (file, line, field).
* Steps (``123.batch``, ``123.0``) are dropped; array tasks ``123_4`` and het components ``123+0`` are jobs keyed
  on that id and the cluster, never ``JobIDRaw``; a key's records count once (the last that ended, else the last).
  No ``Start``, or ``NodeList`` ``None assigned``: never started. Pending and running jobs are left out and said.
* Times are in ``timezone`` (UTC by default; a repeated hour is read as its first pass); ``Unknown``/``None``
  are absent. ``Group``, else ``Account``, is the group; ``Partition`` is queue and partition.
"""

from __future__ import annotations

import re
from operator import itemgetter
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np

from ..batch.traces import TraceError, Workload
from .columns import LAST_SECOND, NO_TIME, epoch_codes, epoch_seconds, exact_float32, give_back_freed_memory
from .entry import entry_points
from .jobs_table import (
    NAN,
    Columns,
    Memo,
    Names,
    Skips,
    build_workload,
    job_ids,
    key_hash,
    keyed_twice,
    line_numbers,
    repeated_keys,
    row_numbers,
    second_hash,
)
from .slurm_values import (  # noqa: F401 -- duration_seconds and request_memory are the module's own API too
    _JOB_ID,
    _NAME,
    _TIME,
    ABSENT,
    FREE_TEXT,
    REFUSED,
    STATUS,
    _number,
    _reads,
    _seconds,
    duration_seconds,
    mend,
    request_memory,
    tres_value,
)
from .stream import line_blocks

KIND = "sacct"
#: The fields of a file without a header: those of the documented command, in its order.
DEFAULT_FIELDS = ("JobID", "Cluster", "Partition", "Account", "Group", "User", "Submit", "Start", "End", "State",
                  "NNodes", "NCPUS", "ReqMem", "ReqTRES", "Timelimit", "NodeList", "JobName")
#: Fields read, by the lower-case name of the header (first present wins for ``ncpus``/``timelimit``).
WANTED = ("jobid", "cluster", "partition", "account", "group", "user", "submit", "start", "end", "state", "nnodes",
          "ncpus", "alloccpus", "alloctres", "reqmem", "reqtres", "timelimit", "timelimitraw", "nodelist", "totalcpu")
PIECE = 1 << 20   # characters of text read into lines at a time: a piece's lines and fields are what reading holds beside the columns


def header_of(line: str, *, first: bool = False) -> list[str] | None:
    """A header's names (``--parsable``'s trailing ``|`` gives an empty last one); past the first line it names JobID."""
    names = line.rstrip("\r").split("|")
    if len(names) < 2 or any(not _NAME.fullmatch(name) for name in (names[:-1] if names[-1] == "" else names)):
        return None
    return names if first or "jobid" in (name.lower() for name in names) else None


def sniff(name: str, head: str) -> bool:
    """A header of sacct's fields among ``|``, or a row of :data:`DEFAULT_FIELDS` with a job id and times."""
    for line in head.split("\n", 50)[:50]:
        if not line.strip():
            continue
        names = header_of(line, first=True)
        if names is not None:   # a header, though it may lack a field the reader then names
            return bool({"jobid", "submit", "start", "end", "ncpus"} & {name.lower() for name in names})
        parts = line.split("|")
        return (len(parts) >= len(DEFAULT_FIELDS) and re.fullmatch(_JOB_ID, parts[0]) is not None
                and re.fullmatch(_TIME, parts[6]) is not None and re.fullmatch(_TIME, parts[7]) is not None)
    return False


def _require(names: list[str], source: str, header_line: int | None) -> str:
    """The log's spelling of its CPU field; a needed field the header lacks is an error of the whole file."""
    spelled = {name.lower(): name for name in names}
    for needed in ("JobID", "Submit", "Start", "End"):
        if needed.lower() not in spelled:
            raise TraceError(needed, "the header lacks this field, which every job needs", source=source,
                             line=header_line)
    for cpu in ("ncpus", "alloccpus", "alloctres"):
        if cpu in spelled:
            return spelled[cpu]
    raise TraceError("NCPUS", "the header names no allocated CPU count (NCPUS, AllocCPUS or AllocTRES)",
                     source=source, line=header_line)


def _zone(timezone: str, source: str) -> str | None:
    try:
        return None if timezone in ("UTC", "Etc/UTC") else ZoneInfo(timezone).key
    except (ZoneInfoNotFoundError, ValueError):
        raise TraceError("timezone", f"unknown time zone {timezone!r} (a tz database name such as Europe/Prague)",
                         source=source) from None


class _Reader:
    """Records of sacct output, read piece by piece into numeric and text columns (only those the jobs need)."""

    def __init__(self, source: str, skips: Skips, zone: str | None, compact: bool = False):
        self.source, self.skips, self.zone, self.compact = source, skips, zone, compact
        self.spelled: dict[str, str] = {}
        self.carry: tuple[int, list[str]] = (1, [])
        self.parts = Columns()
        self.vocabulary = Names()
        self.records = self.steps = 0
        self.memo = {"number": _reads(_number), "limit": _reads(duration_seconds), "used": _reads(duration_seconds),
                     "memory": _reads(request_memory, 0), "per": _reads(request_memory, 1),
                     "tres": Memo(lambda text: tres_value(text, "mem")), "cpu": Memo(lambda text: tres_value(text, "cpu")),
                     "state": Memo(lambda text: text.split(" ", 1)[0])}
        self.use(list(DEFAULT_FIELDS), None)   # until a header says otherwise

    def use(self, names: list[str], line: int | None) -> None:
        """Read the records that follow with the fields of this header."""
        self.cpu_name = _require(names, self.source, line)
        self.names = tuple(names)
        lower = [name.lower() for name in names]
        for name, spelled in zip(lower, names):
            self.spelled.setdefault(name, spelled)
        self.at = lower.index("jobid")
        self.start = re.compile(r"(?:[^|\n]*\|){%d}%s(?:\||$)" % (self.at, _JOB_ID)).match
        self.present = [name for name in WANTED if name in lower]
        self.getter = itemgetter(*(lower.index(name) for name in self.present))

    def feed(self, number: int, lines: list[str], final: bool = False) -> None:
        carried_at, carried = self.carry
        if carried:
            number, lines = carried_at, carried + lines
        body, width = (lines if final else lines[:-1]), len(self.names) - 1
        if self.at == 0 and all(line.count("|") == width and line[:1].isdigit() for line in body):
            self.take(list(range(number, number + len(body))), [line.split("|") for line in body])
            self.carry = (number + len(body), [] if final else lines[-1:])
            return
        groups: list[list] = []   # [index of the first line, its lines...]
        for k, line in enumerate(lines):
            if self.start(line):
                groups.append([k, line])
            elif not line.strip():
                continue
            elif line[:1].isalpha() and (names := header_of(line, first=not groups and not self.records)):
                self.close_groups(number, groups)
                groups = []
                self.use(names, number + k)
            elif groups:
                groups[-1].append(line)
            else:
                self.skips.error(self.names[self.at], f"{line[:40]!r} does not start a record with a job id",
                                 number + k)
        last = groups.pop() if groups and not final else None
        self.close_groups(number, groups)
        self.carry = (number + last[0], lines[last[0]:]) if last else (number + len(lines), [])

    def close_groups(self, number: int, groups: list[list]) -> None:
        """Make each group of lines one record (mended when it must be) and take those that are whole."""
        width = len(self.names) - 1
        numbers, rows = [], []
        for first, *parts in groups:
            record = parts[0] if len(parts) == 1 else "\n".join(parts)
            fields = record.split("|") if len(parts) == 1 and record.count("|") == width else mend(record, self.names)
            if fields is None:
                found = record.count("|") + 1
                field = self.names[found] if found <= width else next(
                    (name for name in self.names if name.lower() in FREE_TEXT), self.names[-1])
                self.skips.error(field, f"the record has {found} fields where the header names {width + 1}, and no "
                                        "reading of its free text makes it whole", number + first)
                self.records += 1
                continue
            numbers.append(number + first)
            rows.append(fields)
        self.take(numbers, rows)

    def take(self, numbers: list[int], rows: list[list[str]]) -> None:
        """Columns of a piece's whole records: steps dropped, values read, a bad value reported by field."""
        self.records += len(rows)
        at = self.at
        if any("." in row[at] for row in rows):
            kept = [i for i, row in enumerate(rows) if "." not in row[at]]
            self.steps += len(rows) - len(kept)
            numbers, rows = [numbers[i] for i in kept], [rows[i] for i in kept]
        picked = dict(zip(self.present, zip(*map(self.getter, rows))))
        blank = ("",) * len(rows)
        if "ncpus" not in picked and rows:   # AllocCPUS before Slurm 15.08, else cpu= of AllocTRES
            picked["ncpus"] = picked.get("alloccpus") or [
                format(self.memo["cpu"][v], "g").replace("nan", "") for v in picked["alloctres"]]
        picked.setdefault("timelimit", picked.get("timelimitraw", blank))
        valid = np.ones(len(rows), dtype=bool)
        columns = {"line": line_numbers(numbers)}

        def read(memo: str, field: str, why: str) -> np.ndarray:
            values = picked.get(field, blank)
            out = np.array(list(map(self.memo[memo].__getitem__, values)), dtype=float)
            for row in np.flatnonzero(out == REFUSED):
                self.report(valid, row, numbers, field, values[row], why)
            return np.where(out == REFUSED, np.nan, out)

        for name in ("submit", "start", "end"):   # held as uint32 codes (columns.epoch_codes)
            seconds, bad = _seconds(picked.get(name, blank), self.zone)
            for row in np.flatnonzero(bad):
                self.report(valid, row, numbers, name, picked[name][row], "is not a time (YYYY-MM-DDTHH:MM:SS)")
            for row in np.flatnonzero(seconds >= LAST_SECOND):
                self.report(valid, row, numbers, name, picked[name][row], "is past 2106")
            columns[name] = epoch_codes(np.where(seconds >= LAST_SECOND, np.nan, seconds))
        procs = read("number", "ncpus", "is not a CPU count")
        columns["procs"] = exact_float32(procs)
        nodes = read("number", "nnodes", "is not a node count")
        columns["limit"] = exact_float32(read("limit", "timelimit", "is not a time limit"))
        memory = read("memory", "reqmem", "is not a memory request (such as 4000Mc or 8Gn)")
        per = np.array(list(map(self.memo["per"].__getitem__, picked.get("reqmem", blank))), dtype="U1")
        tres = np.array([self.memo["tres"][v] for v in picked.get("reqtres", blank)], dtype=float)
        used = np.array([self.memo["used"][v] if ":" in v else NAN for v in picked["totalcpu"]], dtype=float) \
            if "totalcpu" in picked else None   # the documented command asks for no CPU time: nothing kept
        self.memo["used"].clear()   # CPU times are mostly unique: remembered for one piece only
        per_cpu = np.maximum(np.nan_to_num(procs), 1.0)
        memory = np.where(per == "n", memory * np.where(nodes >= 1, nodes, 1.0), memory)
        memory = np.where(per == "c", memory, memory / per_cpu)
        columns["memory"] = exact_float32(np.where(np.isnan(memory), tres / per_cpu, memory))
        columns["cpu_time"] = None if used is None else np.where(used == REFUSED, np.nan, used) / per_cpu
        states = list(map(self.memo["state"].__getitem__, picked.get("state", blank)))
        columns["status"] = self.vocabulary.encode([STATUS.get(state, "failed") for state in states])
        columns["pending"] = np.array([state == "PENDING" for state in states], dtype=bool)
        columns["assigned"] = np.array([v != "None assigned" for v in picked.get("nodelist", blank)], dtype=bool)
        for name in ("cluster", "partition", "account", "group", "user"):
            columns[name] = self.vocabulary.encode(picked.get(name, blank))
        columns["group"] = np.where(columns["group"] != 0, columns["group"], columns["account"])
        columns["jobid"] = job_ids(picked.get("jobid", blank))
        columns["hash"] = key_hash(columns["jobid"]) if rows else np.zeros(0, dtype=np.uint64)
        if self.compact:   # a conversion writes no job id: a second, independent hash of it confirms a key's match
            columns["jobid"] = second_hash(columns["jobid"])
        columns["valid"] = valid
        if used is None:
            del columns["cpu_time"]
        self.parts.append(columns, len(rows))

    def report(self, valid: np.ndarray, row: int, numbers: list[int], field: str, value: str, why: str) -> None:
        """One bad value: raised, or its record counted and left out with ``skip_malformed``."""
        if valid[row]:
            self.skips.error(self.spelled.get(field, field), f"{value!r} {why}", numbers[row])
            valid[row] = False

    def columns(self) -> dict[str, np.ndarray]:
        if not self.parts.arrays:
            self.take([], [])
        return self.parts.result(names=("cpu_time",))


def _read(pieces, *, source: str, timezone: str, skip_malformed: bool, compact: bool) -> Workload:
    """The body of :func:`read`: whole records gathered piece by piece, then one job per key."""
    reader = _Reader(source, Skips(source, skip_malformed), _zone(timezone, source), compact)
    for number, lines in line_blocks(pieces):
        reader.feed(number, lines)
    reader.feed(reader.carry[0], [], final=True)
    return _workload(reader, timezone, compact)


def _workload(reader: _Reader, timezone: str, compact: bool) -> Workload:
    """One job per key from the columns read: what never ran or is still to run counted, not kept."""
    give_back_freed_memory()   # what reading the pieces held, before the columns are joined
    c = reader.columns()
    started = (c["start"] != NO_TIME) & c.pop("assigned")
    ended = started & (c["end"] != NO_TIME)
    waiting = (c.pop("pending") & ~started) | (started & ~ended)
    cluster = c.pop("cluster")
    named = cluster[cluster != 0]
    several = bool(named.size) and bool((named != named[0]).any())
    del named
    keys = c.pop("hash") ^ (cluster.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)) if several else c.pop("hash")
    valid = c.pop("valid")
    ids = c.pop("jobid")
    # The valid records whose key another has too (mostly none): per key the last that ended counts, else the
    # last (those that did not end are ranked first); only they are sorted by key.
    rows = keyed_twice(keys) if valid.all() else np.flatnonzero(valid)[keyed_twice(keys[valid])]
    last = ended[rows]
    rows = np.concatenate((rows[~last], rows[last]))
    dropped = rows[repeated_keys(keys[rows], ids, rows)]
    del keys, rows, last
    valid[dropped] = False
    repeated = dropped.size
    unfinished = int((waiting & valid).sum())
    valid &= ~waiting
    del waiting, ended
    every = bool(valid.all())   # every record is a job: the columns are taken as they are
    chosen = slice(None) if every else row_numbers(np.flatnonzero(valid))
    count = int(valid.sum())
    del valid
    if several and not compact:
        names = reader.vocabulary.names
        ids = job_ids([f"{names[a]}:{b.decode()}" for a, b in zip(cluster[chosen].tolist(), ids[chosen].tolist())])
    else:
        ids = None if compact else ids if every else ids[chosen]   # a conversion writes no job id
    del cluster

    def take(name: str) -> np.ndarray:
        """A column for the chosen rows, its whole self let go before the next is taken (a broadcast stays one)."""
        values = c.pop(name)
        return values if every or not values.strides[0] else values[chosen]

    start = epoch_seconds(take("start"))
    start[~(started if every else started[chosen])] = np.nan
    del started
    columns = {"line": take("line"), "key": None, "job_id": ids, "submit": epoch_seconds(take("submit")),
               "start": start}
    del ids, start
    columns["end"] = epoch_seconds(take("end"))
    for name, column in (("procs", "procs"), ("requested_time", "limit"),
                         ("memory_per_cpu_mb", "memory"), ("avg_cpu_time", "cpu_time"), ("status", "status"),
                         ("user", "user"), ("group", "group"), ("partition", "partition"), ("account", "account")):
        columns[name] = take(column)
        if not columns[name].strides[0]:
            columns[name] = columns[name][:count]
    columns["queue"] = columns["partition"]
    columns["used_memory_per_cpu_mb"] = np.broadcast_to(np.float64(np.nan), (count,))
    c.clear()
    give_back_freed_memory()   # what choosing the jobs held, before the frame is built
    notes = tuple(note for count, note in (
        (reader.steps, f"{reader.steps:,} job step record(s) (123.batch, 123.0) dropped: a job is its allocation"),
        (repeated, f"{repeated:,} repeated record(s) of one job (requeued, or listed twice) read once"),
        (unfinished, f"{unfinished:,} job(s) pending or running when the log was written: left out")) if count)
    fields = {name: reader.spelled.get(name, name.capitalize()) for name in ("submit", "start", "end")}
    return build_workload(columns, kind=KIND, fields={**fields, "procs": reader.cpu_name}, skips=reader.skips,
                          timezone=timezone, names=reader.vocabulary, records=reader.records, notes=notes, compact=compact)


parse, read = entry_points(_read, what="``sacct --parsable2`` output", piece=PIECE)
