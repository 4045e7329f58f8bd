"""A workload written in the Standard Workload Format of the Parallel Workloads Archive.

SWF (Chapin et al. 1999; Feitelson's archive, version 2.2): ``;`` header
comments, then one line per job of 18 whole numbers, ``-1`` where unknown:

 1 job number (1, 2, ... in order of submission)   10 requested memory (KB per processor)
 2 submit time (s since ``UnixStartTime``)          11 status: 1 completed, 0 failed (also
 3 wait time (s)                                        killed at its limit), 5 cancelled
 4 run time (s)                                     12 user  13 group  (numbers of the legend)
 5 allocated processors                             14 executable (-1: not known)
 6 average CPU time used (s per processor)          15 queue  16 partition (numbers of the legend)
 7 used memory (KB per processor)                   17 preceding job  18 think time (-1)
 8 requested processors (the allocated ones)
 9 requested time (s)

The header says ``UnixStartTime`` (the epoch of submit time 0) when the log's
clock is known, ``TimeZoneString``, ``MaxProcs``/``MaxNodes`` when the
hardware is, and the legend: ``; User: 3 alice`` and likewise ``Group``,
``Queue`` and ``Partition`` lines, numbered in order of first appearance.
With ``anonymise`` users, groups (and accounts) become ``u_<hash>`` /
``g_<hash>``: an HMAC-SHA256 of the name under a salt the caller keeps, so
one salt gives the same names in every file and the names cannot be listed
back without it. Queues and partitions name the machine's setup and are kept.

Lines are written in blocks of :data:`BLOCK` jobs, so a file of any size
streams to its output.
"""

from __future__ import annotations

import hashlib
import hmac
from datetime import datetime
from datetime import timezone as utc_zone
from typing import TextIO
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np
import pandas as pd

from ..batch.traces import Workload

BLOCK = 8192   # jobs a block: as Python numbers, a block of lines costs about 600 bytes a job
#: Legend kinds: the frame's column, its header key and the SWF field (1-based) it numbers.
LEGEND = (("user", "User", 12), ("group", "Group", 13), ("queue", "Queue", 15), ("partition", "Partition", 16))
#: Status words (a log reader's, sacct's states) and their SWF code; anything else is -1.
STATUS_CODES = {
    "completed": 1, "failed": 0, "timeout": 0, "node_fail": 0, "out_of_memory": 0, "boot_fail": 0,
    "deadline": 0, "cancelled": 5, "preempted": 5,
}
ANONYMOUS_PREFIX = {"user": "u_", "group": "g_", "account": "a_"}


def pseudonym(name: str, kind: str, salt: bytes) -> str:
    """A stable stand-in for ``name``: the same salt, kind and name always give the same text."""
    digest = hmac.new(salt, f"{kind}\0{name}".encode(), hashlib.sha256).hexdigest()[:12]
    return f"{ANONYMOUS_PREFIX.get(kind, kind[:1] + '_')}{digest}"


def anonymised(jobs: pd.DataFrame, salt: bytes) -> pd.DataFrame:
    """``jobs`` with users, groups and accounts replaced by :func:`pseudonym` (empty names stay empty)."""
    out = jobs.copy(deep=False)
    for kind in ANONYMOUS_PREFIX:
        if kind not in out.columns:
            continue
        if isinstance(out[kind].dtype, pd.CategoricalDtype):   # each name once
            stand_in = [pseudonym(name, kind, salt) if name else "" for name in out[kind].cat.categories]
            out[kind] = pd.Categorical.from_codes(out[kind].cat.codes, categories=pd.Index(stand_in, dtype=object))
            continue
        names = out[kind].astype("string").fillna("")
        uniques = names.unique()
        mapping = {name: pseudonym(name, kind, salt) if name else "" for name in uniques}
        out[kind] = names.map(mapping).astype("string")
    return out


def _codes(jobs: pd.DataFrame, column: str, order: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """1-based numbers of the column's names (jobs in ``order``) in order of first appearance (-1 when empty)."""
    if column not in jobs.columns:
        return np.full(len(jobs), -1, dtype=np.int64), []
    values = jobs[column]
    if isinstance(values.dtype, pd.CategoricalDtype):   # a name per category: number the categories, not the jobs
        codes = values.cat.codes.to_numpy()
        codes = codes if order is None else codes[order]
        names = [str(name).strip() for name in values.cat.categories]
        numbered: dict[str, int] = {}
        kind = np.int16 if len(names) < 2**15 else np.int32
        table = np.full(len(names) + 1, -1, dtype=kind)   # category code -> number; code -1 (none) is the last
        for code in pd.unique(codes).tolist():   # the categories in order of first appearance
            if code >= 0 and names[code]:
                table[code] = numbered.setdefault(names[code], len(numbered) + 1)
        return table[codes], list(numbered)
    names = (values if order is None else values.iloc[order]).astype("string").fillna("").str.strip()
    codes, uniques = pd.factorize(names.mask(names == ""), sort=False)
    return np.where(codes >= 0, codes + 1, -1).astype(np.int64), [str(u) for u in uniques]


def status_codes(jobs: pd.DataFrame) -> np.ndarray:
    """SWF status of each job from a ``status`` column of words (the first word, any case); -1 without."""
    if "status" not in jobs.columns:
        return np.full(len(jobs), -1, dtype=np.int64)
    values = jobs["status"]
    if isinstance(values.dtype, pd.CategoricalDtype):
        words = pd.Series(values.cat.categories.astype(str)).str.strip().str.split(" ").str[0].str.lower()
        table = np.append(words.map(STATUS_CODES).fillna(-1).to_numpy(dtype=np.int8), np.int8(-1))
        return table[values.cat.codes.to_numpy()]
    words = values.astype("string").fillna("").str.strip().str.split(" ").str[0].str.lower()
    return words.map(STATUS_CODES).fillna(-1).to_numpy(dtype=np.int64)


def _whole(values, scale: float = 1.0) -> np.ndarray:
    """Rounded whole numbers, -1 where unknown (NaN) or negative."""
    numbers = np.asarray(values, dtype=float) * scale
    return np.where(np.isfinite(numbers) & (numbers >= 0), np.rint(np.nan_to_num(numbers)), -1).astype(np.int64)


def _column(jobs: pd.DataFrame, name: str) -> np.ndarray:
    """A numeric column as it is held (whole numbers are not widened: blocks are made numbers one at a time)."""
    if name not in jobs.columns:
        return np.broadcast_to(np.float64(np.nan), (len(jobs),))
    values = jobs[name].to_numpy()
    return values if values.dtype.kind in "iuf" else jobs[name].to_numpy(dtype=float)


def _kilobytes(jobs: pd.DataFrame, name: str) -> tuple[np.ndarray, float]:
    """KB per CPU: a ``*_kb`` column (a log reader's compact frame), else ``*_mb`` and the scale 1024."""
    if f"{name}_kb" in jobs.columns:
        return jobs[f"{name}_kb"].to_numpy(), 1.0
    return _column(jobs, f"{name}_mb"), 1024.0


def swf_blocks(jobs: pd.DataFrame, block: int = BLOCK):
    """The legend's names, and the 18 SWF fields of the jobs in submission order in blocks (int64 matrices)."""
    submit, procs = _column(jobs, "submit_time"), _column(jobs, "procs")
    # None: the jobs are in submission order already (as a log reader gives them), and are read so.
    order = None if (submit[1:] >= submit[:-1]).all() else np.argsort(submit, kind="stable")
    legend, numbered = {}, {}
    for column, key, _ in LEGEND:
        numbered[column], legend[key] = _codes(jobs, column, order)
    status = status_codes(jobs).astype(np.int8, copy=False)
    numbers = {name: (_column(jobs, name), 1.0) for name in ("recorded_wait", "run_time", "avg_cpu_time",
                                                              "requested_time")}
    numbers["used"], numbers["memory"] = _kilobytes(jobs, "used_memory_per_cpu"), _kilobytes(jobs, "memory_per_cpu")
    first = float(submit.min()) if len(submit) else 0.0

    def blocks():
        for begin in range(0, len(submit), block):
            part = slice(begin, begin + block)
            rows = np.arange(begin, min(begin + block, len(submit))) if order is None else order[part]
            cpus = _whole(procs[rows])
            unknown = np.full(rows.size, -1, dtype=np.int64)
            field = {name: _whole(values[rows], scale) for name, (values, scale) in numbers.items()}
            yield np.column_stack([
                np.arange(begin + 1, begin + rows.size + 1), _whole(submit[rows] - first), field["recorded_wait"],
                field["run_time"], cpus, field["avg_cpu_time"], field["used"], cpus, field["requested_time"],
                field["memory"], status[rows], numbered["user"][part], numbered["group"][part], unknown,
                numbered["queue"][part], numbered["partition"][part], unknown, unknown]).astype(np.int64)
    return legend, blocks()


def swf_fields(jobs: pd.DataFrame) -> tuple[np.ndarray, dict[str, list[str]]]:
    """The 18 SWF fields of each job (an int64 matrix, jobs in submission order) and the legend's names."""
    legend, blocks = swf_blocks(jobs)
    return np.concatenate([*blocks, np.zeros((0, 18), dtype=np.int64)]), legend


def _start_epoch(workload: Workload) -> float | None:
    """The epoch of the first submission, when the log's clock is known."""
    jobs = workload.jobs
    first = float(jobs["submit_time"].min()) if len(jobs) else 0.0
    start = (workload.header or {}).get("UnixStartTime")
    if isinstance(start, (int, float)) and not isinstance(start, bool):
        return float(start) + first
    return first if first > 3e8 else None   # epoch seconds already (after 1979)


def header_lines(workload: Workload, legend: dict[str, list[str]], *, source: str, timezone: str,
                 max_procs: int | None, max_nodes: int | None) -> list[str]:
    """The ``;`` header: version, conversion, clock, hardware when known and the legend."""
    jobs = workload.jobs
    lines = ["; Version: 2.2", f"; Conversion: python -m sched_engine convert, from {source} ({workload.format})",
             f"; MaxJobs: {len(jobs)}", f"; MaxRecords: {len(jobs)}"]
    start = _start_epoch(workload)
    if start is not None:
        lines.append(f"; UnixStartTime: {int(np.floor(start))}")
        try:
            zone = ZoneInfo(timezone)
        except (ZoneInfoNotFoundError, ValueError):
            zone = utc_zone.utc
        when = datetime.fromtimestamp(int(np.floor(start)), tz=zone)
        lines.append(f"; StartTime: {when.strftime('%a %b %d %H:%M:%S %Z %Y')}")
    lines.append(f"; TimeZoneString: {timezone}")
    header = workload.header or {}
    for key, value in (("MaxNodes", max_nodes), ("MaxProcs", max_procs)):
        known = value if value is not None else header.get(key)
        if isinstance(known, int) and known > 0:
            lines.append(f"; {key}: {known}")
    for _, key, field in LEGEND:
        names = legend[key]
        if names:
            lines.append(f"; Max{key}s: {len(names)}" if key in ("Queue", "Partition") else
                         f"; Note: field {field} numbers the {key.lower()}s of the '; {key}:' lines")
        lines.extend(f"; {key}: {number} {name}" for number, name in enumerate(names, start=1))
    lines.extend(f"; Note: {note}" for note in workload.notes)
    return lines


def write_swf(workload: Workload, out: TextIO, *, source: str = "log", timezone: str | None = None,
              anonymise: bool = False, salt: bytes | None = None, max_procs: int | None = None,
              max_nodes: int | None = None) -> int:
    """Write ``workload`` to the text stream ``out`` as SWF; returns the number of jobs written.

    ``timezone`` defaults to the header's ``TimeZoneString``, else UTC;
    ``anonymise`` needs the ``salt``.
    """
    jobs = workload.jobs
    if anonymise:
        if not salt:
            raise ValueError("anonymising needs a salt")
        jobs = anonymised(jobs, salt)
    zone = timezone or str((workload.header or {}).get("TimeZoneString") or "UTC")
    legend, blocks = swf_blocks(jobs)
    view = Workload(jobs=jobs, format=workload.format, header=workload.header, notes=workload.notes)
    for line in header_lines(view, legend, source=source, timezone=zone, max_procs=max_procs, max_nodes=max_nodes):
        out.write(line.replace("\n", " ").replace("\r", " ") + "\n")
    pattern = " ".join(["%d"] * 18) + "\n"
    for fields in blocks:
        out.write("".join(pattern % row for row in map(tuple, fields.tolist())))
    return len(jobs)


def read_legend(text: str) -> dict[str, dict[int, str]]:
    """The legend of an SWF header written here: ``{"User": {1: "alice"}, ...}`` (only the header is split)."""
    legend: dict[str, dict[int, str]] = {key: {} for _, key, _ in LEGEND}
    begin = 0
    while begin < len(text):
        end = text.find("\n", begin)
        end = len(text) if end < 0 else end
        line, begin = text[begin:end].rstrip("\r"), end + 1
        if not line.startswith(";"):
            if line.strip():
                break
            continue
        key, colon, rest = line[1:].strip().partition(":")
        number, _, name = rest.strip().partition(" ")
        if colon and key in legend and number.isdigit():
            legend[key][int(number)] = name
    return legend


#: How the header of an SWF file written by :func:`write_swf` begins its ``Conversion`` line.
CONVERTED_BY = "python -m sched_engine convert"


def named_by_legend(jobs: pd.DataFrame, header: dict, text: str) -> pd.DataFrame:
    """The jobs of an SWF file written here with their users, groups, queues and partitions named again.

    Its fields 12, 13, 15 and 16 number the names of its legend (an anonymised file's stand-ins among them),
    so the names a log was converted with are the names it is read with: a ``.machines`` file's partitions and
    an organisation's users (anonymised with the same salt) match them. Any other SWF is returned as it is.
    """
    if not str(header.get("Conversion", "")).startswith(CONVERTED_BY):
        return jobs
    legend = read_legend(text)
    named = {}
    for column, key, _ in LEGEND:
        if legend[key] and column in jobs.columns:
            numbers = jobs[column].astype("string")
            names = numbers.map({str(number): name for number, name in legend[key].items()})
            named[column] = names.fillna(numbers).astype("string")
    return jobs.assign(**named) if named else jobs
