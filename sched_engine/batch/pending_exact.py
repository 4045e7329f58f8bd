"""Why pending, made exact: a wait's structure (from the run) split by the free CPUs (from its schedule).

The run's recorder (:class:`.pending.PendingRecorder`, the in-order loop)
knows a waiting job's place: the oldest waiting job (``priority`` with no
blocking job), behind the reservation of the oldest waiting job
(``reservation`` naming it), behind the job just before it in arrival order
(``priority`` naming it), or held by its user's limit (``user_limit``).
Each of those holds while the job *fits*; whether it fits is a matter of
the free CPUs only, and they are known at every instant from the run's
timeline samples (per cluster, CPUs in use and up after each instant
anything changed). :func:`exact_rows` splits every interval of a place at
the instants its job starts or stops fitting, and names the no-room pieces
(the vocabulary of :mod:`.pending`):

* ``failure`` -- no cluster it may use has the CPUs free, but one of them
  would if its machines that are down were up;
* ``requirements`` -- a cluster it may not use has them free;
* ``resources`` -- otherwise.

So every reason holds at every instant of its interval (checked in the
tests from the jobs' start and end times alone), and consecutive rows of a
job differ in reason or blocking job. The cost is one comparison of a
CPU count against the free-CPU series per distinct (CPUs, clusters) job
shape, over the span of its waits.
"""

from __future__ import annotations

import numpy as np

_FITS = -1   # the piece's code while the job fits: its place's code (structural reason)


def exact_rows(rows, sim, codes: dict[str, int]) -> np.ndarray:
    """The ``(job, from, to, code, blocking)`` table of ``rows`` (a list of such tuples), split exactly.

    ``rows`` carry places (see the module docstring); ``sim`` is the
    finished run (``procs``, ``candidates``, ``clusters``, ``samples``);
    ``codes`` maps reason names to codes.
    """
    table = np.fromiter((v for row in rows for v in row), dtype=float, count=5 * len(rows)).reshape(-1, 5)
    if not len(table):
        return table
    placed = (table[:, 3] == codes["priority"]) | (table[:, 3] == codes["reservation"])
    kept, split = table[~placed], table[placed]
    if len(split):
        split = _split_by_fit(split, sim, codes)
    return _merged(np.concatenate([kept, split]))


def _cluster_series(sim) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``times`` (every instant a cluster changed) and per cluster ``free`` and ``up`` CPUs from each time on."""
    samples = np.asarray(sim.samples, dtype=float).reshape(-1, 4)
    samples = samples[samples[:, 1] >= 0]
    times = np.unique(np.concatenate([[0.0], samples[:, 0]]))
    count = len(sim.clusters)
    free = np.empty((count, len(times)), dtype=np.int64)
    up = np.empty((count, len(times)), dtype=np.int64)
    for cluster in sim.clusters:
        mine = samples[samples[:, 1] == cluster.index]      # in the order they were taken: the last of an instant wins
        at = np.searchsorted(mine[:, 0], times, side="right") - 1
        seen = at >= 0
        used_now = np.where(seen, mine[np.maximum(at, 0), 2], 0)
        up_now = np.where(seen, mine[np.maximum(at, 0), 3], cluster.total)
        free[cluster.index] = up_now - used_now
        up[cluster.index] = up_now
    return times, free, up


def _split_by_fit(table: np.ndarray, sim, codes: dict[str, int]) -> np.ndarray:
    times, free, up = _cluster_series(sim)
    count = len(sim.clusters)
    total = np.array([c.total for c in sim.clusters], dtype=np.int64)[:, None]
    down = total - up                                        # CPUs of machines that are down
    failing = bool(down.any())
    jobs = table[:, 0].astype(np.int64)
    procs = np.asarray(sim.procs, dtype=np.int64)[jobs]
    shape_of: dict[tuple[int, ...], int] = {}
    shapes = np.array([shape_of.setdefault(tuple(sim.candidates[j]), len(shape_of)) for j in jobs.tolist()])
    allowed_sets = [np.array(s, dtype=np.int64) for s in shape_of]
    key = shapes * (int(procs.max()) + 1) + procs
    order = np.argsort(key, kind="stable")
    bounds = np.flatnonzero(np.diff(key[order])) + 1
    resources, failure, requirements = codes["resources"], codes["failure"], codes["requirements"]
    pieces = []
    for group in np.split(order, bounds):
        need, allowed = int(procs[group[0]]), allowed_sets[shapes[group[0]]]
        begin, end = table[group, 1], table[group, 2]
        lo = max(int(np.searchsorted(times, begin.min(), side="right")) - 1, 0)
        hi = int(np.searchsorted(times, end.max(), side="left"))
        span = slice(lo, hi)
        fits = (free[allowed, span] >= need).any(axis=0)
        state = np.where(fits, _FITS, resources)
        if failing or len(allowed) < count:
            room = ~fits
            if failing:
                mended = ((down[allowed, span] > 0) & (free[allowed, span] + down[allowed, span] >= need)).any(axis=0)
                state[room & mended] = failure
                room &= ~mended
            if len(allowed) < count:
                others = np.setdiff1d(np.arange(count), allowed)
                state[room & (free[others, span] >= need).any(axis=0)] = requirements
        pieces.append(_pieces(table[group], times[span], state))
    return np.concatenate(pieces)


def _pieces(rows: np.ndarray, times: np.ndarray, state: np.ndarray) -> np.ndarray:
    """Each row's interval cut where ``state`` (holding from ``times[k]`` to ``times[k + 1]``) changes."""
    change = np.flatnonzero(state[1:] != state[:-1]) + 1     # indices k where a new state begins
    change_times = np.append(times[change], np.inf)           # a last cut no interval reaches
    begin, end = rows[:, 1], rows[:, 2]
    first = np.searchsorted(change_times, begin, side="right")    # changes strictly after the start
    last = np.searchsorted(change_times, end, side="left")        # ... and strictly before the end
    cuts = last - first
    count = cuts + 1
    owner = np.repeat(np.arange(len(rows)), count)
    offset = np.arange(len(owner)) - np.repeat(np.cumsum(count) - count, count)
    cut_index = np.repeat(first, count) + offset                  # the cut that ends piece `offset` of its row
    starts = np.where(offset == 0, begin[owner], change_times[cut_index - 1])
    ends = np.where(offset == cuts[owner], end[owner], change_times[cut_index])
    at = np.searchsorted(times, starts, side="right") - 1
    piece_state = state[np.maximum(at, 0)]
    out = np.empty((len(owner), 5))
    out[:, 0] = rows[owner, 0]
    out[:, 1] = starts
    out[:, 2] = ends
    fits = piece_state == _FITS
    out[:, 3] = np.where(fits, rows[owner, 3], piece_state)
    out[:, 4] = np.where(fits, rows[owner, 4], -1)
    return out


def _merged(table: np.ndarray) -> np.ndarray:
    """Sorted by job then time, touching rows of one job with one reason and blocking job made one."""
    table = table[np.lexsort((table[:, 1], table[:, 0]))]
    if len(table) < 2:
        return table
    same = np.ones(len(table), dtype=bool)
    same[0] = False
    same[1:] = ((table[1:, 0] == table[:-1, 0]) & (table[1:, 1] == table[:-1, 2])
                & (table[1:, 3] == table[:-1, 3]) & (table[1:, 4] == table[:-1, 4]))
    if not same.any():
        return table
    starts = np.flatnonzero(~same)
    ends = np.append(starts[1:], len(table)) - 1
    merged = table[starts].copy()
    merged[:, 2] = table[ends, 2]
    return merged
