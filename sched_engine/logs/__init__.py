"""Resource-manager accounting logs read as workloads (Slurm, PBS/TORQUE, SGE/UGE: colon, JSON or ``qacct -j``, LSF).

Each reader module holds one kind of log and offers the same names:

* ``KIND`` -- a short name (``"sacct"``, ``"pbs"``, ``"sge"``, ``"sge-json"``, ``"qacct"``, ``"lsf"``) used by
  ``parse_workload(fmt=...)`` and in every message;
* ``sniff(name, head) -> bool`` -- whether a file called ``name`` whose first
  lines are ``head`` (at most 64 KiB of text) is this kind of log;
* ``read(pieces, *, source, timezone="UTC", skip_malformed=False, compact=False)`` --
  the same from the text in pieces ending at line breaks (:mod:`.stream`: a file
  read a megabyte at a time), ``compact`` the frame a conversion writes from;
* ``parse(text, *, source, timezone="UTC", skip_malformed=False) -> Workload`` --
  the jobs (:data:`sched_engine.batch.traces.JOB_COLUMNS`), with ``notes``
  saying what was read and what was left out (steps, jobs that never started,
  duplicates, rows skipped).

A reader writes only the body of ``read``; both entry points come from
:func:`.entry.entry_points`, with the reader's piece size and number of passes.

:func:`sniff_log` tries every reader in :data:`READERS`; the batch reader calls
it before its own SWF/GWF/CSV guess.
"""

from __future__ import annotations

from importlib import import_module

#: Reader modules of this package, tried in this order by :func:`sniff_log`.
READERS: tuple[str, ...] = ("slurm", "pbs", "sge", "sge_json", "qacct", "lsf")
#: Their ``KIND`` names, in the same order (known without importing a reader; a test checks them).
KINDS: tuple[str, ...] = ("sacct", "pbs", "sge", "sge-json", "qacct", "lsf")


def reader(kind: str):
    """The reader module whose ``KIND`` is ``kind``, or ``None``."""
    for name in READERS:
        module = import_module(f"{__name__}.{name}")
        if module.KIND == kind:
            return module
    return None


def kinds() -> tuple[str, ...]:
    """The ``KIND`` of every reader."""
    return tuple(import_module(f"{__name__}.{name}").KIND for name in READERS)


def sniff_log(name: str, head: str) -> str | None:
    """The ``KIND`` of the first reader that recognises the file, else ``None``."""
    for module_name in READERS:
        module = import_module(f"{__name__}.{module_name}")
        if module.sniff(name, head):
            return module.KIND
    return None


def checked_timezone(value, field: str = "trace.timezone") -> str:
    """A tz database name (``UTC``, ``Europe/Prague``) for a log's local times; ScenarioError naming ``field``."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    from ..core.errors import ScenarioError

    if not isinstance(value, str) or not value.strip():
        raise ScenarioError(field, "name a time zone of the tz database, e.g. UTC or Europe/Prague")
    try:
        return ZoneInfo(value.strip()).key
    except (ZoneInfoNotFoundError, ValueError):
        raise ScenarioError(field, f"unknown time zone {value!r} (a tz database name such as Europe/Prague)") from None
