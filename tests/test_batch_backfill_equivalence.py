"""EASY's size-indexed backfilling gives the schedule of a plain scan of the queue (hypothesis).

The reference below reads the queue after the head one job at a time, in
order, with the textbook condition (fits now; ends by the shadow time, or
fits in the extra CPUs, or runs on another cluster) -- what EASY did before
its waiting jobs were indexed by size. Workloads are drawn dense enough to
overload the clusters, so long backlogs form.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sched_engine.batch import machine_texts
from sched_engine.batch.policies import EASY, Start
from sched_engine.batch.profile import Profile
from sched_engine.batch.simulate import WAITING
from test_batch_properties import build, clusters_strategy, failures_strategy


class ScanningEASY(EASY):
    """EASY whose backfilling reads every waiting job after the head in queue order."""

    def _backfill(self, low: int, now: float):
        sim, queue = self.sim, self.queue
        shadow, reserved_cluster, extra = self.reservation
        for position in range(low, len(queue)):
            job = queue[position]
            if sim.status[job] != WAITING:
                continue
            free = [c.free_total for c in sim.clusters]
            if max(free) == 0:
                break
            need, ends_by_shadow = sim.procs[job], now + sim.estimate[job] <= shadow
            for c in sim.candidates[job]:
                if free[c] < need or (c == reserved_cluster and not ends_by_shadow and need > extra):
                    continue
                if c == reserved_cluster and not ends_by_shadow:
                    extra -= need
                yield Start(job, c)
                self._remove(position)
                break
        self.reservation = (shadow, reserved_cluster, extra)


overloading_jobs = st.lists(
    st.tuples(st.integers(0, 30), st.integers(0, 40), st.sampled_from([1, 1, 1, 2, 3, 4, 6, 8]), st.integers(0, 7)),
    min_size=1, max_size=120,
)


def schedule(sim):
    machines = machine_texts(sim).tolist()
    return (np.nan_to_num(np.asarray(sim.start_time, dtype=float), nan=-1.0).tolist(),
            np.nan_to_num(np.asarray(sim.end_time, dtype=float), nan=-1.0).tolist(),
            list(sim.status), list(sim.cluster_of), machines)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters=clusters_strategy, jobs=overloading_jobs, failures=failures_strategy, requirements=st.booleans())
def test_indexed_easy_gives_the_scanning_schedule(clusters, jobs, failures, requirements):
    indexed, _, _ = build(clusters, jobs, failures, EASY(), requirements)
    scanning, _, _ = build(clusters, jobs, failures, ScanningEASY(), requirements)
    assert schedule(indexed) == schedule(scanning)


def test_a_long_backlog_is_compacted_and_reindexed():
    """300 jobs on one 4-CPU machine: the queue is compacted several times; schedules still agree."""
    rng = np.random.default_rng(7)
    jobs = [(int(t), int(d), int(p), 1) for t, d, p in zip(
        np.sort(rng.integers(0, 200, 300)), rng.integers(1, 50, 300), rng.choice([1, 1, 2, 3, 4], 300))]
    indexed, _, _ = build([(1, 4, 1.0)], jobs, [], EASY())
    scanning, _, _ = build([(1, 4, 1.0)], jobs, [], ScanningEASY())
    assert schedule(indexed) == schedule(scanning)
    assert sum(1 for start, (submit, *_) in zip(indexed.start_time, sorted(jobs)) if start > submit + 100) > 50


def full_search(times, free, now, procs, duration):
    """The earliest start by definition: every breakpoint (or ``now``) tried in order."""
    candidates = [now] + [float(t) for t in times if t > now]
    for start in candidates:
        window = [f for t, f, following in zip(times, free, [*times[1:], np.inf])
                  if following > start and t < start + duration or (duration == 0 and t <= start < following)]
        if all(f >= procs for f in window):
            return start
    return None


@settings(max_examples=150, deadline=None)
@given(cpus=st.integers(1, 8), running=st.lists(st.tuples(st.integers(0, 50), st.integers(1, 8)), max_size=5),
       requests=st.lists(st.tuples(st.integers(0, 5), st.integers(1, 9), st.integers(0, 30), st.booleans(),
                                   st.integers(0, 80)), min_size=1, max_size=30))
def test_a_profile_remembers_only_answers_that_still_hold(cpus, running, requests):
    """Profile.earliest with its memo and bound answers as a search by definition on the same profile."""
    free_now = max(0, cpus - sum(p for _, p in running))
    times = np.array([0.0, *sorted(float(end) for end, _ in running)])
    freed = np.cumsum([free_now, *[p for _, p in sorted(running)]])
    remembering = Profile(times.copy(), freed.copy())
    now = 0.0
    for step, (advance, procs, duration, reserve, before) in enumerate(requests):
        for repeat in (0, 1):   # the same request again (the memo's case), later or at once
            now += advance * repeat
            expected = full_search(remembering.times, remembering.free, now, procs + repeat * (step % 2),
                                   float(duration))
            bound = float(before) if step % 3 == 0 else np.inf
            answer = remembering.earliest(now, procs + repeat * (step % 2), float(duration), bound)
            assert answer == (expected if expected is not None and expected < bound else None)
        procs += step % 2
        if reserve and expected is not None and duration > 0:
            remembering.reserve(expected, expected + duration, procs)
