"""Cluster state: machines, free CPUs, running jobs, and a CPU profile for reservations.

Klusáček & Rudová §2.1: a cluster is a set of machines; a parallel job takes
CPUs of one cluster only, possibly on several of its machines (space
slicing). Failed machines contribute no CPUs until they restart.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from heapq import heappop, heappush

import numpy as np


class ClusterState:
    """One cluster's machines and running jobs.

    Invariants: ``0 <= free[m] <= cpus[m]``; ``free[m] == 0`` for a failed
    machine; ``free_total == sum(free)``; ``up_total`` sums the CPUs of the
    machines that are up; ``running`` is sorted by estimated end (ties by
    job index); every machine with free CPUs is in ``_with_free`` (a heap of
    machine indices, so first fit takes the lowest index first).
    """

    __slots__ = (
        "index", "name", "speed", "properties", "cpus", "free", "up", "free_total", "up_total", "total",
        "running", "machine_jobs", "track_jobs", "_with_free", "_queued", "_failures",
    )

    def __init__(self, index: int, name: str, cpus_per_machine, speed: float, properties=()):
        self.index = index
        self.name = name
        self.speed = float(speed)
        self.properties = tuple(properties)
        self.cpus = [int(c) for c in cpus_per_machine]
        self.free = list(self.cpus)
        self.up = [True] * len(self.cpus)
        self._failures = [0] * len(self.cpus)  # overlapping failures of a machine
        self.total = sum(self.cpus)
        self.free_total = self.total
        self.up_total = self.total
        self.running: list[tuple[float, int]] = []
        self.machine_jobs: list[set[int]] = [set() for _ in self.cpus]
        # Which jobs hold each machine matters only when machines can fail.
        self.track_jobs = True
        self._with_free = list(range(len(self.cpus)))  # sorted, hence a valid heap
        self._queued = [True] * len(self.cpus)

    @property
    def max_cpus_per_machine(self) -> int:
        return max(self.cpus)

    def allocate(self, job: int, procs: int, est_end: float) -> tuple[list[int], list[int]]:
        """Take ``procs`` CPUs, first fit over machines in index order.

        Returns the machines used and the CPUs taken on each.
        """
        if procs > self.free_total:
            raise RuntimeError(f"cluster {self.name}: {procs} CPUs asked, {self.free_total} free")
        free, heap, queued, machine_jobs = self.free, self._with_free, self._queued, self.machine_jobs
        machines, counts = [], []
        needed = procs
        while needed:
            machine = heap[0]
            available = free[machine]
            if available == 0:  # filled or failed since it was queued
                heappop(heap)
                queued[machine] = False
                continue
            taken = available if available < needed else needed
            free[machine] = available - taken
            needed -= taken
            machines.append(machine)
            counts.append(taken)
            if self.track_jobs:
                machine_jobs[machine].add(job)
            if taken == available:
                heappop(heap)
                queued[machine] = False
        self.free_total -= procs
        insort(self.running, (est_end, job))
        return machines, counts

    def release(self, job: int, est_end: float, machines: list[int], counts: list[int]) -> None:
        """Give back a job's CPUs (those on failed machines stay unavailable)."""
        del self.running[bisect_left(self.running, (est_end, job))]
        free, up, queued = self.free, self.up, self._queued
        track = self.track_jobs
        for machine, count in zip(machines, counts):
            if track:
                self.machine_jobs[machine].discard(job)
            if up[machine]:
                free[machine] += count
                self.free_total += count
                if not queued[machine]:
                    heappush(self._with_free, machine)
                    queued[machine] = True

    def fail(self, machine: int) -> set[int]:
        """Take a machine down; returns the jobs running on it (to be killed)."""
        victims = set(self.machine_jobs[machine])
        self._failures[machine] += 1
        if self.up[machine]:
            self.up[machine] = False
            self.free_total -= self.free[machine]
            self.up_total -= self.cpus[machine]
            self.free[machine] = 0
        return victims

    def restart(self, machine: int) -> None:
        """End one failure of a machine; once none is left its CPUs are free at once."""
        self._failures[machine] -= 1
        if not self.up[machine] and self._failures[machine] == 0:
            self.up[machine] = True
            self.free[machine] = self.cpus[machine]
            self.free_total += self.cpus[machine]
            self.up_total += self.cpus[machine]
            if not self._queued[machine]:
                heappush(self._with_free, machine)
                self._queued[machine] = True

    def shadow(self, procs: int, procs_of) -> tuple[float, int] | None:
        """EASY's reservation for a job of ``procs`` CPUs on this cluster.

        The earliest estimated end of running jobs after which at least
        ``procs`` CPUs are free (Lifka's shadow time), and the CPUs left over
        at that time (the "extra" CPUs backfilled jobs may keep past it).
        ``-inf`` when it fits now; ``None`` when the machines that are up
        cannot hold the job at all.
        """
        if procs > self.up_total:
            return None
        available = self.free_total
        if available >= procs:
            return float("-inf"), available - procs
        running = self.running
        for position, (est_end, job) in enumerate(running):
            available += procs_of[job]
            if available >= procs:
                # Every job ending at the shadow time frees its CPUs then.
                for later in range(position + 1, len(running)):
                    later_end, later_job = running[later]
                    if later_end != est_end:
                        break
                    available += procs_of[later_job]
                return est_end, available - procs
        return None


class Profile:
    """Free CPUs of one cluster over future time, as a step function.

    ``free[i]`` CPUs are free on ``[times[i], times[i+1])``; the last value
    holds for ever. Conservative backfilling reserves every waiting job in it
    (Mu'alem & Feitelson 2001).
    """

    __slots__ = ("times", "free")

    def __init__(self, times: np.ndarray, free: np.ndarray):
        self.times = times
        self.free = free

    @classmethod
    def from_running(cls, now: float, cluster: ClusterState, procs_of) -> "Profile":
        """The profile of a cluster's running jobs alone, from ``now`` on."""
        ends = [max(est_end, now) for est_end, _ in cluster.running]
        freed = [procs_of[job] for _, job in cluster.running]
        times = np.array([now, *ends], dtype=float)
        free = np.cumsum(np.array([cluster.free_total, *freed], dtype=np.int64))
        # Merge equal breakpoints: keep the last cumulative value of each time.
        keep = np.append(times[1:] != times[:-1], True)
        return cls(times[keep], free[keep])

    def trim(self, now: float) -> None:
        """Drop the past: the segment holding ``now`` starts the profile."""
        first = int(np.searchsorted(self.times, now, side="right")) - 1
        if first > 0:
            self.times = self.times[first:].copy()
            self.free = self.free[first:].copy()
        if self.times[0] < now:
            self.times[0] = now

    def earliest(self, now: float, procs: int, duration: float) -> float | None:
        """The earliest ``t >= now`` with ``procs`` CPUs free on ``[t, t + duration)``."""
        self.trim(now)
        times, free = self.times, self.free
        if free[-1] < procs:
            return None
        ok = free >= procs
        blocked = np.flatnonzero(~ok)
        if blocked.size == 0:
            return float(times[0])
        # For each breakpoint, the time the run of sufficient CPUs starting there ends.
        next_blocked = np.searchsorted(blocked, np.arange(len(times)), side="right")
        run_end = np.full(len(times), np.inf)
        inside = next_blocked < blocked.size
        run_end[inside] = times[blocked[next_blocked[inside]]]
        feasible = ok & (run_end - times >= duration)
        return float(times[int(np.argmax(feasible))])

    def reserve(self, start: float, end: float, procs: int) -> None:
        """Take ``procs`` CPUs on ``[start, end)``; the caller checked they are free."""
        if end <= start:
            return
        for point in (start, end):
            index = int(np.searchsorted(self.times, point))
            if index == len(self.times) or self.times[index] != point:
                self.times = np.insert(self.times, index, point)
                self.free = np.insert(self.free, index, self.free[index - 1])
        lo = int(np.searchsorted(self.times, start))
        hi = int(np.searchsorted(self.times, end))
        self.free[lo:hi] -= procs
