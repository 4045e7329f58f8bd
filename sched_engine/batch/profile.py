"""A cluster's free CPUs over future time, for reservations (conservative backfilling, Local Search)."""

from __future__ import annotations

from bisect import bisect_left, bisect_right

import numpy as np

from .cluster import ClusterState


class Profile:
    """Free CPUs of one cluster over future time, as a step function.

    ``free[i]`` CPUs are free on ``[times[i], times[i+1])``; the last value
    holds for ever. Conservative backfilling reserves every waiting job in it
    (Mu'alem & Feitelson 2001).

    Only reservations change which starts are feasible; a later ``now`` only
    removes the past, so the earliest start never moves earlier. Two memos
    hold until the next reservation:

    * the last answer ``(procs, duration, start)``: the same request gets the
      same answer while that start is not past, and any request at least as
      large (CPUs and duration) starts no earlier -- a lower bound that lets
      a multi-cluster search skip this cluster;
    * per CPU count, the runs of time with at least that many CPUs free
      (:meth:`_runs`). Under a long backlog a profile has thousands of
      breakpoints but tens of such runs, and arrivals ask for the same few
      CPU counts again and again, so most searches read the runs, not the
      breakpoints.
    """

    __slots__ = ("times", "free", "last", "_runs_by_procs")

    def __init__(self, times: np.ndarray, free: np.ndarray):
        self.times = times
        self.free = free
        self.last: tuple[int, float, float | None] | None = None
        self._runs_by_procs: dict[int, tuple[list[float], list[float], list[float]] | None] = {}

    @classmethod
    def from_running(cls, now: float, cluster: ClusterState, procs_of) -> "Profile":
        """The profile of a cluster's running jobs alone, from ``now`` on."""
        return cls.from_releases(now, cluster.free_total, [(est_end, procs_of[job]) for est_end, job in cluster.running])

    @classmethod
    def from_releases(cls, now: float, free_now, releases, dtype=np.int64) -> "Profile":
        """The profile of ``free_now`` units free now, and ``(estimated end, amount)`` released at each end
        (sorted by end; an end already past counts as now)."""
        times = np.array([now, *(max(end, now) for end, _ in releases)], dtype=float)
        free = np.cumsum(np.array([free_now, *(amount for _, amount in releases)], dtype=dtype))
        # Merge equal breakpoints: keep the last cumulative value of each time.
        keep = np.append(times[1:] != times[:-1], True)
        return cls(times[keep], free[keep])

    def trim(self, now: float) -> None:
        """Drop the past: the segment holding ``now`` starts the profile.

        Keeps views of the arrays (a profile owns them; :meth:`reserve`
        builds new ones).
        """
        first = int(self.times.searchsorted(now, side="right")) - 1
        if first > 0:
            self.times = self.times[first:]
            self.free = self.free[first:]
        if self.times[0] < now:
            self.times[0] = now

    def earliest(self, now: float, procs: int, duration: float, before: float = np.inf) -> float | None:
        """The earliest ``t >= now`` with ``procs`` CPUs free on ``[t, t + duration)``.

        ``None`` when there is none, or, given ``before``, when none is
        earlier than ``before`` (a caller looking for a strictly earlier start
        than one it has).
        """
        if self.last is not None:
            last_procs, last_duration, last_start = self.last
            if last_procs <= procs and last_duration <= duration:
                if last_start is None:
                    return None   # not enough CPUs even when every reservation has ended
                if last_procs == procs and last_duration == duration and last_start >= now:
                    return last_start if last_start < before else None
                if last_start >= before:
                    return None
        start = self._earliest(now, procs, duration)
        self.last = (procs, duration, start)
        return start if start is None or start < before else None

    def _earliest(self, now: float, procs: int, duration: float) -> float | None:
        """The earliest start, or ``None`` if ``procs`` CPUs are never free for ever.

        A job fits from the start of a run of time with ``procs`` CPUs free
        (or from ``now``, inside the first run not over) when the run lasts
        ``duration``; the earliest start is that of the first such run.
        """
        self.trim(now)
        return self.first_fit(now, procs, duration)

    def first_fit(self, now: float, procs: int, duration: float) -> float | None:
        """As :meth:`_earliest` from ``now`` on, without dropping the profile's past (``now`` may lie ahead)."""
        runs = self._runs(procs)
        if runs is None:
            return None
        starts, ends, longest = runs
        first = bisect_right(ends, now)   # the first run not over; the last is endless
        start = max(starts[first], now)
        if ends[first] - start >= duration:
            return start
        # The first later run that lasts ``duration`` (one does: the last is endless).
        if first == 0 or longest[first - 1] < duration:
            # No run 1..first lasts ``duration``: the first run from 1 on that does is later than ``first``.
            return starts[bisect_left(longest, duration) + 1]
        return next(starts[r] for r in range(first + 1, len(starts)) if ends[r] - starts[r] >= duration)

    def _runs(self, procs: int) -> tuple[list[float], list[float], list[float]] | None:
        """``(starts, ends, longest)`` of the maximal runs of time with ``procs`` CPUs free.

        Runs are ascending and disjoint, and the last ends at infinity;
        ``longest[k]`` is the length of the longest of runs ``1..k+1`` (so
        non-decreasing). ``None`` when fewer than ``procs`` CPUs are free at
        the end.
        """
        if procs in self._runs_by_procs:
            return self._runs_by_procs[procs]
        times, free = self.times, self.free
        if free[-1] < procs:
            runs = None
        else:
            ok = free >= procs
            changes = np.flatnonzero(ok[1:] != ok[:-1]) + 1
            bounds = np.concatenate(([0], changes)) if ok[0] else changes
            # ``bounds`` alternates run start, run end, ...; the last run (ok at the end) has no end.
            starts = times[bounds[0::2]]
            ends = np.append(times[bounds[1::2]], np.inf)
            longest = np.maximum.accumulate(ends[1:] - starts[1:])
            runs = (starts.tolist(), ends.tolist(), longest.tolist())
        self._runs_by_procs[procs] = runs
        return runs

    def reserve(self, start: float, end: float, procs: int) -> None:
        """Take ``procs`` CPUs on ``[start, end)``; the caller checked they are free."""
        if end <= start:
            return
        self.last = None
        self._runs_by_procs = {}
        times, free = self.times, self.free
        for point in (start, end):
            index = int(times.searchsorted(point))
            if index == len(times) or times[index] != point:
                times = np.concatenate((times[:index], [point], times[index:]))
                free = np.concatenate((free[:index], free[index - 1 : index], free[index:]))
        lo, hi = times.searchsorted((start, end)).tolist()
        free[lo:hi] -= procs
        self.times, self.free = times, free


class ResourceProfiles:
    """Free amounts of several resources of one cluster over future time, one :class:`Profile` each.

    A job takes an amount of each (its demand) over the same interval; its
    earliest start is the first time every resource has its amount free for
    its whole duration. Found by moving a candidate time to each resource's
    earliest fit from it in turn until none moves it: each step only skips
    times some resource cannot take, so the first time they all take is
    the earliest. A zero amount is never short.
    """

    __slots__ = ("profiles",)

    def __init__(self, profiles: tuple[Profile, ...]):
        self.profiles = profiles

    def earliest(self, now: float, demand, duration: float, before: float = np.inf) -> float | None:
        """The earliest ``t >= now`` with ``demand`` free on ``[t, t + duration)`` (as :meth:`Profile.earliest`)."""
        for profile in self.profiles:
            profile.trim(now)
        start = now
        while True:
            moved = False
            for profile, amount in zip(self.profiles, demand):
                if amount <= 0:
                    continue
                fit = profile.first_fit(start, amount, duration)
                if fit is None:
                    return None
                if fit > start:
                    start, moved = fit, True
            if start >= before:
                return None
            if not moved:
                return start

    def reserve(self, start: float, end: float, demand) -> None:
        for profile, amount in zip(self.profiles, demand):
            if amount > 0:
                profile.reserve(start, end, amount)
