"""A log's recorded schedule as step functions: CPUs in use, waiting jobs, per-user peaks, idle capacity.

Every function here is vectorised (sorts, cumulative sums, one segment
tree): RICC's 447,794 jobs take under a second on one core. Times are the log's own (seconds); a *segment*
``k`` is the half-open interval ``[times[k], times[k + 1])`` between two
consecutive event times, and a value "at" segment ``k`` is the one in force
once every event at ``times[k]`` has happened (ends, starts and
submissions at one instant all count before the instant is judged).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Schedule:
    """The sound jobs of a log as it ran them (one entry per job, in the jobs frame's order)."""

    row: np.ndarray      # position of the job in the jobs frame
    submit: np.ndarray
    start: np.ndarray    # submit + recorded wait
    end: np.ndarray      # start + run time
    procs: np.ndarray    # CPUs (allocated, else requested: as the readers give them)
    user: np.ndarray     # user names as text

    @property
    def wait(self) -> np.ndarray:
        return self.start - self.submit

    def __len__(self) -> int:
        return len(self.row)


def recorded_schedule(jobs: pd.DataFrame) -> tuple[Schedule, np.ndarray]:
    """``(schedule of the sound jobs, mask of the rows with a known wait)``.

    Sound: a recorded wait >= 0 (NaN or -1: unknown), a finite submission,
    a run time >= 0 and at least one CPU. The caller reports the rest.
    """
    wait = pd.to_numeric(jobs["recorded_wait"], errors="coerce").to_numpy(float) \
        if "recorded_wait" in jobs.columns else np.full(len(jobs), np.nan)
    submit = jobs["submit_time"].to_numpy(float)
    run = jobs["run_time"].to_numpy(float)
    procs = jobs["procs"].to_numpy(float)
    known = np.isfinite(wait) & (wait >= 0)
    sound = known & np.isfinite(submit) & np.isfinite(run) & (run >= 0) & (procs > 0)
    row = np.flatnonzero(sound)
    start = submit[row] + wait[row]
    users = jobs["user"].astype("string").fillna("").to_numpy(str) if "user" in jobs.columns else np.full(len(jobs), "")
    return Schedule(row, submit[row], start, start + run[row], procs[row], users[row]), known


def step_function(times: np.ndarray, deltas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(distinct times, value from each time to the next)`` of a sum of ``deltas`` applied at ``times``."""
    order = np.argsort(times, kind="stable")
    times, level = times[order], np.cumsum(deltas[order])
    last = np.r_[times[1:] != times[:-1], True] if times.size else np.zeros(0, dtype=bool)
    return times[last], level[last]


def cpus_in_use(schedule: Schedule) -> tuple[np.ndarray, np.ndarray]:
    """CPUs in use over time, a step function (0 after the last end)."""
    return step_function(np.concatenate([schedule.start, schedule.end]),
                         np.concatenate([schedule.procs, -schedule.procs]))


def time_weighted_quantile(times: np.ndarray, values: np.ndarray, q: float) -> float:
    """The smallest value ``v`` the step function is at or under for a share ``q`` of ``[times[0], times[-1])``.

    Each value is weighted by how long it holds (the last value holds for no
    time). One point only: its value.
    """
    if len(times) < 2:
        return float(values[0]) if len(values) else 0.0
    held, durations = values[:-1], np.diff(times)
    order = np.argsort(held, kind="stable")
    cumulative = np.cumsum(durations[order])
    if cumulative[-1] <= 0:
        return float(held.max())
    at = int(np.searchsorted(cumulative, q * cumulative[-1] * (1 - 1e-12), side="left"))
    return float(held[order][min(at, len(order) - 1)])


def share_over(times: np.ndarray, values: np.ndarray, capacity: float) -> float:
    """The share of ``[times[0], times[-1])`` during which the step function is above ``capacity``."""
    if len(times) < 2 or times[-1] <= times[0]:
        return 0.0
    return float(np.diff(times)[values[:-1] > capacity].sum() / (times[-1] - times[0]))


def user_peaks(schedule: Schedule) -> pd.DataFrame:
    """Per user, the most jobs and the most CPUs it had running at once, most jobs first.

    Events sorted by user, time, then ends before starts at one instant (a
    job ending as another starts never counts both); each user's deltas sum
    to zero, so one running sum over the sorted events restarts at every user.
    """
    count = len(schedule)
    if not count:
        return pd.DataFrame({"user": pd.Series([], dtype=str), "running_jobs": [], "cpus": []})
    users, code = np.unique(schedule.user, return_inverse=True)
    times = np.concatenate([schedule.end, schedule.start])
    kind = np.r_[np.zeros(count, dtype=np.int8), np.ones(count, dtype=np.int8)]   # 0 end, 1 start
    owner = np.concatenate([code, code])
    order = np.lexsort((kind, times, owner))
    sign = np.where(kind[order] == 1, 1.0, -1.0)
    jobs = np.cumsum(sign)
    cpus = np.cumsum(sign * np.concatenate([schedule.procs, schedule.procs])[order])
    peaks_jobs = np.full(len(users), 0.0)
    peaks_cpus = np.full(len(users), 0.0)
    np.maximum.at(peaks_jobs, owner[order], jobs)
    np.maximum.at(peaks_cpus, owner[order], cpus)
    frame = pd.DataFrame({"user": users, "running_jobs": peaks_jobs.astype(np.int64), "cpus": peaks_cpus})
    return frame.sort_values(["running_jobs", "cpus", "user"], ascending=[False, False, True],
                             kind="stable").reset_index(drop=True)


def covering_minimum(first: np.ndarray, stop: np.ndarray, values: np.ndarray, size: int) -> np.ndarray:
    """``m[k] = min(values[j] for j with first[j] <= k < stop[j])`` for ``k < size``; ``inf`` where none covers ``k``.

    A segment tree over ``size`` leaves, filled for all intervals at once
    level by level (each interval marks at most two nodes per level, as in
    the iterative bottom-up range update), then every node's minimum pushed
    down to its leaves: ``O(n log size + size)`` array operations.
    """
    leaves = 1 << max(0, int(size - 1).bit_length())
    tree = np.full(2 * leaves, np.inf)
    low, high = np.asarray(first, np.int64) + leaves, np.asarray(stop, np.int64) + leaves
    value = np.asarray(values, dtype=float)
    keep = low < high
    low, high, value = low[keep], high[keep], value[keep]
    while low.size:
        left = (low & 1) == 1          # a right child: the node is inside the interval, take it, step right
        np.minimum.at(tree, low[left], value[left])
        low = low + left
        right = (high & 1) == 1        # the interval ends just after a left child: take it
        high = high - right
        np.minimum.at(tree, high[right], value[right])
        low, high = low >> 1, high >> 1
        keep = low < high
        low, high, value = low[keep], high[keep], value[keep]
    node = 1
    while node < leaves:               # push down one level: nodes node .. 2 * node - 1
        parents = np.arange(node, 2 * node)
        for child in (2 * parents, 2 * parents + 1):
            tree[child] = np.minimum(tree[child], tree[parents])
        node *= 2
    return tree[leaves:leaves + size]


@dataclass(frozen=True)
class Segments:
    """The recorded schedule cut at every event: per segment, CPUs in use and the waiting jobs."""

    times: np.ndarray          # segment k is [times[k], times[k + 1])
    used: np.ndarray           # CPUs in use
    waiting: np.ndarray        # jobs submitted and not yet started
    smallest_waiting: np.ndarray   # CPUs of the smallest of them (inf: none waits)
    starts: np.ndarray         # jobs starting at times[k]


def segments(schedule: Schedule) -> Segments:
    """:class:`Segments` of a schedule (only jobs that waited > 0 ever wait)."""
    waited = schedule.start > schedule.submit
    times = np.unique(np.concatenate([schedule.start, schedule.end, schedule.submit[waited]]))
    count = max(len(times) - 1, 0)
    at_start = np.searchsorted(times, schedule.start)
    at_end = np.searchsorted(times, schedule.end)
    width = len(times) + 1
    used = np.cumsum(np.bincount(at_start, schedule.procs, width) - np.bincount(at_end, schedule.procs, width))
    first, stop = np.searchsorted(times, schedule.submit[waited]), at_start[waited]
    waiting = np.cumsum(np.bincount(first, minlength=width) - np.bincount(stop, minlength=width))
    smallest = covering_minimum(first, stop, schedule.procs[waited], count)
    starts = np.bincount(at_start, minlength=width)
    return Segments(times, used[:count], waiting[:count], smallest, starts[:count])
