"""The elasticity engine's model: nodes, memory step, penalty model, trace.

Normalised form (plain JSON, the scenario's ``model``)::

    {
      "nodes": [{"count": 100, "cores": 16, "memory_mb": 10000}],
      "memory_step_mb": 100,
      "penalty": {"kind": "spill", "factor": 3.0},          # see .penalty
      "trace": {"kind": "jobs", "jobs": [
                  {"job_id": "a", "arrival": 0.0,
                   "tasks": [{"count": 1, "memory_mb": 6000, "duration": 100.0,
                              "phase": "map", "penalty": null}]}]}
             # or {"kind": "generated", "distribution": "uniform", "jobs": 100,
             #     "tasks_per_job": [1, 300], "memory_gb": [1.0, 6.0],
             #     "duration_s": [1.0, 350.0], "arrival_s": [0.0, 1000.0]}
             # or {"kind": "file", "path": "upload:<sha256>", "format": "auto|sls|csv",
             #     "label": "...", "sha256": "..."}
    }

Each task takes one core. Ideal task memory is rounded up to the memory
step (YARN rounds requests up to its allocation increment). A generated
trace is drawn from the run's random generator, so the scenario seed picks
the trace and every policy run with that seed sees the same one.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Mapping

import numpy as np

from ..core import inputs, validate
from ..core.errors import ScenarioError
from ..core.io import read_text
from .penalty import normalize_penalty
from .traces import DISTRIBUTIONS, MB_PER_GB, PHASES, Job, TaskGroup, generate_trace, read_trace

TRACE_KINDS = ("jobs", "generated", "file")
FILE_FORMATS = ("auto", "sls", "csv")
#: Bounds checked before anything is built per node or per job, so a preview of the model stays small
#: (100,000 nodes take a few MB; the paper's cluster has 100, the page-scale benchmark 3,000).
MAX_NODES = 100_000            # in all node groups together
MAX_GENERATED_JOBS = 100_000   # jobs a generated trace draws
MAX_TASKS_PER_JOB = 100_000


@dataclass(frozen=True)
class Inputs:
    """A model made concrete: per-node capacities and the jobs to run."""

    cores: tuple[int, ...]
    memory_mb: tuple[int, ...]
    step_mb: int
    penalty: Mapping[str, Any]
    jobs: tuple[Job, ...]


def _normalize_nodes(data: Any) -> list[dict]:
    if not isinstance(data, list) or not data:
        raise ScenarioError("nodes", "must be a non-empty list of node groups {count, cores, memory_mb}")
    groups = []
    for i, group in enumerate(data):
        field = f"nodes[{i}]"
        if not isinstance(group, Mapping):
            raise ScenarioError(field, "must be an object with count, cores, memory_mb")
        validate.known_keys(group, {"count", "cores", "memory_mb"}, field)
        groups.append({
            "count": validate.whole(group.get("count"), f"{field}.count", above=0, maximum=MAX_NODES),
            "cores": validate.whole(group.get("cores"), f"{field}.cores", above=0),
            "memory_mb": validate.whole(group.get("memory_mb"), f"{field}.memory_mb", above=0),
        })
    total = sum(group["count"] for group in groups)
    if total > MAX_NODES:
        raise ScenarioError("nodes", f"{total:,} nodes in all, at most {MAX_NODES:,}")
    return groups


def _normalize_generated(data: Mapping) -> dict:
    validate.known_keys(data, {"kind", "distribution", "jobs", "tasks_per_job", "memory_gb", "duration_s", "arrival_s"}, "trace")
    dist = data.get("distribution", "uniform")
    if dist not in DISTRIBUTIONS:
        raise ScenarioError("trace.distribution", f"unknown distribution {dist!r} (known: {', '.join(DISTRIBUTIONS)})")
    spec = {
        "kind": "generated",
        "distribution": dist,
        "jobs": validate.whole(data.get("jobs"), "trace.jobs", above=0, maximum=MAX_GENERATED_JOBS),
        "tasks_per_job": validate.number_range(data.get("tasks_per_job"), "trace.tasks_per_job", integer=True,
                                               minimum=1, maximum=MAX_TASKS_PER_JOB),
        "memory_gb": validate.number_range(data.get("memory_gb"), "trace.memory_gb", minimum=0.1),
        "duration_s": validate.number_range(data.get("duration_s"), "trace.duration_s", minimum=0.001),
        "arrival_s": validate.number_range(data.get("arrival_s", [0.0, 1000.0]), "trace.arrival_s"),
    }
    return spec


def _normalize_task(task: Any, field: str) -> dict:
    if not isinstance(task, Mapping):
        raise ScenarioError(field, "must be an object with count, memory_mb, duration")
    validate.known_keys(task, {"count", "memory_mb", "duration", "phase", "penalty"}, field)
    phase = task.get("phase", "map")
    if phase not in PHASES:
        raise ScenarioError(f"{field}.phase", f"unknown phase {phase!r} (known: {', '.join(PHASES)})")
    penalty = task.get("penalty")
    return {
        "count": validate.whole(task.get("count", 1), f"{field}.count", above=0, maximum=MAX_TASKS_PER_JOB),
        "memory_mb": validate.number(task.get("memory_mb"), f"{field}.memory_mb", above=0),
        "duration": validate.number(task.get("duration"), f"{field}.duration", above=0),
        "phase": phase,
        "penalty": None if penalty is None else normalize_penalty(penalty, f"{field}.penalty"),
    }


def _normalize_jobs(data: Any) -> list[dict]:
    if not isinstance(data, list) or not data:
        raise ScenarioError("trace.jobs", "must be a non-empty list of jobs")
    jobs, seen = [], set()
    for i, job in enumerate(data):
        field = f"trace.jobs[{i}]"
        if not isinstance(job, Mapping):
            raise ScenarioError(field, "must be an object with job_id, arrival, tasks")
        validate.known_keys(job, {"job_id", "arrival", "tasks"}, field)
        job_id = str(job.get("job_id", f"job{i}"))
        if job_id in seen:
            raise ScenarioError(f"{field}.job_id", f"duplicate job id {job_id!r}")
        seen.add(job_id)
        tasks = job.get("tasks")
        if not isinstance(tasks, list) or not tasks:
            raise ScenarioError(f"{field}.tasks", "must be a non-empty list of task groups")
        jobs.append({
            "job_id": job_id,
            "arrival": validate.number(job.get("arrival", 0.0), f"{field}.arrival", minimum=0.0),
            "tasks": [_normalize_task(t, f"{field}.tasks[{k}]") for k, t in enumerate(tasks)],
        })
    return jobs


@lru_cache(maxsize=16)
def _read_file(path: str, sha256: str, fmt: str, label: str) -> tuple[Job, ...]:
    del sha256  # part of the cache key only: a changed file is read again
    return tuple(read_trace(read_text(path, source=label), label, fmt))


def _normalize_file(data: Mapping) -> tuple[dict, tuple[Job, ...]]:
    validate.known_keys(data, {"kind", "path", "format", "label", "sha256"}, "trace")
    path = data.get("path")
    if not isinstance(path, str) or not path:
        raise ScenarioError("trace.path", "name the trace file (SLS/DSS JSON or CSV)")
    fmt = data.get("format", "auto")
    if fmt not in FILE_FORMATS:
        raise ScenarioError("trace.format", f"unknown format {fmt!r} (known: {', '.join(FILE_FORMATS)})")
    files = inputs.current()
    reference = files.reference(path, "trace.path")
    label = str(data.get("label") or files.name(path))
    sha = files.sha256(reference, "trace.path", label)
    jobs = _read_file(str(files.path(reference, "trace.path")), sha, fmt, label)
    return {"kind": "file", "path": reference, "format": fmt, "label": label, "sha256": sha}, jobs


def _jobs_from_spec(jobs: list[dict]) -> tuple[Job, ...]:
    return tuple(
        Job(j["job_id"], j["arrival"], tuple(
            TaskGroup(t["count"], int(-(-t["memory_mb"] // 1)), t["duration"], PHASES.index(t["phase"]), t["penalty"])
            for t in j["tasks"]
        ))
        for j in jobs
    )


def _check_fits(jobs, nodes: list[dict], source: str | None) -> None:
    """Every task must fit some node when that node is empty."""
    largest = max(g["memory_mb"] for g in nodes)
    for job in jobs:
        for k, group in enumerate(job.groups):
            if group.memory_mb > largest:
                raise ScenarioError(
                    f"job {job.job_id}: task group {k}",
                    f"needs {group.memory_mb} MB per task, more than any node has ({largest} MB)",
                    source=source,
                )


def normalize_model(model: Mapping[str, Any]) -> dict:
    """Check an elasticity model and return its canonical form (see the module docstring)."""
    if not isinstance(model, Mapping):
        raise ScenarioError("", "the model must be an object")
    validate.known_keys(model, {"nodes", "memory_step_mb", "penalty", "trace"}, "")
    nodes = _normalize_nodes(model.get("nodes"))
    step = validate.whole(model.get("memory_step_mb", 100), "memory_step_mb", above=0)
    penalty = normalize_penalty(model.get("penalty", {"kind": "step", "factor": 1.5}))
    trace = model.get("trace")
    if not isinstance(trace, Mapping) or trace.get("kind") not in TRACE_KINDS:
        raise ScenarioError("trace.kind", f"the trace needs a kind ({', '.join(TRACE_KINDS)})")
    if trace["kind"] == "generated":
        spec = _normalize_generated(trace)
        largest = max(g["memory_mb"] for g in nodes)
        if spec["memory_gb"][1] * MB_PER_GB > largest:
            raise ScenarioError("trace.memory_gb", f"max {spec['memory_gb'][1]:g} GB per task exceeds the largest node ({largest} MB)")
    elif trace["kind"] == "jobs":
        validate.known_keys(trace, {"kind", "jobs"}, "trace")
        spec = {"kind": "jobs", "jobs": _normalize_jobs(trace.get("jobs"))}
        _check_fits(_jobs_from_spec(spec["jobs"]), nodes, None)
    else:
        spec, jobs = _normalize_file(trace)
        _check_fits(jobs, nodes, spec["label"])
    return {"nodes": nodes, "memory_step_mb": step, "penalty": penalty, "trace": spec}


def load_inputs(model: Mapping[str, Any], rng: np.random.Generator) -> Inputs:
    """Nodes and jobs of a normalised model (a generated trace is drawn from ``rng``)."""
    step = model["memory_step_mb"]
    trace = model["trace"]
    if trace["kind"] == "generated":
        jobs = tuple(generate_trace(trace, rng, step))
    elif trace["kind"] == "jobs":
        jobs = _jobs_from_spec(trace["jobs"])
    else:
        jobs = _read_file(str(inputs.current().path(trace["path"], "trace.path")), trace["sha256"], trace["format"],
                          trace["label"])
    cores, memory = [], []
    for group in model["nodes"]:
        cores += [group["cores"]] * group["count"]
        memory += [group["memory_mb"]] * group["count"]
    return Inputs(tuple(cores), tuple(memory), step, model["penalty"], jobs)
