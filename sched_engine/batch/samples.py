"""Timeline samples of a run without failures, rebuilt from its per-job times (the in-order loop's samples)."""

from __future__ import annotations

import numpy as np


def samples_from_times(sim) -> np.ndarray:
    """Timeline samples of a run without failures, from per-job times.

    The rows the kernel's loop records, up to rows that repeat the
    value before them (the timeline drops those): per cluster, used CPUs
    (a job holds its CPUs on ``[start, end)``; zero-length jobs hold
    none) after each instant a job started or ended on it, after a first
    row at 0; then the queue length after each instant a job arrived or
    started, from the first arrival on. ``up`` CPUs never change.
    """
    start = np.asarray(sim.start_time, dtype=float)
    end = np.asarray(sim.end_time, dtype=float)
    submit = np.asarray(sim.submit, dtype=float)
    procs = np.asarray(sim.procs, dtype=float)
    cluster_of = np.asarray(sim.cluster_of, dtype=np.int64)
    holds = (cluster_of >= 0) & (np.asarray(sim.run_time, dtype=float) > 0)
    blocks = []
    for cluster in sim.clusters:
        mine = holds & (cluster_of == cluster.index)
        times = np.concatenate([[0.0], start[mine], end[mine]])
        change = np.concatenate([[0.0], procs[mine], -procs[mine]])
        order = np.argsort(times, kind="stable")
        blocks.append(_rows(times[order], cluster.index, np.cumsum(change[order]), cluster.up_total))
    if len(submit):
        queued = cluster_of >= 0  # cancelled jobs left the queue at the instant they arrived
        times = np.concatenate([[submit.min()], submit[queued], start[queued]])
        change = np.concatenate([[0.0], np.ones(queued.sum()), -np.ones(queued.sum())])
        order = np.argsort(times, kind="stable")
        blocks.append(_rows(times[order], -1, np.cumsum(change[order]), 0))
    return np.concatenate(blocks)


def _rows(times: np.ndarray, entity: int, values: np.ndarray, up: int) -> np.ndarray:
    """Sample rows ``(time, entity, value, up)`` for equal-length ``times`` and ``values``."""
    rows = np.empty((len(times), 4))
    rows[:, 0] = times
    rows[:, 1] = entity
    rows[:, 2] = values
    rows[:, 3] = up
    return rows
