"""Job traces for the elasticity engine: Table 2 generators and file readers.

A trace is a list of :class:`Job`; every job has an arrival time and task
groups (``count`` identical tasks with ideal memory, ideal duration and a
phase: ``map`` tasks run first, ``reduce`` tasks only once every map task
of the job has finished).

Generators (§6.1, Table 2): job arrivals uniform in ``arrival_s``; tasks
per job, memory per task and task duration drawn per job from a uniform or a
truncated exponential distribution between the given min and max. The paper
does not give the exponential's rate; we use scale ``(max - min) / 4``,
truncated at max (inverse-CDF sampling, no rejection). GB are decimal
(1 GB = 1000 MB); memory is drawn in 100 MB steps.

Readers:

* SLS / DSS JSON: one JSON array of jobs, or job objects written one after
  another (as Hadoop's Scheduler Load Simulator and DSS do). Per job:
  ``job.id``, ``job.start.ms`` and ``job.tasks``, each task group with
  ``c.nr`` (count, default 1), ``c.dur`` (ms), ``c.mem`` (MB) and
  ``c.type`` (``map``/``reduce``, default ``map``). SLS's per-container
  ``container.start.ms``/``container.end.ms`` stand in for ``c.dur``.
  ``c.prio``, ``c.host``, ``c.penalty`` and ``c.ib`` are not read.
* CSV with a header: ``job_id, arrival_s, tasks, memory_mb, duration_s``
  and optional ``phase`` -- one row per task group; rows of one job share
  its ``job_id`` and ``arrival_s``.

Errors name the file, the line and the field.
"""

from __future__ import annotations

import csv
import io
import json
import math
import sys
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from ..core.errors import ScenarioError

PHASES = ("map", "reduce")
DISTRIBUTIONS = ("uniform", "exponential")
MB_PER_GB = 1000
EXP_SCALE_SHARE = 0.25

# Table 2: [min, (lowest max, highest max)] per parameter and distribution.
TABLE2 = {
    "uniform": {"tasks_per_job": (1, (200, 400)), "memory_gb": (1.0, (2.0, 10.0)), "duration_s": (1.0, (200.0, 500.0))},
    "exponential": {"tasks_per_job": (1, (20, 220)), "memory_gb": (1.0, (2.0, 10.0)), "duration_s": (50.0, (100.0, 500.0))},
}


@dataclass(frozen=True)
class TaskGroup:
    count: int
    memory_mb: int
    duration: float
    phase: int  # index into PHASES
    penalty: Mapping[str, Any] | None = None  # None: the model's penalty


@dataclass(frozen=True)
class Job:
    job_id: str
    arrival: float
    groups: tuple[TaskGroup, ...]


def _draw(rng: np.random.Generator, distribution: str, low: float, high: float, size: int) -> np.ndarray:
    """``size`` values in ``[low, high]``: uniform, or ``low + Exp(scale)`` truncated at ``high``."""
    if distribution == "uniform" or high == low:
        return rng.uniform(low, high, size)
    scale = (high - low) * EXP_SCALE_SHARE
    u = rng.uniform(0.0, 1.0, size)
    return low - scale * np.log1p(-u * (1.0 - math.exp(-(high - low) / scale)))


def generate_trace(params: Mapping[str, Any], rng: np.random.Generator, step_mb: int = 100) -> list[Job]:
    """A Table 2 style trace (see the module docstring) from a normalised ``generated`` trace spec.

    Draw order is fixed (arrivals, tasks, memory, durations), so a seed
    always gives the same trace.
    """
    n = params["jobs"]
    dist = params["distribution"]
    arrivals = np.sort(rng.uniform(*params["arrival_s"], n))
    lo, hi = params["tasks_per_job"]
    tasks = np.clip(np.floor(_draw(rng, dist, lo, hi + 1, n)), lo, hi).astype(int)
    lo, hi = params["memory_gb"]
    steps = np.clip(np.round(_draw(rng, dist, lo, hi, n) * MB_PER_GB / step_mb), 1, None).astype(int)
    durations = _draw(rng, dist, *params["duration_s"], n)
    return [
        Job(f"job{i}", float(arrivals[i]), (TaskGroup(int(tasks[i]), int(steps[i]) * step_mb, float(durations[i]), 1),))
        for i in range(n)
    ]


def _field_number(value: Any, *, source: str, line: int | None, field: str, integer=False, minimum=None, positive=False):
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise ScenarioError(field, f"expected a number, got {value!r}", source=source, line=line) from None
    # ``not abs(value) <= max`` also holds for NaN, infinities and integers beyond float range.
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not abs(value) <= sys.float_info.max:
        raise ScenarioError(field, f"expected a number, got {value!r:.40}", source=source, line=line)
    if integer and value != int(value):
        raise ScenarioError(field, f"expected a whole number, got {value!r}", source=source, line=line)
    if positive and value <= 0:
        raise ScenarioError(field, f"must be positive, got {value!r}", source=source, line=line)
    if minimum is not None and value < minimum:
        raise ScenarioError(field, f"must be at least {minimum}, got {value!r}", source=source, line=line)
    return int(value) if integer else float(value)


def _phase(value: Any, *, source: str, line: int | None, field: str) -> int:
    text = str(value).strip().lower() if value is not None else "map"
    if text not in PHASES:
        raise ScenarioError(field, f"unknown task type {value!r} (known: {', '.join(PHASES)})", source=source, line=line)
    return PHASES.index(text)


def _json_objects(text: str, source: str):
    """Yield ``(line, object)`` for a JSON array of objects or concatenated objects."""
    decoder = json.JSONDecoder()
    pos = 0
    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(text):
            return
        line = text.count("\n", 0, pos) + 1
        try:
            value, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise ScenarioError("", f"invalid JSON at column {exc.colno}: {exc.msg}", source=source, line=exc.lineno) from None
        except ValueError as exc:  # an integer of more digits than Python converts
            raise ScenarioError("", f"invalid JSON ({exc})", source=source, line=line) from None
        if isinstance(value, list):
            for item in value:
                yield line, item
        else:
            yield line, value
        pos = end


def read_sls(text: str, source: str) -> list[Job]:
    """Jobs from an SLS / DSS JSON trace (see the module docstring)."""
    jobs = []
    for number, (line, data) in enumerate(_json_objects(text, source)):
        where = f"job {number + 1}"
        if not isinstance(data, Mapping):
            raise ScenarioError(where, "each job must be a JSON object", source=source, line=line)
        job_id = str(data.get("job.id", f"job{number + 1}"))
        where = f"job {job_id!s}"
        if "job.start.ms" not in data:
            raise ScenarioError(f"{where}: job.start.ms", "missing", source=source, line=line)
        start = _field_number(data["job.start.ms"], source=source, line=line, field=f"{where}: job.start.ms", minimum=0)
        tasks = data.get("job.tasks")
        if not isinstance(tasks, list) or not tasks:
            raise ScenarioError(f"{where}: job.tasks", "must be a non-empty list of task groups", source=source, line=line)
        groups = []
        for i, task in enumerate(tasks):
            field = f"{where}: job.tasks[{i}]"
            if not isinstance(task, Mapping):
                raise ScenarioError(field, "must be an object", source=source, line=line)
            count = _field_number(task.get("c.nr", 1), source=source, line=line, field=f"{field}.c.nr", integer=True, positive=True)
            if "c.dur" in task:
                dur_ms = _field_number(task["c.dur"], source=source, line=line, field=f"{field}.c.dur", positive=True)
            elif "container.start.ms" in task and "container.end.ms" in task:
                begin = _field_number(task["container.start.ms"], source=source, line=line, field=f"{field}.container.start.ms")
                end = _field_number(task["container.end.ms"], source=source, line=line, field=f"{field}.container.end.ms")
                dur_ms = _field_number(end - begin, source=source, line=line, field=f"{field}.container.end.ms", positive=True)
            else:
                raise ScenarioError(f"{field}.c.dur", "missing (task duration in ms)", source=source, line=line)
            mem = task.get("c.mem", task.get("container.memory"))
            if mem is None:
                raise ScenarioError(f"{field}.c.mem", "missing (task memory in MB)", source=source, line=line)
            mem = _field_number(mem, source=source, line=line, field=f"{field}.c.mem", positive=True)
            phase = _phase(task.get("c.type", task.get("container.type")), source=source, line=line, field=f"{field}.c.type")
            groups.append(TaskGroup(count, math.ceil(mem), dur_ms / 1000.0, phase))
        jobs.append(Job(job_id, start / 1000.0, tuple(groups)))
    if not jobs:
        raise ScenarioError("", "no jobs in the trace", source=source)
    return jobs


CSV_COLUMNS = ("job_id", "arrival_s", "tasks", "memory_mb", "duration_s")


def _csv_rows(reader: csv.DictReader, source: str):
    """The reader's rows; a line the csv module cannot split (csv.Error) becomes a ScenarioError naming it."""
    try:
        yield from reader
    except csv.Error as exc:
        raise ScenarioError("", f"not readable as CSV ({exc})", source=source, line=reader.line_num) from None


def read_csv(text: str, source: str) -> list[Job]:
    """Jobs from a CSV trace, one row per task group (see the module docstring)."""
    reader = csv.DictReader(io.StringIO(text))
    try:
        header = [h.strip() for h in (reader.fieldnames or [])]
    except csv.Error as exc:
        raise ScenarioError("", f"not readable as CSV ({exc})", source=source, line=1) from None
    missing = [c for c in CSV_COLUMNS if c not in header]
    if missing:
        raise ScenarioError(missing[0], f"missing column (need {', '.join(CSV_COLUMNS)}; optional phase)", source=source, line=1)
    reader.fieldnames = header
    order: list[str] = []
    arrivals: dict[str, float] = {}
    groups: dict[str, list[TaskGroup]] = {}
    for row in _csv_rows(reader, source):
        line = reader.line_num
        if None in row:  # DictReader files surplus fields under the key None
            raise ScenarioError("", f"{len(header) + len(row[None])} fields, the header has {len(header)}",
                                source=source, line=line)
        if not any((v or "").strip() for v in row.values()):
            continue
        job_id = (row["job_id"] or "").strip()
        if not job_id:
            raise ScenarioError("job_id", "empty", source=source, line=line)
        arrival = _field_number(row["arrival_s"], source=source, line=line, field="arrival_s", minimum=0)
        if job_id in arrivals and arrivals[job_id] != arrival:
            raise ScenarioError("arrival_s", f"job {job_id} was given arrival {arrivals[job_id]:g} before", source=source, line=line)
        if job_id not in arrivals:
            order.append(job_id)
            arrivals[job_id] = arrival
            groups[job_id] = []
        count = _field_number(row["tasks"], source=source, line=line, field="tasks", integer=True, positive=True)
        mem = _field_number(row["memory_mb"], source=source, line=line, field="memory_mb", positive=True)
        dur = _field_number(row["duration_s"], source=source, line=line, field="duration_s", positive=True)
        phase = _phase(row.get("phase") or None, source=source, line=line, field="phase")
        groups[job_id].append(TaskGroup(count, math.ceil(mem), dur, phase))
    if not order:
        raise ScenarioError("", "no jobs in the trace", source=source)
    return [Job(j, arrivals[j], tuple(groups[j])) for j in order]


def read_trace(text: str, source: str, fmt: str = "auto") -> list[Job]:
    """Parse trace text; ``fmt`` ``auto`` picks JSON when the text starts with ``{`` or ``[``."""
    if fmt == "auto":
        fmt = "sls" if text.lstrip()[:1] in ("{", "[") else "csv"
    return read_sls(text, source) if fmt == "sls" else read_csv(text, source)
