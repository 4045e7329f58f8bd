"""Cluster state: machines, free CPUs and running jobs (the CPU profile for reservations: :mod:`.profile`).

Klusáček & Rudová §2.1: a cluster is a set of machines; a parallel job takes
CPUs of one cluster only, possibly on several of its machines (space
slicing). Failed machines contribute no CPUs until they restart.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort

import numpy as np
import pandas as pd


class ClusterState:
    """One cluster's machines and running jobs.

    Invariants: ``free_total`` sums the free CPUs of the machines that are
    up and ``up_total`` their CPUs; ``running`` (kept while
    ``track_running``) lists the running jobs as ``(estimated end, job)``,
    sorted. First fit takes the free CPUs of the lowest
    machine indices, kept in one of two forms:

    * machines of several CPUs: ``free[m]`` counts machine ``m``'s free CPUs
      (0 while it is down) and ``avail`` lists the machines with
      ``free[m] > 0`` in ascending order. A job holds ``(machines, counts)``.
    * one-CPU machines (``free is None``; the usual reading of an SWF
      ``MaxProcs``): ``runs`` is the flat list ``[lo0, hi0, lo1, hi1, ...]``
      of the maximal ranges ``lo <= m < hi`` of free machines that are up,
      ascending; two ranges never touch. A job holds its machines as such a
      flat list of ranges too, so taking or giving back ``k`` machines costs
      one step per range, not per machine.

    What a job holds (:meth:`allocate`) is opaque to callers; they pass it
    back to :meth:`release`, :meth:`machines` and :meth:`machines_text`.
    """

    __slots__ = (
        "index", "name", "speed", "properties", "cpus", "free", "up", "free_total", "up_total", "total",
        "running", "track_running", "machine_jobs", "track_jobs", "avail", "runs", "_failures", "_labels",
    )

    def __init__(self, index: int, name: str, cpus_per_machine, speed: float, properties=()):
        self.index = index
        self.name = name
        self.speed = float(speed)
        self.properties = tuple(properties)
        self.cpus = [int(c) for c in cpus_per_machine]
        one_cpu = all(c == 1 for c in self.cpus)
        self.free = None if one_cpu else list(self.cpus)
        self.avail = [] if one_cpu else list(range(len(self.cpus)))
        self.runs = [0, len(self.cpus)] if one_cpu else []
        self.up = [True] * len(self.cpus)
        self._failures = [0] * len(self.cpus)  # overlapping failures of a machine
        self.total = sum(self.cpus)
        self.free_total = self.total
        self.up_total = self.total
        self.running: list[tuple[float, int]] = []
        # Running jobs by estimated end matter only to policies that plan ahead (reservations).
        self.track_running = True
        self.machine_jobs: list[set[int]] = [set() for _ in self.cpus]
        # Which jobs hold each machine matters only when machines can fail.
        self.track_jobs = True
        self._labels: tuple[str, list[int]] | None = None

    @property
    def max_cpus_per_machine(self) -> int:
        return max(self.cpus)

    # --- taking and giving back CPUs ------------------------------------------------------------------

    def allocate(self, job: int, procs: int, est_end: float):
        """Take ``procs`` CPUs, first fit over machines in index order; returns what the job holds."""
        if procs > self.free_total:
            raise RuntimeError(f"cluster {self.name}: {procs} CPUs asked, {self.free_total} free")
        held = self._take_ranges(procs) if self.free is None else self._take(procs)
        if self.track_jobs:
            machine_jobs = self.machine_jobs
            for machine in self.machines(held):
                machine_jobs[machine].add(job)
        self.free_total -= procs
        if self.track_running:
            insort(self.running, (est_end, job))
        return held

    def release(self, job: int, est_end: float, held) -> None:
        """Give back a job's CPUs (those on failed machines stay unavailable)."""
        if self.track_running:
            del self.running[bisect_left(self.running, (est_end, job))]
        if self.track_jobs:
            machine_jobs = self.machine_jobs
            for machine in self.machines(held):
                machine_jobs[machine].discard(job)
        if self.free is not None:
            self._give_back(held)
        elif self.up_total == self.total:
            self._free_ranges(held)
        else:
            self._free_ranges(_ranges([m for m in self.machines(held) if self.up[m]]))

    def _take(self, procs: int) -> tuple[list[int], list[int]]:
        """Machines of several CPUs: the first machines of ``avail``, the last one possibly in part."""
        free, avail = self.free, self.avail
        machines, counts = [], []
        if procs <= 0:
            return machines, counts
        needed = procs
        emptied = 0  # the first ``emptied`` machines of ``avail`` give all their free CPUs
        for machine in avail:
            available = free[machine]
            machines.append(machine)
            if available <= needed:
                free[machine] = 0
                counts.append(available)
                emptied += 1
                needed -= available
                if not needed:
                    break
            else:
                free[machine] = available - needed
                counts.append(needed)
                break
        del avail[:emptied]
        return machines, counts

    def _give_back(self, held: tuple[list[int], list[int]]) -> None:
        """Machines of several CPUs: return the counts; machines that had none free rejoin ``avail``
        (:func:`rejoin`)."""
        free, up, newly, freed = self.free, self.up, [], 0
        for machine, count in zip(*held):
            if up[machine]:
                if not free[machine]:
                    newly.append(machine)
                free[machine] += count
                freed += count
        self.free_total += freed
        rejoin(self.avail, newly)

    def _take_ranges(self, procs: int) -> list[int]:
        """One-CPU machines: the first ``procs`` free machines, as a flat list of ranges."""
        if procs <= 0:
            return []
        runs = self.runs
        taken = 0  # machines in runs[:end]; the ranges hold free_total >= procs machines in all
        end = 0
        while True:
            lo, hi = runs[end], runs[end + 1]
            if taken + hi - lo >= procs:
                break
            taken += hi - lo
            end += 2
        cut = lo + procs - taken
        held = runs[:end]
        held += (lo, cut)
        if cut == hi:
            del runs[: end + 2]
        else:
            del runs[:end]
            runs[0] = cut
        return held

    def _free_ranges(self, ranges: list[int]) -> None:
        """One-CPU machines: the machines of ``ranges`` (flat, ascending; none free) become free."""
        runs, freed = self.runs, 0
        pairs = iter(ranges)
        for lo, hi in zip(pairs, pairs):
            # No free range overlaps [lo, hi), so ``position`` is even: the ranges before it end by ``lo``.
            position = bisect_right(runs, lo)
            if position and runs[position - 1] == lo:  # joins the free range on its left
                if position < len(runs) and runs[position] == hi:  # and the one on its right
                    del runs[position - 1 : position + 1]
                else:
                    runs[position - 1] = hi
            elif position < len(runs) and runs[position] == hi:
                runs[position] = lo
            else:
                runs[position:position] = (lo, hi)
            freed += hi - lo
        self.free_total += freed

    def machines(self, held) -> list[int]:
        """The machine indices a job holds, ascending."""
        if self.free is None:
            return [m for position in range(0, len(held), 2) for m in range(held[position], held[position + 1])]
        return list(held[0])

    def machines_text(self, held) -> str:
        """The machines a job holds as comma-separated indices (``"0,1,2,7"``)."""
        if self.free is not None:
            return ",".join(map(str, held[0]))
        if self._labels is None:
            text = ",".join(map(str, range(len(self.cpus))))
            # at[m]: where machine m's label starts in text; at[len] one past a final comma.
            at = [0]
            for m in range(len(self.cpus)):
                at.append(at[-1] + len(str(m)) + 1)
            self._labels = (text, at)
        text, at = self._labels
        if len(held) == 2:
            return text[at[held[0]] : at[held[1]] - 1]
        ranges = iter(held)
        return ",".join([text[at[lo] : at[hi] - 1] for lo, hi in zip(ranges, ranges)])

    # --- failures -------------------------------------------------------------------------------------

    def fail(self, machine: int) -> set[int]:
        """Take a machine down; returns the jobs running on it (to be killed)."""
        victims = set(self.machine_jobs[machine])
        self._failures[machine] += 1
        if self.up[machine]:
            self.up[machine] = False
            self.up_total -= self.cpus[machine]
            if self.free is None:
                runs = self.runs
                position = bisect_right(runs, machine)
                if position % 2:  # machine is free, in the range runs[position - 1 : position + 1]
                    lo, hi = runs[position - 1], runs[position]
                    pieces = []
                    if lo < machine:
                        pieces += (lo, machine)
                    if machine + 1 < hi:
                        pieces += (machine + 1, hi)
                    runs[position - 1 : position + 1] = pieces
                    self.free_total -= 1
            elif self.free[machine]:
                del self.avail[bisect_left(self.avail, machine)]
                self.free_total -= self.free[machine]
                self.free[machine] = 0
        return victims

    def restart(self, machine: int) -> None:
        """End one failure of a machine; once none is left its CPUs are free at once."""
        self._failures[machine] -= 1
        if not self.up[machine] and self._failures[machine] == 0:
            self.up[machine] = True
            self.up_total += self.cpus[machine]
            if self.free is None:
                self._free_ranges([machine, machine + 1])
            else:
                self.free[machine] = self.cpus[machine]
                self.free_total += self.cpus[machine]
                insort(self.avail, machine)

    # --- reservations ------------------------------------------------------------------------------

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


def rejoin(avail: list[int], newly: list[int]) -> None:
    """Machines that had no CPU free (``newly``, ascending) rejoin the ascending list ``avail``: a few by binary
    insertion, many appended and the list sorted again, which is one merge of two ascending runs."""
    if len(newly) < 8:
        for machine in newly:
            insort(avail, machine)
    else:
        avail += newly
        avail.sort()


def _ranges(machines: list[int]) -> list[int]:
    """Ascending machine indices as a flat list of maximal ranges ``[lo0, hi0, lo1, hi1, ...]``."""
    flat: list[int] = []
    for machine in machines:
        if flat and flat[-1] == machine:
            flat[-1] = machine + 1
        else:
            flat += (machine, machine + 1)
    return flat


def cluster_sets(candidates: list[tuple[int, ...]]) -> tuple[np.ndarray, list[tuple[int, ...]]]:
    """Each job's set of clusters it may use (``BatchSimulation.candidates``) numbered: ``(number of each job's set,
    the distinct sets in order of first appearance)``. Numbered by pandas' hashing of the tuples, not a Python
    step per job: a full log has hundreds of thousands of jobs and most runs one or a few sets."""
    numbers, sets = pd.factorize(pd.Series(candidates, dtype=object), sort=False)
    return numbers.astype(np.int64), list(sets)
