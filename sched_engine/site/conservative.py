"""Conservative backfilling for the site engine: the batch engine's policy over CPUs and memory, in the queue order.

The batch engine's :class:`~sched_engine.batch.policies.Conservative` gives
every job a reservation at its earliest start over its clusters (§5 tie
rule), given the running jobs and every reservation before it. Here it
plans with :class:`~sched_engine.batch.profile.ResourceProfiles` over each
cluster's CPUs and memory (both in all: machines are not told apart in the
plan), through its two resource hooks.

A site pass plans afresh (a new planner bound to the site) in the pass's
queue order, at most ``backfill_depth`` jobs (0: all), because a fair
order moves as shares change: this is conservative backfilling with
dynamic priorities, every job before another in the order keeping its
place in the plan. A job planned to start now starts now if it fits now
machine by machine (it may not: the plan counts memory per cluster); its
place stays in the plan either way, so no later job is planned over it. A
job no cluster can ever hold is cancelled; a pass is asked for at the
plan's first start after now (``Wake``): that pass plans afresh and asks
for its own next one, so the plan's later starts need none (asking for
every one made each pass add a wake-up per planned job, whose passes added
as many again: 15,500 passes for 150 jobs). Under the arrival order on one cluster this is
the batch engine's conservative schedule, which re-plans a cluster's
reservations in arrival order when a job ends early and keeps them
otherwise; memory-elastic starts do not apply.
"""

from __future__ import annotations

from ..batch.policies import Cancel, Conservative, Reserve, Start, Wake
from ..batch.profile import Profile, ResourceProfiles
from .waiting import WAITING

MEMORY_SLACK = 1e-9  # a plan's memory is summed in floating point: a job that exactly fills memory still fits


class SiteConservative(Conservative):
    """The batch engine's conservative backfilling, planning CPUs and memory (see the module docstring)."""

    def _fresh_profile(self, cluster: int, now: float) -> ResourceProfiles:
        sim = self.sim
        state = sim.clusters[cluster]
        running = state.running
        cpus = Profile.from_releases(now, state.free_total, [(end, sim.procs[job]) for end, job in running])
        memory = Profile.from_releases(now, float(state.free_memory.sum()),
                                       [(end, sim.memory_held(job)) for end, job in running], dtype=float)
        return ResourceProfiles((cpus, memory))

    def _demand(self, job: int) -> tuple[int, float]:
        sim = self.sim
        return sim.procs[job], sim.procs[job] * sim.memory_per_cpu[job] * (1.0 - MEMORY_SLACK)


def backfill_conservative(sim, candidates, now: float):
    """Plan the waiting jobs in the order ``candidates`` gives them and start those planned for now that fit (a
    generator of the decisions; ``sim``: the site's policy, :class:`~.policy.SitePolicy`)."""
    planner = SiteConservative()
    planner.bind(sim)
    depth = sim.order.backfill_depth
    clusters, status = sim.clusters, sim.status
    examined = 0
    due = float("inf")   # the plan's first start after now
    sim.head = None      # the first job of the order the plan leaves waiting
    for job in candidates:
        if status[job] != WAITING:
            continue
        examined += 1
        if depth and examined > depth:
            break
        for decision in planner.arrive(job, now):
            kind = type(decision)
            if kind is Cancel:
                yield decision
            elif kind is Reserve:
                if decision.start <= now and clusters[decision.cluster].fits(sim.procs[job], sim.memory_per_cpu[job]):
                    yield Start(job, decision.cluster)
            elif kind is Wake and now < decision.time < due:
                due = decision.time
        if sim.head is None and status[job] == WAITING:
            sim.head = job
    # Wake-ups asked for by earlier plans are void: this plan is the one in force.
    sim.wakes = {due} if due < float("inf") else set()
    if sim.wakes:
        yield Wake(due)
