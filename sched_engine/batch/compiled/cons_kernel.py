"""Conservative backfilling on CPU-only clusters that never fail, compiled: the Python kernel's decisions.

This is :class:`~sched_engine.batch.policies.conservative.Conservative` on
:class:`~sched_engine.batch.simulate.BatchSimulation` as one numba loop over
arrays (when: :func:`sched_engine.batch.compiled.eligible`). Every rule
mirrors the Python classes:

* an arriving job is reserved at its earliest start over its clusters (the
  first listed wins a tie), in each cluster's profile of free CPUs over
  future time (:class:`~sched_engine.batch.profile.Profile`: ``pt[c]`` the
  breakpoints, ``pf[c]`` the free CPUs from each on, valid in
  ``p_lo[c]:p_hi[c]``), and a wake-up is set at that start;
* a job ending before its estimate re-plans, in their order, the jobs
  reserved on its cluster (``o_head``/``o_next``: each cluster's reserved
  jobs as a linked list, started ones dropped as it is walked) on a fresh
  profile of its running jobs;
* the pass starts every job whose reservation is due, in (start, job) order.

The instant, the samples and the pending recorder's heads are the EASY
loop's (:mod:`.easy_kernel`, :mod:`.parts`). The due and wake-up heaps keep
stale entries, as the Python ones do; a call pauses (``GROW``) before an
instant that could overflow one of them or a profile, and the caller gives
them more room.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .parts import (
    ALL_DONE,
    CANCELLED,
    DONE,
    HEADS,
    HEAP,
    N_COMMON,
    NEXT,
    PAUSED,
    QUEUE_LENGTH,
    SAMPLES,
    WAITING,
    finish_job,
    heap_pop,
    heap_push,
    record_instant,
    refuse_on_arrival,
    start_job,
)

DUE, WAKES, N_INTS = range(N_COMMON, N_COMMON + 3)
GROW = 2   # paused: the heaps or profiles need more room before the next instant


@njit(cache=True)
def _ends_at(heap_t, size, now):
    """How many completions the heap holds at ``now``, its least time (each may re-plan its cluster once).

    Every entry at ``now`` has only entries at ``now`` above it (the heap's
    order), so they fill its first levels: read level by level until one
    holds none."""
    count, first, width = 0, 0, 1
    while first < size:
        found = 0
        for k in range(first, min(first + width, size)):
            if heap_t[k] == now:
                found += 1
        if found == 0:
            break
        count += found
        first, width = first + width, 2 * width
    return count


@njit(cache=True)
def _trim(c, now, pt, p_lo, p_hi):
    """``Profile.trim``: the segment holding ``now`` starts the profile, from ``now``."""
    lo, hi = p_lo[c], p_hi[c]
    lo += np.searchsorted(pt[c, lo:hi], now, side="right") - 1
    if pt[c, lo] < now:
        pt[c, lo] = now
    p_lo[c] = lo


@njit(cache=True)
def _earliest(c, now, need, duration, pt, pf, p_lo, p_hi):
    """``Profile.earliest``: the earliest ``t >= now`` with ``need`` CPUs free on ``[t, t + duration)``, or NaN.

    Walks the maximal runs of time with ``need`` CPUs free: the first that
    lasts ``duration`` from its start (or from ``now``, for a run under way)
    gives it; the last run is endless, and there is none if the CPUs free
    once every reservation has ended are fewer than ``need``.
    """
    _trim(c, now, pt, p_lo, p_hi)
    lo, hi = p_lo[c], p_hi[c]
    if pf[c, hi - 1] < need:
        return np.nan
    start = np.nan
    for i in range(lo, hi):
        if pf[c, i] >= need:
            if np.isnan(start):
                start = max(pt[c, i], now)
        elif not np.isnan(start):
            if pt[c, i] - start >= duration:
                return start
            start = np.nan
    return start


@njit(cache=True)
def _reserve(c, start, end, need, pt, pf, p_lo, p_hi):
    """``Profile.reserve``: take ``need`` CPUs on ``[start, end)`` (breakpoints added at both ends)."""
    if end <= start:
        return
    for point in (start, end):
        lo, hi = p_lo[c], p_hi[c]
        index = lo + np.searchsorted(pt[c, lo:hi], point)
        if index == hi or pt[c, index] != point:
            if hi == pt.shape[1]:   # no room at the end: move the profile to the front of its row
                pt[c, : hi - lo] = pt[c, lo:hi].copy()
                pf[c, : hi - lo] = pf[c, lo:hi].copy()
                index -= lo
                hi -= lo
                p_lo[c], p_hi[c] = 0, hi
            for k in range(hi, index, -1):
                pt[c, k] = pt[c, k - 1]
                pf[c, k] = pf[c, k - 1]
            pt[c, index] = point
            pf[c, index] = pf[c, index - 1]
            p_hi[c] = hi + 1
    lo, hi = p_lo[c], p_hi[c]
    first = lo + np.searchsorted(pt[c, lo:hi], start)
    last = lo + np.searchsorted(pt[c, lo:hi], end)
    for k in range(first, last):
        pf[c, k] -= need


@njit(cache=True)
def _fresh(c, now, free, run_end, run_job, run_count, procs, pt, pf, p_lo, p_hi):
    """``Profile.from_running``: the free CPUs now, each running job's CPUs back at its estimated end (an end
    already past counts as now; equal breakpoints merged, keeping the last sum)."""
    pt[c, 0], pf[c, 0] = now, free[c]
    hi, total = 1, free[c]
    for r in range(run_count[c]):
        at = max(run_end[c, r], now)
        total += procs[run_job[c, r]]
        if at == pt[c, hi - 1]:
            pf[c, hi - 1] = total
        else:
            pt[c, hi], pf[c, hi] = at, total
            hi += 1
    p_lo[c], p_hi[c] = 0, hi


@njit(cache=True)
def _place(job, now, procs, est, cand_ptr, cand_idx, pt, pf, p_lo, p_hi, res_start, res_cluster,
           o_head, o_tail, o_next, due_t, due_k, due_j, wake_t, wake_k, wake_j, status, end_time,
           cancelled_queued, ints):
    """``Conservative._place``: reserve at the earliest start over its clusters, or cancel; returns whether
    the job left the queue."""
    best_time, best_cluster = np.inf, -1
    for k in range(cand_ptr[job], cand_ptr[job + 1]):
        c = cand_idx[k]
        start = _earliest(c, now, procs[job], est[job], pt, pf, p_lo, p_hi)
        if not np.isnan(start) and (best_cluster < 0 or start < best_time):
            best_time, best_cluster = start, c
    if best_cluster < 0:
        status[job] = CANCELLED
        end_time[job] = now
        cancelled_queued[job] = True
        ints[QUEUE_LENGTH] -= 1
        ints[DONE] += 1
        return True
    _reserve(best_cluster, best_time, best_time + est[job], procs[job], pt, pf, p_lo, p_hi)
    o_next[job] = -1
    if o_tail[best_cluster] >= 0:
        o_next[o_tail[best_cluster]] = job
    else:
        o_head[best_cluster] = job
    o_tail[best_cluster] = job
    res_start[job], res_cluster[job] = best_time, best_cluster
    ints[DUE] = heap_push(due_t, due_k, due_j, ints[DUE], best_time, job, job)
    ints[WAKES] = heap_push(wake_t, wake_k, wake_j, ints[WAKES], best_time, 0, 0)
    return False


@njit(cache=True)
def run_cons(submit, run, est, procs, cand_ptr, cand_idx, total, job_at, refused,
             free, run_end, run_job, run_count, heap_t, heap_k, heap_j,
             pt, pf, p_lo, p_hi, res_start, res_cluster, o_head, o_tail, o_next, replan,
             due_t, due_k, due_j, wake_t, wake_k, wake_j,
             start_time, end_time, status, cluster_of, start_rank, cancelled_queued,
             samples, heads, changed, before, ints, done_target):
    """Handle instants until every event is done (``ALL_DONE``); pause after an instant once ``ints[DONE] >=
    done_target`` or a buffer may not hold one more (``PAUSED``), or before one the heaps or profiles may
    not hold (``GROW``)."""
    n = len(submit)
    clusters = len(total)
    while True:
        nxt = ints[NEXT]
        if ints[HEAP] == 0 and nxt >= n and ints[WAKES] == 0:
            return ALL_DONE
        if ints[SAMPLES] + clusters + 1 > samples.shape[0] or ints[HEADS] + 1 > heads.shape[0]:
            return PAUSED
        now = np.inf
        if ints[HEAP] > 0:
            now = heap_t[0]
        if nxt < n and submit[job_at[nxt]] < now:
            now = submit[job_at[nxt]]
        if ints[WAKES] > 0 and wake_t[0] < now:
            now = wake_t[0]
        # Room for this instant: each arrival is placed once, and each completion at most re-plans every job
        # waiting (each push on the due and wake-up heaps, two breakpoints in a profile, is one placement).
        arriving = 0
        while nxt + arriving < n and submit[job_at[nxt + arriving]] == now:
            arriving += 1
        placements = (ints[QUEUE_LENGTH] + arriving + 1) * (1 + _ends_at(heap_t, ints[HEAP], now))
        if ints[DUE] + placements > len(due_t) or ints[WAKES] + placements > len(wake_t):
            return GROW
        for c in range(clusters):
            if p_hi[c] - p_lo[c] + run_count[c] + 2 * placements + 2 > pt.shape[1]:
                return GROW
        touched = False
        for c in range(clusters):
            changed[c] = False
        # Completions, in the order their events were pushed; one ending early re-plans its cluster.
        while ints[HEAP] > 0 and heap_t[0] == now:
            job = heap_j[0]
            ints[HEAP] = heap_pop(heap_t, heap_k, heap_j, ints[HEAP])
            c, early = finish_job(job, now, procs, est, free, run_end, run_job, run_count, start_time, end_time,
                                  status, cluster_of, ints)
            changed[c] = True
            if early:   # Conservative._rebackfill
                count = 0
                other = o_head[c]
                while other >= 0:
                    if res_cluster[other] == c and status[other] == WAITING:
                        replan[count] = other
                        count += 1
                    other = o_next[other]
                o_head[c], o_tail[c] = -1, -1
                _fresh(c, now, free, run_end, run_job, run_count, procs, pt, pf, p_lo, p_hi)
                for i in range(count):
                    res_cluster[replan[i]] = -1
                for i in range(count):
                    touched |= _place(replan[i], now, procs, est, cand_ptr, cand_idx, pt, pf, p_lo, p_hi,
                                      res_start, res_cluster, o_head, o_tail, o_next, due_t, due_k, due_j,
                                      wake_t, wake_k, wake_j, status, end_time, cancelled_queued, ints)
        # Arrivals.
        while nxt < n and submit[job_at[nxt]] == now:
            job = job_at[nxt]
            ints[QUEUE_LENGTH] += 1
            if refused[job]:
                refuse_on_arrival(job, now, status, end_time, ints)
            else:
                touched = True
                _place(job, now, procs, est, cand_ptr, cand_idx, pt, pf, p_lo, p_hi, res_start, res_cluster,
                       o_head, o_tail, o_next, due_t, due_k, due_j, wake_t, wake_k, wake_j, status, end_time,
                       cancelled_queued, ints)
            nxt += 1
        ints[NEXT] = nxt
        # Wake-ups at this instant (set by reservations; they only make it an instant).
        while ints[WAKES] > 0 and wake_t[0] <= now:
            ints[WAKES] = heap_pop(wake_t, wake_k, wake_j, ints[WAKES])
        for c in range(clusters):
            before[c] = free[c]
        # The pass (Conservative.schedule): start every job whose reservation is due, in (start, job) order.
        while ints[DUE] > 0 and due_t[0] <= now:
            start, job = due_t[0], due_j[0]
            ints[DUE] = heap_pop(due_t, due_k, due_j, ints[DUE])
            if status[job] != WAITING or res_cluster[job] < 0 or res_start[job] != start:
                continue   # started, cancelled or re-planned since
            c = res_cluster[job]
            res_cluster[job] = -1
            start_job(job, c, now, procs, est, run, free, run_end, run_job, run_count, heap_t, heap_k, heap_j,
                      start_time, end_time, status, cluster_of, start_rank, ints)
            touched = True
        record_instant(now, touched, nxt, job_at, status, total, free, changed, before, samples, heads, ints)
        if ints[DONE] >= done_target:
            return PAUSED
