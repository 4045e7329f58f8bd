"""The queue FCFS-like policies share (FCFS, FCFS-LB, EASY): arrival order within queue ranks."""

from __future__ import annotations

from typing import Iterator, Sequence

import numpy as np

from ...core.registry import Parametrised
from ..queues import victims
from ..simulate import WAITING
from ..waiting import UserIndex
from .decisions import NO_DECISIONS, Cancel, Decision, Preempt, Start

NO_RESERVATION = "no reservation possible on the machines that are up"


class QueuePolicy(Parametrised):
    """Waiting jobs in queue order, and starting the queue's heads while they fit.

    Queue order: by queue rank (``sim.rank``, :mod:`sched_engine.batch.queues`;
    all equal without one), then by arrival. The queue is a list with lazy
    deletion: started or cancelled jobs stay in place as dead entries
    (``procs`` set to infinity in the parallel numpy arrays) until more than
    half are dead, then it is compacted. ``head`` is the position of the
    first live job. A job arriving in a higher queue than the last one
    enqueued is put in its place by rebuilding the queue (:meth:`_rebuild`),
    and the next pass is a full one (``resources_changed``).

    Jobs held by their user's limit (``sim.limits``) are passed over: they
    block nobody. The first job a limit lets start is found through a
    per-user index (``q_user``, the user per position, and
    :class:`~sched_engine.batch.waiting.UserIndex`), rebuilt with the queue.
    When the first eligible job is not best-effort and does not fit, the
    best-effort jobs whose CPUs it needs are preempted
    (:func:`~sched_engine.batch.queues.victims`).
    """

    def bind(self, sim) -> None:
        self.sim = sim
        self.queue: list[int] = []
        self.q_procs = np.empty(1024)
        self.q_estimate = np.empty(1024)
        self.head = 0
        self.dead = 0
        self.new_jobs = 0
        self.resources_changed = True
        self.last_rank = 0   # queue rank of the last job enqueued
        self.users = None if sim.limits is None else UserIndex(sim.limits)
        self.q_user = np.empty(1024, dtype=np.int64)

    def arrive(self, job: int, now: float) -> Sequence[Decision]:
        self._enqueue(job)
        rank = self.sim.rank
        if rank is not None:
            if rank[job] < self.last_rank:   # ahead of jobs already waiting
                live = np.flatnonzero(np.isfinite(self.q_procs[: len(self.queue)]))
                jobs = np.asarray(self.queue, dtype=np.int64)[live]
                self._rebuild(live[np.lexsort((jobs, np.asarray(rank, dtype=np.int64)[jobs]))])
                self.resources_changed = True
            else:
                self.last_rank = rank[job]
        return NO_DECISIONS

    def _enqueue(self, job: int) -> None:
        position = len(self.queue)
        if position == len(self.q_procs):
            self.q_procs = np.resize(self.q_procs, 2 * position)
            self.q_estimate = np.resize(self.q_estimate, 2 * position)
            self.q_user = np.resize(self.q_user, 2 * position)
        self.q_procs[position] = self.sim.procs[job]
        self.q_estimate[position] = self.sim.estimate[job]
        self.queue.append(job)
        self.new_jobs += 1
        if self.users is not None:
            user = self.sim.limits.user[job]
            self.q_user[position] = user
            self.users.add(position, user, self.q_procs)

    def job_ended(self, cluster: int, now: float, early: bool) -> Sequence[Decision]:
        self.resources_changed = True
        return NO_DECISIONS

    def capacity_changed(self, cluster: int, now: float) -> Sequence[Decision]:
        self.resources_changed = True
        return NO_DECISIONS

    def _remove(self, position: int) -> None:
        self.q_procs[position] = np.inf
        self.dead += 1
        if position == self.head:
            queue, status = self.queue, self.sim.status
            while self.head < len(queue) and status[queue[self.head]] != WAITING:
                self.head += 1

    def _compact(self) -> bool:
        """Drop the dead entries once more than half are dead; returns whether it did."""
        if self.dead * 2 <= len(self.queue) or self.dead < 64:
            return False
        self._rebuild(np.flatnonzero(np.isfinite(self.q_procs[: len(self.queue)])))
        return True

    def _rebuild(self, live: np.ndarray) -> None:
        """Keep only the entries at positions ``live``, in that order (subclasses re-index here)."""
        self.queue = [self.queue[i] for i in live.tolist()]
        size = max(1024, 2 * len(self.queue))
        procs, estimate, user = np.empty(size), np.empty(size), np.empty(size, dtype=np.int64)
        procs[: len(live)] = self.q_procs[live]
        estimate[: len(live)] = self.q_estimate[live]
        user[: len(live)] = self.q_user[live]
        self.q_procs, self.q_estimate, self.q_user = procs, estimate, user
        self.head = 0
        self.dead = 0
        if self.users is not None:
            self.users.rebuild(self.q_user, len(self.queue))

    def _fits_now(self, job: int) -> list[int]:
        procs = self.sim.procs[job]
        clusters = self.sim.clusters
        return [c for c in self.sim.candidates[job] if clusters[c].free_total >= procs]

    def _can_ever_fit(self, job: int) -> bool:
        procs = self.sim.procs[job]
        return any(self.sim.clusters[c].up_total >= procs for c in self.sim.candidates[job])

    def _first_eligible(self) -> int:
        """The first position whose job its user's limit lets start now (the head without limits; the
        queue's length if none)."""
        if self.users is None:
            return self.head
        return self.users.first(self.q_procs, self.q_user, len(self.queue))

    def _start_heads(self, now: float) -> Iterator[Decision]:
        """Start the first eligible jobs while they fit; stop at the first blocked one.

        A head that cannot fit even on every up machine of its clusters is
        cancelled (§5: jobs that cannot get a reservation are cancelled).
        A head that is not best-effort preempts best-effort jobs if that
        lets it start now.
        """
        queue, sim = self.queue, self.sim
        while True:
            position = self._first_eligible()
            if position >= len(queue):
                return
            job = queue[position]
            fits = self._fits_now(job)
            if fits:
                yield Start(job, self.choose(fits))
            elif not self._can_ever_fit(job):
                yield Cancel(job, NO_RESERVATION)
            elif sim.best_effort is not None and not sim.best_effort[job] and (chosen := victims(sim, job)):
                cluster, killed = chosen
                for other in killed:
                    yield Preempt(other)
                yield Start(job, cluster)
            else:
                return
            self._remove(position)

    def choose(self, fits: Sequence[int]) -> int:
        """Cluster choice: the cluster for a job that fits now on each of ``fits`` (in preference order)."""
        return fits[0]
