"""The site's waiting jobs, indexed twice: by leaf for the fair queue orders, by size for the backfill.

:class:`FairQueue` generates a pass's queue order (:mod:`.order`) from
per-leaf views kept between passes: each leaf's share, whether it has a job
waiting, and that job's index and demand direction. Only the leaves whose
jobs arrived, started, ended or left the queue since the last pass -- and
those the last pass's progressive filling moved -- are refreshed, and the
order's picker hears of exactly those leaves (``Picker.changed``); the
picks are those of views rebuilt from scratch at every pass.

:class:`SizeIndex` holds the waiting jobs' estimates by memory per CPU and
CPUs asked, so a backfill pass can count the jobs that could still pass
EASY's test and stop when none is left to examine (the batch engine's EASY reads its queue by
size for the same reason, :mod:`sched_engine.batch.policies.easy`).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort

WAITING = 0  # the simulation's status code of a waiting job


class SizeIndex:
    """Jobs by memory per CPU and CPUs asked, estimates sorted: how many meet a backfill test's necessary condition."""

    __slots__ = ("memory", "by_memory", "held")

    def __init__(self):
        self.memory: list[float] = []   # distinct memory per CPU asked, ascending
        self.by_memory: dict[float, tuple[list[int], dict[int, list[float]]]] = {}  # -> sizes ascending, estimates
        self.held: dict[float, int] = {}  # jobs per memory per CPU

    def add(self, procs: int, memory_per_cpu: float, estimate: float) -> None:
        entry = self.by_memory.get(memory_per_cpu)
        if entry is None:
            entry = self.by_memory[memory_per_cpu] = ([], {})
            self.held[memory_per_cpu] = 0
            insort(self.memory, memory_per_cpu)
        sizes, estimates = entry
        bucket = estimates.get(procs)
        if bucket is None:
            bucket = estimates[procs] = []
            insort(sizes, procs)
        insort(bucket, estimate)
        self.held[memory_per_cpu] += 1

    def remove(self, procs: int, memory_per_cpu: float, estimate: float) -> None:
        bucket = self.by_memory[memory_per_cpu][1][procs]
        del bucket[bisect_left(bucket, estimate)]
        self.held[memory_per_cpu] -= 1

    def count(self, max_free: int, max_memory: float, any_length: int, limit: float, givable) -> int:
        """Jobs asking at most ``max_free`` CPUs, at most ``max_memory`` MB per CPU and at most ``givable(m)`` CPUs
        at ``m`` MB per CPU, and at most ``any_length`` CPUs or with an estimate of at most ``limit``."""
        total = 0
        by_memory, held = self.by_memory, self.held
        for memory in self.memory[: bisect_right(self.memory, max_memory)]:
            if not held[memory]:
                continue
            sizes, estimates = by_memory[memory]
            most = min(max_free, givable(memory))
            for size in sizes[: bisect_right(sizes, most)]:
                bucket = estimates[size]
                total += len(bucket) if size <= any_length else bisect_right(bucket, limit)
        return total


class FairQueue:
    """Each leaf's waiting jobs in arrival order, and the views a fair order's picker reads (see the module docstring).

    Reads the simulation's job arrays, statuses and per-leaf usage; the
    simulation tells it of every change with :meth:`add` and :meth:`touch`.
    """

    def __init__(self, sim):
        self.sim = sim
        leaves = sim.tree.leaf_count
        self.jobs: list[list[int]] = [[] for _ in range(leaves)]  # lazy deletion: entries before head[leaf] left
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
        self.dirty.add(leaf)

    def touch(self, leaf: int) -> None:
        """The leaf's usage or waiting jobs changed."""
        self.dirty.add(leaf)

    def _next_waiting(self, leaf: int, position: int) -> int:
        """Point the leaf's views at its first waiting job at or after ``position`` (arrival order)."""
        queue, status, sim = self.jobs[leaf], self.sim.status, self.sim
        while position < len(queue) and status[queue[position]] != WAITING:
            position += 1
        self.wants[leaf] = wanting = position < len(queue)
        if wanting:
            job = self.next_job[leaf] = queue[position]
            cpu = sim.procs[job] / self.cpus
            memory = sim.procs[job] * sim.memory_per_cpu[job] / sim.total_memory
            top = max(cpu, memory)
            self.vectors[leaf] = [cpu / top, memory / top]
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
        position = self.head[leaf] = self._next_waiting(leaf, self.head[leaf])
        if position > 1024 and position * 2 > len(self.jobs[leaf]):
            del self.jobs[leaf][:position]
            self.head[leaf] = 0

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
