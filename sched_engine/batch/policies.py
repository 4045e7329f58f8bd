"""Batch scheduling policies (Klusáček & Rudová §5).

Every policy implements one narrow protocol, driven by
:class:`~.simulate.BatchSimulation`:

``bind(sim)``                       start of a run (sets up per-run state)
``arrive(job, now)``                a job entered the queue
``job_ended(cluster, now, early)``  a job completed (``early``: before its estimate)
``capacity_changed(cluster, now)``  a machine failed or restarted
``schedule(now)``                   one pass after the instant's events: start jobs

A policy that starts only the oldest waiting job, as soon as it fits now on
one of its clusters (FCFS, FCFS-LB), says so with ``starts_in_order = True``
and names its cluster choice ``choose(fits)``; on clusters that never fail
the simulation then runs a loop with one step per job that calls only
``bind`` and ``choose`` (same results, far less work per job).

Constructors only store parameters (``get_params`` reads them back); all
per-run state is created in ``bind``, so one policy object can run twice
and give identical results.

Multi-cluster rule (§5): a job goes to the cluster where it can start
earliest; among equal starts the fastest cluster, then the larger one
(total CPUs), then the first listed -- ``sim.candidates[job]`` is already in
that order.
"""

from __future__ import annotations

import bisect
import heapq
from time import perf_counter
from typing import Sequence

import numpy as np

from ..core.registry import Parametrised
from .cluster import Profile
from .simulate import WAITING

NO_RESERVATION = "no reservation possible on the machines that are up"


class _QueuePolicy(Parametrised):
    """Queue handling shared by FCFS-like policies: waiting jobs in arrival order.

    The queue is an append-only list with lazy deletion: started or
    cancelled jobs stay in place as dead entries (``procs`` set to infinity
    in the parallel numpy arrays) until more than half are dead, then it is
    compacted. ``head`` is the position of the first live job.
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

    def arrive(self, job: int, now: float) -> None:
        position = len(self.queue)
        if position == len(self.q_procs):
            self.q_procs = np.resize(self.q_procs, 2 * position)
            self.q_estimate = np.resize(self.q_estimate, 2 * position)
        self.q_procs[position] = self.sim.procs[job]
        self.q_estimate[position] = self.sim.estimate[job]
        self.queue.append(job)
        self.new_jobs += 1

    def job_ended(self, cluster: int, now: float, early: bool) -> None:
        self.resources_changed = True

    def capacity_changed(self, cluster: int, now: float) -> None:
        self.resources_changed = True

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
        live = np.flatnonzero(np.isfinite(self.q_procs[: len(self.queue)]))
        self.queue = [self.queue[i] for i in live.tolist()]
        size = max(1024, 2 * len(self.queue))
        procs, estimate = np.empty(size), np.empty(size)
        procs[: len(live)] = self.q_procs[live]
        estimate[: len(live)] = self.q_estimate[live]
        self.q_procs, self.q_estimate = procs, estimate
        self.head = 0
        self.dead = 0
        return True

    def _fits_now(self, job: int) -> list[int]:
        procs = self.sim.procs[job]
        clusters = self.sim.clusters
        return [c for c in self.sim.candidates[job] if clusters[c].free_total >= procs]

    def _can_ever_fit(self, job: int) -> bool:
        procs = self.sim.procs[job]
        return any(self.sim.clusters[c].up_total >= procs for c in self.sim.candidates[job])

    def _start_heads(self, now: float) -> None:
        """Start queue heads while they fit; stop at the first blocked one.

        A head that cannot fit even on every up machine of its clusters is
        cancelled (§5: jobs that cannot get a reservation are cancelled).
        """
        queue, sim = self.queue, self.sim
        while self.head < len(queue):
            position = self.head
            job = queue[position]
            fits = self._fits_now(job)
            if fits:
                sim.start(job, self.choose(fits), now)
            elif not self._can_ever_fit(job):
                sim.cancel(job, now, NO_RESERVATION)
            else:
                return
            self._remove(position)

    def choose(self, fits: Sequence[int]) -> int:
        """The cluster for a job that fits now on each of ``fits`` (in preference order)."""
        return fits[0]


class FCFS(_QueuePolicy):
    """First come, first served: only the queue head may start (no backfilling).

    A blocked head blocks every later job, whatever clusters they could use.
    """

    starts_in_order = True

    def __init__(self):
        pass

    def schedule(self, now: float) -> None:
        waited_before = len(self.queue) - self.new_jobs > self.head
        self.new_jobs = 0
        if not self.resources_changed and waited_before:
            return  # nothing freed and the head was already blocked
        self._start_heads(now)
        self.resources_changed = False
        self._compact()


class FCFSLB(FCFS):
    """FCFS with load balancing (§6.2): a uniformly random cluster among those where the head fits now."""

    def choose(self, fits: Sequence[int]) -> int:
        return fits[int(self.sim.rng.integers(len(fits)))] if len(fits) > 1 else fits[0]


class EASY(_QueuePolicy):
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
        self.sizes: list[int] = []  # distinct sizes (CPUs) of the queue's jobs, ascending
        self.buckets: dict[int, _Positions] = {}

    def job_ended(self, cluster: int, now: float, early: bool) -> None:
        self.resources_changed = True
        # A job ending at its estimate leaves the head's shadow time and extra
        # CPUs unchanged (its CPUs move from "freed by the shadow time" to
        # "free now"); one ending early frees them sooner than reserved.
        self.reservation_stale |= early

    def capacity_changed(self, cluster: int, now: float) -> None:
        self.resources_changed = True
        self.reservation_stale = True

    def schedule(self, now: float) -> None:
        queue = self.queue
        first_new = len(queue) - self.new_jobs
        self.new_jobs = 0
        if self.resources_changed or self.reservation is None or first_new <= self.head:
            self._start_heads(now)
            if self.head < len(queue) and (self.reservation_stale or queue[self.head] != self.reserved_job):
                self.reservation = None
            while self.head < len(queue) and self.reservation is None:
                self.reservation = self._reserve(queue[self.head])
                if self.reservation is not None:
                    self.reserved_job = queue[self.head]
                    self.reservation_stale = False
                    break
                self.sim.cancel(queue[self.head], now, NO_RESERVATION)
                self._remove(self.head)
                self._start_heads(now)
            if self.head >= len(queue):
                self.reservation = None
            low = self.head + 1
        else:
            # Nothing was freed since the last pass: the jobs already scanned
            # still cannot start, so only the newcomers are candidates.
            low = first_new
        self.resources_changed = False
        if self.reservation is not None and low < len(queue):
            self._backfill(low, now)
        self._compact()

    def _reserve(self, job: int) -> tuple[float, int, int] | None:
        best = None
        procs = self.sim.procs[job]
        for c in self.sim.candidates[job]:
            shadow = self.sim.clusters[c].shadow(procs, self.sim.procs)
            if shadow is not None and (best is None or shadow[0] < best[0]):
                best = (shadow[0], c, shadow[1])
        return best

    # --- the waiting jobs indexed by size ---------------------------------------------------------
    # Under a long backlog almost every waiting job is larger than the CPUs
    # free now (RICC on 806 CPUs: ~150,000 waiting, typically 1 CPU free), so
    # a scan of the queue tail finds its candidate tens of thousands of
    # entries in. Each distinct size keeps the queue positions of its jobs in
    # order ("bucket"); a pass reads only the buckets of sizes that fit now,
    # which makes its cost follow the jobs that could start, not the backlog.

    def arrive(self, job: int, now: float) -> None:
        super().arrive(job, now)
        size = int(self.sim.procs[job])
        bucket = self.buckets.get(size)
        if bucket is None:
            bucket = self.buckets[size] = _Positions()
            bisect.insort(self.sizes, size)
        bucket.append(len(self.queue) - 1)

    def _compact(self) -> bool:
        if not super()._compact():
            return False
        self._index_queue()   # positions changed
        return True

    def _index_queue(self) -> None:
        """Rebuild the buckets from the (compacted) queue."""
        size_of = self.q_procs[: len(self.queue)].astype(np.int64)
        order = np.argsort(size_of, kind="stable")
        sizes, firsts = np.unique(size_of[order], return_index=True)
        self.sizes = sizes.tolist()
        self.buckets = {size: _Positions(positions)
                        for size, positions in zip(self.sizes, np.split(order, firsts[1:]))}

    def _first_candidate(self, low: int, max_free: int, any_length: int, limit: float) -> int:
        """Queue position of the first live job at or after ``low`` that may start now, or -1.

        "May start": needs at most ``max_free`` CPUs and either at most
        ``any_length`` CPUs or an estimate of at most ``limit`` -- the
        necessary condition of :meth:`_backfill`, read bucket by bucket.
        """
        best = -1
        for size in self.sizes[: bisect.bisect_right(self.sizes, max_free)]:
            found = self.buckets[size].first(low, best, self.q_procs,
                                             None if size <= any_length else (self.q_estimate, limit))
            if found >= 0:
                best = found
        return best

    def _backfill(self, low: int, now: float) -> None:
        """Start, in queue order, every job after the head that fits now and spares the reservation."""
        sim, queue = self.sim, self.queue
        clusters, procs_of, estimate, candidates_of = sim.clusters, sim.procs, sim.estimate, sim.candidates
        shadow, reserved_cluster, extra = self.reservation
        position = low
        while position < len(queue):
            free = [c.free_total for c in clusters]
            max_free = max(free)
            if max_free == 0:
                break
            # Necessary condition to start now: fits the largest free block, and
            # either ends by the shadow time, fits in the extra CPUs, or fits on
            # another cluster. The job it finds is then checked exactly,
            # cluster by cluster.
            max_free_other = max((f for i, f in enumerate(free) if i != reserved_cluster), default=0)
            position = self._first_candidate(position, max_free, max(extra, max_free_other), shadow - now)
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
                sim.start(job, c, now)
                self._remove(position)
                break
            position += 1
        self.reservation = (shadow, reserved_cluster, extra)


class _Positions:
    """Ascending queue positions of the waiting jobs of one size (a growable array).

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

    def first(self, low: int, before: int, q_procs: np.ndarray, length_limit) -> int:
        """The first live position in ``[low, before)`` (``before`` < 0: no bound) whose job meets
        ``length_limit`` (``None``, or ``(estimates, limit)``: estimate ≤ limit); -1 if none.

        Reads the positions in growing chunks, so the cost follows the
        distance to the answer.
        """
        positions, length = self.positions, self.length
        start = self.live_from
        while start < length and q_procs[positions[start]] == np.inf:
            start += 1
        self.live_from = start
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
            hit = int(ok.argmax())
            if ok[hit]:
                found = int(window[hit])
                return found if before < 0 or found < before else -1
            if 0 <= before <= int(window[-1]):
                return -1
            start, chunk = stop, chunk * 4
        return -1


class Conservative(Parametrised):
    """Conservative backfilling (Mu'alem & Feitelson 2001): a reservation for every job.

    An arriving job is reserved at its earliest start in the per-cluster CPU
    profiles (``Profile``), given every earlier reservation -- the schedule
    (§5). Reservations never move later for later arrivals. When a cluster's
    capacity changes (failure, restart) or a job ends before its estimate,
    the jobs reserved on that cluster are re-backfilled in their order
    (§5); the others keep theirs. A job that cannot be reserved anywhere is
    cancelled.
    """

    def __init__(self):
        pass

    def bind(self, sim) -> None:
        self.sim = sim
        self.profiles = [Profile.from_running(0.0, c, sim.procs) for c in sim.clusters]
        # Per cluster, the jobs reserved on it in priority order. A job that
        # started keeps its entry until the list is compacted: the waiting
        # jobs are exactly those in ``reserved``.
        self.order: list[list[int]] = [[] for _ in sim.clusters]
        self.started_entries = [0] * len(sim.clusters)
        self.reserved: dict[int, tuple[float, int]] = {}  # job -> (start, cluster)
        self.due: list[tuple[float, int]] = []  # heap of (start, job); stale entries skipped

    def arrive(self, job: int, now: float) -> None:
        self._place(job, now)

    def job_ended(self, cluster: int, now: float, early: bool) -> None:
        if early:
            self._rebackfill(cluster, now)

    def capacity_changed(self, cluster: int, now: float) -> None:
        self._rebackfill(cluster, now)

    def schedule(self, now: float) -> None:
        sim, due = self.sim, self.due
        while due and due[0][0] <= now:
            start, job = heapq.heappop(due)
            if sim.status[job] != WAITING or self.reserved.get(job, (None,))[0] != start:
                continue
            _, cluster = self.reserved.pop(job)
            self.started_entries[cluster] += 1
            if self.started_entries[cluster] * 2 > len(self.order[cluster]):
                self._compact(cluster)
            sim.start(job, cluster, now)

    # --- the schedule ----------------------------------------------------------------------------

    def _place(self, job: int, now: float, clusters=None) -> bool:
        """Reserve ``job`` at its earliest start over its clusters; cancel it if none can hold it."""
        sim = self.sim
        procs, duration = sim.procs[job], sim.estimate[job]
        best = None
        for c in clusters or sim.candidates[job]:
            start = self.profiles[c].earliest(now, procs, duration, np.inf if best is None else best[0])
            if start is not None:
                best = (start, c)   # strictly earlier than the best so far (§5 tie rule: first listed wins)
        if best is None:
            sim.cancel(job, now, NO_RESERVATION)
            return False
        self._commit(job, best[0], best[1])
        return True

    def _commit(self, job: int, start: float, cluster: int) -> None:
        sim = self.sim
        self.profiles[cluster].reserve(start, start + sim.estimate[job], sim.procs[job])
        self.order[cluster].append(job)
        self.reserved[job] = (start, cluster)
        heapq.heappush(self.due, (start, job))
        sim.wake(start)

    def _fresh_profile(self, cluster: int, now: float) -> Profile:
        sim = self.sim
        return Profile.from_running(now, sim.clusters[cluster], sim.procs)

    def _compact(self, cluster: int) -> list[int]:
        """Drop the entries of started jobs from ``order[cluster]``; returns the list."""
        reserved = self.reserved
        self.order[cluster] = [job for job in self.order[cluster] if job in reserved]
        self.started_entries[cluster] = 0
        return self.order[cluster]

    def _rebackfill(self, cluster: int, now: float) -> None:
        jobs = self._compact(cluster)
        self.order[cluster] = []
        self.profiles[cluster] = self._fresh_profile(cluster, now)
        for job in jobs:
            del self.reserved[job]
        for job in jobs:
            self._place(job, now)


class LocalSearch(Conservative):
    """Conservative backfilling improved periodically by local search (§5, Eq. 2).

    Every ``interval_s`` simulated seconds, up to ``iteration_factor`` ×
    (waiting jobs) iterations or ``time_limit_s`` wall seconds: move a
    random waiting job to a random position of a random suitable cluster's
    schedule (the same cluster or another), re-plan the clusters touched,
    and keep the move iff ``W = w_sld + w_wait + w_resp > 0``, where
    ``w_x = (x_prev - x_new) / x_prev`` compares the schedule's mean slowdown,
    wait and response (planned, by estimates). When ``x_prev`` is 0 (the
    paper leaves the correction out): ``w_x = 0`` if ``x_new`` is 0, else -1.
    The paper also stops a search after 2 wall seconds; that limit makes
    results depend on the machine, so it is off by default
    (``time_limit_s=2.0`` restores it).
    """

    def __init__(self, interval_s: float = 300.0, iteration_factor: float = 2.0, time_limit_s: float | None = None):
        self.interval_s = interval_s
        self.iteration_factor = iteration_factor
        self.time_limit_s = time_limit_s

    def bind(self, sim) -> None:
        super().bind(sim)
        self.next_search: float | None = None
        self.iterations = 0
        self.accepted = 0

    def arrive(self, job: int, now: float) -> None:
        super().arrive(job, now)
        if self.next_search is None:
            self.next_search = (now // self.interval_s + 1) * self.interval_s
            self.sim.wake(self.next_search)

    def schedule(self, now: float) -> None:
        if self.next_search is not None and now >= self.next_search:
            if self.reserved:
                self._search(now)
                self.next_search = now + self.interval_s
                self.sim.wake(self.next_search)
            else:
                self.next_search = None
        super().schedule(now)

    def _plan(self, cluster: int, order: list[int], now: float):
        """Re-plan one cluster's schedule for ``order``: profile, starts and objective sums."""
        sim = self.sim
        profile = self._fresh_profile(cluster, now)
        starts = []
        sld = wait = resp = 0.0
        for job in order:
            estimate = sim.estimate[job]
            start = profile.earliest(now, sim.procs[job], estimate)
            profile.reserve(start, start + estimate, sim.procs[job])
            starts.append(start)
            waited = start - sim.submit[job]
            wait += waited
            resp += waited + estimate
            sld += (waited + estimate) / max(estimate, 1.0)
        return profile, starts, (sld, wait, resp)

    def _search(self, now: float) -> None:
        sim, rng = self.sim, self.sim.rng
        for cluster in range(len(self.order)):
            self._compact(cluster)
        waiting = [job for order in self.order for job in order]
        limit = int(self.iteration_factor * len(waiting))
        plans = {c: self._plan(c, self.order[c], now) for c in range(len(self.order)) if self.order[c]}
        totals = [sum(plan[2][k] for plan in plans.values()) for k in range(3)]
        deadline = None if self.time_limit_s is None else perf_counter() + self.time_limit_s
        for _ in range(limit):
            if deadline is not None and perf_counter() > deadline:
                break
            self.iterations += 1
            job = waiting[int(rng.integers(len(waiting)))]
            old = self.reserved[job][1]
            choices = sim.candidates[job]
            new = choices[int(rng.integers(len(choices)))]
            old_order = [j for j in self.order[old] if j != job]
            target = old_order if new == old else list(self.order[new])
            target.insert(int(rng.integers(len(target) + 1)), job)
            touched = {old: old_order, new: target} if new != old else {old: target}
            if any(sim.procs[j] > sim.clusters[c].up_total for c, order in touched.items() for j in order):
                continue
            candidate = {c: self._plan(c, order, now) for c, order in touched.items()}
            before = [sum(plans[c][2][k] if c in plans else 0.0 for c in touched) for k in range(3)]
            after = [sum(candidate[c][2][k] for c in touched) for k in range(3)]
            new_totals = [totals[k] - before[k] + after[k] for k in range(3)]
            if _weight(totals, new_totals) <= 0:
                continue
            self.accepted += 1
            totals = new_totals
            for c, order in touched.items():
                plans[c] = candidate[c]
                self.order[c] = order
        for c, (profile, starts, _) in plans.items():
            self.profiles[c] = profile
            for job, start in zip(self.order[c], starts):
                if self.reserved[job] != (start, c):
                    self.reserved[job] = (start, c)
                    heapq.heappush(self.due, (start, job))
                    sim.wake(start)


def _weight(previous: list[float], new: list[float]) -> float:
    """Eq. 2: ``W = Σ (prev - new) / prev`` over slowdown, wait and response."""
    total = 0.0
    for before, after in zip(previous, new):
        if before > 0:
            total += (before - after) / before
        elif after > 0:
            total -= 1.0
    return total
