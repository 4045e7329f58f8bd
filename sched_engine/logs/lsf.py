"""IBM Spectrum LSF job accounting (``$LSB_SHAREDIR/<cluster>/logdir/lsb.acct``): ``JOB_FINISH`` records.

Fields are separated by single blanks; strings are double-quoted with ``""``
standing for a quote inside one (a quoted string may even run over a line
break); lists are written as their length followed by their items
(``numAskedHosts`` hosts, ``numExHosts`` hosts, ...), so every field after a
list is found by counting. By position: 2 version, 3 event time (the job's
end), 4 ``jobId``, 7 ``numProcessors``, 8 ``submitTime``, 11 ``startTime``,
12 ``userName``, 13 ``queue``, 14 ``resReq``; after the host lists
``jStatus`` (64 done, 32 exit), 19 resource-usage numbers, ``projectName``,
``exitStatus``, ``idx`` (the array index), ``maxRMem`` (KB), ``exitInfo``
(the termination reason), ``chargedSAAP`` (the fair-share path charged),
and, in LSF 9 and later after the ``submitEXT`` and host-usage lists, the
``runLimit`` (s).

* CPUs are ``numProcessors``; the requested time the ``runLimit``; memory
  per processor the ``rusage[mem=N]`` of ``resReq`` (MB, LSF's usual unit).
* A record with ``startTime`` 0 never started (killed while pending).
* ``jStatus`` 64 is completed; an exit with reason ``TERM_RUNLIMIT`` (5), or
  at or past the run limit, was killed at its limit; with a kill by its owner
  or an administrator or a preemption (1, 8, 9, 14, 15, 23) it was cancelled;
  any other exit failed.
* The account is ``projectName`` (unless LSF's ``default``), the group the
  parent of ``chargedSAAP`` (``/physics/alice`` -> ``physics``). A job of an
  array is ``jobId[idx]``; a record repeated for one job, index and
  submission counts once.
"""

from __future__ import annotations

import csv
import re
from itertools import chain

import numpy as np

from ..batch.traces import TraceError, Workload
from .entry import entry_points
from .jobs_table import (
    NAN,
    Memo,
    Names,
    Skips,
    as_objects,
    build_workload,
    concatenated,
    job_ids,
    key_hash,
)
from .lsf_block import (
    ASKED_HOSTS,
    EVENT_TIME,
    EXIT_INFO,
    IDX,
    JOB_ID,
    MAX_RMEM,
    PROCESSORS,
    PROJECT,
    QUEUE,
    RES_REQ,
    SAAP,
    START,
    STIME,
    SUBMIT,
    SUBMIT_EXT,
    USER,
    UTIME,
    Layout,
)
from .stream import ended_lines

KIND = "lsf"
EVENT = "JOB_FINISH"
FIELDS = {"submit": "submitTime", "start": "startTime", "end": "eventTime", "procs": "numProcessors"}
#: Fixed positions (0-based) before the first list.
FIXED = {"eventTime": 2, "jobId": 3, "numProcessors": 6, "submitTime": 7, "startTime": 10, "userName": 11,
         "queue": 12, "resReq": 13, "numAskedHosts": 22}
#: Positions after ``jStatus`` (0 here).
AFTER_STATUS = {"jStatus": 0, "rusage": 4, "projectName": 24, "exitStatus": 25, "idx": 29, "maxRMem": 30,
                "exitInfo": 38, "chargedSAAP": 41, "numSubmitEXT": 52}
BLOCK = 16384   # records whose fields are kept as text before they become columns
RUN_LIMIT_EXIT = 5
CANCEL_EXITS = frozenset({1, 8, 9, 14, 15, 23})
DONE = 64
_MEMORY = re.compile(r"rusage\[[^\]]*?\bmem=([0-9.]+)")


def sniff(name: str, head: str) -> bool:
    """A record of the first lines is a quoted ``"JOB_FINISH"`` event."""
    return any(line.startswith(f'"{EVENT}" "') for line in head.split("\n", 20)[:20])


def _whole(row: list[str], index: int, field: str, line: int) -> int:
    try:
        return int(row[index])
    except IndexError:
        raise TraceError(field, f"the record ends before this field ({len(row)} fields)", line=line) from None
    except ValueError:
        raise TraceError(field, f"{row[index]!r} is not a whole number", line=line) from None


#: Numbers of a record, in the order :func:`_texts` gives them; the first seven must be there.
NUMBERS = ("eventTime", "jobId", "numProcessors", "submitTime", "startTime", "jStatus", "idx",
           "exitInfo", "maxRMem", "ru_utime", "ru_stime", "runLimit")
REQUIRED = 7
#: Names of the text fields :func:`_texts` gives after :data:`NUMBERS`.
TEXTS = ("userName", "queue", "resReq", "projectName", "chargedSAAP")


def _texts(row: list[str]) -> tuple[str, ...]:
    """The fields read from one record, as text: :data:`NUMBERS`, then user, queue, resReq, project, SAAP.

    Raises ``IndexError`` or ``ValueError`` when the record is cut short or a list count is not a number.
    """
    exec_at = FIXED["numAskedHosts"] + 1 + int(row[FIXED["numAskedHosts"]])
    at = exec_at + 1 + int(row[exec_at])
    optional = row[at + AFTER_STATUS["exitInfo"]:at + AFTER_STATUS["chargedSAAP"] + 1]
    try:
        extra = at + AFTER_STATUS["numSubmitEXT"]
        usage = extra + 1 + 2 * int(row[extra])          # submitEXT: count, then key/value pairs
        limit = row[usage + 1 + 5 * int(row[usage]) + 1]  # host usage (host, mem, swap, utime, stime), options3, runLimit
    except (IndexError, ValueError):
        limit = ""
    return (row[2], row[3], row[6], row[7], row[10], row[at], row[at + AFTER_STATUS["idx"]],
            optional[0] if optional else "", row[at + AFTER_STATUS["maxRMem"]], row[at + 4], row[at + 5], limit,
            row[FIXED["userName"]], row[FIXED["queue"]], row[FIXED["resReq"]], row[at + AFTER_STATUS["projectName"]],
            optional[-1] if len(optional) > AFTER_STATUS["chargedSAAP"] - AFTER_STATUS["exitInfo"] else "")


def _explain(row: list[str], line: int) -> TraceError:
    """The error of a record :func:`_texts` could not read, naming its field."""
    try:
        for name in ("eventTime", "jobId", "numProcessors", "submitTime", "startTime"):
            _whole(row, FIXED[name], name, line)
        exec_at = FIXED["numAskedHosts"] + 1 + _whole(row, FIXED["numAskedHosts"], "numAskedHosts", line)
        at = exec_at + 1 + _whole(row, exec_at, "numExHosts", line)
        _whole(row, at, "jStatus", line)
        _whole(row, at + AFTER_STATUS["idx"], "idx", line)
    except TraceError as exc:
        return exc
    return TraceError("record", "the record ends too soon", line=line)


def _numbers(column, name: str, lines, problems: list, bad: np.ndarray) -> np.ndarray:
    """A column of :data:`NUMBERS` as floats: a required one not a number is malformed, an optional one NaN."""
    try:
        return np.fromiter(map(float, column), dtype=float, count=len(column))
    except ValueError:
        pass
    values = np.full(len(column), np.nan)
    for row, text in enumerate(column):
        values[row] = _number(text, name, lines[row], problems, bad, row)
    return values


def _number(text: str, name: str, line: int, problems: list, bad: np.ndarray, row: int) -> float:
    """One field of :data:`NUMBERS` as a float; a required one that is not a number is a problem of its record."""
    try:
        return float(text)
    except ValueError:
        if NUMBERS.index(name) < REQUIRED and not bad[row]:
            problems.append((line, name, f"{text!r} is not a number"))
            bad[row] = True
        return NAN


def status(j_status: np.ndarray, reason: np.ndarray, run: np.ndarray, limit: np.ndarray) -> np.ndarray:
    """``completed`` (DONE), ``timeout`` (TERM_RUNLIMIT or past the limit), ``cancelled`` (killed) or ``failed``."""
    killed = np.isin(reason, list(CANCEL_EXITS))
    at_limit = (reason == RUN_LIMIT_EXIT) | ((limit > 0) & (run >= limit))
    return np.where(j_status == DONE, "completed", np.where(at_limit, "timeout", np.where(killed, "cancelled", "failed")))


def _memory(res_req: str) -> float:
    found = _MEMORY.search(res_req)
    return float(found.group(1)) if found else NAN


def _group(saap: str) -> str:
    parts = saap.strip("/").split("/")
    return parts[-2] if len(parts) >= 2 else ""


def _from_texts(texts: list[tuple], lines: list[int], problems: list) -> dict:
    """Records read one by one (their fields as text, :func:`_texts`) as the columns :func:`_columns` takes."""
    fields = list(zip(*texts)) if texts else [()] * (len(NUMBERS) + len(TEXTS))
    bad = np.zeros(len(texts), dtype=bool)
    number = {name: _numbers(fields[i], name, lines, problems, bad) for i, name in enumerate(NUMBERS)}
    good = ~bad
    return {"line": np.asarray(lines, dtype=np.int64)[good], **{name: values[good] for name, values in number.items()},
            **{name: as_objects(column)[good] for name, column in zip(TEXTS, fields[len(NUMBERS):])}}


def _columns(read: dict, names: Names) -> dict:
    """The :data:`~.jobs_table.ROW` columns of records read (:func:`_from_texts`, :mod:`.lsf_block`); names as codes."""
    cpus = read["numProcessors"]
    per_cpu = np.maximum(cpus, 1)
    limit = np.where(read["runLimit"] > 0, read["runLimit"], np.nan)
    job, index = read["jobId"].astype(np.int64), read["idx"].astype(np.int64)
    memory, group = Memo(_memory), Memo(_group)
    project = read["projectName"]
    return {
        "line": read["line"], "key": key_hash(job, index, read["submitTime"]),
        "job_id": job_ids([f"{j}[{i}]" if i > 0 else str(j) for j, i in zip(job.tolist(), index.tolist())]),
        "submit": read["submitTime"], "start": read["startTime"], "end": read["eventTime"], "procs": cpus,
        "requested_time": limit, "memory_per_cpu_mb": np.array([memory[r] for r in read["resReq"]], dtype=float),
        "used_memory_per_cpu_mb": np.where(read["maxRMem"] >= 0, read["maxRMem"], np.nan) / 1024 / per_cpu,
        "avg_cpu_time": (np.maximum(np.nan_to_num(read["ru_utime"]), 0)
                         + np.maximum(np.nan_to_num(read["ru_stime"]), 0)) / per_cpu,
        "status": names.encode(status(read["jStatus"], read["exitInfo"], read["eventTime"]
                                      - read["startTime"], limit).astype(object)),
        "user": names.encode(read["userName"]), "group": names.encode([group[s] for s in read["chargedSAAP"]]),
        "queue": names.encode(read["queue"]), "partition": np.zeros(len(cpus), dtype=np.int32),
        "account": names.encode(np.where(project == "default", "", project).astype(object)),
    }

PIECE = 1 << 22   # text read at a time: a few thousand records placed by NumPy together
CARRIED = 4 * PIECE   # an unfinished record longer than this is a broken quote: the csv module reads on


class _Reading:
    """What reading a file gathers: the blocks of columns, the counts, and the problems of the current block."""

    def __init__(self, source: str, skip_malformed: bool):
        self.skips, self.names = Skips(source, skip_malformed), Names()
        self.blocks: list[dict] = []
        self.records = self.other = 0

    def flush(self, reads: list[dict], problems: list) -> None:
        """Records read (in pieces, each in the order of the file) as one block; problems raised or counted first."""
        for line, field, message in sorted(problems):
            self.skips.error(field, message, line)
        reads = [read for read in reads if len(read["line"])] or reads[:1]
        if len(reads) > 1:
            lines = np.concatenate([read["line"] for read in reads])
            order = np.argsort(lines, kind="stable")
            reads = [{name: np.concatenate([read[name] for read in reads])[order] for name in reads[0]}]
        if reads:
            self.blocks.append(_columns(reads[0], self.names))

    def by_csv(self, lines, first_line: int) -> None:
        """Records read one by one by the csv module, from ``first_line`` on (broken quoting stops the reading)."""
        texts, numbers, problems = [], [], []
        reader = csv.reader(lines, delimiter=" ", quotechar='"', doublequote=True, strict=True)
        start = first_line - 1
        try:
            for row in reader:
                line, first_line = first_line, start + reader.line_num + 1
                if not row or row[0] != EVENT:
                    self.other += bool(row) and row != [""]
                    continue
                self.records += 1
                self.one(row, line, texts, numbers, problems)
                if len(texts) == BLOCK:   # fields as text are bulky: convert them block by block
                    self.flush([_from_texts(texts, numbers, problems)], problems)
                    texts, numbers, problems = [], [], []
        except csv.Error as exc:   # the quoting is broken: nothing after it can be trusted
            problems.append((first_line, "record", f"not an lsb.acct record ({exc})"))
        self.flush([_from_texts(texts, numbers, problems)], problems)

    @staticmethod
    def one(row: list[str], line: int, texts: list, numbers: list, problems: list) -> None:
        try:
            texts.append(_texts(row))
            numbers.append(line)
        except (IndexError, ValueError):
            error = _explain(row, line)
            problems.append((line, error.field, error.message))

    def block(self, layout: Layout, first_line: int) -> None:
        """The records of a text whose quoting :meth:`Layout.plain` accepts: placed by NumPy, the odd ones alone."""
        layout.split()
        events, others = layout.events()
        line_of = first_line + layout.physical
        alone: list[int] = []
        for row in others.tolist():   # not a quoted JOB_FINISH first: as csv reads it
            fields = _csv_row(layout.line_text(row))
            if fields and fields[0] == EVENT:
                alone.append(row)
            else:
                self.other += bool(fields) and fields != [""]
        self.records += events.size + len(alone)
        read, left = _placed(layout, events, line_of)
        texts, numbers, problems = [], [], read.pop("problems")
        for row in sorted(alone + left):
            fields = _csv_row(layout.line_text(row))
            self.one(fields, int(line_of[row]), texts, numbers, problems)
        self.flush([read, _from_texts(texts, numbers, problems)], problems)


def _csv_row(text: str) -> list[str]:
    """The fields of one record's text as the csv module reads them (its quoting already found sound)."""
    return next(csv.reader(ended_lines([text]), delimiter=" ", quotechar='"', doublequote=True, strict=True), [])


def _placed(layout: Layout, rows: np.ndarray, line_of: np.ndarray) -> tuple[dict, list[int]]:
    """The fields of the ``JOB_FINISH`` lines ``rows`` found by position; and the lines to read alone instead."""
    count = layout.count[rows]
    asked, plain = layout.counts(rows, np.full(rows.size, ASKED_HOSTS))
    exec_at = ASKED_HOSTS + 1 + asked
    hosts, plain_hosts = layout.counts(rows, exec_at)
    at = exec_at + 1 + hosts
    placed = plain & plain_hosts & (at + MAX_RMEM < count)
    extra = at + SUBMIT_EXT   # the run limit, after two more lists: absent (old LSF) is no limit
    submit_ext, plain_ext = layout.counts(rows, extra)
    usage = extra + 1 + 2 * submit_ext
    hosts_used, plain_usage = layout.counts(rows, usage)
    limit_at = usage + 1 + 5 * hosts_used + 1
    placed &= ((extra >= count) | plain_ext) & ((usage >= count) | ~plain_ext | plain_usage)
    has_limit = plain_ext & plain_usage & (limit_at < count)
    left = rows[~placed].tolist()
    rows, count, at, limit_at, has_limit = rows[placed], count[placed], at[placed], limit_at[placed], has_limit[placed]
    lines = line_of[rows].astype(np.int64)
    where = {"eventTime": EVENT_TIME, "jobId": JOB_ID, "numProcessors": PROCESSORS, "submitTime": SUBMIT,
             "startTime": START, "jStatus": at, "idx": at + IDX, "exitInfo": at + EXIT_INFO, "maxRMem": at + MAX_RMEM,
             "ru_utime": at + UTIME, "ru_stime": at + STIME, "runLimit": np.where(has_limit, limit_at, count)}
    bad = np.zeros(rows.size, dtype=bool)
    problems: list = []
    read = {"line": lines}
    index = np.stack([np.broadcast_to(where[name], rows.size) for name in NUMBERS])
    present = index < count
    start, end = layout.token_bounds(np.broadcast_to(rows, index.shape)[present], index[present])
    values = np.full(index.shape, np.nan)
    values[present], alone = layout.numbers(start, end)
    field_of, row_of = np.nonzero(present)
    by_field = np.zeros(index.shape, dtype=bool)   # fields to read one by one: unread by Arrow, or past the end
    by_field[field_of[alone], row_of[alone]] = True
    by_field |= ~present
    text_of = dict(zip(alone.tolist(), layout.texts(start[alone], end[alone]))) if alone.size else {}
    place = np.cumsum(present.ravel()).reshape(index.shape) - 1   # where a present field is in ``start``
    for field, name in enumerate(NUMBERS):   # in this order, as the records read one by one
        for row in np.flatnonzero(by_field[field]).tolist():
            text = text_of[int(place[field, row])] if present[field, row] else ""
            values[field, row] = _number(text, name, int(lines[row]), problems, bad, row)
        read[name] = values[field]
    texts = (USER, QUEUE, RES_REQ, at + PROJECT, at + SAAP)
    index = np.stack([np.broadcast_to(where_text, rows.size) for where_text in texts])
    present = index < count
    column = np.full(index.shape, "", dtype=object)
    start, end = layout.token_bounds(np.broadcast_to(rows, index.shape)[present], index[present])
    column[present] = layout.texts(start, end)
    read.update(zip(TEXTS, column))
    good = ~bad
    read = {name: values[good] for name, values in read.items()}
    read["problems"] = problems
    return read, left


def _read(pieces, *, source: str, timezone: str, skip_malformed: bool, compact: bool,
          by_position: bool = True) -> Workload:
    """The body of :func:`read`: whole lines placed by NumPy (:mod:`.lsf_block`), else read by the csv module.

    ``by_position=False`` reads every record with the csv module, one by one (the reading checked against).
    """
    reading = _Reading(source, skip_malformed)
    pieces = iter(pieces)
    carry, first_line = b"", 1
    if not by_position:
        reading.by_csv(ended_lines(pieces), first_line)
        pieces = iter(())
    for piece in chain(pieces, [None]) if by_position else ():
        data = carry + (piece.encode() if piece is not None else b"")
        if piece is None and data and not data.endswith(b"\n"):
            data += b"\n"   # the last line, unended
        layout = Layout(data)
        unfinished = len(data) - layout.cut
        if (layout.cut and not layout.plain()) or unfinished > CARRIED or (piece is None and unfinished):
            reading.by_csv(ended_lines(chain([data.decode()], pieces)), first_line)   # quoting NumPy cannot follow
            break
        if layout.cut:
            reading.block(layout, first_line)
            first_line += layout.line_ends.size + layout.quoted_breaks.size
        carry = data[layout.cut:]
    if not reading.blocks:
        reading.flush([_from_texts([], [], [])], [])
    columns = concatenated(reading.blocks)
    notes = (f"{reading.other:,} record(s) of other events (not JOB_FINISH) left out",) if reading.other else ()
    return build_workload(columns, kind=KIND, fields=FIELDS, skips=reading.skips, timezone=timezone,
                          names=reading.names, records=reading.records, notes=notes, compact=compact)


parse, read = entry_points(_read, what="an ``lsb.acct`` file", piece=PIECE)
