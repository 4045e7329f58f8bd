"""The three schedulers compared in §6: YARN, YARN-ME and Meganode.

Policies only store their parameters (JSON-safe, part of the cache key);
:class:`sched_engine.elastic.simulate.ElasticSimulation` asks them through
two narrow protocols and reads their switches:

* job order, ``job_key(job)`` (a field getter, called once per queued job
  per pass): the queue serves the least key first (ties by arrival, then
  index). :data:`fair_share_key` -- YARN's fair scheduler
  orders jobs by the memory they hold [paper ref. 1]; the key changes as
  tasks end, so ``key_follows_memory`` re-sorts a queued job then.
  :data:`shortest_remaining_key` -- shortest remaining job first, remaining
  = task-seconds not yet started.
* elastic grant, ``elastic_grant(group, free_mb, step_mb)``: the
  under-sized allocation (runtime, memory) offered to a task that does not
  fit regularly, or None (Alg. 1, l. 7); the engine then applies the
  "does not delay the job" test (l. 8-9).
* ``reserve``: YARN's node reservations for the job a node cannot serve.
* ``elastic``: whether under-sized allocations are made (Alg. 1, l. 7-10).
* ``reserve_backfill``: whether tasks of other jobs may use a reserved
  node when they end before the reserved job's task can start there
  (§3.3: YARN-ME does this, stock YARN does not).
* ``skip_blocked``: without reservations, whether a job whose next task
  does not fit lets the next job in queue order that fits go first.
* ``pooled``: all nodes merged into one with the summed cores and memory.
"""

from __future__ import annotations

import math
from operator import attrgetter

from ..core.registry import Parametrised

fair_share_key = attrgetter("mem_in_use")
"""YARN's fair order: memory the job holds (MB), least first."""

shortest_remaining_key = attrgetter("work_left")
"""Shortest remaining job first: task-seconds not yet started."""


class _Regular:
    """Regular allocations only: no elastic grant."""

    def elastic_grant(self, group, free_mb: int, step_mb: int) -> tuple[float, int] | None:
        return None


class YARN(_Regular, Parametrised):
    """Stock YARN: fair-share job order, node reservations, regular allocations only."""

    job_key = fair_share_key
    key_follows_memory = True
    reserve = True
    reserve_backfill = False
    skip_blocked = False
    elastic = False
    pooled = False


class YARNME(Parametrised):
    """YARN-ME (Alg. 1): YARN plus elastic allocations when they do not delay the job.

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
    the smaller holds. See :meth:`elastic_task_limit`.
    """

    job_key = fair_share_key
    key_follows_memory = True
    reserve = True
    reserve_backfill = True
    skip_blocked = False
    elastic = True
    pooled = False

    def __init__(self, min_fraction: float = 0.1, max_elastic_per_node: int | None = None, heartbeat_s: float = 1.0,
                 disk_bandwidth_mb_s: float | None = None, elastic_spill_mb_s: float = 30.0):
        self.min_fraction = min_fraction
        self.max_elastic_per_node = max_elastic_per_node
        self.heartbeat_s = heartbeat_s
        self.disk_bandwidth_mb_s = disk_bandwidth_mb_s
        self.elastic_spill_mb_s = elastic_spill_mb_s

    def elastic_grant(self, group, free_mb: int, step_mb: int) -> tuple[float, int] | None:
        """The lowest-runtime under-sized grant of at least ``min_fraction`` of the ideal memory that fits."""
        return group.best_elastic(free_mb, step_mb, self.min_fraction)

    def elastic_task_limit(self) -> float:
        """Elastic tasks allowed to run at once on one node (``math.inf``: no disk-contention limit).

        ``floor(disk_bandwidth_mb_s / elastic_spill_mb_s)`` when the disk
        portion is given, capped by ``max_elastic_per_node`` when that is.
        """
        limit = math.inf
        if self.disk_bandwidth_mb_s is not None:
            limit = math.floor(self.disk_bandwidth_mb_s / self.elastic_spill_mb_s + 1e-9)
        if self.max_elastic_per_node is not None:
            limit = min(limit, self.max_elastic_per_node)
        return limit


class Meganode(_Regular, Parametrised):
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

    job_key = shortest_remaining_key
    key_follows_memory = False
    reserve = False
    reserve_backfill = False
    elastic = False
    pooled = True

    def __init__(self, blocked: str = "skip"):
        self.blocked = blocked

    @property
    def skip_blocked(self) -> bool:
        return self.blocked == "skip"
