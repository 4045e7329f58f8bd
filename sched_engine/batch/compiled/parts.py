"""Pieces both compiled loops share: the completion heap, each cluster's running jobs, starting a job.

Each mirrors the Python kernel: completions at one instant come out in the
order their events were pushed (time, then the order the jobs started: the
event heap's sequence numbers), and the running jobs are kept sorted by
estimated end, then job, as ``ClusterState.running``.
"""

from __future__ import annotations

from numba import njit

WAITING, RUNNING, FINISHED, KILLED, CANCELLED = range(5)   # BatchSimulation's status codes
# Scalar state both loops keep in their ``ints`` array (each loop's own come after N_COMMON).
NEXT, HEAD, HEAP, QUEUE_LENGTH, DONE, STARTS, SAMPLES, HEADS, LAST_HEAD, N_COMMON = range(10)
# What a call's return value says: every event handled, or stopped to report progress / empty the buffers.
ALL_DONE, PAUSED = 0, 1


@njit(cache=True)
def _less(time, key, other_time, other_key):
    return time < other_time or (time == other_time and key < other_key)


@njit(cache=True)
def heap_push(times, keys, jobs, size, time, key, job):
    """Push ``job`` keyed ``(time, key)`` on a binary heap of ``size`` entries; returns the new size."""
    position = size
    while position > 0:
        parent = (position - 1) >> 1
        if not _less(time, key, times[parent], keys[parent]):
            break
        times[position], keys[position], jobs[position] = times[parent], keys[parent], jobs[parent]
        position = parent
    times[position], keys[position], jobs[position] = time, key, job
    return size + 1


@njit(cache=True)
def heap_pop(times, keys, jobs, size):
    """Remove the top (the least ``(time, key)``) of a heap of ``size`` entries; returns the new size."""
    size -= 1
    time, key, job = times[size], keys[size], jobs[size]
    position = 0
    while True:
        child = 2 * position + 1
        if child >= size:
            break
        if child + 1 < size and _less(times[child + 1], keys[child + 1], times[child], keys[child]):
            child += 1
        if not _less(times[child], keys[child], time, key):
            break
        times[position], keys[position], jobs[position] = times[child], keys[child], jobs[child]
        position = child
    if size > 0:
        times[position], keys[position], jobs[position] = time, key, job
    return size


@njit(cache=True)
def running_insert(run_end, run_job, count, c, end, job):
    """Insert ``(end, job)`` into cluster ``c``'s running jobs, sorted as ``ClusterState.running``."""
    n = count[c]
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi) >> 1
        if run_end[c, mid] < end or (run_end[c, mid] == end and run_job[c, mid] < job):
            lo = mid + 1
        else:
            hi = mid
    for k in range(n, lo, -1):
        run_end[c, k] = run_end[c, k - 1]
        run_job[c, k] = run_job[c, k - 1]
    run_end[c, lo] = end
    run_job[c, lo] = job
    count[c] = n + 1


@njit(cache=True)
def running_remove(run_end, run_job, count, c, end, job):
    n = count[c]
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi) >> 1
        if run_end[c, mid] < end or (run_end[c, mid] == end and run_job[c, mid] < job):
            lo = mid + 1
        else:
            hi = mid
    for k in range(lo, n - 1):
        run_end[c, k] = run_end[c, k + 1]
        run_job[c, k] = run_job[c, k + 1]
    count[c] = n - 1


@njit(cache=True)
def start_job(job, c, now, procs, est, run, free, run_end, run_job, run_count, heap_t, heap_k, heap_j,
              start_time, end_time, status, cluster_of, start_rank, ints):
    """``BatchSimulation.occupy``: a zero-length job completes as it starts and holds nothing; a job's
    completion is keyed by its end, then its start rank (the order the event loop pushed completions)."""
    start_time[job] = now
    cluster_of[job] = c
    ints[QUEUE_LENGTH] -= 1
    start_rank[job] = ints[STARTS]
    ints[STARTS] += 1
    if run[job] <= 0:
        status[job] = FINISHED
        end_time[job] = now
        ints[DONE] += 1
        return
    if procs[job] > free[c]:
        raise RuntimeError("compiled loop: a job started on a cluster without its CPUs free")
    free[c] -= procs[job]
    running_insert(run_end, run_job, run_count, c, now + est[job], job)
    status[job] = RUNNING
    ints[HEAP] = heap_push(heap_t, heap_k, heap_j, ints[HEAP], now + run[job], start_rank[job], job)




@njit(cache=True)
def finish_job(job, now, procs, est, free, run_end, run_job, run_count, start_time, end_time, status, cluster_of,
               ints):
    """``BatchSimulation.finish`` of a completion: its CPUs back, its entry out of the running jobs; returns
    its cluster and whether it ended before its estimate (the policies' ``early``)."""
    c = cluster_of[job]
    planned_end = start_time[job] + est[job]
    running_remove(run_end, run_job, run_count, c, planned_end, job)
    free[c] += procs[job]
    status[job] = FINISHED
    end_time[job] = now
    ints[DONE] += 1
    return c, now < planned_end


@njit(cache=True)
def refuse_on_arrival(job, now, status, end_time, ints):
    """A job no cluster it may use can hold is cancelled as it arrives (``BatchSimulation._arrive``)."""
    status[job] = CANCELLED
    end_time[job] = now
    ints[QUEUE_LENGTH] -= 1
    ints[DONE] += 1


@njit(cache=True)
def record_instant(now, touched, arrived, job_at, status, total, free, changed, before, samples, heads, ints):
    """What the Python kernel records after an instant's pass: the pending recorder's oldest waiting job when a
    job came or went (``PendingRecorder.after_pass``), and the timeline samples of the clusters whose jobs
    changed or whose free CPUs did, then the queue's (``BatchSimulation.after_instant``)."""
    if touched:
        head = ints[HEAD]
        while head < arrived and status[job_at[head]] != WAITING:
            head += 1
        ints[HEAD] = head
        oldest = job_at[head] if head < arrived else -1
        if oldest != ints[LAST_HEAD]:
            k = ints[HEADS]
            heads[k, 0], heads[k, 1] = now, oldest
            ints[HEADS] = k + 1
            ints[LAST_HEAD] = oldest
    k = ints[SAMPLES]
    for c in range(len(total)):
        if changed[c] or free[c] != before[c]:
            samples[k, 0], samples[k, 1], samples[k, 2], samples[k, 3] = now, c, total[c] - free[c], total[c]
            k += 1
    samples[k, 0], samples[k, 1], samples[k, 2], samples[k, 3] = now, -1, ints[QUEUE_LENGTH], 0
    ints[SAMPLES] = k + 1
