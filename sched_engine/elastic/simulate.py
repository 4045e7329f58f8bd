"""Event loop, node state and timeline generator of the elasticity engine.

Time advances from instant to instant. At each instant, in the order of
:class:`sched_engine.core.events.Priority`, finished tasks release their
memory and core (COMPLETION), new jobs and newly runnable reduce phases
join the job queue (ARRIVAL), then one scheduling pass (SCHEDULE) offers
nodes to the queue -- the heartbeat-driven loop of the paper's Alg. 1:

    for every offered node N:
        J <- the job N is reserved for, else the head of the job queue
        T <- J's next task
        T fits N regularly                      -> run T with its ideal memory
        elastic policy, T fits N elastically and
          T's elastic end <= J's estimated end  -> run T under-sized (Alg. 1, l. 7-10)
        allocated: unreserve N, re-sort the queue and offer N again
        otherwise: reserve N for J (YARN node reservations) and move on,
          or, if N was already reserved for J and the policy allows it
          (YARN-ME), fill N's gap: the first job in queue order whose next
          task fits N (regularly or elastically) and ends by the time J's
          task can start on N gets N, and N is offered again

§3.3: "YARN-ME allows tasks of other jobs to be allocated on a reserved
node, but only if this does not hinder the tasks of the reserved job."
Reading: J's task can start on N when the tasks running there have freed
its ideal memory (:meth:`ElasticSimulation.reserved_start`); a task that
ends by then gives back all it took before J needs it. (An earlier,
elastic start of J's task on N is not protected: the timeline generator
plans J's tasks regularly.) Stock YARN keeps a
reserved node for its job alone ("no other jobs can schedule tasks on the
reserved node").

A node is offered when a task ends on it, when it loses its reservation,
and -- if it has a free core and no reservation, or (YARN-ME) a free core
and a reservation -- when work joins the queue.
The loop is the kernel's (:class:`~sched_engine.core.loop.Simulation`):
``completion`` events carry ``(node, memory, job, elastic)``, ``arrival``
events a job; each node also lists its running tasks' ``(end, memory)``
(``node_tasks``), the per-node completion index the timeline generator
walks.

The timeline generator (§3.2) estimates when job J's current phase ends if
all its pending tasks run regularly. It merges the per-node timelines
(running tasks' end times from ``node_tasks``, walked in time order, plus the one queued task of another job a node is
reserved for, §3.3 "Node reservations") and places J's pending tasks
greedily wherever and whenever they fit, stopping as soon as the last one
is placed. Its cost depends on J's pending tasks and the releases walked,
not on the cluster size. Like the paper's generator it runs once per
heartbeat per job; decisions inside that heartbeat reuse the estimate.
"""

from __future__ import annotations

import math
from heapq import heapify, heappop, heappush
from typing import Callable

from ..core.events import Priority
from ..core.loop import Simulation, scheduler_clock
from ..core.observers import INSTANT
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


class ClusterSampler:
    """Observer of every instant: the cluster's memory in use and its running regular and elastic tasks."""

    def __init__(self) -> None:
        self.samples: list[tuple[float, int, int, int]] = []

    def __call__(self, sim: "ElasticSimulation", time: float) -> None:
        self.samples.append((time, sim.used_mem, sim.running_regular, sim.running_elastic))


class ElasticSimulation(Simulation):
    """One run of a trace on a cluster under a YARN, YARN-ME or Meganode policy.

    ``policy`` provides ``order`` (``fair``: least memory in use first;
    ``srjf``: least remaining task-seconds first), ``reserve`` (whether a
    node the head job does not fit is reserved for it), ``reserve_backfill``
    (whether other jobs may use a reserved node's gap), ``elastic`` (bool) and,
    when elastic, ``min_fraction``, ``heartbeat_s`` and
    ``elastic_task_limit()`` (the disk-contention limit per node). Task records (lists, one entry per task) and cluster
    samples (one per instant) are kept for the result frames.
    """

    def __init__(self, cores, memory_mb, step_mb: int, penalty, jobs, policy,
                 progress: Callable[[float], None] | None = None) -> None:
        super().__init__(progress=progress, total_work=len(jobs))
        self.cores = list(cores)
        self.capacity = list(memory_mb)
        self.step_mb = step_mb
        self.policy = policy
        self.jobs = [JobState(i, job, step_mb, penalty) for i, job in enumerate(jobs)]
        n = len(self.cores)
        self.free_mem = list(self.capacity)
        self.free_cores = list(self.cores)
        self.elastic_running = [0] * n
        self.reserved = [-1] * n
        self.free_unreserved = set(range(n))
        self.reserved_nodes: set[int] = set()
        self.elastic_cap = policy.elastic_task_limit() if policy.elastic else 0
        self.free_total = sum(self.capacity)
        self.node_tasks: list[list[tuple[float, int]]] = [[] for _ in range(n)]
        self.profile = ReleaseProfile()
        self.queue: list[tuple] = []
        self.waiting: set[int] = set()  # indices of the queued jobs (the queue without its stale entries)
        self.used_mem = 0
        self.running_regular = 0
        self.running_elastic = 0
        self.estimates = 0
        self.finished = 0  # jobs whose last task ended
        self._offer: set[int] = set()  # nodes offered at this instant's pass
        self._new_work = False  # work joined the queue at this instant
        self.on("completion", self._completion)
        self.on("arrival", self._arrival)
        self.sampler = ClusterSampler()
        self.subscribe(INSTANT, self.sampler)
        # task records
        self.t_job: list[int] = []
        self.t_node: list[int] = []
        self.t_start: list[float] = []
        self.t_end: list[float] = []
        self.t_mem: list[int] = []
        self.t_ideal: list[int] = []
        self.t_estimate: list[float] = []

    @property
    def samples(self) -> list[tuple[float, int, int, int]]:
        """One row per instant: time, memory used (MB), regular tasks, elastic tasks."""
        return self.sampler.samples

    # -- job queue -------------------------------------------------------
    def _enqueue(self, job: JobState) -> None:
        job.version += 1
        job.queued = True
        self.waiting.add(job.index)
        key = job.mem_in_use if self.policy.order == "fair" else job.work_left
        heappush(self.queue, (key, job.job.arrival, job.index, job.version))

    def _head(self) -> JobState | None:
        queue, jobs = self.queue, self.jobs
        while queue:
            _, _, index, version = queue[0]
            job = jobs[index]
            if job.queued and job.version == version:
                return job
            heappop(queue)
        return None

    def _start_phase(self, job: JobState) -> None:
        job.phase_request[job.phase] = self.now
        job.phase_end_max = self.now
        job.est_time = -INF
        self._enqueue(job)

    # -- node state ------------------------------------------------------
    def _unreserve_all(self, job: JobState, offer: list[int], offered: set[int]) -> None:
        for node in sorted(job.reserved):
            self.reserved[node] = -1
            self.reserved_nodes.discard(node)
            if self.free_cores[node] > 0:
                self.free_unreserved.add(node)
                if node not in offered:
                    offered.add(node)
                    heappush(offer, node)
        job.reserved.clear()

    def _allocate(self, node: int, job: JobState, group: GroupState, mem: int, run: float, estimate: float) -> None:
        now = self.now
        end = now + run
        elastic = mem < group.memory
        self.free_mem[node] -= mem
        self.free_cores[node] -= 1
        self.free_total -= mem
        self.profile.add(end, mem)
        self.used_mem += mem
        if elastic:
            self.elastic_running[node] += 1
            self.running_elastic += 1
            job.elastic_tasks += 1
        else:
            self.running_regular += 1
        self.schedule(end, Priority.COMPLETION, "completion", (node, mem, job.index, elastic))
        self.node_tasks[node].append((end, mem))
        group.remaining -= 1
        job.pending -= 1
        job.running += 1
        job.mem_in_use += mem
        job.work_left -= group.duration
        if end > job.phase_end_max:
            job.phase_end_max = end
        if job.start != job.start:
            job.start = now
        self.t_job.append(job.index)
        self.t_node.append(node)
        self.t_start.append(now)
        self.t_end.append(end)
        self.t_mem.append(mem)
        self.t_ideal.append(group.memory)
        self.t_estimate.append(estimate)

    # -- timeline generator ----------------------------------------------
    def elastic_ok(self, job: JobState, group: GroupState, end: float, node: int) -> tuple[bool, float]:
        """Alg. 1, l. 8-9: may a task of ``job`` ending at ``end`` run elastically?

        True iff ``end`` does not exceed the job's estimated (current phase)
        end. Returns the decision and the estimate it rests on (a lower bound
        of the generator's estimate when that already decides).

        First a capacity bound: if fewer than all pending tasks could start
        before ``T = end - d_min`` even using all free memory plus all
        memory released by then (each unit reused ``floor((T - now) / d_min)
        + 1`` times), the last one ends at or after ``end``. Otherwise the
        generator's estimate (:meth:`estimate`).
        """
        now = self.now
        mem, dur = group.memory, group.duration
        for g in job.phases[job.phase]:
            if g.remaining:
                mem, dur = min(mem, g.memory), min(dur, g.duration)
        latest = end - dur
        if latest > now:
            reuse = int((latest - now) // dur) + 1
            fit = int((self.free_total + self.profile.until(latest)) // mem) * reuse
        else:
            fit = 0
        if fit < job.pending:
            return True, latest + dur
        if now - job.est_time >= self.policy.heartbeat_s or (not job.est_exact and end > job.est_value):
            self.estimates += 1
            job.est_time = now
            job.est_value, job.est_exact = self.estimate(job, now + group.max_elastic_runtime, node)
        return end <= job.est_value, job.est_value

    def estimate(self, job: JobState, horizon: float = INF, node: int = -1) -> tuple[float, bool]:
        """Estimated end of ``job``'s current phase if its pending tasks run regularly (§3.2).

        The job's pending tasks are placed greedily, in time order, on the
        nodes it can use: the nodes reserved for it, the free unreserved
        ones and ``node`` (the one being offered), each with its own
        timeline of running tasks' ends. Returns ``(estimate, exact)``; the
        walk stops once the estimate is known to exceed ``horizon`` and then
        returns a lower bound and False.
        """
        now = self.now
        groups = [(g.memory, g.duration, g.remaining) for g in job.phases[job.phase] if g.remaining]
        d_min = min(g[1] for g in groups)
        end = max(job.phase_end_max, now)
        free_mem, free_cores, node_tasks = self.free_mem, self.free_cores, self.node_tasks
        usable = set(job.reserved)
        usable.update(self.free_unreserved)
        if node >= 0:
            usable.add(node)
        proj: dict[int, list] = {}
        timeline: list[tuple] = []
        seq = 0
        gi = 0
        mem, dur, left = groups[0]
        for n in sorted(usable):
            p = proj[n] = [free_mem[n], free_cores[n]]
            timeline.extend((t_end, -1, n, freed) for t_end, freed in node_tasks[n])
            while p[1] > 0 and p[0] >= mem:
                p[0] -= mem
                p[1] -= 1
                timeline.append((now + dur, seq, n, mem))
                seq += 1
                end = max(end, now + dur)
                left -= 1
                if left == 0:
                    gi += 1
                    if gi == len(groups):
                        return end, True
                    mem, dur, left = groups[gi]
        heapify(timeline)
        while timeline:
            t, _, n, freed = heappop(timeline)
            if t + d_min > horizon:
                return t + d_min, False
            p = proj[n]
            p[0] += freed
            p[1] += 1
            while p[1] > 0 and p[0] >= mem:
                p[0] -= mem
                p[1] -= 1
                heappush(timeline, (t + dur, seq, n, mem))
                seq += 1
                if t + dur > end:
                    end = t + dur
                left -= 1
                if left == 0:
                    gi += 1
                    if gi == len(groups):
                        return end, True
                    mem, dur, left = groups[gi]
        return INF, True

    # -- scheduling pass ---------------------------------------------------
    def _try(self, node: int, job: JobState, deadline: float = INF) -> bool:
        """Alg. 1, l. 4-10 for ``job`` on ``node``: allocate its next task regularly, else elastically.

        Only a task ending by ``deadline`` is allocated (a reserved node's gap).
        """
        policy, now = self.policy, self.now
        group = job.group()
        if group.memory <= self.free_mem[node]:
            if now + group.duration > deadline:
                return False
            self._allocate(node, job, group, group.memory, group.duration, math.nan)
            return True
        if not policy.elastic or self.elastic_running[node] >= self.elastic_cap:
            return False
        choice = group.best_elastic(self.free_mem[node], self.step_mb, policy.min_fraction)
        if choice is None or now + choice[0] > deadline:
            return False
        granted, estimate = self.elastic_ok(job, group, now + choice[0], node)
        if granted:
            self._allocate(node, job, group, choice[1], choice[0], estimate)
        return granted

    def reserved_start(self, node: int, job: JobState) -> float:
        """When the next task of ``job`` (the node's reserved job) fits ``node`` regularly.

        The first end of a task running on the node after which the free
        memory reaches the task's ideal memory (it has a free core already).
        """
        need = job.group().memory - self.free_mem[node]
        for end, mem in sorted(self.node_tasks[node]):
            need -= mem
            if need <= 0:
                return end
        return INF

    def _fill_gap(self, node: int, owner: JobState) -> JobState | None:
        """§3.3: a task of another job on a node reserved for ``owner``, if it does not hinder it.

        Jobs are tried in queue order; the first whose next task fits
        (regularly or elastically) and ends by the time the reserved task can
        start gets the node. Returns that job, or None.
        """
        return self._first_fit(node, owner, self.reserved_start(node, owner))

    def _first_fit(self, node: int, passed: JobState, until: float = INF) -> JobState | None:
        """The first job in queue order, ``passed`` aside, whose next task ``_try`` allocates on ``node``."""
        jobs, now, free = self.jobs, self.now, self.free_mem[node]
        fair = self.policy.order == "fair"
        waiting = []
        for index in self.waiting:
            job = jobs[index]
            group = job.group()
            # the fastest run of the next task is its regular one, and an elastic one needs its minimum grant
            if job is passed or now + group.duration > until or (group.memory > free and group.elastic_min > free):
                continue
            waiting.append((job.mem_in_use if fair else job.work_left, job.job.arrival, index))
        for _, _, index in sorted(waiting):
            if self._try(node, jobs[index], until):
                return jobs[index]
        return None

    def _allocated(self, job: JobState, offer: list[int], offered: set[int]) -> None:
        """After a task of ``job`` was allocated: re-sort the queue, or drop the job and its reservations."""
        if job.pending == 0:
            job.queued = False
            self.waiting.discard(job.index)
            self._unreserve_all(job, offer, offered)
        else:
            self._enqueue(job)  # re-sort the job queue (Alg. 1, l. 13)

    def _pass(self, offer: list[int]) -> None:
        policy = self.policy
        free_cores, reserved, capacity = self.free_cores, self.reserved, self.capacity
        offered = set(offer)
        heapify(offer)
        while offer:
            node = heappop(offer)
            offered.discard(node)
            while free_cores[node] > 0:
                owner = reserved[node]
                if owner >= 0:
                    job = self.jobs[owner]
                else:
                    job = self._head()
                    if job is None:
                        return
                if self._try(node, job):
                    if owner >= 0:
                        reserved[node] = -1
                        job.reserved.discard(node)
                        self.reserved_nodes.discard(node)
                    self._allocated(job, offer, offered)
                    continue
                if owner < 0:
                    if policy.reserve and job.group().memory <= capacity[node]:
                        reserved[node] = job.index
                        job.reserved.add(node)
                        self.reserved_nodes.add(node)
                        self.free_unreserved.discard(node)
                        break
                    other = self._first_fit(node, job) if policy.skip_blocked else None
                else:
                    other = self._fill_gap(node, job) if policy.reserve_backfill else None
                if other is None:
                    break
                self._allocated(other, offer, offered)
            if free_cores[node] > 0 and reserved[node] < 0:
                self.free_unreserved.add(node)
            else:
                self.free_unreserved.discard(node)

    # -- the kernel's loop -------------------------------------------------
    def _completion(self, event) -> None:
        """Priority.COMPLETION: a task frees its memory and core; its job may move on a phase or end."""
        node, mem, index, elastic = event.payload
        t = self.now
        self.free_mem[node] += mem
        self.node_tasks[node].remove((t, mem))
        self.free_total += mem
        self.profile.add(t, -mem)
        self.free_cores[node] += 1
        self.used_mem -= mem
        if elastic:
            self.elastic_running[node] -= 1
            self.running_elastic -= 1
        else:
            self.running_regular -= 1
        if self.reserved[node] < 0:
            self.free_unreserved.add(node)
        self._offer.add(node)
        job = self.jobs[index]
        job.running -= 1
        job.mem_in_use -= mem
        if job.queued and self.policy.order == "fair":
            self._enqueue(job)
        if job.running == 0 and job.pending == 0:
            job.phase_done[job.phase] = t
            if job.phase + 1 < len(job.phases):
                job.phase += 1
                job.gi = 0
                job.pending = sum(g.remaining for g in job.phases[job.phase])
                self._start_phase(job)
                self._new_work = True
            else:
                job.end = t
                self.finished += 1

    def _arrival(self, event) -> None:
        """Priority.ARRIVAL: a job's first phase joins the queue."""
        self._start_phase(self.jobs[event.payload])
        self._new_work = True

    def advance(self, time: float) -> None:
        self._offer: set[int] = set()
        self._new_work = False

    def after_instant(self, t: float) -> None:
        """Priority.SCHEDULE: one pass over the offered nodes."""
        offer = self._offer
        if self._new_work:
            offer |= self.free_unreserved
            if self.policy.reserve_backfill:  # a reserved node's gap may fit the new work
                offer.update(n for n in self.reserved_nodes if self.free_cores[n] > 0)
        self._pass(sorted(offer))
        self.progress.update(self.finished)

    def run(self) -> "ElasticSimulation":
        """Run to the end; the scheduler's time is the whole run's (every step is the scheduler's work)."""
        started = scheduler_clock()
        jobs = self.jobs
        for i in sorted(range(len(jobs)), key=lambda i: (jobs[i].job.arrival, i)):
            self.schedule(jobs[i].job.arrival, Priority.ARRIVAL, "arrival", i)
        super().run()
        self.scheduler_seconds = scheduler_clock() - started
        return self
