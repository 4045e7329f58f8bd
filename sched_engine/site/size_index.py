"""The site's waiting jobs counted by class, for the backfill walk's stopping test.

:class:`SizeIndex` holds the waiting jobs' estimates by memory per CPU and
CPUs asked, so a backfill pass can count the jobs that could still pass
EASY's test and stop when none is left to examine (the batch engine's EASY reads its queue by
size for the same reason, :mod:`sched_engine.batch.policies.easy`).
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right, insort


class _Estimates:
    """A multiset of estimates: sorted list (any values) or, given every value it can hold, counts in a Fenwick
    tree over those values (adding and removing cost a logarithm, not a shift of a long list).

    In the tree, adding and removing only note the change per value (``pending``); a count first applies the
    changes noted since the last one, so a job that arrives and leaves between two counts never walks the tree.
    """

    __slots__ = ("values", "slot", "tree", "size", "items", "pending")

    def __init__(self, universe: list[float] | None = None):
        self.values = sorted(set(universe)) if universe is not None else None
        self.slot = {value: i + 1 for i, value in enumerate(self.values)} if universe is not None else None
        self.tree = [0] * (len(self.values) + 1) if universe is not None else None
        self.items: list[float] = []
        self.pending: dict[float, int] = {}
        self.size = 0

    def __len__(self) -> int:
        return self.size

    def _bump(self, value: float, step: int) -> None:
        tree, i = self.tree, self.slot[value]
        size = len(tree)
        while i < size:
            tree[i] += step
            i += i & -i

    def add(self, value: float) -> None:
        self.size += 1
        if self.tree is None:
            insort(self.items, value)
        else:
            self.pending[value] = self.pending.get(value, 0) + 1

    def remove(self, value: float) -> None:
        self.size -= 1
        if self.tree is None:
            del self.items[bisect_left(self.items, value)]
        else:
            self.pending[value] = self.pending.get(value, 0) - 1

    def at_most(self, limit: float) -> int:
        if self.tree is None:
            return bisect_right(self.items, limit)
        if self.pending:
            for value, step in self.pending.items():
                if step:
                    self._bump(value, step)
            self.pending.clear()
        tree, i, total = self.tree, bisect_right(self.values, limit), 0
        while i > 0:
            total += tree[i]
            i -= i & -i
        return total


class SizeIndex:
    """Jobs by memory per CPU and CPUs asked, their estimates counted: how many meet a backfill test's necessary
    condition. ``universe``: ``(procs, memory per CPU, estimate)`` of every job it may ever hold, if known.

    Invariant: ``memory`` lists exactly the memory-per-CPU values some held job asks, ascending, and
    ``by_memory[m][0]`` exactly the CPU counts some held job asks at ``m``, ascending (a count reads only
    classes that hold jobs; a backlog's classes are mostly empty at any one time)."""

    __slots__ = ("memory", "by_memory", "held", "universe")

    def __init__(self, universe=None):
        self.memory: list[float] = []   # memory per CPU asked by held jobs, ascending
        self.by_memory: dict[float, tuple[list[int], dict[int, _Estimates]]] = {}  # -> held sizes ascending, estimates
        self.held: dict[float, int] = {}  # jobs per memory per CPU
        self.universe: dict[tuple[float, int], list[float]] | None = None
        if universe is not None:
            self.universe = {}
            for procs, memory_per_cpu, estimate in universe:
                self.universe.setdefault((memory_per_cpu, procs), []).append(estimate)

    def add(self, procs: int, memory_per_cpu: float, estimate: float) -> None:
        entry = self.by_memory.get(memory_per_cpu)
        if entry is None:
            entry = self.by_memory[memory_per_cpu] = ([], {})
            self.held[memory_per_cpu] = 0
        if not self.held[memory_per_cpu]:
            insort(self.memory, memory_per_cpu)
        sizes, estimates = entry
        bucket = estimates.get(procs)
        if bucket is None:
            universe = None if self.universe is None else self.universe[(memory_per_cpu, procs)]
            bucket = estimates[procs] = _Estimates(universe)
        if not len(bucket):
            insort(sizes, procs)
        bucket.add(estimate)
        self.held[memory_per_cpu] += 1

    def remove(self, procs: int, memory_per_cpu: float, estimate: float) -> None:
        sizes, estimates = self.by_memory[memory_per_cpu]
        bucket = estimates[procs]
        bucket.remove(estimate)
        if not len(bucket):
            del sizes[bisect_left(sizes, procs)]
        self.held[memory_per_cpu] -= 1
        if not self.held[memory_per_cpu]:
            del self.memory[bisect_left(self.memory, memory_per_cpu)]

    def count(self, max_free: int, max_memory: float, any_length, limit: float, givable,
              enough: float = math.inf) -> int:
        """Jobs asking at most ``max_free`` CPUs, at most ``max_memory`` MB per CPU and at most ``givable(m)`` CPUs
        at ``m`` MB per CPU, and at most ``any_length(m)`` CPUs or with an estimate of at most ``limit``; counting
        stops once ``enough`` are found."""
        total = 0
        by_memory = self.by_memory
        for memory in self.memory[: bisect_right(self.memory, max_memory)]:
            sizes, estimates = by_memory[memory]
            if sizes[0] > max_free:
                continue
            most = min(max_free, givable(memory))
            short = any_length(memory)
            for size in sizes[: bisect_right(sizes, most)]:
                bucket = estimates[size]
                total += len(bucket) if size <= short else bucket.at_most(limit)
            if total >= enough:
                break
        return total
