"""Why pending, made exact: a wait's structure (from the run) split by the free CPUs (from its schedule).

The run's recorder (:class:`.pending.PendingRecorder`, the in-order loop)
knows a waiting job's place: the oldest waiting job (``priority`` with no
blocking job), behind the reservation of the oldest waiting job
(``reservation`` naming it), behind the job just before it in arrival order
(``priority`` naming it), or held by its user's limit (``user_limit``).
Behind the job before it, an in-order policy's job waits for that job
whatever the free CPUs (it cannot start first): ``priority`` holds. The
oldest waiting job and a job behind a reservation wait for their place only
while they *fit*; whether a job fits is a matter of the free CPUs only, and
they are known at every instant from the run's timeline samples (per
cluster, CPUs in use and up after each instant anything changed).
:func:`exact_rows` splits every interval of those two places at the
instants its job starts or stops fitting, and names the no-room pieces (the
vocabulary of :mod:`.pending`):

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

from .cluster import cluster_sets

_FITS = -1   # the piece's code while the job fits: its place's code (structural reason)


def exact_rows(rows, sim, codes: dict[str, int], heads=(), behind_head: int = -2) -> np.ndarray:
    """The ``(job, from, to, code, blocking)`` table of ``rows`` (a list of such tuples), split exactly.

    ``rows`` carry places (see the module docstring); ``sim`` is the
    finished run (``procs``, ``candidates``, ``clusters``, ``samples``);
    ``codes`` maps reason names to codes. A place whose blocking job is
    ``behind_head`` names, at each instant, the oldest waiting job of
    ``heads`` (``(time, job)`` at each pass it changed).
    """
    table = np.array(rows, dtype=float).reshape(-1, 5)
    if not len(table):
        return table
    head = (table[:, 3] == codes["priority"]) & (table[:, 4] == -1)
    placed = head | (table[:, 3] == codes["reservation"])
    kept, split = table[~placed], table[placed]
    if len(split):
        split = _split_by_fit(split, sim, codes)
        behind = split[:, 4] == behind_head
        if behind.any():
            split = np.concatenate([split[~behind], _name_heads(split[behind], heads)])
    return _merged(np.concatenate([kept, split]))


def _cut(begin: np.ndarray, end: np.ndarray, times: np.ndarray, values: np.ndarray):
    """Each ``[begin, end)`` cut where the step series ``values`` (``values[k]`` from ``times[k]`` on) changes.

    Returns ``(owner, start, stop, value)`` per piece: the row it cuts, its
    bounds and the series' value on it. ``times[0] <= begin`` for every row.
    """
    change = np.flatnonzero(values[1:] != values[:-1]) + 1   # indices k where a new value begins
    change_times = np.append(times[change], np.inf)           # a last cut no interval reaches
    first = np.searchsorted(change_times, begin, side="right")    # changes strictly after the start
    last = np.searchsorted(change_times, end, side="left")        # ... and strictly before the end
    cuts = last - first
    count = cuts + 1
    owner = np.repeat(np.arange(len(begin)), count)
    offset = np.arange(len(owner)) - np.repeat(np.cumsum(count) - count, count)
    cut_index = np.repeat(first, count) + offset                  # the cut that ends piece `offset` of its row
    start = np.where(offset == 0, begin[owner], change_times[cut_index - 1])
    stop = np.where(offset == cuts[owner], end[owner], change_times[cut_index])
    value = values[np.maximum(np.searchsorted(times, start, side="right") - 1, 0)]
    return owner, start, stop, value


def _pieces(rows: np.ndarray, owner, start, stop) -> np.ndarray:
    out = np.empty((len(owner), 5))
    out[:, 0] = rows[owner, 0]
    out[:, 1] = start
    out[:, 2] = stop
    out[:, 3:] = rows[owner, 3:]
    return out


def _name_heads(rows: np.ndarray, heads) -> np.ndarray:
    """Rows "behind the oldest waiting job" cut where that job changes, each naming it."""
    series = np.array(heads, dtype=float).reshape(-1, 2)
    owner, start, stop, head = _cut(rows[:, 1], rows[:, 2], series[:, 0], series[:, 1])
    out = _pieces(rows, owner, start, stop)
    out[:, 4] = head
    return out


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
    shape_of_job, shape_of = cluster_sets(sim.candidates)
    shapes = shape_of_job[jobs]
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
        rows = table[group]
        owner, start, stop, piece_state = _cut(begin, end, times[span], state)
        out = _pieces(rows, owner, start, stop)
        no_room = piece_state != _FITS
        out[no_room, 3] = piece_state[no_room]
        out[no_room, 4] = -1
        pieces.append(out)
    return np.concatenate(pieces)


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
