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

import numpy as np

from ..batch.traces import TraceError, Workload
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
    paused_gc,
)
from .stream import ended_lines, text_pieces

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


def _numbers(column: tuple[str, ...], name: str, lines: list[int], problems: list, bad: np.ndarray) -> np.ndarray:
    """A column of :data:`NUMBERS` as floats: a required one not a number is malformed, an optional one NaN."""
    try:
        return np.fromiter(map(float, column), dtype=float, count=len(column))
    except ValueError:
        pass
    values = np.full(len(column), np.nan)
    for row, text in enumerate(column):
        try:
            values[row] = float(text)
        except ValueError:
            if NUMBERS.index(name) < REQUIRED and not bad[row]:
                problems.append((lines[row], name, f"{text!r} is not a number"))
                bad[row] = True
    return values


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


def _columns(texts: list[tuple], lines: list[int], skips: Skips, problems: list, names: Names) -> dict:
    """The :data:`~.jobs_table.ROW` columns of a block of records, numbers converted at once.

    ``problems`` (line, field, message) of records already found unreadable
    and of those found here are raised or counted in the order of the file;
    names become codes of ``names``.
    """
    fields = list(zip(*texts)) if texts else [()] * (len(NUMBERS) + 5)
    bad = np.zeros(len(texts), dtype=bool)
    number = {name: _numbers(fields[i], name, lines, problems, bad) for i, name in enumerate(NUMBERS)}
    for line, field, message in sorted(problems):
        skips.error(field, message, line)
    good = ~bad
    number = {name: values[good] for name, values in number.items()}
    user, queue, res_req, project, saap = (as_objects(column)[good] for column in fields[len(NUMBERS):])
    cpus = number["numProcessors"]
    per_cpu = np.maximum(cpus, 1)
    limit = np.where(number["runLimit"] > 0, number["runLimit"], np.nan)
    job, index = number["jobId"].astype(np.int64), number["idx"].astype(np.int64)
    memory, group = Memo(_memory), Memo(_group)
    return {
        "line": np.asarray(lines, dtype=np.int64)[good], "key": key_hash(job, index, number["submitTime"]),
        "job_id": job_ids([f"{j}[{i}]" if i > 0 else str(j) for j, i in zip(job.tolist(), index.tolist())]),
        "submit": number["submitTime"], "start": number["startTime"], "end": number["eventTime"], "procs": cpus,
        "requested_time": limit, "memory_per_cpu_mb": np.array([memory[r] for r in res_req], dtype=float),
        "used_memory_per_cpu_mb": np.where(number["maxRMem"] >= 0, number["maxRMem"], np.nan) / 1024 / per_cpu,
        "avg_cpu_time": (np.maximum(np.nan_to_num(number["ru_utime"]), 0)
                         + np.maximum(np.nan_to_num(number["ru_stime"]), 0)) / per_cpu,
        "status": names.encode(status(number["jStatus"], number["exitInfo"], number["eventTime"]
                                      - number["startTime"], limit).astype(object)),
        "user": names.encode(user), "group": names.encode([group[s] for s in saap]), "queue": names.encode(queue),
        "partition": np.zeros(len(user), dtype=np.int32),
        "account": names.encode(np.where(project == "default", "", project).astype(object)),
    }


def parse(text: str, *, source: str, timezone: str = "UTC", skip_malformed: bool = False) -> Workload:
    """The jobs of an ``lsb.acct`` file (see the module docstring)."""
    return read(text_pieces(text), source=source, timezone=timezone, skip_malformed=skip_malformed)


def read(pieces, *, source: str, timezone: str = "UTC", skip_malformed: bool = False,
         compact: bool = False) -> Workload:
    """:func:`parse` of a text given in pieces that end at a line break (:mod:`.stream`)."""
    with paused_gc():
        return _read(pieces, source=source, timezone=timezone, skip_malformed=skip_malformed, compact=compact)


def _read(pieces, *, source: str, timezone: str, skip_malformed: bool, compact: bool) -> Workload:
    """The body of :func:`read`."""
    skips = Skips(source, skip_malformed)
    texts: list[tuple] = []
    lines: list[int] = []
    problems: list[tuple[int, str, str]] = []
    records, other = 0, 0
    blocks: list[dict] = []
    names = Names()
    reader = csv.reader(ended_lines(pieces), delimiter=" ", quotechar='"', doublequote=True, strict=True)
    first_line = 1
    append_texts, append_line, problem = texts.append, lines.append, problems.append
    try:
        for row in reader:
            line, first_line = first_line, reader.line_num + 1
            if not row or row[0] != EVENT:
                other += bool(row) and row != [""]
                continue
            records += 1
            try:
                append_texts(_texts(row))
                append_line(line)
            except (IndexError, ValueError):
                error = _explain(row, line)
                problem((line, error.field, error.message))
            if len(texts) == BLOCK:   # fields as text are bulky: convert them block by block
                blocks.append(_columns(texts, lines, skips, problems, names))
                texts, lines, problems = [], [], []
                append_texts, append_line, problem = texts.append, lines.append, problems.append
    except csv.Error as exc:   # the quoting is broken: nothing after it can be trusted
        problems.append((first_line, "record", f"not an lsb.acct record ({exc})"))
    blocks.append(_columns(texts, lines, skips, problems, names))
    columns = concatenated(blocks)
    notes = (f"{other:,} record(s) of other events (not JOB_FINISH) left out",) if other else ()
    return build_workload(columns, kind=KIND, fields=FIELDS, skips=skips, timezone=timezone, names=names,
                          records=records, notes=notes, compact=compact)
