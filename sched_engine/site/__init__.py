"""Site study: one site's workload through the organisation's fair share, backfilling, failures and memory.

A composition of the other engines' parts, not a new silo: the batch
engine's workloads, clusters and failures (:mod:`sched_engine.batch.model`),
the fair-sharing engine's choosers over the organisation tree
(:mod:`sched_engine.fairshare.policies`, through :mod:`.order`), the elastic
engine's memory penalty models (:mod:`sched_engine.elastic.penalty`), and
the isolation guarantee of Libra/HUG applied to groups (:mod:`.isolation`).

``jobs`` columns (beyond the common ones): ``cluster``, ``procs``,
``run_time`` (what it ran: longer than the trace's when started
memory-elastic), ``estimate``, ``wait_time``, ``user``, ``group`` (the
organisation's first level), ``leaf`` (its leaf's path), ``memory_mb``
(memory it held in all), ``memory_fraction`` (share of its asked memory it
got), ``elastic_penalty`` (its run time over the trace's; 1 unless started
memory-elastic), ``reason``.

``pending`` (stored with the result): why each job waited, over
``[submit, start)``, the batch engine's frame and vocabulary
(:mod:`.reasons`).

``timeline`` metrics, sampled every ``span / 2000`` s (each sample holds
until the next) and kept where they change: ``dominant_share`` and
``entitled_share`` per group, ``isolation_guarantee`` per group and
``minimum``, ``utilisation`` (entity ``cpu`` or ``memory``: in use over up),
``waiting_jobs`` per group, ``wait_s`` (median wait of the jobs of a group
that started in a sample interval), ``killed_jobs`` (cumulative, per group
and ``all``).
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import pandas as pd

from ..batch import read_trace
from ..batch.model import load_inputs
from ..core import metrics
from ..core.observers import changes_only
from ..core.registry import EngineEntry, PolicyEntry
from ..core.result import summary_frame, timeline_frame
from ..fairshare.model import Tree
from .isolation import isolation_guarantee
from .machines import SiteCluster
from .model import BATCH_FIELDS, normalize_model
from .order import ORDERS, SCHEMA, DRFOrder, FCFSOrder, HDRFOrder, MCHOrder, NaiveHDRFOrder, WeightedDRFOrder
from .organisation import assign_jobs, leaves, organisation_from_jobs
from .simulate import STATUS_NAMES, AsRecorded, site_simulation

ENGINE_NAME = "site"
RAN = ("finished", "killed")


def organisation_for(model: Mapping[str, Any], jobs: pd.DataFrame) -> dict:
    """The organisation tree of a normalised model for its workload (derived, or as given)."""
    given = model["organisation"]
    return given["tree"] if "tree" in given else organisation_from_jobs(jobs, given["derive"])


def _share_tree(organisation: Mapping) -> tuple[Tree, list[int], list[str], list[float], list[str]]:
    """The fair-sharing engine's tree over shares of CPUs and memory; each leaf's group; groups and weights."""

    def convert(node: Mapping) -> dict:
        if "user" in node:
            return {"name": node["name"], "weight": node["weight"], "demand": {"cpu": 1.0}, "tasks": 1, "duration": 1}
        return {"name": node["name"], "weight": node.get("weight", 1.0),
                "children": [convert(child) for child in node["children"]]}

    tree = Tree.from_model({"resources": [{"name": "cpu", "capacity": 1.0}, {"name": "mem", "capacity": 1.0}],
                            "tree": convert(organisation)})
    names = [child["name"] for child in organisation["children"]]
    weights = [float(child.get("weight", 1.0)) for child in organisation["children"]]
    group_of_leaf, paths = [], []
    for path, _ in leaves(organisation):
        group_of_leaf.append(names.index(path[0]))
        paths.append("/".join(path))
    return tree, group_of_leaf, names, weights, paths


def simulate(model: Mapping[str, Any], order, rng: np.random.Generator, progress=None, reasons: bool = True,
             keep_decisions: bool = False):
    """Run a normalised model under a queue order; returns the finished run (:func:`.simulate.site_simulation`;
    ``reasons=False`` records no reasons why jobs waited, ``keep_decisions`` keeps the kernel's decisions)."""
    data = load_inputs({k: model[k] for k in BATCH_FIELDS if k in model}, rng)
    jobs = data.jobs
    organisation, leaf, other = assign_jobs(organisation_for(model, jobs), jobs["user"])
    tree, group_of_leaf, groups, weights, paths = _share_tree(organisation)
    assumed = 0
    clusters = []
    for state in data.clusters:
        per_machine = model["memory_per_machine_mb"].get(state.name)
        if per_machine is None:
            assumed += 1
            memory = [cpus * model["default_memory_per_cpu_mb"] for cpus in state.cpus]
        else:
            memory = [per_machine] * len(state.cpus)
        clusters.append(SiteCluster(state.index, state.name, state.cpus, memory, state.speed))
    recorded = jobs["memory_per_cpu_mb"].to_numpy(dtype=float)
    without = ~(recorded > 0)
    memory = np.where(without, model["job_memory_per_cpu_mb"], recorded)
    sim = site_simulation(
        submit=jobs["submit_time"].to_numpy(), run_time=jobs["run_time"].to_numpy(), estimate=data.estimate,
        procs=jobs["procs"].to_numpy(), memory_per_cpu=memory, leaf=leaf, group_of_leaf=group_of_leaf, tree=tree,
        clusters=clusters, suitable=data.suitable, unsuitable=data.unsuitable, failures=data.failures, order=order,
        elastic=model["memory_elastic"], progress=progress, rng=rng, reasons=reasons,
        keep_decisions=keep_decisions,
    )
    sim.input = data   # before the run: the recorded policy reads the log's waits from it
    sim.run()
    sim.usage.sample_until(sim.now + sim.usage.sample_step)
    sim.site = {"groups": groups, "weights": weights, "paths": paths, "organisation": organisation,
                "other_users_jobs": other, "memory_assumed": assumed, "jobs_without_memory": int(without.sum())}
    return sim


def run(model: Mapping[str, Any], order, rng: np.random.Generator, progress=None):
    """Engine entry point: ``(jobs, timeline, summary)`` frames, and ``{"pending": ...}`` (:mod:`.reasons`)."""
    sim = simulate(model, order, rng, progress)
    jobs = jobs_frame(sim)
    frame = timeline(sim, jobs)
    return jobs, frame, summarise(sim, jobs, frame), {"pending": sim.reasons.frame(jobs["job_id"])}


def jobs_frame(sim) -> pd.DataFrame:
    data = sim.input.jobs
    names = [c.name for c in sim.clusters]
    start = np.asarray(sim.start_time, dtype=float)
    groups, paths = sim.site["groups"], sim.site["paths"]
    procs = np.asarray(sim.procs, dtype=np.int64)
    fraction = np.asarray(sim.memory_fraction, dtype=float)
    trace_run = np.asarray(sim.run_time, dtype=float)
    actual = np.asarray(sim.actual_run, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        penalty = np.where(trace_run > 0, actual / trace_run, 1.0)
    return pd.DataFrame({
        "job_id": data["job_id"].astype("string"),
        "submit_time": data["submit_time"].to_numpy(dtype=float),
        "start_time": start,
        "end_time": np.asarray(sim.end_time, dtype=float),
        "status": pd.Series([STATUS_NAMES[s] for s in sim.status], dtype="string"),
        "cluster": pd.Series([names[c] if c >= 0 else "" for c in sim.cluster_of], dtype="string"),
        "procs": procs,
        "run_time": actual,
        "estimate": np.asarray(sim.planned, dtype=float),
        "wait_time": start - data["submit_time"].to_numpy(dtype=float),
        "user": data["user"].astype("string").to_numpy(),
        "group": pd.Series([groups[sim.usage.group_of_leaf[leaf]] for leaf in sim.usage.leaf], dtype="string"),
        "leaf": pd.Series([paths[leaf] for leaf in sim.usage.leaf], dtype="string"),
        "memory_mb": procs * np.asarray(sim.memory_per_cpu, dtype=float) * fraction,
        "memory_fraction": fraction,
        "elastic_penalty": penalty,
        "reason": pd.Series(sim.reason, dtype="string"),
    })


def _series(parts: list, times, entity: str, metric: str, values) -> None:
    times, values = changes_only(times, values)
    parts.append((times, np.full(len(times), entity, dtype=object), np.full(len(times), metric, dtype=object), values))


def timeline(sim, jobs: pd.DataFrame) -> pd.DataFrame:
    groups, weights = sim.site["groups"], np.asarray(sim.site["weights"], dtype=float)
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []  # (time, entity, metric, value)
    usage = sim.usage
    samples = usage.samples
    if samples:
        times = np.array([s[0] for s in samples])
        cpus = np.array([s[1] for s in samples]) / max(usage.total_cpus, 1.0)
        memory = np.array([s[2] for s in samples]) / usage.total_memory
        running = np.array([s[3] for s in samples]) > 0
        waiting_counts = np.array([s[4] for s in samples])
        waiting = waiting_counts > 0
        received = np.maximum(cpus, memory)
        active = running | waiting
        active_weight = (active * weights).sum(axis=1, keepdims=True)
        entitled = np.where(active, weights / np.where(active_weight > 0, active_weight, 1.0), 0.0)
        for g, group in enumerate(groups):
            _series(parts, times, group, "dominant_share", received[:, g])
            _series(parts, times, group, "entitled_share", entitled[:, g])
            _series(parts, times, group, "waiting_jobs", waiting_counts[:, g])
        isolation = isolation_guarantee(times, received, running, waiting, weights, groups)
        for entity, rows in isolation.groupby("entity", sort=False):
            _series(parts, rows["time"].to_numpy(), entity, "isolation_guarantee", rows["value"].to_numpy())
        used, up = np.array([s[5] for s in samples], float), np.array([s[6] for s in samples], float)
        used_memory, up_memory = (np.array([s[7] for s in samples], float),
                                  np.array([s[8] for s in samples], float))
        with np.errstate(divide="ignore", invalid="ignore"):
            _series(parts, times, "cpu", "utilisation", np.where(up > 0, used / up, 0.0))
            _series(parts, times, "memory", "utilisation", np.where(up_memory > 0, used_memory / up_memory, 0.0))
        started = jobs[jobs["start_time"].notna()]
        if len(started):
            bins = np.floor(started["start_time"].to_numpy(float) / usage.sample_step) * usage.sample_step
            medians = started.assign(bin=bins).groupby(["group", "bin"], sort=True)["wait_time"].median()
            parts.append((medians.index.get_level_values("bin").to_numpy(float),
                          medians.index.get_level_values("group").to_numpy(object),
                          np.full(len(medians), "wait_s", dtype=object), medians.to_numpy(float)))
    killed = jobs[jobs["status"] == "killed"].sort_values("end_time", kind="stable")
    for entity, rows in [("all", killed), *killed.groupby("group", sort=True)]:
        ends = rows["end_time"].to_numpy(float)
        _series(parts, np.append(0.0, ends), entity, "killed_jobs", np.arange(len(ends) + 1))
    if not parts:
        return timeline_frame([], [], [], [])
    return timeline_frame(*(np.concatenate(column) for column in zip(*parts)))


def summarise(sim, jobs: pd.DataFrame, frame: pd.DataFrame) -> pd.DataFrame:
    """Objectives and counts of one run (see ``docs/results.md``)."""
    ran = metrics.with_status(jobs, RAN)
    done = metrics.with_status(jobs, ["finished"])
    span = metrics.makespan(jobs, ended=RAN)
    held = (ran["memory_mb"] * (ran["end_time"] - ran["start_time"])).sum()
    isolation = 1.0
    rows = frame[(frame["metric"] == "isolation_guarantee") & (frame["entity"] == "minimum")]
    if len(rows):
        isolation = metrics.time_weighted_mean(rows["time"].to_numpy(), rows["value"].to_numpy(),
                                               max(span, float(rows["time"].max())))
    rows = [
        ("groups", len(sim.site["groups"]), "groups"),
        ("users", sim.tree.leaf_count, "users"),
        ("clusters", len(sim.clusters), "clusters"),
        ("cpus", sim.usage.total_cpus, "CPUs"),
        ("memory_mb", sim.usage.total_memory, "MB"),
        ("memory_assumed", sim.site["memory_assumed"], "clusters"),
        ("jobs", len(jobs), "jobs"),
        ("finished", len(done), "jobs"),
        ("killed", len(metrics.with_status(jobs, ["killed"])), "jobs"),
        ("cancelled", len(metrics.with_status(jobs, ["cancelled"])), "jobs"),
        ("elastic_starts", sim.elastic_starts, "jobs"),
        ("jobs_without_memory", sim.site["jobs_without_memory"], "jobs"),
        ("other_users_jobs", sim.site["other_users_jobs"], "jobs"),
        ("mean_wait_s", metrics.mean_wait(done), "s"),
        ("mean_response_s", metrics.mean_response(done), "s"),
        ("mean_bounded_slowdown_tau10", metrics.mean_bounded_slowdown(done), "ratio"),
        ("makespan_s", span, "s"),
        ("utilisation", metrics.utilisation(ran, sim.usage.total_cpus, span), "share"),
        ("memory_utilisation", held / (sim.usage.total_memory * span) if span > 0 else 0.0, "share"),
        ("mean_min_isolation", isolation, "share"),
        ("failures", len(sim.input.failures), "machine failures"),
        ("scheduler_cpu_s", sim.scheduler_seconds, "s"),
    ]
    rows.extend(getattr(sim.policy, "summary_rows", list)())   # a policy's own counts (recorded: delayed_starts)
    return summary_frame(rows)


ENGINE = EngineEntry(
    name=ENGINE_NAME,
    label="Site study",
    normalize_model=normalize_model,
    run=run,
    description="One site's trace under its organisation's fair share, backfilling, failures and memory.",
    statuses=STATUS_NAMES,
    read_inputs=read_trace,
)

_LABELS = {FCFSOrder: ("FCFS", "Arrival order (the batch engine's queue)."),
           DRFOrder: ("DRF", "Lowest dominant share of CPUs and memory first; organisation ignored."),
           WeightedDRFOrder: ("Weighted DRF", "Lowest dominant share over the user's weight first."),
           NaiveHDRFOrder: ("Naive H-DRF", "Descend the organisation by each department's summed usage."),
           HDRFOrder: ("H-DRF", "Hierarchical DRF: rescaled department shares, blocked nodes ignored."),
           MCHOrder: ("MCH", "Multi-resource collapsed hierarchies: flattened weights, then weighted DRF.")}

POLICIES = [
    PolicyEntry(ENGINE_NAME, order.name, _LABELS[order][0], order, _LABELS[order][1], schema=SCHEMA,
                params={"backfill_depth": 0} if order.in_arrival_order else {})
    for order in ORDERS
] + [PolicyEntry(ENGINE_NAME, AsRecorded.name, "As recorded", AsRecorded,
                 "The log as it ran: each job starts when the log says it started (or as soon after as its CPUs and "
                 "memory fit), to compare any order with what happened.")]

__all__ = ["ENGINE", "POLICIES", "jobs_frame", "normalize_model", "organisation_for", "run", "simulate", "summarise",
           "timeline"]
