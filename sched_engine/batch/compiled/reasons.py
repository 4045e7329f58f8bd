"""Why pending, made exact, compiled: :func:`sched_engine.batch.pending_exact.exact_rows` for a compiled run.

The rule is :mod:`..pending_exact`'s, and that module stays its reference
(``tests/test_compiled_kernel.py`` compares the two): a waiting job's place
(the oldest waiting job, or behind the oldest waiting job's reservation) is
cut at every instant it starts or stops fitting in the free CPUs of its
clusters; the pieces where it does not fit are ``resources`` (or
``requirements`` when a cluster it may not use has the room); the pieces
behind the reservation are cut again where the oldest waiting job changes,
each naming it; touching pieces of one job with one reason and blocking job
are one row.

Here each job shape (CPUs and clusters) gets its fit state as a step
series once (numpy, over every instant), and one compiled walk per place
emits its pieces in order, merging as it goes: the table comes out sorted
by job then time, with no sort of its millions of rows.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..cluster import cluster_sets
from ..pending import BEHIND_HEAD, REASONS, REQUIREMENTS, RESOURCES, ReasonColumns
from ..pending_exact import _cluster_series

FITS = -1   # a step's state while the job fits: its place's own reason
#: Rows per place the first walk makes room for (full RICC: 60 under EASY, 149 under Conservative; a place
#: behind the oldest waiting job is cut at every change of that job and of whether it fits).
ROWS_PER_PLACE_GUESS = 160


def exact_places(sim, places: np.ndarray, heads: np.ndarray) -> ReasonColumns:
    """The reasons of ``places`` as columns (sorted by job, then time), split exactly.

    ``places``: the run's places of its two kinds, the oldest waiting job
    (``priority``, no blocking job) and behind it (``reservation``,
    ``BEHIND_HEAD``); ``heads``: ``(time, oldest waiting job)`` at each pass
    it changed. Clusters never fail in a compiled run.
    """
    if not len(places):
        return ReasonColumns(*_columns(0))
    places = places[np.lexsort((places[:, 1], places[:, 0]))]
    times, free, _ = _cluster_series(sim)
    jobs = places[:, 0].astype(np.int64)
    shape_list, shape_of_place = _shapes(sim, jobs)
    shapes = len(shape_list)
    first_begin, last_end = np.full(shapes, np.inf), np.full(shapes, -np.inf)
    np.minimum.at(first_begin, shape_of_place, places[:, 1])
    np.maximum.at(last_end, shape_of_place, places[:, 2])
    step_ptr, step_time, step_state = _fit_steps(shape_list, times, free, first_begin, last_end)
    head_time, head_job = heads[:, 0].copy(), heads[:, 1].astype(np.int64)
    args = (jobs, places[:, 1].copy(), places[:, 2].copy(), places[:, 3].astype(np.int64),
            places[:, 4].astype(np.int64), shape_of_place, step_ptr, step_time, step_state, head_time, head_job)
    # One walk into columns sized by a guess (pages never written are never held: the guess costs address
    # space, not memory); a second, exact one only if the guess was short.
    try:
        out = _columns(ROWS_PER_PLACE_GUESS * len(places))
    except MemoryError:   # more address space than the machine allows at once: count first
        out = _columns(0)
    count = _walk(*args, *out)
    if count > len(out[0]):
        out = None   # the short columns go before the exact ones are made
        out = _columns(count)
        _walk(*args, *out)
    return ReasonColumns(*(column[:count] for column in out))


def _shapes(sim, jobs: np.ndarray) -> tuple[list[tuple[int, tuple]], np.ndarray]:
    """The distinct shapes ``(CPUs, clusters it may use)`` of ``jobs`` and each one's shape index, without a
    Python step per job (a full log's places are hundreds of thousands): each job's cluster set numbered
    (:func:`..cluster.cluster_sets`), then ``(CPUs, set)`` pairs are told apart as one integer each."""
    set_of_job, sets = cluster_sets(sim.candidates)
    procs = np.asarray(sim.procs, dtype=np.int64)[jobs]
    keys, shape_of_place = np.unique(procs * len(sets) + set_of_job[jobs], return_inverse=True)
    shape_list = [(int(key // len(sets)), sets[int(key % len(sets))]) for key in keys.tolist()]
    return shape_list, shape_of_place.astype(np.int64).reshape(-1)


def _columns(rows: int) -> tuple:
    """Empty :class:`ReasonColumns` fields of ``rows`` rows."""
    return (np.empty(rows, np.int32), np.empty(rows), np.empty(rows), np.empty(rows, np.int8),
            np.empty(rows, np.int32))


def _fit_steps(shapes: list, times: np.ndarray, free: np.ndarray, first_begin: np.ndarray, last_end: np.ndarray):
    """Per shape ``(CPUs, clusters)``, its state as steps: ``FITS``, ``resources`` or ``requirements`` from
    ``step_time[k]`` on, for ``k`` in ``step_ptr[s] : step_ptr[s + 1]``, over the span of the shape's places
    (``first_begin[s]`` to ``last_end[s]``; the first step at or before its beginning)."""
    count = free.shape[0]
    resources, requirements = REASONS.index(RESOURCES), REASONS.index(REQUIREMENTS)
    ptr, step_times, step_states = [0], [], []
    for shape, (need, allowed) in enumerate(shapes):
        lo = max(int(np.searchsorted(times, first_begin[shape], side="right")) - 1, 0)
        hi = max(int(np.searchsorted(times, last_end[shape], side="left")), lo + 1)
        span = free[:, lo:hi]
        allowed = np.array(allowed, dtype=np.int64)
        fits = (span[allowed] >= need).any(axis=0)
        state = np.where(fits, FITS, resources)
        if len(allowed) < count:
            others = np.setdiff1d(np.arange(count), allowed)
            state[~fits & (span[others] >= need).any(axis=0)] = requirements
        change = np.flatnonzero(state[1:] != state[:-1]) + 1
        starts = np.concatenate([[0], change])
        step_times.append(times[lo:hi][starts])
        step_states.append(state[starts])
        ptr.append(ptr[-1] + len(starts))
    return (np.array(ptr, dtype=np.int64), np.concatenate(step_times),
            np.concatenate(step_states).astype(np.int64))


@njit(cache=True)
def _walk(jobs, begin, end, code, blocking, shape_of, step_ptr, step_time, step_state, head_time, head_job,
          out_job, out_from, out_to, out_code, out_blocking):
    """Emit every place's pieces in order (see the module docstring); returns the number of rows (those past
    the columns' length only counted).

    A piece ``[x, w)`` of a job with a reason and blocking job lengthens the
    last row when that row is the same job's, ends at ``x`` and has the same
    reason and blocking job; otherwise it is a new row (written only if the
    columns have room). The last row's fields are kept as local scalars, not
    in an array a helper updates: a helper doing so was not inlined and made
    the walk about 4 times slower (full RICC, EASY: 1.4 s against 0.35 s for
    23 M rows).
    """
    k = 0
    size = out_job.shape[0]
    last_job, last_end, last_code, last_blocking = -1, 0.0, 0, 0
    heads = len(head_time)
    for r in range(len(jobs)):
        job, x, b = jobs[r], begin[r], end[r]
        place_code, place_blocking = code[r], blocking[r]
        lo, hi = step_ptr[shape_of[r]], step_ptr[shape_of[r] + 1]
        s = max(lo + np.searchsorted(step_time[lo:hi], x, side="right") - 1, lo)
        known = -1   # a head whose time is at most ``x`` (or the first), once one was looked up for this place
        h = -1       # in a step behind the oldest waiting job: the head its next piece names (-1: not found yet)
        while x < b:
            y = b   # the step's end, or the place's
            if s + 1 < hi and step_time[s + 1] < b:
                y = step_time[s + 1]
            state = step_state[s]
            w, reason, blocked_by = y, place_code, place_blocking
            if state != FITS:
                reason, blocked_by = state, -1
            elif place_blocking == BEHIND_HEAD:
                # Behind the oldest waiting job: the step is cut where it changes, each piece naming it. ``h``: at
                # the step's first piece, the last head at or before ``x`` (the first if none), found from the
                # place's last one (``x`` only grows); then one further for each piece.
                if h < 0:
                    h = known
                    if h >= 0:
                        steps = 0
                        while h + 1 < heads and head_time[h + 1] <= x and steps < 16:
                            h += 1
                            steps += 1
                    if h < 0 or (h + 1 < heads and head_time[h + 1] <= x):
                        h = max(np.searchsorted(head_time, x, side="right") - 1, 0)
                if h + 1 < heads and head_time[h + 1] < y:
                    w = head_time[h + 1]
                blocked_by = head_job[h]
                h += 1
            if k > 0 and last_job == job and last_end == x and last_code == reason and last_blocking == blocked_by:
                last_end = w
                if k <= size:
                    out_to[k - 1] = w
            else:
                if k < size:
                    out_job[k], out_from[k], out_to[k], out_code[k], out_blocking[k] = job, x, w, reason, blocked_by
                last_job, last_end, last_code, last_blocking = job, w, reason, blocked_by
                k += 1
            x = w
            if x >= y:   # the step is done
                s += 1
                if h >= 0:
                    known, h = h - 1, -1   # the head of its last piece: at or before ``y``
    return k
