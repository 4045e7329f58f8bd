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
from functools import lru_cache
from operator import itemgetter
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np
import pandas as pd

from ..batch.traces import TraceError, Workload
from .jobs_table import NAN, Memo, Skips, build_workload, paused_gc

KIND = "sacct"
#: The fields of a file without a header: those of the documented command, in its order.
DEFAULT_FIELDS = ("JobID", "Cluster", "Partition", "Account", "Group", "User", "Submit", "Start", "End", "State",
                  "NNodes", "NCPUS", "ReqMem", "ReqTRES", "Timelimit", "NodeList", "JobName")
#: Fields of free text, where a ``|`` or a newline of the user's own may stand.
FREE_TEXT = frozenset({"jobname", "constraints", "submitline", "comment", "admincomment", "systemcomment", "workdir",
                       "wckey", "container", "stdin", "stdout", "stderr", "extra", "mcslabel", "reservation",
                       "reason", "qosreq"})
#: Fields read, by the lower-case name of the header (first present wins for ``ncpus``/``timelimit``).
WANTED = ("jobid", "cluster", "partition", "account", "group", "user", "submit", "start", "end", "state", "nnodes",
          "ncpus", "alloccpus", "alloctres", "reqmem", "reqtres", "timelimit", "timelimitraw", "nodelist", "totalcpu")
ABSENT = frozenset({"", "Unknown", "None", "N/A"})
STATUS = {"COMPLETED": "completed", "TIMEOUT": "timeout", "DEADLINE": "timeout", "CANCELLED": "cancelled",
          "PREEMPTED": "cancelled", "REQUEUED": "cancelled", "REVOKED": "cancelled"}
NO_LIMIT = frozenset({"", "UNLIMITED", "Partition_Limit", "NONE", "INVALID"})
_JOB_ID = r"\d+(?:_\d+|_\[[0-9,\-%]*\]|\+\d+)?(?:\.[\w\-]+)?"
_TIME = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d|Unknown|None|"
_CHECKS = {"jobid": _JOB_ID, "submit": _TIME, "start": _TIME, "end": _TIME, "eligible": _TIME, "ncpus": r"\d*",
           "alloccpus": r"\d*", "reqcpus": r"\d*", "nnodes": r"\d*", "uid": r"\d*", "gid": r"\d*",
           "elapsedraw": r"\d*", "state": r"[A-Z_]*(?: by \d+)?"}
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_REQMEM = re.compile(r"(\d+(?:\.\d+)?)([KMGTP]?)([cn]?)")
_TRES = {"cpu": re.compile(r"(?:^|,)cpu=(\d+)"), "mem": re.compile(r"(?:^|,)mem=(\d+(?:\.\d+)?)([KMGTP]?)")}
_MB = {"K": 2.0**-10, "": 1.0, "M": 1.0, "G": 2.0**10, "T": 2.0**20, "P": 2.0**30}
REFUSED = float("-inf")   # what a memoised reader gives for a value it cannot read
PIECE = 1 << 23   # characters of text split into lines at a time
_UNLIMITED_TIME = re.compile(r"(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+(?:\.\d+)?))?")


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


def duration_seconds(text: str) -> float:
    """``D-HH:MM:SS``, ``D-HH:MM``, ``D-HH``, ``HH:MM:SS``, ``MM:SS`` or minutes -> seconds; NaN without a limit."""
    text = text.strip()
    if text in NO_LIMIT:
        return NAN
    match = _UNLIMITED_TIME.fullmatch(text)
    if match is None:
        raise ValueError(text)
    days, first, second, third = match.groups()
    if days is not None:   # D-HH[:MM[:SS]]
        return int(days) * 86400 + int(first) * 3600 + int(second or 0) * 60 + float(third or 0)
    if third is not None:
        return int(first) * 3600 + int(second) * 60 + float(third)
    return int(first) * 60 + (float(second) if second is not None else 0.0)


def request_memory(text: str) -> tuple[float, str]:
    """``ReqMem`` as ``(MB, per)`` with ``per`` ``c`` (CPU), ``n`` (node) or ``t`` (the job); NaN when not asked."""
    text = text.strip()
    if text in ABSENT:
        return NAN, "t"
    match = _REQMEM.fullmatch(text)
    if match is None:
        raise ValueError(text)
    number, unit, per = match.groups()
    megabytes = float(number) * _MB[unit]
    for flag in (2.0**63, 2.0**31):   # Slurm's MEM_PER_CPU bit, left in the number by some releases
        if megabytes >= flag:
            megabytes, per = megabytes - flag, "c"
            break
    return (megabytes if megabytes > 0 else NAN), per or "t"


def tres_value(text: str, kind: str) -> float:
    """``cpu=`` (a count) or ``mem=`` (MB) of a TRES list such as ``billing=4,cpu=4,mem=16G,node=1``; NaN if absent."""
    match = _TRES[kind].search(text)
    if match is None:
        return NAN
    return float(match.group(1)) * (_MB[match.group(2)] if kind == "mem" else 1.0)


@lru_cache(maxsize=64)
def _rules(names: tuple[str, ...]) -> list[re.Pattern | None]:
    """Per field of a header: None for free text, else the pattern it must match (any text without a newline)."""
    lower = [name.lower() for name in names]
    return [None if name in FREE_TEXT else re.compile(_CHECKS.get(name, r"[^\n]*")) for name in lower]


def mend(record: str, names: tuple[str, ...]) -> list[str] | None:
    """A record's fields, its surplus ``|`` (and newlines) in free-text fields so that every other field reads
    well, the earliest free field taking what is left open; None when no way does. ``shifts[i]``: how far past
    its own place field ``i`` can start, given the fields before it."""
    parts = record.split("|")
    rules, extra = _rules(names), len(parts) - len(names)
    if extra < 0:
        return None
    shifts = [{0}]
    for i, rule in enumerate(rules):
        shifts.append({t for s in shifts[i] for t in range(s, extra + 1)} if rule is None else
                      {s for s in shifts[i] if rule.fullmatch(parts[i + s])})
    if extra not in shifts[-1]:
        return None
    fields, end = [], extra
    for i in range(len(rules) - 1, -1, -1):   # back from the end: each free field takes as little as it can
        start = end if rules[i] is not None else max(s for s in shifts[i] if s <= end)
        fields.append("|".join(parts[i + start:i + end + 1]))
        end = start
    return fields[::-1]


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


def _seconds(values, zone: str | None) -> tuple[np.ndarray, np.ndarray]:
    """Seconds since 1970 of local times (NaN where absent) and a mask of values that are no time at all."""
    try:   # numpy reads ISO times in C; a value it refuses sends the piece through pandas to find it
        stamps = pd.DatetimeIndex(np.array([v if v[:1].isdigit() else "NaT" for v in values], dtype="M8[s]"))
        bad = np.zeros(len(values), dtype=bool)
    except ValueError:
        stamps = pd.DatetimeIndex(pd.to_datetime(pd.Series(values, dtype=object), format="%Y-%m-%dT%H:%M:%S",
                                                 errors="coerce"))
        bad = stamps.isna() & ~np.fromiter((v in ABSENT for v in values), dtype=bool, count=len(values))
    if zone is not None:
        stamps = stamps.tz_localize(zone, ambiguous=np.ones(len(stamps), dtype=bool), nonexistent="shift_forward")
    seconds = stamps.as_unit("s").asi8.astype(float)
    seconds[stamps.isna()] = np.nan
    return seconds, bad


def _number(text: str) -> float:
    return NAN if text in ABSENT else float(int(text))


def _reads(read, part: int | None = None):
    """``read`` of a text (its ``part`` when it gives a tuple) remembered per text; :data:`REFUSED` when it refuses it."""
    def safely(text: str):
        try:
            value = read(text)
        except (ValueError, OverflowError):
            return REFUSED
        return value if part is None else value[part]
    return Memo(safely)


def _shared(values) -> np.ndarray:
    """Texts as an object array in which equal texts are one object (a log repeats its names a million times)."""
    codes, uniques = pd.factorize(np.array(values, dtype=object))
    return uniques[codes] if len(codes) else np.zeros(0, dtype=object)


def _lines(text: str):
    """``(number of its first line, lines)`` for pieces of ``text`` of about :data:`PIECE` characters."""
    position, number = 0, 1
    while position <= len(text):
        end = text.find("\n", position + PIECE) % (len(text) + 1)   # -1 (no more line ends): the whole rest
        piece = text[position:end]
        lines = piece.split("\n")
        if "\r" in piece:   # CRLF files; a carriage return inside a job name stays
            lines = [line[:-1] if line.endswith("\r") else line for line in lines]
        yield number, lines
        number, position = number + len(lines), end + 1


class _Reader:
    """Records of sacct output, read piece by piece into numeric and text columns (only those the jobs need)."""

    def __init__(self, source: str, skips: Skips, zone: str | None):
        self.source, self.skips, self.zone = source, skips, zone
        self.spelled: dict[str, str] = {}
        self.carry: tuple[int, list[str]] = (1, [])
        self.parts: dict[str, list] = {}
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
        columns = {"line": np.array(numbers, dtype=np.int64)}

        def read(memo: str, field: str, why: str) -> np.ndarray:
            values = picked.get(field, blank)
            out = np.array(list(map(self.memo[memo].__getitem__, values)), dtype=float)
            for row in np.flatnonzero(out == REFUSED):
                self.report(valid, row, numbers, field, values[row], why)
            return np.where(out == REFUSED, np.nan, out)

        for name in ("submit", "start", "end"):
            columns[name], bad = _seconds(picked.get(name, blank), self.zone)
            for row in np.flatnonzero(bad):
                self.report(valid, row, numbers, name, picked[name][row], "is not a time (YYYY-MM-DDTHH:MM:SS)")
        columns["procs"] = read("number", "ncpus", "is not a CPU count")
        columns["nodes"] = read("number", "nnodes", "is not a node count")
        columns["limit"] = read("limit", "timelimit", "is not a time limit")
        columns["memory"] = read("memory", "reqmem", "is not a memory request (such as 4000Mc or 8Gn)")
        columns["per"] = _shared(list(map(self.memo["per"].__getitem__, picked.get("reqmem", blank))))
        columns["tres_memory"] = np.array([self.memo["tres"][v] for v in picked.get("reqtres", blank)], dtype=float)
        used = np.array([self.memo["used"][v] if ":" in v else NAN for v in picked.get("totalcpu", blank)])
        columns["used_cpu"] = np.where(used == REFUSED, np.nan, used)
        self.memo["used"].clear()   # CPU times are mostly unique: remembered for one piece only
        columns["state"] = _shared(list(map(self.memo["state"].__getitem__, picked.get("state", blank))))
        columns["assigned"] = np.array([v != "None assigned" for v in picked.get("nodelist", blank)], dtype=bool)
        for name in ("cluster", "partition", "account", "group", "user"):
            columns[name] = _shared(picked.get(name, blank))
        columns["jobid"] = np.array(picked.get("jobid", blank), dtype=object)
        columns["valid"] = valid
        for name, values in columns.items():
            self.parts.setdefault(name, []).append(values)

    def report(self, valid: np.ndarray, row: int, numbers: list[int], field: str, value: str, why: str) -> None:
        """One bad value: raised, or its record counted and left out with ``skip_malformed``."""
        if valid[row]:
            self.skips.error(self.spelled.get(field, field), f"{value!r} {why}", numbers[row])
            valid[row] = False

    def columns(self) -> dict[str, np.ndarray]:
        if not self.parts:
            self.take([], [])
        return {name: np.concatenate(parts) for name, parts in self.parts.items()}


def parse(text: str, *, source: str, timezone: str = "UTC", skip_malformed: bool = False) -> Workload:
    """The jobs of ``sacct --parsable2`` output (see the module docstring)."""
    reader = _Reader(source, Skips(source, skip_malformed), _zone(timezone, source))
    with paused_gc():
        for number, lines in _lines(text):
            reader.feed(number, lines)
        reader.feed(reader.carry[0], [], final=True)
        return _workload(reader, timezone)


def _workload(reader: _Reader, timezone: str) -> Workload:
    """One job per key from the columns read: what never ran or is still to run counted, not kept."""
    c = reader.columns()
    started = ~np.isnan(c["start"]) & c["assigned"].astype(bool)
    pending = (c["state"] == "PENDING") & ~started
    ended = started & ~np.isnan(c["end"])
    waiting = pending | (started & ~ended)
    several = len(set(c["cluster"].tolist()) - {""}) > 1
    keys = np.array([f"{a}:{b}" for a, b in zip(c["cluster"], c["jobid"])], dtype=object) if several else c["jobid"]
    order = np.flatnonzero(c["valid"].astype(bool))
    order = order[np.argsort(ended[order], kind="stable")]   # per key: the last record that ended, else the last
    chosen = np.sort(order[~pd.Series(keys[order], dtype=object).duplicated(keep="last").to_numpy()])
    repeated = order.size - chosen.size
    unfinished = int(waiting[chosen].sum())
    chosen = chosen[~waiting[chosen]]
    per_cpu = np.maximum(np.nan_to_num(c["procs"]), 1.0)
    nodes = np.where(c["nodes"] >= 1, c["nodes"], 1.0)
    memory = np.where(c["per"] == "n", c["memory"] * nodes, c["memory"])
    memory = np.where(c["per"] == "c", memory, memory / per_cpu)
    memory = np.where(np.isnan(memory), c["tres_memory"] / per_cpu, memory)
    group = np.where(c["group"] != "", c["group"], c["account"])
    columns = {
        "line": c["line"][chosen], "key": chosen, "job_id": keys[chosen], "submit": c["submit"][chosen],
        "start": np.where(started, c["start"], np.nan)[chosen], "end": c["end"][chosen], "procs": c["procs"][chosen],
        "requested_time": c["limit"][chosen], "memory_per_cpu_mb": memory[chosen],
        "used_memory_per_cpu_mb": np.full(chosen.size, np.nan), "avg_cpu_time": (c["used_cpu"] / per_cpu)[chosen],
        "status": np.array([STATUS.get(state, "failed") for state in c["state"][chosen]], dtype=object),
        "user": c["user"][chosen], "group": group[chosen], "queue": c["partition"][chosen],
        "partition": c["partition"][chosen], "account": c["account"][chosen],
    }
    notes = tuple(note for count, note in (
        (reader.steps, f"{reader.steps:,} job step record(s) (123.batch, 123.0) dropped: a job is its allocation"),
        (repeated, f"{repeated:,} repeated record(s) of one job (requeued, or listed twice) read once"),
        (unfinished, f"{unfinished:,} job(s) pending or running when the log was written: left out")) if count)
    fields = {name: reader.spelled.get(name, name.capitalize()) for name in ("submit", "start", "end")}
    return build_workload(columns, kind=KIND, fields={**fields, "procs": reader.cpu_name},
                          skips=reader.skips, timezone=timezone, records=reader.records, notes=notes)
