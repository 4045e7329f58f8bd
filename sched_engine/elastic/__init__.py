"""Memory elasticity: YARN, YARN-ME and Meganode (Iorgulescu et al., ATC'17).

Tasks may run with less than their ideal memory at a runtime penalty
(:mod:`.penalty`); YARN-ME makes such under-sized ("elastic") allocations
when they do not delay the job (:mod:`.simulate`).

``jobs`` columns (beyond the common ones): ``runtime_s`` (end - submit),
``tasks``, ``elastic_tasks``, ``map_phase_s``, ``reduce_phase_s`` (NaN when
the job has no such phase). ``status`` is ``finished``.

``timeline`` metrics, entity ``cluster``: ``memory_used_mb``,
``memory_utilisation`` (share of all node memory), ``regular_tasks``,
``elastic_tasks`` (running), one row per change however long the run (charts
reduce what they draw, keeping each bin's minima and maxima). When a run has at most 20,000
tasks, also ``job_memory_mb`` per entity ``node-<i>/<job_id>``: the memory a
job holds on a node.

``summary`` metrics: see :func:`summarise`.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import pandas as pd

from ..core import metrics as core_metrics
from ..core.observers import changes_only
from ..core.registry import EngineEntry, Param, PolicyEntry
from ..core.result import summary_frame, timeline_frame
from . import metrics
from .model import load_inputs, normalize_model
from .penalty import normalize_penalty, runtime
from .policies import YARN, YARNME, Meganode
from .presets import paper_model, two_job_model
from .simulate import ElasticSimulation
from .traces import DISTRIBUTIONS, MB_PER_GB, read_trace

ENGINE_NAME = "elastic"
MAX_TASK_SERIES = 20_000


def simulate_jobs(cores, memory_mb, step_mb: int, penalty, jobs, policy, progress=None) -> ElasticSimulation:
    """Run ``jobs`` (a list of :class:`.traces.Job`) on the given nodes; returns the finished simulation."""
    cores, memory_mb = policy.nodes(list(cores), list(memory_mb))
    return ElasticSimulation(cores, memory_mb, step_mb, penalty, jobs, policy, progress).run()


def simulate(model: Mapping[str, Any], policy, rng: np.random.Generator, progress=None) -> ElasticSimulation:
    """Run a normalised model under ``policy``."""
    data = load_inputs(model, rng)
    return simulate_jobs(data.cores, data.memory_mb, data.step_mb, data.penalty, data.jobs, policy, progress)


def run(model: Mapping[str, Any], policy, rng: np.random.Generator, progress=None):
    """Engine entry point: ``(jobs, timeline, summary)`` frames."""
    sim = simulate(model, policy, rng, progress)
    jobs = jobs_frame(sim)
    return jobs, timeline(sim), summarise(sim, jobs)


def jobs_frame(sim: ElasticSimulation) -> pd.DataFrame:
    states = sim.jobs
    submit = np.array([s.job.arrival for s in states], float)
    end = np.array([s.end for s in states], float)

    def phase(k: int) -> np.ndarray:
        return np.array([s.phase_done[k] - s.phase_request[k] if len(s.phases) > k else np.nan for s in states], float)

    map_phase, later_phase = phase(0), phase(1)
    has_maps = np.array([any(g.phase == 0 for g in s.job.groups) for s in states])
    return pd.DataFrame({
        "job_id": pd.Series([s.job.job_id for s in states], dtype="string"),
        "submit_time": submit,
        "start_time": np.array([s.start for s in states], float),
        "end_time": end,
        "status": pd.Series(["finished" if e == e else "running" if s.start == s.start else "waiting"
                             for e, s in zip(end, states)], dtype="string"),
        "runtime_s": end - submit,
        "tasks": np.array([s.tasks for s in states], np.int64),
        "elastic_tasks": np.array([s.elastic_tasks for s in states], np.int64),
        "map_phase_s": np.where(has_maps, map_phase, np.nan),
        "reduce_phase_s": np.where(has_maps, later_phase, map_phase),
    })


def timeline(sim: ElasticSimulation) -> pd.DataFrame:
    samples = np.array(sim.samples, float).reshape(-1, 4)
    total = float(sum(sim.capacity))
    parts = []
    for metric, column, scale in (("memory_used_mb", 1, 1.0), ("memory_utilisation", 1, 1.0 / total),
                                  ("regular_tasks", 2, 1.0), ("elastic_tasks", 3, 1.0)):
        times, values = changes_only(samples[:, 0], samples[:, column] * scale)
        parts.append(timeline_frame(times, ["cluster"] * len(times), [metric] * len(times), values))
    if len(sim.t_job) <= MAX_TASK_SERIES:
        parts.append(_job_node_series(sim))
    return pd.concat(parts, ignore_index=True)


def _job_node_series(sim: ElasticSimulation) -> pd.DataFrame:
    """Memory each job holds on each node over time (``job_memory_mb``)."""
    tasks = pd.DataFrame({"job": sim.t_job, "node": sim.t_node, "start": sim.t_start, "end": sim.t_end, "mem": sim.t_mem})
    changes = pd.concat([
        tasks[["job", "node", "start", "mem"]].rename(columns={"start": "time"}),
        tasks[["job", "node", "end", "mem"]].rename(columns={"end": "time"}).assign(mem=-tasks["mem"]),
    ], ignore_index=True)
    changes = changes.groupby(["job", "node", "time"], sort=True, as_index=False)["mem"].sum()
    changes["value"] = changes.groupby(["job", "node"])["mem"].cumsum()
    ids = [s.job.job_id for s in sim.jobs]
    entities = [f"node-{n}/{ids[j]}" for j, n in zip(changes["job"], changes["node"])]
    return timeline_frame(changes["time"], entities, ["job_memory_mb"] * len(changes), changes["value"])


def summarise(sim: ElasticSimulation, jobs: pd.DataFrame) -> pd.DataFrame:
    """Metrics of one run.

    ``mean_job_runtime_s`` (mean response time of the finished jobs, §5.1),
    ``makespan_s`` (every job's end counts; see
    :mod:`sched_engine.core.metrics`), ``mean_map_phase_s``,
    ``mean_reduce_phase_s`` (see :mod:`.metrics`); ``memory_utilisation``
    (time-weighted mean share of all memory in use from the first arrival to
    the last end); ``jobs``, ``tasks``, ``elastic_tasks``,
    ``elastic_share``; ``estimates`` (timeline generator runs) and
    ``scheduler_cpu_s`` (CPU time of the whole simulation).
    """
    samples = np.array(sim.samples, float).reshape(-1, 4)
    end = float(jobs["end_time"].max()) if len(jobs) else 0.0
    tasks = len(sim.t_job)
    elastic = int(sum(1 for m, i in zip(sim.t_mem, sim.t_ideal) if m < i))
    utilisation = core_metrics.time_weighted_mean(samples[:, 0], samples[:, 1], end) / float(sum(sim.capacity)) if len(samples) else 0.0
    rows = [
        ("jobs", len(jobs), "jobs"),
        ("tasks", tasks, "tasks"),
        ("mean_job_runtime_s", core_metrics.mean_response(core_metrics.with_status(jobs, ["finished"])), "s"),
        ("makespan_s", core_metrics.makespan(jobs), "s"),
        ("mean_map_phase_s", metrics.average_phase(jobs, "map_phase_s"), "s"),
        ("mean_reduce_phase_s", metrics.average_phase(jobs, "reduce_phase_s"), "s"),
        ("memory_utilisation", utilisation, "share"),
        ("elastic_tasks", elastic, "tasks"),
        ("elastic_share", elastic / tasks if tasks else 0.0, "share"),
        ("estimates", sim.estimates, "runs"),
        ("scheduler_cpu_s", sim.scheduler_seconds, "s"),
    ]
    return summary_frame(rows)


ENGINE = EngineEntry(
    name=ENGINE_NAME,
    label="Memory elasticity",
    normalize_model=normalize_model,
    run=run,
    description="YARN vs YARN-ME (under-sized, elastic task memory) vs the pooled Meganode.",
    statuses=("finished", "running", "waiting"),
)

POLICIES = [
    PolicyEntry(ENGINE_NAME, "yarn", "YARN", YARN, "Fair-share job order, node reservations, ideal memory only."),
    PolicyEntry(ENGINE_NAME, "yarn-me", "YARN-ME", YARNME,
                "YARN plus elastic (under-sized) tasks when they do not delay their job (Alg. 1); other jobs may "
                "use a reserved node until its job's task can start (§3.3).",
                schema={"min_fraction": Param("number", "smallest grant, share of ideal memory (§6.1)", low=0.01,
                                              high=1.0),
                        "max_elastic_per_node": Param("integer", "elastic tasks running per node at most, as a "
                                                      "count (§3.3; null: no limit)", low=0, optional=True),
                        "heartbeat_s": Param("number", "how long a timeline estimate is reused (§3.2)", low=0),
                        "disk_bandwidth_mb_s": Param("number", "disk bandwidth per node for elastic tasks' spills, "
                                                     "MB/s (§3.3; null: no disk-contention limit, as in §6)",
                                                     low=0, optional=True),
                        "elastic_spill_mb_s": Param("number", "disk bandwidth one elastic task spills at, MB/s; "
                                                    "limit = floor(disk / spill)", low=0, low_open=True)}),
    PolicyEntry(ENGINE_NAME, "meganode", "Meganode", Meganode,
                "All nodes pooled into one; shortest remaining job first, skipping jobs that do not fit; "
                "no elasticity.",
                schema={"blocked": Param("choice", "when the shortest job's task does not fit: skip to the next "
                                                   "job that fits (the paper's bound) or wait (§6.2)",
                                         choices=("skip", "wait"))}),
]

__all__ = [
    "ENGINE", "POLICIES", "normalize_model", "run", "simulate", "simulate_jobs",
    # presets, the trace reader and the penalty model (the Memory elasticity page's forms)
    "DISTRIBUTIONS", "MB_PER_GB", "load_inputs", "normalize_penalty", "paper_model", "read_trace", "runtime",
    "two_job_model",
]
