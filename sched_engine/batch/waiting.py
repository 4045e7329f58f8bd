"""Indexes of a queue policy's waiting jobs: positions by size or by user, and which users may start a job now.

A :class:`~sched_engine.batch.policies.queue.QueuePolicy` keeps its waiting
jobs in one list in queue order, with lazy deletion (a job that left keeps
its entry, its CPUs set to infinity, until the list is compacted). Two
indexes over that list's positions live here:

:class:`Positions`
    the ascending positions of a subset of the jobs (EASY's jobs of one
    size; one user's jobs), read from a given position in growing chunks.
:class:`UserIndex`
    with per-user limits (:mod:`sched_engine.batch.queues`): each user's
    positions, and a heap holding, for every user whose limit lets a job
    start now, the position of that user's first waiting job. The first
    eligible job of the queue is the heap's top (after the stale entries
    are dropped), found without reading a single job of a user at their
    limit -- where walking the queue past them cost one step per held job
    and pass (quadratic on logs where a few users keep thousands waiting).
    Invariant: every user who is not held and has a waiting job has an
    entry in the heap whose key is at most that user's first live position
    (keys only go stale low: a user's first position only grows between
    rebuilds, and a released user is pushed back at the next look). One
    index serves the policy's queue, another the pending-reasons recorder's
    list of the same jobs in the same order (:mod:`sched_engine.batch.pending`).
"""

from __future__ import annotations

import heapq

import numpy as np


class Positions:
    """Ascending queue positions of some of the waiting jobs (one size, one user): a growable array.

    Entries of jobs that left the queue stay until the queue is compacted;
    ``live_from`` skips those at the front for good.
    """

    __slots__ = ("positions", "length", "live_from")

    def __init__(self, positions: np.ndarray | None = None):
        # Given positions come ascending (a stable sort by size keeps queue order within a size).
        self.positions = np.empty(16, dtype=np.int64) if positions is None else positions
        self.length = 0 if positions is None else len(positions)
        self.live_from = 0

    def append(self, position: int) -> None:
        if self.length == len(self.positions):
            self.positions = np.resize(self.positions, 2 * self.length)
        self.positions[self.length] = position
        self.length += 1

    def first_live(self, q_procs: np.ndarray) -> int:
        """The first position whose job still waits, or -1."""
        positions, length = self.positions, self.length
        start = self.live_from
        while start < length and q_procs[positions[start]] == np.inf:
            start += 1
        self.live_from = start
        return int(positions[start]) if start < length else -1

    def first(self, low: int, before: int, q_procs: np.ndarray, length_limit, users=None) -> int:
        """The first live position in ``[low, before)`` (``before`` < 0: no bound) whose job meets
        ``length_limit`` (``None``, or ``(estimates, limit)``: estimate ≤ limit) and, given ``users``
        (``(q_user, limits)``), whose user's limit lets it start now; -1 if none.

        Reads the positions in growing chunks, so the cost follows the
        distance to the answer (the jobs of held users are passed over inside
        a chunk, never one by one).
        """
        positions, length = self.positions, self.length
        self.first_live(q_procs)
        start = self.live_from
        if start < length and positions[start] < low:
            start = int(positions[start:length].searchsorted(low)) + start
        chunk = 32
        while start < length:
            stop = min(start + chunk, length)
            window = positions[start:stop]
            ok = q_procs[window] != np.inf
            if length_limit is not None:
                estimates, limit = length_limit
                ok &= estimates[window] <= limit
            if users is not None:
                q_user, limits = users
                owners = q_user[window]
                ok &= ~limits.held[owners] & (q_procs[window] <= limits.room[owners])
            hit = int(ok.argmax())
            if ok[hit]:
                found = int(window[hit])
                return found if before < 0 or found < before else -1
            if 0 <= before <= int(window[-1]):
                return -1
            start, chunk = stop, chunk * 4
        return -1


class UserIndex:
    """Each user's waiting positions, and the first position of each user free to start a job (a heap).

    ``limits`` is the run's :class:`~sched_engine.batch.queues.UserLimits`
    (its ``held`` flags, ``room`` and ``releases`` log, read from ``seen``
    on); ``q_procs`` and ``q_user`` are the owner's arrays per position
    (CPUs, infinite once the job left; user code).
    """

    __slots__ = ("limits", "by_user", "ready", "in_ready", "seen")

    def __init__(self, limits):
        self.limits = limits
        self.by_user: dict[int, Positions] = {}
        self.ready: list[tuple[int, int]] = []   # (a position at most the user's first live one, user)
        self.in_ready: set[int] = set()
        self.seen = len(limits.releases)          # releases before this index are in no heap yet either

    def add(self, position: int, user: int, q_procs: np.ndarray) -> None:
        """A job of ``user`` was enqueued at ``position`` (after every other)."""
        positions = self.by_user.get(user)
        if positions is None:
            positions = self.by_user[user] = Positions()
        positions.append(position)
        if user not in self.in_ready and not self.limits.held[user]:
            # Keyed by the user's first waiting job, not the new one: a user released at this instant
            # (not pushed back yet) may have older jobs waiting.
            heapq.heappush(self.ready, (positions.first_live(q_procs), user))
            self.in_ready.add(user)

    def rebuild(self, q_user: np.ndarray, length: int) -> None:
        """Index the ``length`` positions of a rebuilt queue (users per position in ``q_user``)."""
        users = q_user[:length]
        order = np.argsort(users, kind="stable")   # positions ascending within a user
        codes, firsts = np.unique(users[order], return_index=True)
        self.by_user = {int(user): Positions(positions)
                        for user, positions in zip(codes.tolist(), np.split(order, firsts[1:]))}
        held = self.limits.held
        self.ready = [(int(positions.positions[0]), user) for user, positions in self.by_user.items()
                      if not held[user]]
        heapq.heapify(self.ready)
        self.in_ready = {user for _, user in self.ready}
        self.seen = len(self.limits.releases)

    def first(self, q_procs: np.ndarray, q_user: np.ndarray, length: int) -> int:
        """The first position whose job its user's limit lets start now (``length``: none)."""
        limits, ready, in_ready = self.limits, self.ready, self.in_ready
        held, room = limits.held, limits.room
        releases = limits.releases
        for user in releases[self.seen:]:
            if user not in in_ready and not held[user] and user in self.by_user:
                heapq.heappush(ready, (self.by_user[user].first_live(q_procs), user))
                in_ready.add(user)
        self.seen = len(releases)
        while ready:
            position, user = ready[0]
            first = -1 if held[user] else self.by_user[user].first_live(q_procs)
            if first < 0:   # at the limit, or no job waiting: out until released or a job arrives
                heapq.heappop(ready)
                in_ready.discard(user)
            elif first != position:
                heapq.heapreplace(ready, (first, user))
            elif q_procs[position] <= room[user]:
                return position
            else:   # a CPU limit: this job is larger than its user's CPUs left, a later one may not be
                return self.scan(position + 1, q_procs, q_user, length)
        return length

    def scan(self, low: int, q_procs: np.ndarray, q_user: np.ndarray, length: int) -> int:
        """The first eligible position at or after ``low``, read in growing chunks (``length``: none)."""
        held, room = self.limits.held, self.limits.room
        chunk = 32
        while low < length:
            stop = min(low + chunk, length)
            users = q_user[low:stop]
            procs = q_procs[low:stop]
            ok = (procs != np.inf) & ~held[users] & (procs <= room[users])
            hit = int(ok.argmax())
            if ok[hit]:
                return low + hit
            low, chunk = stop, chunk * 4
        return length
