"""PBS, TORQUE and PBS Pro accounting files (``$PBS_HOME/server_priv/accounting/YYYYMMDD``).

One record a line: ``MM/DD/YYYY HH:MM:SS;TYPE;JOBID;key=value key=value ...``.
Only ``E`` (job ended) records are jobs; ``Q``/``S``/``D``/``A`` records say
which jobs were still queued or running when the file ends and which were
deleted. The leading stamp is the server's local time and is never used:
times come from the ``ctime`` (submission), ``start`` and ``end`` epochs.

* CPUs: ``exec_host`` (``n1/0-3+n2/0*8``: 4 + 8), else the ``ncpus=`` of
  ``exec_vnode``, else ``Resource_List.select`` (``2:ncpus=8+1:ncpus=4``: 20),
  ``Resource_List.nodes`` (``2:ppn=4``: 8; TORQUE's default ``ncpus=1``
  beside it is ignored) or ``Resource_List.ncpus``.
* Memory: ``Resource_List.mem`` (the job's), the ``mem=`` of ``select``
  chunks, or ``Resource_List.pmem`` (per process), in ``b/kb/mb/gb/tb/pb``
  (and words, ``w/kw/...``); used memory from ``resources_used.mem``.
* ``Resource_List.walltime`` is the requested time; ``Exit_status`` 0 is
  completed; TORQUE's -11 and PBS Pro's -29 (walltime exceeded), or a failure
  at or past the walltime, is a job killed at its limit; a job with a ``D``
  record that ended otherwise was cancelled.
* A job id loses its server name (``1234[5].pbs01`` -> ``1234[5]``); an ``E``
  record repeated for one id and ``ctime`` counts once.
"""

from __future__ import annotations

import re
from functools import lru_cache

import numpy as np

from ..batch.traces import TraceError, Workload
from .entry import entry_points
from .jobs_table import NAN, Columns, Names, Skips, build_workload, clock_seconds, concatenated
from .jobs_table import compact as compact_rows
from .pbs_layout import LayoutReader
from .stream import line_blocks

KIND = "pbs"
_RECORD = re.compile(r"\d\d/\d\d/\d{4} \d\d:\d\d:\d\d;[A-Za-z];[^;\n]*;")
_QUOTED = re.compile(r'([A-Za-z_][\w.]*)=("[^"]*"|\S*)')
_NCPUS = re.compile(r"ncpus=(\d+)")
_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*([kmgtp]?)(b|w)?", re.IGNORECASE)
_SCALE = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40, "p": 2**50}
#: Exit statuses of a job the server killed at its walltime (TORQUE, PBS Pro).
WALLTIME_EXITS = frozenset({-11, -29})
#: Durations repeat from record to record (limits above all): each text is read once.
seconds = lru_cache(maxsize=1 << 16)(clock_seconds)
BLOCK = 16384   # E records read together (their texts are bulky)
FIELDS = {"submit": "ctime", "start": "start", "end": "end", "procs": "exec_host"}


def sniff(name: str, head: str) -> bool:
    """The first non-empty line is a PBS accounting record (``date time;type;id;``)."""
    for line in head.split("\n", 50)[:50]:
        if line.strip():
            return _RECORD.match(line) is not None
    return False


def attributes(message: str) -> dict[str, str]:
    """``key=value`` pairs of a record; a value may hold spaces (quoted, or words without ``=``)."""
    if '"' in message:
        return {key: value.strip('"') for key, value in _QUOTED.findall(message)}
    try:   # the usual record: every word is one pair
        return dict(token.split("=", 1) for token in message.split(" "))
    except ValueError:
        pass
    pairs: dict[str, str] = {}
    key = ""
    for token in message.split(" "):
        name, equals, value = token.partition("=")
        if equals and name:
            pairs[name] = value
            key = name
        elif key:
            pairs[key] += " " + token
    return pairs


@lru_cache(maxsize=1 << 16)
def size_bytes(text: str) -> float:
    """``4gb`` -> 4 * 2**30; words are 8 bytes; no unit is bytes."""
    match = _SIZE.fullmatch(text.strip())
    if match is None:
        raise ValueError(text)
    number, prefix, unit = match.groups()
    return float(number) * _SCALE[prefix.lower()] * (8 if (unit or "b").lower() == "w" else 1)


def exec_host_cpus(text: str) -> int:
    """CPUs of ``n1/0-3+n2/0*8+n3/2,5`` (4 + 8 + 2); a host without ``/`` is one CPU."""
    total = 0
    for part in text.split("+"):
        host, slash, slots = part.rpartition("/")
        if not slash:
            total += 1
            continue
        for item in slots.split(","):
            index, star, count = item.partition("*")
            if star:
                total += int(count)
            else:
                low, dash, high = index.partition("-")
                first = int(low)
                total += int(high) - first + 1 if dash else 1
    return total


def _chunks(spec: str):
    """``(count, {resource: value})`` of each ``+``-separated chunk of ``select``/``nodes``."""
    for chunk in spec.split("+"):
        parts = chunk.split(":")
        count = int(parts[0]) if parts[0].isdigit() else 1
        yield count, dict(p.partition("=")[::2] for p in parts if "=" in p)


def requested_cpus(a: dict) -> int:
    """CPUs the job asked for: ``select``, ``nodes`` (ppn), ``ncpus``, ``nodect``; 0 when none says."""
    select = a.get("Resource_List.select")
    if select:
        return sum(count * int(res.get("ncpus", 1)) for count, res in _chunks(select))
    nodes = a.get("Resource_List.nodes")
    ncpus = int(a.get("Resource_List.ncpus", 0) or 0)
    if nodes:
        total = sum(count * int(res.get("ppn", 1)) for count, res in _chunks(nodes))
        return total if "ppn=" in nodes else max(total, ncpus)
    return ncpus or int(a.get("Resource_List.nodect", 0) or 0)


def _cpus(a: dict, line: int, source: str) -> int:
    for field in ("exec_host", "exec_vnode", "Resource_List"):
        try:
            if field == "exec_host" and a.get(field):
                return exec_host_cpus(a[field])
            if field == "exec_vnode" and a.get(field):
                return sum(map(int, _NCPUS.findall(a[field]))) or a[field].count("(")
            if field == "Resource_List":
                return requested_cpus(a)
        except ValueError:
            raise TraceError(field if field != "Resource_List" else "Resource_List.select/nodes/ncpus",
                             f"{a.get(field, '')!r} is not a CPU list PBS writes", source=source, line=line) from None
    return 0


def memory_per_cpu_mb(a: dict, cpus: int) -> float:
    """Requested memory per CPU in MB: the job's ``mem``, the chunks' ``mem``, or ``pmem``; NaN when none."""
    per_cpu = max(cpus, 1) * 2**20
    if a.get("Resource_List.mem"):
        return size_bytes(a["Resource_List.mem"]) / per_cpu
    select = a.get("Resource_List.select", "")
    if "mem=" in select:
        return sum(count * size_bytes(res["mem"]) for count, res in _chunks(select) if "mem" in res) / per_cpu
    if a.get("Resource_List.pmem"):
        return size_bytes(a["Resource_List.pmem"]) / 2**20
    return NAN


def status(exit_code: int | None, run: float, limit: float, deleted: bool) -> str:
    """``completed``, ``timeout`` (killed at its walltime), ``cancelled`` (deleted) or ``failed``."""
    if exit_code == 0:
        return "completed"
    if exit_code in WALLTIME_EXITS or (limit > 0 and run >= limit):
        return "timeout"
    return "cancelled" if deleted else "failed"


def _epoch(a: dict, field: str, line: int, source: str) -> float:
    value = a.get(field, "")
    if not value:
        return NAN
    try:
        return float(int(value))
    except ValueError:
        raise TraceError(field, f"{value!r} is not a time in seconds since 1970", source=source, line=line) from None


def _optional(a: dict, field: str, read, line: int, source: str) -> float:
    value = a.get(field)
    if not value:
        return NAN
    try:
        return read(value)
    except ValueError:
        raise TraceError(field, f"{value!r} cannot be read", source=source, line=line) from None


def _quick_record(job: str, a: dict, line: int, deleted: bool) -> tuple:
    """:func:`_end_record` for the usual record (``exec_host`` and plain numbers); ``ValueError`` otherwise."""
    get = a.get
    submit, start, end = float(get("ctime") or "nan"), float(get("start") or "nan"), float(get("end") or "nan")
    host = get("exec_host")
    if not (start > 0 and host):
        raise ValueError("not the usual record")
    cpus = exec_host_cpus(host)
    per_cpu = cpus if cpus > 0 else 1
    wall, mem, used, cput = get("Resource_List.walltime"), get("Resource_List.mem"), get("resources_used.mem"), \
        get("resources_used.cput")
    limit = seconds(wall) if wall else NAN
    code = get("Exit_status")
    exit_code = int(code) if code else None
    project = get("project", "")
    return (line, (job, submit), job, submit, start, end, cpus, limit,
            size_bytes(mem) / per_cpu / 2**20 if mem else memory_per_cpu_mb(a, cpus),
            size_bytes(used) / per_cpu / 2**20 if used else NAN, seconds(cput) / per_cpu if cput else NAN,
            status(exit_code, end - start, limit, deleted), get("user", ""), get("group", ""), get("queue", ""), "",
            get("account") or ("" if project == "_pbs_project_default" else project))


def _end_record(job: str, a: dict, line: int, source: str, deleted: bool) -> tuple:
    submit = _epoch(a, "ctime", line, source)
    start, end = _epoch(a, "start", line, source), _epoch(a, "end", line, source)
    if not start > 0:
        return (line, (job, submit), job, submit, NAN, end, 0, NAN, NAN, NAN, NAN, "cancelled",
                a.get("user", ""), a.get("group", ""), a.get("queue", ""), "", a.get("account", ""))
    cpus = _cpus(a, line, source)
    limit = _optional(a, "Resource_List.walltime", seconds, line, source)
    try:
        memory = memory_per_cpu_mb(a, cpus)
    except (ValueError, KeyError):
        raise TraceError("Resource_List.mem", "the requested memory cannot be read", source=source, line=line) from None
    used = _optional(a, "resources_used.mem", size_bytes, line, source) / max(cpus, 1) / 2**20
    cpu_time = _optional(a, "resources_used.cput", seconds, line, source) / max(cpus, 1)
    code = a.get("Exit_status", "")
    try:
        exit_code = int(code) if code else None
    except ValueError:
        raise TraceError("Exit_status", f"{code!r} is not a whole number", source=source, line=line) from None
    project = a.get("project", "")
    account = a.get("account") or ("" if project == "_pbs_project_default" else project)
    return (line, (job, submit), job, submit, start, end, cpus, limit, memory, used, cpu_time,
            status(exit_code, end - start, limit, deleted), a.get("user", ""), a.get("group", ""),
            a.get("queue", ""), "", account)


def _read(pieces, *, source: str, timezone: str, skip_malformed: bool, compact: bool) -> Workload:
    """The body of :func:`read`: ``E`` records :data:`BLOCK` at a time, by layout (:mod:`.pbs_layout`) or one by one."""
    skips = Skips(source, skip_malformed)
    columns = Columns()
    names = Names()
    layouts = LayoutReader(names, seconds, size_bytes, exec_host_cpus, memory_per_cpu_mb, WALLTIME_EXITS)
    other: dict[str, set] = {"Q": set(), "S": set(), "D": set(), "E": set()}
    records = 0
    block = _Block()
    deleted = other["D"]
    for first, lines in line_blocks(pieces):
        rows = [line.split(";", 3) for line in lines]
        if any(len(parts) == 4 and parts[1] == "D" for parts in rows):   # a D record's place tells later E records
            records += _records_in_order(rows, first, block, other, layouts, columns, skips, names, source)
            continue
        # No D record in the piece: whether an E record's job was deleted is known before it, in any order.
        for parts in rows:
            if len(parts) == 4 and parts[1] != "E" and parts[1] in other:
                other[parts[1]].add(parts[2].partition(".")[0])
        block.problems.extend((first + i, "record", "not a PBS record (date time;type;job id;attributes)")
                              for i, parts in enumerate(rows) if len(parts) < 4 and ";".join(parts).strip())
        ended = [(first + i, parts) for i, parts in enumerate(rows) if len(parts) == 4 and parts[1] == "E"]
        for begin in range(0, len(ended), BLOCK):
            part = ended[begin:begin + BLOCK]
            block.numbers.extend(number for number, _ in part)
            block.jobs.extend(parts[2].partition(".")[0] for _, parts in part)
            block.messages.extend(parts[3].rstrip("\r") if parts[3].endswith("\r") else parts[3] for _, parts in part)
            block.deleted.extend(job in deleted for job in block.jobs[len(block.deleted):])
            if len(block.numbers) == BLOCK or begin + BLOCK >= len(ended):
                records += block.read(layouts, columns, skips, names, source, other["E"])
        if not ended:
            records += block.read(layouts, columns, skips, names, source, other["E"])
    unfinished = (other["Q"] | other["S"]) - other["E"] - other["D"]
    deleted = other["D"] - other["E"] - other["S"]
    notes = (f"{len(unfinished):,} job(s) queued or running when the file ends (no E record): left out",) \
        if unfinished else ()
    if not columns.arrays:
        columns.append(compact_rows([], names), 0)
    return build_workload(columns.result(), kind=KIND, fields=FIELDS, skips=skips, timezone=timezone, names=names,
                          records=records + len(deleted), never_started=len(deleted), notes=notes, compact=compact)


def _records_in_order(rows, first, block, other, layouts, columns, skips, names, source) -> int:
    """A piece's records one after the other (a ``D`` record among them deletes the jobs of later ``E`` records)."""
    records, deleted = 0, other["D"]
    for number, parts in enumerate(rows, start=first):
        if len(parts) < 4:
            if ";".join(parts).strip():
                block.problems.append((number, "record", "not a PBS record (date time;type;job id;attributes)"))
            continue
        kind, job = parts[1], parts[2].partition(".")[0]
        if kind != "E":
            if kind in other:
                other[kind].add(job)
            continue
        message = parts[3]
        block.numbers.append(number)
        block.jobs.append(job)
        block.messages.append(message.rstrip("\r") if message.endswith("\r") else message)
        block.deleted.append(job in deleted)
        if len(block.numbers) == BLOCK:
            records += block.read(layouts, columns, skips, names, source, other["E"])
    return records + block.read(layouts, columns, skips, names, source, other["E"])


class _Block:
    """``E`` records gathered to be read together, and the problems met on their lines."""

    def __init__(self):
        self.numbers, self.jobs, self.messages, self.deleted, self.problems = [], [], [], [], []

    def read(self, layouts: LayoutReader, columns: Columns, skips: Skips, names: Names, source: str,
             ended: set) -> int:
        """Read the records into ``columns`` in the order of the file (their jobs into ``ended``); problems raised or
        counted in that order. Returns how many records there were."""
        numbers, jobs, deleted = self.numbers, self.jobs, self.deleted
        ended.update(jobs)
        blocks, alone = layouts.read(numbers, jobs, self.messages, deleted)
        rows = []
        for i in alone:
            a = attributes(self.messages[i])
            try:
                rows.append(_quick_record(jobs[i], a, numbers[i], deleted[i]))
            except (ValueError, KeyError):
                try:   # the careful reading names the field at fault
                    rows.append(_end_record(jobs[i], a, numbers[i], source, deleted[i]))
                except TraceError as exc:
                    self.problems.append((numbers[i], exc.field, exc.message))
        for number, field, message in sorted(self.problems):
            skips.error(field, message, number)
        if rows:
            blocks.append(compact_rows(rows, names))
        if blocks:
            piece = concatenated(blocks, give_back=False)   # a block's columns: small, joined once a block
            order = np.argsort(piece["line"], kind="stable")
            columns.append({name: values[order] for name, values in piece.items()}, order.size)
        self.__init__()
        return len(numbers)


parse, read = entry_points(_read, what="a PBS accounting file: one per ``E`` record")
