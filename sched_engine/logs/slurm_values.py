"""The values of ``sacct --parsable2`` fields: times, limits, memory requests, TRES lists, records to mend.

Read by :mod:`.slurm`; every rule is in ``docs/site-logs.md``.
"""

from __future__ import annotations

import re
from functools import lru_cache

import numpy as np
import pandas as pd

from .jobs_table import NAN, Memo

#: Fields of free text, where a ``|`` or a newline of the user's own may stand.
FREE_TEXT = frozenset({"jobname", "constraints", "submitline", "comment", "admincomment", "systemcomment", "workdir",
                       "wckey", "container", "stdin", "stdout", "stderr", "extra", "mcslabel", "reservation",
                       "reason", "qosreq"})
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
_UNLIMITED_TIME = re.compile(r"(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+(?:\.\d+)?))?")


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
