"""The site engine's scheduling policy on the batch kernel: a fair queue order, a backfilling strategy, memory.

A site run is a :class:`~sched_engine.batch.simulate.BatchSimulation` (the
one batch kernel: its events, their order at an instant, starting, ending,
killing and cancelling jobs) configured with clusters of machines with
memory (:class:`~.machines.SiteCluster`), the usage observer
(:class:`~.usage.SiteUsage`) and this policy. Like every batch policy it
answers the kernel's hooks (``arrive``, ``job_ended``, ``capacity_changed``,
``schedule``) with decisions as data (``Start``, ``Cancel``, ``Wake``); the
kernel applies each before the policy goes on. It also observes the
kernel's jobs (:class:`~sched_engine.batch.simulate.JobObserver`) to keep
its indexes of the waiting jobs.

A pass (:data:`.scheduling_pass.PASSES`, one per backfilling) walks the waiting jobs in
the queue order (:mod:`.order`):

* jobs start in that order while they fit now (CPUs and memory on their
  cluster's machines); a job that the machines up could never hold is
  cancelled;
* the first that does not fit is the head. Without backfilling it blocks
  every later job. With EASY it gets a reservation at its shadow time, and
  a later job of the order may start now iff it fits now and spares the
  reservation: it runs on another cluster, ends (by its estimate) by the
  shadow time, or fits in the CPUs and memory left over at the shadow time
  -- the batch engine's rule (:class:`~sched_engine.batch.policies.EASY`),
  kept for the head of this order. Under the arrival order the passes are
  the batch engine's EASY and FCFS passes, decision for decision; under a
  fair order a pass with nothing freed since a settled walk examines only
  its newcomers after the head (:mod:`.backfill`); with CONS every job of
  the order is planned (:mod:`.conservative`);
* with ``memory_elastic`` a job whose CPUs are free but whose memory is
  not may start with the largest share of its memory that fits (at least
  ``min_fraction``) and runs longer by the penalty model.
"""

from __future__ import annotations

from ..batch.policies.decisions import NO_DECISIONS, Cancel, Start
from . import reservation
from .keyed import KeyedWalk
from .order import QueueOrder
from .scheduling_pass import NO_RESERVATION, PASSES
from .size_index import SizeIndex
from .usage import SiteUsage
from .waiting import WAITING, ArrivalQueue, FairQueue

TOO_MUCH_MEMORY = "asks more memory per CPU than any suitable machine has"


class SitePolicy:
    """A queue order over the organisation with its backfilling, over clusters with memory (module docstring).

    Reads the kernel's job arrays (``procs``, ``estimate``, ``run_time``,
    ``memory_per_cpu``, ``status``) and clusters, and the usage per leaf
    from :class:`~.usage.SiteUsage`; keeps its own candidate clusters per
    job (a job's clusters whose machines could never hold its memory are
    dropped on arrival).
    """

    def __init__(self, order: QueueOrder, tree, usage: SiteUsage, elastic: dict):
        self.order = order
        self.tree = tree
        self.usage = usage
        # Conservative plans hold each job's whole memory (:mod:`.conservative`): no elastic starts, and a job only
        # an elastic start could hold is cancelled on arrival rather than planned forever.
        self.elastic = {**elastic, "enabled": False} if order.backfill == "cons" else elastic

    # What the batch engine's policies read of a batch run's queues (sched_engine/batch/queues.py): a site's
    # order is its fair-share order, with no queue ranks, best-effort queues or per-user limits.
    rank = None
    best_effort = None
    limits = None

    def bind(self, sim) -> None:
        self.sim = sim
        self.procs, self.estimate, self.run_time = sim.procs, sim.estimate, sim.run_time
        self.memory_per_cpu, self.status, self.clusters = sim.memory_per_cpu, sim.status, sim.clusters
        self.candidates = list(sim.candidates)
        usage = self.usage
        self.leaf, self.leaf_cpus, self.leaf_memory = usage.leaf, usage.leaf_cpus, usage.leaf_memory
        self.total_cpus, self.total_memory = usage.total_cpus, usage.total_memory
        order = self.order
        # The waiting jobs: in arrival order read by class (arrival order), or per leaf and counted by size; under
        # an order whose picks follow from keys (with EASY) a pass reads the order by key and EASY's walk reads
        # them by key and by class, with no pick-by-pick queue (FairQueue) kept.
        in_arrival_order = order.in_arrival_order
        keys = None if in_arrival_order or order.backfill != "easy" else order.walk_keys(self.tree)
        self.keyed = KeyedWalk(self, keys) if keys is not None else None
        self.arrival = ArrivalQueue() if in_arrival_order else None
        self.fair = None if in_arrival_order or self.keyed is not None else FairQueue(self)
        self.by_size = None if in_arrival_order else SizeIndex(zip(self.procs, self.memory_per_cpu, self.estimate))
        self.waiting: dict[int, None] = {}  # every waiting job, arrival order
        self.new_arrivals: list[int] = []
        # EASY's reservation: (job, shadow, cluster, extra CPUs, extra memory); stale after a change it cannot follow.
        self.reservation: tuple[int, float, int, int, float] | None = None
        self.reservation_stale = True
        self.resources_changed = True
        # Whether the last pass walked after its head with nothing freed since, and a bound on the jobs a walk
        # over the same jobs would examine (settled if within backfill_depth: backfill_easy's docstring).
        self.settled = False
        self.settled_examined = 0
        self.wakes: set[float] = set()   # times of the passes asked for (Wake) and not yet made
        # Without backfilling and with CONS: the first job of the order the last pass left waiting (EASY's is its
        # reservation's job), which the reasons why jobs waited name (:mod:`.reasons`).
        self.head: int | None = None
        self.scheduling_pass = PASSES[order.backfill]

    @property
    def decayed(self):
        """Each leaf's decayed usage of CPUs and memory (:class:`~.usage.SiteUsage`)."""
        return self.usage.decayed

    def memory_held(self, job: int) -> float:
        """MB a running job holds in all."""
        return self.usage.memory_held(job)

    def running_count(self) -> int:
        """Jobs holding CPUs now."""
        return len(self.sim.allocation)

    # --- the kernel's hooks -----------------------------------------------------------------------

    def arrive(self, job: int, now: float):
        memory = self.memory_per_cpu[job]
        low = self.elastic["min_fraction"] if self.elastic["enabled"] else 1.0
        if memory > 0:
            # Only clusters whose machines could hold it (idle, all up) stay candidates; a plan counting memory
            # per cluster (CONS) would otherwise reserve it where it never fits. EASY never starts it there either.
            candidates = self.candidates[job] = tuple(
                c for c in self.candidates[job] if self.clusters[c].fits_empty(self.procs[job], memory * low,
                                                                               up_only=False))
            if not candidates:
                return (Cancel(job, TOO_MUCH_MEMORY),)
        self.waiting[job] = None
        if self.arrival is not None:
            self.arrival.add(job, self.procs[job], memory, self.estimate[job])
        if self.by_size is not None:
            self.by_size.add(self.procs[job], memory, self.estimate[job])
        if self.fair is not None:
            self.fair.add(job)
        if self.keyed is not None:
            self.keyed.add(job)
        self.new_arrivals.append(job)
        return NO_DECISIONS

    def job_ended(self, cluster: int, now: float, early: bool):
        self.resources_changed = True
        self.reservation_stale |= early
        return NO_DECISIONS

    def capacity_changed(self, cluster: int, now: float):
        self.resources_changed = True
        self.reservation_stale = True
        return NO_DECISIONS

    def schedule(self, now: float):
        if now in self.wakes:   # a planned start is due: the plan is made again (CONS)
            self.wakes.discard(now)
            self.resources_changed = True
        yield from self.scheduling_pass(self, now)
        self.new_arrivals = []

    # --- the kernel's job events (JobObserver): the indexes of the waiting jobs ------------------

    def queued(self, job: int) -> None:
        """Indexed in :meth:`arrive`, once its memory is known to fit somewhere."""

    def left_queue(self, job: int) -> None:
        if job not in self.waiting:
            return   # cancelled on arrival, never indexed
        del self.waiting[job]
        if self.arrival is not None:
            self.arrival.remove(job)
        if self.by_size is not None:
            self.by_size.remove(self.procs[job], self.memory_per_cpu[job], self.estimate[job])
        if self.fair is not None:
            self.fair.left(self.leaf[job])
        if self.keyed is not None:
            self.keyed.left(job)

    def started(self, job: int) -> None:
        """Nothing: its leaf's usage grows (:class:`~.usage.SiteUsage`) and the next pass reads it."""

    def finished(self, job: int) -> None:
        leaf = self.leaf[job]
        if self.fair is not None:
            self.fair.touch(leaf)
        if self.keyed is not None:
            self.keyed.touch(leaf)

    def advance(self, time: float) -> None:
        """Nothing: usage decays in :class:`~.usage.SiteUsage`."""

    # --- what the pass asks -----------------------------------------------------------------------

    def fit_now(self, job: int) -> tuple[int, float] | None:
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

    def can_ever_fit(self, job: int) -> bool:
        procs, memory = self.procs[job], self.memory_per_cpu[job]
        if self.elastic["enabled"]:
            memory *= self.elastic["min_fraction"]
        for c in self.candidates[job]:   # a loop, not any() over a generator: once per pass
            cluster = self.clusters[c]
            if cluster.up_total >= procs and (memory <= 0 or cluster.fits_empty(procs, memory)):
                return True
        return False

    def reserve(self, job: int) -> tuple[int, float, int, int, float] | None:
        best = None
        for c in self.candidates[job]:
            shadow = reservation.shadow(self.clusters[c], self.procs[job], self.memory_per_cpu[job])
            if shadow is not None and (best is None or shadow[0] < best[1]):
                best = (job, shadow[0], c, shadow[1], shadow[2])
        return best

    def in_order(self):
        """The waiting jobs in the queue order, generated lazily (see :mod:`.order`)."""
        if self.order.in_arrival_order:
            yield from self.arrival.waiting()
        elif self.keyed is not None:
            yield from self.keyed.in_order()
        else:
            yield from self.fair.order()

    def spares(self, kept: tuple[int, float, int, int, float]) -> bool:
        """Whether the reservation now is for the same head, shadow time and cluster as ``kept`` and leaves over
        at most its CPUs and memory (a job ahead of the head started since: it may be computed again)."""
        now = self.reservation
        return now is kept or (now[:3] == kept[:3] and now[3] <= kept[3] and now[4] <= kept[4])

    def start_heads(self, candidates):
        """Start jobs of the order while they fit; cancel those that never could; return the first blocked one
        (a generator of the decisions; its value is that job, or None)."""
        for job in candidates:
            if self.status[job] != WAITING:
                continue
            fit = self.fit_now(job)
            if fit is not None:
                yield Start(job, *fit)
            elif not self.can_ever_fit(job):
                yield Cancel(job, NO_RESERVATION)
            else:
                return job
        return None
