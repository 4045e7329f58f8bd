"""Per-run state of the elasticity engine: released memory by time, task groups, jobs."""

from __future__ import annotations

import math

from .penalty import runtime as penalty_runtime
from .traces import Job

INF = math.inf


class ReleaseProfile:
    """Memory released per whole second by running tasks (a Fenwick tree over seconds).

    ``until(t)`` is the memory of running tasks ending in seconds
    ``0 .. floor(t)`` -- an over-estimate of what is released by ``t``,
    which is what the capacity bound of :meth:`ElasticSimulation.elastic_ok`
    needs. The tree doubles when a task ends beyond its range.
    """

    __slots__ = ("_tree",)

    def __init__(self) -> None:
        self._tree = [0] * 1025

    def add(self, time: float, memory: int) -> None:
        index = int(time) + 1
        tree = self._tree
        if index >= len(tree):
            self._grow(index)
            tree = self._tree
        size = len(tree)
        while index < size:
            tree[index] += memory
            index += index & -index

    def _grow(self, index: int) -> None:
        size = len(self._tree) - 1
        values = [self.until(i) - self.until(i - 1) for i in range(size)]
        while size < index + 1:
            size *= 2
        self._tree = [0] * (size + 1)
        for second, value in enumerate(values):
            if value:
                self.add(second, value)

    def until(self, time: float) -> int:
        if time < 0:
            return 0
        index = min(int(time) + 1, len(self._tree) - 1)
        total = 0
        tree = self._tree
        while index > 0:
            total += tree[index]
            index -= index & -index
        return total


class GroupState:
    """Pending tasks of one task group and its elastic allocation table."""

    __slots__ = ("memory", "duration", "remaining", "penalty", "elastic_min", "max_elastic_runtime", "_table")

    def __init__(self, memory: int, duration: float, count: int, penalty) -> None:
        self.memory = memory
        self.duration = duration
        self.remaining = count
        self.penalty = penalty
        self.elastic_min = 0
        self.max_elastic_runtime = 0.0
        self._table: list[tuple[float, int]] | None = None

    def best_elastic(self, free_mb: int, step: int, min_fraction: float) -> tuple[float, int] | None:
        """Lowest-runtime under-sized grant that fits ``free_mb`` (ties: least memory), or None.

        Candidates are ``ceil(min_fraction * ideal)`` rounded up to the step,
        then every step below the ideal memory (§6.1: 100 MB granularity,
        at least 10% of ideal). The table holds, for each amount of free
        memory, the best candidate not above it (a running minimum).
        """
        table = self._table
        if table is None:
            low = max(step, -(-math.ceil(min_fraction * self.memory - 1e-9) // step) * step)
            self.elastic_min = low
            table = []
            best = None
            for mem in range(low, self.memory, step):
                rt = penalty_runtime(self.penalty, mem / self.memory, self.duration)
                self.max_elastic_runtime = max(self.max_elastic_runtime, rt)
                if best is None or rt < best[0]:
                    best = (rt, mem)
                table.append(best)
            self._table = table
        if not table or free_mb < self.elastic_min:
            return None
        return table[min((free_mb - self.elastic_min) // step, len(table) - 1)]


class JobState:
    """Mutable per-run state of one job."""

    __slots__ = (
        "index", "job", "phases", "phase", "gi", "pending", "running", "mem_in_use", "work_left", "version",
        "queued", "reserved", "phase_end_max", "start", "end", "phase_request", "phase_done", "est_time", "est_value",
        "est_exact", "elastic_tasks", "tasks",
    )

    def __init__(self, index: int, job: Job, step: int, penalty) -> None:
        self.index = index
        self.job = job
        phases: list[list[GroupState]] = [[], []]
        for g in job.groups:
            memory = -(-g.memory_mb // step) * step
            phases[g.phase].append(GroupState(memory, g.duration, g.count, g.penalty or penalty))
        self.phases = [p for p in phases if p]
        self.phase = 0
        self.gi = 0
        self.pending = sum(g.remaining for g in self.phases[0])
        self.running = 0
        self.mem_in_use = 0
        self.work_left = sum(g.remaining * g.duration for p in self.phases for g in p)
        self.version = 0
        self.queued = False
        self.reserved: set[int] = set()
        self.phase_end_max = 0.0
        self.start = math.nan
        self.end = math.nan
        self.phase_request = [math.nan, math.nan]
        self.phase_done = [math.nan, math.nan]
        self.est_time = -INF
        self.est_value = INF
        self.est_exact = True
        self.elastic_tasks = 0
        self.tasks = sum(g.count for g in job.groups)

    def group(self) -> GroupState:
        groups = self.phases[self.phase]
        while groups[self.gi].remaining == 0:
            self.gi += 1
        return groups[self.gi]
