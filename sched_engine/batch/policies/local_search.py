"""Local Search over the conservative schedule (Klusáček & Rudová §5, Eq. 2)."""

from __future__ import annotations

import heapq
from time import perf_counter
from typing import Iterator, NamedTuple

import numpy as np

from ..profile import Profile
from .conservative import Conservative
from .decisions import Decision, Reserve, Wake

#: States saved along a cluster's plan, evenly spaced (every job's for an order of fewer jobs): a move re-plans
#: from the last one before its change. 0: none, every plan from scratch.
SAVED_STATES = 64


class _Plan(NamedTuple):
    """One cluster's schedule for an order of its waiting jobs, planned from ``now``.

    ``saved``: ``(k, times, free, sums)``, the profile and the objective sums after the first ``k`` jobs of
    ``order``, ``k`` ascending from 0 (the running jobs alone). A plan of another order that agrees on those
    ``k`` jobs goes on from there: the same reservations in the same order give the same profile and, added
    in the same order, the same sums, so the result is the one planning from scratch gives.
    """

    profile: Profile
    starts: list[float]
    sums: tuple[float, float, float]   # slowdown, wait, response, summed over the order
    order: list[int]
    saved: list[tuple[int, np.ndarray, np.ndarray, tuple[float, float, float]]]


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
    With queue ranks a move keeps every cluster's order by rank.
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

    def arrive(self, job: int, now: float) -> Iterator[Decision]:
        yield from super().arrive(job, now)
        if self.next_search is None:
            self.next_search = (now // self.interval_s + 1) * self.interval_s
            yield Wake(self.next_search)

    def schedule(self, now: float) -> Iterator[Decision]:
        if self.next_search is not None and now >= self.next_search:
            if self.reserved:
                yield from self._search(now)
                self.next_search = now + self.interval_s
                yield Wake(self.next_search)
            else:
                self.next_search = None
        yield from super().schedule(now)

    def _plan(self, cluster: int, order: list[int], now: float, base: _Plan | None = None) -> _Plan:
        """Re-plan one cluster's schedule for ``order``: profile, starts and objective sums; from the last
        state ``base`` (a plan of the same cluster at the same ``now``) saved before ``order`` departs from it."""
        sim = self.sim
        if base is None or not SAVED_STATES:
            profile = self._fresh_profile(cluster, now)
            saved = [(0, profile.times.copy(), profile.free.copy(), (0.0, 0.0, 0.0))]
        else:
            agree = _common_prefix(base.order, order)
            last = len(base.saved) - 1
            while base.saved[last][0] > agree:
                last -= 1
            saved = base.saved[: last + 1]
            profile = Profile(saved[-1][1].copy(), saved[-1][2].copy())
        done, _, _, (sld, wait, resp) = saved[-1]
        starts = base.starts[:done] if done else []
        step = max(1, len(order) // SAVED_STATES) if SAVED_STATES else len(order) + 1
        for index in range(done, len(order)):
            job = order[index]
            estimate = sim.estimate[job]
            start = profile.earliest(now, sim.procs[job], estimate)
            profile.reserve(start, start + estimate, sim.procs[job])
            starts.append(start)
            waited = start - sim.submit[job]
            wait += waited
            resp += waited + estimate
            sld += (waited + estimate) / max(estimate, 1.0)
            if (index + 1) % step == 0:
                saved.append((index + 1, profile.times.copy(), profile.free.copy(), (sld, wait, resp)))
        return _Plan(profile, starts, (sld, wait, resp), order, saved)

    def _search(self, now: float) -> Iterator[Decision]:
        sim, rng, rank = self.sim, self.sim.rng, self.sim.rank
        for cluster in range(len(self.order)):
            self._compact(cluster)
        waiting = [job for order in self.order for job in order]
        limit = int(self.iteration_factor * len(waiting))
        plans = {c: self._plan(c, self.order[c], now) for c in range(len(self.order)) if self.order[c]}
        totals = [sum(plan.sums[k] for plan in plans.values()) for k in range(3)]
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
            if rank is not None and any(rank[a] > rank[b] for a, b in zip(target, target[1:])):
                continue   # a move never puts a job ahead of a higher queue's (:mod:`sched_engine.batch.queues`)
            if any(sim.procs[j] > sim.clusters[c].up_total for c, order in touched.items() for j in order):
                continue
            candidate = {c: self._plan(c, order, now, plans.get(c)) for c, order in touched.items()}
            before = [sum(plans[c].sums[k] if c in plans else 0.0 for c in touched) for k in range(3)]
            after = [sum(candidate[c].sums[k] for c in touched) for k in range(3)]
            new_totals = [totals[k] - before[k] + after[k] for k in range(3)]
            if _weight(totals, new_totals) <= 0:
                continue
            self.accepted += 1
            totals = new_totals
            for c, order in touched.items():
                plans[c] = candidate[c]
                self.order[c] = order
        for c, plan in plans.items():
            self.profiles[c] = plan.profile
            for job, start in zip(self.order[c], plan.starts):
                if self.reserved[job] != (start, c):
                    self.reserved[job] = (start, c)
                    heapq.heappush(self.due, (start, job))
                    yield Reserve(job, start, c)
                    yield Wake(start)


def _common_prefix(a: list[int], b: list[int]) -> int:
    """How many leading jobs ``a`` and ``b`` share."""
    for index, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return index
    return min(len(a), len(b))


def _weight(previous: list[float], new: list[float]) -> float:
    """Eq. 2: ``W = Σ (prev - new) / prev`` over slowdown, wait and response."""
    total = 0.0
    for before, after in zip(previous, new):
        if before > 0:
            total += (before - after) / before
        elif after > 0:
            total -= 1.0
    return total
