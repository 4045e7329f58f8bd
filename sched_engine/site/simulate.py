"""A site run: the batch kernel configured with clusters of machines with memory, the site's policy and its usage.

The site engine has no loop of its own. A run is a
:class:`~sched_engine.batch.simulate.BatchSimulation` -- the batch engine's
events and their order at an instant (machine failures kill every job on
the machine, restarts, completions, arrivals, then one scheduling pass),
its starting, ending and cancelling of jobs -- with

* the cluster model of machines with CPUs and memory
  (:class:`~.machines.SiteCluster`), each job holding its memory per CPU on
  each CPU (a share of it when started memory-elastic, its run time then
  stretched by the penalty model of :mod:`sched_engine.elastic.penalty`);
* the policy (:class:`~.policy.SitePolicy`): a queue order over the
  organisation (:mod:`.order`) with its backfilling (none, EASY, CONS);
* the usage observer (:class:`~.usage.SiteUsage`): usage per user and
  group, and the timeline's samples;
* with ``reasons`` (the default), the observer of why jobs waited
  (:class:`~.reasons.SiteReasons`, the run's ``reasons``).
"""

from __future__ import annotations

from functools import partial
from typing import Callable

import numpy as np

from ..batch.policies import Recorded
from ..batch.simulate import STATUS_NAMES, BatchSimulation
from ..core.registry import Parametrised
from ..elastic import penalty as penalties
from .machines import SiteCluster
from .order import QueueOrder
from .policy import SitePolicy
from .reasons import SiteReasons
from .usage import SiteUsage

__all__ = ["STATUS_NAMES", "AsRecorded", "site_simulation"]


class AsRecorded(Parametrised):
    """The site's log as it ran: every job starts at its recorded start, or as soon after as its CPUs and memory
    fit, in recorded order (the batch engine's :class:`~sched_engine.batch.policies.Recorded` on the site's
    machines); no queue order, backfilling or elastic start."""

    name = "recorded"
    half_life_s = 0.0   # usage counted on running jobs (no order reads it)

    def __init__(self):
        pass


def site_policy(order, tree, usage: SiteUsage, elastic: dict, policy_class=SitePolicy):
    """The run's policy: the log as recorded, or a queue order with its backfilling (``policy_class``)."""
    if isinstance(order, AsRecorded):
        return Recorded()
    return policy_class(order, tree, usage, elastic)


def site_simulation(*, submit, run_time, estimate, procs, memory_per_cpu, leaf, group_of_leaf, tree,
                    clusters: list[SiteCluster], suitable, failures=(), order: QueueOrder, elastic: dict,
                    unsuitable: dict[int, str] | None = None, progress: Callable[[float], None] | None = None,
                    policy_class=SitePolicy, rng: np.random.Generator | None = None,
                    reasons: bool = True, keep_decisions: bool = False) -> BatchSimulation:
    """A site run ready to :meth:`~sched_engine.batch.simulate.BatchSimulation.run`.

    ``suitable[j]``: the clusters job ``j`` may use (None: any), as for the
    batch kernel; ``leaf[j]``: its leaf of ``tree`` (the organisation as the
    fair-sharing engine's :class:`~sched_engine.fairshare.model.Tree`);
    ``group_of_leaf[l]``: the group of leaf ``l``. The run's usage observer
    is its ``usage`` and its policy its ``policy``; with ``reasons`` its
    ``reasons`` (:class:`~.reasons.SiteReasons`, else None) record why jobs
    waited; ``keep_decisions`` keeps the kernel's log of decisions (the order of starts at an instant).
    """
    count = len(submit)
    span = (float(np.max(submit)) + float(np.max(run_time))) if count else 1.0
    usage = SiteUsage(leaf=leaf, group_of_leaf=group_of_leaf, leaf_count=tree.leaf_count, clusters=clusters,
                      half_life_s=order.half_life_s, span=span)
    policy = site_policy(order, tree, usage, elastic, policy_class)
    elastic_starts = isinstance(policy, SitePolicy) and policy.elastic["enabled"]
    stretch = partial(penalties.runtime, elastic["penalty"]) if elastic_starts else None
    observers = (usage, policy) if isinstance(policy, SitePolicy) else (usage,)
    why = SiteReasons(policy) if reasons else None
    if why is not None:
        observers += (why,)
    sim = BatchSimulation(
        submit=submit, run_time=run_time, estimate=estimate, procs=procs, suitable=suitable, clusters=clusters,
        failures=failures, policy=policy, rng=rng if rng is not None else np.random.default_rng(0),
        progress=progress, record_pending=False, unsuitable=unsuitable, memory_per_cpu=memory_per_cpu,
        stretch=stretch, observers=observers, sample_clusters=False, keep_decisions=keep_decisions,
    )
    usage.bind(sim)
    if why is not None:
        why.bind(sim)
    sim.reasons = why
    sim.usage = usage
    sim.tree = tree
    return sim
