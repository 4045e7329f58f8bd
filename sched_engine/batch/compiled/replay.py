"""What a compiled run leaves to be derived from its schedule: the machines each job held, and its jobs' places.

Neither changes a decision (without failures a policy reads only each
cluster's free CPUs, never which machines are free), so both are read from
the schedule the compiled loop made, by the Python kernel's own rules.
"""

from __future__ import annotations

import numpy as np

from ..pending import BEHIND_HEAD, PRIORITY, REASONS, RESERVATION

FINISHED = 2   # BatchSimulation's status code of a finished job
_RESERVATION, _PRIORITY = REASONS.index(RESERVATION), REASONS.index(PRIORITY)


def hold_machines(sim, run: np.ndarray, start: np.ndarray, end: np.ndarray, start_rank: np.ndarray) -> None:
    """Every job's machines as text (``sim.machines_column``, the jobs frame's column), by the clusters' own first fit.

    Replays the schedule (:func:`.first_fit.replay`): at each instant the
    jobs ending give their CPUs back (in any order: the free machines after
    them are the same set), then the jobs starting take theirs in the order
    the loop started them. The text is written from the holdings as
    :meth:`~sched_engine.batch.cluster.ClusterState.machines_text` writes
    the Python kernel's (:mod:`.machines_text`); ``sim.machines_of`` stays
    empty.
    """
    from .first_fit import replay
    from .machines_text import machines_column
    held = np.flatnonzero((run > 0) & ~np.isnan(start))
    times = np.concatenate([end[held], start[held]])
    kinds = np.repeat(np.array([0, 1], dtype=np.int64), len(held))   # ends before starts at one instant
    ranks = np.concatenate([np.zeros(len(held), dtype=np.int64), start_rank[held]])
    order = np.lexsort((ranks, kinds, times))
    clusters = sim.clusters
    cluster_of = np.asarray(sim.cluster_of, dtype=np.int64)
    procs = np.asarray(sim.procs, dtype=np.int64)
    machine_cpus = np.array([cpus for c in clusters for cpus in c.cpus], dtype=np.int64)
    first_machine = np.cumsum([0] + [len(c.cpus) for c in clusters]).astype(np.int64)
    one_cpu = np.array([c.free is None for c in clusters], dtype=bool)
    room = np.zeros(len(procs), dtype=np.int64)
    room[held] = np.minimum(procs[held], np.diff(first_machine)[cluster_of[held]])
    ptr = np.cumsum(room) - room
    first, second = np.empty(int(room.sum()), dtype=np.int64), np.empty(int(room.sum()), dtype=np.int64)
    length = replay(np.concatenate([held, held])[order], kinds[order].astype(bool), cluster_of, procs,
                    machine_cpus, first_machine, one_cpu, ptr, first, second)
    sim.machines_column = machines_column(ptr, length, cluster_of, one_cpu, first, second)


def easy_places(submit: np.ndarray, start: np.ndarray, end: np.ndarray, refused: np.ndarray,
                heads: np.ndarray) -> np.ndarray:
    """The pending recorder's places of an EASY run without ranks or limits (:mod:`..pending`), as a table.

    There a waiting job is behind the oldest waiting job's reservation
    (``reservation``, ``BEHIND_HEAD``) from its arrival until it becomes
    the oldest, then the oldest (``priority``, no blocking job) until it
    leaves; a place is opened after the pass of the instant it begins, so
    a job that starts as it arrives has none. ``heads``: the recorder's
    ``(time, oldest waiting job)`` history.
    """
    n = len(submit)
    became_oldest = np.full(n, np.inf)
    named = heads[:, 1] >= 0
    jobs = heads[named, 1].astype(np.int64)
    np.minimum.at(became_oldest, jobs, heads[named, 0])
    queued = ~refused
    left = np.where(np.isnan(start), end, start)
    job = np.arange(n, dtype=float)
    behind_to = np.minimum(became_oldest, left)
    behind = queued & (behind_to > submit)
    oldest = queued & (became_oldest < left)
    rows = np.empty((int(behind.sum() + oldest.sum()), 5))
    k = int(behind.sum())
    rows[:k, 0], rows[:k, 1], rows[:k, 2] = job[behind], submit[behind], behind_to[behind]
    rows[:k, 3], rows[:k, 4] = _RESERVATION, BEHIND_HEAD
    rows[k:, 0], rows[k:, 1], rows[k:, 2] = job[oldest], became_oldest[oldest], left[oldest]
    rows[k:, 3], rows[k:, 4] = _PRIORITY, -1
    return rows
