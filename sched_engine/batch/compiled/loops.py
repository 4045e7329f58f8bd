"""A compiled run from end to end: the arrays a loop needs, calling it until it is done, filling the simulation.

Both loops (:mod:`.easy_kernel`, :mod:`.cons_kernel`) stop now and then:
to report progress (every 1% of the jobs), to have their sample and head
buffers emptied, and, Conservative's, to get more room for its heaps and
profiles. Their state lives in the arrays built here, so each call goes on
where the last one stopped.
"""

from __future__ import annotations

from time import process_time

import numpy as np

from ..cluster import cluster_sets
from . import cons_kernel, easy_kernel, parts
from .reasons import exact_places
from .replay import easy_places, hold_machines

NO_SUITABLE_CLUSTER = "no suitable cluster"   # BatchSimulation's reason for a job no cluster can hold
NO_RESERVATION = "no reservation possible on the machines that are up"   # .policies.queue
BUFFER_ROWS = 1 << 16   # timeline samples and heads per pause


def run_loop(sim) -> None:
    """Run ``sim`` on the compiled loop of its policy (EASY or Conservative) and fill its lists."""
    from ..policies.easy import EASY
    started = process_time()
    n = len(sim.submit)
    submit = np.asarray(sim.submit, dtype=float)
    run = np.asarray(sim.run_time, dtype=float)
    est = np.asarray(sim.planned, dtype=float)
    procs = np.asarray(sim.procs, dtype=np.int64)
    count = len(sim.clusters)
    total = np.array([c.total for c in sim.clusters], dtype=np.int64)
    cand_ptr, cand_idx, capacity = candidate_arrays(sim.candidates, total)
    refused = procs > capacity   # no cluster it may use can hold it: cancelled as it arrives
    job_at = np.argsort(submit, kind="stable").astype(np.int64)   # arrival order: submission time, then index
    cap = n if n == 0 or procs.min() < 1 else int(min(n, max(total.max(), 1)))   # running jobs per cluster
    out = dict(start_time=np.full(n, np.nan), end_time=np.full(n, np.nan), status=np.zeros(n, dtype=np.int64),
               cluster_of=np.full(n, -1, dtype=np.int64), start_rank=np.full(n, -1, dtype=np.int64),
               cancelled_queued=np.zeros(n, dtype=bool))
    samples, heads = np.empty((BUFFER_ROWS + count + 1, 4)), np.empty((BUFFER_ROWS, 2))
    running = (total.copy(), np.empty((count, cap + 1)), np.empty((count, cap + 1), dtype=np.int64),
               np.zeros(count, dtype=np.int64), np.empty(max(n, 1)), np.empty(max(n, 1), dtype=np.int64),
               np.empty(max(n, 1), dtype=np.int64))
    record = (samples, heads, np.zeros(count, dtype=bool), np.zeros(count, dtype=np.int64))
    outputs = (out["start_time"], out["end_time"], out["status"], out["cluster_of"], out["start_rank"])
    if type(sim.policy) is EASY:
        loop = _EasyLoop(submit, run, est, procs, cand_ptr, cand_idx, total, job_at, refused, running, outputs,
                         record)
    else:
        loop = _ConsLoop(submit, run, est, procs, cand_ptr, cand_idx, total, job_at, refused, running, outputs,
                         out["cancelled_queued"], record)
    sample_parts = [np.array([(0.0, c, 0, total[c]) for c in range(count)], dtype=float).reshape(-1, 4)]
    head_parts = []
    ints = loop.ints
    step = max(n // 100, 1)
    while True:
        code = loop.call(min(n, int(ints[parts.DONE]) + step))
        sample_parts.append(samples[: ints[parts.SAMPLES]].copy())
        head_parts.append(heads[: ints[parts.HEADS]].copy())
        ints[parts.SAMPLES] = ints[parts.HEADS] = 0
        sim.progress.update(int(ints[parts.DONE]))
        if code == parts.ALL_DONE:
            break
        if code == cons_kernel.GROW:
            loop.grow()
    start_time, end_time = out["start_time"], out["end_time"]
    sim.start_time, sim.end_time = start_time.tolist(), end_time.tolist()
    sim.status, sim.cluster_of = out["status"].tolist(), out["cluster_of"].tolist()
    for job in np.flatnonzero(refused).tolist():
        sim.reason[job] = sim.unsuitable.get(job, NO_SUITABLE_CLUSTER)
    for job in np.flatnonzero(out["cancelled_queued"]).tolist():
        sim.reason[job] = NO_RESERVATION
    sim.queue_length, sim.done = int(ints[parts.QUEUE_LENGTH]), int(ints[parts.DONE])
    sim.samples = np.concatenate(sample_parts)
    hold_machines(sim, run, start_time, end_time, out["start_rank"])
    if sim.record_pending:
        heads = np.concatenate(head_parts)
        places = easy_places(submit, start_time, end_time, refused, heads)
        sim.pending_heads, sim.pending_rows = heads, places
        sim.exact_reasons = lambda finished: exact_places(finished, places, heads)   # no cycle through sim
    sim.scheduler_seconds += process_time() - started   # the whole loop is the policy's work here
    sim.progress.finish()


class _EasyLoop:
    """EASY's arrays: the queue's positions by size and a min segment tree of estimates per size."""

    def __init__(self, submit, run, est, procs, cand_ptr, cand_idx, total, job_at, refused, running, outputs,
                 record):
        n = len(submit)
        q_procs = procs[job_at]
        sizes, b_of = np.unique(q_procs, return_inverse=True)
        b_pos = np.argsort(q_procs, kind="stable").astype(np.int64)   # each size's positions, ascending
        b_len = np.bincount(b_of, minlength=len(sizes)).astype(np.int64)
        b_start = (np.cumsum(b_len) - b_len).astype(np.int64)
        b_of = b_of.astype(np.int64)
        b_idx = np.empty(n, dtype=np.int64)   # each position's index within its size's segment
        b_idx[b_pos] = np.arange(n, dtype=np.int64) - b_start[b_of[b_pos]]
        t_size = np.array([1 << max(int(length) - 1, 0).bit_length() for length in b_len], dtype=np.int64)
        t_off = (np.cumsum(2 * t_size) - 2 * t_size).astype(np.int64)
        self.arrays = (submit, run, est, procs, cand_ptr, cand_idx, total, job_at, est[job_at], refused,
                       sizes.astype(np.int64), b_start, b_len, b_of, b_idx, b_pos, t_off, t_size,
                       np.full(int(2 * t_size.sum()), np.inf), np.zeros(n, dtype=bool), *running, *outputs,
                       *record)
        self.ints = np.zeros(easy_kernel.N_INTS, dtype=np.int64)
        self.ints[[easy_kernel.RES_CLUSTER, easy_kernel.RESERVED, parts.LAST_HEAD]] = -1
        self.ints[[easy_kernel.CHANGED, easy_kernel.STALE]] = 1   # QueuePolicy.bind / EASY.bind
        self.floats = np.zeros(easy_kernel.N_FLOATS)

    def call(self, done_target: int) -> int:
        return easy_kernel.run_easy(*self.arrays, self.ints, self.floats, done_target)


class _ConsLoop:
    """Conservative's arrays: a profile per cluster, reservations, each cluster's reserved jobs, due and
    wake-up heaps (grown on demand)."""

    def __init__(self, submit, run, est, procs, cand_ptr, cand_idx, total, job_at, refused, running, outputs,
                 cancelled_queued, record):
        n, count = len(submit), len(total)
        self.head = (submit, run, est, procs, cand_ptr, cand_idx, total, job_at, refused, *running)
        width = 2 * n + 16
        self.profiles = [np.empty((count, width)), np.empty((count, width), dtype=np.int64),
                         np.zeros(count, dtype=np.int64), np.ones(count, dtype=np.int64)]
        self.profiles[0][:, 0], self.profiles[1][:, 0] = 0.0, total   # Conservative.bind: all free from 0
        self.plans = (np.full(n, np.nan), np.full(n, -1, dtype=np.int64), np.full(count, -1, dtype=np.int64),
                      np.full(count, -1, dtype=np.int64), np.full(n, -1, dtype=np.int64),
                      np.empty(n, dtype=np.int64))
        self.heaps = [np.empty(width), np.empty(width, dtype=np.int64), np.empty(width, dtype=np.int64),
                      np.empty(width), np.empty(width, dtype=np.int64), np.empty(width, dtype=np.int64)]
        self.tail = (*outputs, cancelled_queued, *record)
        self.ints = np.zeros(cons_kernel.N_INTS, dtype=np.int64)
        self.ints[parts.LAST_HEAD] = -1

    def call(self, done_target: int) -> int:
        return cons_kernel.run_cons(*self.head, *self.profiles, *self.plans, *self.heaps, *self.tail, self.ints,
                                    done_target)

    def grow(self) -> None:
        """Twice the room for the heaps and the profiles, contents kept."""
        for index, array in enumerate(self.heaps):
            grown = np.empty(2 * len(array), dtype=array.dtype)
            grown[: len(array)] = array
            self.heaps[index] = grown
        for index in (0, 1):
            array = self.profiles[index]
            grown = np.empty((array.shape[0], 2 * array.shape[1]), dtype=array.dtype)
            grown[:, : array.shape[1]] = array
            self.profiles[index] = grown


def candidate_arrays(candidates, total: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each job's clusters as CSR arrays (pointers, cluster indices in preference order) and the CPUs of the
    largest of them (-1 for a job with none)."""
    shape_of_job, shapes = cluster_sets(candidates)
    lengths = np.array([len(s) for s in shapes], dtype=np.int64)[shape_of_job]
    cand_ptr = np.zeros(len(candidates) + 1, dtype=np.int64)
    np.cumsum(lengths, out=cand_ptr[1:])
    shape_flat = np.array([c for s in shapes for c in s], dtype=np.int64)
    shape_start = np.cumsum([0] + [len(s) for s in shapes])[:-1].astype(np.int64)
    # cand_idx[cand_ptr[j] + i] = shape_flat[shape_start[shape of j] + i]
    offset = np.repeat(shape_start[shape_of_job] - cand_ptr[:-1], lengths)
    cand_idx = shape_flat[offset + np.arange(int(cand_ptr[-1]), dtype=np.int64)] if len(shape_flat) else \
        np.empty(0, dtype=np.int64)
    largest = np.array([max((int(total[c]) for c in s), default=-1) for s in shapes], dtype=np.int64)
    return cand_ptr, cand_idx, largest[shape_of_job]
