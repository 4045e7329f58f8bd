"""The capacity a run uses: the hardware, or the capacity the log itself used where it used more.

A log may record a schedule its header's machine cannot hold (RICC: up to
28,416 CPUs in use at once against a header of 8,192). The optional model
field ``capacity`` says which machine a run uses:

``hardware`` (the default, left out of the normalised model)
    the clusters as given (``clusters``, ``machines_path`` or the header).
``log``
    where the log's replayed schedule has more CPUs in use at once than the
    hardware, one cluster of that peak; otherwise the hardware unchanged.
``log_p99``
    the same with the time-weighted 99th percentile of CPUs in use (the
    level the log stays at or under for 99% of its span), or the largest
    job where that is larger (so that no job is cancelled for want of
    room), where it is above the hardware.

The replayed schedule is the one the ``recorded`` policy
(:mod:`.policies.recorded`) aims for: start = submit + recorded wait (at
submission for a job whose wait the log does not record), end = start + run
time, the CPUs the run gives the job (after ``whole_nodes``). So on the
``log`` capacity the recorded policy keeps every recorded start (the peak
holds every instant of it).

The cluster built keeps the hardware's machine size where every machine has
one CPU count (so ``whole_nodes`` still holds), else one-CPU machines; it
has ``ceil(need / size)`` machines, the name of the hardware's cluster when
there is one (a failure trace naming it still applies), else ``log``, the
fastest speed and every property of the hardware's clusters.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from ..analysis.audit_schedule import step_function, time_weighted_quantile
from ..core.errors import ScenarioError
from .cluster import ClusterState

HARDWARE, LOG, LOG_P99 = "hardware", "log", "log_p99"
CAPACITIES = (HARDWARE, LOG, LOG_P99)
#: The quantile of CPUs in use ``log_p99`` sizes the cluster to.
P99 = 0.99


def normalize_capacity(value: Any) -> str | None:
    """The canonical ``capacity`` field: None for the hardware (the default keeps models' content hash)."""
    if value is None or value == HARDWARE:
        return None
    if value not in CAPACITIES:
        raise ScenarioError("capacity", f"must be one of {', '.join(CAPACITIES)}, got {value!r}")
    return value


def replay_starts(submit: np.ndarray, recorded_wait: np.ndarray) -> np.ndarray:
    """When the log says each job started: submit + recorded wait, at submission where the wait is unknown."""
    wait = np.asarray(recorded_wait, dtype=float)
    return np.asarray(submit, dtype=float) + np.where(np.isfinite(wait) & (wait >= 0), wait, 0.0)


def recorded_wait_of(jobs: pd.DataFrame) -> np.ndarray:
    """The jobs frame's ``recorded_wait`` (NaN where unknown, or everywhere when the log has none)."""
    if "recorded_wait" not in jobs.columns:
        return np.full(len(jobs), np.nan)
    return pd.to_numeric(jobs["recorded_wait"], errors="coerce").to_numpy(float)


def cpus_in_use(jobs: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """CPUs in use over the replayed schedule, a step function (ends before starts at one instant).

    Zero-length jobs hold no CPUs (as in the engine, :meth:`~.simulate.BatchSimulation.occupy`).
    """
    start = replay_starts(jobs["submit_time"].to_numpy(float), recorded_wait_of(jobs))
    run = jobs["run_time"].to_numpy(float)
    procs = np.where(run > 0, jobs["procs"].to_numpy(float), 0.0)
    return step_function(np.concatenate([start, start + run]), np.concatenate([procs, -procs]))


def needed_cpus(jobs: pd.DataFrame, capacity: str) -> float:
    """The CPUs the replayed schedule needs: its peak (``log``) or its time-weighted p99, at least the largest job
    (``log_p99``)."""
    times, used = cpus_in_use(jobs)
    if not len(used):
        return 0.0
    if capacity == LOG:
        return float(used.max())
    return max(time_weighted_quantile(times, used, P99), float(jobs["procs"].max()))


def capacity_clusters(clusters: list[ClusterState], jobs: pd.DataFrame, capacity: str | None) -> list[ClusterState]:
    """The clusters a run uses under ``capacity`` (see the module docstring); the hardware when it holds the need."""
    if capacity in (None, HARDWARE):
        return clusters
    return clusters_holding(clusters, needed_cpus(jobs, capacity))


def clusters_holding(clusters: list[ClusterState], need: float) -> list[ClusterState]:
    """``clusters`` if they hold ``need`` CPUs, else one cluster of ``need`` CPUs built from them (their machine
    size if they share one, else one-CPU machines; the one cluster's name, else "log"; the fastest speed; every
    property)."""
    if need <= sum(c.total for c in clusters):
        return clusters
    sizes = {cpus for cluster in clusters for cpus in cluster.cpus}
    size = sizes.pop() if len(sizes) == 1 else 1
    name = clusters[0].name if len(clusters) == 1 else "log"
    properties = sorted({p for cluster in clusters for p in cluster.properties})
    return [ClusterState(0, name, [size] * math.ceil(need / size), max(c.speed for c in clusters), properties)]
