"""EASY backfilling (Klusáček & Rudová §5; Lifka 1995; Mu'alem & Feitelson 2001)."""

from __future__ import annotations

import bisect
from typing import Iterator, Sequence

import numpy as np

from ..cluster import cluster_sets
from ..waiting import Positions
from .decisions import NO_DECISIONS, Cancel, Decision, Reserve, Start
from .queue import NO_RESERVATION, QueuePolicy

_PAST_THE_END = 1 << 62   # a queue position no job has


class EASY(QueuePolicy):
    """EASY backfilling (Lifka 1995; Mu'alem & Feitelson 2001), textbook form.

    When the head cannot start it gets a reservation at its shadow time: the
    earliest estimated end of running jobs after which enough CPUs are free
    on a suitable cluster (earliest over clusters, §5 tie rule). A later job
    may start now iff it fits now and does not delay that reservation: it
    runs on another cluster, or ends (by its estimate) by the shadow time, or
    uses no more than the CPUs left over at the shadow time ("extra").
    Reservation invariant: no backfilled job ever makes the head start later
    than its reservation.
    """

    def __init__(self):
        pass

    def bind(self, sim) -> None:
        super().bind(sim)
        self.reservation: tuple[float, int, int] | None = None  # shadow, cluster, extra CPUs
        self.reserved_job = -1
        self.reservation_stale = True
        # The clusters a job may use, as one of the run's distinct sets (most runs: one, every cluster).
        self.job_set, self.set_clusters = cluster_sets(sim.candidates)
        self.keys: list[int] = []  # distinct bucket keys (size * sets + set) of the queue's jobs, ascending
        self.buckets: dict[int, Positions] = {}

    def job_ended(self, cluster: int, now: float, early: bool) -> Sequence[Decision]:
        self.resources_changed = True
        # A job ending at its estimate leaves the head's shadow time and extra
        # CPUs unchanged (its CPUs move from "freed by the shadow time" to
        # "free now"); one ending early frees them sooner than reserved.
        self.reservation_stale |= early
        return NO_DECISIONS

    def capacity_changed(self, cluster: int, now: float) -> Sequence[Decision]:
        self.resources_changed = True
        self.reservation_stale = True
        return NO_DECISIONS

    def schedule(self, now: float) -> Iterator[Decision]:
        queue = self.queue
        first_new = len(queue) - self.new_jobs
        self.new_jobs = 0
        if self.resources_changed or self.reservation is None or first_new <= self.head:
            # ``top``: the first job its user's limit lets start (the head, without limits).
            yield from self._start_heads(now)
            top = self._first_eligible()
            if top < len(queue) and (self.reservation_stale or queue[top] != self.reserved_job):
                self.reservation = None
            while top < len(queue) and self.reservation is None:
                self.reservation = self._reserve(queue[top])
                if self.reservation is not None:
                    self.reserved_job = queue[top]
                    self.reservation_stale = False
                    yield Reserve(self.reserved_job, self.reservation[0], self.reservation[1])
                    break
                yield Cancel(queue[top], NO_RESERVATION)
                self._remove(top)
                yield from self._start_heads(now)
                top = self._first_eligible()
            if top >= len(queue):
                self.reservation = None
            low = top + 1
        else:
            # Nothing was freed since the last pass: the jobs already scanned
            # still cannot start, so only the newcomers are candidates.
            low = first_new
        self.resources_changed = False
        if self.reservation is not None and low < len(queue):
            yield from self._backfill(low, now)
        self._compact()

    def _reserve(self, job: int) -> tuple[float, int, int] | None:
        best = None
        procs = self.sim.procs[job]
        for c in self.sim.candidates[job]:
            shadow = self.sim.clusters[c].shadow(procs, self.sim.procs)
            if shadow is not None and (best is None or shadow[0] < best[0]):
                best = (shadow[0], c, shadow[1])
        return best

    # --- the waiting jobs indexed by size and by the clusters they may use -------------------------
    # Under a long backlog almost every waiting job is larger than the CPUs
    # free now (RICC on 806 CPUs: ~150,000 waiting, typically 1 CPU free), so
    # a scan of the queue tail finds its candidate tens of thousands of
    # entries in. Each distinct size keeps the queue positions of its jobs in
    # order ("bucket"); a pass reads only the buckets of sizes that fit now,
    # which makes its cost follow the jobs that could start, not the backlog.
    # Where jobs may use different sets of clusters (requirements), a bucket
    # holds one size and one set: a size that fits somewhere but not in the
    # clusters a job may use is not read (on 14 clusters, most candidates).

    def _key(self, size: int, allowed: int) -> int:
        return size * len(self.set_clusters) + allowed

    def _enqueue(self, job: int) -> None:
        super()._enqueue(job)
        key = self._key(int(self.sim.procs[job]), int(self.job_set[job]))
        bucket = self.buckets.get(key)
        if bucket is None:
            bucket = self.buckets[key] = Positions()
            bisect.insort(self.keys, key)
        bucket.append(len(self.queue) - 1)

    def _rebuild(self, live: np.ndarray) -> None:
        super()._rebuild(live)
        self._index_queue()   # positions changed

    def _index_queue(self) -> None:
        """Rebuild the buckets from the (compacted) queue."""
        key_of = self.q_procs[: len(self.queue)].astype(np.int64) * len(self.set_clusters)
        if len(self.set_clusters) > 1:
            key_of += self.job_set[np.asarray(self.queue, dtype=np.int64)]
        order = np.argsort(key_of, kind="stable")
        keys, firsts = np.unique(key_of[order], return_index=True)
        self.keys = keys.tolist()
        self.buckets = {key: Positions(positions) for key, positions in zip(self.keys, np.split(order, firsts[1:]))}

    def _first_candidate(self, low: int, free: list[int], reserved: int, spare: int, limit: float,
                         reached: dict[int, int]) -> int:
        """Queue position of the first live job at or after ``low`` that may start now, or -1.

        "May start" (the necessary condition of :meth:`_backfill`, read
        bucket by bucket): with ``free`` CPUs per cluster, some cluster the
        job may use has room for it, and it fits on one other than the
        ``reserved`` cluster, or in the reserved cluster's ``spare`` CPUs, or
        its estimate is at most ``limit``; and its user's limit lets it start.

        ``reached`` (bucket -> position; empty at a pass's first call), kept
        by the caller over calls whose conditions only tighten (``low``
        grows; the free and spare CPUs, the live jobs and the users' room
        only shrink; ``limit`` stays): no job of that bucket before its
        position may start, so a bucket's search resumes there and a bucket
        already past the best answer is not read.
        """
        sets = len(self.set_clusters)
        most = max(free)
        fits = []   # per set of clusters: (the most free CPUs, the largest job that need not mind the estimate)
        for allowed in self.set_clusters:
            other = max((free[c] for c in allowed if c != reserved), default=0)
            fits.append((max((free[c] for c in allowed), default=0), max(other, spare) if reserved in allowed else other))
        best = -1
        users = None if self.users is None else (self.q_user, self.sim.limits)
        keys = self.keys[: bisect.bisect_right(self.keys, self._key(most, sets - 1))]
        # The most promising first: once one is found, the buckets past it are not read.
        keys = sorted(keys, key=lambda key: reached.get(key, low))
        for key in keys:
            size, allowed = divmod(key, sets)
            room, any_length = fits[allowed]
            if size > room:
                continue
            start = max(low, reached.get(key, low))
            if 0 <= best <= start:
                break   # every bucket left starts past it
            found = self.buckets[key].first(start, best, self.q_procs,
                                            None if size <= any_length else (self.q_estimate, limit), users)
            if found >= 0:
                best = found
            # None here before ``best`` (or anywhere, with no ``best``); ``found`` itself is read again.
            reached[key] = found if found >= 0 else best if best >= 0 else _PAST_THE_END
        return best

    def _backfill(self, low: int, now: float) -> Iterator[Decision]:
        """Backfill selection: start, in queue order, every job after the head that fits now and spares
        the reservation."""
        sim, queue = self.sim, self.queue
        clusters, procs_of, estimate, candidates_of = sim.clusters, sim.procs, sim.estimate, sim.candidates
        shadow, reserved_cluster, extra = self.reservation
        position = low
        reached: dict[int, int] = {}   # per bucket: no candidate before it (conditions only tighten in a pass)
        while position < len(queue):
            free = [c.free_total for c in clusters]
            max_free = max(free)
            if max_free == 0:
                break
            # Necessary condition to start now: fits the largest free block, and
            # either ends by the shadow time, fits in the extra CPUs, or fits on
            # another cluster. The job it finds is then checked exactly,
            # cluster by cluster.
            position = self._first_candidate(position, free, reserved_cluster, extra, shadow - now, reached)
            if position < 0:
                break
            job = queue[position]
            need = procs_of[job]
            ends_by_shadow = now + estimate[job] <= shadow
            for c in candidates_of[job]:
                if clusters[c].free_total < need:
                    continue
                if c == reserved_cluster and not ends_by_shadow:
                    if need > extra:
                        continue
                    extra -= need
                yield Start(job, c)
                self._remove(position)
                break
            position += 1
        self.reservation = (shadow, reserved_cluster, extra)
