"""The batch kernel's compiled loops: when a run may take them, and running them on a :class:`BatchSimulation`.

A compiled loop is the Python kernel's decisions, made by numba code over
arrays (:mod:`.easy_kernel`); it fills the simulation's lists as the event
loop does (start and end times, statuses, clusters, machines, timeline
samples, the pending recorder's places and heads), so every frame is built
from it by the same code. The Python kernel stays the reference and the
only path for everything else (failures, queue ranks, user limits, memory,
observers, other policies): :func:`eligible` says which runs are which.

``kernel`` (a :class:`BatchSimulation` argument, or the ``SCHEDSCOPE_KERNEL``
environment variable for the command line and benchmarks): ``"auto"`` takes
the compiled loop for an eligible run of at least :data:`MIN_JOBS` jobs (a
smaller run finishes before numba would have loaded), ``"compiled"`` for
every eligible run, ``"python"`` never.
"""

from __future__ import annotations

import gc
import math
import os
from time import process_time

import numpy as np

from ..cluster import ClusterState
from .reasons import exact_places
from .replay import easy_places
from .replay import hold_machines as _hold_machines

NO_SUITABLE_CLUSTER = "no suitable cluster"   # BatchSimulation's reason for a job no cluster can hold

MIN_JOBS = 5_000
KERNELS = ("auto", "compiled", "python")
_BUFFER_ROWS = 1 << 16   # timeline samples and heads per pause (the kernel stops to have them emptied)


def chosen_kernel(kernel: str | None) -> str:
    kernel = kernel or os.environ.get("SCHEDSCOPE_KERNEL", "auto")
    if kernel not in KERNELS:
        raise ValueError(f"kernel {kernel!r}: one of {', '.join(KERNELS)}")
    return kernel


def eligible(sim, kernel: str) -> bool:
    """Whether ``sim`` runs on a compiled loop: EASY on CPU-only clusters that never fail, without queue
    ranks, user limits, observers, memory or a decision log (and numba installed)."""
    if kernel == "python" or (kernel == "auto" and len(sim.submit) < MIN_JOBS):
        return False
    from ..policies.easy import EASY
    if type(sim.policy) is not EASY:
        return False
    plain = (not sim._failures and sim.rank is None and sim.limits is None and sim.best_effort is None
             and not sim.observers and sim.memory_per_cpu is None and sim.stretch is None
             and sim.decision_log is None and all(type(c) is ClusterState for c in sim.clusters))
    if not plain or (sim.submit and min(sim.submit) < 0):   # the event loop refuses a negative time itself
        return False
    if not all(map(math.isfinite, sim.planned)):   # the kernel's size trees hold estimates, infinity for "gone"
        return False
    try:
        from . import easy_kernel  # noqa: F401  (numba, and the kernel compiled or loaded from its cache)
    except ImportError:
        return False
    return True


def run_easy(sim) -> None:
    """Run ``sim`` (eligible, policy bound) on the compiled EASY loop and fill its lists.

    The cyclic garbage collector is paused meanwhile: the lists filled here
    hold millions of numbers and no cycle, and each collection would walk
    them all again.
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        _run_easy(sim)
    finally:
        if collecting:
            gc.enable()


def _run_easy(sim) -> None:
    from . import easy_kernel as k
    started = process_time()
    n = len(sim.submit)
    submit = np.asarray(sim.submit, dtype=float)
    run = np.asarray(sim.run_time, dtype=float)
    est = np.asarray(sim.planned, dtype=float)
    procs = np.asarray(sim.procs, dtype=np.int64)
    clusters = sim.clusters
    count = len(clusters)
    total = np.array([c.total for c in clusters], dtype=np.int64)
    cand_ptr, cand_idx, capacity = _candidates(sim.candidates, total)
    refused = procs > capacity   # no cluster it may use can hold it: cancelled as it arrives
    job_at = np.argsort(submit, kind="stable").astype(np.int64)   # arrival order: submission time, then index
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
    cap = n if n == 0 or procs.min() < 1 else int(min(n, max(total.max(), 1)))   # running jobs per cluster
    start_time, end_time = np.full(n, np.nan), np.full(n, np.nan)
    status = np.zeros(n, dtype=np.int64)
    cluster_of, start_rank = np.full(n, -1, dtype=np.int64), np.full(n, -1, dtype=np.int64)
    samples, heads = np.empty((_BUFFER_ROWS + count + 1, 4)), np.empty((_BUFFER_ROWS, 2))
    arrays = (
        submit, run, est, procs, cand_ptr, cand_idx, total, job_at, est[job_at], refused,
        sizes.astype(np.int64), b_start, b_len, b_of, b_idx, b_pos, t_off, t_size,
        np.full(int(2 * t_size.sum()), np.inf), np.zeros(n, dtype=bool),
        total.copy(), np.empty((count, cap + 1)), np.empty((count, cap + 1), dtype=np.int64),
        np.zeros(count, dtype=np.int64), np.empty(max(n, 1)), np.empty(max(n, 1), dtype=np.int64),
        np.empty(max(n, 1), dtype=np.int64),
        start_time, end_time, status, cluster_of, start_rank,
        samples, heads, np.zeros(count, dtype=bool), np.zeros(count, dtype=np.int64),
    )
    ints = np.zeros(k.N_INTS, dtype=np.int64)
    ints[[k.RES_CLUSTER, k.RESERVED, k.LAST_HEAD]] = -1
    ints[[k.CHANGED, k.STALE]] = 1          # QueuePolicy.bind / EASY.bind
    floats = np.zeros(k.N_FLOATS)
    sample_parts = [np.array([(0.0, c, 0, total[c]) for c in range(count)], dtype=float).reshape(-1, 4)]
    head_parts = []
    step = max(n // 100, 1)
    while True:
        code = k.run_easy(*arrays, ints, floats, min(n, int(ints[k.DONE]) + step))
        sample_parts.append(samples[: ints[k.SAMPLES]].copy())
        head_parts.append(heads[: ints[k.HEADS]].copy())
        ints[k.SAMPLES] = ints[k.HEADS] = 0
        sim.progress.update(int(ints[k.DONE]))
        if code == k.ALL_DONE:
            break
    sim.start_time, sim.end_time = start_time.tolist(), end_time.tolist()
    sim.status, sim.cluster_of = status.tolist(), cluster_of.tolist()
    for job in np.flatnonzero(refused).tolist():
        sim.reason[job] = sim.unsuitable.get(job, NO_SUITABLE_CLUSTER)
    sim.queue_length, sim.done = int(ints[k.QUEUE_LENGTH]), int(ints[k.DONE])
    sim.samples = np.concatenate(sample_parts)
    _hold_machines(sim, run, start_time, end_time, start_rank)
    if sim.record_pending:
        heads = np.concatenate(head_parts)
        places = easy_places(submit, start_time, end_time, refused, heads)
        sim.pending_heads, sim.pending_rows = heads, places
        sim.exact_reasons = lambda: exact_places(sim, places, heads)
    sim.scheduler_seconds += process_time() - started   # the whole loop is the policy's work here
    sim.progress.finish()


def _candidates(candidates, total: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each job's clusters as CSR arrays (pointers, cluster indices in preference order) and the CPUs of the
    largest of them (-1 for a job with none)."""
    by_set: dict = {}
    for allowed in candidates:
        if allowed not in by_set:
            by_set[allowed] = len(by_set)
    shapes = list(by_set)
    shape_of_job = np.fromiter((by_set[a] for a in candidates), dtype=np.int64, count=len(candidates))
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


def warm() -> bool:
    """Load the compiled loops now (compiling them once if numba's cache has none), by running a tiny EASY run
    on them: a server does this before it forks runs, which then find them loaded. False without numba."""
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    from ..pending import exact_table
    from ..policies.easy import EASY
    from ..simulate import BatchSimulation
    sim = BatchSimulation(submit=[0.0, 0.0, 1.0], run_time=[2.0, 1.0, 1.0], estimate=[2.0, 1.0, 1.0], procs=[2, 2, 1],
                          suitable=[None] * 3, clusters=[ClusterState(0, "warm", [1, 1], 1.0)], policy=EASY(),
                          rng=np.random.default_rng(0), kernel="compiled")
    sim.run()
    exact_table(sim)
    return True
