"""A site's cluster: machines with CPUs and memory, both hard capacities per machine.

A parallel job takes CPUs of one cluster, possibly on several machines
(space slicing, as in the batch engine); on each machine it holds
``cpus × memory per CPU`` of memory. Allocation is first fit over machine
indices: each machine gives ``min(free CPUs, floor(free memory / memory
per CPU))`` CPUs until the job has all it asked for. With no memory asked
(0 per CPU) this takes the same machines as the batch engine's first fit.
Failed machines give neither CPUs nor memory until they restart.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right, insort

import numpy as np

from ..batch.cluster import rejoin

FLOOR_SLACK = 1e-9   # a machine whose free memory is a whole number of a job's memory per CPU gives that many CPUs


def machine_givable(free_cpus: int, free_memory: float, memory_per_cpu: float) -> int:
    """CPUs one machine can give a job asking ``memory_per_cpu`` (> 0) MB per CPU: ``min(free CPUs, floor(free
    memory / memory per CPU))``. :meth:`SiteCluster._givable` is the same arithmetic over every machine at once."""
    return min(free_cpus, math.floor(free_memory / memory_per_cpu + FLOOR_SLACK))


class SiteCluster:
    """One cluster's machines, free CPUs and memory, and running jobs by estimated end."""

    def __init__(self, index: int, name: str, cpus_per_machine, memory_per_machine_mb, speed: float = 1.0):
        self.index = index
        self.name = name
        self.speed = float(speed)
        self.cpus = np.asarray(cpus_per_machine, dtype=np.int64)
        self.memory = np.asarray(memory_per_machine_mb, dtype=float)
        self.free_cpus = self.cpus.copy()
        self.free_memory = self.memory.copy()
        self.up = np.ones(len(self.cpus), dtype=bool)
        self.failures = np.zeros(len(self.cpus), dtype=np.int64)
        self.total = int(self.cpus.sum())
        self.total_memory = float(self.memory.sum())
        self.free_total = self.total
        self.up_total = self.total
        self.up_memory = self.total_memory
        self.used_memory = 0.0
        self.running: list[tuple[float, int]] = []  # (estimated end, job), sorted
        self.running_cpus: list[int] = []   # the CPUs of each, in the same order
        # job -> its machines, CPUs and memory on each, and memory per CPU
        self.held: dict[int, tuple[list[int], list[int], list[float], float]] = {}
        # machine -> the jobs running on it: built from ``held`` at the first failure, kept from then on (a run
        # without failures never asks).
        self.machine_jobs: list[set[int]] | None = None
        # The batch kernel's switches (ClusterState): running jobs are always kept here, machines' jobs from the
        # first failure on.
        self.track_running = True
        self.track_jobs = False
        # Invariant: the lists hold free_cpus and free_memory value for value (first fit walks them machine by
        # machine: a job mostly takes one or two), and ``avail`` the machines with a CPU free, ascending.
        self._free_cpus: list[int] = self.free_cpus.tolist()
        self._free_memory: list[float] = self.free_memory.tolist()
        self.avail: list[int] = np.flatnonzero(self.free_cpus > 0).tolist()
        # CPUs the machines can give at a memory per CPU, kept between changes: ``_givable_total[m]`` is
        # ``(total, n)``, the total as it was before ``_changes[n]``; a query brings it up to date by the machines
        # changed since (``(machine, free CPUs, free memory)`` before and after each change), or recomputes it
        # when many did. Failures and restarts start afresh (both emptied).
        self._givable_total: dict[float, tuple[int, int]] = {}
        self._changes: list[tuple[int, int, float, int, float]] = []
        # The most memory free on a machine with a CPU free, or None (computed when asked), and how many such
        # machines have that much: kept while one does.
        self._max_free_memory: float | None = None
        self._at_max = 0
        self._idle_givable: dict[tuple[float, bool], int] = {}   # fits_empty's totals, until a machine fails or restarts
        # ``_ratio``: the least memory per CPU of a machine. A machine is tight while its free memory is below
        # ``_ratio`` MB per free CPU; while none is, a job asking at most ``_loose_below`` MB per CPU (``_ratio`` less
        # a margin that covers rounding) gets every free CPU: the CPUs givable are free_total (givable_total). Tight
        # machines are counted as allocations and releases change them; None: computed when asked (at the start and
        # after a failure or restart).
        with_cpus = self.cpus > 0
        self._ratio = float((self.memory[with_cpus] / self.cpus[with_cpus]).min()) if with_cpus.any() else 0.0
        self._loose_below = self._ratio * (1 - 1e-6)
        self._tight: int | None = None

    @property
    def max_memory_per_cpu(self) -> float:
        """The most memory per CPU a one-CPU job could get on an empty machine."""
        return float((self.memory / self.cpus).max()) if len(self.cpus) else 0.0

    def max_free_memory(self) -> float:
        """The most memory free on one machine with a CPU free (0 if none): no job asking more per CPU fits now."""
        if self.free_total == 0:
            return 0.0
        if self._max_free_memory is None:
            if len(self.avail) <= self.FEW_AVAILABLE:   # the machines with a CPU free, read from the lists
                with_cpus = list(map(self._free_memory.__getitem__, self.avail))
                self._max_free_memory = most = max(with_cpus)
                self._at_max = with_cpus.count(most)
            else:
                with_cpus = self.free_memory[self.free_cpus > 0]
                self._max_free_memory = most = float(with_cpus.max())
                self._at_max = int((with_cpus == most).sum())
        return self._max_free_memory

    FEW_AVAILABLE = 256   # up to this many machines with a CPU free, max_free_memory reads them from the lists

    # --- what fits --------------------------------------------------------------------------------

    @staticmethod
    def _givable(free_cpus: np.ndarray, free_memory: np.ndarray, memory_per_cpu: float) -> np.ndarray:
        """CPUs each machine can give a job asking ``memory_per_cpu`` MB per CPU."""
        if memory_per_cpu <= 0:
            return free_cpus
        by_memory = np.floor(free_memory / memory_per_cpu + FLOOR_SLACK).astype(np.int64)
        return np.minimum(free_cpus, by_memory)

    def givable_total(self, memory_per_cpu: float) -> int:
        """CPUs the machines can give now, in all, to a job asking ``memory_per_cpu`` MB per CPU."""
        if memory_per_cpu <= 0:
            return self.free_total
        if memory_per_cpu <= self._loose_below:
            if self._tight is None:
                self._tight = int((self.free_memory < self.free_cpus * self._ratio).sum())
            if not self._tight:
                return self.free_total   # no machine tight: each gives every free CPU (see __init__)
        # machine_givable is _givable's arithmetic machine by machine: the same integers. Whichever reads fewer
        # machines: the changes since the total was last known (two each), or the machines with a CPU free (the
        # others give none) while they are few, or every machine at once (numpy).
        changes, avail = self._changes, self.avail
        known = self._givable_total.get(memory_per_cpu)
        pending = len(changes) - known[1] if known is not None else math.inf
        if 2 * pending <= len(avail) and pending <= self.CHANGES_APPLIED:
            total = known[0]
            for _, cpus_before, memory_before, cpus_after, memory_after in changes[known[1]:]:
                total += (machine_givable(cpus_after, memory_after, memory_per_cpu)
                          - machine_givable(cpus_before, memory_before, memory_per_cpu))
        elif len(avail) <= self.FEW_GIVING:
            free_cpus, free_memory, total = self._free_cpus, self._free_memory, 0
            for machine in avail:
                total += machine_givable(free_cpus[machine], free_memory[machine], memory_per_cpu)
        else:
            total = int(self._givable(self.free_cpus, self.free_memory, memory_per_cpu).sum())
        self._givable_total[memory_per_cpu] = (total, len(changes))
        return total

    CHANGES_APPLIED = 24   # past this many machine changes a total is recomputed (numpy: ~6 µs for 1,000 machines)
    FEW_GIVING = 24        # up to this many machines with a CPU free, a total is summed over them in Python
    CHANGES_KEPT = 256     # the log is emptied (and every total forgotten) when it grows past this

    def _change_log(self) -> list[tuple[int, int, float, int, float]]:
        """The log to append a change to; emptied first (every total forgotten) once it grew past its bound."""
        if len(self._changes) > self.CHANGES_KEPT:
            self._givable_total.clear()
            self._changes.clear()
        return self._changes

    def _changed(self) -> None:
        """Failures and restarts: every total and the most memory free are computed afresh."""
        self._givable_total.clear()
        self._changes.clear()
        self._max_free_memory = None
        self._tight = None

    def fits(self, procs: int, memory_per_cpu: float) -> bool:
        """Whether the job fits now (CPUs and memory, machine by machine)."""
        return procs <= self.free_total and self.givable_total(memory_per_cpu) >= procs

    def fits_empty(self, procs: int, memory_per_cpu: float, up_only: bool = True) -> bool:
        """Whether the job fits on this cluster's machines once they are idle (the machines that are up)."""
        key = (memory_per_cpu, up_only)
        total = self._idle_givable.get(key)
        if total is None:
            mask = self.up if up_only else np.ones(len(self.cpus), dtype=bool)
            cpus = np.where(mask, self.cpus, 0)
            memory = np.where(mask, self.memory, 0.0)
            total = self._idle_givable[key] = int(self._givable(cpus, memory, memory_per_cpu).sum())
        return total >= procs

    def largest_memory_fraction(self, procs: int, memory_per_cpu: float, low: float) -> float | None:
        """The largest share ``f`` in ``[low, 1)`` of its memory with which the job fits now (to 1/1000), or None."""
        if procs > self.free_total or memory_per_cpu <= 0:
            return None
        if not self.fits(procs, memory_per_cpu * low):
            return None
        lo, hi = low, 1.0
        while hi - lo > 1e-3:
            middle = (lo + hi) / 2
            if self.fits(procs, memory_per_cpu * middle):
                lo = middle
            else:
                hi = middle
        return lo

    # --- taking and giving back -------------------------------------------------------------------

    def allocate(self, job: int, procs: int, est_end: float, memory_per_cpu: float = 0.0) -> list[int]:
        """First fit of ``procs`` CPUs with ``memory_per_cpu`` MB each; returns the machines held (the batch
        kernel's cluster interface, :meth:`sched_engine.batch.cluster.ClusterState.allocate`, with memory)."""
        free_cpus, free_memory, avail = self._free_cpus, self._free_memory, self.avail
        taken, counts = [], []
        needed, scanned = procs, 0
        too_little = memory_per_cpu * (1 - 1e-6)   # less memory free than this gives no CPU (the floor below is 0)
        for machine in avail:
            scanned += 1
            give = free_cpus[machine]
            if memory_per_cpu > 0:
                memory = free_memory[machine]
                if memory < too_little:
                    continue
                # machine_givable, inlined: the quotient is positive here, so int() is its floor.
                by_memory = int(memory / memory_per_cpu + FLOOR_SLACK)
                if by_memory < give:
                    if by_memory <= 0:
                        continue
                    give = by_memory
            if give >= needed:
                taken.append(machine)
                counts.append(needed)
                needed = 0
                break
            taken.append(machine)
            counts.append(give)
            needed -= give
        if needed:
            raise RuntimeError(f"cluster {self.name}: {procs} CPUs with {memory_per_cpu:g} MB each do not fit")
        emptied = False
        changes, most, at_max = self._change_log(), self._max_free_memory, self._at_max
        array_cpus, array_memory, append = self.free_cpus, self.free_memory, changes.append
        tight, ratio = self._tight, self._ratio
        held_memory = []
        for machine, count in zip(taken, counts):
            cpus_before, memory_before = free_cpus[machine], free_memory[machine]
            cpus_after, memory_after = cpus_before - count, memory_before - count * memory_per_cpu
            if most is not None and memory_before == most and (not cpus_after or memory_after != most):
                at_max -= 1   # one machine less with the most memory free: once none is left, computed when asked
                if not at_max:
                    most = None
            array_cpus[machine] = free_cpus[machine] = cpus_after
            array_memory[machine] = free_memory[machine] = memory_after
            append((machine, cpus_before, memory_before, cpus_after, memory_after))
            if tight is not None:
                tight += (memory_after < cpus_after * ratio) - (memory_before < cpus_before * ratio)
            held_memory.append(count * memory_per_cpu)
            if not cpus_after:
                emptied = True
        if self.machine_jobs is not None:
            for machine in taken:
                self.machine_jobs[machine].add(job)
        self._max_free_memory, self._at_max, self._tight = most, at_max, tight
        if emptied:
            avail[:scanned] = [machine for machine in avail[:scanned] if free_cpus[machine]]
        self.free_total -= procs
        self.used_memory += procs * memory_per_cpu
        self.held[job] = (taken, counts, held_memory, memory_per_cpu)
        at = bisect_right(self.running, (est_end, job))
        self.running.insert(at, (est_end, job))
        self.running_cpus.insert(at, procs)
        return taken

    def release(self, job: int, est_end: float, held=None) -> None:
        """Give back a job's CPUs and memory (those of failed machines stay unavailable); ``held``, what
        :meth:`allocate` returned, is kept here by job and not needed."""
        machines, counts, _, memory_per_cpu = self.held.pop(job)
        at = bisect_left(self.running, (est_end, job))
        del self.running[at]
        del self.running_cpus[at]
        free_cpus, free_memory, up = self._free_cpus, self._free_memory, self.up
        changes, most, at_max = self._change_log(), self._max_free_memory, self._at_max
        array_cpus, array_memory, append = self.free_cpus, self.free_memory, changes.append
        tight, ratio = self._tight, self._ratio
        if self.machine_jobs is not None:
            for machine in machines:
                self.machine_jobs[machine].discard(job)
        freed, newly = 0, []
        for machine, count in zip(machines, counts):
            if up[machine]:
                cpus_before, memory_before = free_cpus[machine], free_memory[machine]
                if not cpus_before:
                    newly.append(machine)
                cpus_after, memory_after = cpus_before + count, memory_before + count * memory_per_cpu
                array_cpus[machine] = free_cpus[machine] = cpus_after
                array_memory[machine] = free_memory[machine] = memory_after
                append((machine, cpus_before, memory_before, cpus_after, memory_after))
                if tight is not None:
                    tight += (memory_after < cpus_after * ratio) - (memory_before < cpus_before * ratio)
                if most is not None:   # memory only grows, and the machine has a CPU free now
                    if cpus_before and memory_before == most:
                        at_max -= 1
                    if memory_after > most:
                        most, at_max = memory_after, 1
                    elif memory_after == most:
                        at_max += 1
                freed += count
        if newly:
            rejoin(self.avail, newly)
        self._max_free_memory, self._at_max, self._tight = most, at_max, tight
        self.free_total += freed
        self.used_memory -= float(sum(counts)) * memory_per_cpu

    # --- failures ---------------------------------------------------------------------------------

    def fail(self, machine: int) -> set[int]:
        """Take a machine down; returns the jobs running on it (to be killed)."""
        if self.machine_jobs is None:
            self.machine_jobs = [set() for _ in range(len(self.cpus))]
            for job, (machines, _, _, _) in self.held.items():
                for held_on in machines:
                    self.machine_jobs[held_on].add(job)
        victims = set(self.machine_jobs[machine])
        self._changed()
        self._idle_givable.clear()
        self.failures[machine] += 1
        if self.up[machine]:
            self.up[machine] = False
            self.up_total -= int(self.cpus[machine])
            self.up_memory -= float(self.memory[machine])
            self.free_total -= int(self.free_cpus[machine])
            self.free_cpus[machine] = self._free_cpus[machine] = 0
            self.free_memory[machine] = self._free_memory[machine] = 0.0
            self.avail = [m for m in self.avail if m != machine]
        return victims

    def restart(self, machine: int) -> None:
        """End one failure of a machine; once none is left its CPUs and memory are free at once."""
        self.failures[machine] -= 1
        self._changed()
        self._idle_givable.clear()
        if not self.up[machine] and self.failures[machine] == 0:
            self.up[machine] = True
            self.up_total += int(self.cpus[machine])
            self.up_memory += float(self.memory[machine])
            self.free_cpus[machine] = self._free_cpus[machine] = int(self.cpus[machine])
            self.free_memory[machine] = self._free_memory[machine] = float(self.memory[machine])
            if self._free_cpus[machine]:
                insort(self.avail, machine)
            self.free_total += int(self.cpus[machine])
