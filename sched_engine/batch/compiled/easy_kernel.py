"""EASY backfilling on CPU-only clusters that never fail, compiled: the same decisions as the Python kernel.

This is :class:`~sched_engine.batch.policies.easy.EASY` on
:class:`~sched_engine.batch.simulate.BatchSimulation`, written once more as
one numba loop over arrays, for the configuration that most real logs run
under (no machine failures, queue ranks, per-user limits, memory or
observers; :func:`sched_engine.batch.compiled.eligible` says when). The
Python classes stay the reference: ``tests/test_compiled_kernel.py`` checks
that both give the same starts, ends, clusters, samples and reasons on
random traces and on the samples.

The queue is static: every job has a *position*, its rank in arrival order
(submission time, then index: the order the event heap hands out arrivals);
a position is live from the instant its job arrives until it starts (the
Python queue's list with lazy deletion, never compacted, so positions never
move). Each distinct size (CPUs) keeps its positions ascending in one
segment of ``b_pos`` (EASY's buckets) and a min segment tree over them
(:mod:`.segment`) whose leaf is the job's estimate while it waits and
infinity otherwise, so the first waiting job of a size after a position
with an estimate at most a limit is found in ``O(log n)``.

Every rule mirrors a line of the Python classes, named in the comments:
the instant (completions, then arrivals, then one pass, ``BatchSimulation``),
the pass (``EASY.schedule``), the heads (``QueuePolicy._start_heads``), the
reservation (``ClusterState.shadow``) and the backfill
(``EASY._backfill``, ``EASY._first_candidate``, ``Positions.first``).

State lives in arrays the caller owns (:mod:`.easy_state`), so a call can
stop after an instant and resume: the caller reports progress and empties
the sample and head buffers in between.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .parts import (
    ALL_DONE,
    DONE,
    HEAD,
    HEADS,
    HEAP,
    N_COMMON,
    NEXT,
    PAUSED,
    QUEUE_LENGTH,
    SAMPLES,
    finish_job,
    heap_pop,
    record_instant,
    refuse_on_arrival,
    start_job,
)
from .segment import first_at_most, set_leaf

# Scalar state: the loops' common ints (:mod:`.parts`), then EASY's reservation; its shadow time in ``floats``.
RES_VALID, RES_CLUSTER, EXTRA, RESERVED, STALE, CHANGED, N_INTS = range(N_COMMON, N_COMMON + 7)
SHADOW, N_FLOATS = range(2)
# A leaf at most this is a waiting job (its estimate, finite); a job not arrived yet or gone has infinity.
WAITS = np.finfo(np.float64).max


@njit(cache=True)
def _shadow(c, need, free, total, run_end, run_job, count, procs, out):
    """``ClusterState.shadow``: ``out[0]`` the shadow time, ``out[1]`` the extra CPUs; False if it never fits."""
    if need > total[c]:
        return False
    available = free[c]
    if available >= need:
        out[0] = -np.inf
        out[1] = available - need
        return True
    n = count[c]
    for position in range(n):
        available += procs[run_job[c, position]]
        if available >= need:
            est_end = run_end[c, position]
            for later in range(position + 1, n):   # every job ending at the shadow time frees its CPUs then
                if run_end[c, later] != est_end:
                    break
                available += procs[run_job[c, later]]
            out[0] = est_end
            out[1] = available - need
            return True
    return False


@njit(cache=True)
def _enter(position, value, b_of, b_idx, t_off, t_size, tree):
    """Set a position's leaf in its size's tree: its estimate while it waits, infinity otherwise."""
    b = b_of[position]
    set_leaf(tree, t_off[b], t_size[b], b_idx[position], value)


@njit(cache=True)
def _bucket_first(b, low, before, limit, check_length, b_start, b_len, b_pos, t_off, t_size, tree, rights):
    """``Positions.first``: the first waiting position in ``[low, before)`` (``before`` < 0: no bound) of the
    jobs of size ``sizes[b]`` whose estimate is at most ``limit`` if ``check_length``, or -1."""
    bound = limit if check_length else WAITS
    if tree[t_off[b] + 1] > bound:   # the root: no job of this size waits (with an estimate within the limit)
        return -1
    start, stop = b_start[b], b_start[b] + b_len[b]
    lo = start + np.searchsorted(b_pos[start:stop], low)
    hi = stop if before < 0 else start + np.searchsorted(b_pos[start:stop], before)
    if lo >= hi:
        return -1
    leaf = first_at_most(tree, t_off[b], t_size[b], lo - start, hi - start, bound, rights)
    return -1 if leaf < 0 else b_pos[start + leaf]


@njit(cache=True)
def run_easy(submit, run, est, procs, cand_ptr, cand_idx, total, job_at, q_est, refused,
             sizes, b_start, b_len, b_of, b_idx, b_pos, t_off, t_size, tree, gone,
             free, run_end, run_job, run_count, heap_t, heap_k, heap_j,
             start_time, end_time, status, cluster_of, start_rank,
             samples, heads, changed, before, ints, floats, done_target):
    """Handle instants until every event is done (``ALL_DONE``), or pause (``PAUSED``) after an instant once
    ``ints[DONE] >= done_target`` or a buffer (``samples``, ``heads``) may not hold one more instant."""
    n = len(submit)
    clusters = len(total)
    shadow_out = np.empty(2)
    while True:
        nxt = ints[NEXT]
        if ints[HEAP] == 0 and nxt >= n:
            return ALL_DONE
        if ints[SAMPLES] + clusters + 1 > samples.shape[0] or ints[HEADS] + 1 > heads.shape[0]:
            return PAUSED
        now = np.inf
        if ints[HEAP] > 0:
            now = heap_t[0]
        if nxt < n and submit[job_at[nxt]] < now:
            now = submit[job_at[nxt]]
        touched = False   # a job entered or left the queue (the pending recorder looks at the pass)
        for c in range(clusters):
            changed[c] = False
        # Completions (BatchSimulation._end, then EASY.job_ended).
        while ints[HEAP] > 0 and heap_t[0] == now:
            job = heap_j[0]
            ints[HEAP] = heap_pop(heap_t, heap_k, heap_j, ints[HEAP])
            c, early = finish_job(job, now, procs, est, free, run_end, run_job, run_count, start_time, end_time,
                                  status, cluster_of, ints)
            changed[c] = True
            ints[CHANGED] = 1
            if early:
                ints[STALE] = 1
        # Arrivals (BatchSimulation._arrive, then QueuePolicy.arrive).
        arrived_before = nxt
        while nxt < n and submit[job_at[nxt]] == now:
            job = job_at[nxt]
            ints[QUEUE_LENGTH] += 1
            if refused[job]:
                gone[nxt] = True
                refuse_on_arrival(job, now, status, end_time, ints)
            else:
                _enter(nxt, q_est[nxt], b_of, b_idx, t_off, t_size, tree)
                touched = True
            nxt += 1
        ints[NEXT] = nxt
        for c in range(clusters):
            before[c] = free[c]
        touched |= _pass(now, arrived_before, nxt, procs, est, run, cand_ptr, cand_idx, total, job_at, q_est,
                         sizes, b_start, b_len, b_of, b_idx, b_pos, t_off, t_size, tree, gone, free, run_end,
                         run_job, run_count, heap_t, heap_k, heap_j, start_time, end_time, status, cluster_of,
                         start_rank, ints, floats, shadow_out)
        record_instant(now, touched, nxt, job_at, status, total, free, changed, before, samples, heads, ints)
        if ints[DONE] >= done_target:
            return PAUSED


@njit(cache=True)
def _pass(now, arrived_before, arrived, procs, est, run, cand_ptr, cand_idx, total, job_at, q_est,
          sizes, b_start, b_len, b_of, b_idx, b_pos, t_off, t_size, tree, gone, free, run_end, run_job,
          run_count, heap_t, heap_k, heap_j, start_time, end_time, status, cluster_of, start_rank, ints, floats, shadow_out):
    """``EASY.schedule``: start the heads, keep or make the head's reservation, backfill; returns whether a
    job left the queue."""
    left = False
    head = ints[HEAD]
    while head < arrived and gone[head]:
        head += 1
    ints[HEAD] = head
    if ints[CHANGED] or not ints[RES_VALID] or head >= arrived_before:
        # QueuePolicy._start_heads: start the oldest job while it fits (first fitting cluster in preference order).
        while True:
            head = ints[HEAD]
            while head < arrived and gone[head]:
                head += 1
            ints[HEAD] = head
            if head >= arrived:
                break
            job = job_at[head]
            chosen = -1
            for k in range(cand_ptr[job], cand_ptr[job + 1]):
                if free[cand_idx[k]] >= procs[job]:
                    chosen = cand_idx[k]
                    break
            if chosen < 0:
                break
            start_job(job, chosen, now, procs, est, run, free, run_end, run_job, run_count, heap_t, heap_k, heap_j,
                   start_time, end_time, status, cluster_of, start_rank, ints)
            gone[head] = True
            _enter(head, np.inf, b_of, b_idx, t_off, t_size, tree)
            left = True
        top = ints[HEAD]
        if top < arrived and (ints[STALE] or job_at[top] != ints[RESERVED]):
            ints[RES_VALID] = 0
        if top < arrived and not ints[RES_VALID]:
            job = job_at[top]
            best_time, best_cluster, best_extra = np.inf, -1, 0
            for k in range(cand_ptr[job], cand_ptr[job + 1]):
                c = cand_idx[k]
                if _shadow(c, procs[job], free, total, run_end, run_job, run_count, procs, shadow_out):
                    if best_cluster < 0 or shadow_out[0] < best_time:
                        best_time, best_cluster, best_extra = shadow_out[0], c, int(shadow_out[1])
            if best_cluster < 0:
                # Never reached without failures: a job no up machine can hold was cancelled as it arrived.
                raise RuntimeError("EASY kernel: no reservation possible on clusters that never fail")
            floats[SHADOW] = best_time
            ints[RES_CLUSTER] = best_cluster
            ints[EXTRA] = best_extra
            ints[RESERVED] = job
            ints[STALE] = 0
            ints[RES_VALID] = 1
        if top >= arrived:
            ints[RES_VALID] = 0
        low = top + 1
    else:
        # Nothing freed since the last pass: only the newcomers are candidates.
        low = arrived_before
    ints[CHANGED] = 0
    if ints[RES_VALID] and low < arrived:
        left |= _backfill(low, now, arrived, procs, est, run, cand_ptr, cand_idx, job_at, q_est, sizes,
                          b_start, b_len, b_of, b_idx, b_pos, t_off, t_size, tree, gone, free, run_end,
                          run_job, run_count,
                          heap_t, heap_k, heap_j, start_time, end_time, status, cluster_of, start_rank, ints, floats)
    return left


@njit(cache=True)
def _backfill(low, now, arrived, procs, est, run, cand_ptr, cand_idx, job_at, q_est, sizes,
              b_start, b_len, b_of, b_idx, b_pos, t_off, t_size, tree, gone, free, run_end, run_job,
              run_count,
              heap_t, heap_k, heap_j, start_time, end_time, status, cluster_of, start_rank, ints, floats):
    """``EASY._backfill``: start, in queue order, every job after the head that fits now and spares the
    reservation (ends by the shadow time, fits the extra CPUs, or runs on another cluster)."""
    shadow, reserved_cluster, extra = floats[SHADOW], ints[RES_CLUSTER], ints[EXTRA]
    clusters = len(free)
    rights = np.empty(64, dtype=np.int64)
    position = low
    left = False
    while position < arrived:
        max_free, max_free_other = 0, 0
        for c in range(clusters):
            if free[c] > max_free:
                max_free = free[c]
            if c != reserved_cluster and free[c] > max_free_other:
                max_free_other = free[c]
        if max_free == 0:
            break
        any_length = extra if extra > max_free_other else max_free_other
        limit = shadow - now
        # EASY._first_candidate: the first live position at or after ``position`` over the sizes that fit.
        best = -1
        for b in range(len(sizes)):
            if sizes[b] > max_free:
                break
            found = _bucket_first(b, position, best, limit, sizes[b] > any_length, b_start, b_len, b_pos,
                                  t_off, t_size, tree, rights)
            if found >= 0:
                best = found
        if best < 0:
            break
        position = best
        job = job_at[position]
        need = procs[job]
        ends_by_shadow = now + est[job] <= shadow
        for k in range(cand_ptr[job], cand_ptr[job + 1]):
            c = cand_idx[k]
            if free[c] < need:
                continue
            if c == reserved_cluster and not ends_by_shadow:
                if need > extra:
                    continue
                extra -= need
            start_job(job, c, now, procs, est, run, free, run_end, run_job, run_count, heap_t, heap_k, heap_j,
                   start_time, end_time, status, cluster_of, start_rank, ints)
            gone[position] = True
            _enter(position, np.inf, b_of, b_idx, t_off, t_size, tree)
            left = True
            break
        position += 1
    ints[EXTRA] = extra
    return left
