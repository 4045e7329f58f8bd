"""The per-user index of the waiting jobs (sched_engine/batch/waiting.py) decides as the straightforward rule does.

The straightforward rule walks the queue from its head and asks each job's
user's limit (``UserLimits.blocked``), and EASY's backfill scan skips the
held jobs it finds one by one -- what the queue policies did before the
index -- and the pending-reasons recorder finds the first such job by the
same walk over its own list. On small random traces (users, queues,
best-effort jobs, failures, running-job and CPU limits) both give the same
schedule, job by job, and the same pending reasons.
"""

from __future__ import annotations

from unittest.mock import patch

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sched_engine.batch.cluster import ClusterState
from sched_engine.batch.pending import PendingRecorder
from sched_engine.batch.policies import EASY, FCFS, FCFSLB
from sched_engine.batch.queues import QueueInputs, UserLimits
from sched_engine.batch.simulate import BatchSimulation


class Walking:
    """The straightforward limit rule, without the per-user index."""

    def bind(self, sim) -> None:
        super().bind(sim)
        self.users = None   # nothing indexed: every job is found and skipped one by one

    def _first_eligible(self) -> int:
        limits, queue, procs, position = self.sim.limits, self.queue, self.sim.procs, self.head
        while position < len(queue) and (self.q_procs[position] == np.inf
                                         or limits.blocked(queue[position], procs[queue[position]])):
            position += 1
        return position


class WalkingRecorder(PendingRecorder):
    """The pending-reasons recorder's straightforward rules: walk its list of jobs past the held ones, and look
    at every waiting job of a user again when one of the user's jobs starts or ends."""

    def first_allowed(self, first: int) -> int:
        status, order, limits, procs = self.sim.status, self.order, self.sim.limits, self.sim.procs
        position = first
        while position < len(order) and (status[order[position]] != self.waiting
                                         or limits.blocked(order[position], procs[order[position]])):
            position += 1
        return position

    def changed_user_jobs(self, user: int) -> list[int]:
        jobs = self.by_user.get(user) or []
        return [job for job in jobs if self.sim.status[job] == self.waiting]   # every one, held or not


class WalkingFCFS(Walking, FCFS):
    pass


class WalkingFCFSLB(Walking, FCFSLB):
    pass


class WalkingEASY(Walking, EASY):
    def _first_candidate(self, low: int, free: list[int], reserved: int, spare: int, limit: float,
                         reached: dict[int, int]) -> int:
        found = super()._first_candidate(low, free, reserved, spare, limit, reached)
        while found >= 0 and self.sim.limits.blocked(self.queue[found], self.sim.procs[self.queue[found]]):
            found = super()._first_candidate(found + 1, free, reserved, spare, limit, reached)
        return found


PAIRS = {"fcfs": (FCFS, WalkingFCFS), "fcfs-lb": (FCFSLB, WalkingFCFSLB), "easy": (EASY, WalkingEASY)}

jobs_strategy = st.lists(
    # submit, run time, extra estimate, CPUs, user, queue rank, best-effort
    st.tuples(st.integers(0, 80), st.integers(0, 40), st.integers(0, 20), st.integers(1, 6), st.integers(0, 3),
              st.integers(0, 2), st.booleans()),
    min_size=1, max_size=40,
)
failures_strategy = st.lists(st.tuples(st.integers(0, 100), st.integers(0, 2), st.integers(1, 30)), max_size=3)


def run(policy_class, jobs, clusters, failures, limits, ranks, best_effort, seed):
    jobs = sorted(jobs, key=lambda job: job[0])
    states = [ClusterState(i, f"c{i}", [cpus] * machines, 1.0) for i, (machines, cpus) in enumerate(clusters)]
    failing = sorted((float(time), 0, machine % len(states[0].cpus), float(duration))
                     for time, machine, duration in failures)
    users = np.array([job[4] for job in jobs])
    queues = QueueInputs(rank=np.array([job[5] for job in jobs]) if ranks else None,
                         best_effort=np.array([job[6] for job in jobs]) if best_effort else None,
                         limits=UserLimits(users, *limits))
    sim = BatchSimulation(submit=[job[0] for job in jobs], run_time=[job[1] for job in jobs],
                          estimate=[job[1] + job[2] for job in jobs], procs=[job[3] for job in jobs],
                          suitable=[None] * len(jobs), clusters=states, failures=failing,
                          policy=policy_class(), rng=np.random.default_rng(seed), queues=queues)
    sim.run()
    return sim


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(policy=st.sampled_from(sorted(PAIRS)), jobs=jobs_strategy,
       clusters=st.lists(st.tuples(st.integers(1, 4), st.integers(1, 4)), min_size=1, max_size=2),
       failures=failures_strategy,
       limits=st.tuples(st.sampled_from([None, 1, 2, 3]), st.sampled_from([None, 2, 4, 7])).filter(any),
       ranks=st.booleans(), best_effort=st.booleans(), seed=st.integers(0, 3))
def test_the_index_decides_as_the_walk_does(policy, jobs, clusters, failures, limits, ranks, best_effort, seed):
    if limits[1] is not None:   # a job larger than its user's CPU limit is cancelled on arrival either way
        jobs = [job if job[3] <= limits[1] else (*job[:3], limits[1], *job[4:]) for job in jobs]
    indexed = run(PAIRS[policy][0], jobs, clusters, failures, limits, ranks, best_effort, seed)
    with patch("sched_engine.batch.simulate.PendingRecorder", WalkingRecorder):
        walking = run(PAIRS[policy][1], jobs, clusters, failures, limits, ranks, best_effort, seed)
    for name in ("status", "cluster_of", "reason"):
        assert getattr(indexed, name) == getattr(walking, name), name
    for name in ("start_time", "end_time"):   # NaN where a job never started (or never ended)
        np.testing.assert_array_equal(getattr(indexed, name), getattr(walking, name), err_msg=name)
    assert sorted(indexed.pending_rows) == sorted(walking.pending_rows)


def test_the_index_skips_a_held_users_backlog_and_finds_the_next_users_job():
    # One user with 6 waiting 1-CPU jobs at a limit of 1 ahead of another user's job, on 4 CPUs: the other
    # user's job starts at once, the held user's jobs one after another, 10 s each.
    jobs = [(0, 10, 0, 1, 0, 0, False)] * 6 + [(0, 10, 0, 1, 1, 0, False)]
    for policy in ("fcfs", "easy"):
        indexed, walking = (run(cls, jobs, [(4, 1)], [], (1, None), False, False, 0) for cls in PAIRS[policy])
        assert indexed.start_time == walking.start_time == [0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 0.0]
