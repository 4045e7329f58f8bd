"""The batch engine's model: a workload file, clusters, failures, options.

Normalised form (plain JSON, the scenario's ``model``)::

    {
      "trace": {"path": "sample:hpc2n-excerpt.swf", "label": "hpc2n-excerpt.swf",
                "format": "auto", "skip_malformed": false, "max_jobs": null, "sha256": "..."},
      "clusters": [{"name": "seth", "machines": 120, "cpus_per_machine": 2,
                    "speed": 1.0, "properties": []}],
      "failures": {"kind": "none"}                       # or
                  {"kind": "trace", "path": "...", "sha256": "...", "align": "start"}
                  {"kind": "synthetic", "afc": 7e-4, ...},
      "requirements": false,
      "estimates": "perfect",
      "load_factor": 1.0,
      "allocation": "whole_nodes",                       # only when not "cpus" (the default)
      "queues": {"priority": [...], "best_effort": [...]},  # optional, :mod:`.queues`
      "user_limits": {"running_jobs": 4, "cpus": 64},      # optional, :mod:`.queues`
      "capacity": "log",                                   # optional, :mod:`.capacity`
      "reasons": false                                     # only when false (true is the default)
    }

``clusters`` may be empty: the trace header's ``MaxNodes``/``MaxProcs``
then define one cluster. ``machines_path`` (an Alea ``.machines`` file) may
stand in for ``clusters`` and is read into it. Files are named by
reference (``upload:<sha256>``, ``sample:<name>``) or by a path, resolved
against the working directory, then the project directory
(:mod:`sched_engine.core.inputs`; a path to an upload or a sample becomes
its reference); the file's SHA-256 joins the model so cached results follow
the content, not the name; ``label`` (default: the file name) names the
file in error messages -- uploads are stored under their hash, so the label
keeps the name the user knows.
``load_factor`` scales the offered load of any trace: every job's time
since the first submission is divided by it (2.0 submits the same jobs
twice as fast; runtimes and sizes unchanged), as load is varied in
scheduling studies that reuse one log at several utilisations.
``allocation``: ``cpus`` (default) gives a job exactly the CPUs it asks
for, packed first fit onto machines shared with other jobs; ``whole_nodes``
gives it whole machines, as sites that never share a node do: a job asking
``p`` CPUs holds ``ceil(p / c)`` machines of ``c`` CPUs, i.e. ``procs``
becomes ``c * ceil(p / c)`` (the ``jobs`` frame's ``procs`` is what it
holds). Without ``clusters`` the trace header gives ``c`` as
``MaxProcs / MaxNodes`` (RICC: 8192 / 1024 = 8). All machines must then have
one CPU count.
``reasons``: ``false`` runs without recording why jobs waited (no
``pending`` frame): a sizing search's probes, which need only a summary.
``failures.align``: ``start`` shifts the failure trace so its first failure
falls at the workload's first submission; ``absolute`` keeps epoch times.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from ..core import inputs, validate
from ..core.errors import ScenarioError
from ..logs import KINDS as LOG_KINDS
from ..logs import checked_timezone
from .capacity import capacity_clusters, normalize_capacity
from .cluster import ClusterState
from .failures import SYNTHETIC_DEFAULTS, failure_events, synthetic_failures
from .machine_files import read_failures, read_machines
from .queues import QueueInputs, normalize_queues, normalize_user_limits, queue_inputs
from .requirements import both, partition_clusters, suitable_clusters, synthetic_requirements
from .traces import TraceError, read_workload

TRACE_FORMATS = ("auto", "swf", "swf-ext", "gwf", "csv", *LOG_KINDS)
FAILURE_KINDS = ("none", "trace", "synthetic")
ESTIMATES = ("perfect", "trace")
ALLOCATIONS = ("cpus", "whole_nodes")
MIN_LOAD_FACTOR, MAX_LOAD_FACTOR = 0.01, 100.0
#: Bounds on the hardware a model may describe, checked before anything is built per machine or CPU
#: (the largest shipped machine file, RICC, has 1,024 machines of 8 CPUs).
MAX_MACHINES = 1_000_000          # in all clusters together
MAX_CPUS_PER_MACHINE = 100_000
MAX_CLUSTERS = 10_000


def resolve_path(path: str) -> Path:
    """The local file a model's reference or path names (:meth:`~sched_engine.core.inputs.InputFiles.locate`)."""
    return inputs.current().locate(path)


def file_sha256(path: Path, field: str) -> str:
    """The SHA-256 of a local file (hashed once per version of it); errors name the file, not its directory."""
    try:
        return inputs.file_sha256(path)
    except OSError as exc:
        raise ScenarioError(field, f"cannot read {path.name} ({exc.strerror})") from None
    except ValueError:   # a NUL byte in the name: no such file can exist
        raise ScenarioError(field, f"not a usable file name: {path.name!r}") from None


def _normalize_cluster(data: Any, field: str) -> dict:
    if not isinstance(data, Mapping):
        raise ScenarioError(field, "must be an object with name, machines, cpus_per_machine")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ScenarioError(f"{field}.name", "must be a non-empty name")
    machines = validate.whole(data.get("machines"), f"{field}.machines", above=0, maximum=MAX_MACHINES)
    per = data.get("cpus_per_machine")
    if isinstance(per, list):
        if len(per) != machines:
            raise ScenarioError(f"{field}.cpus_per_machine", f"lists {len(per)} machines, machines is {machines}")
        per = [validate.whole(v, f"{field}.cpus_per_machine[{i}]", above=0, maximum=MAX_CPUS_PER_MACHINE)
               for i, v in enumerate(per)]
    else:
        per = validate.whole(per, f"{field}.cpus_per_machine", above=0, maximum=MAX_CPUS_PER_MACHINE)
    speed = validate.number(data.get("speed", 1.0), f"{field}.speed", above=0)
    properties = data.get("properties", [])
    if isinstance(properties, str):
        properties = [p.strip() for p in properties.split(",") if p.strip()]
    if not isinstance(properties, list) or not all(isinstance(p, str) for p in properties):
        raise ScenarioError(f"{field}.properties", "must be a list of property names")
    return {"name": name.strip(), "machines": machines, "cpus_per_machine": per, "speed": speed,
            "properties": sorted(set(properties))}


def cluster_cpus(cluster: Mapping[str, Any]) -> int:
    """CPUs of a normalised cluster (``cpus_per_machine`` one number, or one per machine)."""
    per = cluster["cpus_per_machine"]
    return sum(per) if isinstance(per, list) else cluster["machines"] * per


def describe_hardware(clusters: list[Mapping[str, Any]]) -> str:
    """``14 clusters, 806 CPUs`` for normalised clusters; an empty list is the trace header's cluster."""
    if not clusters:
        return "1 cluster from the trace header"
    count = len(clusters)
    return f"{count} cluster{'s' if count != 1 else ''}, {sum(map(cluster_cpus, clusters)):,} CPUs"


def normalize_clusters(clusters: Any) -> list[dict]:
    """Check a list of clusters (names unique) and return their canonical form."""
    if not isinstance(clusters, list):
        raise ScenarioError("clusters", "must be a list of clusters")
    if len(clusters) > MAX_CLUSTERS:
        raise ScenarioError("clusters", f"lists {len(clusters):,} clusters, at most {MAX_CLUSTERS:,}")
    clusters = [_normalize_cluster(c, f"clusters[{i}]") for i, c in enumerate(clusters)]
    names = [c["name"] for c in clusters]
    if len(set(names)) != len(names):
        raise ScenarioError("clusters", "cluster names must be unique")
    machines = sum(c["machines"] for c in clusters)
    if machines > MAX_MACHINES:
        raise ScenarioError("clusters", f"{machines:,} machines in all, at most {MAX_MACHINES:,}")
    return clusters


def normalize_model(model: Mapping[str, Any]) -> dict:
    """Check a batch model and return its canonical form (see the module docstring)."""
    if not isinstance(model, Mapping):
        raise ScenarioError("", "the model must be an object")
    known = {"trace", "clusters", "machines_path", "failures", "requirements", "synthetic_requirements", "estimates",
             "load_factor", "allocation", "queues", "user_limits", "capacity", "reasons"}
    unknown = sorted(set(model) - known)
    if unknown:
        raise ScenarioError(unknown[0], f"unknown field (known: {', '.join(sorted(known))})")
    trace = model.get("trace")
    if not isinstance(trace, Mapping) or not isinstance(trace.get("path"), str) or not trace["path"]:
        raise ScenarioError("trace.path", "name the workload file (SWF, extended SWF, GWF or CSV, optionally .gz)")
    fmt = trace.get("format", "auto")
    if fmt not in TRACE_FORMATS:
        raise ScenarioError("trace.format", f"unknown format {fmt!r} (known: {', '.join(TRACE_FORMATS)})")
    max_jobs = trace.get("max_jobs")
    if max_jobs is not None:
        max_jobs = validate.whole(max_jobs, "trace.max_jobs", above=0)
    files = inputs.current()
    reference = files.reference(trace["path"], "trace.path")
    label = trace.get("label")
    if label is not None and not isinstance(label, str):
        raise ScenarioError("trace.label", "must be text (the file's name as shown to people)")
    label = label or files.name(trace["path"])
    normalized_trace = {
        "path": reference,
        "label": label,
        "format": fmt,
        "skip_malformed": bool(trace.get("skip_malformed", False)),
        "max_jobs": max_jobs,
        "sha256": files.sha256(reference, "trace.path", label),
    }
    if trace.get("timezone") not in (None, "UTC"):   # a log's local times (sacct, LSF...); UTC is the default
        normalized_trace["timezone"] = checked_timezone(trace["timezone"])

    clusters = model.get("clusters") or []
    if model.get("machines_path"):
        if not isinstance(model["machines_path"], str):
            raise ScenarioError("machines_path", "name the .machines file")
        machines = files.reference(model["machines_path"], "machines_path")
        clusters = read_machines(files.path(machines, "machines_path"), source=files.name(model["machines_path"]))
    clusters = normalize_clusters(clusters)

    failures = model.get("failures") or {"kind": "none"}
    kind = failures.get("kind", "none") if isinstance(failures, Mapping) else None
    if kind not in FAILURE_KINDS:
        raise ScenarioError("failures.kind", f"must be one of {', '.join(FAILURE_KINDS)}")
    if kind == "none":
        normalized_failures: dict = {"kind": "none"}
    elif kind == "trace":
        path = failures.get("path")
        if not isinstance(path, str) or not path:
            raise ScenarioError("failures.path", "name the failure trace file")
        align = failures.get("align", "start")
        if align not in ("start", "absolute"):
            raise ScenarioError("failures.align", "must be 'start' or 'absolute'")
        reference = files.reference(path, "failures.path")
        normalized_failures = {"kind": "trace", "path": reference, "align": align,
                               "sha256": files.sha256(reference, "failures.path", files.name(path))}
    else:
        normalized_failures = {"kind": "synthetic"}
        for name, default in SYNTHETIC_DEFAULTS.items():
            value = failures.get(name, default)
            normalized_failures[name] = validate.number(
                value, f"failures.{name}", minimum=0.0, integer=isinstance(default, int),
                above=0 if name in ("interarrival_shape", "duration_shape", "duration_scale_s") else None,
            )
        if normalized_failures["burst_probability"] > 1:
            raise ScenarioError("failures.burst_probability", "must be between 0 and 1")

    synthetic = model.get("synthetic_requirements")
    if synthetic is not None:
        if not isinstance(synthetic, Mapping):
            raise ScenarioError("synthetic_requirements", "must be an object like {\"share\": 0.5}")
        share = validate.number(synthetic.get("share", 0.5), "synthetic_requirements.share", minimum=0.0)
        if share > 1:
            raise ScenarioError("synthetic_requirements.share", "must be between 0 and 1")
        synthetic = {"share": share}

    estimates = model.get("estimates", "perfect")
    if estimates not in ESTIMATES:
        raise ScenarioError("estimates", f"must be one of {', '.join(ESTIMATES)}")
    load_factor = validate.number(model.get("load_factor", 1.0), "load_factor", above=0)
    if not MIN_LOAD_FACTOR <= load_factor <= MAX_LOAD_FACTOR:
        raise ScenarioError("load_factor", f"must be between {MIN_LOAD_FACTOR} and {MAX_LOAD_FACTOR:g} "
                                           f"(1 keeps the trace's arrivals), got {load_factor:g}")
    allocation = model.get("allocation", "cpus")
    if allocation not in ALLOCATIONS:
        raise ScenarioError("allocation", f"must be one of {', '.join(ALLOCATIONS)}, got {allocation!r}")
    normalized = {
        "trace": normalized_trace,
        "clusters": clusters,
        "failures": normalized_failures,
        "requirements": bool(model.get("requirements", False)),
        "synthetic_requirements": synthetic,
        "estimates": estimates,
        "load_factor": load_factor,
    }
    # Defaults stay out, so models from before keep their content hash.
    extra = {"allocation": None if allocation == "cpus" else allocation,
             "queues": normalize_queues(model.get("queues")), "user_limits": normalize_user_limits(model.get("user_limits")),
             "capacity": normalize_capacity(model.get("capacity")),
             "reasons": None if validate.boolean(model.get("reasons", True), "reasons") else False}
    normalized.update({name: value for name, value in extra.items() if value is not None})
    return normalized


@lru_cache(maxsize=4)
def _cached_workload(path: str, sha256: str, fmt: str, skip_malformed: bool, source: str, timezone: str = "UTC"):
    # Keyed by content hash: a changed file is read again. Callers never modify the frame.
    return read_workload(path, fmt, source=source, skip_malformed=skip_malformed, timezone=timezone)


def workload_for(trace: Mapping[str, Any]):
    """The parsed workload of a normalised ``trace`` entry (memoised by content hash)."""
    files = inputs.current()
    return _cached_workload(str(files.path(trace["path"], "trace.path")), trace["sha256"], trace["format"],
                            trace["skip_malformed"], trace.get("label") or files.name(trace["path"]),
                            trace.get("timezone", "UTC"))


@dataclass
class BatchInput:
    """Everything a run needs, read from a normalised model."""

    jobs: pd.DataFrame            # the workload, times relative to the first submission
    clusters: list[ClusterState]
    failures: list[tuple[float, int, int, float]]
    suitable: list[tuple[int, ...] | None]
    estimate: np.ndarray
    origin: float                 # epoch (or trace) time of the first submission
    info: dict                    # dropped / skipped / ignored-requirement counts
    queues: QueueInputs           # queue ranks, best-effort jobs, user limits (:mod:`.queues`)
    unsuitable: dict[int, str]    # why a job has no cluster, where it is not "no suitable cluster" (its partition)


def header_clusters(header: Mapping[str, Any], source: str) -> list[dict]:
    """One cluster from an SWF header's ``MaxNodes`` and ``MaxProcs``."""
    procs, nodes = header.get("MaxProcs"), header.get("MaxNodes")
    if not isinstance(procs, int) or procs <= 0:
        raise ScenarioError("clusters", f"no clusters given and {source} has no MaxProcs header line; "
                                        "add clusters or a .machines file")
    if isinstance(nodes, int) and nodes > 0 and procs % nodes == 0:
        return [{"name": "cluster", "machines": nodes, "cpus_per_machine": procs // nodes, "speed": 1.0, "properties": []}]
    return [{"name": "cluster", "machines": procs, "cpus_per_machine": 1, "speed": 1.0, "properties": []}]


def _checked(clusters: list[dict], source: str) -> list[dict]:
    """Clusters read from a trace header, held to the bounds of :func:`normalize_clusters`."""
    try:
        return normalize_clusters(clusters)
    except ScenarioError as exc:
        raise ScenarioError(exc.field, f"the header's cluster: {exc.message}", source=source) from None


def whole_nodes(procs: np.ndarray, clusters: list[ClusterState]) -> np.ndarray:
    """CPUs each job holds when it takes whole machines: ``c * ceil(p / c)`` (see the module docstring)."""
    sizes = {cpus for cluster in clusters for cpus in cluster.cpus}
    if len(sizes) != 1:
        raise ScenarioError("allocation", "whole_nodes needs machines of one CPU count, found "
                                          + ", ".join(map(str, sorted(sizes))))
    per = sizes.pop()
    return -(-procs // per) * per


def load_inputs(model: Mapping[str, Any], rng: np.random.Generator) -> BatchInput:
    """Read the workload and failures of a normalised model and build the clusters."""
    trace = model["trace"]
    source = trace.get("label") or inputs.current().name(trace["path"])
    # Independent streams, so switching failures on or off leaves the
    # generated requirements unchanged (and the policy's own draws too).
    failure_rng, requirement_rng = rng.spawn(2)
    workload = workload_for(trace)
    jobs = workload.jobs.sort_values(["submit_time"], kind="stable")
    if trace["max_jobs"]:
        jobs = jobs.iloc[: trace["max_jobs"]]
    if jobs.empty:
        raise TraceError("", "the workload has no usable jobs", source=source)
    origin = float(jobs["submit_time"].iloc[0])
    since_first = jobs["submit_time"] - origin
    load_factor = model.get("load_factor", 1.0)
    jobs = jobs.assign(submit_time=since_first / load_factor if load_factor != 1.0 else since_first)
    jobs = jobs.reset_index(drop=True)

    specs = model["clusters"] or _checked(header_clusters(workload.header, source), source)
    clusters = []
    for index, spec in enumerate(specs):
        per = spec["cpus_per_machine"]
        cpus = per if isinstance(per, list) else [per] * spec["machines"]
        clusters.append(ClusterState(index, spec["name"], cpus, spec["speed"], spec["properties"]))
    if model.get("allocation") == "whole_nodes":
        jobs = jobs.assign(procs=whole_nodes(jobs["procs"].to_numpy(dtype=np.int64), clusters))
    clusters = capacity_clusters(clusters, jobs, model.get("capacity"))   # the log's capacity (:mod:`.capacity`)
    names = [c.name for c in clusters]
    machine_counts = [len(c.cpus) for c in clusters]

    failures = model["failures"]
    span = float(jobs["submit_time"].iloc[-1] + jobs["run_time"].max())
    if failures["kind"] == "trace":
        files = inputs.current()
        name = files.name(failures["path"])
        frame = read_failures(files.path(failures["path"], "failures.path"), source=name)
        offset = float(frame["start"].min()) if failures["align"] == "start" and len(frame) else origin
        events = failure_events(frame, names, machine_counts, offset=offset, source=name)
    elif failures["kind"] == "synthetic":
        params = {k: v for k, v in failures.items() if k != "kind"}
        frame = synthetic_failures(names, machine_counts, span, failure_rng, **params)
        events = failure_events(frame, names, machine_counts, offset=0.0)
    else:
        events = []

    ignored = 0
    requirements = jobs["requirement"].fillna("").tolist()
    if model.get("synthetic_requirements"):
        requirements = synthetic_requirements(
            requirements, [c.properties for c in clusters], model["synthetic_requirements"]["share"], requirement_rng
        )
        jobs = jobs.assign(requirement=requirements)
    if model["requirements"]:
        suitable, ignored = suitable_clusters(
            requirements, names, [c.properties for c in clusters],
            [c.max_cpus_per_machine for c in clusters],
        )
    else:
        suitable = [None] * len(jobs)
    partitions = jobs["partition"].fillna("").astype(str).tolist() if "partition" in jobs.columns else [""] * len(jobs)
    in_partition, unsuitable = partition_clusters(partitions, [c.properties for c in clusters])
    if unsuitable or any(allowed is not None for allowed in in_partition):
        suitable = [both(a, b) for a, b in zip(suitable, in_partition)]
    run_time = jobs["run_time"].to_numpy(dtype=float)
    if model["estimates"] == "trace":
        # The scheduler sees the user's requested time; a job never runs past
        # it here (a longer run would have been killed at its limit), so the
        # estimate is max(requested, actual) and unknown (-1) means perfect.
        requested = jobs["requested_time"].to_numpy(dtype=float)
        estimate = np.maximum(np.where(requested > 0, requested, run_time), run_time)
    else:
        estimate = run_time.copy()
    return BatchInput(
        jobs=jobs, clusters=clusters, failures=events, suitable=suitable, estimate=estimate, origin=origin,
        unsuitable=unsuitable,
        queues=queue_inputs(model, jobs), info={"dropped_jobs": workload.dropped, "skipped_lines": workload.skipped_lines,
              "jobs_with_ignored_properties": ignored},
    )
