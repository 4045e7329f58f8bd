"""A fair order read by keys: the pass's order without progressive filling, and EASY's walk over what could start.

A fair order's picks follow from keys (:mod:`.keys`): each leaf's jobs, in arrival order, keyed by the
leaf's dominant share before each, and the order is the merge of the leaves' jobs by key.

So a pass reads its order as that merge (:meth:`KeyedWalk.in_order`: a key
per job read, against a pick's walk down the tree's heaps), and EASY's walk
after the head (:func:`.keyed_easy.after_head`) merges, leaf by leaf, only the jobs
meeting its necessary condition and never generates the jobs in between:
the walk a fair order's backlog made cost a pick per waiting job now costs
a key per job that could start.
"""

from __future__ import annotations

from heapq import heapify, heappop, heappush

import numpy as np

from .waiting import ArrivalQueue, direction

CANDIDATE, EVENT = 0, 1  # a job that could start; a job whose pick may move a top (H-DRF's events), after it at ties


class _LeafJobs:
    """One leaf's jobs that waited at some pass's start, arrival order, with their demands; the dominant share
    before each (the leaf's share at the pass's start plus the earlier live jobs' demands), computed when needed
    and only as far as a walk reads."""

    __slots__ = ("jobs", "demand", "cpu", "memory", "live", "count", "waiting", "memory_dominant", "departed",
                 "share", "dominant", "summed", "slots", "keyed_pass")

    def __init__(self):
        self.jobs = np.empty(16, dtype=np.int64)
        self.hold(np.empty((2, 16)))
        self.live = np.zeros(16, dtype=bool)
        self.count = 0
        self.waiting = 0
        self.memory_dominant = 0   # waiting jobs whose share of the memory exceeds their share of the CPUs
        self.departed: list[int] = []   # slots of jobs that left since the pass started (still live until the next)
        self.share = (0.0, 0.0)
        self.dominant: np.ndarray | None = None   # before each of the first slots
        self.summed = (0.0, 0.0)   # the share before the first slot past those (CPUs, memory)
        self.slots: list[int] | None = None   # the live slots, ascending (this pass's waiting jobs in arrival order)
        self.keyed_pass = -1

    def hold(self, demand: np.ndarray) -> None:
        """Each slot's demand, one row per resource: ``cpu`` and ``memory`` are its rows."""
        self.demand, self.cpu, self.memory = demand, demand[0], demand[1]

    def append(self, job: int, cpu: float, memory: float) -> int:
        if self.count == len(self.jobs):
            size = 2 * self.count
            self.jobs = np.resize(self.jobs, size)
            demand = np.empty((2, size))
            demand[:, : self.count] = self.demand
            self.hold(demand)
            self.live = np.concatenate([self.live, np.zeros(size - self.count, dtype=bool)])
        slot = self.count
        self.jobs[slot], self.cpu[slot], self.memory[slot], self.live[slot] = job, cpu, memory, True
        self.count += 1
        return slot


class KeyedWalk:
    """The waiting jobs per leaf with their keys, and EASY's walk after the head in the fair order (module docstring).

    The simulation tells it of every arrival, departure and change of a
    leaf's usage (:meth:`add`, :meth:`left`, :meth:`touch`) and calls
    :meth:`begin_pass` before each pass: a pass's keys are those of the
    shares and queues at its start, as the order's generation reads them.
    """

    def __init__(self, sim, keys):
        self.sim = sim
        self.keys = keys
        self.cpus = max(sim.total_cpus, 1.0)
        self.leaves = [_LeafJobs() for _ in range(sim.tree.leaf_count)]
        self.queues = [ArrivalQueue(capacity=16) for _ in range(sim.tree.leaf_count)]  # by class, for the condition
        self.slot: dict[int, int] = {}
        self.memory_dominant = 0   # waiting jobs whose share of the memory exceeds their share of the CPUs
        self.wanting: set[int] = set()   # leaves with a waiting job
        # Each leaf's key for its first job, as read by the last pass that read it with every job CPU-dominant;
        # valid until the leaf changes or a top on its path moves (a pass reads the others again, not recomputes).
        self.first_keys: dict[int, tuple] = {}
        self.stale: set[int] = set()
        self.pass_number = 0
        self.decayed = None

    def _demand(self, job: int) -> tuple[float, float]:
        sim = self.sim
        return sim.procs[job] / self.cpus, sim.procs[job] * sim.memory_per_cpu[job] / sim.total_memory

    def add(self, job: int) -> None:
        sim = self.sim
        leaf = sim.leaf[job]
        jobs = self.leaves[leaf]
        cpu, memory = self._demand(job)
        self.slot[job] = jobs.append(job, cpu, memory)
        self.queues[leaf].add(job, sim.procs[job], sim.memory_per_cpu[job], sim.estimate[job])
        jobs.waiting += 1
        if jobs.waiting == 1:
            self.keys.opened(leaf)
            self.wanting.add(leaf)
        self.memory_dominant += memory > cpu
        jobs.memory_dominant += memory > cpu
        self.stale.add(leaf)

    def left(self, job: int) -> None:
        leaf = self.sim.leaf[job]
        jobs = self.leaves[leaf]
        jobs.departed.append(self.slot.pop(job))
        self.queues[leaf].remove(job)
        jobs.waiting -= 1
        if jobs.waiting == 0:
            self.keys.closed(leaf)
            self.wanting.discard(leaf)
        cpu, memory = self._demand(job)
        self.memory_dominant -= memory > cpu
        jobs.memory_dominant -= memory > cpu
        self.stale.add(leaf)

    def touch(self, leaf: int) -> None:
        self.stale.add(leaf)

    def begin_pass(self) -> None:
        """The pass's start: the departures of the last one applied, and the changed leaves' shares read now."""
        sim = self.sim
        self.pass_number += 1
        self.decayed = sim.decayed if sim.order.half_life_s > 0 else None
        for leaf in self.stale:
            self.first_keys.pop(leaf, None)
            jobs = self.leaves[leaf]
            if jobs.departed:
                jobs.live[jobs.departed] = False
                jobs.departed.clear()
                if jobs.count > 2 * jobs.waiting + 1024:
                    self._compact(jobs)
            jobs.share = (float(sim.leaf_cpus[leaf]) / self.cpus, float(sim.leaf_memory[leaf]) / sim.total_memory)
            jobs.dominant = jobs.slots = None
        self.stale.clear()

    def _compact(self, jobs: _LeafJobs) -> None:
        keep = np.flatnonzero(jobs.live[: jobs.count])
        jobs.jobs = jobs.jobs[keep]
        jobs.hold(jobs.demand[:, keep])
        jobs.live = np.ones(len(keep), dtype=bool)
        jobs.count = len(keep)
        for slot, job in enumerate(jobs.jobs.tolist()):
            self.slot[job] = slot
        if not len(keep):   # keep room to append
            jobs.jobs = np.empty(16, dtype=np.int64)
            jobs.hold(np.empty((2, 16)))
            jobs.live = np.zeros(16, dtype=bool)

    def _start_share(self, leaf: int) -> tuple[float, float]:
        """The leaf's share at the pass's start (its decayed usage when the order decays it)."""
        if self.decayed is not None:
            return float(self.decayed[leaf, 0]), float(self.decayed[leaf, 1])
        return self.leaves[leaf].share

    DOMINANT_FIRST = 64   # slots whose dominant shares a leaf's first read computes (then twice as many each time)

    def _dominant(self, leaf: int, slot: int) -> float:
        """Dominant share before a slot's job in this pass's order: sequential sums, as the picks add them (each
        further stretch of slots goes on from the sums before its first, the additions those of one sum)."""
        jobs = self.leaves[leaf]
        if jobs.dominant is None or (self.decayed is not None and jobs.keyed_pass != self.pass_number):
            jobs.dominant, jobs.summed = np.empty(0), self._start_share(leaf)
            jobs.keyed_pass = self.pass_number
        known = len(jobs.dominant)
        if slot >= known:
            end = min(jobs.count, max(slot + 1, 2 * known, self.DOMINANT_FIRST))
            # Row by row: the sums before the stretch, then each live job's demand added in slot order.
            sums = np.empty((2, end - known + 1))
            sums[0, 0], sums[1, 0] = jobs.summed
            np.multiply(jobs.demand[:, known:end], jobs.live[known:end], out=sums[:, 1:])
            sums.cumsum(axis=1, out=sums)
            jobs.dominant = np.concatenate((jobs.dominant, np.maximum(sums[0, :-1], sums[1, :-1])))
            jobs.summed = (float(sums[0, -1]), float(sums[1, -1]))
        return float(jobs.dominant[slot])

    def _slots(self, leaf: int) -> list[int]:
        """The slots of the jobs waiting at this pass's start, arrival order."""
        jobs = self.leaves[leaf]
        if jobs.slots is None:
            jobs.slots = np.flatnonzero(jobs.live[: jobs.count]).tolist()
        return jobs.slots

    def cpu_dominant(self, head: int | None = None) -> bool:
        """Whether every waiting job but ``head`` is CPU-dominant (always, for keys without events): then no
        branch follows directions. Read before the pass starts or cancels a job."""
        if not self.keys.events:
            return True
        if head is None:
            return self.memory_dominant == 0
        cpu, memory = self._demand(head)
        return self.memory_dominant - (memory > cpu) == 0

    def in_order(self):
        """Every job waiting at the pass's start, in the order's sequence, lazily.

        The merge of the leaves' jobs by key: each leaf offers its next job.
        Under H-DRF, while every waiting job is CPU-dominant only a leaf's last
        job moves a ``top`` (module docstring); otherwise any job whose
        successor in its leaf turns direction may, and the leaf's departments
        are computed again (:meth:`HDRFKeys.turn`). Either way the leaves
        under the department whose ``top`` moved are keyed again. The caller
        may start or cancel the jobs it is given meanwhile: keys stay those of
        the pass's start, as progressive filling counts a picked job.
        """
        keys = self.keys
        mixed = not self.cpu_dominant()
        live = set(self.wanting)   # the leaves offering a job (this pass's: the caller's starts shrink `wanting`)
        cursor: dict[int, int] = {}   # leaf -> index in its slots of the job it offers, once it offered one
        version: dict[int, int] = {}
        share: dict[int, list[float]] = {}   # leaf -> its share before the job it offers (sums as in _dominant)

        def share_of(leaf: int) -> list[float]:
            if leaf not in share:
                share[leaf] = list(self._start_share(leaf))
            return share[leaf]

        def offer(leaf: int) -> None:
            heappush(heap, (keys.key(leaf, max(share_of(leaf)), state), leaf, version.get(leaf, 0)))

        if mixed:
            branches = self._directed_branches(live)
            offered = {leaf: self._direction(leaf, self._slots(leaf)[0]) for leaf in sorted(live)
                       if keys.branch(leaf) in branches}
            state = keys.mixed_state(offered)
            # Outside the mixed branches the tops are those kept for every direction CPU-dominant: so are the keys.
            kept = keys.walk_state()
            heap = [(keys.key(leaf, max(share_of(leaf)), state) if leaf in offered else self._first_key(leaf, kept),
                     leaf, 0) for leaf in live]
        else:
            state = keys.walk_state() if keys.events else None
            heap = [(self._first_key(leaf, state), leaf, 0) for leaf in live]
        heapify(heap)
        while heap:
            _, leaf, seen = heappop(heap)
            if seen != version.get(leaf, 0):
                continue
            jobs, slots = self.leaves[leaf], self._slots(leaf)
            at = cursor.get(leaf, 0)
            slot = slots[at]
            yield int(jobs.jobs[slot])
            cursor[leaf] = at = at + 1
            moved = None
            if at < len(slots):
                leaf_share = share_of(leaf)
                leaf_share[0] += float(jobs.cpu[slot])
                leaf_share[1] += float(jobs.memory[slot])
                if mixed and leaf in offered:
                    vector = self._direction(leaf, slots[at])
                    if vector != offered[leaf]:
                        offered[leaf] = vector
                        moved = keys.turn(leaf, vector, state)
                if moved is None:
                    offer(leaf)
                    continue
            else:
                live.discard(leaf)
                if mixed:
                    moved = keys.turn(leaf, None, state) if leaf in offered else keys.close(leaf, state)
                elif keys.events:
                    moved = keys.exhaust(leaf, state)
            if moved is None:
                continue
            for other in keys.leaves_under[moved]:   # the leaves under the moved department: keyed again
                if other in live:
                    version[other] = version.get(other, 0) + 1
                    offer(other)

    def _directed_branches(self, leaves) -> set[int]:
        """The root's children with a memory-dominant job waiting in one of ``leaves``: only the leaves under
        them follow their directions (module docstring)."""
        branches = {self.keys.branch(leaf) for leaf in leaves if self.leaves[leaf].memory_dominant}
        branches.discard(None)
        return branches

    def _first_key(self, leaf: int, state) -> tuple:
        """The key of the leaf's first job with every job CPU-dominant: kept from pass to pass until it moves."""
        if self.keys.moved:   # tops moved since the keys were last read: the leaves under them are keyed again
            for a in self.keys.moved:
                for other in self.keys.leaves_under[a]:
                    self.first_keys.pop(other, None)
            self.keys.moved.clear()
        key = self.first_keys.get(leaf)
        if key is None:
            key = self.keys.key(leaf, max(self._start_share(leaf)), state)
            if self.decayed is None:   # decayed shares move at every pass
                self.first_keys[leaf] = key
        return key

    def _direction(self, leaf: int, slot: int) -> list[float]:
        """The direction of a slot's job's demand (largest component 1), as the fair queue computes it."""
        jobs = self.leaves[leaf]
        return direction(float(jobs.cpu[slot]), float(jobs.memory[slot]))
