"""Batch scheduling on multi-cluster grids with failures and job requirements.

Klusáček & Rudová, "The importance of complete data sets for job
scheduling simulations": FCFS, FCFS-LB, EASY and Conservative backfilling
and Local Search on SWF/GWF workloads, with machine failures that kill jobs
and specific job requirements.

``jobs`` columns (beyond the common ones): ``cluster`` (name, empty if never
started), ``procs``, ``run_time``, ``estimate``, ``wait_time``, ``user``,
``reason`` (why a job was killed or cancelled), ``machines`` (indices of the
cluster's machines it ran on, comma-separated, empty if never started),
``recorded_wait`` (s: the wait the log itself records, SWF/GWF field 3 or a
CSV ``recorded_wait`` column; NaN where the log has none -- compare with the
simulated ``wait_time``), ``queue`` and ``group`` (as the log names them;
empty where unknown). ``status``: ``finished``, ``killed``, ``cancelled``.

``timeline`` metrics: ``used_cpus`` and ``up_cpus`` per cluster (entity =
cluster name), ``queue_length`` (entity ``queue``), ``killed_jobs``
(cumulative, entity ``all``), ``machine_down`` (1 while a machine is down,
0 once it is up again; entity ``<cluster>/<machine index>``, only machines
that failed). Every series is kept whole, one row per change, however long
the run: charts reduce what they draw (minima and maxima per bin), and a
zoomed window shows each change.

``summary`` metrics: see :func:`summarise`.

``pending`` (stored with the result, written as ``pending.csv``): why each
job waited, intervals tiling ``[submit, start)`` with one reason each; the
vocabulary and when reasons are decided are in :mod:`.pending`.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import pandas as pd

from ..core import metrics
from ..core.observers import changes_only
from ..core.registry import EngineEntry, Param, PolicyEntry
from ..core.result import summary_frame, timeline_frame
from .failures import SYNTHETIC_DEFAULTS
from .machine_files import read_failures, read_machines
from .model import (
    TRACE_FORMATS,
    cluster_cpus,
    describe_hardware,
    file_sha256,
    header_clusters,
    load_inputs,
    normalize_clusters,
    normalize_model,
    workload_for,
)
from .pending import exact_table, pending_frame
from .policies import EASY, FCFS, FCFSLB, Conservative, LocalSearch
from .policies.alea_easy import ALEA_EASY_SCHEMA, AleaEASY
from .policies.recorded import Recorded
from .simulate import KILLED, STATUS_NAMES, BatchSimulation
from .traces import TraceError

ENGINE_NAME = "batch"
RAN = ("finished", "killed")  # statuses of the jobs that held CPUs


def simulate(model: Mapping[str, Any], policy, rng: np.random.Generator, progress=None, *,
             record_pending: bool = True) -> BatchSimulation:
    """Run a normalised model under ``policy``; returns the finished simulation.

    ``record_pending=False`` skips the reasons why jobs waited (:mod:`.pending`; the benchmark's reference run).
    """
    data = load_inputs(model, rng)
    sim = BatchSimulation(
        submit=data.jobs["submit_time"].to_numpy(),
        run_time=data.jobs["run_time"].to_numpy(),
        estimate=data.estimate,
        procs=data.jobs["procs"].to_numpy(),
        suitable=data.suitable,
        clusters=data.clusters,
        failures=data.failures,
        policy=policy,
        rng=rng,
        progress=progress,
        record_pending=record_pending,
        queues=data.queues,
        unsuitable=data.unsuitable,
    )
    sim.input = data   # before the run: the recorded policy reads the log's waits from it
    sim.run()
    return sim


def run(model: Mapping[str, Any], policy, rng: np.random.Generator, progress=None):
    """Engine entry point: ``(jobs, timeline, summary)`` frames, and ``{"pending": ...}`` (:mod:`.pending`) unless
    the model's ``reasons`` is false."""
    reasons = model.get("reasons", True)
    sim = simulate(model, policy, rng, progress, record_pending=reasons)
    jobs = jobs_frame(sim)
    frames = jobs, timeline(sim), summarise(sim, jobs)
    if not reasons:
        return frames
    # A full log's peak memory is the run's state beside its reasons (full RICC under EASY: 23 M rows, 0.55 GB):
    # the machines each job held are in the jobs frame now, and the run goes before its reasons become a frame.
    sim.machines_of = None
    reasons = exact_table(sim)
    del sim
    return *frames, {"pending": pending_frame(reasons, jobs["job_id"])}


def jobs_frame(sim: BatchSimulation) -> pd.DataFrame:
    data = sim.input.jobs
    clusters = sim.clusters
    names = [c.name for c in clusters]
    start = np.asarray(sim.start_time, dtype=float)
    return pd.DataFrame(
        {
            "job_id": data["job_id"].astype("string"),
            "submit_time": data["submit_time"].to_numpy(dtype=float),
            "start_time": start,
            "end_time": np.asarray(sim.end_time, dtype=float),
            "status": pd.Series([STATUS_NAMES[s] for s in sim.status], dtype="string"),
            "cluster": pd.Series([names[c] if c >= 0 else "" for c in sim.cluster_of], dtype="string"),
            "procs": np.asarray(sim.procs, dtype=np.int64),
            "run_time": np.asarray(sim.run_time, dtype=float),
            "estimate": np.asarray(sim.estimate, dtype=float),
            "wait_time": start - data["submit_time"].to_numpy(dtype=float),
            "user": data["user"].astype("string").to_numpy(),
            "reason": pd.Series(sim.reason, dtype="string"),
            "machines": machine_texts(sim),
            "recorded_wait": _log_column(data, "recorded_wait", np.nan).to_numpy(dtype=float),
            "queue": _log_column(data, "queue", "").astype("string").to_numpy(),
            "group": _log_column(data, "group", "").astype("string").to_numpy(),
        }
    )


def machine_texts(sim: BatchSimulation) -> pd.Series:
    """Each job's machines as text (``"0,1,2,7"``; ``""`` if it held none): the compiled run's column, or each
    holding of the Python kernel's written by its cluster."""
    if sim.machines_column is not None:
        return pd.Series(pd.arrays.ArrowStringArray(sim.machines_column))
    clusters = sim.clusters
    return pd.Series([clusters[c].machines_text(held) if held else "" for c, held in zip(sim.cluster_of, sim.machines_of)],
                     dtype="string")


def _log_column(data: pd.DataFrame, name: str, default) -> pd.Series:
    """A column the workload's log may or may not record (``default`` where it does not)."""
    return data[name] if name in data.columns else pd.Series(default, index=data.index)


def timeline(sim: BatchSimulation) -> pd.DataFrame:
    samples = np.array(sim.samples, dtype=float).reshape(-1, 4)
    parts = []
    for cluster in sim.clusters:
        rows = samples[samples[:, 1] == cluster.index]
        for metric, column in (("used_cpus", 2), ("up_cpus", 3)):
            times, values = changes_only(rows[:, 0], rows[:, column])
            parts.append(timeline_frame(times, [cluster.name] * len(times), [metric] * len(times), values))
    rows = samples[samples[:, 1] == -1]
    times, values = changes_only(rows[:, 0], rows[:, 2])
    parts.append(timeline_frame(times, ["queue"] * len(times), ["queue_length"] * len(times), values))
    by_machine: dict[tuple[int, int], list[tuple[float, int]]] = {}
    for time, cluster_index, machine, down in sim.machine_changes:
        by_machine.setdefault((cluster_index, machine), []).append((time, down))
    for (cluster_index, machine), rows in sorted(by_machine.items()):
        entity = f"{sim.clusters[cluster_index].name}/{machine}"
        parts.append(timeline_frame([t for t, _ in rows], [entity] * len(rows), ["machine_down"] * len(rows),
                                    [float(d) for _, d in rows]))
    killed = np.sort(np.asarray([sim.end_time[j] for j, s in enumerate(sim.status) if s == KILLED], dtype=float))
    times, values = changes_only(np.append(0.0, killed), np.arange(len(killed) + 1))
    parts.append(timeline_frame(times, ["all"] * len(times), ["killed_jobs"] * len(times), values))
    return pd.concat(parts, ignore_index=True)


def summarise(sim: BatchSimulation, jobs: pd.DataFrame) -> pd.DataFrame:
    """Objectives and counts of one run.

    ``mean_response_s``, ``mean_slowdown``, ``mean_bounded_slowdown_tau10``,
    ``mean_wait_s`` (finished jobs only, as in the paper's §2.3; killed and
    cancelled jobs are counted apart; see :mod:`sched_engine.core.metrics`);
    the hardware, ``clusters`` and ``cpus`` (all machines, up or down);
    ``jobs``, ``finished``, ``killed``, ``cancelled``; ``makespan_s`` (the
    last end of a job that ran, finished or killed, from the first
    submission); ``utilisation`` (of all CPUs over the makespan, by the jobs
    that ran; a killed job counts the CPU time it held); ``scheduler_cpu_s``
    (CPU time inside the policy, the paper's "runtime of the scheduling
    algorithm") and per simulated day; input notes ``dropped_jobs``
    (no run time or processors in the trace), ``skipped_lines``,
    ``jobs_with_ignored_properties`` (requirements naming properties no
    cluster declares); with best-effort queues, ``preempted`` (best-effort
    jobs killed for a job of another queue, counted in ``killed`` too;
    :mod:`.queues`).
    """
    ran = metrics.with_status(jobs, RAN)
    done = metrics.with_status(jobs, ["finished"])
    span = metrics.makespan(jobs, ended=RAN)
    days = span / 86400.0
    total_cpus = sum(c.total for c in sim.clusters)
    rows = [
        ("clusters", len(sim.clusters), "clusters"),
        ("cpus", total_cpus, "CPUs"),
        ("jobs", len(jobs), "jobs"),
        ("finished", len(done), "jobs"),
        ("killed", len(metrics.with_status(jobs, ["killed"])), "jobs"),
        ("cancelled", len(metrics.with_status(jobs, ["cancelled"])), "jobs"),
        ("mean_response_s", metrics.mean_response(done), "s"),
        ("mean_slowdown", metrics.mean_slowdown(done), "ratio"),
        ("mean_bounded_slowdown_tau10", metrics.mean_bounded_slowdown(done), "ratio"),
        ("mean_wait_s", metrics.mean_wait(done), "s"),
        ("makespan_s", span, "s"),
        ("utilisation", metrics.utilisation(ran, total_cpus, span), "share"),
        ("scheduler_cpu_s", sim.scheduler_seconds, "s"),
        ("scheduler_cpu_s_per_day", sim.scheduler_seconds / days if days > 0 else 0.0, "s/day"),
        ("failures", len(sim.input.failures), "machine failures"),
        ("dropped_jobs", sim.input.info["dropped_jobs"], "jobs"),
        ("skipped_lines", sim.input.info["skipped_lines"], "lines"),
        ("jobs_with_ignored_properties", sim.input.info["jobs_with_ignored_properties"], "jobs"),
    ]
    if sim.best_effort is not None:
        rows.append(("preempted", sim.preempted, "jobs"))
    rows.extend(getattr(sim.policy, "summary_rows", list)())   # a policy's own counts (recorded: delayed_starts)
    return summary_frame(rows)


def read_trace(model: Mapping[str, Any]) -> None:
    """Parse a normalised model's trace into this process's cache (:func:`~.model.workload_for`), as a run
    would: the engine's ``read_inputs`` (the site engine's too)."""
    workload_for(model["trace"])


ENGINE = EngineEntry(
    name=ENGINE_NAME,
    label="Batch scheduling",
    normalize_model=normalize_model,
    run=run,
    description="Multi-cluster batch scheduling with machine failures and specific job requirements.",
    statuses=STATUS_NAMES,
    read_inputs=read_trace,
)

POLICIES = [
    PolicyEntry(ENGINE_NAME, "fcfs", "FCFS", FCFS, "First come, first served; fastest suitable cluster first."),
    PolicyEntry(ENGINE_NAME, "fcfs-lb", "FCFS-LB", FCFSLB, "FCFS with a uniformly random suitable cluster.",
                randomised=True),
    PolicyEntry(ENGINE_NAME, "easy", "EASY", EASY, "EASY backfilling: a reservation for the queue head."),
    PolicyEntry(ENGINE_NAME, "easy-alea", "EASY (Alea)", AleaEASY, "EASY as the Alea simulator runs it (docs/readings.md).", schema=ALEA_EASY_SCHEMA),
    PolicyEntry(ENGINE_NAME, "cons", "Conservative", Conservative, "Conservative backfilling: a reservation for every job."),
    PolicyEntry(ENGINE_NAME, "ls", "Local Search", LocalSearch, "Conservative schedule improved by local search every 5 min.",
                schema={"interval_s": Param("number", "seconds between two searches", low=0, low_open=True),
                        "iteration_factor": Param("number", "moves tried per search, per waiting job", low=0),
                        "time_limit_s": Param("number", "wall-clock cap of one search (none: no cap)", low=0,
                                              low_open=True, optional=True)},
                randomised=True),
    PolicyEntry(ENGINE_NAME, "recorded", "As recorded", Recorded,
                "The log as it ran: every job starts when the log says it did (later only where the hardware "
                "cannot hold it; model capacity 'log' holds it)."),
]

__all__ = [
    "ENGINE", "POLICIES", "jobs_frame", "normalize_model", "run", "simulate",
    # readers and the hardware of a model (the Batch page's forms)
    "SYNTHETIC_DEFAULTS", "TRACE_FORMATS", "TraceError", "cluster_cpus", "describe_hardware", "file_sha256",
    "header_clusters", "normalize_clusters", "read_failures", "read_machines", "workload_for",
]
