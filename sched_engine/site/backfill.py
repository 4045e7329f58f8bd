"""EASY's backfill walk for the site engine: after the head of the queue order, every job that can start now.

Rule (the batch engine's EASY, :class:`~sched_engine.batch.policies.EASY`,
over CPUs and memory): walking the order after the head, a job starts now
iff it fits now (CPUs and memory, machine by machine, or memory-elastic)
and spares the head's reservation: it runs on another cluster, ends (by
its estimate) by the shadow time, or fits in the CPUs and memory left over
at the shadow time. At most ``backfill_depth`` jobs meeting the stop rule's
condition below are examined (0: all).

Stop rule: a job can pass only if it asks at most the CPUs free on some
cluster, at most the memory per CPU free on a machine with a CPU free, at
most the CPUs the machines can give at its memory per CPU (a share
``min_fraction`` of its memory when starts are memory-elastic), and either
at most the CPUs free off the reserved cluster, or at most the CPUs and
memory left over at the shadow time, or ends (by its plain estimate) by the
shadow time. Each start only
tightens this condition. Under the arrival order the walk reads the queue
by class (:class:`~.waiting.ArrivalQueue`) and goes from one job meeting
the condition straight to the next, examining every one of them
(``backfill_depth`` does not apply), as the batch engine's EASY does. Under
a fair order read by key (:mod:`.keyed`) it takes each user's jobs meeting
it, by class, in the order's sequence. Under a fair order generated pick
by pick :class:`~.waiting.SizeIndex` counts the waiting jobs that meet it;
the walk stops once every one of them has been examined, which leaves the
starts as they were and spares the walk through a backlog of jobs that
cannot start now.

Settled walks: a walk that examined at most ``backfill_depth`` jobs (not
cut short) leaves every waiting job failing the test. Until something is freed (a job
ends, a machine fails or restarts) the machines only fill up, so while the
reservation is for the same head, shadow time and cluster and leaves over
no more CPUs or memory, those jobs keep failing it. A pass with only
arrivals since then walks the newcomers that fit now and nothing else, when
they are one user's (their order is their arrival order) and the jobs the
settled walk examined, with every arrival since, are within
``backfill_depth``: it starts what walking the whole order would. Not with
memory-elastic starts: a smaller share of memory may pass the memory left
over at the shadow time where a larger one did not.
"""

from __future__ import annotations

import math

from ..batch.policies.decisions import Start
from ..elastic import penalty as penalties
from . import keyed_easy
from .keyed import KeyedWalk
from .size_index import SizeIndex
from .waiting import WAITING


def backfill_easy(sim, candidates, now: float):
    """Walk ``candidates`` (the rest of the queue order; ``None``: every waiting job after the head in arrival
    order, read by class from :class:`~.waiting.ArrivalQueue`; a :class:`~.keyed.KeyedWalk`: the rest of a fair
    order, only its jobs meeting the condition, read by key; a tuple: the only jobs that may start, after a
    settled walk) and start what EASY allows; keeps the reservation's CPUs and memory left over at the shadow
    time up to date in ``sim.reservation``. A generator of its ``Start`` decisions (the kernel applies each before
    the walk goes on); its value is the jobs examined (more than ``backfill_depth`` if it cut the walk short).
    ``sim``: the site's policy (:class:`~.policy.SitePolicy`)."""
    head, shadow, reserved, extra, extra_memory = sim.reservation
    alone = isinstance(candidates, tuple)
    depth = sim.order.backfill_depth if candidates is not None and not alone else 0
    keyed = isinstance(candidates, KeyedWalk)
    clusters, procs_of, estimate_of, memory_of = sim.clusters, sim.procs, sim.estimate, sim.memory_per_cpu
    status, run_time = sim.status, sim.run_time
    elastic = sim.elastic["enabled"]
    low = sim.elastic["min_fraction"] if elastic else 1.0
    # The plain estimate bounds an elastic start's from below only for penalties >= 1: then count any length.
    limit = math.inf if elastic else shadow - now + 1e-9 * max(1.0, abs(shadow))
    # Under a fair order generated pick by pick the walk counts what is left to examine (the module docstring's
    # stop rule); read by key or in arrival order it reads only jobs meeting the condition, and counts them
    # once, to skip a walk in which nothing could pass.
    counted = sim.by_size is not None and candidates is not None and not alone
    # Jobs examined that met the condition then and did not start, the head first (read by key none are kept: the
    # count there leaves out only the head, tested directly).
    passed = SizeIndex() if counted and not keyed else None
    if passed is not None:
        passed.add(procs_of[head], memory_of[head], estimate_of[head])

    def condition(count: bool):
        most = elsewhere = 0   # the most CPUs free on a cluster; on one other than the reserved
        memory = 0.0           # the most memory free on a machine with a CPU free
        for i, c in enumerate(clusters):
            free = c.free_total
            if free:
                most = max(most, free)
                if i != reserved:
                    elsewhere = max(elsewhere, free)
                memory = max(memory, c.max_free_memory())
        memory = memory * (1.0 + 1e-6) / low
        cap: dict[float, int] = {}
        short: dict[float, int] = {}

        def any_length(per_cpu: float) -> int:
            """CPUs a job may ask at ``per_cpu`` MB and start whatever its length: elsewhere, or in what is left
            over at the shadow time (CPUs and memory)."""
            if per_cpu not in short:
                held = per_cpu * low
                spare = extra if held <= 0 else min(extra, math.floor(max(extra_memory, 0.0) / held * (1 + 1e-9)
                                                                      + 1e-9))
                short[per_cpu] = max(elsewhere, spare)
            return short[per_cpu]

        def givable(per_cpu: float) -> int:
            if per_cpu not in cap:
                most_givable = 0
                for c in clusters:
                    most_givable = max(most_givable, c.givable_total(per_cpu * low))
                cap[per_cpu] = most_givable
            return cap[per_cpu]

        if most == 0:
            left = 0   # no CPU free: nothing can start, nothing to count
        elif count and keyed:
            # Read by key, the count only says whether any job but the head could pass: two found settle it.
            need, per_cpu = procs_of[head], memory_of[head]
            head_meets = (need <= most and per_cpu <= memory and need <= givable(per_cpu)
                          and (need <= any_length(per_cpu) or estimate_of[head] <= limit))
            left = sim.by_size.count(most, memory, any_length, limit, givable, enough=2) - head_meets
        elif count:
            left = (sim.by_size.count(most, memory, any_length, limit, givable)
                    - passed.count(most, memory, any_length, limit, givable))
        else:
            left = math.inf
        return most, memory, any_length, givable, left

    max_free, max_memory, any_length, givable, remaining = condition(counted)
    counted = counted and not keyed

    def first(queue, low: int) -> int:
        """Position in ``queue`` of its first waiting job from ``low`` on meeting the condition as it stands now."""
        return queue.first(low, max_free, max_memory, givable, any_length, limit) if max_free > 0 else -1

    def arrival_order():
        """The waiting jobs after the head that meet the condition as it stands when each is asked for."""
        queue = sim.arrival
        position = first(queue, queue.position[head] + 1)
        while position >= 0:
            yield queue.jobs[position]
            position = first(queue, position + 1)

    examined = 0
    if remaining <= 0 or max_free == 0:
        return 0   # nothing could pass: the order is not generated at all
    if keyed:
        remaining = math.inf   # the count stopped at two: the walk ends when no user offers a job
    if candidates is None:
        walk = arrival_order()
    elif keyed:
        walk = keyed_easy.after_head(candidates, head, first)
    else:
        walk = candidates
    for job in walk:
        if remaining <= 0 or max_free == 0:
            break
        if job == head or status[job] != WAITING:
            continue
        need, memory = procs_of[job], memory_of[job]
        if need > max_free or memory > max_memory or need > givable(memory) or \
                (need > any_length(memory) and estimate_of[job] > limit):
            continue   # fails the necessary condition: cannot start now, and was not counted
        examined += 1
        if depth and examined > depth:
            break   # cut short: more than backfill_depth examined says so
        remaining -= 1
        fit = None
        for c in sim.candidates[job]:
            fraction = 1.0
            if not clusters[c].fits(need, memory):
                if not (elastic and memory > 0):
                    continue
                fraction = clusters[c].largest_memory_fraction(need, memory, low)
                if fraction is None:
                    continue
            estimate = estimate_of[job]
            if fraction < 1.0 and run_time[job] > 0:
                estimate *= penalties.runtime(sim.elastic["penalty"], fraction, run_time[job]) / run_time[job]
            if c == reserved and now + estimate > shadow:
                held = need * memory * fraction
                if need > extra or held > extra_memory + 1e-9:
                    continue
                extra -= need
                extra_memory -= held
            fit = (c, fraction)
            break
        if fit is None:
            if counted:
                passed.add(need, memory, estimate_of[job])
        else:
            yield Start(job, *fit)
            max_free, max_memory, any_length, givable, remaining = condition(counted)
    sim.reservation = (head, shadow, reserved, extra, extra_memory)
    return examined
