"""The site's waiting jobs, indexed for the queue orders and for the backfill walk.

:class:`FairQueue` generates a pass's queue order (:mod:`.order`) pick by
pick, for the orders EASY does not read by key (:mod:`.keyed`), from
per-leaf views kept between passes: each leaf's share, whether it has a job
waiting, and that job's index and demand direction. Only the leaves whose
jobs arrived, started, ended or left the queue since the last pass -- and
those the last pass's progressive filling moved -- are refreshed, and the
order's picker hears of exactly those leaves (``Picker.changed``); the
picks are those of views rebuilt from scratch at every pass.

:class:`~.size_index.SizeIndex` (in its own module) counts the waiting jobs
that could still pass EASY's test.

:class:`ArrivalQueue` is the arrival order's queue: every job keeps the
position it arrived at, and each (memory per CPU, CPUs) class keeps its
jobs' positions ascending, so EASY's walk under the arrival order jumps
from one job that could pass its test to the next, as the batch engine's
does, instead of reading the backlog between them.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort

import numpy as np

from ..batch.waiting import Positions

WAITING = 0  # the simulation's status code of a waiting job


def direction(cpu: float, memory: float) -> list[float]:
    """A demand's direction over (CPUs, memory): each share over the larger (H-DRF's ``s``, largest component 1)."""
    top = max(cpu, memory)
    return [cpu / top, memory / top]


class FairQueue:
    """Each leaf's waiting jobs in arrival order, and the views a fair order's picker reads (see the module docstring).

    Reads the simulation's job arrays, statuses and per-leaf usage; the
    simulation tells it of every change with :meth:`add` and :meth:`touch`.
    """

    def __init__(self, sim):
        self.sim = sim
        leaves = sim.tree.leaf_count
        self.jobs: list[list[int]] = [[] for _ in range(leaves)]  # lazy deletion: entries of jobs that left stay
        self.live = [0] * leaves   # waiting jobs per leaf
        self.head = [0] * leaves
        self.wants = [False] * leaves
        self.shares = [[0.0, 0.0] for _ in range(leaves)]
        self.dominant = [0.0] * leaves
        self.vectors = [[1.0, 0.0] for _ in range(leaves)]
        self.next_job = [0] * leaves
        self.dirty: set[int] = set(range(leaves))
        self.picker = None
        self.cpus = max(sim.total_cpus, 1.0)

    def add(self, job: int) -> None:
        leaf = self.sim.leaf[job]
        self.jobs[leaf].append(job)
        self.live[leaf] += 1
        self.dirty.add(leaf)

    def touch(self, leaf: int) -> None:
        """The leaf's usage changed."""
        self.dirty.add(leaf)

    def left(self, leaf: int) -> None:
        """One of the leaf's jobs left the queue (started or cancelled)."""
        self.live[leaf] -= 1
        self.dirty.add(leaf)

    def _next_waiting(self, leaf: int, position: int) -> int:
        """Point the leaf's views at its first waiting job at or after ``position`` (arrival order)."""
        queue, status, sim = self.jobs[leaf], self.sim.status, self.sim
        while position < len(queue) and status[queue[position]] != WAITING:
            position += 1
        self.wants[leaf] = wanting = position < len(queue)
        if wanting:
            job = self.next_job[leaf] = queue[position]
            self.vectors[leaf] = direction(sim.procs[job] / self.cpus,
                                           sim.procs[job] * sim.memory_per_cpu[job] / sim.total_memory)
        else:
            self.vectors[leaf] = [1.0, 0.0]
        return position

    def _refresh(self, leaf: int, shares) -> None:
        """The leaf's true views: its share now and its oldest waiting job."""
        sim = self.sim
        if shares is None:
            share = [float(sim.leaf_cpus[leaf]) / self.cpus, float(sim.leaf_memory[leaf]) / sim.total_memory]
        else:
            share = shares[leaf]
        self.shares[leaf] = share
        self.dominant[leaf] = max(share)
        queue = self.jobs[leaf]
        if len(queue) > 2 * self.live[leaf] + 1024:
            # Mostly entries of jobs that left (backfilled ones leave holes anywhere): keep the waiting ones.
            status = sim.status
            queue[:] = [job for job in queue if status[job] == WAITING]
            self.head[leaf] = 0
        self.head[leaf] = self._next_waiting(leaf, self.head[leaf])

    def order(self):
        """The waiting jobs in the queue order, generated lazily by progressive filling (see :mod:`.order`)."""
        sim = self.sim
        if sim.order.half_life_s > 0:
            decayed = sim.decayed.tolist()
            self.dirty = set(range(len(self.jobs)))
        else:
            decayed = None
        picker = self.picker
        for leaf in sorted(self.dirty):
            self._refresh(leaf, decayed)
            if picker is not None:
                picker.changed(leaf)
        self.dirty.clear()
        if picker is None:
            picker = self.picker = sim.order.start(sim.tree, self.wants, self.shares, self.dominant, self.vectors,
                                                   self.next_job)
        cursor: dict[int, int] = {}
        shares, dominant, next_job, procs, memory_per_cpu = (self.shares, self.dominant, self.next_job, sim.procs,
                                                             sim.memory_per_cpu)
        cpus, memory_total = self.cpus, sim.total_memory
        while True:
            leaf = picker.pick()
            if leaf is None:
                return
            job = next_job[leaf]
            # The picked job counts in its leaf's share for the rest of the order, as if it ran.
            share = shares[leaf] = [shares[leaf][0] + procs[job] / cpus,
                                    shares[leaf][1] + procs[job] * memory_per_cpu[job] / memory_total]
            dominant[leaf] = max(share)
            cursor[leaf] = self._next_waiting(leaf, cursor.get(leaf, self.head[leaf]) + 1)
            self.dirty.add(leaf)
            picker.changed(leaf)
            yield job


class ClassPositions(Positions):
    """One (memory per CPU, CPUs) class's positions in an :class:`ArrivalQueue`: the batch engine's
    :class:`~sched_engine.batch.waiting.Positions`, also listed in Python.

    :meth:`first_waiting` reads the first :attr:`SCAN` positions from ``low`` in Python, where most answers are (a
    numpy chunk costs more than that), and hands a longer search to the chunks of ``Positions.first``.
    """

    __slots__ = ("listed",)
    SCAN = 32

    def __init__(self):
        super().__init__()
        self.listed: list[int] = []   # positions, ascending, value for value those of the numpy array

    def append(self, position: int) -> None:
        super().append(position)
        self.listed.append(position)

    def first_waiting(self, low: int, before: int, queue: "ArrivalQueue", limit: float | None) -> int:
        """``Positions.first`` on ``queue``'s marks, with the estimate limit ``limit`` (``None``: any length)."""
        listed, gone, estimates = self.listed, queue.gone, queue.estimate_of
        start, length = self.live_from, len(listed)
        while start < length and gone[listed[start]]:
            start += 1
        self.live_from = start
        if start < length and listed[start] < low:
            start = bisect_left(listed, low, start)
        stop = min(start + self.SCAN, length)
        for position in listed[start:stop]:
            if 0 <= before <= position:
                return -1
            if not gone[position] and (limit is None or estimates[position] <= limit):
                return position
        if stop == length:
            return -1
        return self.first(listed[stop], before, queue.marks, None if limit is None else (queue.estimates, limit))


class ArrivalQueue:
    """The waiting jobs in arrival order, also read by (memory per CPU, CPUs) class.

    Invariant: ``marks[p]`` is 0 while the job at position ``p`` waits and
    ``inf`` once it left (positions are never reused), ``gone[p]`` says the
    same and ``estimate_of[p] == estimates[p]``; no position before ``head``
    is live.
    """

    def __init__(self, capacity: int = 1024):
        self.jobs: list[int] = []           # position -> job
        self.position: dict[int, int] = {}  # waiting job -> its position
        self.marks = np.empty(capacity)
        self.estimates = np.empty(capacity)
        self.memory_of: list[float] = []    # position -> memory per CPU asked
        self.procs_of: list[int] = []       # position -> CPUs asked
        self.gone: list[bool] = []          # position -> whether its job left
        self.estimate_of: list[float] = []  # position -> estimate
        self.head = 0
        self.memory: list[float] = []       # distinct memory per CPU asked, ascending
        self.sizes: dict[float, list[int]] = {}  # memory per CPU -> CPUs asked, ascending
        self.held: dict[float, int] = {}    # memory per CPU -> waiting jobs asking it
        self.classes: dict[tuple[float, int], ClassPositions] = {}
        self.live: dict[tuple[float, int], int] = {}   # waiting jobs per class (a class's positions keep the left)

    def add(self, job: int, procs: int, memory_per_cpu: float, estimate: float) -> None:
        position = len(self.jobs)
        if position == len(self.marks):
            self.marks = np.resize(self.marks, 2 * position)
            self.estimates = np.resize(self.estimates, 2 * position)
        self.jobs.append(job)
        self.memory_of.append(memory_per_cpu)
        self.procs_of.append(procs)
        self.gone.append(False)
        self.estimate_of.append(estimate)
        self.position[job] = position
        self.held[memory_per_cpu] = self.held.get(memory_per_cpu, 0) + 1
        self.marks[position] = 0.0
        self.estimates[position] = estimate
        key = (memory_per_cpu, procs)
        positions = self.classes.get(key)
        if positions is None:
            positions = self.classes[key] = ClassPositions()
            if memory_per_cpu not in self.sizes:
                self.sizes[memory_per_cpu] = []
                insort(self.memory, memory_per_cpu)
            insort(self.sizes[memory_per_cpu], procs)
            self.live[key] = 0
        positions.append(position)
        self.live[key] += 1

    def remove(self, job: int) -> None:
        position = self.position.pop(job)
        self.marks[position] = np.inf
        self.gone[position] = True
        memory = self.memory_of[position]
        self.held[memory] -= 1
        self.live[(memory, self.procs_of[position])] -= 1

    def waiting(self):
        """The waiting jobs from the head on, in arrival order (lazily: the caller may start some meanwhile)."""
        jobs, gone, position = self.jobs, self.gone, self.head
        while position < len(jobs) and gone[position]:
            position += 1
        self.head = position
        while position < len(jobs):
            if not gone[position]:
                yield jobs[position]
            position += 1

    def first(self, low: int, max_free: int, max_memory: float, givable, any_length, limit: float) -> int:
        """Position of the first waiting job at or after ``low`` that meets EASY's necessary condition, or -1.

        The condition (:mod:`.backfill`): at most ``max_free`` CPUs, at
        most ``max_memory`` MB per CPU, at most ``givable(m)`` CPUs at
        ``m`` MB per CPU, and at most ``any_length(m)`` CPUs or an estimate
        of at most ``limit``.
        """
        best = -1
        held, live = self.held, self.live
        for memory in self.memory[: bisect_right(self.memory, max_memory)]:
            sizes = self.sizes[memory]
            if not held[memory] or sizes[0] > max_free:
                continue
            short = any_length(memory)
            for size in sizes[: bisect_right(sizes, min(max_free, givable(memory)))]:
                if not live[(memory, size)]:
                    continue
                found = self.classes[(memory, size)].first_waiting(low, best, self, None if size <= short else limit)
                if found >= 0:
                    best = found
        return best
