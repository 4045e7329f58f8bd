"""Invariants of the batch engine over random workloads, clusters and failures (hypothesis)."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from sched_engine.batch import machine_texts
from sched_engine.batch.cluster import ClusterState
from sched_engine.batch.policies import EASY, FCFS, FCFSLB, Reserve
from sched_engine.batch.simulate import CANCELLED, FINISHED, KILLED, BatchSimulation
from sched_engine.registry import REGISTRY

POLICIES = [p.name for p in REGISTRY.policies("batch")]

clusters_strategy = st.lists(
    st.tuples(st.integers(1, 4), st.integers(1, 4), st.sampled_from([1.0, 2.0])), min_size=1, max_size=3
)
jobs_strategy = st.lists(
    st.tuples(st.integers(0, 60), st.integers(0, 40), st.integers(1, 10), st.integers(0, 7)),
    min_size=1, max_size=25,
)


def build(cluster_specs, job_specs, failure_specs, policy, use_requirements=False, seed=0, keep_decisions=False):
    clusters = [ClusterState(i, f"c{i}", [cpus] * machines, speed) for i, (machines, cpus, speed) in enumerate(cluster_specs)]
    job_specs = sorted(job_specs, key=lambda j: j[0])
    failures = []
    for time, cluster, machine, duration in failure_specs:
        c = cluster % len(clusters)
        failures.append((float(time), c, machine % len(clusters[c].cpus), float(duration)))
    suitable = [
        tuple(c for c in range(len(clusters)) if mask >> c & 1) if use_requirements else None
        for *_, mask in job_specs
    ]
    sim = BatchSimulation(
        submit=[j[0] for j in job_specs], run_time=[j[1] for j in job_specs],
        estimate=[j[1] for j in job_specs], procs=[j[2] for j in job_specs],
        suitable=suitable, clusters=clusters, failures=sorted(failures), policy=policy,
        rng=np.random.default_rng(seed), keep_decisions=keep_decisions,
    )
    sim.run()
    return sim, clusters, failures


def up_cpus_at(cluster, failures, time):
    """CPUs of a cluster's machines that are up at ``time`` (failures are [start, end))."""
    down = {m for t, c, m, d in failures if c == cluster.index and t <= time < t + d}
    return sum(cpus for m, cpus in enumerate(cluster.cpus) if m not in down)


failures_strategy = st.lists(
    st.tuples(st.integers(0, 80), st.integers(0, 2), st.integers(0, 3), st.integers(1, 30)), max_size=4
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    policy=st.sampled_from(POLICIES), clusters=clusters_strategy, jobs=jobs_strategy,
    failures=failures_strategy, requirements=st.booleans(),
)
def test_capacity_time_and_accounting(policy, clusters, jobs, failures, requirements):
    sim, cluster_states, failure_list = build(
        clusters, jobs, failures, REGISTRY.create("batch", policy), use_requirements=requirements,
    )
    count = len(sim.submit)
    for j in range(count):
        # Every job ends exactly once, as completed, killed or cancelled.
        assert sim.status[j] in (FINISHED, KILLED, CANCELLED)
        if sim.status[j] == CANCELLED:
            continue
        assert sim.start_time[j] >= sim.submit[j]
        if sim.status[j] == FINISHED:
            assert sim.end_time[j] == sim.start_time[j] + sim.run_time[j]
        else:
            assert sim.start_time[j] <= sim.end_time[j] <= sim.start_time[j] + sim.run_time[j]
        if requirements:
            assert sim.cluster_of[j] in sim.candidates[j]
    # CPUs in use never exceed the CPUs of machines that are up (checked where usage can rise).
    for cluster in cluster_states:
        ran = [j for j in range(count) if sim.cluster_of[j] == cluster.index and sim.status[j] != CANCELLED]
        checkpoints = {sim.start_time[j] for j in ran} | {t for t, c, *_ in failure_list if c == cluster.index}
        for time in checkpoints:
            used = sum(sim.procs[j] for j in ran if sim.start_time[j] <= time < sim.end_time[j])
            assert used <= up_cpus_at(cluster, failure_list, time)


def first_reservations(sim) -> dict[int, float]:
    """The start of the first reservation the policy made for each job, from its decisions."""
    first: dict[int, float] = {}
    for _, decision in sim.decision_log:
        if isinstance(decision, Reserve):
            first.setdefault(decision.job, decision.start)
    return first


@settings(max_examples=60, deadline=None)
@given(clusters=clusters_strategy, jobs=jobs_strategy, requirements=st.booleans())
# A wide head job waits for a reservation while a short job backfills beside the running one.
@example(clusters=[(1, 4, 1.0)], jobs=[(0, 10, 2, 1), (1, 10, 4, 1), (2, 5, 2, 1)], requirements=False)
def test_easy_backfilling_never_delays_a_reservation(clusters, jobs, requirements):
    sim, *_ = build(clusters, jobs, [], EASY(), use_requirements=requirements, keep_decisions=True)
    first = first_reservations(sim)
    assert first or all(sim.start_time[j] == sim.submit[j] or sim.status[j] == CANCELLED
                        for j in range(len(sim.submit)))
    for job, reserved in first.items():
        assert sim.start_time[job] <= reserved


@settings(max_examples=60, deadline=None)
@given(clusters=clusters_strategy, jobs=jobs_strategy, requirements=st.booleans())
def test_fcfs_starts_jobs_in_submission_order(clusters, jobs, requirements):
    sim, *_ = build(clusters, jobs, [], REGISTRY.create("batch", "fcfs"), use_requirements=requirements)
    started = [sim.start_time[j] for j in range(len(sim.submit)) if sim.status[j] != CANCELLED]
    assert started == sorted(started)


@settings(max_examples=30, deadline=None)
@given(clusters=clusters_strategy, jobs=jobs_strategy)
def test_conservative_starts_no_job_later_than_its_first_reservation(clusters, jobs):
    sim, *_ = build(clusters, jobs, [], REGISTRY.create("batch", "cons"), keep_decisions=True)
    first = first_reservations(sim)
    assume(any(status != CANCELLED for status in sim.status))   # all too large for every cluster: nothing to check
    assert all(job in first or sim.status[job] == CANCELLED for job in range(len(sim.submit)))
    for job, reserved in first.items():
        assert sim.start_time[job] <= reserved


class _EventLoopFCFS(FCFS):
    """FCFS run through the general event loop (its dedicated in-order loop switched off)."""
    starts_in_order = False


class _EventLoopFCFSLB(FCFSLB):
    starts_in_order = False


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters=clusters_strategy, jobs=jobs_strategy, requirements=st.booleans(), seed=st.integers(0, 3),
       balanced=st.booleans())
def test_the_in_order_loop_gives_the_event_loops_schedule(clusters, jobs, requirements, seed, balanced):
    """FCFS and FCFS-LB without failures take a dedicated one-step-per-job loop: same starts, clusters, ends."""
    fast_policy, general_policy = (FCFSLB(), _EventLoopFCFSLB()) if balanced else (FCFS(), _EventLoopFCFS())
    fast, _, _ = build(clusters, jobs, [], fast_policy, requirements, seed)
    general, _, _ = build(clusters, jobs, [], general_policy, requirements, seed)
    assert fast.start_time == general.start_time or np.allclose(fast.start_time, general.start_time, equal_nan=True)
    assert fast.end_time == general.end_time or np.allclose(fast.end_time, general.end_time, equal_nan=True)
    assert (fast.status, fast.cluster_of) == (general.status, general.cluster_of)
    assert machine_texts(fast).tolist() == machine_texts(general).tolist()
