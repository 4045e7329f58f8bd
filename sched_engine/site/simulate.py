"""Event-driven simulation of one site: its workload, organisation, clusters with memory, and failures.

Built on the kernel's loop (:class:`~sched_engine.core.loop.Simulation`) with
the batch engine's events and their order at an instant: machine failures
(every job on the machine is killed, not resubmitted), restarts, job
completions, arrivals; then one scheduling pass. A pass walks the waiting
jobs in the queue order (:mod:`.order`):

* jobs start in that order while they fit now (CPUs and memory on their
  cluster's machines, :class:`~.machines.SiteCluster`); a job that the
  machines up could never hold is cancelled;
* the first that does not fit is the head. Without backfilling it blocks
  every later job. With EASY it gets a reservation at its shadow time, and
  a later job of the order may start now iff it fits now and spares the
  reservation: it runs on another cluster, ends (by its estimate) by the
  shadow time, or fits in the CPUs and memory left over at the shadow time
  -- the batch engine's rule (:class:`~sched_engine.batch.policies.EASY`),
  kept for the head of this order. Under the arrival order the passes are
  the batch engine's EASY and FCFS passes, decision for decision; under a
  fair order a pass with nothing freed since a settled walk examines only
  its newcomers after the head (:mod:`.backfill`);
* with ``memory_elastic`` a job whose CPUs are free but whose memory is
  not may start with the largest share of its memory that fits (at least
  ``min_fraction``) and runs longer by the penalty model.

State sampled for the timeline every ``sample_step`` seconds (about
:data:`SAMPLES` samples over the trace's span; each sample holds the state
from its time to the next): per group, CPUs and memory held, jobs running
and waiting; the site's CPUs and memory in use and up.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from ..core.events import Priority
from ..core.loop import Simulation, scheduler_clock
from ..elastic import penalty as penalties
from . import reservation
from .keyed import KeyedWalk
from .machines import SiteCluster
from .order import QueueOrder
from .scheduling_pass import NO_RESERVATION, scheduling_pass
from .size_index import SizeIndex
from .waiting import ArrivalQueue, FairQueue

WAITING, RUNNING, FINISHED, KILLED, CANCELLED = range(5)
STATUS_NAMES = ("waiting", "running", "finished", "killed", "cancelled")
NO_SUITABLE_CLUSTER = "no suitable cluster"
TOO_MUCH_MEMORY = "asks more memory per CPU than any suitable machine has"
SAMPLES = 2000


class SiteSimulation(Simulation):
    """One run of a site: jobs (with leaf, group, memory), clusters, failures and a queue order."""

    # What the batch engine's policies read of a batch run's queues (sched_engine/batch/queues.py): a site's
    # order is its fair-share order, with no queue ranks, best-effort queues or per-user limits.
    rank = None
    best_effort = None
    limits = None

    def __init__(self, *, submit, run_time, estimate, procs, memory_per_cpu, leaf, group_of_leaf, tree,
                 clusters: list[SiteCluster], candidates, failures=(), order: QueueOrder, elastic: dict,
                 progress: Callable[[float], None] | None = None):
        super().__init__(progress=progress, total_work=len(submit))
        self.submit = list(map(float, submit))
        self.run_time = list(map(float, run_time))
        self.estimate = list(map(float, estimate))
        self.procs = list(map(int, procs))
        self.memory_per_cpu = list(map(float, memory_per_cpu))
        self.leaf = list(map(int, leaf))
        self.group_of_leaf = list(group_of_leaf)
        self.tree = tree
        self.clusters = clusters
        self.candidates = candidates
        self.order = order
        # Conservative plans hold each job's whole memory (sched_engine/site/conservative.py): no elastic starts,
        # and a job only an elastic start could hold is cancelled on arrival rather than planned forever.
        self.elastic = {**elastic, "enabled": False} if order.backfill == "cons" else elastic
        count = len(self.submit)
        self.start_time = [math.nan] * count
        self.end_time = [math.nan] * count
        self.status = [WAITING] * count
        self.cluster_of = [-1] * count
        self.reason = [""] * count
        self.memory_fraction = [1.0] * count
        self.actual_run = list(self.run_time)  # the run time it had (longer when started memory-elastic)
        self.planned = list(self.estimate)     # the estimate the scheduler planned with once it started
        self.est_end: dict[int, float] = {}
        self._failures = list(failures)
        leaves = tree.leaf_count
        self.total_cpus = float(sum(c.total for c in clusters))
        self.total_memory = float(sum(c.total_memory for c in clusters)) or 1.0
        # Per leaf: CPUs and memory held by its running jobs; its waiting jobs (fair orders only).
        self.leaf_cpus = [0.0] * leaves
        self.leaf_memory = [0.0] * leaves
        self.decayed = np.zeros((leaves, 2))
        # The waiting jobs: in arrival order read by class (arrival order), or per leaf and counted by size; under
        # an order whose picks follow from keys (with EASY) a pass reads the order by key and EASY's walk reads
        # them by key and by class, with no pick-by-pick queue (FairQueue) kept.
        in_arrival_order = order.in_arrival_order
        keys = None if in_arrival_order or order.backfill != "easy" else order.walk_keys(tree)
        self.keyed = KeyedWalk(self, keys) if keys is not None else None
        self.arrival = ArrivalQueue() if in_arrival_order else None
        self.fair = None if in_arrival_order or self.keyed is not None else FairQueue(self)
        self.by_size = None if in_arrival_order else SizeIndex(zip(self.procs, self.memory_per_cpu, self.estimate))
        self.waiting: dict[int, None] = {}  # every waiting job, arrival order
        self.new_arrivals: list[int] = []
        self.groups = max(group_of_leaf, default=-1) + 1
        self.group_waiting = [0] * self.groups
        self.group_running = [0] * self.groups
        # EASY's reservation: (job, shadow, cluster, extra CPUs, extra memory); stale after a change it cannot follow.
        self.reservation: tuple[int, float, int, int, float] | None = None
        self.reservation_stale = True
        self.resources_changed = True
        # Whether the last pass walked after its head with nothing freed since, and a bound on the jobs a walk
        # over the same jobs would examine (settled if within backfill_depth: backfill_easy's docstring).
        self.settled = False
        self.settled_examined = 0
        self.done = 0
        self.elastic_starts = 0
        span = (max(self.submit) + max(self.run_time)) if count else 1.0
        self.sample_step = max(1.0, span / SAMPLES)
        self.next_sample = 0.0
        self.samples: list[tuple] = []
        self.killed_at: list[tuple[float, int]] = []
        self._wakes: set[float] = set()
        for kind, handler in (("end", self._end), ("arrive", self._arrive), ("fail", self._fail),
                              ("restart", self._restart), ("wake", self._woken)):
            self.on(kind, handler)

    # --- running ----------------------------------------------------------------------------------

    def run(self) -> None:
        # One arrival in the heap at a time, not the whole trace (only arrivals have their priority).
        self.feed(self.submit, Priority.ARRIVAL, "arrive")
        for time, cluster, machine, duration in self._failures:
            self.schedule(time, Priority.FAILURE, "fail", (cluster, machine, duration))
        super().run()
        self._sample_until(self.now + self.sample_step)

    def advance(self, time: float) -> None:
        half_life = self.order.half_life_s
        if half_life > 0 and time > self.now:
            keep = 0.5 ** ((time - self.now) / half_life)
            current = np.stack([np.asarray(self.leaf_cpus) / max(self.total_cpus, 1.0),
                                np.asarray(self.leaf_memory) / self.total_memory], axis=1)
            self.decayed = self.decayed * keep + current * (1.0 - keep)
        self._sample_until(time)

    def _sample_until(self, time: float) -> None:
        while self.next_sample < time:
            used = sum(c.up_total - c.free_total for c in self.clusters)
            group_cpus = np.bincount(self.group_of_leaf, weights=self.leaf_cpus, minlength=self.groups)
            group_memory = np.bincount(self.group_of_leaf, weights=self.leaf_memory, minlength=self.groups)
            running = np.array(self.group_running, dtype=np.int64)
            waiting = np.array(self.group_waiting, dtype=np.int64)
            self.samples.append((self.next_sample, group_cpus, group_memory, running, waiting, used,
                                 sum(c.up_total for c in self.clusters), sum(c.used_memory for c in self.clusters),
                                 sum(c.up_memory for c in self.clusters)))
            self.next_sample += self.sample_step

    # --- events -----------------------------------------------------------------------------------

    def _arrive(self, event) -> None:
        job = event.payload
        candidates = self.candidates[job]
        if not candidates or all(self.procs[job] > self.clusters[c].total for c in candidates):
            self._cancel(job, NO_SUITABLE_CLUSTER, waiting=False)
            return
        memory = self.memory_per_cpu[job]
        low = self.elastic["min_fraction"] if self.elastic["enabled"] else 1.0
        if memory > 0:
            # Only clusters whose machines could hold it (idle, all up) stay candidates; a plan counting memory
            # per cluster (CONS) would otherwise reserve it where it never fits. EASY never starts it there either.
            candidates = self.candidates[job] = tuple(
                c for c in candidates if self.clusters[c].fits_empty(self.procs[job], memory * low, up_only=False))
            if not candidates:
                self._cancel(job, TOO_MUCH_MEMORY, waiting=False)
                return
        self.waiting[job] = None
        if self.arrival is not None:
            self.arrival.add(job, self.procs[job], self.memory_per_cpu[job], self.estimate[job])
        if self.by_size is not None:
            self.by_size.add(self.procs[job], self.memory_per_cpu[job], self.estimate[job])
        if self.fair is not None:
            self.fair.add(job)
        if self.keyed is not None:
            self.keyed.add(job)
        self.group_waiting[self.group_of_leaf[self.leaf[job]]] += 1
        self.new_arrivals.append(job)

    def _end(self, event) -> None:
        job = event.payload
        if self.status[job] != RUNNING:
            return  # killed earlier
        early = self.now < self.start_time[job] + self.planned[job]
        self._finish(job, FINISHED)
        self.resources_changed = True
        self.reservation_stale |= early

    def _fail(self, event) -> None:
        cluster_index, machine, duration = event.payload
        for job in sorted(self.clusters[cluster_index].fail(machine)):
            self._finish(job, KILLED)
            self.reason[job] = "machine failure"
            self.killed_at.append((self.now, job))
        self.schedule(self.now + duration, Priority.DEPARTURE, "restart", (cluster_index, machine))
        self.resources_changed = True
        self.reservation_stale = True

    def _restart(self, event) -> None:
        cluster_index, machine = event.payload
        self.clusters[cluster_index].restart(machine)
        self.resources_changed = True
        self.reservation_stale = True

    def wake(self, time: float) -> None:
        """A scheduling pass at ``time`` (a conservative plan starts a job then)."""
        if time not in self._wakes:
            self._wakes.add(time)
            self.schedule(time, Priority.SCHEDULE, "wake", None)

    def _woken(self, event) -> None:
        self._wakes.discard(self.now)
        self.resources_changed = True

    def after_instant(self, now: float) -> None:
        started = scheduler_clock()
        scheduling_pass(self, now)
        self.new_arrivals = []
        self.scheduler_seconds += scheduler_clock() - started
        self.progress.update(self.done)

    # --- starting, ending, cancelling -------------------------------------------------------------

    def _leave_queue(self, job: int) -> None:
        del self.waiting[job]
        if self.arrival is not None:
            self.arrival.remove(job)
        if self.by_size is not None:
            self.by_size.remove(self.procs[job], self.memory_per_cpu[job], self.estimate[job])
        if self.fair is not None:
            self.fair.left(self.leaf[job])
        if self.keyed is not None:
            self.keyed.left(job)
        self.group_waiting[self.group_of_leaf[self.leaf[job]]] -= 1

    def cancel_waiting(self, job: int, reason: str) -> None:
        self._cancel(job, reason)

    def memory_held(self, job: int) -> float:
        """MB a running job holds in all."""
        return self.procs[job] * self.memory_per_cpu[job] * self.memory_fraction[job]

    def _cancel(self, job: int, reason: str, waiting: bool = True) -> None:
        if waiting:
            self._leave_queue(job)
        self.status[job] = CANCELLED
        self.end_time[job] = self.now
        self.reason[job] = reason
        self.done += 1

    def start_job(self, job: int, cluster_index: int, fraction: float) -> None:
        now = self.now
        self._leave_queue(job)
        self.start_time[job] = now
        self.cluster_of[job] = cluster_index
        if fraction < 1.0:
            self.memory_fraction[job] = fraction
            self.actual_run[job] = penalties.runtime(self.elastic["penalty"], fraction, self.run_time[job])
            self.planned[job] = self.estimate[job] * (self.actual_run[job] / self.run_time[job]
                                                      if self.run_time[job] > 0 else 1.0)
            self.elastic_starts += 1
        if self.actual_run[job] <= 0:
            self.status[job] = FINISHED  # a zero-length job holds nothing: it completes as it starts
            self.end_time[job] = now
            self.done += 1
            return
        memory = self.memory_per_cpu[job] * fraction
        est_end = now + self.planned[job]
        self.clusters[cluster_index].allocate(job, self.procs[job], memory, est_end)
        self.est_end[job] = est_end
        leaf = self.leaf[job]
        self.leaf_cpus[leaf] += self.procs[job]
        self.leaf_memory[leaf] += self.procs[job] * memory
        self.group_running[self.group_of_leaf[leaf]] += 1
        self.status[job] = RUNNING
        self.events.push(now + self.actual_run[job], Priority.COMPLETION, "end", job)

    def _finish(self, job: int, status: int) -> None:
        cluster = self.clusters[self.cluster_of[job]]
        cluster.release(job, self.est_end.pop(job))
        leaf = self.leaf[job]
        self.leaf_cpus[leaf] -= self.procs[job]
        self.leaf_memory[leaf] -= self.procs[job] * self.memory_per_cpu[job] * self.memory_fraction[job]
        self.group_running[self.group_of_leaf[leaf]] -= 1
        if self.fair is not None:
            self.fair.touch(leaf)
        if self.keyed is not None:
            self.keyed.touch(leaf)
        self.status[job] = status
        self.end_time[job] = self.now
        self.done += 1

    # --- the scheduling pass ----------------------------------------------------------------------

    def _fit_now(self, job: int) -> tuple[int, float] | None:
        """The cluster (preference order) where the job fits now and with what share of its memory, or None."""
        procs, memory = self.procs[job], self.memory_per_cpu[job]
        for c in self.candidates[job]:
            if self.clusters[c].fits(procs, memory):
                return c, 1.0
        if self.elastic["enabled"] and memory > 0:
            for c in self.candidates[job]:
                fraction = self.clusters[c].largest_memory_fraction(procs, memory, self.elastic["min_fraction"])
                if fraction is not None:
                    return c, fraction
        return None

    def _can_ever_fit(self, job: int) -> bool:
        procs, memory = self.procs[job], self.memory_per_cpu[job]
        if self.elastic["enabled"]:
            memory *= self.elastic["min_fraction"]
        for c in self.candidates[job]:   # a loop, not any() over a generator: once per pass
            cluster = self.clusters[c]
            if cluster.up_total >= procs and (memory <= 0 or cluster.fits_empty(procs, memory)):
                return True
        return False

    def _reserve(self, job: int) -> tuple[int, float, int, int, float] | None:
        best = None
        for c in self.candidates[job]:
            shadow = reservation.shadow(self.clusters[c], self.procs[job], self.memory_per_cpu[job])
            if shadow is not None and (best is None or shadow[0] < best[1]):
                best = (job, shadow[0], c, shadow[1], shadow[2])
        return best

    def _order(self):
        """The waiting jobs in the queue order, generated lazily (see :mod:`.order`)."""
        if self.order.in_arrival_order:
            yield from self.arrival.waiting()
        elif self.keyed is not None:
            yield from self.keyed.in_order()
        else:
            yield from self.fair.order()

    def _spares(self, kept: tuple[int, float, int, int, float]) -> bool:
        """Whether the reservation now is for the same head, shadow time and cluster as ``kept`` and leaves over
        at most its CPUs and memory (a job ahead of the head started since: it may be computed again)."""
        now = self.reservation
        return now is kept or (now[:3] == kept[:3] and now[3] <= kept[3] and now[4] <= kept[4])

    def _start_heads(self, candidates) -> int | None:
        """Start jobs of the order while they fit; cancel those that never could; return the first blocked one."""
        for job in candidates:
            if self.status[job] != WAITING:
                continue
            fit = self._fit_now(job)
            if fit is not None:
                self.start_job(job, *fit)
            elif not self._can_ever_fit(job):
                self._cancel(job, NO_RESERVATION)
            else:
                return job
        return None
