"""The three schedulers compared in §6: YARN, YARN-ME and Meganode.

Policies only store their parameters (JSON-safe, part of the cache key);
:class:`sched_engine.elastic.simulate.ElasticSimulation` reads them.

* ``order``: ``fair`` -- YARN's fair scheduler orders jobs by the memory
  they hold (least first; ties by arrival) [paper ref. 1]; ``srjf`` --
  shortest remaining job first, remaining = task-seconds not yet started.
* ``reserve``: YARN's node reservations for the job a node cannot serve.
* ``elastic``: whether under-sized allocations are made (Alg. 1, l. 7-10).
* ``reserve_backfill``: whether tasks of other jobs may use a reserved
  node when they end before the reserved job's task can start there
  (§3.3: YARN-ME does this, stock YARN does not).
* ``pooled``: all nodes merged into one with the summed cores and memory.
"""

from __future__ import annotations

from ..core.registry import Parametrised


class YARN(Parametrised):
    """Stock YARN: fair-share job order, node reservations, regular allocations only."""

    order = "fair"
    reserve = True
    reserve_backfill = False
    elastic = False
    pooled = False


class YARNME(Parametrised):
    """YARN-ME (Alg. 1): YARN plus elastic allocations when they do not delay the job.

    ``min_fraction``: smallest grant as a share of ideal memory (§6.1: 10%).
    ``max_elastic_per_node``: disk-contention cap on concurrently running
    elastic tasks per node (§2.6, §3.3; 4 matches the core:disk ratios of
    §2.6's well-provisioned clusters). ``heartbeat_s``: how long one timeline
    estimate of a job is reused (§3.2: the generator runs every heartbeat).
    """

    order = "fair"
    reserve = True
    reserve_backfill = True
    elastic = True
    pooled = False

    def __init__(self, min_fraction: float = 0.1, max_elastic_per_node: int = 4, heartbeat_s: float = 1.0):
        self.min_fraction = min_fraction
        self.max_elastic_per_node = max_elastic_per_node
        self.heartbeat_s = heartbeat_s


class Meganode(Parametrised):
    """§6.2's elasticity-agnostic bound: one node pooling the cluster, shortest remaining job first.

    No reservations: whenever resources free up, the job with the least
    remaining work is served first.
    """

    order = "srjf"
    reserve = False
    reserve_backfill = False
    elastic = False
    pooled = True
