"""EASY backfilling as the Alea simulator runs it: a reading of Klusáček & Rudová's EASY (§5).

The paper's results come from Alea (§6: "the GridSim based Alea
simulator"); its EASY is described only as textbook EASY (§5, Skovira et
al.) extended to several clusters. This policy follows the behaviour of
Alea's published EASY backfilling where it is more specific than the
paper -- a *reading*, read from the simulator's public source for its
rules (no code taken) and written against this engine's protocol. Where it
departs from :class:`~.easy.EASY` (textbook EASY, Lifka; Mu'alem &
Feitelson):

1. **Cluster list.** Alea keeps the clusters ordered by total CPUs,
   largest first, then the faster first, then as listed (the paper's
   footnote 6: "ordered according to the total number of CPUs in
   descending order"). A head that fits now starts on the fastest cluster
   where it fits, the first in that list among equally fast ones -- the
   same choice as textbook EASY here.
2. **Reservation.** The head's earliest start ``est`` on a cluster is the
   time at which the ``procs``-th CPU becomes free, every CPU free at
   ``now``, running jobs' CPUs at their estimated end (never before
   ``now``), failed machines never -- the textbook shadow time. The
   reservation goes to the cluster with the smallest ``est``, the *last*
   one in the list among ties (textbook: the preferred one). With
   ``reservation_clusters="any"`` (Alea's rule) every cluster with enough
   CPUs up is considered, whether or not it meets the head's requirements;
   then a head whose earliest cluster is one it may not use has no
   protection on its own clusters, and backfilled jobs can delay it
   indefinitely. ``"suitable"`` considers the head's own clusters only.
3. **Usable CPUs.** On the reserved cluster, the CPUs that become free
   exactly at ``est`` beyond the head's ``procs`` ("usable") may be kept
   by backfilled jobs past ``est`` -- textbook EASY's extra CPUs. Alea
   recomputes ``est`` and the usable CPUs after every start.
4. **Backfilling.** Every waiting job after the head, in queue order, may
   start now on a cluster of its own where it fits: any cluster but the
   reserved one freely; the reserved one only if it ends (by its estimate)
   strictly before ``est`` (textbook: by ``est``) or needs no more than the
   usable CPUs. Among the clusters it may use, it takes the fastest, and
   among equally fast ones the *last* in the list (the smallest); the
   reserved cluster only when it is strictly faster than every other
   choice. Textbook EASY takes the first allowed cluster in preference
   order (fastest, then largest).
5. **Passes.** Alea starts one job per call and calls again after each
   start, from the head. Since a start only takes CPUs, a job it passed
   over stays unable to start, the head's ``est`` on the reserved cluster
   does not move and the usable CPUs only shrink; so one scan of the queue
   in order, recomputing ``est`` and the usable CPUs after each start on the
   reserved cluster, starts the same jobs. Alea's multi-queue variant
   makes one such pass per queue; this engine has one queue, as the paper.

With perfect estimates and no requirements (BASIC, EXT-FAIL) points 2-4
only change tie-breaks and where backfilled jobs go, never the head's
protection; with requirements, ``"any"`` lets the head be delayed.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np

from ...core.registry import Param
from .decisions import NO_DECISIONS, Decision, Start
from .easy import EASY

RESERVATION_CLUSTERS = ("any", "suitable")
ALEA_EASY_SCHEMA = {"reservation_clusters": Param(
    "choice", "clusters the head's reservation may be on: any with enough CPUs up (Alea's rule) or only "
              "the head's suitable ones", choices=RESERVATION_CLUSTERS)}


class AleaEASY(EASY):
    """EASY backfilling with Alea's reservation, usable-CPU and cluster rules (module docstring)."""

    def __init__(self, reservation_clusters: str = "any"):
        self.reservation_clusters = reservation_clusters

    def bind(self, sim) -> None:
        super().bind(sim)
        clusters = sim.clusters
        # Alea's cluster list: more CPUs first, then faster, then input order.
        order = sorted(range(len(clusters)), key=lambda c: (-clusters[c].total, -clusters[c].speed, c))
        self.rank = {cluster: rank for rank, cluster in enumerate(order)}
        self.listed = tuple(order)
        self.listed_for: dict[tuple[int, ...], tuple[int, ...]] = {}  # a job's candidates in list order
        self.now = 0.0

    def job_ended(self, cluster: int, now: float, early: bool):
        super().job_ended(cluster, now, early)
        self.reservation_stale = True  # Alea recomputes the reservation on every call
        return NO_DECISIONS

    def schedule(self, now: float) -> Iterator[Decision]:
        self.now = now
        yield from super().schedule(now)

    def _in_list_order(self, candidates: tuple[int, ...]) -> tuple[int, ...]:
        found = self.listed_for.get(candidates)
        if found is None:
            found = self.listed_for[candidates] = tuple(sorted(candidates, key=self.rank.__getitem__))
        return found

    def _earliest(self, cluster: int, procs: int) -> tuple[float, int] | None:
        """``(est, usable)`` of a ``procs``-CPU head on ``cluster`` at ``self.now``; None if too few CPUs are up.

        Running jobs past their estimate count as ending now (Alea: the
        remaining time is never negative).
        """
        state, now, procs_of = self.sim.clusters[cluster], self.now, self.sim.procs
        if procs > state.up_total:
            return None
        available = state.free_total
        if available >= procs:
            return now, available - procs
        running = state.running
        for position, (est_end, job) in enumerate(running):
            available += procs_of[job]
            if available >= procs:
                est = max(est_end, now)
                for later_end, later_job in running[position + 1:]:
                    if max(later_end, now) != est:
                        break
                    available += procs_of[later_job]   # frees its CPUs at est too: usable
                return est, available - procs
        return None

    def _reserve(self, job: int) -> tuple[float, int, int] | None:
        clusters = self.listed if self.reservation_clusters == "any" else self._in_list_order(self.sim.candidates[job])
        best = None
        for c in clusters:
            found = self._earliest(c, self.sim.procs[job])
            if found is not None and (best is None or found[0] <= best[0]):   # the last of equal starts
                best = (found[0], c, found[1])
        return best

    def _cluster_for(self, job: int, now: float, shadow: float, reserved: int, usable: int) -> int:
        """Alea's backfill choice for ``job`` now, or -1: the fastest allowed cluster, the last of equal speed,
        the reserved cluster only when strictly faster than the others."""
        sim = self.sim
        need = sim.procs[job]
        spares_reservation = now + sim.estimate[job] < shadow or need <= usable
        chosen, chosen_speed = -1, -np.inf
        for c in self._in_list_order(sim.candidates[job]):
            state = sim.clusters[c]
            if state.free_total < need:
                continue
            if c != reserved:
                if state.speed >= chosen_speed:
                    chosen, chosen_speed = c, state.speed
            elif spares_reservation and state.speed > chosen_speed:
                chosen, chosen_speed = c, state.speed
        return chosen

    def _backfill(self, low: int, now: float) -> Iterator[Decision]:
        """One scan of the queue after the head (point 5 of the module docstring)."""
        sim, queue = self.sim, self.queue
        clusters = sim.clusters
        shadow, reserved, usable = self.reservation
        head_procs = sim.procs[self.reserved_job]
        position = low
        reached: dict[int, int] = {}   # EASY._first_candidate's bounds, valid while the head's start stays
        while position < len(queue):
            free = [c.free_total for c in clusters]
            max_free = max(free)
            if max_free == 0:
                break
            # Necessary condition (read bucket by bucket): fits the largest free block, and fits the usable
            # CPUs or another cluster, or ends by the head's start (the exact test is strict).
            limit = float(np.nextafter(shadow - now, np.inf))
            position = self._first_candidate(position, free, reserved, usable, limit, reached)
            if position < 0:
                break
            job = queue[position]
            cluster = self._cluster_for(job, now, shadow, reserved, usable)
            if cluster >= 0:
                yield Start(job, cluster)
                self._remove(position)
                if cluster == reserved:
                    shadow, usable = self._earliest(reserved, head_procs)
                    reached = {}   # a later head start loosens the estimate bound: the bounds no longer hold
            position += 1
        self.reservation = (shadow, reserved, usable)
