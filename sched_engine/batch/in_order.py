"""The kernel's one exemption: a batch run under an in-order policy on clusters that never fail.

:meth:`~.simulate.BatchSimulation.run` calls :func:`run_in_order` instead of
the event loop when the policy has ``starts_in_order`` (FCFS, FCFS-LB), no
machine can fail and the model has no queue ranks or per-user limits; the
results are the loop's (``tests/test_batch_backfill_equivalence.py``).
"""

from __future__ import annotations

from heapq import heappop, heappush

from ..core.loop import scheduler_clock
from .pending import PRIORITY, REASONS
from .samples import samples_from_times

FINISHED = 2   # the simulation's status code of a finished job (.simulate)
_PRIORITY_CODE = REASONS.index(PRIORITY)
NO_SUITABLE_CLUSTER = "no suitable cluster"


def run_in_order(sim) -> None:
    """FCFS-like policies on clusters that never fail: one step per job instead of per event.

    A policy with ``starts_in_order`` (FCFS, FCFS-LB) starts only the
    oldest waiting job, as soon as it fits now on one of its clusters,
    and is asked only which of those clusters to use (``policy.choose``).
    So job ``j`` (in arrival order: submission time, then index) starts
    at the first ``t >= max(submit[j], start of the job before)`` at which
    it fits once every job ending by ``t`` has released its CPUs; while
    it does not fit, ``t`` moves to the next completion. This gives the
    results of the kernel's loop because

    * there the head is re-examined after the completions of every
      instant and only then (arrivals free nothing), and jobs ending at
      one instant release their CPUs in any order with the same outcome;
    * without failures ``up_total == total``: a job that no candidate
      cluster can hold is cancelled on arrival, and any other job fits
      once its clusters are empty, so a waiting job is never cancelled.

    The timeline samples are built afterwards from the start and end
    times (:func:`.samples.samples_from_times`).
    """
    submit, procs, candidates, clusters = sim.submit, sim.procs, sim.candidates, sim.clusters
    if submit and min(submit) < 0:
        raise ValueError(f"cannot schedule an event at {min(submit)} before now (0.0)")  # as the event loop
    choose, occupy, finish, cancel = sim.policy.choose, sim.occupy, sim.finish, sim.cancel
    capacity = {allowed: max((clusters[c].total for c in allowed), default=-1) for allowed in set(candidates)}
    total = len(submit)
    report = sim.progress.callback is not None  # one check per job, not a call
    ends: list[tuple[float, int]] = []  # heap of (completion time, job) of running jobs
    now = float("-inf")  # start time of the previous job
    pending = sim.pending_rows if sim.record_pending else None
    previous = -1  # the previous job that was not cancelled: it starts first (reason "priority")
    started = scheduler_clock()
    for count, job in enumerate(sorted(range(total), key=submit.__getitem__), start=1):
        sim.queue_length += 1
        need, allowed = procs[job], candidates[job]
        if need > capacity[allowed]:
            cancel(job, submit[job], sim.unsuitable.get(job, NO_SUITABLE_CLUSTER))
            continue
        if submit[job] > now:
            now = submit[job]
        elif pending is not None and now > submit[job]:
            pending.append((job, submit[job], now, _PRIORITY_CODE, previous))
        previous, head_since = job, now   # the oldest waiting job from now on
        while True:
            while ends and ends[0][0] <= now:
                end, ended = heappop(ends)
                finish(ended, end, FINISHED)
            if len(allowed) == 1:
                fits = allowed if clusters[allowed[0]].free_total >= need else ()
            else:
                fits = [c for c in allowed if clusters[c].free_total >= need]
            if fits:
                break
            now = ends[0][0]  # not empty: the job fits once its clusters are idle
        if pending is not None and now > head_since:
            pending.append((job, head_since, now, _PRIORITY_CODE, -1))   # split by fit: pending_exact
        end = occupy(job, choose(fits), now)
        if end is not None:
            heappush(ends, (end, job))
        if report:
            sim.progress.update(count)  # jobs placed so far; the rest only end
    while ends:
        end, ended = heappop(ends)
        finish(ended, end, FINISHED)
    # The whole loop is the policy's work here: there is nothing else to do.
    sim.scheduler_seconds += scheduler_clock() - started
    sim.samples = samples_from_times(sim)
    sim.progress.finish()
