"""Event handlers, node state and scheduling pass of the elasticity engine.

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

The timeline generator (§3.2, :mod:`.timeline`) estimates when a job's
current phase ends if all its pending tasks run regularly. Like the paper's
generator it runs once per heartbeat per job; decisions inside that
heartbeat reuse the estimate.
"""

from __future__ import annotations

import math
from heapq import heapify, heappop, heappush
from typing import Callable

from ..core.events import Priority
from ..core.loop import Simulation, scheduler_clock
from ..core.observers import INSTANT
from .state import INF, GroupState, JobState, ReleaseProfile
from .timeline import elastic_ok, phase_end


class ClusterSampler:
    """Observer of every instant: the cluster's memory in use and its running regular and elastic tasks."""

    def __init__(self) -> None:
        self.samples: list[tuple[float, int, int, int]] = []

    def __call__(self, sim: "ElasticSimulation", time: float) -> None:
        self.samples.append((time, sim.used_mem, sim.running_regular, sim.running_elastic))


class ElasticSimulation(Simulation):
    """One run of a trace on a cluster under a YARN, YARN-ME or Meganode policy.

    ``policy`` is composed of the strategies of :mod:`.policies`: its job
    order (``order``), what a task that does not fit regularly is offered
    (``allocation``: an elastic grant, its disk-contention limit per node
    and its heartbeat) and what a node the head job's task does not fit does
    (``when_blocked``: reserve it, skip to a job that fits, or wait). Task records (lists, one entry per
    task) are kept for the result frames; :class:`ClusterSampler`, an
    observer of every instant, samples the cluster.
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
        # The policy's strategies (:mod:`.policies`), read once.
        self.order, self.allocation, self.when_blocked = policy.order, policy.allocation, policy.when_blocked
        self.elastic_cap = self.allocation.task_limit()
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
        key = self.order.key(job)
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
        self.events.push(end, Priority.COMPLETION, "completion", (node, mem, job.index, elastic))
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
        """Alg. 1, l. 8-9: may a task of ``job`` ending at ``end`` run elastically (:func:`.timeline.elastic_ok`)?"""
        return elastic_ok(self, job, group, end, node)

    def estimate(self, job: JobState, horizon: float = INF, node: int = -1) -> tuple[float, bool]:
        """Estimated end of ``job``'s current phase (:func:`.timeline.phase_end`)."""
        return phase_end(self, job, horizon, node)

    # -- scheduling pass ---------------------------------------------------
    def _try(self, node: int, job: JobState, deadline: float = INF) -> bool:
        """Alg. 1, l. 4-10 for ``job`` on ``node``: allocate its next task regularly, else elastically.

        Only a task ending by ``deadline`` is allocated (a reserved node's gap).
        """
        now = self.now
        group = job.group()
        if group.memory <= self.free_mem[node]:
            if now + group.duration > deadline:
                return False
            self._allocate(node, job, group, group.memory, group.duration, math.nan)
            return True
        if self.elastic_running[node] >= self.elastic_cap:
            return False
        choice = self.allocation.grant(group, self.free_mem[node], self.step_mb)
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

    def fill_gap(self, node: int, owner: JobState) -> JobState | None:
        """§3.3: a task of another job on a node reserved for ``owner``, if it does not hinder it.

        Jobs are tried in queue order; the first whose next task fits
        (regularly or elastically) and ends by the time the reserved task can
        start gets the node. Returns that job, or None.
        """
        return self.first_fit(node, owner, self.reserved_start(node, owner))

    def first_fit(self, node: int, passed: JobState, until: float = INF) -> JobState | None:
        """The first job in queue order, ``passed`` aside, whose next task ``_try`` allocates on ``node``."""
        jobs, now, free = self.jobs, self.now, self.free_mem[node]
        job_key = self.order.key
        waiting = []
        for index in self.waiting:
            job = jobs[index]
            group = job.group()
            # the fastest run of the next task is its regular one, and an elastic one needs its minimum grant
            if job is passed or now + group.duration > until or (group.memory > free and group.elastic_min > free):
                continue
            waiting.append((job_key(job), job.job.arrival, index))
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
        blocked = self.when_blocked
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
                    if blocked.reserves and job.group().memory <= capacity[node]:
                        reserved[node] = job.index
                        job.reserved.add(node)
                        self.reserved_nodes.add(node)
                        self.free_unreserved.discard(node)
                        break
                    other = blocked.head(self, node, job)
                else:
                    other = blocked.reserved(self, node, job)
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
        if job.queued and self.order.follows_memory:
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
            if self.when_blocked.offers_reserved_gaps:  # a reserved node's gap may fit the new work
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
