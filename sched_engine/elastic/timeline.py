"""The timeline generator of YARN-ME (§3.2): when a job's current phase ends if its tasks run regularly.

It merges the per-node timelines (running tasks' end times from the
simulation's ``node_tasks``, walked in time order, plus the one queued task
of another job a node is reserved for, §3.3 "Node reservations") and places
the job's pending tasks greedily wherever and whenever they fit, stopping as
soon as the last one is placed. Its cost depends on the job's pending tasks
and the releases walked, not on the cluster size.
"""

from __future__ import annotations

from heapq import heapify, heappop, heappush

from .state import INF, GroupState, JobState


def phase_end(sim, job: JobState, horizon: float = INF, node: int = -1) -> tuple[float, bool]:
    """Estimated end of ``job``'s current phase if its pending tasks run regularly (§3.2).

    The job's pending tasks are placed greedily, in time order, on the
    nodes it can use: the nodes reserved for it, the free unreserved
    ones and ``node`` (the one being offered), each with its own
    timeline of running tasks' ends. Returns ``(estimate, exact)``; the
    walk stops once the estimate is known to exceed ``horizon`` and then
    returns a lower bound and False.
    """
    now = sim.now
    groups = [(g.memory, g.duration, g.remaining) for g in job.phases[job.phase] if g.remaining]
    d_min = min(g[1] for g in groups)
    end = max(job.phase_end_max, now)
    free_mem, free_cores, node_tasks = sim.free_mem, sim.free_cores, sim.node_tasks
    usable = set(job.reserved)
    usable.update(sim.free_unreserved)
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


def elastic_ok(sim, job: JobState, group: GroupState, end: float, node: int) -> tuple[bool, float]:
    """Alg. 1, l. 8-9: may a task of ``job`` ending at ``end`` run elastically?

    True iff ``end`` does not exceed the job's estimated (current phase)
    end. Returns the decision and the estimate it rests on (a lower bound
    of the generator's estimate when that already decides).

    First a capacity bound: if fewer than all pending tasks could start
    before ``T = end - d_min`` even using all free memory plus all
    memory released by then (each unit reused ``floor((T - now) / d_min)
    + 1`` times), the last one ends at or after ``end``. Otherwise the
    generator's estimate (:func:`phase_end`, through ``sim.estimate``).
    """
    now = sim.now
    mem, dur = group.memory, group.duration
    for g in job.phases[job.phase]:
        if g.remaining:
            mem, dur = min(mem, g.memory), min(dur, g.duration)
    latest = end - dur
    if latest > now:
        reuse = int((latest - now) // dur) + 1
        fit = int((sim.free_total + sim.profile.until(latest)) // mem) * reuse
    else:
        fit = 0
    if fit < job.pending:
        return True, latest + dur
    if now - job.est_time >= sim.allocation.heartbeat_s or (not job.est_exact and end > job.est_value):
        sim.estimates += 1
        job.est_time = now
        job.est_value, job.est_exact = sim.estimate(job, now + group.max_elastic_runtime, node)
    return end <= job.est_value, job.est_value
