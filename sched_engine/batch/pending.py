"""Why pending: for every job that waited, why, over ``[submit, start)``.

A run records, for each waiting job, intervals that tile the time from its
submission to its start (or to its cancellation) exactly, each with one
reason of this vocabulary:

``resources``
    not enough free CPUs for it in any cluster it may use (the oldest
    waiting job, or any job a backfilling policy could not fit).
``reservation``
    it fits now, but starting it would delay a reserved job (EASY,
    Conservative, Local Search): ``blocking_job`` names the oldest waiting
    job, whose reservation comes first.
``priority``
    the policy starts an earlier job first (FCFS, FCFS-LB start in arrival
    order only): ``blocking_job`` names the waiting job just before it.
``failure``
    it does not fit now, but would if the machines that are down in one of
    its clusters were up.
``requirements``
    it does not fit in any cluster it may use (its requirements restrict
    them), but another cluster has room for it now.

When a reason is decided: a job gets its first reason after the scheduling
pass of the instant it arrives; it is looked at again after every pass in
which the job its reason names left the queue (started or was cancelled),
in which it became the oldest waiting job, or (the oldest waiting job only)
in which machines failed or came back. Between those moments it keeps its
reason. So only reason *changes* are recorded: a job waiting behind a long
backlog costs a few intervals, not one per pass -- and a job that no longer
fits after it was found to fit keeps ``reservation`` until the reserved job
starts.

The frame: ``job_id, from_time, to_time, reason, blocking_job`` (empty when
the reason names no job), one row per interval, sorted by job then time.
"""

from __future__ import annotations

from itertools import chain

import numpy as np
import pandas as pd

RESOURCES, RESERVATION, PRIORITY, FAILURE, REQUIREMENTS = (
    "resources", "reservation", "priority", "failure", "requirements")
REASONS = (RESOURCES, RESERVATION, PRIORITY, FAILURE, REQUIREMENTS)
COLUMNS = ("job_id", "from_time", "to_time", "reason", "blocking_job")
_CODE = {reason: code for code, reason in enumerate(REASONS)}


def no_room_reason(sim, job: int) -> str:
    """Why ``job`` does not fit now: ``failure``, ``requirements`` or ``resources`` (see the module docstring)."""
    need, clusters = sim.procs[job], sim.clusters
    allowed = sim.candidates[job]
    for c in allowed:
        cluster = clusters[c]
        if cluster.up_total < cluster.total and cluster.free_total + cluster.total - cluster.up_total >= need:
            return FAILURE
    if len(allowed) < len(clusters):
        for cluster in clusters:
            if cluster.index not in allowed and cluster.free_total >= need:
                return REQUIREMENTS
    return RESOURCES


class PendingRecorder:
    """Reason intervals of one event-driven run (the engine feeds it; see the module docstring).

    The engine appends to ``arrived`` the jobs that arrived at an instant,
    to ``left`` the jobs it started or cancelled, sets ``capacity_changed``
    when a machine failed or came back, and calls :meth:`after_pass` once
    the policy's pass of the instant is applied.
    """

    def __init__(self, sim, in_order: bool, waiting: int):
        self.sim = sim
        self.waiting = waiting
        self.in_order = in_order
        self.arrived: list[int] = []
        self.left: list[int] = []
        self.capacity_changed = False
        self.order: list[int] = []        # every queued job, in arrival order
        self.index_of: dict[int, int] = {}
        self.first = 0                    # position in ``order`` of the oldest waiting job
        self.head = -1
        self.open: dict[int, tuple[float, str, int]] = {}   # waiting job -> (from, reason, blocking job)
        self.dependents: dict[int, list[int]] = {}          # job -> waiting jobs whose reason names it
        self.rows: list[tuple[int, float, float, int, int]] = []

    def close(self, job: int, entry: tuple[float, str, int], now: float) -> None:
        if now > entry[0]:
            self.rows.append((job, entry[0], now, _CODE[entry[1]], entry[2]))

    def after_pass(self, now: float) -> None:
        if not self.left and not self.arrived and not self.capacity_changed:
            return   # nobody came or went, no machine changed: no reason can change (see the module docstring)
        status, waiting = self.sim.status, self.waiting
        recheck: list[int] = []
        opened = self.open
        for job in self.left:
            entry = opened.pop(job, None)
            if entry is not None:
                self.close(job, entry, now)
            named = self.dependents.pop(job, None)
            if named:
                recheck.extend(named)
        self.left.clear()
        for job in self.arrived:
            self.index_of[job] = len(self.order)
            self.order.append(job)
            recheck.append(job)
        self.arrived.clear()
        order, position = self.order, self.first
        while position < len(order) and status[order[position]] != waiting:
            position += 1
        self.first = position
        head = order[position] if position < len(order) else -1
        if head >= 0 and (head != self.head or self.capacity_changed):
            recheck.append(head)
        self.head, self.capacity_changed = head, False
        for job in recheck:
            if status[job] != waiting:
                continue
            reason, blocking = self.classify(job, head)
            entry = opened.get(job)
            if entry is not None:
                if entry[1] == reason and entry[2] == blocking:
                    continue
                self.close(job, entry, now)
            opened[job] = (now, reason, blocking)
            if blocking >= 0:
                self.dependents.setdefault(blocking, []).append(job)

    def classify(self, job: int, head: int) -> tuple[str, int]:
        sim = self.sim
        need, clusters, allowed = sim.procs[job], sim.clusters, sim.candidates[job]
        if len(allowed) == 1:
            fits = clusters[allowed[0]].free_total >= need
        else:
            fits = any(clusters[c].free_total >= need for c in allowed)
        if job == head:
            return (PRIORITY, -1) if fits else (no_room_reason(sim, job), -1)
        if self.in_order:
            return PRIORITY, self.predecessor(job)
        return (RESERVATION, head) if fits else (no_room_reason(sim, job), -1)

    def predecessor(self, job: int) -> int:
        """The waiting job that arrived just before ``job``."""
        status, waiting, order = self.sim.status, self.waiting, self.order
        position = self.index_of[job] - 1
        while position >= self.first and status[order[position]] != waiting:
            position -= 1
        return order[position] if position >= self.first else -1


def pending_frame(rows, job_ids: pd.Series) -> pd.DataFrame:
    """The ``pending`` frame from ``(job, from, to, reason code, blocking job or -1)`` rows (job indices)."""
    table = np.fromiter(chain.from_iterable(rows), dtype=float, count=5 * len(rows)).reshape(-1, 5)
    table = table[np.lexsort((table[:, 1], table[:, 0]))]
    ids = job_ids.astype("string").reset_index(drop=True)
    blocking = table[:, 4].astype(np.int64)
    named = ids.take(np.maximum(blocking, 0)).reset_index(drop=True)
    named[blocking < 0] = ""
    return pd.DataFrame({
        "job_id": ids.take(table[:, 0].astype(np.int64)).reset_index(drop=True),
        "from_time": table[:, 1],
        "to_time": table[:, 2],
        "reason": pd.Series(pd.array(REASONS, dtype="string")).take(table[:, 3].astype(np.int64))
                    .reset_index(drop=True),
        "blocking_job": named,
    })


def empty_pending() -> pd.DataFrame:
    return pending_frame([], pd.Series([], dtype="string"))
