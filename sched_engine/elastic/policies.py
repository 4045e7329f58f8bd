"""The three schedulers compared in §6 -- YARN, YARN-ME and Meganode -- each composed of four strategies.

Policies only store their parameters (JSON-safe, part of the cache key);
:class:`sched_engine.elastic.simulate.ElasticSimulation` asks their
strategies, never a switch:

* ``order`` (:class:`JobOrder`): the queue serves the least ``key(job)``
  first (ties by arrival, then index). :data:`FAIR_SHARE` -- YARN's fair
  scheduler orders jobs by the memory they hold [paper ref. 1]; the key
  changes as tasks end, so ``follows_memory`` re-sorts a queued job then.
  :data:`SHORTEST_REMAINING` -- shortest remaining job first, remaining =
  task-seconds not yet started.
* ``allocation``: what a task that does not fit a node regularly is
  offered. :data:`REGULAR` -- nothing; :class:`ElasticAllocation` -- the
  under-sized allocation (runtime, memory) of Alg. 1, l. 7, which the engine
  then tests for "does not delay the job" (l. 8-9), at most
  ``task_limit()`` elastic tasks on a node at once.
* ``when_blocked`` (:class:`HeadBlocked`): what a free node whose memory the head
  job's next task does not fit does. :class:`NodeReservations` -- YARN's
  node reservation for that job; with ``backfill_gaps`` (§3.3: YARN-ME,
  not stock YARN) tasks of other jobs may use a reserved node when they end
  before the reserved job's task can start there. :data:`SKIP` -- the next
  job in queue order that fits goes first; :data:`WAIT` -- nothing starts.
* ``nodes``: the cluster as given (:func:`as_given`) or all nodes pooled
  into one with the summed cores and memory (:func:`pooled`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from operator import attrgetter
from typing import Callable

from ..core.registry import Parametrised


@dataclass(frozen=True)
class JobOrder:
    """The job queue's order: least ``key(job)`` first; ``follows_memory``: the key moves as the job's tasks end."""

    key: Callable
    follows_memory: bool


FAIR_SHARE = JobOrder(attrgetter("mem_in_use"), follows_memory=True)
"""YARN's fair order: memory the job holds (MB), least first."""

SHORTEST_REMAINING = JobOrder(attrgetter("work_left"), follows_memory=False)
"""Shortest remaining job first: task-seconds not yet started."""


class RegularAllocation:
    """Regular allocations only: a task runs with its ideal memory or not at all."""

    heartbeat_s = math.inf   # no elastic grant, so no timeline estimate to reuse

    def grant(self, group, free_mb: int, step_mb: int) -> tuple[float, int] | None:
        return None

    def task_limit(self) -> float:
        return 0


REGULAR = RegularAllocation()


@dataclass(frozen=True)
class ElasticAllocation:
    """Alg. 1, l. 7: the lowest-runtime under-sized grant of at least ``min_fraction`` of the ideal memory that fits,
    with the disk-contention limit of elastic tasks per node (:meth:`task_limit`; see :class:`YARNME`)."""

    min_fraction: float
    heartbeat_s: float
    max_elastic_per_node: int | None
    disk_bandwidth_mb_s: float | None
    elastic_spill_mb_s: float

    def grant(self, group, free_mb: int, step_mb: int) -> tuple[float, int] | None:
        return group.best_elastic(free_mb, step_mb, self.min_fraction)

    def task_limit(self) -> float:
        """Elastic tasks allowed at once on one node (``math.inf``: no limit): ``floor(disk_bandwidth_mb_s /
        elastic_spill_mb_s)`` when the disk portion is given, capped by ``max_elastic_per_node`` when that is."""
        limit = math.inf
        if self.disk_bandwidth_mb_s is not None:
            limit = math.floor(self.disk_bandwidth_mb_s / self.elastic_spill_mb_s + 1e-9)
        if self.max_elastic_per_node is not None:
            limit = min(limit, self.max_elastic_per_node)
        return limit


class HeadBlocked:
    """A free node the head job's next task does not fit (``head``), or a node reserved for a job whose task does
    not fit it yet (``reserved``): the job that gets the node instead, or None. ``offers_reserved_gaps``: new work
    is offered reserved nodes with a free core (their gaps may fit it)."""

    offers_reserved_gaps = False
    reserves = False

    def head(self, sim, node: int, job):
        return None

    def reserved(self, sim, node: int, owner):
        return None


@dataclass(frozen=True)
class NodeReservations(HeadBlocked):
    """YARN's node reservations: the node is kept for the head job when it could ever hold its task (the engine
    reserves it); with ``backfill_gaps`` another job's task ending before the reserved one can start may use it."""

    backfill_gaps: bool

    reserves = True

    @property
    def offers_reserved_gaps(self) -> bool:
        return self.backfill_gaps

    def reserved(self, sim, node: int, owner):
        return sim.fill_gap(node, owner) if self.backfill_gaps else None


class SkipBlocked(HeadBlocked):
    """No reservation: the next job in queue order whose task fits the node goes first."""

    def head(self, sim, node: int, job):
        return sim.first_fit(node, job)


SKIP = SkipBlocked()
WAIT = HeadBlocked()   # no reservation, nobody overtakes: nothing starts until the head's task fits


def as_given(cores: list, memory_mb: list) -> tuple[list, list]:
    return cores, memory_mb


def pooled(cores: list, memory_mb: list) -> tuple[list, list]:
    """One node with every node's cores and memory."""
    return [sum(cores)], [sum(memory_mb)]


class YARN(Parametrised):
    """Stock YARN: fair-share job order, node reservations, regular allocations only."""

    order = FAIR_SHARE
    allocation = REGULAR
    when_blocked = NodeReservations(backfill_gaps=False)
    nodes = staticmethod(as_given)


class YARNME(Parametrised):
    """YARN-ME (Alg. 1): YARN plus elastic allocations when they do not delay the job, and reserved nodes' gaps.

    ``min_fraction``: smallest grant as a share of ideal memory (§6.1: 10%).
    ``heartbeat_s``: how long one timeline estimate of a job is reused
    (§3.2: the generator runs every heartbeat).

    Disk contention (§2.6, §3.3): "YARN-ME allocates a portion of each
    node's disk bandwidth for elastic tasks" and "prohibits the scheduling
    of new elastic tasks on nodes where this portion would be exceeded".
    The paper gives no figure for the portion, and its simulations (§6.1)
    model none, so the limit is off by default and in every §6
    reproduction. ``disk_bandwidth_mb_s``: the portion of a node's disk
    bandwidth for elastic tasks' spills (MB/s; None: no limit);
    ``elastic_spill_mb_s``: the bandwidth one elastic task spills at; at
    most ``floor(disk_bandwidth_mb_s / elastic_spill_mb_s)`` elastic tasks
    run on a node at once -- e.g. 120 MB/s for 30 MB/s spills gives 4 (our
    example figures, not the paper's). ``max_elastic_per_node``: the same
    limit given directly as a count (None: no limit); when both are given
    the smaller holds. See :meth:`ElasticAllocation.task_limit`.
    """

    order = FAIR_SHARE
    when_blocked = NodeReservations(backfill_gaps=True)
    nodes = staticmethod(as_given)

    def __init__(self, min_fraction: float = 0.1, max_elastic_per_node: int | None = None, heartbeat_s: float = 1.0,
                 disk_bandwidth_mb_s: float | None = None, elastic_spill_mb_s: float = 30.0):
        self.min_fraction = min_fraction
        self.max_elastic_per_node = max_elastic_per_node
        self.heartbeat_s = heartbeat_s
        self.disk_bandwidth_mb_s = disk_bandwidth_mb_s
        self.elastic_spill_mb_s = elastic_spill_mb_s

    @property
    def allocation(self) -> ElasticAllocation:
        return ElasticAllocation(self.min_fraction, self.heartbeat_s, self.max_elastic_per_node,
                                 self.disk_bandwidth_mb_s, self.elastic_spill_mb_s)

    def elastic_task_limit(self) -> float:
        """Elastic tasks allowed to run at once on one node (``math.inf``: no disk-contention limit)."""
        return self.allocation.task_limit()


class Meganode(Parametrised):
    """§6.2's elasticity-agnostic bound: one node pooling the cluster, shortest remaining job first.

    No reservations: whenever resources free up, the job with the least
    remaining work is served first. ``blocked``: what happens when that
    job's next task does not fit the free memory. ``skip`` (default): the
    next job in SRJF order whose task fits is served -- the reading of the
    paper's idealised bound ("an upper-bound for elasticity-agnostic
    solutions"; see docs/readings.md, "YARN-ME: Meganode"). ``wait``: nothing
    starts until the head job's task fits (this engine's former reading,
    kept to measure the difference).
    """

    order = SHORTEST_REMAINING
    allocation = REGULAR
    nodes = staticmethod(pooled)

    def __init__(self, blocked: str = "skip"):
        self.blocked = blocked

    @property
    def when_blocked(self) -> HeadBlocked:
        return SKIP if self.blocked == "skip" else WAIT
