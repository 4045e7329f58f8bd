"""Conservative backfilling (Klusáček & Rudová §5; Mu'alem & Feitelson 2001)."""

from __future__ import annotations

import heapq
from typing import Iterable, Iterator

import numpy as np

from ...core.errors import ScenarioError
from ...core.registry import Parametrised
from ..profile import Profile
from ..simulate import WAITING
from .decisions import NO_DECISIONS, Cancel, Decision, Reserve, Start, Wake
from .queue import NO_RESERVATION


class Conservative(Parametrised):
    """Conservative backfilling (Mu'alem & Feitelson 2001): a reservation for every job.

    An arriving job is reserved at its earliest start in the per-cluster CPU
    profiles (``Profile``), given every earlier reservation -- the schedule
    (§5). Reservations never move later for later arrivals. When a cluster's
    capacity changes (failure, restart) or a job ends before its estimate,
    the jobs reserved on that cluster are re-backfilled in their order
    (§5); the others keep theirs. A job that cannot be reserved anywhere is
    cancelled.

    Queue ranks (:mod:`sched_engine.batch.queues`): a job arriving in a
    higher queue than some waiting job is planned before them: every
    waiting job of a lower queue loses its reservation and is planned again
    after it, in queue order. Best-effort queues and user limits need a
    policy that decides at each pass (FCFS, EASY): they are refused here.
    """

    def __init__(self):
        pass

    def bind(self, sim) -> None:
        if sim.best_effort is not None or sim.limits is not None:
            raise ScenarioError("policy", f"{type(self).__name__} plans every job ahead: best-effort queues and "
                                          "user limits need FCFS, FCFS-LB or EASY")
        self.sim = sim
        self.profiles = [self._fresh_profile(c.index, 0.0) for c in sim.clusters]
        # Per cluster, the jobs reserved on it in priority order. A job that
        # started keeps its entry until the list is compacted: the waiting
        # jobs are exactly those in ``reserved``.
        self.order: list[list[int]] = [[] for _ in sim.clusters]
        self.started_entries = [0] * len(sim.clusters)
        self.reserved: dict[int, tuple[float, int]] = {}  # job -> (start, cluster)
        self.due: list[tuple[float, int]] = []  # heap of (start, job); stale entries skipped

    def arrive(self, job: int, now: float) -> Iterator[Decision]:
        rank = self.sim.rank
        if rank is not None and any(rank[other] > rank[job] for other in self.reserved):
            return self._replan(job, now)
        return self._place(job, now)

    def _replan(self, job: int, now: float) -> Iterator[Decision]:
        """Plan ``job`` before the waiting jobs of lower queues: the clusters holding those are planned again,
        their waiting jobs with ``job`` in queue order."""
        rank = self.sim.rank
        touched = {cluster for other, (_, cluster) in self.reserved.items() if rank[other] > rank[job]}
        again = [job]
        for cluster in sorted(touched):
            jobs = self._compact(cluster)
            self.order[cluster] = []
            self.profiles[cluster] = self._fresh_profile(cluster, now)
            for other in jobs:
                del self.reserved[other]
            again.extend(jobs)
        for other in sorted(again, key=lambda other: (rank[other], other)):
            yield from self._place(other, now)

    def job_ended(self, cluster: int, now: float, early: bool) -> Iterable[Decision]:
        return self._rebackfill(cluster, now) if early else NO_DECISIONS

    def capacity_changed(self, cluster: int, now: float) -> Iterator[Decision]:
        return self._rebackfill(cluster, now)

    def schedule(self, now: float) -> Iterator[Decision]:
        sim, due = self.sim, self.due
        while due and due[0][0] <= now:
            start, job = heapq.heappop(due)
            if sim.status[job] != WAITING or self.reserved.get(job, (None,))[0] != start:
                continue
            _, cluster = self.reserved.pop(job)
            self.started_entries[cluster] += 1
            if self.started_entries[cluster] * 2 > len(self.order[cluster]):
                self._compact(cluster)
            yield Start(job, cluster)

    # --- the schedule ----------------------------------------------------------------------------

    def _place(self, job: int, now: float) -> Iterator[Decision]:
        """Reserve ``job`` at its earliest start over its clusters; cancel it if none can hold it."""
        sim = self.sim
        procs, duration = self._demand(job), sim.estimate[job]
        best = None
        for c in sim.candidates[job]:
            start = self.profiles[c].earliest(now, procs, duration, np.inf if best is None else best[0])
            if start is not None:
                best = (start, c)   # strictly earlier than the best so far (§5 tie rule: first listed wins)
        if best is None:
            yield Cancel(job, NO_RESERVATION)
            return
        start, cluster = best
        self.profiles[cluster].reserve(start, start + duration, procs)
        self.order[cluster].append(job)
        self.reserved[job] = (start, cluster)
        heapq.heappush(self.due, (start, job))
        yield Reserve(job, start, cluster)
        yield Wake(start)

    # --- what a job takes and what a cluster has free over time: the hooks another engine's resources change ---

    def _fresh_profile(self, cluster: int, now: float) -> Profile:
        """The free resources of ``cluster`` over time given its running jobs (the batch engine: CPUs)."""
        sim = self.sim
        return Profile.from_running(now, sim.clusters[cluster], sim.procs)

    def _demand(self, job: int):
        """What ``job`` takes of the profile's resources (the batch engine: its CPUs)."""
        return self.sim.procs[job]

    def _compact(self, cluster: int) -> list[int]:
        """Drop the entries of started jobs from ``order[cluster]``; returns the list."""
        reserved = self.reserved
        self.order[cluster] = [job for job in self.order[cluster] if job in reserved]
        self.started_entries[cluster] = 0
        return self.order[cluster]

    def _rebackfill(self, cluster: int, now: float) -> Iterator[Decision]:
        """Re-plan, in their order, the jobs reserved on ``cluster`` (§5)."""
        jobs = self._compact(cluster)
        self.order[cluster] = []
        self.profiles[cluster] = self._fresh_profile(cluster, now)
        for job in jobs:
            del self.reserved[job]
        for job in jobs:
            yield from self._place(job, now)
